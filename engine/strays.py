"""Strays: the template's own text out of place, which lenient parsing reads outside regions.

Strict parsing leaves text that opens no region in the implicit field, as transformers does.
Lenient parsing (`on_error="keep"`) watches outside regions for more (`lenient_watch`), so
that no delimiter of the template, and no control token of the tokenizer, lands there:

* a *stray close*: the close of an explicit field (its literal, or the text an alternative of
  its close pattern ends with) met where no region of that field is open. It is consumed;
  only markup is watched for (`is_markup`: a close such as `]` stays text);
* a *stray control token*: a control token of the tokenizer (generated as its id: a spelled
  out one never matches, `engine.token_ids`) that is no delimiter text of the template
  (`<|eot_id|>` where the template closes on nothing). It is consumed;
* an *inner open*: an open pattern written without the marker it starts with
  (`pattern_shapes.after_leading_marker`: ``<function=…>`` without the ``<tool_call>``
  before it). It opens a region of its field;
* a *number variant*: a literal delimiter watched outside regions with one of its words
  in the other grammatical number (``<|tool_call_section_begin|>`` for
  ``<|tool_calls_section_begin|>``). It acts as that delimiter.

Everything is derived from the compiled template and the tokenizer's control tokens; nothing
knows a family or a marker. Each match is reported in the parser's `errors` with what it is
(`LenientWatch.notes`); strict parsing never watches for any of it.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any

import regex

from .account import vocabulary_of
from .delimiters import Delimiter, DelimiterMatch
from .errors import ResponseParseError
from .pattern_shapes import after_leading_marker, alternative_endings
from .template import FieldSpec, ResponseTemplate
from .watch import WatchState

# The side of a delimiter lenient parsing consumes outside regions (neither opens nor closes).
STRAY = "stray"
# Literal delimiters shorter than this have no number variants.
SHORTEST_VARIANT = 5
_WORD = regex.compile(r"[^\W\d_]{4,}")


@dataclass(frozen=True, eq=False)
class LenientWatch:
    """What lenient parsing watches outside regions.

    Attributes:
        outside: the watch state: the template's own (`ResponseTemplate.watch_outside`) and
            the delimiters this module adds.
        notes: each added delimiter -> what it is, in words, for the error its match records.
    """

    outside: WatchState
    notes: dict[Delimiter, str]


_WATCHES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def lenient_watch(
    template: ResponseTemplate, controls: frozenset[str] = frozenset()
) -> LenientWatch:
    """The `LenientWatch` of `template` with the control token texts `controls`, built once per
    template and set of control tokens."""
    kept = _WATCHES.setdefault(template, {})
    found = kept.get(controls)
    if found is None:
        found = kept[controls] = _build(template, controls)
    return found


def close_texts(delimiter: Delimiter | None) -> list[str]:
    """The texts a close delimiter's matches end with: its literals, or the text each
    alternative of its pattern ends with."""
    if delimiter is None:
        return []
    if delimiter.literals is not None:
        return [text for text in delimiter.literals if text.strip()]
    return alternative_endings(delimiter.pattern.pattern)


def _build(template: ResponseTemplate, controls: frozenset[str]) -> LenientWatch:
    watched = list(template.watch_outside.delimiters)
    taken = {text for delimiter in watched for text in delimiter.literals or ()}
    added: list[Delimiter] = []
    notes: dict[Delimiter, str] = {}

    def free(text: str) -> bool:
        """Whether `text` is no delimiter text watched outside already (nor matched there by a
        pattern at its start)."""
        if not is_markup(text) or text in taken:
            return False
        return not any(
            delimiter.literals is None and delimiter.pattern.match(text) is not None
            for delimiter in watched
        )

    def add(delimiter: Delimiter, note: str) -> None:
        added.append(delimiter)
        notes[delimiter] = note
        taken.update(delimiter.literals or ())

    # Closes with no open.
    for spec in template.fields.values():
        if spec.implicit or spec.close is None:
            continue
        texts = [text for text in close_texts(spec.close) if free(text)]
        if texts:
            add(
                Delimiter.from_literals(spec.name, STRAY, spec.close.path, texts),
                f"the close of {spec.name} where no {spec.name} region is open: consumed",
            )
    # Opens written without their leading marker.
    for spec in template.fields.values():
        open_ = spec.open
        if open_ is None or open_.literals is not None:
            continue
        inner = after_leading_marker(open_.pattern)
        if (
            inner is not None
            and Delimiter.from_pattern(spec.name, "open", open_.path, inner).context_width
            <= template.context_width
        ):
            add(
                Delimiter.from_pattern(spec.name, "open", open_.path, inner),
                f"an open of {spec.name} written without the marker its pattern starts with "
                f"({inner.pattern!r} of {open_.source!r}): read as the open",
            )
    # Literal delimiters in the other number.
    vocabulary = vocabulary_of(template).texts
    for delimiter in [*watched, *added]:
        if delimiter.literals is None:
            continue
        variants = [
            variant
            for literal in delimiter.literals
            for variant in number_variants(literal)
            if variant not in vocabulary and free(variant)
        ]
        if variants:
            kind = "the open" if delimiter.side == "open" else "the close"
            if delimiter.side == STRAY:
                kind = "a close"
            add(
                Delimiter.from_literals(delimiter.field, delimiter.side, delimiter.path, variants),
                f"a variant of {delimiter.source!r} with a word in the other number: read as "
                f"{kind} of {delimiter.field}",
            )
    # Control tokens that are no delimiter text.
    strays = sorted(
        text
        for text in controls
        if free(text) and not any(text in word or word in text for word in vocabulary)
    )
    if strays:
        add(
            Delimiter.from_literals("", STRAY, "tokenizer.control_tokens", strays),
            "a control token of the tokenizer that is no delimiter of the template: consumed",
        )
    return LenientWatch(WatchState.of(watched + added), notes)


def is_markup(text: str) -> bool:
    """Whether `text` may be watched for outside regions: three characters or more, one of
    them neither a letter, a digit nor a blank (a plain word, or `]`, is too common)."""
    text = text.strip()
    return len(text) >= 3 and any(not (c.isalnum() or c.isspace()) for c in text)


def number_variants(literal: str) -> list[str]:
    """`literal` with one of its words (four letters or more) in the other number: a final
    ``s`` dropped, or one added (in the word's case); [] for a short or plain-word literal."""
    if len(literal) < SHORTEST_VARIANT or literal[0].isalnum():
        return []
    variants = []
    for word in _WORD.finditer(literal):
        text = word.group()
        if text[-1] in "sS" and len(text) > 2:
            other = text[:-1]
        else:
            other = text + ("S" if text.isupper() else "s")
        variants.append(literal[: word.start()] + other + literal[word.end() :])
    return variants


def lenient_error(
    watch: LenientWatch,
    match: DelimiterMatch,
    start: int,
    end: int,
    region: int | None,
    detail: str = "",
) -> ResponseParseError:
    """The error a match of an added delimiter records: what it is, and where (stream offsets
    `start`-`end`; `region` the index of the region it opened or closed, or None)."""
    delimiter = match.delimiter
    return ResponseParseError(
        f"{delimiter.path}: lenient reading at stream offset {start}: {match.text!r} is "
        f"{watch.notes[delimiter]}{detail}",
        field=delimiter.field or None,
        key=delimiter.path,
        offset=start,
        start=start,
        end=end,
        position=start,
        text=match.text,
        region=region,
        lenient=True,
    )


def repeat_error(
    field: FieldSpec, draft: tuple[int, int], start: int, end: int, offset: int, region: int
) -> ResponseParseError:
    """The error of a region of `field` at stream offsets `start`-`end` (its body at `offset`,
    its index `region`) read once because it repeats the draft at `draft` (`Drafts`)."""
    return ResponseParseError(
        f"{field.path}: lenient reading of the region at stream offset {start}: its value "
        f"repeats the one read at {draft[0]}-{draft[1]}, which was written inside a region "
        "ended early; it is read once",
        field=field.name,
        key=f"{field.path}.repeats",
        offset=offset,
        start=start,
        end=end,
        position=start,
        region=region,
        lenient=True,
    )


def control_texts(tokens) -> frozenset[str]:
    """The texts of the control tokens of a parser's `tokens` (`engine.token_ids.StreamTokens`),
    or none without a tokenizer (None)."""
    if tokens is None:
        return frozenset()
    return frozenset(text for text in tokens.spellings.values() if text.strip())


class Drafts:
    """Lenient parsing: regions written inside a region that a zero-width close ended early.

    A close pattern's lookahead (``(?=<tool_call>)`` in a reasoning field's close) ends the
    region at an open it sees; when the region's own close then comes, as a stray close
    outside, what was read between was written inside the region: its regions were drafts. A
    streamed region is never taken back, so the drafts stay; a later region of a repeating
    field with a draft's value is read once (the same call is not made twice).
    """

    __slots__ = ("ended_early", "since_early", "drafts")

    def __init__(self) -> None:
        self.ended_early: dict[str, int] = {}  # field -> stream offset a zero-width close ended it
        self.since_early: list[tuple[str, Any, int, int]] = []  # (field, value, start, end) since
        self.drafts: list[tuple[str, Any, int, int]] = []  # those shown to be drafts

    def closed(
        self, field: FieldSpec, value: Any, zero_width_at: int | None, start: int, end: int
    ) -> tuple[int, int] | None:
        """A region of `field` closed with `value` at stream offsets `start`-`end`
        (`zero_width_at`: where its zero-width close matched, or None). Returns where the draft
        it repeats lies, when it does (then it is read once), else None."""
        if zero_width_at is not None:
            self.ended_early[field.name] = zero_width_at
            self.since_early = []
            return None
        if self.ended_early:
            self.since_early.append((field.name, value, start, end))
        if not field.repeats:
            return None
        for index, (name, drafted, draft_start, draft_end) in enumerate(self.drafts):
            if name == field.name and drafted == value:
                del self.drafts[index]
                return draft_start, draft_end
        return None

    def stray_close(self, field: str, at: int) -> str:
        """A stray close of `field` at stream offset `at`: words for the error, saying what was
        written inside the field when a zero-width close ended it early ("" otherwise)."""
        ended = self.ended_early.pop(field, None)
        if ended is None:
            return ""
        detail = (
            f"; the {field} region was ended at stream offset {ended} by the lookahead of its "
            f"close pattern, so the text between {ended} and {at} was written inside it"
        )
        self.drafts, self.since_early = self.since_early, []
        if self.drafts:
            detail += (
                f" ({len(self.drafts)} region(s) read there: a later region with the same value "
                "is read once)"
            )
        return detail
