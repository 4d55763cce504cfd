"""Reading a pasted output through a tokenizer, as a model would have generated it.

A model writes a control token (`<tool_call>`) as its one id; the parse of ids takes it as a
delimiter only then (`engine.token_ids`). A pasted output is text, so the page encodes it:
every control-token spelling becomes that token's id, as the model generates it, except in
the stretches the author marked as spelled out, which are encoded with ordinary tokens only
(what a model quoting the tag in prose produces). The parse then shows what such a quoted
tag does: it stays text.

The marked stretches are character ranges of the generation, written one a line as
``start:end`` (the "Spelled out" box; the page's button adds the selected text's range).

A reading is bounded before it allocates: a generation longer than PLAYGROUND_LIMITS
`token_reading_chars` is refused before it is encoded, the encoding goes piece by
piece within the parse's deadline, and more ids than `token_reading_ids` stop it
(a million emoji would be four million ids, and seconds of encoding outside any budget).
"""

from __future__ import annotations

import functools
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..server import limits
from ..server.input_readers import InputError

# Where the page reads a pasted output: as text, or as the ids of one of these tokenizers.
READ_AS_TEXT = "text"
READ_DEMO = "tokens: the demo model's tokenizer"
READ_LOADED = "tokens: the loaded model's tokenizer"
READ_CHOICES = (READ_AS_TEXT, READ_DEMO, READ_LOADED)
# Marked ranges read at most (each is a line of the "Spelled out" box).
MAX_SPELLED_RANGES = 200
# The longest piece of text encoded at once (characters): the deadline and the id cap are checked
# between pieces. A piece ends after a line break when one is near, so few tokens are split.
ENCODE_PIECE_CHARS = 20_000

_demo_lock = threading.Lock()
# The bundled demo model (the one Generate live loads by default).
DEMO_MODEL_PATH = Path(__file__).resolve().parents[2] / "samples" / "demo-model"


@functools.cache
def _demo_tokenizer_cached():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(DEMO_MODEL_PATH))


def demo_tokenizer():
    """The bundled demo model's tokenizer (samples/demo-model), loaded once per process.

    Raises InputError when its files cannot be read."""
    with _demo_lock:
        try:
            return _demo_tokenizer_cached()
        except (OSError, ValueError) as error:
            raise InputError(f"The demo model's tokenizer could not be loaded: {error}") from error


def spelled_ranges(text: str, length: int) -> list[tuple[int, int]]:
    """The "Spelled out" box's ranges: one ``start:end`` a line (character offsets of the
    generation, end excluded; blank lines and anything after ``#`` ignored), sorted and
    merged where they overlap.

    Raises InputError naming the line that is no range, lies outside the generation's
    `length` characters, or is one too many (MAX_SPELLED_RANGES).
    """
    ranges = []
    for number, line in enumerate((text or "").splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        start, colon, end = line.partition(":")
        if not colon or not start.strip().isdecimal() or not end.strip().isdecimal():
            raise InputError(
                f"Spelled out, line {number}: {line!r} is not a range like 8:19 (start:end, "
                "character offsets of the generation)."
            )
        start_at, end_at = int(start), int(end)
        if not 0 <= start_at < end_at <= length:
            raise InputError(
                f"Spelled out, line {number}: {start_at}:{end_at} is not a stretch of the "
                f"generation (it has {length:,} characters; start must be below end)."
            )
        ranges.append((start_at, end_at))
        if len(ranges) > MAX_SPELLED_RANGES:
            raise InputError(f"Spelled out, line {number}: more than {MAX_SPELLED_RANGES} ranges.")
    merged: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


@dataclass(frozen=True)
class TokenReading:
    """How a pasted output is read as token ids.

    Attributes:
        tokenizer: a fast Hugging Face tokenizer.
        name: whose tokenizer, for the page ("the demo model's").
        spelled: the generation's character ranges written with ordinary tokens only (sorted,
            not overlapping).
    """

    tokenizer: Any
    name: str
    spelled: tuple[tuple[int, int], ...] = ()

    def prefix_ids(self, prefix: str) -> list[int]:
        """The prefix as ids: control-token spellings as their ids, no special tokens added."""
        return self._encode(prefix, ordinary=False)

    def ids(self, generation: str, until: float | None = None) -> list[int]:
        """The generation as the model would have generated it: control-token spellings as
        their ids, except inside the spelled-out ranges (ordinary tokens only). Each piece
        between range ends is encoded on its own.

        `until`: a `time.perf_counter()` value past which the reading stops. Raises InputError
        past it, or past PLAYGROUND_LIMITS `token_reading_ids` ids."""
        ids: list[int] = []
        at = 0
        for start, end in self.spelled:
            self._encode(generation[at:start], False, ids, until)
            self._encode(generation[start:end], True, ids, until)
            at = end
        self._encode(generation[at:], False, ids, until)
        return ids

    def _encode(
        self, text: str, ordinary: bool, into: list[int] | None = None, until: float | None = None
    ) -> list[int]:
        """`text` encoded and added to `into` (a new list when None), in pieces of about
        ENCODE_PIECE_CHARS, each cut after a line break when one is in its last quarter."""
        into = [] if into is None else into
        cap = limits.current().token_reading_ids
        at = 0
        while at < len(text):
            end = min(len(text), at + ENCODE_PIECE_CHARS)
            if end < len(text):
                end = text.rfind("\n", at + ENCODE_PIECE_CHARS * 3 // 4, end) + 1 or end
            into += self.tokenizer.encode(
                text[at:end], add_special_tokens=False, split_special_tokens=ordinary
            )
            at = end
            if len(into) > cap:
                raise InputError(
                    f"Read as tokens: the generation gives more than {cap:,} token ids "
                    "(PLAYGROUND_LIMITS token_reading_ids); read it as text, or paste less."
                )
            if until is not None and time.perf_counter() > until:
                raise InputError(
                    limits.over_budget("parse_seconds", "Reading the generation as tokens")
                )
        return into


def reading_for(read_as: str, spelled_text: str, generation: str, loaded_tokenizer=None):
    """The `TokenReading` the page's "Read as" choice asks for, or None to read text.

    `loaded_tokenizer`: the loaded model's tokenizer, or None when no model is loaded.

    Raises InputError: an unknown choice, the loaded model's tokenizer asked for with none
    loaded, a tokenizer that cannot read ids (a slow one), or a bad "Spelled out" range.
    """
    read_as = read_as or READ_AS_TEXT
    if read_as == READ_AS_TEXT:
        return None
    if read_as == READ_DEMO:
        tokenizer, name = demo_tokenizer(), "the demo model's tokenizer"
    elif read_as == READ_LOADED:
        if loaded_tokenizer is None:
            raise InputError(
                "No model is loaded: Generate live loads one (or read through the demo model's "
                "tokenizer)."
            )
        tokenizer, name = loaded_tokenizer, "the loaded model's tokenizer"
    else:
        raise InputError(f"Read as: {read_as!r} is not one of {', '.join(READ_CHOICES)}.")
    cap = limits.current().token_reading_chars
    if len(generation) > cap:
        raise InputError(
            f"Read as tokens: the generation has {len(generation):,} characters, more than "
            f"{cap:,} can be read as token ids (PLAYGROUND_LIMITS token_reading_chars); read it "
            "as text, or paste less."
        )
    if getattr(tokenizer, "backend_tokenizer", None) is None:
        raise InputError(f"{name} is not a fast tokenizer: token ids cannot be read with it.")
    return TokenReading(tokenizer, name, tuple(spelled_ranges(spelled_text, len(generation))))
