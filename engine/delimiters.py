"""Delimiters: finding an open or close marker in streamed text, and knowing when a find is final.

A delimiter is a set of literals or one regex. Scanning the undecided text
of the stream answers two questions at once:

* the earliest match that is *final*: no continuation of the stream could
  move it, lengthen it or change its captures, so committing it now gives
  the same result as parsing the whole text in one shot (streaming equals
  one-shot, see docs/template-language.md);
* the *hold position*: the leftmost offset from which the text may still be
  (part of) this delimiter. Text before it can be emitted; text from it on
  is held until more input, or the end of the stream, decides.

Its `MatchStart` (`pattern_shapes`) answers most scans without the regex: text
without the pattern's lead or first characters holds no match. Otherwise the
`regex` module's partial matching decides, plus two probes, because a plain
partial search misses three cases: a complete match found later hides an
earlier partial one; a match whose higher-priority alternative ran into the
end of the text (`abcd|ab` on `...abc`, a greedy optional group, a lookahead)
could still change; and end-of-text assertions (`$`, `\\b`) are decided by the
next character. The first two are caught with `(?:P)(?!)` and
`(?:P)(*PRUNE)(?!)` under partial matching, the third by re-matching with two
different following characters.

Literal delimiters are scanned together by their watch state
(`watch.LiteralScan`, which also knows that a literal at the very end of the
text is complete); `Delimiter.scan` is for patterns.
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass, field

import regex

from .errors import PatternTimeoutError, shorten
from .pattern_shapes import MatchStart, context_width, literal_match_start, match_start

# Characters appended to test whether a match depends on what follows it:
# one that is neither a word character nor a newline, and one word character.
_NEXT_CHARACTER_PROBES = ("\x00", "a")


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
        start: what every match starts with (`pattern_shapes.MatchStart`).
        context_width: decided characters before a match that the pattern may look at.
    """

    field: str
    side: str
    path: str
    literals: tuple[str, ...] | None
    pattern: regex.Pattern
    source: str
    start: MatchStart = field(repr=False)
    context_width: int = 0

    @classmethod
    def from_literals(
        cls, field_name: str, side: str, path: str, literals: list[str]
    ) -> "Delimiter":
        """A delimiter matching any of `literals` (non-empty strings); the longest wins at one position."""
        ordered = tuple(sorted(dict.fromkeys(literals), key=len, reverse=True))
        compiled = regex.compile(
            "|".join(regex.escape(literal) for literal in ordered),
            regex.DOTALL,
            cache_pattern=False,  # a template's own: not kept in the regex module's cache
        )
        source = literals[0] if len(literals) == 1 else " | ".join(literals)
        return cls(field_name, side, path, ordered, compiled, source, literal_match_start(ordered))

    @classmethod
    def from_pattern(
        cls, field_name: str, side: str, path: str, compiled: regex.Pattern
    ) -> "Delimiter":
        """A delimiter matching the compiled regex `compiled` (compiled with DOTALL)."""
        return cls(
            field_name,
            side,
            path,
            None,
            compiled,
            compiled.pattern,
            match_start(compiled),
            context_width(compiled),
        )

    @functools.cached_property
    def _probes(self) -> tuple[regex.Pattern | None, regex.Pattern | None]:
        """`(dead_end, first_win)`: the pattern followed by `(?!)`, and by `(*PRUNE)(?!)` (see the module docstring)."""
        body = self.pattern.pattern + ("\n" if self.pattern.flags & regex.VERBOSE else "")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                return regex.compile(
                    f"(?:{body})(?!)", self.pattern.flags, cache_pattern=False
                ), regex.compile(f"(?:{body})(*PRUNE)(?!)", self.pattern.flags, cache_pattern=False)
            except regex.error:
                return None, None

    def scan(
        self, text: str, pos: int, at_end: bool, timeout: float | None = None
    ) -> tuple[DelimiterMatch | None, int]:
        """Look for this pattern delimiter in `text[pos:]`, where `text` ends at the edge of what has arrived.

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
        hold = self.start.hold_without_match(text, pos, at_end)
        if hold >= 0:
            return None, hold
        try:
            if at_end:
                found = self._first_match(text, pos, timeout)
                return (None if found is None else self._wrap(found)), len(text)
            return self._scan_partial(text, pos, timeout)
        except TimeoutError:
            raise PatternTimeoutError(
                f"{self.path}: pattern too slow on this input (over the {timeout} s budget): {shorten(self.source, 120)}",
                field=self.field or None,
                key=self.path,
            ) from None

    def _first_match(self, text: str, pos: int, timeout: float | None) -> regex.Match | None:
        """`pattern.search(text, pos)`, trying only where the pattern's exact lead occurs.

        With an exact lead `<run>*<text>`, a match starts where the run before an occurrence
        of the text starts (the run cannot hold the text's first character), so one anchored
        match per occurrence finds the leftmost match without a regex scan.
        """
        lead = self.start.lead
        if lead is None:
            return self.pattern.search(text, pos, timeout=timeout)
        run, literal = lead.run, lead.text
        occurrence = text.find(literal, pos)
        while occurrence != -1:
            start = occurrence
            while run is not None and start > pos and text[start - 1] in run:
                start -= 1
            found = self.pattern.match(text, start, timeout=timeout)
            if found is not None:
                return found
            occurrence = text.find(literal, occurrence + 1)
        return None

    def _scan_partial(
        self, text: str, pos: int, timeout: float | None
    ) -> tuple[DelimiterMatch | None, int]:
        """`scan` before the end of the stream, by the regex: partial matching and the probes."""
        n = len(text)
        pattern = self.pattern
        if pos >= n:
            return (
                None,
                n,
            )  # nothing undecided (and the regex module can crash on an empty partial search)
        lead = self.start.lead
        found = (
            pattern.search(text, pos, partial=True, timeout=timeout)
            if lead is None
            else self._first_partial(text, pos, timeout)
        )
        if found is None:
            return None, n
        start = found.start()
        if found.partial:
            return None, start
        dead_end, first_win = self._probes
        if (
            dead_end is not None and lead is None
        ):  # (with an exact lead no earlier start can reach this match)
            # A partial match from an earlier start would have to run through the end of this
            # one, so looking up to `found.end()` finds it (and keeps big chunks linear). One
            # cut there may still fail on the text after it (`\s*</think>` on the `\n` before
            # a zero-width `(?=<tool_call>)`): only a partial match of the whole text holds.
            probe_from = pos
            while probe_from < start:
                earlier = dead_end.search(
                    text, probe_from, found.end(), partial=True, timeout=timeout
                )
                if earlier is None or earlier.start() >= start:
                    break
                if dead_end.match(text, earlier.start(), partial=True, timeout=timeout) is not None:
                    return None, earlier.start()
                probe_from = earlier.start() + 1
        if found.end() == n:
            return None, start  # at the edge of the text: the next character decides
        if first_win is not None and first_win.match(text, start, partial=True, timeout=timeout):
            return None, start
        if found.end() == n - 1:  # `$` before a final newline: the next character decides
            for probe in _NEXT_CHARACTER_PROBES:
                again = pattern.match(text + probe, start, timeout=timeout)
                if (
                    again is None
                    or again.span() != found.span()
                    or again.groupdict() != found.groupdict()
                ):
                    return None, start
        return self._wrap(found), n

    def _first_partial(self, text: str, pos: int, timeout: float | None) -> regex.Match | None:
        """`pattern.search(text, pos, partial=True)` for a pattern with an exact lead, the way
        `_first_match` does it: one anchored match per occurrence of the lead's text.

        A partial match before an occurrence would have to be a run and a proper start of
        the lead running to the end of the text, which cannot hold that occurrence; so only
        the text after the last occurrence needs the regex's own partial search.
        """
        run, literal = self.start.lead.run, self.start.lead.text
        occurrence = text.find(literal, pos)
        after = pos
        while occurrence != -1:
            start = occurrence
            while run is not None and start > pos and text[start - 1] in run:
                start -= 1
            found = self.pattern.match(text, start, partial=True, timeout=timeout)
            if found is not None:
                return found
            after = occurrence + 1
            occurrence = text.find(literal, after)
        if after >= len(text):
            return None
        return self.pattern.search(text, after, partial=True, timeout=timeout)

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
                f"{self.path}: pattern too slow on this input (over the {timeout} s budget): {shorten(self.source, 120)}",
                key=self.path,
            ) from None
