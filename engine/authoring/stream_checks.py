"""Stream checks: is this template safe to stream on this generation?

Streaming must equal one-shot parsing: every chunking of a generation gives
the one-shot message and the same text per region (docs/template-language.md). `check_stream` tests that on one generation the way
a serving engine would meet it: one character at a time, split once at every
point, and in seeded random pieces. `truncation` asks the other streaming
question: when generation stops in the middle of a delimiter (a token limit),
does a fragment of that delimiter end up in a text field of the message?
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass
from dataclasses import field as dataclass_field
from typing import Any

from ..errors import ParseDeadlineError, ResponseParseError
from ..inputs import prefix_text
from ..parser import ResponseParser
from ..template import ResponseTemplate, load_template

# Above this many characters the single-split check tests every (n // cap)-th point only.
MAX_EVERY_SPLIT = 1000


@dataclass
class StreamRun:
    """The outcome of one chunking.

    Attributes:
        chunking: ``"one-shot"``, ``"one-char"``, ``"split@<offset>"`` or ``"seed=<n>"``.
        splits: generation offsets where chunks ended (the chunk boundaries).
        message: the message, or None after an error.
        regions: ``[field, concatenated chunk text]`` per region, in order.
        error: the error message, or None.
        stopped: the run reached its deadline before the last chunk (message is None).
        kept_errors: with ``on_error="keep"``, the messages of the errors the parser kept.
    """

    chunking: str
    splits: list[int]
    message: dict | None
    regions: list[list[Any]]
    error: str | None = None
    stopped: bool = False
    kept_errors: list[str] = dataclass_field(default_factory=list)

    def same_as(self, other: "StreamRun") -> bool:
        """True when both runs give the same message and region texts, or fail with the same error.

        After an error the regions are not compared: a run keeps the events of the feeds
        before the failing one, so how much it saw depends on the chunking.
        """
        if self.error is not None or other.error is not None:
            return self.error == other.error
        return (
            self.message == other.message
            and self.regions == other.regions
            and self.kept_errors == other.kept_errors
        )

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class TruncationLeak:
    """A cut inside a delimiter whose fragment landed in a text value.

    Attributes:
        cut: generation length kept.
        fragment: the delimiter's first characters before the cut.
        delimiter: the whole literal it would have been; path: its template key.
        field: the message key whose string value holds the fragment.
    """

    cut: int
    fragment: str
    delimiter: str
    path: str
    field: str

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class StreamCheckReport:
    """What `check_stream` found.

    Attributes:
        ok: every chunking gave the one-shot message and region texts (truncation leaks
            do not affect `ok`: they describe the format, not a parser fault).
        runs: how many chunkings were compared.
        baseline: the one-shot run.
        mismatch: the first run that differed, or None.
        every_split_stride: 1 when every split point was tested, k when only every k-th
            (generations over `MAX_EVERY_SPLIT` characters), 0 when skipped.
        notes: human-readable remarks (caps applied, skipped checks).
        truncation_step: K of the truncation check (0: skipped).
        truncation_leaks: cuts at which a delimiter fragment leaked into a text value.
        seconds: wall time.
        complete: False when `max_seconds` ran out before every chunking (and the
            truncation check) was done; `ok` then speaks for the runs compared.
    """

    ok: bool
    runs: int
    baseline: StreamRun
    mismatch: StreamRun | None
    every_split_stride: int
    notes: list[str]
    truncation_step: int
    truncation_leaks: list[TruncationLeak] = dataclass_field(default_factory=list)
    seconds: float = 0.0
    complete: bool = True

    def to_dict(self) -> dict:
        return asdict(self)


def run_chunks(
    template: ResponseTemplate,
    prefix: str,
    chunks: Iterable[str],
    *,
    tools: list | None = None,
    chunking: str = "",
    regex_timeout: float | None = None,
    deadline: float | None = None,
    on_error: str = "raise",
    max_regions: int | None = None,
    max_value_chars: int | None = None,
) -> StreamRun:
    """Feed `chunks` to a fresh parser and record the message and per-region text.

    `deadline` (a `time.perf_counter()` value) stops feeding once passed, and the parser itself
    at it (`ResponseParser`'s deadline): the run is then `stopped`, with no message.
    `max_regions` and `max_value_chars` are the parser's caps (`ResponseParser`): a run past one
    records its `ParseLimitError` in `error`.

    Returns:
        A `StreamRun`; a `ResponseParseError` is recorded in `error`, not raised.
    """
    splits: list[int] = []
    regions: list[list[Any]] = []
    events: list[dict] = []
    message = None
    error = None
    parser = None
    try:
        parser = ResponseParser(
            template,
            prefix,
            tools=tools,
            regex_timeout=regex_timeout,
            deadline=deadline,
            on_error=on_error,
            max_regions=max_regions,
            max_value_chars=max_value_chars,
        )
        events += parser.initial_events
        at = 0
        for chunk in chunks:
            if deadline is not None and time.perf_counter() > deadline:
                return StreamRun(chunking, splits, None, [], None, stopped=True)
            events += parser.feed(chunk)
            at += len(chunk)
            splits.append(at)
        message, final_events = parser.finalize()
        events += final_events
    except ParseDeadlineError:
        return StreamRun(chunking, splits, None, [], None, stopped=True)
    except ResponseParseError as caught:
        error = str(caught)
    for event in events:
        if event["type"] == "region_open":
            regions.append([event["field"], ""])
        elif event["type"] == "region_chunk":
            regions[-1][1] += event["text"]
    kept = (
        [str(kept) for kept in parser.errors] if parser is not None and on_error == "keep" else []
    )
    return StreamRun(chunking, splits[:-1], message, regions, error, kept_errors=kept)


def split_at(text: str, offsets: Iterable[int]) -> list[str]:
    """Cut `text` into stream chunks at character `offsets`.

    Offsets outside ``1 .. len(text) - 1`` and repeats are ignored; the order given does
    not matter. The chunks concatenate to `text`; an empty text gives ``[]``.

    >>> split_at("abcdefg", [5, 2, 99])
    ['ab', 'cde', 'fg']
    """
    if not text:
        return []
    bounds = [0, *sorted({o for o in offsets if 0 < o < len(text)}), len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:])]


def random_chunks(text: str, seed: int, max_size: int = 8) -> list[str]:
    """Split `text` into seeded random pieces of 1 to `max_size` characters (token-like chunks).

    The same `seed` always gives the same pieces, which concatenate to `text`.
    """
    rng = random.Random(seed)
    offsets, at = [], 0
    while at < len(text):
        at += rng.randint(1, max_size)
        offsets.append(at)
    return split_at(text, offsets)


def _chunkings(
    generation: str, seeds: Iterable[int], every_split: bool, max_splits: int = MAX_EVERY_SPLIT
) -> tuple[Iterator[tuple[str, list[str]]], int, list[str]]:
    """The chunkings `check_stream` compares (one character at a time, each single split, seeded
    random pieces) as `(name, chunks)` pairs made on demand, the single-split stride, and notes.
    At most `max_splits` single splits are made, spread evenly over the generation."""
    n = len(generation)
    stride = 0
    notes: list[str] = []
    if every_split and n > 1 and max_splits > 0:
        stride = max(1, -(-(n - 1) // max_splits))
        if stride > 1:
            notes.append(
                f"generation has {n} characters: split check tested every {stride}th offset, not all {n - 1}"
            )
    elif every_split and n > 1:
        notes.append("split check skipped: the work cap leaves no room for it")
    elif not every_split:
        notes.append("split check skipped")

    def chunkings() -> Iterator[tuple[str, list[str]]]:
        yield "one-char", list(generation)
        if stride:
            for at in range(1, n, stride):
                yield f"split@{at}", [generation[:at], generation[at:]]
        for seed in seeds:
            yield f"seed={seed}", random_chunks(generation, seed)

    return chunkings(), stride, notes


def check_stream(
    generation: str,
    template: dict | str | ResponseTemplate,
    *,
    prefix: str,
    tools: list[dict | Callable] | None = None,
    seeds: Iterable[int] = range(20),
    every_split: bool = True,
    truncation_step: int = 1,
    regex_timeout: float | None = None,
    max_seconds: float | None = None,
    max_chars: int | None = None,
    on_error: str = "raise",
    max_regions: int | None = None,
    max_value_chars: int | None = None,
) -> StreamCheckReport:
    """Compare one-shot parsing with many chunkings of `generation`, then check truncations.

    Args:
        generation: the model output.
        template: the response template (dict, JSON text or loaded).
        prefix: REQUIRED, as for `parse_response`.
        tools: tool schemas or functions.
        seeds: seeds of the random chunkings (pieces of 1 to 8 characters).
        every_split: also split once at every offset (every k-th above `MAX_EVERY_SPLIT`
            characters; the report says which).
        truncation_step: K: test cuts at every K-th offset that falls inside a literal
            delimiter in the generation; 0 skips the truncation check.
        regex_timeout: seconds allowed for each regex call.
        max_seconds: wall-time budget for the whole check (None: no limit; a hostile pattern
            can take `regex_timeout` on every feed). Past it no new run starts, the running one
            stops, and the report is not `complete`.
        max_chars: the characters all runs together may parse (None: no cap). After one-shot,
            one-character and the seeded runs, as many single splits as fit, spread evenly,
            then the truncation cuts that fit, each delimiter's first occurrence first; the
            notes say what was left out, and the report stays `complete` (enough compared).
        on_error: ``"raise"`` or ``"keep"``, as for `ResponseParser`; kept errors are compared.
        max_regions, max_value_chars: each run's parser caps, as for `ResponseParser` (a run
            past one records its `ParseLimitError` as its error, compared like any other).

    Returns:
        A `StreamCheckReport`; runs stop at the first mismatch.

    Raises:
        TemplateError: the template is invalid. ValueError: no prefix.
    """
    started = time.perf_counter()
    loaded = load_template(template)
    prefix = prefix_text(prefix)
    options = dict(tools=tools, regex_timeout=regex_timeout, on_error=on_error)
    options.update(max_regions=max_regions, max_value_chars=max_value_chars)
    deadline = None if max_seconds is None else started + max_seconds
    baseline = run_chunks(
        loaded, prefix, [generation], chunking="one-shot", deadline=deadline, **options
    )
    seeds = list(seeds)
    n = max(1, len(generation))
    max_splits = MAX_EVERY_SPLIT
    if max_chars is not None:  # one-shot, one-char and the seeds first; splits share what is left
        max_splits = min(max_splits, max(0, max_chars // n - 2 - len(seeds)))
    chunkings, stride, notes = _chunkings(generation, seeds, every_split, max_splits)
    runs, mismatch, complete = _compare(baseline, chunkings, loaded, prefix, deadline, options)
    leaks: list[TruncationLeak] = []
    chunkings_done = complete
    if not truncation_step:
        notes.append("truncation check skipped")
    elif complete:
        spent = (runs + 1) * len(generation)
        cap = None if max_chars is None else max(0, max_chars - spent)
        leaks, complete, skipped = _truncation(
            generation, loaded, prefix, truncation_step, deadline, cap, **options
        )
        if skipped:
            notes.append(
                f"truncation check: {skipped} cuts not tested (the work cap of {max_chars:,} characters)"
            )
    if not complete:
        notes.append(_budget_note(max_seconds, runs, chunkings_done))
    return StreamCheckReport(
        ok=mismatch is None,
        runs=runs,
        baseline=baseline,
        mismatch=mismatch,
        every_split_stride=stride,
        notes=notes,
        truncation_step=truncation_step,
        truncation_leaks=leaks,
        seconds=time.perf_counter() - started,
        complete=complete,
    )


def _budget_note(max_seconds: float, runs: int, chunkings_done: bool) -> str:
    """The note of a check stopped by its time budget: what was left out."""
    what = (
        "the truncation check was cut short"
        if chunkings_done
        else f"{runs - 1} chunkings compared, the rest not run"
    )
    return f"stopped after the {max_seconds:g} s budget: {what}"


def _compare(
    baseline: StreamRun,
    chunkings: Iterator[tuple[str, list[str]]],
    template: ResponseTemplate,
    prefix: str,
    deadline: float | None,
    options: dict,
) -> tuple[int, StreamRun | None, bool]:
    """Run each chunking until one differs from `baseline` or the time runs out:
    ``(runs done, baseline included; the first run that differs, or None; whether every run
    that was started finished)``."""
    runs, complete = 1, not baseline.stopped
    for name, chunks in chunkings if complete else ():
        run = run_chunks(template, prefix, chunks, chunking=name, deadline=deadline, **options)
        if run.stopped:
            return runs, None, False
        runs += 1
        if not run.same_as(baseline):
            return runs, run, True
    return runs, None, complete


def _literal_delimiters(template: ResponseTemplate) -> list[tuple[str, str]]:
    found = []
    for spec in template.fields.values():
        for delimiter in (spec.open, spec.close):
            if delimiter is not None and delimiter.literals is not None:
                found += [
                    (literal, delimiter.path) for literal in delimiter.literals if len(literal) > 1
                ]
    return found


def _text_values(message: dict, template: ResponseTemplate) -> list[tuple[str, str]]:
    values = []
    for spec in template.fields.values():
        value = message.get(spec.name)
        if isinstance(value, str):
            values.append((spec.name, value))
        elif isinstance(value, list):
            values += [(spec.name, item) for item in value if isinstance(item, str)]
    return values


def truncation(
    generation: str,
    template: dict | str | ResponseTemplate,
    *,
    prefix: str,
    step: int = 1,
    tools: list | None = None,
    regex_timeout: float | None = None,
    on_error: str = "raise",
) -> list[TruncationLeak]:
    """Cut `generation` at every `step`-th offset inside a literal delimiter and parse what is left.

    A cut inside a delimiter leaves its first characters at the end of the stream; at
    finalize they are text. A leak is reported when that fragment ends up at the end
    of a string value of the message. Cuts that fail to parse are not leaks.

    Returns:
        The leaks, in cut order (at most one per cut).
    """
    options = {"tools": tools, "regex_timeout": regex_timeout, "on_error": on_error}
    return _truncation(generation, load_template(template), prefix, step, None, None, **options)[0]


def _truncation(
    generation: str,
    loaded: ResponseTemplate,
    prefix: str,
    step: int,
    deadline: float | None,
    max_chars: int | None,
    *,
    tools: list | None = None,
    regex_timeout: float | None = None,
    on_error: str = "raise",
    max_regions: int | None = None,
    max_value_chars: int | None = None,
) -> tuple[list[TruncationLeak], bool, int]:
    """`truncation`'s leaks, whether every cut was parsed before `deadline`, and how many cuts
    the work cap `max_chars` (characters parsed, None: no cap) left out. Under a cap each
    delimiter's first occurrence is cut first; leaks are listed in cut order."""
    inside: dict[int, tuple[str, str, int]] = {}
    for literal, path in _literal_delimiters(loaded):
        start = generation.find(literal)
        while start != -1:
            for cut in range(start + 1, start + len(literal)):
                if cut % step == 0:
                    inside.setdefault(cut, (literal, path, start))
            start = generation.find(literal, start + 1)
    order = sorted(inside)
    if max_chars is not None:
        firsts: dict[tuple[str, str], int] = {}
        for cut in order:
            literal, path, start = inside[cut]
            firsts.setdefault((literal, path), start)
        order.sort(key=lambda cut: (inside[cut][2] != firsts[inside[cut][:2]], cut))
    leaks, parsed = [], 0
    for done, cut in enumerate(order):
        literal, path, start = inside[cut]
        fragment = generation[start:cut]
        if deadline is not None and time.perf_counter() > deadline:
            return sorted(leaks, key=lambda leak: leak.cut), False, 0
        if max_chars is not None and parsed + cut > max_chars:
            return sorted(leaks, key=lambda leak: leak.cut), True, len(order) - done
        parsed += cut
        run = run_chunks(
            loaded,
            prefix,
            [generation[:cut]],
            tools=tools,
            regex_timeout=regex_timeout,
            deadline=deadline,
            on_error=on_error,
            max_regions=max_regions,
            max_value_chars=max_value_chars,
        )
        if run.stopped:
            return sorted(leaks, key=lambda leak: leak.cut), False, 0
        if run.message is None:
            continue
        for name, value in _text_values(run.message, loaded):
            if value.endswith(fragment.strip()) and fragment.strip():
                leaks.append(TruncationLeak(cut, fragment, literal, path, name))
                break
    return sorted(leaks, key=lambda leak: leak.cut), True, 0
