"""Template inference, the learners in order.

`learn` renders the probes in every thinking mode and runs each part's learner in turn
(`anchor`, `reasoning`, `content_closes`, and for the calls the aligner over the renders,
`examples.aligned_calls`, and `calls.why_no_calls` where it reads none), then the other evidence where
it is given or found (`source_text`, `system_prompt`, `tokens`, the example outputs). The
parts it fills are put together by `engine.chat_templates.candidates`.
"""

from __future__ import annotations

from typing import Any

from .anchor import header_without, learn_anchor
from .calls import CallSyntax, NoCallSyntax, why_no_calls
from .candidates import tolerant_opener
from .content_closes import (
    learn_content_wrapper,
    learn_next_headers,
    learn_stray_reasoning_close,
    learn_turn_end,
)
from .example_fields import PREWRITTEN_OPEN
from .examples import Example, aligned_calls, learn_from_examples
from .markup import MARKUP_TOKEN
from .parts import InferenceError, Notebook, Parts
from .probes import BETA, RENDERING_TOO_SLOWLY, Finding, Probe, check_deadline
from .reasoning import learn_prefill_after_opener, learn_reasoning
from .render import (
    ChatTemplateRenderer,
    ChatTemplateRenderError,
    find_thinking_switch,
    thinking_values,
)
from .source_text import learn_alternative_ends, note_source, propose_from_source
from .system_prompt import (
    learn_from_system_prompt,
    learn_reasoning_from_instructions,
    tools_section,
)
from .tokens import note_tokens, propose_from_tokens


def probes_for(
    chat_template: str, bos_token: str, eos_token: str, deadline: float | None
) -> tuple[str | None, list[Probe]]:
    """The thinking switch and one probe per thinking mode."""
    try:
        switch = find_thinking_switch(
            chat_template,
            bos_token=bos_token,
            eos_token=eos_token,
            before_each_render=lambda: check_deadline(deadline, RENDERING_TOO_SLOWLY),
        )
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


def learn(
    chat_template: str,
    bos_token: str,
    eos_token: str,
    deadline: float | None,
    examples: list[Example] = (),
    tokenizer: Any = None,
    regex_timeout: float | None = 1.0,
) -> Parts:
    """Every part of the template the renders show, then what the chat template's source, its
    system prompt for tools, the tokenizer and the example outputs add.

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
    parts = Parts(rendered, eos_token, Notebook(), switch, has_examples=bool(examples))
    learn_anchor(parts)
    learn_reasoning(parts)
    if parts.reasoning is None:
        propose_from_source(parts, chat_template)
    if parts.reasoning is None and tokenizer is not None:
        propose_from_tokens(parts, tokenizer)
    learn_reasoning_from_instructions(parts)
    learn_prefill_after_opener(parts)
    learn_turn_end(parts)
    learn_alternative_ends(parts, chat_template)
    learn_calls(parts)
    learn_next_headers(parts)
    learn_content_wrapper(parts)
    learn_stray_reasoning_close(parts)
    learn_from_system_prompt(parts)
    # Every render's markup tokens, read once: what the other evidence proposes is checked here.
    written = {
        token
        for probe in parts.probes
        for render in probe.renders
        for token in MARKUP_TOKEN.findall(render.text)
    }
    note_source(parts, chat_template, written)
    if tokenizer is not None:
        note_tokens(parts, tokenizer, written)
    if examples:
        learn_from_examples(parts, list(examples), regex_timeout)
    _note_render_help(parts)
    return parts


def _lack_calls(parts: Parts, found: NoCallSyntax) -> None:
    """Say that the tool calls are missing when the chat template takes tools: it writes calls
    neither learner reads, or it lists the tools in the prompt and writes no call at all."""
    if found.written:
        parts.book.lack("tool_calls", found.why, found.construct)
        parts.book.find("fields.tool_calls", None, f"not inferred: {found.why}", *found.renders)
        return
    section = tools_section(parts.probes[0])
    if section is None:
        return  # the chat template takes no tools: a template without tool calls is complete
    why = (
        "the chat template writes the tools into the prompt but no call of an assistant message, "
        "so no render shows how the model writes a call; give example outputs with calls"
    )
    parts.book.lack("tool_calls", why)
    parts.book.find(
        "fields.tool_calls",
        None,
        f"not inferred: {why}",
        *section[1:],
    )


def without_opener_finding(parts: Parts) -> Finding:
    """The finding for a reasoning that also opens at a turn's start (see `tolerant_opener`)."""
    reasoning = parts.reasoning
    probe = parts.probes[0]
    return Finding(
        "fields.reasoning_content.open_pattern",
        tolerant_opener(parts),
        f"the prompt pre-writes {reasoning.open!r}, so the model starts inside the reasoning, and "
        f"an example's prompt does not: text before {reasoning.close!r} at the turn's start is "
        "reasoning too",
        (probe.first_prompt_render(),),
    )


def _note_render_help(parts: Parts) -> None:
    """Say what the renders needed that no caller passes (variables rendered empty, `tools=[]`),
    and how they were adapted to what the chat template refused (`Probe.adapted`)."""
    filled = sorted({name for probe in parts.probes for name in probe.renderer.filled})
    if filled:
        parts.book.notes.append(
            "the chat template reads "
            + ", ".join(repr(name) for name in filled)
            + ", which no caller passes (apply_chat_template does not): rendered with "
            + ("it" if len(filled) == 1 else "them")
            + " empty"
        )
    for sentence in dict.fromkeys(said for probe in parts.probes for said in probe.adapted):
        parts.book.notes.append(sentence)
    if any(probe.renderer.empty_tools for probe in parts.probes):
        parts.book.notes.append(
            "the chat template iterates tools even when none are given: rendered with tools=[]"
        )


def learn_calls(parts: Parts) -> None:
    """The tool-call syntax from every mode's call renders: the aligner, which reads example
    outputs, reads the renders as labelled outputs; where it reads no call, why none was read
    is said (`why_no_calls`)."""
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
        calls = {
            name: turn
            for name in ("call", "two-calls", "typed-call", "lead-and-call")
            for turn in [probe.turn(name)]
            if turn is not None and not (name == "two-calls" and BETA not in turn.text)
        }
        modes.append((answer, calls))
    noted = len(parts.book.notes)
    found = aligned_calls(parts) if modes else None
    if found is None:
        # What the aligner noted while it tried the renders is said only when it reads no call.
        why = why_no_calls(modes) if modes else NoCallSyntax("no answer renders")
        parts.book.notes.append(f"no tool_calls field: {why.why}")
        _lack_calls(parts, why)
        return
    del parts.book.notes[noted:]
    parts.calls = found
    parts.book.findings += found.findings
    for marker in found.content_closes:
        parts.add_close(marker)
    parts.close_patterns += [p for p in found.close_patterns if p not in parts.close_patterns]
    if found.prewritten:
        header_without(parts, found.prewritten.strip())
    _prewritten_open_closes(parts, found)


def _prewritten_open_closes(parts: Parts, found: CallSyntax) -> None:
    """What the prompt pre-writes at its end that a call's open starts with (a recipient marker)
    is a content close: when no call follows, it is a marker, not text."""
    prewritten = {text.strip() for text in parts.prewritten.values()} - {""}
    for marker in sorted(prewritten):
        if not found.opening.startswith(marker) or not parts.add_close(marker):
            continue
        renders = next(
            f.renders for f in found.findings if f.key.startswith("fields.tool_calls.open")
        )
        parts.book.find(
            "fields.content.close",
            marker,
            PREWRITTEN_OPEN,
            *renders,
        )
