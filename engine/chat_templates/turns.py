"""Render diffing shared by the chat-template check and template inference.

Two renders of the same conversation that differ in one thing show where that thing is
written; these functions find where they part (`common_length`, `loose_common`), where a
rendered final turn starts after its prompt (`locate_turn`), and argument values a chat
template writes in a form that loses them (`argument_defects`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import regex

from .render import token_boundary


def common_length(a: str, b: str) -> int:
    """How many characters `a` and `b` share at their start."""
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def loose_whitespace(text: str) -> str:
    """A regex for `text` in which every run of whitespace matches any run (or none)."""
    return r"\s*".join(regex.escape(piece) for piece in regex.split(r"\s+", text))


@dataclass
class Turn:
    """Where the final turn's generation starts in a full render."""

    generation: str
    # Text of the generation prompt that the rendered turn does not contain.
    missing: str


def locate_turn(
    prompt: str,
    generation_prompt: str,
    full: str,
    markers: tuple[str, ...],
    history_texts: list[str],
) -> Turn | str:
    """Split `full` (history + final message) after the generation prompt.

    The history part of `full` may differ from the prompt's (templates render a turn
    differently once a later one follows), so the turn is found as the last copy of the
    generation prompt (whitespace runs may differ) between where the two renders part and
    the first text of the message; failing that, of its longest start that ends a markup
    token, the rest being what the rendered turn lacks; failing that, where the renders part.

    Returns the `Turn`, or a sentence saying why the rendered turn cannot be taken as a
    generation after `prompt`.
    """
    turn = find_turn(prompt, generation_prompt, full, markers)
    if isinstance(turn, Turn):
        if any(text in turn.missing for text in history_texts):
            return (
                "the chat template renders the earlier turns differently once this message follows them "
                f"(the prompt's {show(turn.missing, 80)} is not in the finished conversation), so the turn "
                "cannot be taken as a generation after that prompt"
            )
        if any(text in turn.generation for text in history_texts):
            return (
                "the turn the chat template writes for this message repeats text of earlier turns "
                f"({show(turn.generation, 80)}), so it cannot be taken as a generation after that prompt"
            )
    return turn


def find_turn(
    prompt: str, generation_prompt: str, full: str, markers: tuple[str, ...]
) -> Turn | str:
    """The final turn of `full` (a render of the conversation with the final message) after
    `prompt` (the same conversation without it, `generation_prompt` the text its generation
    prompt adds): where the full render parts from the prompt, whitespace aside, or else after
    the longest start of the generation prompt it writes before the first of `markers` (the
    message's own texts). A `Turn`, or a sentence saying why there is none (no marker is
    written)."""
    found = [full.find(marker) for marker in markers]
    found = [at for at in found if at >= 0]
    if not found:
        return "the chat template writes none of this message (no reasoning, content or tool call of it)"
    text_at = min(found)
    if full.startswith(prompt) and len(prompt) <= text_at:
        return Turn(full[len(prompt) :], "")
    in_prompt, in_full = loose_common(prompt, full)
    if in_prompt == len(prompt) and in_full <= text_at:
        return Turn(full[in_full:], "")
    parted = back_to_boundary(full, min(in_full, text_at))
    head = _written_part(generation_prompt, full[:text_at], parted, from_start=True)
    tail = _written_part(generation_prompt, full[:text_at], parted, from_start=False)
    if tail is not None and (head is None or tail[0] > head[0]):
        # The generation prompt writes a turn of its own first (instructions), then the header
        # the history's turns start with: the turn follows that header.
        size, end = tail
        return Turn(full[end:], generation_prompt[: len(generation_prompt) - size])
    if head is not None:
        size, end = head
        return Turn(full[end:], generation_prompt[size:])
    inserted = _inserted_in_prompt(prompt, full, parted, text_at)
    if inserted is not None:
        # The prompt writes text the finished conversation leaves out (an instruction added to
        # the last user message only while it is last), then the rest of the prompt as the
        # finished conversation writes it: the turn follows that rest.
        missing, end = inserted
        return Turn(full[end:], missing)
    return Turn(full[parted:], prompt[back_to_boundary(prompt, in_prompt) :])


def _inserted_in_prompt(
    prompt: str, full: str, parted: int, text_at: int
) -> tuple[str, int] | None:
    """(the text the prompt inserts, where the turn starts in `full`) when `prompt` is `full` up
    to `parted`, then text `full` leaves out, then the longest stretch of `full` from `parted`
    (before the message's first text, at `text_at`) that ends the prompt; None when the prompt
    is not written so."""
    if not prompt.startswith(full[:parted]):
        return None
    rest = prompt[parted:]
    for end in range(text_at, parted, -1):
        written = full[parted:end]
        if len(written) < len(rest) and rest.endswith(written):
            return rest[: len(rest) - len(written)], end
    return None


def _written_part(
    generation_prompt: str, before_text: str, parted: int, from_start: bool
) -> tuple[int, int] | None:
    """(size, where it ends in `before_text`) of the longest start (or, not `from_start`, end)
    of the generation prompt, cut at a token boundary and not blank, that `before_text` writes
    at or after `parted` (its last copy, whitespace runs may differ); None when none is."""
    for size in range(len(generation_prompt), 0, -1):
        at = 0 if from_start else len(generation_prompt) - size
        part = generation_prompt[at : at + size]
        if not part.strip():
            if from_start:
                return None
            continue
        cut = size if from_start else at
        if 0 < cut < len(generation_prompt) and not token_boundary(generation_prompt, cut):
            continue
        ends = [
            m.end()
            for m in regex.finditer(loose_whitespace(part), before_text)
            if m.end() >= parted
        ]
        if ends:
            return size, ends[-1]
    return None


def loose_common(prompt: str, full: str) -> tuple[int, int]:
    """How far `prompt` and `full` agree when runs of whitespace may differ: (offset in prompt, in full)."""
    i = j = 0
    while i < len(prompt) and j < len(full):
        if prompt[i].isspace() or full[j].isspace():
            while i < len(prompt) and prompt[i].isspace():
                i += 1
            while j < len(full) and full[j].isspace():
                j += 1
        elif prompt[i] == full[j]:
            i += 1
            j += 1
        else:
            break
    return i, j


def back_to_boundary(text: str, at: int) -> int:
    """`at`, moved back to the nearest token boundary of `text` (`render.token_boundary`)."""
    while 0 < at < len(text) and not token_boundary(text, at):
        at -= 1
    return at


def argument_defects(message: dict, turn: str) -> list[str]:
    """Arguments the chat template writes in a form that loses their value, as phrases.

    Found: a string written bare after its key (``label=wake up``), a string holding a
    quote written between the same, unescaped quotes (``"Team "offsite""``), and an object
    or list written as Python's repr inside string delimiters (``"{'room': ...}"``).
    """
    defects = []
    for call in message.get("tool_calls") or ():
        name = call["function"]["name"]
        for key, value in call["function"]["arguments"].items():
            where = f"{name}'s argument {key}"
            if isinstance(value, str):
                if json.dumps(value, ensure_ascii=False) in turn:
                    continue
                for found in regex.finditer(regex.escape(value), turn):
                    before = turn[found.start() - 1] if found.start() else ""
                    if before in "=:":
                        defects.append(f"{where} without quotes ({key}{before}{value})")
                        break
                    if (
                        before in "\"'"
                        and before in value
                        and turn[found.end() : found.end() + 1] == before
                    ):
                        defects.append(
                            f"{where} between unescaped quotes ({before}{value}{before})"
                        )
                        break
            elif isinstance(value, (dict, list)):
                if any(
                    json.dumps(value, ensure_ascii=False, separators=s) in turn
                    for s in ((", ", ": "), (",", ":"))
                ):
                    continue
                found = turn.find(repr(value))
                if found > 0 and turn[found - 1] not in "=:([, ":
                    defects.append(
                        f"{where} as Python's repr inside a string ({show(repr(value), 40)})"
                    )
    return defects


def show(value: Any, limit: int = 160) -> str:
    """`value` as JSON text, cut to `limit` characters (`shorten`)."""
    return shorten(json.dumps(value, ensure_ascii=False), limit)


def shorten(text: str, limit: int) -> str:
    """`text` itself, or its first `limit` - 3 characters and ``...`` when longer than `limit`."""
    return text if len(text) <= limit else text[: limit - 3] + "..."
