"""What ships with the playground: the samples and the `templates/` files, by name."""

from __future__ import annotations

import functools
import json

from engine.authoring.samples import Sample, load_samples
from engine.template_files import TemplateFile, list_templates

DEFAULT_SAMPLE = "qwen3/text-then-tool-calls"
# The Template dropdown's entries for a template that is not a templates/ file.
INLINE_TEMPLATE = "(inline template from sample)"
EDITED_TEMPLATE = "(edited in the Template tab)"


@functools.cache
def samples_by_id() -> dict[str, Sample]:
    """Every sample case by its id (`family/case`), in file order."""
    return {sample.id: sample for sample in load_samples()}


@functools.cache
def shipped_templates() -> tuple[TemplateFile, ...]:
    """The `templates/` files, sorted by name (read once: they ship with the app)."""
    return tuple(list_templates())


def template_names() -> list[str]:
    """The names of the `templates/` files, sorted."""
    return [template_file.name for template_file in shipped_templates()]


def template_text_of(template: dict) -> str:
    """A template as the editor shows it: indented JSON."""
    return json.dumps(template, ensure_ascii=False, indent=2)


def shipped_template_text(name: str) -> str:
    """The editor text of `templates/<name>.json`'s response template (KeyError for another name)."""
    return template_text_of({f.name: f for f in shipped_templates()}[name].response_template)


def sample_table() -> list[list[str]]:
    """Rows of the samples table: family, case, what it shows."""
    return [[s.family, s.name, s.description] for s in samples_by_id().values()]


def template_choice_for(
    text: str, current: str | None = None, otherwise: str = EDITED_TEMPLATE
) -> str:
    """What the template dropdown should say for editor `text`: a templates/ name whose
    template it holds (the same data, in any key order or layout; `current` first, as two
    files may hold the same template), else `otherwise`: an edited template is no longer
    the file it started from."""
    from .server import input_readers, limits

    caps = limits.current()
    if (
        not isinstance(text, str)
        or len(text) > caps.template_chars
        or input_readers.json_depth(text) > caps.json_depth
    ):
        return otherwise  # too big or too deep to be a templates/ file: not parsed at all
    try:
        data = json.loads(text)
    except (TypeError, ValueError, RecursionError):
        return otherwise
    matching = [f.name for f in shipped_templates() if data == f.response_template]
    if current in matching:
        return current
    return matching[0] if matching else otherwise


def is_authors_template(text: str) -> bool:
    """Whether editor `text` is the author's own work: not a `templates/` file's template nor a
    sample's as loaded (an edited, inferred or hand-written template; also text that is not
    valid JSON yet)."""
    if not (text or "").strip():
        return False
    if template_choice_for(text) != EDITED_TEMPLATE:
        return False
    try:
        data = json.loads(text)
    except (TypeError, ValueError, RecursionError):
        return True
    return not any(sample.template == data for sample in samples_by_id().values())
