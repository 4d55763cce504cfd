"""The watch: what the parser looks for while one region (or none) is open, and the scan that decides.

A template is compiled into one `WatchState` for the text outside explicit
regions (every open, and the implicit field's close) and one inside each field's
region (only its close). Each is built once, with everything its scans need:

* `WatchState.scan` answers, for the undecided text of the scan window, *which
  match to commit now, and where to hold*: first from what every match starts
  with (`pattern_shapes.MatchStart`: text without a delimiter's lead or first
  characters holds no match), then with one search over all the literal
  delimiters (`LiteralScan`), then with each pattern's own `Delimiter.scan`;
* `QuickTest.hold` answers the same for the parser's quick path, where a region
  is open and most chunks cannot start a delimiter: emit everything, hold from
  an offset, or let `WatchState.scan` decide.
"""

from __future__ import annotations

import re
import re._compiler as sre_compiler
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .delimiters import Delimiter, DelimiterMatch
from .pattern_shapes import Lead, MatchStart

if TYPE_CHECKING:
    from .template import FieldSpec


def _match_priority(match: DelimiterMatch) -> tuple:
    # Earliest start, then longest, then opens before closes, then field name.
    return (
        match.start,
        match.start - match.end,
        match.delimiter.side != "open",
        match.delimiter.field,
    )


# Literals up to this long have every proper start in a set (`LiteralScan.prefixes`).
SHORT_LITERAL = 256


@dataclass(frozen=True, eq=False)
class LiteralScan:
    """One search over every literal of a watch state's literal delimiters.

    The same literal in two fields goes to the one that wins ties: opens before closes,
    then field name.

    Attributes:
        owner: literal -> its delimiter.
        search: the alternation of every literal, longest first (the standard `re` module:
            the same answer as `regex` for escaped literals, and about twice as fast).
        prefixes: every proper start of a literal of at most `SHORT_LITERAL` characters.
        first_characters: the literals' first characters.
        longest: the longest literal's length.
        long_literals: the literals longer than `SHORT_LITERAL`, whose proper starts are
            tested with `startswith` (a set of all of them would hold the square of their
            length: 2 MB for one 2,000-character literal, in every watch state).
    """

    owner: dict[str, Delimiter]
    search: re.Pattern
    prefixes: frozenset[str]
    first_characters: str
    longest: int
    long_literals: tuple[str, ...] = ()

    @classmethod
    def of(cls, delimiters: list[Delimiter]) -> "LiteralScan | None":
        """The scan of the literal delimiters among `delimiters`, or None when there are none."""
        owner: dict[str, Delimiter] = {}
        for delimiter in sorted(delimiters, key=lambda d: (d.side != "open", d.field)):
            for literal in delimiter.literals or ():
                owner.setdefault(literal, delimiter)
        if not owner:
            return None
        ordered = sorted(owner, key=len, reverse=True)
        short = [literal for literal in ordered if len(literal) <= SHORT_LITERAL]
        return cls(
            owner,
            sre_compiler.compile("|".join(map(re.escape, ordered))),  # not kept in re's cache
            frozenset(literal[:k] for literal in short for k in range(1, len(literal))),
            "".join(dict.fromkeys(literal[0] for literal in ordered)),
            len(ordered[0]),
            tuple(literal for literal in ordered if len(literal) > SHORT_LITERAL),
        )

    def proper_start(self, tail: str) -> bool:
        """Whether non-empty `tail` is a proper start of one of the literals."""
        if tail in self.prefixes:
            return True
        return any(len(tail) < len(long) and long.startswith(tail) for long in self.long_literals)

    def scan(self, text: str, pos: int, at_end: bool) -> tuple[DelimiterMatch | None, int]:
        """`Delimiter.scan` for every literal delimiter at once: `(earliest match, hold)`.

        The match is the leftmost, longest literal; the hold is the leftmost offset where the
        text ends in the start of a literal (including a longer literal that extends the match).
        """
        found = self.search.search(text, pos)
        n = len(text)
        hold = n
        if not at_end:
            prefixes, long_literals = self.prefixes, self.long_literals
            lowest = max(pos, n - self.longest + 1)
            for first in self.first_characters:
                i = text.find(first, lowest)
                while i != -1 and i < hold:
                    if text[i:] in prefixes or (long_literals and self.proper_start(text[i:])):
                        hold = i
                        break
                    i = text.find(first, i + 1)
        if found is None:
            return None, hold
        start = found.start()
        if (
            not at_end
            and start < hold
            and n - start < self.longest
            and self.proper_start(text[start:])
        ):
            hold = start  # a longer literal may still complete at the same start
        literal = found.group()
        return DelimiterMatch(self.owner[literal], start, found.end(), literal, {}), hold


# At the end of the stream: pattern delimiter -> (searched from, its first match from there or None).
FinalSearches = dict[Delimiter, tuple[int, DelimiterMatch | None]]


@dataclass(eq=False)
class WatchState:
    """What the parser looks for while one region (or none) is open.

    Attributes:
        delimiters: the delimiters that can fire (see `watched_delimiters`).
        start: what a match of any of them starts with.
        literals: the one search over the literal delimiters, or None when there are none.
        patterns: the pattern delimiters, each scanned on its own.
        quick: the quick path's test of undecided text (`QuickTest`), or None when the
            delimiters are too complex for it.
    """

    delimiters: list[Delimiter]
    start: MatchStart
    literals: LiteralScan | None
    patterns: list[Delimiter]
    quick: "QuickTest | None"

    @classmethod
    def of(cls, delimiters: list[Delimiter]) -> "WatchState":
        starts = [delimiter.start for delimiter in delimiters]
        return cls(
            delimiters,
            MatchStart.union(starts),
            LiteralScan.of(delimiters),
            [delimiter for delimiter in delimiters if delimiter.literals is None],
            _quick_test(starts),
        )

    def scan(
        self,
        text: str,
        pos: int,
        at_end: bool,
        timeout: float | None = None,
        final_searches: FinalSearches | None = None,
    ) -> tuple[DelimiterMatch | None, int]:
        """Which match to commit now in `text[pos:]`, and where to hold.

        Args:
            text: the scan window; characters before `pos` are decided context (lookbehinds).
            pos: offset where undecided text starts.
            at_end: True once the stream has ended (nothing is held then).
            timeout: seconds allowed for each regex call, or None.
            final_searches: at the end of the stream, the searches made so far in this same
                `text` (filled in here), so each pattern searches the text once.

        Returns:
            `(match, hold)`: the earliest match (then the longest, opens before closes, then
            by field name) when it is final and starts before `hold`, else None; and the
            leftmost offset from which text may still be part of a delimiter (``len(text)``
            when nothing is pending). Text before the match, or before `hold`, is decided.

        Raises:
            PatternTimeoutError: a regex call exceeded `timeout`.
        """
        hold = self.start.hold_without_match(text, pos, at_end)
        if hold >= 0:
            return None, hold
        best, hold = (
            (None, len(text)) if self.literals is None else self.literals.scan(text, pos, at_end)
        )
        for delimiter in self.patterns:
            if at_end:
                match, delimiter_hold = (
                    _final_match(delimiter, text, pos, timeout, final_searches),
                    hold,
                )
            else:
                match, delimiter_hold = delimiter.scan(text, pos, at_end, timeout)
            if delimiter_hold < hold:
                hold = delimiter_hold
            if match is not None and (
                best is None or _match_priority(match) < _match_priority(best)
            ):
                best = match
        return (best, hold) if best is not None and best.start < hold else (None, hold)


def _final_match(
    delimiter: Delimiter, text: str, pos: int, timeout: float | None, searches: FinalSearches | None
) -> DelimiterMatch | None:
    """`delimiter`'s first match from `pos` in final `text`, reusing an earlier search.

    A search from an earlier offset that found its match at or after `pos` (or found
    none) answers a search from `pos` too. A `\\G` pattern depends on where it starts.
    """
    cached = None if searches is None else searches.get(delimiter)
    if cached is not None and cached[0] <= pos and (cached[1] is None or pos <= cached[1].start):
        return cached[1]
    match, _ = delimiter.scan(text, pos, True, timeout)
    if searches is not None and "\\G" not in delimiter.source:
        searches[delimiter] = (pos, match)
    return match


def watched_delimiters(
    fields: dict[str, "FieldSpec"], implicit: "FieldSpec | None", current: "FieldSpec | None"
) -> list[Delimiter]:
    """Delimiters that can fire while `current` is the open region.

    Inside an explicit region only its close can fire. Outside (in the
    implicit field, or nowhere when there is none), every open can, and the
    implicit field's close.
    """
    if current is not None and not current.implicit:
        return [current.close] if current.close is not None else []
    watched = [spec.open for spec in fields.values() if spec.open is not None]
    if implicit is not None and implicit.close is not None:
        watched.append(implicit.close)
    return watched


def watch_states(
    fields: dict[str, "FieldSpec"], implicit: "FieldSpec | None"
) -> tuple[WatchState, dict[str, WatchState], int]:
    """`(outside, inside, context_width)` of a template's fields: the watch state outside explicit
    regions, the one inside each field's region by name, and the decided characters before the
    scan position that any of their patterns may look at."""
    outside = WatchState.of(watched_delimiters(fields, implicit, None))
    inside = {
        name: WatchState.of(watched_delimiters(fields, implicit, spec))
        for name, spec in fields.items()
    }
    every = [delimiter for state in [outside, *inside.values()] for delimiter in state.delimiters]
    return outside, inside, max((delimiter.context_width for delimiter in every), default=0)


def _run_start(characters: frozenset[str] | None, at_least_one: bool = False) -> str:
    """`re` source for a whole leading run of `characters` (none when None).

    The run is taken only from its first character (`(?<![...])`) and possessively: no lead
    text starts with a run character, so trying from inside the run or giving characters
    back cannot find more, and without this a long run costs time quadratic in its length.
    """
    if characters is None:
        return ""
    members = "[" + "".join(map(re.escape, sorted(characters))) + "]"
    return f"(?<!{members}){members}{'+' if at_least_one else '*'}+"


def _alternation(texts) -> str:
    return (
        "(?:" + "|".join(map(re.escape, sorted(texts, key=lambda text: (-len(text), text)))) + ")"
    )


# Bound on the summed squared lengths of a state's texts for building its quick test.
_QUICK_TEST_SIZE = 200_000
# Text longer than this is tested for complete delimiter texts with `in`, and searched only near its end.
_LONG_TEXT = 256


@dataclass(frozen=True, slots=True)
class QuickTest:
    """The quick path's test of a watch state's undecided text (built by `_quick_test`).

    Attributes:
        search: `search(text)` returns None when no delimiter can start anywhere in `text`
            (all of it may be emitted); a match with group 1 set when no delimiter text is
            complete in `text` but it ends in a possible start of one (hold from
            `match.start()`, where a full scan holds); and a match without group 1 when a
            scan must decide.
        first: the one character every delimiter's text starts with, or "" when they differ.
            Text without it that does not end in one of `run_characters` needs no test.
        pair: the two characters every delimiter's text starts with, or "" when they differ.
            Text with `first` but without `pair`, and not ending in `first`, holds no start
            of a delimiter's text, so only a trailing run can matter.
        run_characters: the characters of the optional runs (`\\s*`) delimiters begin with.
        trailing_run: when only a trailing run can matter, the whole answer is a hold of
            it (`len(text.rstrip(trailing_run))`) if this is set (to the run's characters):
            the exact delimiters share that run and no loose one has a run. Else "" (search).
        texts: every delimiter's text, and `tail_width` the longest one's length less one:
            how far from the end a proper start of one can begin (after its run).
    """

    search: Callable[..., re.Match | None]
    first: str
    pair: str
    run_characters: frozenset[str]
    trailing_run: str
    texts: tuple[str, ...]
    tail_width: int

    def hold(self, text: str) -> int:
        """Where to hold non-empty `text` from: `len(text)` to emit it all, -1 when a scan must decide.

        Same answer as `search`, without searching when `first`, `pair` and `trailing_run` decide.
        """
        first, pair = self.first, self.pair
        if first not in text or (pair and pair not in text and text[-1] != first):
            # No delimiter's text can start in `text`: only a trailing run can start a delimiter.
            if text[-1] not in self.run_characters:
                return len(text)
            if self.trailing_run:
                return len(text.rstrip(self.trailing_run))
        if len(text) <= _LONG_TEXT:
            found = self.search(text)
        else:
            # A long chunk (a stored generation fed in blocks): the search tries its tails at
            # every possible start, so look for complete texts with `in` first (any of them
            # means a scan, the safe answer), then search only where a tail can start.
            if any(delimiter_text in text for delimiter_text in self.texts):
                return -1
            start = len(text) - self.tail_width
            while start > 0 and text[start - 1] in self.run_characters:
                start -= 1  # a tail starts at its run
            found = self.search(text, max(start, 0))
        if found is None:
            return len(text)
        return found.start() if found.lastindex else -1


def _quick_test(starts: list[MatchStart]) -> QuickTest | None:
    """The parser's quick test of text undecided in a watch state whose delimiters start as `starts`, or None.

    Each delimiter's matches start with one of its leads, known text after an optional run (`\\s*`):
    * exact leads (a literal set, a pattern of a few whole texts, a pattern that is a run
      and fixed text): a match is the run and the text, so a trailing start of one is a
      partial match;
    * loose leads (after a lookbehind, an alternation, a lookahead): the text is needed but
      not enough, so any sign of it means a scan.
    Trailing starts are answered with a hold only for exact delimiters that share one run
    (otherwise all are treated as loose), and only when no complete text follows.
    A complete text is matched from the start of the run before it, where its delimiter's
    match may start, so the leftmost answer is never a hold after a possible match.
    The search pattern holds only escaped text and plain character classes, so the
    standard `re` module (cheaper per call than `regex` on short chunks) gives the same answer.
    """
    exact: list[Lead] = []
    loose: list[Lead] = []
    for start in starts:
        if start.leads is None:
            return None
        (exact if start.exact else loose).extend(start.leads)
    if sum(len(text) ** 2 for _, text in exact + loose) > _QUICK_TEST_SIZE:
        return None  # every start of every text goes into the pattern: long texts scan instead
    if len({run for run, _ in exact}) > 1:
        loose, exact = loose + exact, []

    def by_run(leads: list) -> dict:
        groups: dict = {}
        for run, text in leads:
            groups.setdefault(run, set()).add(text)
        return groups

    def tails(leads: list) -> list[str]:
        found = []
        for run, texts in by_run(leads).items():
            starts = {text[:k] for text in texts for k in range(1, len(text))}
            if starts:
                found.append(_run_start(run) + _alternation(starts) + r"\Z")
            if run is not None:
                found.append(_run_start(run, at_least_one=True) + r"\Z")
        return found

    leads = exact + loose
    alternatives = [_run_start(run) + _alternation(texts) for run, texts in by_run(leads).items()]
    exact_tails, loose_tails = tails(exact), tails(loose)
    if exact_tails:
        complete_later = (
            "(?!.*?" + _alternation({text for _, text in leads}) + ")"
        )  # checked only where a tail is
        alternatives.append("(?=(" + "|".join(exact_tails) + "))" + complete_later)
    alternatives += loose_tails
    search = sre_compiler.compile("|".join(alternatives) or "(?!)", re.DOTALL).search
    firsts = {text[0] for _, text in leads}
    first = firsts.pop() if len(firsts) == 1 else ""
    run_characters = frozenset().union(*(run for run, _ in leads if run))
    plain_first = bool(first) and first not in run_characters  # no run can hold or end in it
    pairs = {text[:2] for _, text in leads}
    pair = pairs.pop() if plain_first and len(pairs) == 1 else ""
    if len(pair) < 2:
        pair = ""  # a one-character text: any `first` may be its start
    exact_runs = {run for run, _ in exact}
    trailing_run = ""
    if plain_first and exact_runs and None not in exact_runs and not any(run for run, _ in loose):
        trailing_run = "".join(sorted(run_characters))
    texts = tuple(sorted({text for _, text in leads}))
    tail_width = max((len(text) for text in texts), default=1) - 1
    return QuickTest(search, first, pair, run_characters, trailing_run, texts, tail_width)
