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

import re
import re._constants as sre_constants
import re._parser as sre_parser
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import regex

from .errors import PatternTimeoutError, shorten

# Pattern text that may look at characters before the match start (lookbehinds, word
# boundaries, start-of-text anchors): the parser then keeps some decided text as context.
_CONTEXT_MARKS = ("(?<", "\\b", "\\B", "^", "\\A", "\\G", "\\K")

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
        run_class: the run as a standard-`re` character class matching the same characters
            (such as ``[\\t\\n ...]``), or None when there is no run or it cannot be written exactly.
        run_characters: every character of the run, when they are few (at most 4096) and
            known exactly, else None.
    """

    run: Callable[[str], Any] | None
    literal: str
    run_class: str | None
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
    profile = pattern_start_profile(compiled)
    if profile is None:
        return None
    items = list(sre_parser.parse(compiled.pattern))
    run = profile[2]
    run_class = run_characters = None
    if run is not None:
        body = list(items[0][1][2])
        run_characters = _class_characters(list(body[0][1]) if body[0][0] is sre_constants.IN else body)
        if run_characters is not None:
            run_class = "[" + "".join(map(re.escape, sorted(run_characters))) + "]"
        items = items[1:]
    elif items and items[0][0] in _REPEATS:
        return None
    literal = []
    for op, av in items:
        if op is not sre_constants.LITERAL:
            break
        literal.append(chr(av))
    return FixedLead(run, "".join(literal), run_class, run_characters) if literal else None


def pattern_start_profile(compiled: regex.Pattern) -> tuple[frozenset[str], list, Callable | None] | None:
    """`_start_profile` of a compiled template pattern; None when it cannot be analysed."""
    if compiled.flags & (regex.IGNORECASE | regex.VERBOSE | regex.FULLCASE):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parsed = sre_parser.parse(compiled.pattern)
    except Exception:  # regex-module syntax the standard parser does not know
        return None
    if parsed.state.flags & sre_constants.SRE_FLAG_IGNORECASE:
        return None
    items = list(parsed)
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
    needs_context: bool = False
    start_profile: tuple[frozenset[str], list, Callable | None] | None = field(default=None, repr=False)
    fixed_lead: FixedLead | None = field(default=None, repr=False)

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
        delimiter.needs_context = any(mark in compiled.pattern for mark in _CONTEXT_MARKS)
        delimiter.start_profile = pattern_start_profile(compiled)
        delimiter.fixed_lead = literal_lead(compiled)
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
        found = pattern.search(text, pos, partial=True, timeout=timeout)
        if found is None:
            return None, n
        start = found.start()
        if found.partial:
            return None, start
        if self._dead_end is not None:
            # A partial match from an earlier start would have to run through the end of this
            # one, so looking up to `found.end()` is enough (and keeps big chunks linear).
            earlier = self._dead_end.search(text, pos, found.end(), partial=True, timeout=timeout)
            if earlier is not None and earlier.start() < start:
                return None, earlier.start()
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
