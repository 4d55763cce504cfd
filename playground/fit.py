"""Does the template fit this output? And which shipped template fits it best?

A parse can succeed and still be wrong for the model that wrote the text: the
start anchor is not in the prefix (so earlier turns are parsed as the new
message), or no region ever opens (so every character is unclaimed or
discarded). `fit_problems` names those; the status line shows them instead of
"Parsed". `rank_templates` parses the current prefix and generation with every
template in `templates/` and orders them: no errors first, then the fewest
unclaimed or discarded characters, then the fewest warnings.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from engine import TemplateError

from .catalog import shipped_templates
from .parse_view import ParseView, traced_view


def implicit_field(view: ParseView) -> str | None:
    """The template's field without an open delimiter, or None."""
    fields = (view.template or {}).get("fields", {})
    return next((name for name, spec in fields.items() if isinstance(spec, dict) and "open" not in spec and "open_pattern" not in spec), None)


def unclaimed_characters(view: ParseView) -> int:
    """Characters no explicit region claimed: the implicit field's text and discarded text."""
    implicit = implicit_field(view)
    return sum(
        s.end - s.start for s in view.spans if s.kind == "discarded" or (s.field is not None and s.field == implicit and s.kind == "body")
    )


def discarded_characters(view: ParseView) -> int:
    return sum(s.end - s.start for s in view.spans if s.kind == "discarded")


def fit_problems(view: ParseView) -> list[str]:
    """Why this template probably does not fit this output ([] when nothing says so)."""
    problems = []
    template = view.template or {}
    if not view.anchor_found:
        anchor = template.get("start_anchor", template.get("start_anchor_pattern", ""))
        shown = " | ".join(anchor) if isinstance(anchor, list) else anchor
        problems.append(
            f"the start anchor {shown!r} is not in the prefix, so the whole prefix ({view.tail_length:,} characters) "
            "is parsed as part of the message: is this the template of the model that wrote it?"
        )
    keys = [key for key in view.message or {} if key not in template.get("defaults", {})]
    if view.stream.strip() and not view.errors and not keys:
        discarded = discarded_characters(view)
        problems.append(
            f"the template claims nothing: the message has no field, and {discarded:,} of "
            f"{len(view.stream):,} characters were discarded (no open delimiter matched)"
        )
    return problems


@dataclass(frozen=True)
class TemplateFit:
    """How one shipped template did on the current input.

    `errors` and `warnings` count; `unclaimed` is unclaimed or discarded characters;
    `anchor_found` whether its start anchor is in the prefix; `note` the first problem.
    """

    name: str
    errors: int
    unclaimed: int
    warnings: int
    anchor_found: bool
    note: str

    @property
    def rank_key(self) -> tuple:
        return (self.errors, not self.anchor_found, self.unclaimed, self.warnings, self.name)


def rank_templates(prefix: str, generation: str, tools: list | None, *, deadline: float | None = None) -> tuple[list[TemplateFit], int]:
    """Every `templates/` file on this input, best first (see the module docstring), and how
    many were not tried because `deadline` (a `time.perf_counter()` value) had passed; each
    parse gets what is left of it (`fit_seconds`) or `parse_seconds`, whichever ends first."""
    found = []
    files = shipped_templates()
    for number, template_file in enumerate(files):
        if deadline is not None and time.perf_counter() > deadline:
            return sorted(found, key=lambda fit: fit.rank_key), len(files) - number
        try:
            view = traced_view(template_file.response_template, prefix, generation, tools, until=deadline)
        except (TemplateError, ValueError) as error:
            found.append(TemplateFit(template_file.name, 1, len(generation), 0, False, str(error)))
            continue
        problems = [e.message for e in view.errors] + fit_problems(view) + [w.message for w in view.warnings]
        found.append(
            TemplateFit(
                template_file.name, len(view.errors), unclaimed_characters(view), len(view.warnings), view.anchor_found,
                problems[0] if problems else "",
            )
        )
    return sorted(found, key=lambda fit: fit.rank_key), 0
