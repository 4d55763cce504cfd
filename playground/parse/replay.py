"""Replay: feed a pasted generation to the parser chunk by chunk, as a stream would.

A `Replay` is one session's transport: the chunks of the current input, how
many have been fed, and the parse after them. Stepping forward feeds the next
chunk to that parse; stepping back or jumping with the scrubber rebuilds it
(the engine feeds a 200 KB generation a character at a time in well under a
second). Stop always leaves a finalized parse: the chunks fed so far are
parsed as if the stream had ended there.

`paced_feed` is the one loop that feeds a stream at a pace and draws the page now
and then: Play (a replay's chunks) and Generate live (a model's tokens) both run it.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass
from typing import ClassVar, NamedTuple, TypeVar

from engine import load_template

from ..server import limits
from ..server.admission import make_way
from ..server.input_readers import InputError, check_text_sizes, read_template, read_tools
from .chunking import make_chunks, token_pieces
from .parse_view import KEPT_EVENT_BYTES, LOGGED_EVENT_BYTES, SPAN_BYTES, LiveParse
from .weight import plain_weight
from .workspace import WorkspaceInputs

# Feeding looks at the request's time budget every this many chunks.
DEADLINE_EVERY = 1024
# Seconds between page updates while a stream is fed (at most ~10 a second); an update that
# took long to draw waits DRAW_SHARE times as long before the next one.
UPDATE_INTERVAL = 0.1
DRAW_SHARE = 4
# Longest sleep between two looks at Stop while pacing (seconds).
PACE_STEP = 0.05
# A paced feed lets running parses go first every this many pieces (`admission.make_way`).
MAKE_WAY_EVERY = 1024

Piece = TypeVar("Piece")
Drawn = TypeVar("Drawn")


@dataclass
class Replay:
    """Per-session replay state.

    Attributes:
        key: identifies the input and chunking the chunks were cut from.
        chunks: the chunks, in order.
        position: how many chunks have been fed (0..len(chunks)).
        how_note: which boundaries "tokens" used ("" otherwise).
        characters: the generation's length; latin1: every chunk is one Latin-1 character
            (Python shares those strings, so the chunks cost only the list).
        live: the parse after `position` chunks (finalized at the end or after Stop).
        template, prefix, tools: the parsed inputs.
    """

    key: str
    chunks: list[str]
    position: int = 0
    how_note: str = ""
    live: LiveParse | None = None
    template: dict | None = None
    prefix: str = ""
    tools: list | None = None
    characters: int = 0
    latin1: bool = True

    # The fields `weight` counts by estimate (the others by `plain_weight`).
    ESTIMATED: ClassVar[frozenset[str]] = frozenset(("chunks", "live", "characters", "latin1"))

    @property
    def at_end(self) -> bool:
        return self.position >= len(self.chunks)

    @property
    def weight(self) -> int:
        """About the bytes this replay keeps: its chunks (one-character Latin-1 strings are shared
        by Python, others are objects of their own), the parse so far, and every other field by
        its plain weight (the template, the prefix, the tools)."""
        chunks = sys.getsizeof(self.chunks) + (
            0 if self.latin1 else 56 * len(self.chunks) + self.characters
        )
        live = self.live
        parse = 0
        if live is not None:
            store = live.events
            parse = (
                LOGGED_EVENT_BYTES * len(store)
                + KEPT_EVENT_BYTES * store.kept_count
                + SPAN_BYTES * live.span_count
                + 3 * live.received
                + 8 * len(live.chunk_ends)
            )
        return chunks + parse + plain_weight(self, skip=self.ESTIMATED)


def replay_key(*inputs) -> str:
    """A key that changes when any input or chunking setting changes."""
    return str(hash(json.dumps([str(i) for i in inputs])))


class ReplayInputs(NamedTuple):
    """The page's inputs a replay is cut from, as its components hold them (each field is named
    like the component it comes from: a handler parameter annotated `ReplayInputs` reads all of
    them, see `playground.wiring`): the four of `WorkspaceInputs`, then the chunking settings
    (a NamedTuple cannot extend another's fields, and the wiring reads one level of group).

    Attributes:
        template_text: the response template, as JSON text.
        prefix: the prompt's end the generation continues ("" for none).
        generation: the model's raw output to replay.
        tools_text: the tools, as a JSON list ("" for none).
        chunking: how the generation is cut: "tokens", "chars", "random" or "points"
            (`chunking.make_chunks`).
        chunk_size: characters per chunk for "chars" (a number, as the page's field gives it).
        chunk_seed: the seed of "random" chunk sizes.
        split_points: character offsets for "points", e.g. "5, 12, 40".
    """

    template_text: str
    prefix: str
    generation: str
    tools_text: str
    chunking: str
    chunk_size: float | int | None
    chunk_seed: float | int | None
    split_points: str

    @property
    def workspace(self) -> WorkspaceInputs:
        """The four inputs a parse of the same page reads."""
        return WorkspaceInputs(self.template_text, self.prefix, self.generation, self.tools_text)


def prepare_replay(
    inputs: ReplayInputs,
    replay: Replay | None,
    generated: tuple[str, list[int]] | None = None,
) -> Replay:
    """The session's replay when the inputs are unchanged, else a new one at position 0.

    `generated`: the last live generation's text and the offsets between its streamed pieces;
    "tokens" chunking of that very text replays those pieces (the model's own tokens).

    Raises InputError / TemplateError for input that cannot be replayed.
    """
    template_text, prefix, generation, tools_text, how, size, seed, points = inputs
    key = replay_key(*inputs)
    if replay is not None and replay.key == key:
        return replay
    template = read_template(template_text)
    tools = read_tools(tools_text)
    check_text_sizes(prefix or "", generation or "")
    load_template(template)
    if (
        how == "tokens"
        and generated is not None
        and generated[0] == (generation or "")
        and generation
    ):
        cuts = generated[1]
        chunks = [generation[a:b] for a, b in zip([0, *cuts], [*cuts, len(generation)])]
        return Replay(
            key, chunks, 0, "the tokens Generate live streamed", None, template, prefix or "", tools
        )
    note = f"tokens from {token_pieces(generation)[1]}" if how == "tokens" and generation else ""
    chunks = make_chunks(generation or "", how, size, seed, points)
    generation = generation or ""
    latin1 = all(len(chunk) == 1 for chunk in chunks) and (
        generation.isascii() or max(map(ord, generation)) < 256
    )
    return Replay(
        key, chunks, 0, note, None, template, prefix or "", tools, len(generation), latin1
    )


def seek(replay: Replay, position: int, *, deadline: float | None = None) -> LiveParse:
    """Move the replay to `position` chunks (clamped) and return the parse there.

    Forward moves feed the kept parse; backward moves (or a finalized parse) rebuild it.
    The parse is finalized when every chunk has been fed. `deadline` (a `time.perf_counter()`
    value) is the request's: the parser stops at it, and so does feeding (InputError).
    """
    position = max(0, min(position, len(replay.chunks)))
    live = replay.live
    if live is None or live.finished or position < replay.position:
        live = LiveParse(replay.template, replay.prefix, replay.tools, deadline=deadline)
        fed = 0
    else:
        fed = replay.position
        live.set_deadline(deadline)
    for number, chunk in enumerate(replay.chunks[fed:position], fed):
        if not number % DEADLINE_EVERY:
            if deadline is not None and time.perf_counter() > deadline:
                replay.live, replay.position = live, number
                raise InputError(
                    limits.over_budget("replay_seconds", f"Replaying to chunk {position:,}")
                    + f" It reached chunk {number:,}; Step or Play go on from there."
                )
            make_way()
        live.feed(chunk)
    replay.live, replay.position = live, position
    if replay.at_end:
        live.finalize()
    return live


@dataclass(frozen=True)
class PacedEnd:
    """How a paced feed ended: `stopped` before its last piece (Stop, or the time ran out:
    `out_of_time`), or neither when every piece was fed."""

    stopped: bool = False
    out_of_time: bool = False


def paced_feed(
    pieces: Iterable[Piece],
    feed: Callable[[Piece], None],
    draw: Callable[[], Drawn],
    *,
    stop: Callable[[], bool],
    ends: float,
    seconds_per_piece: float = 0.0,
    every_piece: bool = False,
) -> Generator[Drawn, None, PacedEnd]:
    """Feed `pieces` one by one (`feed(piece)`) and yield `draw()` whenever an update is due.

    Updates are coalesced: at most one every UPDATE_INTERVAL seconds, and never more than
    1/DRAW_SHARE of the time goes to drawing, so a huge input stays responsive; with
    `every_piece`, every piece gets an update of its own. `seconds_per_piece` paces the feed
    (0: as fast as the pieces come); a paced wait looks at `stop` every PACE_STEP seconds.
    Before each piece, `stop()` or the `time.perf_counter()` deadline `ends` ends the loop.
    Every MAKE_WAY_EVERY pieces, running parses go first (`admission.make_way`).

    Use as ``end = yield from paced_feed(...)``: the generator returns a `PacedEnd`.
    """
    next_update = due = 0.0
    for count, piece in enumerate(pieces):
        if stop():
            return PacedEnd(stopped=True)
        if time.perf_counter() > ends:
            return PacedEnd(stopped=True, out_of_time=True)
        if seconds_per_piece:
            if _wait_until(due, stop):
                return PacedEnd(stopped=True)
            due = time.perf_counter() + seconds_per_piece
        if not count % MAKE_WAY_EVERY:
            make_way()
        feed(piece)
        now = time.perf_counter()
        if every_piece or now >= next_update:
            update = draw()
            drawn = time.perf_counter() - now
            next_update = time.perf_counter() + max(UPDATE_INTERVAL, DRAW_SHARE * drawn)
            yield update
    return PacedEnd()


def _wait_until(due: float, stop: Callable[[], bool]) -> bool:
    """Sleep until `due` (a perf_counter time), looking at `stop` every PACE_STEP; True when it came."""
    while (left := due - time.perf_counter()) > 0:
        if stop():
            return True
        time.sleep(min(left, PACE_STEP))
    return stop()
