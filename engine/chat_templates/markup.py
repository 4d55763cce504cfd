"""Template inference, text: markup tokens in rendered text, and patterns built from that text.

A chat template writes its markers as markup tokens (`<...>`, `<|...|>`, `[...]` around a
name, brackets of other scripts); everything inference compares is cut at their
boundaries. This module holds what every part of inference reads text with:

* `MARKUP_TOKEN`, `shared_start`, `shared_end`, `difference`: tokens, and what renders share;
* openers and closers: `closing_forms`, `word_closing_forms`, `closes`, `marker_pairs`,
  `split_block`, `opening_forms`;
* patterns from rendered text: `rendered_text_pattern` (blanks match any blanks, and blanks
  are allowed between two adjacent markup tokens; each literal piece is written by
  `engine.pattern_shapes.pattern_literal`).

Nothing here knows a model family: it reads the shape of text, never a marker's name.
"""

from __future__ import annotations

import json

import regex

from ..pattern_shapes import pattern_literal
from .render import common_suffix_length, token_boundary
from .turns import common_length

# The markup tokens chat templates write: <...> (also <|...|>, <<...>> and full-width forms) and
# [...] around a name (not a JSON list).
MARKUP_TOKEN = regex.compile(
    r"<<?[^<>\s][^<>\n]{0,80}>>?|\[\[?[A-Za-z_/][^\[\]\n\"]{0,80}\]\]?"
    # brackets and quotes of other scripts (not ASCII's): a marker between a pair, or one alone
    r"|(?![(){}\[\]])[\p{Ps}\p{Pi}][^\s\p{Ps}\p{Pi}\p{Pe}\p{Pf}]{0,40}[\p{Pe}\p{Pf}]|(?![(){}\[\]])[\p{Ps}\p{Pi}\p{Pe}\p{Pf}]"
)


def shared_start(texts: list[str]) -> str:
    """The longest start every text shares, cut back to where each text has a token boundary (or ends)."""
    first = texts[0]
    size = min(common_length(first, other) for other in texts)
    # A boundary in every text: a shared "<" that starts different tags is not shared.
    while size and not all(size == len(text) or token_boundary(text, size) for text in texts):
        size -= 1
    return first[:size]


def shared_end(texts: list[str]) -> str:
    """The longest end every text shares, from a token boundary of the first."""
    first = texts[0]
    size = min(common_suffix_length(first, other) for other in texts)
    start = len(first) - size
    while 0 < start < len(first) and not token_boundary(first, start):
        start += 1
    return first[start:]


def difference(a: str, b: str) -> tuple[tuple[int, int], tuple[int, int]]:
    """Where `a` and `b` differ: the span of each between their common start and common end,
    widened to whole markup tokens."""
    start = 0
    limit = min(len(a), len(b))
    while start < limit and a[start] == b[start]:
        start += 1
    end = 0
    while end < limit - start and a[-1 - end] == b[-1 - end]:
        end += 1
    while 0 < start < len(a) and not token_boundary(a, start):
        start -= 1
    while end > 0 and len(a) - end > start and not token_boundary(a, len(a) - end):
        end -= 1
    return (start, len(a) - end), (start, len(b) - end)


# -- openers and closers -------------------------------------------------------------------


def closing_forms(opener: str) -> list[str]:
    """The closing forms of a markup opener, most common first: a slash after its first
    punctuation, or its delimiters mirrored."""
    token = MARKUP_TOKEN.fullmatch(opener)
    if token is None:
        return []
    head = regex.match(r"^([<\[][^\w\s]*)(.*?)([^\w\s]*[>\]])$", opener)
    if head is None:
        return []
    left, word, right = head.groups()
    found = [f"{left}/{word}{right}"]
    if left != right[::-1] and len(left) > 1:
        found.append(f"{left[0]}{word}{left[1:][::-1]}{right[-1]}")
    return list(dict.fromkeys(found))


def opening_forms(closer: str) -> list[str]:
    """The openers whose closing form `closer` is (a closer found alone, in a chat template's
    source or a tokenizer's vocabulary, proposes them)."""
    head = regex.match(r"^([<\[][^\w\s]*)/(.*)$", closer)
    if head is None or MARKUP_TOKEN.fullmatch(closer) is None:
        return []
    opener = head.group(1) + head.group(2)
    return [opener] if closer in closing_forms(opener) else []


def _words(token: str) -> list[str]:
    """The runs of word characters of `token` (``<|x_end|>`` -> ``["x_end"]``)."""
    return regex.sub(r"[^\w]", " ", token).split()


# The words that name a marker's opening and closing forms (``<|x_start|>`` and ``<|x_end|>``),
# opening word -> closing word. Nothing else pairs two names: ``<|x_3|>`` and ``<|x_7|>`` are
# numbered tokens, and ``<|x_start|>`` and ``<|x_sep|>`` two markers that do not pair.
OPEN_CLOSE_WORDS = {"start": "end", "begin": "end", "open": "close"}


def word_closing_forms(opener: str) -> list[str]:
    """The closers of a markup token named by an opening word: its name (one run of word
    characters, at least two ``_``-separated words) with its first or last word, one of
    `OPEN_CLOSE_WORDS`, swapped for the closing word in the same case (``<|x_begin|>`` ->
    ``<|x_end|>``, ``<|START_X|>`` -> ``<|END_X|>``). [] for any other token."""
    words = _words(opener)
    if len(words) != 1 or MARKUP_TOKEN.fullmatch(opener) is None:
        return []
    name = words[0]
    parts = name.split("_")
    if len(parts) < 2:
        return []
    found = []
    for index in (0, len(parts) - 1):
        closing = OPEN_CLOSE_WORDS.get(parts[index].lower())
        if closing is None:
            continue
        written = parts[index]
        closing = (
            closing.upper()
            if written.isupper()
            else closing.title()
            if written.istitle()
            else closing
        )
        swapped = [*parts[:index], closing, *parts[index + 1 :]]
        found.append(opener.replace(name, "_".join(swapped), 1))
    return found


def closes(opener: str, closer: str) -> bool:
    """Whether markup token `closer` reads as the closing one of `opener`: one of its closing
    forms (`closing_forms`), or the same name with its opening word swapped for the closing
    one (`word_closing_forms`: ``<|x_begin|>`` and ``<|x_end|>``). A slash alone is not enough:
    ``</x>`` closes ``<x>``, never a turn's header such as ``<|assistant|>``; and names that
    differ in another word (a number: ``<|token_3|>``, ``<|token_7|>``) never pair."""
    return closer != opener and (
        closer in closing_forms(opener) or closer in word_closing_forms(opener)
    )


def marker_pairs(markers: list[str], *, lone_closers: bool = False) -> list[tuple[str, str]]:
    """(opener, closer) for every two of `markers` that pair (see `closes`), in the order of the
    openers (each first found), without repeats.

    One pass: the markers go into a dict, and each one's closing forms are looked up in it, so
    the cost is linear in the number of markers (a tokenizer holds thousands of reserved
    tokens). With `lone_closers`, a closer whose opener is not among `markers` proposes its
    opening form too (`opening_forms`), after the pairs found whole."""
    present = dict.fromkeys(markers)
    pairs = [
        (opener, closer)
        for opener in present
        for closer in (*closing_forms(opener), *word_closing_forms(opener))
        if closer != opener and closer in present
    ]
    if lone_closers:
        pairs += [(opener, closer) for closer in present for opener in opening_forms(closer)]
    return list(dict.fromkeys(pairs))


def split_block(text: str, needle: regex.Pattern) -> tuple[str, str] | None:
    """(opener, closer) when `text` is an empty block: an opener (a markup token, maybe with text
    after it) and a markup token that closes it (see `closes`). Text matching `needle` (a
    message's text) is never a pre-written block."""
    tokens = list(MARKUP_TOKEN.finditer(text))
    if (
        len(tokens) < 2
        or tokens[-1].end() != len(text)
        or tokens[0].start() != 0
        or needle.search(text)
    ):
        return None
    opener = text[: tokens[-1].start()].strip()
    starts = [token.group() for token in tokens[:-1]]
    if not any(closes(start, tokens[-1].group()) for start in starts):
        return None
    return opener, tokens[-1].group()


def last_block_start(opening: str) -> str:
    """The reasoning opener: the last run of text without blanks before the reasoning (what comes
    before it, such as the turn's own markers, is not part of the opener)."""
    return opening.split()[-1] if opening.split() else opening


def without_block(text: str, opener: str, closer: str) -> str:
    """`text` without an opener ... closer block in it (reasoning written empty)."""
    start = text.find(opener)
    end = text.find(closer, start + len(opener)) if start >= 0 else -1
    if start < 0 or end < 0:
        return text.replace(opener, "", 1) if start >= 0 else text
    return text[:start] + text[end + len(closer) :]


def mostly_text(text: str) -> bool:
    """True for plain words (no markup): not a marker the model writes."""
    return not MARKUP_TOKEN.search(text) and not regex.search(r"[^\w\s]", text)


def prompt_end(prompt: str, needle: str) -> str:
    """What the prompt ends with after the last `needle`: its last markup token (when only blanks
    follow it), else everything from its first markup token."""
    at = prompt.rfind(needle)
    tail = prompt[at + len(needle) :] if at >= 0 else prompt[-80:]
    tokens = list(MARKUP_TOKEN.finditer(tail))
    if not tokens:
        return tail.strip()
    if tail[tokens[-1].end() :].strip():
        return tail[tokens[0].start() :]
    # The last marker: the turns before it are rendered differently by other stacks.
    return tokens[-1].group()


# -- patterns from rendered text --------------------------------------------------------------


def token_joints(text: str) -> list[int]:
    """Offsets where one markup token of `text` ends and the next starts, with nothing between."""
    tokens = list(MARKUP_TOKEN.finditer(text))
    return [a.end() for a, b in zip(tokens, tokens[1:]) if a.end() == b.start()]


def rendered_text_pattern(text: str) -> str:
    """A regex for rendered `text` as a model may write it: whitespace runs match any
    whitespace, and blanks are allowed between two markup tokens the render writes side by
    side (models break lines there)."""
    joints = token_joints(text)
    pieces: list[str] = []
    for start, end in zip([0, *joints], [*joints, len(text)]):
        for piece in regex.split(r"(\s+)", text[start:end]):
            if piece:
                pieces.append(r"\s*" if piece.isspace() else pattern_literal(piece))
        if end in joints:
            pieces.append(r"\s*")
    return "".join(pieces)


def plain(text: str) -> str:
    """`text` for a sentence: line breaks written as \\n."""
    return text.replace("\n", "\\n")


def show_text(text: str, limit: int = 80) -> str:
    """`text` quoted for a sentence, cut to `limit` characters."""
    quoted = json.dumps(text, ensure_ascii=False)
    return quoted if len(quoted) <= limit else quoted[: limit - 4] + '..."'
