"""Explaining a delimiter pattern piece by piece, in a template author's words.

`explain_pattern(source)` reads a pattern (the `regex` module's syntax, as the
engine compiles it: DOTALL on, MULTILINE off) into a tree of `PatternPiece`s,
each with its place in the source and what it does: a literal, a character
class, what a quantifier takes (`\\s*`: any run of whitespace, as much as
there is), a group and what it captures, a lookbehind or lookahead (which
takes no text), the alternatives and the order they are tried in.

`pieces_taken(source, text, start)` says, for a match at `start`, which
characters each top-level piece of the matched alternative took;
`top_level_alternatives(source)` and `matching_alternative(source, text)` name
the alternatives and the one a matched text is; and
`literal_runs(source)` gives the fixed texts a pattern's matches hold, with
the pattern text around them (what a near miss of the pattern is measured
against, `engine.authoring.diagnosis`).

A pattern the reader does not model (rare syntax: recursion, conditionals,
fuzzy matching) is still explained down to the pieces it does know; the rest
is one ``"other"`` piece quoted as written.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import regex

from ..pattern_shapes import PatternBoundError, pattern_size
from .time_budget import regex_timeout

# Escapes that stand for a class of characters, and what they match.
_CLASS_ESCAPES = {
    "s": "one whitespace character (space, tab, newline, ...)",
    "S": "one character that is not whitespace",
    "d": "one digit",
    "D": "one character that is not a digit",
    "w": "one word character (letter, digit or _)",
    "W": "one character that is not a word character",
    "h": "one horizontal whitespace character",
}
_RUN_NAMES = {
    "s": "whitespace (spaces, tabs, newlines)",
    "S": "characters other than whitespace",
    "d": "digits",
    "D": "characters other than digits",
    "w": "word characters (letters, digits, _)",
    "W": "characters other than word characters",
    ".": "characters of any kind, newlines included",
}
_ANCHOR_ESCAPES = {
    "b": "a word boundary (takes no characters)",
    "B": "not a word boundary (takes no characters)",
    "A": "the start of the text (takes no characters)",
    "Z": "the end of the text (takes no characters)",
    "z": "the end of the text (takes no characters)",
    "G": "where the search started (takes no characters)",
    "K": "forget the text matched so far (\\K): the match starts here",
}
_CHARACTER_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "f": "\f",
    "v": "\v",
    "a": "\a",
    "e": "\x1b",
    "0": "\0",
}
_LOOKAROUNDS = {
    "(?=": (
        "lookahead",
        "looks ahead: the text after this point must match {inner}; it takes no characters, so they stay for what comes next",
    ),
    "(?!": (
        "negative-lookahead",
        "looks ahead: the text after this point must NOT match {inner}; it takes no characters",
    ),
    "(?<=": (
        "lookbehind",
        "looks behind: the text just before this point must match {inner}; it takes no characters",
    ),
    "(?<!": (
        "negative-lookbehind",
        "looks behind: the text just before this point must NOT match {inner}; it takes no characters",
    ),
}


@dataclass
class PatternPiece:
    """One piece of a pattern.

    Attributes:
        start, end: where it is in the pattern source (``[start, end)``).
        text: the piece as written.
        kind: ``literal``, ``class``, ``any``, ``anchor``, ``repeat``, ``group``,
            ``named-group``, ``non-capturing-group``, ``lookahead``, ``negative-lookahead``,
            ``lookbehind``, ``negative-lookbehind``, ``atomic-group``, ``alternatives``,
            ``alternative``, ``backreference``, ``flags`` or ``other``.
        meaning: what it does, in words.
        children: the pieces inside (a group's alternatives, a repeat's atom, ...).
        literal: for ``literal`` pieces, the text they match.
    """

    start: int
    end: int
    text: str
    kind: str
    meaning: str
    children: list["PatternPiece"] = field(default_factory=list)
    literal: str | None = None

    def walk(self):
        """This piece and every piece inside it, depth first."""
        yield self
        for child in self.children:
            yield from child.walk()

    def to_dict(self) -> dict:
        return {
            "start": self.start,
            "end": self.end,
            "text": self.text,
            "kind": self.kind,
            "meaning": self.meaning,
            "children": [child.to_dict() for child in self.children],
            "literal": self.literal,
        }


@dataclass
class PatternExplanation:
    """A pattern read piece by piece.

    Attributes:
        source: the pattern as written.
        alternatives: the top-level alternatives, each a ``alternative`` piece whose
            children are its pieces in order (one alternative for a pattern without ``|``).
        error: the `regex` module's compile error with its position (``"... at position 7"``),
            or None; error_position: that position, or None.
    """

    source: str
    alternatives: list[PatternPiece]
    error: str | None = None
    error_position: int | None = None

    def pieces(self) -> list[PatternPiece]:
        """Every piece, depth first (alternatives first when there are several)."""
        if len(self.alternatives) == 1:
            return [piece for top in self.alternatives[0].children for piece in top.walk()]
        return [piece for top in self.alternatives for piece in top.walk()]

    def lines(self) -> list[tuple[int, PatternPiece]]:
        """(depth, piece) rows for a plain outline, depth 0 at the top."""
        rows: list[tuple[int, PatternPiece]] = []

        def add(piece: PatternPiece, depth: int) -> None:
            rows.append((depth, piece))
            for child in piece.children:
                add(child, depth + 1)

        if len(self.alternatives) == 1:
            for piece in self.alternatives[0].children:
                add(piece, 0)
        else:
            for alternative in self.alternatives:
                add(alternative, 0)
        return rows

    def to_dict(self) -> dict:
        return {
            "source": self.source,
            "alternatives": [a.to_dict() for a in self.alternatives],
            "error": self.error,
            "error_position": self.error_position,
        }


class _Reader:
    """A recursive-descent reader of pattern source into `PatternPiece`s."""

    def __init__(self, source: str):
        self.source = source
        self.at = 0

    def peek(self, count: int = 1) -> str:
        return self.source[self.at : self.at + count]

    def alternatives(self, closing: bool) -> list[PatternPiece]:
        """Alternatives up to the end (or a ``)`` when `closing`), each an ``alternative`` piece."""
        found = []
        while True:
            start = self.at
            pieces = self.sequence()
            found.append(
                PatternPiece(
                    start, self.at, self.source[start : self.at], "alternative", "", pieces
                )
            )
            if self.peek() == "|":
                self.at += 1
                continue
            if closing and self.peek() == ")":
                return found
            if self.at >= len(self.source):
                return found
            # An unbalanced ")" at the top: keep the rest as one piece.
            rest = PatternPiece(
                self.at,
                len(self.source),
                self.source[self.at :],
                "other",
                "not read (unbalanced parenthesis)",
            )
            found[-1].children.append(rest)
            self.at = len(self.source)
            return found

    def sequence(self) -> list[PatternPiece]:
        pieces: list[PatternPiece] = []
        while self.at < len(self.source) and self.peek() not in ("|", ")"):
            atom = self.atom()
            if (
                atom.kind == "literal"
                and pieces
                and pieces[-1].kind == "literal"
                and not self._quantifier_next()
            ):
                last = pieces[-1]
                pieces[-1] = _literal(
                    last.start,
                    atom.end,
                    self.source[last.start : atom.end],
                    last.literal + atom.literal,
                )
                continue
            pieces.append(self.quantified(atom))
        return pieces

    def _quantifier_next(self) -> bool:
        char = self.peek()
        return (char != "" and char in "*+?") or (
            char == "{" and regex.match(r"\{\d*(,\d*)?\}", self.source[self.at :]) is not None
        )

    def quantified(self, atom: PatternPiece) -> PatternPiece:
        if not self._quantifier_next():
            return atom
        start = self.at
        char = self.peek()
        if char == "{":
            found = regex.match(r"\{(\d*)(,?)(\d*)\}", self.source[self.at :])
            low, comma, high = found.group(1), found.group(2), found.group(3)
            self.at += found.end()
            low_count = int(low or 0)
            high_count = None if comma and not high else int(high) if high else low_count
        else:
            self.at += 1
            low_count, high_count = {"*": (0, None), "+": (1, None), "?": (0, 1)}[char]
        mode = "greedy"
        if self.peek() == "?":
            mode, self.at = "lazy", self.at + 1
        elif self.peek() == "+":
            mode, self.at = "possessive", self.at + 1
        text = self.source[atom.start : self.at]
        return PatternPiece(
            atom.start,
            self.at,
            text,
            "repeat",
            _repeat_meaning(atom, low_count, high_count, mode, self.source[start : self.at]),
            [atom],
        )

    def atom(self) -> PatternPiece:
        start = self.at
        char = self.peek()
        if char == "(":
            return self.group()
        if char == "[":
            return self.character_class()
        if char == "\\":
            return self.escape()
        self.at += 1
        if char == ".":
            return PatternPiece(start, self.at, ".", "any", "any one character, newlines included")
        if char == "^":
            return PatternPiece(
                start, self.at, "^", "anchor", "the start of the text (takes no characters)"
            )
        if char == "$":
            return PatternPiece(
                start,
                self.at,
                "$",
                "anchor",
                "the end of the text, or just before a final newline (takes no characters)",
            )
        return _literal(start, self.at, char, char)

    def escape(self) -> PatternPiece:
        start = self.at
        following = self.source[self.at + 1 : self.at + 2]
        self.at += 2
        text = self.source[start : self.at]
        if following in _CLASS_ESCAPES:
            return PatternPiece(start, self.at, text, "class", _CLASS_ESCAPES[following])
        if following in _ANCHOR_ESCAPES:
            return PatternPiece(start, self.at, text, "anchor", _ANCHOR_ESCAPES[following])
        if following in _CHARACTER_ESCAPES:
            value = _CHARACTER_ESCAPES[following]
            return _literal(start, self.at, text, value)
        if following.isdecimal():
            while self.peek().isdecimal():
                self.at += 1
            text = self.source[start : self.at]
            return PatternPiece(
                start, self.at, text, "backreference", f"the same text group {text[1:]} matched"
            )
        if following in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[following]
            digits = self.source[self.at : self.at + width]
            if len(digits) == width and all(c in "0123456789abcdefABCDEF" for c in digits):
                self.at += width
                return _literal(start, self.at, self.source[start : self.at], chr(int(digits, 16)))
        if following in "kgpPN" or following.isalpha():
            if self.peek() == "{" or self.peek() == "<":
                closing = "}" if self.peek() == "{" else ">"
                end = self.source.find(closing, self.at)
                self.at = len(self.source) if end == -1 else end + 1
            text = self.source[start : self.at]
            return PatternPiece(
                start,
                self.at,
                text,
                "other",
                "a regex-module escape (see the regex module's documentation)",
            )
        if not following:
            return PatternPiece(start, self.at, text, "other", "a trailing backslash")
        return _literal(start, self.at, text, following)

    def character_class(self) -> PatternPiece:
        start = self.at
        self.at += 1
        negated = self.peek() == "^"
        if negated:
            self.at += 1
        members: list[str] = []
        first = True
        while self.at < len(self.source) and (self.peek() != "]" or first):
            first = False
            if self.peek() == "\\":
                following = self.source[self.at + 1 : self.at + 2]
                if following in _CLASS_ESCAPES:
                    members.append(_RUN_NAMES.get(following, _CLASS_ESCAPES[following]))
                else:
                    members.append(repr(_CHARACTER_ESCAPES.get(following, following)))
                self.at += 2
            elif self.peek() == "[" and self.peek(2) == "[:":
                end = self.source.find(":]", self.at)
                end = len(self.source) if end == -1 else end + 2
                members.append(self.source[self.at : end])
                self.at = end
            elif (
                self.at + 2 < len(self.source)
                and self.source[self.at + 1] == "-"
                and self.source[self.at + 2] != "]"
            ):
                members.append(f"{self.source[self.at]!r} to {self.source[self.at + 2]!r}")
                self.at += 3
            else:
                members.append(repr(self.source[self.at]))
                self.at += 1
        self.at = min(self.at + 1, len(self.source))
        text = self.source[start : self.at]
        listed = ", ".join(dict.fromkeys(members))
        meaning = (
            f"one character that is not any of: {listed}"
            if negated
            else f"one character among: {listed}"
        )
        return PatternPiece(start, self.at, text, "class", meaning)

    def group(self) -> PatternPiece:
        start = self.at
        head = self._group_head()
        self.at += len(head)
        if head == "(?#":
            end = self.source.find(")", self.at)
            self.at = len(self.source) if end == -1 else end + 1
            return PatternPiece(
                start, self.at, self.source[start : self.at], "other", "a comment (matches nothing)"
            )
        flags = regex.match(r"\(\?([a-zA-Z\-]+)\)", self.source[start:])
        if flags is not None:
            self.at = start + flags.end()
            return PatternPiece(
                start,
                self.at,
                flags.group(),
                "flags",
                f"switches flags {flags.group(1)!r} on (or off after -) for the pattern",
            )
        inner = self.alternatives(closing=True)
        if self.peek() == ")":
            self.at += 1
        text = self.source[start : self.at]
        inner_text = (
            self.source[start + len(head) : self.at - 1]
            if text.endswith(")")
            else self.source[start + len(head) : self.at]
        )
        children = inner[0].children if len(inner) == 1 else [_alternatives_piece(inner)]
        if head in _LOOKAROUNDS:
            kind, template = _LOOKAROUNDS[head]
            return PatternPiece(
                start, self.at, text, kind, template.format(inner=_quoted(inner_text)), children
            )
        named = regex.match(r"\(\?P?<(\w+)>", head)
        if named is not None:
            return PatternPiece(
                start,
                self.at,
                text,
                "named-group",
                f"captures the text it matches as {named.group(1)!r} "
                "(a transform reads it as {" + named.group(1) + "})",
                children,
            )
        if head == "(?:":
            return PatternPiece(
                start,
                self.at,
                text,
                "non-capturing-group",
                "groups its pieces (captures nothing)",
                children,
            )
        if head == "(?>":
            return PatternPiece(
                start,
                self.at,
                text,
                "atomic-group",
                "an atomic group: once matched, it never gives characters back",
                children,
            )
        if head == "(":
            return PatternPiece(
                start,
                self.at,
                text,
                "group",
                "a numbered group: captures the text it matches (unnamed, so a transform cannot use it)",
                children,
            )
        return PatternPiece(
            start, self.at, text, "non-capturing-group", f"a group with {head!r}", children
        )

    def _group_head(self) -> str:
        rest = self.source[self.at :]
        for head in ("(?<=", "(?<!", "(?=", "(?!", "(?:", "(?>", "(?#"):
            if rest.startswith(head):
                return head
        named = regex.match(r"\(\?P?<\w+>", rest)
        if named is not None:
            return named.group()
        scoped = regex.match(r"\(\?[a-zA-Z\-]+:", rest)
        if scoped is not None:
            return scoped.group()
        return "("


def _literal(start: int, end: int, text: str, value: str) -> PatternPiece:
    return PatternPiece(start, end, text, "literal", f"the text {value!r} exactly", literal=value)


def _quoted(text: str) -> str:
    return f"`{text}`"


def _alternatives_piece(alternatives: list[PatternPiece]) -> PatternPiece:
    start, end = alternatives[0].start, alternatives[-1].end
    for number, alternative in enumerate(alternatives, 1):
        alternative.meaning = f"alternative {number} of {len(alternatives)}"
    return PatternPiece(
        start,
        end,
        "|".join(a.text for a in alternatives),
        "alternatives",
        f"one of {len(alternatives)} alternatives, tried left to right at each position: the first that matches wins",
        alternatives,
    )


def _repeat_meaning(
    atom: PatternPiece, low: int, high: int | None, mode: str, quantifier: str
) -> str:
    what = atom.text
    if atom.kind == "class" and len(what) == 2 and what[1] in _RUN_NAMES:
        what = _RUN_NAMES[what[1]]
    elif atom.kind == "any":
        what = _RUN_NAMES["."]
    elif atom.kind == "literal":
        what = repr(atom.literal)
    elif atom.kind == "class":
        what = f"characters matching {atom.text}"
    else:
        what = f"repeats of {atom.text}"
    if high is None:
        count = (
            "any run of"
            if low == 0
            else f"a run of at least {low}"
            if low > 1
            else "a run of one or more"
        )
        amount = {
            "greedy": "as much as there is (greedy: it gives characters back only if the rest cannot match otherwise)",
            "lazy": "as little as possible (lazy: it stops at the first place where the rest of the pattern matches)",
            "possessive": "as much as there is, never giving any back (possessive)",
        }[mode]
        optional = ", possibly none" if low == 0 else ""
        return f"{count} {what}{optional}: it takes {amount}"
    if low == 0 and high == 1:
        return f"optionally {what}" + (" (lazy: skipped unless needed)" if mode == "lazy" else "")
    span = f"exactly {low}" if low == high else f"{low} to {high}"
    return f"{span} of {what} ({mode})"


def explain_pattern(source: str) -> PatternExplanation:
    """`source` read piece by piece (see the module docstring); never raises for bad input.

    A pattern over the template bounds (`pattern_shapes.pattern_size`) is not compiled or read:
    its explanation is the bound it is over, as one piece."""
    error = position = None
    try:
        pattern_size(source)
        regex.compile(source, regex.DOTALL, cache_pattern=False)
    except PatternBoundError as caught:
        whole = PatternPiece(0, len(source), source, "other", "not read")
        alternative = PatternPiece(0, len(source), source, "alternative", "", [whole])
        return PatternExplanation(source, [alternative], f"the pattern {caught}", None)
    except regex.error as caught:
        error, position = str(caught), caught.pos
    except (ValueError, OverflowError, RecursionError):
        error = "the pattern cannot be compiled"
    reader = _Reader(source)
    try:
        alternatives = reader.alternatives(closing=False)
    except (
        IndexError,
        AttributeError,
        ValueError,
        RecursionError,
    ):  # a truncated construct: keep what was read as one piece
        alternatives = [
            PatternPiece(
                0,
                len(source),
                source,
                "alternative",
                "",
                [PatternPiece(0, len(source), source, "other", "not read")],
            )
        ]
    if len(alternatives) > 1:
        for number, alternative in enumerate(alternatives, 1):
            alternative.meaning = (
                f"alternative {number} of {len(alternatives)}, tried in this order at each position"
            )
    return PatternExplanation(source, alternatives, error, position)


def top_level_alternatives(source: str) -> list[str]:
    """The alternatives of a pattern at its top level, as written (``a(b|c)|d`` -> ``["a(b|c)",
    "d"]``; ``|`` inside a group, a character class or after a backslash does not count)."""
    return [alternative.text for alternative in explain_pattern(source).alternatives]


def matching_alternative(
    source: str, matched: str, *, flags: int = regex.DOTALL, timeout: float = 0.05
) -> tuple[int, str] | None:
    """Which top-level alternative of `source` matches the whole of `matched` (the first that
    does, as the regex tries them): ``(its number from 1, its source)``, or None when none does
    (or the pattern does not compile, or a try runs past `timeout` seconds)."""
    for number, alternative in enumerate(top_level_alternatives(source), 1):
        try:
            pattern_size(alternative)
            compiled = regex.compile(alternative, flags, cache_pattern=False)
            if compiled.fullmatch(matched, timeout=regex_timeout(timeout)):
                return number, alternative
        except (regex.error, TimeoutError, PatternBoundError):
            continue
    return None


@dataclass(frozen=True)
class LiteralRun:
    """A fixed text every match of one alternative holds.

    Attributes:
        literal: the text.
        alternative: the alternative's number (1-based) and its source.
        before, after: the alternative's pattern text before and after the run (the
            context a match needs around the literal), "" when there is none.
        inside_lookahead: the run sits in a lookahead (the match looks at it but takes none of it).
    """

    literal: str
    alternative: int
    alternative_source: str
    before: str
    after: str
    inside_lookahead: bool = False


def literal_runs(source: str, shortest: int = 3) -> list[LiteralRun]:
    """The fixed texts of each top-level alternative (at least `shortest` characters), found at
    the alternative's top level or inside its plain groups and lookaheads; per alternative the
    longest first."""
    explanation = explain_pattern(source)
    if explanation.error:
        return []
    found = []
    for number, alternative in enumerate(explanation.alternatives, 1):
        runs: list[tuple[PatternPiece, bool]] = []
        stack = [(piece, False) for piece in reversed(alternative.children)]
        while stack:
            piece, ahead = stack.pop()
            if piece.kind == "literal" and len(piece.literal) >= shortest:
                runs.append((piece, ahead))
            elif piece.kind in (
                "group",
                "named-group",
                "non-capturing-group",
                "lookahead",
                "atomic-group",
            ):
                stack.extend(
                    (child, ahead or piece.kind == "lookahead")
                    for child in reversed(piece.children)
                )
        for piece, ahead in sorted(runs, key=lambda run: -len(run[0].literal)):
            found.append(
                LiteralRun(
                    piece.literal,
                    number,
                    alternative.text,
                    source[alternative.start : piece.start],
                    source[piece.end : alternative.end],
                    ahead,
                )
            )
    return found


def pieces_taken(
    source: str, text: str, start: int, *, flags: int = regex.DOTALL, timeout: float = 0.05
) -> list[tuple[PatternPiece, str]] | None:
    """For a match of `source` at `text[start:]`: each top-level piece of the alternative that
    matched there, with the characters it took (``""`` for lookarounds and anchors).

    Returns None when no alternative matches at `start` or the pattern cannot be split
    (numbered backreferences, a compile error, the time budget).
    """
    explanation = explain_pattern(source)
    if explanation.error or "\\" in source and regex.search(r"\\[1-9]", source):
        return None
    for alternative in explanation.alternatives:
        pieces = alternative.children
        if not pieces:
            continue
        wrapped = "".join(f"(?P<rt_piece{i}>{piece.text})" for i, piece in enumerate(pieces))
        try:
            compiled = regex.compile(wrapped, flags, cache_pattern=False)
            found = compiled.match(text, start, timeout=regex_timeout(timeout))
        except (regex.error, TimeoutError):
            return None
        if found is not None:
            return [(piece, found.group(f"rt_piece{i}") or "") for i, piece in enumerate(pieces)]
    return None
