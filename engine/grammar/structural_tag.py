"""The structural tag: the grammar in the JSON format xgrammar compiles and vLLM and SGLang take
as ``response_format={"type": "structural_tag", "format": ...}``.

The output plan maps onto the format's own words: a region the prefix opened is a ``tag`` with
an empty ``begin``; a reasoning region that may come first is an ``optional`` tag; tool calls
are ``triggered_tags`` (free text until a trigger, the call's opener, appears; ``at_least_one``
for a required call, ``stop_after_first`` for a single one), each call a ``tag`` whose content
is the rest of its opener, its arguments (``json_schema`` with ``excludes``, so a string value
never holds the delimiter that would end the call) and what comes before its closer. Parts the
format has no word for are written as ``regex`` (regular parts) or ``grammar`` (EBNF, from the
GBNF writer).

Needs xgrammar 0.2.9 or newer (``json_schema.excludes``, ``optional``, ``star``).
"""

from __future__ import annotations

import json

from .gbnf import gbnf_grammar
from .ir import EMPTY, Alt, Grammar, Json, Lit, Node, Ref, Repeat, Seq, Text, Token, is_regular
from .json_excludes import schema_for_xgrammar
from .patterns import to_regex


def structural_tag(derived) -> dict:
    """`derived` (a `DerivedGrammar`) as ``{"type": "structural_tag", "format": {...}}``."""
    writer = _Formats(derived.grammar)
    plan = derived.plan
    elements = []
    if plan.continuation is not None:
        region = plan.continuation
        elements.append(writer.tag("", region.content, region.closing))
    for region in plan.prelude:
        tags = [
            writer.tag(way.begin, Seq((way.rest, region.content)), region.closing)
            for way in region.openings
        ]
        written = tags[0] if len(tags) == 1 else {"type": "or", "elements": tags}
        elements.append(written if region.required else {"type": "optional", "content": written})
    elements.append(_body(plan, writer))
    elements = [element for element in elements if element is not None]
    format_ = elements[0] if len(elements) == 1 else {"type": "sequence", "elements": elements}
    return {"type": "structural_tag", "format": format_}


def _body(plan, writer: "_Formats") -> dict | None:
    excludes = [text for text in plan.text_excludes if text not in plan.triggers]
    if not plan.calls or plan.max_calls == 0:
        return (
            {"type": "any_text", "excludes": list(plan.text_excludes)}
            if plan.text_excludes
            else {"type": "any_text"}
        )
    tags = []
    for call in plan.calls:
        content = Seq((call.opening.rest, call.body, call.closing.before))
        tags.append(writer.tag(call.opening.begin, content, call.closing))
    if plan.call_end == "chain" and plan.max_calls is None:
        # Calls one after the other with nothing between (each ends where the next begins).
        calls = {"type": "or", "elements": tags} if len(tags) > 1 else tags[0]
        text = {"type": "any_text", "excludes": list(plan.text_excludes)}
        if plan.min_calls:
            return {"type": "plus", "content": calls}
        return {"type": "sequence", "elements": [text, {"type": "star", "content": calls}]}
    body = {"type": "triggered_tags", "triggers": plan.triggers, "tags": tags}
    if excludes:
        body["excludes"] = excludes
    if plan.min_calls:
        body["at_least_one"] = True
    if plan.max_calls == 1 or plan.call_end != "closed":
        body["stop_after_first"] = True
    return body


class _Formats:
    """Grammar nodes as structural-tag formats."""

    def __init__(self, grammar: Grammar):
        self.grammar = grammar

    def tag(self, begin: str, content: Node, closing) -> dict:
        end = closing.literal
        content = _flat(content)
        if not end and isinstance(content, Seq) and isinstance(content.items[-1], Lit):
            # xgrammar needs an end it can see: the literal the content ends with serves
            end, content = content.items[-1].text, _flat(Seq(content.items[:-1]))
        return {"type": "tag", "begin": begin, "content": self.format(content), "end": end}

    def format(self, node: Node) -> dict:
        if self.grammar.budget is not None:
            self.grammar.budget.spend()
        node = _flat(node)
        if isinstance(node, Lit):
            return {"type": "const_string", "value": node.text}
        if isinstance(node, Seq) and not node.items:
            return {"type": "const_string", "value": ""}
        if is_regular(node):
            return {"type": "regex", "pattern": to_regex(node)}
        if isinstance(node, Json):
            schema = schema_for_xgrammar(json.loads(node.schema_text), node.excludes)
            written = {"type": "json_schema", "json_schema": schema}
            if node.excludes:
                written["excludes"] = list(node.excludes)
            return written
        if isinstance(node, Text) and node.allowed is None and not node.bounded:
            return (
                {"type": "any_text", "excludes": list(node.excludes)}
                if node.excludes
                else {"type": "any_text"}
            )
        if isinstance(node, Token):
            return self.format(node.node)
        if isinstance(node, Seq):
            return {"type": "sequence", "elements": [self.format(item) for item in node.items]}
        if isinstance(node, Alt):
            return {"type": "or", "elements": [self.format(item) for item in node.items]}
        if isinstance(node, Repeat) and (node.min, node.max) in ((0, 1), (0, None), (1, None)):
            kind = {(0, 1): "optional", (0, None): "star", (1, None): "plus"}[(node.min, node.max)]
            return {"type": kind, "content": self.format(node.item)}
        return {"type": "grammar", "grammar": self.ebnf(node)}

    def ebnf(self, node: Node) -> str:
        """`node` (and the rules it reaches) as EBNF whose start rule is ``root``."""
        rules = dict(self.grammar.rules)
        rules["root"] = node
        return gbnf_grammar(Grammar(_reachable(rules), budget=self.grammar.budget))


def _flat(node: Node) -> Node:
    """Sequences without empty items; a sequence of one item is that item."""
    if isinstance(node, Seq):
        items = [_flat(item) for item in node.items]
        flat = []
        for item in items:
            if isinstance(item, Seq):
                flat.extend(item.items)
            elif not (isinstance(item, Lit) and not item.text):
                flat.append(item)
        if len(flat) == 1:
            return flat[0]
        merged: list[Node] = []
        for item in flat:
            if merged and isinstance(item, Lit) and isinstance(merged[-1], Lit):
                merged[-1] = Lit(merged[-1].text + item.text)
            else:
                merged.append(item)
        return merged[0] if len(merged) == 1 else Seq(tuple(merged))
    return node if node != EMPTY else node


def _reachable(rules: dict[str, Node]) -> dict[str, Node]:
    """The rules reachable from ``root``, the root first."""
    found: dict[str, Node] = {}
    pending = ["root"]
    while pending:
        name = pending.pop()
        if name in found:
            continue
        found[name] = rules[name]
        pending += _refs(rules[name])
    return {"root": found["root"], **{k: v for k, v in found.items() if k != "root"}}


def _refs(node: Node) -> list[str]:
    if isinstance(node, Ref):
        return [node.name]
    if isinstance(node, (Seq, Alt)):
        return [name for item in node.items for name in _refs(item)]
    if isinstance(node, Repeat):
        return _refs(node.item)
    if isinstance(node, Token):
        return _refs(node.node)
    return []
