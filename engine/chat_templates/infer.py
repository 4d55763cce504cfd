"""Template inference: a response template derived from a chat template alone, verified and explained.

`infer_template` renders conversations that differ in one thing (an answer and the
same answer after reasoning, one call and two, no generation prompt and one, thinking
on and off: `engine.chat_templates.probes`) and reads each part of the response template off
the difference between two renders:

* the start anchor: the header the generation prompt writes for the new turn (the part
  the two thinking modes and the history's own assistant turns share), and, where a
  prompt writes no new header (after a tool result, many do), what that prompt ends with;
* the reasoning field: the markers around the reasoning in a finished turn, or the
  block the prompt pre-writes (an opener alone: the reasoning is open when generation
  starts; an empty block: thinking is off);
* the implicit content field's closes: the end of turn (and the tokenizer's
  `eos_token`), a wrapper the chat template writes around the answer, markers around
  the tool calls;
* the tool-call field (`engine.chat_templates.calls`).

The parts make one or more candidate templates, each checked with the conformance
matrix (`engine.chat_templates.conformance.check_conformance`) against the same chat template; the
first that passes is kept, and every finding carries the renders that show it.
Where the renders cannot decide a marker, a few documented fallbacks apply (listed in
`InferredTemplate.fallbacks` and in docs/authoring.md). Nothing here knows a model
family or its markers: they all come from the renders.

transformers renders the chat templates (as for `check_conformance`): install the
`conformance` extra.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import regex

from ..errors import TemplateError
from ..template import load_template
from .calls import CallSyntax, CallTurns, escape, learn_call_syntax, pattern_with_stand_ins
from .conformance import ConformanceReport, check_conformance, resolve_chat_template
from .probes import (
    ANSWER,
    FINAL_MESSAGES,
    MARKUP_TOKEN,
    QUESTION,
    REASONING,
    REASONING_KEYS,
    SECOND_QUESTION,
    TOOL_RESULT,
    Finding,
    InferenceTimeout,
    Probe,
    Render,
    Turn,
    assistant,
    shared_end,
    shared_start,
)
from .render import (
    ChatTemplateRenderer,
    ChatTemplateRenderError,
    find_thinking_switch,
    thinking_values,
)
from .turns import back_to_boundary, common_length

# Seconds inference may take by default (renders and conformance checks).
DEFAULT_TIME_BUDGET = 60.0


class InferenceError(ValueError):
    """Nothing can be inferred from the chat template; the message says why."""


@dataclass
class Candidate:
    """One template inference built and checked.

    Attributes:
        description: what sets it apart ("reasoning also ends where a tool call starts").
        template: the response template.
        report: its conformance matrix against the chat template.
    """

    description: str
    template: dict
    report: ConformanceReport

    @property
    def passed(self) -> bool:
        return self.report.passed

    def failures(self, limit: int = 3) -> list[str]:
        """The first failing rows, as ``name: detail``."""
        return [f"{row.name}: {row.detail}" for row in self.report.failed[:limit]]

    def to_dict(self) -> dict:
        return {
            "description": self.description,
            "passed": self.passed,
            "counts": self.report.counts(),
            "failures": self.failures(),
            "template": self.template,
        }


@dataclass
class InferredTemplate:
    """What `infer_template` found.

    Attributes:
        template: the response template (valid against templates/response_template.schema.json).
        report: its conformance matrix against the chat template.
        findings: each delimiter and choice with the renders that show it.
        candidates: every candidate built, in the order tried, with its matrix (the kept one
            is the first that passed, else the one with the fewest failing rows).
        fallbacks: the documented fallbacks used, as sentences (empty when the renders decided all).
        notes: what was not found, and why (no tool calls: the chat template writes none).
        thinking_switch: the chat-template keyword that switches reasoning, or None.
        generation_prompt: what the first turn's generation prompt writes, per thinking mode.
        renders: every render inference made (for looking up what the chat template ever writes).
        refusals: every conversation the chat template refused, with its error.
        prewritten: per thinking mode, what the first turn's prompt writes after the start anchor
            (the prefix tail the parser starts from: an opener, an empty block, or "").
    """

    template: dict
    report: ConformanceReport
    findings: list[Finding]
    candidates: list[Candidate]
    fallbacks: list[str]
    notes: list[str]
    thinking_switch: str | None
    generation_prompt: dict[str, str]
    renders: list[Render] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)
    prewritten: dict[str, str] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.report.passed

    @property
    def exit_code(self) -> int:
        """0 when the template passes its matrix, 1 when it does not."""
        return 0 if self.passed else 1

    def template_file(
        self, name: str = "inferred", models: list[str] | None = None, source: str = ""
    ) -> dict:
        """A `templates/`-style file: name, models, generation prompt, notes on what was found and
        from which renders, and the response template."""
        prompts = "; ".join(
            f"{mode}: {prompt}" if mode else prompt
            for mode, prompt in self.generation_prompt.items()
        )
        notes = [
            f"{finding.key} = {json.dumps(finding.value, ensure_ascii=False)}: {finding.how} (compared: "
            f"{' / '.join(render.label for render in finding.renders)})"
            for finding in self.findings
        ]
        notes += [f"fallback: {text}" for text in self.fallbacks] + self.notes
        if not self.passed:
            notes += [f"fails: {row.name}: {row.detail}" for row in self.report.failed]
        counts = self.report.counts()
        return {
            "$schema": "./template_file.schema.json",
            "name": name,
            "description": (
                f"Inferred from the chat template{f' of {Path(source).name}' if source else ''} by comparing its renders; "
                f"the conformance matrix: {counts['passed']} passed, {counts['failed']} failed, "
                f"{counts['not_renderable']} not renderable."
            ),
            "models": models or [name],
            "generation_prompt": prompts,
            "notes": notes,
            "response_template": self.template,
        }

    def to_dict(self) -> dict:
        return {
            "passed": self.passed,
            "template": self.template,
            "report": self.report.to_dict(),
            "findings": [finding.to_dict() for finding in self.findings],
            "candidates": [candidate.to_dict() for candidate in self.candidates],
            "fallbacks": self.fallbacks,
            "notes": self.notes,
            "thinking_switch": self.thinking_switch,
            "generation_prompt": self.generation_prompt,
            "refusals": self.refusals,
        }


def infer_template(
    chat_template: str | None = None,
    *,
    model: str | None = None,
    bos_token: str | None = None,
    eos_token: str | None = None,
    regex_timeout: float | None = 1.0,
    time_budget: float | None = DEFAULT_TIME_BUDGET,
) -> InferredTemplate:
    """Infer a response template from a chat template, verify it, and explain every delimiter.

    Args:
        chat_template: the Jinja chat template text. Give this or `model`.
        model: a hub id or local folder whose tokenizer files hold the chat template (and the
            bos/eos tokens); weights are never read.
        bos_token, eos_token: what the chat template writes as ``bos_token`` / ``eos_token``
            (default "" or the tokenizer's). The eos token is accepted as an end of turn.
        regex_timeout: seconds per regex call of the candidates' patterns in the checks.
        time_budget: seconds for the renders, checked between them (None: no limit). A
            chat template that loops inside one render is not interrupted here: run
            inference in a process that can be killed (`python -m engine infer` and the
            playground do).

    Returns:
        An `InferredTemplate` (its `passed` says whether the template passes the matrix).

    Raises:
        InferenceError (a ValueError): nothing can be inferred (the chat template renders no
            first turn, or runs out of time); the message says why.
        ValueError: neither or both of `chat_template` and `model`.
        ModelLoadError (a ValueError): `model` has no tokenizer or chat template.
        ImportError: transformers (or jinja2) is not installed.
    """
    chat_template, bos_token, eos_token = resolve_chat_template(
        chat_template, model, bos_token, eos_token, InferenceError
    )
    deadline = None if time_budget is None else time.monotonic() + time_budget
    try:
        learner = _Learner(chat_template, bos_token, eos_token, deadline)
        learner.learn()
    except InferenceTimeout as error:
        raise InferenceError(
            f"inference stopped: {error} ({time_budget:g} s); the chat template renders too slowly"
        ) from None
    candidates = []
    for description, template in learner.candidates():
        try:
            load_template(template)
        except (
            TemplateError
        ) as error:  # a learnt marker the template language rejects: say so, never guess
            learner.notes.append(f"candidate ({description}) is not a valid template: {error}")
            continue
        report = check_conformance(
            template,
            chat_template,
            bos_token=bos_token,
            eos_token=eos_token,
            regex_timeout=regex_timeout,
        )
        candidates.append(Candidate(description, template, report))
        if report.passed:
            break
        if deadline is not None and time.monotonic() > deadline:
            break
    if not candidates:
        raise InferenceError("no valid template could be built: " + "; ".join(learner.notes))
    chosen = next((candidate for candidate in candidates if candidate.passed), None)
    if chosen is None:
        chosen = min(candidates, key=lambda candidate: len(candidate.report.failed))
    return InferredTemplate(
        chosen.template,
        chosen.report,
        learner.findings,
        candidates,
        learner.fallbacks,
        learner.notes,
        learner.switch,
        learner.generation_prompts,
        [render for probe in learner.probes for render in probe.renders],
        [refusal for probe in learner.probes for refusal in probe.refusals],
        dict(learner.prewritten),
    )


# -- learning ------------------------------------------------------------------------


@dataclass
class _Reasoning:
    open: str
    close: str


class _Learner:
    """Learns each part of the template from the probes' renders (one probe per thinking mode)."""

    def __init__(self, chat_template: str, bos_token: str, eos_token: str, deadline: float | None):
        self.eos_token = eos_token
        self.findings: list[Finding] = []
        self.fallbacks: list[str] = []
        self.notes: list[str] = []
        try:
            self.switch = find_thinking_switch(
                chat_template, bos_token=bos_token, eos_token=eos_token
            )
        except ChatTemplateRenderError:
            self.switch = None
        modes = (
            list(zip(thinking_values(self.switch), ("thinking on", "thinking off")))
            if self.switch
            else [(None, "")]
        )
        self.probes = [
            Probe(
                ChatTemplateRenderer(chat_template, bos_token, eos_token, self.switch, thinking),
                mode,
                deadline,
            )
            for thinking, mode in modes
        ]
        self.generation_prompts: dict[str, str] = {}
        self.anchors: list[str] = []
        self.header = ""
        self.prewritten: dict[str, str] = {}
        self.reasoning: _Reasoning | None = None
        self.closes: list[str] = []
        self.calls: CallSyntax | None = None
        self._reasoning_render: tuple[Render, ...] = ()
        self._answer_end: tuple = (
            None,
            None,
            False,
        )  # (probe, answer turn, whether an end of turn is written)
        self.turn_start = ""

    def learn(self) -> None:
        rendered = [probe for probe in self.probes if probe.prompt("first-turn") is not None]
        if not rendered:
            refusal = next(iter(self.probes[0].refusals), "it renders nothing")
            raise InferenceError(
                f"the chat template does not render a first user turn with a generation prompt: {refusal}"
            )
        self.probes = rendered
        self._learn_anchor()
        self._learn_reasoning()
        self._learn_turn_end()
        self._learn_calls()
        if self._answer_end[0] is not None:
            self._learn_next_headers(*self._answer_end)
        self._learn_content_wrapper()

    # -- the start anchor ---------------------------------------------------------

    def _generation_prompt(self, probe: Probe, situation: str) -> str:
        prompt = probe.generation_prompt(situation) or ""
        trailer = probe.renderer.trailer
        if not prompt.strip() and trailer and "zq " not in trailer:
            return trailer  # written after every conversation: the new turn's start (not a message's text)
        return prompt

    def _history_lead(self, probe: Probe) -> str | None:
        """How the chat template starts an assistant turn in history (between the user's question
        and the answer of an earlier turn)."""
        ask = {"role": "user", "content": QUESTION}
        full = probe.render(
            [ask, assistant(content=ANSWER), {"role": "user", "content": SECOND_QUESTION}]
        )
        bare = probe.render([ask])
        if full is None or bare is None or QUESTION not in full or ANSWER not in full:
            return None
        trailer = probe.renderer.trailer
        if trailer and bare.endswith(trailer):
            bare = bare[: -len(trailer)]
        user_close = bare[bare.rfind(QUESTION) + len(QUESTION) :]
        between = full[full.find(QUESTION) + len(QUESTION) : full.find(ANSWER)]
        return between[back_to_boundary(between, common_length(between, user_close)) :]

    def _turn_start(self, probe: Probe) -> str:
        """The marker every turn starts with: the first markup token of a render (after bos_token), or ""."""
        bare = probe.render(probe.history("first-turn")) or ""
        bos = probe.renderer.bos_token
        bare = bare[len(bos) :] if bos and bare.startswith(bos) else bare
        token = MARKUP_TOKEN.match(bare.lstrip())
        return token.group() if token else ""

    def _from_turn_start(self, text: str) -> str:
        """`text` from the turn-start marker on: what a prompt writes before it ends the previous turn."""
        at = text.find(self.turn_start, 1) if self.turn_start else -1
        return text[at:] if at > 0 and not text.startswith(self.turn_start) else text

    def _learn_anchor(self) -> None:
        self.turn_start = self._turn_start(self.probes[0])
        first = {
            probe.mode: self._from_turn_start(self._generation_prompt(probe, "first-turn").lstrip())
            for probe in self.probes
        }
        self.generation_prompts = first
        sources = [text for text in first.values() if text.strip()]
        leads = [
            self._from_turn_start(lead.lstrip())
            for lead in (self._history_lead(probe) for probe in self.probes)
            if lead and lead.strip()
        ]
        header = shared_start(sources + leads) if sources else ""
        header = _without_trailing_opener(header, sources + leads)
        if (
            not header.strip()
            and sources
            and leads
            and all(leads[0].strip() in source for source in sources)
        ):
            # Every prompt ends the previous turn first, then writes the header the history's turns start with.
            header = leads[0].strip()
            sources = [source[source.rfind(header) :] for source in sources]
            first = {
                mode: text[text.rfind(header) :] if header in text else text
                for mode, text in first.items()
            }
        self.header = header
        for each in self.probes:
            each.header = header.strip()
        probe = self.probes[0]
        if header.strip():
            self.anchors.append(header.rstrip())
            bare = probe.render(probe.history("first-turn")) or ""
            self.findings.append(
                Finding(
                    "start_anchor",
                    header.rstrip(),
                    "the header the generation prompt writes for the new turn"
                    + (
                        " (the part every thinking mode and the history's assistant turns share)"
                        if len(sources) + len(leads) > 1
                        else ""
                    ),
                    (
                        Render(probe.label("first turn, no generation prompt"), bare),
                        Render(
                            probe.label("first turn, with the generation prompt"),
                            probe.prompt("first-turn") or "",
                        ),
                    ),
                )
            )
        for mode, text in first.items():
            # What the parser sees after the anchor (its trailing blanks included).
            anchor = header.rstrip()
            self.prewritten[mode] = (
                text[len(anchor) :]
                if anchor and text.startswith(anchor)
                else ("" if anchor else text)
            )
        for probe in self.probes:
            for situation, needle in (
                ("first-turn", QUESTION),
                ("after-tool-result", "zq sunny"),
                ("multi-turn", SECOND_QUESTION),
            ):
                prompt = probe.prompt(situation)
                if prompt is None:
                    continue
                generation_prompt = self._from_turn_start(
                    self._generation_prompt(probe, situation).lstrip()
                )
                if header.strip() and generation_prompt.startswith(header):
                    continue
                anchor = (
                    _prompt_end(prompt, needle)
                    if not generation_prompt.strip()
                    else shared_start([generation_prompt, header]) or generation_prompt
                )
                anchor = anchor.rstrip()
                if not anchor.strip() or anchor in self.anchors:
                    continue
                self.anchors.append(anchor)
                bare = probe.render(probe.history(situation)) or ""
                what = (
                    "writes no new header: the prompt ends with it"
                    if not generation_prompt.strip()
                    else "starts the new turn with a header of its own"
                )
                self.findings.append(
                    Finding(
                        "start_anchor",
                        anchor,
                        f"{situation.replace('-', ' ')}: the chat template {what}",
                        (
                            Render(
                                probe.label(f"{situation.replace('-', ' ')}, no generation prompt"),
                                bare,
                            ),
                            Render(
                                probe.label(
                                    f"{situation.replace('-', ' ')}, with the generation prompt"
                                ),
                                prompt,
                            ),
                        ),
                    )
                )
        if not self.anchors:
            raise InferenceError("the prompt shows no header or marker where the new turn starts")

    # -- reasoning ------------------------------------------------------------------

    def _visible(self, probe: Probe, turn: Turn) -> str:
        """The turn as the parser sees it: what the prompt pre-writes after the anchor, then the generation."""
        prewritten = self.prewritten.get(probe.mode, "")
        if turn.missing and prewritten.endswith(turn.missing):
            prewritten = prewritten[: -len(turn.missing)]
        elif turn.missing:
            prewritten = ""
        return prewritten + turn.text

    def _learn_reasoning(self) -> None:
        for probe in self.probes:
            answer = probe.turn("answer")
            for key in REASONING_KEYS:
                turn = probe.turn("reasoning", key)
                if turn is None or REASONING not in turn.text or ANSWER not in turn.text:
                    continue
                view = self._visible(probe, turn)
                start, end = view.find(REASONING), view.find(ANSWER)
                opening, between = view[:start].strip(), view[start + len(REASONING) : end]
                if not opening or end < start or not between.strip():
                    continue
                opening = _last_block_start(opening)
                self.reasoning = _Reasoning(
                    opening, between.strip()
                )  # trimmed by the content wrapper later
                self.findings.append(
                    Finding(
                        "fields.reasoning_content.open",
                        opening,
                        f"the text before the reasoning in a finished turn ({key})",
                        (answer.render if answer else turn.render, turn.render),
                    )
                )
                self._reasoning_render = (answer.render if answer else turn.render, turn.render)
                return
        self._learn_prewritten_reasoning()

    def _learn_prewritten_reasoning(self) -> None:
        """Reasoning markers from what the prompt pre-writes: an empty block, or an opener alone."""
        blocks = {
            mode: _split_block(text.strip())
            for mode, text in self.prewritten.items()
            if text.strip()
        }
        openers = {
            mode: text.strip()
            for mode, text in self.prewritten.items()
            if text.strip() and blocks.get(mode) is None and MARKUP_TOKEN.fullmatch(text.strip())
        }
        probe = self.probes[0]
        if len(self.probes) == 2:
            on, off = (self.generation_prompts.get(p.mode, "") for p in self.probes)
            pair = (
                Render(
                    self.probes[0].label("first turn prompt"),
                    self.probes[0].prompt("first-turn") or "",
                ),
                Render(
                    self.probes[1].label("first turn prompt"),
                    self.probes[1].prompt("first-turn") or "",
                ),
            )
        else:
            pair = (
                Render(
                    probe.label("first turn, no generation prompt"),
                    probe.render(probe.history("first-turn")) or "",
                ),
                Render(
                    probe.label("first turn, with the generation prompt"),
                    probe.prompt("first-turn") or "",
                ),
            )
        block = next((found for found in blocks.values() if found), None)
        for each in self.probes:
            answer = each.turn("answer") if block is None else None
            if answer is not None and ANSWER in answer.text:
                block = _split_block(
                    self._visible(each, answer)[: self._visible(each, answer).find(ANSWER)].strip()
                )
                if block is not None:
                    pair = (
                        Render(
                            each.label("first turn, no generation prompt"),
                            each.render(each.history("first-turn")) or "",
                        ),
                        answer.render,
                    )
                    break
        if block is not None:
            self.reasoning = _Reasoning(*block)
            self.findings.append(
                Finding(
                    "fields.reasoning_content.open",
                    block[0],
                    "the prompt pre-writes an empty reasoning block (opener then closer) when thinking is off",
                    pair,
                )
            )
            self.findings.append(
                Finding(
                    "fields.reasoning_content.close",
                    block[1],
                    "the closing marker of that pre-written empty block",
                    pair,
                )
            )
            return
        if not openers:
            return
        opener = next(iter(openers.values()))
        closer, verified = self._closer_for(opener)
        if closer is None:
            self.notes.append(
                f"the prompt pre-writes {opener!r} but no render shows how it closes: no reasoning field"
            )
            return
        self.reasoning = _Reasoning(opener, closer)
        self.findings.append(
            Finding(
                "fields.reasoning_content.open",
                opener,
                "the prompt pre-writes it after the header (the reasoning is open when generation starts), and a finished "
                "turn lacks it",
                pair,
            )
        )
        how = (
            "the closing form of the opener; confirmed: the chat template drops an earlier turn's text up to it"
            if verified
            else "the closing form of the opener (no render confirms it)"
        )
        self.findings.append(Finding("fields.reasoning_content.close", closer, how, pair))
        self.fallbacks.append(
            f"reasoning close {closer!r}: no render writes reasoning, so the closer is the opener's closing form"
            + ("" if verified else ", unconfirmed by any render")
        )

    def _closer_for(self, opener: str) -> tuple[str | None, bool]:
        """The closing form of `opener`, confirmed when the chat template drops the text before it
        from an earlier turn (as templates that keep reasoning out of history do)."""
        candidates = _closing_forms(opener)
        probe = self.probes[0]
        ask = {"role": "user", "content": QUESTION}
        for closer in candidates:
            message = assistant(content=f"{REASONING}{closer}{ANSWER}")
            full = probe.render([ask, message, {"role": "user", "content": SECOND_QUESTION}])
            if full is not None and ANSWER in full and REASONING not in full:
                return closer, True
        return (candidates[0], False) if candidates else (None, False)

    # -- the end of the turn and the content's closes ----------------------------------

    def _learn_turn_end(self) -> None:
        probe = next((p for p in self.probes if p.turn("answer") is not None), None)
        if probe is None:
            self.notes.append(
                "the chat template writes no assistant answer: the content field ends only at eos_token"
            )
            self._answer_end = (None, None, False)
            self._add_close(self.eos_token)
            return
        answer = probe.turn("answer")
        after = answer.text[answer.text.find(ANSWER) + len(ANSWER) :]
        end = after.strip()
        wrapper_close = ""
        call = probe.turn("call")
        if call is not None and end:
            tail = call.text.rstrip()
            shared = shared_end([after.rstrip(), tail]).strip()
            if shared and shared != end and end.endswith(shared):
                wrapper_close, end = end[: -len(shared)].strip(), shared
        if self.eos_token and end.endswith(self.eos_token) and end != self.eos_token:
            end = end[
                : -len(self.eos_token)
            ].strip()  # the end of turn, then eos_token (added below)
        if end:
            self._add_close(end)
            self.findings.append(
                Finding(
                    "fields.content.close",
                    end,
                    "what the chat template writes after the answer: "
                    "the end of the turn"
                    + (" (also after a tool call)" if call is not None else ""),
                    (answer.render, call.render) if call is not None else (answer.render,),
                )
            )
        if wrapper_close:
            self._add_close(wrapper_close)
            self.findings.append(
                Finding(
                    "fields.content.close",
                    wrapper_close,
                    "written after the answer but not after a tool call: it closes a wrapper "
                    "around the answer",
                    (answer.render, call.render),
                )
            )
        if self.eos_token and self.eos_token not in self.closes:
            self._add_close(self.eos_token)
            self.findings.append(
                Finding(
                    "fields.content.close",
                    self.eos_token,
                    "the tokenizer's eos_token: a model may stop with it alone",
                    (answer.render,),
                )
            )
        self._answer_end = (probe, answer, bool(end))
        earlier = self._history_end(probe)
        if earlier and earlier not in self.closes:
            self._add_close(earlier)
            self.findings.append(
                Finding(
                    "fields.content.close",
                    earlier,
                    "the end of an earlier answer in the history (the final turn ends otherwise)",
                    (answer.render,),
                )
            )

    def _history_end(self, probe: Probe) -> str:
        """The first marker after an answer in the history (before the next user turn), or ""."""
        ask = {"role": "user", "content": QUESTION}
        full = probe.render(
            [ask, assistant(content=ANSWER), {"role": "user", "content": SECOND_QUESTION}]
        )
        if full is None or ANSWER not in full:
            return ""
        token = MARKUP_TOKEN.search(full, full.find(ANSWER) + len(ANSWER))
        return token.group() if token and token.start() < full.find(SECOND_QUESTION) else ""

    def _learn_next_headers(self, probe: Probe, answer: Turn, end_written: bool) -> None:
        """What the turn after the answer starts with: the tool result's first marker right after a
        call (a model hands over to the tool by writing it), and, when no end of turn is written, the
        next user turn's header (a documented fallback)."""
        found = []
        if not end_written:
            between = probe.following(
                assistant(content=ANSWER), {"role": "user", "content": SECOND_QUESTION}
            )
            token = MARKUP_TOKEN.search(between) if between is not None else None
            line = (
                between.strip().splitlines()[0].strip()
                if between is not None and between.strip()
                else ""
            )
            if token or line:
                found.append(
                    (token.group() if token else line, "the next user turn's header", True)
                )
        between = probe.following(
            FINAL_MESSAGES["call"],
            {
                "role": "tool",
                "tool_call_id": "call00001",
                "name": "zq_fn_alpha",
                "content": TOOL_RESULT,
            },
        )
        if between is not None and self.calls is not None:
            close = self.calls.field.get("close") or self.calls.field.get("close_pattern")
            pattern = escape(close) if "close" in self.calls.field else close
            ends = [
                match.end()
                for match in regex.finditer(pattern, between)
                if match.end() > match.start()
            ]
            token = MARKUP_TOKEN.search(between, ends[-1]) if ends else None
            if token and not between[ends[-1] : token.start()].strip():
                found.append(
                    (
                        token.group(),
                        "the tool result's first marker, right after a call,",
                        not end_written,
                    )
                )
        for token, what, fallback in found:
            if token in self.closes:
                continue
            self._add_close(token)
            if fallback:
                how = f"the chat template writes no end of turn; {what} follows the answer"
                self.fallbacks.append(
                    f"content close {token!r}: no end-of-turn marker is written, so {what} ends the answer"
                )
            else:
                how = f"{what} ends the turn: a model hands over to the tool by writing it"
            self.findings.append(Finding("fields.content.close", token, how, (answer.render,)))

    def _add_close(self, text: str) -> None:
        if text and text not in self.closes:
            self.closes.append(text)

    def _learn_content_wrapper(self) -> None:
        """A wrapper written around the answer (and the split of what follows reasoning)."""
        probe = next((p for p in self.probes if p.turn("answer") is not None), None)
        if probe is None:
            return
        answer = probe.turn("answer")
        view = self._visible(probe, answer)
        before = view[: view.find(ANSWER)]
        if self.reasoning is not None:
            before = _without_block(before, self.reasoning.open, self.reasoning.close)
        wrapper = before.strip()
        if self.reasoning is not None:
            close = self.reasoning.close
            if wrapper and close.endswith(wrapper) and close != wrapper:
                close = close[: -len(wrapper)].strip()
            if (
                self.header.strip()
                and self.header.strip() in close
                and not close.startswith(self.header.strip())
            ):
                extra = close[close.index(self.header.strip()) :]
                close = close[: close.index(self.header.strip())].strip()
                self._add_close(extra)
                self.findings.append(
                    Finding(
                        "fields.content.close",
                        extra,
                        "written between the reasoning and the answer: the turn's header again",
                        self._reasoning_render,
                    )
                )
            self.reasoning.close = close
            if not any(f.key == "fields.reasoning_content.close" for f in self.findings):
                self.findings.append(
                    Finding(
                        "fields.reasoning_content.close",
                        close,
                        "the text after the reasoning, before the answer (and its wrapper)",
                        self._reasoning_render,
                    )
                )
        if wrapper and not _mostly_text(wrapper):
            self._add_close(wrapper)
            self.findings.append(
                Finding(
                    "fields.content.close",
                    wrapper,
                    "written before the answer: it opens a wrapper around it, dropped with the text before it",
                    (answer.render,),
                )
            )

    # -- tool calls -------------------------------------------------------------------

    def _learn_calls(self) -> None:
        modes = []
        for probe in self.probes:
            answer = probe.turn("answer")
            if answer is None:
                continue
            two = probe.turn("two-calls")
            if two is not None and "zq_fn_beta" not in two.text:
                self.notes.append(
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
                    list(self.closes),
                )
            )
        found = learn_call_syntax(modes) if modes else "no answer renders"
        if isinstance(found, CallSyntax):
            self.calls = found
            self.findings += found.findings
            for marker in found.content_closes:
                self._add_close(marker)
            return
        self.notes.append(f"no tool_calls field: {found}")

    # -- candidates -------------------------------------------------------------------

    def candidates(self) -> list[tuple[str, dict]]:
        """(description, template) for each candidate, most specific first."""
        anchor: dict[str, Any]
        if any(regex.search(r"\s", text) for text in self.anchors):
            # Blanks inside an anchor vary between prompts (a blank line after one turn, not another).
            anchor = {
                "start_anchor_pattern": "|".join(
                    pattern_with_stand_ins(text) for text in self.anchors
                )
            }
        else:
            anchor = {
                "start_anchor": self.anchors[0] if len(self.anchors) == 1 else list(self.anchors)
            }
        content = (
            {"close": self.closes[0] if len(self.closes) == 1 else list(self.closes)}
            if self.closes
            else {}
        )
        found = []

        def template(reasoning: dict | None, calls: dict | None) -> dict:
            fields: dict[str, Any] = {}
            if reasoning:
                fields["reasoning_content"] = reasoning
            if calls:
                fields["tool_calls"] = calls
            fields["content"] = content
            return {"defaults": {"role": "assistant"}, **anchor, "fields": fields}

        reasoning = (
            {"open": self.reasoning.open, "close": self.reasoning.close} if self.reasoning else None
        )
        calls = self.calls.field if self.calls else None
        if reasoning and calls and self.calls.call_starts:
            starts = "|".join(dict.fromkeys(self.calls.call_starts))
            ending = {
                "open": reasoning["open"],
                "close_pattern": f"{escape(reasoning['close'])}|(?={starts})",
            }
            found.append(("reasoning also ends where a tool call starts", template(ending, calls)))
        found.append(("as learnt", template(reasoning, calls)))
        if calls:
            found.append(("without tool calls", template(reasoning, None)))
        if reasoning:
            found.append(("without reasoning", template(None, calls)))
        return found


# -- text helpers -----------------------------------------------------------------------


def _prompt_end(prompt: str, needle: str) -> str:
    """What the prompt ends with after the last `needle`: its last markup token (when only blanks
    follow it), else everything from its first markup token."""
    at = prompt.rfind(needle)
    tail = prompt[at + len(needle) :] if at >= 0 else prompt[-80:]
    tokens = list(MARKUP_TOKEN.finditer(tail))
    if not tokens:
        return tail.strip()
    if tail[tokens[-1].end() :].strip():
        return tail[tokens[0].start() :]
    return tokens[
        -1
    ].group()  # the last marker: the turns before it are rendered differently by other stacks


def _split_block(text: str) -> tuple[str, str] | None:
    """(opener, closer) when `text` is an empty block: an opener (a markup token, maybe with text
    after it) and a markup token that closes it (see `_closes`)."""
    tokens = list(MARKUP_TOKEN.finditer(text))
    if len(tokens) < 2 or tokens[-1].end() != len(text) or tokens[0].start() != 0 or "zq " in text:
        return None  # (a needle inside is a message's text, not a pre-written block)
    opener = text[: tokens[-1].start()].strip()
    starts = [token.group() for token in tokens[:-1]]
    if not any(_closes(start, tokens[-1].group()) for start in starts):
        return None
    return opener, tokens[-1].group()


def _closes(opener: str, closer: str) -> bool:
    """Whether markup token `closer` reads as the closing one of `opener`: a closing form of it
    (`_closing_forms`), a slash it lacks, or the same name with another first or last word."""
    if closer in _closing_forms(opener) or ("/" in closer and "/" not in opener):
        return True
    first, second = (regex.sub(r"[^\w]", " ", token).split() for token in (opener, closer))
    if len(first) != 1 or len(second) != 1 or first == second:
        return False
    a, b = (word.split("_") for word in (first[0].lower(), second[0].lower()))
    return len(a) > 1 and len(b) > 1 and (a[1:] == b[1:] or a[:-1] == b[:-1])


def _last_block_start(opening: str) -> str:
    """The reasoning opener: the last run of text without blanks before the reasoning (what comes
    before it, such as the turn's own markers, is not part of the opener)."""
    return opening.split()[-1] if opening.split() else opening


def _without_trailing_opener(header: str, sources: list[str]) -> str:
    """`header` without a trailing opener that, in some source, is the start of an empty block
    (the opener belongs to the block the prompt pre-writes, not to the turn's header)."""
    for token in reversed(list(MARKUP_TOKEN.finditer(header))):
        cut = token.start()
        for source in sources:
            block = _split_block(source[cut:].strip()) if source.startswith(header[:cut]) else None
            if block is not None and block[0] == header[cut:].strip():
                return header[:cut]
    return header


def _closing_forms(opener: str) -> list[str]:
    """The closing forms of a markup opener, most common first: a slash after its first
    punctuation, or its delimiters mirrored."""
    found = []
    token = MARKUP_TOKEN.fullmatch(opener)
    if token is None:
        return found
    head = regex.match(r"^([<\[][^\w\s]*)(.*?)([^\w\s]*[>\]])$", opener)
    if head is None:
        return found
    left, word, right = head.groups()
    found.append(f"{left}/{word}{right}")
    if left != right[::-1] and len(left) > 1:
        found.append(f"{left[0]}{word}{left[1:][::-1]}{right[-1]}")
    return list(dict.fromkeys(found))


def _without_block(text: str, opener: str, closer: str) -> str:
    """`text` without an opener ... closer block in it (reasoning written empty)."""
    start = text.find(opener)
    end = text.find(closer, start + len(opener)) if start >= 0 else -1
    if start < 0 or end < 0:
        return text.replace(opener, "", 1) if start >= 0 else text
    return text[:start] + text[end + len(closer) :]


def _mostly_text(text: str) -> bool:
    """True for plain words (no markup): not a marker the model writes."""
    return not MARKUP_TOKEN.search(text) and not regex.search(r"[^\w\s]", text)


# -- inference in a process that can be killed ---------------------------------------------

# Address space the inference process may use (bytes): a chat template that builds a huge
# string gets a MemoryError there, not the machine's memory.
ISOLATED_MEMORY_BYTES = 3 * 1024**3


def infer_template_isolated(
    chat_template: str | None = None,
    *,
    model: str | None = None,
    bos_token: str | None = None,
    eos_token: str | None = None,
    regex_timeout: float | None = 1.0,
    seconds: float = DEFAULT_TIME_BUDGET,
    memory_bytes: int = ISOLATED_MEMORY_BYTES,
) -> InferredTemplate:
    """`infer_template` in a child process that is killed past `seconds` and capped at `memory_bytes`.

    A chat template is code: one that loops inside a render cannot be stopped in this
    process, so the command line (and anything serving untrusted chat templates) infers here.

    Raises:
        InferenceError: the child ran out of time or memory, or died (the message says which),
            or inference itself found nothing; other errors of `infer_template` as raised there.
    """
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    receiver, sender = context.Pipe(duplex=False)
    job = {
        "chat_template": chat_template,
        "model": model,
        "bos_token": bos_token,
        "eos_token": eos_token,
        "regex_timeout": regex_timeout,
        "time_budget": seconds,
    }
    child = context.Process(target=_isolated_main, args=(sender, job, memory_bytes), daemon=True)
    child.start()
    sender.close()
    try:
        if not receiver.poll(seconds + 1):
            raise InferenceError(
                f"inference did not finish within {seconds:g} s: the chat template renders too slowly "
                "(a loop, or a very long output), or the time budget is too small for it"
            )
        kind, value = receiver.recv()
    except EOFError:
        child.join(5)
        raise InferenceError(
            f"the inference process stopped without an answer (exit code {child.exitcode}): the chat "
            f"template may need more than {memory_bytes // 1024**2} MB"
        ) from None
    finally:
        if child.is_alive():
            child.kill()
        child.join(5)
        receiver.close()
    if kind == "ok":
        return value
    raise value


def _isolated_main(sender, job: dict, memory_bytes: int) -> None:
    import resource

    try:
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    except (ValueError, OSError):
        pass  # the limit cannot be lowered here: inference still runs, with its time budget
    try:
        result = ("ok", infer_template(**job))
    except MemoryError:
        result = (
            "error",
            InferenceError(
                f"inference ran out of memory (it may use {memory_bytes // 1024**2} MB): the "
                "chat template builds very large outputs"
            ),
        )
    except (
        ValueError,
        ImportError,
    ) as error:  # InferenceError, ModelLoadError, TemplateError: their messages say why
        result = ("error", error)
    except Exception as error:  # the chat template's own failure, whatever its type
        result = ("error", InferenceError(f"inference failed: {error}"))
    try:
        sender.send(result)
    except Exception as error:  # a result that cannot be sent (pickling) is an answer too
        sender.send(
            (
                "error",
                InferenceError(
                    f"inference finished but its result could not be sent back: {error}"
                ),
            )
        )
    sender.close()


# -- choosing a template for a chat template -----------------------------------------------


def choose_template(
    chat_template: str,
    *,
    bos_token: str = "",
    eos_token: str = "",
    model_name: str = "",
    model_type: str = "",
    regex_timeout: float | None = 1.0,
    time_budget: float | None = DEFAULT_TIME_BUDGET,
) -> tuple[dict, str]:
    """The response template to parse a model's output with, given its chat template, and why.

    A shipped template (`templates/`) that passes the conformance check against the chat
    template, tried in this order: those whose `models` list `model_name`, the one the family
    rules propose (`engine.chat_templates.families`: markers of the chat template's source, `model_type`),
    then every other whose start anchor occurs in a prompt the chat template renders. The rules
    only propose: a template is chosen only when the check passes. When none passes, the
    template inferred from the chat template (`infer_template`); when that fails its check too,
    whichever candidate failed the fewest rows, and the reason says so.

    Returns:
        (response template dict, reason: one sentence for the user, such as "templates/qwen3.json
        conforms to the chat template (the family rules propose it: ...)" or "inferred from the
        chat template: no shipped template conforms (3 checked)").

    Raises:
        InferenceError: nothing conforms and nothing can be inferred.
        ImportError: transformers (or jinja2) is not installed.
    """
    from ..template_files import list_templates
    from .conformance import rendered_prompts
    from .families import family_template

    files = {template_file.name: template_file for template_file in list_templates()}
    order: dict[str, str] = {}
    for template_file in files.values():
        if model_name and model_name in template_file.models:
            order.setdefault(template_file.name, f"its models list {model_name}")
    family = family_template(chat_template, model_type, files)
    if family is not None:
        order.setdefault(family[0], f"the family rules propose it: {family[1]}")
    prompts = rendered_prompts(chat_template, bos_token=bos_token, eos_token=eos_token)
    for name, template_file in files.items():
        if name not in order and _anchor_in(template_file.response_template, prompts):
            order[name] = "its start anchor is in the chat template's prompts"
    tried: list[tuple[int, dict, str]] = []
    for name, why in order.items():
        report = check_conformance(
            files[name].response_template,
            chat_template,
            bos_token=bos_token,
            eos_token=eos_token,
            regex_timeout=regex_timeout,
        )
        if report.passed:
            return (
                files[name].response_template,
                f"templates/{files[name].path.name} conforms to the chat template ({why})",
            )
        tried.append(
            (
                len(report.failed),
                files[name].response_template,
                f"templates/{files[name].path.name}",
            )
        )
    inferred = infer_template(
        chat_template,
        bos_token=bos_token,
        eos_token=eos_token,
        regex_timeout=regex_timeout,
        time_budget=time_budget,
    )
    checked = f"{len(tried)} checked" if tried else "none proposed"
    if inferred.passed:
        return (
            inferred.template,
            f"inferred from the chat template: no shipped template conforms ({checked})",
        )
    best = min(tried, key=lambda item: item[0], default=None)
    if best is not None and best[0] < len(inferred.report.failed):
        return (
            best[1],
            f"{best[2]} fails {best[0]} rows of the check, the fewest; neither it nor the inferred template conforms",
        )
    return inferred.template, (
        f"inferred from the chat template, which fails {len(inferred.report.failed)} rows of the check: "
        f"no shipped template conforms ({checked})"
    )


def _anchor_in(template: dict, prompts: list[str]) -> bool:
    """Whether the template's start anchor matches somewhere in one of `prompts`."""
    anchor = load_template(template).start_anchor
    return any(anchor.pattern.search(prompt) for prompt in prompts)
