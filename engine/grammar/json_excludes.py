"""A tool's JSON Schema as llguidance enforces it inside the Lark form (``%json { ... }``), with
string values that never hold the delimiters that would end their region.

llguidance compiles JSON Schema itself (types, enum, const, properties, required,
additionalProperties, items, minItems/maxItems, minLength/maxLength, pattern, minimum/maximum and
their exclusive forms, multipleOf, anyOf/oneOf, allOf, $ref/$defs), so the Lark form hands it the
tool's schema whole instead of writing it out. Two things are added, never removed:

* every schema that may hold a string gets one more ``pattern`` (`avoiding_regex`): the string
  never holds an excluded literal (a delimiter the template's parser watches for there). A value
  that holds such a literal would end the region early when the output is read back;
* objects that list ``properties`` and say nothing of other keys are closed
  (``additionalProperties: false``), as the other forms write them; free-form maps take their
  keys through ``patternProperties`` so that keys avoid the literals too.

`REFUSED_KEYWORDS` are the keywords llguidance does not implement; the schema is compiled
leniently (they are ignored) and `refused` names them per parameter.

The structural tag hands xgrammar the schema with its own ``excludes``; xgrammar (0.2.9) then
drops ``minLength``/``maxLength`` (as it does next to a ``pattern``). `schema_for_xgrammar`
writes such lengths as a ``pattern`` of that many characters, none of them the first character
of an excluded literal (so none can begin), and `xgrammar_gaps` names the strings that have a
pattern and lengths both (the lengths are not enforced there).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from .ir import CharSet
from .patterns import char_class

# Keywords llguidance (1.9) does not implement; with ``lenient`` it ignores them.
REFUSED_KEYWORDS = (
    "not",
    "if",
    "then",
    "else",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
    "propertyNames",
    "dependentRequired",
    "dependentSchemas",
    "unevaluatedProperties",
    "unevaluatedItems",
)
# String formats llguidance enforces; another format is ignored (lenient).
KNOWN_FORMATS = (
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
    "uri",
)
# Longest regex `avoiding_regex` writes before giving up (the automaton's states multiply).
_MAX_REGEX = 20_000
_ANY = CharSet((), negated=True)
# Definitions `schema_for_lark` adds: the pattern of strings that avoid the literals, any value.
_AVOID = "#/$defs/x-avoid"
_ANY_VALUE = "#/$defs/x-any-value"
_ANNOTATIONS = {"description", "title", "default", "examples", "$comment"}
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_ONE = ("items", "additionalProperties")


def avoiding_regex(excludes: tuple[str, ...]) -> str | None:
    """A regex (anchored, ``^...$``) of the texts that hold none of `excludes`.

    Built from the automaton that watches for the literals (one state per prefix of a literal
    read so far, `gbnf.text_automaton`) by eliminating its states one by one.

    Returns:
        The regex, or None when it would be longer than 20,000 characters (many long literals
        that overlap); ``^(?:.)*$``-like when `excludes` is empty.
    """
    from .gbnf import text_automaton

    literals = tuple(sorted({literal for literal in excludes if literal}))
    if not literals:
        return "^[\\s\\S]*$"
    automaton = text_automaton(literals, _ANY, None)
    start, final = "start", "final"
    edges: dict[Any, dict[Any, str]] = {start: {0: ""}}
    for state, (moves, may_end) in automaton.items():
        row = edges.setdefault(state, {})
        for chars, target in moves:
            row[target] = _either(row.get(target), char_class(chars))
        if may_end:
            row[final] = _either(row.get(final), "")
    pending = set(automaton)
    while pending:
        # The state whose elimination writes the fewest new paths goes first.
        state = min(
            pending,
            key=lambda s: (
                sum(s in targets for source, targets in edges.items() if source != s)
                * len(edges[s]),
                -s,
            ),
        )
        pending.discard(state)
        row = edges.pop(state)
        loop = row.pop(state, None)
        middle = f"(?:{loop})*" if loop else ""
        for source, targets in edges.items():
            into = targets.pop(state, None)
            if into is None:
                continue
            for target, out in row.items():
                path = _concat(into, middle, out)
                targets[target] = _either(targets.get(target), path)
                if len(targets[target]) > _MAX_REGEX:
                    return None
    return "^" + _group(edges[start].get(final, "")) + "$"


def first_characters_regex(excludes: tuple[str, ...]) -> str:
    """A regex (anchored) of the texts without the first character of any of `excludes`: none
    of them can begin there. Narrower than `avoiding_regex`, and short whatever the literals."""
    firsts = CharSet(tuple(sorted({(ord(text[0]), ord(text[0])) for text in excludes if text})))
    return "^" + ("[^" + char_class(firsts)[1:-1] + "]" if firsts.ranges else "[\\s\\S]") + "*$"


def _either(left: str | None, right: str) -> str:
    if left is None or left == right:
        return right
    return f"{left}|{right}"


def _group(text: str) -> str:
    return f"(?:{text})" if "|" in text else text


def _concat(*parts: str) -> str:
    return "".join(_group(part) for part in parts if part)


def schema_for_lark(schema: Any, excludes: tuple[str, ...]) -> dict:
    """`schema` (a JSON Schema) as `%json` takes it in the Lark form: compact JSON as the
    template's parser reads it (one optional space after ``:`` and ``,``, none elsewhere),
    unknown keywords ignored (``lenient``), strings and free-form keys never holding
    `excludes`, objects with ``properties`` closed unless they say otherwise.

    When the literals are too many and too long to write as one regex (`avoiding_regex`),
    strings hold none of their first characters (`first_characters_regex`).
    """
    avoid = (avoiding_regex(excludes) or first_characters_regex(excludes)) if excludes else None
    root: Any = _prepared(copy.deepcopy(schema if schema is not None else {}), avoid)
    if not isinstance(root, dict):
        root = {} if root is True else {"not": {}}
    guidance = {
        "whitespace_flexible": False,
        "item_separator": ", ?",
        "key_separator": ": ?",
        "lenient": True,
    }
    if avoid is not None:
        root.setdefault("$defs", {})
        root["$defs"]["x-avoid"] = {"pattern": avoid}
        if _ANY_VALUE in json.dumps(root):
            root["$defs"]["x-any-value"] = _any_value(avoid)
    return {"x-guidance": guidance, **root}


def _any_value(avoid: str) -> dict:
    """Any JSON value whose strings and keys avoid the literals (a recursive definition)."""
    ref = {"$ref": _ANY_VALUE}
    return {
        "anyOf": [
            {"type": "string", "allOf": [{"$ref": _AVOID}]},
            {"type": ["number", "boolean", "null"]},
            {"type": "array", "items": ref},
            {"type": "object", "patternProperties": {avoid: ref}, "additionalProperties": False},
        ]
    }


def _prepared(schema: Any, avoid: str | None) -> Any:
    """`schema` with strings avoiding `avoid` (None: nothing to avoid) and closed objects."""
    if schema is True or isinstance(schema, dict) and set(schema) <= _ANNOTATIONS:
        return {"$ref": _ANY_VALUE} if avoid else {}
    if not isinstance(schema, dict):
        return schema
    for key in _SCHEMA_MAPS:
        if isinstance(schema.get(key), dict):
            schema[key] = {name: _prepared(sub, avoid) for name, sub in schema[key].items()}
    for key in _SCHEMA_LISTS:
        if isinstance(schema.get(key), list):
            schema[key] = [_prepared(sub, avoid) for sub in schema[key]]
    for key in _SCHEMA_ONE:
        if key in schema and (isinstance(schema[key], dict) or schema[key] is True):
            if key == "additionalProperties" and schema[key] is True and avoid is None:
                continue
            schema[key] = _prepared(schema[key], avoid)
    if isinstance(schema.get("properties"), dict) and "additionalProperties" not in schema:
        schema["additionalProperties"] = False
    if avoid is None:
        return schema
    kinds = schema.get("type")
    kinds = [kinds] if isinstance(kinds, str) else kinds
    fixed = "enum" in schema or "const" in schema  # the values are given: nothing to avoid
    # A union or reference says its types through its parts, which are prepared themselves.
    composed = any(key in schema for key in ("$ref", "anyOf", "oneOf", "allOf"))
    if fixed or composed and kinds is None:
        return schema
    if kinds is None or "string" in kinds:
        schema["allOf"] = [*schema.get("allOf", []), {"$ref": _AVOID}]
    if kinds is None or "object" in kinds:
        extra = schema.get("additionalProperties")
        free = extra is None and "properties" not in schema or isinstance(extra, dict)
        if free and "patternProperties" not in schema:
            value = extra if isinstance(extra, dict) else {"$ref": _ANY_VALUE}
            schema["patternProperties"] = {avoid: value}
            schema["additionalProperties"] = False
    return schema


def refused(schema: Any, path: str) -> list[str]:
    """What llguidance ignores in `schema` (keywords it does not implement, formats it does not
    know), each as ``"<path>: '<keyword>'"`` naming the subschema (``path.properties.x``...)."""
    found: list[str] = []

    def visit(node: Any, where: str) -> None:
        if not isinstance(node, dict):
            return
        for keyword in REFUSED_KEYWORDS:
            if keyword in node:
                found.append(f"{where}: '{keyword}'")
        if isinstance(node.get("format"), str) and node["format"] not in KNOWN_FORMATS:
            found.append(f"{where}: 'format' {node['format']!r}")
        for key in _SCHEMA_MAPS:
            if isinstance(node.get(key), dict):
                for name, sub in node[key].items():
                    visit(
                        sub, f"{where}.{name}" if key == "properties" else f"{where}.{key}.{name}"
                    )
        for key in _SCHEMA_LISTS:
            if isinstance(node.get(key), list):
                for index, sub in enumerate(node[key]):
                    visit(sub, f"{where}.{key}[{index}]")
        for key in ("items", "additionalProperties"):
            visit(node.get(key), f"{where}.{key}")

    visit(schema, path)
    return found


def schema_for_xgrammar(schema: Any, excludes: tuple[str, ...]) -> Any:
    """`schema` as the structural tag hands it to xgrammar with `excludes`: each string with
    ``minLength``/``maxLength`` and no ``pattern`` takes them as a ``pattern`` instead (its
    characters never the first character of an excluded literal), since xgrammar drops lengths
    when excludes are given."""
    if not excludes:
        return schema
    firsts = CharSet(tuple(sorted({(ord(text[0]), ord(text[0])) for text in excludes if text})))
    # Surrogates too (escaped): xgrammar takes their UTF-8 forms for one character each,
    # which no UTF-8 reader does.
    chars = "[^" + char_class(firsts)[1:-1] + "\\uD800-\\uDFFF]"

    def visit(node: Any) -> Any:
        if isinstance(node, list):
            return [visit(item) for item in node]
        if not isinstance(node, dict):
            return node
        node = {key: visit(value) for key, value in node.items()}
        kinds = node.get("type")
        lengths = "minLength" in node or "maxLength" in node
        if (kinds == "string" or kinds == ["string"]) and lengths and "pattern" not in node:
            low = node.pop("minLength", 0)
            high = node.pop("maxLength", None)
            high_text = "" if high is None else str(high)
            node["pattern"] = f"^{chars}{{{low},{high_text}}}$"
        return node

    return visit(schema)


def xgrammar_gaps(schema: Any, path: str) -> list[str]:
    """Strings of `schema` with a ``pattern`` and ``minLength``/``maxLength`` both, each as
    ``"<path>: 'minLength'"`` (or maxLength): xgrammar enforces the pattern only."""
    found: list[str] = []

    def visit(node: Any, where: str) -> None:
        if isinstance(node, list):
            for index, item in enumerate(node):
                visit(item, f"{where}[{index}]")
            return
        if not isinstance(node, dict):
            return
        if "pattern" in node:
            found.extend(f"{where}: '{key}'" for key in ("minLength", "maxLength") if key in node)
        for key, value in node.items():
            if isinstance(value, (dict, list)):
                visit(value, f"{where}.{key}" if key != "properties" else where)

    visit(schema, path)
    return found
