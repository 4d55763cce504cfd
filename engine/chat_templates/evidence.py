"""Labelled outputs: a prompt, the output a model wrote for it, the tools it was given and the
message the output means, and the one comparison every check of a parse uses.

A labelled output is the evidence every learner of template inference reads: an author's
example output (with or without its expected message), a chat template's render of a known
message (the render is the output, the message its label), a real output with its expected
message, a test case on the page. The same comparison decides them all, and the shipped
samples (`check`) and the conformance matrix's rows too, so a case that Infer reads right passes
in Tests, in `check` and in the matrix as well. `Example` is the record; `message_differences`
the comparison (text stripped; missing, None and "" alike; tool calls by order, name and
arguments as JSON values; `differing_keys` the same comparison key by key); `implausible` the
check of an output with no expected message (its calls name given tools, with their parameters).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import regex

from .probes import FINAL_MESSAGES, PROBE_TOOLS, Probe, Render


@dataclass(frozen=True)
class Example:
    """One labelled output (an example output, or a render of a known message).

    Attributes:
        index: its position in the list (0-based), for messages.
        prefix: the prompt the model was given.
        output: what it wrote.
        tools: the tools it was given (JSON-schema dicts), or None.
        expected: the message the output should give, or None (then only plausibility is checked).
        kind: what it is, for its label ("example", "output": one the author checks the
            learnt template on, "case": a test case on the page).
        name: its own name ("your output 1", a sample's or a row's name), the label when given.
    """

    index: int
    prefix: str
    output: str
    tools: list | None = None
    expected: dict | None = None
    kind: str = "example"
    name: str = ""

    @property
    def label(self) -> str:
        return self.name or f"{self.kind} {self.index + 1}"

    def differences(self, got: dict) -> list[str]:
        """How the message `got` differs from `expected` (`message_differences`; [] when they
        agree). Raises ValueError when the example has no expected message."""
        if self.expected is None:
            raise ValueError(f"{self.label}: no expected message to compare with")
        return message_differences(self.expected, got)

    def to_dict(self) -> dict:
        """The example as one line of an examples file (what `read_examples` reads back):
        ``{"prefix", "output", "tools"?, "expected"?}``."""
        found: dict[str, Any] = {"prefix": self.prefix, "output": self.output}
        if self.tools:
            found["tools"] = self.tools
        if self.expected is not None:
            found["expected"] = self.expected
        return found

    def render(self) -> Render:
        return Render(f"{self.label}: the output", self.output)


def read_examples(examples: list[dict] | None, kind: str = "example") -> list[Example]:
    """Validated examples (`kind` names them in labels and messages: "example", "output").

    Raises:
        ValueError: an example is not a dict, lacks `prefix` or `output` (strings), or has
            `tools` that is not a list or `expected` that is not a dict; the message names the
            example and the key.
    """
    found = []
    for index, example in enumerate(examples or []):
        where = f"{kind}s[{index}]"
        if not isinstance(example, dict):
            raise ValueError(
                f"{where}: an example is a dict with prefix and output, got {type(example).__name__}"
            )
        for key in ("prefix", "output"):
            if not isinstance(example.get(key), str):
                raise ValueError(f"{where}.{key}: a string is required")
        tools, expected = example.get("tools"), example.get("expected")
        if tools is not None and not isinstance(tools, list):
            raise ValueError(
                f"{where}.tools: a list of tool schemas is required, got {type(tools).__name__}"
            )
        if expected is not None and not isinstance(expected, dict):
            raise ValueError(
                f"{where}.expected: a message dict is required, got {type(expected).__name__}"
            )
        found.append(
            Example(index, example["prefix"], example["output"], tools or None, expected, kind)
        )
    return found


def load_examples_file(path: str | Path) -> list[dict]:
    """The examples in a JSONL file (one JSON object a line; blank lines skipped).

    Raises:
        ValueError: a line is not JSON; the message gives the file and line.
        OSError: the file cannot be read.
    """
    found = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            found.append(json.loads(line))
        except ValueError as error:
            raise ValueError(f"{path}:{number}: not a JSON object: {error}") from None
    return found


def parse_example(
    template: dict, example: Example, regex_timeout: float | None = 1.0
) -> tuple[dict, list[str]]:
    """(message, kept errors) of the example's output parsed with `template` (errors kept, not raised)."""
    from ..parser import ResponseParser

    parser = ResponseParser(
        template,
        prefix=example.prefix,
        tools=example.tools,
        on_error="keep",
        regex_timeout=regex_timeout,
    )
    message, _ = parser.finalize(example.output)
    return message, [str(error) for error in parser.errors]


def _blank(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}


def message_text(value: Any) -> str:
    """A message value as compared: "" when missing or empty, a string stripped, anything else
    as JSON with sorted keys."""
    if _blank(value):
        return ""
    return (
        value.strip()
        if isinstance(value, str)
        else json.dumps(value, sort_keys=True, ensure_ascii=False)
    )


def _arguments(value: Any) -> str:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            pass
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def calls_of(message: dict) -> list[tuple[Any, str]]:
    """The message's tool calls as (name, arguments as JSON text with sorted keys)."""
    found = []
    for call in message.get("tool_calls") or []:
        function = call.get("function", call) if isinstance(call, dict) else {}
        function = function if isinstance(function, dict) else {}
        found.append((function.get("name"), _arguments(function.get("arguments"))))
    return found


# The keys compared as text (stripped), then as calls; every other key but `role` exactly.
_TEXT_KEYS = ("reasoning_content", "content")


def _compared(key: str, message: dict) -> Any:
    """The value of `key` in `message` as the comparison sees it."""
    if key in _TEXT_KEYS:
        return message_text(message.get(key))
    if key == "tool_calls":
        return calls_of(message)
    value = message.get(key)
    return None if _blank(value) else value


def differing_keys(expected: dict, got: dict) -> list[tuple[str, str]]:
    """The keys on which `got` differs from `expected` under `message_differences`' rules, in its
    order: (key, how), `how` being "missing" (`got` has nothing there), "unexpected" (`expected`
    has nothing there) or "differs". [] when they agree."""
    others = sorted((set(expected) | set(got)) - {"role", *_TEXT_KEYS, "tool_calls"})
    found = []
    for key in (*_TEXT_KEYS, "tool_calls", *others):
        want, have = _compared(key, expected), _compared(key, got)
        if want == have:
            continue
        how = (
            "missing"
            if have in ("", [], None)
            else "unexpected"
            if want in ("", [], None)
            else "differs"
        )
        found.append((key, how))
    return found


def message_differences(expected: dict, got: dict, width: int | None = None) -> list[str]:
    """How `got` differs from `expected` ([] when they agree), a sentence a key: reasoning and
    content compared stripped (missing, None and "" alike), tool calls by order, name and
    arguments as JSON values (``true`` is not ``1``), any other key exactly (missing and empty
    alike); `role` is not compared. The one comparison of a parse with its expected message:
    inference's judge, the page's test cases, `check` on samples and the conformance matrix.

    `width` (characters) shortens each value shown longer than that to the stretch around
    where the two first differ, cut ends marked ``…`` (None: values in full)."""
    found = []
    for key, _ in differing_keys(expected, got):
        want, have = repr(_compared(key, expected)), repr(_compared(key, got))
        if width is not None:
            want, have = (
                _around_difference(want, have, width),
                _around_difference(have, want, width),
            )
        found.append(f"{key}: expected {want}, got {have}")
    return found


def _around_difference(shown: str, other: str, width: int) -> str:
    """`shown` cut to `width` characters around where it first differs from `other`."""
    if len(shown) <= width:
        return shown
    same = 0
    while same < min(len(shown), len(other)) and shown[same] == other[same]:
        same += 1
    start = max(0, min(same - width // 3, len(shown) - width))
    return (
        ("…" if start else "")
        + shown[start : start + width]
        + ("…" if start + width < len(shown) else "")
    )


def tool_properties(tools: list | None) -> dict[str, dict]:
    """{tool name: its parameters' properties} of the tools given (schemas without a name skipped)."""
    found = {}
    for tool in tools or []:
        function = tool.get("function", tool) if isinstance(tool, dict) else {}
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            parameters = function.get("parameters") or {}
            found[function["name"]] = (
                parameters.get("properties") or {} if isinstance(parameters, dict) else {}
            )
    return found


def implausible(message: dict, example: Example) -> list[str]:
    """Why `message` cannot be what an example without `expected` means ([] when plausible):
    a call that names no given tool or has arguments its schema does not know, or a tool's name
    written where no call was read."""
    tools = tool_properties(example.tools)
    found = []
    calls = message.get("tool_calls") or []
    for name, arguments in calls_of(message):
        if tools and name not in tools:
            found.append(f"a call of {name!r}, which is not one of the tools")
            continue
        try:
            decoded = json.loads(arguments)
        except ValueError:
            decoded = None
        if not isinstance(decoded, dict):
            found.append(f"{name}'s arguments are not an object")
        elif tools and set(decoded) - set(tools[name]):
            found.append(
                f"{name}'s arguments {sorted(set(decoded) - set(tools[name]))} are not its parameters"
            )
    if not calls and tools:
        named = [name for name in tools if written_as_call(name).search(example.output)]
        if named:
            found.append(f"{named[0]!r} is written as a call but no call was read")
    return found


def written_as_call(name: str) -> regex.Pattern:
    """Where a tool's name is written the way a call writes it: right after punctuation (a
    quote, a marker, an ``=``, a namespace's dot) or right before punctuation that is not a
    sentence's (its arguments, an index), not as a word of prose."""
    written = regex.escape(name)
    return regex.compile(
        rf"(?:[^\w\s,;!?]\s*{written}(?![\w\-])|(?<![\w.\-]){written}\s*[^\w\s.,;!?])"
    )


def names_pattern(name: str) -> regex.Pattern:
    """Where a tool's name occurs as a whole name."""
    return regex.compile(rf"(?<![\w.\-]){regex.escape(name)}(?![\w\-])")


# -- the chat template's renders as labelled outputs ---------------------------------------------


def labelled_renders(probes: list[Probe]) -> list[Example]:
    """Every final turn the probes render, as a labelled output: the first turn's prompt, the
    turn's text as the model would write it, the probe tools, and the message it was rendered
    from. A turn is left out where the chat template writes part of the message nowhere (reasoning
    dropped) or the prompt pre-writes text the finished turn lacks: then no message explains it.

    Returns:
        The labelled renders, numbered from 0 in probe order, then `FINAL_MESSAGES` order.
    """
    found = []
    for probe in probes:
        prompt = probe.prompt("first-turn")
        if prompt is None:
            continue
        for name, message in FINAL_MESSAGES.items():
            turn = probe.turn(name)
            if turn is None or turn.missing or not _writes_its_text(message, turn.text):
                continue
            expected = copy.deepcopy(message)
            expected.pop("role", None)
            for call in expected.get("tool_calls", []):
                call.pop("id", None)
            found.append(
                RenderedExample(
                    len(found),
                    prompt,
                    turn.text,
                    copy.deepcopy(PROBE_TOOLS),
                    expected,
                    "render",
                    what=turn.render.label,
                )
            )
    return found


def _writes_its_text(message: dict, text: str) -> bool:
    """Whether `text` writes the message's reasoning, its content and each call's name."""
    names = [call["function"]["name"] for call in message.get("tool_calls", [])]
    return all(
        not value or value in text
        for value in (message.get("content"), message.get("reasoning_content"), *names)
    )


@dataclass(frozen=True)
class RenderedExample(Example):
    """A labelled output a render gave: `what` is the render's label (what was rendered how)."""

    what: str = ""

    @property
    def label(self) -> str:
        return f"the render ({self.what})"

    def render(self) -> Render:
        return Render(self.what, self.output)
