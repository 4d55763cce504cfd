"""Token ids in, text out: control tokens count as delimiters only when generated as their ids.

A model writes a control token (`<tool_call>`, `<|im_end|>`) as one id. The same characters
can also come out of ordinary tokens: a model quoting a tag in prose, or repeating a tool
result that contains one. Parsing token ids, only the first kind may act as a delimiter.

`TokenDecoder` turns ids into the text the parser scans. Ordinary ids are decoded
incrementally, as `tokenizers`' `DecodeStream` decodes them (each id once: linear in the
ids), holding back the ids of an incomplete character: a run of many ids (a whole
generation, the prefix) by one decode call where the tokenizer allows it (`whole_run_splits`),
else by one decode per stretch between control tokens, read after the few ids before it;
one id at a time with a byte-level decoder by the id's own text where
that is what the stream would give, else by a stream step. In the text they give, every spelling of a
control token gets `SPELLED_MARK` between its characters, so that no delimiter can match
it, and a tail that could still grow into such a spelling is held back until later ids
decide. The parser strips the mark from every chunk and value it hands out
(`strip_marks`), so callers never see it.

Which tokens are control tokens follows transformers 5.25 (the tokens that
`apply_chat_template(..., sanitize_control_tokens=True)` protects): the tokenizer's special
added tokens, plus the added tokens listed in `tokenizer.chat_control_tokens`; when that is
unset, plus the added tokens that the chat template's literal text contains (whitespace
tokens excepted: templates write those as ordinary text).

`StreamTokens` (a parser's `tokens`) records every id: its text, where it lies in the
stream, whether it is a control token, and where a control token was spelled out.
"""

from __future__ import annotations

import functools
import operator
import re
import weakref
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from typing import Any

from .errors import ResponseParseError

# A Unicode noncharacter (reserved for a program's internal use, so model output does not
# contain it), the one transformers 5.25 uses for the same purpose.
SPELLED_MARK = "\ufdd2"


# After a run of more than this many ordinary ids, decoding goes on from a stream that holds
# only the last CONTEXT_IDS of them (see `TokenDecoder._reprime`).
REPRIME_AFTER = 32
CONTEXT_IDS = 4
# A text this long is searched for each spelling in turn before the pattern, when the
# control tokens have at most FEW_SPELLINGS spellings.
LONG_TEXT = 256
FEW_SPELLINGS = 32
# A feed of more ids than this is decoded by one call where the tokenizer allows it
# (`whole_run_splits`).
WHOLE_RUN = 64


def _positions_of(ids: list[int], wanted: dict[int, Any], table: bytes | None = None) -> list[int]:
    """The indices in `ids` of the ids that are keys of `wanted`, in order, never with a Python
    step per id: whether any occurs by `isdisjoint` (which stops at the first); then, for a
    long list, a flag per id by indexing `table` (a byte per id, 1 for the wanted ones: see
    `control_id_table`) through one `itemgetter`, else by a `map` of lookups; then a search
    for the flags at the speed of `tuple.index`."""
    if wanted.keys().isdisjoint(ids):
        return []
    flags: Any = None
    if table is not None and len(ids) > 64:
        try:
            flags = operator.itemgetter(*ids)(table)
        except (IndexError, TypeError):  # an id past the table, or no int: looked up instead
            flags = None
    if flags is None:
        flags = list(map(wanted.__contains__, ids))
    found = []
    at = -1
    try:
        while True:
            at = flags.index(True, at + 1)
            found.append(at)
    except ValueError:
        pass
    if table is not None and not all(ids[at] in wanted for at in found):
        return _positions_of(ids, wanted)  # a negative id indexed the table from its end
    return found


@functools.lru_cache(maxsize=8)
def control_id_table(control_ids: frozenset[int], size: int) -> bytes:
    """A byte per id below `size` (and past the largest control id): 1 for the control ids,
    0 for the others (for `_positions_of`)."""
    table = bytearray(max(size, max(control_ids, default=-1) + 1))
    for token_id in control_ids:
        if token_id >= 0:
            table[token_id] = 1
    return bytes(table)


def strip_marks(value: Any) -> Any:
    """`value` with `SPELLED_MARK` removed from every string in it (dict keys included);
    lists and dicts are copied, other values returned as they are."""
    if isinstance(value, str):
        return value.replace(SPELLED_MARK, "") if SPELLED_MARK in value else value
    if isinstance(value, list):
        return [strip_marks(item) for item in value]
    if isinstance(value, dict):
        return {strip_marks(key): strip_marks(item) for key, item in value.items()}
    return value


class TokenIds(list):
    """A list of token ids that `token_id_list` checked: it hands it back as it is, so ids
    checked once (a whole generation given to `parse_response`) are not walked again."""

    __slots__ = ()


def token_id_list(ids: Any, what: str = "ids") -> list[int]:
    """Token ids as a list of ints: from a list or tuple of ints (a list of ints is handed
    back as it is, checked by one `sum`), a 1-D numpy array or torch tensor, or a single int
    (one id); other lists come back as a `TokenIds`.

    Raises:
        TypeError: text (a parser given a tokenizer reads ids, not text), or a value that is
            none of these (names `what` and the type found).
    """
    if ids.__class__ is TokenIds:
        return ids
    if isinstance(ids, str):
        raise TypeError(
            f"{what}: this parser was given a tokenizer, so it reads token ids, not text; feed "
            "the generated ids (or parse text with a parser made without tokenizer=)"
        )
    if hasattr(ids, "tolist"):  # numpy array or torch tensor
        ids = ids.tolist()
    if ids.__class__ is list or ids.__class__ is tuple:
        try:  # a sum of ints is an int (a float or an array scalar makes it something else)
            whole_ints = sum(ids).__class__ is int
        except TypeError:
            whole_ints = False
        if whole_ints:  # as it is: no copy, no Python step per id
            return ids if ids.__class__ is list else list(ids)
    if isinstance(ids, int) and not isinstance(ids, bool):
        return TokenIds([ids])
    if isinstance(ids, (list, tuple)):
        try:
            return TokenIds(map(operator.index, ids))
        except TypeError:
            bad = next(item for item in ids if not hasattr(item, "__index__"))
            raise TypeError(
                f"{what}: expected token ids (ints), found {type(bad).__name__} {bad!r}"
            ) from None
    raise TypeError(
        f"{what}: expected token ids (a list of ints, an array or a tensor), got {type(ids).__name__}"
    )


@functools.lru_cache(maxsize=32)
def chat_template_literals(chat_template: str) -> str:
    """The literal text of a Jinja chat template: its raw text pieces and string constants,
    joined with NUL so that a search cannot match across two of them. A template Jinja
    cannot parse gives its whole source."""
    import jinja2
    from jinja2 import nodes
    from jinja2.ext import Extension, loopcontrols

    class GenerationBlock(Extension):  # `{% generation %}` marks what the assistant wrote
        tags = {"generation"}

        def parse(self, parser):
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            return nodes.Scope(body, lineno=lineno)

    environment = jinja2.Environment(extensions=[loopcontrols, GenerationBlock])
    try:
        tree = environment.parse(chat_template)
    except jinja2.TemplateError:
        return chat_template
    pieces = {node.data for node in tree.find_all(nodes.TemplateData)}
    pieces |= {node.value for node in tree.find_all(nodes.Const) if isinstance(node.value, str)}
    return "\0".join(sorted(pieces))


_CONTROL_TOKENS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def control_tokens(tokenizer: Any) -> dict[int, str]:
    """The tokenizer's control tokens as ``{id: spelling}`` (see the module's docstring).

    A tokenizer may hold several named chat templates (a dict): a token any of them writes
    counts. Tokens that are not added tokens are never control tokens. The answer is kept
    per tokenizer while its vocabulary size, chat template and `chat_control_tokens` stay
    the same (a parser per generation then costs no walk over the added tokens).
    """
    listed = getattr(tokenizer, "chat_control_tokens", None)
    signature = (
        len(tokenizer),
        str(getattr(tokenizer, "chat_template", None)),
        None if listed is None else tuple(listed),
    )
    try:
        kept = _CONTROL_TOKENS.get(tokenizer)
    except TypeError:  # not weakly referenceable: work it out each time
        return _control_tokens(tokenizer)
    if kept is not None and kept[0] == signature:
        return kept[1]
    found = _control_tokens(tokenizer)
    _CONTROL_TOKENS[tokenizer] = (signature, found)
    return found


def _control_tokens(tokenizer: Any) -> dict[int, str]:
    added = getattr(tokenizer, "added_tokens_decoder", {}) or {}
    listed = getattr(tokenizer, "chat_control_tokens", None)
    if listed is not None:
        listed = set(listed)
        return {
            token_id: token.content
            for token_id, token in added.items()
            if token.special or token.content in listed
        }
    chat_template = getattr(tokenizer, "chat_template", None)
    templates = (
        list(chat_template.values()) if isinstance(chat_template, dict) else [chat_template or ""]
    )
    literal = "\0".join(chat_template_literals(text) for text in templates if text)
    return {
        token_id: token.content
        for token_id, token in added.items()
        if token.special or (token.content in literal and not token.content.isspace())
    }


@functools.lru_cache(maxsize=32)
def spelling_matcher(
    spellings: frozenset[str],
) -> tuple[re.Pattern | None, frozenset[str], int, frozenset[str]]:
    """What a decoder looks for in text, for control tokens spelled `spellings`: a pattern
    matching any spelling (longest first, so that a token wins over the tokens it contains;
    None without spellings), the proper starts of spellings (a tail that may still grow into
    one), the longest start's length, and the characters spellings start with (text without
    one holds no spelling and no start). Kept per set of spellings: a parser per generation
    then builds none of it."""
    ordered = sorted(spellings, key=len, reverse=True)
    pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None
    starts = frozenset(spelling[:k] for spelling in ordered for k in range(1, len(spelling)))
    return (
        pattern,
        starts,
        max(map(len, starts), default=0),
        frozenset(spelling[0] for spelling in ordered),
    )


@functools.lru_cache(maxsize=32)
def spellings_overlap_free(spellings: frozenset[str]) -> bool:
    """Whether no two occurrences of `spellings` in any text can overlap: no spelling holds
    another, and no proper end of a spelling (itself included) begins a spelling. Then a
    search finds every occurrence of each spelling, each whole (see `whole_run_splits`)."""
    for first in spellings:
        for second in spellings:
            if first != second and first in second:
                return False
            if any(first[-k:] == second[:k] for k in range(1, min(len(first), len(second)))):
                return False
    return True


_WHOLE_RUN_SPLITS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def whole_run_splits(tokenizer: Any, backend: Any, spellings: dict[int, str]) -> bool:
    """Whether a run of ids may be decoded by one decode call, its control tokens found in the
    text by their spellings (`TokenDecoder._feed_run`).

    That holds when three things do. The decoder is byte-level (`own_pieces`): the text of ids
    is their bytes read as UTF-8, so a run's text is the text of its ids, wherever it is cut.
    Every control token decodes alone to its spelling: in any run it then adds its spelling
    whole (a character is never split across it: UTF-8 resynchronizes at its first byte).
    And spellings never overlap (`spellings_overlap_free`): a search of the run's text then
    finds each control token's spelling where it lies, and finds as many spellings as there
    are control tokens exactly when none was spelled out with ordinary tokens. Kept per
    tokenizer while its vocabulary size and control tokens stay the same.
    """
    signature = (len(tokenizer), frozenset(spellings.items()))
    try:
        kept = _WHOLE_RUN_SPLITS.get(tokenizer)
    except TypeError:  # not weakly referenceable: worked out per decoder
        kept = None
    if kept is not None and kept[0] == signature:
        return kept[1]
    splits = (
        own_pieces(tokenizer, backend) is not None
        and spellings_overlap_free(frozenset(spellings.values()))
        and all(
            backend.decode([token_id], skip_special_tokens=False) == spelling
            for token_id, spelling in spellings.items()
        )
    )
    try:
        _WHOLE_RUN_SPLITS[tokenizer] = (signature, splits)
    except TypeError:
        pass
    return splits


_OWN_PIECES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def own_pieces(tokenizer: Any, backend: Any) -> dict[int, str | bool] | None:
    """Where an id's text does not depend on the ids before it, a dict the decoder fills with
    each id's own text (False for an id that must go through the stream); else None.

    That holds for a byte-level decoder (GPT-2's, and the many models that share it): the text
    of ids is their bytes read as UTF-8, each id's bytes the same wherever it stands. So
    once the text so far ends with a whole character, an id whose own bytes end with a whole
    character adds exactly its own text, which is what `DecodeStream` gives for it, without
    a stream step. Ids whose text ends inside a character (U+FFFD) still go through the
    stream. Kept per tokenizer while its vocabulary size stays the same.
    """
    try:
        kept = _OWN_PIECES.get(tokenizer)
    except TypeError:  # not weakly referenceable: worked out per decoder
        kept = None
    if kept is not None and kept[0] == len(tokenizer):
        return kept[1]
    from tokenizers.decoders import ByteLevel

    pieces = {} if isinstance(getattr(backend, "decoder", None), ByteLevel) else None
    try:
        _OWN_PIECES[tokenizer] = (len(tokenizer), pieces)
    except TypeError:
        pass
    return pieces


def _own_piece(backend: Any, token_id: int) -> str | bool:
    """One id's own text, or False when it is empty or ends inside a character."""
    text = backend.decode([token_id], skip_special_tokens=False)
    return text if text and not text.endswith("\ufffd") else False


def _token_pieces(step: Callable, backend: Any, spelling: str | None, token_id: int):
    """The text one id adds when stepped alone (None: it leaves a character incomplete)."""
    decoded = step(backend, token_id)
    if spelling is None:
        return decoded
    decoded = decoded or ""
    before = decoded[: -len(spelling)] if decoded.endswith(spelling) else decoded
    return before + spelling


class StreamTokens:
    """Every token id a parser read, and where its text lies.

    Offsets are characters of the decoded text the parse saw (without `SPELLED_MARK`),
    counted from the start of the stream like event positions: the prefix after its last
    start-anchor match, then the generation. Tokens of the prefix before the cut have
    negative offsets. Token indices count every id read, the prefix's first.

    Each id's own text is worked out when first asked for (the decoder steps runs of ids
    at once, as fast as the tokenizer allows), by stepping a second `DecodeStream` one id at
    a time from where the last question left off: linear in the ids however often it is asked.

    Attributes:
        ids: the token ids, in order.
        prefix_tokens: how many of the ids were the prefix's.
    """

    def __init__(self, spellings: dict[int, str], backend: Any, new_stream: Callable):
        self.spellings = spellings
        self.ids: list[int] = []
        self.prefix_tokens = 0
        self._backend, self._new_stream = backend, new_stream
        self._flushes: list[int] = []  # the decoder started a new text after this many ids
        self._pieces: list[str] = []
        self._control: list[bool] = []
        self._starts: list[int] = []  # offset of each piece in the whole decoded text
        self._length = 0  # of the whole decoded text, up to the ids worked out
        self._replay = None  # the DecodeStream that works the pieces out (made when first asked)
        self._replay_pending: list[int] = []
        self._next_flush = 0  # index in `_flushes` of the next flush to replay
        self._marks: list[int] = []  # offsets of the marks in the marked text
        self._spelled: list[tuple[int, int]] = []  # spelled-out control tokens (whole text)
        self._origin = 0  # where the stream starts in the whole decoded text
        self._origin_marked = 0  # ... in the marked text

    # -- recording (the decoder's) ---------------------------------------------------------

    def add_spelled(self, plain_start: int, marked_start: int, length: int) -> None:
        """A control token spelled out at `plain_start` (whole text) / `marked_start` (marked)."""
        self._spelled.append((plain_start, plain_start + length))
        self._marks.extend(marked_start + 2 * k + 1 for k in range(length - 1))

    def start_stream(self, marked_cut: int) -> None:
        """The stream starts at `marked_cut` in the marked text (the prefix's anchor cut)."""
        self._origin_marked = marked_cut
        self._origin = marked_cut - bisect_left(self._marks, marked_cut)

    def _catch_up(self) -> None:
        """Work out the pieces of the ids read since the last call."""
        done, ids, flushes = len(self._pieces), self.ids, self._flushes
        if done == len(ids) and self._next_flush == len(flushes):
            return
        spellings, backend = self.spellings, self._backend
        if self._replay is None:
            self._replay = self._new_stream()
        for index in range(done, len(ids) + 1):
            while self._next_flush < len(flushes) and flushes[self._next_flush] == index:
                self._next_flush += 1
                if self._replay_pending:
                    text = backend.decode(self._replay_pending, skip_special_tokens=False)
                    self._pieces[-1] += text
                    self._length += len(text)
                self._replay, self._replay_pending = self._new_stream(), []
            if index == len(ids):
                break
            token_id = ids[index]
            spelling = spellings.get(token_id)
            piece = _token_pieces(self._replay.step, backend, spelling, token_id)
            if piece is None:
                self._replay_pending.append(token_id)
                piece = ""
            else:
                self._replay_pending = []
            self._pieces.append(piece)
            self._control.append(spelling is not None)
            self._starts.append(self._length)
            self._length += len(piece)

    # -- reading ---------------------------------------------------------------------------

    @property
    def pieces(self) -> list[str]:
        """The text each id added (``""`` for an id that began a character a later id completed;
        that one carries the whole character)."""
        self._catch_up()
        return self._pieces

    @property
    def control(self) -> list[bool]:
        """For each id, whether it is a control token (generated as its id)."""
        self._catch_up()
        return self._control

    @property
    def any_spelled(self) -> bool:
        """Whether a control token was spelled out so far (the parser then strips marks)."""
        return bool(self._marks)

    def plain(self, marked_offset: int) -> int:
        """A stream offset in the marked text the parser scans, as an offset in `text`."""
        whole = marked_offset + self._origin_marked
        return whole - bisect_left(self._marks, whole) - self._origin

    @property
    def text(self) -> str:
        """The decoded stream (from the prefix's cut on), as the parse read it."""
        return "".join(self.pieces)[self._origin :]

    def start(self, index: int) -> int:
        """Stream offset where token `index`'s text starts."""
        self._catch_up()
        return self._starts[index] - self._origin

    def end(self, index: int) -> int:
        """Stream offset where token `index`'s text ends."""
        self._catch_up()
        return self._starts[index] + len(self._pieces[index]) - self._origin

    def token_at(self, offset: int) -> int | None:
        """The index of the token whose text holds stream `offset`, or None past the end."""
        self._catch_up()
        whole = offset + self._origin
        if whole < 0 or whole >= self._length:
            return None
        return bisect_right(self._starts, whole) - 1

    def token_range(self, start: int, end: int) -> tuple[int, int]:
        """The tokens text ``[start, end)`` touches, as ``(first, past_last)`` indices (first ==
        past_last for an empty range: the token at `start`)."""
        first = self.token_at(start)
        if first is None:
            return len(self.ids), len(self.ids)
        if end <= start:
            return first, first
        last = self.token_at(end - 1)
        return first, (len(self.ids) if last is None else last + 1)

    def spelled_out(self) -> list[tuple[int, int]]:
        """Where control tokens were spelled out with ordinary tokens, as ``(start, end)`` stream
        offsets: text, never a delimiter."""
        return [(start - self._origin, end - self._origin) for start, end in self._spelled]

    def matched_by(self, start: int, end: int) -> str:
        """``"control token"`` when the delimiter text ``[start, end)`` holds a control token
        generated as its id, else ``"text"`` (matched in text the ordinary tokens gave)."""
        first, past = self.token_range(start, end)
        for index in range(first, past):
            if self._control[index] and self.start(index) >= start and self.end(index) <= end:
                return "control token"
        return "text"

    def held_by_control(self, start: int, end: int) -> bool:
        """Whether every character of text ``[start, end)`` lies in control tokens generated
        as their ids (False for an empty range). Where `matched_by` speaks of a whole
        delimiter, this speaks of some of its characters: a close that also takes the
        newline before `</tool_call>` holds an ordinary token, whose newline was matched in
        text."""
        first, past = self.token_range(start, end)
        control = self.control
        return past > first and all(control[index] for index in range(first, past))

    def boundaries(self) -> list[dict]:
        """One dict per token of the stream: ``index``, ``id``, ``text``, ``start``, ``end``
        (stream offsets) and ``control``; prefix tokens wholly before the cut are left out."""
        self._catch_up()
        found = []
        for index, token_id in enumerate(self.ids):
            end = self.end(index)
            if end <= 0 and (end < 0 or self.start(index) < 0):
                continue
            found.append(
                {
                    "index": index,
                    "id": token_id,
                    "text": self._pieces[index],
                    "start": max(0, self.start(index)),
                    "end": end,
                    "control": self._control[index],
                }
            )
        return found


class TokenDecoder:
    """Decode generated token ids into the text a parser scans, defusing spelled-out control tokens.

    Args:
        tokenizer: a fast (``tokenizers``-backed) Hugging Face tokenizer.

    Attributes:
        tokens: the `StreamTokens` record of every id decoded.

    Raises:
        TypeError: the tokenizer has no ``backend_tokenizer`` (a slow tokenizer): incremental
            decoding needs the ``tokenizers`` library's.
    """

    def __init__(self, tokenizer: Any):
        from tokenizers.decoders import DecodeStream

        backend = getattr(tokenizer, "backend_tokenizer", None)
        if backend is None:
            raise TypeError(
                f"tokenizer {type(tokenizer).__name__} has no backend_tokenizer: parsing token ids "
                "needs a fast tokenizer (AutoTokenizer.from_pretrained(..., use_fast=True))"
            )
        self._new_stream = lambda context=None: DecodeStream(context, skip_special_tokens=False)
        self._backend = backend
        self._stream = self._new_stream()
        # an id's own text, where it is the text the stream would give (see `own_pieces`)
        self._own_pieces = own_pieces(tokenizer, backend)
        self.spellings = control_tokens(tokenizer)
        self.tokens = StreamTokens(self.spellings, backend, self._new_stream)
        self._spelled_forms = frozenset(self.spellings.values())
        self._control_table = control_id_table(frozenset(self.spellings), len(tokenizer))
        self._whole_runs = whole_run_splits(tokenizer, backend, self.spellings)
        self._pattern, self._starts, self._longest_start, self._first_characters = spelling_matcher(
            self._spelled_forms
        )
        self._pending: list[int] = []  # ids of an incomplete character
        self._held = ""  # decoded text that may still become a spelled-out control token
        self._marked = 0  # characters handed out, marks counted (`_plain` leaves them out)

    @property
    def _plain(self) -> int:
        """Characters handed out, marks not counted."""
        return self._marked - len(self.tokens._marks)

    @property
    def _stream(self) -> Any:
        """The `DecodeStream` that decodes the next ids: after ids read by their own text
        (`feed_one`) it has not stepped, one that holds the last few of them."""
        read = self._read_by_own_text
        if read:  # the ids before `read` were read by their own text, without the stream
            self._read_by_own_text = 0
            flushes = self.tokens._flushes
            stream_start = flushes[-1] if flushes else 0
            context = self.tokens.ids[max(read - CONTEXT_IDS, stream_start) : read]
            if not self._reprime(context):  # (not with a byte-level decoder)
                self._live_stream = self._new_stream(self.tokens.ids[stream_start:read])
        return self._live_stream

    @_stream.setter
    def _stream(self, stream: Any) -> None:
        self._live_stream = stream
        self._read_by_own_text = 0

    def feed_one(self, token_id: int) -> str:
        """`feed` of one id (an int), the streaming case, without the per-call work of a list:
        the same text, state and records."""
        if token_id in self.spellings:
            return self.feed([token_id])
        self.tokens.ids.append(token_id)
        pieces = self._own_pieces
        if pieces is not None and not self._pending:
            decoded = pieces.get(token_id)
            if decoded is None:
                decoded = pieces[token_id] = _own_piece(self._backend, token_id)
            if decoded:
                self._read_by_own_text = len(self.tokens.ids)
                if self._held or not self._first_characters.isdisjoint(decoded):
                    return self._release(decoded, final=False)
                self._marked += len(decoded)
                return decoded
        decoded = self._stream.step(self._backend, token_id)
        if decoded is None:
            self._pending.append(token_id)
            return ""
        if self._pending:
            self._pending = []
        if self._held or not self._first_characters.isdisjoint(decoded):
            return self._release(decoded, final=False)
        # no spelling can start in it: nothing to hold back or mark
        self._marked += len(decoded)
        return decoded

    def feed(self, ids: list[int]) -> str:
        """Decode the next ids; return the text they release (marked; ``""`` while all is held:
        an incomplete character, or a possible start of a spelled-out control token)."""
        if len(ids) > WHOLE_RUN and self._whole_runs and not self._pending and not self._held:
            text = self._feed_run(ids)
            if text is not None:
                return text
        offset = len(self.tokens.ids)  # where `ids` start in `tokens.ids`
        self.tokens.ids += ids
        spellings = self.spellings
        positions = _positions_of(ids, spellings, self._control_table)
        if not positions:  # the common case: one run of ordinary ids
            return self._release(self._step_run(ids, offset), final=False) if ids else ""
        out: list[str] = []
        start = 0
        if len(ids) > 1 and not self._pending:
            pieces = self._decode_before_controls(ids, offset, positions)
            if pieces is not None:
                for at, piece in zip(positions, pieces):
                    out.append(self._release(piece, final=True))
                    spelling = spellings[ids[at]]
                    out.append(spelling)
                    self._marked += len(spelling)
                positions, start = [], positions[-1] + 1
        for at in positions:
            token_id = ids[at]
            spelling = spellings[token_id]
            # A control token also releases the incomplete character held before it.
            run = self._step_run(ids[start:at], offset + start) if at > start else ""
            decoded = self._stream.step(self._backend, token_id) or ""
            before = decoded[: -len(spelling)] if decoded.endswith(spelling) else decoded
            self._pending = []
            out.append(self._release(run + before, final=True))
            out.append(spelling)
            self._marked += len(spelling)
            start = at + 1
        if start < len(ids):
            out.append(self._release(self._step_run(ids[start:], offset + start), final=False))
        return "".join(out)

    def _feed_run(self, ids: list[int]) -> str | None:
        """`feed` of a long run of ids by one decode call, where `whole_run_splits` allows it
        and nothing is held: the run's text, its control tokens' spellings in place and
        unmarked; or None (nothing changed) when the run holds an id that is not a non-negative
        int below the vocabulary's size, ends inside a character, or holds a spelled-out control
        token (more spellings in its text than control ids in it): `feed` then reads it its
        own way. The count of control ids looks each id up in the byte table (which also
        checks that it indexes one) instead of a Python step per id; the stream is re-primed
        only when it is next needed (`_stream`)."""
        try:
            controls = sum(operator.itemgetter(*ids)(self._control_table))
        except (IndexError, TypeError):
            return None
        try:
            text = self._backend.decode(ids, skip_special_tokens=False)
        except OverflowError:  # a negative id (which indexed the table from its end)
            return None
        if not text or text.endswith("\ufffd"):
            return None
        pattern = self._pattern
        if (0 if pattern is None else len(pattern.findall(text))) != controls:
            return None
        self.tokens.ids += ids
        self._read_by_own_text = len(self.tokens.ids)
        cut = self._hold_back(text)
        self._held = text[cut:]
        self._marked += cut
        return text[:cut]

    def _decode_before_controls(
        self, ids: list[int], offset: int, positions: list[int]
    ) -> list[str] | None:
        """For each control token at `positions` in `ids` (which start at `offset` in
        `tokens.ids`), the text the ordinary ids before it give (from the previous control
        token on), by a decode per run instead of a stream step per token; the stream then
        holds the last few ids up to the last control token.

        Each run is decoded after the few ids before it, with its control token, as the stream
        would read it; None (nothing changed) when a text does not extend its context's or
        does not end with the control token's spelling: the stream then steps them.
        """
        all_ids, spellings = self.tokens.ids, self.spellings
        flushes = self.tokens._flushes
        stream_start = flushes[-1] if flushes else 0
        contexts, readings = [], []
        start = 0
        for at in positions:
            begin = offset + start
            context = all_ids[max(begin - CONTEXT_IDS, stream_start) : begin]
            contexts.append(context)
            readings.append(context + ids[start : at + 1])
            start = at + 1
        # one call per text: `decode_batch` hands short texts to a thread pool, dearer here
        decode = self._backend.decode
        heads = [decode(context, skip_special_tokens=False) for context in contexts]
        texts = [decode(reading, skip_special_tokens=False) for reading in readings]
        pieces = []
        for at, head, text in zip(positions, heads, texts):
            spelling = spellings[ids[at]]
            if (
                head.endswith("\ufffd")
                or len(text) < len(head) + len(spelling)
                or not text.startswith(head)
                or not text.endswith(spelling)
            ):
                return None
            pieces.append(text[len(head) : len(text) - len(spelling)])
        last = offset + positions[-1] + 1
        if not self._reprime(all_ids[max(last - CONTEXT_IDS, stream_start) : last]):
            return None
        return pieces

    def _step_run(self, run: list[int], start: int) -> str:
        """The text a run of ordinary ids gives (``""`` while it ends inside a character); the
        run starts at index `start` of `tokens.ids`."""
        if len(run) > REPRIME_AFTER and not self._pending:
            decoded = self._decode_run(run, start)
            if decoded is not None:
                return decoded
        decoded = self._stream.step(self._backend, run)
        if decoded is None:
            self._pending += run
            return ""
        self._pending = []
        if len(run) > REPRIME_AFTER:
            self._reprime(run[-CONTEXT_IDS:])
        return decoded

    def _decode_run(self, run: list[int], start: int) -> str | None:
        """A long run's text by one decode of it after the few ids before it, which is what
        `DecodeStream` gives for it (it decodes the run twice); None when that text ends
        inside a character or does not extend the context's (the stream then steps the run).
        """
        flushes = self.tokens._flushes
        context = self.tokens.ids[max(start - CONTEXT_IDS, flushes[-1] if flushes else 0) : start]
        backend = self._backend
        text = backend.decode(context + run, skip_special_tokens=False)
        head = backend.decode(context, skip_special_tokens=False) if context else ""
        if (
            len(text) <= len(head)
            or text.endswith("\ufffd")
            or head.endswith("\ufffd")
            or not text.startswith(head)
            or not self._reprime(run[-CONTEXT_IDS:])
        ):
            return None
        return text[len(head) :]

    def _reprime(self, context: list[int]) -> bool:
        """Continue decoding from a `DecodeStream` that holds only the last `context` ids;
        return whether it did.

        A `DecodeStream` re-decodes every id it stepped since its last text on its next step,
        so after a long run each following step (a control token, the next run) would cost the
        whole run again. Decoders are local (a character, a leading space or a word joint
        depends on the ids just before it), so the last few ids are context enough; the
        stream is kept when their text ends inside a character (U+FFFD), where a shorter
        context could read differently.
        """
        text = self._backend.decode(context, skip_special_tokens=False)
        if text and not text.endswith("\ufffd"):
            self._stream = self._new_stream(context)
            return True
        return False

    def flush(self) -> str:
        """Release everything held (bytes of an incomplete character decode as U+FFFD), and start
        decoding the next ids as a new text, as `decode` does for a generation given alone."""
        text = ""
        if self._pending:
            text = self._backend.decode(self._pending, skip_special_tokens=False)
        self._pending = []
        self._stream = self._new_stream()
        self.tokens._flushes.append(len(self.tokens.ids))
        return self._release(text, final=True)

    def _hold_back(self, text: str) -> int:
        """Where to cut `text` so that what follows the cut is the longest tail that could
        still grow into a control token's spelling (``len(text)``: nothing to hold); never
        inside a whole spelling, which is marked whole once the tail is decided."""
        if not self._longest_start:
            return len(text)
        for length in range(min(self._longest_start, len(text)), 0, -1):
            if text[-length:] in self._starts:
                cut = len(text) - length
                for match in self._pattern.finditer(text, max(0, cut - self._longest_start)):
                    if match.start() < cut < match.end():
                        return match.start()
                return cut
        return len(text)

    def _release(self, text: str, final: bool) -> str:
        """Hand out `text` after what is held, marking control-token spellings; unless `final`,
        keep back a tail that could still grow into one."""
        text = self._held + text
        self._held = ""
        pattern = self._pattern
        if not final:
            cut = self._hold_back(text)
            text, self._held = text[:cut], text[cut:]
        if not text:
            return ""
        if (
            pattern is None
            or (
                # a long text, few spellings: a plain search for each is quicker than the pattern
                len(text) > LONG_TEXT
                and len(self._spelled_forms) <= FEW_SPELLINGS
                and not any(spelling in text for spelling in self._spelled_forms)
            )
            or pattern.search(text) is None
        ):
            self._marked += len(text)
            return text
        out, last = [], 0
        for match in pattern.finditer(text):
            before = text[last : match.start()]
            out.append(before)
            self._marked += len(before)
            spelled = match.group()
            self.tokens.add_spelled(self._plain, self._marked, len(spelled))
            out.append(SPELLED_MARK.join(spelled))
            self._marked += 2 * len(spelled) - 1
            last = match.end()
        rest = text[last:]
        out.append(rest)
        self._marked += len(rest)
        return "".join(out)


class IdReader:
    """A parser's side of reading token ids: the prefix and each feed decoded to the text it
    scans, and its events and message handed back as read (see `ResponseParser`'s `tokenizer`).

    A parser given a tokenizer reads token ids, not text: `feed(ids)` and `finalize(ids)` take
    a list of ints, a 1-D numpy array or torch tensor, or one int, and text raises TypeError;
    the prefix may be text (encoded without special tokens added) or ids. A control token
    acts as a delimiter only when generated as its id: spelled out with ordinary tokens it
    stays text. Chunks, values and the message never show the marks used for that; positions
    are offsets in the decoded text, and events with positions also carry ``"tokens"``, the
    ``(first, past_last)`` token indices they cover.

    Args:
        tokenizer: a fast Hugging Face tokenizer.
        positions: whether the parser's events carry positions.
        feed_text: the parser's text `feed`, which scans the text the ids release.
    """

    def __init__(self, tokenizer: Any, positions: bool, feed_text: Callable[[str], list[dict]]):
        self.tokenizer = tokenizer
        self.feed_text = feed_text
        self.decoder = TokenDecoder(tokenizer)
        self.tokens = self.decoder.tokens
        self.positions = positions
        self.feed = self._one_id_at_a_time(self._feed_ids)

    def _one_id_at_a_time(self, feed_ids: Callable[[Any], list[dict]]) -> Callable:
        """`feed`, with the streaming case inline: one ordinary id, whose own text is known
        and holds no character a control token's spelling starts with, while nothing is held.
        Everything else goes to `feed_ids`. (One call per id instead of four: the ids of a
        generation come one at a time, and per id the rest costs little more than that.)"""
        decoder, feed_text = self.decoder, self.feed_text
        own_pieces, first_characters = decoder._own_pieces, decoder._first_characters
        ids_read, marks = decoder.tokens.ids, decoder.tokens._marks
        if own_pieces is None or self.positions:
            return feed_ids

        def feed(ids: Any) -> list[dict]:
            if ids.__class__ is list and len(ids) == 1 and ids[0].__class__ is int and not marks:
                text = own_pieces.get(ids[0])
                if (
                    text
                    and not decoder._pending
                    and not decoder._held
                    and first_characters.isdisjoint(text)
                ):
                    ids_read.append(ids[0])
                    decoder._read_by_own_text = len(ids_read)
                    decoder._marked += len(text)
                    return feed_text(text)
            return feed_ids(ids)

        return feed

    def prefix(self, prefix: Any) -> str | None:
        """The prefix (text, encoded without special tokens added, or ids) decoded as one text;
        None stays None (the parser says why a prefix is required).

        Raises:
            TypeError: a prefix that is neither text nor token ids.
        """
        if prefix is None:
            return None
        if isinstance(prefix, str):
            ids = self.tokenizer.encode(prefix, add_special_tokens=False) if prefix else []
        else:
            ids = token_id_list(prefix, "prefix")
        text = self.decoder.feed(ids) + self.decoder.flush()
        self.tokens.prefix_tokens = len(ids)
        return text

    def _feed_ids(self, ids: Any) -> list[dict]:
        """The parser's `feed` (as `feed`, which takes the streaming case inline): the next
        generated token ids; returns the events they settle.

        Raises:
            TypeError: text, or anything that is not token ids (`token_id_list`).
            RuntimeError, ResponseParseError: as `ResponseParser.feed` (the error's events
                as read).
        """
        if ids.__class__ is list and len(ids) == 1 and ids[0].__class__ is int:
            text = self.decoder.feed_one(ids[0])  # one id at a time: the streaming case
        else:
            text = self.decoder.feed(token_id_list(ids, "feed"))
        if not text:  # all held: an incomplete character or a possible spelling
            return self.feed_text(text)  # (the parser still says when it is finalized)
        try:
            events = self.feed_text(text)
        except ResponseParseError as error:
            self.as_read(error.events)
            raise
        if self.positions or self.tokens._marks:
            return self.as_read(events)
        return events

    def finalize(
        self, finalize_text: Callable[[str], tuple[dict, list[dict]]], last_ids: Any = ""
    ) -> tuple[dict, list[dict]]:
        """The parser's `finalize`: decode `last_ids` (optional) and all that is held, and end
        the stream with `finalize_text` (the parser's finalize of text).

        Raises:
            TypeError: `last_ids` is not token ids.
            RuntimeError, ResponseParseError: as `ResponseParser.finalize`.
        """
        text = "" if isinstance(last_ids, str) and not last_ids else None
        if text is None:
            text = self.decoder.feed(token_id_list(last_ids, "finalize"))
        try:
            message, events = finalize_text(text + self.decoder.flush())
        except ResponseParseError as error:
            self.as_read(error.events)
            raise
        return self.as_read_message(message), self.as_read(events)

    def as_read(self, events: list[dict]) -> list[dict]:
        """`events` without the marks of spelled-out control tokens, and with positions as
        offsets in the decoded text plus ``"tokens"``, the ``(first, past_last)`` token indices
        they cover; changed in place and returned."""
        tokens = self.tokens
        if not tokens.any_spelled and not self.positions:
            return events
        for event in events:
            if "text" in event:
                event["text"] = strip_marks(event["text"])
            if "value" in event:
                event["value"] = strip_marks(event["value"])
            if "start" in event:
                event["start"], event["end"] = (
                    tokens.plain(event["start"]),
                    tokens.plain(event["end"]),
                )
                event["tokens"] = tokens.token_range(event["start"], event["end"])
        return events

    def as_read_message(self, message: dict, events: list[dict] = ()) -> dict:
        """The finished message without the marks of spelled-out control tokens (and its final
        `events` as read, in place)."""
        self.as_read(events)
        return strip_marks(message) if self.tokens.any_spelled else message
