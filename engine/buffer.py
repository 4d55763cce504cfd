"""The parser's buffers: the scan window over the stream, and the open region's body.

Goal: the work stays linear in the characters processed, whatever the chunking.
A parser that rescans or recopies all the text it has kept on every feed is
quadratic, a denial-of-service bug: a 1 MB generation streamed a token at a time
must cost about ten times a 100 KB one, not a hundred times. So:

* the window keeps only the undecided text (what may still be part of a
  delimiter) and the few decided characters before it that lookbehinds may look
  at (`context`); it is cut once at least half of it is decided, so each
  character is copied a bounded number of times;
* a scan starts where the previous one stopped (`pos`), never from the start;
* a region body is a list of chunks, joined into one block every `BODY_BLOCK`
  chunks (which keeps memory near the text's size) and once when the region closes.

Offsets are stream offsets (the prefix after its last start-anchor match,
then the generation). `StreamBuffer.base`, the offset of the window's first
character, is always true, on the quick path too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .watch import QuickTest

# Region bodies are collected as lists of chunks joined into one string every this many
# chunks, which keeps memory near the text's size.
BODY_BLOCK = 256


class StreamBuffer:
    """The text the parser keeps: the scan window over the stream, and the open region's body.

    The window: ``text[:pos]`` is decided context, ``text[pos:]`` the undecided text, and
    `base` the stream offset of ``text[0]``.

    The quick path (from `start_quick` to the next call of another method) decides text into
    the body only: `ResponseParser.feed` replaces `text` with the held text and appends what it
    decided to `pieces` (itself, which saves a call per chunk, or with `take_quickly` when
    there is context to keep). Without context the window then starts where the body ends, so
    `base` is not counted per chunk but derived in one place, the `base` property, from the
    pieces added since the quick path began; every other method counts them first.

    Attributes:
        text, pos: the window and where its undecided text starts.
        context: how many decided characters to keep before `pos` (the template's widest look back).
        pieces, blocks: the open region's body so far: chunks, and chunks joined into blocks.
    """

    __slots__ = ("text", "pos", "context", "pieces", "blocks", "_base", "_uncounted")

    def __init__(self, context: int) -> None:
        self.text = ""
        self.pos = 0
        self.context = context
        self.pieces: list[str] = []
        self.blocks: list[str] = []
        self._base = 0
        self._uncounted: int | None = (
            None  # on the quick path: index in `pieces` from which `_base` lags
        )

    @property
    def base(self) -> int:
        """The stream offset of ``text[0]``."""
        if self._uncounted is not None:
            self._count()
        return self._base

    @property
    def offset(self) -> int:
        """The stream offset up to which text is decided."""
        if self._uncounted is not None:
            self._count()
        return self._base + self.pos

    @property
    def held(self) -> str:
        """The undecided text."""
        return self.text[self.pos :]

    def _count(self) -> None:
        """Move `_base` over the pieces the quick path decided."""
        start = self._uncounted
        self._base += sum(map(len, self.pieces[start:]))
        self._uncounted = len(self.pieces)

    def _end_quick(self) -> None:
        """Count what the quick path decided and leave it: `_base` is plain from here on."""
        if self._uncounted is not None:
            self._count()
            self._uncounted = None

    def add_decided(self, chunk: str, decided: int) -> int:
        """Add `chunk` to a window whose text is all decided, with its first `decided` characters
        decided too (then trim); return the chunk's stream offset."""
        if self._uncounted is not None:
            self._end_quick()
        pos = self.pos
        offset = self._base + pos
        if not self.context:  # the window can start with the chunk
            self._base, self.text, self.pos = offset, chunk, decided
            return offset
        text = self.text + chunk
        end = pos + decided
        cut = end - self.context
        if cut > 0 and cut * 2 >= len(text):
            text = text[cut:]
            self._base += cut
            end -= cut
        self.text, self.pos = text, end
        return offset

    def trim(self) -> None:
        """Drop decided text beyond the context once it is at least half the window."""
        cut = self.pos - self.context
        if cut > 0 and cut * 2 >= len(self.text):
            if self._uncounted is not None:
                self._end_quick()
            self.text = self.text[cut:]
            self._base += cut
            self.pos -= cut

    def start_quick(self) -> None:
        """Begin the quick path: keep only the held text and its context."""
        self._end_quick()
        cut = self.pos - self.context
        if cut > 0:
            self.text = self.text[cut:]
            self._base += cut
            self.pos -= cut
        if not self.context:
            self._uncounted = len(self.pieces)

    def take_quickly(self, text: str, quick: QuickTest) -> str | None:
        """The quick path with context: `text` is the window and the new chunk. Decide what
        `quick` (a `watch.QuickTest`) says cannot start a delimiter, keep the context before the
        held text, and return the decided text for the body (``""`` when all is held), or None
        when a scan must decide (`text` is then the window)."""
        pos = self.pos
        hold = quick.hold(text[pos:])
        if hold <= 0:
            self.text = text
            return None if hold < 0 else ""
        end = pos + hold
        cut = max(end - self.context, 0)
        self.text = text[cut:]
        self._base += cut
        self.pos = end - cut
        return text[pos:end]

    def join_block(self) -> None:
        """Join the body's pieces into one block, which keeps memory near the text's size."""
        block = "".join(self.pieces)
        if self._uncounted == 0:  # the quick path decided every piece
            self._base += len(block)
        elif self._uncounted is not None:
            self._count()
            self._uncounted = 0
        self.blocks.append(block)
        self.pieces.clear()

    def add_to_body(self, text: str) -> None:
        """Add `text` to the open region's body."""
        if self._uncounted is not None:
            self._end_quick()
        self.pieces.append(text)
        if len(self.pieces) >= BODY_BLOCK:
            self.join_block()

    def take_body(self) -> str:
        """The open region's whole body as one string; the body is empty afterwards (its pieces are freed)."""
        self._end_quick()
        self.blocks += self.pieces
        text = "".join(self.blocks)
        self.clear_body()
        return text

    def clear_body(self) -> None:
        """Empty the open region's body."""
        self._end_quick()
        self.pieces = []
        self.blocks = []
