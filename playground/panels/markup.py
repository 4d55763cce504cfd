"""Small HTML helpers shared by the page's panels: escaping, visible whitespace, short JSON."""

from __future__ import annotations

import html
import json
import re
from typing import Any

_WHITESPACE = {" ": "·", "\t": "→", "\n": "↵", "\r": "␍"}
_WHITESPACE_RE = re.compile("[ \t\n\r]")


def escape(text: str, *, quote: bool = False) -> str:
    """`text` escaped for HTML: the one escaping helper of code that writes HTML (templates
    escape by themselves, `playground.panels.fragments`). Between tags quotes stay readable;
    `quote=True` escapes them too, for a value inside an attribute."""
    return html.escape(text, quote=quote)


def key_path(path: str) -> str:
    """A template key path (``fields.tool_calls.close_pattern``) escaped for HTML, breakable only
    after its dots: a narrow screen wraps it between names, never inside one."""
    return ".<wbr>".join(escape(part) for part in path.split("."))


def visible_whitespace(text: str) -> str:
    """HTML of `text` with spaces, tabs and newlines drawn as ·, → and ↵ (dimmed)."""
    return _WHITESPACE_RE.sub(
        lambda found: f'<span class="rt-ws">{_WHITESPACE[found.group()]}</span>',
        escape(text),
    )


def breakable_whitespace(text: str) -> str:
    """`visible_whitespace`, with a line-break opportunity after each drawn space, tab and newline
    (the symbols replace the spaces a browser would break at, so long JSON would wrap mid-word)."""
    return visible_whitespace(text).replace("</span>", "</span><wbr>")


# Markdown's punctuation: each is written with a backslash so it is shown, never interpreted.
_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#+\-.!|~>])")
_BACKTICKS = re.compile(r"`+")


def chat_text(text: str) -> str:
    """`text` for a chat bubble (Markdown with HTML): every character shown as itself, no tag,
    link, image or emphasis made from it."""
    return _MARKDOWN.sub(r"\\\1", escape(text, quote=True))


def chat_code(text: str, language: str = "") -> str:
    """`text` as a fenced code block for a chat bubble: a fence longer than any run of
    backticks inside, so nothing in it ends the block early."""
    fence = "`" * max(3, 1 + max((len(run) for run in _BACKTICKS.findall(text)), default=0))
    return f"{fence}{language}\n{text}\n{fence}"


def short_json(value: Any, limit: int = 300) -> str:
    """Compact JSON of `value`, cut to `limit` characters with an ellipsis."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"
