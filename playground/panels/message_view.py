"""The message panels: the final message as JSON, as a chat shows it, and as an OpenAI stream."""

from __future__ import annotations

import json

from engine.openai_view import openai_deltas

from ..parse.parse_view import ParseView
from ..server import limits
from .markup import chat_code, chat_text, short_json

# Tool calls drawn in the chat view at most, and characters of a reasoning or content text
# (the message JSON has them all; a chat view rendering hundreds of kilobytes of markdown keeps the
# browser busy for seconds after a big paste).
CHAT_TOOL_CALLS = 20
CHAT_TEXT_CHARS = 4_000


# Above this many lines the message JSON is laid out one list item a line (a code editor with
# tens of thousands of lines costs the browser seconds to draw).
PRETTY_LINES = 2_000


# Above this many characters the message JSON is shown without syntax colours: the code editor
# draws a document it holds out of view in full, and a big one coloured (tens of thousands of
# elements) costs the browser seconds; uncoloured it is one element a line.
HIGHLIGHT_CHARS = 50_000


def message_language(text: str) -> str | None:
    """The code editor's language for message JSON `text`: "json", or None (plain) when it is big."""
    return "json" if len(text) <= HIGHLIGHT_CHARS else None


def message_json(message: dict | None) -> str:
    """The message as indented JSON text ("" when there is none); a big one with each key and
    each list item (a tool call) on one line."""
    if message is None:
        return ""
    pretty = json.dumps(message, ensure_ascii=False, indent=2)
    if pretty.count("\n") <= PRETTY_LINES:
        return pretty
    lines = []
    for key, value in message.items():
        name = json.dumps(key, ensure_ascii=False)
        if isinstance(value, list) and value:
            items = ",\n".join("    " + json.dumps(item, ensure_ascii=False) for item in value)
            lines.append(f"  {name}: [\n{items}\n  ]")
        else:
            lines.append(f"  {name}: {json.dumps(value, ensure_ascii=False)}")
    return "{\n" + ",\n".join(lines) + "\n}"


def _shown_text(text: str) -> str:
    """`text` as the chat draws it (`markup.chat_text`), up to CHAT_TEXT_CHARS characters, with
    a note of how many more the message JSON holds."""
    if len(text) <= CHAT_TEXT_CHARS:
        return chat_text(text)
    return (
        chat_text(text[:CHAT_TEXT_CHARS])
        + f"\n\n… and {len(text) - CHAT_TEXT_CHARS:,} more characters (the whole text is in the message JSON)"
    )


def chat_messages(message: dict | None) -> list[dict]:
    """The message as a chat shows it: reasoning as a collapsed thought, the content,
    each tool call with its arguments; other fields as small notes. Everything the model
    wrote is shown as text (`markup.chat_text`): a generation is untrusted, and the chat
    renders Markdown and HTML. Long texts and long lists of tool calls are cut
    (CHAT_TEXT_CHARS, CHAT_TOOL_CALLS), saying how much is left out."""
    if not message:
        return []
    shown: list[dict] = []
    reasoning = message.get("reasoning_content")
    if reasoning:
        shown.append(
            {
                "role": "assistant",
                "content": _shown_text(str(reasoning)),
                "metadata": {"title": "💭 Thought", "status": "done"},
            }
        )
    content = message.get("content")
    if content:
        shown.append(
            {
                "role": "assistant",
                "content": _shown_text(
                    content if isinstance(content, str) else short_json(content, CHAT_TEXT_CHARS)
                ),
            }
        )
    calls = message.get("tool_calls") or []
    for call in calls[:CHAT_TOOL_CALLS]:
        function = call.get("function", call) if isinstance(call, dict) else {}
        name = function.get("name", "?") if isinstance(function, dict) else "?"
        arguments = function.get("arguments", {}) if isinstance(function, dict) else call
        body = chat_code(json.dumps(arguments, ensure_ascii=False, indent=2), "json")
        shown.append(
            {
                "role": "assistant",
                "content": body,
                "metadata": {"title": f"🛠️ Tool call: {chat_text(str(name))}"},
            }
        )
    if len(calls) > CHAT_TOOL_CALLS:
        shown.append(
            {
                "role": "assistant",
                "content": f"… and {len(calls) - CHAT_TOOL_CALLS:,} more tool calls (all of them are in the message JSON)",
            }
        )
    others = {
        k: v
        for k, v in message.items()
        if k not in ("role", "reasoning_content", "tool_calls", "content")
    }
    for key, value in others.items():
        shown.append(
            {
                "role": "assistant",
                "content": f"{chat_text(key)}: {chat_text(short_json(value, 2000))}",
            }
        )
    return shown


def openai_stream(view: ParseView) -> str:
    """The parse as OpenAI chat-completion `choices[0].delta` objects, one JSON per line,
    followed by the check that streamed tool-call arguments add up to the final ones."""
    if view.template is None or view.error:
        return ""
    derived = openai_deltas(
        [logged.event for logged in view.events], view.template, tools=view.tools
    )
    cap = int(limits.current().answer_mb * 1_000_000)
    lines, size = [], 0
    for delta in derived.deltas:
        line = json.dumps(delta, ensure_ascii=False)
        size += len(line) + 1
        if size > cap:
            lines.append(
                f"// cut: the deltas pass {cap:,} characters (PLAYGROUND_LIMITS answer_mb); "
                "the message JSON holds the whole message"
            )
            break
        lines.append(line)
    for check in derived.checks:
        verdict = (
            "ok"
            if check.ok
            else f"MISMATCH: streamed {check.streamed!r}, expected {check.expected!r}"
        )
        lines.append(f"// tool call {check.index} ({check.name}): arguments pieces {verdict}")
    return "\n".join(lines)
