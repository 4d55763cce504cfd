"""Delimiters: finding an open or close marker in streamed text, and knowing when a find is final.

A delimiter is a set of literals or one regex. Scanning the undecided text
of the stream answers two questions at once:

* the earliest match that is *final*: no continuation of the stream could
  move it, lengthen it or change its captures, so committing it now gives
  the same result as parsing the whole text in one shot (SPEC.md D2);
* the *hold position*: the leftmost offset from which the text may still be
  (part of) this delimiter. Text before it can be emitted; text from it on
  is held until more input, or the end of the stream, decides.

Literal sets use `str.find` and a tail check. Regexes use the `regex`
module's partial matching plus two probes, because a plain partial search
misses three cases: a complete match found later hides an earlier partial
one; a match whose higher-priority alternative ran into the end of the text
(`abcd|ab` on `...abc`, a greedy optional group, a lookahead) could still
change; and end-of-text assertions (`$`, `\\b`) are decided by the next
character. The first two are caught with `(?:P)(?!)` and `(?:P)(*PRUNE)(?!)`
under partial matching, the third by re-matching with two different
following characters.
"""

from __future__ import annotations

import itertools
import re
import re._constants as sre_constants
import re._parser as sre_parser
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import regex

from .errors import PatternTimeoutError, shorten
from .re_equivalent import NOT_A_COUNTED_REPEAT

# Pattern text that may look at characters before the match start (lookbehinds, word
# boundaries, start-of-text anchors): the parser then keeps some decided text as context.
_CONTEXT_MARKS = ("(?<", "\\b", "\\B", "^", "\\A", "\\G", "\\K")

# Decided characters kept for a pattern whose look back cannot be measured.
UNMEASURED_CONTEXT = 256

# Characters appended to test whether a match depends on what follows it:
# one that is neither a word character nor a newline, and one word character.
_NEXT_CHARACTER_PROBES = ("\x00", "a")


# Every character `\s` matches lies below U+3001 (Unicode White_Space), so a set test is exact.
_WHITESPACE = frozenset(filter(regex.compile(r"\s").fullmatch, map(chr, range(0x3001))))
_CATEGORY_MATCHERS = {
    sre_constants.CATEGORY_SPACE: _WHITESPACE.__contains__,
    sre_constants.CATEGORY_DIGIT: regex.compile(r"\d").fullmatch,
    sre_constants.CATEGORY_WORD: regex.compile(r"\w").fullmatch,
}
_REPEATS = (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, getattr(sre_constants, "POSSESSIVE_REPEAT", None))


def _class_matcher(items: list) -> Callable[[str], bool] | None:
    """A one-character test for a parsed character class, or None when it cannot be built exactly."""
    tests: list[Callable[[str], Any]] = []
    for op, av in items:
        if op is sre_constants.LITERAL:
            tests.append(chr(av).__eq__)
        elif op is sre_constants.RANGE:
            tests.append(lambda ch, lo=av[0], hi=av[1]: lo <= ord(ch) <= hi)
        elif op is sre_constants.CATEGORY and av in _CATEGORY_MATCHERS:
            tests.append(_CATEGORY_MATCHERS[av])  # a match object is truthy
        else:
            return None
    if len(tests) == 1:
        return tests[0]
    return lambda ch: any(test(ch) for test in tests)


def _start_profile(items: list) -> tuple[frozenset[str], list] | None:
    """What every match of a parsed pattern must start with.

    Returns `(first_characters, skippable)`: a match is optional runs of `skippable`
    one-character classes followed by one of `first_characters`. None when the pattern
    is too complex to say (the caller then scans every chunk).

    `pattern_start_profile` adds a third element: the one-character test of the
    pattern's leading optional run when the pattern is exactly `<class>*<more>` with
    nothing before the run, else None.
    """
    skippable: list[Callable[[str], bool]] = []
    for op, av in items:
        if op is sre_constants.AT or (op is sre_constants.ASSERT and av[0] == -1):
            continue  # anchors and lookbehinds take no characters
        if op is sre_constants.ASSERT:
            inner = _start_profile(list(av[1]))
            return None if inner is None else (inner[0], skippable + inner[1])
        if op in _REPEATS and av[0] == 0:
            body = list(av[2])
            matcher = None
            if len(body) == 1 and body[0][0] is sre_constants.IN:
                matcher = _class_matcher(list(body[0][1]))
            elif len(body) == 1 and body[0][0] is sre_constants.LITERAL:
                matcher = _class_matcher(body)
            if matcher is None:
                return None
            skippable.append(matcher)
            continue
        if op in _REPEATS:
            inner = _start_profile(list(av[2]))
        elif op is sre_constants.LITERAL:
            return frozenset(chr(av)), skippable
        elif op is sre_constants.IN:
            if any(item_op not in (sre_constants.LITERAL, sre_constants.RANGE) for item_op, _ in av):
                return None
            chars: set[str] = set()
            for item_op, item in av:
                low, high = (item, item) if item_op is sre_constants.LITERAL else item
                if high - low > 64:
                    return None
                chars.update(map(chr, range(low, high + 1)))
            return frozenset(chars), skippable
        elif op is sre_constants.SUBPATTERN:
            if av[1] & sre_constants.SRE_FLAG_IGNORECASE:
                return None
            inner = _start_profile(list(av[3]))
        elif op is sre_constants.BRANCH:
            alternatives = [_start_profile(list(branch)) for branch in av[1]]
            if any(alternative is None for alternative in alternatives):
                return None
            inner = (frozenset().union(*(a[0] for a in alternatives)), [m for a in alternatives for m in a[1]])
        else:
            return None
        return None if inner is None else (inner[0], skippable + inner[1])
    return None  # the pattern can match the empty string


class FixedLead(NamedTuple):
    """What every match of a pattern starts with: an optional `run` of one character class, then `literal`.

    Attributes:
        run: the one-character test of the run (`\\s*`), or None when there is none.
        literal: the fixed text, never empty.
        run_characters: every character of the run, when they are few (at most 4096) and
            known exactly, else None.
    """

    run: Callable[[str], Any] | None
    literal: str
    run_characters: frozenset[str] | None


def _class_characters(items: list) -> frozenset[str] | None:
    """Every character of the parsed class `items`, or None when it is negated, a category
    other than `\\s`, or more than 4096 characters."""
    characters: set[str] = set()
    for op, av in items:
        if op is sre_constants.LITERAL:
            characters.add(chr(av))
        elif op is sre_constants.RANGE and av[1] - av[0] < 4096:
            characters.update(map(chr, range(av[0], av[1] + 1)))
        elif op is sre_constants.CATEGORY and av is sre_constants.CATEGORY_SPACE:
            characters |= _WHITESPACE
        else:
            return None
    return frozenset(characters) if len(characters) <= 4096 else None


def literal_lead(compiled: regex.Pattern) -> FixedLead | None:
    """The `FixedLead` of `compiled` when every match is an optional unbounded run of one
    character class (`\\s*`, or none) followed by fixed text; else None.

    Text that does not contain the fixed text then holds no match, and a partial match can
    only be the run and a start of the fixed text at the very end, which plain string search finds.
    """
    parsed = _parse_for_analysis(compiled)
    profile = None if parsed is None else _profile_of_items(list(parsed))
    if profile is None:
        return None
    items = list(parsed)
    run = profile[2]
    run_characters = None
    if run is not None:
        body = list(items[0][1][2])
        run_characters = _class_characters(list(body[0][1]) if body[0][0] is sre_constants.IN else body)
        items = items[1:]
    elif items and items[0][0] in _REPEATS:
        return None
    literal = []
    for op, av in items:
        if op is not sre_constants.LITERAL:
            break
        literal.append(chr(av))
    return FixedLead(run, "".join(literal), run_characters) if literal else None


_MAX_FIXED_TEXTS = 64


def _fixed_texts(items: list, ends_pattern: bool = True) -> set[str] | None:
    """The strings parsed `items` match, when they are few and fixed; None otherwise.

    A lookahead that ends the whole pattern (`ends_pattern` says whether `items` do) is
    folded into the text it looks at: `a(?=b)` is complete only once `ab` is there, and the
    text ending in `a` is a partial match of it.
    """
    texts = {""}
    for index, (op, av) in enumerate(items):
        last = ends_pattern and index == len(items) - 1
        if op is sre_constants.LITERAL:
            options = {chr(av)}
        elif op is sre_constants.IN:
            options = _class_characters(list(av))
            if options is None or len(options) > _MAX_FIXED_TEXTS:
                return None
        elif op is sre_constants.BRANCH:
            options = set()
            for branch in av[1]:
                inner = _fixed_texts(list(branch), last)
                if inner is None:
                    return None
                options |= inner
        elif op is sre_constants.SUBPATTERN and not (av[1] or av[2]):
            options = _fixed_texts(list(av[3]), last)
        elif op is sre_constants.ASSERT and av[0] == 1 and last:
            options = _fixed_texts(list(av[1]), False)
        else:
            return None
        if options is None:
            return None
        texts = {text + option for text in texts for option in options}
        if len(texts) > _MAX_FIXED_TEXTS:
            return None
    return texts


def fixed_texts(compiled: regex.Pattern) -> tuple[str, ...] | None:
    """The texts `compiled` matches, when it matches only a few fixed, non-empty strings
    (`</think>|(?=<tool_call>)` gives `</think>` and `<tool_call>`); else None.

    Such a pattern holds a match only where one of the texts is complete, and a partial
    match exactly where the text ends in a proper start of one, as a literal set does.
    """
    parsed = _parse_for_analysis(compiled)
    if parsed is None:
        return None
    texts = _fixed_texts(list(parsed))
    if not texts or "" in texts:
        return None
    return tuple(sorted(texts, key=lambda text: (-len(text), text)))


def _parse_for_analysis(compiled: regex.Pattern) -> sre_parser.SubPattern | None:
    """`compiled` parsed by the standard parser, for reading what its matches look like.

    None when the pattern uses case folding, ASCII or locale classes, or syntax the standard
    parser does not know or would read differently (it warns about POSIX classes and set
    operations; a `{` that is not a counted repeat may be fuzzy matching). Named groups
    are renamed first (`_renamed_groups`).
    """
    if compiled.flags & (regex.IGNORECASE | regex.VERBOSE | regex.FULLCASE | regex.ASCII | regex.LOCALE):
        return None
    if NOT_A_COUNTED_REPEAT.search(compiled.pattern):
        return None
    source = _renamed_groups(compiled.pattern)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            parsed = sre_parser.parse(source)
    except Exception:  # regex-module syntax the standard parser does not know, or a warning
        return None
    if parsed.state.flags & (sre_constants.SRE_FLAG_IGNORECASE | sre_constants.SRE_FLAG_ASCII | sre_constants.SRE_FLAG_LOCALE):
        return None
    return parsed


def _children(op, av) -> list:
    """The parsed sub-sequences inside one parsed item (a group, a branch, a repeat, a lookaround...)."""
    if op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
        return [av[1]]
    if op is sre_constants.SUBPATTERN:
        return [av[3]]
    if op is sre_constants.BRANCH:
        return av[1]
    if op in _REPEATS:
        return [av[2]]
    if op is sre_constants.ATOMIC_GROUP:
        return [av]
    if op is sre_constants.GROUPREF_EXISTS:
        return [branch for branch in av[1:] if branch is not None]
    return []


def _look_back(items: list) -> int | None:
    """How many characters before its position parsed `items` may examine, or None when unbounded."""
    most = 0
    for op, av in items:
        if op is sre_constants.AT:
            if av not in (sre_constants.AT_END, sre_constants.AT_END_STRING, sre_constants.AT_END_LINE):
                most = max(most, 1)  # start anchors and word boundaries look at the previous character
            continue
        if op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT) and av[0] == -1:
            width = av[1].getwidth()[1]
            if width >= sre_constants.MAXREPEAT:
                return None
            inner = _look_back(list(av[1]))
            if inner is None:
                return None
            most = max(most, width + inner)
            continue
        for child in _children(op, av):
            inner = _look_back(list(child))
            if inner is None:
                return None
            most = max(most, inner)
    return most


def _looks_ahead(items: list) -> bool:
    """Whether parsed `items` may examine text after the position they reach (lookaheads, end anchors, word boundaries)."""
    for op, av in items:
        if op is sre_constants.AT:
            if av not in (sre_constants.AT_BEGINNING, sre_constants.AT_BEGINNING_STRING, sre_constants.AT_BEGINNING_LINE):
                return True
            continue
        if op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT) and av[0] == 1:
            return True
        if any(_looks_ahead(list(child)) for child in _children(op, av)):
            return True
    return False


def end_literal(compiled: regex.Pattern) -> str | None:
    """The text every match of `compiled` ends with, when nothing in it looks past the match; else None.

    Then no match ends after the last occurrence of that text, so a search may stop there
    (``endpos``) and find the same matches: on text where the ending never comes, a pattern
    like ``\\s*(?P<value>.*?)\\s*</parameter>`` otherwise backtracks in cubic time.
    """
    parsed = _parse_for_analysis(compiled)
    if parsed is None:
        return None
    items = list(parsed)
    if _looks_ahead(items):
        return None
    suffix = ""
    while items:
        op, av = items[-1]
        if op is sre_constants.LITERAL:
            suffix = chr(av) + suffix
            items = items[:-1]
        elif op is sre_constants.SUBPATTERN and not suffix and not av[1] and not av[2]:
            items = list(av[3])  # a group that ends the pattern (without scoped flags such as (?i:...)): its own ending
        else:
            break
    return suffix or None


def context_width(compiled: regex.Pattern) -> int:
    """Decided characters before the scan position that `compiled` may need to see (0 when none).

    A lookbehind of width w inside the pattern looks at most w characters before the
    match start; a start anchor or word boundary looks at one. Patterns the standard parser
    cannot measure get `UNMEASURED_CONTEXT`.
    """
    if not any(mark in compiled.pattern for mark in _CONTEXT_MARKS):
        return 0
    parsed = _parse_for_analysis(compiled)
    width = None if parsed is None else _look_back(list(parsed))
    return UNMEASURED_CONTEXT if width is None else width


class Lead(NamedTuple):
    """One way a match can begin: an optional run of `run_characters` (None: no run), then `literal`."""

    run_characters: frozenset[str] | None
    literal: str


_GROUP_NAME = regex.compile(r"\(\?P?<(?![=!])\w+>")


def _renamed_groups(pattern: str) -> str:
    """`pattern` with every named group renamed `lead0`, `lead1`, ...: group names do not
    change what matches, and the standard parser then reads names reused across alternatives
    and the `(?<name>...)` spelling. Escapes and character classes are left as they are."""
    out, index, names, in_class = [], 0, itertools.count(), False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            out.append(pattern[index : index + 2])
            index += 2
            continue
        if in_class:
            if char == "]" and not class_start:
                in_class = False
            class_start = False
        elif char == "[":
            in_class, class_start = True, True
            out.append(char)
            index += 1
            if index < len(pattern) and pattern[index] == "^":
                out.append("^")
                index += 1
            continue
        elif char == "(":
            name = _GROUP_NAME.match(pattern, index)
            if name is not None:
                out.append(f"(?P<lead{next(names)}>")
                index = name.end()
                continue
        out.append(char)
        index += 1
    return "".join(out)


def _leads(items: list) -> list[Lead] | None:
    """The `Lead`s of parsed pattern `items`: every match starts with one of them. None when unknown."""
    index = 0
    while index < len(items) and (
        items[index][0] is sre_constants.AT
        or (items[index][0] in (sre_constants.ASSERT, sre_constants.ASSERT_NOT) and items[index][1][0] == -1)
    ):
        index += 1  # anchors and lookbehinds take no characters
    items = items[index:]
    if not items:
        return None
    op, av = items[0]
    if op is sre_constants.BRANCH:
        leads: list[Lead] = []
        for branch in av[1]:
            inner = _leads(list(branch))
            if inner is None:
                return None
            leads += inner
        return leads
    if op is sre_constants.SUBPATTERN:
        return None if av[1] or av[2] else _leads(list(av[3]))  # a match starts with the group's
    if op is sre_constants.ASSERT and av[0] == 1:
        return _leads(list(av[1]))  # a lookahead: the match starts where its text does
    run_characters = None
    if op in _REPEATS and av[0] == 0 and av[1] == sre_constants.MAXREPEAT:
        body = list(av[2])
        if len(body) != 1 or body[0][0] not in (sre_constants.IN, sre_constants.LITERAL):
            return None
        run_characters = _class_characters(list(body[0][1]) if body[0][0] is sre_constants.IN else body)
        if run_characters is None:
            return None
        items = items[1:]
    literal = []
    for op, av in items:
        if op is not sre_constants.LITERAL:
            break
        literal.append(chr(av))
    if not literal or (run_characters is not None and literal[0] in run_characters):
        return None
    return [Lead(run_characters, "".join(literal))]


def loose_leads(compiled: regex.Pattern) -> tuple[Lead, ...] | None:
    """Texts one of which every match of `compiled` starts with, possibly after a run (`\\s*`).

    Unlike `literal_lead`, the pattern may begin with lookbehinds or anchors, be an
    alternation, or look ahead at the text instead of taking it (`</think>|(?=<tool_call>)`):
    text without any lead (and not ending in a start of one) holds no match, but a lead
    does not make a match. None when the pattern is too complex to say.
    """
    parsed = _parse_for_analysis(compiled)
    if parsed is None:
        return None
    leads = _leads(list(parsed))
    return None if leads is None else tuple(dict.fromkeys(leads))


def pattern_start_profile(compiled: regex.Pattern) -> tuple[frozenset[str], list, Callable | None] | None:
    """`_start_profile` of a compiled template pattern; None when it cannot be analysed."""
    parsed = _parse_for_analysis(compiled)
    return None if parsed is None else _profile_of_items(list(parsed))


def _profile_of_items(items: list) -> tuple[frozenset[str], list, Callable | None] | None:
    profile = _start_profile(items)
    if profile is None:
        return None
    first_op, first_av = items[0]
    leading_run = None
    if first_op in _REPEATS and first_av[:2] == (0, sre_constants.MAXREPEAT) and len(profile[1]) == 1:
        leading_run = profile[1][0]
        if any(leading_run(char) for char in profile[0]):
            leading_run = None  # a first character inside the run would blur where the run ends
    return profile[0], profile[1], leading_run


@dataclass(slots=True)
class DelimiterMatch:
    """One matched delimiter: `[start, end)` offsets into the scanned text, and its named captures."""

    delimiter: "Delimiter"
    start: int
    end: int
    text: str
    captures: dict[str, str]


@dataclass(eq=False)
class Delimiter:
    """An open or close delimiter of a field (or the start anchor).

    Attributes:
        field: the field name (``""`` for the start anchor).
        side: ``"open"``, ``"close"`` or ``"anchor"``.
        path: JSON path of the template key it came from (``fields.x.open_pattern``).
        literals: the literal strings, longest first, or None for a regex.
        pattern: the compiled regex (an alternation of the literals for a literal set).
        source: the literal or pattern as written, for display.
        fixed_lead: the `FixedLead` of a pattern whose every match is an optional run and
            then fixed text (from `literal_lead`), else None.
        loose_leads: the `Lead`s of a pattern (from `loose_leads`): texts every match starts
            with, though not every one starts a match; None when unknown.
        fixed_texts: for a pattern that matches only a few fixed texts (`fixed_texts`), those.
    """

    field: str
    side: str
    path: str
    literals: tuple[str, ...] | None
    pattern: regex.Pattern
    source: str
    _dead_end: regex.Pattern | None = field(default=None, repr=False)
    _first_win: regex.Pattern | None = field(default=None, repr=False)
    _max_len: int = 0
    _first_chars: str = ""
    _proper_prefixes: frozenset[str] = frozenset()
    context_width: int = 0
    start_profile: tuple[frozenset[str], list, Callable | None] | None = field(default=None, repr=False)
    fixed_lead: FixedLead | None = field(default=None, repr=False)
    loose_leads: tuple[Lead, ...] | None = field(default=None, repr=False)
    fixed_texts: tuple[str, ...] | None = field(default=None, repr=False)

    @classmethod
    def from_literals(cls, field_name: str, side: str, path: str, literals: list[str]) -> "Delimiter":
        """A delimiter matching any of `literals` (non-empty strings); the longest wins at one position."""
        ordered = tuple(sorted(dict.fromkeys(literals), key=len, reverse=True))
        compiled = regex.compile("|".join(regex.escape(literal) for literal in ordered), regex.DOTALL)
        source = literals[0] if len(literals) == 1 else " | ".join(literals)
        first_chars = "".join(dict.fromkeys(literal[0] for literal in ordered))
        return cls(
            field_name,
            side,
            path,
            ordered,
            compiled,
            source,
            _max_len=len(ordered[0]),
            _first_chars=first_chars,
            _proper_prefixes=frozenset(literal[:k] for literal in ordered for k in range(1, len(literal))),
            start_profile=(frozenset(first_chars), [], None),
        )

    @classmethod
    def from_pattern(cls, field_name: str, side: str, path: str, compiled: regex.Pattern) -> "Delimiter":
        """A delimiter matching the compiled regex `compiled` (compiled with DOTALL)."""
        body = compiled.pattern + ("\n" if compiled.flags & regex.VERBOSE else "")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                dead_end = regex.compile(f"(?:{body})(?!)", compiled.flags)
                first_win = regex.compile(f"(?:{body})(*PRUNE)(?!)", compiled.flags)
            except regex.error:
                dead_end = first_win = None
        delimiter = cls(field_name, side, path, None, compiled, compiled.pattern, dead_end, first_win)
        delimiter.context_width = context_width(compiled)
        delimiter.start_profile = pattern_start_profile(compiled)
        delimiter.fixed_lead = literal_lead(compiled)
        delimiter.loose_leads = loose_leads(compiled)
        delimiter.fixed_texts = fixed_texts(compiled)
        return delimiter

    def scan(self, text: str, pos: int, at_end: bool, timeout: float | None = None) -> tuple[DelimiterMatch | None, int]:
        """Look for this delimiter in `text[pos:]`, where `text` ends at the edge of what has arrived.

        Args:
            text: the scan window; characters before `pos` are context (lookbehinds).
            pos: offset where undecided text starts.
            at_end: True once the stream has ended: every complete match is final.
            timeout: seconds allowed for each regex call, or None.

        Returns:
            `(match, hold)`: the earliest final match or None, and the leftmost offset
            from which text must be held (``len(text)`` when nothing is pending). A match
            is only usable if it starts before every other delimiter's hold position.

        Raises:
            PatternTimeoutError: a regex call exceeded `timeout`.
        """
        if self.literals is not None:
            return self._scan_literals(text, pos, at_end)
        if self.fixed_lead is not None and text.find(self.fixed_lead.literal, pos) == -1:
            return None, self._hold_before_literal(text, pos, at_end)
        if self.start_profile is not None:
            first_characters, skippable, leading_run = self.start_profile
            if not any(text.find(char, pos) != -1 for char in first_characters):
                # No match can complete here. A partial one needs the text to end in the
                # optional leading characters (`\s*`): for a pattern that starts with that run
                # it is exactly the trailing run; otherwise the regex decides.
                n = len(text)
                if at_end or n == pos or not any(test(text[-1]) for test in skippable):
                    return None, n
                if leading_run is not None:
                    hold = n
                    while hold > pos and leading_run(text[hold - 1]):
                        hold -= 1
                    return None, hold
        try:
            return self._scan_pattern(text, pos, at_end, timeout)
        except TimeoutError:
            raise PatternTimeoutError(
                f"{self.path}: pattern too slow on this input (over the {timeout} s budget): {shorten(self.source, 120)}",
                field=self.field or None,
            ) from None

    def _final_search(self, text: str, pos: int, timeout: float | None) -> regex.Match | None:
        """`pattern.search(text, pos)`, trying only where the pattern's fixed text occurs.

        For `<run>*<literal>...` a match starts where the run before an occurrence of
        `literal` starts (the run cannot contain the literal's first character), so one
        anchored match per occurrence finds the leftmost match without a regex scan.
        """
        if self.fixed_lead is None:
            return self.pattern.search(text, pos, timeout=timeout)
        run, literal = self.fixed_lead.run, self.fixed_lead.literal
        occurrence = text.find(literal, pos)
        while occurrence != -1:
            start = occurrence
            while run is not None and start > pos and run(text[start - 1]):
                start -= 1
            found = self.pattern.match(text, start, timeout=timeout)
            if found is not None:
                return found
            occurrence = text.find(literal, occurrence + 1)
        return None

    def _hold_before_literal(self, text: str, pos: int, at_end: bool) -> int:
        """The hold for a pattern `<run>*<literal>...` on text without `literal`: the run and
        a proper start of `literal` at the end of the text (exactly the regex's partial match)."""
        n = len(text)
        if at_end:
            return n
        run, literal = self.fixed_lead.run, self.fixed_lead.literal
        hold = n
        i = text.find(literal[0], max(pos, n - len(literal) + 1))
        while i != -1:
            if literal.startswith(text[i:]):
                hold = i
                break
            i = text.find(literal[0], i + 1)
        if run is not None:
            while hold > pos and run(text[hold - 1]):
                hold -= 1
        return hold

    def _scan_literals(self, text: str, pos: int, at_end: bool) -> tuple[DelimiterMatch | None, int]:
        n = len(text)
        if len(self.literals) == 1:  # the common case, kept short: one find and a tail check
            literal = self.literals[0]
            start = text.find(literal, pos)
            hold = n
            if not at_end:
                i = text.find(literal[0], max(pos, n - len(literal) + 1))
                while i != -1:
                    if literal.startswith(text[i:]):
                        hold = i
                        break
                    i = text.find(literal[0], i + 1)
            if start == -1:
                return None, hold
            return DelimiterMatch(self, start, start + len(literal), literal, {}), hold
        start, found = -1, ""
        for literal in self.literals:  # longest first: on a tie the longer one stays
            i = text.find(literal, pos)
            if i != -1 and (start == -1 or i < start):
                start, found = i, literal
        hold = n
        if not at_end:
            lowest = max(pos, n - self._max_len + 1)
            for first in self._first_chars:
                i = text.find(first, lowest)
                while i != -1 and i < hold:
                    if text[i:] in self._proper_prefixes:
                        hold = i
                        break
                    i = text.find(first, i + 1)
            if start != -1 and start < hold and text[start:] in self._proper_prefixes:
                hold = start  # a longer literal of the set may still complete at the same start
        if start == -1:
            return None, hold
        return DelimiterMatch(self, start, start + len(found), found, {}), hold

    def _scan_pattern(self, text: str, pos: int, at_end: bool, timeout: float | None) -> tuple[DelimiterMatch | None, int]:
        n = len(text)
        pattern = self.pattern
        if at_end:
            found = self._final_search(text, pos, timeout)
            return (self._wrap(found), n) if found is not None else (None, n)
        if pos >= n:
            return None, n  # nothing undecided (and the regex module can crash on an empty partial search)
        found = pattern.search(text, pos, partial=True, timeout=timeout)
        if found is None:
            return None, n
        start = found.start()
        if found.partial:
            return None, start
        if self._dead_end is not None:
            # A partial match from an earlier start would have to run through the end of this
            # one, so looking up to `found.end()` finds it (and keeps big chunks linear). One
            # cut there may still fail on the text after it (`\s*</think>` on the `\n` before
            # a zero-width `(?=<tool_call>)`): only a partial match of the whole text holds.
            probe_from = pos
            while probe_from < start:
                earlier = self._dead_end.search(text, probe_from, found.end(), partial=True, timeout=timeout)
                if earlier is None or earlier.start() >= start:
                    break
                if self._dead_end.match(text, earlier.start(), partial=True, timeout=timeout) is not None:
                    return None, earlier.start()
                probe_from = earlier.start() + 1
        if found.end() == n:
            return None, start  # at the edge of the text: the next character decides
        if self._first_win is not None and self._first_win.match(text, start, partial=True, timeout=timeout):
            return None, start
        if found.end() == n - 1:  # `$` before a final newline: the next character decides
            for probe in _NEXT_CHARACTER_PROBES:
                again = pattern.match(text + probe, start, timeout=timeout)
                if again is None or again.span() != found.span() or again.groupdict() != found.groupdict():
                    return None, start
        return self._wrap(found), n

    def _wrap(self, found: regex.Match) -> DelimiterMatch:
        captures = {name: value for name, value in found.groupdict().items() if value is not None}
        return DelimiterMatch(self, found.start(), found.end(), found.group(), captures)

    def last_match_end(self, text: str, timeout: float | None = None) -> int | None:
        """End offset of the last match in `text` (non-overlapping, left to right), or None.

        Used for the start anchor, which cuts the prefix after its last match.
        """
        try:
            last = None
            for found in self.pattern.finditer(text, timeout=timeout):
                last = found
            return None if last is None else last.end()
        except TimeoutError:
            raise PatternTimeoutError(
                f"{self.path}: pattern too slow on this input (over the {timeout} s budget): {shorten(self.source, 120)}"
            ) from None
