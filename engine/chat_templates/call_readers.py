"""Template inference from example outputs: which content parser reads a call's text back.

For a stretch of output that holds one tool call or a list of them, every payload syntax the
template language reads is tried, and the one that gives back the expected calls is kept:

* ``json-object``: one JSON object per call, the name and the arguments under keys of its own
  (``name``/``arguments``, ``parameters``, nested one level: any keys);
* ``json-list``: one JSON list of such objects;
* ``python-list``: a Python-style list of calls (``[f(a=1), g()]``);
* ``name-json``: the name outside the payload (after a marker, with an index or a recipient
  around it), then the arguments as one JSON object;
* ``name-pairs``: the name outside, then the arguments as key and value pairs in a syntax of
  their own (`engine.chat_templates.argument_readers`: tags, ``key:value``, ``key=value``).

Without expected calls (an output and the tools the prompt offered) a reading is kept when
each call names a tool and its arguments are that tool's parameters.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import regex

from ..content import json_value_end, parse_content
from ..errors import ContentError
from ..tool_typing import type_tool_calls
from .argument_readers import Pairs, read_pairs

# How far (characters) before a call's name its payload may start.
_REACH = 80
# How far after the name the arguments of a name written outside the payload may start: room
# for markers and a call id between (``[ID]call00001[A]`` and longer).
_AFTER_NAME = 64

Call = tuple[str, dict]
# A bracket that may start the arguments after a name.
_BRACKET = regex.compile(r"[{\[]")
# Empty arguments right after a name: a pair of brackets with nothing but blanks inside.
_EMPTY = regex.compile(r"[^\S\n]*(?:\(\s*\)|\{\s*\}|\[\s*\])")


@dataclass(frozen=True)
class CallReading:
    """A stretch of output read as calls.

    Attributes:
        shape: one of the shapes above.
        start, end: the stretch (for ``name-*`` shapes it starts at the name).
        calls: the (name, arguments) read, in order.
        name_key, arguments_key: for the JSON shapes, the dotted keys of the name and the
            arguments in each call object.
        body_start: for ``name-*`` shapes, where the arguments start (after the text that
            follows the name).
        pairs: for ``name-pairs``, the pairs as written.
        encoded: the arguments are written as a JSON string holding the object.
        string_delimiters: for ``name-json``, the [open, close] pairs its strings are written
            between instead of ``"`` (a dialect of JSON the `json` parser reads).
        bare_keys: for ``name-json``, the object's keys are written without quotes.
    """

    shape: str
    start: int
    end: int
    calls: tuple[Call, ...]
    name_key: str = ""
    arguments_key: str = ""
    body_start: int = 0
    pairs: Pairs | None = None
    encoded: bool = False
    string_delimiters: tuple[tuple[str, str], ...] = ()
    bare_keys: bool = False


def _name_pattern(names: set[str]) -> regex.Pattern:
    alternatives = "|".join(regex.escape(name) for name in sorted(names, key=len, reverse=True))
    return regex.compile(rf"(?<![\w\-])(?:{alternatives})(?![\w\-])")


def _walk(value: Any, path: str) -> Any:
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


def _paths(value: Any, depth: int = 2, prefix: str = "") -> list[tuple[str, Any]]:
    found = []
    if isinstance(value, dict) and depth > 0:
        for key, item in value.items():
            if not isinstance(key, str) or not regex.fullmatch(r"[A-Za-z_][\w\-]*", key):
                continue
            path = f"{prefix}{key}"
            found.append((path, item))
            found += _paths(item, depth - 1, path + ".")
    return found


def _fits(name: Any, arguments: Any, want: Call | None, tools: dict | None) -> bool:
    """Whether (name, arguments) read is the call `want`, or without it a call of one of `tools`
    ({name: parameters' properties}) with that tool's parameters.

    With `want`, the arguments read may also be strings the tool's schema casts to the expected
    values (``hour="7"`` is 7 when `hour` is an integer), as the parser casts them."""
    if want is not None:
        if name != want[0]:
            return False
        return arguments == want[1] or _typed(name, arguments, tools) == want[1]
    if not isinstance(name, str) or not tools or name not in tools:
        return False
    return isinstance(arguments, dict) and set(arguments) <= set(tools[name])


def _typed(name: str, arguments: Any, tools: dict | None) -> Any:
    """`arguments` with each string cast by the tool's schema (a copy; as read when the tool or
    its schema is unknown)."""
    if not tools or not isinstance(tools.get(name), dict) or not isinstance(arguments, dict):
        return arguments
    call = {"function": {"name": name, "arguments": copy.deepcopy(arguments)}}
    type_tool_calls(call, {name: tools[name]}, typed=True)
    return call["function"]["arguments"]


def _decoded(value: Any) -> tuple[Any, bool]:
    if isinstance(value, str) and value.strip().startswith("{"):
        try:
            return json.loads(value), True
        except ValueError:
            pass
    return value, False


def _call_keys(item: Any, want: Call | None, tools: dict | None) -> tuple[str, str, bool] | None:
    """(name key, arguments key, arguments encoded as a string) of a call object, or None."""
    paths = _paths(item)
    for name_key, name in paths:
        if not isinstance(name, str):
            continue
        for arguments_key, arguments in paths:
            if arguments_key == name_key or arguments_key.startswith(name_key + "."):
                continue
            decoded, encoded = _decoded(arguments)
            if isinstance(decoded, dict) and _fits(name, decoded, want, tools):
                return name_key, arguments_key, encoded
    return None


def _json_at(text: str, at: int) -> tuple[Any, int] | None:
    try:
        return json.JSONDecoder().raw_decode(text, at)
    except (ValueError, RecursionError):
        return None


# A tag used as a string's mark in a JSON dialect (``<escape>``).
_TAG_MARK = r"<[^\s<>]{1,24}>"
# A mark that may open a string in a JSON dialect, after a key's colon, a list's bracket or a
# comma: a tag or a run of marks that starts no JSON value (``<|"|>``, ``«``, ``'``).
_STRING_OPEN = regex.compile(
    rf"[:\[,][ \t]*({_TAG_MARK}|[^\w\s\"{{}}\[\],:\-+.][^\w\s{{}}\[\],:]{{0,7}})"
)
# The tag, or the run of marks, before the comma or bracket that ends a value.
_STRING_CLOSE = regex.compile(rf"({_TAG_MARK}|[^\w\s{{}}\[\],:]{{1,8}})\s*[,}}\]]")
# How much text after a bracket a dialect's object may take (characters).
_DIALECT_REACH = 20_000


def _dialect_readings(text: str, at: int) -> Iterator[tuple[dict, int, dict]]:
    """The object at `at` read as a dialect of JSON, each way it reads: keys without quotes,
    strings between marks of the text's own (a mark after a colon; the same mark closes the
    string, or an end of the marks before the comma or bracket that follows it: ``»`` of
    ``')»``). Each is (the object, its end, the `json` parser's arguments)."""
    body = text[at : at + _DIALECT_REACH]
    dialects: list[dict] = [{"unquoted_keys": True}]
    for opened in list(_STRING_OPEN.finditer(body))[:3]:
        mark = opened.group(1)
        closed = _STRING_CLOSE.search(body, opened.end())
        run = closed.group(1) if closed is not None else mark
        pairs = [(mark, mark)] + [(mark, run[-size:]) for size in range(1, len(run) + 1)]
        for pair in dict.fromkeys(pairs):
            for bare in (True, False):
                args = {"string_delims": [list(pair)], **({"unquoted_keys": True} if bare else {})}
                if args not in dialects:
                    dialects.append(args)
    for args in dialects:
        end = json_value_end(body, args)
        if end is None:
            continue
        try:
            value = parse_content("json", body[:end], args)
        except ContentError:
            continue
        if isinstance(value, dict):
            yield value, at + end, args


def _python_list_at(text: str, at: int, limit: int) -> tuple[list, int] | None:
    """A Python-style list of calls starting at `at` (ending at one of the next ``]``)."""
    end = text.find("]", at)
    tries = 0
    while 0 <= end < limit and tries < 40:
        try:
            return parse_content("python-call-list", text[at : end + 1], {}), end + 1
        except ContentError:
            end, tries = text.find("]", end + 1), tries + 1
    return None


def _as_calls(items: list, want: list[Call] | None, tools: dict | None, keys=None):
    """(calls, name key, arguments key, encoded) of a list of call objects, or None."""
    calls, found = [], keys
    for index, item in enumerate(items):
        wanted = want[index] if want is not None else None
        if want is not None and index >= len(want):
            return None
        if found is None:
            found = _call_keys(item, wanted, tools)
            if found is None:
                return None
        name = _walk(item, found[0])
        arguments, _ = _decoded(_walk(item, found[1]))
        if not _fits(name, arguments, wanted, tools):
            return None
        calls.append((name, arguments))
    return (calls, *found) if calls and found else None


def _readings_at(
    text: str, start: int, name_at: regex.Match, want: list[Call] | None, tools: dict | None
) -> list[CallReading]:
    """Every reading of a stretch that holds the call whose name `name_at` found (and maybe the
    calls after it): a payload that holds the name and starts between `start` and it, or the
    arguments written after it."""
    wanted = want[0] if want is not None else None
    return [
        *_payloads_around(text, start, name_at, want, tools),
        *_json_after(text, name_at, wanted, tools),
        *_pairs_after(text, name_at, wanted, tools),
    ]


def _payloads_around(
    text: str, start: int, name_at: regex.Match, want: list[Call] | None, tools: dict | None
) -> list[CallReading]:
    """The JSON objects and lists, and the Python-style lists, that hold the name: each starts
    at a bracket between `start` (or `_REACH` before the name) and the name."""
    found: list[CallReading] = []
    first = want[:1] if want is not None else None
    low = max(start, name_at.start() - _REACH)
    openers = [m.start() for m in regex.finditer(r"[\[{]", text[low : name_at.start()])]
    for offset in reversed(openers):
        at = low + offset
        decoded = _json_at(text, at)
        if decoded is not None and decoded[1] > name_at.start():
            value, end = decoded
            shape, items, wanted = (
                ("json-object", [value], first)
                if isinstance(value, dict)
                else ("json-list", value, want)
            )
            read = _as_calls(items, wanted, tools) if isinstance(items, list) else None
            if read:
                found.append(
                    CallReading(shape, at, end, tuple(read[0]), read[1], read[2], encoded=read[3])
                )
        if text[at] == "[":
            listed = _python_list_at(text, at, len(text))
            if listed is not None:
                read = _as_calls(listed[0], want, tools, ("name", "arguments", False))
                if read:
                    found.append(CallReading("python-list", at, listed[1], tuple(read[0])))
    return found


def _json_after(
    text: str, name_at: regex.Match, wanted: Call | None, tools: dict | None
) -> list[CallReading]:
    """The arguments as a JSON object (or a dialect of JSON) after the name: at the first
    bracket that starts a value (a marker such as ``[ARGS]`` may stand between)."""
    name, after = name_at.group(), name_at.end()
    for brace in _BRACKET.finditer(text, after, after + _AFTER_NAME):
        decoded = _json_at(text, brace.start())
        if decoded is not None:
            readings = [(*decoded, {})]
        elif text[brace.start()] == "{":
            # Not JSON: maybe a dialect of it (bare keys, strings between marks of its own).
            readings = list(_dialect_readings(text, brace.start()))
            if not readings:
                continue
        else:
            continue
        for value, end, dialect in readings:
            if isinstance(value, dict) and _fits(name, value, wanted, tools):
                delimiters = tuple(tuple(pair) for pair in dialect.get("string_delims", []))
                reading = CallReading(
                    "name-json",
                    name_at.start(),
                    end,
                    ((name, value),),
                    body_start=brace.start(),
                    string_delimiters=delimiters,
                    bare_keys=bool(dialect.get("unquoted_keys")),
                )
                return [reading]
        return []
    return []


def _pairs_after(
    text: str, name_at: regex.Match, wanted: Call | None, tools: dict | None
) -> list[CallReading]:
    """The arguments as key and value pairs after the name (`read_pairs`), or none at all."""
    name, after = name_at.group(), name_at.end()
    if wanted is not None:
        pairs = read_pairs(text, after, wanted[1]) if wanted[1] else None
    else:
        pairs = read_pairs(text, after, None, (tools or {}).get(name))
    if pairs is not None:
        read_arguments = {pair.key: pair.value for pair in pairs.pairs}
        if wanted is None and not _fits(name, read_arguments, None, tools):
            return []
        values = wanted[1] if wanted is not None else read_arguments
        return [
            CallReading(
                "name-pairs",
                name_at.start(),
                pairs.end,
                ((name, values),),
                body_start=after,
                pairs=pairs,
            )
        ]
    if (wanted is not None and not wanted[1]) or (
        wanted is None and name in (tools or {}) and _EMPTY.match(text, after)
    ):
        return [CallReading("name-pairs", name_at.start(), after, ((name, {}),), body_start=after)]
    return []


def read_calls_at(
    text: str, want: list[Call] | None, names: set[str], tools: dict | None = None
) -> list[CallReading] | None:
    """The readings that cover the calls of `text`, in order.

    With `want` (the expected calls, in order), each reading must give the next expected calls
    exactly, or once `tools` ({name: parameters' properties}) cast its strings; None when some
    call cannot be read. Without it, every tool name of `names` that a reader reads as a call
    of one of `tools` is one; [] when none is.
    Readings that take the most calls at once are preferred (a list over its first object),
    then the one whose payload starts first.
    """
    if not names:
        return [] if not want else None
    pattern = _name_pattern(names)
    readings: list[CallReading] = []
    at, index = 0, 0
    while True:
        if want is not None and index >= len(want):
            return readings
        name_at = pattern.search(text, at)
        while name_at is not None and want is not None and name_at.group() != want[index][0]:
            name_at = pattern.search(text, name_at.end())
        if name_at is None:
            return readings if want is None else None
        choices = _readings_at(text, at, name_at, want[index:] if want is not None else None, tools)
        if not choices:
            at = name_at.end()
            continue
        best = max(choices, key=lambda r: (len(r.calls), r.shape.startswith("json"), -r.start))
        readings.append(best)
        index += len(best.calls)
        at = best.end
