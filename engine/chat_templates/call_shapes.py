"""Template inference, call payloads: the shapes a call's payload can have, and where each lies.

A shape says how the payload of calls is written (a JSON list of calls, a JSON object per
call with the name inside, a JSON object of the arguments alone, a Python-style call list,
JSON with bare keys and string delimiters of the template's own, tagged arguments, one
`key: value` line an argument) and finds the payloads in a call section by the needles
(`engine.chat_templates.probes`). `engine.chat_templates.calls` builds a field around them.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import regex

from ..content import parse_content
from ..pattern_shapes import pattern_literal
from .markup import KEY, pattern_with_stand_ins, plain, shared_start, shown
from .probes import (
    ALPHA,
    ALPHA_ARGUMENTS,
    BETA,
    BETA_ARGUMENTS,
    BOOLEAN_KEY,
    NUMBER_KEY,
    NUMBER_TEXT,
    PROBE_TOOLS,
    STRING_KEY,
    STRING_VALUE,
    Render,
)
from .render import common_suffix_length
from .turns import common_length

# How a tagged value that the markup marks as no string is read: JSON where it is JSON, else the text.
TAGGED_VALUES = {"name": "json", "args": {"allow_non_json": True}}
# The `tag_pattern` group of an attribute that says whether a tagged value is a string.
VALUE_KIND = "value_kind"


@dataclass
class Sections:
    """Each call render cut down to what it adds to the plain answer."""

    one: str
    two: str | None
    typed: str | None
    after_lead: str | None  # the lead-and-call render from the end of the lead text
    renders: dict[str, Render]


@dataclass
class Shape:
    """How the payload of calls is written, before the text around it is known.

    Attributes:
        description: for people.
        content, content_args, transform, transform_each: the field's keys.
        spans: finds the payload spans in a section: `spans(section, names)` -> list of
            (start, end), one a call (one span for a list form), or None.
        list_form: one payload holds every call (no `repeats`).
        json_like: the payload ends in `}` or `]` (the close may require it).
        name_outside: the name is in the text before the payload, not in it.
    """

    description: str
    content: str
    content_args: dict
    transform: dict
    transform_each: bool
    spans: Callable[[str, tuple[str, ...]], list[tuple[int, int]] | None]
    list_form: bool = False
    json_like: bool = True
    name_outside: bool = False
    payload_start: str = (
        ""  # the character every payload starts with, when the open must be followed by it
    )


def json_values(text: str) -> list[tuple[int, int, Any]]:
    """Every outermost JSON object or list in `text`: (start, end, value)."""
    decoder = json.JSONDecoder()
    found = []
    position = 0
    while True:
        match = regex.compile(r"[\[{]").search(text, position)
        if match is None:
            return found
        try:
            value, end = decoder.raw_decode(text, match.start())
        except ValueError:
            position = match.start() + 1
            continue
        found.append((match.start(), end, value))
        position = end


def _path_to(
    value: Any, wanted: Callable[[Any], bool], path: tuple[str, ...] = ()
) -> tuple[str, ...] | None:
    """The key path to the first node of `value` for which `wanted` holds (dicts only), or None."""
    if wanted(value):
        return path
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and regex.fullmatch(r"\w+", key):
                found = _path_to(item, wanted, path + (key,))
                if found is not None:
                    return found
    return None


def _placeholder(path: tuple[str, ...]) -> str:
    """A transform placeholder for key `path` (``("content", "name")`` -> ``{content.name}``)."""
    return "{" + ".".join(path) + "}"


def call_paths(
    item: Any, name: str, arguments: dict
) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The key paths to the name and to the arguments in a call's JSON (the arguments as an object,
    or as JSON text holding it), or None."""
    name_path = _path_to(item, lambda node: node == name)
    arguments_path = _path_to(
        item, lambda node: node == arguments or _json_text_of(node) == arguments
    )
    if not name_path or not arguments_path:
        return None
    return name_path, arguments_path


def _json_text_of(node: Any) -> Any:
    """What `node` holds when it is JSON text of an object, else None."""
    if not isinstance(node, str) or not node.lstrip().startswith("{"):
        return None
    try:
        return json.loads(node)
    except ValueError:
        return None


def _json_string_keys(arguments_path: tuple[str, ...]) -> dict:
    """`content_args` that decode arguments a model may write as JSON text (stacks accept both):
    the top-level key holding them."""
    return {"decode_json_strings": [arguments_path[-1]]} if len(arguments_path) == 1 else {}


def json_list_shape(sections: Sections) -> Shape | None:
    """A JSON list of call objects (the name and the arguments inside each), when the two-call
    render (else the one-call render) writes one holding every function name; None otherwise."""
    text, names, arguments = (
        (sections.two, (ALPHA, BETA), (ALPHA_ARGUMENTS, BETA_ARGUMENTS))
        if sections.two
        else (sections.one, (ALPHA,), (ALPHA_ARGUMENTS,))
    )
    for start, end, value in json_values(text):
        if not isinstance(value, list) or len(value) != len(names):
            continue
        paths = [call_paths(item, name, args) for item, name, args in zip(value, names, arguments)]
        if None in paths or len(set(paths)) != 1:
            continue
        name_path, arguments_path = paths[0]
        transform = _paths_transform(name_path, arguments_path)
        return Shape(
            "a JSON list of calls",
            "json",
            _json_string_keys(arguments_path),
            transform,
            True,
            _json_list_spans,
            list_form=True,
            payload_start="[",
        )
    return None


def _paths_transform(name_path: tuple[str, ...], arguments_path: tuple[str, ...]) -> dict:
    """The transform of a call whose function name and arguments lie at these key paths of
    the call's JSON value (tuples of keys: ``("content", "name")``)."""
    return {
        "type": "function",
        "function": {"name": _placeholder(name_path), "arguments": _placeholder(arguments_path)},
    }


def _json_list_spans(section: str, names: tuple[str, ...]) -> list[tuple[int, int]] | None:
    """The span of the first JSON list in `section` that holds every name of `names`, or None."""
    for start, end, value in json_values(section):
        if isinstance(value, list) and all(name in json.dumps(value) for name in names):
            return [(start, end)]
    return None


def json_call_shape(sections: Sections) -> Shape | None:
    """One JSON object per call with the name and arguments inside (their key paths read from
    the one-call render), or None."""
    for start, end, value in json_values(sections.one):
        paths = call_paths(value, ALPHA, ALPHA_ARGUMENTS) if isinstance(value, dict) else None
        if paths:
            name_path, arguments_path = (("content",) + path for path in paths)
            transform = _paths_transform(name_path, arguments_path)
            return Shape(
                "a JSON object per call, the name inside",
                "json",
                _json_string_keys(paths[1]),
                transform,
                False,
                _json_call_spans,
                payload_start="{",
            )
    return None


def _json_call_spans(section: str, names: tuple[str, ...]) -> list[tuple[int, int]] | None:
    """One span a name of `names`: the JSON objects of `section` that hold a function name, or
    None when there are not as many as names."""
    spans = [
        (start, end)
        for start, end, value in json_values(section)
        if isinstance(value, dict)
        and any(_path_to(value, lambda node, name=name: node == name) for name in names)
    ]
    return spans if len(spans) == len(names) else None


def _name_outside_shape(
    description: str,
    content: str,
    content_args: dict,
    spans: Callable[[str, tuple[str, ...]], list[tuple[int, int]] | None],
    json_like: bool = True,
) -> Shape:
    """A `Shape` whose payload holds the arguments alone, the function name written before it:
    one call a region, the transform taking the name from ``{name}`` and the arguments from
    the content."""
    transform = {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    return Shape(
        description,
        content,
        content_args,
        transform,
        False,
        spans,
        json_like=json_like,
        name_outside=True,
    )


def _argument_places(text: str) -> tuple[int, int, int, int] | None:
    """Where the probe call's string argument and number argument lie in `text`:
    (string key, string value, number key, number value) offsets, each found after the one
    before it; None when one is missing."""
    key_a, value_a = text.find(STRING_KEY), text.find(STRING_VALUE)
    key_n = text.find(NUMBER_KEY, value_a)
    value_n = text.find(NUMBER_TEXT, key_n)
    if min(key_a, value_a, key_n, value_n) < 0:
        return None
    return key_a, value_a, key_n, value_n


def json_arguments_shape(sections: Sections) -> Shape | None:
    """A JSON object of the arguments alone, the name written before it, or None."""
    if not any(value == ALPHA_ARGUMENTS for _, _, value in json_values(sections.one)):
        return None
    return _name_outside_shape(
        "a JSON object of the arguments per call, the name before it",
        "json",
        {},
        json_arguments_spans,
    )


def json_arguments_spans(section: str, names: tuple[str, ...]) -> list[tuple[int, int]] | None:
    """For each name of `names` in turn, the span of its probe arguments' JSON object in
    `section` (each found after the previous one), or None when one is missing."""
    wanted = {ALPHA: ALPHA_ARGUMENTS, BETA: BETA_ARGUMENTS}
    spans = []
    position = 0
    for name in names:
        found = next(
            ((s, e) for s, e, value in json_values(section[position:]) if value == wanted[name]),
            None,
        )
        if found is None:
            return None
        spans.append((position + found[0], position + found[1]))
        position += found[1]
    return spans


def python_list_shape(sections: Sections) -> Shape | None:
    """A Python-style list of calls (``[name(key=value)]``), or None."""
    # Typed arguments only: some chat templates write string arguments without quotes.
    text = sections.typed or sections.one
    if _python_list_spans(text, (BETA,) if sections.typed else (ALPHA,)) is None:
        return None
    transform = {"type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}}
    return Shape(
        "a Python-style list of calls",
        "python-call-list",
        {},
        transform,
        True,
        _python_list_spans,
        list_form=True,
    )


def _python_list_spans(section: str, names: tuple[str, ...]) -> list[tuple[int, int]] | None:
    """The span from the first ``[`` to the last ``]`` of `section` when it is a call list of
    `names` in order (or, unparseable, when each name is followed by ``(``); None otherwise."""
    start = section.find("[")
    end = section.rfind("]")
    if start < 0 or end < start:
        return None
    try:
        calls = parse_content("python-call-list", section[start : end + 1], {})
    except ValueError:
        return (
            [(start, end + 1)]
            if all(regex.search(pattern_literal(name) + r"\s*\(", section) for name in names)
            else None
        )
    return [(start, end + 1)] if [call["name"] for call in calls] == list(names) else None


def bare_key_json_shape(sections: Sections) -> Shape | None:
    """JSON whose keys have no quotes (strings between the template's own delimiters when they
    are not quotes), the name written before it; None otherwise."""
    text = sections.one
    key = text.find(STRING_KEY)
    value = text.find(STRING_VALUE, key)
    brace = text.rfind("{", 0, key)
    if key < 0 or value < 0 or brace < 0 or text[key - 1] == '"':
        return None
    colon = text.find(":", key)
    opening = text[colon + 1 : value].strip()
    closing_end = min(
        (at for at in (text.find(",", value), text.find("}", value)) if at >= 0), default=-1
    )
    closing = text[value + len(STRING_VALUE) : closing_end].strip() if closing_end >= 0 else ""
    content_args: dict = {"unquoted_keys": True}
    if opening != '"' or closing != '"':
        if not opening or not closing:
            return None
        content_args["string_delims"] = [[opening, closing]]
    spans = _bare_key_spans(content_args)
    if spans(text, (ALPHA,)) is None:
        return None
    return _name_outside_shape(
        "JSON with bare keys"
        + (
            f" and strings between {opening} and {closing}"
            if "string_delims" in content_args
            else ""
        ),
        "json",
        content_args,
        spans,
    )


def _bare_key_spans(
    content_args: dict,
) -> Callable[[str, tuple[str, ...]], list[tuple[int, int]] | None]:
    """The spans function of bare-key JSON read with `content_args`: for each name in turn, the
    first ``{...}`` after it that parses to that function's probe arguments; None when one is
    missing."""
    wanted = {ALPHA: ALPHA_ARGUMENTS, BETA: BETA_ARGUMENTS}

    def spans(section: str, names: tuple[str, ...]) -> list[tuple[int, int]] | None:
        """One span a name of `names`, in order; None when one is missing."""
        found = []
        position = 0
        for name in names:
            start = section.find(
                "{", section.find(name, position) if name in section[position:] else position
            )
            span = None
            while start >= 0 and span is None:
                for end in (m.end() for m in regex.finditer(r"\}", section, pos=start)):
                    try:
                        if (
                            typed(name, parse_content("json", section[start:end], content_args))
                            == wanted[name]
                        ):
                            span = (start, end)
                            break
                    except ValueError:
                        continue
                if span is None:
                    start = section.find("{", start + 1)
            if span is None:
                return None
            found.append(span)
            position = span[1]
        return found

    return spans


def _argument_spans(
    arguments_after: Callable[[str, int, str, tuple[str, ...]], list[regex.Match]],
) -> Callable[[str, tuple[str, ...]], list[tuple[int, int]] | None]:
    """The spans function of a tagged argument format: for each function name in turn, the
    stretch from its first argument to its last, where `arguments_after(section, at, name,
    names)` gives the argument matches of the call whose name is at `at`; None when a name or
    its arguments are missing."""

    def spans(section: str, names: tuple[str, ...]) -> list[tuple[int, int]] | None:
        """One span a name of `names`, in order; None when one is missing."""
        found = []
        position = 0
        for name in names:
            at = section.find(name, position)
            if at < 0:
                return None
            arguments = arguments_after(section, at, name, names)
            if not arguments:
                return None
            found.append((arguments[0].start(), arguments[-1].end()))
            position = arguments[-1].end()
        return found

    return spans


def _arguments_shape(
    text: str,
    arguments_after: Callable[[str, int, str, tuple[str, ...]], list[regex.Match]],
    description: str,
    content: str,
    content_args: dict,
) -> Shape | None:
    """The `Shape` of a format that writes the arguments one by one (tags, lines), the name
    outside them, found by `arguments_after` (see `_argument_spans`); None when the probe
    call's arguments are not found that way in `text` (the one-call render)."""
    spans = _argument_spans(arguments_after)
    if spans(text, (ALPHA,)) is None:
        return None
    return _name_outside_shape(description, content, content_args, spans, json_like=False)


def tagged_shape(sections: Sections) -> Shape | None:
    """Tagged arguments (a tag around each key and value, such as ``<KEY>VALUE</KEY>``), read by
    a `tag_pattern` learnt from where the probe keys and values lie; None otherwise."""
    text = sections.one
    places = _argument_places(text)
    if places is None:
        return None
    key_a, value_a, key_n, value_n = places
    # The keys as a stand-in: a tag that repeats its key (<KEY>VALUE</KEY>) closes by a back-reference.
    between = text[value_a + len(STRING_VALUE) : key_n].replace(STRING_KEY, KEY)
    after = text[value_n + len(NUMBER_TEXT) :].replace(NUMBER_KEY, KEY)
    value_close = shared_start([between, after])
    key_open = between[len(value_close) :]
    middles = [text[key_a + len(STRING_KEY) : value_a], text[key_n + len(NUMBER_KEY) : value_n]]
    middles += _typed_middle(sections.typed)
    middle, value_parser_by = _middle_pattern(middles)
    if (
        middle is None
        or not key_open.strip()
        or not value_close.strip()
        or not text[:key_a].endswith(key_open)
        or KEY in key_open
    ):
        return None
    # One newline on each side of a value belongs to the markup; any other blank is the value's.
    tag_pattern = (
        pattern_with_stand_ins(key_open.strip())
        + _key_group(middles[0])
        + middle
        + r"\n?(?P<value>.*?)\n?"
        + pattern_with_stand_ins(value_close.strip())
    )
    # A value is the text the model wrote: the tool's schema casts it (as a parser that reads
    # it as JSON would also cast a string parameter's "75001"), unless the markup says itself
    # which values are not strings.
    content_args = {"tag_pattern": tag_pattern}
    if value_parser_by is not None:
        content_args["value_parser_by"] = value_parser_by
    tag = regex.compile(tag_pattern, regex.DOTALL)

    def tags_after(section: str, at: int, name: str, names: tuple[str, ...]) -> list[regex.Match]:
        """The argument tags of the call whose name is at `at`: up to the next other name."""
        tags = []
        for match in tag.finditer(section, at):
            nxt = [section.find(other, at + len(name)) for other in names if other != name]
            if any(0 <= n < match.start() for n in nxt):
                break
            tags.append(match)
        return tags

    return _arguments_shape(
        text,
        tags_after,
        f"tagged arguments, {plain(key_open.strip())}KEY{plain(middles[0])}VALUE{shown(plain(value_close.strip()))}",
        "xml-inline",
        content_args,
    )


def _typed_middle(typed: str | None) -> list[str]:
    """The text between the boolean argument's key and its value in the typed call's render."""
    if typed is None:
        return []
    key = typed.find(BOOLEAN_KEY)
    value = typed.find("true", key)
    return [typed[key + len(BOOLEAN_KEY) : value]] if 0 <= key < value else []


def _middle_pattern(middles: list[str]) -> tuple[str | None, dict | None]:
    """The pattern of the text between an argument's key and its value, from its form in each
    argument (blanks next to the value left out: the tag pattern allows one newline there), and
    the `value_parser_by` that form calls for, or None.

    `middles` are the string argument's form first, then the other arguments'. The same text
    for every argument is that text. Texts that differ only inside one run of word characters
    (an attribute that names the value's type, ``string="true"`` and ``string="false"``) give
    a group of the runs seen; when the string argument's run is its own, the group says how to
    read each value: the text as written for the string's run, JSON for the others'. None
    otherwise."""
    trimmed = [middle.rstrip() for middle in middles]
    if any(KEY in middle for middle in trimmed):
        return None, None
    if len(set(trimmed)) == 1:
        return pattern_with_stand_ins(trimmed[0]), None
    start = min(common_length(trimmed[0], other) for other in trimmed)
    while start and regex.match(r"\w", trimmed[0][start - 1]):
        start -= 1
    end = min(common_suffix_length(trimmed[0], other) for other in trimmed)
    while end and regex.match(r"\w", trimmed[0][len(trimmed[0]) - end]):
        end -= 1
    cores = [middle[start : len(middle) - end] for middle in trimmed]
    if not all(regex.fullmatch(r"\w+", core) for core in cores):
        return None, None
    head, tail = trimmed[0][:start], trimmed[0][len(trimmed[0]) - end :]
    runs = "|".join(dict.fromkeys(cores))
    if cores[0] in cores[1:]:
        return pattern_with_stand_ins(head) + f"(?:{runs})" + pattern_with_stand_ins(tail), None
    by = {
        "group": VALUE_KIND,
        "parsers": {core: copy.deepcopy(TAGGED_VALUES) for core in dict.fromkeys(cores[1:])},
    }
    return (
        pattern_with_stand_ins(head) + f"(?P<{VALUE_KIND}>{runs})" + pattern_with_stand_ins(tail),
        by,
    )


def kv_lines_shape(sections: Sections) -> Shape | None:
    """Arguments as `key<sep>value` lines (one argument a line)."""
    text = sections.one
    places = _argument_places(text)
    if places is None:
        return None
    key_a, value_a, key_n, value_n = places
    separator = text[key_a + len(STRING_KEY) : value_a]
    line_break = text[value_a + len(STRING_VALUE) : key_n]
    if (
        text[key_n + len(NUMBER_KEY) : value_n] != separator
        or not separator.strip()
        or "\n" not in line_break
        or line_break.strip()
    ):
        return None
    content_args = {"kv_sep": separator.strip()}  # values as written: the schema casts them
    pattern = regex.compile(
        r"(?m)^[ \t]*[\w.\-]+[ \t]*" + pattern_literal(separator.strip()) + r".*$"
    )

    def lines_after(section: str, at: int, name: str, names: tuple[str, ...]) -> list[regex.Match]:
        """The argument lines of the call whose name is at `at`: from the next line on, while
        nothing but blanks lies between two."""
        lines = []
        for match in pattern.finditer(section, section.find("\n", at) + 1):
            if lines and section[lines[-1].end() : match.start()].strip():
                break
            lines.append(match)
        return lines

    return _arguments_shape(
        text,
        lines_after,
        f"one argument a line, KEY{plain(separator)}VALUE",
        "kv-lines",
        content_args,
    )


def _key_group(after_key: str) -> str:
    """The key's group: up to the first character of what follows it."""
    stop = after_key.lstrip()[:1] or "\n"
    return f"(?P<key>[^{regex.escape(stop)}\\s]+)" if not stop.isspace() else r"(?P<key>\S+)"


def typed(name: str, arguments: Any) -> Any:
    """`arguments` of probe function `name` typed by its schema."""
    from ..tool_typing import tool_parameter_schemas, type_tool_calls

    call = {"function": {"name": name, "arguments": arguments}}
    type_tool_calls(call, tool_parameter_schemas(PROBE_TOOLS))
    return call["function"]["arguments"]


def keyed_by_name(text: str) -> bool:
    """Whether `text` writes a call as a JSON object whose only key is the function's name."""
    return any(
        _path_to(value, lambda node: node == {ALPHA: ALPHA_ARGUMENTS}) is not None
        for _, _, value in json_values(text)
    ) or any(
        isinstance(item, dict) and item == {ALPHA: ALPHA_ARGUMENTS}
        for _, _, value in json_values(text)
        if isinstance(value, list)
        for item in value
    )


# Every shape, in the order tried.
SHAPES = (
    json_list_shape,
    json_call_shape,
    json_arguments_shape,
    python_list_shape,
    bare_key_json_shape,
    tagged_shape,
    kv_lines_shape,
)
