"""Labelled outputs: a prompt, the output a model wrote for it, the tools it was given and the
message the output means, and the one comparison of a parse with that message.

`LabelledOutput` is the one record of "a prompt, an output and the expected message": an
author's example output (with or without its expected message), a chat template's render of a
known message, a shipped sample (`engine.authoring.samples.Sample.labelled`), a row of the
conformance matrix (`SituationResult.labelled`), a test case on the page. `message_differences`
is the one comparison (text stripped; missing, None and "" alike; tool calls by order, name and
arguments as JSON values; `differing_keys` the same comparison key by key), so a case that
inference reads right passes in the page's tests, in `check` and in the matrix as well. It lives
in the parser's core so that the authoring tools and template inference, which may not import
each other, share it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class LabelledOutput:
    """One labelled output (an example output, a render of a known message, a sample, a row).

    Attributes:
        index: its position in the list (0-based), for messages.
        prefix: the prompt the model was given.
        output: what it wrote.
        tools: the tools it was given (JSON-schema dicts), or None.
        expected: the message the output should give, or None (then only plausibility is checked).
        kind: what it is, for its label ("example", "output": one the author checks the
            learnt template on, "case": a test case on the page, "sample", "row").
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

    def differences(self, got: dict, width: int | None = None) -> list[str]:
        """How the message `got` differs from `expected` (`message_differences`, values cut to
        `width`; [] when they agree). Raises ValueError when there is no expected message."""
        if self.expected is None:
            raise ValueError(f"{self.label}: no expected message to compare with")
        return message_differences(self.expected, got, width)

    def to_dict(self, with_name: bool = False) -> dict:
        """The example as one line of an examples file (what `read_examples` reads back):
        ``{"prefix", "output", "tools"?, "expected"?, "name"?}``. With `with_name` its name goes
        too, so that what learns from it names it as its giver does (the author's loop: "output
        2", not its place among the examples); without, the reader numbers it ("example I")."""
        found: dict[str, Any] = {"prefix": self.prefix, "output": self.output}
        if self.tools:
            found["tools"] = self.tools
        if self.expected is not None:
            found["expected"] = self.expected
        if with_name and self.name:
            found["name"] = self.name
        return found


def read_labelled_outputs(
    examples: list[dict] | None,
    kind: str = "example",
    record: type = LabelledOutput,
    places: list[str] | None = None,
) -> list:
    """Validated labelled outputs given as dicts
    ``{"prefix", "output", "tools"?, "expected"?, "name"?}``, as `record` instances
    (`LabelledOutput` or a subclass); `kind` names them in labels and messages ("example",
    "output"), `name` (when given) is the label.

    Args:
        places: where each dict was read, for messages (``"out.jsonl:3"``), one a dict; None
            names them by kind and position (``outputs[0]``).

    Raises:
        ValueError: an example is not a dict, lacks `prefix` or `output` (strings), or has
            `tools` that is not a list, `expected` that is not a dict or `name` that is not a
            string; the message names the example (or its file and line) and the key.
    """
    found = []
    for index, example in enumerate(examples or []):
        # "out.jsonl:3" and "out.jsonl:3: output", or "outputs[0]" and "outputs[0].output".
        where = places[index] if places else f"{kind}s[{index}]"
        at = f"{where}: " if places else f"{where}."
        if not isinstance(example, dict):
            raise ValueError(
                f"{where}: an example is a dict with prefix and output, got {type(example).__name__}"
            )
        for key in ("prefix", "output"):
            if not isinstance(example.get(key), str):
                raise ValueError(f"{at}{key}: a string is required")
        tools, expected = example.get("tools"), example.get("expected")
        name = example.get("name", "")
        if tools is not None and not isinstance(tools, list):
            raise ValueError(
                f"{at}tools: a list of tool schemas is required, got {type(tools).__name__}"
            )
        if expected is not None and not isinstance(expected, dict):
            raise ValueError(
                f"{at}expected: a message dict is required, got {type(expected).__name__}"
            )
        if not isinstance(name, str):
            raise ValueError(f"{at}name: a string is required, got {type(name).__name__}")
        found.append(
            record(index, example["prefix"], example["output"], tools or None, expected, kind, name)
        )
    return found


def parse_labelled(
    template: dict,
    example: LabelledOutput,
    regex_timeout: float | None = 1.0,
    on_error: str = "keep",
) -> tuple[dict, list[str]]:
    """(message, kept errors) of the output parsed with `template` after its prompt, with its
    tools. With `on_error` "keep" (inference's judge) errors are kept and the reading is
    lenient; with "raise" (`check` on samples, by default) the parse is strict and the first
    error is raised (`ResponseParseError`)."""
    from .parser import ResponseParser

    parser = ResponseParser(
        template,
        prefix=example.prefix,
        tools=example.tools,
        on_error=on_error,
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
