"""The streaming parser: text in, region events out, and the message at the end.

`ResponseParser` is a sans-I/O state machine (the format and its events are
described in docs/template-language.md).
It keeps only the *undecided* text of the stream (plus the few characters
lookbehinds may need) in a scan window, so feeding a 1 MB generation a token
at a time costs about ten times a 100 KB one: the window is trimmed as text
is decided, region bodies are collected as lists of chunks, and each feed
scans only from where the previous one stopped.

Most chunks take a quick path: while a region is open, the watch state's
`template.QuickTest` says whether the held text and the chunk can all be
emitted, where a possible delimiter start must be held, or whether a full scan
must decide. A chunk without the delimiters' first character costs one `in`
test; the rest take `QuickTest.hold`, at most one standard-`re` search. Its
events are exactly those of a full scan.

Offsets. Positions in events (opt-in), spans and errors are character
offsets into the *stream*: the prefix after its last start-anchor match,
followed by the generation.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .content import parse_content
from .delimiters import DelimiterMatch
from .events import is_empty
from .errors import ContentError, PatternTimeoutError, ResponseParseError, UndefinedPlaceholderError, shorten
from .template import FieldSpec, QuickTest, ResponseTemplate, load_template
from .tool_typing import tool_parameter_schemas, type_tool_calls
from .transform import PlaceholderNotDefined, apply_transform

# Region bodies are collected as lists of chunks joined into one string every this many
# chunks, which keeps memory near the text's size.
BODY_BLOCK = 256

# What a region that cannot be parsed does: raise ResponseParseError, or keep its text and go on.
ON_ERROR_MODES = ("raise", "keep")

MISSING_PREFIX_MESSAGE = (
    "prefix is required: pass the prompt text (or token ids) that was sent to the model before this "
    "generation. Chat templates often pre-write part of the assistant message (an opening <think>, a "
    "channel header), and without it the parser cannot know which region the generation starts in. "
    'If the generation holds the whole message, pass prefix="" to opt out.'
)


@dataclass(slots=True)
class Span:
    """A stretch `[start, end)` of the stream and what the parser made of it.

    Attributes:
        start, end: stream offsets.
        kind: ``"body"`` (text of a region), ``"open"`` / ``"close"`` (a delimiter), or
            ``"discarded"`` (no region was open and the template has no implicit field).
        field: the field for bodies and delimiters, else None.
        region: index of the region (0-based, in order of opening) for bodies and delimiters.
        match: the `DelimiterMatch` for delimiters (which literal or pattern, its captures).
    """

    start: int
    end: int
    kind: str
    field: str | None = None
    region: int | None = None
    match: DelimiterMatch | None = None


class _Blank:
    """The value of a whitespace-only stretch of a repeating implicit field: none (see `_store`)."""

    def __repr__(self) -> str:
        return "BLANK"


BLANK = _Blank()


def _match_priority(match: DelimiterMatch) -> tuple:
    # Earliest start, then longest, then opens before closes, then field name.
    return (match.start, match.start - match.end, match.delimiter.side != "open", match.delimiter.field)


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
        positions: when True, events carry `start`/`end` stream offsets (off by default, so
            events are exactly the reference's dicts).
        record_spans: when True, `spans` lists what became of every character (for tracing).
        on_error: ``"raise"`` (the default, as in transformers): a region whose body cannot be
            parsed raises `ResponseParseError`. ``"keep"``: nothing is lost instead; the failed
            region's `region_close` carries ``"error"`` and no ``"value"``, its raw text
            (delimiters included) becomes a stretch of the implicit field (with no implicit
            field it stays on the error's `text`), every other field keeps its value, and
            `errors` lists what failed. A delimiter pattern over its time budget still raises.

    Attributes:
        errors: the `ResponseParseError`s met so far, in order (with ``"raise"``, the one raised).
        initial_events: events produced by the prefix.
        prefix_cut: offset in the prefix where the stream starts (after the last anchor match;
            0 when the anchor is absent or the prefix is empty).
        spans: list of `Span` when `record_spans`, else None.

    Raises:
        TemplateError: the template is invalid (checked before the prefix).
        ValueError: `prefix` is missing, or `on_error` is not one of ``"raise"``, ``"keep"``.
    """

    def __init__(
        self,
        response_template: dict | str | ResponseTemplate,
        prefix: str | None = None,
        *,
        tools: list[dict | Callable] | None = None,
        regex_timeout: float | None = None,
        positions: bool = False,
        record_spans: bool = False,
        on_error: str = "raise",
    ):
        self.template = load_template(response_template)
        if on_error not in ON_ERROR_MODES:
            raise ValueError(f"on_error must be one of {ON_ERROR_MODES}, got {on_error!r}")
        self.on_error = on_error
        self.errors: list[ResponseParseError] = []
        if prefix is None:
            raise ValueError(MISSING_PREFIX_MESSAGE)
        if isinstance(prefix, (list, tuple)) and not prefix:
            prefix = ""
        if not isinstance(prefix, str):
            raise ValueError(
                f"prefix must be text here, got {type(prefix).__name__}; token ids need a tokenizer "
                "(engine.get_response_parser(tokenizer, prefix=ids))"
            )
        template = self.template
        self._tool_schemas = tool_parameter_schemas(tools)
        self._timeout = regex_timeout
        self._positions = positions
        self.spans: list[Span] | None = [] if record_spans else None
        self._watch_outside = template.watch_outside
        self._watch_inside = template.watch_inside
        self._context = template.context_width  # decided characters kept for lookbehinds
        self._window = ""
        self._window_base = 0
        self._pos = 0
        self._message: dict[str, Any] = copy.deepcopy(template.defaults)
        self._current: FieldSpec | None = template.implicit_field
        self._state = self._watch_outside  # what can fire now: depends on `_current`
        self._opened = False
        self._body: list[str] = []
        self._body_blocks: list[str] = []
        self._body_blocks_length = 0  # characters in _body_blocks
        self._body_start = 0
        self._region_start = 0  # stream offset of the open region's open delimiter (its body, for the implicit field)
        self._open_text = ""  # the open region's open delimiter text
        self._captures: dict[str, str] = {}
        self._region_count = 0
        self._implicit_stretches: list[str] = []  # every stretch of a non-repeating implicit field, as written
        self._implicit_values = 0  # how many of them were not blank
        self._finalized = False
        # The quick test of the open region's watch state while on the quick path, see _settle.
        self._quick: QuickTest | None = None
        self._quick_first = ""
        self._quick_run_characters: frozenset[str] = frozenset()
        self._chunk_event: dict = {}  # the open region's region_chunk event without its text, for the quick path
        self._quick_context = ""  # decided text before the quick path began (lookbehind context)
        self._quick_start = 0  # stream offset where the quick path began
        self._quick_body_length = 0  # the open region's body length then
        self._final_matches: dict = {}  # pattern delimiter -> (searched from, match) once the text is final
        self._stalls = 0  # delimiters committed in a row without consuming text
        self._stalled_at = -1  # stream offset where that went on too long
        self.initial_events: list[dict] = []
        self.prefix_cut = 0
        if prefix:
            cut = template.start_anchor.last_match_end(prefix, self._timeout)
            self.prefix_cut = cut or 0
            self._window = prefix[self.prefix_cut :]
            self._process(self.initial_events, at_end=False)

    # -- public API ---------------------------------------------------------

    def feed(self, chunk: str) -> list[dict]:
        """Add the next piece of the generation; return the events it settles.

        Text that could be the start of a delimiter is held back (not emitted) until
        later text or `finalize` decides it.

        Raises:
            RuntimeError: the parser was finalized.
            ResponseParseError: with ``on_error="raise"``, a region closed by this chunk failed
                to parse (names the field, the key and where).
        """
        if self._quick is None or not chunk:
            return self._feed_scanning(chunk)
        text = self._window + chunk  # on the quick path the window holds only undecided text
        run = self._quick_run_characters
        if self._quick_first in text or (run and text[-1] in run):
            hold = self._quick.hold(text)
            if hold < 0:
                self._leave_quick_path()  # some delimiter may be complete: scan
                return self._feed_scanning(chunk)
            # What cannot start a delimiter goes to the open region; a possible start stays held.
            self._window = text[hold:]
            if not hold:
                return []
            text = text[:hold]
        else:
            self._window = ""  # no delimiter can start in it
        # `_window_base` is left behind here: see `_leave_quick_path`.
        body = self._body
        body.append(text)
        if len(body) >= BODY_BLOCK:
            self._join_body_block()
        event = self._chunk_event.copy()  # copying a prepared dict is cheaper than building one
        event["text"] = text
        return [event]

    def _feed_scanning(self, chunk: str) -> list[dict]:
        """`feed` off the quick path: scan the window from where the last scan stopped."""
        if self._finalized:
            raise RuntimeError("ResponseParser.feed() called after finalize(); make a new parser per generation")
        events: list[dict] = []
        if not chunk:
            return events
        window = self._window
        if self._pos == len(window):
            # Everything before this chunk is decided: if no delimiter can start in it, it
            # all goes to the current region without a scan.
            if not self._state.may_start_in(chunk):
                if self._context:
                    self._window = window + chunk
                    self._pos = len(self._window)
                    self._route(events, chunk, self._window_base + len(window))
                    self._trim_window()
                else:
                    self._window_base += len(window)
                    self._window = chunk
                    self._pos = len(chunk)
                    self._route(events, chunk, self._window_base)
                self._settle()
                return events
        self._window = window + chunk
        self._process(events, at_end=False)
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
                required field is missing (with ``"keep"`` both are recorded in `errors`).
        """
        if self._finalized:
            raise RuntimeError("ResponseParser.finalize() called twice")
        if self._quick is not None:
            self._leave_quick_path()
        self._finalized = True
        events: list[dict] = []
        self._window += last_chunk
        self._process(events, at_end=True)
        missing = [
            spec.name for spec in self.template.fields.values() if not spec.optional and spec.name not in self._message
        ]
        if missing:
            error = ResponseParseError(
                f"required field(s) {missing} not found in the generation (they are marked 'optional': false)",
                field=missing[0],
                key=f"fields.{missing[0]}.optional",
            )
            self.errors.append(error)
            if self.on_error == "raise":
                raise error
        defaults = self.template.defaults
        message = {key: value for key, value in self._message.items() if key in defaults or not is_empty(value)}
        return message, events

    @property
    def held_text(self) -> str:
        """Text received but not yet emitted, because it may be (part of) a delimiter."""
        return self._window[self._pos :]

    @property
    def offset(self) -> int:
        """Stream offset up to which text has been decided (emitted, discarded or matched)."""
        if self._quick is not None:
            return self._quick_offset()
        return self._window_base + self._pos

    @property
    def current_field(self) -> str | None:
        """Name of the region text would go to now (the implicit field when none is open), or None."""
        return None if self._current is None else self._current.name

    # -- the state machine -------------------------------------------------

    def _process(self, events: list[dict], at_end: bool) -> None:
        timeout = self._timeout
        while True:
            window, pos = self._window, self._pos
            if self._window_base + pos == self._stalled_at:
                # Zero-width delimiters kept firing here without consuming text; step over one
                # character (the same in every chunking), then match again.
                if pos < len(window):
                    self._route(events, window[pos], self._window_base + pos)
                    self._pos = pos + 1
                    self._stalls = 0
                    continue
                if at_end:
                    self._close_region(events, None, self._window_base + pos)
                break
            state = self._state
            best: DelimiterMatch | None = None
            hold = state.hold_without_scan(window, pos, at_end)
            if hold < 0:
                hold = len(window)
                if state.literal_search is not None:
                    best, hold = state.scan_literals(window, pos, at_end)
                for delimiter in state.pattern_delimiters:
                    if at_end:
                        match, delimiter_hold = self._final_search(delimiter, window, pos), hold
                    else:
                        match, delimiter_hold = delimiter.scan(window, pos, at_end, timeout)
                    if delimiter_hold < hold:
                        hold = delimiter_hold
                    if match is not None and (best is None or _match_priority(match) < _match_priority(best)):
                        best = match
            if best is not None and best.start < hold:
                if best.start == best.end:
                    self._stalls = self._stalls + 1 if best.start == pos else 1
                    if self._stalls > 2:
                        self._stalled_at = self._window_base + best.start
                        if best.start > pos:
                            self._route(events, window[pos : best.start], self._window_base + pos)
                            self._pos = best.start
                        continue
                else:
                    self._stalls = 0
                if best.start > pos:
                    self._route(events, window[pos : best.start], self._window_base + pos)
                self._pos = best.end
                if best.delimiter.side == "open":
                    self._close_region(events, None, self._window_base + best.start)
                    self._open_region(events, best)
                else:
                    self._captures.update(best.captures)
                    self._close_region(events, best, self._window_base + best.start)
                continue
            if not at_end:
                if hold > pos:
                    self._route(events, window[pos:hold], self._window_base + pos)
                    self._pos = hold
                    self._stalls = 0
                break
            if pos < len(window):
                self._route(events, window[pos:], self._window_base + pos)
                self._pos = len(window)
            self._close_region(events, None, self._window_base + self._pos)
            break
        self._trim_window()
        self._settle()

    def _settle(self) -> None:
        """After a feed: let the next chunk take `feed`'s quick path when it may.

        The quick path skips scanning, positions and spans, so it is only taken while a
        region is open, its watch state has a quick test, no zero-width delimiters are
        stalling, events carry no positions and no spans are recorded. The window is cut to
        the held text, which the quick path tests together with the next chunk; the decided
        text that lookbehinds may need is put back by `_leave_quick_path`.
        """
        state = self._state
        if (
            state.quick is not None
            and self._opened
            and not self._finalized
            and self._stalls == 0
            and self.spans is None
            and not self._positions
            and self._current is not None
        ):
            pos = self._pos
            if self._context:
                self._quick_context = self._window[max(0, pos - self._context) : pos]
            if pos:
                self._window_base += pos
                self._window = self._window[pos:]
                self._pos = 0
            self._quick_start = self._window_base
            self._quick_body_length = self._body_length()
            self._quick = state.quick
            self._quick_first, self._quick_run_characters = state.quick.first, state.quick.run_characters
            self._chunk_event = {"type": "region_chunk", "field": self._current.name, "text": "", "dirty": self._current.dirty}
        else:
            self._quick = None

    def _leave_quick_path(self) -> None:
        """Before a full scan: put the decided text lookbehinds may need back in front of the held text.

        All text decided on the quick path went to the open region, so it is the tail of its
        body, and the window (the held text) starts where the body ends: the quick path does not
        keep `_window_base` up to date, this does.
        """
        self._quick = None
        self._window_base = self._quick_offset()
        if not self._context:
            return
        emitted = self._window_base - self._quick_start
        tail = self._body_tail(min(emitted, self._context))
        if emitted < self._context:
            tail = (self._quick_context + tail)[-self._context :]
        self._window = tail + self._window
        self._pos = len(tail)
        self._window_base -= len(tail)

    def _quick_offset(self) -> int:
        """On the quick path: the stream offset decided so far (where the held text starts).

        The quick path emits only to the open region, so it has decided as much text as that
        region's body has grown since the quick path began.
        """
        return self._quick_start + self._body_length() - self._quick_body_length

    def _join_body_block(self) -> None:
        """Join the open region's pieces into one block, which keeps memory near the text's size."""
        block = "".join(self._body)
        self._body_blocks.append(block)
        self._body_blocks_length += len(block)
        self._body.clear()

    def _body_length(self) -> int:
        """Characters routed to the open region so far."""
        return self._body_blocks_length + sum(map(len, self._body))

    def _body_tail(self, size: int) -> str:
        """The last `size` characters of the open region's body (`size` at most its length)."""
        if size <= 0:
            return ""
        pieces, length = [], 0
        for piece in itertools.chain(reversed(self._body), reversed(self._body_blocks)):
            pieces.append(piece)
            length += len(piece)
            if length >= size:
                break
        return "".join(reversed(pieces))[-size:]

    def _final_search(self, delimiter, window: str, pos: int) -> DelimiterMatch | None:
        """`delimiter`'s first match from `pos` once the text is final, reusing an earlier search.

        A search from an earlier offset that found its match at or after `pos` (or found
        none) answers a search from `pos` too, so each pattern scans the text once.
        """
        base = self._window_base
        cached = self._final_matches.get(delimiter)
        if cached is not None and cached[0] <= base + pos and (cached[1] is None or base + pos <= cached[1][0]):
            found = cached[1]
            return None if found is None else DelimiterMatch(delimiter, found[0] - base, found[1] - base, found[2], found[3])
        match, _ = delimiter.scan(window, pos, True, self._timeout)
        found = None if match is None else (base + match.start, base + match.end, match.text, match.captures)
        if "\\G" not in delimiter.source:
            self._final_matches[delimiter] = (base + pos, found)
        return match

    def _trim_window(self) -> None:
        cut = self._pos - self._context
        if cut > 0 and cut * 2 >= len(self._window):
            self._window = self._window[cut:]
            self._window_base += cut
            self._pos -= cut

    def _route(self, events: list[dict], text: str, start: int) -> None:
        """Send `text`, found at stream offset `start`, to the current region (opening the implicit one lazily)."""
        field = self._current
        end = start + len(text)
        if field is None:
            if self.spans is not None:
                self.spans.append(Span(start, end, "discarded"))
            return
        if not self._opened:
            self._opened = True
            self._body_start = self._region_start = start
            self._region_count += 1
            opening = {"type": "region_open", "field": field.name}
            if self._positions:
                opening["start"] = opening["end"] = start
            events.append(opening)
        body = self._body
        body.append(text)
        if len(body) >= BODY_BLOCK:
            self._join_body_block()
        chunk = {"type": "region_chunk", "field": field.name, "text": text, "dirty": field.dirty}
        if self._positions:
            chunk["start"], chunk["end"] = start, end
        events.append(chunk)
        if self.spans is not None:
            self.spans.append(Span(start, end, "body", field.name, self._region_count - 1))

    def _open_region(self, events: list[dict], match: DelimiterMatch) -> None:
        field = self.template.fields[match.delimiter.field]
        base = self._window_base
        self._current = field
        self._state = self._watch_inside[field.name]
        self._captures = dict(match.captures)
        self._body = []
        self._body_blocks = []
        self._body_blocks_length = 0
        self._opened = True
        self._body_start = base + match.end
        self._region_start = base + match.start
        self._open_text = match.text
        self._region_count += 1
        event = {"type": "region_open", "field": field.name}
        if self._positions:
            event["start"], event["end"] = base + match.start, base + match.end
        events.append(event)
        if self.spans is not None:
            self.spans.append(Span(base + match.start, base + match.end, "open", field.name, self._region_count - 1, match))

    def _close_region(self, events: list[dict], match: DelimiterMatch | None, at: int) -> None:
        """Close the current region (if it received anything) and return to the implicit field.

        `match` is the close delimiter, or None when the region ends because another region
        opens or the stream ends; `at` is the stream offset where it ends.

        A region whose value cannot be computed raises with ``on_error="raise"``. With
        ``"keep"`` its close carries the error, and its raw text, delimiters included,
        goes to the implicit field as a stretch of its own (`_keep_as_unclaimed`).
        """
        field = self._current
        base = self._window_base
        if match is not None and self.spans is not None:
            region = self._region_count - 1 if self._opened else None
            self.spans.append(Span(base + match.start, base + match.end, "close", match.delimiter.field, region, match))
        failed: ResponseParseError | None = None
        if field is not None and self._opened:
            self._body_blocks += self._body
            body = "".join(self._body_blocks)
            self._body_blocks, self._body = [], []  # free the pieces before parsing the body
            self._body_blocks_length = 0
            end = at if match is None else base + match.end
            event: dict[str, Any] = {"type": "region_close", "field": field.name}
            try:
                value = self._store(field, body)
            except ResponseParseError as error:
                failed = self._failed_region(error, field, body, match, end)
                event["error"] = str(failed)
            else:
                if value is BLANK:
                    event["blank"] = True
                else:
                    event["value"] = value
            if self._positions:
                event["start"], event["end"] = (at, at) if match is None else (base + match.start, base + match.end)
            events.append(event)
        implicit = self.template.implicit_field
        self._current = implicit
        self._state = self._watch_outside
        self._captures = {}
        self._body = []
        self._body_blocks = []
        self._body_blocks_length = 0
        self._opened = False
        if failed is not None and implicit is not None and implicit is not field:
            self._keep_as_unclaimed(events, failed)

    def _failed_region(
        self, error: ResponseParseError, field: FieldSpec, body: str, close: DelimiterMatch | None, end: int
    ) -> ResponseParseError:
        """Complete `error` with where the failed region lies; raise it, or record it and return it.

        With ``on_error="raise"`` its `text` is the region body; kept, it is the region's raw
        text, delimiters included, which `_keep_as_unclaimed` hands to the implicit field.
        """
        error.start, error.end, error.region = self._region_start, end, self._region_count - 1
        self.errors.append(error)
        if self.on_error == "raise":
            raise error
        opening = "" if field.implicit else self._open_text
        error.text = opening + body + ("" if close is None else close.text)
        return error

    def _keep_as_unclaimed(self, events: list[dict], error: ResponseParseError) -> None:
        """The raw text of a failed region becomes a stretch of the implicit field (the current
        field now), with its own open, chunk and close events at the failed region's offsets."""
        field = self._current
        start, end, text = error.start, error.end, error.text
        self._opened = True
        self._body_start = self._region_start = start
        self._region_count += 1
        opening = {"type": "region_open", "field": field.name}
        chunk = {"type": "region_chunk", "field": field.name, "text": text, "dirty": field.dirty}
        if self._positions:
            opening["start"] = opening["end"] = start
            chunk["start"], chunk["end"] = start, end
        events += (opening, chunk)
        self._body = [text]
        self._close_region(events, None, end)

    def _store(self, field: FieldSpec, body: str) -> Any:
        """Compute a closed region's value and write it into the message; return the value.

        Returns `BLANK` for a whitespace-only stretch of a repeating implicit field: it is not
        a value of its own, so it is neither appended nor joined.
        """
        if field.implicit:
            if not field.repeats:
                return self._store_implicit_stretch(field, body)
            if not body.strip():
                return BLANK
        value = self._region_value(field, body, self._captures, self._body_start)
        name = field.name
        if field.join is not None:
            if not isinstance(value, str):
                raise ResponseParseError(
                    f"{field.path}: 'join' needs every region to parse to a string, got {type(value).__name__} "
                    f"from the region at offset {self._body_start}: {shorten(body)}",
                    field=name,
                    key=f"{field.path}.join",
                    offset=self._body_start,
                    text=body,
                )
            previous = self._message.get(name)
            self._message[name] = value if previous is None else previous + field.join + value
        elif field.repeats:
            self._message.setdefault(name, []).append(value)
        else:
            self._message[name] = value
        return value

    def _store_implicit_stretch(self, field: FieldSpec, body: str) -> Any:
        """One stretch of a non-repeating implicit field: every stretch of unclaimed text belongs
        to the message, joined as written and then parsed, so each close carries the field's whole
        value so far. A whitespace-only stretch changes nothing: its close repeats the value so far
        ("" before there is one).
        """
        stretches = self._implicit_stretches
        stretches.append(body)
        name = field.name
        if not body.strip():
            return self._message.get(name, "")
        whole = body if len(stretches) == 1 else "".join(stretches)
        # A transform sees the captures of the close that ends the latest stretch.
        value = self._region_value(field, whole, self._captures, self._body_start, contiguous=whole is body)
        self._message[name] = value
        return value

    def _region_value(self, field: FieldSpec, body: str, captures: dict, offset: int | None, contiguous: bool = True) -> Any:
        """Parse `body` with the field's content parser, then apply its transform and tool typing.

        `offset` is the stream offset of the region body; `contiguous` says whether `body` lies
        there as one piece (a joined implicit value does not), so that a content parser's
        failure position becomes a stream offset.

        Raises:
            ResponseParseError: naming the field, the failing key and, when known, the position.
        """
        where = f" (region at offset {offset})" if offset is not None else ""
        args = field.content_args if self._timeout is None else {**field.content_args, "_timeout": self._timeout}
        key = f"{field.path}.content"
        try:
            value = parse_content(field.content, body, args)
            if field.transform is not None:
                key = f"{field.path}.transform"
                if field.transform_each:
                    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
                        raise ValueError(
                            f"transform_each needs the content to parse to a list of objects, got {shorten(repr(value), 120)}"
                        )
                    value = [apply_transform(field.transform, {**captures, **item}) for item in value]
                else:
                    value = apply_transform(field.transform, {**captures, "content": value})
        except TimeoutError:
            raise PatternTimeoutError(
                f"{field.path}.content_args.tag_pattern: pattern too slow on this input (over the "
                f"{self._timeout} s budget){where}",
                field=field.name,
                key=f"{field.path}.content_args.tag_pattern",
                offset=offset,
                text=body,
            ) from None
        except ValueError as error:
            detail = str(error)
            if shorten(body) not in detail:
                detail = f"{detail}; region body: {shorten(body)}"
            position = getattr(error, "position", None) if isinstance(error, ContentError) else None
            if position is not None:
                position = offset + position if contiguous and offset is not None else None
            kind = UndefinedPlaceholderError if isinstance(error, PlaceholderNotDefined) else ResponseParseError
            raise kind(
                f"{field.path}: {detail}{where}", field=field.name, key=key, offset=offset, text=body, position=position
            ) from None
        if self._tool_schemas:
            type_tool_calls(value, self._tool_schemas)
        return value


def parse_text_one_shot(
    text: str,
    template: ResponseTemplate,
    prefix: str,
    tools: list | None = None,
    regex_timeout: float | None = None,
    on_error: str = "raise",
) -> dict:
    """Parse a complete generation: the stream is already whole, so nothing needs holding back."""
    parser = ResponseParser(template, prefix, tools=tools, regex_timeout=regex_timeout, on_error=on_error)
    message, _ = parser.finalize(text)
    return message


def _is_token_ids(value: Any) -> bool:
    if hasattr(value, "ndim"):
        return value.ndim == 1
    return isinstance(value, (list, tuple)) and bool(value) and all(isinstance(i, int) for i in value)


def _split_batch(value: Any, what: str, tokenizer: Any) -> tuple[list[str], bool]:
    """Normalize `value` to a list of texts; the flag says whether it was a batch."""
    if isinstance(value, str):
        return [value], False
    if hasattr(value, "ndim"):  # numpy array or torch tensor
        if value.ndim not in (1, 2):
            raise ValueError(f"{what}: arrays must be 1-D (one sequence) or 2-D (a batch), got {value.ndim}-D")
        value = value.tolist()
        if not value or isinstance(value[0], int):
            return [_decode(value, what, tokenizer)], False
        return [_decode(ids, what, tokenizer) for ids in value], True
    if isinstance(value, (list, tuple)):
        if not value:
            return ([""], False) if what == "prefix" else ([], True)
        if all(isinstance(item, str) for item in value):
            return list(value), True
        if _is_token_ids(value):
            return [_decode(list(value), what, tokenizer)], False
        return [item if isinstance(item, str) else _decode(item, what, tokenizer) for item in value], True
    raise ValueError(f"{what}: expected text, token ids or a batch of them, got {type(value).__name__}")


def _decode(ids: Any, what: str, tokenizer: Any) -> str:
    if tokenizer is None:
        raise ValueError(f"{what}: got token ids but no tokenizer; pass tokenizer= to decode them")
    if hasattr(ids, "tolist"):
        ids = ids.tolist()
    return tokenizer.decode(list(ids), skip_special_tokens=False)


def parse_response(
    text: Any,
    response_template: dict | str | ResponseTemplate | None = None,
    *,
    prefix: Any = None,
    tools: list[dict | Callable] | None = None,
    tokenizer: Any = None,
    regex_timeout: float | None = None,
    on_error: str = "raise",
) -> dict | list[dict]:
    """Parse a complete generation into a message dict.

    Args:
        text: the generation: a str, or token ids (list of int, 1-D array/tensor) with
            `tokenizer`; or a batch: list of str, list of id lists, 2-D array/tensor.
        response_template: the template; None takes `tokenizer.response_template`.
        prefix: REQUIRED. The prompt before generation (text, ids, or one per batch item);
            ``""`` or ``[]`` opts out.
        tools: tool schemas or functions, to cast tool-call arguments.
        tokenizer: a Hugging Face tokenizer, to decode ids (special tokens kept).
        regex_timeout: seconds allowed for each regex call of a template pattern.
        on_error: ``"raise"`` (default) or ``"keep"``: a region that cannot be parsed then
            becomes unclaimed text instead of an error (see `ResponseParser`; to see what
            failed, parse with `ResponseParser(...).finalize(text)` and read its `errors`).

    Returns:
        The message dict, or a list of them for a batch (also for a batch of one).

    Raises:
        TemplateError: the template is invalid (reported before a missing prefix).
        ValueError: no prefix; ids without a tokenizer; prefix/batch sizes differ; no template.
        ResponseParseError: with ``on_error="raise"``, a region failed to parse (names the field and offset).
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
    texts, batched = _split_batch(text, "text", tokenizer)
    prefixes, prefix_batched = _split_batch(prefix, "prefix", tokenizer)
    if not prefix_batched:
        prefixes = prefixes * len(texts)
    elif len(prefixes) != len(texts):
        raise ValueError(f"got {len(texts)} generation(s) but {len(prefixes)} prefixes; give one prefix, or one per generation")
    if on_error not in ON_ERROR_MODES:
        raise ValueError(f"on_error must be one of {ON_ERROR_MODES}, got {on_error!r}")
    messages = [parse_text_one_shot(t, template, p, tools, regex_timeout, on_error) for t, p in zip(texts, prefixes)]
    return messages if batched else messages[0]
