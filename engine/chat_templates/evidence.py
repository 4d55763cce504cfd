"""Labelled outputs as template inference reads them: the evidence every learner reads.

An author's example output (with or without its expected message), a chat template's render of
a known message (the render is the output, the message its label: `labelled_renders`), a real
output with its expected message, a test case on the page. The record and the one comparison
are the parser core's (`engine.labelled_output`: `LabelledOutput`, `message_differences`,
`differing_keys`), shared with the shipped samples (`check`) and the conformance matrix's rows,
so a case that Infer reads right passes in Tests, in `check` and in the matrix as well; they are
re-exported here. `Example` is the record with the render inference's findings cite;
`implausible` the check of an output with no expected message (its calls name given tools, with
their parameters).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path

import regex

from ..labelled_output import (
    LabelledOutput,
    calls_of,
    differing_keys,
    message_differences,
    message_text,
    parse_labelled,
    read_labelled_outputs,
)
from .markup import MARKUP_TOKEN, closes
from .probes import FINAL_MESSAGES, PROBE_TOOLS, Probe, Render, Turn

__all__ = [
    "Example",
    "LabelledOutput",
    "calls_of",
    "differing_keys",
    "implausible",
    "labelled_renders",
    "load_examples_file",
    "message_differences",
    "message_text",
    "parse_example",
    "read_examples",
    "read_examples_file",
    "tool_properties",
]


@dataclass(frozen=True)
class Example(LabelledOutput):
    """A labelled output as inference reads it (`engine.labelled_output.LabelledOutput`), with
    the render inference's findings cite it by."""

    def render(self) -> Render:
        return Render(f"{self.label}: the output", self.output)


def read_examples(examples: list[dict] | None, kind: str = "example") -> list[Example]:
    """Validated examples (`engine.labelled_output.read_labelled_outputs`), as `Example`s.

    Raises:
        ValueError: an example is malformed; the message names the example and the key.
    """
    return read_labelled_outputs(examples, kind, Example)


def load_examples_file(path: str | Path) -> list[dict]:
    """The examples in a JSONL file (one JSON object a line; blank lines skipped).

    Raises:
        ValueError: the file is not UTF-8 text, or a line is not JSON; the message gives the
            file (and the line).
        OSError: the file cannot be read.
    """
    return [row for _, row in _numbered_rows(path)]


def read_examples_file(path: str | Path, kind: str = "example") -> list[Example]:
    """The validated examples of a JSONL file (`load_examples_file`, `read_examples`); `kind`
    names them ("example", "output").

    Raises:
        ValueError: as `load_examples_file`, or a row is malformed; the message gives the file,
            the line (1-based, blank lines counted) and the key (``out.jsonl:3: output: ...``).
        OSError: the file cannot be read.
    """
    numbered = _numbered_rows(path)
    places = [f"{path}:{number}" for number, _ in numbered]
    return read_labelled_outputs([row for _, row in numbered], kind, Example, places)


def _numbered_rows(path: str | Path) -> list[tuple[int, object]]:
    """(line number from 1, decoded JSON) of each non-blank line of a JSONL file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(
            f"{path}: not UTF-8 text (byte {error.object[error.start]:#04x} at offset "
            f"{error.start}); save it as UTF-8"
        ) from None
    found = []
    # Lines end at "\n" only, as an editor counts them (a JSON string may hold U+2028).
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            found.append((number, json.loads(line)))
        except ValueError as error:
            raise ValueError(f"{path}:{number}: not a JSON object: {error}") from None
    return found


# The parse is the labelled output's own (where callers have always found it).
parse_example = parse_labelled


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
    dropped): then no message explains it. Where the prompt pre-writes text the finished turn
    lacks (a reasoning opener), the turn follows the prompt without that text, and a turn with
    reasoning is left out, unless the turn starts with that opener's closer (an empty block
    the model closes: it follows the whole prompt); where it writes such text before the header it ends with (a turn
    of instructions), the turn follows the whole prompt.

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
            if turn is None or not _writes_its_text(message, turn.text):
                continue
            before = prompt
            if turn.missing and prompt.endswith(turn.missing) and not _closes_first(turn):
                # The prompt pre-writes text the finished turn lacks (a reasoning opener, which the
                # chat template leaves out of a finished turn): the turn follows the prompt
                # without it. A message with reasoning is left out (its opener is what lacks).
                # A turn that starts by closing that opener (an empty block) follows the whole
                # prompt.
                if message.get("reasoning_content"):
                    continue
                before = prompt[: -len(turn.missing)]
            elif turn.missing not in prompt:
                continue
            # Else the prompt writes instructions the finished turn lacks, then the header the
            # turn follows: the turn follows the whole prompt.
            expected = copy.deepcopy(message)
            expected.pop("role", None)
            for call in expected.get("tool_calls", []):
                call.pop("id", None)
            found.append(
                RenderedExample(
                    len(found),
                    before,
                    turn.text,
                    copy.deepcopy(PROBE_TOOLS),
                    expected,
                    "render",
                    what=turn.render.label,
                )
            )
    return found


def _closes_first(turn: Turn) -> bool:
    """Whether the turn starts with the closing form of the opener it lacks (`turn.missing`,
    which the prompt pre-writes): ``</r>answer`` after a prompt ending with ``<r>``."""
    found = MARKUP_TOKEN.match(turn.text.lstrip())
    return found is not None and closes(turn.missing.strip(), found.group())


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
