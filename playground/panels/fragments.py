"""The page's HTML fragments drawn by Jinja2 templates with autoescaping: a value put in a
template is escaped unless a panel marks it as markup (`markupsafe.Markup`), so a forgotten
escape cannot happen.

Templates are files in `playground/panels/templates/` (``<name>.html``); `draw(name, **values)`
draws one. The filters a template may use besides Jinja2's own: `visible_whitespace` (spaces,
tabs and newlines drawn as ·, → and ↵), `key_path` (a template key path breakable after its
dots), `thousands` (a count with thousands separators).
"""

from __future__ import annotations

import functools
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from .markup import key_path, visible_whitespace

TEMPLATES = Path(__file__).parent / "templates"


@functools.cache
def environment() -> Environment:
    """The one Jinja2 environment of the page's fragments: autoescaping on for every template,
    a value a template names but is not given an error (StrictUndefined), no blank lines kept
    around blocks."""
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["visible_whitespace"] = lambda text: Markup(visible_whitespace(str(text)))
    env.filters["key_path"] = lambda path: Markup(key_path(str(path)))
    env.filters["thousands"] = lambda count: f"{count:,}"
    return env


def draw(template_name: str, /, **values) -> str:
    """Template `template_name` (a file of `playground/panels/templates/`, without ``.html``)
    drawn with `values`. The templates write no blank between their tags (``{%- -%}``): the fragments are
    inline HTML. Raises jinja2.UndefinedError when the template names a value not given."""
    return environment().get_template(f"{template_name}.html").render(**values)
