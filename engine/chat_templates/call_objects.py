"""Template inference from example outputs: JSON call objects whose arguments key varies.

Some models write a call as ``{"name": ..., "arguments": {...}}`` in one output and as
``{"name": ..., "parameters": {...}}`` in another. A transform reads one path, so no
``{content.KEY}`` placeholder reads both. Here the object's head (its opening brace, the name
key and the name, the arguments key) becomes part of the call's open pattern, with the keys the
examples write as alternatives and the name as a group; the region's body is the arguments
object alone, and the close takes the object's own closing brace. That reads any of the keys
seen, in one object per call or in a JSON list of them (then each object is its own region).

It applies only where every call object of the examples writes the name first and the
arguments second, with nothing else inside and the arguments as an object (not a JSON string):
the pattern has no place for anything else.
"""

from __future__ import annotations

import json

from ..pattern_shapes import pattern_literal
from .align import Alignment, Span
from .argument_readers import loose

# Where a call object that is an item of a JSON list starts: after the list's bracket or the
# comma after the object before it.
LIST_ITEM_LEAD = r"(?<=[\[,])\s*"
# A tool's name inside the head's quotes: an identifier, maybe with dots or dashes.
_NAME = r"[A-Za-z_][\w\-]*(?:\.[\w\-]+)*"
# A JSON key that may hold the arguments: an identifier.
_KEY = r"[A-Za-z_][\w\-]*"


def varying_arguments_keys(
    spans: list[tuple[Alignment, Span]], least: int = 2
) -> tuple[str, list[str]] | None:
    """(the name key, the arguments keys in the order first seen) when the examples' JSON call
    objects write their arguments under `least` keys or more, each object exactly
    ``{NAME_KEY: name, ARGUMENTS_KEY: {...}}`` in that order; else None.

    Args:
        spans: (alignment, calls span) of every call the examples write.
        least: how many different arguments keys there must be (1: any object of that form).
    """
    name_keys, argument_keys = set(), []
    for alignment, span in spans:
        reading = span.reading
        if reading is None or reading.shape not in ("json-object", "json-list"):
            return None
        if reading.encoded or "." in reading.name_key or "." in reading.arguments_key:
            return None
        try:
            value = json.loads(alignment.text[reading.start : reading.end])
        except ValueError:
            return None
        items = value if isinstance(value, list) else [value]
        for item in items:
            if not isinstance(item, dict) or list(item) != [
                reading.name_key,
                reading.arguments_key,
            ]:
                return None
            if not isinstance(item[reading.arguments_key], dict):
                return None
        name_keys.add(reading.name_key)
        if reading.arguments_key not in argument_keys:
            argument_keys.append(reading.arguments_key)
    if len(name_keys) != 1 or len(argument_keys) < least:
        return None
    return name_keys.pop(), argument_keys


# A member of a JSON object whose value is a string or a bare scalar (``"type": "function",``).
_SCALAR_MEMBER = r'"(?:[^"\\\n]|\\.)*"\s*:\s*(?:"(?:[^"\\\n]|\\.)*"|[\w.+\-]+)\s*,\s*'


def object_start(name_key: str) -> str:
    """A pattern of where a call object starts: its brace and its name key, after up to eight
    members with scalar values (``{"type": "function", "function": {...``, ``{"id": 3, "name": ...``)."""
    return rf"\{{\s*(?:{_SCALAR_MEMBER}){{0,8}}\"{pattern_literal(name_key)}\"\s*:"


def object_head(name_key: str, argument_keys: list[str], any_key: bool = False) -> str:
    """A pattern of a call object's head up to its arguments: the brace, the name key and the
    name (group ``name``), then any of `argument_keys` (with `any_key`, any key: an output may
    write one no example shows) and its colon."""
    keys = "|".join(pattern_literal(key) for key in argument_keys)
    if any_key:
        keys = _KEY
    return object_start(name_key) + rf"\s*\"(?P<name>{_NAME})\"\s*,\s*\"(?:{keys})\"\s*:"


def object_transform() -> dict:
    """The transform of a region whose body is the arguments and whose open holds the name."""
    return {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}


def list_item_close(name_key: str) -> str:
    """The close of a call object that is an item of a JSON list: its brace, where the next
    object or the list's end follows (a comma between objects taken)."""
    # The list's end: a bracket not followed by more of an enclosing value (a nested list of
    # objects inside the arguments ends in ``]}`` or ``],``).
    ahead = rf"(?=\s*(?:{object_start(name_key)}|\](?!\s*[,\]}}])))"
    return r"(?<=\})\s*\}(?:\s*,)?" + ahead


def list_item_field(name_key: str, argument_keys: list[str]) -> dict:
    """The field for call objects that are items of a JSON list: one region per object, opening
    after the list's bracket or the comma before it, closing at the object's brace when the next
    object or the list's end follows (a comma between objects taken). The list's brackets are
    left to the content's closes."""
    return {
        "open_pattern": LIST_ITEM_LEAD + object_head(name_key, argument_keys),
        "close_pattern": list_item_close(name_key),
        "repeats": True,
        "content": "json",
        "transform": object_transform(),
    }


def closing_brace(close: dict) -> dict:
    """`close` (a call's close after its object) preceded by the object's own closing brace,
    which follows the arguments' brace (so a call whose arguments alone end there, in another
    syntax, is not closed one brace early)."""
    if "close_pattern" in close:
        return {"close_pattern": r"(?<=\})\s*\}\s*" + close["close_pattern"]}
    return {"close_pattern": r"(?<=\})\s*\}\s*" + loose(close["close"])}
