"""Tool-argument typing: tool-call arguments cast by the tool's JSON schema
(docs/template-language.md, "Tool-argument typing").

Formats such as Qwen3-Coder or GLM write every argument as text; the tool's
schema says which of them are numbers, booleans, objects or arrays. Only strings
are cast, as in transformers: a value a content parser already typed stays what it
is, and a `json` or `python-call-list` body, whose syntax tells strings from other
values, keeps what it gave for a parameter whose schema admits `string`.

`strings_as_written` is the one other rule, asked for explicitly: a tagged value
(xml-inline, kv-lines) that a `value_parser` read as JSON keeps the text the model
wrote when the schema says `string` (`RawArguments`).
"""

from __future__ import annotations

import inspect
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


def tool_parameter_schemas(tools: list[dict | Callable] | None) -> dict[str, dict]:
    """Map each tool name to its parameter schemas (`{"param": {"type": ...}}`).

    Args:
        tools: as for `apply_chat_template(tools=...)`: JSON schema dicts (`{"type": "function",
            "function": {...}}` or the bare function dict), or Python functions with type
            hints and a Google-style docstring (converted by transformers' `get_json_schema`).

    Raises:
        ValueError: a tool is neither a dict nor a function, or a function lacks the
            docstring/type hints `get_json_schema` needs.
    """
    schemas: dict[str, dict] = {}
    for tool in tools or []:
        if inspect.isfunction(tool) or inspect.ismethod(tool):
            from transformers.utils import get_json_schema

            tool = get_json_schema(tool)
        if not isinstance(tool, dict):
            raise ValueError(
                f"tools: each tool must be a JSON schema dict or a function, got {type(tool).__name__}"
            )
        function = tool.get("function", tool)
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            continue
        parameters = function.get("parameters")
        properties = parameters.get("properties") if isinstance(parameters, dict) else None
        schemas[function["name"]] = properties if isinstance(properties, dict) else {}
    return schemas


def schema_types(schema: Any) -> list[str]:
    """The JSON types a parameter schema admits, in the order to try them.

    Reads `type` (a name or a list), `anyOf`/`oneOf` alternatives, and `nullable`.
    """
    if not isinstance(schema, dict):
        return []
    declared = schema.get("type")
    types = (
        [declared]
        if isinstance(declared, str)
        else [t for t in declared or [] if isinstance(t, str)]
        if isinstance(declared, list)
        else []
    )
    for union in ("anyOf", "oneOf"):
        for alternative in schema.get(union) or []:
            types += schema_types(alternative)
    if schema.get("nullable") and "null" not in types:
        types.append("null")
    return types


def _cast_one(raw: str, type_name: str) -> tuple[bool, Any]:
    """Try to read `raw` as `type_name`; return (success, value)."""
    text = raw.strip()
    if type_name == "integer":
        try:
            return True, int(text)
        except ValueError:
            try:
                number = float(text)
            except ValueError:
                return False, None
            return (True, int(number)) if number.is_integer() else (False, None)
    if type_name == "number":
        try:
            number = float(text)
        except ValueError:
            return False, None
        if math.isnan(number) or math.isinf(number):
            return False, None
        return True, int(number) if number.is_integer() and "." not in raw else number
    if type_name == "boolean":
        lowered = text.lower()
        if lowered in ("true", "1", "false", "0"):
            return True, lowered in ("true", "1")
        return False, None
    if type_name == "null":
        return (True, None) if text in ("null", "None") else (False, None)
    if type_name in ("object", "array"):
        try:
            decoded = json.loads(raw)
        except (ValueError, RecursionError):
            return False, None
        wanted = dict if type_name == "object" else list
        return (True, decoded) if isinstance(decoded, wanted) else (False, None)
    return False, None


def cast_argument(raw: str, types: list[str]) -> Any:
    """Cast one string argument to the first of `types` it reads as; keep the string when none does."""
    for type_name in types:
        ok, value = _cast_one(raw, type_name)
        if ok:
            return value
    return raw


@dataclass(frozen=True)
class RawArguments:
    """Arguments a content parser read with a `value_parser`, and the text each value was read from.

    Attributes:
        parsed: the parsed object (the very dict a transform puts into the call's arguments).
        texts: key -> the value's text as the tag (or line) held it; a list of texts for a key
            that `merge_duplicates` collected.
    """

    parsed: dict
    texts: dict[str, Any]


def type_tool_calls(
    value: Any,
    parameter_schemas: dict[str, dict],
    raw: RawArguments | None = None,
    *,
    typed: bool = False,
) -> Any:
    """Type the arguments of the tool call(s) in a closed region's value by their schemas, in place.

    `value` is a tool call `{"function": {"name", "arguments": {...}}}` or a list of them;
    anything else is returned unchanged. A string argument is cast to the first type its
    schema admits that it reads as (a failed cast keeps the string); any other value is
    final. A list argument (repeated keys collected by `merge_duplicates`) has each string
    element cast, unless the schema asks for an array.

    Args:
        typed: the content parser's syntax already tells strings from other values (`json`,
            `python-call-list`): a parameter whose schema admits `string` keeps what it gave.
        raw: with `strings_as_written`, the texts of arguments a value parser read (the call's
            arguments are `raw.parsed`): a parameter whose schema admits `string` keeps the
            text as written unless the parsed value is of another admitted type (`5123123`
            stays ``"5123123"``, `"foo"` stays ``'"foo"'``).
    """
    if isinstance(value, list):
        for item in value:
            type_tool_calls(item, parameter_schemas, raw, typed=typed)
        return value
    call = value.get("function") if isinstance(value, dict) else None
    call = call if isinstance(call, dict) else {}
    arguments = call.get("arguments")
    name = call.get("name")
    properties = parameter_schemas.get(name) if isinstance(name, str) else None
    if not properties or not isinstance(arguments, dict):
        return value
    texts = raw.texts if raw is not None and raw.parsed is arguments else {}
    for key in list(arguments):
        types = schema_types(properties.get(key))
        if not types or (typed and "string" in types):
            continue
        argument = arguments[key]
        if key in texts and "string" in types:
            argument = _as_written(argument, texts[key], types)
        arguments[key] = _typed_value(argument, types)
    return value


def _json_types(value: Any) -> tuple[str, ...]:
    """The JSON type names a parsed value has (an integer is also a number)."""
    if isinstance(value, bool):
        return ("boolean",)
    if isinstance(value, int):
        return ("integer", "number")
    if isinstance(value, float):
        return ("number",)
    if value is None:
        return ("null",)
    if isinstance(value, dict):
        return ("object",)
    if isinstance(value, list):
        return ("array",)
    return ("string",)


def _as_written(parsed: Any, text: Any, types: list[str]) -> Any:
    """For a parameter that admits `string`: the text as written, unless the parsed value is of
    another admitted type (element by element for merged duplicates, unless an array is wanted)."""
    if isinstance(parsed, list) and isinstance(text, list) and "array" not in types:
        return [_as_written(item, written, types) for item, written in zip(parsed, text)]
    if isinstance(parsed, str) or not any(kind in types for kind in _json_types(parsed)):
        return text
    return parsed


def _typed_value(argument: Any, types: list[str]) -> Any:
    """Cast a string argument, or each string of a list argument (unless an array is wanted)."""
    if isinstance(argument, str):
        return cast_argument(argument, types)
    if isinstance(argument, list) and "array" not in types:
        return [cast_argument(item, types) if isinstance(item, str) else item for item in argument]
    return argument
