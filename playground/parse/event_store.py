"""The events of a streamed parse, numbered and stored compactly.

A replay of a 200 KB paste fed a character at a time logs about one event a
character, and the engine hands each over as a dict (about 500 bytes with its
log entry). Nearly all of them are `region_chunk` events whose text is the
stream between their `start` and `end` offsets, so `EventStore` keeps those as
a few integers in arrays, reading the text back from the stream when an event
is shown (about 25 bytes an event), and every other event as its dict.

Every other event, `region_close` included, is kept as its dict: a close
carries the value of its own region (an implicit field's close only its own
stretch), so together they hold about the stream once.

`EventStore.view(stream)` is what a `ParseView` holds: a read-only sequence of
`LoggedEvent`s, frozen at the events logged so far, that builds each entry when
it is read (the event log reads one page of them).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

# Phase codes: events from the prefix, from feed N (N >= 1), from finalize.
PREFIX = 0
FINALIZE = -1

# How an event is kept: its dict, or a clean or dirty region_chunk read back from the stream.
_KEPT, _CLEAN, _DIRTY = 0, 1, 2
_CHUNK_KEYS = ("type", "field", "text", "dirty", "start", "end")


@dataclass(frozen=True, slots=True)
class LoggedEvent:
    """One engine event with its number (1-based, in order) and phase
    ("prefix", "feed N" or "finalize")."""

    number: int
    phase: str
    event: dict


def phase_label(code: int) -> str:
    """ "prefix", "finalize" or "feed N" for a phase code."""
    if code > 0:
        return f"feed {code}"
    return {PREFIX: "prefix", FINALIZE: "finalize"}[code]


class EventStore:
    """Append-only log of a stream's events with their phases.

    A `region_chunk` event is kept as integers only when its text is exactly
    `end - start` characters long and its keys are the parser's; anything else
    is kept as the dict it was.
    """

    def __init__(self) -> None:
        self._phases = array("l")
        self._kinds = array("b")
        self._fields = array("h")
        self._starts = array("q")
        self._ends = array("q")
        self._kept: dict[int, dict] = {}
        self._field_names: list[str] = []
        self._field_index: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._phases)

    @property
    def kept_count(self) -> int:
        """How many events are kept as their dicts (the rest are a few integers each)."""
        return len(self._kept)

    def append(self, events: list[dict], phase: int) -> None:
        """Log `events` (engine event dicts, in order) as produced in `phase` (a phase code)."""
        phases, kinds, fields, starts, ends = (
            self._phases,
            self._kinds,
            self._fields,
            self._starts,
            self._ends,
        )
        for event in events:
            phases.append(phase)
            text = event.get("text")
            if (
                event["type"] == "region_chunk"
                and type(text) is str
                and tuple(event) == _CHUNK_KEYS
                and type(start := event["start"]) is int
                and type(end := event["end"]) is int
                and end - start == len(text)
                and type(event["field"]) is str
            ):
                field = self._field_index.get(event["field"])
                if field is None:
                    field = self._field_index[event["field"]] = len(self._field_names)
                    self._field_names.append(event["field"])
                kinds.append(_DIRTY if event["dirty"] else _CLEAN)
                fields.append(field)
                starts.append(start)
                ends.append(end)
            else:
                kinds.append(_KEPT)
                fields.append(-1)
                starts.append(0)
                ends.append(0)
                self._kept[len(phases) - 1] = event

    def event(self, index: int, stream: str) -> dict:
        """Event `index` (0-based) as the engine gave it; chunk texts come from `stream`."""
        kind = self._kinds[index]
        if kind == _KEPT:
            return self._kept[index]
        start, end = self._starts[index], self._ends[index]
        return {
            "type": "region_chunk",
            "field": self._field_names[self._fields[index]],
            "text": stream[start:end],
            "dirty": kind == _DIRTY,
            "start": start,
            "end": end,
        }

    def view(self, stream: str) -> "LoggedEvents":
        """The events logged so far, read against `stream` (the prefix tail and everything fed)."""
        return LoggedEvents(self, len(self._phases), stream)


class LoggedEvents(Sequence):
    """A read-only sequence of `LoggedEvent`s over the first `count` events of a store."""

    __slots__ = ("_store", "_count", "_stream")

    def __init__(self, store: EventStore, count: int, stream: str):
        self._store, self._count, self._stream = store, count, stream

    def __len__(self) -> int:
        return self._count

    @property
    def store(self) -> EventStore:
        """The store these events are read from (a replay's views share its store)."""
        return self._store

    def _entry(self, index: int) -> LoggedEvent:
        store = self._store
        return LoggedEvent(
            index + 1, phase_label(store._phases[index]), store.event(index, self._stream)
        )

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self._entry(i) for i in range(*index.indices(self._count))]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError("event index out of range")
        return self._entry(index)

    def __iter__(self) -> Iterator[LoggedEvent]:
        return (self._entry(i) for i in range(self._count))

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, Sequence)
            and len(other) == self._count
            and all(a == b for a, b in zip(self, other))
        )

    def __repr__(self) -> str:
        return f"<{self._count} logged events>"


def without_chunks(events: Sequence[LoggedEvent]) -> Iterator[LoggedEvent]:
    """The events that are not `region_chunk`s, in order (for a store: without reading the chunks)."""
    if isinstance(events, LoggedEvents):
        store, count = events._store, events._count
        return (
            events._entry(index)
            for index, event in store._kept.items()
            if index < count and event.get("type") != "region_chunk"
        )
    return (logged for logged in events if logged.event.get("type") != "region_chunk")


def event_numbered(events: Sequence[LoggedEvent], number: int | None) -> LoggedEvent | None:
    """Event number `number` (1-based), or None when there is none."""
    if number is None or not 0 < number <= len(events):
        return None
    logged = events[number - 1]
    return (
        logged if logged.number == number else next((e for e in events if e.number == number), None)
    )


def chunks_overlapping(
    events: Sequence[LoggedEvent], field: str | None, start: int, end: int
) -> list[LoggedEvent]:
    """The `region_chunk` events of `field` whose offsets overlap `[start, end)`, in order."""
    if isinstance(events, LoggedEvents):
        store, count = events._store, events._count
        found = [
            index
            for index in range(count)
            if store._kinds[index] != _KEPT
            and store._starts[index] < end
            and store._ends[index] > start
        ]
        found += [
            index
            for index, event in store._kept.items()
            if index < count and event.get("type") == "region_chunk"
        ]
        candidates = (events._entry(index) for index in sorted(found))
    else:
        candidates = iter(events)
    return [
        logged
        for logged in candidates
        if logged.event.get("type") == "region_chunk"
        and logged.event.get("field") == field
        and "start" in logged.event
        and logged.event["start"] < end
        and logged.event["end"] > start
    ]
