"""What the Lark and GBNF writers share: one walk over a grammar's rules, written as text.

Both formats are rules of the form ``name <assign> body``; they differ in how a rule is named,
how a literal, a character set and free text are written, and what surrounds the rules. The
common part lives in `RuleText`: naming rules in the format's alphabet, writing every rule
(also the rules that lowering a JSON value adds while the walk runs), alternatives and
repetitions, lowering `ir.Json` to grammar with `schema`, and spending the grammar's budget.
"""

from __future__ import annotations

import json

import regex

from .ir import Alt, Grammar, Json, Node, Repeat, quantifier
from .schema import Dialect, SchemaWriter


class RuleText:
    """The shared part of a writer of rules as text; a format subclasses it.

    A subclass sets the class attributes and writes `expr` (a node as the format's text) and
    `atom` (a node as one item of a sequence or repetition, bracketed when needed).

    Class attributes:
        format_name: the format's name in budget errors (``"GBNF"``, ``"Lark"``).
        name_separator: what joins the words of a rule name (``"-"`` or ``"_"``).
        assign: what stands between a rule's name and its body (``" ::= "``, ``": "``).
    """

    format_name = ""
    name_separator = "-"
    assign = ": "

    def __init__(self, grammar: Grammar, taken: tuple[str, ...] = ()):
        """`grammar` is copied (lowering JSON values adds rules to the copy); `taken` are names
        the format reserves (Lark's ``start``)."""
        self.grammar = Grammar(dict(grammar.rules), budget=grammar.budget)
        self.budget = grammar.budget
        self.names: dict[str, str] = {}
        self.taken: set[str] = set(taken)
        self.lowered: dict[Json, Node] = {}

    def expr(self, node: Node) -> str:
        raise NotImplementedError

    def atom(self, node: Node) -> str:
        raise NotImplementedError

    def spend(self) -> None:
        """One node of the budget (none without a budget).

        Raises:
            budget.GrammarTooLarge: the budget is spent.
        """
        if self.budget is not None:
            self.budget.spend()

    def check_written(self, characters: int) -> None:
        """Raises budget.GrammarTooLarge when `characters` of text exceed the budget's."""
        if self.budget is not None:
            self.budget.check_written(characters, self.format_name)

    def name(self, rule: str) -> str:
        """The format's name for grammar rule `rule`: lowercase letters and digits, other runs of
        characters as one `name_separator`, a count added when two rules would share a name;
        the same rule always gets the same name."""
        if rule not in self.names:
            sep = self.name_separator
            base = regex.sub(r"[^a-z0-9]+", sep, rule.lower()).strip(sep) or "rule"
            name, count = base, 1
            while name in self.taken:
                count += 1
                name = f"{base}{sep}{count}"
            self.names[rule] = name
            self.taken.add(name)
        return self.names[rule]

    def rule_lines(self, written: int = 0) -> list[str]:
        """Every rule as ``name <assign> body``, in the grammar's order, with the rules added
        while writing (lowered JSON values) after them.

        Args:
            written: characters of the text already written before these lines.

        Raises:
            budget.GrammarTooLarge: the budget's nodes or characters are spent.
        """
        lines: list[str] = []
        done: set[str] = set()
        while True:
            pending = [rule for rule in self.grammar.rules if rule not in done]
            if not pending:
                return lines
            for rule in pending:
                done.add(rule)
                lines.append(f"{self.name(rule)}{self.assign}{self.expr(self.grammar.rules[rule])}")
                written += len(lines[-1]) + 1
                self.check_written(written)

    def joined(self, lines: list[str]) -> str:
        """`lines` as the grammar's text, one a line, ending with a newline.

        Raises:
            budget.GrammarTooLarge: the text is longer than the budget's characters.
        """
        text = "\n".join(lines) + "\n"
        self.check_written(len(text))
        return text

    def either(self, node: Alt) -> str:
        """One of `node`'s items: ``a | b | c``."""
        return " | ".join(self.expr(item) for item in node.items)

    def repeat(self, node: Repeat) -> str:
        """`node.item` repeated; the empty text when `max` is 0 (neither format takes ``{0}``)."""
        if node.max == 0:
            return '""'
        return self.atom(node.item) + quantifier(node.min, node.max)

    def lower(self, node: Json) -> Node:
        """`node` as grammar nodes: its schema expanded in the JSON dialect (rules it needs are
        added to this writer's grammar copy); each distinct node is lowered once."""
        if node not in self.lowered:
            schema = json.loads(node.schema_text)
            writer = SchemaWriter(self.grammar, Dialect("json", node.excludes), stem="json")
            self.lowered[node] = writer.value(schema, "schema", root=schema)
        return self.lowered[node]
