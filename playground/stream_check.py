"""The stream check after a replay: does streaming give the one-shot result?"""

from __future__ import annotations

import json
import time

from engine import load_template
from engine.stream_checks import check_stream, run_chunks

from . import limits


def stream_check(template: dict, prefix: str, generation: str, tools: list | None, chunks: list[str]) -> tuple[bool | None, str, str]:
    """Does streaming give the one-shot result? Checks the replayed chunking, then the
    engine's own set (one character at a time, every single split, seeded random pieces)
    and truncation inside delimiters.

    The whole check has a `Limits.stream_check_seconds` budget: with a hostile pattern
    every feed may take the regex budget.

    Returns (passed, one-line label, Markdown details; on failure the chunking that breaks
    it); passed is None when the replay itself could not be checked within the budget.
    """
    caps = limits.current()
    loaded = load_template(template)
    options = {"tools": tools, "regex_timeout": caps.regex_seconds}
    budget = caps.stream_check_seconds  # a hostile pattern may spend the regex budget on every feed
    started = time.perf_counter()
    baseline = run_chunks(loaded, prefix, [generation], chunking="one-shot", **options)
    replayed = run_chunks(loaded, prefix, chunks, chunking="this replay", deadline=started + budget, **options)
    if replayed.stopped:
        return None, f"stream check stopped after its {budget:g} s budget", f"- replaying the {len(chunks)} chunks again took over {budget:g} s"
    remaining = max(0.0, budget - (time.perf_counter() - started))
    report = check_stream(generation, loaded, prefix=prefix, seeds=range(5), max_seconds=remaining, **options)
    mismatch = None if replayed.same_as(baseline) else replayed
    mismatch = mismatch or report.mismatch
    details = []
    if mismatch is not None:
        cuts = json.dumps(mismatch.splits[:200])
        details.append(
            f"**{mismatch.chunking}** differs from one-shot parsing (chunk boundaries at offsets `{cuts}`).\n\n"
            f"- one-shot: `{json.dumps(baseline.message, ensure_ascii=False)}` {baseline.error or ''}\n"
            f"- streamed: `{json.dumps(mismatch.message, ensure_ascii=False)}` {mismatch.error or ''}"
        )
    for leak in report.truncation_leaks[:10]:
        details.append(
            f"- truncation at {leak.cut}: fragment `{leak.fragment}` of `{leak.delimiter}` ({leak.path}) "
            f"ends up in `{leak.field}`"
        )
    details += [f"- {note}" for note in report.notes]
    if mismatch is None:
        label = f"streaming equals one-shot: this replay ({len(chunks)} chunks) and {report.runs - 1} other chunkings"
        if not report.complete:
            label += f" (the check stopped after its {budget:g} s budget)"
    else:
        label = f"streaming differs from one-shot parsing ({mismatch.chunking})"
    return mismatch is None, label, "\n".join(details)
