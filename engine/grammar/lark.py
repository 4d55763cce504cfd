"""Lark: the grammar as llguidance reads it (``%llguidance`` dialect).

llguidance splits text into lexemes greedily, so free text would run over the delimiter that
should end it. Every `ir.Token` (a string value; a stretch of text and the delimiter that
ends it) is therefore one terminal: its regex, intersected (``&``) with the negation (``~``)
of "an excluded literal, then the rest up to the closing literal". Regular parts are regex
terminals of their own. Special tokens of the tokenizer (``special_tokens``, text -> id) are
written as tokens (``<[id]>``): llguidance matches a quoted string byte by byte and never
with a special token, and free text never produces one.

The tokenizer is part of the Lark form's contract: written without one (no special tokens),
every delimiter is text and the grammar says so in its first lines; a server whose tokenizer
has a delimiter as a special token needs the grammar written with that tokenizer.

This Lark is for llguidance. xgrammar reads a Lark dialect too, but gives ``lazy``, ``&`` and
``~`` other meanings or refuses them; give xgrammar the structural tag or the GBNF.
"""

from __future__ import annotations

import json

import regex

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
    is_regular,
    quantifier,
)
from .json_excludes import schema_for_lark
from .patterns import char_class, to_regex
from .rule_text import RuleText


def lark_grammar(derived, special_tokens: dict[str, int]) -> str:
    """`derived`'s grammar (a `DerivedGrammar`) as llguidance Lark text.

    Raises:
        budget.GrammarTooLarge: writing it spent the grammar's budget (each node visited spends
            one), or the text is longer than the budget's characters.
    """
    return _Writer(derived.grammar, special_tokens).write()


class _Writer(RuleText):
    format_name = "Lark"
    name_separator = "_"
    assign = ": "

    def __init__(self, grammar: Grammar, special_tokens: dict[str, int]):
        super().__init__(grammar, taken=("start",))
        self.special = {text: id_ for text, id_ in special_tokens.items() if text}
        self.special_re = (
            regex.compile(
                "|".join(regex.escape(t) for t in sorted(self.special, key=len, reverse=True))
            )
            if self.special
            else None
        )
        self.terminals: dict[str, str] = {}  # definition -> name
        self.json_rules: dict[Json, tuple[str, str]] = {}  # node -> (rule name, its line)

    def write(self) -> str:
        lines = ["%llguidance {}", "", f"start: {self.name('root')}"]
        if not self.special:
            lines = [*_TEXT_ONLY, *lines]
        lines += self.rule_lines(written=sum(map(len, lines)))
        lines += [line for _, line in self.json_rules.values()]
        lines.append("")
        lines += [f"{name}: {definition}" for definition, name in self.terminals.items()]
        return self.joined(lines)

    # -- expressions --------------------------------------------------------------

    def expr(self, node: Node) -> str:
        self.spend()
        if isinstance(node, Lit):
            return self.literal(node.text)
        if isinstance(node, Json):
            return self.json_rule(node)
        if isinstance(node, Token):
            return self.token(node.node, node.also)
        if isinstance(node, Text):
            return self.terminal(node, None)
        if isinstance(node, Ref):
            return self.name(node.name)
        if is_regular(node) and not self._has_special(node):
            return self.regex_terminal(node)
        if isinstance(node, Seq):
            return " ".join(self.atom(item) for item in node.items) if node.items else '""'
        if isinstance(node, Alt):
            return self.either(node)
        if isinstance(node, Repeat):
            return self.repeat(node)
        raise TypeError(f"not a grammar node: {node!r}")

    def json_rule(self, node: Json) -> str:
        """A rule holding the JSON value as llguidance's own JSON Schema support reads it
        (``name: %json {...}``, the schema prepared by `json_excludes.schema_for_lark`)."""
        if node not in self.json_rules:
            schema = schema_for_lark(json.loads(node.schema_text), node.excludes)
            name = self.name(f"\x00json-{len(self.json_rules) + 1}")
            text = json.dumps(schema, ensure_ascii=False, separators=(",", ":"))
            self.json_rules[node] = (name, f"{name}: %json {text}")
        return self.json_rules[node][0]

    def atom(self, node: Node) -> str:
        text = self.expr(node)
        one_regex = (
            text.startswith("/") and text.endswith("/") and text.count("/") - text.count("\\/") == 2
        )
        return text if " " not in text or one_regex else f"({text})"

    def literal(self, text: str) -> str:
        if not text:
            return '""'
        if self.special_re is None:
            return json.dumps(text, ensure_ascii=False)
        parts, last = [], 0
        for found in self.special_re.finditer(text):
            if found.start() > last:
                parts.append(json.dumps(text[last : found.start()], ensure_ascii=False))
            parts.append(f"<[{self.special[found.group()]}]>")
            last = found.end()
        if last < len(text):
            parts.append(json.dumps(text[last:], ensure_ascii=False))
        return " ".join(parts)

    def _has_special(self, node: Node) -> bool:
        if self.special_re is None:
            return False
        if isinstance(node, Lit):
            return bool(self.special_re.search(node.text))
        if isinstance(node, (Seq, Alt)):
            return any(self._has_special(item) for item in node.items)
        if isinstance(node, Repeat):
            return self._has_special(node.item)
        return False

    def regex_terminal(self, node: Node) -> str:
        if isinstance(node, Lit):
            return self.literal(node.text)
        return "/" + to_regex(node) + "/"

    def token(self, node: Node, also: str | None = None) -> str:
        """One lexical unit; a trailing literal that spells a special token stays outside it."""
        items = list(node.items) if isinstance(node, Seq) else [node]
        if items and isinstance(items[-1], Lit) and self._has_special(items[-1]):
            head = items[:-1]
            inner = head[0] if len(head) == 1 else Seq(tuple(head))
            written = self.token(inner)
            if also:
                written = self.terminal(inner, None, also)
            return f"{written} {self.literal(items[-1].text)}"
        if items and isinstance(items[-1], Lit):
            return self.terminal(
                Seq(tuple(items[:-1])) if len(items) > 2 else items[0], items[-1].text, also
            )
        return self.terminal(node, None, also)

    def terminal(self, node: Node, closing: str | None, also: str | None = None) -> str:
        """A named terminal: `node` then `closing`, no excluded literal before `closing`, and
        (`also`, a regex of the text before `closing`) matching that too."""
        excludes = sorted(_excludes(node))
        tail = _escape_literal(closing) if closing else ""
        body = _text_regex(node) + tail
        definition = f"/{body}/"
        if excludes:
            # The text may not hold an excluded literal; the literal the unit opens with (a
            # string's open delimiter, which may itself be one) is outside the text.
            items = node.items if isinstance(node, Seq) else (node,)
            lead = _escape_literal(items[0].text) if isinstance(items[0], Lit) else ""
            alternation = "|".join(_escape_literal(text) for text in excludes)
            definition += f" & ~/{lead}(?s:.*)(?:{alternation})(?s:.*){tail}/"
        if also:
            definition += f" & /(?:{also}){tail}/"
        if definition not in self.terminals:
            self.terminals[definition] = f"T{len(self.terminals) + 1}"
        return self.terminals[definition]


# The head of a Lark grammar written without a tokenizer's special tokens.
_TEXT_ONLY = [
    "// Written without a tokenizer: every delimiter is text. llguidance never matches a special",
    "// token against text, so for a tokenizer that has a delimiter as a special token, write",
    "// the grammar with that tokenizer (--tokenizer: special tokens become <[id]>).",
]


def _excludes(node: Node) -> set[str]:
    if isinstance(node, Text):
        return set(node.excludes)
    if isinstance(node, (Seq, Alt)):
        return set().union(*(_excludes(item) for item in node.items)) if node.items else set()
    if isinstance(node, (Repeat, Token)):
        return _excludes(node.item if isinstance(node, Repeat) else node.node)
    return set()


def _text_regex(node: Node) -> str:
    """A regex for a lexical node; free text becomes "any text" (its exclusions are added by
    the caller)."""
    if isinstance(node, Text):
        chars = char_class(node.allowed) if node.allowed else "(?s:.)"
        return chars + quantifier(node.min_length, node.max_length)
    if isinstance(node, Seq):
        return "".join(_text_atom(item) for item in node.items)
    if isinstance(node, Alt):
        return "(?:" + "|".join(_text_regex(item) for item in node.items) + ")"
    if isinstance(node, Repeat):
        return _text_atom(node.item) + quantifier(node.min, node.max)
    if isinstance(node, Token):
        return _text_regex(node.node)
    if isinstance(node, CharSet):
        return char_class(node)
    return to_regex(node)


def _text_atom(node: Node) -> str:
    text = _text_regex(node)
    return f"(?:{text})" if isinstance(node, (Alt, Seq)) else text


def _escape_literal(text: str) -> str:
    return to_regex(Lit(text))
