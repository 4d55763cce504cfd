"""Template inference, the implicit content field's closes: what ends the model's text.

The end of the turn the chat template writes after an answer (and `eos_token`, which a model
may stop with alone), a wrapper written around the answer but not around a call, the end of
an earlier answer in the history, the tool result's first marker right after a call (a model
hands over to the tool by writing it) and, where no end of turn is written, the next user
turn's header (a documented fallback). What comes between reasoning and the answer is
split between the reasoning's closer and the content's wrapper here too.
"""

from __future__ import annotations

import regex

from ..pattern_shapes import pattern_literal
from .markup import MARKUP_TOKEN, mostly_text, shared_end, without_block
from .parts import Parts
from .probes import (
    ANSWER,
    FINAL_MESSAGES,
    QUESTION,
    SECOND_QUESTION,
    Probe,
    assistant,
    tool_result,
)


def learn_turn_end(parts: Parts) -> None:
    """The end of the turn after an answer, `eos_token`, and the end of an earlier answer."""
    book = parts.book
    probe = next((p for p in parts.probes if p.turn("answer") is not None), None)
    if probe is None:
        book.notes.append(
            "the chat template writes no assistant answer: the content field ends only at eos_token"
        )
        parts.answer_end = (None, None, False)
        parts.add_close(parts.eos_token)
        return
    answer = probe.turn("answer")
    after = answer.text[answer.text.find(ANSWER) + len(ANSWER) :]
    end = after.strip()
    wrapper_close = ""
    call = probe.turn("call")
    if call is not None and end:
        shared = shared_end([after.rstrip(), call.text.rstrip()]).strip()
        if shared and shared != end and end.endswith(shared):
            wrapper_close, end = end[: -len(shared)].strip(), shared
    end = _first_marker_of(end)
    eos = parts.eos_token
    if eos and end.endswith(eos) and end != eos:
        end = end[: -len(eos)].strip()  # the end of turn, then eos_token (added below)
    if end and parts.add_close(end):
        book.find(
            "fields.content.close",
            end,
            "what the chat template writes after the answer: the end of the turn"
            + (" (also after a tool call)" if call is not None else ""),
            *((answer.render, call.render) if call is not None else (answer.render,)),
        )
    if wrapper_close and parts.add_close(wrapper_close):
        book.find(
            "fields.content.close",
            wrapper_close,
            "written after the answer but not after a tool call: it closes a wrapper around the answer",
            answer.render,
            call.render,
        )
    if eos and parts.add_close(eos):
        book.find(
            "fields.content.close",
            eos,
            "the tokenizer's eos_token: a model may stop with it alone",
            answer.render,
        )
    parts.answer_end = (probe, answer, bool(end))
    earlier = _history_end(probe)
    if earlier and parts.add_close(earlier):
        book.find(
            "fields.content.close",
            earlier,
            "the end of an earlier answer in the history (the final turn ends otherwise)",
            answer.render,
        )


def _first_marker_of(end: str) -> str:
    """An end of turn that goes on with plain text (a chat template that writes instructions after
    every conversation) ends at its first marker: the model stops there, the rest is the template's."""
    token = MARKUP_TOKEN.match(end)
    if token and regex.search(r"\w{3,}\s+\w{3,}", MARKUP_TOKEN.sub(" ", end)):
        return token.group()
    return end


def _history_end(probe: Probe) -> str:
    """The first marker after an answer in the history (before the next user turn), or ""."""
    ask = {"role": "user", "content": QUESTION}
    full = probe.render(
        [ask, assistant(content=ANSWER), {"role": "user", "content": SECOND_QUESTION}]
    )
    if full is None or ANSWER not in full:
        return ""
    token = MARKUP_TOKEN.search(full, full.find(ANSWER) + len(ANSWER))
    return token.group() if token and token.start() < full.find(SECOND_QUESTION) else ""


def learn_next_headers(parts: Parts) -> None:
    """What the turn after the answer starts with: the tool result's first marker right after a
    call (a model hands over to the tool by writing it), and, when no end of turn is written, the
    next user turn's header (a documented fallback)."""
    probe, answer, end_written = parts.answer_end
    if probe is None:
        return
    found = [] if end_written else _next_user_header(probe)
    found += _tool_result_marker(parts, probe, end_written)
    for token, what, fallback in found:
        if not parts.add_close(token):
            continue
        if fallback:
            how = f"the chat template writes no end of turn; {what} follows the answer"
            parts.book.fallbacks.append(
                f"content close {token!r}: no end-of-turn marker is written, so {what} ends the answer"
            )
        else:
            how = f"{what} ends the turn: a model hands over to the tool by writing it"
        parts.book.find("fields.content.close", token, how, answer.render)


def _next_user_header(probe: Probe) -> list[tuple[str, str, bool]]:
    between = probe.following(
        assistant(content=ANSWER), {"role": "user", "content": SECOND_QUESTION}
    )
    if between is None or not between.strip():
        return []
    token = MARKUP_TOKEN.search(between)
    line = between.strip().splitlines()[0].strip()
    return [(token.group() if token else line, "the next user turn's header", True)]


def _tool_result_marker(
    parts: Parts, probe: Probe, end_written: bool
) -> list[tuple[str, str, bool]]:
    between = probe.following(
        FINAL_MESSAGES["call"],
        tool_result(FINAL_MESSAGES["call"]["tool_calls"][0]),
    )
    if between is None or parts.calls is None:
        return []
    spec = parts.calls.field
    close = spec.get("close") or spec.get("close_pattern")
    if isinstance(close, list):
        close = "|".join(pattern_literal(each) for each in close)
    elif "close" in spec:
        close = pattern_literal(close)
    matches = list(regex.finditer(close, between))
    ends = [m.end() for m in matches if m.end() > m.start()]
    if not ends and parts.closes:
        # A close that consumes nothing (the call ends at its payload's last bracket): the
        # end of the turn written right after it ends the call's turn instead.
        turn_end = regex.compile(
            r"\s*(?:"
            + "|".join(map(regex.escape, sorted(parts.closes, key=len, reverse=True)))
            + ")"
        )
        ends = [found.end() for m in matches if (found := turn_end.match(between, m.end()))]
    token = MARKUP_TOKEN.search(between, ends[-1]) if ends else None
    if token is None or between[ends[-1] : token.start()].strip():
        return []
    return [(token.group(), "the tool result's first marker, right after a call,", not end_written)]


def learn_content_wrapper(parts: Parts) -> None:
    """A wrapper written around the answer (and the split of what follows reasoning)."""
    probe = next((p for p in parts.probes if p.turn("answer") is not None), None)
    if probe is None:
        return
    answer = probe.turn("answer")
    view = parts.visible(probe, answer)
    before = view[: view.find(ANSWER)]
    reasoning = parts.reasoning
    if reasoning is not None and reasoning.open:
        before = without_block(before, reasoning.open, reasoning.close)
    wrapper = before.strip()
    if reasoning is not None:
        _split_reasoning_close(parts, wrapper)
    if wrapper and not mostly_text(wrapper) and parts.add_close(wrapper):
        parts.book.find(
            "fields.content.close",
            wrapper,
            "written before the answer: it opens a wrapper around it, dropped with the text before it",
            answer.render,
        )


def learn_stray_reasoning_close(parts: Parts) -> None:
    """The reasoning's closer as a content close where a finished turn starts with it although
    the prompt left no reasoning open (thinking off: the prompt pre-writes a closed block, and the
    chat template writes the finished turn with the closer again)."""
    reasoning = parts.reasoning
    if reasoning is None or not reasoning.close or reasoning.close in parts.closes:
        return
    for probe in parts.probes:
        turn = probe.turn("answer")
        prewritten = parts.prewritten.get(probe.mode, "").strip()
        if turn is None or not turn.text.lstrip().startswith(reasoning.close):
            continue
        if prewritten and not prewritten.endswith(reasoning.close):
            continue  # the prompt leaves the reasoning open: the closer ends it
        parts.add_close(reasoning.close)
        parts.book.find(
            "fields.content.close",
            reasoning.close,
            "a finished turn starts with the reasoning's closer where the prompt left no reasoning "
            "open: outside reasoning it is a marker, not text",
            turn.render,
        )
        return


def _split_reasoning_close(parts: Parts, wrapper: str) -> None:
    """The reasoning's closer without the content's wrapper and without the turn's header that
    some chat templates write again between reasoning and answer."""
    reasoning, header = parts.reasoning, parts.header.strip()
    close = reasoning.close
    if wrapper and close.endswith(wrapper) and close != wrapper:
        close = close[: -len(wrapper)].strip()
    if header and header in close and not close.startswith(header):
        extra = close[close.index(header) :]
        close = close[: close.index(header)].strip()
        if parts.add_close(extra):
            parts.book.find(
                "fields.content.close",
                extra,
                "written between the reasoning and the answer: the turn's header again",
                *parts.reasoning_renders,
            )
    reasoning.close = close
    if not any(f.key == "fields.reasoning_content.close" for f in parts.book.findings):
        parts.book.find(
            "fields.reasoning_content.close",
            close,
            "the text after the reasoning, before the answer (and its wrapper)",
            *parts.reasoning_renders,
        )
