"""Template inference from example outputs: where each part of the message stands in the text.

An example output with its expected message is aligned part by part: the reasoning text, the
content text and each tool call (where its payload starts and ends, how it was read). The text
between the aligned parts is the format's syntax: opens, closes, separators, headers
(`engine.chat_templates.example_fields` generalises it across examples). Without an expected
message (an output and the tools the prompt offered), the tools' names and their parameters'
names anchor the calls, and a pair of markers around leading text is proposed as reasoning;
every such assumption is kept with the text it rests on.

Nothing here knows a model family: markers are whatever text stands between the parts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import regex

from .call_readers import CallReading, read_calls_at
from .examples import Example, _tool_properties, calls_of


@dataclass(frozen=True)
class Span:
    """One aligned part: `kind` ("reasoning", "content" or "calls"), offsets [start, end) in the
    aligned text, and for "calls" the reading of the payload(s) it holds."""

    kind: str
    start: int
    end: int
    reading: CallReading | None = None


@dataclass
class Alignment:
    """An example's text with its parts located.

    Attributes:
        example: the example.
        text: the text aligned: what the prompt writes after its start anchor, then the output.
        lead: how many characters of `text` the prompt wrote (0 when nothing).
        spans: the parts in text order (calls: one span per payload the reader read).
        assumptions: sentences saying what was assumed without an expected message, each
            quoting the text it rests on.
    """

    example: Example
    text: str
    lead: int = 0
    spans: list[Span] = field(default_factory=list)
    assumptions: list[str] = field(default_factory=list)

    def gaps(self) -> list[tuple[Span | None, str, Span | None]]:
        """(part before or None, the text between, part after or None) for every gap, the text's
        start and end included."""
        found, at, before = [], 0, None
        for span in self.spans:
            found.append((before, self.text[at : span.start], span))
            at, before = span.end, span
        found.append((before, self.text[at:], None))
        return found

    def of(self, kind: str) -> list[Span]:
        return [span for span in self.spans if span.kind == kind]


def text_after_anchor(example: Example, anchor: regex.Pattern | None) -> tuple[str, int]:
    """(what the parser reads: the prompt's text after the last match of `anchor`, then the
    output; the length of that prompt part)."""
    if anchor is None:
        return example.output, 0
    last = None
    for last in anchor.finditer(example.prefix):
        pass
    lead = example.prefix[last.end() :] if last is not None else ""
    return lead + example.output, len(lead)


def _find_text(text: str, wanted: str, start: int, taken: list[Span]) -> int:
    """The first offset >= `start` where `wanted` stands outside the `taken` spans, or -1."""
    at = text.find(wanted, start)
    while at >= 0 and any(span.start < at + len(wanted) and at < span.end for span in taken):
        at = text.find(wanted, at + 1)
    return at


def align(example: Example, anchor: regex.Pattern | None = None) -> Alignment | None:
    """The example's parts located in its text, or None when a part of the expected message
    cannot be found (the aligner then has nothing to say about this example).

    With `expected`, the calls are read first (each call's name and every argument value,
    written in any of the ways the readers know), then the reasoning and the content text, each
    outside what the calls took. Without it, `propose` guesses the message (the assumptions are
    said)."""
    text, lead = text_after_anchor(example, anchor)
    alignment = Alignment(example, text, lead)
    expected = example.expected
    if expected is None:
        return propose(alignment)
    wanted = [(name, json.loads(arguments)) for name, arguments in calls_of(expected)]
    if wanted:
        readings = read_calls_at(text, wanted, {name for name, _ in wanted})
        if readings is None:
            return None
        alignment.spans += [Span("calls", r.start, r.end, r) for r in readings]
    for kind in ("reasoning_content", "content"):
        value = expected.get(kind)
        if not isinstance(value, str) or not value.strip():
            continue
        at = _find_text(text, value.strip(), 0, alignment.spans)
        if at < 0:
            return None
        name = "reasoning" if kind == "reasoning_content" else "content"
        alignment.spans.append(Span(name, at, at + len(value.strip())))
    alignment.spans.sort(key=lambda span: span.start)
    return alignment


# -- without an expected message --------------------------------------------------------------

# A marker's look: a run of punctuation-wrapped text with no blanks (``<a>``, ``[B]``, ``<|c|>``).
_MARKER = regex.compile(r"[^\w\s]+[\w\-/|:.]*[^\w\s]+|[^\w\s]{2,}")


def _closer_of(opener: str, text: str, start: int) -> tuple[int, str] | None:
    """Where a closer paired with `opener` (the same marker with a ``/`` after its first
    punctuation, or the same marker again) stands in `text` after `start`, and the closer."""
    cut = len(opener) - len(opener.lstrip("<[{(|!"))
    for closer in (opener[:cut] + "/" + opener[cut:], opener[:cut] + "/" + opener[cut:].lstrip("|"), opener):
        at = text.find(closer, start)
        if at >= 0:
            return at, closer
    return None


def propose(alignment: Alignment) -> Alignment:
    """A message guessed for an example with no expected message: the calls the readers find at
    the tools' names (arguments whose keys are the tool's parameters), reasoning between a
    marker that starts the text and its paired closer, the rest content. Each guess is said in
    `assumptions` with the text it rests on."""
    example, text = alignment.example, alignment.text
    tools = _tool_properties(example.tools)
    label = example.label
    if tools:
        readings = read_calls_at(text, None, set(tools), tools)
        if readings:
            alignment.spans += [Span("calls", r.start, r.end, r) for r in readings]
            for reading in readings:
                alignment.assumptions.append(
                    f"{label}: {text[reading.start:reading.end]!r} is taken for "
                    f"{len(reading.calls)} call(s) of {', '.join(n for n, _ in reading.calls)}: "
                    "the tools' names and parameters stand there"
                )
    first_call = min((span.start for span in alignment.spans), default=len(text))
    head = text[:first_call]
    stripped = head.lstrip()
    opener = _MARKER.match(stripped)
    if opener is not None:
        start = len(head) - len(stripped) + opener.end()
        paired = _closer_of(opener.group(), head, start)
        if paired is not None and head[start : paired[0]].strip():
            at, closer = paired
            inner = head[start:at]
            begin = start + len(inner) - len(inner.lstrip())
            alignment.spans.append(Span("reasoning", begin, start + len(inner.rstrip())))
            alignment.assumptions.append(
                f"{label}: the text between {opener.group()!r} and {closer!r} is taken for "
                f"reasoning (a pair of markers around the leading text: "
                f"{_shorten(head[start - opener.end() + opener.start():at + len(closer)])!r})"
            )
    alignment.spans.sort(key=lambda span: span.start)
    _content_between(alignment)
    return alignment


# A marker inside a gap: a bracketed run with no blanks (``<a>``, ``[B]``, ``</c>``).
_BRACKETED = regex.compile(r"<[^<>\s]{1,80}>|\[[^\[\]\s]{1,80}\]")


def _content_between(alignment: Alignment) -> None:
    """The longest stretch of words between the parts found (or around them) taken for content:
    text with at least two words between markers, less a word glued to the part after it (a
    marker such as ``calls[``)."""
    best: tuple[int, int] | None = None
    for _, between, after in alignment.gaps():
        end = after.start if after is not None else len(alignment.text)
        start = end - len(between)
        at = 0
        for piece in [*_BRACKETED.finditer(between), None]:
            stop = piece.start() if piece is not None else len(between)
            stretch = between[at:stop]
            if after is not None and piece is None:
                stretch = regex.sub(r"\S+$", "", stretch)
            words = stretch.strip()
            if regex.search(r"\w{2,}.*\s.*\w|\w{2,}", words) and (
                best is None or len(words) > best[1] - best[0]
            ):
                offset = start + at + len(stretch) - len(stretch.lstrip())
                best = (offset, offset + len(words))
            at = piece.end() if piece is not None else stop
    if best is not None:
        alignment.spans.append(Span("content", *best))
        alignment.spans.sort(key=lambda span: span.start)
        alignment.assumptions.append(
            f"{alignment.example.label}: {_shorten(alignment.text[best[0]:best[1]])!r} is taken "
            "for the answer (words no other part explains)"
        )


def _shorten(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
