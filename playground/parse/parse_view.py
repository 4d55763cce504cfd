"""The parse as the page shows it: a `ParseView`, built from a whole parse or a stream.

`LiveParse` follows one parse with the engine's tracer (`engine.authoring.trace.Tracer`)
and can be viewed at any moment: fed chunk by chunk for a replay or a live generation,
or the whole generation at once for the Parse button (`traced_view`). Either way the
view is one `ParseView`, which every panel of the page is drawn from: the tracer's
`TraceSpan`s (each in stream offsets and in prefix/generation offsets), the events,
the errors, and the warnings and diagnoses the tracer worked out once when the parse
ended.

Both parse leniently (`on_error="keep"`): a region that fails to parse keeps
its raw text as unclaimed text and is marked with its error at the failing
character, and every other field keeps its value, so an error never hides the
parts that did parse. (A delimiter pattern over its time budget still stops
the parse; the text after it is then "unparsed".)

Panels use stream offsets (`TraceSpan.stream_start`/`stream_end`): 0 is the first
character of the prefix after its start-anchor cut; the generation follows the
prefix tail.
"""

from __future__ import annotations

import itertools
import sys
import time
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from engine import ResponseParser, load_template
from engine.authoring.diagnosis import Diagnosis
from engine.authoring.trace import ParseFailure, Tracer, TraceSpan
from engine.errors import ParseDeadlineError, ParseLimitError, ResponseParseError
from engine.events import message_from_events
from engine.token_ids import StreamTokens

from ..server import limits
from ..server.redact import in_words
from .event_store import FINALIZE, PREFIX, EventStore, LoggedEvent
from .weight import plain_weight

# Failed regions are kept as text with their error (see the module docstring).
ON_ERROR = "keep"
# Bytes a view keeps per span, per logged event and per event kept as a dict (see `ParseView.weight`).
SPAN_BYTES, LOGGED_EVENT_BYTES, KEPT_EVENT_BYTES = 320, 32, 600
# A pasted output read as ids is fed one id at a time, in at most this many feeds.
ID_FEEDS = 8_000
# ... and per token id read (its id, text, flag and offset in `StreamTokens`).
TOKEN_BYTES = 120
# What explaining held text may try: its last starts, within a time (seconds).
HELD_STARTS = 256
HELD_SECONDS = 0.2
# What an error recording a lenient reading starts with (no region failed: text out of place
# was read as the template means it).
LENIENT_HEADLINE = "The output has a slip, read leniently"


@dataclass(frozen=True)
class ErrorMark:
    """A region that failed to parse.

    Attributes:
        message: the error for people, starting with what failed in words (``The output does
            not parse: ...``, `playground.server.redact.in_words`), never a type name.
        field: the field whose region failed, or None (a message-level error).
        key: the template key that failed (``fields.tool_calls.content``), or None.
        start, end: the failed region in stream offsets (delimiters included), or None.
        position: the stream offset of the exact failing character, or None when unknown.
        lenient: a lenient reading that kept no region as text (a close out of place consumed,
            a misspelt delimiter read as meant): its message starts with ``The output has a
            slip, read leniently: ...`` instead, as strict parsing would not have failed there.
    """

    message: str
    field: str | None = None
    key: str | None = None
    start: int | None = None
    end: int | None = None
    position: int | None = None
    lenient: bool = False

    @property
    def at(self) -> int | None:
        """Where the map marks the error: the failing character, else the region's start."""
        return self.position if self.position is not None else self.start

    @classmethod
    def of(cls, failure: ParseFailure, budget: str) -> ErrorMark:
        """The mark of a tracer's `ParseFailure` (its stream offsets as they are); a parse that
        ran past its deadline names `budget`, the ``*_seconds`` limit it ran out of."""
        if failure.lenient:
            message = f"{LENIENT_HEADLINE}: {failure.message}"
        else:
            message = in_words(failure.type, failure.message)
        if failure.type == ParseDeadlineError.__name__:
            seconds = getattr(limits.current(), budget)
            message = f"{message} (the time budget is PLAYGROUND_LIMITS {budget}, {seconds:g} s)"
        elif failure.type == ParseLimitError.__name__:  # the limit's own key and value
            key = "value_chars" if "max_value_chars" in message else "regions"
            message += f" (PLAYGROUND_LIMITS {key}, {getattr(limits.current(), key):,})"
        return cls(
            message,
            failure.field,
            failure.key,
            failure.stream_start,
            failure.stream_end,
            failure.stream_position,
            failure.lenient,
        )


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
        spans: the tracer's `TraceSpan`s tiling the stream, in order (panels read their
            `stream_start`/`stream_end`).
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
        diagnoses: the causes of what went wrong (`engine.authoring.diagnosis`), worked out once
            by the tracer when the parse ended ([] while streaming).
        tokens: when the parse read token ids, the `engine.token_ids.StreamTokens` record of
            them (boundaries, control tokens, spelled-out ones; offsets are stream offsets);
            None for a parse of text.
        tokenizer_name: which tokenizer read the ids ("" for a parse of text).
    """

    cut_away: str = ""
    stream: str = ""
    tail_length: int = 0
    anchor_found: bool = True
    spans: list[TraceSpan] = field(default_factory=list)
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
    diagnoses: list[Diagnosis] = field(default_factory=list)
    tokens: StreamTokens | None = None
    tokenizer_name: str = ""

    # The fields `weight` counts by estimate (the others by `plain_weight`).
    ESTIMATED: ClassVar[frozenset[str]] = frozenset(
        (
            "stream",
            "cut_away",
            "spans",
            "events",
            "chunk_ends",
            "message",
            "partial_message",
            "tokens",
        )
    )

    @property
    def weight(self) -> int:
        """About the bytes this view keeps (measured with tracemalloc on big pastes): the text twice
        (the stream and the values made of it), each span, each logged event, each kept event dict,
        and every other field by its plain weight (the template, the tools, the notes)."""
        store = getattr(self.events, "store", None)
        kept = store.kept_count if store is not None else len(self.events)
        return (
            2 * (sys.getsizeof(self.stream) + sys.getsizeof(self.cut_away))
            + SPAN_BYTES * len(self.spans)
            + LOGGED_EVENT_BYTES * len(self.events)
            + KEPT_EVENT_BYTES * kept
            + 8 * len(self.chunk_ends)
            + TOKEN_BYTES * (len(self.tokens.ids) if self.tokens is not None else 0)
            + plain_weight(self, skip=self.ESTIMATED)
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


def traced_view(
    template: dict,
    prefix: str,
    generation: str,
    tools: list | None,
    *,
    budget: str = "parse_seconds",
    until: float | None = None,
    reading=None,
) -> ParseView:
    """Parse a whole generation (one feed of a `LiveParse`) and view it.

    `budget` is the ``*_seconds`` limit the parse must end within (PLAYGROUND_LIMITS); past it
    the parse stops with an error naming it, and the rest is "unparsed". `until` (a
    `time.perf_counter()` value) ends it earlier when the request's own budget ends first.
    `reading`: a `playground.parse.token_reading.TokenReading` to parse the generation as the
    token ids its tokenizer gives (the spelled-out ranges with ordinary tokens), fed one id at
    a time as a model streams them (an output of more than ID_FEEDS ids in ID_FEEDS even
    pieces: each feed costs the tracer as much as a short text), or None to parse text (one
    feed).

    Raises TemplateError for a template that does not load; parse errors land in the view.
    """
    started = time.perf_counter()
    deadline = started + getattr(limits.current(), budget)
    deadline = deadline if until is None else min(deadline, until)
    ids = reading.ids(generation, until=deadline) if reading is not None else None
    live = LiveParse(
        template,
        reading.prefix_ids(prefix) if reading is not None else prefix,
        tools,
        deadline=deadline,
        budget=budget,
        tokenizer=reading.tokenizer if reading is not None else None,
        tokenizer_name=reading.name if reading is not None else "",
    )
    if reading is None:
        live.feed(generation, boundary=False)
    else:  # one id a feed, as a model streams them: the chunks are those a live stream gives
        step = -(-len(ids) // ID_FEEDS) if len(ids) > ID_FEEDS else 1
        for at in range(0, len(ids), step):
            live.feed(ids[at : at + step], boundary=False)
    live.finalize()
    seconds = time.perf_counter() - started
    read = (
        [("tokens", f"{len(live.tracer.tokens.ids) - live.tracer.tokens.prefix_tokens:,}")]
        if reading is not None
        else []
    )
    return live.view(
        [
            ("characters", f"{len(generation):,}"),
            *read,
            ("events", f"{len(live.events):,}"),
            ("traced parse", f"{seconds * 1000:.1f} ms"),
        ]
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

    def __init__(self, template: dict, prefix, tools: list | None, tokenizer=None):
        self.seconds = 0.0
        self.stopped = ""
        self.message: dict | None = None
        self._parser: ResponseParser | None = None
        try:
            self._parser = ResponseParser(
                template,
                prefix=prefix,
                tools=tools,
                regex_timeout=limits.current().regex_seconds,
                tokenizer=tokenizer,
            )
        except (ResponseParseError, TimeoutError) as error:
            self.stopped = in_words(type(error).__name__, error)

    def _timed(self, step, *args):
        """`step(*args)`, its CPU time added to `seconds`; None when the parser raised (timing stops)."""
        started = time.thread_time()
        try:
            return step(*args)
        except (ResponseParseError, TimeoutError) as error:
            self._parser, self.stopped = None, in_words(type(error).__name__, error)
            return None
        finally:
            self.seconds += time.thread_time() - started

    def feed(self, chunk) -> None:
        """Feed `chunk` (text, or token ids for a parser given a tokenizer)."""
        if self._parser is not None:
            self._timed(self._parser.feed, chunk)

    def finalize(self) -> None:
        if self._parser is not None:
            finished = self._timed(self._parser.finalize)
            self.message = finished[0] if finished else None
            self._parser = None


def _spelled_at(tokens: StreamTokens | None):
    """A test of stream offsets: whether one lies in a control token spelled out with ordinary
    tokens (always False for a parse of text, or when none was)."""
    spelled = tokens.spelled_out() if tokens is not None else []
    return lambda at: at is not None and any(start <= at < end for start, end in spelled)


def _untokened(events: list[dict]) -> list[dict]:
    """`events` without their ``"tokens"`` ranges (changed in place): the store keeps a chunk
    as a few integers only with the parser's usual keys, and the view's `tokens` give the
    range of any offsets again."""
    for event in events:
        event.pop("tokens", None)
    return events


class LiveParse:
    """A parse fed chunk by chunk (replay and live generation), or whole (the Parse button),
    viewable at any moment: the engine's `Tracer`, its events kept compactly (`EventStore`).

    `plain`: also feed a `PlainParse` (live generation's "parse per token" figure) and time the
    traced parser: `parse_seconds` is its CPU time in feed and finalize (0 without `plain`: a
    replay does not time itself). `deadline` (a `time.perf_counter()` value, or None) is the
    parser's: a feed or finalize that runs past it stops the parse with a `ParseDeadlineError`
    naming `budget`; a server sets it per request (`set_deadline`).

    `tokenizer`: a fast Hugging Face tokenizer: `prefix` may then be text or token ids, `feed`
    takes token ids, and the parse is transformers 5.25's reading of ids (a control token is
    a delimiter only when generated as its id); `tokenizer_name` says whose it is.

    Raises TemplateError for a template that does not load; parse errors land in the view.
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
        tokenizer=None,
        tokenizer_name: str = "",
    ):
        self.template, self.tools = template, tools
        self.tokenizer_name = tokenizer_name if tokenizer is not None else ""
        self.field_names = list(template.get("fields", {}))
        self.events = EventStore()
        self.chunk_ends = array("q")
        self.parse_seconds = 0.0
        self.feeds = 0
        self.budget = budget
        self.plain = PlainParse(template, prefix, tools, tokenizer) if plain else None
        self.tracer = Tracer(
            template,
            prefix,
            tools=tools,
            regex_timeout=limits.current().regex_seconds,
            deadline=deadline,
            on_error=ON_ERROR,
            keep_events=False,
            max_regions=limits.current().regions,
            max_value_chars=limits.current().value_chars,
            tokenizer=tokenizer,
        )
        self.open_field: str | None = None
        self._log(_untokened(self.tracer.initial_events), PREFIX)

    @property
    def finished(self) -> bool:
        return self.tracer.finished

    @property
    def message(self) -> dict | None:
        """The message once finalized (None before, or when the parse stopped)."""
        return self.tracer.message

    @property
    def error(self) -> ResponseParseError | None:
        """The error that stopped the parse, or None."""
        return self.tracer.error

    @property
    def received(self) -> int:
        """Characters of the stream so far (the prefix tail and the generation received)."""
        return self.tracer.received

    @property
    def tail_length(self) -> int:
        return self.tracer.tail_length

    @property
    def generation(self) -> str:
        """The generation received so far."""
        return self.tracer.stream[self.tracer.tail_length :]

    @property
    def span_count(self) -> int:
        """Spans the tracer keeps (one a stretch)."""
        return self.tracer.span_count

    def set_deadline(self, deadline: float | None) -> None:
        """The time the parser must stop by from now on (one per request), or None."""
        self.tracer.deadline = deadline

    def _log(self, events: list[dict], phase: int) -> None:
        self.events.append(events, phase)
        for event in events:  # the region text goes to now: the last one opened and not closed
            kind = event["type"]
            if kind == "region_open":
                self.open_field = event["field"]
            elif kind == "region_close":
                self.open_field = None

    def feed(self, chunk, *, boundary: bool = True) -> None:
        """Feed one chunk (text, or token ids with a tokenizer; after an error the text is kept but no longer parsed; after
        `finalize` nothing changes). `boundary`: mark where the chunk ends (`chunk_ends`), as a
        replay's chunks are; the Parse button's one feed of the whole generation is not."""
        tracer = self.tracer
        if tracer.finished:
            return
        self.feeds += 1
        plain = self.plain
        if plain is not None:
            plain.feed(chunk)
            started = time.thread_time()
        events = tracer.feed(chunk)
        if plain is not None:
            self.parse_seconds += time.thread_time() - started
        if boundary:
            self.chunk_ends.append(tracer.received)
        if tracer.tokens is not None:
            events = _untokened(events)
        if events:
            if len(events) == 1 and events[0]["type"] == "region_chunk":
                self.events.append(events, self.feeds)  # one more chunk of the open region
            else:
                self._log(events, self.feeds)

    def finalize(self) -> None:
        """End the stream: settle held text and take the message (the tracer works out the
        warnings and diagnoses here, once)."""
        if self.finished:
            return
        if self.plain is not None:
            self.plain.finalize()
        started = time.thread_time()
        events = self.tracer.finalize()
        if self.plain is not None:
            self.parse_seconds += time.thread_time() - started
        self._log(_untokened(events), FINALIZE)

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
        tracer = self.tracer
        spans = tracer.spans()
        stream = tracer.stream
        events = self.events.view(stream)
        stopped = [] if tracer.error is None else [tracer.stopped_by()]
        errors = [ErrorMark.of(failure, self.budget) for failure in tracer.failures() + stopped]
        held = [span for span in spans[-2:] if span.kind == "held"]  # two across the boundary
        reason = (
            held_reason(self.template, self.open_field, stream[held[0].stream_start :])
            if held
            else ""
        )
        spelled = _spelled_at(tracer.tokens)
        return ParseView(
            cut_away=tracer.anchor.dropped,
            stream=stream,
            tail_length=tracer.tail_length,
            anchor_found=tracer.anchor.found or not tracer.prefix,
            spans=spans,
            events=events,
            field_names=self.field_names,
            message=tracer.message,
            partial_message=(
                message_from_events((e.event for e in events), self.template)
                if partial_message and not self.finished
                else None
            ),
            errors=errors,
            # A spelled-out control token is no delimiter by design (the map says why): the
            # warnings and diagnoses found at one are not a near miss or lost text.
            warnings=[
                WarningNote(w.code, w.message, w.suggestion)
                for w in tracer.warnings
                if not spelled(
                    w.start + tracer.tail_length
                    if w.source == "generation"
                    else w.start - tracer.anchor.offset
                )
            ],
            figures=list(extra_figures),
            finished=self.finished,
            chunk_ends=self.chunk_ends[:],
            fresh_feeds=fresh_feeds,
            held_reason=reason,
            template=self.template,
            tools=self.tools,
            diagnoses=[d for d in tracer.diagnoses if not spelled(d.stream_start)],
            tokens=tracer.tokens,
            tokenizer_name=self.tokenizer_name,
        )
