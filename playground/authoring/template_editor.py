"""The Template tab's editor: Format, and loading a templates/ file (diagnostics: `playground.authoring.diagnostics`)."""

from __future__ import annotations

from ..catalog import shipped_template_text, template_names, template_text_of
from ..server.input_readers import InputError, read_template
from .diagnostics import Finding, check_template, diagnostics_html


def format_template(text: str) -> tuple[str | None, str]:
    """(pretty-printed text, diagnostics); the text is None for input that is not a template."""
    try:
        template = read_template(text)
    except InputError as error:
        return None, diagnostics_html([Finding("error", "input-error", "", str(error))])
    pretty = template_text_of(template)
    return pretty, check_template(pretty)


def shipped_template(name: str) -> str | None:
    """The editor text of `templates/<name>.json`, or None for a name that is not one."""
    if not name or name not in template_names():
        return None
    return shipped_template_text(name)
