"""Pattern shapes: what a delimiter pattern's matches look like, read from its parse tree.

Pure functions over the standard parser's tree of a template pattern. The
scanners use the answers to skip regex calls that cannot find anything:

* `match_start` (and `literal_match_start`, `MatchStart.union`) says what the
  text of every match starts with, as one `MatchStart`: the characters a match
  holds after its optional leading runs (such as `\\s*`), the runs themselves,
  and the *leads*, the fixed texts (after a run) that every match begins with;
* `context_width` says how many decided characters before a match its
  lookbehinds, anchors and word boundaries may look at;
* `end_literal` says what text every match ends with;
* `pattern_size` says how big a pattern is once compiled, read from its text before
  anything compiles it: a counted repeat such as `a{100000}` is written out that many
  times by the `regex` module (tens of bytes a copy, while holding the interpreter lock),
  and groups nested hundreds deep overflow its recursive parser. `PatternBoundError`
  refuses what is over `MAX_PATTERN_SIZE` or `MAX_GROUP_DEPTH`;
* `read_pattern` is the one reader of a pattern's parse tree (with its named groups' names),
  for these answers and for the grammar wing, so that all of them refuse the same syntax;
* `pattern_literal` writes a literal text as the pattern that matches it, for every pattern
  the tools suggest or infer;
* `top_level_alternatives`, `group_end`, `around_group`, `without_leading_lookbehind`,
  `alternative_endings` and `after_leading_marker` cut a pattern's text where its tree says,
  for the patterns lenient reading makes out of a template's (each cut refused where
  `read_pattern` refuses the pattern).

Every answer errs on the safe side: "unknown" (None) whenever the tree holds
syntax the analysis does not model, and the scanner then asks the regex.
"""

from __future__ import annotations

import re._constants as sre_constants
import re._parser as sre_parser
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import regex

from .re_equivalent import NOT_A_COUNTED_REPEAT

# What one pattern may cost to compile (docs/template-language.md, "Pattern bounds"): its size
# with every counted repeat written out, and how deep its groups nest.
MAX_PATTERN_SIZE = 10_000
MAX_GROUP_DEPTH = 32
# Digits a repeat count may have (the regex module refuses counts of 4294967295 and over anyway;
# converting thousands of digits to a number is itself slow).
MAX_COUNT_DIGITS = 10
# A counted repeat as the regex module reads one: `{m}`, `{m,}`, `{,n}`, `{m,n}` (no spaces).
_COUNTED_REPEAT = regex.compile(r"\{(\d*)(?:(,)(\d*))?\}")
# An inline flag group that may turn verbose mode on (`(?x)`, `(?ix:`); read loosely, to be safe.
_VERBOSE_FLAG = regex.compile(r"\(\?[\w^-]*x[\w-]*[:)]")
# What follows `(` before a group's pattern: `?:`, `?P<name>`, a lookaround, scoped flags
# (`?i:`); or a whole inline flag group or call (`?i)`, `?R)`, `?1)`).
_GROUP_HEADER = regex.compile(r"\?(?:P?<\w+>|'\w+'|<[=!]|[:=!>|]|[\w^-]*[:)])")
# Escapes followed by a braced argument (`\p{L}`, `\N{SPACE}`), which is not a repeat.
_BRACED_ESCAPES = "pPNxXu"

# What a pattern reads specially outside a character class (`pattern_literal` escapes these).
_SPECIAL_OUTSIDE_CLASS = regex.compile(r"[.^$*+?{}\[\]\\|()]")

# Pattern text that may look at characters before the match start (lookbehinds, word
# boundaries, start-of-text anchors): the parser then keeps some decided text as context.
_CONTEXT_MARKS = ("(?<", "\\b", "\\B", "^", "\\A", "\\G", "\\K")

# Decided characters kept for a pattern whose look back cannot be measured.
UNMEASURED_CONTEXT = 256

# Every character `\s` matches lies below U+3001 (Unicode White_Space), so a set test is exact.
_WHITESPACE = frozenset(filter(regex.compile(r"\s").fullmatch, map(chr, range(0x3001))))
_CATEGORY_MATCHERS = {
    sre_constants.CATEGORY_SPACE: _WHITESPACE.__contains__,
    sre_constants.CATEGORY_DIGIT: regex.compile(r"\d").fullmatch,
    sre_constants.CATEGORY_WORD: regex.compile(r"\w").fullmatch,
}
_REPEATS = (
    sre_constants.MAX_REPEAT,
    sre_constants.MIN_REPEAT,
    getattr(sre_constants, "POSSESSIVE_REPEAT", None),
)


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


def _first_characters_after_runs(items: list) -> tuple[frozenset[str], list] | None:
    """What every match of a parsed pattern must start with.

    Returns `(first_characters, run_tests)`: a match is optional runs of the `run_tests`
    one-character classes followed by one of `first_characters`. None when the pattern
    is too complex to say.
    """
    run_tests: list[Callable[[str], bool]] = []
    for op, av in items:
        if op is sre_constants.AT or (op is sre_constants.ASSERT and av[0] == -1):
            continue  # anchors and lookbehinds take no characters
        if op is sre_constants.ASSERT:
            inner = _first_characters_after_runs(list(av[1]))
            return None if inner is None else (inner[0], run_tests + inner[1])
        if op in _REPEATS and av[0] == 0:
            body = list(av[2])
            matcher = None
            if len(body) == 1 and body[0][0] is sre_constants.IN:
                matcher = _class_matcher(list(body[0][1]))
            elif len(body) == 1 and body[0][0] is sre_constants.LITERAL:
                matcher = _class_matcher(body)
            if matcher is None:
                return None
            run_tests.append(matcher)
            continue
        if op in _REPEATS:
            inner = _first_characters_after_runs(list(av[2]))
        elif op is sre_constants.LITERAL:
            return frozenset(chr(av)), run_tests
        elif op is sre_constants.IN:
            if any(
                item_op not in (sre_constants.LITERAL, sre_constants.RANGE) for item_op, _ in av
            ):
                return None
            chars: set[str] = set()
            for item_op, item in av:
                low, high = (item, item) if item_op is sre_constants.LITERAL else item
                if high - low > 64:
                    return None
                chars.update(map(chr, range(low, high + 1)))
            return frozenset(chars), run_tests
        elif op is sre_constants.SUBPATTERN:
            if av[1] & sre_constants.SRE_FLAG_IGNORECASE:
                return None
            inner = _first_characters_after_runs(list(av[3]))
        elif op is sre_constants.BRANCH:
            alternatives = [_first_characters_after_runs(list(branch)) for branch in av[1]]
            if any(alternative is None for alternative in alternatives):
                return None
            inner = (
                frozenset().union(*(a[0] for a in alternatives)),
                [m for a in alternatives for m in a[1]],
            )
        else:
            return None
        return None if inner is None else (inner[0], run_tests + inner[1])
    return None  # the pattern can match the empty string


def _leading_run(items: list, profile: tuple[frozenset[str], list]) -> Callable[[str], Any] | None:
    """The test of the pattern's one optional run when the pattern is exactly `<class>*<more>`
    and no first character lies in the run (else where the run ends would be blurred); else None."""
    first_op, first_av = items[0]
    if (
        first_op not in _REPEATS
        or first_av[:2] != (0, sre_constants.MAXREPEAT)
        or len(profile[1]) != 1
    ):
        return None
    run = profile[1][0]
    return None if any(run(char) for char in profile[0]) else run


def _fixed_lead(items: list, leading_run: Callable[[str], Any] | None) -> Lead | None:
    """The exact lead of parsed `items` when every match is the optional leading run, then
    fixed text (`\\s*<think>...`), and the run's characters are known; else None."""
    run = None
    if leading_run is not None:
        body = list(items[0][1][2])
        run = _class_characters(list(body[0][1]) if body[0][0] is sre_constants.IN else body)
        if run is None:
            return None
        items = items[1:]
    elif items and items[0][0] in _REPEATS:
        return None
    literal = []
    for op, av in items:
        if op is not sre_constants.LITERAL:
            break
        literal.append(chr(av))
    return Lead(run, "".join(literal)) if literal else None


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


_MAX_WHOLE_TEXTS = 64


def _whole_texts(items: list, ends_pattern: bool = True) -> set[str] | None:
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
            if options is None or len(options) > _MAX_WHOLE_TEXTS:
                return None
        elif op is sre_constants.BRANCH:
            options = set()
            for branch in av[1]:
                inner = _whole_texts(list(branch), last)
                if inner is None:
                    return None
                options |= inner
        elif op is sre_constants.SUBPATTERN and not (av[1] or av[2]):
            options = _whole_texts(list(av[3]), last)
        elif op is sre_constants.ASSERT and av[0] == 1 and last:
            options = _whole_texts(list(av[1]), False)
        else:
            return None
        if options is None:
            return None
        texts = {text + option for text in texts for option in options}
        if len(texts) > _MAX_WHOLE_TEXTS:
            return None
    return texts


class Lead(NamedTuple):
    """One way a match can begin: an optional run of `run` characters (None: no run), then `text`."""

    run: frozenset[str] | None
    text: str


@dataclass(frozen=True)
class MatchStart:
    """What the text of every match of a delimiter (or of any of several) starts with.

    A match is optional runs of single characters (a leading `\\s*`, say), then one of
    `first_characters`; more precisely it begins with one of the `leads`.

    Attributes:
        first_characters: the characters (sorted, as one string) one of which every match
            holds right after its optional runs, or None when the pattern is too complex to say.
        run_tests: one-character tests of those optional runs (empty when there are none).
        leading_runs: the tests of runs that are exactly a pattern's leading `<class>*` with no
            first character in the run (one at most for a single pattern; a union has one per
            distinct run), or None when some optional run is elsewhere (`a?b`, a run after a
            lookbehind), where only the regex knows what a trailing run means.
        leads: fixed texts one of which every match starts with, each after an optional run
            (after lookbehinds or anchors, which take no text); None when unknown.
        exact: True when a match starts exactly where a lead's run (or, with no run, its text)
            starts, so text that ends in a run and a proper start of a lead is exactly a
            partial match. False for loose leads (a lookbehind before them, or text after the
            lead that may still fail): a lead is then needed but not enough.
        whole: True when the pattern matches only the leads' texts (a literal set, or
            `</think>|(?=<tool_call>)` whose lookahead's text counts): each lead is a whole match.
        lead: the single exact lead, when there is exactly one; else None.
    """

    first_characters: str | None
    run_tests: tuple[Callable[[str], Any], ...]
    leading_runs: tuple[Callable[[str], Any], ...] | None
    leads: tuple[Lead, ...] | None
    exact: bool
    whole: bool
    lead: Lead | None = field(init=False, repr=False)

    def __post_init__(self) -> None:
        single = self.leads[0] if self.exact and self.leads and len(self.leads) == 1 else None
        object.__setattr__(self, "lead", single)

    @classmethod
    def union(cls, starts: Iterable["MatchStart"]) -> "MatchStart":
        """What a match of any of several delimiters starts with (for a watch state)."""
        starts = list(starts)
        first = (
            None
            if any(s.first_characters is None for s in starts)
            else "".join(sorted(set().union(*(s.first_characters for s in starts))))
        )
        runs = (
            None
            if any(s.leading_runs is None for s in starts)
            else tuple(dict.fromkeys(run for s in starts for run in s.leading_runs))
        )
        leads = (
            None
            if any(s.leads is None for s in starts)
            else tuple(dict.fromkeys(lead for s in starts for lead in s.leads))
        )
        exact = all(s.exact for s in starts) and len({lead.run for lead in leads or ()}) <= 1
        return cls(
            first,
            tuple(test for s in starts for test in s.run_tests),
            runs,
            leads,
            exact,
            all(s.whole for s in starts),
        )

    def hold_without_match(self, text: str, pos: int, at_end: bool) -> int:
        """Where to hold `text[pos:]` when its start shows no match can be complete in it; -1 when the regex must decide.

        With a single exact lead (before the end): no match without the lead's text, and a partial
        match is exactly a run and a proper start of the lead at the end. Otherwise: no match without
        one of `first_characters`, and a partial match needs the text to end in a run
        character, which for leading runs is exactly the trailing run.
        """
        n = len(text)
        lead = self.lead
        if lead is not None and not at_end:  # (at the end a found lead is scanned again: test less)
            literal = lead.text
            first = literal[0]
            at = text.find(first, pos)
            if at != -1 and text.find(literal, at) != -1:
                return -1
            # The hold of text without the lead: its run and a proper start of the lead at the very end.
            hold = n
            if at != -1:
                i = text.find(first, max(at, n - len(literal) + 1))
                while i != -1:
                    if literal.startswith(text[i:]):
                        hold = i
                        break
                    i = text.find(first, i + 1)
            run = lead.run
            if run is not None:
                while hold > pos and text[hold - 1] in run:
                    hold -= 1
            return hold
        first = self.first_characters
        if first is None:
            return -1
        for char in first:
            if text.find(char, pos) != -1:
                return -1
        if at_end or n == pos:
            return n
        last = text[-1]
        if not any(test(last) for test in self.run_tests):
            return n
        if self.leading_runs is None:
            return -1
        hold = n
        for run in self.leading_runs:
            start = n
            while start > pos and run(text[start - 1]):
                start -= 1
            hold = min(hold, start)
        return hold


UNKNOWN_START = MatchStart(None, (), None, None, False, False)


def literal_match_start(literals: Iterable[str]) -> MatchStart:
    """The `MatchStart` of a set of literals: each is a whole match and an exact lead."""
    literals = tuple(dict.fromkeys(literals))
    first = "".join(sorted({literal[0] for literal in literals}))
    return MatchStart(first, (), (), tuple(Lead(None, literal) for literal in literals), True, True)


def match_start(compiled: regex.Pattern) -> MatchStart:
    """The `MatchStart` of a compiled template pattern (`UNKNOWN_START` when it cannot be analysed).

    The leads are, by preference: the few fixed texts the pattern matches (exact, whole);
    else an optional run and the fixed text every match starts with (exact); else the texts
    every match starts with after lookbehinds or anchors, or one per alternative (loose).
    """
    parsed = _parsed(compiled)
    if parsed is None:
        return UNKNOWN_START
    items = list(parsed)
    profile = _first_characters_after_runs(items)
    if profile is None:
        first, run_tests, leading_run, leading_runs = None, (), None, None
    else:
        first, run_tests = "".join(sorted(profile[0])), tuple(profile[1])
        leading_run = _leading_run(items, profile)
        leading_runs = () if not run_tests else (leading_run,) if leading_run is not None else None
    whole = _whole_texts(items)
    if whole and "" not in whole:
        leads = tuple(
            Lead(None, text) for text in sorted(whole, key=lambda text: (-len(text), text))
        )
        return MatchStart(first, run_tests, leading_runs, leads, True, True)
    lead = None if profile is None else _fixed_lead(items, leading_run)
    if lead is not None:
        return MatchStart(first, run_tests, leading_runs, (lead,), True, False)
    loose = _leads(items)
    leads = None if loose is None else tuple(dict.fromkeys(loose))
    return MatchStart(first, run_tests, leading_runs, leads, False, False)


def pattern_literal(text: str) -> str:
    """`text` as a pattern that matches exactly it, for patterns shown to an author.

    Escapes only what a template pattern reads specially outside a character class
    (``. ^ $ * + ? { } [ ] \\ | ( )``); spaces, ``-``, ``#`` and every other character stay as
    written, so the pattern reads like the text: ``<tool-call>`` stays ``<tool-call>`` and
    ``<|im_end|>`` becomes ``<\\|im_end\\|>`` (`regex.escape` would write ``<tool\\-call>``).
    Template patterns are never verbose, where spaces and ``#`` would be syntax.
    """
    return _SPECIAL_OUTSIDE_CLASS.sub(r"\\\g<0>", text)


class PatternTree(NamedTuple):
    """A template pattern as the standard parser reads it (`read_pattern`).

    Attributes:
        parsed: the parse tree (`re._parser.SubPattern`); its named groups are renamed
            ``g0``, ``g1``... in the order they are written.
        group_names: group number -> the group's name as the template writes it, for every
            named group (two alternatives may give the same name to two groups).
    """

    parsed: sre_parser.SubPattern
    group_names: dict[int, str]


def read_pattern(compiled: regex.Pattern) -> PatternTree | None:
    """`compiled` parsed by the standard parser, for reading what its matches look like.

    Every reader of a pattern's shape goes through here (the scanners' shortcuts, the grammar
    wing), so that they all refuse the same syntax. None when the pattern uses case folding,
    verbose mode, ASCII or locale classes, or syntax the standard parser does not know or
    would read differently (it warns about POSIX classes and set operations; a `{` that is not
    a counted repeat may be the regex module's fuzzy matching, ``(?:</r>){e<=1}``, which the
    standard parser takes for literal text).
    """
    if compiled.flags & (
        regex.IGNORECASE | regex.VERBOSE | regex.FULLCASE | regex.ASCII | regex.LOCALE
    ):
        return None
    if NOT_A_COUNTED_REPEAT.search(compiled.pattern):
        return None
    source, renamed = _renamed_groups(compiled.pattern)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            parsed = sre_parser.parse(source)
    except Exception:  # regex-module syntax the standard parser does not know, or a warning
        return None
    if parsed.state.flags & (
        sre_constants.SRE_FLAG_IGNORECASE
        | sre_constants.SRE_FLAG_ASCII
        | sre_constants.SRE_FLAG_LOCALE
    ):
        return None
    group_names = {index: renamed[name] for name, index in parsed.state.groupdict.items()}
    return PatternTree(parsed, group_names)


def _parsed(compiled: regex.Pattern) -> sre_parser.SubPattern | None:
    tree = read_pattern(compiled)
    return None if tree is None else tree.parsed


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
            if av not in (
                sre_constants.AT_END,
                sre_constants.AT_END_STRING,
                sre_constants.AT_END_LINE,
            ):
                most = max(
                    most, 1
                )  # start anchors and word boundaries look at the previous character
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
            if av not in (
                sre_constants.AT_BEGINNING,
                sre_constants.AT_BEGINNING_STRING,
                sre_constants.AT_BEGINNING_LINE,
            ):
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
    parsed = _parsed(compiled)
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
            items = list(
                av[3]
            )  # a group that ends the pattern (without scoped flags such as (?i:...)): its own ending
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
    parsed = _parsed(compiled)
    width = None if parsed is None else _look_back(list(parsed))
    return UNMEASURED_CONTEXT if width is None else width


_GROUP_NAME = regex.compile(r"\(\?P?<(?![=!])(\w+)>")


def _renamed_groups(pattern: str) -> tuple[str, dict[str, str]]:
    """`pattern` with every named group renamed ``g0``, ``g1``..., and the new names' names as
    written. Group names do not change what matches, and the standard parser then reads names
    reused across alternatives and the ``(?<name>...)`` spelling. Escapes and character
    classes are left as they are."""
    out, names, index, in_class, class_start = [], {}, 0, False, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            out.append(pattern[index : index + 2])
            index += 2
            class_start = False  # an escape is a member: a "]" after it closes the class
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
            found = _GROUP_NAME.match(pattern, index)
            if found is not None:
                new = f"g{len(names)}"
                names[new] = found.group(1)
                out.append(f"(?P<{new}>")
                index = found.end()
                continue
        out.append(char)
        index += 1
    return "".join(out), names


def _leads(items: list) -> list[Lead] | None:
    """The `Lead`s of parsed pattern `items`: every match starts with one of them. None when unknown."""
    index = 0
    while index < len(items) and (
        items[index][0] is sre_constants.AT
        or (
            items[index][0] in (sre_constants.ASSERT, sre_constants.ASSERT_NOT)
            and items[index][1][0] == -1
        )
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
        run_characters = _class_characters(
            list(body[0][1]) if body[0][0] is sre_constants.IN else body
        )
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


class PatternBoundError(ValueError):
    """A pattern over `MAX_PATTERN_SIZE` or `MAX_GROUP_DEPTH`; the message says which, without a key."""


def pattern_size(pattern: str, limit: int = MAX_PATTERN_SIZE) -> int:
    """How many pieces `pattern` compiles to: characters, escapes and classes, a counted repeat's
    operand counted as many times as its least count (the `regex` module copies it that many
    times), and groups as the sum of their alternatives.

    Read from the text alone, in one pass, without compiling: whitespace and a `#` never take
    a repeat (in verbose mode they are not its operand), and a character class ends at its
    first `]`, so the size errs on the large side, never on the small one. A pattern that may
    turn verbose mode on (`(?x)`), where a `#` comment may hide any character, is counted
    coarsely: its length times every repeat's least count, its depth the number of its `(`.

    Raises:
        PatternBoundError: groups opened more than `MAX_GROUP_DEPTH` deep, a size past `limit`,
            or a repeat count of more than `MAX_COUNT_DIGITS` digits (raised as soon as read).
    """
    if _VERBOSE_FLAG.search(pattern):
        return _coarse_size(pattern, limit)
    return _scanned_size(pattern, limit)


def _too_large(limit: int, index: int) -> PatternBoundError:
    return PatternBoundError(
        f"is too large to compile: over {limit:,} pieces once its counted repeats are written out "
        f"(at character {index}; a repeat such as a{{1000}} is a thousand pieces). Use an "
        "open-ended repeat (a+, a{1,}) or a smaller count"
    )


def _counted_copies(counted: regex.Match) -> int:
    """The least count of a counted repeat (at least 1), after the digits check."""
    least, _, most = counted.groups()
    if max(len(least), len(most or "")) > MAX_COUNT_DIGITS:
        raise PatternBoundError(
            f"has a repeat count of more than {MAX_COUNT_DIGITS} digits (at character {counted.start()})"
        )
    return max(1, int(least or 0))


def _coarse_size(pattern: str, limit: int) -> int:
    """`pattern_size` of a pattern that may be verbose: an upper bound read without its structure."""
    if pattern.count("(") > MAX_GROUP_DEPTH:
        raise PatternBoundError(
            f"may nest groups more than {MAX_GROUP_DEPTH} deep (in verbose mode every '(' counts)"
        )
    size = len(pattern)
    for counted in _COUNTED_REPEAT.finditer(pattern):
        if counted.group(1) or counted.group(2):
            size *= _counted_copies(counted)
            if size > limit:
                raise _too_large(limit, counted.start())
    return size


def _scanned_size(pattern: str, limit: int) -> int:
    """`pattern_size` of a pattern without verbose mode, read piece by piece."""
    # One frame per open group: [its size so far, the size of its last piece (what a repeat takes)].
    frames = [[0, 0]]
    index, length = 0, len(pattern)
    while index < length:
        char = pattern[index]
        frame = frames[-1]
        if char == "\\":
            end = index + 2
            if (
                pattern[index + 1 : index + 2] in tuple(_BRACED_ESCAPES)
                and pattern[end : end + 1] == "{"
            ):
                close = pattern.find("}", end)
                end = length if close == -1 else close + 1
            frame[0], frame[1] = frame[0] + 1, 1
            index = end
        elif char == "[":
            frame[0], frame[1] = frame[0] + 1, 1
            index = _class_end(pattern, index)
        elif char == "(" and pattern.startswith("(?#", index):
            close = pattern.find(")", index)  # a comment takes nothing, and may hold any character
            index = length if close == -1 else close + 1
        elif char == "(":
            header = _GROUP_HEADER.match(pattern, index + 1)
            if header is not None and header.group().endswith(")"):
                index = header.end()  # inline flags, or a call (?R), (?1): nothing to compile
                continue
            if len(frames) > MAX_GROUP_DEPTH:
                raise PatternBoundError(
                    f"nests groups more than {MAX_GROUP_DEPTH} deep (at character {index})"
                )
            frames.append([0, 0])
            index = index + 1 if header is None else header.end()
        elif char == ")" and len(frames) > 1:
            size = frames.pop()[0]
            parent = frames[-1]
            parent[0], parent[1] = parent[0] + size, size
            index += 1
        elif (
            char == "{"
            and (counted := _COUNTED_REPEAT.match(pattern, index))
            and (counted.group(1) or counted.group(2))
        ):
            copies = _counted_copies(counted)
            frame[0] += frame[1] * (copies - 1)
            frame[1] *= copies
            index = counted.end()
        elif char in "|":
            frame[0], frame[1] = frame[0] + 1, 0
            index += 1
        elif char in "*+?":
            index += 1  # a repeat the regex module does not write out
        elif char.isspace() or char == "#":
            frame[0] += 1  # never what a repeat takes: the last piece stays what it was
            index += 1
        else:
            frame[0], frame[1] = frame[0] + 1, 1
            index += 1
        if frame[0] > limit or (len(frames) > 1 and sum(f[0] for f in frames) > limit):
            raise _too_large(limit, index)
    return sum(frame[0] for frame in frames)


def _class_end(pattern: str, index: int) -> int:
    """Index after the character class opened at `pattern[index]`: its first `]` that is not
    escaped or first in the class. (A nested set of version 1 syntax ends later than that:
    reading less of it as a class only makes `pattern_size` larger.)"""
    index += 1
    if pattern[index : index + 1] == "^":
        index += 1
    if pattern[index : index + 1] == "]":
        index += 1
    while index < len(pattern) and pattern[index] != "]":
        index += 2 if pattern[index] == "\\" else 1
    return index + 1


# -- a pattern's text cut where its parse tree says -------------------------------------------
# Lenient reading (`engine.recovery`, `engine.strays`) makes patterns out of parts of a
# template's: its top-level alternatives, an alternative without its leading lookbehind, what
# is on either side of a group, what follows an open's leading marker. The tree says where a
# part ends (`read_pattern`); `_structure` finds the same place in the text, and a cut is kept
# only when the tree read the pattern (so every reader refuses the same syntax).


def _structure(pattern: str) -> list[tuple[int, str, int]]:
    """`(offset, character, depth)` of each `(`, `)` and `|` of `pattern` that is syntax (not
    escaped, not in a character class); `depth` is the group depth before the character."""
    marks, depth, index, length = [], 0, 0, len(pattern)
    while index < length:
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if char == "[":
            index = _class_end(pattern, index)
            continue
        if char in "(|)":
            marks.append((index, char, depth))
            depth += 1 if char == "(" else -1 if char == ")" else 0
        index += 1
    return marks


def _readable(pattern: str) -> bool:
    try:
        compiled = regex.compile(pattern, regex.DOTALL)
    except (regex.error, ValueError, OverflowError, RecursionError):
        return False
    return read_pattern(compiled) is not None


def top_level_alternatives(pattern: str) -> list[str] | None:
    """`pattern` cut at its top-level `|`, in order; None when the tree cannot read it."""
    if not _readable(pattern):
        return None
    cuts = [at for at, char, depth in _structure(pattern) if char == "|" and depth == 0]
    bounds = [-1, *cuts, len(pattern)]
    return [pattern[a + 1 : b] for a, b in zip(bounds, bounds[1:])]


def group_end(pattern: str, index: int) -> int | None:
    """The offset of the `)` that closes the group opened at `pattern[index]`, or None."""
    marks = _structure(pattern)
    opened = next((depth for at, char, depth in marks if at == index and char == "("), None)
    if opened is None:
        return None
    return next(
        (at for at, char, depth in marks if at > index and char == ")" and depth == opened + 1),
        None,
    )


def around_group(pattern: str, name: str) -> tuple[str, str] | None:
    """The text of `pattern` before and after its group `(?P<name>…)`, when that group stands
    at the top level of a pattern with one alternative; else None."""
    if not _readable(pattern):
        return None
    start = pattern.find(f"(?P<{name}>")
    marks = _structure(pattern)
    if start < 0 or any(char == "|" and depth == 0 for _, char, depth in marks):
        return None
    if not any(at == start and char == "(" and depth == 0 for at, char, depth in marks):
        return None
    end = group_end(pattern, start)
    return None if end is None else (pattern[:start], pattern[end + 1 :])


def without_leading_lookbehind(alternative: str) -> str | None:
    """`alternative` without the lookbehind it starts with, or None when it starts with none."""
    if not alternative.startswith(("(?<=", "(?<!")):
        return None
    end = group_end(alternative, 0)
    return None if end is None else alternative[end + 1 :]


def alternative_endings(pattern: str) -> list[str]:
    """The text each top-level alternative of `pattern` ends with (`end_literal`), where one
    does; [] when the tree cannot read the pattern."""
    endings = []
    for alternative in top_level_alternatives(pattern) or ():
        try:
            ending = end_literal(regex.compile(alternative, regex.DOTALL))
        except (regex.error, ValueError, OverflowError, RecursionError):
            ending = None
        if ending and ending.strip():
            endings.append(ending)
    return endings


# A run of whitespace a pattern may write after a marker: `\s*`, `\s+`, `\n?`, ` *`...
_WHITESPACE_RUN = regex.compile(r"(?:\\s|\\n|\\t| |\\r)(?:[*+?]|\{\d*,?\d*\})?")


def after_leading_marker(compiled: regex.Pattern) -> regex.Pattern | None:
    """What an open pattern matches after its leading marker: `compiled` without the literal
    text every match starts with (and the whitespace run after it), when the text left still
    starts with a marker of its own (a character that is neither a letter, a digit nor a
    blank) and holds every named group: ``<tool_call>\\s*<function=(?P<name>\\w+)>`` gives
    ``<function=(?P<name>\\w+)>``. None otherwise (no leading literal of three characters or
    more, a pattern the tree cannot read, what is left may match nothing)."""
    tree = read_pattern(compiled)
    if tree is None:
        return None
    literal = []
    for op, av in tree.parsed:
        if op is not sre_constants.LITERAL:
            break
        literal.append(chr(av))
    if len(literal) < 3:
        return None
    source, index = compiled.pattern, 0
    for char in literal:  # the same characters in the text, each plain or escaped
        if source.startswith(char, index) and char not in "\\.^$*+?{}[]|()":
            index += 1
        elif source.startswith("\\" + char, index) and not char.isalnum():
            index += 2
        else:
            return None
    run = _WHITESPACE_RUN.match(source, index)
    rest = source[run.end() if run else index :]
    first = rest[1:2] if rest.startswith("\\") else rest[:1]
    plain = not rest.startswith("\\")
    if not first or first.isalnum() or first.isspace() or (plain and first in ".^$*+?{}[]|()"):
        return None
    try:
        inner = regex.compile(rest, compiled.flags)
    except (regex.error, ValueError, OverflowError, RecursionError):
        return None
    if set(inner.groupindex) != set(compiled.groupindex) or inner.match(""):
        return None
    return inner if read_pattern(inner) is not None else None
