"""Delimiter patterns as grammar: a template regex turned into `ir` nodes a generator can follow.

`alternatives` reads a delimiter (its literals, or its pattern's parse tree) into the ways
a match can be written (`Alternative`): the text it consumes as a grammar node, with named
groups replaced by given values (the tool name for ``(?P<name>...)``), and what the pattern
asks of its surroundings (a lookbehind before it, a lookahead after it, the end of the text).

The grammar may be narrower than the pattern, never wider: `\\w` becomes ASCII word
characters, `\\s` becomes space, tab and line breaks; whatever cannot be said as a grammar
(a back-reference, a negative lookaround, case-insensitive matching, fuzzy matching, or
anything else `engine.pattern_shapes.read_pattern` does not read) raises `Unconstrainable`
with the reason.
"""

from __future__ import annotations

import re._constants as sre
import unicodedata
from dataclasses import dataclass

import regex

from ..pattern_shapes import read_pattern
from .ir import (
    EMPTY,
    Alt,
    CharSet,
    Lit,
    Node,
    Repeat,
    Seq,
    Text,
    alt,
    merge_ranges,
    quantifier,
    seq,
)


class Unconstrainable(ValueError):
    """A part of the template that no grammar here can say; the message says which and why."""


@dataclass(frozen=True)
class Alternative:
    """One way a delimiter can be written.

    Attributes:
        node: the text the match consumes, as a grammar node.
        lookbehind: True when the pattern looks at the text before the match (such as
            ``(?<=\\})``): only text that satisfies it may come before.
        lookahead: what the text after the match must start with (a trailing lookahead), or None.
        at_end: True when the match must end the text (a trailing ``$``).
    """

    node: Node
    lookbehind: bool = False
    lookahead: Node | None = None
    at_end: bool = False

    @property
    def zero_width(self) -> bool:
        """True when the match consumes no text (a lookahead or ``$`` alone)."""
        return self.node == EMPTY


_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, getattr(sre, "POSSESSIVE_REPEAT", None))
# What a generator writes for classes it narrows (a subset of what the class matches).
_SPACE_WRITTEN = ((9, 10), (13, 13), (32, 32))
_DIGIT_WRITTEN = ((48, 57),)
_WORD_WRITTEN = ((48, 57), (65, 90), (95, 95), (97, 122))
# ASCII characters that are neither word characters nor controls, plus tab and line breaks.
_NON_WORD_WRITTEN = ((9, 10), (13, 13), (32, 47), (58, 64), (91, 94), (96, 96), (123, 126))


_EXACT: dict[str, tuple[tuple[int, int], ...]] = {}


def _exact_ranges(category: str) -> tuple[tuple[int, int], ...]:
    """Every code point `\\s` or `\\d` matches, as ranges (for negated classes, which must be exact)."""
    if category not in _EXACT:
        _EXACT[category] = _category_ranges(category)
    return _EXACT[category]


def _category_ranges(category: str) -> tuple[tuple[int, int], ...]:
    if category == "space":
        test = regex.compile(r"\s").fullmatch
        codes = [code for code in range(0x3001) if test(chr(code))]
    else:
        codes = [code for code in range(0x110000) if unicodedata.category(chr(code)) == "Nd"]
    return merge_ranges((code, code) for code in codes)


class _Reader:
    """Turns one parsed pattern into grammar nodes."""

    def __init__(self, where: str, group_names: dict[int, str], values: dict):
        self.where = where
        self.group_names = group_names  # group index -> name as written in the template
        self.values = values
        self.in_lookahead = False

    def fail(self, what: str) -> Unconstrainable:
        return Unconstrainable(f"{self.where}: {what} has no grammar form")

    def items(self, items: list) -> Node:
        written: list[Node] = []
        index = 0
        while index < len(items):
            op, av = items[index]
            written.append(self.item(op, av))
            index += 1
            stop = self.substituted_class(op, av)
            # A run after a written group that could extend the group's match is left out: the
            # parser's group would take those characters into the value.
            while (
                stop is not None
                and index < len(items)
                and _optional_run_overlapping(items[index], stop, self)
            ):
                index += 1
        return seq(*written)

    def substituted_class(self, op, av) -> Node | None:
        """The character class a substituted group's pattern ends with (it could take more)."""
        if op is not sre.SUBPATTERN:
            return None
        name = self.group_names.get(av[0])
        if name is None or not isinstance(self.values.get(name), str):
            return None
        body = list(av[3])
        if not body or body[-1][0] not in _REPEATS:
            return None
        inner = list(body[-1][1][2])
        return self.items(inner) if len(inner) == 1 else None

    def item(self, op, av) -> Node:
        if op is sre.LITERAL:
            return Lit(chr(av))
        if op is sre.NOT_LITERAL:
            return CharSet(((av, av),), negated=True)
        if op is sre.ANY:
            return CharSet((), negated=True)
        if op is sre.IN:
            return self.char_set(list(av))
        if op is sre.BRANCH:
            return alt(*(self.items(list(branch)) for branch in av[1]))
        if op is sre.SUBPATTERN:
            group, add_flags, del_flags, body = av
            if add_flags & (sre.SRE_FLAG_IGNORECASE | sre.SRE_FLAG_VERBOSE) or del_flags:
                return self._raise("a group with inline flags")
            name = self.group_names.get(group)
            if name is not None and name in self.values:
                return self.substitute(name, self.items(list(body)))
            return self.items(list(body))
        if op is getattr(sre, "ATOMIC_GROUP", None):
            return self.items(list(av))
        if op in _REPEATS:
            low, high, body = av
            if low == 0 and not self.in_lookahead and _looks_around(list(body)):
                return EMPTY  # an optional part that looks around: never written (narrower)
            return Repeat(self.items(list(body)), low, None if high == sre.MAXREPEAT else high)
        if op is sre.AT and self.in_lookahead and av in (sre.AT_END, sre.AT_END_STRING):
            return EMPTY  # the end of the text, looked for after the match
        if op is sre.AT:
            return self._raise("an anchor inside the pattern")
        if op in (sre.ASSERT, sre.ASSERT_NOT) and self.in_lookahead:
            return EMPTY  # inside a lookahead, read only for its leads: a nested look is dropped
        if op in (sre.ASSERT, sre.ASSERT_NOT):
            return self._raise("a lookaround inside the pattern")
        return self._raise(f"the regex construct {op}")

    def _raise(self, what: str):
        raise self.fail(what)

    def substitute(self, name: str, body: Node) -> Node:
        value = self.values[name]
        if not isinstance(value, str):
            return value  # a grammar node written in the group's place
        if not regex.fullmatch(to_regex(body), value, flags=regex.DOTALL):
            raise Unconstrainable(
                f"{self.where}: the group '{name}' cannot hold {value!r} (its pattern does not match it)"
            )
        return Lit(value)

    def char_set(self, items: list) -> Node:
        negated = bool(items) and items[0][0] is sre.NEGATE
        if negated:
            items = items[1:]
        ranges: list[tuple[int, int]] = []
        narrowed = False
        for op, av in items:
            if op is sre.LITERAL:
                ranges.append((av, av))
            elif op is sre.RANGE:
                ranges.append(tuple(av))
            elif op is sre.CATEGORY and av is sre.CATEGORY_SPACE:
                ranges += _exact_ranges("space") if negated else _SPACE_WRITTEN
            elif op is sre.CATEGORY and av is sre.CATEGORY_DIGIT:
                ranges += _exact_ranges("digit") if negated else _DIGIT_WRITTEN
            elif op is sre.CATEGORY and av is sre.CATEGORY_WORD and not negated:
                ranges += _WORD_WRITTEN
            elif op is sre.CATEGORY and av is sre.CATEGORY_WORD:
                narrowed = True  # [^\w...]: written as ASCII non-word characters, below
            elif op is sre.CATEGORY and av is sre.CATEGORY_NOT_SPACE and not negated:
                if len(items) > 1:
                    return self._raise("a class mixing \\S with other characters")
                return CharSet(_exact_ranges("space"), negated=True)
            elif op is sre.CATEGORY and av is sre.CATEGORY_NOT_WORD and not negated:
                ranges += _NON_WORD_WRITTEN
            elif op is sre.CATEGORY and av is sre.CATEGORY_NOT_DIGIT and not negated:
                if len(items) > 1:
                    return self._raise("a class mixing \\D with other characters")
                return CharSet(_exact_ranges("digit"), negated=True)
            else:
                return self._raise(f"the character class item {op} {av}")
        if narrowed:
            # Not a word character and not one of `ranges`: ASCII punctuation and blanks.
            excluded = merge_ranges(ranges)
            kept = [
                code
                for low, high in _NON_WORD_WRITTEN
                for code in range(low, high + 1)
                if not any(a <= code <= b for a, b in excluded)
            ]
            return CharSet(merge_ranges((code, code) for code in kept))
        return CharSet(merge_ranges(ranges), negated)


def _looks_around(items: list) -> bool:
    """Whether parsed `items` hold a lookahead or lookbehind anywhere."""
    for op, av in items:
        if op in (sre.ASSERT, sre.ASSERT_NOT):
            return True
        if op is sre.SUBPATTERN and _looks_around(list(av[3])):
            return True
        if op is sre.BRANCH and any(_looks_around(list(branch)) for branch in av[1]):
            return True
        if op in _REPEATS and _looks_around(list(av[2])):
            return True
    return False


def _optional_run_overlapping(item, group_class: Node, reader: _Reader) -> bool:
    """Whether `item` is an optional run (``X*``, ``X?``) of a class sharing a character with
    `group_class`."""
    op, av = item
    if op not in _REPEATS or av[0] != 0:
        return False
    body = list(av[2])
    if len(body) != 1:
        return False
    run = reader.items(body)
    if not isinstance(run, CharSet) or not isinstance(group_class, CharSet):
        return isinstance(run, (CharSet, Lit))
    probe = [chr(code) for code in range(32, 127)] + ["\t", "\n", "é"]
    return any(run.contains(char) and group_class.contains(char) for char in probe)


def _strip_edges(items: list, reader: _Reader) -> Alternative:
    """One top-level alternative: leading lookbehinds, a trailing lookahead and a trailing
    ``$`` are read as requirements on the surroundings; the rest is the consumed text."""
    lookbehind = False
    while items and (
        (items[0][0] is sre.ASSERT and items[0][1][0] == -1)
        or (items[0][0] is sre.AT and items[0][1] is sre.AT_BEGINNING_STRING)
    ):
        if items[0][0] is sre.AT:
            raise reader.fail("a start-of-text anchor")
        lookbehind = True
        items = items[1:]
    lookahead = None
    at_end = False
    if items and items[-1][0] is sre.AT and items[-1][1] in (sre.AT_END, sre.AT_END_STRING):
        at_end = True
        items = items[:-1]
    elif items and items[-1][0] is sre.ASSERT and items[-1][1][0] == 1:
        reader.in_lookahead = True
        try:
            lookahead = reader.items(list(items[-1][1][1]))
        finally:
            reader.in_lookahead = False
        items = items[:-1]
    return Alternative(reader.items(items), lookbehind, lookahead, at_end)


def _distribute(items: list, group_names: dict[int, str], limit: int = 32) -> list[list]:
    """The pattern's alternatives as separate item lists: a top-level branch, and a branch in an
    unnamed group that starts or ends the pattern, are split (so that a lookahead alternative,
    as in ``\\s*(?:</x>|(?=<y>))``, becomes an alternative of its own)."""
    if len(items) == 1 and items[0][0] is sre.BRANCH:
        out = []
        for branch in items[0][1][1]:
            out += _distribute(list(branch), group_names, limit)
        return out[:limit]
    for index in (0, len(items) - 1) if items else ():
        op, av = items[index]
        if op is sre.BRANCH:
            branches = av[1]
        elif op is sre.SUBPATTERN and av[0] not in group_names and not (av[1] or av[2]):
            body = list(av[3])
            if len(body) != 1 or body[0][0] is not sre.BRANCH:
                continue
            branches = body[0][1][1]
        else:
            continue
        out = []
        for branch in branches:
            joined = items[:index] + list(branch) + items[index + 1 :]
            out += _distribute(joined, group_names, limit)
        return out[:limit]
    return [items]


def alternatives(
    delimiter, values: dict | None = None, where: str | None = None
) -> list[Alternative]:
    """The ways `delimiter` (an `engine.delimiters.Delimiter`) can be written.

    Args:
        delimiter: the delimiter; a literal set gives one alternative per literal.
        values: named group -> the text to write for it (``{"name": "get_weather"}``, checked
            against the group's pattern) or a grammar node to put in its place; other named
            groups are left as their pattern.
        where: the template path named in errors (default: the delimiter's own path).

    Raises:
        Unconstrainable: the pattern uses syntax no grammar here can say, or a value does not
            match its group.
    """
    where = where or delimiter.path
    if delimiter.literals is not None:
        return [Alternative(Lit(literal)) for literal in delimiter.literals]
    compiled = delimiter.pattern
    tree = read_pattern(compiled)
    if tree is None:
        raise Unconstrainable(
            f"{where}: the pattern uses syntax a grammar here cannot read (case folding, verbose"
            " mode, ASCII or locale classes, fuzzy matching such as {e<=1}, or syntax only the"
            " regex module knows)"
        )
    parsed, group_names = tree
    reader = _Reader(where, group_names, values or {})
    return [_strip_edges(branch, reader) for branch in _distribute(list(parsed), group_names)]


def expanded(node: Node, limit: int = 32) -> list[Node]:
    """`node` as alternatives none of which starts with an `Alt` or an optional part: leading
    alternatives are split, leading optional parts dropped (each result matches a subset of
    what `node` matches, and every match of `node` contains the start of one of them)."""
    items = list(node.items) if isinstance(node, Seq) else [node]
    while items and isinstance(items[0], Repeat) and items[0].min == 0:
        items = items[1:]
    if items and isinstance(items[0], Alt):
        head: list[Node] = []
        options = items[0].items
    elif len(items) > 1 and isinstance(items[0], Lit) and isinstance(items[1], Alt):
        head, options = [items[0]], items[1].items  # a literal, then alternatives: one lead each
        items = items[1:]
    else:
        return [seq(*items)] if items else []
    out: list[Node] = []
    for option in options:
        out += expanded(seq(*head, option, *items[1:]), limit)
        if len(out) >= limit:
            break
    return out[:limit]


def first_literal(node: Node) -> str | None:
    """The literal `node` starts with, or None."""
    if isinstance(node, Lit):
        return node.text or None
    if isinstance(node, Seq) and node.items and isinstance(node.items[0], Lit):
        return node.items[0].text or None
    return None


def leads(node: Node) -> set[str] | None:
    """Literal texts such that every text `node` matches contains one of them, or None when
    some alternative starts with no literal. Free text must never contain a lead of a
    delimiter that could match there: leads are what `Text.excludes` lists."""
    found: set[str] = set()
    options = expanded(node)
    if not options:
        return None
    for option in options:
        literal = first_literal(option)
        if literal is None:
            return None
        found.add(literal)
    return found


def to_regex(node: Node) -> str:
    """A regex (`regex` and xgrammar syntax) for a regular `node`.

    Raises:
        ValueError: `node` holds free text, a JSON value or a rule reference.
    """
    if isinstance(node, Lit):
        return "".join(_escape(char) for char in node.text)
    if isinstance(node, CharSet):
        return char_class(node)
    if isinstance(node, Seq):
        return "".join(
            _atom(item) if isinstance(item, Alt) else to_regex(item) for item in node.items
        )
    if isinstance(node, Alt):
        return "|".join(to_regex(item) for item in node.items)
    if isinstance(node, Repeat):
        return _atom(node.item) + quantifier(node.min, node.max)
    if isinstance(node, Text) and not node.excludes:
        chars = char_class(node.allowed) if node.allowed else "[\\s\\S]"
        return chars + quantifier(node.min_length, node.max_length)
    raise ValueError(f"not a regular node: {node!r}")


def _atom(node: Node) -> str:
    text = to_regex(node)
    if isinstance(node, Lit) and len(node.text) == 1 or isinstance(node, CharSet):
        return text
    return f"(?:{text})"


_SPECIAL = set("\\^$.|?*+()[]{}-/")


def _escape(char: str, in_class: bool = False) -> str:
    code = ord(char)
    if code < 0x20 or code == 0x7F:
        return {"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(char, f"\\x{code:02x}")
    if char in _SPECIAL or (in_class and char in "]"):
        return "\\" + char
    return char


def _class_char(code: int) -> str:
    if code > 0xFFFF:
        return f"\\U{code:08x}"
    if code > 0x7E and code < 0xA0 or code in (0x2028, 0x2029):
        return f"\\u{code:04x}"
    return _escape(chr(code), in_class=True)


def char_class(chars: CharSet) -> str:
    """`chars` as a regex character class."""
    if not chars.ranges:
        return "[\\s\\S]" if chars.negated else "[^\\s\\S]"
    parts = []
    for low, high in chars.ranges:
        if low == high:
            parts.append(_class_char(low))
        elif high == low + 1:
            parts.append(_class_char(low) + _class_char(high))
        else:
            parts.append(f"{_class_char(low)}-{_class_char(high)}")
    return ("[^" if chars.negated else "[") + "".join(parts) + "]"


def text_node(excludes, allowed: CharSet | None = None) -> Node:
    """Free text that never contains any of `excludes` (sorted, duplicates and empty ones dropped)."""
    return Text(tuple(sorted({literal for literal in excludes if literal})), allowed)


__all__ = [
    "Alternative",
    "Unconstrainable",
    "alternatives",
    "char_class",
    "expanded",
    "first_literal",
    "leads",
    "text_node",
    "to_regex",
]
