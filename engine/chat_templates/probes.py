"""The renders template inference compares: probe conversations, and the turn each one writes.

Inference learns a response template from a chat template alone, by rendering
conversations that differ in one thing and comparing the renders. This module
holds the conversations (with needles, text that cannot occur by chance: a
function named `zq_fn_alpha`, a string argument `"zq val 1"`, the integer
73519) and `Probe`, which renders them for one thinking mode and cuts out of
each render what the model would write for the final turn, the way the
conformance check does (`engine.chat_templates.conformance`), so that what inference learns is
what the check verifies.

Nothing here knows any model family: every marker inference uses is found in
these renders.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import Any

import regex

from .markup import difference
from .render import MUTATION_REFUSED, ChatTemplateRenderer, ChatTemplateRenderError
from .turns import back_to_boundary, common_length, locate_turn

# Needles: texts that occur in a render only where the conversation put them. Every one starts
# with the same two letters, so `NEEDLE` finds a message's text in a render.
QUESTION = "zq question one"
SECOND_QUESTION = "zq question two"
ANSWER = "zq answer text"
LEAD = "zq lead text"
REASONING = "zq reasoning text"
TOOL_RESULT_TEXT = "zq sunny"
TOOL_RESULT = '{"zq_result": "zq sunny"}'
ALPHA, BETA = "zq_fn_alpha", "zq_fn_beta"
# The arguments: a string and an integer of ALPHA, a boolean of BETA.
STRING_KEY, NUMBER_KEY, BOOLEAN_KEY = "zq_key_a", "zq_num", "zq_key_b"
STRING_VALUE, NUMBER_VALUE = "zq val 1", 73519
OTHER_STRING_VALUE, OTHER_NUMBER_VALUE = "zq val 2", 46082
NUMBER_TEXT = str(NUMBER_VALUE)
ALPHA_ARGUMENTS = {STRING_KEY: STRING_VALUE, NUMBER_KEY: NUMBER_VALUE}
BETA_ARGUMENTS = {BOOLEAN_KEY: True}
OTHER_ALPHA_ARGUMENTS = {STRING_KEY: OTHER_STRING_VALUE, NUMBER_KEY: OTHER_NUMBER_VALUE}
NEEDLE = regex.compile(r"zq[ _]")
# What each needle stands for, in words an author reads (`probe_names_in_words`), longest first.
_IN_WORDS = {
    TOOL_RESULT: '{"result": "a tool result"}',
    SECOND_QUESTION: "a second question",
    QUESTION: "a question",
    ANSWER: "an answer",
    LEAD: "some text",
    REASONING: "some reasoning",
    TOOL_RESULT_TEXT: "a tool result",
    OTHER_STRING_VALUE: "more text",
    STRING_VALUE: "some text",
    ALPHA: "a_tool",
    BETA: "another_tool",
    STRING_KEY: "text_arg",
    NUMBER_KEY: "number_arg",
    BOOLEAN_KEY: "flag_arg",
    "zq_result": "result",
}
_IN_WORDS_RE = regex.compile(
    "|".join(regex.escape(needle) for needle in sorted(_IN_WORDS, key=len, reverse=True))
)


def probe_names_in_words(text: str) -> str:
    """`text` with the probes' needles (made-up tool names, argument names and values, texts)
    put as what they stand for (``a_tool(text_arg='some text', ...)``), for sentences meant for
    the author; the renders themselves keep them. Numbers are left alone."""
    return _IN_WORDS_RE.sub(lambda match: _IN_WORDS[match.group()], text)


PROBE_TOOLS: list[dict] = [
    {
        "type": "function",
        "function": {
            "name": ALPHA,
            "description": "Look a thing up.",
            "parameters": {
                "type": "object",
                "properties": {
                    STRING_KEY: {"type": "string", "description": "What to look up."},
                    NUMBER_KEY: {"type": "integer", "description": "How many."},
                },
                "required": [STRING_KEY],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": BETA,
            "description": "Switch a thing.",
            "parameters": {
                "type": "object",
                "properties": {BOOLEAN_KEY: {"type": "boolean", "description": "On or off."}},
                "required": [],
            },
        },
    },
]
PROBE_SCHEMAS = {tool["function"]["name"]: tool["function"]["parameters"] for tool in PROBE_TOOLS}

# The keys a chat template may read a message's reasoning from, in the order tried.
REASONING_KEYS = ("reasoning_content", "thinking", "reasoning")
# The reasoning given as a chunk of the content instead (``[{"type": "thinking", "thinking":
# ...}, {"type": "text", "text": ...}]``), as some chat templates read it: tried after the keys.
THINKING_CHUNK = "thinking chunk"
# Renders longer than this are refused: a chat template that writes megabytes is not probed further.
MAX_RENDER_CHARS = 2_000_000


RENDERING_TOO_SLOWLY = "rendering: the chat template renders too slowly"


class InferenceTimeout(Exception):
    """Inference ran past its time budget (raised between renders, and between the steps of
    reading other evidence); the message says what it was doing."""


def check_deadline(deadline: float | None, doing: str) -> None:
    """Raise `InferenceTimeout` when `time.monotonic()` is past `deadline` (None: no limit);
    `doing` says what inference was doing ("rendering"), for the message."""
    if deadline is not None and time.monotonic() > deadline:
        raise InferenceTimeout(f"the time budget ran out while {doing}")


def call_id(number: int) -> str:
    """A tool call's id: nine alphanumerics, which every template accepts."""
    return f"call{number:05d}"


def call(number: int, name: str, arguments: dict) -> dict:
    """A tool call of an assistant message."""
    return {
        "id": call_id(number),
        "type": "function",
        "function": {"name": name, "arguments": copy.deepcopy(arguments)},
    }


def assistant(**keys: Any) -> dict:
    """An assistant message with empty content, `keys` added (``tool_calls=[...]``)."""
    message = {"role": "assistant", "content": ""}
    message.update(keys)
    return message


# The final messages compared, by name: each differs from another in one thing.
FINAL_MESSAGES: dict[str, dict] = {
    "answer": assistant(content=ANSWER),
    "reasoning": assistant(reasoning_content=REASONING, content=ANSWER),
    "call": assistant(tool_calls=[call(1, ALPHA, ALPHA_ARGUMENTS)]),
    "other-call": assistant(tool_calls=[call(1, ALPHA, OTHER_ALPHA_ARGUMENTS)]),
    "typed-call": assistant(tool_calls=[call(2, BETA, BETA_ARGUMENTS)]),
    "two-calls": assistant(
        tool_calls=[call(1, ALPHA, ALPHA_ARGUMENTS), call(2, BETA, BETA_ARGUMENTS)]
    ),
    "lead-and-call": assistant(content=LEAD, tool_calls=[call(1, ALPHA, ALPHA_ARGUMENTS)]),
}
# What each final message is, for people.
FINAL_LABELS = {
    "answer": f"an answer ({ANSWER!r})",
    "reasoning": f"reasoning ({REASONING!r}) then the answer",
    "call": f"one call of {ALPHA}({ALPHA_ARGUMENTS})",
    "other-call": f"one call of {ALPHA} with other arguments ({OTHER_ALPHA_ARGUMENTS})",
    "typed-call": f"one call of {BETA}({BETA_ARGUMENTS})",
    "two-calls": f"two calls, {ALPHA} then {BETA}",
    "lead-and-call": f"text ({LEAD!r}) then a call of {ALPHA}",
}
# Texts that find each final message in a render.
MARKERS = {
    "answer": (ANSWER,),
    "reasoning": (REASONING, ANSWER),
    "call": (STRING_VALUE,),
    "other-call": (OTHER_STRING_VALUE,),
    "typed-call": (BOOLEAN_KEY,),
    "two-calls": (STRING_VALUE,),
    "lead-and-call": (LEAD,),
}


@dataclass(frozen=True)
class Render:
    """One rendered text inference compared with another.

    Attributes:
        label: what the conversation holds and how it was rendered, for people
            ("first turn, thinking off: one call of zq_fn_alpha(...)").
        text: the text compared: the final turn as the model would write it (after the
            generation prompt), or a whole prompt.
    """

    label: str
    text: str

    def to_dict(self) -> dict:
        """JSON-ready: ``{"label", "text"}``."""
        return {"label": self.label, "text": self.text}


@dataclass
class Finding:
    """One thing inference decided, with the renders whose difference decided it.

    Attributes:
        key: the template key it decided, as a JSON path (``start_anchor``,
            ``fields.reasoning_content.open``).
        value: what was found (a delimiter, a pattern, a choice).
        how: one sentence: what in the renders shows it.
        renders: the renders compared (usually two: the difference between them is the evidence).
    """

    key: str
    value: Any
    how: str
    renders: tuple[Render, ...]

    def to_dict(self) -> dict:
        """JSON-ready: key, value, how, and each render with the span where the two differ."""
        renders = [render.to_dict() for render in self.renders]
        if len(self.renders) == 2:
            for render, span in zip(
                renders, difference(self.renders[0].text, self.renders[1].text)
            ):
                render["difference"] = list(span)
        return {"key": self.key, "value": self.value, "how": self.how, "renders": renders}


@dataclass
class Turn:
    """What the model writes for one final message, cut out of a full render.

    Attributes:
        render: the generation (the text after the prompt) with its label.
        missing: text the generation prompt pre-writes that the finished turn lacks (the
            chat template writes history differently), or "".
    """

    render: Render
    missing: str

    @property
    def text(self) -> str:
        """The generation's text."""
        return self.render.text


@dataclass
class Probe:
    """Renders the probe conversations with one chat template in one thinking mode.

    Attributes:
        renderer: the chat template, its tokens and thinking mode.
        mode: "" with no thinking switch, else "thinking on" or "thinking off".
        deadline: `time.monotonic()` past which a render raises `InferenceTimeout`, or None.
        refusals: every conversation the chat template refused, with its error.
        renders: every render made, in order.
        without_tools: the chat template refuses tools, so every render is made without them.
        adapted: how the renders were adapted to what the chat template refused (`_render_adapted`),
            one sentence each.
    """

    renderer: ChatTemplateRenderer
    mode: str
    deadline: float | None = None
    refusals: list[str] = field(default_factory=list)
    renders: list[Render] = field(default_factory=list)
    without_tools: bool = False
    adapted: list[str] = field(default_factory=list)
    header: str = (
        ""  # the new turn's header, once learnt (the part of a trailer a turn does not end with)
    )
    _cache: dict = field(default_factory=dict, repr=False)

    def label(self, text: str) -> str:
        """`text` with the probe's mode after it (``"..., thinking on"``), when it has one."""
        return f"{text}, {self.mode}" if self.mode else text

    def render(
        self,
        messages: list[dict],
        *,
        tools: bool = True,
        add_generation_prompt: bool = False,
        continue_final_message: bool = False,
    ) -> str | None:
        """The render, or None when the chat template refuses it (the refusal is recorded).

        Raises:
            InferenceTimeout: past the deadline.
        """
        check_deadline(self.deadline, RENDERING_TOO_SLOWLY)
        key = (repr(messages), tools, add_generation_prompt, continue_final_message)
        if key in self._cache:
            return self._cache[key]
        tools = tools and not self.without_tools
        what = _describe(messages, add_generation_prompt, continue_final_message)
        try:
            text = self.renderer.render(
                messages,
                tools=copy.deepcopy(PROBE_TOOLS) if tools else None,
                add_generation_prompt=add_generation_prompt,
                continue_final_message=continue_final_message,
            )
            if len(text) > MAX_RENDER_CHARS:
                raise ChatTemplateRenderError(
                    f"the render is {len(text):,} characters long, over {MAX_RENDER_CHARS:,}"
                )
        except ChatTemplateRenderError as error:
            text = self._render_adapted(
                messages, tools, add_generation_prompt, continue_final_message, error
            )
            if text is None:
                self.refusals.append(f"{self.label(what)}: {error}")
        self._cache[key] = text
        if text is not None:
            self.renders.append(Render(self.label(what), text))
        return text

    def _render_adapted(
        self,
        messages: list[dict],
        tools: bool,
        add_generation_prompt: bool,
        continue_final_message: bool,
        error: Exception,
    ) -> str | None:
        """The render again, adapted to what refused it, or None: a chat template that changes
        a list it builds (transformers' immutable sandbox refuses) is rendered allowing that; one
        that joins argument values with ``+`` (a number refused) gets them as text. What is
        adapted stays for every later render of this probe and is said in `adapted`; a render
        refused anyway is None."""
        renderer, said = self.renderer, str(error)
        if MUTATION_REFUSED.search(said) and not renderer.allow_mutation:
            renderer.allow_mutation = True
            self.adapted.append(
                f"the chat template changes a list or dict it builds ({said}), which "
                "transformers' sandbox refuses: rendered allowing it, to see what it writes"
            )
        elif (
            said.startswith("TypeError")
            and not renderer.values_as_text
            and any(
                not isinstance(value, str)
                for message in messages
                for call in message.get("tool_calls") or ()
                for value in (call["function"].get("arguments") or {}).values()
            )
        ):
            renderer.values_as_text = True
            self.adapted.append(
                f"the chat template refuses a call whose argument is a number or a boolean "
                f"({said}): calls rendered with every argument value as its JSON text"
            )
        else:
            return None
        try:
            return self.renderer.render(
                messages,
                tools=copy.deepcopy(PROBE_TOOLS) if tools else None,
                add_generation_prompt=add_generation_prompt,
                continue_final_message=continue_final_message,
            )
        except ChatTemplateRenderError as again:
            return self._render_adapted(
                messages, tools, add_generation_prompt, continue_final_message, again
            )

    def prefill(self) -> str | None:
        """The first turn with an answer to continue (``continue_final_message``), or None."""
        return self.render(
            self.history("first-turn") + [assistant(content=ANSWER)], continue_final_message=True
        )

    def first_turn_render(self) -> Render:
        """The first turn rendered without the generation prompt, as a `Render` (text "" when
        the chat template refuses it)."""
        return Render(
            self.label("first turn, no generation prompt"),
            self.render(self.history("first-turn")) or "",
        )

    def first_prompt_render(self) -> Render:
        """The first turn's prompt (with the generation prompt), as a `Render` (text "" when
        the chat template refuses it)."""
        return Render(
            self.label("first turn, with the generation prompt"),
            self.prompt("first-turn") or "",
        )

    # -- the prompts --------------------------------------------------------------

    def history(self, situation: str) -> list[dict]:
        """The conversation before the new turn, for a situation of the conformance matrix's kind."""
        ask = {"role": "user", "content": QUESTION}
        first = call(1, ALPHA, ALPHA_ARGUMENTS)
        if situation == "first-turn":
            return [ask]
        if situation == "after-tool-result":
            return [ask, assistant(tool_calls=[first]), tool_result(first)]
        if situation == "multi-turn":
            return [ask, assistant(content=ANSWER), {"role": "user", "content": SECOND_QUESTION}]
        raise ValueError(f"no situation {situation!r}")

    def prompt(self, situation: str) -> str | None:
        """The situation's prompt; when the chat template refuses the first turn with tools, every
        render from then on is made without them (its tool calls cannot be learnt)."""
        prompt = self.render(self.history(situation), add_generation_prompt=True)
        if prompt is None and situation == "first-turn" and not self.without_tools:
            if (
                self.render(self.history(situation), tools=False, add_generation_prompt=True)
                is not None
            ):
                self.without_tools = True
                self._cache.clear()
                return self.render(self.history(situation), add_generation_prompt=True)
        return prompt

    def generation_prompt(self, situation: str) -> str | None:
        """What `add_generation_prompt` adds to the situation's history, cut at a token boundary."""
        prompt = self.prompt(situation)
        bare = self.render(self.history(situation))
        if prompt is None or bare is None:
            return None
        return prompt[back_to_boundary(prompt, common_length(bare, prompt)) :]

    # -- the final turn -----------------------------------------------------------

    def turn(self, name: str, reasoning_key: str = "reasoning_content") -> Turn | None:
        """What the model writes for final message `name` (of `FINAL_MESSAGES`) on the first turn,
        or None when the chat template refuses it or writes none of it. `reasoning_key`: the key
        the reasoning is given under (`REASONING_KEYS`), or `THINKING_CHUNK`."""
        message = copy.deepcopy(FINAL_MESSAGES[name])
        if "reasoning_content" in message and reasoning_key == THINKING_CHUNK:
            message["content"] = [
                {"type": "thinking", "thinking": message.pop("reasoning_content")},
                {"type": "text", "text": message["content"]},
            ]
        elif "reasoning_content" in message and reasoning_key != "reasoning_content":
            message[reasoning_key] = message.pop("reasoning_content")
        history = self.history("first-turn")
        prompt = self.prompt("first-turn")
        full = self.render(history + [message])
        if prompt is None or full is None:
            return None
        found = _cut_turn(prompt, self.generation_prompt("first-turn") or "", full, MARKERS[name])
        if found is None:
            return None
        generation, missing = found
        trailer = self.renderer.trailer
        if trailer and self.header and self.header in trailer:
            trailer = trailer[
                trailer.rfind(self.header) :
            ]  # what comes before the next header ends this turn
        if trailer and generation.endswith(trailer):
            generation = generation[: -len(trailer)]
        what = (
            FINAL_LABELS[name]
            if reasoning_key == "reasoning_content"
            else f"{FINAL_LABELS[name]}, as {reasoning_key}"
        )
        return Turn(Render(self.label(f"first turn: {what}"), generation), missing)

    def following(self, message: dict, next_message: dict) -> str | None:
        """The text the chat template writes between the end of `message`'s needle and the start of
        `next_message` (what separates an assistant turn from the turn after it), or None."""
        ask = {"role": "user", "content": QUESTION}
        full = self.render([ask, message, next_message])
        if full is None:
            return None
        needle = next(text for text in (message.get("content"), STRING_VALUE) if text)
        start = full.rfind(needle)
        after = TOOL_RESULT if next_message["role"] == "tool" else next_message["content"]
        end = full.rfind(after)
        if start < 0 or end < 0 or end < start:
            return None
        if needle == STRING_VALUE:  # a call: from the end of its arguments, wherever they close
            start = full.find(NUMBER_TEXT, start)
            start = (
                start + len(NUMBER_TEXT)
                if start >= 0
                else full.rfind(STRING_VALUE) + len(STRING_VALUE)
            )
        else:
            start += len(needle)
        return full[start:end]


def tool_result(tool_call: dict) -> dict:
    """The tool's message answering `tool_call`."""
    return {
        "role": "tool",
        "tool_call_id": tool_call["id"],
        "name": tool_call["function"]["name"],
        "content": TOOL_RESULT,
    }


def _describe(
    messages: list[dict], add_generation_prompt: bool, continue_final_message: bool = False
) -> str:
    """A render's label from its conversation: the roles (`` (calls)`` after one that calls),
    then ``+ generation prompt`` or ``, continued``."""
    roles = " + ".join(
        message["role"] + (" (calls)" if message.get("tool_calls") else "") for message in messages
    )
    if continue_final_message:
        return roles + ", continued"
    return roles + (" + generation prompt" if add_generation_prompt else "")


def _cut_turn(
    prompt: str, generation_prompt: str, full: str, markers: tuple[str, ...]
) -> tuple[str, str] | None:
    """(generation, missing) of the final turn in `full`: after where it parts from `prompt` (at a
    token boundary) when its markers lie after that, else as the conformance check finds it."""
    parted = back_to_boundary(full, common_length(prompt, full))
    generation = full[parted:]
    if all(marker in generation for marker in markers) and parted >= len(prompt):
        return generation, ""
    turn = locate_turn(prompt, generation_prompt, full, markers, [QUESTION])
    if all(marker in generation for marker in markers):
        if (
            not isinstance(turn, str)
            and len(turn.generation) < len(generation)
            and all(marker in turn.generation for marker in markers)
        ):
            # The generation prompt writes instructions before the header the turn starts
            # with: the turn follows that header (`find_turn`).
            return turn.generation, turn.missing
        return generation, prompt[parted:]
    if isinstance(turn, str) or not any(marker in turn.generation for marker in markers):
        return None
    return turn.generation, turn.missing
