"""The grammar's building blocks: a small tree of nodes every output format is written from.

A derived grammar is a `Grammar`: named rules (`rules`, the start rule is ``"root"``)
whose bodies are trees of these nodes. The emitters (`structural_tag`, `lark`, `gbnf`)
each turn the same tree into their format, so the three formats accept the same outputs.

Nodes:

* `Lit`: a fixed text;
* `CharSet`: one character from ranges of code points (or outside them, when negated);
* `Seq`, `Alt`, `Repeat`: sequence, alternatives, repetition (``max`` None: unbounded);
* `Text`: free text that never contains any of `excludes` (the delimiters the parser watches
  for there), optionally limited to the characters of `allowed`;
* `Json`: one JSON value valid against a JSON Schema, written as standard JSON whose strings
  never contain `excludes` (the structural tag hands the schema to the engine; Lark and GBNF
  expand it with `schema`);
* `Token`: a lexical unit (Lark writes it as one terminal);
* `Ref`: the rule of that name (rules may be recursive).

Shared by the writers: `merge_ranges` (code-point ranges sorted and joined, the form `CharSet`
holds) and `quantifier` (a repetition's suffix, written the same in regex, Lark and GBNF).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Union


@dataclass(frozen=True)
class Lit:
    """A fixed text."""

    text: str


@dataclass(frozen=True)
class CharSet:
    """One character: any of the code-point `ranges` (inclusive pairs), or, when `negated`, any
    character outside them."""

    ranges: tuple[tuple[int, int], ...]
    negated: bool = False

    def contains(self, char: str) -> bool:
        code = ord(char)
        inside = any(low <= code <= high for low, high in self.ranges)
        return inside != self.negated


@dataclass(frozen=True)
class Seq:
    """The items one after the other."""

    items: tuple[Node, ...]


@dataclass(frozen=True)
class Alt:
    """One of the items."""

    items: tuple[Node, ...]


@dataclass(frozen=True)
class Repeat:
    """`item` `min` to `max` times (`max` None: any number of times)."""

    item: Node
    min: int = 0
    max: int | None = None


@dataclass(frozen=True)
class Text:
    """Free text (possibly empty) in which none of `excludes` occurs.

    Attributes:
        excludes: literals the text never contains.
        allowed: the characters the text is made of (None: any character).
        min_length, max_length: how many characters it has (max None: any number); a bounded
            text is written by GBNF without the first character of any excluded literal, so
            that none can begin in it.
    """

    excludes: tuple[str, ...]
    allowed: CharSet | None = None
    min_length: int = 0
    max_length: int | None = None

    @property
    def bounded(self) -> bool:
        return self.min_length > 0 or self.max_length is not None


@dataclass(frozen=True)
class Json:
    """A JSON value valid against `schema`, standard JSON, strings never containing `excludes`."""

    schema_text: str  # the schema as canonical JSON text (keeps the node hashable)
    excludes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Token:
    """A lexical unit (a string value; a stretch of text and the delimiter that ends it): Lark
    writes it as one terminal, so its lexer never has to guess where free text ends; the
    other formats write `node` as it is.

    Attributes:
        node: what the unit is.
        also: a regex (llguidance's syntax) the unit's text must match as well, without the
            literal the unit ends with when it ends with one (a string value's ``pattern``
            after its opening quote): Lark intersects its terminal with it; the other formats
            cannot, and the grammar's notes say so. None: nothing more.
    """

    node: Node
    also: str | None = None


@dataclass(frozen=True)
class Ref:
    """The rule named `name`."""

    name: str


Node = Union[Lit, CharSet, Seq, Alt, Repeat, Text, Json, Token, Ref]

EMPTY = Seq(())


def seq(*items: Node) -> Node:
    """A `Seq` of `items` with nested sequences flattened, adjacent literals joined and empty
    items dropped; a single item is returned as it is."""
    flat: list[Node] = []
    for item in items:
        parts = item.items if isinstance(item, Seq) else (item,)
        for part in parts:
            if isinstance(part, Lit) and part.text == "":
                continue
            if isinstance(part, Lit) and flat and isinstance(flat[-1], Lit):
                flat[-1] = Lit(flat[-1].text + part.text)
            else:
                flat.append(part)
    return flat[0] if len(flat) == 1 else Seq(tuple(flat))


def alt(*items: Node) -> Node:
    """An `Alt` of `items` without duplicates; a single item is returned as it is."""
    unique = tuple(dict.fromkeys(items))
    return unique[0] if len(unique) == 1 else Alt(unique)


def optional(item: Node) -> Node:
    """`item` or nothing."""
    return Repeat(item, 0, 1)


def merge_ranges(ranges: Iterable[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """`ranges` (inclusive ``(low, high)`` code-point pairs, in any order) sorted, with ranges
    that overlap or touch joined: ``[(5, 9), (0, 3), (4, 4)]`` gives ``((0, 9),)``. A set of
    single code points is ``merge_ranges((code, code) for code in codes)``."""
    merged: list[list[int]] = []
    for low, high in sorted(ranges):
        if merged and low <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], high)
        else:
            merged.append([low, high])
    return tuple((low, high) for low, high in merged)


def quantifier(low: int, high: int | None) -> str:
    """The suffix that repeats an item `low` to `high` times (`high` None: no upper bound), in
    the syntax regex, Lark and GBNF share: ``*`` (0 or more), ``+`` (1 or more), ``?`` (0 or
    1), ``{n}`` (exactly n), ``{n,}`` (n or more), ``{n,m}``.

    ``{0}`` (never) is valid in a regex, but GBNF and Lark rules refuse a range that ends at 0:
    their writers write the empty text for a `Repeat` whose `max` is 0 instead of asking here.

    Raises:
        ValueError: `low` is negative or `high` is below `low`.
    """
    if low < 0 or high is not None and high < low:
        raise ValueError(f"not a repetition count: {low} to {high}")
    if high is None:
        return {0: "*", 1: "+"}.get(low, f"{{{low},}}")
    if (low, high) == (0, 1):
        return "?"
    return f"{{{low}}}" if low == high else f"{{{low},{high}}}"


@dataclass
class Grammar:
    """Named rules; ``rules["root"]`` is the whole output.

    Attributes:
        rules: rule name -> body, in the order they were added (the root first).
        budget: the `budget.GrammarBudget` every rule added spends from (None: unbounded); the
            writers' copies of the grammar keep it.
    """

    rules: dict[str, Node] = field(default_factory=dict)
    budget: Any = field(default=None, compare=False, repr=False)
    _counts: dict[str, int] = field(default_factory=dict, compare=False, repr=False)

    def add(self, name: str, body: Node) -> Ref:
        """Add (or replace) rule `name`; return a `Ref` to it.

        Raises:
            budget.GrammarTooLarge: the budget is spent.
        """
        if self.budget is not None:
            self.budget.spend()
        self.rules[name] = body
        return Ref(name)

    def fresh(self, stem: str) -> str:
        """A rule name starting with `stem` that is not taken yet (the count of each stem is
        kept, so a grammar of many rules of one stem is named in linear time)."""
        count = self._counts.get(stem, 1)
        name = stem if count == 1 else f"{stem}-{count}"
        while name in self.rules:
            count += 1
            name = f"{stem}-{count}"
        self._counts[stem] = count
        return name


def is_regular(node: Node) -> bool:
    """True when `node` is made only of literals, character sets, sequences, alternatives and
    repetitions (no free text, JSON value or rule reference), so a regex can say it."""
    if isinstance(node, (Lit, CharSet)):
        return True
    if isinstance(node, (Seq, Alt)):
        return all(is_regular(item) for item in node.items)
    if isinstance(node, Repeat):
        return is_regular(node.item)
    return False


def first_literal(node: Node) -> str | None:
    """The literal text every match of `node` starts with, when it starts with a `Lit`."""
    if isinstance(node, Lit):
        return node.text
    if isinstance(node, Seq) and node.items:
        return first_literal(node.items[0])
    return None
