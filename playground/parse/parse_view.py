"""The parse as the page shows it: a `ParseView`, built from a whole parse or a stream.

`traced_view` parses a whole generation with `engine.trace`; `LiveParse` feeds a
parser chunk by chunk (replay and live generation) and can be viewed at any
moment. Both give a `ParseView`, which every panel of the page is drawn from.

Both parse leniently (`on_error="keep"`): a region that fails to parse keeps
its raw text as unclaimed text and is marked with its error at the failing
character, and every other field keeps its value, so an error never hides the
parts that did parse. (A delimiter pattern over its time budget still stops
the parse; the text after it is then "unparsed".)

Offsets are stream offsets: 0 is the first character of the prefix after its
start-anchor cut; the generation follows the prefix tail.
"""

from __future__ import annotations

import itertools
import sys
import time
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from engine import ResponseParser, load_template
from engine.authoring.trace import trace
from engine.errors import ParseDeadlineError, ParseLimitError, ResponseParseError
from engine.events import message_from_events

from ..server import limits
from .event_store import FINALIZE, PREFIX, WHOLE_FEED, EventStore, LoggedEvent

# Failed regions are kept as text with their error (see the module docstring).
ON_ERROR = "keep"
# A stream's fed pieces are joined into one string once there are this many.
PARTS_JOINED = 4096
# Bytes a view keeps per span, per logged event and per event kept as a dict (see `ParseView.weight`).
SPAN_BYTES, LOGGED_EVENT_BYTES, KEPT_EVENT_BYTES = 320, 32, 600
# What explaining held text may try: its last starts, within a time (seconds).
HELD_STARTS = 256
HELD_SECONDS = 0.2


@dataclass(frozen=True)
class MapSpan:
    """A stretch `[start, end)` of the stream for the region map.

    Attributes:
        kind: "body", "open", "close", "discarded", "held" (maybe a delimiter, not
            decided yet) or "unparsed" (after a parse error the parser never reached).
        field, region: the field and region index (0-based, in opening order) for
            bodies and delimiters.
        captures: a delimiter's named groups.
        delimiter: the delimiter as written (a literal, literals joined by " | ", or a
            pattern); delimiter_path: its template key (`fields.x.close_pattern`);
            matched: the whole text it matched.
        error: index into `ParseView.errors` when this span belongs to a failed region.
    """

    start: int
    end: int
    kind: str
    field: str | None = None
    region: int | None = None
    captures: dict | None = None
    delimiter: str | None = None
    delimiter_path: str | None = None
    matched: str | None = None
    error: int | None = None


@dataclass(frozen=True)
class ErrorMark:
    """A region that failed to parse.

    Attributes:
        message: the error for people, starting with its type (``ResponseParseError: ...``).
        field: the field whose region failed, or None (a message-level error).
        key: the template key that failed (``fields.tool_calls.content``), or None.
        start, end: the failed region in stream offsets (delimiters included), or None.
        position: the stream offset of the exact failing character, or None when unknown.
    """

    message: str
    field: str | None = None
    key: str | None = None
    start: int | None = None
    end: int | None = None
    position: int | None = None

    @property
    def at(self) -> int | None:
        """Where the map marks the error: the failing character, else the region's start."""
        return self.position if self.position is not None else self.start


@dataclass(frozen=True)
class WarningNote:
    """A probable fault seen in the parse (`engine.trace` warnings): code, message, suggestion."""

    code: str
    message: str
    suggestion: str = ""

    def __str__(self) -> str:
        return f"{self.message} → {self.suggestion}" if self.suggestion else self.message


@dataclass
class ParseView:
    """Everything the page shows about one parse, finished or in progress.

    Attributes:
        cut_away: the prefix before the start-anchor cut (never parsed).
        stream: the prefix tail followed by the generation (what the spans index).
        tail_length: length of the prefix tail in `stream`.
        anchor_found: whether the start anchor matched in the prefix (True for an empty prefix).
        spans: `MapSpan`s tiling the stream, in order.
        events: every event, numbered (`LoggedEvents`, built as they are read).
        field_names: the template's fields, in order.
        message: the message (with lenient parsing also when a region failed), or None.
        partial_message: while streaming, what the regions closed so far add up to (else None).
        errors: the regions that failed (`ErrorMark`s), in order.
        warnings: probable faults (`WarningNote`s).
        figures: (name, value) pairs for the figures row.
        finished: False while streaming (the last span may be "held").
        chunk_ends: stream offsets where fed chunks ended (replay and live), in order.
        fresh_feeds: how many of the last feeds this update shows as new (outlined in the map,
            marked in the event log): 1 for a step, every feed since the last update when
            updates are coalesced (live generation), so the growth is what is outlined.
        held_reason: why the held text is held ("`<tool` could still become `<tool_call>`").
        template, tools: the inputs.
        diagnoses: the causes of what went wrong (`engine.authoring.diagnosis`), worked out when first
            asked for (`playground.parse.causes.diagnoses_of`); None until then.
    """

    cut_away: str = ""
    stream: str = ""
    tail_length: int = 0
    anchor_found: bool = True
    spans: list[MapSpan] = field(default_factory=list)
    events: Sequence[LoggedEvent] = ()
    field_names: list[str] = field(default_factory=list)
    message: dict | None = None
    partial_message: dict | None = None
    errors: list[ErrorMark] = field(default_factory=list)
    warnings: list[WarningNote] = field(default_factory=list)
    figures: list[tuple[str, str]] = field(default_factory=list)
    finished: bool = True
    chunk_ends: Sequence[int] = ()
    fresh_feeds: int = 1
    held_reason: str = ""
    template: dict | None = None
    tools: list | None = None
    diagnoses: list | None = None

    @property
    def weight(self) -> int:
        """About the bytes this view keeps (measured with tracemalloc on big pastes): the text twice
        (the stream and the values made of it), each span, each logged event, each kept event dict."""
        store = getattr(self.events, "_store", None)
        kept = len(store._kept) if store is not None else len(self.events)
        return (
            2 * (sys.getsizeof(self.stream) + sys.getsizeof(self.cut_away))
            + SPAN_BYTES * len(self.spans)
            + LOGGED_EVENT_BYTES * len(self.events)
            + KEPT_EVENT_BYTES * kept
            + 8 * len(self.chunk_ends)
        )

    @property
    def error(self) -> str | None:
        """The first error's message, or None."""
        return self.errors[0].message if self.errors else None

    @property
    def initial_events(self) -> list[dict]:
        """The events the prefix produced (`ResponseParser.initial_events`)."""
        return [
            logged.event
            for logged in itertools.takewhile(lambda logged: logged.phase == "prefix", self.events)
        ]

    @property
    def current_feed(self) -> tuple[int, int] | None:
        """The stream range the fresh feeds added (the last `fresh_feeds`), or None before the first feed."""
        if not self.chunk_ends:
            return None
        fresh = max(1, self.fresh_feeds)
        start = self.chunk_ends[-1 - fresh] if len(self.chunk_ends) > fresh else self.tail_length
        return start, self.chunk_ends[-1]

    @property
    def current_phases(self) -> frozenset[str]:
        """The event phases of the fresh feeds (``"feed N"``), empty before the first feed."""
        feeds = len(self.chunk_ends)
        return frozenset(
            f"feed {n}" for n in range(max(1, feeds - max(1, self.fresh_feeds) + 1), feeds + 1)
        )


def _phase(stage: str, chunk: int | None) -> int:
    """The event-store phase code of a trace event's stage and chunk index."""
    if stage == "feed":
        return WHOLE_FEED if chunk is None else chunk + 1
    return PREFIX if stage == "prefix" else FINALIZE


def _deadline_note(message: str, budget: str) -> str:
    """An error message, with the time budget named when the parse ran past its deadline."""
    seconds = getattr(limits.current(), budget)
    return f"{message} (the time budget is PLAYGROUND_LIMITS {budget}, {seconds:g} s)"


def _limit_note(message: str) -> str:
    """The PLAYGROUND_LIMITS key behind a `ParseLimitError` message, with its value."""
    key = "value_chars" if "max_value_chars" in message else "regions"
    return f" (PLAYGROUND_LIMITS {key}, {getattr(limits.current(), key):,})"


def _trace_errors(result, to_stream, budget: str) -> list[ErrorMark]:
    """ErrorMarks of a trace: the regions kept with their errors, then the error that stopped it."""
    errors = [*result.errors, *([result.error] if result.error else [])]
    marks = []
    for index, error in enumerate(errors):
        region = [s for s in result.spans if s.error == index]
        if region:
            start, end = region[0].stream_start, region[-1].stream_end
        else:
            start = error.stream_offset
            end = None if start is None or error.text is None else start + len(error.text)
        position = (
            None if error.position is None else to_stream(error.position_source, error.position)
        )
        message = f"{error.type}: {error.message}"
        if error.type == ParseDeadlineError.__name__:
            message = _deadline_note(message, budget)
        elif error.type == ParseLimitError.__name__:
            message += _limit_note(message)
        marks.append(ErrorMark(message, error.field, error.key, start, end, position))
    return marks


def traced_view(
    template: dict,
    prefix: str,
    generation: str,
    tools: list | None,
    *,
    budget: str = "parse_seconds",
    until: float | None = None,
) -> ParseView:
    """Parse a whole generation with `engine.trace` and turn it into a ParseView.

    `budget` is the ``*_seconds`` limit the parse must end within (PLAYGROUND_LIMITS); past it
    the parse stops with an error naming it, and the rest is "unparsed". `until` (a
    `time.perf_counter()` value) ends it earlier when the request's own budget ends first.

    Raises TemplateError for a template that does not load; parse errors land in the view.
    """
    started = time.perf_counter()
    deadline = started + getattr(limits.current(), budget)
    result = trace(
        generation,
        template,
        prefix=prefix,
        tools=tools,
        regex_timeout=limits.current().regex_seconds,
        deadline=deadline if until is None else min(deadline, until),
        positions=True,
        on_error=ON_ERROR,
        max_regions=limits.current().regions,
        max_value_chars=limits.current().value_chars,
    )
    seconds = time.perf_counter() - started
    tail = result.prefix_tail

    def to_stream(source: str | None, offset: int) -> int:
        return offset - result.anchor.offset if source == "prefix" else len(tail) + offset

    spans = [
        MapSpan(
            s.stream_start,
            s.stream_end,
            s.kind,
            s.field,
            s.region,
            s.captures or None,
            s.delimiter,
            s.delimiter_path,
            s.matched_text,
            s.error,
        )
        for s in result.spans
    ]
    store = EventStore()
    for traced in result.events:
        store.append([traced.event], _phase(traced.stage, traced.chunk))
    stream = tail + generation
    events = store.view(stream)
    return ParseView(
        cut_away=result.anchor.dropped,
        stream=stream,
        tail_length=len(tail),
        anchor_found=result.anchor.found or not prefix,
        spans=spans,
        events=events,
        field_names=list(template.get("fields", {})),
        message=result.message,
        errors=_trace_errors(result, to_stream, budget),
        warnings=[WarningNote(w.code, w.message, w.suggestion) for w in result.warnings],
        figures=[
            ("characters", f"{len(generation):,}"),
            ("events", f"{len(events):,}"),
            ("traced parse", f"{seconds * 1000:.1f} ms"),
        ],
        template=template,
        tools=tools,
    )


def held_reason(template: dict, current_field: str | None, held: str) -> str:
    """Why `held` text is held back: which delimiter it could still become.

    Literal delimiters are checked by their first characters; patterns by partial
    matching. Returns "" when nothing is held.
    """
    if not held:
        return ""
    loaded = load_template(template)
    spec = loaded.fields.get(current_field) if current_field else None
    watching = (
        loaded.watch_outside if spec is None or spec.implicit else loaded.watch_inside[spec.name]
    )
    # A pattern may hold a long text: only its last HELD_STARTS starts are tried, within HELD_SECONDS.
    ends = time.perf_counter() + HELD_SECONDS
    for delimiter in watching.delimiters:
        for start in range(max(0, len(held) - HELD_STARTS), len(held)):
            if time.perf_counter() > ends:
                return f"`{shorten_text(held)}` is held until more text decides it"
            tail = held[start:]
            if delimiter.literals is not None:
                literal = next(
                    (x for x in delimiter.literals if x.startswith(tail) and x != tail), None
                )
                if literal is not None:
                    return f"`{tail}` could still become `{literal}` ({delimiter.path})"
            else:
                try:
                    partial = delimiter.pattern.fullmatch(tail, partial=True, timeout=0.05)
                except TimeoutError:
                    partial = None
                if partial is not None:
                    return f"`{tail}` could still match `{delimiter.source}` ({delimiter.path})"
    return f"`{shorten_text(held)}` is held until more text decides it"


def shorten_text(text: str, limit: int = 200) -> str:
    """`text`, its middle cut out when it is longer than `limit` characters."""
    return text if len(text) <= limit else f"{text[: limit // 2]}…{text[-limit // 2 :]}"


def _marked(spans: list[MapSpan], error: ErrorMark, index: int) -> list[MapSpan]:
    """`spans` with those starting in `error`'s range marked with `index` (spans marked already
    keep their error); a merged stretch that crosses an end of the range is cut there first."""
    if error.start is None or error.end is None:
        return spans
    out = []
    for span in spans:
        pieces = [span]
        if span.error is None and span.delimiter is None:
            cuts = sorted({cut for cut in (error.start, error.end) if span.start < cut < span.end})
            if cuts:
                bounds = [span.start, *cuts, span.end]
                pieces = [replace(span, start=a, end=b) for a, b in zip(bounds, bounds[1:])]
        for piece in pieces:
            if piece.error is None and error.start <= piece.start < error.end:
                piece = replace(piece, error=index)
            out.append(piece)
    return out


class PlainParse:
    """A plain `ResponseParser` on the path library users get (no positions, no spans, the quick
    path on, errors raised), fed the same chunks as a traced `LiveParse` and timed on its own:
    what "parse per token" measures, apart from the tracing the page's views need.

    Attributes:
        seconds: CPU time of this thread spent feeding and finalizing so far (not building the
            parser: the template's compilation and the prefix are paid once per stream, not per
            token). CPU time, not wall time: while a model generates in another thread, a wall
            clock would count the waits for Python's interpreter lock as parsing.
        stopped: why timing stopped early ("" while it runs): the plain parser raised.
        message: the message the plain parser gave at finalize (None before, or when it raised).
    """

    def __init__(self, template: dict, prefix: str, tools: list | None):
        self.seconds = 0.0
        self.stopped = ""
        self.message: dict | None = None
        self._parser: ResponseParser | None = None
        try:
            self._parser = ResponseParser(
                template, prefix=prefix, tools=tools, regex_timeout=limits.current().regex_seconds
            )
        except (ResponseParseError, TimeoutError) as error:
            self.stopped = f"{type(error).__name__}: {error}"

    def _timed(self, step, *args):
        """`step(*args)`, its CPU time added to `seconds`; None when the parser raised (timing stops)."""
        started = time.thread_time()
        try:
            return step(*args)
        except (ResponseParseError, TimeoutError) as error:
            self._parser, self.stopped = None, f"{type(error).__name__}: {error}"
            return None
        finally:
            self.seconds += time.thread_time() - started

    def feed(self, chunk: str) -> None:
        if self._parser is not None:
            self._timed(self._parser.feed, chunk)

    def finalize(self) -> None:
        if self._parser is not None:
            finished = self._timed(self._parser.finalize)
            self.message = finished[0] if finished else None
            self._parser = None


class LiveParse:
    """A parse fed chunk by chunk (replay and live generation), viewable at any moment.

    `plain`: also feed a `PlainParse` (live generation's "parse per token" figure) and time the
    traced parser: `parse_seconds` is its CPU time in feed and finalize (0 without `plain`: a
    replay does not time itself). `deadline` (a `time.perf_counter()` value, or None) is the
    parser's: a feed or finalize that runs past it stops the parse with a `ParseDeadlineError`
    naming `budget`; a server sets it per request (`set_deadline`).
    """

    def __init__(
        self,
        template: dict,
        prefix: str,
        tools: list | None,
        *,
        plain: bool = False,
        deadline: float | None = None,
        budget: str = "replay_seconds",
    ):
        self.template, self.tools = template, tools
        self.field_names = list(template.get("fields", {}))
        self.events = EventStore()
        self.parts: list[str] = []
        self.chunk_ends = array("q")
        self.message: dict | None = None
        self.error: ResponseParseError | None = None
        self.finished = False
        self.parse_seconds = 0.0
        self.feeds = 0
        self.budget = budget
        self.plain = PlainParse(template, prefix, tools) if plain else None
        self.parser = ResponseParser(
            template,
            prefix=prefix,
            tools=tools,
            regex_timeout=limits.current().regex_seconds,
            deadline=deadline,
            positions=True,
            record_spans=True,
            on_error=ON_ERROR,
            max_regions=limits.current().regions,
            max_value_chars=limits.current().value_chars,
        )
        self.cut_away = prefix[: self.parser.prefix_cut]
        self.tail = prefix[self.parser.prefix_cut :]
        self.anchor_found = not prefix or self.parser.prefix_cut > 0
        self.received = len(self.tail)
        self._merged: list[MapSpan] = []
        self._errors_merged = 0
        self.open_field: str | None = None
        self._log(self.parser.initial_events, PREFIX)

    def set_deadline(self, deadline: float | None) -> None:
        """The time the parser must stop by from now on (one per request), or None."""
        self.parser.deadline = deadline

    def _log(self, events: list[dict], phase: int) -> None:
        self.events.append(events, phase)
        for event in events:  # the region text goes to now: the last one opened and not closed
            kind = event["type"]
            if kind == "region_open":
                self.open_field = event["field"]
            elif kind == "region_close":
                self.open_field = None

    def feed(self, chunk: str) -> None:
        """Feed one chunk (after an error the text is kept but no longer parsed)."""
        parts = self.parts
        parts.append(chunk)
        if len(parts) >= PARTS_JOINED:  # one string, not a list of a million one-character ones
            parts[:] = ["".join(parts)]
        self.received += len(chunk)
        if self.error is not None or self.finished:
            return
        self.feeds += 1
        self.chunk_ends.append(self.received)
        plain = self.plain
        if plain is not None:
            plain.feed(chunk)
            started = time.thread_time()
        try:
            events = self.parser.feed(chunk)
        except ResponseParseError as error:
            self.error = error
            events = []
        if plain is not None:
            self.parse_seconds += time.thread_time() - started
        if events:
            if len(events) == 1 and events[0]["type"] == "region_chunk":
                self.events.append(
                    events, self.feeds
                )  # the common case: one more chunk of the open region
            else:
                self._log(events, self.feeds)

    def finalize(self) -> None:
        """End the stream: settle held text and take the message."""
        if self.finished:
            return
        self.finished = True
        if self.plain is not None:
            self.plain.finalize()
        if self.error is not None:
            return
        started = time.thread_time()
        try:
            self.message, events = self.parser.finalize()
        except ResponseParseError as error:
            self.error = error
            events = []
        if self.plain is not None:
            self.parse_seconds += time.thread_time() - started
        self._log(events, FINALIZE)

    def _errors(self) -> list[ErrorMark]:
        found = list(self.parser.errors)
        if self.error is not None and self.error not in found:
            found.append(self.error)
        marks = []
        for error in found:
            start = error.offset if error.start is None else error.start
            end = error.end
            if end is None and error.offset is not None and error.text is not None:
                end = error.offset + len(error.text)
            message = f"{type(error).__name__}: {error}"
            if isinstance(error, ParseDeadlineError):
                message = _deadline_note(message, self.budget)
            elif isinstance(error, ParseLimitError):
                message += _limit_note(message)
            marks.append(ErrorMark(message, error.field, error.key, start, end, error.position))
        return marks

    def _merged_spans(self, errors: list[ErrorMark]) -> list[MapSpan]:
        """The parser's spans as MapSpans, consecutive pieces of one stretch merged (a stream fed a
        character at a time records a span per feed).

        Kept between views: the spans recorded since the last view are merged in and dropped from
        the parser's list, so a long stream holds one MapSpan per stretch, not one per feed. An
        error found since marks the spans in its range (cut at its ends), as it covers text
        recorded before it.
        """
        merged = self._merged
        for index in range(self._errors_merged, len(errors)):
            merged[:] = _marked(merged, errors[index], index)
        self._errors_merged = len(errors)
        ranges = [
            (i, e.start, e.end)
            for i, e in enumerate(errors)
            if e.start is not None and e.end is not None
        ]
        recorded = self.parser.spans
        # The stretch being merged: its MapSpan fields but the end, and its end (built once it ends).
        last = merged.pop() if merged and merged[-1].delimiter is None else None
        run = None if last is None else (last.kind, last.field, last.region, last.error)
        run_start = None if last is None else last.start
        run_end = None if last is None else last.end
        for s in recorded:
            match = s.match
            error = next((i for i, a, b in ranges if a <= s.start < b), None) if ranges else None
            if (
                match is None
                and run is not None
                and run_end == s.start
                and run == (s.kind, s.field, s.region, error)
            ):
                run_end = s.end  # one stretch, however many feeds it came in
                continue
            if run is not None:
                merged.append(MapSpan(run_start, run_end, run[0], run[1], run[2], error=run[3]))
                run = None
            if match is None:
                run, run_start, run_end = (s.kind, s.field, s.region, error), s.start, s.end
                continue
            merged.append(
                MapSpan(
                    s.start,
                    s.end,
                    s.kind,
                    s.field,
                    s.region,
                    dict(match.captures) if match.captures else None,
                    match.delimiter.source,
                    match.delimiter.path,
                    match.text,
                    error,
                )
            )
        if run is not None:
            merged.append(MapSpan(run_start, run_end, run[0], run[1], run[2], error=run[3]))
        recorded.clear()  # the parser only appends to its list; what it held is merged in now
        return list(merged)

    def view(
        self,
        extra_figures: list[tuple[str, str]] = (),
        *,
        partial_message: bool = True,
        fresh_feeds: int = 1,
    ) -> ParseView:
        """The parse so far as a ParseView (held text as a "held" span while streaming).

        `partial_message`: while streaming, add up the regions closed so far (a pass over every
        event, which a fast replay of a huge input skips on its intermediate updates).
        `fresh_feeds`: how many of the last feeds to show as new (`ParseView.fresh_feeds`).
        """
        stream = self.tail + "".join(self.parts)
        events = self.events.view(stream)
        errors = self._errors()
        spans = self._merged_spans(errors)
        decided = spans[-1].end if spans else 0
        reason = ""
        if decided < len(stream):
            kind = "unparsed" if self.error else "held"
            spans.append(MapSpan(decided, len(stream), kind))
            if kind == "held":
                reason = held_reason(self.template, self.open_field, stream[decided:])
        return ParseView(
            cut_away=self.cut_away,
            stream=stream,
            tail_length=len(self.tail),
            anchor_found=self.anchor_found,
            spans=spans,
            events=events,
            field_names=self.field_names,
            message=self.message,
            partial_message=(
                message_from_events((e.event for e in events), self.template)
                if partial_message and not self.finished
                else None
            ),
            errors=errors,
            figures=list(extra_figures),
            finished=self.finished,
            chunk_ends=self.chunk_ends[:],
            fresh_feeds=fresh_feeds,
            held_reason=reason,
            template=self.template,
            tools=self.tools,
        )
