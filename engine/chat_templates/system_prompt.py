"""Template inference, the system prompt: what a chat template tells the model when tools are
given, or when thinking is switched on (`learn_reasoning_from_instructions`).

Many chat templates write format instructions into the prompt when tools are given ("return a
JSON object ... within <x></x> tags", an example call). The tools section is what the
first turn's prompt gains when tools are given; in it, two markers whose names pair around
something other than the tool list are the call syntax it describes, and the text between
them is its example payload (placeholders such as ``<function-name>`` and all).

That evidence confirms the markers a render shows (a finding says so), and where no render
shows a call it proposes a `tool_calls` field: a documented fallback, marked unconfirmed,
that the author's example outputs (or the matrix, where it renders calls) decide.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import regex

from ..pattern_shapes import pattern_literal
from .calls import CallSyntax
from .markup import MARKUP_TOKEN, closes, difference, marker_pairs
from .parts import Parts, Reasoning
from .probes import ALPHA, PROBE_TOOLS, Probe, Render


@dataclass(frozen=True)
class Described:
    """A call syntax the instructions describe: its markers and their example payload."""

    open: str
    close: str
    payload: str


def tools_section(probe: Probe) -> tuple[str, Render, Render] | None:
    """What the first turn's prompt gains when tools are given, with the two prompts compared."""
    history = probe.history("first-turn")
    with_tools = probe.render(history, add_generation_prompt=True)
    without = probe.render(history, tools=False, add_generation_prompt=True)
    if probe.without_tools or with_tools is None or without is None or with_tools == without:
        return None
    (_, _), (start, end) = difference(without, with_tools)
    return (
        with_tools[start:end],
        Render(probe.label("first turn without tools"), without),
        Render(probe.label("first turn with tools"), with_tools),
    )


def described_calls(section: str) -> list[Described]:
    """Marker pairs in the tools section around an example call (not around the tool list)."""
    description = PROBE_TOOLS[0]["function"]["description"]
    found = []
    tokens = list(MARKUP_TOKEN.finditer(section))
    for i, opener in enumerate(tokens):
        for closer in tokens[i + 1 :]:
            if not closes(opener.group(), closer.group()):
                continue
            inner = section[opener.end() : closer.start()]
            if ALPHA in inner or description in inner or not regex.search(r"[\[{]", inner):
                break  # the tool list, or no payload
            found.append(Described(opener.group(), closer.group(), inner.strip()))
            break
    return found


# What the instructions say follows a lone call marker, in the sentence after it: a list of calls.
_LISTED = regex.compile(r"(?i)\b(?:list|array)\b")


def lone_call_marker(section: str, elsewhere: str) -> Described | None:
    """The call marker instructions name without a closer or an example: the one markup token of
    the tools section that pairs with no other token there (`closes`), stands inside a sentence
    (words before and after it, not a section's own header) and that `elsewhere` (the prompt
    without tools, the renders of the turns) never writes; with the payload the sentence
    after it says, a JSON list when it speaks of a list or an array, else a JSON object per call.
    None when there is not exactly one such token."""
    tokens = list(dict.fromkeys(found.group() for found in MARKUP_TOKEN.finditer(section)))
    lone = [
        token
        for token in tokens
        if token not in elsewhere
        and not any(closes(token, other) or closes(other, token) for other in tokens)
        and regex.search(rf"\w[ \t]+{regex.escape(token)}[ \t]+\w", section)
    ]
    if len(lone) != 1:
        return None
    after = section[section.index(lone[0]) + len(lone[0]) :]
    sentence = regex.split(r"[.!?](?:\s|$)|\n", after, maxsplit=1)[0]
    return Described(lone[0], "", "[]" if _LISTED.search(sentence) else "{}")


def learn_from_system_prompt(parts: Parts) -> None:
    """Confirm the call markers the renders show, or propose the described syntax where no render
    shows a call (a fallback the examples or the matrix decide)."""
    found = next(
        (section for section in map(tools_section, parts.probes) if section is not None), None
    )
    if found is None:
        return
    section, without, with_tools = found
    described = described_calls(section)
    if not described:
        if parts.calls is None:
            _propose_lone_marker(parts, section, without, with_tools)
        return
    syntax = parts.calls
    if syntax is not None:
        field_text = json.dumps(syntax.field, ensure_ascii=False)
        for each in described:
            if pattern_literal(each.open) in field_text or each.open in field_text:
                parts.book.find(
                    "fields.tool_calls",
                    [each.open, each.close],
                    "the system prompt the chat template writes for tools describes calls between "
                    "these markers, as the call renders show",
                    without,
                    with_tools,
                )
                return
        return
    proposed = _field(described[0])
    if proposed is None:
        return
    parts.calls = CallSyntax(
        proposed, [], [pattern_literal(described[0].open)], "as the system prompt describes it"
    )
    parts.book.find(
        "fields.tool_calls",
        proposed,
        f"no render shows a call, but the system prompt the chat template writes for tools "
        f"describes calls between {described[0].open!r} and {described[0].close!r} "
        f"({described[0].payload[:80]!r}); unconfirmed by any render",
        without,
        with_tools,
    )
    parts.book.fallbacks.append(
        f"tool calls between {described[0].open!r} and {described[0].close!r}: only the system "
        "prompt's instructions describe them, no render writes one"
    )
    parts.book.found_elsewhere("tool_calls")


def _field(described: Described) -> dict | None:
    """A `tool_calls` field for the described payload: a JSON list of calls or a JSON object per
    call, its first key the name and its second the arguments (as the example writes them)."""
    keys = regex.findall(r'"(\w+)"\s*:', described.payload)
    if len(keys) < 2:
        return None
    name, arguments = keys[0], keys[1]
    close = r"(?<=[}\]])\s*" + pattern_literal(described.close)
    if described.payload.startswith("["):
        return {
            "open_pattern": pattern_literal(described.open) + r"(?=\s*\[)",
            "close_pattern": close,
            "content": "json",
            "transform_each": True,
            "transform": {
                "type": "function",
                "function": {"name": f"{{{name}}}", "arguments": f"{{{arguments}}}"},
            },
        }
    return {
        "open_pattern": pattern_literal(described.open) + r"(?=\s*\{)",
        "close_pattern": close,
        "repeats": True,
        "content": "json",
        "transform": {
            "type": "function",
            "function": {"name": f"{{content.{name}}}", "arguments": f"{{content.{arguments}}}"},
        },
    }


def _propose_lone_marker(parts: Parts, section: str, without: Render, with_tools: Render) -> None:
    """Where no render shows a call and the instructions name one lone marker (`lone_call_marker`),
    a `tool_calls` field opened by it, its JSON payload read with the keys a call has in a
    message (``name``, ``arguments``) and closed where the turn ends: a documented fallback that
    the author's example outputs decide."""
    elsewhere = without.text + "".join(
        turn.text
        for probe in parts.probes
        for turn in (probe.turn("answer"), probe.turn("reasoning"))
        if turn is not None
    )
    lone = lone_call_marker(section, elsewhere)
    if lone is None:
        return
    listed = lone.payload == "[]"
    ends = "|".join(pattern_literal(close) for close in parts.closes)
    close = r"(?<=" + ("\\]" if listed else "\\}") + r")\s*" + (f"(?:{ends})" if ends else "$")
    spec: dict = {
        "open_pattern": pattern_literal(lone.open) + (r"(?=\s*\[)" if listed else r"(?=\s*\{)"),
        "close_pattern": close,
        "content": "json",
    }
    if listed:
        spec["transform_each"] = True
        function = {"name": "{name}", "arguments": "{arguments}"}
    else:
        spec["repeats"] = True
        function = {"name": "{content.name}", "arguments": "{content.arguments}"}
    spec["transform"] = {"type": "function", "function": function}
    shape = "a JSON list of calls" if listed else "a JSON object per call"
    parts.calls = CallSyntax(
        spec, [], [pattern_literal(lone.open)], "as the system prompt names it"
    )
    parts.book.find(
        "fields.tool_calls",
        spec,
        f"no render shows a call, but the system prompt the chat template writes for tools names "
        f"{lone.open!r}, a marker no render writes and nothing closes, with {shape} after it; "
        "its keys are a call's own in a message (name, arguments); unconfirmed by any render",
        without,
        with_tools,
    )
    parts.book.fallbacks.append(
        f"tool calls after {lone.open!r}: only the system prompt's instructions name it, no render "
        "writes one, and the payload's keys are a call's own in a message"
    )
    parts.book.found_elsewhere("tool_calls")


def learn_reasoning_from_instructions(parts: Parts) -> None:
    """Where no render shows reasoning: the marker pairs the thinking switch's instructions name.
    What the first prompt (without tools) gains when thinking is switched on, when it names pairs
    of markers (`marker_pairs`) that no turn writes ("write your thoughts between <x></x> and your
    answer between <y></y>"): the first pair is the reasoning's open and close, and the markers of
    the pairs after it wrap the answer, content closes the text drops. A documented fallback,
    unconfirmed by any render."""
    modes = {probe.mode: probe for probe in parts.probes}
    on, off = modes.get("thinking on"), modes.get("thinking off")
    if parts.reasoning is not None or on is None or off is None:
        return
    history = on.history("first-turn")
    with_on = on.render(history, tools=False, add_generation_prompt=True)
    with_off = off.render(history, tools=False, add_generation_prompt=True)
    if with_on is None or with_off is None or with_on == with_off:
        return
    (_, _), (start, end) = difference(with_off, with_on)
    gained = with_on[start:end]
    written = "".join(
        turn.text
        for probe in parts.probes
        for turn in (probe.turn("answer"), probe.turn("reasoning"))
        if turn is not None
    )
    tokens = [found.group() for found in MARKUP_TOKEN.finditer(gained)]
    pairs = [
        (opener, closer)
        for opener, closer in marker_pairs(tokens)
        if opener not in written and closer not in written
    ]
    if not pairs:
        return
    opener, closer = pairs[0]
    evidence = (
        Render(off.label("first turn without tools"), with_off),
        Render(on.label("first turn without tools"), with_on),
    )
    parts.reasoning = Reasoning(opener, closer)
    how = (
        "no render shows reasoning, but the prompt the thinking switch turns on names the pair "
        f"{opener!r} and {closer!r} first, as where the model writes its thoughts; unconfirmed "
        "by any render"
    )
    parts.book.find("fields.reasoning_content.open", opener, how, *evidence)
    parts.book.find("fields.reasoning_content.close", closer, how, *evidence)
    for wrapper in pairs[1:]:
        for marker in wrapper:
            if parts.add_close(marker):
                parts.book.find(
                    "fields.content.close",
                    marker,
                    "the prompt the thinking switch turns on names it around the answer, after "
                    "the reasoning's markers: a marker the content drops; unconfirmed by any render",
                    *evidence,
                )
    parts.book.fallbacks.append(
        f"reasoning between {opener!r} and {closer!r}: only the instructions the thinking switch "
        "turns on name them, no render writes reasoning"
    )
