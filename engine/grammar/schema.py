"""JSON Schema as grammar: the values a tool's parameter schema allows, in the argument format
a template reads.

`SchemaWriter` turns a schema into `ir` nodes in one of three dialects (`Dialect`):

* ``json``: standard JSON;
* ``bare-keys``: JSON with keys written without quotes and strings between custom
  delimiters (the ``unquoted_keys`` / ``string_delims`` arguments of the `json` parser);
* ``python``: Python literals (``True``, ``None``, ``"..."``), as `python-call-list` reads them.

What is enforced: ``type`` (and lists of types), ``enum``, ``const``, ``properties`` with
``required`` (declared order; objects are closed: no key outside ``properties``),
``items``, ``minItems``/``maxItems``, ``minLength``/``maxLength`` (a string with a length
bound is written without escapes, and in GBNF without the first character of any delimiter it
must avoid), ``minimum``/``maximum`` and their exclusive forms (whole-number bounds for
numbers, `bounds`), ``anyOf``/``oneOf``, ``allOf`` of objects, ``nullable``, local ``$ref``;
``pattern`` in the Lark form only (its terminal is intersected with the pattern,
`ir.Token.also`; a string with a pattern is written without escapes). Anything else
(``format``, ``multipleOf``...) is listed in `SchemaWriter.notes`, never silently dropped;
a note that holds for some forms only says which. Strings never contain the dialect's
`excludes` (the delimiters that would end the region early). Integers have at most 15
digits and numbers an exponent of at most two digits, so every value stays exact.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from . import bounds
from .ir import Alt, CharSet, Grammar, Lit, Node, Ref, Repeat, Text, Token, alt, optional, seq
from .patterns import to_regex

_CONTROLS = (0, 0x1F)
_HEX = CharSet(((48, 57), (65, 70), (97, 102)))
# A \u escape of a code point outside the surrogates (a lone surrogate is refused by some readers).
_NON_SURROGATE_HEX4 = alt(
    seq(CharSet(((48, 57), (65, 67), (69, 70), (97, 99), (101, 102))), _HEX, _HEX, _HEX),
    seq(CharSet(((68, 68), (100, 100))), CharSet(((48, 55),)), _HEX, _HEX),
)
DIGITS = CharSet(((48, 57),))
INTEGER = seq(
    optional(Lit("-")),
    alt(Lit("0"), seq(CharSet(((49, 57),)), Repeat(DIGITS, 0, 14))),
)
NUMBER = seq(
    INTEGER,
    optional(seq(Lit("."), Repeat(DIGITS, 1, 15))),
    optional(
        seq(
            CharSet(((69, 69), (101, 101))),
            optional(CharSet(((43, 43), (45, 45)))),
            Repeat(DIGITS, 1, 2),
        )
    ),
)
# Characters that make a bare key's extent unclear to the `json` parser's `unquoted_keys`.
_AMBIGUOUS_KEY_CHARACTERS = set('{}[],"\n\r:')
# Keywords that restrict values beyond what the grammar writes: listed, not enforced.
_NOT_ENFORCED = (
    "format",
    "multipleOf",
    "uniqueItems",
    "contains",
    "prefixItems",
    "not",
    "if",
    "minProperties",
    "maxProperties",
    "patternProperties",
    "dependentRequired",
    "dependentSchemas",
)


def bounded_number(kind: str, schema: dict, path: str, notes: list[str]) -> Node:
    """An ``integer`` or ``number`` value within `schema`'s bounds (`bounds.integer`,
    `bounds.number`); bounds the digits cannot express are noted in `notes` (at `path`) and the
    value is then any integer or number."""
    try:
        node = bounds.integer(schema) if kind == "integer" else bounds.number(schema)
    except ValueError as error:
        notes.append(f"{path}: the bounds are not enforced ({error})")
        node = None
    return node if node is not None else INTEGER if kind == "integer" else NUMBER


@dataclass(frozen=True)
class Dialect:
    """How values are written.

    Attributes:
        name: ``"json"``, ``"bare-keys"`` or ``"python"``.
        excludes: literals no string may contain.
        string_delims: for ``bare-keys``, the ``(open, close)`` strings are written between.
    """

    name: str = "json"
    excludes: tuple[str, ...] = ()
    string_delims: tuple[str, str] | None = None


class SchemaWriter:
    """Writes grammar nodes for JSON Schemas into `grammar`, in `dialect`.

    Attributes:
        notes: what a schema asks that the grammar does not enforce, each naming where.
    """

    def __init__(self, grammar: Grammar, dialect: Dialect, stem: str = "value"):
        self.grammar = grammar
        self.dialect = dialect
        self.stem = stem
        self.notes: list[str] = []
        self._refs: dict[str, Ref] = {}
        self._root: dict = {}
        self._any: Ref | None = None

    # -- entry point ------------------------------------------------------

    def value(self, schema: Any, path: str, root: dict | None = None) -> Node:
        """The values `schema` allows (`path` names it in notes; `root` resolves ``$ref``).

        Raises:
            budget.GrammarTooLarge: the grammar's budget is spent (each value spends a node).
        """
        if self.grammar.budget is not None:
            self.grammar.budget.spend()
        if root is not None:
            self._root = root
        if schema is True or schema == {} or schema is None:
            return self.any_value()
        if schema is False:
            self.notes.append(f"{path}: the schema allows no value; any value is written")
            return self.any_value()
        if not isinstance(schema, dict):
            self.notes.append(f"{path}: not a schema object; any value is written")
            return self.any_value()
        for keyword in _NOT_ENFORCED:
            if keyword in schema:
                self.notes.append(f"{path}: '{keyword}' is not enforced")
        if "$ref" in schema:
            return self.reference(schema["$ref"], path)
        if "const" in schema:
            return self.literal_choice([schema["const"]], path)
        if "enum" in schema and isinstance(schema["enum"], list):
            return self.literal_choice(schema["enum"], path)
        if "allOf" in schema:
            return self.value(self.merged(schema, path), path)
        for union in ("anyOf", "oneOf"):
            if isinstance(schema.get(union), list) and schema[union]:
                if union == "oneOf":
                    self.notes.append(
                        f"{path}: 'oneOf' is written as 'anyOf' (exclusivity not enforced)"
                    )
                options = [
                    self.value(option, f"{path}.{union}[{i}]")
                    for i, option in enumerate(schema[union])
                ]
                if schema.get("nullable"):
                    options.append(self.null())
                return alt(*options)
        types = schema.get("type")
        types = [types] if isinstance(types, str) else list(types or [])
        if not types:
            types = self.implied_types(schema)
        if schema.get("nullable") and "null" not in types:
            types.append("null")
        if not types:
            return self.any_value()
        return alt(*(self.typed(kind, schema, path) for kind in types))

    @staticmethod
    def implied_types(schema: dict) -> list[str]:
        if "properties" in schema or "additionalProperties" in schema:
            return ["object"]
        if "items" in schema:
            return ["array"]
        return []

    def typed(self, kind: str, schema: dict, path: str) -> Node:
        if kind == "string":
            return self.bounded_string(schema, path)
        if kind in ("integer", "number"):
            return bounded_number(kind, schema, path, self.notes)
        if kind == "boolean":
            return (
                Alt((Lit("True"), Lit("False")))
                if self.python
                else Alt((Lit("true"), Lit("false")))
            )
        if kind == "null":
            return self.null()
        if kind == "object":
            return self.object(schema, path)
        if kind == "array":
            return self.array(schema, path)
        self.notes.append(f"{path}: unknown type {kind!r}; any value is written")
        return self.any_value()

    @property
    def python(self) -> bool:
        return self.dialect.name == "python"

    # -- scalars ----------------------------------------------------------

    def null(self) -> Node:
        return Lit("None" if self.python else "null")

    def string(self) -> Node:
        """A string in the dialect, never containing `excludes`."""
        excludes = tuple(self.dialect.excludes)
        if self.dialect.string_delims is not None:
            open_, close = self.dialect.string_delims
            return Token(seq(Lit(open_), Text(tuple(sorted({*excludes, close}))), Lit(close)))
        plain = CharSet((_CONTROLS, (34, 34), (92, 92)), negated=True)
        escapes = '"\\/bfnrt' + ("'" if self.python else "")
        escape = seq(
            Lit("\\"),
            alt(
                CharSet(tuple((ord(c), ord(c)) for c in sorted(escapes))),
                seq(Lit("u"), _NON_SURROGATE_HEX4),
            ),
        )
        chunk = Text(excludes, plain)
        return Token(seq(Lit('"'), chunk, Repeat(seq(escape, chunk)), Lit('"')))

    def bounded_string(self, schema: dict, path: str) -> Node:
        """A string in the dialect within `schema`'s ``minLength``/``maxLength`` and matching
        its ``pattern`` (Lark only); written without escapes when either is given, so that its
        characters are the string's own."""
        low, high, also = bounds.string_bounds(schema, path, self.notes)
        if not low and high is None and also is None:
            return self.string()
        excludes = tuple(self.dialect.excludes)
        if self.dialect.string_delims is not None:
            open_, close = self.dialect.string_delims
            text = Text(tuple(sorted({*excludes, close})), None, low, high)
            return Token(seq(Lit(open_), text, Lit(close)), _quoted(also, open_))
        plain = CharSet((_CONTROLS, (34, 34), (92, 92)), negated=True)
        text = Text(excludes, plain, low, high)
        return Token(seq(Lit('"'), text, Lit('"')), _quoted(also, '"'))

    def literal(self, value: Any, path: str) -> Node | None:
        """One fixed value written in the dialect, or None when it cannot be (noted)."""
        if isinstance(value, str):
            if self.dialect.string_delims is not None:
                open_, close = self.dialect.string_delims
                if close in value:
                    self.notes.append(
                        f"{path}: the value {value!r} holds the string delimiter; left out"
                    )
                    return None
                text = open_ + value + close
            else:
                text = json.dumps(value, ensure_ascii=False)
            if any(excluded in text for excluded in self.dialect.excludes):
                self.notes.append(f"{path}: the value {value!r} holds a delimiter; left out")
                return None
            return Lit(text)
        if isinstance(value, bool) or value is None or isinstance(value, (int, float)):
            if self.python and (isinstance(value, bool) or value is None):
                return Lit({True: "True", False: "False", None: "None"}[value])
            return Lit(json.dumps(value))
        if isinstance(value, list):
            items = [self.literal(item, f"{path}[{i}]") for i, item in enumerate(value)]
            if any(item is None for item in items):
                return None
            return seq(Lit("["), *_joined(items, Lit(", ")), Lit("]"))
        if isinstance(value, dict):
            pairs = []
            for key, item in value.items():
                written = self.literal(item, f"{path}.{key}")
                if written is None:
                    return None
                pairs.append(seq(self.key(key), Lit(": "), written))
            return seq(Lit("{"), *_joined(pairs, Lit(", ")), Lit("}"))
        self.notes.append(f"{path}: the value {value!r} is not JSON data; left out")
        return None

    def literal_choice(self, values: list, path: str) -> Node:
        options = [self.literal(value, path) for value in values]
        options = [option for option in options if option is not None]
        if not options:
            self.notes.append(f"{path}: no value of the enum can be written; any value is written")
            return self.any_value()
        return alt(*options)

    def key(self, name: str) -> Node:
        """An object key: bare in ``bare-keys`` when the parser reads it back unchanged."""
        if self.dialect.name == "bare-keys" and _bare_key_reads_back(name, self.dialect):
            return Lit(name)
        return Lit(json.dumps(name, ensure_ascii=False))

    # -- containers -------------------------------------------------------

    def object(self, schema: dict, path: str) -> Node:
        properties = schema.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        required = [name for name in schema.get("required", []) or [] if name in properties]
        additional = schema.get("additionalProperties")
        if isinstance(schema.get("required"), list):
            missing = [name for name in schema["required"] if name not in properties]
            if missing:
                self.notes.append(
                    f"{path}: required key(s) {missing} have no schema in 'properties'; not written"
                )
        if not properties:
            if (
                additional is True
                or isinstance(additional, dict)
                or additional is None
                and "properties" not in schema
            ):
                value_schema = additional if isinstance(additional, dict) else {}
                return self.map(value_schema, path)
            return Lit("{}")
        if additional not in (None, False):
            self.notes.append(f"{path}: keys outside 'properties' are not written")
        entries = [
            (
                name,
                name in required,
                seq(
                    self.key(name), Lit(":"), optional(Lit(" ")), self.value(sub, f"{path}.{name}")
                ),
            )
            for name, sub in properties.items()
        ]
        name = self.grammar.fresh(f"{self.stem}-object")
        self.grammar.add(name, Lit(""))  # reserve the name (filled below)
        body = seq(Lit("{"), self.members(entries, name), Lit("}"))
        return self.grammar.add(name, body)

    def members(self, entries: list[tuple[str, bool, Node]], stem: str) -> Node:
        """The entries in declared order: required ones always, optional ones maybe, commas between."""
        separator = seq(Lit(","), optional(Lit(" ")))
        cache: dict[tuple[int, bool], Node] = {}

        def rest(index: int, first: bool) -> Node:
            if index == len(entries):
                return Lit("")
            if (index, first) in cache:
                return cache[(index, first)]
            _, required, entry = entries[index]
            lead = entry if first else seq(separator, entry)
            taken = seq(lead, rest(index + 1, False))
            node = taken if required else alt(taken, rest(index + 1, first))
            if not required and index + 1 < len(entries):
                node = self.grammar.add(
                    self.grammar.fresh(f"{stem}-{index}{'f' if first else ''}"), node
                )
            cache[(index, first)] = node
            return node

        return rest(0, True)

    def map(self, value_schema: Any, path: str) -> Node:
        entry = seq(
            self.string_key(), Lit(":"), optional(Lit(" ")), self.value(value_schema, f"{path}.*")
        )
        separator = seq(Lit(","), optional(Lit(" ")))
        return seq(Lit("{"), optional(seq(entry, Repeat(seq(separator, entry)))), Lit("}"))

    def string_key(self) -> Node:
        """A key of a free-form object: a quoted string (read back by every dialect)."""
        return self._json_string() if self.dialect.name == "bare-keys" else self.string()

    def _json_string(self) -> Node:
        saved = self.dialect
        self.dialect = Dialect("json", saved.excludes)
        try:
            return self.string()
        finally:
            self.dialect = saved

    def array(self, schema: dict, path: str) -> Node:
        items = schema.get("items", {})
        if isinstance(items, list):
            self.notes.append(f"{path}: tuple 'items' are written as any of them")
            item = (
                alt(*(self.value(sub, f"{path}.items[{i}]") for i, sub in enumerate(items)))
                if items
                else self.any_value()
            )
        else:
            item = self.value(items, f"{path}.items")
        low = schema.get("minItems", 0) if isinstance(schema.get("minItems"), int) else 0
        high = schema.get("maxItems") if isinstance(schema.get("maxItems"), int) else None
        if high is not None and high < low:
            self.notes.append(f"{path}: maxItems < minItems; the list is written empty")
            return Lit("[]")
        separator = seq(Lit(","), optional(Lit(" ")))
        if high == 0:
            return Lit("[]")
        more = Repeat(seq(separator, item), max(low - 1, 0), None if high is None else high - 1)
        body = item if high == 1 else seq(item, more)
        return seq(Lit("["), body if low > 0 else optional(body), Lit("]"))

    def merged(self, schema: dict, path: str) -> dict:
        """`allOf` of object schemas merged into one; other parts noted and left out."""
        merged: dict = {k: v for k, v in schema.items() if k != "allOf"}
        for i, part in enumerate(schema.get("allOf") or []):
            if isinstance(part, dict) and "$ref" in part:
                part = self.resolve(part["$ref"]) or {}
            if not isinstance(part, dict):
                continue
            if part.get("type", "object") != "object" and "properties" not in part:
                self.notes.append(f"{path}.allOf[{i}]: only object parts are merged; left out")
                continue
            merged.setdefault("type", "object")
            merged["properties"] = {**merged.get("properties", {}), **part.get("properties", {})}
            merged["required"] = list(
                dict.fromkeys([*merged.get("required", []), *part.get("required", [])])
            )
        return merged

    def resolve(self, ref: Any) -> Any:
        if not isinstance(ref, str) or not ref.startswith("#"):
            return None
        target: Any = self._root
        for part in ref[1:].strip("/").split("/") if ref != "#" else []:
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(target, dict) or part not in target:
                return None
            target = target[part]
        return target

    def reference(self, ref: Any, path: str) -> Node:
        if ref in self._refs:
            return self._refs[ref]
        target = self.resolve(ref)
        if target is None:
            self.notes.append(
                f"{path}: the reference {ref!r} cannot be resolved; any value is written"
            )
            return self.any_value()
        name = self.grammar.fresh(f"{self.stem}-ref")
        self._refs[ref] = self.grammar.add(name, Lit(""))
        self.grammar.add(name, self.value(target, path))
        return self._refs[ref]

    def any_value(self) -> Node:
        """Any JSON value (objects with string keys, lists, scalars), written in the dialect."""
        if self._any is not None:
            return self._any
        name = self.grammar.fresh(f"{self.stem}-any")
        self._any = self.grammar.add(name, Lit(""))
        separator = seq(Lit(","), optional(Lit(" ")))
        entry = seq(self.string_key(), Lit(":"), optional(Lit(" ")), self._any)
        body = alt(
            self.string(),
            NUMBER,
            self.typed("boolean", {}, ""),
            self.null(),
            seq(Lit("["), optional(seq(self._any, Repeat(seq(separator, self._any)))), Lit("]")),
            seq(Lit("{"), optional(seq(entry, Repeat(seq(separator, entry)))), Lit("}")),
        )
        self.grammar.add(name, body)
        return self._any


def _quoted(pattern: str | None, open_: str) -> str | None:
    """`pattern` (a regex of a string's characters) after the string's open delimiter (the
    `ir.Token.also` of a string token: its text without the closing delimiter)."""
    if pattern is None:
        return None
    return to_regex(Lit(open_)) + f"(?:{pattern})"


def _joined(items: list, separator: Node) -> list:
    out: list = []
    for index, item in enumerate(items):
        if index:
            out.append(separator)
        out.append(item)
    return out


def _bare_key_reads_back(name: str, dialect: Dialect) -> bool:
    """Whether `name` written without quotes is read back as `name` by the `json` parser's
    `unquoted_keys` (no character that blurs where the key ends, no surrounding blanks)."""
    if not name or name != name.strip() or name[0] in "'\"":
        return False
    if any(char in _AMBIGUOUS_KEY_CHARACTERS for char in name):
        return False
    if dialect.string_delims and any(delim in name for delim in dialect.string_delims):
        return False
    return not any(excluded in name for excluded in dialect.excludes)
