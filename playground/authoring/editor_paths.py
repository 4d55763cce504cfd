"""The template key at a place in the template editor's text (a click in the editor).

`string_at(text, offset)` scans the editor's JSON text, tracking the path of keys
down to each value, and returns the dotted key path (``fields.tool_calls.close_pattern``,
list items by index) and the decoded string under `offset`: a string value, or the value
of the key under `offset` when that is a string. Text that is not valid JSON up to that
place gives None (the author may be typing).
"""

from __future__ import annotations

import json
import re

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_SCALAR = re.compile(r"-?[0-9][0-9.eE+-]*|true|false|null")


def string_at(text: str, offset: int) -> tuple[str, str] | None:
    """(dotted key path, decoded string) at `offset` (a character index of `text`; see the
    module docstring), or None when there is no string there or the JSON breaks before it."""
    stack: list[
        list
    ] = []  # per open container: ["object", key, expecting a key] or ["array", index]
    key_hit = False  # the key just read is the one under `offset`: its value is the answer
    at = 0
    while at < len(text):
        char = text[at]
        if char in " \t\r\n":
            at += 1
            continue
        if char in "{[":
            if key_hit:
                return None  # the key under `offset` holds an object or a list
            stack.append(["object", None, True] if char == "{" else ["array", 0])
            at += 1
        elif char in "}]":
            if not stack or stack[-1][0] != ("object" if char == "}" else "array"):
                return None
            stack.pop()
            at += 1
        elif char == ":":
            if not stack or stack[-1][0] != "object" or stack[-1][1] is None:
                return None
            at += 1
        elif char == ",":
            if not stack:
                return None
            if stack[-1][0] == "object":
                stack[-1][2] = True
            else:
                stack[-1][1] += 1
            at += 1
        elif char == '"':
            found = _STRING.match(text, at)
            if found is None:
                return None
            try:
                value = json.loads(found.group())
            except ValueError:
                return None
            inside = found.start() <= offset <= found.end()
            if stack and stack[-1][0] == "object" and stack[-1][2]:
                stack[-1][1], stack[-1][2] = value, False
                key_hit = inside
            elif inside or key_hit:
                return ".".join(str(frame[1]) for frame in stack), value
            at = found.end()
        else:
            found = _SCALAR.match(text, at)
            if found is None or key_hit:
                return None
            at = found.end()
        if at > offset and not key_hit:
            return None  # past `offset`, and it was on no string
    return None
