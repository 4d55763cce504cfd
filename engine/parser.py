"""The streaming parser: text in, region events out, and the message at the end.

`ResponseParser` is a sans-I/O state machine (the format and its events are
described in docs/template-language.md). Its pieces each have a module:

* `watch`: what can fire in the current state, and the one scan that says which
  match to commit and where to hold (`WatchState.scan`);
* `buffer`: the scan window (undecided text, plus the decided characters
  lookbehinds may need) and the open region's body, kept linear in the text;
* `regions`: where decided text goes, the events of regions opening and closing,
  and the parse's time budget;
* `message`: each closed region's value, written into the message;
* `inputs`: the prefix, token ids and batches turned into text.

Most chunks take a quick path: while a region is open, the watch state's
`QuickTest` says whether the held text and the chunk can all be emitted, where
a possible delimiter start must be held, or whether a full scan must decide.
Its events are exactly those of a full scan; `quick_path=False` turns it off.

Offsets. Positions in events (opt-in), spans and errors are character
offsets into the *stream*: the prefix after its last start-anchor match,
followed by the generation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .account import Account
from .buffer import BODY_BLOCK, StreamBuffer
from .delimiters import DelimiterMatch
from .errors import PatternTimeoutError, ResponseParseError
from .inputs import MISSING_PREFIX_MESSAGE, batch_prefixes, prefix_cut, prefix_text, split_batch
from .message import MessageBuilder
from .regions import Regions, TimeBudget
from .strays import STRAY, control_texts, lenient_watch
from .template import ResponseTemplate, load_template
from .token_ids import IdReader, StreamTokens, token_id_list
from .tool_typing import tool_parameter_schemas

__all__ = ["MISSING_PREFIX_MESSAGE", "ON_ERROR_MODES", "ResponseParser", "parse_response"]

# What a region that cannot be parsed does: raise ResponseParseError, or keep its text and go on.
ON_ERROR_MODES = ("raise", "keep")

# Zero-width delimiters committed in a row at one offset before the parser steps over a character.
STALL_LIMIT = 2


class StallGuard:
    """Keeps zero-width delimiters (a lookahead close, `(?=<tool_call>)`) from firing forever.

    A zero-width match committed more than `STALL_LIMIT` times in a row at one offset is not
    committed: the offset is marked `stalled_at`, and the parser steps over one character there
    (the same in every chunking) before matching again.
    """

    __slots__ = ("count", "stalled_at")

    def __init__(self) -> None:
        self.count = 0  # zero-width matches committed in a row at one offset
        self.stalled_at = -1  # the stream offset where that went on too long

    def allows(self, match: DelimiterMatch, pos: int, base: int) -> bool:
        """Whether to commit `match`, found in the window whose undecided text starts at `pos`."""
        if match.start != match.end:
            self.count = 0
            return True
        self.count = self.count + 1 if match.start == pos else 1
        if self.count <= STALL_LIMIT:
            return True
        self.stalled_at = base + match.start
        return False


def check_on_error(on_error: str) -> None:
    """Raise ValueError unless `on_error` is one of `ON_ERROR_MODES`."""
    if on_error not in ON_ERROR_MODES:
        raise ValueError(f"on_error must be one of {ON_ERROR_MODES}, got {on_error!r}")


class ResponseParser:
    """Parse one generation incrementally with a response template.

    Usage::

        parser = ResponseParser(template, prefix=prompt_text)
        handle(parser.initial_events)
        for chunk in stream:
            handle(parser.feed(chunk))
        message, final_events = parser.finalize()

    Args:
        response_template: the template dict (or JSON text, or a loaded `ResponseTemplate`).
        prefix: REQUIRED. The prompt text sent before generation; it is cut after the last
            start-anchor match and replayed, so regions the chat template opened (a prefilled
            `<think>`) are open when the generation starts. ``""`` opts out.
        tools: tool schemas or functions, to cast tool-call arguments by their JSON schema.
        regex_timeout: seconds allowed for each regex call of a template pattern, or None.
        deadline: a `time.perf_counter()` value the whole parse must end by, or None. A
            template whose every regex call stays within `regex_timeout` can still take that
            long on each of thousands of regions; past the deadline a scan or a region's value
            raises `ParseDeadlineError` (each regex call is given at most the time left).
        max_regions: the most regions the parse may open (implicit stretches included), or None.
            The next open raises `ParseLimitError` before it is taken, the text from it on left
            unparsed: a server bounds what one request's events, spans and views cost with it.
        max_value_chars: the most characters the region values of the parse may hold together,
            as JSON would write them (`message.value_chars`: a transform that repeats a value
            counts it each time, and so does a close carrying the value so far), or None. The
            close past it raises `ParseLimitError`: a server bounds its answer with it.
        positions: when True, events carry `start`/`end` stream offsets (off by default, so
            events are exactly the reference's dicts).
        record_spans: when True, `spans` records what became of every character, for the tracer
            (`engine.authoring.trace.Tracer`, which turns the records into `TraceSpan`s).
        on_error: ``"raise"`` (the default, as in transformers): a region whose body cannot be
            parsed raises `ResponseParseError`. ``"keep"``: nothing is lost instead; the failed
            region's `region_close` carries ``"error"`` and no ``"value"``, then the region is
            read leniently (`engine.recovery`: the value it starts with, the regions and
            unclaimed text after it; its delimiters consumed, the rest a stretch of the
            implicit field; with no implicit field it stays on the error's `text`); every
            other field keeps its value, and `errors` lists what failed and what lenient
            reading read, with offsets. A delimiter pattern over its time budget still raises.
        quick_path: True (the default): while a region is open, a chunk that cannot complete
            a delimiter is emitted without a full scan (the same events, several times
            faster). False scans every chunk: to measure or check the full scan. Parsers with
            `positions` or `record_spans` always scan every chunk.
        strings_as_written: False (the default, as in transformers): tool typing casts only
            strings. True: a tagged argument (`xml-inline`, `kv-lines`) that a `value_parser`
            read keeps the text the model wrote when its parameter's schema says `string`
            (`5123123` stays ``"5123123"``), a difference from transformers.
        tokenizer: a fast Hugging Face tokenizer: `feed` and `finalize` then take token ids
            (text raises TypeError), `prefix` text or ids; a control token is a delimiter only
            when generated as its id (`engine.token_ids.IdReader`).
        account: True (the default): each region is checked as it closes (`engine.account`),
            into `warnings`; False skips it (`parse_response` returns no warnings).

    Attributes:
        errors: the `ResponseParseError`s met so far, in order (with ``"raise"``, the one raised).
        warnings: the `engine.account.ParseWarning`s found so far: text the parse probably put
            where it does not belong (a near miss of a delimiter, an argument not read, a call
            name that is not a tool's), each worked out once when its region closed, so they
            are the same in every chunking. A message with no error and no warning is
            accounted for: every character is in a value, a delimiter, or its whitespace.
        initial_events: events produced by the prefix.
        tokens: with a tokenizer, the `engine.token_ids.StreamTokens` record of the ids read:
            token boundaries, control tokens, spelled-out ones, `matched_by`. None otherwise.
        prefix_cut: offset in the prefix where the stream starts (after the last anchor match;
            0 when the anchor is absent or the prefix is empty).
        deadline: the `deadline` given (a server may move it between feeds, one per request).
        spans: with `record_spans`, one ``(start, end, kind, field, region, match)`` tuple per
            stretch decided, in stream order (kind ``"body"``, ``"open"``, ``"close"`` or
            ``"discarded"``; `match` the `DelimiterMatch` of a delimiter, else None); the
            tracer reads and clears it. None otherwise.

    Raises:
        TemplateError: the template is invalid (checked before the prefix).
        ValueError: `prefix` is missing or not text, or `on_error` is not one of ``"raise"``, ``"keep"``.
    """

    def __init__(
        self,
        response_template: dict | str | ResponseTemplate,
        prefix: str | None = None,
        *,
        tools: list[dict | Callable] | None = None,
        regex_timeout: float | None = None,
        deadline: float | None = None,
        positions: bool = False,
        record_spans: bool = False,
        on_error: str = "raise",
        quick_path: bool = True,
        max_regions: int | None = None,
        max_value_chars: int | None = None,
        strings_as_written: bool = False,
        tokenizer: Any = None,
        account: bool = True,
    ):
        self.template = template = load_template(response_template)
        check_on_error(on_error)
        self.on_error = on_error
        self.errors: list[ResponseParseError] = []
        self._ids: IdReader | None = None
        self.tokens: StreamTokens | None = None
        if tokenizer is not None:
            self._ids = IdReader(tokenizer, positions, ResponseParser.feed.__get__(self))
            self.tokens = self._ids.tokens
            prefix = self._ids.prefix(prefix)
            self.feed = self._ids.feed  # type: ignore[method-assign]
        prefix = prefix_text(prefix)
        self._budget = budget = TimeBudget(regex_timeout, deadline)
        self.spans: list[tuple] | None = [] if record_spans else None
        self._quick_path = quick_path and not positions and not record_spans
        schemas = tool_parameter_schemas(tools)
        self._message = MessageBuilder(template, schemas, regex_timeout, strings_as_written)
        self._account = Account(template, schemas, regex_timeout) if account else None
        self.warnings: list = self._account.warnings if account else []
        # the scan window and the open region's body
        self._buffer = StreamBuffer(template.context_width)
        self._regions = Regions(
            template,
            self._buffer,
            self._message,
            budget,
            positions=positions,
            spans=self.spans,
            on_error=on_error,
            errors=self.errors,
            max_regions=max_regions,
            max_value_chars=max_value_chars,
            account=self._account,
            lenient=None
            if on_error != "keep"
            else lenient_watch(template, control_texts(self.tokens)),
        )
        self._finalized = False
        # While the next chunk may take the quick path: the open region's `QuickTest`, its
        # region_chunk event without its text, and the text that needs no quick test without
        # it (and without a trailing run; "" with context).
        self._quick = None
        self._chunk_event: dict = {}
        self._quick_first = ""
        self._stalls = StallGuard()
        self.initial_events: list[dict] = []
        self.prefix_cut = prefix_cut(template, prefix, budget.seconds(0)) or 0
        if self._ids is not None:
            self.tokens.start_stream(self.prefix_cut)
        if prefix:
            self._buffer.text = prefix[self.prefix_cut :]
            self._scan(self.initial_events, at_end=False)
            if self._ids is not None:
                self._ids.as_read(self.initial_events)

    @property
    def deadline(self) -> float | None:
        """The `time.perf_counter()` value the parse must end by, or None (a server may move it
        between feeds, one per request)."""
        return self._budget.deadline

    @deadline.setter
    def deadline(self, value: float | None) -> None:
        self._budget.deadline = value

    # -- public API ---------------------------------------------------------

    def feed(self, chunk: str) -> list[dict]:
        """Add the next piece of the generation; return the events it settles.

        Text that could be the start of a delimiter is held back (not emitted) until
        later text or `finalize` decides it.

        Raises:
            RuntimeError: the parser was finalized.
            ResponseParseError: with ``on_error="raise"``, a region closed by this chunk failed
                to parse (names the field, the key and where); also, whatever `on_error` says,
                a pattern over its time budget, the deadline or a limit. Its `events` are those
                this chunk settled before the error.
        """
        quick = self._quick
        if quick is None or not chunk:
            return self._feed_scanning(chunk)
        buffer = self._buffer
        text = buffer.text + chunk
        run = quick.run_characters
        if self._quick_first in text or (run and text[-1] in run):
            # A delimiter may start in it: the quick test says what to hold (see StreamBuffer).
            if buffer.context:
                text = buffer.take_quickly(text, quick)
                if not text:
                    return self._held_quickly(text is None)
            else:
                hold = quick.hold(text)
                if hold <= 0:
                    buffer.text = text
                    return self._held_quickly(hold < 0)
                buffer.text, text = text[hold:], text[:hold]
        else:  # no delimiter can start in it: all of it goes to the open region
            buffer.text = ""
        pieces = buffer.pieces
        pieces.append(text)
        if len(pieces) >= BODY_BLOCK:
            buffer.join_block()
        event = self._chunk_event.copy()  # copying a prepared dict is cheaper than building one
        event["text"] = text
        return [event]

    def _held_quickly(self, scan: bool) -> list[dict]:
        """`feed` when the quick path decided nothing: all is held, or (`scan`) a scan must
        decide; the window has the chunk."""
        if not scan:
            return []
        self._quick = None
        events: list[dict] = []
        self._scan(events, at_end=False)
        return events

    def _feed_scanning(self, chunk: str) -> list[dict]:
        """`feed` off the quick path: add `chunk` and scan from where the last scan stopped."""
        if self._finalized:
            raise RuntimeError(
                "ResponseParser.feed() called after finalize(); make a new parser per generation"
            )
        events: list[dict] = []
        if not chunk:
            return events
        buffer = self._buffer
        if buffer.pos == len(buffer.text):
            # Nothing is held, so the chunk is the whole undecided text: when the state's start
            # shows no match can be complete in it, its hold is the scan's answer.
            hold = self._regions.state.start.hold_without_match(chunk, 0, False)
            if hold >= 0 and (
                self._stalls.stalled_at < 0 or buffer.offset != self._stalls.stalled_at
            ):
                offset = buffer.add_decided(chunk, hold)
                if hold:
                    self._regions.route(events, chunk[:hold], offset)
                    self._stalls.count = 0
                self._settle()
                return events
        buffer.text += chunk
        try:  # inline `_scan`: this is the streaming path, once per chunk
            self._process(events, at_end=False)
        except ResponseParseError as error:
            error.events = events
            raise
        return events

    def finalize(self, last_chunk: str = "") -> tuple[dict, list[dict]]:
        """End the stream: settle held text, close the open region, return `(message, final_events)`.

        `last_chunk` (optional) is a final piece of the generation; since the stream ends with
        it, it is never held back. `parse_response` passes the whole generation this way.

        The message starts from the template's `defaults`; keys not in `defaults` with an
        empty value (None, "", [], {}) are dropped.

        Raises:
            RuntimeError: called twice.
            ResponseParseError: with ``on_error="raise"``, a region failed to parse or a
                required field is missing (with ``"keep"`` both are recorded in `errors`); also a
                pattern over its time budget, the deadline or a limit. Its `events` are the final
                events settled before the error.
        """
        if self._finalized:
            raise RuntimeError("ResponseParser.finalize() called twice")
        if self._ids is not None:
            return self._ids.finalize(self._finalize_text, last_chunk)
        return self._finalize_text(last_chunk)

    def _finalize_text(self, last_chunk: str) -> tuple[dict, list[dict]]:
        """`finalize` of the text in the window and `last_chunk` (text)."""
        self._quick = None
        self._finalized = True
        events: list[dict] = []
        self._buffer.text += last_chunk
        self._scan(events, at_end=True)
        missing = self._message.missing_fields()
        if missing:
            error = ResponseParseError(
                f"required field(s) {missing} not found in the generation (they are marked 'optional': false)",
                field=missing[0],
                key=f"fields.{missing[0]}.optional",
            )
            self.errors.append(error)
            if self.on_error == "raise":
                error.events = events
                raise error
        return self._message.finished(), events

    @property
    def held_text(self) -> str:
        """Text received but not yet emitted, because it may be (part of) a delimiter."""
        return self._buffer.held

    @property
    def offset(self) -> int:
        """Stream offset up to which text has been decided (emitted, discarded or matched)."""
        return self._buffer.offset

    # -- the state machine -------------------------------------------------

    def _scan(self, events: list[dict], at_end: bool) -> None:
        """`_process`, handing the events settled before an error to the error (`events`)."""
        try:
            self._process(events, at_end)
        except ResponseParseError as error:
            error.events = events
            raise

    def _process(self, events: list[dict], at_end: bool) -> None:
        """Scan the window from `pos`, committing matches and routing decided text, until the
        rest is held (or, `at_end`, until the stream is used up and the last region closed)."""
        window, regions, budget = self._buffer, self._regions, self._budget
        final_searches: dict | None = {} if at_end else None
        while True:
            text, pos, base = window.text, window.pos, window.base
            timeout = budget.seconds(base + pos, regions.state)
            if base + pos == self._stalls.stalled_at:
                # Zero-width delimiters kept firing here without consuming text; step over one
                # character (the same in every chunking), then match again.
                if pos < len(text):
                    regions.route(events, text[pos], base + pos)
                    window.pos = pos + 1
                    self._stalls.count = 0
                    continue
                if at_end:
                    regions.close(events, None, base + pos)
                break
            try:
                match, hold = regions.state.scan(text, pos, at_end, timeout, final_searches)
            except PatternTimeoutError as error:
                budget.check(error, base + pos)
                raise
            if match is not None:
                self._commit(events, match)
                continue
            if not at_end:
                if hold > pos:
                    regions.route(events, text[pos:hold], base + pos)
                    window.pos = hold
                    self._stalls.count = 0
                break
            if pos < len(text):
                regions.route(events, text[pos:], base + pos)
                window.pos = len(text)
            regions.close(events, None, window.offset)
            break
        window.trim()
        self._settle()

    def _commit(self, events: list[dict], match: DelimiterMatch) -> None:
        """Route the text before `match`, then open or close a region with it (unless the stall
        guard holds it back)."""
        window = self._buffer
        pos, base = window.pos, window.base
        regions = self._regions
        if match.start > pos:
            regions.route(events, window.text[pos : match.start], base + pos)
            window.pos = match.start
        if not self._stalls.allows(match, pos, base):
            return
        if match.delimiter.side == "open":
            regions.check_count(base + match.start)  # before the match is taken
        window.pos = match.end
        if match.delimiter.side == "open":
            regions.close(events, None, base + match.start)
            regions.open(events, match)
        elif match.delimiter.side == STRAY:
            regions.close(events, None, base + match.start)
            regions.stray(events, match)
        else:
            regions.close(events, match, base + match.start)

    def _settle(self) -> None:
        """After a scan: let the next chunk take `feed`'s quick path when it may.

        The quick path emits only to the open region, so it is only taken while a region is
        open, its watch state has a quick test and no zero-width delimiters are stalling (and
        never with positions, spans or `quick_path=False`). The window is cut down to the held
        text and its context, which the quick path tests together with the next chunk.
        """
        regions = self._regions
        state, current = regions.state, regions.current
        if (
            self._quick_path
            and state.quick is not None
            and regions.opened
            and not self._finalized
            and not self._stalls.count
            and current is not None
        ):
            self._buffer.start_quick()
            self._quick = state.quick
            self._quick_first = "" if self._buffer.context else state.quick.first
            self._chunk_event = {
                "type": "region_chunk",
                "field": current.name,
                "text": "",
                "dirty": current.dirty,
            }
        else:
            self._quick = None


def parse_response(
    text: Any,
    response_template: dict | str | ResponseTemplate | None = None,
    *,
    prefix: Any = None,
    tools: list[dict | Callable] | None = None,
    tokenizer: Any = None,
    regex_timeout: float | None = None,
    deadline: float | None = None,
    on_error: str = "raise",
    strings_as_written: bool = False,
) -> dict | list[dict]:
    """Parse a complete generation into a message dict.

    Args:
        text: the generation: a str, or token ids (list of int, 1-D array/tensor) with
            `tokenizer`; or a batch: list of str, list of id lists, 2-D array/tensor.
        response_template: the template; None takes `tokenizer.response_template`.
        prefix: REQUIRED. The prompt before generation (text, ids, or one per batch item);
            ``""`` or ``[]`` opts out.
        tools: tool schemas or functions, to cast tool-call arguments.
        tokenizer: a fast Hugging Face tokenizer: `text` is then token ids (one sequence or a
            batch; text raises TypeError, as in transformers) read as `ResponseParser` does with
            a tokenizer: control tokens are delimiters only when generated as their ids.
        regex_timeout: seconds allowed for each regex call of a template pattern.
        deadline: a `time.perf_counter()` value the whole call must end by (see `ResponseParser`).
        on_error: ``"raise"`` (default) or ``"keep"``: a region that cannot be parsed then
            becomes unclaimed text instead of an error (see `ResponseParser`; to see what
            failed, parse with `ResponseParser(...).finalize(text)` and read its `errors`).
        strings_as_written: as for `ResponseParser` (False: transformers' tool typing).

    Returns:
        The message dict, or a list of them for a batch (also for a batch of one).

    Raises:
        TemplateError: the template is invalid (reported before a missing prefix).
        ValueError: no prefix; ids without a tokenizer; prefix/batch sizes differ; no template.
        ResponseParseError: with ``on_error="raise"``, a region failed to parse (names the field and offset).
        ParseDeadlineError: the parse ran past `deadline` (whatever `on_error` says).
    """
    if response_template is None:
        response_template = getattr(tokenizer, "response_template", None)
        if response_template is None:
            raise ValueError(
                "no response template: pass one, or a tokenizer whose response_template is set "
                "(engine.attach_response_template)"
            )
    template = load_template(response_template)
    if prefix is None:
        raise ValueError(MISSING_PREFIX_MESSAGE)
    check_on_error(on_error)
    options = dict(
        tools=tools,
        regex_timeout=regex_timeout,
        deadline=deadline,
        on_error=on_error,
        strings_as_written=strings_as_written,
        account=False,  # only the message is returned: its warnings would go unread
    )
    if tokenizer is not None:
        sequences, batched = id_sequences(text, "text")
        if batched:
            prefixes, prefix_batched = id_sequences(prefix, "prefix", allow_text=True)
            if not prefix_batched:
                prefixes = [prefix] * len(sequences)
            elif len(prefixes) != len(sequences):
                raise ValueError(
                    f"got {len(sequences)} generation(s) but {len(prefixes)} prefixes; give one prefix, or one per generation"
                )
        else:
            prefixes = [prefix]
        messages = [
            ResponseParser(template, generation_prefix, tokenizer=tokenizer, **options).finalize(
                ids
            )[0]
            for ids, generation_prefix in zip(sequences, prefixes)
        ]
        return messages if batched else messages[0]
    texts, batched = split_batch(text, "text", tokenizer)
    prefixes = batch_prefixes(prefix, len(texts), tokenizer)
    messages = []
    for generation, generation_prefix in zip(texts, prefixes):
        # The stream is already whole, so nothing needs holding back.
        parser = ResponseParser(template, generation_prefix, **options)
        messages.append(parser.finalize(generation)[0])
    return messages if batched else messages[0]


def id_sequences(value: Any, what: str, allow_text: bool = False) -> tuple[list, bool]:
    """`value` (token ids, or a batch of them: a list of id lists, a 2-D array or tensor) as a
    list of sequences, and whether it was a batch. With `allow_text` (a prefix), text is one
    sequence and a list of texts a batch.

    Raises:
        TypeError: text where ids are needed (a parser given a tokenizer reads ids), or not ids.
        ValueError: an array that is neither 1-D nor 2-D.
    """
    if allow_text and isinstance(value, str):
        return [value], False
    if hasattr(value, "ndim"):
        if value.ndim not in (1, 2):
            raise ValueError(
                f"{what}: arrays must be 1-D (one sequence) or 2-D (a batch), got {value.ndim}-D"
            )
        return (value.tolist(), True) if value.ndim == 2 else ([value], False)
    if (
        isinstance(value, (list, tuple))
        and value
        and all(
            isinstance(item, (list, tuple))
            or hasattr(item, "ndim")
            or (allow_text and isinstance(item, str))
            for item in value
        )
    ):
        return list(value), True
    return [
        token_id_list(value, what) if not (allow_text and isinstance(value, str)) else value
    ], False
