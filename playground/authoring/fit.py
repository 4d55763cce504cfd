"""Does the template fit this output? And which shipped template fits it best?

A parse can succeed and still be wrong for the model that wrote the text: the
start anchor is not in the prefix (so earlier turns are parsed as the new
message), or no region ever opens (so every character is unclaimed or
discarded). `fit_problems` names those; the status line shows them instead of
"Parsed". `rank_templates` parses the current prefix and generation with every
template in `templates/` and orders them: any that claims some of the
generation (an explicit region opens in it) before every one that claims
nothing, then no errors, then the start anchor found in the prefix, then the
fewest unclaimed or discarded characters of the generation, then the fewest
warnings. `family_note` says when the best one's start anchor is not in the
prefix: a prefix left over from another sample, say.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from engine import TemplateError

from ..catalog import shipped_templates
from ..parse.parse_view import ParseView, traced_view


def implicit_field(view: ParseView) -> str | None:
    """The template's field without an open delimiter, or None."""
    fields = (view.template or {}).get("fields", {})
    return next(
        (
            name
            for name, spec in fields.items()
            if isinstance(spec, dict) and "open" not in spec and "open_pattern" not in spec
        ),
        None,
    )


# Text that reads as a chat format's special token: <|...|>, <｜...｜>, [TOOL_CALLS], <start_of_turn>.
SPECIAL_TOKEN = re.compile(
    r"<\|[^|<>\s]{1,40}\|>|<｜[^｜<>]{1,40}｜>|\[/?[A-Z][A-Z_]{2,30}\]|<(?:start|end)_of_[a-z]+>"
)


def _generation_part(view: ParseView, span) -> int:
    """Characters of `span` in the generation (the part after the prefix tail)."""
    return max(0, span.stream_end - max(span.stream_start, view.tail_length))


def unclaimed_characters(view: ParseView) -> int:
    """Characters of the generation no explicit region claimed: the implicit field's text and discarded text."""
    implicit = implicit_field(view)
    return sum(
        _generation_part(view, s)
        for s in view.spans
        if s.kind == "discarded"
        or (s.field is not None and s.field == implicit and s.kind == "body")
    )


def claimed_characters(view: ParseView) -> int:
    """Characters of the generation inside explicit regions (their delimiters included)."""
    implicit = implicit_field(view)
    return sum(
        _generation_part(view, s) for s in view.spans if s.field is not None and s.field != implicit
    )


def discarded_characters(view: ParseView) -> int:
    return sum(s.stream_end - s.stream_start for s in view.spans if s.kind == "discarded")


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
    generation = view.stream[view.tail_length :]
    if generation.strip() and not view.errors and not keys:
        discarded = discarded_characters(view)
        problems.append(
            f"the template claims nothing: the message has no field, and {discarded:,} of "
            f"{len(view.stream):,} characters were discarded (no open delimiter matched)"
        )
    elif (
        not view.errors
        and view.finished
        and claimed_characters(view) == 0
        and implicit_field(view) in keys
    ):
        implicit = implicit_field(view)
        text = "".join(
            span.text
            for span in view.spans
            if span.kind == "body" and span.field == implicit and span.source == "generation"
        )
        tokens = list(dict.fromkeys(SPECIAL_TOKEN.findall(text)))
        if tokens:
            shown = ", ".join(repr(token) for token in tokens[:4])
            problems.append(
                f"the template claims nothing: no region opened, so all of the generation went to "
                f"{implicit_field(view)}, special tokens included ({shown}): is this the template of the model that wrote it?"
            )
    return problems


@dataclass(frozen=True)
class TemplateFit:
    """How one shipped template did on the current input.

    `errors` and `warnings` count; `unclaimed` is unclaimed or discarded characters of the
    generation; `claimed` characters of it in explicit regions; `anchor_found` whether its start
    anchor is in the prefix; `anchor` the anchor as written; `note` the first problem.
    """

    name: str
    errors: int
    unclaimed: int
    warnings: int
    anchor_found: bool
    note: str
    claimed: int = 0
    anchor: str = ""

    @property
    def claims_nothing(self) -> bool:
        return self.claimed == 0

    @property
    def rank_key(self) -> tuple:
        return (
            self.claims_nothing,
            self.errors,
            not self.anchor_found,
            self.unclaimed,
            self.warnings,
            self.name,
        )


def rank_templates(
    prefix: str, generation: str, tools: list | None, *, deadline: float | None = None
) -> tuple[list[TemplateFit], int]:
    """Every `templates/` file on this input, best first (see the module docstring), and how
    many were not tried because `deadline` (a `time.perf_counter()` value) had passed; each
    parse gets what is left of it (`fit_seconds`) or `parse_seconds`, whichever ends first."""
    found = []
    files = shipped_templates()
    for number, template_file in enumerate(files):
        if deadline is not None and time.perf_counter() > deadline:
            return sorted(found, key=lambda fit: fit.rank_key), len(files) - number
        try:
            view = traced_view(
                template_file.response_template, prefix, generation, tools, until=deadline
            )
        except (TemplateError, ValueError) as error:
            found.append(TemplateFit(template_file.name, 1, len(generation), 0, False, str(error)))
            continue
        problems = (
            [e.message for e in view.errors]
            + fit_problems(view)
            + [w.message for w in view.warnings]
        )
        if not problems and claimed_characters(view) == 0 and generation.strip():
            problems = ["claims nothing: no region opens in the generation"]
        template = template_file.response_template
        anchor = template.get("start_anchor", template.get("start_anchor_pattern", ""))
        found.append(
            TemplateFit(
                template_file.name,
                len(view.errors),
                unclaimed_characters(view),
                len(view.warnings),
                view.anchor_found,
                problems[0] if problems else "",
                claimed_characters(view),
                " | ".join(anchor) if isinstance(anchor, list) else anchor,
            )
        )
    return sorted(found, key=lambda fit: fit.rank_key), 0


def family_note(ranked: list[TemplateFit], prefix: str) -> str:
    """A warning when the best template's start anchor is not in the prefix (while others' are):
    the prefix is probably not the prompt this generation came after. "" otherwise."""
    if not ranked or not prefix or ranked[0].anchor_found or ranked[0].claims_nothing:
        return ""
    best = ranked[0]
    fitting = [fit.name for fit in ranked if fit.anchor_found]
    also = f", whose start anchors are in it: {', '.join(fitting[:5])}" if fitting else ""
    return (
        f"The prefix does not look like {best.name}'s: its start anchor {best.anchor!r} is not in the prefix, which ends "
        f"{prefix[-40:]!r} and looks like another family's{also}. Was the prefix left over from another sample? "
        "Paste the prompt this generation came after."
    )
