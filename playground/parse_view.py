"""The parse as the page shows it: a `ParseView`, built from a whole parse or a stream.

`traced_view` parses a whole generation with `engine.trace`; `LiveParse` feeds a
parser chunk by chunk (replay and live generation) and can be viewed at any
moment. Both give a `ParseView`, which every panel of the page is drawn from.

Offsets are stream offsets: 0 is the first character of the prefix after its
start-anchor cut; the generation follows the prefix tail.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from engine import ResponseParser
from engine.errors import ResponseParseError
from engine.trace import trace

from . import limits


@dataclass(frozen=True)
class MapSpan:
    """A stretch `[start, end)` of the stream for the region map.

    `kind` is "body", "open", "close", "discarded", "held" (maybe a delimiter,
    not decided yet) or "unparsed" (after a parse error); `field` and `region`
    are set for bodies and delimiters; `captures` are a delimiter's named groups.
    """

    start: int
    end: int
    kind: str
    field: str | None = None
    region: int | None = None
    captures: dict | None = None


@dataclass(frozen=True)
class LoggedEvent:
    """One engine event with its number (1-based, in order) and phase
    ("prefix", "feed N" or "finalize")."""

    number: int
    phase: str
    event: dict


@dataclass
class ParseView:
    """Everything the page shows about one parse, finished or in progress.

    Offsets are stream offsets (prefix tail after the start-anchor cut, then the
    generation). `error` is a message for people; `figures` are (name, value) pairs.
    """

    cut_away: str = ""
    stream: str = ""
    tail_length: int = 0
    spans: list[MapSpan] = field(default_factory=list)
    events: list[LoggedEvent] = field(default_factory=list)
    field_names: list[str] = field(default_factory=list)
    message: dict | None = None
    error: str | None = None
    error_offset: int | None = None
    warnings: list[str] = field(default_factory=list)
    figures: list[tuple[str, str]] = field(default_factory=list)
    finished: bool = True
    template: dict | None = None
    tools: list | None = None

    @property
    def initial_events(self) -> list[dict]:
        """The events the prefix produced (`ResponseParser.initial_events`)."""
        return [logged.event for logged in self.events if logged.phase == "prefix"]


def _phase(stage: str, chunk: int | None) -> str:
    return f"feed {chunk + 1}" if stage == "feed" and chunk is not None else stage


def traced_view(template: dict, prefix: str, generation: str, tools: list | None) -> ParseView:
    """Parse a whole generation with `engine.trace` and turn it into a ParseView.

    Raises TemplateError for a template that does not load; parse errors land in the view.
    """
    started = time.perf_counter()
    result = trace(
        generation, template, prefix=prefix, tools=tools, regex_timeout=limits.current().regex_seconds, positions=True
    )
    seconds = time.perf_counter() - started
    spans = [
        MapSpan(s.stream_start, s.stream_end, s.kind, s.field, s.region, s.captures or None) for s in result.spans
    ]
    events = [LoggedEvent(i + 1, _phase(e.stage, e.chunk), e.event) for i, e in enumerate(result.events)]
    error = result.error
    return ParseView(
        cut_away=result.anchor.dropped,
        stream=result.prefix_tail + generation,
        tail_length=len(result.prefix_tail),
        spans=spans,
        events=events,
        field_names=list(template.get("fields", {})),
        message=result.message,
        error=None if error is None else f"{error.type}: {error.message}",
        error_offset=None if error is None else error.stream_offset,
        warnings=[f"{w.message} → {w.suggestion}" if w.suggestion else w.message for w in result.warnings],
        figures=[("characters", f"{len(generation):,}"), ("events", f"{len(events):,}"), ("parse", f"{seconds * 1000:.1f} ms")],
        template=template,
        tools=tools,
    )


class LiveParse:
    """A parse fed chunk by chunk (replay and live generation), viewable at any moment."""

    def __init__(self, template: dict, prefix: str, tools: list | None):
        self.template, self.tools = template, tools
        self.field_names = list(template.get("fields", {}))
        self.events: list[LoggedEvent] = []
        self.parts: list[str] = []
        self.message: dict | None = None
        self.error: ResponseParseError | None = None
        self.finished = False
        self.parse_seconds = 0.0
        self.feeds = 0
        started = time.perf_counter()
        self.parser = ResponseParser(
            template,
            prefix=prefix,
            tools=tools,
            regex_timeout=limits.current().regex_seconds,
            positions=True,
            record_spans=True,
        )
        self.parse_seconds += time.perf_counter() - started
        self.cut_away = prefix[: self.parser.prefix_cut]
        self.tail = prefix[self.parser.prefix_cut :]
        self._log(self.parser.initial_events, "prefix")

    def _log(self, events: list[dict], phase: str) -> None:
        start = len(self.events) + 1
        self.events.extend(LoggedEvent(start + i, phase, event) for i, event in enumerate(events))

    def feed(self, chunk: str) -> None:
        self.parts.append(chunk)
        if self.error is not None:
            return
        self.feeds += 1
        started = time.perf_counter()
        try:
            events = self.parser.feed(chunk)
        except ResponseParseError as error:
            self.error = error
            events = []
        self.parse_seconds += time.perf_counter() - started
        self._log(events, f"feed {self.feeds}")

    def finalize(self) -> None:
        self.finished = True
        if self.error is not None:
            return
        started = time.perf_counter()
        try:
            self.message, events = self.parser.finalize()
        except ResponseParseError as error:
            self.error = error
            events = []
        self.parse_seconds += time.perf_counter() - started
        self._log(events, "finalize")

    def view(self, extra_figures: list[tuple[str, str]] = ()) -> ParseView:
        stream = self.tail + "".join(self.parts)
        spans = [
            MapSpan(s.start, s.end, s.kind, s.field, s.region, s.match.captures if s.match else None)
            for s in self.parser.spans
        ]
        decided = spans[-1].end if spans else 0
        if decided < len(stream):
            spans.append(MapSpan(decided, len(stream), "unparsed" if self.error else "held"))
        error = self.error
        return ParseView(
            cut_away=self.cut_away,
            stream=stream,
            tail_length=len(self.tail),
            spans=spans,
            events=list(self.events),
            field_names=self.field_names,
            message=self.message,
            error=None if error is None else f"{type(error).__name__}: {error}",
            error_offset=None if error is None else error.offset,
            figures=list(extra_figures),
            finished=self.finished,
            template=self.template,
            tools=self.tools,
        )
