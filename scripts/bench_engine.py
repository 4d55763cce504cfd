"""Side-by-side benchmark of our parser against transformers' reference.

Run it with ``python scripts/bench_engine.py`` (``--help`` for the options). For every
workload, size and mode it runs our engine and the reference
(`transformers.utils.chat_parsing`, 5.24) alternately in this one process, on
the same seeded generation cut into the same chunks, and prints a table: time
(median and min-max over the repeats; streaming runs drop each feed's events as
they come, like a consumer forwarding them, unless ``--keep-events``), microseconds per chunk, MB/s, peak
memory (tracemalloc, in a separate untimed run so tracing does not skew the
timings), the speedup over the reference, and the characters the
`region_close` values carry (a times-the-text figure: what a consumer that keeps
the events holds). Streaming runs cut the text into token-sized chunks (1 to 8
characters), 4,096-character blocks, and single characters up to 100 KB. Then the log-log scaling
exponent between 100 KB and 1 MB, and the speed targets, each PASS or FAIL.

It is a benchmark, not a test: timings depend on the machine and its load.
What it does check strictly is agreement: every run's message and its whole
event sequence must equal the reference's, else it prints the first
difference and exits with status 1. A deliberate difference (the implicit field keeps every
stretch of text) is the one allowed difference; the workloads where it applies
compare the message without the implicit field and check that field against
the text the generator wrote instead.

Workloads are shaped like real generations: SmolLM3 (`<think>`, `<tool_call>`
JSON, implicit content), agent traces alternating content and tool calls (1,000
or 10 calls per MB, to show the cost does not grow with the number of calls),
Qwen3-Coder (regex open with a named group,
`xml-inline` parameters, a large code argument), gpt-oss (literal channels and
a regex open with a named group) and a template whose patterns all begin with
`\\s*`. Their text is full of `<` and of near-misses of the delimiters
(`<thin`, `</tool`, `<|en`), which is what makes holding back text costly.

The reference re-copies its whole buffer on every `feed`, so it is quadratic
when streaming: at 1 MB in token-sized chunks one run takes 5 to 12 seconds
depending on the machine (and one-shot on `\\s*` patterns about ten). A
reference run that slow is done once, and its peak memory is not traced.

Token ids. After the text table, the same workloads (up to ``--ids-limit``, 100 KB by
default) are tokenized with the demo model's tokenizer, widened with each workload's
delimiter tokens as control tokens, and parsed as transformers 5.25 parses ids
(``tokenizer=``): our ids path, our text path on the decoded text, and the reference's ids
path, for the whole generation at once and one id at a time (the text path fed the same
pieces the ids decode to), side by side with the floor of our id path: decoding alone (one
decode call, or a `DecodeStream` step per id) plus our text path alone. The prefix is given
as its ids. Each figure is the best of the repeats, taken in turn, in the process's CPU
time (`time.process_time`: on a shared machine the wall clock counts the waits for a core
too). Our id messages must equal the reference's.
``--ids`` runs only that section; ``--no-ids`` leaves it out.

``--profile`` profiles our streaming instead (`profile_streaming`): how many
chunks took each path of `ResponseParser.feed`, and the functions that cost most.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import math
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine import ResponseParser, message_from_events, parse_response  # noqa: E402
from tests.support.workloads import (  # noqa: E402
    WORKLOADS,
    Case,
    Workload,
    make_case,
    token_chunks,
)

KB = 1024
MB = 1024 * 1024
DEFAULT_SIZES = "1KB,10KB,100KB,1MB"
DEFAULT_REPEATS = 5

ONE_SHOT, TOKENS, BLOCKS, CHARACTERS = "one-shot", "tokens", "4KB", "chars"
MODES = (ONE_SHOT, TOKENS, BLOCKS, CHARACTERS)
STREAMING_MODES = (TOKENS, BLOCKS, CHARACTERS)
# The size of a chunk in BLOCKS mode: a stored generation fed in blocks, or a server that batches.
BLOCK_CHARS = 4096
# Feeding one character at a time is only run up to this generation size.
CHARACTER_MODE_LIMIT = 100 * KB
# A run slower than this (the reference streaming 1 MB, 5 to 12 s; or its one-shot scan of
# 1 MB with `\s*` patterns, about 10 s) is done only SLOW_RUN_REPEATS times (at most) and
# its memory is not traced.
SLOW_RUN_SECONDS = 2.0
SLOW_RUN_REPEATS = 3
# A timed sample loops over the same run until it lasts this long, so small sizes are measurable.
MIN_SAMPLE_SECONDS = 0.05
# The memory target is judged from this size on; below it the template's fixed cost dominates.
MEMORY_TARGET_MIN_SIZE = 100 * KB


# -- running the two engines ------------------------------------------------------


@dataclass
class Engine:
    name: str
    parser_class: Any
    parse: Callable[..., dict]


def _reference_engine() -> Engine:
    from transformers.utils.chat_parsing import ResponseParser as ReferenceParser
    from transformers.utils.chat_parsing import parse_response as reference_parse

    return Engine("reference", ReferenceParser, reference_parse)


OURS = Engine("ours", ResponseParser, parse_response)


@dataclass
class Outcome:
    """What one run produced: the message and, when streaming, every event in order."""

    message: dict | None = None
    events: list[dict] | None = None
    error: str | None = None


def _run(
    engine: Engine,
    workload: Workload,
    case: Case,
    chunks: Iterable[str] | None,
    keep_events: bool = True,
) -> Outcome:
    if chunks is None:
        return Outcome(message=engine.parse(case.text, workload.template, prefix=case.prefix))
    parser = engine.parser_class(workload.template, prefix=case.prefix)
    feed = parser.feed
    if not keep_events:
        for chunk in chunks:
            feed(chunk)
        parser.finalize()
        return Outcome()
    events = list(parser.initial_events)
    collect = events.extend
    for chunk in chunks:
        collect(feed(chunk))
    message, final_events = parser.finalize()
    events.extend(final_events)
    return Outcome(message, events)


def _timed(
    engine: Engine,
    workload: Workload,
    case: Case,
    chunks: list[str] | None,
    loops: int,
    keep_events: bool,
    clock: Callable[[], float] = time.perf_counter,
) -> float:
    """Seconds for one run (the mean over `loops` back-to-back runs), by `clock` (the wall
    clock unless told).

    Unless `keep_events`, each feed's events are dropped as they come, as a consumer that
    forwards them would: keeping 200,000 event dicts in one list costs more than parsing
    does at 1 MB, and grows faster than linearly with the size (memory, not the parser).
    """
    gc.collect()
    start = clock()
    for _ in range(loops):
        _run(engine, workload, case, chunks, keep_events=keep_events)
    return (clock() - start) / loops


def _peak_memory(engine: Engine, workload: Workload, case: Case, chunks: list[str] | None) -> int:
    """Peak bytes allocated during one run; events are dropped as they come, as a renderer would.

    Each chunk is cut from the text inside the traced run, as a tokenizer makes new strings:
    chunk objects a parser keeps alive then count against it.
    """
    fresh_chunks = None
    if chunks is not None:
        bounds = []
        start = 0
        for chunk in chunks:
            bounds.append((start, start + len(chunk)))
            start += len(chunk)
        text = case.text
        fresh_chunks = (text[begin:end] for begin, end in bounds)
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        _run(engine, workload, case, fresh_chunks, keep_events=False)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# -- comparing with the reference -------------------------------------------------


def _first_difference(ours: Any, theirs: Any, path: str = "") -> str | None:
    """Where two JSON-like values first differ, as `path: ours != reference`, or None."""
    if type(ours) is not type(theirs):
        return f"{path or '<root>'}: ours {_short(ours)} != reference {_short(theirs)}"
    if isinstance(ours, dict):
        for key in list(ours) + [k for k in theirs if k not in ours]:
            if key not in ours or key not in theirs:
                side = "reference only" if key not in ours else "ours only"
                return f"{path}.{key}: {side}: {_short(ours.get(key, theirs.get(key)))}"
            found = _first_difference(ours[key], theirs[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(ours, list):
        for index, (mine, other) in enumerate(zip(ours, theirs)):
            found = _first_difference(mine, other, f"{path}[{index}]")
            if found:
                return found
        if len(ours) != len(theirs):
            return f"{path}: ours has {len(ours)} items, reference {len(theirs)}"
        return None
    if ours != theirs:
        return f"{path or '<root>'}: ours {_short(ours)} != reference {_short(theirs)}"
    return None


def _short(value: Any, limit: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _compare(workload: Workload, case: Case, ours: Outcome, theirs: Outcome) -> str | None:
    """The first difference between our outcome and the reference's, where the implicit field keeping
    every stretch of unclaimed text (a deliberate difference) is judged against the generator's text."""
    if ours.error or theirs.error:
        if ours.error != theirs.error:
            return f"error: ours {ours.error!r}, reference {theirs.error!r}"
        return None
    mine, other = dict(ours.message), dict(theirs.message)
    if workload.spans_implicit_stretches:
        implicit = next(
            name
            for name, spec in workload.template["fields"].items()
            if "open" not in spec and "open_pattern" not in spec
        )
        found = mine.pop(implicit, "")
        other.pop(implicit, None)
        if found != case.implicit_expected:
            return f"message.{implicit} (every stretch kept): ours {_short(found)} != written {_short(case.implicit_expected)}"
    difference = _first_difference(mine, other, "message")
    if difference or ours.events is None:
        return difference
    if message_from_events(ours.events, workload.template) != ours.message:
        return "events: ours do not add up to our message"
    ours_events, their_events = ours.events, theirs.events
    if workload.spans_implicit_stretches:
        # A later stretch's close carries the whitespace held before it (its values concatenate to
        # the message); the reference's closes carry each stretch stripped.
        ours_events, their_events = (
            _without_close_values(events, implicit) for events in (ours_events, their_events)
        )
    return _first_difference(ours_events, their_events, "events")


def _without_close_values(events: list[dict], field_name: str) -> list[dict]:
    return [
        {k: v for k, v in event.items() if k != "value"}
        if event["type"] == "region_close" and event["field"] == field_name
        else event
        for event in events
    ]


def _outcome(
    engine: Engine, workload: Workload, case: Case, chunks: list[str] | None
) -> tuple[Outcome, float]:
    start = time.perf_counter()
    try:
        outcome = _run(engine, workload, case, chunks)
    except Exception as error:  # a failure is compared too: both engines must reject the same input
        outcome = Outcome(error=f"{type(error).__name__}")
    return outcome, time.perf_counter() - start


# -- measurement ------------------------------------------------------------------


@dataclass
class Measurement:
    workload: str
    size: int
    mode: str
    characters: int
    chunks: int
    times: dict[str, list[float]] = field(default_factory=dict)
    speedups: list[float] = field(default_factory=list)
    peak: dict[str, int | None] = field(default_factory=dict)
    close_chars: dict[str, int] = field(default_factory=dict)
    difference: str | None = None


def _chunks(text: str, mode: str) -> list[str] | None:
    """`text` cut as `mode` says: None for one-shot, else the list of chunks."""
    if mode == ONE_SHOT:
        return None
    if mode == TOKENS:
        return token_chunks(text)
    if mode == BLOCKS:
        return [text[start : start + BLOCK_CHARS] for start in range(0, len(text), BLOCK_CHARS)]
    return list(text)


def close_value_chars(events: list[dict]) -> int:
    """The characters the `region_close` values of `events` carry: a string's length, any other
    value's JSON text's length (what a consumer that keeps or forwards the events holds)."""
    total = 0
    for event in events:
        if event["type"] == "region_close" and "value" in event:
            value = event["value"]
            total += (
                len(value) if isinstance(value, str) else len(json.dumps(value, ensure_ascii=False))
            )
    return total


def _measure(
    workload: Workload,
    size: int,
    mode: str,
    repeats: int,
    reference: Engine,
    keep_events: bool = False,
) -> Measurement:
    case = make_case(workload.name, size)
    chunks = _chunks(case.text, mode)
    result = Measurement(
        workload.name, size, mode, len(case.text), 1 if chunks is None else len(chunks)
    )
    engines = [OURS, reference]

    # First run of each: warms up, gives the outcome to compare, and sizes the timing loops.
    first: dict[str, tuple[Outcome, float]] = {
        engine.name: _outcome(engine, workload, case, chunks) for engine in engines
    }
    result.difference = _compare(workload, case, first["ours"][0], first["reference"][0])
    if first["ours"][0].error or first["reference"][0].error:
        return result
    if chunks is not None:
        result.close_chars = {
            engine.name: close_value_chars(first[engine.name][0].events) for engine in engines
        }
    slow_reference = first["reference"][1] >= SLOW_RUN_SECONDS

    # The first run compiles templates and warms caches, so the loops are sized from a second one.
    warm = {
        engine.name: first[engine.name][1]
        if first[engine.name][1] >= SLOW_RUN_SECONDS
        else _outcome(engine, workload, case, chunks)[1]
        for engine in engines
    }
    loops = {
        engine.name: max(1, math.ceil(MIN_SAMPLE_SECONDS / max(warm[engine.name], 1e-6)))
        for engine in engines
    }
    samples: dict[str, list[float]] = {"ours": [], "reference": []}
    if slow_reference and (
        keep_events or chunks is None
    ):  # the first run is timed the same way: reuse it
        samples["reference"].append(first["reference"][1])
    for index in range(repeats):
        order = engines if index % 2 == 0 else engines[::-1]
        for engine in order:
            if (
                engine is reference
                and slow_reference
                and len(samples["reference"]) >= min(repeats, SLOW_RUN_REPEATS)
            ):
                continue
            samples[engine.name].append(
                _timed(engine, workload, case, chunks, loops[engine.name], keep_events)
            )
    result.times = samples
    if slow_reference:
        # Fewer reference runs than ours: each of ours is compared with their median.
        result.speedups = [
            statistics.median(samples["reference"]) / mine for mine in samples["ours"]
        ]
    else:
        result.speedups = [
            theirs / mine for mine, theirs in zip(samples["ours"], samples["reference"])
        ]

    result.peak["ours"] = _peak_memory(OURS, workload, case, chunks)
    result.peak["reference"] = (
        None if slow_reference else _peak_memory(reference, workload, case, chunks)
    )
    return result


# -- reporting --------------------------------------------------------------------


def _size_label(size: int) -> str:
    if size >= MB and size % MB == 0:
        return f"{size // MB}MB"
    if size >= KB and size % KB == 0:
        return f"{size // KB}KB"
    return f"{size}B"


def _seconds(value: float) -> str:
    if value >= 1:
        return f"{value:.2f}s"
    if value >= 1e-3:
        return f"{value * 1e3:.1f}ms"
    return f"{value * 1e6:.0f}us"


def _spread(values: list[float], show: Callable[[float], str]) -> str:
    if len(values) == 1:
        return f"{show(values[0])} (1 run)"
    return f"{show(statistics.median(values))} [{show(min(values))}-{show(max(values))}]"


def _megabytes(value: int | None) -> str:
    return "not traced" if value is None else f"{value / MB:.2f}MB"


def _exponent(small: Measurement | None, large: Measurement | None, engine: str) -> float | None:
    """The log-log slope of time against size, from the fastest run at each size.

    The fastest run is the one least disturbed by the machine's other load; a median
    picks up whatever load a few seconds of runs happened to meet, and a slope from two
    points magnifies that.
    """
    if small is None or large is None or not small.times.get(engine) or not large.times.get(engine):
        return None
    ratio = min(large.times[engine]) / min(small.times[engine])
    return math.log(ratio) / math.log(large.characters / small.characters)


def _print_workload(workload: Workload, rows: list[Measurement]) -> None:
    print(f"\n== {workload.name}: {workload.description}")
    header = (
        f"{'size':>6} {'mode':>8} {'chunks':>8} | {'ours: time median [min-max]':>30} {'us/chunk':>8} {'MB/s':>7} "
        f"{'peak':>7} {'x gen':>6} | {'reference: time':>30} {'us/chunk':>8} {'MB/s':>7} {'peak':>10} | "
        f"{'speedup (ref/ours) median [min-max]':>36} | {'close chars ours/ref (x text)':>29} | check"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        cells = [f"{_size_label(row.size):>6} {row.mode:>8} {row.chunks:>8}"]
        for engine in ("ours", "reference"):
            times = row.times.get(engine)
            if not times:
                cells.append(f"{'(not run)':>30} {'':>8} {'':>7}")
                continue
            median = statistics.median(times)
            per_chunk = "-" if row.mode == ONE_SHOT else f"{median / row.chunks * 1e6:.2f}"
            cells.append(
                f"{_spread(times, _seconds):>30} {per_chunk:>8} {row.characters / MB / median:>7.1f}"
            )
            peak = row.peak.get(engine)
            if engine == "ours":
                cells[-1] += f" {_megabytes(peak):>7} {peak / row.characters if peak else 0:>5.2f}x"
            else:
                cells[-1] += f" {_megabytes(peak):>10}"
        speedup = _spread(row.speedups, lambda v: f"{v:.2f}x") if row.speedups else "-"
        if row.close_chars:
            ours_chars, their_chars = (
                row.close_chars[name] / row.characters for name in ("ours", "reference")
            )
            carried = f"{ours_chars:.2f}x / {their_chars:.2f}x"
        else:
            carried = "-"
        check = "ok" if row.difference is None else "DIFFERS"
        print(" | ".join(cells) + f" | {speedup:>36} | {carried:>29} | {check}")
    by_key = {(row.size, row.mode): row for row in rows}
    for mode in STREAMING_MODES:
        pairs = [
            (small, large)
            for small, large in ((100 * KB, MB), (10 * KB, 100 * KB))
            if (small, mode) in by_key and (large, mode) in by_key
        ]
        if not pairs:
            continue
        small, large = pairs[0]
        ours = _exponent(by_key[(small, mode)], by_key[(large, mode)], "ours")
        theirs = _exponent(by_key[(small, mode)], by_key[(large, mode)], "reference")
        print(
            f"   scaling exponent {_size_label(small)} -> {_size_label(large)} ({mode}): "
            f"ours {_float(ours)}, reference {_float(theirs)}  (fastest runs; 1.0 = linear, 2.0 = quadratic)"
        )


def _float(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


@dataclass
class Target:
    goal: str
    passed: bool | None
    figure: str


def _targets(rows: list[Measurement]) -> list[Target]:
    """The speed targets, evaluated on what was measured (n/a when a size was not run)."""
    by_key = {(row.workload, row.size, row.mode): row for row in rows}
    workloads = sorted({row.workload for row in rows}, key=list(WORKLOADS).index)
    targets: list[Target] = []

    def speedup(row: Measurement) -> float:
        return statistics.median(row.speedups)

    def worst(
        goal: str, figures: list[tuple[str, float, bool]], shown: list[tuple[str, float, bool]]
    ) -> None:
        """A target judged on every figure, showing only `shown` (the worst few)."""
        if not figures:
            targets.append(Target(goal, None, "n/a (not measured)"))
            return
        targets.append(
            Target(
                goal,
                all(ok for _, _, ok in figures),
                ", ".join(f"{label} {value:.2f}" for label, value, _ in shown),
            )
        )

    def check(goal: str, figures: list[tuple[str, float | None, bool]]) -> None:
        """A target judged on, and showing, every figure that was measured (value not None)."""
        known = [(label, value, ok) for label, value, ok in figures if value is not None]
        worst(goal, known, known)

    for size, minimum in ((100 * KB, 4.0), (MB, 40.0)):
        figures = []
        for name in workloads:
            row = by_key.get((name, size, TOKENS))
            value = speedup(row) if row and row.speedups else None
            figures.append((name, value, value is not None and value >= minimum))
        check(
            f"streaming (tokens) at {_size_label(size)}: >= {minimum:g}x the reference's throughput",
            figures,
        )

    figures = []
    for name in workloads:
        value = _exponent(
            by_key.get((name, 100 * KB, TOKENS)), by_key.get((name, MB, TOKENS)), "ours"
        )
        figures.append((name, value, value is not None and value <= 1.08))
    check("scaling exponent 100KB -> 1MB (tokens, ours, fastest runs) <= 1.08", figures)

    for size in (KB, 10 * KB):
        figures = []
        for name in workloads:
            row = by_key.get((name, size, TOKENS))
            if not row or not row.times.get("ours") or not row.times.get("reference"):
                continue
            ratio = statistics.median(row.times["ours"]) / statistics.median(row.times["reference"])
            figures.append((name, ratio, ratio <= 0.5))
        check(
            f"per-chunk overhead at {_size_label(size)} (tokens): ours/reference us per chunk <= 0.50",
            figures,
        )

    figures = [
        (f"{row.workload}@{_size_label(row.size)}/{row.mode}", speedup(row), speedup(row) >= 1.0)
        for row in rows
        if row.speedups
    ]
    worst(
        "never slower than the reference, any workload, size and chunking (speedup >= 1.00; the slowest)",
        figures,
        sorted(figures, key=lambda item: item[1])[:4],
    )

    for mode in (TOKENS, BLOCKS):
        many, few = by_key.get(("calls-1000", MB, mode)), by_key.get(("calls-10", MB, mode))
        figures = []
        if many and few and many.times.get("ours") and few.times.get("ours"):
            for engine in ("ours", "reference"):
                if many.times.get(engine) and few.times.get(engine):
                    ratio = min(many.times[engine]) / min(few.times[engine])
                    figures.append((engine, ratio, ratio <= 1.5 or engine == "reference"))
        check(
            f"1,000 calls against 10 calls in 1MB ({mode}, fastest runs): ours <= 1.5x as long",
            figures,
        )

    figures = [
        (
            f"{row.workload}@{_size_label(row.size)}/{row.mode}",
            row.close_chars["ours"] / row.characters,
            row.close_chars["ours"] <= 1.2 * row.characters,
        )
        for row in rows
        if row.close_chars
    ]
    worst(
        "close values carry at most 1.2x the text (ours, every streaming run; the largest)",
        figures,
        sorted(figures, key=lambda item: -item[1])[:4],
    )

    figures = []
    for row in rows:
        if row.mode == ONE_SHOT and row.workload == "ws-prefix" and row.speedups:
            value = speedup(row)
            figures.append((f"@{_size_label(row.size)}", value, value >= 3.0))
    check("one-shot on the \\s* template: >= 3x the reference", figures)

    figures = []
    for row in rows:
        peak = row.peak.get("ours")
        # Below 100 KB the fixed cost (template, compiled patterns) dominates the ratio.
        if row.mode != ONE_SHOT and peak is not None and row.size >= MEMORY_TARGET_MIN_SIZE:
            value = peak / row.characters
            figures.append(
                (f"{row.workload}@{_size_label(row.size)}/{row.mode}", value, value <= 3.0)
            )
    worst = sorted(figures, key=lambda item: -item[1])[:4]
    if figures:
        targets.append(
            Target(
                f"peak streaming memory (ours, from {_size_label(MEMORY_TARGET_MIN_SIZE)}) <= 3x the generation's size",
                all(ok for _, _, ok in figures),
                "worst: " + ", ".join(f"{label} {value:.2f}x" for label, value, _ in worst),
            )
        )
    else:
        targets.append(
            Target(
                f"peak streaming memory (ours, from {_size_label(MEMORY_TARGET_MIN_SIZE)}) <= 3x the generation's size",
                None,
                "n/a (not measured)",
            )
        )
    return targets


def _parse_size(text: str) -> int:
    text = text.strip().upper()
    for suffix, unit in (("MB", MB), ("KB", KB), ("B", 1)):
        if text.endswith(suffix):
            return int(float(text[: -len(suffix)]) * unit)
    return int(text)


def _argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python scripts/bench_engine.py",
        description="Benchmark our response parser against transformers' reference, side by side.",
    )
    parser.add_argument(
        "--sizes",
        default=DEFAULT_SIZES,
        help=f"generation sizes, comma-separated (default {DEFAULT_SIZES})",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=DEFAULT_REPEATS,
        help=f"timed samples per engine (default {DEFAULT_REPEATS})",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smallest size only, one repeat (what the test suite runs)",
    )
    parser.add_argument(
        "--workloads",
        default=",".join(WORKLOADS),
        help=f"comma-separated subset of: {', '.join(WORKLOADS)} (default all)",
    )
    parser.add_argument(
        "--keep-events",
        action="store_true",
        help="time streaming runs that keep every event in one list (by default each feed's events are dropped as they come)",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="instead of timing, profile our streaming (token chunks) at the largest size and print where the time goes",
    )
    parser.add_argument("--ids", action="store_true", help="run only the token-id section")
    parser.add_argument("--no-ids", action="store_true", help="leave out the token-id section")
    parser.add_argument(
        "--ids-limit",
        default="100KB",
        help="the largest size the token-id section runs (default 100KB: the reference fed one id "
        "at a time is quadratic)",
    )
    parser.add_argument(
        "--against",
        metavar="CHECKOUT",
        help="instead of the reference, time this engine against the engine/ of another checkout (for example a "
        "`git worktree add /tmp/before HEAD~1`), alternating runs in this one process (CPU time, best of the "
        "repeats), and print both side by side",
    )
    return parser


def _engine_of_checkout(root: Path) -> Engine:
    """The engine package of another checkout, imported under its own name so both can run in one process."""
    package = root / "engine" / "__init__.py"
    if not package.is_file():
        raise SystemExit(f"error: {root} has no engine/__init__.py")
    spec = importlib.util.spec_from_file_location(
        "engine_baseline", package, submodule_search_locations=[str(package.parent)]
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["engine_baseline"] = module
    spec.loader.exec_module(module)
    return Engine("baseline", module.ResponseParser, module.parse_response)


def compare_checkouts(
    baseline: Engine, names: list[str], sizes: list[int], repeats: int
) -> list[str]:
    """Lines of a side-by-side table: this engine and `baseline`, alternated, on each workload and size.

    Streaming (token chunks) gives microseconds per chunk; one-shot gives milliseconds per parse.
    Each figure is the best of `repeats` runs in this process's CPU time (`time.process_time`:
    on a shared machine the wall clock counts the waits for a core too). The ratio is this
    engine's time over the baseline's (below 1: this one is faster).
    """
    lines = [
        f"{'workload':12} {'size':>6} {'mode':>8} {'this':>12} {'baseline':>12} {'ratio':>7}  (best of {repeats} alternated runs, CPU time)"
    ]
    for name in names:
        workload = WORKLOADS[name]
        for size in sizes:
            case = make_case(name, size)
            for mode in (TOKENS, ONE_SHOT):
                chunks = token_chunks(case.text) if mode == TOKENS else None
                for engine in (OURS, baseline):
                    _run(engine, workload, case, chunks, keep_events=False)  # warm up
                cpu = time.process_time
                warm = min(
                    _timed(OURS, workload, case, chunks, 1, False, cpu),
                    _timed(baseline, workload, case, chunks, 1, False, cpu),
                )
                loops = max(1, math.ceil(MIN_SAMPLE_SECONDS / max(warm, 1e-6)))
                times: dict[str, list[float]] = {"ours": [], "baseline": []}
                for index in range(repeats):
                    for engine in (OURS, baseline) if index % 2 == 0 else (baseline, OURS):
                        times[engine.name].append(
                            _timed(engine, workload, case, chunks, loops, False, cpu)
                        )
                this, other = min(times["ours"]), min(times["baseline"])
                if chunks is None:
                    shown = f"{this * 1e3:9.3f} ms", f"{other * 1e3:9.3f} ms"
                else:
                    shown = (
                        f"{this / len(chunks) * 1e6:9.3f} us",
                        f"{other / len(chunks) * 1e6:9.3f} us",
                    )
                lines.append(
                    f"{name:12} {_size_label(size):>6} {mode:>8} {shown[0]:>12} {shown[1]:>12} {this / other:7.3f}"
                )
    return lines


def _path_counts(stats: Any) -> dict[str, int]:
    """For `profile_streaming`: calls of what marks each path a chunk can take, by a stable label."""
    from engine.parser import ResponseParser as Parser
    from engine.watch import QuickTest, WatchState

    def calls(function: Callable | str) -> int:
        if isinstance(function, str):  # a built-in, known by its name only
            return sum(entry[1] for (_, _, name), entry in stats.stats.items() if name == function)
        code = function.__code__
        return stats.stats.get((code.co_filename, code.co_firstlineno, code.co_name), (0, 0))[1]

    return {
        "the quick test": calls(QuickTest.hold),
        "its regex search": calls("<method 'search' of 're.Pattern' objects>"),
        "a scan off the quick path": calls(Parser._feed_scanning),
        "a full scan (with the prefix and finalize)": calls(WatchState.scan),
    }


def profile_streaming(workload: Workload, size: int, top: int = 14) -> list[str]:
    """Profile our parser streaming `workload` at `size` in token chunks; return the report's lines.

    cProfile adds a cost to every Python call, so the times are inflated and calls look
    dearer than they are; the call counts (per chunk) and the order of the costs are
    what the report is for: how many chunks needed the quick test, its regex search, a
    feed off the quick path, or a full scan of the window.
    """
    import cProfile
    import pstats

    case = make_case(workload.name, size)
    chunks = token_chunks(case.text)
    _run(OURS, workload, case, chunks)  # compile the template (cached) outside the profile
    profiler = cProfile.Profile()
    profiler.runcall(_run, OURS, workload, case, chunks, keep_events=False)
    stats = pstats.Stats(profiler)
    total = stats.total_tt

    paths = _path_counts(stats)
    lines = [
        f"== profile: {workload.name}, {_size_label(size)}, tokens: {len(chunks)} chunks, {total * 1e3:.1f} ms under cProfile",
        "  chunks that needed: "
        + ", ".join(f"{label} {calls / len(chunks):.2%}" for label, calls in paths.items()),
        f"  {'calls':>9} {'per chunk':>9} {'own time':>9} {'share':>6}  function",
    ]
    entries = sorted(
        stats.stats.items(), key=lambda item: item[1][2], reverse=True
    )  # by own (total) time
    for (filename, line, function), (_, calls, own, _, _) in entries[:top]:
        where = f"{filename.rsplit('/', 1)[-1]}:{line} {function}" if line else function
        lines.append(
            f"  {calls:>9} {calls / len(chunks):>9.1%} {own * 1e3:>6.1f} ms {own / total:>6.1%}  {where}"
        )
    return lines


# -- token ids ------------------------------------------------------------------------


ID_MODES = ("whole", "one id at a time")


def _id_tokenizer(names: list[str]):
    """The demo model's tokenizer with every workload's literal delimiter pieces added as
    special tokens (so its outputs hold control tokens, as a real model's do)."""
    from tests.support.token_parity import demo_tokenizer, wide_tokenizer

    demo_tokenizer()  # the demo model must be there
    return wide_tokenizer([WORKLOADS[name].template for name in names])


def _id_runs(
    template: dict, ids: list[int], pieces: list[str], prefix: str, prefix_ids: list[int], tokenizer
) -> dict:
    """One callable per (path, mode), each returning the message; plus ("decode", mode): the
    decoding alone (the prefix's ids and the generation's, whole or one id at a time with
    `DecodeStream`), which with ("ours text", mode) makes the floor of the id path."""
    from tokenizers.decoders import DecodeStream
    from transformers.utils.chat_parsing import ResponseParser as ReferenceParser
    from transformers.utils.chat_parsing import parse_response as reference_parse

    text = "".join(pieces)
    backend = tokenizer.backend_tokenizer

    def streamed(parser_class, chunks, prefix, **options):
        def run():
            parser = parser_class(template, prefix, **options)
            for chunk in chunks:
                parser.feed(chunk)
            return parser.finalize()[0]

        return run

    def decode_whole():
        backend.decode(prefix_ids, skip_special_tokens=False)
        return backend.decode(ids, skip_special_tokens=False)

    def decode_each_id():
        backend.decode(prefix_ids, skip_special_tokens=False)
        stream = DecodeStream(skip_special_tokens=False)
        return [stream.step(backend, token_id) for token_id in ids]

    each_id = [[token_id] for token_id in ids]
    return {
        ("ours ids", "whole"): lambda: parse_response(
            ids, template, prefix=prefix_ids, tokenizer=tokenizer
        ),
        ("ours text", "whole"): lambda: parse_response(text, template, prefix=prefix),
        ("reference ids", "whole"): lambda: reference_parse(
            ids, template, prefix=prefix_ids, tokenizer=tokenizer
        ),
        ("decode", "whole"): decode_whole,
        ("ours ids", "one id at a time"): streamed(
            ResponseParser, each_id, prefix_ids, tokenizer=tokenizer
        ),
        ("ours text", "one id at a time"): streamed(ResponseParser, pieces, prefix),
        ("reference ids", "one id at a time"): streamed(
            ReferenceParser, each_id, prefix_ids, tokenizer=tokenizer
        ),
        ("decode", "one id at a time"): decode_each_id,
    }


ID_PATHS = ("reference ids", "ours ids", "decode", "ours text")


def id_section(
    names: list[str], sizes: list[int], repeats: int, limit: int
) -> tuple[list[str], int]:
    """The token-id table: lines to print, and how many id parses differed from the reference.

    Per workload, size and mode: the reference's id path, ours, and our floor (decoding alone
    plus our text path alone on the decoded text), each the best of `repeats` runs taken in
    turn, with ours over the floor and the reference over ours.
    """
    from engine.token_ids import TokenDecoder

    tokenizer = _id_tokenizer(names)
    lines = [
        "",
        "== token ids: the reference's id path, ours, and ours' floor (decode alone + our text path "
        f"alone), demo tokenizer + workload delimiters, best of {repeats} runs taken in turn, in "
        "this process's CPU time (steady on a shared machine)",
        "  the prefix is given as its ids (the prompt a server generated from); 'whole' decodes with "
        "one decode call, 'one id at a time' steps a DecodeStream per id",
        f"  {'workload':<14}{'size':>7}{'tokens':>8}  {'mode':<17}{'reference':>10}{'ours':>9}"
        f"{'decode':>9}{'text':>9}{'floor':>9}{'ours/floor':>11}{'ref/ours':>9}",
    ]
    differences = 0
    for name in names:
        workload = WORKLOADS[name]
        for size in [size for size in sizes if size <= limit]:
            case = make_case(name, size)
            ids = tokenizer.encode(case.text, add_special_tokens=False)
            prefix_ids = tokenizer.encode(case.prefix, add_special_tokens=False)
            decoder = TokenDecoder(tokenizer)
            pieces = [decoder.feed([token_id]) for token_id in ids] + [decoder.flush()]
            pieces = [piece.replace("\ufdd2", "") for piece in pieces if piece]
            runs = _id_runs(workload.template, ids, pieces, case.prefix, prefix_ids, tokenizer)
            ours_message = runs[("ours ids", "whole")]()
            theirs_message = runs[("reference ids", "whole")]()
            ours_streamed = runs[("ours ids", "one id at a time")]()
            if workload.spans_implicit_stretches:
                implicit = next(
                    (
                        k
                        for k, v in workload.template["fields"].items()
                        if not ("open" in v or "open_pattern" in v)
                    ),
                    None,
                )
                ours_message = {k: v for k, v in ours_message.items() if k != implicit}
                theirs_message = {k: v for k, v in theirs_message.items() if k != implicit}
                ours_streamed = {k: v for k, v in ours_streamed.items() if k != implicit}
            if ours_message != theirs_message or ours_streamed != theirs_message:
                differences += 1
                lines.append(
                    f"  DIFFERENCE {name} {_size_label(size)}: {_first_difference(ours_message, theirs_message)}"
                )
            for mode in ID_MODES:
                times = {path: math.inf for path in ID_PATHS}
                for _ in range(repeats):
                    for path in ID_PATHS:
                        gc.collect()
                        started = time.process_time()
                        runs[(path, mode)]()
                        times[path] = min(times[path], time.process_time() - started)
                floor = times["decode"] + times["ours text"]
                lines.append(
                    f"  {name:<14}{_size_label(size):>7}{len(ids):>8}  {mode:<17}"
                    f"{_seconds(times['reference ids']):>10}{_seconds(times['ours ids']):>9}"
                    f"{_seconds(times['decode']):>9}{_seconds(times['ours text']):>9}"
                    f"{_seconds(floor):>9}{times['ours ids'] / floor:>10.2f}x"
                    f"{times['reference ids'] / times['ours ids']:>8.1f}x"
                )
    lines.append(
        "  all id messages match the reference's one-shot"
        if not differences
        else f"  {differences} id run(s) differ from the reference"
    )
    return lines, differences


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; return 0 when every message and event matched the reference, else 1."""
    options = _argument_parser().parse_args(argv)
    sizes = sorted({_parse_size(size) for size in options.sizes.split(",") if size.strip()})
    repeats = max(1, options.repeats)
    if options.quick:
        sizes, repeats = sizes[:1], 1
    names = [name.strip() for name in options.workloads.split(",") if name.strip()]
    unknown = [name for name in names if name not in WORKLOADS]
    if unknown:
        print(f"unknown workload(s) {unknown}; choose from {list(WORKLOADS)}", file=sys.stderr)
        return 2
    if options.ids:
        lines, differences = id_section(names, sizes, repeats, _parse_size(options.ids_limit))
        print("\n".join(lines))
        return 1 if differences else 0
    if options.profile:
        for name in names:
            print("\n".join(profile_streaming(WORKLOADS[name], sizes[-1] if sizes else 100 * KB)))
        return 0
    if options.against:
        print(
            "\n".join(
                compare_checkouts(_engine_of_checkout(Path(options.against)), names, sizes, repeats)
            )
        )
        return 0
    reference = _reference_engine()

    print(
        f"Response parser benchmark: ours vs transformers' reference, {repeats} repeat(s), python {sys.version.split()[0]}"
    )
    print(
        "Times are per run (parser construction + feeding + finalize, or one parse_response call)."
    )
    if options.keep_events:
        print("Streaming runs keep every event in one list (--keep-events).")
    else:
        print(
            "Streaming runs drop each feed's events as they come, as a consumer forwarding them would (--keep-events keeps them)."
        )
    print(
        "Speedup = reference time / our time, per alternated pair (a slow reference: its median). "
        "Peak memory: tracemalloc, separate untimed run."
    )
    if any(size >= MB for size in sizes):
        print(
            "Note: the reference is quadratic when streaming (5 to 12 s per 1 MB run in token chunks) and on `\\s*` "
            f"patterns even one-shot; a reference run over {SLOW_RUN_SECONDS:g} s is done {SLOW_RUN_REPEATS} times at most and "
            "its memory is not traced. The full run takes about ten minutes: please be patient."
        )
    rows: list[Measurement] = []
    differences: list[Measurement] = []
    for name in names:
        workload = WORKLOADS[name]
        workload_rows = []
        for size in sizes:
            for mode in MODES:
                if mode == CHARACTERS and size > CHARACTER_MODE_LIMIT:
                    continue
                row = _measure(workload, size, mode, repeats, reference, options.keep_events)
                workload_rows.append(row)
                if row.difference is not None:
                    differences.append(row)
        rows.extend(workload_rows)
        _print_workload(workload, workload_rows)
        sys.stdout.flush()

    print("\n== targets")
    for target in _targets(rows):
        verdict = "n/a " if target.passed is None else "PASS" if target.passed else "FAIL"
        print(f"  [{verdict}] {target.goal}: {target.figure}")

    id_differences = 0
    if not options.no_ids:
        lines, id_differences = id_section(names, sizes, repeats, _parse_size(options.ids_limit))
        print("\n".join(lines))

    if differences:
        row = differences[0]
        print(f"\nDIFFERENCES from the reference: {len(differences)} run(s). First one:")
        print(
            f"  workload {row.workload}, size {row.size}, mode {row.mode} (tests.workloads.make_case({row.workload!r}, {row.size}))"
        )
        print(f"  {row.difference}")
        return 1
    print(
        "\nAll messages and events match the reference (where the implicit field keeps every stretch by design, against the generator's text)."
    )
    return 1 if id_differences else 0


if __name__ == "__main__":
    sys.exit(main())
