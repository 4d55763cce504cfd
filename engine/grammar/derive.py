"""From a response template and a request to the grammar of every output the template reads back.

`derive_grammar(template, tools, tool_choice, parallel_tool_calls, prefix)` plans the output
(`OutputPlan`): where the prompt left it (a region the prefix opened, an answer it began),
the regions that may come first (reasoning), the tool calls (one per tool and way of opening,
with the arguments constrained by the tool's schema in the field's argument format) and the
free text between them. The plan becomes one grammar (`ir.Grammar`) that the emitters write as
a structural tag, Lark or GBNF. Every way of writing a call is parsed back with the template
before it is kept (a self-check): what cannot be written is listed in `notes`, and when no
grammar can honour the request, `unconstrainable` says why.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..errors import ParseDeadlineError
from ..parser import ResponseParser, parse_response
from ..template import FieldSpec, ResponseTemplate, load_template
from .budget import GrammarBudget, GrammarTooLarge, spend
from .ir import (
    EMPTY,
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
    alt,
    seq,
)
from .patterns import Unconstrainable, alternatives, first_literal
from .regions import (
    CallWriter,
    Closing,
    Opening,
    close_leads,
    closing,
    open_leads,
    openings,
    region_body,
)
from .tools import ARGUMENTS, NAME, CallShape, ToolChoice, ToolSpec, call_shape, tool_specs


@dataclass(frozen=True)
class RegionPlan:
    """A region of a field that is not a tool call (reasoning), written once.

    Attributes:
        field: the field name.
        openings: the ways to open it (empty for a region the prefix opened).
        body: its body followed by its close, as one node.
        content: its body alone (the structural tag puts the close in the tag's end).
        closing: how it ends.
        required: True for an ``optional: false`` field.
    """

    field: str
    openings: tuple[Opening, ...]
    body: Node
    content: Node
    closing: Closing
    required: bool = False


@dataclass(frozen=True)
class CallPlan:
    """One way to write a tool-call region.

    Attributes:
        field: the tool field.
        tool: the tool's name, or None for a region holding a list of calls (of any allowed tool).
        opening: how the region opens (its `begin` may hold the tool name).
        body: the arguments (or the list of calls) as grammar.
        closing: how the region ends.
    """

    field: str
    tool: str | None
    opening: Opening
    body: Node
    closing: Closing

    def after_trigger(self) -> Node:
        """The region from just after its trigger to its end."""
        tail = (Lit(self.closing.literal),) if self.closing.literal else ()
        return seq(
            Lit(self.opening.begin[len(self.opening.trigger) :]),
            self.opening.rest,
            self.body,
            self.closing.before,
            *tail,
        )


@dataclass
class OutputPlan:
    """The shape of every allowed output.

    Attributes:
        continuation: the region the prefix left open, written to its close first, or None.
        prelude: regions that may come before everything else, in template order.
        calls: the ways to write a tool call.
        text_excludes: literals free text never holds (every trigger and field open).
        min_calls, max_calls: how many tool-call regions (max None: any number).
        call_end: ``"closed"`` (text may follow a call), ``"last"`` (a call ends the output) or
            ``"chain"`` (calls follow one another directly, the last ends the output).
    """

    continuation: RegionPlan | None = None
    prelude: list[RegionPlan] = field(default_factory=list)
    calls: list[CallPlan] = field(default_factory=list)
    text_excludes: tuple[str, ...] = ()
    min_calls: int = 0
    max_calls: int | None = 0
    call_end: str = "closed"

    @property
    def triggers(self) -> list[str]:
        return list(dict.fromkeys(call.opening.trigger for call in self.calls))


@dataclass
class PrefixState:
    """Where the prefix leaves the output: the field whose region is open, the fields already
    closed, and whether the implicit field already holds text (an answer has begun)."""

    open_field: str | None = None
    closed: set[str] = field(default_factory=set)
    answer_begun: bool = False


def prefix_state(
    template: ResponseTemplate, prefix: str, budget: GrammarBudget | None = None
) -> PrefixState:
    """Replay `prefix` with the template's parser, as if the output ended there, and read which
    delimiters matched (a close the parser still holds, waiting for more text, counts).

    Raises:
        GrammarTooLarge: the replay ran past the budget's deadline.
    """
    deadline = budget.deadline if budget is not None else None
    parser = ResponseParser(
        template, prefix=prefix, on_error="keep", record_spans=True, deadline=deadline
    )
    try:
        parser.finalize()
    except ParseDeadlineError:
        budget.out_of_time()
    state = PrefixState()
    stream = prefix[parser.prefix_cut :]
    implicit = template.implicit_field.name if template.implicit_field else None
    for start, end, kind, field_name, *_ in parser.spans or []:
        if kind == "open":
            state.open_field = field_name
        elif kind == "close":
            state.closed.add(field_name)
            state.open_field = None
        elif kind == "body" and field_name == implicit and stream[start:end].strip():
            state.answer_begun = True
    if state.open_field == implicit:
        state.open_field = None
    return state


class _Planner:
    """Plans the output for one template and request (see `derive_grammar`)."""

    def __init__(
        self,
        template: ResponseTemplate,
        tools: list[ToolSpec],
        choice: ToolChoice,
        prefix: str,
        budget: GrammarBudget | None = None,
    ):
        self.template = template
        self.tools = tools
        self.choice = choice
        self.prefix = prefix
        self.budget = budget
        self.grammar = Grammar(budget=budget)
        self.grammar.add("root", EMPTY)
        self.notes: list[str] = []
        self.implicit = template.implicit_field
        self.implicit_closes = self._implicit_closes()
        self.lead_in = ""  # what the output writes before any call (the open region's close)

    def _implicit_closes(self) -> set[str]:
        if self.implicit is None or self.implicit.close is None:
            return set()
        try:
            return {
                first_literal(a.node) or ""
                for a in alternatives(self.implicit.close)
                if isinstance(a.node, Lit)
            }
        except Unconstrainable:
            return set()

    def plan(self) -> OutputPlan:
        template = self.template
        if self.implicit is not None and self.implicit.content != "text":
            raise Unconstrainable(
                f"{self.implicit.path}: the implicit field's content '{self.implicit.content}' is not free text"
            )
        state = prefix_state(template, self.prefix, self.budget)
        explicit = [spec for spec in template.fields.values() if not spec.implicit]
        tool_fields = [spec for spec in explicit if spec.is_tool_call]
        if self.implicit is not None and self.implicit.is_tool_call:
            raise Unconstrainable(
                f"{self.implicit.path}: tool calls in the implicit field have no delimiter to write"
            )
        excludes: set[str] = set()
        for spec in explicit:
            excludes |= open_leads(spec)
        plan = OutputPlan(text_excludes=tuple(sorted(excludes)))
        if state.open_field is not None:
            spec = template.fields[state.open_field]
            if spec.is_tool_call:
                raise Unconstrainable(
                    f"the prefix leaves a tool call ({spec.path}) open; a grammar cannot continue a call it did not start"
                )
            plan.continuation = self.region(spec, with_open=False)
            if plan.continuation is not None:
                self.lead_in = example(plan.continuation.body, self.grammar)
            if plan.continuation is None:
                raise Unconstrainable(
                    f"the prefix leaves {spec.path} open and its body cannot be written"
                )
        if self.implicit is None:
            self.notes.append(
                "the template has no implicit field: text outside regions is dropped by the parser"
            )
        if not state.answer_begun:
            for spec in explicit:
                if (
                    spec in tool_fields
                    or spec.name in state.closed
                    or spec.name == state.open_field
                ):
                    continue
                region = self.region(spec, with_open=True)
                if region is not None:
                    plan.prelude.append(region)
                elif not spec.optional:
                    raise Unconstrainable(f"{spec.path} is required but cannot be written")
        self.plan_calls(plan, tool_fields)
        return plan

    # -- regions that are not tool calls ---------------------------------------

    def region(self, spec: FieldSpec, with_open: bool) -> RegionPlan | None:
        try:
            close = closing(spec, None, self.implicit_closes, tool=False)
            ways = tuple(openings(spec, None, self.notes)) if with_open else ()
            content = region_body(spec, close_leads(spec), self.notes)
        except Unconstrainable as error:
            self.notes.append(str(error))
            return None
        if content is None or with_open and not ways:
            return None
        tail = (Lit(close.literal),) if close.literal else ()
        body = seq(content, close.before, *tail)
        if isinstance(content, Text) and tail:
            body = Token(body)  # the text and its close are one lexical unit
        region = RegionPlan(spec.name, ways, body, content, close, required=not spec.optional)
        return region if self.region_reads_back(region, spec) else None

    def region_reads_back(self, region: RegionPlan, spec: FieldSpec) -> bool:
        """Self-check: a written region of text parses back into its field."""
        if spec.content != "text":
            return True
        opening = region.openings[0] if region.openings else None
        written = (opening.begin + example(opening.rest, self.grammar) if opening else "") + "x"
        written += example(region.closing.before, self.grammar) + region.closing.literal
        try:
            message = self.parse_back(written)
        except GrammarTooLarge:
            raise
        except Exception as error:  # a template error surfaces as a parse error here
            self.notes.append(
                f"{spec.path}: a written region does not parse back ({error}); not written"
            )
            return False
        if message.get(spec.name) not in ("x", ["x"]):
            self.notes.append(
                f"{spec.path}: a written region does not read back as the field; not written"
            )
            return False
        return True

    def parse_back(self, text: str) -> dict:
        """`text` parsed with the template after the prefix (a self-check: one node of the
        budget, and its deadline bounds the parse).

        Raises:
            GrammarTooLarge: the budget is spent, or the parse ran past its deadline.
            Exception: whatever the parse raises (the caller notes it).
        """
        spend(self.budget)
        deadline = self.budget.deadline if self.budget is not None else None
        try:
            return parse_response(text, self.template, prefix=self.prefix, deadline=deadline)
        except ParseDeadlineError:
            self.budget.out_of_time()
            raise

    # -- tool calls --------------------------------------------------------------

    def allowed_tools(self) -> list[ToolSpec]:
        if self.choice.mode == "none":
            return []
        if self.choice.mode == "named":
            chosen = [tool for tool in self.tools if tool.name == self.choice.function]
            if not chosen:
                raise Unconstrainable(
                    f"tool_choice names {self.choice.function!r}, which is not among the tools"
                )
            return chosen
        return list(self.tools)

    def plan_calls(self, plan: OutputPlan, tool_fields: list[FieldSpec]) -> None:
        tools = self.allowed_tools()
        needs_call = self.choice.mode in ("required", "named")
        if not tools or not tool_fields:
            if needs_call:
                raise Unconstrainable(
                    "tool_choice asks for a call, but no tool or no tool-call field exists"
                )
            return
        ends = set()
        repeats = True
        for spec in tool_fields:
            shape = call_shape(spec)
            if shape.problem:
                self.notes.append(shape.problem)
                continue
            for call in self.field_calls(spec, shape, tools):
                if self.call_reads_back(call, shape):
                    plan.calls.append(call)
                    ends.add(
                        "chain"
                        if call.closing.chain and call.closing.ends_output
                        else "last"
                        if call.closing.ends_output
                        else "closed"
                    )
            repeats = repeats and spec.repeats
        if not plan.calls:
            if needs_call:
                raise Unconstrainable(
                    "no tool call can be written for this template and these tools"
                )
            return
        named = {call.tool for call in plan.calls}
        for tool in tools:
            if tool.name not in named and None not in named:
                self.notes.append(f"tool {tool.name!r}: no call can be written; it is left out")
        plan.call_end = "closed" if ends == {"closed"} else "chain" if "chain" in ends else "last"
        plan.min_calls = 1 if needs_call else 0
        single = not self.choice.parallel or not repeats or plan.call_end == "last"
        plan.max_calls = 1 if single else None

    def field_calls(
        self, spec: FieldSpec, shape: CallShape, tools: list[ToolSpec]
    ) -> list[CallPlan]:
        calls = []
        writer = CallWriter(self.grammar, spec, shape, close_leads(spec), self.notes)
        names_in_groups = [name for name, role in shape.groups.items() if role is NAME]
        per_tool = bool(names_in_groups) or not shape.each
        batches = [[tool] for tool in tools] if per_tool else [tools]
        for batch in batches:
            values = {name: batch[0].name for name in names_in_groups}
            where = f"{spec.path}[{batch[0].name}]" if per_tool else spec.path
            try:
                close = closing(spec, values, self.implicit_closes, tool=True)
                ways = openings(spec, values, self.notes)
                # An open that only looks ahead: the body itself must start with what it looks
                # for, so a JSON call object is written member by member (the engine would
                # write a schema handed whole from its brace on).
                looked_for = per_tool and spec.content == "json" and any(w.in_body for w in ways)
                body = (writer.object_body(batch[0], where) if looked_for else None) or (
                    self.call_body(writer, spec, shape, batch, where)
                )
            except Unconstrainable as error:
                self.notes.append(str(error))
                continue
            for way in ways:
                written = body
                if way.in_body:  # a lookahead open: the body itself starts with the trigger
                    written = _without_lead(body, way.begin)
                    if written is None:
                        self.notes.append(
                            f"{spec.path}: the body does not start with {way.begin!r}, which the open looks for"
                        )
                        continue
                tool = batch[0].name if per_tool else None
                calls.append(CallPlan(spec.name, tool, way, written, close))
        return calls

    def call_body(
        self,
        writer: CallWriter,
        spec: FieldSpec,
        shape: CallShape,
        tools: list[ToolSpec],
        where: str,
    ) -> Node:
        parallel = self.choice.parallel
        if spec.content == "json":
            return writer.json_body(tools, parallel, where)
        if spec.content == "python-call-list":
            if not shape.each or shape.content != {"name": NAME, "arguments": ARGUMENTS}:
                raise Unconstrainable(
                    f"{spec.path}: python-call-list calls must map to 'name' and 'arguments'"
                )
            return writer.call_list_body(tools, parallel, where)
        if shape.each or shape.content is not ARGUMENTS:
            raise Unconstrainable(
                f"{spec.path}: content '{spec.content}' must be the arguments object itself"
            )
        if spec.content == "xml-inline":
            return writer.tagged_body(tools[0], where)
        if spec.content == "kv-lines":
            return writer.line_body(tools[0], where)
        raise Unconstrainable(
            f"{spec.path}: tool calls with content '{spec.content}' cannot be written"
        )

    def call_reads_back(self, call: CallPlan, shape: CallShape) -> bool:
        """Self-check: a written call parses back into a tool call of the right name."""
        written = example(call.after_trigger(), self.grammar)
        text = self.lead_in + call.opening.trigger + written
        try:
            message = self.parse_back(text)
        except GrammarTooLarge:
            raise
        except Exception as error:
            self.notes.append(
                f"{call.field}: a written call of {call.tool or 'a tool'} does not parse back ({_short(error)}); that way of writing it is left out"
            )
            return False
        names = [
            item.get("function", {}).get("name")
            for item in message.get("tool_calls", [])
            if isinstance(item, dict)
        ]
        wanted = call.tool or (self.allowed_tools()[0].name if self.allowed_tools() else None)
        if wanted not in names:
            self.notes.append(
                f"{call.field}: a written call of {wanted} reads back as {names}; that way of writing it is left out"
            )
            return False
        return True


def _without_lead(node: Node, lead: str) -> Node | None:
    """`node` without the literal `lead` it starts with, or None when it does not start so."""
    items = list(node.items) if isinstance(node, Seq) else [node]
    if not items or not isinstance(items[0], Lit) or not items[0].text.startswith(lead):
        return None
    return seq(Lit(items[0].text[len(lead) :]), *items[1:])


def _short(error: Exception) -> str:
    text = str(error)
    return text if len(text) <= 160 else text[:157] + "..."


# -- the plan as one grammar -----------------------------------------------------


def build_grammar(plan: OutputPlan, grammar: Grammar) -> Grammar:
    """Write `plan` into `grammar`'s ``root`` rule (and helper rules)."""
    text = Text(plan.text_excludes)
    body = _body(plan, grammar, text)
    doubled = False  # whether `body` already holds a part written twice
    for region in reversed(plan.prelude):
        written = alt(*(seq(Lit(way.begin), way.rest, region.body) for way in region.openings))
        if region.closing.ends_output:
            body = alt(written, body) if not region.required else written
        elif region.required:
            body = seq(written, body)
        else:
            if doubled:  # a rule: n optional regions write what follows them once, not 2**n times
                body = grammar.add(grammar.fresh(f"after-{region.field}"), body)
            body = alt(seq(written, body), body)
            doubled = True
    if plan.continuation is not None:
        body = (
            seq(plan.continuation.body, body)
            if not plan.continuation.closing.ends_output
            else plan.continuation.body
        )
    grammar.add("root", body)
    return grammar


def _body(plan: OutputPlan, grammar: Grammar, text: Text) -> Node:
    """Free text and tool calls, as the tool choice and the calls' ends allow."""
    if not plan.calls or plan.max_calls == 0:
        return text

    def calls_after(after: Node, with_text: bool) -> Node:
        options = []
        for trigger in plan.triggers:
            rests = alt(
                *(call.after_trigger() for call in plan.calls if call.opening.trigger == trigger)
            )
            start = Token(seq(text, Lit(trigger))) if with_text else Lit(trigger)
            options.append(seq(start, rests, after))
        return alt(*options)

    if plan.call_end == "chain" and plan.max_calls is None:
        chained = grammar.fresh("more-calls")
        grammar.add(chained, EMPTY)
        grammar.add(chained, alt(EMPTY, calls_after(Ref(chained), with_text=False)))
        after: Node = Ref(chained)
    elif plan.call_end != "closed" or plan.max_calls == 1:
        after = EMPTY
    else:
        name = grammar.fresh("text-and-calls")
        grammar.add(name, EMPTY)
        grammar.add(name, alt(text, calls_after(Ref(name), with_text=True)))
        after = Ref(name)
    if plan.min_calls:
        return calls_after(after, with_text=False)
    return alt(text, calls_after(after, with_text=True))


# -- examples (the self-check) ------------------------------------------------------


def example(node: Node, grammar: Grammar, depth: int = 0) -> str:
    """A short text `node` matches: first alternatives, fewest repetitions, empty free text.

    Raises:
        Unconstrainable: no finite example; GrammarTooLarge when the grammar's budget is spent.
    """
    spend(grammar.budget)
    if depth > 60:
        raise Unconstrainable("the grammar has no finite example")
    if isinstance(node, Lit):
        return node.text
    if isinstance(node, Seq):
        return "".join(example(item, grammar, depth + 1) for item in node.items)
    if isinstance(node, Alt):
        for option in node.items:
            try:
                return example(option, grammar, depth + 1)
            except Unconstrainable:
                continue
        raise Unconstrainable("the grammar has no finite example")
    if isinstance(node, Repeat):
        return example(node.item, grammar, depth + 1) * node.min if node.min else ""
    if isinstance(node, Token):
        return example(node.node, grammar, depth + 1)
    if isinstance(node, Text):
        if not node.min_length:
            return ""
        return (
            example(node.allowed or CharSet((), negated=True), grammar, depth + 1) * node.min_length
        )
    if isinstance(node, Ref):
        return example(grammar.rules[node.name], grammar, depth + 1)
    if isinstance(node, Json):
        return json.dumps(json_example(json.loads(node.schema_text)))
    for code in [97, *range(32, 127)]:  # a character set: a letter if it may
        if node.contains(chr(code)):
            return chr(code)
    if node.ranges and not node.negated:
        return chr(node.ranges[0][0])
    raise Unconstrainable("a character class with no character")


def json_example(schema: Any) -> Any:
    """A small value valid against `schema` (required keys only, first alternatives)."""
    if not isinstance(schema, dict) or not schema:
        return None
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for union in ("anyOf", "oneOf"):
        if isinstance(schema.get(union), list) and schema[union]:
            return json_example(schema[union][0])
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) and kind else kind
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties") or {}
        return {
            name: json_example(properties.get(name, {}))
            for name in schema.get("required", [])
            if name in properties
        }
    if kind == "array":
        return [json_example(schema.get("items", {})) for _ in range(schema.get("minItems", 0))]
    return {"string": "a", "integer": 1, "number": 1, "boolean": True}.get(kind)


# -- the public result ------------------------------------------------------------

# How notes name each form ("... is not enforced in the GBNF form and the structural tag").
FORM_LABELS = {"structural-tag": "structural tag", "lark": "Lark", "gbnf": "GBNF"}


@dataclass
class DerivedGrammar:
    """A grammar derived from a response template for one request.

    Attributes:
        template: the loaded template.
        tools: the request's tools.
        choice: the tool choice.
        prefix: the prompt text the output continues.
        plan: the planned output, or None when no grammar honours the request.
        grammar: the grammar (``grammar.rules["root"]`` is the whole output), or None.
        notes: what the grammar does not enforce or leaves out, and why, each naming where.
        unconstrainable: why no grammar honours the request (empty when there is one).
        budget: the `GrammarBudget` the derivation spent from; writing a format spends from it
            too (None: unbounded).
        too_large: the `GrammarTooLarge` that ended the derivation (its message is also in
            `unconstrainable`), or None.
    """

    template: ResponseTemplate
    tools: list[ToolSpec]
    choice: ToolChoice
    prefix: str
    plan: OutputPlan | None
    grammar: Grammar | None
    notes: list[str]
    unconstrainable: list[str]
    budget: GrammarBudget | None = None
    too_large: GrammarTooLarge | None = None

    @property
    def ok(self) -> bool:
        """True when there is a grammar."""
        return self.grammar is not None

    def notes_for(self, form: str) -> list[str]:
        """The `notes` that hold for one form (``"structural-tag"``, ``"lark"`` or ``"gbnf"``):
        a note that names no form holds for all; one that says "in the ..." for those it names.

        Raises:
            ValueError: an unknown form.
        """
        if form not in FORM_LABELS:
            raise ValueError(f"form must be one of {', '.join(FORM_LABELS)}, got {form!r}")
        return [
            note
            for note in self.notes
            if " in the " not in note or FORM_LABELS[form] in note.split(" in the ", 1)[1]
        ]

    def structural_tag(self) -> dict:
        """The structural tag (``{"type": "structural_tag", "format": ...}``) for xgrammar and for
        vLLM's and SGLang's ``response_format``.

        Raises:
            Unconstrainable: there is no grammar (`unconstrainable` says why).
            GrammarTooLarge: writing it spent the budget (`budget`), or its JSON is longer than
                the budget's characters.
        """
        from .structural_tag import structural_tag

        written = structural_tag(self._needed())
        if self.budget is not None and self.budget.chars is not None:
            self.budget.check_written(
                len(json.dumps(written, ensure_ascii=False)), "structural tag"
            )
        return written

    def lark(self, special_tokens: dict[str, int] | None = None) -> str:
        """The grammar in llguidance's Lark; `special_tokens` (text -> id) are written as tokens.

        Raises:
            Unconstrainable: there is no grammar. GrammarTooLarge: the budget is spent.
        """
        from .lark import lark_grammar

        return lark_grammar(self._needed(), special_tokens or {})

    def gbnf(self) -> str:
        """The grammar in GBNF (llama.cpp's ``--grammar``; also xgrammar's EBNF).

        Raises:
            Unconstrainable: there is no grammar. GrammarTooLarge: the budget is spent.
        """
        from .gbnf import gbnf_grammar

        return gbnf_grammar(self._needed().grammar)

    def _needed(self) -> "DerivedGrammar":
        if self.grammar is None:
            raise Unconstrainable("; ".join(self.unconstrainable))
        return self


def derive_grammar(
    template: Any,
    tools: list | None = None,
    tool_choice: Any = "auto",
    parallel_tool_calls: bool = True,
    prefix: str = "",
    budget: GrammarBudget | None = None,
) -> DerivedGrammar:
    """The grammar of every output `template` reads back that honours the request.

    Args:
        template: a response template (dict, JSON text, shipped name, path, or loaded).
        tools: the request's tools (`apply_chat_template(tools=...)` format).
        tool_choice: ``"auto"``, ``"required"``, ``"none"``, a function name, or
            ``{"type": "function", "function": {"name": ...}}``.
        parallel_tool_calls: False: at most one tool call.
        prefix: the prompt text the output continues (a reasoning block it opened, an answer
            it began); ``""`` when the output starts the message.
        budget: what deriving and then writing the grammar may spend (a `GrammarBudget`: a
            deadline, nodes, characters), for grammars derived from input a server does not
            trust; None (the default) bounds nothing.

    Returns:
        A `DerivedGrammar`; when no grammar honours the request, its `grammar` is None and
        `unconstrainable` says why (nothing is raised for that), also when the budget was
        spent (then `too_large` is the `GrammarTooLarge`).

    Raises:
        TemplateError: the template is invalid.
        ValueError: a tool or the tool choice is malformed.
    """
    loaded = load_template(template)
    specs = tool_specs(tools)
    choice = ToolChoice.read(tool_choice, parallel_tool_calls)
    planner = _Planner(loaded, specs, choice, prefix or "", budget)
    try:
        plan = planner.plan()
        grammar = build_grammar(plan, planner.grammar)
    except (Unconstrainable, GrammarTooLarge) as error:
        too_large = error if isinstance(error, GrammarTooLarge) else None
        return DerivedGrammar(
            loaded,
            specs,
            choice,
            prefix or "",
            None,
            None,
            planner.notes,
            [str(error)],
            budget,
            too_large,
        )
    return DerivedGrammar(
        loaded,
        specs,
        choice,
        prefix or "",
        plan,
        grammar,
        list(dict.fromkeys(planner.notes)),
        [],
        budget,
    )
