"""Input readers: a visitor's text read within the caps, before the engine sees it.

Everything the page accepts from a visitor (a template, a prefix, a generation,
tools JSON, a shared link) passes through `read_template`, `read_tools` and
`check_text_sizes`, so an oversized or malformed input gets a message naming
what is wrong (an `InputError`) instead of a slow parse or a traceback. Text
that is not valid Unicode (a lone surrogate, which UTF-8 cannot write and which
a JSON `\ud83d` escape without its pair decodes to) is refused here too
(`check_unicode`), before it reaches a worker process, a log or an answer.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .limits import Limits, current

# The longest key a JSON path in a message shows (characters); a longer one is cut with "…".
QUOTED_KEY_CHARS = 40


class InputError(ValueError):
    """Input the page refuses before parsing (too big, not JSON, wrong shape)."""


def lone_surrogate(text: str) -> int | None:
    """The index of the first lone surrogate (U+D800 to U+DFFF) in `text`, or None when UTF-8 can
    write it all."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return error.start
    return None


def check_unicode(value: Any, what: str) -> None:
    """Raise InputError naming `what` (and the JSON path inside it) when a string in `value` (a
    text, or JSON data) holds a lone surrogate.

    The walk keeps, for each item, only its parent's place and its own key: the path is written
    for the one item the message names, so its cost is the tree's size, not the size of every
    item's path (a wide list under a long key would otherwise copy the key for every item)."""
    seen: list[tuple[int, Any]] = [(-1, None)]  # (index of the parent's entry, key or index)
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, at = stack.pop()
        if isinstance(item, str):
            where = lone_surrogate(item)
            if where is not None:
                path = json_path(seen, at)
                shown = f" at {path}" if path else ""
                raise InputError(
                    f"{what} is not valid Unicode{shown}: character {where:,} is a lone surrogate "
                    f"(U+{ord(item[where]):04X}); an escape such as \\ud83d must come with its pair."
                )
        elif isinstance(item, dict):
            stack += [(key, at) for key in item if isinstance(key, str)]
            stack += [(v, seen_at(seen, at, k)) for k, v in item.items()]
        elif isinstance(item, list):
            stack += [(v, seen_at(seen, at, i)) for i, v in enumerate(item)]


def seen_at(seen: list[tuple[int, Any]], parent: int, key: Any) -> int:
    """Record an item under entry `parent` of `seen` with `key` (a dict key or a list index);
    its entry's index."""
    seen.append((parent, key))
    return len(seen) - 1


def json_path(seen: list[tuple[int, Any]], at: int, quoted: int = QUOTED_KEY_CHARS) -> str:
    """The JSON path (``a.b[2]``) of entry `at` of `seen`, each key cut to `quoted` characters."""
    parts: list[str] = []
    while at > 0:
        parent, key = seen[at]
        if isinstance(key, int):
            parts.append(f"[{key}]")
        else:
            key = str(key)
            key = key if len(key) <= quoted else key[:quoted] + "…"
            parts.append(f".{key}" if parent > 0 else key)
        at = parent
    return "".join(reversed(parts))


# A JSON string (escapes included): linear, each character read once.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_BRACKET = re.compile(r"[\[\]{}]")


def json_shape(text: str) -> tuple[int, int]:
    """(deepest nesting of [ and {, values) of JSON text, found without parsing it (strings
    skipped, in linear time). Values are counted as containers plus commas plus one: every value
    but the first of a container follows a comma, so it bounds the tree `json.loads` builds."""
    bare = _STRING.sub('""', text)
    return _deepest(bare), _values(bare)


def _values(bare: str) -> int:
    return bare.count(",") + bare.count("[") + bare.count("{") + 1


def _deepest(bare: str, most: int | None = None) -> int:
    """The deepest nesting of the first `most` brackets of `bare` (all of them when None)."""
    depth = deepest = 0
    for count, found in enumerate(_BRACKET.finditer(bare)):
        if most is not None and count >= most:
            break
        if found.group() in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def json_depth(text: str) -> int:
    """Deepest nesting of [ and { in JSON text, found without parsing it (strings skipped)."""
    return json_shape(text)[0]


def check_json_shape(text: str, what: str, limits: Limits | None = None) -> None:
    """Raise InputError naming `what` when JSON text would build a tree deeper than
    PLAYGROUND_LIMITS `json_depth` or of more values than `json_nodes`: checked on the text, before
    `json.loads` allocates the tree. Linear: the strings are skipped by one regex, the depth read
    over at most twice `json_nodes` brackets, and the values counted by `str.count`."""
    limits = limits or current()
    bare = _STRING.sub('""', text)
    # A tree within the caps has at most twice json_nodes brackets: reading more tells nothing.
    if (depth := _deepest(bare, 2 * limits.json_nodes + 2)) > limits.json_depth:
        raise InputError(
            f"{what} is nested too deeply: {depth} levels (limit {limits.json_depth})."
        )
    values = _values(bare)
    if values > limits.json_nodes:
        raise InputError(
            f"{what} holds too many JSON values: {values:,} (limit {limits.json_nodes:,}, "
            "PLAYGROUND_LIMITS json_nodes)."
        )


def bounded_json(text: str, limits: Limits | None = None) -> Any:
    """`text` read as JSON when it is within the JSON caps (`check_json_shape`), else None; None
    too when it is not JSON. For readers that only ask whether a text is JSON."""
    try:
        check_json_shape(text, "JSON", limits)
        return json.loads(text)
    except (InputError, ValueError, RecursionError):
        return None


def read_json(text: str, what: str, max_chars: int, limits: Limits | None = None) -> Any:
    """JSON text -> value, after the size and depth caps. Raises InputError naming `what`."""
    limits = limits or current()
    if len(text) > max_chars:
        raise InputError(f"{what} is too large: {len(text):,} characters (limit {max_chars:,}).")
    check_json_shape(text, what, limits)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(
            f"{what} is not valid JSON: {error.msg} at line {error.lineno}, column {error.colno}."
        ) from None
    except ValueError:  # a number of thousands of digits, which Python will not convert
        raise InputError(f"{what} is not valid JSON: it holds a number too long to read.") from None
    check_unicode(value, what)
    return value


def _long_patterns(value: Any, limit: int) -> str | None:
    """The JSON path of the first delimiter string or pattern longer than `limit`, or None (the
    path is written for that one only, its keys cut to QUOTED_KEY_CHARS)."""
    seen: list[tuple[int, Any]] = [(-1, None)]
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, at = stack.pop()
        if isinstance(item, dict):
            stack += [(v, seen_at(seen, at, k)) for k, v in reversed(item.items())]
        elif isinstance(item, list):
            stack += [(v, seen_at(seen, at, i)) for i, v in reversed(list(enumerate(item)))]
        elif isinstance(item, str) and len(item) > limit:
            return json_path(seen, at)
    return None


def read_template(text: str, limits: Limits | None = None) -> dict:
    """The template dict from editor text, after the size, depth, field-count and pattern caps.

    Raises InputError (caps, not JSON, not an object); the engine's TemplateError comes later.
    """
    limits = limits or current()
    if not text or not text.strip():
        raise InputError(
            "The template is empty: pick one from templates/ in the Template tab, or load a sample."
        )
    template = read_json(text, "The template", limits.template_chars, limits)
    if not isinstance(template, dict):
        raise InputError("The template must be a JSON object with 'fields' (and 'start_anchor').")
    fields = template.get("fields")
    if isinstance(fields, dict) and len(fields) > limits.fields:
        raise InputError(f"The template has {len(fields)} fields (limit {limits.fields}).")
    anchors = {k: template[k] for k in ("start_anchor", "start_anchor_pattern") if k in template}
    if too_long := _long_patterns({**anchors, "fields": fields or {}}, limits.pattern_chars):
        raise InputError(
            f"Pattern or delimiter too long at {too_long} (limit {limits.pattern_chars:,} characters)."
        )
    return template


def read_tools(text: str, limits: Limits | None = None) -> list | None:
    """Tools (JSON-schema list) from the tools box; None when empty."""
    limits = limits or current()
    if not text or not text.strip():
        return None
    tools = read_json(text, "The tools JSON", limits.tools_chars, limits)
    if not isinstance(tools, list) or not all(isinstance(tool, dict) for tool in tools):
        raise InputError(
            'The tools JSON must be a list of tool objects, e.g. [{"type": "function", "function": {...}}].'
        )
    return tools


def check_text_sizes(prefix: str, generation: str, limits: Limits | None = None) -> None:
    """Raise InputError when the prefix or the generation is over its cap."""
    limits = limits or current()
    if len(prefix) > limits.prefix_chars:
        raise InputError(
            f"The prefix is too long: {len(prefix):,} characters (limit {limits.prefix_chars:,})."
        )
    if len(generation) > limits.generation_chars:
        raise InputError(
            f"The generation is too long: {len(generation):,} characters (limit {limits.generation_chars:,})."
        )


# The longest text of a short box that names something (a model, a token, a search, a dropdown's
# choice) and of any box not listed in `BOXES` (characters).
SHORT_BOX_CHARS = 1_000
# The page's text boxes by the name handlers read them under: what the box is called in a
# message, and its limit (the PLAYGROUND_LIMITS keys whose sum it is, or a number of characters).
BOXES: dict[str, tuple[str, tuple[str, ...] | int]] = {
    "template_text": ("template", ("template_chars",)),
    "prefix": ("prefix", ("prefix_chars",)),
    "generation": ("generation", ("generation_chars",)),
    "tools_text": ("tools JSON", ("tools_chars",)),
    "live_tools_text": ("tools JSON", ("tools_chars",)),
    "messages_text": ("messages JSON", ("tools_chars",)),
    "test_cases_text": ("test cases", ("prefix_chars", "generation_chars")),
    "chat_template_text": ("chat template", ("chat_template_chars",)),
    "user": ("user message", ("message_chars",)),
    "system": ("system message", ("message_chars",)),
    "split_points": ("split points", ("generation_chars",)),
}


def box_limit(name: str, limits: Limits | None = None) -> tuple[str, int, str]:
    """(what box `name` is called, its limit in characters, the PLAYGROUND_LIMITS keys that set
    it joined with " + ", "" for a fixed limit). A box not in `BOXES` takes SHORT_BOX_CHARS."""
    limits = limits or current()
    what, limit = BOXES.get(name, (name.replace("_", " "), SHORT_BOX_CHARS))
    if isinstance(limit, int):
        return what, limit, ""
    return what, sum(getattr(limits, key) for key in limit), " + ".join(limit)


def box_problem(name: str, text: str, limits: Limits | None = None) -> str | None:
    """Why text `text` from the page's box `name` (a handler's parameter name) is refused at the
    door, before any handler reads or keeps it: longer than the box's limit (`box_limit`).
    None when it is within it."""
    what, limit, keys = box_limit(name, limits)
    if len(text) <= limit:
        return None
    setting = f", PLAYGROUND_LIMITS {keys}" if keys else ""
    return (
        f"The {what} is too long: {len(text):,} characters (limit {limit:,}{setting}); "
        "nothing was changed."
    )
