"""Template inference from example outputs: the text of each example the template cannot explain.

When a template misreads an example, the author needs to see where: the stretches of the
output that end up where they should not. A stretch is unexplained when the parsed message
holds it in its content or reasoning although the expected message does not (a marker no field
drops, a call no field reads), or, with no expected message, when it is a marker left in the
text or a tool's name written where no call was read.
"""

from __future__ import annotations

from dataclasses import dataclass

import regex

from ..errors import ResponseParseError
from .evidence import Example, message_text, parse_example, tool_properties, written_as_call
from .markup import MARKUP_TOKEN


@dataclass(frozen=True)
class Unexplained:
    """A stretch of an example's output: offsets [start, end) in the output, and why."""

    start: int
    end: int
    why: str

    def to_dict(self) -> dict:
        return {"start": self.start, "end": self.end, "why": self.why}


def _leftovers(got: str, wanted: str) -> list[str]:
    """The pieces of `got` that are not `wanted` (which is removed once where it stands)."""
    at = got.find(wanted) if wanted else -1
    rest = [got[:at], got[at + len(wanted) :]] if at >= 0 else [got]
    return [
        piece.strip() for part in rest for piece in regex.split(r"\n\s*\n", part) if piece.strip()
    ]


def unexplained(
    template: dict, examples: list[Example], regex_timeout: float | None = 1.0
) -> dict[int, list[Unexplained]]:
    """{example index: the stretches of its output `template` does not explain}; examples it
    reads right are left out (an empty dict: every example explained)."""
    found: dict[int, list[Unexplained]] = {}
    for example in examples:
        output = example.output
        try:
            message, errors = parse_example(template, example, regex_timeout)
        except (ResponseParseError, ValueError) as error:
            found[example.index] = [Unexplained(0, len(output), f"the parse failed: {error}")]
            continue
        spans: list[Unexplained] = []
        if errors:
            spans.append(Unexplained(0, len(output), errors[0]))
        for key in ("content", "reasoning_content"):
            got = message_text(message.get(key))
            if example.expected is not None:
                pieces = _leftovers(got, message_text(example.expected.get(key)))
                why = f"read into {key}, which the expected message does not hold"
            else:
                pieces = [token for token in MARKUP_TOKEN.findall(got)]
                why = f"a marker left in {key}: no field explains it"
            for piece in pieces:
                at = output.find(piece)
                if at >= 0:
                    spans.append(Unexplained(at, at + len(piece), why))
        if example.expected is None and not message.get("tool_calls"):
            for name in tool_properties(example.tools):
                for written in written_as_call(name).finditer(output):
                    # The name itself, not the punctuation that shows it is a call.
                    start = written.start() + written.group().find(name)
                    spans.append(
                        Unexplained(
                            start,
                            start + len(name),
                            f"{name!r} is written as a call but no call was read",
                        )
                    )
        if spans:
            found[example.index] = sorted(set(spans), key=lambda span: (span.start, span.end))
    return found
