"""Template inference, tool calls: the syntax a chat template writes calls in, from its renders.

The renders of one call, of two calls with different names, of a call with only typed
arguments and of text followed by a call (`engine.chat_templates.probes`) are cut down to
their tool-call section (what they add to a plain answer), and the needles in them
locate everything else:

* the payload of each call: a JSON list of calls, a JSON object holding the name and
  the arguments, a JSON object of the arguments alone, a Python-style call list,
  JSON with bare keys and string delimiters of the template's own, tagged
  arguments (a key tag and a value tag per argument), or one `key: value` line an
  argument;
* around the payloads, from the text before the first, between the two and after the
  last: the marker each call opens and closes with (where the name sits when it is not
  in the payload, and an index or id that varies), the section markers around all the
  calls, and the separator between them.

Each shape that could explain the renders is built as a `tool_calls` field and kept
only when it parses every render back to its calls. Nothing here knows a model family.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import regex

from ..content import parse_content
from ..errors import ResponseParseError
from .probes import (
    ALPHA,
    ALPHA_ARGUMENTS,
    BETA,
    BETA_ARGUMENTS,
    FINAL_MESSAGES,
    LEAD,
    MARKUP_TOKEN,
    PROBE_TOOLS,
    Finding,
    Render,
    Turn,
    shared_end,
    shared_start,
)
from .render import common_suffix_length, token_boundary
from .turns import argument_defects, back_to_boundary, common_length

# Stand-ins while comparing the text around calls: the function's name, a call id, a number, an
# argument's key.
NAME, CALL_ID, NUMBER, KEY = "\x00", "\x02", "\x01", "\x04"
NAME_GROUP = r"(?P<name>[\w.\-]+)"
CALL_IDS = ("call00001", "call00002")
# The value parser of tagged arguments: JSON where the value is JSON, else the text.
TAGGED_VALUES = {"name": "json", "args": {"allow_non_json": True}}


@dataclass
class CallTurns:
    """The turns that show the call syntax, in one thinking mode (None: not rendered).

    Attributes:
        answer: a plain answer (what the call turns are compared with).
        call, two_calls, typed_call, lead_and_call: see `engine.chat_templates.probes.FINAL_MESSAGES`.
        end_markers: the end-of-turn markers learnt from the answer (for a call without a close).
    """

    answer: Turn
    call: Turn | None
    two_calls: Turn | None
    typed_call: Turn | None
    lead_and_call: Turn | None
    end_markers: list[str]


@dataclass
class CallSyntax:
    """A tool-call syntax that reads every call render back.

    Attributes:
        field: the `tool_calls` field of the response template.
        content_closes: markers around the calls (a section's begin and end) that end the
            implicit field's text and are dropped.
        call_starts: patterns of what a call (or its section) starts with, for a reasoning
            region that a call may end (with the payload's first character where it follows).
        description: the shape, for people ("a JSON object per call, the name inside").
        findings: the evidence of each part.
    """

    field: dict
    content_closes: list[str]
    call_starts: list[str]
    description: str
    findings: list[Finding] = field(default_factory=list)


@dataclass
class _Sections:
    """Each call render cut down to what it adds to the plain answer."""

    one: str
    two: str | None
    typed: str | None
    after_lead: str | None  # the lead-and-call render from the end of the lead text
    renders: dict[str, Render]


@dataclass
class _Shape:
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


def learn_call_syntax(modes: list[CallTurns]) -> CallSyntax | str:
    """The tool-call syntax of these renders (one `CallTurns` a thinking mode), or a sentence
    saying why none was found."""
    rendered = [turns for turns in modes if turns.call is not None]
    if not rendered:
        return (
            "the chat template writes no tool call of an assistant message (or refuses every one)"
        )
    all_sections = [(turns, _sections(turns)) for turns in rendered]
    all_sections = [(turns, sections) for turns, sections in all_sections if sections.one.strip()]
    if not all_sections:
        return f"the render of {rendered[0].call.render.label} adds nothing to a plain answer: it writes no tool call"
    problems = []
    for turns, sections in all_sections:
        shapes = [
            shape
            for shape in (
                _json_list_shape,
                _json_call_shape,
                _json_arguments_shape,
                _python_list_shape,
                _bare_key_json_shape,
                _tagged_shape,
                _kv_lines_shape,
            )
            for shape in [shape(sections)]
            if shape
        ]
        if not shapes:
            if regex.search(r"'zq_(?:fn|key)_\w+'", sections.one):
                problems.append(
                    f"the calls are Python literals (single-quoted strings, True/False/None: "
                    f"{_show(sections.one)}), and no content parser reads a Python dict"
                )
            else:
                problems.append(
                    f"no call syntax the template language can read explains {_show(sections.one)}"
                )
            continue
        others = [other for _, other in all_sections if other is not sections]
        for shape in shapes:
            built = _build(shape, sections, others, turns)
            if isinstance(built, str):
                problems.append(f"{shape.description}: {built}")
                continue
            return built
    return "; ".join(dict.fromkeys(problems))


# -- the sections ----------------------------------------------------------------------


def _sections(turns: CallTurns) -> _Sections:
    answer = turns.answer.text
    at = answer.find("zq answer text")
    before, after = (answer[:at], answer[at + len("zq answer text") :]) if at >= 0 else ("", answer)
    renders = {"answer": turns.answer.render}

    def cut(turn: Turn | None, name: str) -> str | None:
        if turn is None:
            return None
        renders[name] = turn.render
        return _between(turn.text, before, after)

    after_lead = None
    if turns.lead_and_call is not None:
        renders["lead-and-call"] = turns.lead_and_call.render
        text = turns.lead_and_call.text
        at = text.find(LEAD)
        if at >= 0:
            after_lead = _between(text[at + len(LEAD) :], "", after)
    return _Sections(
        cut(turns.call, "call") or "",
        cut(turns.two_calls, "two-calls"),
        cut(turns.typed_call, "typed-call"),
        after_lead,
        renders,
    )


def _between(text: str, before: str, after: str) -> str:
    """`text` without what it shares with `before` at its start and with `after` at its end
    (each cut at a token boundary)."""
    start = back_to_boundary(text, common_length(text, before)) if before else 0
    body = text.rstrip()
    tail = after.rstrip()
    end = len(body) - common_suffix_length(body, tail) if tail else len(body)
    while start < end < len(body) and not token_boundary(body, end):
        end += 1
    return body[start : max(end, start)]


# -- payload shapes ----------------------------------------------------------------------


def _json_values(text: str) -> list[tuple[int, int, Any]]:
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
    return "{" + ".".join(path) + "}"


def _call_paths(
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


def _json_list_shape(sections: _Sections) -> _Shape | None:
    text, names, arguments = (
        (sections.two, (ALPHA, BETA), (ALPHA_ARGUMENTS, BETA_ARGUMENTS))
        if sections.two
        else (sections.one, (ALPHA,), (ALPHA_ARGUMENTS,))
    )
    for start, end, value in _json_values(text):
        if not isinstance(value, list) or len(value) != len(names):
            continue
        paths = [_call_paths(item, name, args) for item, name, args in zip(value, names, arguments)]
        if None in paths or len(set(paths)) != 1:
            continue
        name_path, arguments_path = paths[0]
        transform = {
            "type": "function",
            "function": {
                "name": _placeholder(name_path),
                "arguments": _placeholder(arguments_path),
            },
        }
        return _Shape(
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


def _json_list_spans(section: str, names: tuple[str, ...]) -> list[tuple[int, int]] | None:
    for start, end, value in _json_values(section):
        if isinstance(value, list) and all(name in json.dumps(value) for name in names):
            return [(start, end)]
    return None


def _json_call_shape(sections: _Sections) -> _Shape | None:
    for start, end, value in _json_values(sections.one):
        paths = _call_paths(value, ALPHA, ALPHA_ARGUMENTS) if isinstance(value, dict) else None
        if paths:
            name_path, arguments_path = (("content",) + path for path in paths)
            transform = {
                "type": "function",
                "function": {
                    "name": _placeholder(name_path),
                    "arguments": _placeholder(arguments_path),
                },
            }
            return _Shape(
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
    spans = [
        (start, end)
        for start, end, value in _json_values(section)
        if isinstance(value, dict)
        and any(_path_to(value, lambda node, name=name: node == name) for name in names)
    ]
    return spans if len(spans) == len(names) else None


def _json_arguments_shape(sections: _Sections) -> _Shape | None:
    if not any(value == ALPHA_ARGUMENTS for _, _, value in _json_values(sections.one)):
        return None
    transform = {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    return _Shape(
        "a JSON object of the arguments per call, the name before it",
        "json",
        {},
        transform,
        False,
        _json_arguments_spans,
        name_outside=True,
    )


def _json_arguments_spans(section: str, names: tuple[str, ...]) -> list[tuple[int, int]] | None:
    wanted = {ALPHA: ALPHA_ARGUMENTS, BETA: BETA_ARGUMENTS}
    spans = []
    position = 0
    for name in names:
        found = next(
            ((s, e) for s, e, value in _json_values(section[position:]) if value == wanted[name]),
            None,
        )
        if found is None:
            return None
        spans.append((position + found[0], position + found[1]))
        position += found[1]
    return spans


def _python_list_shape(sections: _Sections) -> _Shape | None:
    # Typed arguments only: some chat templates write string arguments without quotes.
    text = sections.typed or sections.one
    if _python_list_spans(text, (BETA,) if sections.typed else (ALPHA,)) is None:
        return None
    transform = {"type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}}
    return _Shape(
        "a Python-style list of calls",
        "python-call-list",
        {},
        transform,
        True,
        _python_list_spans,
        list_form=True,
    )


def _python_list_spans(section: str, names: tuple[str, ...]) -> list[tuple[int, int]] | None:
    start = section.find("[")
    end = section.rfind("]")
    if start < 0 or end < start:
        return None
    try:
        calls = parse_content("python-call-list", section[start : end + 1], {})
    except ValueError:
        return (
            [(start, end + 1)]
            if all(regex.search(escape(name) + r"\s*\(", section) for name in names)
            else None
        )
    return [(start, end + 1)] if [call["name"] for call in calls] == list(names) else None


def _bare_key_json_shape(sections: _Sections) -> _Shape | None:
    text = sections.one
    key = text.find("zq_key_a")
    value = text.find("zq val 1", key)
    brace = text.rfind("{", 0, key)
    if key < 0 or value < 0 or brace < 0 or text[key - 1] == '"':
        return None
    colon = text.find(":", key)
    opening = text[colon + 1 : value].strip()
    closing_end = min(
        (at for at in (text.find(",", value), text.find("}", value)) if at >= 0), default=-1
    )
    closing = text[value + len("zq val 1") : closing_end].strip() if closing_end >= 0 else ""
    content_args: dict = {"unquoted_keys": True}
    if opening != '"' or closing != '"':
        if not opening or not closing:
            return None
        content_args["string_delims"] = [[opening, closing]]
    spans = _bare_key_spans(content_args)
    if spans(text, (ALPHA,)) is None:
        return None
    transform = {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    return _Shape(
        "JSON with bare keys"
        + (
            f" and strings between {opening} and {closing}"
            if "string_delims" in content_args
            else ""
        ),
        "json",
        content_args,
        transform,
        False,
        spans,
        name_outside=True,
    )


def _bare_key_spans(
    content_args: dict,
) -> Callable[[str, tuple[str, ...]], list[tuple[int, int]] | None]:
    wanted = {ALPHA: ALPHA_ARGUMENTS, BETA: BETA_ARGUMENTS}

    def spans(section: str, names: tuple[str, ...]) -> list[tuple[int, int]] | None:
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
                            _typed(name, parse_content("json", section[start:end], content_args))
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


def _tagged_shape(sections: _Sections) -> _Shape | None:
    text = sections.one
    key_a, value_a = text.find("zq_key_a"), text.find("zq val 1")
    key_n = text.find("zq_num", value_a)
    value_n = text.find("73519", key_n)
    if min(key_a, value_a, key_n, value_n) < 0:
        return None
    # The keys as a stand-in: a tag that repeats its key (<KEY>VALUE</KEY>) closes by a back-reference.
    between = text[value_a + len("zq val 1") : key_n].replace("zq_key_a", KEY)
    after = text[value_n + len("73519") :].replace("zq_num", KEY)
    value_close = shared_start([between, after])
    key_open = between[len(value_close) :]
    middle = text[key_a + len("zq_key_a") : value_a]
    if (
        not key_open.strip()
        or not value_close.strip()
        or text[key_n + len("zq_num") : value_n] != middle
        or not text[:key_a].endswith(key_open)
        or KEY in key_open
        or KEY in middle
    ):
        return None
    key_pattern = _key_group(middle)
    tag_pattern = (
        pattern_with_stand_ins(key_open.strip())
        + key_pattern
        + pattern_with_stand_ins(middle)
        + r"(?P<value>.*?)"
        + pattern_with_stand_ins(value_close.rstrip())
    )
    content_args = {"tag_pattern": tag_pattern, "value_parser": TAGGED_VALUES}
    tag = regex.compile(tag_pattern, regex.DOTALL)

    def tags_after(section: str, at: int, name: str, names: tuple[str, ...]) -> list[regex.Match]:
        tags = []
        for match in tag.finditer(section, at):
            nxt = [section.find(other, at + len(name)) for other in names if other != name]
            if any(0 <= n < match.start() for n in nxt):
                break
            tags.append(match)
        return tags

    spans = _argument_spans(tags_after)

    if spans(text, (ALPHA,)) is None:
        return None
    transform = {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    return _Shape(
        f"tagged arguments, {_plain(key_open.strip())}KEY{_plain(middle)}VALUE{_shown(_plain(value_close.strip()))}",
        "xml-inline",
        content_args,
        transform,
        False,
        spans,
        json_like=False,
        name_outside=True,
    )


def _kv_lines_shape(sections: _Sections) -> _Shape | None:
    """Arguments as `key<sep>value` lines (one argument a line)."""
    text = sections.one
    key_a, value_a = text.find("zq_key_a"), text.find("zq val 1")
    key_n = text.find("zq_num", value_a)
    value_n = text.find("73519", key_n)
    if min(key_a, value_a, key_n, value_n) < 0:
        return None
    separator = text[key_a + len("zq_key_a") : value_a]
    line_break = text[value_a + len("zq val 1") : key_n]
    if (
        text[key_n + len("zq_num") : value_n] != separator
        or not separator.strip()
        or "\n" not in line_break
        or line_break.strip()
    ):
        return None
    content_args = {"kv_sep": separator.strip(), "value_parser": TAGGED_VALUES}
    pattern = regex.compile(r"(?m)^[ \t]*[\w.\-]+[ \t]*" + escape(separator.strip()) + r".*$")

    def lines_after(section: str, at: int, name: str, names: tuple[str, ...]) -> list[regex.Match]:
        lines = []
        for match in pattern.finditer(section, section.find("\n", at) + 1):
            if lines and section[lines[-1].end() : match.start()].strip():
                break
            lines.append(match)
        return lines

    spans = _argument_spans(lines_after)

    if spans(text, (ALPHA,)) is None:
        return None
    transform = {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    return _Shape(
        f"one argument a line, KEY{_plain(separator)}VALUE",
        "kv-lines",
        content_args,
        transform,
        False,
        spans,
        json_like=False,
        name_outside=True,
    )


def _key_group(after_key: str) -> str:
    """The key's group: up to the first character of what follows it."""
    stop = after_key.lstrip()[:1] or "\n"
    return f"(?P<key>[^{regex.escape(stop)}\\s]+)" if not stop.isspace() else r"(?P<key>\S+)"


# -- the text around the payloads ---------------------------------------------------------


def _generalize(text: str, name: str | None) -> str:
    for call_id in CALL_IDS:
        text = text.replace(call_id, CALL_ID)
    if name:
        text = text.replace(name, NAME)
    return regex.sub(r"\d+", NUMBER, text)


def _shared_end(texts: list[str]) -> str:
    return shared_end(texts, NAME + NUMBER + CALL_ID)


def escape(text: str) -> str:
    """`text` as a regex, escaping only what is special outside a character class (unlike
    `regex.escape`, spaces and ``#`` stay as written, so patterns read like the text)."""
    return regex.sub(r"([.^$*+?{}\[\]\\|()])", r"\\\1", text)


def pattern_with_stand_ins(text: str, name_group: bool = True) -> str:
    """A regex for `text`: whitespace runs match any whitespace, the stand-ins their groups (the
    name as the `name` group, or without one where the name is matched a second time)."""
    pieces = []
    for piece in regex.split(r"(\s+|[\x00\x01\x02\x04])", text):
        if not piece:
            continue
        if piece == KEY:
            pieces.append("(?P=key)")
        elif piece == NAME:
            pieces.append(NAME_GROUP if name_group else r"[\w.\-]+")
        elif piece == NUMBER:
            pieces.append(r"\d+")
        elif piece == CALL_ID:
            pieces.append(r"[\w\-]+")
        elif piece.isspace():
            pieces.append(r"\s*")
        else:
            pieces.append(escape(piece))
    return "".join(pieces)


def _literal_head(text: str) -> str:
    """The literal text before the first stand-in, stripped."""
    return regex.split(r"[\x00\x01\x02]", text)[0].strip()


def _build(
    shape: _Shape, sections: _Sections, others: list[_Sections], turns: CallTurns
) -> CallSyntax | str:
    """The field for `shape`, its open and close learnt from the text around the payloads in
    `sections` and in the other thinking modes' `others`."""
    spans1 = shape.spans(sections.one, (ALPHA,))
    if spans1 is None:
        return f"its payload is not found in {_show(sections.one)}"
    if shape.list_form:
        return _build_list(shape, sections, others, spans1, turns)
    one = sections.one
    befores, afters, middles = [], [], []
    for each in [sections, *others]:
        found = shape.spans(each.one, (ALPHA,))
        if found is None:
            continue
        befores.append(_generalize(each.one[: found[0][0]], ALPHA))
        afters.append(_generalize(each.one[found[-1][1] :], ALPHA))
        pair = shape.spans(each.two, (ALPHA, BETA)) if each.two else None
        if pair is not None:
            (s1, e1), (s2, e2) = pair
            befores.append(_generalize(each.two[:s1], ALPHA))
            middles.append(_generalize(each.two[e1:s2], BETA).replace(ALPHA, NAME))
            afters.append(_generalize(each.two[e2:], BETA))
        if each.typed is not None:
            typed = shape.spans(each.typed, (BETA,))
            if typed:
                befores.append(_generalize(each.typed[: typed[0][0]], BETA))
                afters.append(_generalize(each.typed[typed[-1][1] :], BETA))
        if each.after_lead is not None:
            lead = shape.spans(each.after_lead, (ALPHA,))
            if lead:
                befores.append(_generalize(each.after_lead[: lead[0][0]], ALPHA))
    call_open = _shared_end(befores + middles)
    middle = middles[0] if middles else None
    if middle is not None and len(call_open) <= len(middle):
        call_close = shared_start([middle[: len(middle) - len(call_open)], *afters]).rstrip()
    else:
        call_close = shared_start(afters).rstrip()
    section_open = _shared_end(
        [before[: len(before) - len(call_open)] for before in befores]
    ).strip()
    section_closes = list(
        dict.fromkeys(
            after[len(call_close) :].strip() for after in afters if after.startswith(call_close)
        )
    )
    section_close = " ".join(text for text in section_closes if text)
    separator = ""
    if middle is not None and len(middle) >= len(call_close) + len(call_open):
        separator = middle[len(call_close) : len(middle) - len(call_open)]
    if shape.name_outside and NAME not in call_open:
        return f"the function's name is neither in the payload nor in the text before it ({_show(call_open)})"
    spec: dict[str, Any] = {}
    opening = call_open.strip()
    between = separator.strip()  # what separates two calls, when it is more than blanks
    ends = [marker for marker in turns.end_markers if marker]
    # After a call: the next call, a section's end, the turn's end or the text's end.
    following = [escape(text) for text in (*section_closes, *ends) if text] + ["$"]
    if not opening:
        if shape.content != "json" or shape.name_outside:
            return "nothing marks where a call starts"
        # Nothing but the JSON marks a call: inside a JSON object, a closing brace is followed by a
        # comma or another brace, never by the next object or what ends the calls.
        found = _json_prefix_pattern(one[spans1[0][0] : spans1[0][1]])
        if found is not None:
            patterns, shape = found
            spec["open_pattern"], braces = patterns.split("\x1f")
        else:
            first_key = regex.match(r'\{\s*"([^"\\]+)"', one[spans1[0][0] : spans1[0][1]])
            if first_key is None:
                return (
                    "nothing marks where a call starts, and its JSON has no first key to know it by"
                )
            spec["open_pattern"] = rf'(?=\{{\s*"{escape(first_key.group(1))}")'
            braces = r"(?<=\})"
        consumed = rf"(?:\s*{escape(between)}(?=\s*\{{))?" if between else ""
        spec["close_pattern"] = braces + consumed + r"(?=\s*(?:\{|" + "|".join(following) + "))"
    elif (
        any(mark in opening for mark in (NAME, NUMBER, CALL_ID))
        or regex.search(r"\s", opening)
        or shape.payload_start
    ):
        # A JSON payload must follow: text that only mentions the marker stays text.
        spec["open_pattern"] = pattern_with_stand_ins(opening) + (
            rf"(?=\s*{escape(shape.payload_start)})" if shape.payload_start else ""
        )
    else:
        spec["open"] = opening
    closing = call_close.strip()
    if "close_pattern" in spec:
        pass
    elif closing:
        # A separator that is more than blanks goes with the call before it (when another call follows).
        consumed = (
            rf"(?:\s*{escape(between)}(?=\s*{escape(_literal_head(opening))}))?"
            if between and _literal_head(opening)
            else ""
        )
        if shape.json_like:
            spec["close_pattern"] = (
                r"(?<=[}\]])\s*" + pattern_with_stand_ins(closing, name_group=False) + consumed
            )
        elif regex.search(r"\s", closing) or _has_stand_in(closing) or consumed:
            spec["close_pattern"] = pattern_with_stand_ins(closing, name_group=False) + consumed
        else:
            spec["close"] = closing
    else:
        head = _literal_head(opening)
        if not head:
            return "no text closes a call, and none starts the next one"
        alternatives = [f"(?={escape(head)})"] + [escape(marker) for marker in ends]
        spec["close_pattern"] = "|".join(alternatives)
    spec.update({"repeats": True, "content": shape.content})
    if shape.content_args:
        spec["content_args"] = shape.content_args
    spec["transform"] = shape.transform
    content_closes = [
        piece
        for text in (section_open, *section_closes)
        if text and not _has_stand_in(text)
        for piece in _markup_pieces(text)
    ]
    starts = [escape(section_open)] if section_open else []
    head = _literal_head(opening)
    if head:
        whole = head == opening.strip() and shape.payload_start
        starts.append(escape(head) + (rf"\s*{escape(shape.payload_start)}" if whole else ""))
    syntax = CallSyntax(spec, content_closes, starts, shape.description)
    return _verified(
        syntax, sections, turns, call_open, call_close, section_open, section_close, separator
    )


def _markup_pieces(text: str) -> list[str]:
    """`text` as its markup tokens when it is nothing else (each then ends the content on its own), else whole."""
    tokens = MARKUP_TOKEN.findall(text)
    return tokens if tokens and not MARKUP_TOKEN.sub("", text).strip() else [text]


def _has_stand_in(text: str) -> bool:
    return any(mark in text for mark in (NAME, NUMBER, CALL_ID))


def _json_prefix_pattern(call_text: str) -> tuple[str, _Shape] | None:
    """For a call written as a JSON object with nothing around it: a pattern of its text up to the
    arguments object, with the name as a group, the pattern of what closes it after the arguments,
    and the shape whose content is the arguments object. None unless the name comes first."""
    try:
        value = json.loads(call_text)
    except ValueError:
        return None
    paths = _call_paths(value, ALPHA, ALPHA_ARGUMENTS)
    if not paths:
        return None
    key_at = call_text.find(f'"{paths[1][-1]}"')
    brace = call_text.find("{", key_at)
    if key_at < 0 or brace < 0:
        return None
    try:
        _, end = json.JSONDecoder().raw_decode(call_text, brace)
    except ValueError:
        return None
    head, tail = call_text[:brace], call_text[end:].strip()
    if ALPHA not in head or not tail or tail.strip("}"):
        return None
    opening = pattern_with_stand_ins(head.replace(ALPHA, NAME)).replace(
        NAME_GROUP, r'(?P<name>[^"\\]+)'
    )
    closing = r"(?<=\})" + "".join(
        r"\s*\}" for _ in tail
    )  # the lookahead of what follows is added by _build
    transform = {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    what = ".".join(paths[1])
    shape = _Shape(
        f"a JSON object per call with nothing around it, the name before {what!r}",
        "json",
        {},
        transform,
        False,
        _json_arguments_spans,
    )
    return f"{opening}\x1f{closing}", shape


def _build_list(
    shape: _Shape,
    sections: _Sections,
    others: list[_Sections],
    spans: list[tuple[int, int]],
    turns: CallTurns,
) -> CallSyntax | str:
    one = sections.one
    befores = [one[: spans[0][0]]]
    for each in [sections, *others]:
        found = shape.spans(each.one, (ALPHA,))
        if found and each is not sections:
            befores.append(each.one[: found[0][0]])
        if each.after_lead is not None:
            lead = shape.spans(each.after_lead, (ALPHA,))
            if lead:
                befores.append(each.after_lead[: lead[0][0]])
        if each.two:
            two = shape.spans(each.two, (ALPHA, BETA))
            if two:
                befores.append(each.two[: two[0][0]])
    opening = _shared_end(befores).strip()
    closing = one[spans[0][1] :].strip()
    spec: dict[str, Any] = {}
    if opening and shape.payload_start:
        spec["open_pattern"] = (
            pattern_with_stand_ins(opening) + rf"(?=\s*{escape(shape.payload_start)})"
        )
    elif opening:
        spec["open"] = opening
    elif shape.content == "python-call-list":
        spec["open_pattern"] = r"(?=\[\s*[A-Za-z_][\w.\-]*\()"
    else:
        spec["open_pattern"] = r"(?=\[\s*\{)"
    ends = [escape(marker) for marker in turns.end_markers if marker]
    if closing:
        spec["close_pattern"] = r"(?<=\])\s*" + pattern_with_stand_ins(closing)
    elif ends:
        spec["close_pattern"] = r"(?<=\])\s*(?:" + "|".join(ends) + ")"
    spec.update({"content": shape.content, "transform_each": True, "transform": shape.transform})
    section_open = befores[0].strip()[: -len(opening)].strip() if opening else befores[0].strip()
    starts = (
        [
            pattern_with_stand_ins(opening)
            + (rf"\s*{escape(shape.payload_start)}" if shape.payload_start else "")
        ]
        if opening
        else []
    )
    syntax = CallSyntax(spec, [section_open] if section_open else [], starts, shape.description)
    return _verified(syntax, sections, turns, opening, closing, section_open, "", "")


def _typed(name: str, arguments: Any) -> Any:
    from ..tool_typing import tool_parameter_schemas, type_tool_calls

    call = {"function": {"name": name, "arguments": arguments}}
    type_tool_calls(call, tool_parameter_schemas(PROBE_TOOLS))
    return call["function"]["arguments"]


def _verified(
    syntax: CallSyntax,
    sections: _Sections,
    turns: CallTurns,
    call_open: str,
    call_close: str,
    section_open: str,
    section_close: str,
    separator: str,
) -> CallSyntax | str:
    """`syntax` with its findings when it parses every call render back, else what failed."""
    from ..parser import ResponseParser

    closes = [*syntax.content_closes, *(marker for marker in turns.end_markers if marker)]
    template = {
        "start_anchor": "\x03",
        "fields": {"tool_calls": syntax.field, "content": {"close": closes} if closes else {}},
    }
    cases = [(sections.one, [(ALPHA, ALPHA_ARGUMENTS)], "call")]
    if sections.two:
        cases.append(
            (sections.two, [(ALPHA, ALPHA_ARGUMENTS), (BETA, BETA_ARGUMENTS)], "two-calls")
        )
    if sections.typed:
        cases.append((sections.typed, [(BETA, BETA_ARGUMENTS)], "typed-call"))
    read = 0
    for text, expected, name in cases:
        if argument_defects(FINAL_MESSAGES[name], text):
            continue  # the chat template writes this call in a form no parser reads back (say, unquoted strings)
        read += 1
        try:
            parser = ResponseParser(template, prefix="", tools=PROBE_TOOLS)
            message, _ = parser.finalize(text)
        except (ResponseParseError, ValueError) as error:
            return f"it does not parse the render of {sections.renders[name].label}: {error}"
        got = [
            (c.get("function", {}).get("name"), c.get("function", {}).get("arguments"))
            for c in message.get("tool_calls", [])
        ]
        if got != expected:
            return (
                f"it reads {got} from the render of {sections.renders[name].label}, not {expected}"
            )
    if not read:
        return "the chat template writes every call in a form no parser reads back (strings without quotes)"
    one, two = sections.renders["call"], sections.renders.get("two-calls")
    answer = sections.renders["answer"]
    evidence = syntax.findings
    evidence.append(
        Finding(
            "fields.tool_calls.content",
            syntax.field["content"],
            f"the calls' payload is {syntax.description}: read back as every call's name and arguments",
            (answer, one),
        )
    )
    key = "open_pattern" if "open_pattern" in syntax.field else "open"
    if key in syntax.field:
        evidence.append(
            Finding(
                f"fields.tool_calls.{key}",
                syntax.field[key],
                f"the text before each call's payload ({_show(call_open)}), the same before the "
                "first call and the second"
                + (" with the function's name as a group" if NAME in call_open else ""),
                (one, two) if two else (answer, one),
            )
        )
    key = "close_pattern" if "close_pattern" in syntax.field else "close"
    if key in syntax.field:
        what = (
            f"the text after each call's payload ({_show(call_close.strip())})"
            if call_close.strip()
            else "no text ends a call: the next call's start or the end of the turn does"
        )
        evidence.append(
            Finding(
                f"fields.tool_calls.{key}",
                syntax.field[key],
                what,
                (one, two) if two else (answer, one),
            )
        )
    if section_open.strip() or section_close.strip():
        evidence.append(
            Finding(
                "fields.content.close",
                [t for t in (section_open, section_close) if t.strip()],
                f"markers around all the calls, written once for two calls ({_show(section_open)} before, "
                f"{_show(section_close)} after): they end the text before them and are dropped",
                (one, two) if two else (answer, one),
            )
        )
    if two is not None:
        evidence.append(
            Finding(
                "fields.tool_calls.repeats",
                True,
                f"two calls are written one after the other, separated by {_show(separator)}",
                (one, two),
            )
        )
    return syntax


def _plain(text: str) -> str:
    """`text` for a sentence: line breaks written as \\n."""
    return text.replace("\n", "\\n")


def _shown(text: str) -> str:
    return (
        text.replace(NAME, "NAME").replace(NUMBER, "N").replace(CALL_ID, "ID").replace(KEY, "KEY")
    )


def _show(text: str, limit: int = 80) -> str:
    shown = json.dumps(_shown(text), ensure_ascii=False)
    return shown if len(shown) <= limit else shown[: limit - 4] + '..."'
