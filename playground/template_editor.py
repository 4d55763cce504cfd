"""The Template tab's editor: diagnostics while typing, Format, and loading a templates/ file."""

from __future__ import annotations

from engine.lint import lint

from .catalog import shipped_template_text, template_names, template_text_of
from .limits import InputError, read_template
from .status import diagnostics_html


def check_template(text: str) -> str:
    """Validation and lint diagnostics for the editor, as HTML (errors name the JSON path)."""
    try:
        template = read_template(text)
    except InputError as error:
        return diagnostics_html([("error", "", str(error), "")])
    found = [(d.severity, d.path, d.message, d.suggestion) for d in lint(template)]
    return diagnostics_html(found)


def format_template(text: str) -> tuple[str | None, str]:
    """(pretty-printed text, diagnostics); the text is None for input that is not a template."""
    try:
        template = read_template(text)
    except InputError as error:
        return None, diagnostics_html([("error", "", str(error), "")])
    pretty = template_text_of(template)
    return pretty, check_template(pretty)


def shipped_template(name: str) -> str | None:
    """The editor text of `templates/<name>.json`, or None for a name that is not one."""
    if not name or name not in template_names():
        return None
    return shipped_template_text(name)
