"""Tracing: where every character of a parse went, for template authors.

`Tracer` follows one parse as it is fed: a whole generation, or chunk by chunk
while a model streams or a replay steps. It runs the parser with positions and
span records on, merges the records into one `TraceSpan` a stretch (a stream fed
a character at a time keeps one span per stretch, not one per feed), and can be
read at any moment: its spans tile the prefix tail and the text received so far
with no gaps and no overlaps (text not decided yet is ``"held"``), so a view can
colour every character. It keeps going when the parse fails: the text the
parser never reached becomes one ``"unparsed"`` span.

`trace()` is a `Tracer` fed a whole generation (or given chunks, with a snapshot
after each), returned as a `Trace`.

Each span carries both offsets: `stream_start`/`stream_end` in the parser's
stream (the prefix after its start-anchor cut, then the generation) and
`start`/`end` in the text the author has (`source`: the prefix or the
generation). A stretch that crosses the prefix/generation boundary is two spans.

When the parse is finished, the tracer reads the picture once for the faults
template authors meet most (`warnings`, from `engine.authoring.faults`: a close
delimiter with no open, usually a missing prefix; a tool-call open swallowed by
another region; a close delimiter that fired inside a JSON string) and for the
cause behind them in the author's terms (`diagnoses`, from
`engine.authoring.diagnosis`: a start anchor not in the prefix, a near miss of a
delimiter, a region that never closed).
"""

from __future__ import annotations

import copy
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from dataclasses import field as dataclass_field

from ..errors import PatternTimeoutError, ResponseParseError
from ..inputs import prefix_cut, prefix_text
from ..parser import ResponseParser
from ..template import ResponseTemplate, load_template
from ..token_ids import IdReader, StreamTokens, strip_marks, token_id_list
from .diagnosis import Diagnosis, diagnose
from .faults import TraceWarning, find_warnings, with_account
from .time_budget import deadline_in_force

# Received pieces are joined into one string once there are this many (a stream fed a character
# at a time would otherwise keep a list of a million one-character strings).
PARTS_JOINED = 4096
# The parser's span records are merged into spans once there are this many (and whenever the
# spans are read): merging after every feed would cost each feed a few calls more.
RECORDS_MERGED = 256


class StreamText:
    """The text a tracer's spans index (the prefix tail, then the generation received so far).

    Every span of a tracer shares one, so that no span holds a copy of its characters: the
    text only grows, so a span read after more text arrived still reads its own stretch.
    """

    __slots__ = ("text",)

    def __init__(self, text: str = ""):
        self.text = text


@dataclass(slots=True)
class TraceSpan:
    """One stretch of the prefix tail or of the generation, and what became of it.

    Attributes:
        start, end: offsets in `source` (``[start, end)``).
        source: ``"prefix"`` (offsets into the whole prefix) or ``"generation"``.
        stream_start, stream_end: the same stretch in parser stream offsets
            (prefix tail after the anchor, then the generation).
        kind: ``"body"`` (region text), ``"open"`` / ``"close"`` (a delimiter),
            ``"discarded"`` (no region open, no implicit field), ``"held"`` (while
            streaming: maybe part of a delimiter, not decided yet) or
            ``"unparsed"`` (after a parse error: never reached).
        field, region: the field and region index (0-based, in opening order) for bodies
            and delimiters, else None.
        side: ``"open"`` / ``"close"`` for delimiters, else None.
        delimiter: the literal (literals joined by `` | ``) or pattern that matched, as
            written in the template.
        delimiter_path: JSON path of that template key (``fields.x.close_pattern``).
        captures: named captures of the match (``{}`` for literals).
        matched_text: the whole delimiter match (also when this span is one part of a
            match split at the prefix/generation boundary).
        error: for the spans of a region that failed to parse (``on_error="keep"``), the
            index of its error in `Trace.errors`; else None.
        stream: the text the stream offsets index, shared by the spans of one tracer (see
            `text`); None for a span made by hand (its `text` is then ``""``).
        text: the characters of the stretch (read from `stream`).
    """

    start: int
    end: int
    source: str
    stream_start: int
    stream_end: int
    kind: str
    field: str | None = None
    region: int | None = None
    side: str | None = None
    delimiter: str | None = None
    delimiter_path: str | None = None
    captures: dict[str, str] = dataclass_field(default_factory=dict)
    matched_text: str | None = None
    error: int | None = None
    stream: StreamText | None = dataclass_field(default=None, repr=False, compare=False)

    @property
    def text(self) -> str:
        """The characters of the stretch."""
        if self.stream is None:
            return ""
        return self.stream.text[self.stream_start : self.stream_end]

    def to_dict(self) -> dict:
        """A JSON-ready dict of every attribute, the text included (the shared stream is not)."""
        return {
            "start": self.start,
            "end": self.end,
            "source": self.source,
            "stream_start": self.stream_start,
            "stream_end": self.stream_end,
            "kind": self.kind,
            "field": self.field,
            "region": self.region,
            "text": self.text,
            "side": self.side,
            "delimiter": self.delimiter,
            "delimiter_path": self.delimiter_path,
            "captures": dict(self.captures),
            "matched_text": self.matched_text,
            "error": self.error,
        }


@dataclass
class TraceEvent:
    """One parser event and the spans it came from.

    Attributes:
        event: the event dict exactly as the parser emits it; with `start`/`end`
            (stream offsets) only when `trace(..., positions=True)`.
        spans: indices into the spans list of the trace or snapshot: one span
            normally, two when the stretch crosses the prefix/generation boundary,
            none for a zero-width event with no span (an empty region's close).
        stage: ``"prefix"`` (an initial event), ``"feed"`` or ``"finalize"``.
        chunk: index of the fed chunk that produced it (None for prefix and finalize).
    """

    event: dict
    spans: list[int]
    stage: str
    chunk: int | None = None

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class AnchorCut:
    """Where the start anchor cut the prefix.

    Attributes:
        anchor: the anchor literal(s) or pattern as written.
        found: whether the anchor matched in the prefix.
        offset: prefix offset where the parsed stream starts (0 when not found).
        dropped: the prefix text before `offset` (earlier turns, the anchor itself).
    """

    anchor: str
    found: bool
    offset: int
    dropped: str

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class ParseFailure:
    """A region that failed to parse, or the failure that stopped the parse (a record of a
    `ResponseParseError`, in both offsets).

    Attributes:
        type: the exception class name (``ResponseParseError``, ``PatternTimeoutError``).
        message: its message.
        field: the field whose region failed, or None.
        stream_offset: the region body's stream offset (or where the parse stopped), or None.
        source, offset: the same place as `source` (prefix/generation) and offset in it.
        text: the offending region body (raised) or the region's raw text (kept), or None.
        key: JSON path of the template key whose work failed (``fields.x.content``), or None.
        position_source, position: where parsing failed, to the character (a JSON line and
            column turned into an offset in the prefix or the generation), or None.
        region: index of the failed region (as in `TraceSpan.region`), or None.
        stream_start, stream_end: the failed region in stream offsets, delimiters included
            (without a region: `stream_offset` and the end of `text`), or None.
        stream_position: `position` in stream offsets, or None.
        lenient: the error records a lenient reading that kept no region as text
            (`ResponseParseError.lenient`).
    """

    type: str
    message: str
    field: str | None
    stream_offset: int | None
    source: str | None
    offset: int | None
    text: str | None
    key: str | None = None
    position_source: str | None = None
    position: int | None = None
    region: int | None = None
    stream_start: int | None = None
    stream_end: int | None = None
    stream_position: int | None = None
    lenient: bool = False

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class TraceSnapshot:
    """The picture after one `feed` while streaming.

    Attributes:
        chunk: index of the chunk just fed; chunk_text: that chunk.
        offset: stream offset up to which text is decided.
        spans: spans so far, tiling everything received (held text as ``"held"``).
        events: events so far (their `spans` index into this snapshot's `spans`).
    """

    chunk: int
    chunk_text: str
    offset: int
    spans: list[TraceSpan]
    events: list[TraceEvent]

    def to_dict(self) -> dict:
        return {
            "chunk": self.chunk,
            "chunk_text": self.chunk_text,
            "offset": self.offset,
            "spans": [span.to_dict() for span in self.spans],
            "events": [event.to_dict() for event in self.events],
        }


@dataclass
class Trace:
    """A complete account of one parse (see `trace`).

    Attributes:
        prefix, generation: the inputs.
        anchor: where the start anchor cut the prefix.
        spans: ordered spans tiling ``prefix[anchor.offset:]`` then the generation.
        events: every event, in order (initial events first).
        message: the message, or None when the parse failed.
        error: the failure that stopped the parse, or None.
        warnings: probable faults for the template author.
        snapshots: one per fed chunk when `chunks` was given, else ``[]``.
        errors: with ``on_error="keep"``, the regions that failed to parse while the parse
            went on (their spans point here with `TraceSpan.error`); else ``[]``.
        diagnoses: the causes (`engine.authoring.diagnosis.Diagnosis`), the start anchor
            first; read them before `error` and `warnings`, which are often their symptoms.
    """

    prefix: str
    generation: str
    anchor: AnchorCut
    spans: list[TraceSpan]
    events: list[TraceEvent]
    message: dict | None
    error: ParseFailure | None
    warnings: list[TraceWarning]
    snapshots: list[TraceSnapshot]
    errors: list[ParseFailure] = dataclass_field(default_factory=list)
    diagnoses: list[Diagnosis] = dataclass_field(default_factory=list)

    @property
    def prefix_tail(self) -> str:
        """The part of the prefix the parser saw (after the anchor)."""
        return self.prefix[self.anchor.offset :]

    def to_dict(self) -> dict:
        """A JSON-ready dict (``json.dumps(trace.to_dict())`` works)."""
        return {
            "prefix": self.prefix,
            "generation": self.generation,
            "anchor": self.anchor.to_dict(),
            "spans": [span.to_dict() for span in self.spans],
            "events": [event.to_dict() for event in self.events],
            "message": copy.deepcopy(self.message),
            "error": None if self.error is None else self.error.to_dict(),
            "warnings": [warning.to_dict() for warning in self.warnings],
            "snapshots": [snapshot.to_dict() for snapshot in self.snapshots],
            "errors": [error.to_dict() for error in self.errors],
            "diagnoses": [diagnosis.to_dict() for diagnosis in self.diagnoses],
        }


def _read_finished(tracer: "Tracer") -> tuple[list[TraceWarning], list[Diagnosis]]:
    """The warnings and diagnoses of a finished tracer's parse, worked out within its deadline."""
    spans = tracer.spans()
    with deadline_in_force(tracer.deadline):
        warnings = find_warnings(
            spans,
            tracer.stopped_by(),
            tracer.template,
            prefix=tracer.prefix,
            cut=tracer.anchor.offset,
        )
    tokens = tracer.tokens

    def locate(offset: int) -> tuple:
        plain = offset if tokens is None else tokens.plain(offset)
        return _locate(plain, tracer.anchor, tracer.tail_length)

    warnings = with_account(warnings, tracer.parser.warnings, locate)
    diagnoses = diagnose(
        tracer.template,
        deadline=tracer.deadline,
        prefix=tracer.prefix,
        cut=tracer.anchor.offset,
        anchor_found=tracer.anchor.found,
        stream=tracer.stream,
        tail_length=tracer.tail_length,
        spans=spans,
    )
    return warnings, diagnoses


def _cut_prefix(
    loaded: ResponseTemplate, prefix: object, ids: IdReader | None, regex_timeout: float | None
) -> tuple[str, str, int, AnchorCut, ResponseParseError | None]:
    """(the prefix as text, the text the parser scans, the start anchor's cut in it, the cut
    as `AnchorCut`, the error that stopped it or None). With token ids (`ids`) the parser scans
    the marked text the ids decode to (`engine.token_ids`); the tracer's stream and offsets
    are the text without the marks."""
    scanned = None
    if ids is not None:
        scanned = ids.prefix(prefix)
        prefix = strip_marks(scanned)
    prefix = prefix_text(prefix)
    scanned = prefix if scanned is None else scanned
    error = None
    try:
        anchor_end = prefix_cut(loaded, scanned, regex_timeout)
    except PatternTimeoutError as caught:
        anchor_end, error = None, caught
    scanned_cut = cut = anchor_end or 0
    if ids is not None:
        ids.tokens.start_stream(scanned_cut)
        cut = len(strip_marks(scanned[:scanned_cut]))
    anchor = AnchorCut(loaded.start_anchor.source, anchor_end is not None, cut, prefix[:cut])
    return prefix, scanned, scanned_cut, anchor, error


class Tracer:
    """One parse followed as it is fed, readable at any moment.

    Usage::

        tracer = Tracer(template, prompt_text, on_error="keep")
        for chunk in stream:
            events = tracer.feed(chunk)
            draw(tracer.spans())
        tracer.finalize()  # then tracer.diagnoses, tracer.warnings, tracer.message

    The prefix tail (after the start-anchor cut) is fed first, like a chunk: its events are
    `initial_events`, and an error in it is caught like any other. A parse error never
    raises: the failure that stops the parse is `error` (the text after it is kept, never
    parsed, and shown as ``"unparsed"``); with ``on_error="keep"`` the regions that failed
    while the parse went on are `failures()` and their spans point to them.

    Args:
        template: the response template (dict, JSON text or loaded).
        prefix: REQUIRED, as for `ResponseParser` (``""`` opts out).
        tools, regex_timeout, deadline, on_error, max_regions, max_value_chars: as for
            `ResponseParser` (the deadline bounds the warnings and diagnoses `finalize` works
            out too).
        keep_events: keep every event (with its stage and chunk) for `events()`; a caller
            that stores the events `feed` returns itself turns this off.
        tokenizer: a fast Hugging Face tokenizer: `feed` then takes token ids (as
            `ResponseParser`'s does: a control token is a delimiter only when generated as its
            id) and `prefix` may be text or ids. Every offset (spans, events, failures) is
            then a character of the decoded text, and events also carry ``"tokens"``.

    Attributes:
        template: the loaded template; prefix: the prefix as given.
        anchor: where the start anchor cut the prefix (`AnchorCut`).
        tail_length: the prefix tail's length (where the generation starts in the stream).
        received: the characters received so far (the prefix tail and the generation).
        initial_events: the events of the prefix tail.
        error: the `ResponseParseError` that stopped the parse, or None.
        message: the message after `finalize` (None before, or when the parse stopped).
        finished: whether `finalize` ran.
        warnings, diagnoses: `TraceWarning`s and `Diagnosis`es, worked out once by `finalize`
            (``[]`` before).
        tokens: with a tokenizer, the `engine.token_ids.StreamTokens` record of every id read
            (boundaries, control tokens, spelled-out ones); None otherwise.

    Raises:
        TemplateError: the template is invalid.
        ValueError: `prefix` is missing or not text; `on_error` is not a mode.
    """

    def __init__(
        self,
        template: dict | str | ResponseTemplate,
        prefix: str,
        *,
        tools: list[dict | Callable] | None = None,
        regex_timeout: float | None = None,
        deadline: float | None = None,
        on_error: str = "raise",
        keep_events: bool = True,
        max_regions: int | None = None,
        max_value_chars: int | None = None,
        tokenizer=None,
    ):
        self.template = loaded = load_template(template)
        self._ids: IdReader | None = None
        self.tokens: StreamTokens | None = None
        if tokenizer is not None:
            self._ids = IdReader(tokenizer, True, lambda text: [])
            self.tokens = self._ids.tokens
        self.on_error = on_error
        self.prefix, scanned, scanned_cut, self.anchor, self.error = _cut_prefix(
            loaded, prefix, self._ids, regex_timeout
        )
        self.tail_length = len(self.prefix) - self.anchor.offset
        self.parser = ResponseParser(
            loaded,
            "",
            tools=tools,
            regex_timeout=regex_timeout,
            deadline=deadline,
            positions=True,
            record_spans=True,
            on_error=on_error,
            max_regions=max_regions,
            max_value_chars=max_value_chars,
        )
        self.message: dict | None = None
        self.finished = False
        self.warnings: list[TraceWarning] = []
        self.diagnoses: list[Diagnosis] = []
        self._stream = StreamText()
        self._parts: list[str] = []
        self._spans: list[TraceSpan] = []  # finished spans (never changed once handed out)
        self._run: list | None = (
            None  # the stretch being merged: [start, end, kind, field, region, error]
        )
        self._marked = 0  # failures whose spans are marked so far
        self._log: list[tuple[dict, str, int | None]] | None = [] if keep_events else None
        self.received = 0
        self._feeds = 0
        self._stage = "prefix"  # the prefix tail is fed like a chunk
        self.initial_events = self._feed_text(scanned[scanned_cut:])
        self._stage, self._feeds = "feed", 0

    # -- feeding -------------------------------------------------------------

    @property
    def deadline(self) -> float | None:
        """The `time.perf_counter()` value the parse must end by (a server may move it between feeds)."""
        return self.parser.deadline

    @deadline.setter
    def deadline(self, value: float | None) -> None:
        self.parser.deadline = value

    def feed(self, chunk) -> list[dict]:
        """Add the next piece of the generation (text, or token ids with a tokenizer); return
        the events it settled (with stream `start`/`end`), those settled before an error that
        stopped the parse included. After the parse stopped, the text is kept but not parsed.

        Raises:
            RuntimeError: called after `finalize`.
            TypeError: with a tokenizer, a chunk that is not token ids (text included).
        """
        if self.finished:
            raise RuntimeError("Tracer.feed() called after finalize(); make a new tracer")
        if self._ids is not None:
            chunk = self._ids.decoder.feed(token_id_list(chunk, "feed"))
        return self._feed_text(chunk)

    def _feed_text(self, chunk: str) -> list[dict]:
        """`feed` of the text the parser scans (marked, with a tokenizer)."""
        index = self._feeds
        self._feeds = index + 1
        if not chunk:
            return []
        shown = chunk if self._ids is None else strip_marks(chunk)
        parts = self._parts
        parts.append(shown)
        self.received += len(shown)
        if len(parts) >= PARTS_JOINED:
            self._join()
        if self.error is not None:
            return []
        parser = self.parser
        try:
            events = parser.feed(chunk)
        except ResponseParseError as caught:
            self.error, events = caught, caught.events
            self._absorb()
        if self._ids is not None:
            self._ids.as_read(events)
        if len(parser.spans) >= RECORDS_MERGED:
            self._absorb()
        if self._log is not None:
            stage = self._stage
            index = None if stage == "prefix" else index
            self._log.extend((event, stage, index) for event in events)
        return events

    def finalize(self) -> list[dict]:
        """End the stream: settle held text, take the message, and work out the warnings and
        diagnoses once. Returns the final events ([] when called again or after an error)."""
        if self.finished:
            return []
        self.finished = True
        events: list[dict] = []
        last = ""
        if self._ids is not None:  # what the decoder still holds ends the stream
            last = self._ids.decoder.flush()
            if last:
                self._parts.append(strip_marks(last))
                self.received += len(self._parts[-1])
        if self.error is None:
            try:
                self.message, events = self.parser.finalize(last)
            except ResponseParseError as caught:
                self.error, events = caught, caught.events
            self._absorb()
            if self._ids is not None:
                self._ids.as_read(events)
                self.message = self._ids.as_read_message(self.message)
            if self._log is not None:
                self._log.extend((event, "finalize", None) for event in events)
        self.warnings, self.diagnoses = _read_finished(self)
        return events

    def _join(self) -> str:
        """The stream received so far as one string (and the spans' shared text)."""
        parts = self._parts
        if len(parts) != 1:
            parts[:] = ["".join(parts)]
        self._stream.text = parts[0]
        return parts[0]

    # -- reading -------------------------------------------------------------

    @property
    def stream(self) -> str:
        """The prefix tail followed by the generation received so far."""
        return self._join() if self._parts else ""

    @property
    def offset(self) -> int:
        """Stream offset up to which text is decided."""
        offset = self.parser.offset
        return offset if self.tokens is None else self.tokens.plain(offset)

    @property
    def span_count(self) -> int:
        """How many spans the tracer keeps (one a stretch, however many feeds it came in)."""
        self._absorb()
        return len(self._spans) + (self._run is not None)

    def spans(self) -> list[TraceSpan]:
        """The spans so far, tiling the prefix tail and the text received: the text not decided
        yet is ``"held"`` while streaming, the text after a parse error ``"unparsed"``."""
        self._absorb()
        stream = self.stream
        spans = list(self._spans)
        run = self._run
        if run is not None:
            spans.append(self._span(run[0], run[1], run[2], run[3], run[4], None, run[5]))
        decided = spans[-1].stream_end if spans else 0
        if decided < len(stream):
            kind = "unparsed" if self.error is not None else "held"
            for start, end in self._pieces(decided, len(stream)):
                spans.append(self._span(start, end, kind, None, None, None, None))
        return spans

    def failures(self) -> list[ParseFailure]:
        """The regions that failed while the parse went on (``on_error="keep"``), in order;
        `TraceSpan.error` indexes this list."""
        if self.on_error != "keep":
            return []
        return [
            _failure(error, self.anchor, self.tail_length, self.tokens)
            for error in self.parser.errors
            if error is not self.error
        ]

    def stopped_by(self) -> ParseFailure | None:
        """The failure that stopped the parse (`error`, in both offsets), or None."""
        if self.error is None:
            return None
        return _failure(self.error, self.anchor, self.tail_length, self.tokens)

    def events(self, spans: list[TraceSpan] | None = None) -> list[TraceEvent]:
        """Every event so far as `TraceEvent`s tied to `spans` (default: `spans()`); [] without
        `keep_events`."""
        if self._log is None:
            return []
        return _tie_events(self._log, self.spans() if spans is None else spans, self.tail_length)

    def snapshot(self, chunk: int, chunk_text: str, positions: bool = True) -> TraceSnapshot:
        """The picture now, after feeding chunk number `chunk` (`chunk_text`)."""
        spans = self.spans()
        events = self.events(spans)
        if not positions:
            events = [replace(event, event=_without_positions(event.event)) for event in events]
        return TraceSnapshot(chunk, chunk_text, self.offset, spans, events)

    def result(self, *, positions: bool = False, snapshots: list | None = None) -> Trace:
        """The parse as a `Trace` (call after `finalize`); `positions` keeps the events' stream
        offsets."""
        spans = self.spans()
        events = self.events(spans)
        if not positions:
            for event in events:
                event.event = _without_positions(event.event)
        return Trace(
            prefix=self.prefix,
            generation=self.stream[self.tail_length :],
            anchor=self.anchor,
            spans=spans,
            events=events,
            message=copy.deepcopy(self.message),
            error=self.stopped_by(),
            warnings=self.warnings,
            snapshots=snapshots or [],
            errors=self.failures(),
            diagnoses=self.diagnoses,
        )

    # -- spans ---------------------------------------------------------------

    def _pieces(self, start: int, end: int) -> list[tuple[int, int]]:
        """`[start, end)` as one or two stream ranges, split at the prefix/generation boundary."""
        boundary = self.tail_length
        if start < boundary < end:
            return [(start, boundary), (boundary, end)]
        return [(start, end)]

    def _span(self, start, end, kind, field, region, match, error) -> TraceSpan:
        """A span of one side of the boundary (zero-width at the boundary counts as generation)."""
        tail = self.tail_length
        if start < tail:
            source, offset = "prefix", self.anchor.offset
        else:
            source, offset = "generation", -tail
        span = TraceSpan(
            start + offset,
            end + offset,
            source,
            start,
            end,
            kind,
            field,
            region,
            error=error,
            stream=self._stream,
        )
        if match is not None:
            delimiter = match.delimiter
            span.side = delimiter.side
            span.delimiter = delimiter.source
            span.delimiter_path = delimiter.path
            span.captures = dict(match.captures)
            span.matched_text = match.text
            if self.tokens is not None:
                span.captures = strip_marks(span.captures)
                span.matched_text = strip_marks(match.text)
        return span

    def _absorb(self) -> None:
        """Merge the parser's new records into spans: consecutive pieces of one stretch (the
        same kind, field and region, on one side of the boundary) become one span."""
        recorded = self.parser.spans
        if recorded:
            boundary = self.tail_length
            plain = None if self.tokens is None else self.tokens.plain
            for start, end, kind, field, region, match in recorded:
                if plain is not None:
                    was_empty, start, end = start == end, plain(start), plain(end)
                    if start == end and not was_empty:  # only the marks of a spelled-out token
                        continue
                run = self._run
                if (  # the common case, inline: one more piece of the stretch being merged
                    match is None
                    and run is not None
                    and run[1] == start != boundary
                    and run[2] == kind
                    and run[3] == field
                    and run[4] == region
                    and not start < boundary < end
                ):
                    run[1] = end
                elif start < boundary < end:
                    self._merge(start, boundary, kind, field, region, match)
                    self._merge(boundary, end, kind, field, region, match)
                else:
                    self._merge(start, end, kind, field, region, match)
            recorded.clear()  # the parser only appends to it
        if self.on_error == "keep" and len(self.parser.errors) > self._marked:
            self._mark_failures()

    def _merge(self, start, end, kind, field, region, match) -> None:
        run = self._run
        if match is None:
            if (
                run is not None
                and run[1] == start
                and run[2] == kind
                and run[3] == field
                and run[4] == region
                and start != self.tail_length
            ):
                run[1] = end  # one stretch, however many feeds it came in
                return
            self._end_run()
            self._run = [start, end, kind, field, region, None]
            return
        self._end_run()
        self._spans.append(self._span(start, end, kind, field, region, match, None))

    def _end_run(self) -> None:
        run = self._run
        if run is not None:
            self._spans.append(self._span(run[0], run[1], run[2], run[3], run[4], None, run[5]))
            self._run = None

    def _mark_failures(self) -> None:
        """Point the spans of each region that failed since the last look to its failure."""
        errors = self.parser.errors
        for index in range(self._marked, len(errors)):
            failed = errors[index]
            if failed.region is None or failed is self.error:
                continue
            key = (failed.field, failed.region)
            run = self._run
            if run is not None and (run[3], run[4]) == key:
                run[5] = index
            spans = self._spans
            for position in range(len(spans) - 1, -1, -1):
                span = spans[position]
                if span.region is not None and span.region < failed.region:
                    break  # regions are in order: the failed one's spans are all later
                if (span.field, span.region) == key:
                    spans[position] = replace(span, error=index)
        self._marked = len(errors)


def _locate(stream_offset: int | None, anchor: AnchorCut, tail_length: int) -> tuple:
    """`(source, offset)` of a stream offset (or `(None, None)`)."""
    if stream_offset is None:
        return None, None
    if stream_offset < tail_length:
        return "prefix", anchor.offset + stream_offset
    return "generation", stream_offset - tail_length


def _failure(
    error: ResponseParseError,
    anchor: AnchorCut,
    tail_length: int,
    tokens: StreamTokens | None = None,
) -> ParseFailure:
    """A parser error in both offsets (`tokens`: the ids read, whose marked offsets the error
    gives; its offsets are then made offsets of the decoded text)."""
    error_offset, position, text = error.offset, error.position, error.text
    start = error_offset if error.start is None else error.start
    end = error.end
    if end is None and error_offset is not None and text is not None:
        end = error_offset + len(text)
    if tokens is not None:
        error_offset, position, start, end = (
            None if at is None else tokens.plain(at) for at in (error_offset, position, start, end)
        )
        text = strip_marks(text)
    source, offset = _locate(error_offset, anchor, tail_length)
    position_source, position_at = _locate(position, anchor, tail_length)
    return ParseFailure(
        type(error).__name__,
        str(error),
        error.field,
        error_offset,
        source,
        offset,
        text,
        key=error.key,
        position_source=position_source,
        position=position_at,
        region=error.region,
        stream_start=start,
        stream_end=end,
        stream_position=position,
        lenient=getattr(error, "lenient", False),
    )


def _without_positions(event: dict) -> dict:
    event = dict(event)
    event.pop("start", None)
    event.pop("end", None)
    return event


def _tie_events(
    log: list[tuple[dict, str, int | None]], spans: list[TraceSpan], boundary: int
) -> list[TraceEvent]:
    """`TraceEvent`s for logged `(event, stage, chunk)`, each tied to the spans it came from.

    A chunk is tied to the body spans of its field it overlaps; an open or a close to its
    delimiter's span (two when the delimiter crosses the prefix/generation `boundary`). A
    zero-width open (the implicit field's, opened by its first text) takes the spans of the
    chunk after it; a zero-width close (a region that ends where another opens, or at the end)
    those of its region's last chunk, or its open when the region is empty.
    """
    starts = [span.stream_start for span in spans]
    delimiters: dict[tuple, list[int]] = {}
    previous: tuple | None = None  # the key of the last delimiter span that ended at the boundary
    for index, span in enumerate(spans):
        if span.kind not in ("open", "close"):
            previous = None
            continue
        if previous is not None and span.stream_start == boundary and span.stream_end > boundary:
            kind, start, _, name = previous
            if (kind, name) == (span.kind, span.field):  # the second half of a split delimiter
                whole = (kind, start, span.stream_end, name)
                delimiters.setdefault(whole, [*delimiters[previous], index])
        key = (span.kind, span.stream_start, span.stream_end, span.field)
        delimiters.setdefault(key, [index])
        previous = key if span.stream_end == boundary and span.stream_start < boundary else None

    def body(field: str | None, start: int, end: int) -> list[int]:
        found = []
        index = max(0, bisect_left(starts, start) - 1)
        while index < len(spans) and spans[index].stream_start < end:
            span = spans[index]
            if span.kind == "body" and span.field == field and span.stream_end > start:
                found.append(index)
            index += 1
        return found

    tied: list[list[int]] = []
    last_chunk: dict[
        str | None, tuple[int, list[int]]
    ] = {}  # field -> (end, ties) of its last chunk
    last_open: dict[tuple, list[int]] = {}  # (field, end) -> the open spans ending there
    for position, (event, _, _) in enumerate(log):
        kind, name = event["type"], event.get("field")
        start, end = event.get("start"), event.get("end")
        ties: list[int] = []
        if kind == "region_chunk":
            ties = body(name, start, end) if start is not None else []
            last_chunk[name] = (end, ties)
        elif kind == "region_open":
            last_chunk.pop(name, None)
            if ("open", start, end, name) in delimiters:
                ties = list(delimiters[("open", start, end, name)])
                last_open[(name, end)] = ties
            elif start is not None and start == end and position + 1 < len(log):
                after = log[position + 1][0]
                if (
                    after["type"] == "region_chunk"
                    and after.get("field") == name
                    and after.get("start") == start
                ):
                    ties = body(name, after["start"], after["end"])
        elif kind == "region_close":
            if ("close", start, end, name) in delimiters:
                ties = list(delimiters[("close", start, end, name)])
            elif start is not None and start == end:
                chunk_end, chunk_ties = last_chunk.get(name, (None, []))
                if chunk_end == start:
                    ties = list(chunk_ties)
                else:
                    ties = list(last_open.get((name, start), []))
            last_chunk.pop(name, None)
        tied.append(ties)
    return [TraceEvent(event, ties, stage, chunk) for (event, stage, chunk), ties in zip(log, tied)]


def trace(
    generation: str,
    template: dict | str | ResponseTemplate,
    *,
    prefix: str,
    tools: list[dict | Callable] | None = None,
    chunks: list[str] | None = None,
    regex_timeout: float | None = None,
    deadline: float | None = None,
    positions: bool = False,
    on_error: str = "raise",
    max_regions: int | None = None,
    max_value_chars: int | None = None,
    tokenizer=None,
) -> Trace:
    """Parse `generation` and account for every character of the prefix tail and the generation.

    Args:
        generation: the model output (text).
        template: the response template (dict, JSON text or loaded).
        prefix: REQUIRED, as for `parse_response` (``""`` opts out).
        tools: tool schemas or functions, to cast tool-call arguments.
        chunks: feed the generation in these pieces (must concatenate to `generation`)
            and record a `TraceSnapshot` after each; None feeds it whole, no snapshots.
        regex_timeout: seconds allowed for each regex call of a template pattern.
        deadline: a `time.perf_counter()` value the parse must end by (see `ResponseParser`);
            past it the parse stops with a `ParseDeadlineError` in `Trace.error`.
        positions: keep `start`/`end` stream offsets in the event dicts (off by default:
            events are then exactly the reference's dicts).
        max_regions, max_value_chars: the most regions the parse may open, and characters its
            values may hold (see `ResponseParser`); past either the parse stops with a
            `ParseLimitError` in `Trace.error`.
        tokenizer: a fast Hugging Face tokenizer: `generation` and `chunks` are then token ids
            (and `prefix` text or ids), read as `ResponseParser(..., tokenizer=)` reads them
            (control tokens are delimiters only as their ids); the spans and events give
            offsets in the decoded text, and the `Tracer`'s `tokens` the token boundaries.
        on_error: ``"raise"`` (default): the first region that fails to parse stops the
            parse. ``"keep"``: failed regions are listed in `Trace.errors`, their spans
            point to their error, and the parse goes on as `ResponseParser` does.

    Returns:
        A `Trace` (a `Tracer` fed the whole generation). Parse failures
        (`ResponseParseError`, including pattern timeouts) do not raise: one that stops
        the parse is reported in `Trace.error`, and the text after the last decided offset
        becomes an ``"unparsed"`` span (after the close delimiter that ended the failing
        region, when it can be found).

    Raises:
        TemplateError: the template is invalid.
        ValueError: `prefix` is None or not text; `chunks` do not concatenate to `generation`.
    """
    loaded = load_template(template)
    if tokenizer is None:
        prefix = prefix_text(prefix)
    joined = [i for chunk in chunks or [] for i in chunk] if tokenizer is not None else None
    if chunks is not None and (joined if tokenizer is not None else "".join(chunks)) != (
        generation if tokenizer is None else list(generation)
    ):
        raise ValueError("chunks must concatenate to the generation")
    tracer = Tracer(
        loaded,
        prefix,
        tools=tools,
        regex_timeout=regex_timeout,
        deadline=deadline,
        on_error=on_error,
        max_regions=max_regions,
        max_value_chars=max_value_chars,
        tokenizer=tokenizer,
    )
    snapshots = []
    for index, piece in enumerate(chunks if chunks is not None else [generation]):
        tracer.feed(piece)
        if chunks is not None and tracer.error is None:  # none from the feed that failed on
            snapshots.append(tracer.snapshot(index, piece, positions))
    tracer.finalize()
    return tracer.result(positions=positions, snapshots=snapshots)
