"""Tracing: where every character of a parse went, for template authors.

`trace()` runs the parser with positions and span recording on, then turns
its stream offsets (the prefix after the start anchor, followed by the
generation) into offsets in the text the author actually has: the prefix or
the generation. The result tiles that text with no gaps and no overlaps, so a
view can colour every character, and it keeps going when the parse fails: the
text the parser never reached becomes one ``"unparsed"`` span.

It also reads the finished picture for the faults template authors meet most
(the field reports): a close delimiter with no open (usually a missing
prefix), a tool-call open swallowed by another region, and a close delimiter
that fired inside a JSON string; and, as `Trace.diagnoses`, the cause behind
them in the author's terms (`engine.authoring.diagnosis`: a start anchor not in the
prefix, a near miss of a delimiter, a region that never closed).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from dataclasses import field as dataclass_field

import regex

from ..errors import PatternTimeoutError, ResponseParseError
from ..inputs import prefix_cut, prefix_text
from ..parser import ResponseParser
from ..parser import Span as ParserSpan
from ..template import FieldSpec, ResponseTemplate, load_template
from .diagnosis import Diagnosis, diagnose
from .lint import json_safe_close
from .time_budget import deadline_in_force, out_of_time, regex_timeout


@dataclass
class TraceSpan:
    """One stretch of the prefix tail or of the generation, and what became of it.

    Attributes:
        start, end: offsets in `source` (``[start, end)``).
        source: ``"prefix"`` (offsets into the whole prefix) or ``"generation"``.
        stream_start, stream_end: the same stretch in parser stream offsets
            (prefix tail after the anchor, then the generation).
        kind: ``"body"`` (region text), ``"open"`` / ``"close"`` (a delimiter),
            ``"discarded"`` (no region open, no implicit field), ``"held"`` (streaming
            snapshots only: maybe part of a delimiter, not decided yet) or
            ``"unparsed"`` (after a parse error: never reached).
        field, region: the field and region index (0-based, in opening order) for bodies
            and delimiters, else None.
        text: the characters of the stretch.
        side: ``"open"`` / ``"close"`` for delimiters, else None.
        delimiter: the literal or pattern that matched, as written in the template.
        delimiter_path: JSON path of that template key (``fields.x.close_pattern``).
        captures: named captures of the match (``{}`` for literals).
        matched_text: the whole delimiter match (also when this span is one part of a
            match split at the prefix/generation boundary).
        error: for the spans of a region that failed to parse (``on_error="keep"``), the
            index of its error in `Trace.errors`; else None.
    """

    start: int
    end: int
    source: str
    stream_start: int
    stream_end: int
    kind: str
    field: str | None = None
    region: int | None = None
    text: str = ""
    side: str | None = None
    delimiter: str | None = None
    delimiter_path: str | None = None
    captures: dict[str, str] = dataclass_field(default_factory=dict)
    matched_text: str | None = None
    error: int | None = None

    def to_dict(self) -> dict:
        """A JSON-ready dict of every attribute."""
        return asdict(self)


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
class TraceError:
    """A failed parse.

    Attributes:
        type: the exception class name (``ResponseParseError``, ``PatternTimeoutError``).
        message: its message.
        field: the field whose region failed, or None.
        stream_offset: the region body's stream offset, or None.
        source, offset: the same place as `source` (prefix/generation) and offset in it.
        text: the offending region body (raised) or the region's raw text (kept), or None.
        key: JSON path of the template key whose work failed (``fields.x.content``), or None.
        position_source, position: where parsing failed, to the character (a JSON line and
            column turned into an offset in the prefix or the generation), or None.
        region: index of the failed region (as in `TraceSpan.region`), or None.
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

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class TraceWarning:
    """A probable template or input fault seen in this parse.

    Attributes:
        code: a stable name (``close-without-open``, ``tool-call-open-swallowed``,
            ``close-inside-json-string``, ``text-discarded``).
        message: what was seen and what it usually means.
        suggestion: what to change, or ``""``.
        source, start, end: where (offsets into the prefix or the generation).
    """

    code: str
    message: str
    suggestion: str
    source: str
    start: int
    end: int

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
        return asdict(self)


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
        diagnoses: the causes (`engine.authoring.diagnosis.Diagnosis`), the start anchor first; read
            them before `error` and `warnings`, which are often their symptoms.
    """

    prefix: str
    generation: str
    anchor: AnchorCut
    spans: list[TraceSpan]
    events: list[TraceEvent]
    message: dict | None
    error: TraceError | None
    warnings: list[TraceWarning]
    snapshots: list[TraceSnapshot]
    errors: list[TraceError] = dataclass_field(default_factory=list)
    diagnoses: list[Diagnosis] = dataclass_field(default_factory=list)

    @property
    def prefix_tail(self) -> str:
        """The part of the prefix the parser saw (after the anchor)."""
        return self.prefix[self.anchor.offset :]

    def to_dict(self) -> dict:
        """A JSON-ready dict (``json.dumps(trace.to_dict())`` works)."""
        return asdict(self)


class _StreamMap:
    """Maps stream offsets to (source, offset) and cuts spans at the prefix/generation boundary."""

    def __init__(self, prefix: str, cut: int, generation: str):
        self.cut = cut
        self.tail_length = len(prefix) - cut
        self.stream = prefix[cut:] + generation

    def locate(self, stream_offset: int) -> tuple[str, int]:
        if stream_offset < self.tail_length:
            return "prefix", self.cut + stream_offset
        return "generation", stream_offset - self.tail_length

    def pieces(self, start: int, end: int) -> list[tuple[int, int]]:
        """`[start, end)` as one or two stream ranges, split at the boundary."""
        boundary = self.tail_length
        if start < boundary < end:
            return [(start, boundary), (boundary, end)]
        return [(start, end)]

    def source_range(self, start: int, end: int) -> tuple[str, int, int]:
        """A range on one side of the boundary (zero-width at the boundary counts as generation)."""
        if start < self.tail_length:
            return "prefix", self.cut + start, self.cut + end
        return "generation", start - self.tail_length, end - self.tail_length


def _convert(
    stream_map: _StreamMap, raw: Iterable[ParserSpan | tuple], out: list[TraceSpan]
) -> list[list[int]]:
    """Append TraceSpans for parser spans to `out`; return, per parser span, the indices it became.

    `raw` items are parser `Span`s or ``(start, end, kind)`` tuples for held/unparsed text.
    """
    produced = []
    for item in raw:
        if isinstance(item, tuple):
            start, end, kind = item
            field_name = region = match = None
        else:
            start, end, kind, field_name, region, match = (
                item.start,
                item.end,
                item.kind,
                item.field,
                item.region,
                item.match,
            )
        indices = []
        for piece_start, piece_end in stream_map.pieces(start, end):
            source, source_start, source_end = stream_map.source_range(piece_start, piece_end)
            span = TraceSpan(
                start=source_start,
                end=source_end,
                source=source,
                stream_start=piece_start,
                stream_end=piece_end,
                kind=kind,
                field=field_name,
                region=region,
                text=stream_map.stream[piece_start:piece_end],
            )
            if match is not None:
                span.side = match.delimiter.side
                span.delimiter = match.delimiter.source
                span.delimiter_path = match.delimiter.path
                span.captures = dict(match.captures)
                span.matched_text = match.text
            indices.append(len(out))
            out.append(span)
        produced.append(indices)
    return produced


def _tie_events(
    events: list[dict], parser_spans: list[ParserSpan], produced: list[list[int]]
) -> list[list[int]]:
    """For each event (with stream positions), the trace span indices it covers."""
    by_range: dict[tuple, int] = {}
    for i, span in enumerate(parser_spans):
        by_range.setdefault((span.kind, span.start, span.end, span.field), i)
    first_body: dict[tuple, int] = {}
    ending_at: dict[tuple, int] = {}  # (field, end) -> last body or open span ending there
    for i, span in enumerate(parser_spans):
        if span.kind == "body":
            first_body.setdefault((span.field, span.start), i)
        if span.kind in ("body", "open"):
            ending_at[(span.field, span.end)] = i
    tied = []
    for event in events:
        start, end, name = event.get("start"), event.get("end"), event.get("field")
        kind = event["type"]
        index = None
        if kind == "region_chunk":
            index = by_range.get(("body", start, end, name))
        elif kind == "region_open":
            index = by_range.get(("open", start, end, name))
            if index is None:
                index = first_body.get((name, start))
        elif kind == "region_close":
            index = by_range.get(("close", start, end, name))
            if index is None and start == end:
                index = ending_at.get((name, start))
        tied.append([] if index is None else list(produced[index]))
    return tied


def _strip_positions(event: dict) -> dict:
    event = dict(event)
    event.pop("start", None)
    event.pop("end", None)
    return event


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
        max_regions, max_value_chars: the most regions the parse may open, and characters its
            values may hold (see `ResponseParser`); past either the parse stops with a
            `ParseLimitError` in `Trace.error`.
        positions: keep `start`/`end` stream offsets in the event dicts (off by default:
            events are then exactly the reference's dicts).
        on_error: ``"raise"`` (default): the first region that fails to parse stops the
            parse. ``"keep"``: failed regions are listed in `Trace.errors`, their spans
            point to their error, and the parse goes on as `ResponseParser` does.

    Returns:
        A `Trace`. Parse failures (`ResponseParseError`, including pattern timeouts) do
        not raise: one that stops the parse is reported in `Trace.error`, and the text after
        the last decided offset becomes an ``"unparsed"`` span (after the close delimiter
        that ended the failing region, when it can be found).

    Raises:
        TemplateError: the template is invalid.
        ValueError: `prefix` is None or not text; `chunks` do not concatenate to `generation`.
    """
    loaded = load_template(template)
    prefix = prefix_text(prefix)
    if chunks is not None and "".join(chunks) != generation:
        raise ValueError("chunks must concatenate to the generation")
    anchor = loaded.start_anchor
    error: ResponseParseError | None = None
    try:
        anchor_end = prefix_cut(loaded, prefix, regex_timeout)
    except PatternTimeoutError as caught:
        anchor_end, error = None, caught
    cut = anchor_end or 0
    found = anchor_end is not None
    anchor_cut = AnchorCut(anchor=anchor.source, found=found, offset=cut, dropped=prefix[:cut])
    stream_map = _StreamMap(prefix, cut, generation)

    # The prefix tail is fed like any chunk: identical to the constructor's replay, and an
    # error in it is caught like any other.
    parser = ResponseParser(
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
    message, raw_events, snapshots = None, [], []
    if error is None:
        try:
            message = _feed_all(
                parser,
                prefix[cut:],
                generation,
                chunks,
                stream_map,
                positions,
                raw_events,
                snapshots,
            )
        except ResponseParseError as caught:
            error = caught

    parser_spans = list(parser.spans)
    decided = parser_spans[-1].end if parser_spans else 0
    unparsed = (
        [(decided, len(stream_map.stream), "unparsed")]
        if error is not None and decided < len(stream_map.stream)
        else []
    )
    spans, events = _spans_and_events(stream_map, parser_spans, unparsed, raw_events, positions)
    trace_error = None if error is None else _trace_error(stream_map, error)
    kept = (
        [_trace_error(stream_map, failed) for failed in parser.errors if failed is not error]
        if on_error == "keep"
        else []
    )
    for index, failed in enumerate(kept):
        for span in spans:
            if (
                span.region is not None
                and span.region == failed.region
                and span.field == failed.field
            ):
                span.error = index
    result = Trace(
        prefix=prefix,
        generation=generation,
        anchor=anchor_cut,
        spans=spans,
        events=events,
        message=copy.deepcopy(message),
        error=trace_error,
        warnings=[],
        snapshots=snapshots,
        errors=kept,
    )
    with deadline_in_force(deadline):  # the reading of the parse is within its deadline too
        result.warnings = find_warnings(result, loaded)
    result.diagnoses = diagnose(
        loaded,
        deadline=deadline,
        prefix=prefix,
        cut=cut,
        anchor_found=found,
        stream=stream_map.stream,
        tail_length=stream_map.tail_length,
        spans=[
            _StreamStretch(s.stream_start, s.stream_end, s.kind, s.field, s.region) for s in spans
        ],
    )
    return result


@dataclass(frozen=True)
class _StreamStretch:
    """A trace span in stream offsets, as `engine.authoring.diagnosis.diagnose` reads spans."""

    start: int
    end: int
    kind: str
    field: str | None
    region: int | None


def _feed_all(
    parser: ResponseParser,
    prefix_tail: str,
    generation: str,
    chunks: list[str] | None,
    stream_map: _StreamMap,
    positions: bool,
    raw_events: list[tuple[dict, str, int | None]],
    snapshots: list[TraceSnapshot],
) -> dict:
    """Feed the prefix tail, then the generation (in `chunks` when given, with a snapshot after
    each), then finalize; collect `(event, stage, chunk index)` in `raw_events` as they come, so
    that they are there when a parse error stops the parse. Return the message."""
    received = 0
    plan = [("prefix", None, prefix_tail)] + [
        ("feed", i, piece) for i, piece in enumerate(chunks if chunks is not None else [generation])
    ]
    for stage, chunk_index, piece in plan:
        produced_events = parser.feed(piece)
        received += len(piece)
        raw_events.extend((event, stage, chunk_index) for event in produced_events)
        if chunks is not None and stage == "feed":
            spans, events = _spans_and_events(
                stream_map, list(parser.spans), [], raw_events, positions
            )
            if parser.offset < received:
                _convert(stream_map, [(parser.offset, received, "held")], spans)
            snapshots.append(TraceSnapshot(chunk_index, piece, parser.offset, spans, events))
    message, final_events = parser.finalize()
    raw_events.extend((event, "finalize", None) for event in final_events)
    return message


def _spans_and_events(
    stream_map: _StreamMap,
    parser_spans: list[ParserSpan],
    extra: list[tuple],
    raw_events: list[tuple[dict, str, int | None]],
    positions: bool,
) -> tuple[list[TraceSpan], list[TraceEvent]]:
    """The trace spans of `parser_spans` and then of `extra` ``(start, end, kind)`` stretches, and
    the `TraceEvent`s of `raw_events` tied to them."""
    spans: list[TraceSpan] = []
    produced = _convert(stream_map, parser_spans, spans)
    _convert(stream_map, extra, spans)
    ties = _tie_events([event for event, _, _ in raw_events], parser_spans, produced)
    events = [
        TraceEvent(event if positions else _strip_positions(event), tie, stage, chunk_index)
        for (event, stage, chunk_index), tie in zip(raw_events, ties)
    ]
    return spans, events


def _trace_error(stream_map: _StreamMap, error: ResponseParseError) -> TraceError:
    """A parser error with its stream offsets turned into places in the prefix or the generation."""
    where = stream_map.locate(error.offset) if error.offset is not None else (None, None)
    position = stream_map.locate(error.position) if error.position is not None else (None, None)
    return TraceError(
        type(error).__name__,
        str(error),
        error.field,
        error.offset,
        where[0],
        where[1],
        error.text,
        key=error.key,
        position_source=position[0],
        position=position[1],
        region=error.region,
    )


# -- warnings -----------------------------------------------------------------

_JSON_STRING_TAIL = regex.compile(r'"\s*[}\]]')


def _region_texts(result: Trace) -> list[tuple[str | None, int | None, list[TraceSpan]]]:
    """Group body and discarded spans by region: (field, region, spans)."""
    groups: dict[tuple, list[TraceSpan]] = {}
    for span in result.spans:
        if span.kind == "body":
            groups.setdefault((span.field, span.region), []).append(span)
        elif span.kind == "discarded":
            groups.setdefault((None, None), []).append(span)
    return [(name, region, spans) for (name, region), spans in groups.items()]


def _find_in_spans(spans: list[TraceSpan], needle: regex.Pattern) -> TraceSpan | None:
    """The first non-empty match of `needle` in the text of `spans`, as a span of its own, or None."""
    text = "".join(span.text for span in spans)
    try:
        found = next(
            (
                match
                for match in needle.finditer(text, timeout=regex_timeout(0.05))
                if match.end() > match.start()
            ),
            None,
        )
    except TimeoutError:
        return None
    if found is None:
        return None
    # Locate the span holding the match start, and the match's place in the sources.
    position = 0
    for span in spans:
        if position + len(span.text) > found.start():
            offset = span.start + found.start() - position
            length = min(found.end() - found.start(), span.end - offset)
            return TraceSpan(
                offset,
                offset + length,
                span.source,
                0,
                0,
                span.kind,
                span.field,
                span.region,
                found.group(),
            )
        position += len(span.text)
    return None


def find_warnings(result: Trace, template: ResponseTemplate) -> list[TraceWarning]:
    """Probable faults visible in a finished trace (see the module docstring)."""
    warnings: list[TraceWarning] = []
    fields = template.fields
    groups = _region_texts(result)
    for name, region, spans in groups:
        if out_of_time():
            break  # past the trace's deadline: the warnings found so far
        where = f"the {name} region" if name else "discarded text"
        own_close = fields[name].close if name else None
        own = set(own_close.literals or ()) if own_close is not None else set()
        for other in fields.values():
            if other.name == name or other.close is None:
                continue
            if other.close.literals is None:
                if own_close is not None and own_close.source == other.close.source:
                    continue
                close = (
                    other.close.pattern
                )  # only text it takes counts (not a lookahead's empty match)
            else:
                literals = [literal for literal in other.close.literals if literal not in own]
                if not literals:
                    continue
                close = regex.compile(
                    "|".join(regex.escape(x) for x in literals), cache_pattern=False
                )
            found = _find_in_spans(spans, close)
            if found is None:
                continue
            if other.open is not None:
                opened = _find_in_spans(spans, other.open.pattern)
                if opened is not None and (opened.source, opened.start) < (
                    found.source,
                    found.start,
                ):
                    continue  # its open was swallowed too: reported as such below
                message = (
                    f"{found.text!r}, the close delimiter of {other.name} (its open is {other.open.source!r}), "
                    f"appears inside {where} while {other.name} is not open. This usually means the prefix is "
                    "missing the text that opened it (a chat template that pre-writes the open delimiter)."
                )
                suggestion = "pass the prompt text (with any pre-written open delimiter) as prefix"
            else:
                message = (
                    f"{found.text!r}, the close delimiter of the implicit field {other.name}, appears inside {where}: "
                    f"that region never closed, so the text after it stayed in {name or 'the discarded text'}."
                )
                suggestion = (
                    "check the region's close delimiter (or pass the full prompt as prefix)"
                )
            warnings.append(
                TraceWarning(
                    "close-without-open", message, suggestion, found.source, found.start, found.end
                )
            )
        for other in fields.values():
            if other.name == name or other.open is None or not other.is_tool_call or name is None:
                continue
            if not fields[name].open:
                continue  # the implicit field watches opens: an open in it fired or was not complete
            found = _find_in_spans(spans, other.open.pattern)
            if found is None:
                continue
            close_source = fields[name].close.source if fields[name].close else ""
            warnings.append(
                TraceWarning(
                    "tool-call-open-swallowed",
                    f"the tool-call open delimiter {found.text!r} appears inside {where} and was swallowed as its "
                    f"text: inside a region only its own close can fire, so this call was not parsed.",
                    f"close {name} also before a tool call, e.g. close_pattern "
                    f"{_lookahead_close(close_source, fields[name], other)!r}",
                    found.source,
                    found.start,
                    found.end,
                )
            )
    discarded = [span for span in result.spans if span.kind == "discarded" and span.text.strip()]
    if discarded:
        first = discarded[0]
        count = sum(len(span.text) for span in discarded)
        warnings.append(
            TraceWarning(
                "text-discarded",
                f"{count} characters were outside every region and the template has no implicit field, so "
                f"they are not in the message (first at {first.source} offset {first.start}: {first.text[:40]!r})",
                "add a field without 'open' (usually content) to catch unclaimed text, or check that the "
                "open delimiters match this model's output",
                first.source,
                first.start,
                first.end,
            )
        )
    warnings += _close_inside_json_string(result, fields)
    return warnings


def _close_inside_json_string(result: Trace, fields: dict[str, FieldSpec]) -> list[TraceWarning]:
    """The ``close-inside-json-string`` warning, when a JSON region failed and the text after it
    looks like the rest of a JSON string."""
    error = result.error
    if error is None or error.field not in fields or fields[error.field].content != "json":
        return []
    rest = "".join(span.text for span in result.spans if span.kind == "unparsed")
    if not _JSON_STRING_TAIL.search(rest):
        return []
    closes = [span for span in result.spans if span.kind == "close" and span.field == error.field]
    spec = fields[error.field]
    anchor = (
        closes[-1] if closes else next(span for span in result.spans if span.kind == "unparsed")
    )
    literal = (
        spec.close.literals[0] if spec.close is not None and spec.close.literals else "</tool_call>"
    )
    return [
        TraceWarning(
            "close-inside-json-string",
            f"the close delimiter of {error.field} probably matched inside a JSON string: the region body "
            "does not parse and the text after the close looks like the rest of a JSON string",
            f"use a close_pattern like {json_safe_close(literal)!r}",
            anchor.source,
            anchor.start,
            anchor.end,
        )
    ]


def _lookahead_close(close_source: str, spec: FieldSpec, tool_field: FieldSpec) -> str:
    """`close` or a lookahead on the tool-call open, as a close_pattern."""
    if tool_field.open.literals is not None:
        ahead = "|".join(
            regex.escape(x, special_only=True, literal_spaces=True)
            for x in tool_field.open.literals
        )
    else:
        ahead = tool_field.open.source
    if spec.close is None:
        return f"(?={ahead})"
    own = (
        "|".join(
            regex.escape(x, special_only=True, literal_spaces=True) for x in spec.close.literals
        )
        if spec.close.literals is not None
        else spec.close.source
    )
    return f"{own}|(?={ahead})"
