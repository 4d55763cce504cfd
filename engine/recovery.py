"""Lenient parsing: what `on_error="keep"` reads of a region that does not parse as written.

Everything here is derived from the compiled template (its delimiters, watch states and
content arguments); nothing knows a model family or a marker. Four readings:

* a failed region (`plan_failed_region`): its open and close delimiters are consumed (a
  delimiter never lands in the implicit field), and its body is read for the longest part
  that parses: a complete value at its start (`json`, `python-call-list`) is the region's
  value, and the text after it (prose, a second open with a second value, an end delimiter
  the region does not close on, a brace too many) is read again as if outside any region,
  so a delimiter there opens its region or is consumed and the rest becomes unclaimed text;
* a tag-style body (`xml-inline`, `tag_reading`): a tag without its close ends at the next
  tag's open, or at the body's end less the closing tags (`</…>`) that end it; a value that
  holds its own close runs to the last close before the next tag;
* tool-call arguments written as a JSON string where the message has an object
  (`decode_string_arguments`);
* a JSON call (``{"name": …, "arguments": {…}}``) written inside tag-style call markers
  (`read_json_call`).

What lenient parsing watches for outside regions (closes with no open, control tokens, an
open without its leading marker) is `engine.strays`; a failed region's text is read with it.

Each reading that differs from the strict one is reported as a `ResponseParseError` in the
parser's `errors`, with the stream offsets of what was read differently. Strict parsing
(`on_error="raise"`) never comes here.
"""

from __future__ import annotations

import dataclasses
import json
import weakref
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import regex

from .account import CALL_NAME, TAGGED_CONTENT, calls_of
from .content import VALUE_ENDS
from .delimiters import Delimiter
from .errors import ResponseParseError, shorten
from .pattern_shapes import (
    alternative_endings,
    around_group,
    top_level_alternatives,
    without_leading_lookbehind,
)
from .strays import LenientWatch, lenient_watch
from .template import FieldSpec, ResponseTemplate
from .watch import WatchState

# Regions read again inside a failed region, at most this deep (each is shorter than its parent).
MAX_DEPTH = 8
# Zero-width delimiters committed in a row at one offset before a character is stepped over.
STALL_LIMIT = 2
# Closing tags and whitespace that end a tag-style body: the call's own close, not a value.
_TRAILING_CLOSES = regex.compile(r"(?:\s*</[^<>\s]+>)*\s*\Z")


@dataclass
class Piece:
    """One stretch of a failed region, as lenient parsing reads it (stream offsets).

    kind: ``"consumed"`` (a delimiter: in no value), ``"text"`` (unclaimed text, for the
    implicit field) or ``"region"`` (a region of `field`: `open_text` at `start`, then `body`
    at `body_start`, up to `end`, with the delimiters' `captures`).
    """

    kind: str
    start: int
    end: int
    text: str = ""
    field: FieldSpec | None = None
    body_start: int = 0
    open_text: str = ""
    captures: dict | None = None


@dataclass
class Plan:
    """What lenient parsing makes of a failed region: its `pieces` in stream order, covering
    the region exactly, and `notes` on what was read (for the error)."""

    pieces: list[Piece]
    notes: list[str]


def plan_failed_region(
    template: ResponseTemplate,
    field: FieldSpec,
    open_text: str,
    body: str,
    close_text: str,
    region_start: int,
    body_start: int,
    captures: dict,
    timeout: float | None,
    read_again: bool = True,
    lenient: LenientWatch | None = None,
) -> Plan:
    """The pieces of a region of `field` whose value failed: `open_text` at stream offset
    `region_start`, `body` at `body_start`, then `close_text`.

    A body that starts with a complete value (`json`, `python-call-list`) keeps it as the
    region's value (a region piece of the same field, `captures` kept); the text after it, or
    the whole body when there is no such value, is read as outside any region (`_outside`).
    The delimiters are consumed pieces. With `read_again` False (regions nested `MAX_DEPTH`
    deep) the body is kept as text. `lenient` is what lenient parsing watches outside regions
    (`engine.strays`; the template's own with no control tokens when None).
    """
    pieces: list[Piece] = []
    notes: list[str] = []
    if open_text:
        pieces.append(Piece("consumed", region_start, body_start, open_text))
    rest_from = 0
    value_end = VALUE_ENDS.get(field.content) if read_again else None
    if value_end is not None:
        end = value_end(body, field.content_args)
        if end is not None and body[end:].strip():
            pieces.append(
                Piece(
                    "region",
                    body_start,
                    body_start + end,
                    body[:end],
                    field,
                    body_start,
                    "",
                    captures,
                )
            )
            notes.append(
                f"the {field.content} value at {body_start}-{body_start + end} is the region's "
                f"value; the text after it ({body_start + end}-{body_start + len(body)}) is read "
                "as outside any region"
            )
            rest_from = end
    if read_again:
        watch = lenient if lenient is not None else lenient_watch(template)
        outside = _outside(template, watch, body, rest_from, body_start, timeout)
    else:
        outside = [Piece("text", body_start, body_start + len(body), body)] if body else []
    for piece in outside:
        if piece.kind == "region" and len(piece.text) >= len(body):
            piece.kind, piece.text = "text", piece.open_text + piece.text  # no shorter: no progress
    if rest_from == 0 and any(piece.kind != "text" for piece in outside):
        notes.append(
            f"the body ({body_start}-{body_start + len(body)}) is read as outside any region"
        )
    pieces += outside
    close_start = body_start + len(body)
    if close_text:
        pieces.append(Piece("consumed", close_start, close_start + len(close_text), close_text))
    if not notes:
        notes.append(
            f"its body ({body_start}-{close_start}) is kept as text, its delimiters consumed"
        )
    return Plan(pieces, notes)


def _outside(
    template: ResponseTemplate,
    lenient: LenientWatch,
    text: str,
    pos: int,
    base: int,
    timeout: float | None,
) -> list[Piece]:
    """`text[pos:]` (at stream offset `base` + its offsets; `text[:pos]` is context for
    lookbehinds) read as the parser reads the end of a stream outside any region: an open
    delimiter starts a region of its field, which ends at its close, at the next open or at
    the text's end; the close of any field is consumed (a delimiter is never unclaimed text);
    other text is unclaimed."""
    pieces: list[Piece] = []
    outside = _outside_state(template, lenient)
    state: WatchState = outside
    region: Piece | None = None
    searches: dict = {}
    stalled_at, stalls = -1, 0
    while pos < len(text):
        if pos == stalled_at:
            _add_text(pieces, region, text, pos, pos + 1, base)
            pos += 1
            stalled_at, stalls = -1, 0
            continue
        match, _ = state.scan(text, pos, True, timeout, searches)
        if match is None:
            break
        if match.start == match.end:
            stalls = stalls + 1 if match.start == pos else 1
            if stalls > STALL_LIMIT:
                stalled_at = match.start
                _add_text(pieces, region, text, pos, match.start, base)
                pos = match.start
                continue
        else:
            stalls = 0
        _add_text(pieces, region, text, pos, match.start, base)
        pos = match.end
        if region is not None:
            region.end = base + match.start
            region = None
            state = outside
            if match.delimiter.side != "open":
                if match.end > match.start:
                    pieces.append(
                        Piece("consumed", base + match.start, base + match.end, match.text)
                    )
                continue
        if match.delimiter.side == "open":
            opened = template.fields[match.delimiter.field]
            region = Piece(
                "region",
                base + match.start,
                base + match.end,
                "",
                opened,
                base + match.end,
                match.text,
                dict(match.captures),
            )
            pieces.append(region)
            state = template.watch_inside[opened.name]
        elif match.end > match.start:
            pieces.append(Piece("consumed", base + match.start, base + match.end, match.text))
    _add_text(pieces, region, text, pos, len(text), base)
    if region is not None:
        region.end = base + len(text)
    return pieces


_OUTSIDE_STATES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _outside_state(template: ResponseTemplate, lenient: LenientWatch) -> WatchState:
    """What lenient parsing watches for in a failed region's text: what it watches outside
    regions (`lenient`: every open, the strays), every field's close, and the text a close
    pattern always ends with, wherever it stands (`</x>` after a value its lookbehind refuses
    is still the close's text), built once per template and `lenient`."""
    state = _OUTSIDE_STATES.get(lenient)
    if state is None:
        delimiters = list(lenient.outside.delimiters)
        for spec in template.fields.values():
            close = spec.close
            if close is None or close in delimiters:
                continue
            delimiters.append(close)
            if close.literals is None:
                ends = _close_texts(close.pattern.pattern)
                if ends:
                    delimiters.append(Delimiter.from_literals(spec.name, "close", close.path, ends))
                unlooked = _without_lookbehinds(close.pattern.pattern)
                if unlooked is not None:
                    delimiters.append(
                        Delimiter.from_pattern(spec.name, "close", close.path, unlooked)
                    )
        state = _OUTSIDE_STATES[lenient] = WatchState.of(delimiters)
    return state


def _close_texts(pattern: str) -> list[str]:
    """The texts the top-level alternatives of a close `pattern` end with."""
    return alternative_endings(pattern)


def _without_lookbehinds(pattern: str) -> regex.Pattern | None:
    """`pattern` with the lookbehind that starts each of its top-level alternatives left out
    (a close written after a value its lookbehind refuses), or None when none starts with one
    or what is left can match nothing."""
    alternatives, changed = [], False
    for alternative in top_level_alternatives(pattern) or ():
        unlooked = without_leading_lookbehind(alternative)
        if unlooked is not None:
            alternative, changed = unlooked, True
        alternatives.append(alternative)
    if not changed:
        return None
    try:
        compiled = regex.compile("|".join(alternatives), regex.DOTALL)
    except (regex.error, ValueError, OverflowError, RecursionError):
        return None
    return None if compiled.match("") else compiled


def _add_text(
    pieces: list[Piece], region: Piece | None, text: str, start: int, end: int, base: int
) -> None:
    """`text[start:end]` to the open `region`'s body, or as an unclaimed piece."""
    if start >= end:
        return
    if region is not None:
        region.text += text[start:end]
        region.end = base + end
    elif pieces and pieces[-1].kind == "text" and pieces[-1].end == base + start:
        pieces[-1].text += text[start:end]
        pieces[-1].end = base + end
    else:
        pieces.append(Piece("text", base + start, base + end, text[start:end]))


# -- tag-style bodies -------------------------------------------------------


@dataclass(frozen=True)
class TagShape:
    """A `tag_pattern` cut around its `value` group: what opens a tag (with its `key`) and
    what closes it."""

    opening: regex.Pattern
    closing: regex.Pattern


@lru_cache(maxsize=256)
def tag_shape(pattern: str) -> TagShape | None:
    """`pattern` cut before and after its `(?P<value>…)` group, or None when the group is not
    at the top level of a single alternative, or either part can match nothing, or the pattern
    recurses (tags inside a value, matched balanced: cut apart, an inner tag would read as a
    tag of its own)."""
    if regex.search(r"\(\?(?:&|R\)|P>|\(DEFINE\))", pattern):
        return None
    cut = around_group(pattern, "value")
    if cut is None:
        return None
    before, after = cut
    try:
        opening = regex.compile(before, regex.DOTALL)
        closing = regex.compile(after, regex.DOTALL)
    except (regex.error, ValueError, OverflowError, RecursionError):
        return None
    if "key" not in opening.groupindex or opening.match("") or closing.match(""):
        return None
    return TagShape(opening, closing)


class Tag:
    """One tag as lenient parsing reads it: the part of a regex match `parse_xml_inline` uses."""

    __slots__ = ("groups", "value_start", "value_end")

    def __init__(self, groups: dict, value: str, value_start: int, value_end: int):
        self.groups = {**groups, "value": value}
        self.value_start, self.value_end = value_start, value_end

    def group(self, name: str) -> Any:
        return self.groups.get(name)

    def groupdict(self) -> dict:
        return self.groups

    def start(self, name: str) -> int:
        return self.value_start


def lenient_tags(body: str, shape: TagShape) -> tuple[list[Tag], list[tuple[int, str]]]:
    """The tags of `body` read leniently, and notes `(body offset, what)` where the reading
    differs from a tag that closes once."""
    tags, notes = [], []
    opens = list(shape.opening.finditer(body))
    for index, opened in enumerate(opens):
        limit = opens[index + 1].start() if index + 1 < len(opens) else len(body)
        closes = list(shape.closing.finditer(body, opened.end(), limit))
        key = opened.group("key")
        if closes:
            end = closes[-1].start()
            if len(closes) > 1:
                notes.append(
                    (
                        closes[0].start(),
                        f"the value of {key!r} holds its own close: it runs to the last close "
                        "before the next tag",
                    )
                )
        else:
            end = limit
            if index + 1 == len(opens):
                end = _TRAILING_CLOSES.search(body, opened.end(), limit).start()
            end = len(body[opened.end() : end].rstrip()) + opened.end()
            ending = "the next tag" if index + 1 < len(opens) else "the call's close"
            notes.append(
                (
                    opened.start(),
                    f"the tag {key!r} has no close: its value ends at {ending}",
                )
            )
        groups = {name: opened.group(name) for name in shape.opening.groupindex}
        tags.append(Tag(groups, body[opened.end() : end], opened.end(), end))
    return tags, notes


def tag_reading(
    field: FieldSpec, body: str, body_start: int
) -> tuple[FieldSpec, list[ResponseParseError]]:
    """The field to parse `body` with: `field` itself when lenient reading of its tags agrees
    with the strict one, else a copy whose content reads the tags leniently, with an error a
    difference (its `position` the stream offset of the tag or close concerned)."""
    pattern = field.content_args.get("tag_pattern") if field.content == "xml-inline" else None
    shape = tag_shape(pattern) if pattern else None
    if shape is None:
        return field, []
    tags, notes = lenient_tags(body, shape)
    if not notes:
        return field, []
    errors = [
        ResponseParseError(
            f"{field.path}: lenient reading at stream offset {body_start + at}: {what}",
            field=field.name,
            key=f"{field.path}.content_args.tag_pattern",
            offset=body_start,
            position=body_start + at,
            text=body,
            lenient=True,
        )
        for at, what in notes
    ]
    args = {**field.content_args, "_tag_reader": lambda _body: tags}
    return dataclasses.replace(field, content_args=args), errors


# -- arguments written as a JSON string ---------------------------------------


def decode_string_arguments(
    field: FieldSpec, value: Any, body_start: int, body: str
) -> list[ResponseParseError]:
    """Decode, in place, the arguments of the tool calls in `value` written as a JSON string
    that holds an object (the message's arguments are an object); an error for each."""
    if not field.is_tool_call:
        return []
    errors = []
    for call in value if isinstance(value, list) else [value]:
        function = call.get("function") if isinstance(call, dict) else None
        written = function.get("arguments") if isinstance(function, dict) else None
        if not isinstance(written, str) or not written.strip().startswith("{"):
            continue
        try:
            decoded = json.loads(written)
        except (ValueError, RecursionError):
            continue
        if not isinstance(decoded, dict):
            continue
        function["arguments"] = decoded
        errors.append(
            ResponseParseError(
                f"{field.path}: lenient reading of the region at stream offset {body_start}: the "
                f"arguments of {function.get('name')!r} are a JSON string, {shorten(written, 80)}; "
                "read as the object it holds",
                field=field.name,
                key=f"{field.path}.content",
                offset=body_start,
                text=body,
                lenient=True,
            )
        )
    return errors


# -- a JSON call inside tag-style call markers ---------------------------------


def read_json_call(
    field: FieldSpec, value: Any, open_text: str, body: str, body_start: int
) -> list[ResponseParseError]:
    """Read, in place, a call of a tag-style tool call field (`xml-inline`, `kv-lines`) that
    was written as a JSON object ``{"name": …, "arguments": {…}}`` inside the call markers:
    the open's name group then took the object's first token, and no tag read the rest. The
    region's raw text (`open_text` + `body`) must hold, from its first ``{``, exactly one such
    object and whitespace; its arguments may be an object or a JSON string holding one
    (``"parameters"`` is read as ``"arguments"``). Returns an error for the call read, or []."""
    if not field.is_tool_call or field.content not in TAGGED_CONTENT:
        return []
    calls = list(calls_of(value))
    if len(calls) != 1:
        return []
    call = calls[0]
    name = call.get("name")
    if isinstance(name, str) and CALL_NAME.fullmatch(name) and call.get("arguments"):
        return []
    text = open_text + body
    start = text.find("{")
    if start < 0:
        return []
    try:
        written, end = json.JSONDecoder().raw_decode(text, start)
    except (ValueError, RecursionError):
        return []
    if text[end:].strip() or not isinstance(written, dict):
        return []
    called = written.get("name")
    arguments = written.get("arguments", written.get("parameters"))
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):
            return []
    if not isinstance(called, str) or not CALL_NAME.fullmatch(called):
        return []
    if not isinstance(arguments, dict):
        return []
    call["name"], call["arguments"] = called, arguments
    at = body_start - len(open_text) + start
    return [
        ResponseParseError(
            f"{field.path}: lenient reading of the region at stream offset {at}: a JSON call "
            f"inside the call markers, read as {called!r} with its arguments",
            field=field.name,
            key=f"{field.path}.content",
            offset=body_start,
            position=at,
            text=body,
            lenient=True,
        )
    ]
