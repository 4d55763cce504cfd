"""Replay: feed a pasted generation to the parser chunk by chunk, as a stream would.

A `Replay` is one session's transport state: the chunks of the current input
and how many of them have been fed. `replay_parse` rebuilds the parse at any
position, so stepping, playing and jumping all give the same picture.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from engine import load_template

from .chunking import make_chunks, token_pieces
from .limits import check_text_sizes, read_template, read_tools
from .parse_view import LiveParse


@dataclass
class Replay:
    """Per-session replay state: the chunks and how many have been fed.

    `key` identifies the input and chunking the chunks were cut from; `how_note`
    says which boundaries "tokens" used.
    """

    key: str
    chunks: list[str]
    position: int = 0
    how_note: str = ""


def replay_key(*inputs) -> str:
    """A key that changes when any input or chunking setting changes."""
    return str(hash(json.dumps([str(i) for i in inputs])))


def prepare_replay(template_text, prefix, generation, tools_text, how, size, seed, points, replay: Replay | None):
    """(template, tools, replay) for these inputs: the session's replay when the inputs are
    unchanged, else a new one at position 0. Raises InputError / TemplateError."""
    template = read_template(template_text)
    tools = read_tools(tools_text)
    check_text_sizes(prefix or "", generation or "")
    load_template(template)
    key = replay_key(template_text, prefix, generation, tools_text, how, size, seed, points)
    if replay is None or replay.key != key:
        note = f"tokens from {token_pieces(generation)[1]}" if how == "tokens" and generation else ""
        replay = Replay(key, make_chunks(generation or "", how, size, seed, points), 0, note)
    return template, tools, replay


def replay_parse(template: dict, prefix: str, tools: list | None, replay: Replay) -> LiveParse:
    """The parse after `replay.position` chunks, finalized when every chunk has been fed."""
    live = LiveParse(template, prefix or "", tools)
    for chunk in replay.chunks[: replay.position]:
        live.feed(chunk)
    if replay.position >= len(replay.chunks):
        live.finalize()
    return live
