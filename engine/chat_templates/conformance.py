"""Conformance: does a response template read back what a model's chat template writes?

A chat template turns messages into a prompt; a response template turns the
model's output back into a message. `check_conformance` renders a matrix of
conversation situations with the chat template (through transformers' own
`render_jinja_template`, the sandbox `apply_chat_template` uses) and checks,
for each one:

- the anchor check: parsing an empty generation after the prompt gives exactly
  what the chat template pre-wrote for the new turn (nothing, or the prefilled
  text), and no field of an earlier turn;
- round trips: the conversation is rendered once more with a known final
  assistant message (reasoning, content, one and two tool calls with typed,
  nested, unicode and quoted arguments); the text the chat template writes for
  that turn, after the generation prompt, is taken as the generation, parsed
  with the prompt as prefix, and compared with the message. Where the chat
  template does not write part of the message (reasoning dropped from history,
  tool calls it never renders), that part is left out of the expected message
  and the row says so.

A situation the chat template refuses to render (its own error) is reported as
not renderable and not counted against the response template. The situations
and the report are documented in docs/authoring.md and docs/cli.md.

Rendering is `engine.chat_templates.render`'s: transformers is imported only when a
check runs, so `import engine` stays light.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from ..authoring.lint import Diagnostic, lint_prompts
from ..errors import PatternTimeoutError, ResponseParseError
from ..labelled_output import LabelledOutput, differing_keys
from ..parser import ResponseParser
from ..template import ResponseTemplate, load_template
from .render import (
    WEATHER_TOOL,
    ChatTemplateRenderer,
    ChatTemplateRenderError,
    find_thinking_switch,
    load_chat_template,
    thinking_values,
)
from .turns import (
    Turn,
    argument_defects,
    common_length,
    locate_turn,
    shorten,
    show,
)

# The matrix's tools: the weather tool `call_style` probes with, and two more.
TOOLS: list[dict] = [
    WEATHER_TOOL,
    {
        "type": "function",
        "function": {
            "name": "create_event",
            "description": "Create a calendar event.",
            "parameters": {
                "type": "object",
                "properties": {
                    "title": {"type": "string", "description": "The title."},
                    "details": {
                        "type": "object",
                        "description": "Where and with what.",
                        "additionalProperties": True,
                    },
                    "notify": {"type": "boolean", "description": "Whether to notify."},
                },
                "required": ["title"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "set_alarm",
            "description": "Set an alarm.",
            "parameters": {
                "type": "object",
                "properties": {
                    "hour": {"type": "integer", "description": "The hour."},
                    "minutes": {"type": "integer", "description": "The minutes."},
                    "enabled": {"type": "boolean", "description": "Whether it rings."},
                    "label": {"type": "string", "description": "The label."},
                },
                "required": ["hour"],
            },
        },
    },
]


@dataclass
class SituationResult:
    """One row of the conformance matrix.

    Attributes:
        name: ``SITUATION[/thinking-on|/thinking-off]/CHECK``, e.g.
            ``after-tool-result/thinking-off/round-trip:tool-call``; CHECK is ``anchor`` or
            ``round-trip:MESSAGE``.
        passed: the parse gave `expected` (by `engine.chat_templates.evidence.message_differences`,
            the comparison inference and the page's tests use) and closed every region it
            opened (always False when not `renderable`).
        renderable: the chat template rendered the situation; False rows carry the
            template's own error (or why the rendered turn cannot serve as a generation)
            in `detail` and do not count against the response template.
        detail: why it failed, what was normalised, or the chat template's error.
        expected: the message the response template should give (None when not renderable).
        got: the message it gave (None when the row is not renderable). When a region failed
            to parse, `detail` gives the error and `got` the lenient parse (``on_error="keep"``),
            in which the failed region's text is unclaimed text.
        prompt: the rendered prompt (the parser's prefix).
        generation: the text parsed after it ("" for the anchor check).
        normalisations: parts of the message left out of `expected` because the chat
            template does not write them, as phrases.
        tools: the parse was given the check's tools (`TOOLS`), as the situation's prompt was.
    """

    name: str
    passed: bool
    renderable: bool
    detail: str
    expected: dict | None
    got: dict | None
    prompt: str = ""
    generation: str = ""
    normalisations: tuple[str, ...] = ()
    tools: bool = False

    @property
    def labelled(self) -> LabelledOutput | None:
        """The row as the one record of a prompt, an output and the expected message (named by
        the row's name; its `differences` with `got` is how the row was judged); None when the
        row is not renderable."""
        if self.expected is None:
            return None
        return LabelledOutput(
            0, self.prompt, self.generation, _tools(self.tools), self.expected, "row", self.name
        )

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "passed": self.passed,
            "renderable": self.renderable,
            "detail": self.detail,
            "expected": self.expected,
            "got": self.got,
            "prompt": self.prompt,
            "generation": self.generation,
            "normalisations": list(self.normalisations),
            "tools": self.tools,
        }


@dataclass
class ConformanceReport:
    """The matrix for one response template against one chat template.

    Attributes:
        situations: every row, in matrix order.
        thinking_switch: the chat-template keyword that switched reasoning on and off
            (``enable_thinking``, ``thinking``), or None when it has none.
        diagnostics: lint findings that need the rendered prompts (``anchor-not-in-prompts``).
    """

    situations: list[SituationResult]
    thinking_switch: str | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def renderable(self) -> list[SituationResult]:
        return [s for s in self.situations if s.renderable]

    @property
    def failed(self) -> list[SituationResult]:
        return [s for s in self.situations if s.renderable and not s.passed]

    @property
    def passed(self) -> bool:
        """Every renderable row passed, and at least one was renderable."""
        return bool(self.renderable) and not self.failed

    @property
    def exit_code(self) -> int:
        """0 when all renderable rows pass, 1 when some fail, 2 when nothing could be rendered."""
        if not self.renderable:
            return 2
        return 1 if self.failed else 0

    def counts(self) -> dict:
        """``{"passed": N, "failed": N, "not_renderable": N}``."""
        renderable = self.renderable
        return {
            "passed": sum(s.passed for s in renderable),
            "failed": len(renderable) - sum(s.passed for s in renderable),
            "not_renderable": len(self.situations) - len(renderable),
        }

    def to_dict(self) -> dict:
        return {
            "passed": self.passed,
            "counts": self.counts(),
            "thinking_switch": self.thinking_switch,
            "diagnostics": [d.to_dict() for d in self.diagnostics],
            "situations": [s.to_dict() for s in self.situations],
        }


# -- the conversations ------------------------------------------------------------


def _tools(wanted: bool) -> list[dict] | None:
    return copy.deepcopy(TOOLS) if wanted else None


def _call(number: int, name: str, arguments: dict) -> dict:
    # Nine alphanumerics: Mistral's templates refuse any other id.
    return {
        "id": f"call{number:05d}",
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


def _tool_result(call: dict, content: str) -> dict:
    return {
        "role": "tool",
        "tool_call_id": call["id"],
        "name": call["function"]["name"],
        "content": content,
    }


@dataclass(frozen=True)
class _Message:
    """A final assistant message of a round trip, and the plain text that finds it in a render."""

    name: str
    message: dict
    markers: tuple[str, ...]


def _final_messages(with_tools: bool, reasoning: bool) -> list[_Message]:
    """The messages a round trip renders as the new turn."""
    found = []
    if reasoning:
        found.append(
            _Message(
                "reasoning-and-answer",
                {
                    "role": "assistant",
                    "reasoning_content": "The user wants the forecast; 18 °C is mild.",
                    "content": 'Take a light jacket: it is 18 °C in "Paris" — 晴れ ☀️',
                },
                ("The user wants the forecast", "Take a light jacket"),
            )
        )
    else:
        found.append(
            _Message(
                "answer",
                {
                    "role": "assistant",
                    "content": 'Take a light jacket: it is 18 °C in "Paris" — 晴れ ☀️',
                },
                ("Take a light jacket",),
            )
        )
    if not with_tools:
        return found
    alarm = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            _call(
                11, "set_alarm", {"hour": 7, "minutes": 30, "enabled": True, "label": "wake up ☕"}
            )
        ],
    }
    if reasoning:
        alarm = {
            "role": "assistant",
            "reasoning_content": "An alarm at 7:30 needs set_alarm.",
            **alarm,
        }
    found.append(_Message("tool-call", alarm, ("An alarm at 7:30", "wake up")))
    found.append(
        _Message(
            "content-and-tool-calls",
            {
                "role": "assistant",
                "content": "Checking both now.",
                "tool_calls": [
                    _call(12, "get_weather", {"city": "Zürich", "days": 3}),
                    _call(
                        13,
                        "create_event",
                        {
                            "title": 'Team "offsite" 🎉',
                            "notify": False,
                            "details": {
                                "room": {"floor": 2, "name": "B-2"},
                                "tags": ["q1", "планы"],
                            },
                        },
                    ),
                ],
            },
            ("Checking both now.", "offsite"),
        )
    )
    return found


@dataclass(frozen=True)
class _Situation:
    name: str
    history: list[dict]
    tools: bool
    prefill: str | None = None  # the assistant text continue_final_message continues


def _situations(reasoning: bool) -> list[_Situation]:
    def think(text: str) -> dict:
        return {"reasoning_content": text} if reasoning else {}

    ask = {"role": "user", "content": "What's the weather in Paris today?"}
    paris = _call(1, "get_weather", {"city": "Paris", "days": 1})
    tokyo = _call(2, "get_weather", {"city": "Tokyo", "days": 1})
    one_call = {
        "role": "assistant",
        **think("I need the forecast first."),
        "content": "",
        "tool_calls": [paris],
    }
    two_calls = {
        "role": "assistant",
        **think("Two cities, two calls."),
        "content": "",
        "tool_calls": [paris, tokyo],
    }
    earlier = [
        {"role": "user", "content": "Hi! Can you plan my Tuesday?"},
        {
            "role": "assistant",
            **think("Planning needs the weather."),
            "content": "",
            "tool_calls": [paris],
        },
        _tool_result(paris, '{"forecast": "sunny", "high_c": 21}'),
        {
            "role": "assistant",
            **think("Sunny, so lunch outside."),
            "content": "Tuesday is sunny: lunch outside at noon.",
        },
        {"role": "user", "content": "Great. And what's the weather in Paris today?"},
    ]
    return [
        _Situation("first-turn", [ask], tools=False),
        _Situation("first-turn-tools", [ask], tools=True),
        _Situation("multi-turn", earlier, tools=True),
        _Situation(
            "after-tool-result",
            [ask, one_call, _tool_result(paris, '{"forecast": "cloudy", "high_c": 18}')],
            tools=True,
        ),
        _Situation(
            "after-parallel-tool-results",
            [
                {"role": "user", "content": "Weather in Paris and Tokyo?"},
                two_calls,
                _tool_result(paris, '{"forecast": "cloudy", "high_c": 18}'),
                _tool_result(tokyo, '{"forecast": "rain", "high_c": 12}'),
            ],
            tools=True,
        ),
        _Situation(
            "prefill",
            [ask, {"role": "assistant", "content": "Here is today's forecast:"}],
            tools=False,
            prefill="Here is today's forecast:",
        ),
    ]


def _texts(messages: list[dict]) -> list[str]:
    """The non-empty texts of `messages` (what must never reappear in a generation)."""
    texts = []
    for message in messages:
        for key in ("content", "reasoning_content"):
            value = message.get(key)
            if isinstance(value, str) and value.strip():
                texts.append(value)
    return texts


# -- expected messages ----------------------------------------------------------------


def _expected(message: dict, turn: str) -> tuple[dict, list[str]]:
    """The message the response template should read from `turn`, and what was left out."""
    expected: dict[str, Any] = {"role": "assistant"}
    notes = []
    for key, label in (("reasoning_content", "reasoning"), ("content", "content")):
        text = message.get(key)
        if text and text in turn:
            expected[key] = text
        elif text:
            notes.append(f"{label}: the chat template does not write it for this turn")
    calls = message.get("tool_calls") or []
    written = [call for call in calls if call["function"]["name"] in turn]
    if written:
        expected["tool_calls"] = [
            {
                "type": "function",
                "function": {
                    "name": c["function"]["name"],
                    "arguments": c["function"]["arguments"],
                },
            }
            for c in written
        ]
    if len(written) < len(calls):
        notes.append(
            f"tool_calls: the chat template writes {len(written)} of the {len(calls)} calls for this turn"
        )
    return expected, notes


def _explicit_open_region(
    template: ResponseTemplate, prompt: str, timeout: float | None
) -> str | None:
    """The field whose region (opened by a delimiter) is still open after `prompt`, or None."""
    try:
        parser = ResponseParser(template, prefix=prompt, regex_timeout=timeout)
        # One character that no delimiter holds settles a delimiter the prompt ends with.
        events = parser.initial_events + parser.feed("\x00")
    except (ResponseParseError, PatternTimeoutError):
        return None
    current = None
    for event in events:
        if event["type"] == "region_open":
            current = event["field"]
        elif event["type"] == "region_close":
            current = None
    if current is None or template.fields[current].implicit:
        return None
    return current


def _differences(expected: dict, got: dict) -> str:
    """How `got` differs from `expected`, with the values shown ("content: expected 'a', got
    'b'; unexpected tool_calls [...]"); "" when equal."""
    parts = []
    for key, how in differing_keys(expected, got):
        if how == "missing":
            parts.append(f"{key} missing (expected {show(expected[key])})")
        elif how == "unexpected":
            parts.append(f"unexpected {key} {show(got[key])}")
        else:
            parts.append(f"{key}: expected {show(expected[key])}, got {show(got[key])}")
    return "; ".join(parts)


# -- the check ------------------------------------------------------------------------


def _parse_row(
    name: str,
    template: ResponseTemplate,
    prompt: str,
    generation: str,
    expected: dict,
    tools: bool,
    notes: list[str],
    anchor_check: bool,
    timeout: float | None,
    cut_off: str = "",
) -> SituationResult:
    """Parse one row's `generation` after `prompt` and compare with `expected`.

    `cut_off`: the text the chat template ends every conversation with, cut from the rendered
    turn (`ChatTemplateRenderer.trailer`). A region that ran to the end of the generation
    still counts as closed when its close is read once that text is put back: the close the
    model writes (an end-of-turn token) was in the render, the matrix only cut it."""

    def read(text: str) -> tuple[ResponseParser, dict]:
        # Lenient, so a failed region still shows where its text went.
        parser = ResponseParser(
            template,
            prefix=prompt,
            tools=_tools(tools),
            regex_timeout=timeout,
            on_error="keep",
            record_spans=True,
        )
        parser.feed(text)
        return parser, parser.finalize()[0]

    try:
        parser, got = read(generation)
        if cut_off and not parser.errors and not anchor_check:
            whole = read(generation + cut_off)[0] if _unclosed(template, parser, prompt) else parser
        else:
            whole = parser
    except PatternTimeoutError as error:
        return SituationResult(
            name,
            False,
            True,
            f"the parse failed: {error}",
            expected,
            None,
            prompt,
            generation,
            tuple(notes),
            tools,
        )
    if parser.errors:
        return SituationResult(
            name,
            False,
            True,
            f"the parse failed: {parser.errors[0]}",
            expected,
            got,
            prompt,
            generation,
            tuple(notes),
            tools,
        )
    unclosed = [] if anchor_check else _unclosed(template, whole, prompt)
    agrees = not differing_keys(expected, got)
    passed = agrees and not unclosed
    if passed:
        detail = "; ".join(f"normalised {note}" for note in notes)
    elif agrees:
        detail = unclosed[0]
    else:
        detail = "; ".join([_differences(expected, got)] + unclosed[:1])
        if anchor_check:
            cut = parser.prefix_cut
            where = (
                (
                    f"the start anchor cut the prompt at offset {cut} of {len(prompt)}, leaving "
                    f"{show(prompt[cut:], 120)}"
                )
                if cut
                else "the start anchor is not in the prompt"
            )
            detail += f" ({where})"
    return SituationResult(
        name, passed, True, detail, expected, got, prompt, generation, tuple(notes), tools
    )


def _unclosed(template: ResponseTemplate, parser: ResponseParser, prompt: str) -> list[str]:
    """`unclosed_regions` of a finished parser's spans, offsets told in its output."""
    return unclosed_regions(template, parser.spans or [], len(prompt) - parser.prefix_cut)


def unclosed_regions(
    template: ResponseTemplate, spans: list[tuple], output_start: int
) -> list[str]:
    """The regions of fields that have a close delimiter but ended without it, in words.

    A region that runs to the end of the output, or ends where another region opens, was not
    ended by its own delimiter: its text may be right by chance (one call that happens to be
    the last thing written), but the close is not read, so a second call or any text after it
    would be lost. The matrix counts such a row as failed.

    Args:
        template: the template the spans were recorded with.
        spans: a parser's `spans` (``record_spans=True``), stream offsets.
        output_start: the stream offset where the output starts (the length of the prefix
            after its start anchor), so offsets are told in the output.

    Returns:
        one sentence per such region, in stream order ([] when every region ended at its own
        close).
    """
    opened: dict[int, tuple[str, int]] = {}
    closed: set[int] = set()
    for start, _end, kind, name, region, _match in spans:
        if kind == "open" and region is not None:
            opened[region] = (name, start)
        elif kind == "close" and region is not None:
            closed.add(region)
    found = []
    regions = sorted(opened.items())
    for index, (region, (name, start)) in enumerate(regions):
        spec = template.fields.get(name)
        if region in closed or spec is None or spec.implicit or spec.close is None:
            continue
        following = next((other for other in regions[index + 1 :]), None)
        ended = (
            f"where the next {following[1][0]} region opened"
            if following is not None
            else "at the end of the output"
        )
        found.append(
            f"the {name} region opened at offset {start - output_start} of the output never reached its close "
            f"{spec.close.source!r}: it ended {ended}"
        )
    return found


def _not_renderable(name: str, reason: str, prompt: str = "") -> SituationResult:
    return SituationResult(name, False, False, reason, None, None, prompt, "")


def _prompt(renderer: ChatTemplateRenderer, situation: _Situation) -> str:
    tools = _tools(situation.tools)
    if situation.prefill is not None:
        return renderer.render(situation.history, tools=tools, continue_final_message=True)
    return renderer.render(situation.history, tools=tools, add_generation_prompt=True)


def _modes(chat_template: str, bos_token: str, eos_token: str):
    """(row-name label, renderer, whether messages carry reasoning) for each thinking mode."""
    switch = find_thinking_switch(chat_template, bos_token=bos_token, eos_token=eos_token)
    if switch is None:
        yield "", ChatTemplateRenderer(chat_template, bos_token, eos_token), True
        return
    on, off = thinking_values(switch)
    for thinking, label in ((on, "/thinking-on"), (off, "/thinking-off")):
        yield (
            label,
            ChatTemplateRenderer(chat_template, bos_token, eos_token, switch, thinking),
            thinking is not off,
        )


@dataclass
class _RoundTrips:
    """What the round trips of one situation share."""

    template: ResponseTemplate
    renderer: ChatTemplateRenderer
    situation: _Situation
    prompt: str
    conversation: list[dict]  # the history before the final message
    generation_prompt: str  # what the prompt adds to the rendered history ("" for a prefill)
    timeout: float | None  # seconds per regex call of the template

    def render(self, messages: list[dict]) -> str:
        return self.renderer.render(messages, tools=_tools(self.situation.tools))


def _check_situation(
    template: ResponseTemplate,
    renderer: ChatTemplateRenderer,
    situation: _Situation,
    label: str,
    reasoning: bool,
    timeout: float | None,
) -> list[SituationResult]:
    base = f"{situation.name}{label}"
    try:
        prompt = _prompt(renderer, situation)
    except ChatTemplateRenderError as error:
        return [
            _not_renderable(
                f"{base}/anchor", f"the chat template refuses this conversation: {error}"
            )
        ]
    anchor_expected = {"role": "assistant"}
    if situation.prefill:
        anchor_expected["content"] = situation.prefill
    rows = [
        _parse_row(
            f"{base}/anchor",
            template,
            prompt,
            "",
            anchor_expected,
            situation.tools,
            [],
            True,
            timeout,
        )
    ]

    if situation.prefill is not None:
        whole = situation.prefill + " sunny, 18 °C, light wind — 晴れ ☀️"
        finals = [
            _Message("continuation", {"role": "assistant", "content": whole}, (situation.prefill,))
        ]
        conversation = situation.history[:-1]
    else:
        finals = _final_messages(situation.tools, reasoning)
        conversation = situation.history
    shared = _RoundTrips(template, renderer, situation, prompt, conversation, "", timeout)
    if situation.prefill is None:
        try:
            bare = shared.render(conversation)
        except ChatTemplateRenderError:
            bare = prompt
        shared.generation_prompt = prompt[common_length(bare, prompt) :]
    for final in finals:
        rows.append(_round_trip(shared, final, f"{base}/round-trip:{final.name}"))
    return rows


def _round_trip(shared: _RoundTrips, final: _Message, name: str) -> SituationResult:
    situation, prompt, renderer = shared.situation, shared.prompt, shared.renderer
    try:
        full = shared.render(shared.conversation + [final.message])
    except ChatTemplateRenderError as error:
        return _not_renderable(name, f"the chat template refuses this message: {error}", prompt)
    if situation.prefill is not None:
        turn = _locate_prefill(prompt, full, situation.prefill)
    else:
        turn = locate_turn(
            prompt, shared.generation_prompt, full, final.markers, _texts(shared.conversation)
        )
    if isinstance(turn, str):
        return _not_renderable(name, turn, prompt)
    notes = []
    cut_off = ""
    if renderer.trailer and turn.generation.endswith(renderer.trailer):
        cut_off = renderer.trailer
        turn = Turn(turn.generation[: -len(renderer.trailer)], turn.missing)
        notes.append(
            f"the chat template ends every conversation with {renderer.trailer!r}, cut off"
        )
    if situation.prefill is not None:
        expected = {"role": "assistant", "content": final.message["content"]}
    else:
        expected, left_out = _expected(final.message, turn.generation)
        notes = left_out + notes
        if "content" in expected and not final.message.get("reasoning_content"):
            as_reasoning = {
                **final.message,
                "reasoning_content": final.message["content"],
                "content": "",
            }
            try:
                same = shared.render(shared.conversation + [as_reasoning]) == full
            except ChatTemplateRenderError:
                same = False
            if same:
                expected["reasoning_content"] = expected.pop("content")
                notes.append(
                    "content: the chat template writes it exactly as it writes reasoning, so it reads as reasoning"
                )
    open_field = (
        _explicit_open_region(shared.template, prompt, shared.timeout)
        if turn.missing.strip()
        else None
    )
    if open_field is not None:
        notes.append(
            f"the rendered turn lacks the {turn.missing!r} the generation prompt pre-writes"
        )
    row = _parse_row(
        name,
        shared.template,
        prompt,
        turn.generation,
        expected,
        situation.tools,
        notes,
        False,
        shared.timeout,
        cut_off,
    )
    if row.passed:
        return row
    # A failure the chat template's own rendering explains is no fault of the response template.
    if open_field is not None:
        return _not_renderable(
            name,
            (
                f"the generation prompt pre-writes {turn.missing!r}, which leaves {open_field} open, but the chat "
                f"template writes this turn without it ({show(turn.generation, 80)}), so the rendered turn cannot "
                "show how the model closes it"
            ),
            prompt,
        )
    if defects := argument_defects(final.message, turn.generation):
        return _not_renderable(
            name,
            (
                f"the chat template writes {defects[0]}, which no parser can read back as the argument "
                f"(the parse gave: {shorten(row.detail, 160)})"
            ),
            prompt,
        )
    return row


def _locate_prefill(prompt: str, full: str, prefill: str) -> Turn | str:
    if full.startswith(prompt):
        return Turn(full[len(prompt) :], "")
    at = full.rfind(prefill)
    if at < 0:
        return "the chat template does not write the prefilled text into the finished turn"
    return Turn(full[at + len(prefill) :], "")


def rendered_prompts(chat_template: str, *, bos_token: str = "", eos_token: str = "") -> list[str]:
    """The prompt of every situation the chat template renders (both thinking modes where
    it has a switch): what `engine.authoring.lint.lint_prompts` checks a start anchor against.

    Raises:
        ImportError: transformers is not installed.
    """
    prompts = []
    for _, renderer, reasoning in _modes(chat_template, bos_token, eos_token):
        for situation in _situations(reasoning):
            try:
                prompts.append(_prompt(renderer, situation))
            except ChatTemplateRenderError:
                continue
    return prompts


def resolve_chat_template(
    chat_template: str | None,
    model: str | None,
    bos_token: str | None,
    eos_token: str | None,
    empty_error: type[ValueError] = ValueError,
) -> tuple[str, str, str]:
    """The chat template's Jinja text and its (bos_token, eos_token), from the text itself or
    from `model` (a hub id or local folder; its tokenizer's tokens unless given).

    Returns (chat_template, bos_token, eos_token), the tokens "" when none.

    Raises:
        ValueError: both or neither of `chat_template` and `model` given.
        empty_error: the chat template is empty.
        ModelLoadError (a ValueError): `model` has no tokenizer or chat template.
    """
    if (chat_template is None) == (model is None):
        raise ValueError(
            "give exactly one of chat_template (the Jinja text) and model (a hub id or local folder)"
        )
    if model is not None:
        source = load_chat_template(model)
        chat_template = source.chat_template
        bos_token = source.bos_token if bos_token is None else bos_token
        eos_token = source.eos_token if eos_token is None else eos_token
    if not isinstance(chat_template, str) or not chat_template.strip():
        raise empty_error(
            "the chat template is empty: paste the Jinja text of the model's chat template"
        )
    return chat_template, bos_token or "", eos_token or ""


def check_conformance(
    template: dict | str | ResponseTemplate,
    chat_template: str | None = None,
    *,
    model: str | None = None,
    bos_token: str | None = None,
    eos_token: str | None = None,
    regex_timeout: float | None = None,
) -> ConformanceReport:
    """Check a response template against a chat template: the full matrix of situations.

    Args:
        template: the response template (dict, JSON text or loaded).
        chat_template: the Jinja chat template text (as pasted, or read from a
            ``.jinja`` file). Give this or `model`.
        model: a Hugging Face hub id or a local folder; its tokenizer's chat template
            (and bos/eos tokens) are used. Only tokenizer files are read, never weights.
        bos_token, eos_token: the tokens the chat template writes as ``bos_token`` /
            ``eos_token``; default "" (or the tokenizer's with `model`).
        regex_timeout: seconds allowed for each regex call of the template's patterns (a
            row whose parse runs out of time fails with `PatternTimeoutError`'s message).

    Returns:
        A `ConformanceReport`: every situation with its prompt, generation, expected and
        parsed message; `report.passed`, `report.exit_code` and `report.to_dict()` (the JSON
        report).

    Raises:
        TemplateError: the response template is invalid.
        ValueError: neither or both of `chat_template` and `model`; an empty chat template.
        ModelLoadError (a ValueError): `model` has no tokenizer or chat template, or the Hub
            cannot be reached.
        ImportError: transformers (or jinja2) is not installed.
    """
    loaded = load_template(template)
    chat_template, bos_token, eos_token = resolve_chat_template(
        chat_template, model, bos_token, eos_token
    )
    rows: list[SituationResult] = []
    prompts: list[str] = []
    switch = None
    for label, renderer, reasoning in _modes(chat_template, bos_token, eos_token):
        switch = renderer.switch
        for situation in _situations(reasoning):
            situation_rows = _check_situation(
                loaded, renderer, situation, label, reasoning, regex_timeout
            )
            rows += situation_rows
            if situation_rows[0].renderable:
                prompts.append(situation_rows[0].prompt)
    return ConformanceReport(rows, switch, lint_prompts(loaded, prompts))
