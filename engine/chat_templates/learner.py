"""Template inference, the learners in order, and the candidate templates they make.

`learn` renders the probes in every thinking mode and runs each part's learner in turn
(`anchor`, `reasoning`, `content_closes`, `calls`), then the other evidence where it is
given or found (`source_text`, `system_prompt`, `tokens`, `examples`). `candidates`
puts the parts together as response templates, most specific first, for `infer_template`
to check.
"""

from __future__ import annotations

import time
from typing import Any

import regex

from .anchor import header_without, learn_anchor
from .calls import CallTurns, learn_call_syntax
from .content_closes import (
    learn_content_wrapper,
    learn_next_headers,
    learn_stray_reasoning_close,
    learn_turn_end,
)
from .markup import escape, pattern_with_stand_ins
from .parts import InferenceError, Notebook, Parts
from .probes import BETA, InferenceTimeout, Probe
from .reasoning import learn_reasoning
from .render import (
    ChatTemplateRenderer,
    ChatTemplateRenderError,
    find_thinking_switch,
    thinking_values,
)


def probes_for(
    chat_template: str, bos_token: str, eos_token: str, deadline: float | None
) -> tuple[str | None, list[Probe]]:
    """The thinking switch and one probe per thinking mode."""
    try:
        switch = find_thinking_switch(chat_template, bos_token=bos_token, eos_token=eos_token)
    except ChatTemplateRenderError:
        switch = None
    modes = (
        list(zip(thinking_values(switch), ("thinking on", "thinking off")))
        if switch
        else [(None, "")]
    )
    probes = [
        Probe(
            ChatTemplateRenderer(chat_template, bos_token, eos_token, switch, thinking),
            mode,
            deadline,
        )
        for thinking, mode in modes
    ]
    return switch, probes


def learn(chat_template: str, bos_token: str, eos_token: str, deadline: float | None) -> Parts:
    """Every part of the template the renders show.

    Raises:
        InferenceError: the chat template renders no first turn, or no prompt shows where the
            new turn starts.
        InferenceTimeout: past the deadline.
    """
    switch, probes = probes_for(chat_template, bos_token, eos_token, deadline)
    rendered = [probe for probe in probes if probe.prompt("first-turn") is not None]
    if not rendered:
        refusal = next(iter(probes[0].refusals), "it renders nothing")
        raise InferenceError(
            f"the chat template does not render a first user turn with a generation prompt: {refusal}"
        )
    parts = Parts(rendered, eos_token, Notebook(), switch)
    learn_anchor(parts)
    learn_reasoning(parts)
    learn_turn_end(parts)
    learn_calls(parts)
    learn_next_headers(parts)
    learn_content_wrapper(parts)
    learn_stray_reasoning_close(parts)
    _note_render_help(parts)
    return parts


def _note_render_help(parts: Parts) -> None:
    """Say what the renders needed that no caller passes (variables rendered empty, `tools=[]`)."""
    filled = sorted({name for probe in parts.probes for name in probe.renderer.filled})
    if filled:
        parts.book.notes.append(
            "the chat template reads "
            + ", ".join(repr(name) for name in filled)
            + ", which no caller passes (apply_chat_template does not): rendered with "
            + ("it" if len(filled) == 1 else "them")
            + " empty"
        )
    if any(probe.renderer.empty_tools for probe in parts.probes):
        parts.book.notes.append(
            "the chat template iterates tools even when none are given: rendered with tools=[]"
        )


def learn_calls(parts: Parts) -> None:
    """The tool-call syntax from every mode's call renders."""
    modes = []
    for probe in parts.probes:
        answer = probe.turn("answer")
        if answer is None:
            continue
        two = probe.turn("two-calls")
        if two is not None and BETA not in two.text:
            parts.book.notes.append(
                f"{probe.label('the render of two calls')} writes only the first one"
            )
            two = None
        modes.append(
            CallTurns(
                answer,
                probe.turn("call"),
                two,
                probe.turn("typed-call"),
                probe.turn("lead-and-call"),
                list(parts.closes),
                parts.generation_prompts.get(probe.mode, ""),
            )
        )
    found = learn_call_syntax(modes) if modes else "no answer renders"
    if isinstance(found, str):
        parts.book.notes.append(f"no tool_calls field: {found}")
        return
    parts.calls = found
    parts.book.findings += found.findings
    for marker in found.content_closes:
        parts.add_close(marker)
    if found.prewritten:
        marker = found.prewritten.strip()
        header_without(parts, marker)
        if parts.add_close(marker):
            two = next(
                f.renders for f in found.findings if f.key.startswith("fields.tool_calls.open")
            )
            parts.book.find(
                "fields.content.close",
                marker,
                "the prompt writes it at the end, where a call's open starts: when no call follows, "
                "it is a marker, not text",
                *two,
            )


def candidates(parts: Parts) -> list[tuple[str, dict]]:
    """(description, template) for each candidate, most specific first."""
    anchor: dict[str, Any]
    if any(regex.search(r"\s", text) for text in parts.anchors):
        # Blanks inside an anchor vary between prompts (a blank line after one turn, not another).
        anchor = {
            "start_anchor_pattern": "|".join(pattern_with_stand_ins(text) for text in parts.anchors)
        }
    else:
        anchor = {
            "start_anchor": parts.anchors[0] if len(parts.anchors) == 1 else list(parts.anchors)
        }
    closes = parts.closes
    content = {"close": closes[0] if len(closes) == 1 else list(closes)} if closes else {}

    def template(reasoning: dict | None, calls: dict | None) -> dict:
        fields: dict[str, Any] = {}
        if reasoning:
            fields["reasoning_content"] = reasoning
        if calls:
            fields["tool_calls"] = calls
        fields["content"] = content
        return {"defaults": {"role": "assistant"}, **anchor, "fields": fields}

    reasoning = (
        {"open": parts.reasoning.open, "close": parts.reasoning.close} if parts.reasoning else None
    )
    calls = parts.calls.field if parts.calls else None
    found = []
    if reasoning and calls and parts.calls.call_starts:
        starts = "|".join(dict.fromkeys(parts.calls.call_starts))
        close = escape(reasoning["close"])
        # A call quoted inside reasoning that is closed later stays reasoning.
        ending = {
            "open": reasoning["open"],
            "close_pattern": f"{close}|(?=(?:{starts})(?!.*?{close}))",
        }
        found.append(
            (
                "reasoning also ends where a tool call starts, when its closer never follows",
                template(ending, calls),
            )
        )
    found.append(("as learnt", template(reasoning, calls)))
    if calls:
        found.append(("without tool calls", template(reasoning, None)))
    if reasoning:
        found.append(("without reasoning", template(None, calls)))
    return found


def deadline_after(seconds: float | None) -> float | None:
    return None if seconds is None else time.monotonic() + seconds


__all__ = ["InferenceError", "InferenceTimeout", "candidates", "learn", "deadline_after"]
