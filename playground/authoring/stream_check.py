"""The stream check after a replay: does streaming give the one-shot result?

The report leads with its verdict and gives every finding a severity: a
chunking that changes the message is an error; a generation cut inside a
delimiter that leaves the delimiter's first characters in a text field is a
warning (grouped: one line per delimiter and field, with the cuts as a range);
the check's own limits are notes.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

from engine import load_template
from engine.authoring.stream_checks import check_stream, run_chunks

from ..server import limits


@dataclass(frozen=True)
class CheckFinding:
    """One line of the report: severity ("error", "warning", "note") and Markdown-free text."""

    severity: str
    text: str


@dataclass(frozen=True)
class StreamCheckResult:
    """The check's verdict: `passed` (None: the replay could not be checked in the budget),
    a one-line `label`, and the `findings`."""

    passed: bool | None
    label: str
    findings: list[CheckFinding] = field(default_factory=list)

    @property
    def warnings(self) -> int:
        return sum(f.severity == "warning" for f in self.findings)


def _ranges(numbers: list[int]) -> str:
    """[58, 59, 60, 63] -> "58–60, 63"."""
    out, start, previous = [], None, None
    for number in numbers:
        if start is None:
            start = previous = number
        elif number == previous + 1:
            previous = number
        else:
            out.append(f"{start}–{previous}" if previous != start else str(start))
            start = previous = number
    if start is not None:
        out.append(f"{start}–{previous}" if previous != start else str(start))
    return ", ".join(out)


# The stream check's work cap (characters parsed over all its runs): a sample gets every single
# split, a big paste as many as fit once one-character and the seeded runs are done.
CHECK_CHARS = 2_000_000
# Seeded random chunkings compared, and how many above BIG_GENERATION characters.
SEEDS, BIG_SEEDS, BIG_GENERATION = 5, 2, 100_000


def stream_check(
    template: dict,
    prefix: str,
    generation: str,
    tools: list | None,
    chunks: list[str],
    *,
    deadline: float | None = None,
) -> StreamCheckResult:
    """Does streaming give the one-shot result? Checks the replayed chunking, then the
    engine's own set (one character at a time, single splits, seeded random pieces)
    and truncation inside delimiters.

    The check stops once it has compared enough (`CHECK_CHARS` characters parsed: every
    single split of a sample, a few evenly spread ones on a big paste), and within
    `Limits.stream_check_seconds` (or `deadline`, a `time.perf_counter()` value, when that
    comes first): with a hostile pattern every feed may take the regex budget.
    """
    caps = limits.current()
    loaded = load_template(template)
    options = {
        "tools": tools,
        "regex_timeout": caps.regex_seconds,
        "max_regions": caps.regions,
        "max_value_chars": caps.value_chars,
    }
    budget = caps.stream_check_seconds  # a hostile pattern may spend the regex budget on every feed
    started = time.perf_counter()
    if deadline is not None and deadline < started + budget:  # the request's budget ends first
        budget = round(max(0.0, deadline - started), 1)
    ends = started + budget
    stopped = StreamCheckResult(
        None,
        f"stream check stopped after its {budget:g} s budget",
        [CheckFinding("note", f"replaying the {len(chunks)} chunks again took over {budget:g} s")],
    )
    baseline = run_chunks(
        loaded, prefix, [generation], chunking="one-shot", deadline=ends, **options
    )
    one_char = all(
        len(chunk) == 1 for chunk in chunks
    )  # the engine's one-character run is this replay
    replayed = baseline
    if not one_char and not baseline.stopped:
        replayed = run_chunks(
            loaded, prefix, chunks, chunking="this replay", deadline=ends, **options
        )
    if baseline.stopped or replayed.stopped:
        return stopped
    remaining = max(0.0, ends - time.perf_counter())
    seeds = range(SEEDS if len(generation) <= BIG_GENERATION else BIG_SEEDS)
    report = check_stream(
        generation,
        loaded,
        prefix=prefix,
        seeds=seeds,
        max_seconds=remaining,
        max_chars=max(CHECK_CHARS, 2 * len(generation)),
        **options,
    )
    if (
        one_char and report.runs < 2
    ):  # the one-character run, which is this replay, was not finished
        return stopped
    mismatch = None if replayed.same_as(baseline) else replayed
    mismatch = mismatch or report.mismatch
    found = _findings(baseline, mismatch, report.truncation_leaks)
    found += [CheckFinding("note", note) for note in report.notes]
    if mismatch is None:
        this = (
            "this replay (one character at a time)"
            if one_char
            else f"this replay ({len(chunks)} chunks)"
        )
        others = max(0, report.runs - 1 - (1 if one_char else 0))
        label = f"streaming equals one-shot: {this} and {others} other chunkings"
        if not report.complete:
            label += f" (the check stopped after its {budget:g} s budget)"
    else:
        label = f"streaming differs from one-shot parsing ({mismatch.chunking})"
    return StreamCheckResult(mismatch is None, label, found)


def _findings(baseline, mismatch, leaks) -> list[CheckFinding]:
    """The report's errors and warnings: a chunking that changes the message (`mismatch`, a
    `StreamRun`, or None), then the truncation leaks grouped by delimiter and field."""
    found = []
    if mismatch is not None:
        found.append(
            CheckFinding(
                "error",
                f"{mismatch.chunking} differs from one-shot parsing (chunk boundaries at offsets {json.dumps(mismatch.splits[:200])}); "
                f"one-shot: {json.dumps(baseline.message, ensure_ascii=False)} {baseline.error or ''}; "
                f"streamed: {json.dumps(mismatch.message, ensure_ascii=False)} {mismatch.error or ''}",
            )
        )
    groups: dict[tuple, list] = {}
    for leak in leaks:
        groups.setdefault((leak.delimiter, leak.path, leak.field), []).append(leak.cut)
    for (delimiter, path, field_name), cuts in groups.items():
        found.append(
            CheckFinding(
                "warning",
                f"a generation cut inside {delimiter!r} ({path}) leaves its first characters in {field_name} "
                f"(cuts at {_ranges(sorted(cuts))}: {len(cuts)} cut{'s' if len(cuts) > 1 else ''}); a serving engine "
                "that stops at a token limit there shows a delimiter fragment",
            )
        )
    return found
