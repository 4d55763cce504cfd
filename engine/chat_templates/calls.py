"""Template inference, tool calls: the syntax record the learners share, and why no syntax was
found where the renders' calls are read by no learner.

`engine.chat_templates.examples.aligned_calls` learns the calls, reading each render as a
labelled output (`engine.chat_templates.evidence.labelled_renders`) through the one aligner that
reads example outputs. Where it reads none, `why_no_calls` says why, from the renders of a plain
answer and of the calls (`engine.chat_templates.probes`): the chat template writes no call; its
call adds nothing to a plain answer; it writes every call in a form that loses an argument's
value; each call is a JSON object keyed by the function's name; its calls are Python literals;
or no construct of the template language explains them. Nothing here knows a model family.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import regex

from .markup import show_text
from .probes import (
    ALPHA,
    ALPHA_ARGUMENTS,
    ANSWER,
    FINAL_MESSAGES,
    STRING_KEY,
    Finding,
    Render,
    Turn,
)
from .render import common_suffix_length, token_boundary
from .turns import argument_defects, back_to_boundary, common_length


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
        prewritten: the start of each call's open that the prompt writes before the first call
            (the generation prompt ends with it), or "".
        opening: the literal text each call (or its list) opens with, or "".
        close_patterns: content closes that are patterns (a marker before each call with a
            word that varies: the call's id), which no turn without a call writes.
    """

    field: dict
    content_closes: list[str]
    call_starts: list[str]
    description: str
    findings: list[Finding] = field(default_factory=list)
    prewritten: str = ""
    opening: str = ""
    close_patterns: list[str] = field(default_factory=list)


@dataclass
class NoCallSyntax:
    """Why no tool-call syntax was learnt from the renders.

    Attributes:
        why: one sentence (the note inference writes).
        written: whether some render writes a call (the syntax is there but cannot be read).
        construct: the construct of the template language that would read it, when that is
            what is missing ("" otherwise).
        renders: the renders that show it (a plain answer and a call).
    """

    why: str
    written: bool = False
    construct: str = ""
    renders: tuple[Render, ...] = ()


def why_no_calls(modes: list[tuple[Turn, dict[str, Turn]]]) -> NoCallSyntax:
    """Why no learner reads a call in these renders.

    Args:
        modes: one (plain answer, {name in `FINAL_MESSAGES`: the render of that message with
            calls}) pair a thinking mode, as the probes render them; ``"call"`` (one call) is
            the one shown, absent when the chat template does not render it.

    Returns:
        The reason, with the answer and call renders that show it when a call is written.
    """
    rendered = [(answer, calls["call"]) for answer, calls in modes if "call" in calls]
    if not rendered:
        return NoCallSyntax(
            "the chat template writes no tool call of an assistant message (or refuses every one)"
        )
    written = [(answer, call, _call_section(answer, call)) for answer, call in rendered]
    written = [(answer, call, section) for answer, call, section in written if section.strip()]
    if not written:
        return NoCallSyntax(
            f"the render of {rendered[0][1].render.label} adds nothing to a plain answer: it "
            "writes no tool call"
        )
    answer, call, section = written[0]
    renders = (answer.render, call.render)
    defects = [
        argument_defects(FINAL_MESSAGES[name], turn.text)
        for _, calls in modes
        for name, turn in calls.items()
        if FINAL_MESSAGES[name].get("tool_calls")
    ]
    if all(defects):
        return NoCallSyntax(
            f"the chat template writes every call in a form no parser reads back: {defects[0][0]}",
            True,
            "",
            renders,
        )
    if _keyed_by_name(section):
        return NoCallSyntax(
            "each call is a JSON object whose only key is the function's name and whose value is "
            f"its arguments ({show_text(section)}), and no field the aligner builds reads it",
            True,
            NAME_AS_KEY,
            renders,
        )
    if regex.search(rf"'(?:{ALPHA}|{STRING_KEY})'", section):
        return NoCallSyntax(
            "the calls are Python literals (single-quoted strings, True/False/None: "
            f"{show_text(section)}), and no content parser reads a Python dict",
            True,
            "a content parser for Python literals (dicts with single-quoted strings)",
            renders,
        )
    return NoCallSyntax(
        f"no call syntax the template language can read explains {show_text(section)}",
        True,
        "",
        renders,
    )


# What the template language would need to read calls keyed by the function's name in every form.
NAME_AS_KEY = (
    "a way to read a JSON object's key as a value: a content parser or transform that turns "
    '{"NAME": {ARGUMENTS}} into a name and its arguments'
)


def _keyed_by_name(text: str) -> bool:
    """Whether `text` writes the one-call probe as a JSON object whose only key is the
    function's name (`{ALPHA: ALPHA_ARGUMENTS}`), alone or as an item of a list."""
    decoder = json.JSONDecoder()
    keyed = {ALPHA: ALPHA_ARGUMENTS}
    for found in regex.finditer(r"[\[{]", text):
        try:
            value, _ = decoder.raw_decode(text, found.start())
        except ValueError:
            continue
        if value == keyed or (isinstance(value, list) and keyed in value):
            return True
    return False


def _call_section(answer: Turn, call: Turn) -> str:
    """What the render of a call adds to the render of a plain answer: the call's text without
    what it shares with the answer's text before and after the answer (each cut at a token
    boundary)."""
    at = answer.text.find(ANSWER)
    before, after = (
        (answer.text[:at], answer.text[at + len(ANSWER) :]) if at >= 0 else ("", answer.text)
    )
    start = back_to_boundary(call.text, common_length(call.text, before)) if before else 0
    body = call.text.rstrip()
    tail = after.rstrip()
    end = len(body) - common_suffix_length(body, tail) if tail else len(body)
    while start < end < len(body) and not token_boundary(body, end):
        end += 1
    return body[start : max(end, start)]
