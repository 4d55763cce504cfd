"""Side by side with transformers' reference parser, for the current input.

transformers' `chat_parsing` parses the same prefix and generation with the
same template, in a worker process that is killed past its time budget (its
regex calls have no timeout); the panel shows both messages
with the lines that differ marked. Differences can be deliberate: the engine
keeps every unclaimed character and streams exactly like one-shot parsing
(see docs/template-language.md, "Deliberate differences from transformers").
"""

from __future__ import annotations

import difflib
import json

from ..server import limits
from ..server.redact import redact
from ..server.workers import run_job
from .markup import escape

# Longest generation sent to the reference (characters): it is slower on long streams.
REFERENCE_CHARS = 200_000


def reference_job(payload: dict) -> dict:
    """transformers' reference `parse_response` in a worker process (`playground.server.workers`):
    {"message"} or {"error"} (the reference's own failure, without its type name)."""
    from transformers.utils.chat_parsing import parse_response as reference_parse

    try:
        message = reference_parse(
            payload["generation"],
            payload["template"],
            prefix=payload["prefix"],
            tools=payload["tools"],
        )
    except MemoryError:
        raise
    except Exception as error:  # noqa: BLE001 - the reference's own errors are what we show
        return {"error": redact(str(error)) or "the reference parser failed"}
    return {"message": message}


def reference_message(
    template: dict, prefix: str, generation: str, tools: list | None
) -> tuple[dict | None, str | None]:
    """(message, error) from transformers' reference `parse_response`, run in a worker process
    within PLAYGROUND_LIMITS `reference_seconds` (its regex calls have no time limit)."""
    if len(generation) > REFERENCE_CHARS:
        return (
            None,
            f"the generation is longer than {REFERENCE_CHARS:,} characters; the reference is not run on it",
        )
    seconds = limits.current().reference_seconds
    job = {"template": template, "prefix": prefix, "generation": generation, "tools": tools}
    outcome = run_job("reference", job, seconds=seconds)
    if outcome.cut_off:
        return None, (
            f"the reference parser was stopped after {seconds:g} s (the time budget PLAYGROUND_LIMITS "
            "reference_seconds): its patterns have no time limit and backtrack on this input"
        )
    if outcome.error:
        return None, outcome.error
    return outcome.result.get("message"), outcome.result.get("error")


def _lines(message: dict | None, error: str | None) -> list[str]:
    if error:
        return [f"error: {error}"]
    return json.dumps(message, ensure_ascii=False, indent=2, sort_keys=True).splitlines()


def diff_html(
    ours: dict | None, our_error: str | None, theirs: dict | None, their_error: str | None
) -> str:
    """Two columns (this engine, transformers), lines that differ marked; a summary line first."""
    left, right = _lines(ours, our_error), _lines(theirs, their_error)
    same = left == right
    rows = []
    matcher = difflib.SequenceMatcher(a=left, b=right, autojunk=False)
    for tag, a1, a2, b1, b2 in matcher.get_opcodes():
        for offset in range(max(a2 - a1, b2 - b1)):
            a = left[a1 + offset] if a1 + offset < a2 else ""
            b = right[b1 + offset] if b1 + offset < b2 else ""
            kind = "" if tag == "equal" else ' class="rt-differs"'
            rows.append(
                f"<tr{kind}><td><pre>{escape(a, quote=True)}</pre></td><td><pre>{escape(b, quote=True)}</pre></td></tr>"
            )
    summary = (
        '<div class="rt-status rt-status-ok" id="reference-summary" data-same="true">✔ the same message as transformers\' reference</div>'
        if same
        else '<div class="rt-status rt-status-warn" id="reference-summary" data-same="false">△ differs from transformers\' reference '
        "(the engine keeps unclaimed text and never loses data; see docs/template-language.md, deliberate differences)</div>"
    )
    return (
        summary
        + '<table class="rt-side-by-side"><thead><tr><th>this engine</th><th>transformers</th></tr></thead><tbody>'
        + "".join(rows)
        + "</tbody></table>"
    )


def compare(
    template: dict,
    prefix: str,
    generation: str,
    tools: list | None,
    ours: dict | None,
    our_error: str | None,
) -> str:
    """The reference panel for this input and our result."""
    theirs, their_error = reference_message(template, prefix, generation, tools)
    return diff_html(ours, our_error, theirs, their_error)
