"""The regions of a parse: where decided text goes, and the events of regions opening and closing.

`ResponseParser` decides *where* the stream splits (its scan and quick path);
`Regions` keeps *what* the splits mean: the field text goes to now (the implicit
field between regions, opened lazily by its first text), the open region's
offsets and captures, and what happens when a region closes: its body is handed
to the message, and a body that cannot be parsed either raises or, with
``on_error="keep"``, becomes a stretch of unclaimed text so that nothing is lost.

`TimeBudget` is the time a parse may take: each regex call's budget and the
deadline of the whole parse, shared by the scan and the regions' values.

Offsets are stream offsets (see `engine.parser`).
"""

from __future__ import annotations

import time
from typing import Any

from .account import Account
from .buffer import StreamBuffer
from .delimiters import DelimiterMatch
from .errors import ParseDeadlineError, ParseLimitError, PatternTimeoutError, ResponseParseError
from .message import BLANK, MessageBuilder, value_chars
from .template import FieldSpec, ResponseTemplate
from .watch import WatchState


class TimeBudget:
    """The time a parse may take: `regex_timeout` seconds each regex call, and a `deadline`.

    Attributes:
        regex_timeout: seconds allowed for each regex call of a template pattern, or None.
        deadline: a `time.perf_counter()` value the whole parse must end by, or None (a server
            may move it between feeds).
    """

    __slots__ = ("regex_timeout", "deadline", "cut_by_deadline")

    def __init__(self, regex_timeout: float | None, deadline: float | None):
        self.regex_timeout = regex_timeout
        self.deadline = deadline
        # Whether the last `seconds` gave the time left rather than `regex_timeout`: a regex call
        # that then times out is the deadline's doing, even when the regex module's clock fires
        # a hair before ours reads the deadline.
        self.cut_by_deadline = False

    def seconds(self, offset: int, watching: WatchState | None = None) -> float | None:
        """Seconds the next regex call may take: `regex_timeout`, or less when the deadline is
        nearer. Raises ParseDeadlineError (at stream `offset`) once the deadline has passed,
        naming the patterns `watching` (the scan's state) searches for."""
        if self.deadline is None:
            return self.regex_timeout
        left = self.deadline - time.perf_counter()
        if left <= 0:
            self.check(None, offset, watching)
        timeout = self.regex_timeout
        self.cut_by_deadline = timeout is None or left < timeout
        return left if self.cut_by_deadline else timeout

    def check(
        self, error: PatternTimeoutError | None, offset: int, watching: WatchState | None = None
    ) -> None:
        """Raise ParseDeadlineError when the deadline has passed (a regex call that ran out of the
        time left is the deadline's doing, not the pattern's budget); return otherwise.

        The error names the template key whose pattern was running (`error.key`) or, between
        regex calls, the pattern delimiters of `watching`, so that an author sees which pattern
        spent the time."""
        if self.deadline is None or isinstance(error, ParseDeadlineError):
            return
        if time.perf_counter() < self.deadline and not (error is not None and self.cut_by_deadline):
            return
        if error is not None and error.key:
            slow = [error.key]
        elif watching is not None:
            slow = [delimiter.path for delimiter in watching.patterns]
        else:
            slow = []
        searching = f" while searching with {', '.join(slow)}" if slow else ""
        raise ParseDeadlineError(
            f"the parse ran past its deadline at stream offset {offset}{searching}: the template's "
            "patterns are too slow on this input; the text after it is not parsed",
            offset=offset,
            key=slow[0] if slow else None,
        ) from None


class Regions:
    """Where decided text goes, and the events (and span records) of regions opening and closing.

    Attributes:
        current: the field text goes to now (`template.implicit_field` between regions, which
            may be None: the text is then discarded).
        state: what can fire now (`WatchState`): depends on `current`.
        opened: whether `current`'s region has opened (the implicit one opens lazily).
        count: regions opened so far (the next one's index).
        captures: the open region's named captures (its open's, then its close's).
        max_regions, max_value_chars: the parse's limits (`ResponseParser`), or None;
            value_chars: what the values of the regions closed so far hold (`message.value_chars`).
    """

    __slots__ = (
        "template",
        "buffer",
        "message",
        "budget",
        "positions",
        "spans",
        "on_error",
        "errors",
        "current",
        "state",
        "opened",
        "count",
        "captures",
        "body_start",
        "region_start",
        "open_text",
        "max_regions",
        "max_value_chars",
        "value_chars",
        "account",
    )

    def __init__(
        self,
        template: ResponseTemplate,
        buffer: StreamBuffer,
        message: MessageBuilder,
        budget: TimeBudget,
        *,
        positions: bool,
        spans: list[tuple] | None,
        on_error: str,
        errors: list[ResponseParseError],
        max_regions: int | None = None,
        max_value_chars: int | None = None,
        account: Account | None = None,
    ):
        self.account = account  # checks each region as it closes (`engine.account`)
        self.template, self.buffer, self.message, self.budget = template, buffer, message, budget
        self.positions, self.spans, self.on_error, self.errors = positions, spans, on_error, errors
        self.current: FieldSpec | None = template.implicit_field
        self.state = template.watch_outside
        self.opened = False
        self.count = 0
        self.captures: dict[str, str] = {}
        self.body_start = 0  # stream offset of the open region's body
        self.region_start = 0  # ... of its open delimiter (its body, for the implicit field)
        self.open_text = ""  # the open region's open delimiter text
        self.max_regions, self.max_value_chars, self.value_chars = max_regions, max_value_chars, 0

    def check_count(self, offset: int) -> None:
        """Raise ParseLimitError when a region opening at stream `offset` would be one too many."""
        if self.max_regions is not None and self.count >= self.max_regions:
            raise ParseLimitError(
                f"the parse stopped at stream offset {offset}: it has opened {self.max_regions:,} "
                "regions, the most it may (max_regions); the text after it is not parsed",
                limit="max_regions",
                allowed=self.max_regions,
                offset=offset,
            )

    def _count_value(self, value: Any, offset: int) -> None:
        """Add a region's value to what the values hold; raise ParseLimitError past
        `max_value_chars` (the region closing at stream `offset` is the one too many)."""
        if self.max_value_chars is None:
            return
        self.value_chars += value_chars(value, self.max_value_chars - self.value_chars)
        if self.value_chars > self.max_value_chars:
            raise ParseLimitError(
                f"the parse stopped at stream offset {offset}: its region values would hold over "
                f"{self.max_value_chars:,} characters (max_value_chars; a transform that repeats a "
                "value counts it each time); the text after it is not parsed",
                limit="max_value_chars",
                allowed=self.max_value_chars,
                offset=offset,
            )

    def route(self, events: list[dict], text: str, start: int) -> None:
        """Send `text`, found at stream offset `start`, to the current region (opening the
        implicit one lazily)."""
        field = self.current
        end = start + len(text)
        if field is None:
            if self.spans is not None:
                self.spans.append((start, end, "discarded", None, None, None))
            return
        if not self.opened:
            self.check_count(start)
            self.opened = True
            self.body_start = self.region_start = start
            self.count += 1
            opening = {"type": "region_open", "field": field.name}
            if self.positions:
                opening["start"] = opening["end"] = start
            events.append(opening)
        self.buffer.add_to_body(text)
        chunk = {"type": "region_chunk", "field": field.name, "text": text, "dirty": field.dirty}
        if self.positions:
            chunk["start"], chunk["end"] = start, end
        events.append(chunk)
        if self.spans is not None:
            self.spans.append((start, end, "body", field.name, self.count - 1, None))

    def open(self, events: list[dict], match: DelimiterMatch) -> None:
        """Open the region of `match`'s field (the current one is closed already)."""
        field = self.template.fields[match.delimiter.field]
        base = self.buffer.base
        start, end = base + match.start, base + match.end
        self.current = field
        self.state = self.template.watch_inside[field.name]
        self.captures = dict(match.captures)
        self.buffer.clear_body()
        self.opened = True
        self.body_start = end
        self.region_start = start
        self.open_text = match.text
        self.count += 1
        event = {"type": "region_open", "field": field.name}
        if self.positions:
            event["start"], event["end"] = start, end
        events.append(event)
        if self.spans is not None:
            self.spans.append((start, end, "open", field.name, self.count - 1, match))

    def close(self, events: list[dict], match: DelimiterMatch | None, at: int) -> None:
        """Close the current region (if it received anything) and return to the implicit field.

        `match` is the close delimiter, or None when the region ends because another region
        opens or the stream ends; `at` is the stream offset where it ends.

        A region whose value cannot be computed raises with ``on_error="raise"``. With
        ``"keep"`` its close carries the error, and its raw text, delimiters included,
        goes to the implicit field as a stretch of its own (`_keep_as_unclaimed`).
        """
        field = self.current
        base = self.buffer.base
        if match is not None:
            self.captures.update(match.captures)
            if self.spans is not None:
                region = self.count - 1 if self.opened else None
                start, end = base + match.start, base + match.end
                self.spans.append((start, end, "close", match.delimiter.field, region, match))
        failed: ResponseParseError | None = None
        if field is not None and self.opened:
            body = self.buffer.take_body()  # frees the pieces before parsing the body
            end = at if match is None else base + match.end
            event: dict[str, Any] = {"type": "region_close", "field": field.name}
            try:
                if self.budget.deadline is not None:
                    self.message.timeout = self.budget.seconds(at)
                value = self.message.store(field, body, self.captures, self.body_start)
            except ResponseParseError as error:
                if isinstance(error, PatternTimeoutError):
                    self.budget.check(error, at)
                failed = self._failed(error, field, body, match, end)
                event["error"] = str(failed)
            else:
                if value is BLANK:
                    event["blank"] = True
                else:
                    event["value"] = value
                    self._count_value(value, at)
                if self.account is not None:
                    self.account.closed(
                        field, body, value, self.region_start, self.body_start, end, match
                    )
            if self.positions:
                event["start"], event["end"] = (
                    (at, at) if match is None else (base + match.start, base + match.end)
                )
            events.append(event)
        implicit = self.template.implicit_field
        self.current = implicit
        self.state = self.template.watch_outside
        self.captures = {}
        self.buffer.clear_body()
        self.opened = False
        if failed is not None and implicit is not None and implicit is not field:
            self._keep_as_unclaimed(events, failed)

    def _failed(
        self,
        error: ResponseParseError,
        field: FieldSpec,
        body: str,
        close: DelimiterMatch | None,
        end: int,
    ) -> ResponseParseError:
        """Complete `error` with where the failed region lies; raise it, or record it and return it.

        With ``on_error="raise"`` its `text` is the region body; kept, it is the region's raw
        text, delimiters included, which `_keep_as_unclaimed` hands to the implicit field.
        """
        error.start, error.end, error.region = self.region_start, end, self.count - 1
        self.errors.append(error)
        if self.on_error == "raise":
            raise error
        opening = "" if field.implicit else self.open_text
        error.text = opening + body + ("" if close is None else close.text)
        return error

    def _keep_as_unclaimed(self, events: list[dict], error: ResponseParseError) -> None:
        """The raw text of a failed region becomes a stretch of the implicit field (the current
        field now), with its own open, chunk and close events at the failed region's offsets.
        The stretch is a region: it counts towards `max_regions` like any other.

        Raises:
            ParseLimitError: the stretch would be one region too many.
        """
        field = self.current
        start, end, text = error.start, error.end, error.text
        self.check_count(start)
        self.opened = True
        self.body_start = self.region_start = start
        self.count += 1
        opening = {"type": "region_open", "field": field.name}
        chunk = {"type": "region_chunk", "field": field.name, "text": text, "dirty": field.dirty}
        if self.positions:
            opening["start"] = opening["end"] = start
            chunk["start"], chunk["end"] = start, end
        events += (opening, chunk)
        self.buffer.add_to_body(text)
        self.close(events, None, end)
