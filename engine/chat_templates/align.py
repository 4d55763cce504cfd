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

import regex

from .call_readers import CallReading, read_calls_at
from .evidence import Example, tool_properties


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


def _find_text(text: str, wanted: str, start: int, taken: list[Span]) -> tuple[int, int] | None:
    """The first stretch [start, end) at or after `start` that writes `wanted` (its blanks may be
    other blanks) outside the `taken` spans, or None."""
    pattern = regex.compile(
        r"\s+".join(regex.escape(word) for word in wanted.split()) or regex.escape(wanted)
    )
    for found in pattern.finditer(text, start):
        if not any(span.start < found.end() and found.start() < span.end for span in taken):
            return found.span()
    return None


def align(example: Example, anchor: regex.Pattern | None = None) -> Alignment | None:
    """The example's parts located in its text, or None when a part of the expected message
    cannot be found (the aligner then has nothing to say about this example).

    With `expected`, the calls are read first (each call's name and every argument value,
    written in any of the ways the readers know), then the reasoning and the content text, each
    outside what the calls took. Without it, `propose` finds the calls where the tools' names
    stand (`align_all` then proposes the reasoning and the answer across the examples).

    Args:
        example: the example.
        anchor: the start anchor's pattern: the prompt's text after its last match is read with
            the output (what the prompt pre-writes). None: the output alone.
    """
    text, lead = text_after_anchor(example, anchor)
    alignment = Alignment(example, text, lead)
    expected = example.expected
    if expected is None:
        return propose(alignment)
    wanted = _expected_calls(expected)
    if wanted:
        readings = read_calls_at(
            text, wanted, {name for name, _ in wanted}, tool_properties(example.tools)
        )
        if readings is None:
            return None
        alignment.spans += [Span("calls", r.start, r.end, r) for r in readings]
    for kind in ("reasoning_content", "content"):
        value = expected.get(kind)
        if not isinstance(value, str) or not value.strip():
            continue
        found = _find_text(text, value.strip(), 0, alignment.spans)
        if found is None:
            return None
        name = "reasoning" if kind == "reasoning_content" else "content"
        alignment.spans.append(Span(name, *found))
    alignment.spans.sort(key=lambda span: span.start)
    return alignment


def _expected_calls(expected: dict) -> list[tuple[str, dict]]:
    """The expected message's calls as (name, arguments), the arguments in the order written
    (a JSON string decoded)."""
    found = []
    for call in expected.get("tool_calls") or []:
        function = call.get("function", call) if isinstance(call, dict) else {}
        arguments = function.get("arguments") if isinstance(function, dict) else None
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError:
                pass
        found.append(
            (
                function.get("name") if isinstance(function, dict) else None,
                arguments if isinstance(arguments, dict) else {},
            )
        )
    return found


# -- without an expected message --------------------------------------------------------------

# Prose: two words or more (blanks between; a sentence's end is followed by a space, not a new
# line), or one word that ends a sentence. A match starts at a word's first letter only (a
# search that failed there fails inside the word too): one try per word keeps a search linear,
# where trying every letter of a 10,000-letter word took seconds.
PROSE = regex.compile(
    r"(?=\w)(?<!\w[\-']*)"
    r"(?:\w[\w'\-]*(?:(?:[,;:]?[ \t]+|(?<![.!?])\n[ \t]*)\w[\w'\-]*|[.!?]+[ \t]+\w[\w'\-]*)+[.!?]*|\w[\w'\-]*[.!?]+)"
)


def propose(alignment: Alignment) -> Alignment:
    """The calls of an example with no expected message: where the readers read a tool's name
    and arguments that are that tool's parameters. Each is said in `assumptions` with its text
    (`propose_text` adds the reasoning and the answer, across the examples)."""
    example, text = alignment.example, alignment.text
    tools = tool_properties(example.tools)
    if tools:
        readings = read_calls_at(text, None, set(tools), tools)
        alignment.spans += [Span("calls", r.start, r.end, r) for r in readings or []]
        for reading in readings or []:
            alignment.assumptions.append(
                f"{example.label}: {_shorten(text[reading.start : reading.end])!r} is taken for "
                f"{len(reading.calls)} call(s) of {', '.join(n for n, _ in reading.calls)}: "
                "the tools' names and parameters stand there"
            )
    return alignment


# A word of prose: it starts with a letter (a number such as an index between calls is not one).
_WORD = regex.compile(r"(?<![\w\-'])[^\W\d_][\w'\-]*")


def _worded(text: str) -> bool:
    """Whether `text` reads as prose: two words that start with a letter, or one that ends a
    sentence (``25 flpv``, an index and a marker word between two calls, does not)."""
    return len(_WORD.findall(text)) >= 2 or bool(regex.search(r"[^\W\d_][\w'\-]*[.!?]+$", text))


def _stretches(alignment: Alignment) -> list[tuple[int, int]]:
    """The prose stretches of the text outside the calls, in order; stretches with nothing but
    blanks between (lines of one text) are one."""
    found = []
    for _, between, after in alignment.gaps():
        end = after.start if after is not None else len(alignment.text)
        start = end - len(between)
        for prose in PROSE.finditer(between):
            stop = prose.end()
            if after is not None and stop == len(between):
                # A word glued to the part after it is a marker (``calls[``), not prose.
                stop = prose.start() + len(regex.sub(r"\s*\S+$", "", prose.group()))
            if not PROSE.fullmatch(between, prose.start(), stop) or not _worded(
                between[prose.start() : stop]
            ):
                continue
            if (
                found
                and found[-1][1] >= start
                and not alignment.text[found[-1][1] : start + prose.start()].strip()
            ):
                found[-1] = (found[-1][0], start + stop)  # lines of one text, blanks between
            else:
                found.append((start + prose.start(), start + stop))
    return found


# The marker a stretch of prose is followed by: one bracketed run, or text up to a blank or bracket.
_FIRST_MARKER = regex.compile(r"<[^<>\s]*>|\[[^\[\]\s]*\]|[^\s<\[]+")


def propose_text(alignments: list[Alignment]) -> None:
    """The reasoning and the answer of the examples with no expected message. Where some example
    writes two stretches of prose, a marker after the first that every such example writes
    makes the first the reasoning (a pair of markers around the leading text; the same marker
    after an example's only stretch makes it reasoning too); the longest other stretch is the
    answer; prose every example writes alike is a marker, not text. Each guess is said in
    `assumptions` with the text it rests on."""
    guessed = [alignment for alignment in alignments if alignment.example.expected is None]
    found = {id(alignment): _stretches(alignment) for alignment in guessed}
    # Words every example writes alike are a marker (a header such as ``function call``), not prose.
    if len(guessed) > 1:
        texts = [
            {alignment.text[start:end] for start, end in found[id(alignment)]}
            for alignment in guessed
        ]
        alike = set.intersection(*texts)
        for alignment in guessed:
            found[id(alignment)] = [
                (start, end)
                for start, end in found[id(alignment)]
                if alignment.text[start:end] not in alike
            ]

    def after(alignment: Alignment, stretch: tuple[int, int]) -> str:
        following = _FIRST_MARKER.match(alignment.text, stretch[1])
        return following.group() if following else ""

    closers = [
        after(alignment, found[id(alignment)][0])
        for alignment in guessed
        if len(found[id(alignment)]) >= 2
    ]
    closers = [closer for closer in closers if regex.search(r"[^\w\s.,!?;'\"]", closer)]
    closer = max(set(closers), key=closers.count) if closers else ""
    for alignment in guessed:
        stretches = found[id(alignment)]
        label, text = alignment.example.label, alignment.text
        if closer and stretches and after(alignment, stretches[0]) == closer:
            start, end = stretches.pop(0)
            alignment.spans.append(Span("reasoning", start, end))
            alignment.assumptions.append(
                f"{label}: {_shorten(text[start:end])!r} is taken for reasoning: the leading text, "
                f"before {closer!r}, which every example with more text after it writes there"
            )
        if stretches:
            start, end = max(stretches, key=lambda stretch: stretch[1] - stretch[0])
            alignment.spans.append(Span("content", start, end))
            alignment.assumptions.append(
                f"{label}: {_shorten(text[start:end])!r} is taken for the answer (words no other "
                "part explains)"
            )
        alignment.spans.sort(key=lambda span: span.start)


def align_all(
    examples: list[Example], anchor: regex.Pattern | None = None
) -> list[Alignment | None]:
    """`align` for every example, then `propose_text` across those with no expected message."""
    found = [align(example, anchor) for example in examples]
    propose_text([alignment for alignment in found if alignment is not None])
    return found


def _shorten(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
