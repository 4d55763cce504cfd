"""The message panels: the final message as JSON, as a chat shows it, and as an OpenAI stream."""

from __future__ import annotations

import json

from engine.openai_view import openai_deltas

from .markup import short_json
from .parse_view import ParseView


def message_json(message: dict | None) -> str:
    """The message as indented JSON text ("" when there is none)."""
    return "" if message is None else json.dumps(message, ensure_ascii=False, indent=2)


def chat_messages(message: dict | None) -> list[dict]:
    """The message as a chat shows it: reasoning as a collapsed thought, the content,
    each tool call with its arguments; other fields as small notes."""
    if not message:
        return []
    shown: list[dict] = []
    reasoning = message.get("reasoning_content")
    if reasoning:
        shown.append({"role": "assistant", "content": str(reasoning), "metadata": {"title": "💭 Thought", "status": "done"}})
    content = message.get("content")
    if content:
        shown.append({"role": "assistant", "content": content if isinstance(content, str) else short_json(content, 4000)})
    for call in message.get("tool_calls") or []:
        function = call.get("function", call) if isinstance(call, dict) else {}
        name = function.get("name", "?") if isinstance(function, dict) else "?"
        arguments = function.get("arguments", {}) if isinstance(function, dict) else call
        body = "```json\n" + json.dumps(arguments, ensure_ascii=False, indent=2) + "\n```"
        shown.append({"role": "assistant", "content": body, "metadata": {"title": f"🛠️ Tool call: {name}"}})
    others = {k: v for k, v in message.items() if k not in ("role", "reasoning_content", "tool_calls", "content")}
    for key, value in others.items():
        shown.append({"role": "assistant", "content": f"`{key}`: {short_json(value, 2000)}"})
    return shown


def openai_stream(view: ParseView) -> str:
    """The parse as OpenAI chat-completion `choices[0].delta` objects, one JSON per line,
    followed by the check that streamed tool-call arguments add up to the final ones."""
    if view.template is None or view.error:
        return ""
    derived = openai_deltas([logged.event for logged in view.events], view.template, tools=view.tools)
    lines = [json.dumps(delta, ensure_ascii=False) for delta in derived.deltas]
    for check in derived.checks:
        verdict = "ok" if check.ok else f"MISMATCH: streamed {check.streamed!r}, expected {check.expected!r}"
        lines.append(f"// tool call {check.index} ({check.name}): arguments pieces {verdict}")
    return "\n".join(lines)
