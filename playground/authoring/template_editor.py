"""The Template tab's editor: Format, and loading a templates/ file (diagnostics: `playground.authoring.diagnostics`)."""

from __future__ import annotations

from ..catalog import shipped_template_text, template_names, template_text_of
from ..server.input_readers import InputError, read_template
from .diagnostics import Finding, findings


def format_template(text: str) -> tuple[str | None, list[Finding]]:
    """(pretty-printed text, its diagnostics' findings); the text is None for input that is not
    a template (the one finding then says why)."""
    try:
        template = read_template(text)
    except InputError as error:
        return None, [Finding("error", "input-error", "", str(error))]
    pretty = template_text_of(template)
    return pretty, findings(pretty)


def shipped_template(name: str) -> str | None:
    """The editor text of `templates/<name>.json`, or None for a name that is not one."""
    if not name or name not in template_names():
        return None
    return shipped_template_text(name)
