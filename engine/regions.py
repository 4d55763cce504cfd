"""The regions of a parse: where decided text goes, and the events of regions opening and closing.

`ResponseParser` decides *where* the stream splits (its scan and quick path);
`Regions` keeps *what* the splits mean: the field text goes to now (the implicit
field between regions, opened lazily by its first text), the open region's
offsets and captures, and what happens when a region closes: its body is handed
to the message, and a body that cannot be parsed either raises or, with
``on_error="keep"``, is read leniently (`engine.recovery`: its values, its unclaimed text,
its delimiters consumed) so that nothing is lost.

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
from .recovery import (
    MAX_DEPTH,
    Piece,
    Plan,
    decode_string_arguments,
    plan_failed_region,
    read_json_call,
    tag_reading,
)
from .strays import Drafts, LenientWatch, lenient_error, repeat_error
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
        "recovery_depth",
        "recovered",
        "lenient",
        "outside",
        "drafts",
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
        lenient: LenientWatch | None = None,
    ):
        self.account = account  # checks each region as it closes (`engine.account`)
        self.template, self.buffer, self.message, self.budget = template, buffer, message, budget
        self.positions, self.spans, self.on_error, self.errors = positions, spans, on_error, errors
        self.current: FieldSpec | None = template.implicit_field
        # What lenient parsing adds outside regions (`engine.strays`); None when strict.
        self.lenient = lenient
        self.outside = template.watch_outside if lenient is None else lenient.outside
        self.state = self.outside
        self.drafts = Drafts() if lenient else None  # lenient: regions inside one ended early
        self.opened = False
        self.count = 0
        self.captures: dict[str, str] = {}
        self.body_start = 0  # stream offset of the open region's body
        self.region_start = 0  # ... of its open delimiter (its body, for the implicit field)
        self.open_text = ""  # the open region's open delimiter text
        self.max_regions, self.max_value_chars, self.value_chars = max_regions, max_value_chars, 0
        self.recovery_depth = 0  # failed regions being read again inside one another (`_recover`)
        self.recovered: dict[str, Any] = {}  # field -> its value read again, in this recovery

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
        if self.lenient is not None and match.delimiter in self.lenient.notes:
            self.errors.append(lenient_error(self.lenient, match, start, end, self.count - 1))

    def close(self, events: list[dict], match: DelimiterMatch | None, at: int) -> None:
        """Close the current region (if it received anything) and return to the implicit field.

        `match` is the close delimiter, or None when the region ends because another region
        opens or the stream ends; `at` is the stream offset where it ends.

        A region whose value cannot be computed raises with ``on_error="raise"``. With
        ``"keep"`` its close carries the error, and what lenient parsing reads of it follows
        (`_plan`, `_recover`). With ``"keep"``, a region that parses may also be read
        leniently (`recovery.tag_reading`, `decode_string_arguments`), each reading recorded
        in `errors`.
        """
        field = self.current
        base = self.buffer.base
        if match is not None:
            self.captures.update(match.captures)
            if self.lenient is not None and match.delimiter in self.lenient.notes:
                at, to = base + match.start, base + match.end
                self.errors.append(lenient_error(self.lenient, match, at, to, self.count - 1))
            if self.spans is not None:
                region = self.count - 1 if self.opened else None
                start, end = base + match.start, base + match.end
                self.spans.append((start, end, "close", match.delimiter.field, region, match))
        failed: ResponseParseError | None = None
        if field is not None and self.opened:
            body = self.buffer.take_body()  # frees the pieces before parsing the body
            end = at if match is None else base + match.end
            event: dict[str, Any] = {"type": "region_close", "field": field.name}
            lenient = self.on_error == "keep" and not field.implicit
            read_as, notes = tag_reading(field, body, self.body_start) if lenient else (field, [])
            try:
                if self.budget.deadline is not None:
                    self.message.timeout = self.budget.seconds(at)
                earlier = self.recovered.get(field.name) if self.recovery_depth else None
                value = self.message.store(read_as, body, self.captures, self.body_start)
                if self.recovery_depth:
                    value = self._joined_lists(field, earlier, value)
                read_json = []
                if lenient:
                    notes += decode_string_arguments(field, value, self.body_start, body)
                    read_json = read_json_call(field, value, self.open_text, body, self.body_start)
                    notes += read_json
            except ResponseParseError as error:
                if isinstance(error, PatternTimeoutError):
                    self.budget.check(error, at)
                failed = self._failed(error, field, body, match, end)
                implicit = self.template.implicit_field
                if implicit is not None and implicit is not field:
                    plan = self._plan(failed, field, body, match)
                event["error"] = str(failed)
            else:
                for note in notes:
                    note.start, note.end, note.region = self.region_start, end, self.count - 1
                self.errors += notes
                repeated = (
                    self._drafted(field, value, match, end) if self.lenient is not None else None
                )
                if repeated is not None:
                    self.errors.append(repeated)
                    event["error"] = str(repeated)
                elif value is BLANK:
                    event["blank"] = True
                else:
                    event["value"] = value
                    self._count_value(value, at)
                if self.account is not None and repeated is None and not read_json:
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
        self.state = self.outside
        self.captures = {}
        self.buffer.clear_body()
        self.opened = False
        if failed is not None and implicit is not None and implicit is not field:
            self._recover(events, plan)

    def stray(self, events: list[dict], match: DelimiterMatch) -> None:
        """Consume a stray (`engine.strays`: a close with no open, a control token) outside any
        region (the implicit stretch before it is closed already), with its error."""
        base = self.buffer.base
        start, end = base + match.start, base + match.end
        field = match.delimiter.field
        detail = self.drafts.stray_close(field, start)
        self.errors.append(lenient_error(self.lenient, match, start, end, None, detail))
        if self.spans is not None:
            self.spans.append((start, end, "close", field or None, None, match))

    def _drafted(
        self, field: FieldSpec, value: Any, match: DelimiterMatch | None, end: int
    ) -> ResponseParseError | None:
        """The error of a region of a repeating field whose `value` repeats a draft
        (`strays.Drafts`; the value is then taken back from the message), else None."""
        if field.implicit or value is BLANK:
            return None
        zero_width = match is not None and match.start == match.end
        repeated = self.drafts.closed(
            field,
            value,
            self.buffer.base + match.start if zero_width else None,
            self.region_start,
            end,
        )
        if repeated is None:
            return None
        self.message.take_back(field)
        return repeat_error(
            field, repeated, self.region_start, end, self.body_start, self.count - 1
        )

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
        text, delimiters included, which lenient parsing then reads (`_plan`).
        """
        error.start, error.end, error.region = self.region_start, end, self.count - 1
        self.errors.append(error)
        if self.on_error == "raise":
            raise error
        opening = "" if field.implicit else self.open_text
        error.text = opening + body + ("" if close is None else close.text)
        return error

    def _plan(
        self,
        error: ResponseParseError,
        field: FieldSpec,
        body: str,
        close: DelimiterMatch | None,
    ) -> Plan:
        """What lenient parsing reads of the failed region (`recovery.plan_failed_region`);
        what it read is added to `error`'s message. Past `MAX_DEPTH` regions read again inside
        one another, the body is kept as text."""
        plan = plan_failed_region(
            self.template,
            field,
            self.open_text,
            body,
            "" if close is None else close.text,
            self.region_start,
            self.body_start,
            self.captures,
            self.message.timeout,
            read_again=self.recovery_depth < MAX_DEPTH,
            lenient=self.lenient,
        )
        error.args = (f"{error.args[0]} (kept leniently: {'; '.join(plan.notes)})",)
        return plan

    def _joined_lists(self, field: FieldSpec, earlier: Any, value: Any) -> Any:
        """The value of a region read again in a failed one: a list that follows a list of the
        same non-repeating field, read in the same failed region (a second call list written
        after the first), is joined to it, so the second does not replace the first."""
        if (
            isinstance(earlier, list)
            and isinstance(value, list)
            and not field.repeats
            and field.join is None
        ):
            value = earlier + value
            self.message.message[field.name] = value
        self.recovered[field.name] = value
        return value

    def _recover(self, events: list[dict], plan: Plan) -> None:
        """Carry out `plan`: unclaimed text becomes stretches of the implicit field (the current
        field now), each region is opened, filled and closed again (a region that fails again
        is read in turn, a level deeper); consumed delimiters go to no value."""
        if not self.recovery_depth:
            self.recovered = {}
        self.recovery_depth += 1
        try:
            for piece in plan.pieces:
                if piece.kind == "text":
                    self._keep_as_unclaimed(events, piece.start, piece.end, piece.text)
                elif piece.kind == "region":
                    self._reopen(events, piece)
        finally:
            self.recovery_depth -= 1

    def _reopen(self, events: list[dict], piece: Piece) -> None:
        """Open, fill and close a region lenient parsing found in a failed one (`piece`)."""
        field = piece.field
        self.check_count(piece.start)
        self.current = field
        self.state = self.template.watch_inside[field.name]
        self.captures = dict(piece.captures or {})
        self.buffer.clear_body()
        self.opened = True
        self.body_start, self.region_start, self.open_text = (
            piece.body_start,
            piece.start,
            piece.open_text,
        )
        self.count += 1
        opening = {"type": "region_open", "field": field.name}
        if self.positions:
            opening["start"], opening["end"] = piece.start, piece.body_start
        events.append(opening)
        if piece.text:
            chunk = {
                "type": "region_chunk",
                "field": field.name,
                "text": piece.text,
                "dirty": field.dirty,
            }
            if self.positions:
                chunk["start"], chunk["end"] = piece.body_start, piece.end
            events.append(chunk)
            self.buffer.add_to_body(piece.text)
        self.close(events, None, piece.end)

    def _keep_as_unclaimed(self, events: list[dict], start: int, end: int, text: str) -> None:
        """Unclaimed `text` (stream offsets `start`-`end`) of a failed region becomes a stretch
        of the implicit field (the current field now), with its own open, chunk and close events.
        The stretch is a region: it counts towards `max_regions` like any other.

        Raises:
            ParseLimitError: the stretch would be one region too many.
        """
        field = self.current
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
