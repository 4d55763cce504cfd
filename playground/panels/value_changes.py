"""Values the parse changed on their way into the message, marked beside the message view.

A tool call's arguments are not always the text the model wrote: a tagged value's
surrounding whitespace is stripped when its value parser falls back to text, a number or a
boolean is read from a tag's text, a string is cast by the tool's schema (``"3"`` to ``3``),
JSON is decoded from text. Each is right by the template's rules, and each silently changes
a value, so `value_changes` lists them: for every tool-call region of a finished parse, the
region's body is read again the way the content parser reads it without its value parser
(the text as written, for tagged formats) and without the tool's schema (the value before
typing), and every argument whose final value differs is named with what happened to it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from engine import TemplateError, load_template
from engine.content import parse_content
from engine.message import MessageBuilder

from ..parse.parse_view import ParseView
from .markup import escape

# Tool-call regions read again at most (a long parse lists the first ones).
REGIONS_READ = 50
# Changes listed at most, and characters of a value shown.
CHANGES_LISTED = 20
SHOWN = 60
# Content parsers whose values come from tags of text.
TAGGED = ("xml-inline", "kv-lines")


@dataclass(frozen=True)
class ValueChange:
    """One argument whose value is not the text the model wrote.

    Attributes:
        path: where it is in the message (``tool_calls[0].function.arguments.city``).
        written: the text the model wrote for it (a tag's text, or a JSON string), or None.
        value: the value in the message.
        how: what happened ("whitespace stripped", "number read from the text", ...).
    """

    path: str
    written: str | None
    value: Any
    how: str


def _regions(view: ParseView, names: set[str]) -> list[tuple[str, int, int, dict, Any]]:
    """(field, body start, body end, captures, value) of each closed region of `names`, in order."""
    captures = {span.stream_start: span.captures for span in view.spans if span.kind == "open"}
    opened: dict[str, list[int]] = {}
    found = []
    for logged in view.events:
        event = logged.event
        field = event.get("field")
        if field not in names or "start" not in event:
            continue
        if event["type"] == "region_open":
            opened.setdefault(field, []).append(event)
        elif event["type"] == "region_close" and opened.get(field):
            start = opened[field].pop()
            found.append(
                (
                    field,
                    start["end"],
                    event["start"],
                    captures.get(start["start"], {}),
                    event.get("value"),
                )
            )
            if len(found) >= REGIONS_READ:
                break
    return found


def _calls(value: Any) -> list[dict]:
    """The calls of a tool-call region's value: one call, or a list of them."""
    items = value if isinstance(value, list) else [value]
    return [item for item in items if isinstance(item, dict)]


def _arguments(call: dict) -> tuple[str, dict] | None:
    """(path inside the call, arguments dict) of an OpenAI-shaped call, or of a bare arguments dict."""
    function = call.get("function")
    if isinstance(function, dict) and isinstance(function.get("arguments"), dict):
        return "function.arguments", function["arguments"]
    for key in ("arguments", "parameters"):
        if isinstance(call.get(key), dict):
            return key, call[key]
    return None


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if value is None:
        return "null"
    return "object" if isinstance(value, dict) else "list"


def _how(written: str | None, before: Any, value: Any) -> tuple[str | None, str] | None:
    """(the text as written, what happened) for one argument, or None when it is as written."""
    if isinstance(value, str):
        text = written if written is not None else before if isinstance(before, str) else None
        if text is None or text == value:
            return None
        if text.strip() == value:
            return text, "whitespace around it stripped"
        return text, "changed"
    if written is not None:
        return written, f"{_kind(value)} read from the text"
    if isinstance(before, str):
        return before, f"{_kind(value)} read from a string (the tool's schema says so)"
    return None


def value_changes(view: ParseView) -> list[ValueChange]:
    """The tool-call arguments of a finished parse whose values are not what the model wrote."""
    if not view.finished or not view.template or not view.events:
        return []
    try:
        template = load_template(view.template)
    except TemplateError:
        return []
    fields = {name: spec for name, spec in template.fields.items() if spec.is_tool_call}
    if not fields:
        return []
    untyped = MessageBuilder(template, {}, 0.2)
    changes: list[ValueChange] = []
    counts: dict[str, int] = {}
    for name, start, end, captures, value in _regions(view, set(fields)):
        spec, body = fields[name], view.stream[start:end]
        try:
            before = untyped.value(spec, body, captures, None)
            written = (
                parse_content(
                    spec.content,
                    body,
                    {
                        k: v
                        for k, v in spec.content_args.items()
                        if k not in ("value_parser", "value_parser_by")
                    },
                )
                if spec.content in TAGGED
                else {}
            )
        except (ValueError, TimeoutError):
            continue
        for call, untyped_call in zip(_calls(value), _calls(before)):
            index = counts.get(name, 0)
            counts[name] = index + 1
            found, found_before = _arguments(call), _arguments(untyped_call)
            if found is None:
                continue
            where, arguments = found
            before_arguments = found_before[1] if found_before else {}
            texts = written if isinstance(written, dict) and len(_calls(value)) == 1 else {}
            for key, argument in arguments.items():
                text = texts.get(key)
                how = _how(
                    text if isinstance(text, str) else None, before_arguments.get(key), argument
                )
                if how is not None:
                    path = (
                        f"{name}[{index}].{where}.{key}"
                        if spec.repeats
                        else f"{name}.{where}.{key}"
                    )
                    changes.append(ValueChange(path, how[0], argument, how[1]))
    return changes


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"


def value_changes_html(view: ParseView) -> str:
    """The changed values as a short list under the message ("" when there are none)."""
    changes = value_changes(view)
    if not changes:
        return ""
    items = "".join(
        f'<li data-path="{escape(change.path)}"><code>{escape(change.path)}</code>: {escape(change.how)}: '
        f"<code>{escape(_shown(change.written))}</code> → <code>{escape(_shown(change.value))}</code></li>"
        for change in changes[:CHANGES_LISTED]
    )
    more = (
        f"<li>… and {len(changes) - CHANGES_LISTED} more</li>"
        if len(changes) > CHANGES_LISTED
        else ""
    )
    return (
        f'<div class="rt-value-changes" id="value-changes"><b>△ {len(changes)} value'
        f"{'s' if len(changes) != 1 else ''} not as the model wrote {'them' if len(changes) != 1 else 'it'}</b>"
        f"<ul>{items}{more}</ul></div>"
    )
