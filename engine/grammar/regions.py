"""How each region of a template is written: its open delimiter, its body, its close delimiter.

`openings`, `closing` and `region_body` read one field; `call_body` writes a tool call's
body (arguments as JSON, tagged parameters, key-value lines or a Python call list) for one
tool. The grammar never writes more than the template reads back: free text never holds a
delimiter the parser watches for at that point, a string value never holds the delimiter
that would end its region.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import regex

from ..template import FieldSpec
from ..tool_typing import schema_types
from . import bounds
from .ir import (
    EMPTY,
    Alt,
    CharSet,
    Grammar,
    Json,
    Lit,
    Node,
    Repeat,
    Seq,
    Text,
    Token,
    alt,
    optional,
    seq,
)
from .json_excludes import refused, xgrammar_gaps
from .patterns import Unconstrainable, alternatives, expanded, first_literal, leads, to_regex
from .schema import INTEGER, NUMBER, Dialect, SchemaWriter, bounded_number
from .tools import ARGUMENTS, NAME, ToolSpec, shape_schema

# Names `python-call-list` reads as function names and keyword arguments.
PYTHON_NAME = regex.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:[.-][A-Za-z0-9_]+)*")
# First characters of a raw value that a JSON value parser could read as something other than
# a string (a number, true/false/null, NaN, Infinity, an object, a list, a quoted string).
_JSON_STARTS = '-0123456789{["tfnNI'


@dataclass(frozen=True)
class Opening:
    """One way to write a field's open delimiter.

    Attributes:
        trigger: the literal every open of this field starts with (what free text never holds).
        begin: the literal this way starts with (starts with `trigger`; may hold the tool name).
        rest: the rest of the delimiter after `begin`.
        lookahead: what the body must start with (a trailing lookahead of the pattern), or None.
        in_body: True for an open that consumes nothing (a lookahead alone): `begin` is the
            start of the body itself.
    """

    trigger: str
    begin: str
    rest: Node
    lookahead: Node | None = None
    in_body: bool = False


@dataclass(frozen=True)
class Closing:
    """How a region ends.

    Attributes:
        before: text written before `literal` (such as blanks).
        literal: the literal the region ends with; ``""`` when the region ends the output.
        ends_output: True when nothing may follow the region (its close is the end of the turn,
            or the pattern asks for the end of the text).
        chain: True when the next region of the same field may follow at once (the close is a
            lookahead for the next open).
    """

    before: Node
    literal: str
    ends_output: bool = False
    chain: bool = False


def _split_trailing(node: Node) -> tuple[Node, str]:
    if isinstance(node, Lit):
        return EMPTY, node.text
    if isinstance(node, Seq) and node.items and isinstance(node.items[-1], Lit):
        return seq(*node.items[:-1]), node.items[-1].text
    return node, ""


def _nullable(node: Node) -> bool:
    try:
        return regex.fullmatch(to_regex(node), "") is not None
    except ValueError:
        return False


def open_leads(spec: FieldSpec) -> set[str]:
    """The triggers of `spec`'s open delimiter: literals free text must never hold.

    Raises:
        Unconstrainable: some way to open the field starts with no literal.
    """
    found: set[str] = set()
    for option in alternatives(spec.open):
        node = seq(option.node, option.lookahead) if option.lookahead is not None else option.node
        literals = leads(node)
        if literals is None:
            raise Unconstrainable(
                f"{spec.path}: an open that starts with no literal cannot be kept out of free text"
            )
        found |= literals
    return found


def close_leads(spec: FieldSpec, values: dict | None = None) -> set[str]:
    """Literals the region's body must never hold, because they would end it (empty: no close)."""
    if spec.close is None:
        return set()
    found: set[str] = set()
    for option in alternatives(spec.close, values):
        node = seq(option.node, option.lookahead) if option.lookahead is not None else option.node
        literals = leads(node) or set()
        found |= {literal for literal in literals if literal.strip()}
    return found


def openings(spec: FieldSpec, values: dict | None, notes: list[str]) -> list[Opening]:
    """The ways to write `spec`'s open delimiter with `values` in its named groups."""
    written = alternatives(spec.open, values)
    triggers = sorted(open_leads(spec), key=len, reverse=True)
    out: list[Opening] = []
    for index, option in enumerate(written):
        if option.zero_width and option.lookahead is not None and not option.lookbehind:
            for form in expanded(option.lookahead):
                begin = first_literal(form)
                if begin is not None and begin in triggers:
                    out.append(Opening(begin, begin, EMPTY, option.lookahead, in_body=True))
            continue
        if option.zero_width or option.at_end or option.lookbehind:
            what = "a lookahead alone" if option.zero_width else "an anchor or a lookbehind"
            notes.append(
                f"{spec.path}: open alternative {index + 1} ({what}) cannot be written; the others are used"
            )
            continue
        for form in expanded(option.node):
            begin = first_literal(form)
            trigger = next((t for t in triggers if begin and begin.startswith(t)), None)
            if begin is None or trigger is None:
                notes.append(
                    f"{spec.path}: open alternative {index + 1} starts with no literal; not written"
                )
                continue
            rest = seq(*form.items[1:]) if isinstance(form, Seq) else EMPTY
            out.append(Opening(trigger, begin, rest, option.lookahead))
    return list(dict.fromkeys(out))


def closing(spec: FieldSpec, values: dict | None, implicit_closes: set[str], tool: bool) -> Closing:
    """The way `spec`'s regions end (see `Closing`)."""
    if spec.close is None:
        return Closing(EMPTY, "", ends_output=True)
    options = alternatives(spec.close, values)
    own_leads = open_leads(spec)
    chain = any(
        option.lookahead is not None
        and _nullable(option.node)
        and (leads(option.lookahead) or set()) & own_leads
        for option in options
    )
    written = [option for option in options if not option.zero_width and option.lookahead is None]
    for option in written:
        before, literal = _split_trailing(option.node)
        if option.at_end or not literal:
            continue
        if tool and literal in implicit_closes:
            continue  # the end of the turn: the call ends the output instead (below)
        return Closing(before, literal, chain=False)
    for option in written:
        if option.at_end:
            return Closing(option.node, "", ends_output=True, chain=chain)
    for (
        option
    ) in options:  # a lookahead the end of the text satisfies: the region may end the output
        if option.lookahead is not None and not option.zero_width and _nullable(option.lookahead):
            return Closing(option.node, "", ends_output=True, chain=chain)
    return Closing(EMPTY, "", ends_output=True, chain=chain)


def region_body(spec: FieldSpec, excludes: set[str], notes: list[str]) -> Node | None:
    """The body of a region of a non-tool field (None: it cannot be written, noted)."""
    content = spec.content
    if content == "text":
        return Text(tuple(sorted(excludes)))
    if content == "int":
        body = INTEGER
    elif content == "float":
        body = NUMBER
    elif content == "bool":
        body = alt(Lit("true"), Lit("false"))
    elif (
        content == "json"
        and not spec.content_args.get("unquoted_keys")
        and not spec.content_args.get("string_delims")
    ):
        body = Json("{}", tuple(sorted(excludes)))
    else:
        notes.append(f"{spec.path}: content '{content}' outside tool calls is not written")
        return None
    return body


def _holds_name(role: Any) -> bool:
    """Whether a call shape's member is the function's name or an object holding it."""
    return role is NAME or (isinstance(role, dict) and any(map(_holds_name, role.values())))


class CallWriter:
    """Writes the bodies of one tool field's calls into `grammar`."""

    def __init__(
        self, grammar: Grammar, spec: FieldSpec, shape, excludes: set[str], notes: list[str]
    ):
        self.grammar = grammar
        self.spec = spec
        self.shape = shape
        self.excludes = tuple(sorted(excludes))
        self.notes = notes

    # -- JSON ---------------------------------------------------------------

    def dialect(self) -> Dialect:
        args = self.spec.content_args
        delims = args.get("string_delims")
        pair = tuple(delims[0]) if delims else None
        if args.get("unquoted_keys"):
            return Dialect("bare-keys", self.excludes, pair)
        return Dialect("json", self.excludes, pair)

    def json_body(self, tools: list[ToolSpec], parallel: bool, where: str) -> Node:
        """One call's JSON body (or, with `transform_each`, a list of calls of any of `tools`)."""
        definitions: dict = {}  # the tools' own definitions, gathered at the root
        if self.shape.each:
            items = [shape_schema(self.shape.content, tool, definitions) for tool in tools]
            schema: dict = {
                "type": "array",
                "items": items[0] if len(items) == 1 else {"anyOf": items},
                "minItems": 1,
            }
            if not parallel:
                schema["maxItems"] = 1
        else:
            schema = shape_schema(self.shape.content, tools[0], definitions)
        if definitions:
            schema = {**schema, "$defs": {**schema.get("$defs", {}), **definitions}}
        lead = Repeat(CharSet(((9, 10), (32, 32))), 0, 4)  # blanks before the JSON, as models write
        return seq(lead, self._json_value(schema, where))

    def _json_value(self, schema: dict, where: str) -> Node:
        """A JSON value following `schema`, in the field's dialect."""
        dialect = self.dialect()
        if dialect.name == "json" and dialect.string_delims is None:
            # The structural tag and the Lark form hand the schema to the engine (xgrammar,
            # llguidance); the GBNF writes it out and names what it cannot enforce.
            writer = SchemaWriter(Grammar(budget=self.grammar.budget), dialect)
            writer.value(schema, where, root=schema)
            self.notes += [f"{note.split(' in the ')[0]} in the GBNF form" for note in writer.notes]
            self.notes += [
                f"{keyword} is ignored by llguidance: not enforced in the Lark form"
                for keyword in refused(schema, where)
            ]
            self.notes += [
                f"{keyword} next to a 'pattern' is ignored by xgrammar: not enforced in the "
                "structural tag"
                for keyword in xgrammar_gaps(schema, where)
            ]
            return Json(json.dumps(schema, sort_keys=False), self.excludes)
        writer = SchemaWriter(self.grammar, dialect, stem=_rule_stem(where))
        node = writer.value(schema, where, root=schema)
        self.notes += writer.notes
        return node

    def object_body(self, tool: ToolSpec, where: str) -> Node | None:
        """One call of `tool` as a JSON object written member by member, the name first:
        ``{"name": "TOOL", "parameters": `` then the arguments' JSON, then ``}``.

        For an open that only looks ahead for the object's start (``(?=\\{...)``): the body
        must then start with that brace itself, which a schema handed whole to the engine
        cannot (the engine writes the object from its brace on). None when each call is no
        JSON object (a list of calls, a role alone) or the arguments' dialect is not JSON."""
        shape = self.shape.content
        dialect = self.dialect()
        if self.shape.each or not isinstance(shape, dict) or dialect.name != "json":
            return None
        return self._members(shape, tool, where)

    def _members(self, shape: dict, tool: ToolSpec, where: str) -> Node:
        """The object of `shape` for a call of `tool`: the members that hold its name first (an
        open that looks ahead for the name's key finds it there), each value a literal or a JSON
        value; `where` names the object for the notes."""
        items: list[Node] = [Lit("{")]
        ordered = sorted(shape.items(), key=lambda member: not _holds_name(member[1]))
        for index, (key, role) in enumerate(ordered):
            items.append(Lit(("" if index == 0 else ", ") + json.dumps(key) + ": "))
            if role is NAME:
                items.append(Lit(json.dumps(tool.name)))
            elif isinstance(role, dict):
                items.append(self._members(role, tool, f"{where}.{key}"))
            else:
                items.append(self._json_value(shape_schema(role, tool), f"{where}.{key}"))
        items.append(Lit("}"))
        return seq(*items)

    # -- tagged parameters ------------------------------------------------------

    def tagged_body(self, tool: ToolSpec, where: str) -> Node:
        """Parameters written one tag each (`xml-inline`), in declared order."""
        args = self.spec.content_args
        tag = _TagPattern(args["tag_pattern"], f"{self.spec.path}.content_args.tag_pattern")
        by = args.get("value_parser_by")
        entries = []
        for name, schema in _properties(tool):
            required = name in tool.parameters.get("required", [])
            fills, value_parser = {}, args.get("value_parser")
            if by is not None:
                capture, value_parser = _capture_for(by, value_parser, schema, args["tag_pattern"])
                if capture is None:
                    self.notes.append(
                        f"{where}: no capture of {by['group']!r} in value_parser_by reads {name!r} "
                        "the way its schema asks; the tag may say either"
                    )
                else:
                    fills[by["group"]] = capture
            try:
                value = self.raw_value(
                    schema,
                    tag.value_excludes | set(self.excludes),
                    value_parser,
                    where,
                    name,
                    tool.parameters,
                )
                written = tag.write(name, value, fills)
            except Unconstrainable as error:
                if required:
                    raise Unconstrainable(f"{where}: {error}") from None
                self.notes.append(f"{where}: parameter {name!r} left out: {error}")
                continue
            entries.append((seq(optional(Lit("\n")), written), required))
        return _in_order(entries)

    def line_body(self, tool: ToolSpec, where: str) -> Node:
        """Parameters written one line each (`kv-lines`), in declared order."""
        args = self.spec.content_args
        line_sep, kv_sep = args.get("line_sep", "\n"), args.get("kv_sep", ":")
        entries = []
        for name, schema in _properties(tool):
            required = name in tool.parameters.get("required", [])
            bad = kv_sep in name or line_sep in name or name != name.strip() or not name
            if bad:
                if required:
                    raise Unconstrainable(
                        f"{where}: parameter {name!r} cannot be written as a key of a line"
                    )
                self.notes.append(
                    f"{where}: parameter {name!r} cannot be written as a key of a line; left out"
                )
                continue
            try:
                value = self.raw_value(
                    schema,
                    {line_sep, *self.excludes},
                    args.get("value_parser"),
                    where,
                    name,
                    tool.parameters,
                )
            except Unconstrainable as error:
                if required:
                    raise
                self.notes.append(f"{where}: parameter {name!r} left out: {error}")
                continue
            entries.append((seq(Lit(f"{name}{kv_sep} "), value, Lit(line_sep)), required))
        return _in_order(entries)

    def raw_value(
        self,
        schema: dict,
        excludes: set[str],
        value_parser,
        where: str,
        name: str,
        root: dict | None = None,
        in_union: bool = False,
    ) -> Node:
        """A parameter value written as raw text (read back by tool-argument typing, or by a
        JSON value parser when the template gives one). `root` (the tool's parameters)
        resolves ``$ref``; `in_union`: the value is one option of an ``anyOf``/``oneOf``,
        so a string must not read as another type.

        Raises:
            Unconstrainable: no text reads back as the schema asks (a ``$ref`` to a schema that
                is not a string, which tool typing does not follow).
        """
        kinds = schema.get("type") if isinstance(schema, dict) else None
        reads_json = isinstance(value_parser, dict) and value_parser.get("name") == "json"
        excludes_t = tuple(sorted(e for e in excludes if e))
        if isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and not reads_json:
            target = _resolved(schema["$ref"], root or {})
            if not isinstance(target, dict) or schema_types(target) not in (["string"], []):
                raise Unconstrainable(
                    f"parameter {name!r}: tool typing reads a $ref parameter as text, and "
                    f"{schema['$ref']!r} is not a string schema"
                )
            return self.raw_value(target, excludes, value_parser, where, name, root, in_union)
        unions = [
            schema[key]
            for key in ("anyOf", "oneOf")
            if isinstance(schema, dict) and isinstance(schema.get(key), list) and schema[key]
        ]
        if unions and kinds is None and not reads_json:
            if "oneOf" in schema:
                self.notes.append(f"{where}.{name}: 'oneOf' is written as 'anyOf'")
            return alt(
                *(
                    self.raw_value(option, excludes, value_parser, where, name, root, True)
                    for option in unions[0]
                )
            )
        if (
            isinstance(schema, dict)
            and "enum" in schema
            and all(isinstance(v, str) for v in schema["enum"])
        ):
            options = []
            for value in schema["enum"]:
                text = value
                if reads_json and _reads_as_json(value) or value != value.strip():
                    text = json.dumps(value, ensure_ascii=False)
                if any(e in text for e in excludes_t) or not text:
                    self.notes.append(
                        f"{where}: enum value {value!r} of {name!r} holds a delimiter; left out"
                    )
                    continue
                options.append(Lit(text))
            if options:
                return alt(*options)
        if kinds == "string" or kinds is None and not isinstance(schema, dict):
            return self.raw_string(
                excludes_t,
                reads_json,
                schema if isinstance(schema, dict) else {},
                f"{where}.{name}",
                in_union,
            )
        if kinds in ("integer", "number", "boolean") and not (
            isinstance(schema, dict) and ("enum" in schema or "const" in schema)
        ):
            if kinds == "boolean":
                return alt(Lit("true"), Lit("false"))
            return bounded_number(kinds, schema, f"{where}.{name}", self.notes)
        writer = SchemaWriter(
            self.grammar, Dialect("json", excludes_t), stem=_rule_stem(f"{where}-{name}")
        )
        node = writer.value(schema, f"{where}.{name}", root=root if root is not None else schema)
        self.notes += writer.notes
        if isinstance(kinds, list) and "string" in kinds:
            node = alt(
                node, self.raw_string(excludes_t, reads_json, schema, f"{where}.{name}", True)
            )
        return node

    def raw_string(
        self,
        excludes: tuple[str, ...],
        reads_json: bool,
        schema: dict,
        path: str,
        in_union: bool = False,
    ) -> Node:
        """Raw text read back as a string: not blank at its start, never starting an excluded
        literal, and, when a JSON value parser reads it or another type of a union could
        (`in_union`), starting with a character no other JSON value starts with (or quoted as
        JSON, for the value parser); within `schema`'s ``minLength`` and ``maxLength``, and
        matching its ``pattern`` in the Lark form (noted for the others)."""
        low, high, pattern = bounds.string_bounds(schema, path, self.notes)
        banned = {literal[0] for literal in excludes if literal} | set(" \t\n\r")
        if reads_json or in_union:
            banned |= set(_JSON_STARTS)
        first = CharSet(tuple((ord(c), ord(c)) for c in sorted(banned)) + ((0, 31),), negated=True)
        if high == 0:
            self.notes.append(
                f"{path}: an empty raw value cannot be written; maxLength not enforced"
            )
            high = None
        rest = Text(excludes, None, max(low - 1, 0), None if high is None else high - 1)
        raw = Token(seq(first, rest), pattern)
        if not reads_json:
            return raw
        plain = CharSet(((0, 31), (34, 34), (92, 92)), negated=True)
        quoted = Token(
            seq(Lit('"'), Text(excludes, plain, low, high), Lit('"')),
            None if pattern is None else f'"(?:{pattern})',
        )
        return alt(raw, quoted)

    # -- Python call lists ----------------------------------------------------

    def call_list_body(self, tools: list[ToolSpec], parallel: bool, where: str) -> Node:
        """``[name(key=value, ...), ...]``: at least one call, at most one without `parallel`."""
        writer = SchemaWriter(
            self.grammar, Dialect("python", self.excludes), stem=_rule_stem(where)
        )
        calls = []
        for tool in tools:
            if not PYTHON_NAME.fullmatch(tool.name):
                self.notes.append(
                    f"{where}: the tool name {tool.name!r} is not a Python name; left out"
                )
                continue
            entries = []
            for name, schema in _properties(tool):
                required = name in tool.parameters.get("required", [])
                if not PYTHON_NAME.fullmatch(name):
                    if required:
                        raise Unconstrainable(
                            f"{where}: parameter {name!r} of {tool.name} is not a keyword name"
                        )
                    self.notes.append(
                        f"{where}: parameter {name!r} of {tool.name} is not a keyword name; left out"
                    )
                    continue
                value = writer.value(schema, f"{where}.{tool.name}.{name}", root=tool.parameters)
                entries.append((name, required, seq(Lit(f"{name}="), value)))
            members = writer.members(entries, _rule_stem(f"{where}-{tool.name}"))
            calls.append(seq(Lit(f"{tool.name}("), members, Lit(")")))
        self.notes += writer.notes
        if not calls:
            raise Unconstrainable(f"{where}: no tool can be written as a Python call")
        call = alt(*calls)
        more = Repeat(seq(Lit(","), optional(Lit(" ")), call)) if parallel else EMPTY
        return seq(Lit("["), call, more, Lit("]"))


def _resolved(ref: str, root: dict) -> Any:
    """The schema a local ``$ref`` (``#/...``) points to in `root`, following chains of refs,
    or None."""
    seen = set()
    target: Any = {"$ref": ref}
    while isinstance(target, dict) and isinstance(target.get("$ref"), str):
        ref = target["$ref"]
        if ref in seen or not ref.startswith("#"):
            return None
        seen.add(ref)
        target = root
        for part in ref[1:].strip("/").split("/") if ref != "#" else []:
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(target, dict) or part not in target:
                return None
            target = target[part]
    return target


def _reads_as_json(value: str) -> bool:
    try:
        json.loads(value)
    except ValueError:
        return False
    return True


def _properties(tool: ToolSpec) -> list[tuple[str, dict]]:
    properties = tool.parameters.get("properties") or {}
    return [
        (name, schema if isinstance(schema, dict) else {}) for name, schema in properties.items()
    ]


def _in_order(entries: list[tuple[Node, bool]]) -> Node:
    """Required entries always, optional ones maybe, in the given order."""
    return seq(*(entry if required else optional(entry) for entry, required in entries))


def _rule_stem(where: str) -> str:
    return regex.sub(r"[^a-z0-9]+", "-", where.lower()).strip("-")[:40] or "value"


class _TagPattern:
    """An `xml-inline` tag pattern written for one key and one value."""

    def __init__(self, pattern: str, path: str):
        from ..delimiters import Delimiter

        compiled = regex.compile(pattern, regex.DOTALL)
        self.delimiter = Delimiter.from_pattern("", "tag", path, compiled)
        self.path = path
        forms = alternatives(self.delimiter, {"value": Lit("\x00")})
        after = _after_value(forms[0].node) if forms else None
        self.value_excludes = (leads(after) or set()) if after is not None else set()

    def write(self, key: str, value: Node, fills: dict | None = None) -> Node:
        """The tag for `key` with `value` in it, other named groups written as `fills` says.

        Raises:
            Unconstrainable: no alternative of the pattern can be written that way."""
        options = alternatives(
            self.delimiter, {**(fills or {}), "key": key, "value": value}, self.path
        )
        for option in options:
            if not option.zero_width and option.lookahead is None and not option.lookbehind:
                return _absorb_runs(option.node)
        raise Unconstrainable(f"{self.path}: no way to write a tag")


def _capture_for(
    by: dict, value_parser: dict | None, schema: Any, tag_pattern: str
) -> tuple[str | None, Any]:
    """The capture of `value_parser_by`'s group to write a parameter of `schema` with, and the
    value parser it picks: one that keeps the text for a string, one that reads JSON for any
    other type (tool typing leaves values read this way alone). The captures are the group's
    entries, and the words of the group when it is an alternation of words (a capture with no
    entry picks `value_parser`). (None, `value_parser`) when no capture does."""
    wants_text = isinstance(schema, dict) and schema.get("type") == "string"
    parsers = dict(by["parsers"])
    for word in _group_words(tag_pattern, by["group"]):
        parsers.setdefault(word, value_parser)
    for capture, parser in parsers.items():
        name = parser.get("name", "text") if isinstance(parser, dict) else None
        if (name in (None, "text")) if wants_text else name == "json":
            return capture, parser
    return None, value_parser


def _group_words(pattern: str, group: str) -> list[str]:
    """The words named group `group` of `pattern` matches when its body is an alternation of
    words (``(?P<string>true|false)``), else []."""
    start = pattern.find(f"(?P<{group}>")
    if start < 0:
        return []
    body_start = start + len(group) + 5
    end = pattern.find(")", body_start)
    body = pattern[body_start:end] if end >= 0 else ""
    return body.split("|") if regex.fullmatch(r"\w+(?:\|\w+)*", body) else []


def _after_value(node: Node) -> Node | None:
    """What follows the value placeholder (a NUL literal) in a written tag."""
    items = list(node.items) if isinstance(node, Seq) else [node]
    for index, item in enumerate(items):
        if isinstance(item, Lit) and "\x00" in item.text:
            tail = item.text.split("\x00", 1)[1]
            return seq(Lit(tail), *items[index + 1 :])
    return None


def _absorb_runs(node: Node) -> Node:
    """A written tag with its free-text value made safe to lex: optional runs right around the
    value are dropped (the text can write them itself), and the literal after the value joins
    it in one `Token`, so that no lexer has to guess where the value ends."""
    if not isinstance(node, Seq):
        return node
    items = list(node.items)
    out: list[Node] = []
    index = 0
    while index < len(items):
        item = items[index]
        index += 1
        if not _holds_text(item):
            out.append(item)
            continue
        while out and _is_run(out[-1]):
            out.pop()
        while index < len(items) and _is_run(items[index]):
            index += 1
        if index < len(items) and isinstance(items[index], Lit):
            item = _ending_with(item, items[index])
            index += 1
        out.append(item)
    return seq(*out)


def _holds_text(node: Node) -> bool:
    if isinstance(node, (Token, Text)):
        return True
    return isinstance(node, Alt) and any(isinstance(option, (Token, Text)) for option in node.items)


def _ending_with(node: Node, literal: Lit) -> Node:
    """`node` followed by `literal`, the literal inside each free-text token."""
    if isinstance(node, Alt):
        return alt(*(_ending_with(option, literal) for option in node.items))
    if isinstance(node, Token):
        return Token(seq(node.node, literal), node.also)
    if isinstance(node, Text):
        return Token(seq(node, literal))
    return seq(node, literal)


def _is_run(node: Node) -> bool:
    if not isinstance(node, Repeat) or node.min != 0:
        return False
    inner = node.item
    return isinstance(inner, CharSet) or isinstance(inner, Lit) and inner.text.isspace()


__all__ = [
    "ARGUMENTS",
    "CallWriter",
    "Closing",
    "NAME",
    "Opening",
    "close_leads",
    "closing",
    "open_leads",
    "openings",
    "region_body",
]
