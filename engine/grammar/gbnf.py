"""GBNF: the grammar as llama.cpp reads it (``--grammar-file``, the ``grammar`` request field).

Written in the subset that llama.cpp, xgrammar's EBNF reader and llguidance's GBNF reader all
accept: rule names of lowercase letters, digits and dashes; no empty alternative except ``""``;
no ``.``; escapes only ``\\\\``, ``\\"``, ``\\[``, ``\\]``, ``\\n``, ``\\r``, ``\\t`` and
``\\xHH`` (other characters are written as themselves, UTF-8). Delimiters are written as text,
so a tokenizer's special tokens match by their text.

Free text that must not hold some literals (`ir.Text`) is written as a small automaton: one
rule per state of a matcher of those literals (Aho-Corasick), each character moving to the
next state, and the states that complete a literal left out. When a literal follows the text,
the text may only end in states from which that literal does not complete another one first.
"""

from __future__ import annotations

from .ir import (
    Alt,
    CharSet,
    Grammar,
    Json,
    Lit,
    Node,
    Ref,
    Repeat,
    Seq,
    Text,
    Token,
    merge_ranges,
    quantifier,
)
from .rule_text import RuleText

_SURROGATES = (0xD800, 0xDFFF)
_ANY = CharSet((), negated=True)


def gbnf_grammar(grammar: Grammar) -> str:
    """`grammar` as GBNF text (the start rule is ``root``).

    Raises:
        budget.GrammarTooLarge: writing it spent the grammar's budget (each node visited spends
            one), or the text is longer than the budget's characters.
    """
    return _Writer(grammar).write()


class _Writer(RuleText):
    format_name = "GBNF"
    name_separator = "-"
    assign = " ::= "

    def __init__(self, grammar: Grammar):
        super().__init__(grammar)
        self.text_lines: list[str] = []
        self.texts: dict[tuple, str] = {}

    def write(self) -> str:
        self.name("root")
        return self.joined(self.rule_lines() + self.text_lines)

    def expr(self, node: Node, following: str | None = None) -> str:
        self.spend()
        if isinstance(node, Lit):
            return quote(node.text)
        if isinstance(node, CharSet):
            return char_class(node)
        if isinstance(node, Seq):
            if not node.items:
                return '""'
            parts = []
            for index, item in enumerate(node.items):
                after = node.items[index + 1] if index + 1 < len(node.items) else None
                parts.append(self.atom(item, after.text if isinstance(after, Lit) else None))
            return " ".join(parts)
        if isinstance(node, Alt):
            return self.either(node)
        if isinstance(node, Repeat):
            return self.repeat(node)
        if isinstance(node, Token):
            return self.expr(node.node, following)
        if isinstance(node, Ref):
            return self.name(node.name)
        if isinstance(node, Text):
            return self.text(node, following)
        if isinstance(node, Json):
            return self.expr(self.lower(node), following)
        raise TypeError(f"not a grammar node: {node!r}")

    def atom(self, node: Node, following: str | None = None) -> str:
        text = self.expr(node, following)
        if isinstance(node, (Alt, Seq)) and (len(node.items) > 1):
            return f"({text})"
        if (
            isinstance(node, Repeat)
            and node.max != 0
            or isinstance(node, Token)
            and isinstance(node.node, (Alt, Seq))
        ):
            return f"({text})"
        return text

    def text(self, node: Text, following: str | None) -> str:
        allowed = node.allowed or _ANY
        if node.bounded:
            # No excluded literal can begin inside: none of their first characters is written.
            firsts = sorted({literal[0] for literal in node.excludes if literal})
            chars = _without(allowed, firsts)
            if node.max_length == 0:
                return '""'
            return f"{char_class(chars)}{quantifier(node.min_length, node.max_length)}"
        if not node.excludes:
            return f"{char_class(allowed)}*"
        key = (node.excludes, allowed, following)
        if key not in self.texts:
            stem = f"text-{len(self.texts) + 1}"
            self.texts[key] = stem
            for state, body in text_automaton(node.excludes, allowed, following).items():
                rule = f"{stem}-{state}"
                self.spend()
                self.names[f"\x00{rule}"] = rule
                self.taken.add(rule)
                alternatives = [f"{char_class(chars)} {stem}-{target}" for chars, target in body[0]]
                if body[1]:
                    alternatives.append('""')
                self.text_lines.append(f"{rule} ::= {' | '.join(alternatives) or chr(34) * 2}")
        return f"{self.texts[key]}-0"


def text_automaton(
    excludes: tuple[str, ...], allowed: CharSet, following: str | None
) -> dict[int, tuple[list[tuple[CharSet, int]], bool]]:
    """States of text over `allowed` that never holds any of `excludes`.

    Returns:
        state -> (moves, may_end): each move is a character set and the state it leads to;
        `may_end` says whether the text may end there (it may not when `following`, the
        literal written next, would complete an excluded literal before itself ends).
    """
    goto: list[dict[str, int]] = [{}]
    fail = [0]
    longest = [0]  # the longest excluded literal that ends at each state
    for literal in excludes:
        state = 0
        for char in literal:
            if char not in goto[state]:
                goto.append({})
                fail.append(0)
                longest.append(0)
                goto[state][char] = len(goto) - 1
            state = goto[state][char]
        longest[state] = max(longest[state], len(literal))
    order = list(goto[0].values())
    for state in order:
        for char, target in goto[state].items():
            back = fail[state]
            while back and char not in goto[back]:
                back = fail[back]
            fail[target] = goto[back].get(char, 0) if goto[back].get(char, 0) != target else 0
            longest[target] = max(longest[target], longest[fail[target]])
            order.append(target)

    def move(state: int, char: str) -> int:
        while state and char not in goto[state]:
            state = fail[state]
        return goto[state].get(char, 0)

    alphabet = sorted({char for literal in excludes for char in literal if allowed.contains(char)})
    live = [state for state in range(len(goto)) if not longest[state]]
    automaton = {}
    for state in live:
        targets: dict[int, list[str]] = {}
        blocked: list[str] = []
        for char in alphabet:
            target = move(state, char)
            (blocked if longest[target] else targets.setdefault(target, [])).append(char)
        special = [char for target, chars in targets.items() if target for char in chars] + blocked
        moves = [(_without(allowed, special), 0)]
        moves += [(_of(chars), target) for target, chars in targets.items() if target]
        moves = [(chars, target) for chars, target in moves if chars.ranges or chars.negated]
        automaton[live.index(state)] = (
            [(chars, live.index(target)) for chars, target in moves],
            _may_end(state, following, move, longest),
        )
    return automaton


def _may_end(state: int, following: str | None, move, longest: list[int]) -> bool:
    if following is None:
        return True
    for index, char in enumerate(following, start=1):
        state = move(state, char)
        if longest[state] > index:
            return False
    return True


def _of(chars: list[str]) -> CharSet:
    return CharSet(tuple((ord(c), ord(c)) for c in sorted(chars)))


def _without(allowed: CharSet, chars: list[str]) -> CharSet:
    """`allowed` minus `chars`."""
    codes = sorted(ord(c) for c in chars)
    if allowed.negated:
        return CharSet(merge_ranges([*allowed.ranges, *((c, c) for c in codes)]), negated=True)
    out = []
    for low, high in allowed.ranges:
        start = low
        for code in codes:
            if start <= code <= high:
                if code > start:
                    out.append((start, code - 1))
                start = code + 1
        if start <= high:
            out.append((start, high))
    return CharSet(tuple(out))


def quote(text: str) -> str:
    """`text` as a GBNF string literal."""
    return '"' + "".join(_escape(char, '"') for char in text) + '"'


def _escape(char: str, quote_char: str = "") -> str:
    code = ord(char)
    if char in ("\\", quote_char):
        return "\\" + char
    if char == "\n":
        return "\\n"
    if char == "\r":
        return "\\r"
    if char == "\t":
        return "\\t"
    if code < 0x20 or code == 0x7F:
        return f"\\x{code:02x}"
    return char


def _class_char(code: int) -> str:
    char = chr(code)
    if char in "[]\\":
        return "\\" + char
    if char in '-^"' or code < 0x20 or code == 0x7F:
        return f"\\x{code:02x}" if code < 0x100 else char
    return _escape(char)


def char_class(chars: CharSet) -> str:
    """`chars` as a GBNF character class (surrogates, which UTF-8 cannot hold, left out)."""
    ranges = []
    for low, high in chars.ranges:
        if low <= _SURROGATES[0] and high >= _SURROGATES[1]:
            ranges += [(low, _SURROGATES[0] - 1), (_SURROGATES[1] + 1, high)]
        elif not (
            _SURROGATES[0] <= low <= _SURROGATES[1] and _SURROGATES[0] <= high <= _SURROGATES[1]
        ):
            ranges.append((low, high))
    ranges = [(low, high) for low, high in ranges if low <= high]
    if not ranges:
        return "[^\\x00]" if chars.negated else "[\\x00]"
    parts = []
    for low, high in ranges:
        parts.append(
            _class_char(low)
            if low == high
            else f"{_class_char(low)}-{_class_char(min(high, 0x10FFFF))}"
        )
    return ("[^" if chars.negated else "[") + "".join(parts) + "]"
