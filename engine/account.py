"""The account of a parse: where every character went, and a warning wherever that is doubtful.

Every character of a generation ends up in one of three places: a value of the message, a
delimiter (or the whitespace around one) that the template consumed, or a warning that says
where and why. The parser's regions already put text in values and delimiters; `Account`
checks each region once, when it closes (never per chunk), against the template's own
vocabulary, and against the tools the parser was given:

- the vocabulary is the literal text of the template's delimiters and tag patterns, read from
  the compiled template (`Vocabulary`): every text of three characters or more that holds a
  character other than a letter, a digit or a blank (so a plain word is never looked for);
- ``near-miss``: text of a region (a value, or the implicit field's text) that is one or two
  edits away from a vocabulary text but is not one: a misspelt delimiter, which matched
  nothing and stayed in a value;
- ``delimiter-in-value``: a vocabulary text inside a string value of a tool call, and
  ``markup-in-value``: an argument value that its own tag pattern matches again (markers
  of a nested value left raw);
- ``text-not-read`` and ``arguments-empty``: text of a tag-style region that no tag matched
  and that reads as an argument (a tag without its close, a value holding its own close);
- ``call-name-invalid``, ``call-name-unknown``: a call name that is not a name, or is not
  among the tools given;
- ``call-in-content``: a declared tool's name with one of its parameter names in the
  implicit field's text: a call the template did not read;
- ``call-in-region``: a region (reasoning) that holds a tool call's open and closes later:
  the lookahead of its close pattern ended it at the call, and its own close came later and
  stayed in the implicit field's text (a call drafted in the reasoning is then read as a
  call, and the real one after it a second time). A region whose own close ends it after a
  drafted call keeps the draft as its text, which is the right reading: no warning;
- ``region-unclosed``: a region the end of the stream ended (its close never came) that
  swallowed another field's delimiter text;

Warnings are facts about the regions, which are the same in every chunking, so they are
the same in every chunking too. Their offsets are stream offsets (see `engine.parser`).
"""

from __future__ import annotations

import re
import re._constants as sre_constants
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import regex

from .content import tag_matches
from .delimiters import DelimiterMatch
from .pattern_shapes import read_pattern
from .template import FieldSpec, ResponseTemplate

# Every code a `ParseWarning` may carry (docs/library.md says what each means).
WARNING_CODES = (
    "near-miss",
    "delimiter-in-value",
    "markup-in-value",
    "text-not-read",
    "arguments-empty",
    "call-name-invalid",
    "call-name-unknown",
    "call-in-content",
    "call-in-region",
    "region-unclosed",
)
# Content parsers whose regions are read tag by tag (their `_tag_re`), so text may be left over.
TAGGED_CONTENT = ("xml-inline", "kv-lines")
# Content parsers whose syntax says where each value ends (a string's quotes): a delimiter text
# inside one of their values was written there, not left by a cut in the wrong place.
SELF_DELIMITING_CONTENT = ("json", "python-call-list")
# Vocabulary texts shorter than this have no near misses (too many ordinary texts are that close).
SHORTEST_NEAR_MISS = 5
# Vocabulary texts this long or longer may have two edits in a near miss; shorter ones one
# (or two neighbouring characters swapped, which any may have).
TWO_EDITS_FROM = 12
# A region longer than twice this is searched for near misses on its first and last this many
# characters only (where a misspelt close or open of a long region sits, and a bound on the cost).
NEAR_MISS_SPAN = 8_192
# Seconds one regex call of the account may take (its finds are then left out).
ACCOUNT_REGEX_SECONDS = 0.05
# Characters of found text quoted in a warning.
QUOTED = 60
# Warnings one parse keeps at most (the first ones, in stream order of region closes).
MAX_WARNINGS = 100

# A call name: letters, digits, `_`, `-`, `.`, `:` and `/`, starting with a letter, digit or `_`.
CALL_NAME = regex.compile(r"[^\W][\w.:/-]*")
# A tag of markup (`<...>`): what a tag-style region's leftover text may hold besides arguments.
_MARKUP_TAG = regex.compile(r"<[^<>]*>")


@dataclass(frozen=True)
class ParseWarning:
    """Text the parse put somewhere it probably does not belong, or a value that looks wrong.

    Attributes:
        code: a stable name (see the module docstring and docs/library.md).
        message: what was seen, where, and what it usually means.
        field: the field of the region it was seen in, or None.
        start, end: stream offsets of the text it is about.
    """

    code: str
    message: str
    field: str | None
    start: int
    end: int

    def __str__(self) -> str:
        return self.message

    def to_dict(self) -> dict:
        return {
            "code": self.code,
            "message": self.message,
            "field": self.field,
            "start": self.start,
            "end": self.end,
        }


@dataclass(frozen=True)
class Word:
    """One text of the template's vocabulary: `text` and the template key it comes from."""

    text: str
    path: str


def literal_runs(compiled: regex.Pattern) -> list[str]:
    """The runs of literal characters in `compiled`'s pattern (in groups, alternatives and
    lookaheads too), in the order written; [] when the pattern cannot be read."""
    tree = read_pattern(compiled)
    if tree is None:
        return []
    runs: list[str] = []

    def walk(items, lead: str = "") -> None:
        # `lead`: literal text just before these items (the standard parser moves the common
        # start of alternatives before them: `<a>|<b>` reads as `<` then `a>|b>`).
        run: list[str] = [lead] if lead else []
        for op, av in items:
            if op is sre_constants.LITERAL:
                run.append(chr(av))
                continue
            if op is sre_constants.BRANCH:
                for branch in av[1]:
                    walk(branch, "".join(run))
                run = []
                continue
            if run:
                runs.append("".join(run))
                run = []
            if op is sre_constants.SUBPATTERN:
                walk(av[3])
            elif op is sre_constants.ASSERT:
                walk(av[1])
            elif op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT) and av[0] >= 1:
                walk(av[2])
        if run:
            runs.append("".join(run))

    walk(tree.parsed)
    return runs


def _markup(texts) -> list[str]:
    """The texts (stripped) of three characters or more holding a character that is neither a
    letter, a digit nor a blank."""
    found = []
    for text in texts:
        text = text.strip()
        if len(text) >= 3 and any(not (c.isalnum() or c.isspace()) for c in text):
            found.append(text)
    return found


def _delimiter_texts(delimiter) -> list[str]:
    if delimiter is None:
        return []
    if delimiter.literals is not None:
        return _markup(delimiter.literals)
    return _markup(literal_runs(delimiter.pattern))


class Vocabulary:
    """The template's own texts, read once per template (`vocabulary_of`).

    Attributes:
        words: every vocabulary text with its template key, each text once.
        texts: the texts alone (a set, for exact lookups).
        closes: field name -> the texts of its close delimiter.
        tags: field name -> the texts of its tag pattern (tag-style fields).
        near: (word, compiled fuzzy pattern) for each text that may have near misses: long
            enough, and starting as markup does (not with a letter or digit: a piece of a
            pattern such as `name="` is not a delimiter of its own).
    """

    def __init__(self, template: ResponseTemplate):
        words: dict[str, Word] = {}
        self.closes: dict[str, list[str]] = {}
        self.tags: dict[str, list[str]] = {}
        anchor = template.start_anchor
        for text in _delimiter_texts(anchor):
            words.setdefault(text, Word(text, anchor.path))
        for spec in template.fields.values():
            for delimiter in (spec.open, spec.close):
                for text in _delimiter_texts(delimiter):
                    words.setdefault(text, Word(text, delimiter.path))
            self.closes[spec.name] = _delimiter_texts(spec.close)
            tag_re = spec.content_args.get("_tag_re") if spec.content in TAGGED_CONTENT else None
            if tag_re is not None:
                self.tags[spec.name] = _markup(literal_runs(tag_re))
                for text in self.tags[spec.name]:
                    words.setdefault(text, Word(text, f"{spec.path}.content_args.tag_pattern"))
        self.words = list(words.values())
        self.texts = frozenset(words)
        self.near = [
            NearWord(word, _edits(word.text), _fuzzy(word.text), _pieces(word.text))
            for word in self.words
            if len(word.text) >= SHORTEST_NEAR_MISS and not word.text[0].isalnum()
        ]
        # The characters a near miss may start with: the first characters of `near`'s words.
        self.first_characters = "".join(sorted({near.word.text[0] for near in self.near}))
        # Any piece of any word: a text this does not find holds no near miss (one C scan).
        pieces = sorted({piece for near in self.near for _, piece in near.pieces}, key=len)
        self.any_piece = (
            re.compile("|".join(re.escape(piece) for piece in reversed(pieces))) if pieces else None
        )

    def exact_at(self, text: str, position: int) -> bool:
        """Whether a vocabulary text starts at `position` of `text`."""
        return any(text.startswith(word, position) for word in self.texts)


def _edits(text: str) -> int:
    return 2 if len(text) >= TWO_EDITS_FROM else 1


def _fuzzy(text: str) -> regex.Pattern:
    """`text` with up to `_edits(text)` edits (insertions, deletions, substitutions), or two
    neighbouring characters swapped, as one pattern (the closest reading first)."""
    swaps = {
        text[:i] + text[i + 1] + text[i] + text[i + 2 :]
        for i in range(len(text) - 1)
        if text[i] != text[i + 1]
    }
    fuzzy = f"(?:{regex.escape(text)}){{e<={_edits(text)}}}"
    return regex.compile(
        "(?b)" + "|".join([*(regex.escape(swap) for swap in sorted(swaps)), fuzzy]),
        cache_pattern=False,
    )


def _pieces(text: str) -> tuple[tuple[int, str], ...]:
    """(offset, piece) of texts one of which every near miss of `text` holds whole: with k
    edits, one of k + 1 even pieces is untouched (two swapped neighbours count as one edit
    here: a swap that straddles the cut between two pieces is the one slip not found)."""
    count = _edits(text) + 1
    size, extra = divmod(len(text), count)
    cuts, at = [0], 0
    for index in range(count):
        at += size + (1 if index < extra else 0)
        cuts.append(at)
    return tuple((start, text[start:end]) for start, end in zip(cuts, cuts[1:]) if end > start)


@dataclass(frozen=True)
class NearWord:
    """A vocabulary text that may have near misses: its edits allowed, its fuzzy pattern and
    the pieces one of which a near miss holds whole (`_pieces`)."""

    word: Word
    edits: int
    fuzzy: regex.Pattern
    pieces: tuple[tuple[int, str], ...]


_VOCABULARIES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def vocabulary_of(template: ResponseTemplate) -> Vocabulary:
    """The `Vocabulary` of `template`, read once and kept while the template lives."""
    found = _VOCABULARIES.get(template)
    if found is None:
        found = _VOCABULARIES[template] = Vocabulary(template)
    return found


@dataclass(frozen=True)
class NearMiss:
    """Text at `[start, end)` of a searched text that is close to `word` but is not it."""

    word: Word
    start: int
    end: int
    text: str


def near_misses(vocabulary: Vocabulary, text: str, timeout: float | None) -> list[NearMiss]:
    """The near misses of vocabulary texts in `text`, in text order, one per place.

    A near miss starts with its word's first character and ends with its last, is one edit
    away (two for words of `TWO_EDITS_FROM` characters or more) or has two neighbouring
    characters swapped, and is no vocabulary text itself (so a close is never a near miss of
    its own open).

    Cost: only the places near an exact piece of a word (`_pieces`, found with `str.find`) are
    tried, and there only that word's fuzzy pattern, so a text holding no piece of any word
    costs a few scans at C speed."""
    if vocabulary.any_piece is None or vocabulary.any_piece.search(text) is None:
        return []
    best: dict[int, tuple[tuple, NearMiss]] = {}
    for near in vocabulary.near:
        target, edits = near.word.text, near.edits
        first, last, length = target[0], target[-1], len(target)
        tail, reach = length - 1 - edits, length + edits
        tried: set[int] = set()
        for offset, piece in near.pieces:
            at = text.find(piece)
            while at >= 0:
                low, high = at - offset - edits, at - offset + edits + 1
                start = text.find(first, low if low > 0 else 0, high)
                while start >= 0:
                    # A near miss ends with the word's last character, within `edits` of
                    # where the word would end: most places fail this at once.
                    if start not in tried and last in text[start + tail : start + reach]:
                        tried.add(start)
                        found = _near_miss_at(near, text, start, length, last, timeout)
                        if found is not None and (start not in best or found[0] < best[start][0]):
                            best[start] = found
                    start = text.find(first, start + 1, high)
                at = text.find(piece, at + 1)
    kept: list[NearMiss] = []
    for position in sorted(best):
        miss = best[position][1]
        if miss.text in vocabulary.texts or vocabulary.exact_at(text, position):
            continue
        if not kept or position >= kept[-1].end:  # one per place: not inside the one before
            kept.append(miss)
    return kept


def _near_miss_at(
    near: NearWord, text: str, position: int, length: int, last: str, timeout: float | None
) -> tuple[tuple, NearMiss] | None:
    """(rank, near miss) of `near`'s word at `position` of `text`, or None."""
    edits = near.edits
    window = position + length + edits
    try:
        match = near.fuzzy.match(text, position, window, timeout=timeout)
    except TimeoutError:
        return None
    if match is None:
        return None
    got = match.group()
    if got == near.word.text or got[-1] != last or len(got) < length - edits:
        return None
    used = sum(match.fuzzy_counts) if match.fuzzy_counts != (0, 0, 0) else 1
    if used > edits:
        return None
    return (used, -length), NearMiss(near.word, position, match.end(), got)


def _bounded_near_misses(
    vocabulary: Vocabulary, text: str, timeout: float | None
) -> list[NearMiss]:
    """`near_misses` of `text`, or of its first and last `NEAR_MISS_SPAN` characters when it is
    longer than twice that: the cost of a region's check stays bounded however long it is."""
    if len(text) <= 2 * NEAR_MISS_SPAN:
        return near_misses(vocabulary, text, timeout)
    tail_start = len(text) - NEAR_MISS_SPAN
    head = near_misses(vocabulary, text[:NEAR_MISS_SPAN], timeout)
    tail = near_misses(vocabulary, text[tail_start:], timeout)
    return head + [
        NearMiss(miss.word, miss.start + tail_start, miss.end + tail_start, miss.text)
        for miss in tail
    ]


def _quoted(text: str) -> str:
    return repr(text if len(text) <= QUOTED else text[:QUOTED] + "…")


def _strings(value: Any) -> Iterator[str]:
    """Every string inside `value` (keys excluded), depth first."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, (list, tuple)):
            stack.extend(reversed(item))


def calls_of(value: Any) -> Iterator[dict]:
    """The function dicts (`{"name": ..., "arguments": ...}`) of a tool call field's value."""
    if isinstance(value, list):
        for item in value:
            yield from calls_of(item)
    elif isinstance(value, dict):
        function = value.get("function")
        if isinstance(function, dict):
            yield function
        elif "name" in value:
            yield value


def _argument_strings(value: Any) -> Iterator[str]:
    """The strings inside the arguments of the calls of `value` (the whole value when it holds
    no call)."""
    calls = list(calls_of(value))
    if not calls:
        yield from _strings(value)
        return
    for call in calls:
        yield from _strings(call.get("arguments"))


class Account:
    """Checks each region of one parse as it closes; its findings are `warnings`.

    Args:
        template: the loaded template.
        tools: tool name -> parameter schemas (`tool_typing.tool_parameter_schemas`); {} when
            no tools were given (then call names are only checked to be names).

    Attributes:
        warnings: the `ParseWarning`s found so far, in the order their regions closed.
        timeout: seconds each regex call of the account may take, or None (the parser's
            per-call budget).
    """

    __slots__ = ("template", "tools", "vocabulary", "warnings", "timeout", "closed_early")

    def __init__(self, template: ResponseTemplate, tools: dict[str, dict], timeout=None):
        self.template = template
        self.tools = tools
        self.vocabulary = vocabulary_of(template)
        self.warnings: list[ParseWarning] = []
        self.closed_early: set[str] = set()  # fields a zero-width close (a lookahead) ended
        self.timeout = ACCOUNT_REGEX_SECONDS if timeout is None else timeout

    def _warn(self, code: str, message: str, field: str | None, start: int, end: int) -> None:
        if len(self.warnings) < MAX_WARNINGS:
            self.warnings.append(ParseWarning(code, message, field, start, end))

    def closed(
        self,
        field: FieldSpec,
        body: str,
        value: Any,
        region_start: int,
        body_start: int,
        end: int,
        close: DelimiterMatch | None,
    ) -> None:
        """Account for a region that closed with `value` (its `body` started at stream offset
        `body_start`; the region spans `[region_start, end)`). `close` is the close delimiter's
        match, or None when no close ended the region (the end of the stream, or for the
        implicit field the next region's open)."""
        name = field.name
        where = "the text" if field.implicit else f"the {name} region"
        if close is not None and close.start == close.end and not field.implicit:
            self.closed_early.add(name)
        if not body.strip():
            return
        if close is None and not field.implicit and field.close is not None:
            self._unclosed(field, body, region_start, body_start, end)
        # A JSON body that parsed holds only what the model wrote as values: no near miss there.
        searched = "" if field.content in SELF_DELIMITING_CONTENT else body
        for miss in _bounded_near_misses(self.vocabulary, searched, self.timeout):
            self._warn(
                "near-miss",
                f"{_quoted(miss.text)} at stream offset {body_start + miss.start} in {where} is a "
                f"near miss of {_quoted(miss.word.text)} ({miss.word.path}): it matched nothing, so "
                f"it stayed in {name}",
                name,
                body_start + miss.start,
                body_start + miss.end,
            )
        if field.implicit:
            self._content(field, body, body_start)
            return
        if field.is_tool_call:
            self._tool_call(field, body, value, body_start, region_start, end)

    def _unclosed(
        self, field: FieldSpec, body: str, region_start: int, body_start: int, end: int
    ) -> None:
        """``region-unclosed``: a region the end of the stream ended that holds another field's
        delimiter text: its close never came, so it swallowed what followed. (A region cut only
        by the end, a close the server's stop stripped, is no warning.)"""
        own = set(_delimiter_texts(field.open)) | set(_delimiter_texts(field.close))
        own |= set(self.vocabulary.tags.get(field.name, []))
        for word in self.vocabulary.words:
            if any(word.text in text for text in own):
                continue
            at = body.find(word.text)
            if at < 0:
                continue
            self._warn(
                "region-unclosed",
                f"the {field.name} region opened at stream offset {region_start} never closed "
                f"({field.close.path}, {_quoted(field.close.source)}): the end of the stream ended "
                f"it, and it swallowed {_quoted(word.text)} ({word.path}) at stream offset "
                f"{body_start + at}",
                field.name,
                body_start + at,
                body_start + at + len(word.text),
            )
            return

    # -- the implicit field's text ----------------------------------------------------------

    def _content(self, field: FieldSpec, body: str, body_start: int) -> None:
        for other in sorted(self.closed_early):
            for text in self.vocabulary.closes.get(other, []):
                at = body.find(text)
                if at < 0:
                    continue
                self._warn(
                    "call-in-region",
                    f"{_quoted(text)} at stream offset {body_start + at}, the close of {other} "
                    f"({self.template.fields[other].close.path}), is in {field.name}: {other} "
                    "was ended earlier by the lookahead of its close pattern (a call opened inside "
                    "it), and its own close came later",
                    field.name,
                    body_start + at,
                    body_start + at + len(text),
                )
                break
        for tool, parameters in self.tools.items():
            at = _word_at(body, tool)
            if at < 0:
                continue
            rest = body[at + len(tool) :]
            named = [key for key in parameters if _word_at(rest, key) >= 0]
            if parameters and not named:
                continue
            self._warn(
                "call-in-content",
                f"the tool {tool!r} is named at stream offset {body_start + at} in {field.name}"
                + (f", with its parameter {named[0]!r}" if named else "")
                + ": a call the template did not read as one stays text there",
                field.name,
                body_start + at,
                body_start + at + len(tool),
            )

    # -- a tool call --------------------------------------------------------------------

    def _tool_call(
        self, field: FieldSpec, body: str, value: Any, body_start: int, region_start: int, end: int
    ) -> None:
        name = field.name
        for call in calls_of(value):
            called = call.get("name")
            if not isinstance(called, str) or not CALL_NAME.fullmatch(called):
                self._warn(
                    "call-name-invalid",
                    f"the call in the {name} region at stream offset {region_start} is named "
                    f"{_quoted(str(called))}, which is not a name: the call was written in another "
                    "syntax than the template reads",
                    name,
                    region_start,
                    end,
                )
            elif self.tools and called not in self.tools:
                self._warn(
                    "call-name-unknown",
                    f"the call in the {name} region at stream offset {region_start} is named "
                    f"{called!r}, which is not among the tools given ({', '.join(sorted(self.tools))})",
                    name,
                    region_start,
                    end,
                )
        tag_re = field.content_args.get("_tag_re") if field.content in TAGGED_CONTENT else None
        if tag_re is not None and len(body) <= 4 * NEAR_MISS_SPAN:  # a bound on the cost
            self._leftover(field, tag_re, body, value, body_start)
        if field.content not in SELF_DELIMITING_CONTENT:
            self._values(field, value, body, body_start, tag_re)

    def _leftover(
        self, field: FieldSpec, tag_re: regex.Pattern, body: str, value: Any, body_start: int
    ) -> None:
        """Text of a tag-style region that no tag matched, when it reads as an argument."""
        standard = field.content_args.get("_tag_re_std") is not None
        try:
            # The content parser's own search, bounded where a tag never closes.
            found = tag_matches(body, field.content_args, None if standard else self.timeout)
            tags = [(m.start(), m.end()) for m in found]
        except TimeoutError:
            return
        at, pieces = 0, []
        for start, stop in tags + [(len(body), len(body))]:
            if start > at:
                pieces.append((at, body[at:start]))
            at = max(at, stop)
        tag_texts = self.vocabulary.tags.get(field.name, [])
        for offset, piece in pieces:
            found = next(
                ((piece.find(text), text) for text in tag_texts if text in piece),
                None,
            )
            if found is None:
                words = _MARKUP_TAG.sub("", piece)
                if not any(c.isalnum() for c in words):
                    continue
                found = (len(piece) - len(piece.lstrip()), piece.strip())
            at_piece, text = found
            start = body_start + offset + at_piece
            empty = not tags
            self._warn(
                "arguments-empty" if empty else "text-not-read",
                f"{_quoted(piece.strip())} at stream offset {start} in the {field.name} region "
                f"was not read by {field.path}.content_args.tag_pattern"
                + (
                    ", so the call has no arguments although its text has some"
                    if empty
                    else ": an argument without its close, or a value holding its own close, was dropped"
                ),
                field.name,
                start,
                body_start + offset + len(piece),
            )
            return

    def _values(self, field: FieldSpec, value: Any, body: str, body_start: int, tag_re) -> None:
        """Vocabulary texts, or whole tags of the field's own tag pattern, inside string values."""
        texts = self.vocabulary.texts
        for string in _argument_strings(value):
            if not string:
                continue
            word = next((text for text in texts if text in string), None)
            if word is not None:
                at = body.find(word)
                start = body_start + max(at, 0)
                self._warn(
                    "delimiter-in-value",
                    f"a value of the {field.name} region holds {_quoted(word)}, a delimiter text of "
                    f"the template, at stream offset {start}: the region's text was cut in the "
                    f"wrong place (value {_quoted(string)})",
                    field.name,
                    start,
                    start + len(word),
                )
                return
            if tag_re is not None:
                try:
                    nested = tag_re.search(string, timeout=self.timeout)
                except TimeoutError:
                    return
                if nested is not None:
                    at = body.find(nested.group())
                    start = body_start + max(at, 0)
                    self._warn(
                        "markup-in-value",
                        f"a value of the {field.name} region holds {_quoted(nested.group())}, which "
                        f"{field.path}.content_args.tag_pattern reads as a tag: markers of a nested "
                        f"value were left raw (value {_quoted(string)})",
                        field.name,
                        start,
                        start + len(nested.group()),
                    )
                    return


def _word_at(text: str, word: str) -> int:
    """Where `word` first occurs in `text` as a whole word (not inside a longer name), or -1."""
    at = text.find(word)
    while at >= 0:
        before = text[at - 1] if at else " "
        after = text[at + len(word)] if at + len(word) < len(text) else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            return at
        at = text.find(word, at + 1)
    return -1
