"""Small report panels: the status line, pass/fail badges and the figures row.

The status line says how the parse went, in order of what matters: the cause
(`playground.parse.causes`: the template key to change and how, the start anchor
first), then what it caused (errors: with lenient parsing the parts that
parsed are still shown; "does not fit" problems: the template claims
nothing), then "Parsed", then the parse's warnings. It is never green over a
lost region: when a cause is found, or a warning says text went where it does
not belong (a delimiter of the template in content, a close with no open, a
swallowed tool call, discarded text, or any warning of the parser's account: a
near miss of a delimiter, an argument no tag read, a call name that is no tool's), or the caller names a loss it sees (an
inferred marker in content, a field the chat template writes that the template
lacks: `losses`), the line says "Parsed, but text was probably lost" instead. A stale parse (the
template became invalid) keeps its map under a marker, and the status gives
only the new error: the old parse's own errors are not stacked under it.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.account import WARNING_CODES

from ..authoring.fit import fit_problems
from ..parse.causes import leading
from ..parse.parse_view import ParseView
from ..server.redact import redact
from .markup import escape

ERRORS_LISTED = 5
# Warnings that mean text went where it does not belong (`engine.authoring.faults`, and every
# warning of the parser's own account, `engine.account`).
LOSS_WARNINGS = frozenset(WARNING_CODES) | frozenset(
    {
        "close-without-open",
        "tool-call-open-swallowed",
        "delimiter-in-content",
        "text-discarded",
        "close-inside-json-string",
        "open-inside-own-region",
        "key-repeated",
    }
)
CAUSES_LISTED = 3
# Characters of an error shown on the status line (#explain has it whole).
SYMPTOM_SHOWN = 240


def _cause_lines(view: ParseView) -> list[str]:
    lines = []
    for diagnosis in leading(view)[:CAUSES_LISTED]:
        kind = "rt-status-error" if diagnosis.severity == "error" else "rt-status-warn"
        mark = "⚠ Cause" if diagnosis.severity == "error" else "△ Probable cause"
        lines.append(
            f'<div class="rt-status {kind} rt-cause" id="status-cause" data-key="{escape(diagnosis.key)}">{mark} '
            f"(<code>{escape(diagnosis.key)}</code>): {escape(diagnosis.message)}</div>"
        )
    return lines


def _shortened(text: str) -> str:
    """`text`, or its first `SYMPTOM_SHOWN` characters cut after a whole word, with "…"."""
    if len(text) <= SYMPTOM_SHOWN:
        return text
    cut = text.rfind(" ", 0, SYMPTOM_SHOWN)
    return text[: cut if cut > SYMPTOM_SHOWN // 2 else SYMPTOM_SHOWN - 1].rstrip(" ,;:(") + "…"


def probable_losses(view: ParseView, losses: Sequence[str] = ()) -> list[str]:
    """Why text of `view` probably went where it does not belong, a sentence each ([] when
    nothing says so): its causes (errors and warnings), its loss warnings, then `losses`."""
    return (
        [d.message for d in leading(view)]
        + [w.message for w in view.warnings if w.code in LOSS_WARNINGS]
        + list(losses)
    )


def parse_judgement(
    view: ParseView, losses: Sequence[str] = (), *, cause_shown: bool = False
) -> tuple[bool, str]:
    """How a parse of `view` that raised no error went, as one sentence: the judgement the page's
    status line and `/parse`'s ``status`` share.

    Args:
        losses: losses the caller sees that the parse cannot (a sentence each).
        cause_shown: the cause is shown above the sentence (the page), so the sentence points to
            it instead of repeating it.

    Returns:
        `(clean, sentence)`: clean only when nothing says text was lost. The sentence is
        "Does not fit: <why>" when the template probably does not fit the output
        (`playground.authoring.fit.fit_problems`, the first), "Parsed: <keys>" (with
        " (nothing after the prompt)" when the generation is empty), or "Parsed, but text was
        probably lost (<why>): <keys>" when a cause, a loss warning or `losses` says so.
    """
    problems = fit_problems(view)
    if problems:
        return False, f"Does not fit: {problems[0]}"
    keys = ", ".join(k for k in (view.message or {}) if k != "role") or "no fields"
    causes = [diagnosis.message for diagnosis in leading(view)]
    lost = [w.message for w in view.warnings if w.code in LOSS_WARNINGS] + list(losses)
    if not causes and not lost:
        empty = "" if view.stream[view.tail_length :] else " (nothing after the prompt)"
        return True, f"Parsed{empty}: {keys}"
    why = "see the cause above" if causes and cause_shown else _shortened((causes + lost)[0])
    return False, f"Parsed, but text was probably lost ({why}): {keys}"


def _parsed_line(view: ParseView, causes: list[str], losses: Sequence[str]) -> str:
    """The "Parsed" line with the message keys: green only when nothing says text was lost."""
    clean, sentence = parse_judgement(view, losses, cause_shown=bool(causes))
    if clean:
        return f'<div class="rt-status rt-status-ok" id="status-parsed">✔ {escape(sentence)}</div>'
    return f'<div class="rt-status rt-status-warn" id="status-lost">△ {escape(sentence)}</div>'


def status_html(
    view: ParseView | None,
    note: str = "",
    *,
    stale: str = "",
    progress: str = "",
    losses: Sequence[str] = (),
) -> str:
    """The status box of `view` (None: no parse yet).

    Args:
        note: a line of context (the sample's description, the model used).
        stale: why the parse shown is stale (the input error), or "".
        progress: a replay or live position ("chunk 12 / 80"), or "".
        losses: losses the caller sees that the parse cannot (a sentence each): they turn
            "Parsed" into a warning and are listed under it.
    """
    parts = []
    if stale:
        parts.append(
            f'<div class="rt-status rt-status-error" id="status-error">⚠ {escape(redact(stale))}</div>'
            '<div class="rt-status rt-status-stale" id="status-stale">The map, message and events show the last good '
            "parse (stale) until the input is valid again.</div>"
        )
    causes = _cause_lines(view) if view is not None and not stale else []
    parts += causes
    if view is not None and view.errors and not stale:
        for error in view.errors[:ERRORS_LISTED]:
            message = redact(error.message)
            if causes:
                parts.append(
                    f'<div class="rt-status rt-status-symptom" id="status-error" title="{escape(message)}">'
                    f"which gives: {escape(_shortened(message))}</div>"
                )
            else:
                # A slip read leniently is a warning (no region failed), a failed region an error.
                kind = "rt-status-warn" if error.lenient else "rt-status-error"
                parts.append(
                    f'<div class="rt-status {kind}" id="status-error">⚠ {escape(message)}</div>'
                )
        if len(view.errors) > ERRORS_LISTED:
            parts.append(
                f'<div class="rt-status rt-status-error">… and {len(view.errors) - ERRORS_LISTED} more errors</div>'
            )
        if view.message is not None and not all(error.lenient for error in view.errors):
            parts.append(
                '<div class="rt-status rt-status-note">The failed regions are kept as text; every other field is parsed.</div>'
            )
        elif view.message is not None:
            parts.append(
                '<div class="rt-status rt-status-note">Each slip above was read as the template means it; '
                "no region was kept as text.</div>"
            )
    elif view is not None and not view.finished:
        parts.append(
            f'<div class="rt-status rt-status-live">⏳ streaming… {escape(progress)} (the message shows the regions closed so far)</div>'
        )
    elif view is not None and not stale:
        problems = fit_problems(view)
        if problems:
            for problem in problems:
                parts.append(
                    f'<div class="rt-status rt-status-misfit" id="status-misfit">✘ Does not fit: {escape(problem)}</div>'
                )
        else:
            parts.append(_parsed_line(view, causes, losses))
    for warning in view.warnings if view and not stale else []:
        parts.append(f'<div class="rt-status rt-status-warn">△ {escape(str(warning))}</div>')
    for loss in losses if view is not None and view.finished and not stale else ():
        parts.append(f'<div class="rt-status rt-status-warn rt-loss">△ {escape(loss)}</div>')
    if note:
        parts.append(f'<div class="rt-status rt-status-note">{escape(redact(note))}</div>')
    return "".join(parts)


def region_cut_by_stop(view: ParseView) -> str:
    """For a stream stopped before its end and parsed as if it had ended there: a sentence naming
    the region the stop cut (one that failed and that no close delimiter ended: the end of the
    stream closed it, so its unfinished text is what failed), or "" when there is none."""
    closed = {(span.field, span.stream_end) for span in view.spans if span.kind == "close"}
    for error in view.errors:
        if error.field and error.end == len(view.stream) and (error.field, error.end) not in closed:
            return (
                f"The {error.field} region was still open there, so its unfinished text is what "
                "fails to parse above."
            )
    return ""


def error_html(message: str) -> str:
    """The status line for input that never reached the parser."""
    return f'<div class="rt-status rt-status-error" id="status-error">⚠ {escape(redact(message))}</div>'


def badge(passed: bool | None, label: str, *, warnings: int = 0) -> str:
    """A pass / fail / pending pill; `label` says what was checked; warnings turn a pass amber."""
    if passed and warnings:
        kind, mark = "rt-pass-warn", f"✔ pass, {warnings} warning{'s' if warnings > 1 else ''}"
    else:
        kind, mark = {
            True: ("rt-pass", "✔ pass"),
            False: ("rt-fail", "✘ fail"),
            None: ("rt-pending", "…"),
        }[passed]
    return f'<span class="rt-badge {kind}" id="stream-check-badge" data-passed="{str(passed).lower()}">{mark}</span> {escape(label, quote=True)}'


def figures(items: Sequence[tuple[str, str]]) -> str:
    """A row of live figures, e.g. [("tokens", "120"), ("tokens/s", "48.0")]."""
    cells = "".join(
        f"<span>{escape(name, quote=True)} <b>{escape(value, quote=True)}</b></span>"
        for name, value in items
    )
    return f'<div class="rt-figures" id="live-figures-row">{cells}</div>'
