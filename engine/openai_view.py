"""The OpenAI streaming view: what a compatible server would send for these events.

Serving engines turn parser events into `choices[0].delta` objects. Text is
easy; tool-call arguments are where they go wrong, because OpenAI streams
them as append-only pieces of a JSON *string* while the model is still
writing the object. This module derives that stream from our events and
checks it: while a `json` tool-call region is open it previews the dirty
body with `partial-json-parser`, keeping only values that are complete, so
every piece it emits is final; at `region_close` it sends the rest, so the
pieces concatenate to ``json.dumps(arguments, ensure_ascii=False)`` of the
region's final value.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from dataclasses import field as dataclass_field
from typing import Any

from partial_json_parser import Allow, loads

from .account import ParseWarning
from .parser import ResponseParser
from .template import FieldSpec, ResponseTemplate, load_template
from .tool_typing import tool_parameter_schemas, type_tool_calls
from .transform import apply_transform

TEXT_KEYS = ("reasoning_content", "content")
# Incomplete strings, numbers and literals are left out of a preview: only containers may be partial.
_COMPLETE_VALUES_ONLY = Allow.OBJ | Allow.ARR


@dataclass
class ArgumentsCheck:
    """Whether one streamed tool call's argument pieces add up to its final value.

    Attributes:
        index: the tool call's `index` in the stream.
        name: its function name.
        streamed: the concatenated `function.arguments` pieces.
        expected: ``json.dumps(final_arguments, ensure_ascii=False)``.
        ok: `streamed` parses to the final arguments (and equals `expected`).
        retracted: a preview would have had to change text already sent (never sent; reported).
        error: the region's parse error when the call was announced and then failed to parse
            (with ``on_error="keep"``: its text then streams as content, but the deltas
            already sent for the call cannot be taken back), else None.
    """

    index: int
    name: str | None
    streamed: str
    expected: str
    ok: bool
    retracted: bool = False
    error: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class OpenAIView:
    """The derived stream.

    Attributes:
        deltas: `choices[0].delta` dicts in order: ``{"role": "assistant"}``, then
            ``{"reasoning_content": str}``, ``{"content": str}`` and
            ``{"tool_calls": [{"index", "id", "type", "function": {"name", "arguments"}}]}``
            (the first delta of a call has `id`, `type` and `function.name`; later ones
            only `index` and `function.arguments`).
        checks: one `ArgumentsCheck` per tool call.
        warnings: the parse's `parser.warnings` (`engine.account.ParseWarning`s: text it
            probably put where it does not belong), when `openai_view` parsed it; [] from
            `openai_deltas`, which sees only events.
        ok: every check passed.
    """

    deltas: list[dict]
    checks: list[ArgumentsCheck] = dataclass_field(default_factory=list)
    warnings: list[ParseWarning] = dataclass_field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(check.ok for check in self.checks)

    def text(self, key: str) -> str:
        """All `key` (``"content"`` or ``"reasoning_content"``) deltas joined."""
        return "".join(delta.get(key, "") for delta in self.deltas)

    def arguments(self, index: int) -> str:
        """All `function.arguments` pieces of tool call `index` joined."""
        return "".join(
            call.get("function", {}).get("arguments", "")
            for delta in self.deltas
            for call in delta.get("tool_calls", ())
            if call["index"] == index
        )

    def to_dict(self) -> dict:
        return {
            "deltas": self.deltas,
            "checks": [check.to_dict() for check in self.checks],
            "warnings": [warning.to_dict() for warning in self.warnings],
            "ok": self.ok,
        }


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _function_of(call: Any) -> tuple[str | None, Any]:
    """`(name, arguments)` of a tool-call value shaped like ``{"function": {...}}`` or ``{"name", "arguments"}``."""
    if not isinstance(call, dict):
        return None, None
    function = call.get("function", call)
    if not isinstance(function, dict):
        return None, None
    name = function.get("name")
    return (name if isinstance(name, str) else None), function.get("arguments")


def _stable_prefix(arguments: Any) -> str:
    """The part of the arguments' JSON that later text cannot change: drop trailing closers."""
    text = _dumps(arguments)
    return text.rstrip("}]") if isinstance(arguments, (dict, list)) else ""


class _Call:
    def __init__(self, index: int):
        self.index = index
        self.name: str | None = None
        self.sent = ""
        self.retracted = False


class _TextStream:
    """Text deltas of one key: leading whitespace dropped, trailing whitespace held until more text."""

    def __init__(self):
        self.started = False
        self.pending = ""
        self.sent = ""

    def add(self, text: str) -> str:
        if not self.started:
            text = text.lstrip()
            if not text:
                return ""
            self.started = True
        text = self.pending + text
        body = text.rstrip()
        self.pending = text[len(body) :]
        self.sent += body
        return body


class _Builder:
    def __init__(self, template: ResponseTemplate, tools: list | None):
        self.template = template
        self.schemas = tool_parameter_schemas(tools)
        self.deltas: list[dict] = [{"role": "assistant"}]
        self.text_streams = {key: _TextStream() for key in TEXT_KEYS}
        self.calls: list[_Call] = []
        self.region_calls: list[_Call] = []  # calls of the open tool-call region
        self.body: list[str] = []
        self.checks: list[ArgumentsCheck] = []

    def tool_field(self, name: str) -> FieldSpec | None:
        spec = self.template.fields.get(name)
        return spec if spec is not None and spec.is_tool_call else None

    def handle(self, event: dict) -> None:
        name = event.get("field")
        spec = self.tool_field(name)
        kind = event["type"]
        if spec is not None:
            if kind == "region_open":
                self.body, self.region_calls = [], []
            elif kind == "region_chunk":
                self.body.append(event["text"])
                if spec.content == "json":
                    self.preview(spec)
            elif kind == "region_close" and "error" in event:
                self.fail(event["error"])
            elif kind == "region_close" and "value" in event:
                self.close(event["value"], spec)
            return
        if name in self.text_streams and kind == "region_chunk":
            text = self.text_streams[name].add(event["text"])
            if text:
                self.deltas.append({name: text})

    def preview(self, spec: FieldSpec) -> None:
        body = "".join(self.body).strip()
        if not body:
            return
        try:
            content = loads(body, _COMPLETE_VALUES_ONLY)
            if spec.transform_each:
                if not isinstance(content, list):
                    return
                values = [
                    apply_transform(spec.transform, item)
                    for item in content
                    if isinstance(item, dict)
                ]
            elif spec.transform is not None:
                values = [apply_transform(spec.transform, {"content": content})]
            else:
                values = [content]
        except (ValueError, KeyError, TypeError, IndexError, RecursionError):
            return  # not previewable yet (a missing key, malformed text): wait for more or for the close
        if self.schemas:
            type_tool_calls(values if spec.transform_each else values[0], self.schemas, typed=True)
        for position, value in enumerate(values):
            name, arguments = _function_of(value)
            if name is None:
                break  # later calls wait for this one's name
            call = self.call_at(position)
            self.send(call, name, _stable_prefix(arguments) if arguments is not None else "")

    def call_at(self, position: int) -> _Call:
        while len(self.region_calls) <= position:
            call = _Call(len(self.calls))
            self.calls.append(call)
            self.region_calls.append(call)
        return self.region_calls[position]

    def send(self, call: _Call, name: str, arguments: str) -> None:
        """Send the name once, then the part of `arguments` not yet sent (append-only)."""
        if call.name is None:
            call.name = name
            self.deltas.append(
                {
                    "tool_calls": [
                        {
                            "index": call.index,
                            "id": f"call_{call.index}",
                            "type": "function",
                            "function": {"name": name, "arguments": ""},
                        }
                    ]
                }
            )
        if arguments.startswith(call.sent):
            piece = arguments[len(call.sent) :]
            if piece:
                call.sent = arguments
                self.deltas.append(
                    {"tool_calls": [{"index": call.index, "function": {"arguments": piece}}]}
                )
        else:
            call.retracted = True

    def fail(self, error: str) -> None:
        """A tool-call region failed to parse: its text comes back as content events. Calls the
        previews already announced cannot be withdrawn; each is reported as a failed check."""
        for call in self.region_calls:
            if call.name is not None:
                self.checks.append(
                    ArgumentsCheck(
                        call.index, call.name, call.sent, "", False, call.retracted, error
                    )
                )
        self.region_calls, self.body = [], []

    def close(self, value: Any, spec: FieldSpec) -> None:
        values = value if isinstance(value, list) else [value]
        for position, item in enumerate(values):
            name, arguments = _function_of(item)
            call = self.call_at(position)
            if arguments is None:
                arguments = {}
            final = _dumps(arguments)
            self.send(call, name or "", final)
            streamed = call.sent
            try:
                ok = streamed == final and json.loads(streamed) == arguments and not call.retracted
            except ValueError:
                ok = False
            self.checks.append(
                ArgumentsCheck(call.index, call.name, streamed, final, ok, call.retracted)
            )
        self.region_calls, self.body = [], []


def openai_deltas(
    events: Iterable[dict],
    template: dict | str | ResponseTemplate,
    *,
    tools: list[dict | Callable] | None = None,
) -> OpenAIView:
    """Derive the OpenAI `choices[0].delta` stream from parser events.

    Args:
        events: every event of one parse in order (initial events first), as emitted by
            `ResponseParser` (positions optional).
        template: the template that produced them (tells which fields are tool calls and
            how their transform maps the JSON body).
        tools: the same tools given to the parser, so previews are typed like final values.

    Returns:
        An `OpenAIView`. Text deltas join to the whitespace-stripped text of each key's
        chunks; tool-call arguments are append-only and join to the final arguments' JSON
        (``"{}"`` for no arguments, non-ASCII unescaped). Fields other than
        `reasoning_content`, `content` and tool-call fields are not streamed.

    Raises:
        TemplateError: the template is invalid.
    """
    builder = _Builder(load_template(template), tools)
    for event in events:
        builder.handle(event)
    return OpenAIView(builder.deltas, builder.checks)


def openai_view(
    generation: str,
    template: dict | str | ResponseTemplate,
    *,
    prefix: str,
    tools: list[dict | Callable] | None = None,
    chunks: list[str] | None = None,
    on_error: str = "raise",
) -> OpenAIView:
    """Parse `generation` (fed as `chunks` when given, else one piece) and derive its OpenAI stream.

    With ``on_error="keep"`` it shows what a server that falls back to content streams: the
    text of a tool call that does not parse arrives as content deltas.

    Raises:
        TemplateError, ValueError (no prefix), ResponseParseError: as `parse_response`.
    """
    loaded = load_template(template)
    parser = ResponseParser(loaded, prefix, tools=tools, on_error=on_error)
    events = list(parser.initial_events)
    for piece in chunks if chunks is not None else [generation]:
        events += parser.feed(piece)
    _, final_events = parser.finalize()
    view = openai_deltas(events + final_events, loaded, tools=tools)
    view.warnings = list(parser.warnings)
    return view
