"""Template inference from example outputs: the aligned parts turned into template fields.

`engine.chat_templates.align` locates the reasoning, the content and the calls in each example;
the text between them is the syntax. Here it is generalised across every example:

* the reasoning's open is what every reasoning is preceded by (nothing: the turn starts inside
  it), its close what every reasoning is followed by (the longest common literal; with one
  example, its first marker);
* a call's open is the text every call (or list of calls) is preceded by, its close what every
  call is followed by; nothing after the calls means the end of the output closes them; a part
  of the text around a call's name that varies (an index, a recipient) becomes a pattern group;
* the content parser is the one that read the calls back (`engine.chat_templates.call_readers`);
* whatever text is left between the parts (a header between regions, an answer's own tags) is
  a marker the implicit content field drops (a content close); a marker that stands at the same
  place in every example but differs in a word (a recipient) is a pattern, the word any word;
* where no example writes two calls in a row, the markers after every lone call's close may
  follow it, then a comma or semicolon before the next call's open; lone calls keyed by their
  name in a JSON list (``[{"NAME": {...}}]``) may be several in the list.

`learn_template` builds the fields and keeps the first template that reads every example back.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import regex

from ..pattern_shapes import pattern_literal
from .align import Alignment, Span, align_all
from .argument_readers import common_prefix, common_suffix, loose, pair_syntax
from .call_objects import (
    LIST_ITEM_LEAD,
    closing_brace,
    list_item_close,
    list_item_field,
    object_head,
    object_start,
    object_transform,
    varying_arguments_keys,
)
from .call_readers import CallReading
from .candidates import content_keys, split_content_closes
from .evidence import Example
from .judge import check_examples
from .markup import MARKUP_TOKEN

# A name as a call writes it: an identifier, maybe with dots or dashes between parts.
NAME = r"[A-Za-z_][\w\-]*(?:\.[\w\-]+)*"
# Where one marker ends and the next starts: a blank, or two markers written with nothing between.
_SEAM = regex.compile(r"\s+|(?<=[>\]|])(?=[<\[])")
# The same, and where a marker meets a word or a sentence's end (``</a>calls``, ``name<b>``,
# ``One moment.<b>``): a call's open is cut finer, since a word glued to a call's payload is its
# own marker, and prose before a marker is no part of it.
_WORD_SEAM = regex.compile(r"\s+|(?<=[>\]|])(?=[<\[])|(?<=[>\]])(?=\w)|(?<=[\w.,!?;:])(?=[<\[])")
# A piece of text that may be a marker: it holds a character no sentence holds.
_MARKER_LIKE = regex.compile(r"[^\w\s.,!?;'\"]")


@dataclass
class LearntTemplate:
    """A template learnt from the examples' alignments.

    Attributes:
        template: the response template (reads every example back).
        description: what was learnt, for people.
        findings: (key, value, how) of each delimiter and choice, for the notebook.
        assumptions: (example, sentence) for what was assumed without an expected message, the
            sentence quoting the example's text it rests on.
    """

    template: dict
    description: str
    findings: list[tuple[str, Any, str]] = field(default_factory=list)
    assumptions: list[tuple[Example, str]] = field(default_factory=list)


class NotLearnt(ValueError):
    """The examples' alignments do not give a template; the message says why, and `misread`
    holds the examples the first valid template learnt misread (empty when none was valid)."""

    def __init__(self, message: str, misread: tuple[Example, ...] = ()):
        super().__init__(message)
        self.misread = misread


# Examples that do not agree: the aligner is run again on all but one of them, then on each
# alone, over at most this many examples (each run is a learn and a check of every example; more
# examples than this are rare, and the first ones are the author's own choice).
MOST_EXAMPLES_LEFT_OUT = 8


# Why a marker the prompt writes last, which a call's open starts with, is a content close.
PREWRITTEN_OPEN = (
    "the prompt writes it at the end, and a call's open starts with it: when no call follows, "
    "it is a marker, not text"
)


def first_marker(text: str, seam: regex.Pattern = _SEAM, known: tuple[str, ...] = ()) -> str:
    """The first marker of `text` (stripped): up to a blank or the seam of two markers; each of
    the `known` markers is one marker whole (its blanks, and where it touches the text before
    it, included)."""
    stripped = text.strip()
    places = [(stripped.find(marker), marker) for marker in known if marker and marker in stripped]
    if places:
        at, marker = min(places)
        if at == 0:
            return marker
        stripped = stripped[:at].strip()
    cut = seam.search(stripped)
    return stripped[: cut.start()] if cut else stripped


def last_marker(text: str, seam: regex.Pattern = _SEAM) -> str:
    """The last marker of `text` (stripped): after the last blank or seam of two markers, or
    from the bracket it opens and leaves open (``<call name="``)."""
    stripped = text.strip()
    cuts = list(seam.finditer(stripped))
    at = cuts[-1].end() if cuts else 0
    for opening, closing in ("<>", "[]"):
        opened = stripped.rfind(opening)
        if opened > stripped.rfind(closing):
            at = min(at, opened)
    return stripped[at:]


def leading(texts: list[str]) -> str:
    """The first marker of what every text starts with (stripped)."""
    texts = [text.lstrip() for text in texts]
    return first_marker(texts[0] if len(set(texts)) == 1 else common_prefix(texts))


def trailing(texts: list[str], seam: regex.Pattern = _SEAM) -> str:
    """The last marker of what every text ends with (stripped)."""
    texts = [text.rstrip() for text in texts]
    return last_marker(texts[0] if len(set(texts)) == 1 else common_suffix(texts), seam)


def generalise(texts: list[str]) -> str:
    """One pattern for texts that should be the same: the literal (blanks loose) when they
    are; else their common start and end around a group that takes the part that varies
    (digits when it is always digits)."""
    if len(set(texts)) == 1:
        return loose(texts[0])
    head = common_prefix(texts)
    tail = common_suffix([text[len(head) :] for text in texts])
    middles = [text[len(head) : len(text) - len(tail)] for text in texts]
    if all(regex.fullmatch(r"\d+", middle) for middle in middles):
        # A number's digits the texts share by chance (``call00011``, ``call00012``: a counter's
        # leading zeros) are the number's too.
        head, tail = head.rstrip("0123456789"), tail.lstrip("0123456789")
        middle = r"\d+"
    elif all(regex.fullmatch(r"\S*", middle) for middle in middles):
        middle = r"\S*?"
    else:
        middle = r".*?"
    return loose(head) + middle + loose(tail)


@dataclass
class _Cuts:
    """The text between parts, cut into what belongs to which delimiter."""

    reasoning_open: str = ""
    reasoning_close: str = ""
    call_open: str = ""
    call_close: str = ""
    call_close_tail: str = ""
    # The first marker after the close in each text after the calls that does not go on to
    # the next call ("" where the output ends there).
    after_close: tuple[str, ...] = ()
    # Where the calls have no close of their own: the first marker of each text after the last
    # call (an end of turn), which ends the calls as the end of the output does.
    call_ends: tuple[str, ...] = ()
    call_separator: str = ""
    # A pattern of the index token some outputs write between two calls (``#\d+``), or "".
    call_index: str = ""
    blank_after_open: bool = False
    calls_in_a_row: bool = False
    # The calls are the objects of a JSON list, each its own region (its arguments key varies
    # between outputs: `engine.chat_templates.call_objects`).
    list_items: bool = False
    list_markers: tuple[str, ...] = ()


def _peel(
    alignments: list[Alignment], list_items: bool = False, known: tuple[str, ...] = ()
) -> tuple[_Cuts, list[str], dict[str, str]]:
    """The reasoning's and calls' delimiters from the gaps around them, the pieces of text left
    over (markers the content drops), and {piece: pattern} for the pieces that vary between the
    examples in a word (`_varying_markers`). `known`: markers the template already has (the
    content's closes), never cut into pieces."""
    cuts = _Cuts()
    gaps = [gap for alignment in alignments for gap in alignment.gaps()]
    before_reasoning = [text for _, text, after in gaps if after and after.kind == "reasoning"]
    after_reasoning = [text for before, text, _ in gaps if before and before.kind == "reasoning"]
    if before_reasoning:
        cuts.reasoning_open = trailing(before_reasoning)
    if after_reasoning:
        cuts.reasoning_close = leading(after_reasoning)
    # A call's open: what the text before every call (a first call after other parts, or one
    # after the call before it) ends with; its close: what the text after every call starts with.
    before_calls = [
        _without_start(text, before, cuts)
        for before, text, after in gaps
        if after and after.kind == "calls"
    ]
    after_calls = [text for before, text, _ in gaps if before and before.kind == "calls"]
    between = [
        text
        for before, text, after in gaps
        if before and after and before.kind == after.kind == "calls"
    ]
    if before_calls:
        # Texts between calls in a row hold only the open (and a close and a separator): cut at
        # markers. Before a lone call a header may stand glued to the open: cut finer.
        named = any(
            span.reading.shape.startswith("name-")
            for alignment in alignments
            for span in alignment.of("calls")
        )
        cuts.call_open = trailing(before_calls, _SEAM if named and between else _WORD_SEAM)
        if _frame_closer(cuts.call_open, before_calls, gaps):
            cuts.call_open = ""
        cuts.blank_after_open = any(text[-1:].isspace() for text in before_calls)
    if after_calls:
        ends = [
            text
            for before, text, after in gaps
            if before and before.kind == "calls" and after is None
        ]
        if between or len(set(after_calls)) > 1:
            cuts.call_close = common_prefix([text.lstrip() for text in after_calls]).strip()
        elif ends and not ends[0].strip():
            cuts.call_close = ""
        else:
            cuts.call_close = leading(after_calls)
            cuts.call_close_tail = _close_tail(after_calls, ends, cuts.call_close)
        if between and cuts.call_open:
            stripped = [text.strip() for text in between]
            if not all(text.startswith(cuts.call_close) for text in stripped):
                cuts.call_close = ""
        if not between and _turn_end_after_objects(cuts.call_close, alignments, known):
            cuts.call_close = cuts.call_close_tail = ""
        if not cuts.call_close:
            cuts.call_ends = tuple(
                dict.fromkeys(first_marker(text, known=known) for text in ends if text.strip())
            )
    cuts.calls_in_a_row = bool(between)
    if not between:
        _keyed_list(cuts, alignments)
        _list_items(cuts, alignments, list_items)
    if cuts.call_close:
        cuts.after_close = tuple(
            dict.fromkeys(
                first_marker(_cut_start(text, cuts.call_close), known=known)
                for before, text, after in gaps
                if before and before.kind == "calls" and (after is None or after.kind != "calls")
            )
        )
    if between:
        middles = {
            # An index token between the calls is not the separator (`_call_indexes`).
            _INDEX_BETWEEN.sub(
                "", _cut_end(_cut_start(text, cuts.call_close), cuts.call_open)
            ).strip()
            for text in between
        }
        separator = middles.pop() if len(middles) == 1 else ""
        if not _MARKER_LIKE.search(separator):
            cuts.call_separator = separator
    left, varying = _markers(alignments, cuts, gaps, between, known)
    return cuts, left, varying


def _frame_closer(marker: str, before_calls: list[str], gaps: list) -> bool:
    """Whether `marker` (cut as a call's open) is the closing marker of a header that frames a
    word (``<|a|>word<|b|>``): every text before a call ends with such a header, and the same
    two markers frame a word before another part too. Then the header heads the calls as it
    heads the other parts, and the call has no open of its own."""
    if not marker:
        return False
    lefts = [_ending_frame(text, marker) for text in before_calls]
    if None in lefts:
        return False
    return any(
        framed.group(1) in lefts and framed.group(4) == marker
        for _, text, after in gaps
        if after is not None and after.kind != "calls"
        for framed in _FRAMED.finditer(text, overlapped=True)
    )


def _ending_frame(text: str, closer: str) -> str | None:
    """The opening marker of the word-framing header `text` ends with, whose closing marker is
    `closer`; None when it ends otherwise."""
    ends = text.rstrip()
    for framed in _FRAMED.finditer(ends, overlapped=True):
        if framed.end() == len(ends) and framed.group(4) == closer:
            return framed.group(1)
    return None


def _list_items(cuts: _Cuts, alignments: list[Alignment], always: bool = False) -> None:
    """A JSON list of call objects whose arguments key varies between outputs (or, with
    `always`, any list of such objects): each object is its own call region, so `cuts` loses
    the list's open and close (markers the content drops)."""
    spans = [(alignment, span) for alignment in alignments for span in alignment.of("calls")]
    if all(span.reading.shape == "json-list" for _, span in spans) and varying_arguments_keys(
        spans, 1 if always else 2
    ):
        # The list's open and close (a word such as ``calls`` too) are markers the content drops.
        cuts.list_markers = tuple(m for m in (cuts.call_open, cuts.call_close) if m)
        cuts.call_open = cuts.call_close = cuts.call_close_tail = ""
        cuts.list_items = True


def _markers(
    alignments: list[Alignment],
    cuts: _Cuts,
    gaps: list,
    between: list[str],
    known: tuple[str, ...] = (),
) -> tuple[list[str], dict[str, str]]:
    """The left-over pieces (markers the content drops) and {piece: pattern} for those that
    vary: a word framed by markers, an index between calls, a JSON list's brackets; `cuts`
    gets the index pattern."""
    left, varying = _left_over(alignments, cuts, known)
    delimiters = {cuts.reasoning_open, cuts.reasoning_close, cuts.call_open, cuts.call_close}
    framed = _framed_words(left, [text for _, text, _ in gaps], delimiters - {""})
    varying = {**framed, **varying}
    indexes = _call_indexes(between, cuts)
    cuts.call_index = "|".join(dict.fromkeys(pattern for pattern, _ in indexes.values()))
    varying = {**{piece: marker for piece, (_, marker) in indexes.items()}, **varying}
    if cuts.call_open.startswith("{") or cuts.list_items:
        # The calls are the objects of a JSON list: its brackets are markers only next to a
        # call, so prose such as "[1]" keeps its brackets.
        varying = {**varying, "[": r"\[(?=\s*\{)", "]": r"(?<=\})\s*\]"}
        if cuts.list_items:
            left += [piece for piece in ("[", "]", *cuts.list_markers) if piece not in left]
    return left, varying


# A token an output may write between two calls: a number with a little punctuation around
# (``#3``, ``[2]``, ``(7)``), an index or id that varies from call to call.
_INDEX_TOKEN = regex.compile(r"([^\w\s]{1,3})(\d+)([^\w\s]{0,3})")
# An index token standing alone between two calls, with the blanks and the separator after it.
_INDEX_BETWEEN = regex.compile(r"(?<!\S)[^\w\s,;]{1,3}\d+[^\w\s,;]{0,3}(?![^\s,;])\s*[,;]?")


def _call_indexes(between: list[str], cuts: _Cuts) -> dict[str, tuple[str, str]]:
    """{token: (its pattern, the pattern as a marker)} for the index tokens written between two
    calls (``#13``): the number may be any, and the token is a marker only where a call's open
    follows it."""
    found = {}
    ahead = rf"(?=\s*{loose(cuts.call_open)})" if cuts.call_open else ""
    for text in between:
        middle = _cut_end(_cut_start(text, cuts.call_close), cuts.call_open)
        for piece in _pieces(middle):
            index = _INDEX_TOKEN.fullmatch(piece.strip(",;"))
            if index:
                head, _, tail = index.groups()
                pattern = loose(head) + r"\d+" + loose(tail)
                marker = pattern + r"(?:\s*[,;])?" + ahead
                found[piece] = found[piece.strip(",;")] = (pattern, marker)
    return found


def _keyed_list(cuts: _Cuts, alignments: list[Alignment]) -> None:
    """Lone calls keyed by their name in a JSON list (``[{"NAME": {...}}]``): the list may hold
    several, each its own object, parted by commas as JSON parts items; `cuts` changed so that
    a call opens at its object and closes at its object's end."""
    keyed = regex.fullmatch(r"(.*\[\s*)(\{\s*[\"'])", cuts.call_open, flags=regex.DOTALL)
    if (
        keyed
        and regex.match(r"\}\s*\]", cuts.call_close)
        and all(
            span.reading.shape == "name-json"
            for alignment in alignments
            for span in alignment.of("calls")
        )
    ):
        cuts.call_open, cuts.call_close = keyed.group(2), "}"
        cuts.call_close_tail, cuts.call_separator = "", ","


def _left_over(
    alignments: list[Alignment], cuts: _Cuts, known: tuple[str, ...] = ()
) -> tuple[list[str], dict[str, str]]:
    """The pieces of text no delimiter of `cuts` and none of the `known` markers takes (markers
    the content drops), and {piece: pattern} for those that vary between the examples in a word."""
    left: list[str] = []
    placed: list[dict[tuple[str, str], list[str]]] = []
    lead_ins: dict[int, list[str]] = {}
    for alignment in alignments:
        placed.append({})
        for before, text, after in alignment.gaps():
            rest = _without_start(text, before, cuts)
            if after is not None and after.kind == "reasoning":
                rest = _cut_end(rest, cuts.reasoning_open)
            if after is not None and after.kind == "calls":
                rest = _cut_end(rest, cuts.call_open)
            for marker in known:
                rest = rest.replace(marker, " ")
            every = _pieces(rest)
            pieces = [piece for piece in every if _MARKER_LIKE.search(piece)]
            # A header stands before the part it heads; at the end, after the last part.
            place = (after.kind, "") if after else ("", before.kind if before else "")
            placed[-1].setdefault(place, pieces)
            if after is not None and after.kind == "calls":
                lead_ins.setdefault(len(placed), every)
            left += pieces
    return list(dict.fromkeys(left + _lead_in_words(lead_ins))), _varying_markers(placed)


def _lead_in_words(lead_ins: dict[int, list[str]]) -> list[str]:
    """The words every example writes last before its first call, alike (``calls`` in
    ``calls [{...}]``, where the call's open is the object's bracket): a marker, not prose."""
    rows = list(lead_ins.values())
    if len(rows) < 2:
        return []
    found = []
    for pieces in zip(*(row[::-1] for row in rows)):
        if len(set(pieces)) != 1:
            break
        if regex.fullmatch(r"[A-Za-z_]\w*", pieces[0]):
            found.append(pieces[0])
    return found


def _varying_markers(placed: list[dict[tuple[str, str], list[str]]]) -> dict[str, str]:
    """{marker as one example writes it: a pattern for all} for the markers that stand at the
    same place (the first text before the same part, or at the end after it; the same
    how-many-th counted back from the part) in every example showing that place but differ in
    a word (a recipient, a channel name): their common start and end (one
    of them marker-like) around a word."""
    found: dict[str, str] = {}
    for place in {place for pieces in placed for place in pieces}:
        rows = [pieces[place][::-1] for pieces in placed if place in pieces]
        if len(rows) < 2:
            continue
        for texts in zip(*rows):
            if len(set(texts)) == 1:
                continue
            # The word varies whole: letters two words share at an edge by chance stay in it.
            head = regex.sub(r"[\w\-.]+$", "", common_prefix(list(texts)))
            tail = regex.sub(r"^[\w\-.]+", "", common_suffix([t[len(head) :] for t in texts]))
            middles = [text[len(head) : len(text) - len(tail)] for text in texts]
            if not _MARKER_LIKE.search(head + tail) or not all(
                regex.fullmatch(r"[\w\-.]+", middle) for middle in middles
            ):
                continue
            pattern = loose(head) + r"[\w\-.]+" + loose(tail)
            found |= {text: pattern for text in texts}
    return found


# A piece framed by two markers: a closed one, a middle with no blank, an opening one
# (``<|a|>final<|b|>``, ``<|a|>to=get<|b|>``); the middle's last word apart.
_FRAMED = regex.compile(
    r"(<[^<>\s]*>|\[[^\[\]\s]*\])([^\s<\[]*?)([A-Za-z][\w\-.]*)(<[^<>\s]*>|\[[^\[\]\s]*\])"
)


def _framed_words(pieces: list[str], texts: list[str], delimiters: set[str]) -> dict[str, str]:
    """{piece: pattern} for the left-over pieces that write a word between the same two markers
    as the `texts` between the parts write a different middle elsewhere (``<|a|>final<|b|>`` before the answer,
    ``<|a|>to=get<|b|>`` before the calls): the markers are the structure, the word any word,
    so an output that names a channel or recipient no example shows is still read. A frame
    whose marker is one of the `delimiters` is left alone: its pattern would take the
    delimiter."""
    middles: dict[tuple[str, str], set[str]] = {}
    # Evidence: every framed word the texts between the parts write, a delimiter's too.
    for text in texts:
        for framed in _FRAMED.finditer(text, overlapped=True):
            left, head, word, right = framed.groups()
            if left not in delimiters and right not in delimiters:
                middles.setdefault((left, right), set()).add(head + word)
    found = {}
    for piece in pieces:
        framed = _FRAMED.fullmatch(piece)
        if framed and len(middles.get((framed.group(1), framed.group(4)), ())) > 1:
            left, head, _, right = framed.groups()
            found[piece] = loose(left + head) + r"[\w\-.]+" + loose(right)
    return found


def _close_tail(after_calls: list[str], ends: list[str], close: str) -> str:
    """The markers every lone call is followed by after its close (``) <|x|>``), when each call
    of the examples ends its output: whether they close the call or the turn, no example shows;
    the call's close takes them when they are there."""
    texts = {text.strip() for text in after_calls}
    if len(texts) != 1 or len(ends) != len(after_calls) or not close:
        return ""
    text = texts.pop()
    return text[len(close) :].strip() if text.startswith(close) else ""


def _pieces(text: str) -> list[str]:
    """The pieces of left-over text: split at blanks and marker seams, and a word glued to the
    outside of a marker (``Warm.<|x|>``) apart from it."""
    found = []
    for piece in _SEAM.split(text.strip()):
        found += [part for part in _PROSE_EDGES.split(piece) if part]
    return found


# A word at the outside edge of a marker: before its opening bracket, after its closing one.
_PROSE_EDGES = regex.compile(r"^(\w[\w'\-]*[.!?]+)(?=[<\[])|(?<=[>\]])(\w[\w'\-]*[.!?]+)$")


def _without_start(text: str, before: Span | None, cuts: _Cuts) -> str:
    """`text` less the close of the part before it (reasoning's or a call's)."""
    kind = before.kind if before is not None else ""
    return _cut_start(
        text, {"reasoning": cuts.reasoning_close, "calls": cuts.call_close}.get(kind, "")
    )


def _cut_start(text: str, start: str) -> str:
    stripped = text.lstrip()
    return stripped[len(start) :] if start and stripped.startswith(start) else text


def _id_after_its_marker(middles: list[str]) -> str:
    """A pattern for the texts between each call's name and its arguments when they differ in
    one word written right after a marker of its own (``<id>call1<args>``, ``<id>x9<args>``):
    a call's id, any word, optional with its marker (a model or a serving stack may write
    none); "" otherwise."""
    if len(set(middles)) < 2:
        return ""
    head = regex.sub(r"[\w\-]+$", "", common_prefix(middles))
    tail = regex.sub(r"^[\w\-]+", "", common_suffix([text[len(head) :] for text in middles]))
    words = [text[len(head) : len(text) - len(tail)] for text in middles]
    marker = regex.search(r"(?:<[^<>\s]+>|\[[^\[\]\s]+\])$", head)
    if marker is None or not all(regex.fullmatch(r"[\w\-]+", word) for word in words):
        return ""
    before = head[: marker.start()]
    return loose(before) + f"(?:{loose(marker.group())}" + r"[\w\-]+)?" + loose(tail)


def _turn_end_after_objects(close: str, alignments: list[Alignment], known: tuple) -> bool:
    """Whether `close`, what follows each lone call, is an end of turn the template knows
    (`known`) and every call a JSON object (its name inside or before it): then its closing
    brace ends the call, and the end of turn ends the calls as the end of the output does; it
    is no call's close (another call may follow a comma or a semicolon)."""
    return close in known and all(
        span.reading.shape in ("json-object", "name-json")
        for alignment in alignments
        for span in alignment.of("calls")
    )


def _cut_end(text: str, end: str) -> str:
    stripped = text.rstrip()
    return stripped[: -len(end)] if end and stripped.endswith(end) else text


def _function(name: str, arguments: str) -> dict:
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


def _calls_field(alignments: list[Alignment], cuts: _Cuts) -> tuple[dict, str]:
    """The `tool_calls` field and its shape for people.

    Raises:
        NotLearnt: the examples' calls are read by different shapes, or their syntax cannot be
            put in a field.
    """
    spans = [(alignment, span) for alignment in alignments for span in alignment.of("calls")]
    readings = [span.reading for _, span in spans]
    shapes = {
        reading.shape for reading in readings if reading.calls[0][1] or reading.shape != "name-json"
    }
    shapes = shapes or {readings[0].shape}
    if len(shapes) > 1 and shapes == {"name-json", "name-pairs"}:
        shapes = {"name-pairs"}
    if len(shapes) != 1:
        raise NotLearnt(f"the examples write their calls in different shapes: {sorted(shapes)}")
    shape = shapes.pop()
    keys = varying_arguments_keys(spans) if shape in ("json-list", "json-object") else None
    if keys is not None:
        return _varying_key_field(shape, *keys, cuts)
    if shape in ("json-list", "python-list"):
        return _list_field(shape, readings[0], cuts)
    if shape == "json-object":
        return _object_field(readings[0], cuts)
    return _named_field(shape, spans, cuts)


def _close(cuts: _Cuts, ahead: str, behind: str = "") -> dict:
    """A call's close: its marker, or where the next call's open (`ahead`, a pattern) or the end
    follows (after `behind`, a lookbehind on the payload's last character); taking the separator
    the examples write between calls, or a comma or semicolon before the next call's open:
    where no example writes two calls in a row, or where nothing closes a call (an output may
    write one where the examples write only blanks between two objects)."""
    separator = rf"(?:\s*{loose(cuts.call_separator)})?" if cuts.call_separator else ""
    # An index some outputs write before the next call belongs to neither call: dropped.
    index = rf"(?:\s*(?:{cuts.call_index}))?{separator}" if cuts.call_index else ""
    # Where no example shows what parts two calls, a comma or semicolon may also stand on both
    # sides of an index (``}, #4, {``).
    index_ahead = ""
    if cuts.call_index and not separator and not cuts.calls_in_a_row:
        index = rf"(?:\s*(?:{cuts.call_index})(?:\s*[,;])?)?"
        index_ahead = rf"(?:(?:{cuts.call_index})\s*[,;]?\s*)?"
    if cuts.call_close_tail:
        tail = rf"(?:\s*{loose(cuts.call_close_tail)})?"
        unseen = rf"(?:\s*[,;](?=\s*{index_ahead}(?:{ahead})))?"
        return {"close_pattern": loose(cuts.call_close) + tail + (separator or unseen)}
    if not cuts.call_close:
        between = separator or r"(?:\s*[,;])?"
        ends = "".join(f"|{loose(marker)}" for marker in cuts.call_ends if marker)
        return {"close_pattern": rf"{behind}{between}{index}(?=\s*(?:{ahead}{ends}|$))"}
    unseen = "" if cuts.calls_in_a_row else rf"(?:\s*[,;](?=\s*{index_ahead}(?:{ahead})))?"
    if separator or unseen:
        return {"close_pattern": loose(cuts.call_close) + (separator or unseen) + index}
    return _delimiter("close", cuts.call_close)


def _delimiter(key: str, text: str) -> dict:
    """`text` as a delimiter (`key` "open" or "close"): the literal, or a pattern where it holds
    blanks or two markup tokens side by side (``</fn>\n</call>``), which may then be
    any blanks: models break lines between markers, or leave out the break the chat template
    writes."""
    pattern = loose(text, tags_apart=True)
    return {key: text} if pattern == pattern_literal(text) else {f"{key}_pattern": pattern}


def _after_payload(close: dict, behind: str, cuts: _Cuts) -> dict:
    """`close`, a call's close marker, only right after the payload's last bracket (`behind`, a
    lookbehind) and blanks: the same marker written inside an argument's string (``</call>``
    in a file's text) is text, not the call's end. Unchanged without a marker or a bracket, or
    where the marker is itself a bracket."""
    if not behind or not cuts.call_close or regex.fullmatch(r"[}\])]+", cuts.call_close):
        return close
    pattern = close.get("close_pattern") or loose(close["close"])
    return {"close_pattern": rf"{behind}\s*{pattern}"}


def _list_field(shape: str, first: CallReading, cuts: _Cuts) -> tuple[dict, str]:
    """One region holding a list of calls (JSON, or Python-style), closed by its marker or the
    end of the output."""
    if cuts.call_open:
        spec: dict = _delimiter("open", cuts.call_open)
    elif shape == "json-list":
        spec = {"open_pattern": rf"(?=\[\s*{object_start(first.name_key.split('.')[0])})"}
    else:
        spec = {"open_pattern": rf"(?=\[\s*{NAME}\()"}
    close = (
        _after_payload(_delimiter("close", cuts.call_close), r"(?<=\])", cuts)
        if cuts.call_close
        else {}
    )
    if shape == "python-list":
        spec.update(content="python-call-list", transform_each=True)
        spec["transform"] = _function("{name}", "{arguments}")
        return {**spec, **close}, "a Python-style list of calls"
    spec.update(content="json", transform_each=True)
    spec["transform"] = _function("{" + first.name_key + "}", "{" + first.arguments_key + "}")
    if "." not in first.arguments_key:
        # Arguments written as JSON text: serving stacks accept both, so models write both.
        spec["content_args"] = {"decode_json_strings": [first.arguments_key]}
    return {**spec, **close}, "a JSON list of call objects"


def _object_field(first: CallReading, cuts: _Cuts) -> tuple[dict, str]:
    """A region per call, each a JSON object with the name inside; with no open marker, it opens
    where such an object starts."""
    start = object_start(first.name_key.split(".")[0])
    if cuts.call_open:
        spec: dict = _delimiter("open", cuts.call_open)
        ahead = loose(cuts.call_open)
    else:
        spec = {"open_pattern": f"(?={start})"}
        ahead = start
    spec.update(
        _after_payload(_close(cuts, ahead, r"(?<=\})"), r"(?<=\})", cuts),
        repeats=True,
        content="json",
    )
    spec["transform"] = _function(
        "{content." + first.name_key + "}", "{content." + first.arguments_key + "}"
    )
    if "." not in first.arguments_key:  # arguments as JSON text too, as in a list
        spec["content_args"] = {"decode_json_strings": [first.arguments_key]}
    return spec, "a JSON object per call, the name inside"


def _varying_key_field(
    shape: str, name_key: str, argument_keys: list[str], cuts: _Cuts
) -> tuple[dict, str]:
    """A region per call object whose arguments key varies: the object's head in the open
    pattern (`engine.chat_templates.call_objects`), the arguments its body."""
    how = f"JSON call objects, the arguments under any of {argument_keys}"
    if shape == "json-list":
        return list_item_field(name_key, argument_keys), how + ", in a JSON list"
    head = object_head(name_key, argument_keys)
    lead = loose(cuts.call_open) + r"\s*" if cuts.call_open else ""
    ahead = loose(cuts.call_open) if cuts.call_open else object_start(name_key)
    spec = {"open_pattern": lead + head, **closing_brace(_close(cuts, ahead, r"(?<=\})"))}
    spec.update(repeats=True, content="json", transform=object_transform())
    return spec, how + ", one per call"


# The call shapes whose arguments are one JSON object: calls of several of these can share a
# field (`_mixed_calls_field`).
_JSON_ARGUMENTS = ("json-object", "json-list", "name-json")


def _call_syntaxes(alignments: list[Alignment]) -> dict[str, list[Alignment]]:
    """{shape: the alignments whose calls are all written in it} when the examples write their
    calls in more than one syntax, each with its arguments as one JSON object (a JSON list in
    one output, ``NAME[ARGS]{...}`` in another; call objects in a marker and bare), else {}.
    Two syntaxes of one shape are told apart by the marker before the call."""
    groups: dict[str, list[Alignment]] = {}
    for alignment in alignments:
        spans = alignment.of("calls")
        if not spans:
            continue
        shapes = {span.reading.shape for span in spans}
        if len(shapes) != 1 or not shapes <= set(_JSON_ARGUMENTS):
            return {}
        shape = shapes.pop()
        if shape == "json-object":
            # Call objects after different markers (one in a call's tag, one bare after a
            # header) are two syntaxes.
            shape += " after " + last_marker(alignment.text[: spans[0].start], _WORD_SEAM)
        groups.setdefault(shape, []).append(alignment)
    return groups if len(groups) > 1 else {}


def _mixed_calls_field(
    syntaxes: dict[str, list[Alignment]], known: tuple[str, ...] = ()
) -> tuple[dict, str, list[str], dict[str, str], set[str]]:
    """One call field for calls written in several syntaxes, each with its arguments as a JSON
    object: the open an alternation of each syntax's head (its open marker, then the name group
    and what stands between the name and the arguments), the body the arguments, the close an
    alternation of each syntax's end, told apart by what follows it. `known`: as for `_peel`.

    Returns:
        (the field, how for people, the left-over pieces, {piece: pattern} of those that vary,
        the delimiters the field takes).

    Raises:
        NotLearnt: a syntax's call objects hold more than the name and the arguments.
    """
    heads, tails, left, varying, delimiters, hows = [], [], [], {}, set(), []
    # The arguments keys of every syntax's call objects: an output of one syntax may write the
    # key another's example writes.
    objects = [
        (alignment, span)
        for shape, group in syntaxes.items()
        if shape != "name-json"
        for alignment in group
        for span in alignment.of("calls")
    ]
    every_key = varying_arguments_keys(objects, 1)
    peeled = {shape: _peel(group, shape == "json-list", known) for shape, group in syntaxes.items()}
    # An index one syntax's example writes between its calls may stand between another's too.
    indexes = "|".join(
        dict.fromkeys(cuts.call_index for cuts, _, _ in peeled.values() if cuts.call_index)
    )
    for shape, group in syntaxes.items():
        cuts, group_left, group_varying = peeled[shape]
        cuts.call_index = indexes
        spans = [(alignment, span) for alignment in group for span in alignment.of("calls")]
        left += group_left
        varying |= group_varying
        delimiters |= {cuts.call_open, cuts.call_close} - {""}
        # A syntax's markers where no call follows (an answer's close that one example writes
        # before its calls) are dropped by the content; where a call follows, its open is longer.
        left += [m for m in (cuts.call_open, cuts.call_close) if _MARKER_LIKE.search(m)]
        if shape == "name-json":
            spec, _ = _named_field("name-json", spans, cuts)
            heads.append(spec["open_pattern"])
            tails.append(spec.get("close_pattern") or pattern_literal(spec["close"]))
            hows.append("the name, then the arguments as a JSON object")
            continue
        keys = every_key or varying_arguments_keys(spans, 1)
        if keys is None:
            raise NotLearnt(
                "the examples write their calls in several syntaxes, and some call objects hold "
                "more than a name and its arguments"
            )
        # Calls written in several syntaxes: the key that holds the arguments varies as well,
        # and an output may write one no example shows.
        head = object_head(*keys, any_key=True)
        if shape == "json-list":
            heads.append(LIST_ITEM_LEAD + head)
            tails.append(list_item_close(keys[0]))
            hows.append("a JSON list of call objects")
            continue
        heads.append(_object_lead(cuts) + head)
        tails.append(_object_close(cuts, keys[0]))
        hows.append("a JSON object per call")
    left = _unglued(
        left, {marker for cuts, _, _ in peeled.values() for marker in cuts.list_markers}
    )
    # A word framed by two markers varies across every example, whichever syntax it writes.
    texts = [
        text
        for group in syntaxes.values()
        for alignment in group
        for _, text, _ in alignment.gaps()
    ]
    varying = {**_framed_words(left, texts, delimiters), **varying}
    field = {
        "open_pattern": "|".join(f"(?:{head})" for head in heads),
        "close_pattern": "|".join(f"(?:{tail})" for tail in tails),
        "repeats": True,
        "content": "json",
        "transform": object_transform(),
    }
    return field, "calls in several syntaxes: " + "; ".join(hows), left, varying, delimiters


def _object_lead(cuts: _Cuts) -> str:
    """The pattern before a call object's head, in a field of several syntaxes: the syntax's
    open marker, if any. Where no example of the syntax writes two calls in a row, the marker
    before its lone call may close the part before it (an answer's close): a call may start
    at its object too (``}, {"name": ...``, or a call alone), the marker then dropped."""
    if not cuts.call_open:
        return ""
    lead = loose(cuts.call_open) + r"\s*"
    return lead if cuts.calls_in_a_row else rf"(?:{lead})?"


def _object_close(cuts: _Cuts, name_key: str) -> str:
    """The close pattern of a call object in a field of several syntaxes: its own brace, then
    the call's close before the next call (its open, or its object where `_object_lead` lets
    one start there) or the end."""
    ahead = loose(cuts.call_open) if cuts.call_open else object_start(name_key)
    if cuts.call_open and not cuts.calls_in_a_row:
        ahead += "|" + object_start(name_key)
    return closing_brace(_close(cuts, ahead, r"(?<=\})"))["close_pattern"]


def _unglued(pieces: list[str], markers: set[str]) -> list[str]:
    """`pieces` with a marker of `markers` that ends a longer piece (``<|h|>calls<|b|>word``,
    the word a syntax's list open) cut off it: the rest is a marker of its own, and the marker
    stays free to start the call that another syntax opens with it."""
    found = []
    for piece in pieces:
        for marker in sorted(markers, key=len, reverse=True):
            head = piece[: len(piece) - len(marker)]
            if marker and piece.endswith(marker) and head.strip() and head.rstrip()[-1] in ">]|":
                piece = head.rstrip()
                break
        found.append(piece)
    return list(dict.fromkeys(found))


def _named_field(shape: str, spans: list[tuple[Alignment, Span]], cuts: _Cuts) -> tuple[dict, str]:
    """A region per call, the name in its open (a pattern group) and the arguments after it, as
    JSON or as pairs; the text between the name and the arguments generalised (an index that
    varies is any number)."""
    middles, pair_readings = [], []
    for alignment, span in spans:
        reading = span.reading
        name_end = reading.start + len(reading.calls[0][0])
        if reading.pairs is not None:
            pair_readings.append(reading.pairs)
        elif shape == "name-json":
            middles.append(alignment.text[name_end : reading.body_start])
    if shape == "name-pairs":
        if not pair_readings:
            raise NotLearnt("no call of the examples has arguments to learn their syntax from")
        syntax, middles = pair_syntax(pair_readings)
        body = syntax.content()
        how = "the name, then its arguments as key and value pairs"
    else:
        body = {"content": "json"}
        how = "the name, then its arguments as a JSON object"
        dialect = _dialect_of([span.reading for _, span in spans])
        if dialect:
            body["content_args"] = dialect
            how += _dialect_words(dialect)
    middle = _id_after_its_marker(middles) or regex.sub(
        r"(?<![\\\w])\d+(?!\w)", r"\\d+", generalise(middles)
    )
    # With only blanks between the name and its object, a name that heads an object is a call;
    # the same marker before another word (a recipient that heads an answer) is not.
    only_blanks = not regex.sub(r"\\s[*+]?|\s", "", middle)
    brace = r"(?=\s*\{)" if shape == "name-json" and only_blanks else ""
    lead = r"(?<![\w.\-])"
    if cuts.call_open:
        fixed_after_name = bool(brace) or not only_blanks
        lead = loose(cuts.call_open) + _blank_after_open(cuts, fixed_after_name)
    if cuts.call_open.startswith("{"):
        # An object keyed by the name is an item of the list: after its bracket or a comma, never
        # an object inside the arguments.
        lead = r"(?<=[\[,])\s*" + lead
    ahead = loose(cuts.call_open) if cuts.call_open else NAME + middle
    behind = r"(?<=[}\]])" if shape == "name-json" else ""
    close = _after_payload(_close(cuts, ahead, behind), behind, cuts)
    if shape == "name-json" and regex.fullmatch(r"[}\])]+", cuts.call_close):
        # The call's close is a bracket (the object the name keys, ``{"NAME": {...}}``) that
        # the arguments may end with too: it closes where what the examples write after it
        # (the next call's open, a marker, the end) follows.
        separator = rf"(?:{loose(cuts.call_separator)}\s*)?" if cuts.call_separator else ""
        follows = [loose(marker) for marker in cuts.after_close if marker]
        ahead = "|".join([separator + loose(cuts.call_open), *follows, "$"])
        close = {"close_pattern": rf"{loose(cuts.call_close)}(?=\s*(?:{ahead}))"}
        if cuts.call_separator:
            close["close_pattern"] += rf"(?:\s*{loose(cuts.call_separator)})?"
    if cuts.call_close == ")":
        close = _outside_quotes(close)
    spec = {"open_pattern": lead + f"(?P<name>{NAME})" + middle + brace, **close}
    spec.update(repeats=True, **body)
    spec["transform"] = _function("{name}", "{content}")
    return spec, how


def _blank_after_open(cuts: _Cuts, fixed_after_name: bool) -> str:
    """What may stand between a call's open and the function's name: any blanks where an
    example writes some; where the open ends with a markup token (models break the line after
    a marker the chat template writes nothing after), any blanks when fixed text follows the
    name (``<call> NAME<args>``), else only blanks with a line break (prose that names the
    marker, ``write <call> then the name``, is no call); else nothing."""
    if cuts.blank_after_open:
        return r"\s*"
    if not _ends_with_marker(cuts.call_open):
        return ""
    # Spaces and tabs, then a line break (a negated class, `[^\S\n]`, has no grammar form).
    return r"\s*" if fixed_after_name else r"(?:[ \t]*\n\s*)?"


def _ends_with_marker(text: str) -> bool:
    """Whether `text` ends with a markup token (``<call>``, ``[CALL]``)."""
    return any(token.end() == len(text) for token in MARKUP_TOKEN.finditer(text))


def _dialect_of(readings: list[CallReading]) -> dict:
    """The `json` parser's arguments that read every one of `readings` (bare keys when any
    call writes them; each call's string marks, in order)."""
    bare = any(reading.bare_keys for reading in readings)
    pairs = list(dict.fromkeys(pair for reading in readings for pair in reading.string_delimiters))
    args: dict = {"unquoted_keys": True} if bare else {}
    if pairs:
        args["string_delims"] = [list(pair) for pair in pairs]
    return args


def _dialect_words(args: dict) -> str:
    """How people read a JSON dialect's arguments (`_dialect_of`)."""
    said = [" with keys written bare"] if args.get("unquoted_keys") else []
    said += [f" and strings between {o!r} and {c!r}" for o, c in args.get("string_delims", [])]
    return "".join(said)


def _outside_quotes(close: dict) -> dict:
    """A close at a call's closing parenthesis, not at one a quoted value holds
    (``code="print('hi')"``): there the quote that ends the value follows it."""
    pattern = close.get("close_pattern", pattern_literal(close.get("close", "")))
    if not pattern.startswith(r"\)"):
        return close
    return {"close_pattern": r"\)(?![\"'])" + pattern[2:]}


def _settle_empty_calls(alignments: list[Alignment]) -> None:
    """Calls whose arguments are pairs: each span takes the text after its last value that
    every value is followed by (``</arg>``), and a call with no arguments takes the text the
    others open their arguments with (``(``, ``{``), so that what follows is the close, as for
    the others."""
    pairs = [
        span.reading.pairs
        for alignment in alignments
        for span in alignment.of("calls")
        if span.reading.shape == "name-pairs" and span.reading.pairs is not None
    ]
    if not pairs:
        return
    syntax, opens = pair_syntax(pairs)
    after = syntax.value_after.strip()
    for alignment in alignments:
        for index, span in enumerate(alignment.spans):
            reading = span.reading
            if after and reading is not None and reading.pairs is not None:
                last_key = reading.pairs.pairs[-1].key if reading.pairs.pairs else None
                found = regex.compile(r"\s*" + syntax.after_pattern(last_key)).match(
                    alignment.text, reading.end
                )
                if found:
                    alignment.spans[index] = Span(
                        "calls", span.start, found.end(), replace(reading, end=found.end())
                    )
    if len(set(opens)) != 1:
        return
    opening = opens[0]
    for alignment in alignments:
        for index, span in enumerate(alignment.spans):
            reading = span.reading
            if (
                reading is None
                or reading.shape not in ("name-json", "name-pairs")
                or reading.calls[0][1]
            ):
                continue
            name_end = reading.start + len(reading.calls[0][0])
            if alignment.text.startswith(opening, name_end):
                end = name_end + len(opening)
                settled = replace(reading, shape="name-pairs", end=end, body_start=end, pairs=None)
                alignment.spans[index] = Span("calls", span.start, end, settled)


def _reasoning_field(cuts: _Cuts) -> dict:
    if not cuts.reasoning_close:
        raise NotLearnt("nothing follows the examples' reasoning that could close it")
    if cuts.reasoning_open:
        return {"open": cuts.reasoning_open, "close": cuts.reasoning_close}
    return {
        "open_pattern": f"^(?=.*?{pattern_literal(cuts.reasoning_close)})",
        "close": cuts.reasoning_close,
    }


def learn_template(
    examples: list[Example],
    base: dict,
    regex_timeout: float | None = 1.0,
) -> LearntTemplate:
    """A template whose fields are learnt from the examples' alignments, read back to check.

    Args:
        examples: the examples (with or without expected messages).
        base: a response template whose start anchor (and content closes, and fields for parts
            no example shows) the learnt template keeps.
        regex_timeout: seconds per regex call while checking.

    Returns:
        The learnt template; the first of the variants tried that reads every example back.

    Raises:
        NotLearnt: no example aligns, or no variant reads every example (the message gives the
            first problem).
    """
    from ..template import load_template

    anchor = load_template(base).start_anchor.pattern
    alignments = [found for found in align_all(examples, anchor) if found]
    if not alignments:
        raise NotLearnt("no output shows where its message stands")
    _settle_empty_calls(alignments)
    known = _closes_of(base)
    cuts, left, varying = _peel(alignments, known=known)
    fields: dict[str, Any] = {}
    findings: list[tuple[str, Any, str]] = []
    shows = {span.kind for alignment in alignments for span in alignment.spans}
    if "reasoning" in shows:
        fields["reasoning_content"] = _reasoning_field(cuts)
        findings.append(
            (
                "fields.reasoning_content",
                fields["reasoning_content"],
                "what every example writes before and after its reasoning",
            )
        )
    how = ""
    syntaxes = _call_syntaxes(alignments)
    if syntaxes:
        fields["tool_calls"], how, left, varying, delimiters = _mixed_calls_field(syntaxes, known)
        # Each syntax's markers: taken by its call's open where the call follows, else dropped
        # (the open pattern is longer than the marker at the same place, so it wins).
        cuts.call_open = cuts.call_close = ""
        left = list(dict.fromkeys(left))
    if "calls" in shows and not syntaxes:
        fields["tool_calls"], how = _calls_field(alignments, cuts)
        findings.append(
            (
                "fields.tool_calls",
                fields["tool_calls"],
                f"the examples write their calls as {how}; this content parser reads them back",
            )
        )
    used = {cuts.reasoning_open, cuts.reasoning_close, cuts.call_open, cuts.call_close}
    markers = [
        piece for piece in left if piece not in used and not _inside_message(piece, alignments)
    ]
    findings += [
        (
            "fields.content.close",
            varying.get(marker, marker),  # as the close writes it: a pattern where it varies
            f"{_first_writer(marker, alignments)} writes it between the parts of its message, "
            "where no field explains it: a marker, dropped",
        )
        for marker in markers
    ]
    for marker in _prewritten_opens(alignments, cuts.call_open):
        if marker not in markers:
            markers.append(marker)
            findings.append(
                (
                    "fields.content.close",
                    marker,
                    PREWRITTEN_OPEN,
                )
            )
    variants = _variants(fields, markers, base, varying)
    assumptions = [
        (alignment.example, text) for alignment in alignments for text in alignment.assumptions
    ]
    template = _first_reading_all(variants, examples, regex_timeout)
    return LearntTemplate(template, how or "the examples' markers", findings, assumptions)


def _closes_of(template: dict) -> tuple[str, ...]:
    """The content's close markers in `template` (literal closes only)."""
    close = template.get("fields", {}).get("content", {}).get("close", ())
    return tuple([close] if isinstance(close, str) else close)


def _prewritten_opens(alignments: list[Alignment], call_open: str) -> list[str]:
    """What the prompts write after the start anchor that a call's open starts with (a
    recipient marker the model completes with a name, or with a word that heads an answer)."""
    found = []
    for alignment in alignments:
        written = alignment.text[: alignment.lead].strip()
        if written and call_open.strip().startswith(written) and written not in found:
            found.append(written)
    return found


def _first_reading_all(
    variants: list[dict], examples: list[Example], regex_timeout: float | None
) -> dict:
    """The first of `variants` that reads every example back.

    Raises:
        NotLearnt: none does (the first problem, and the examples the first valid one misreads).
    """
    from ..template import load_template

    first_problem, misread = "", None
    for template in variants:
        try:
            load_template(template)
        except ValueError as error:
            first_problem = first_problem or f"the learnt template is not valid: {error}"
            continue
        problems = check_examples(template, examples, regex_timeout)
        if not problems:
            return template
        first_problem = first_problem or problems[0]
        if misread is None:
            misread = tuple(
                example
                for example in examples
                if any(problem.startswith(example.label + ":") for problem in problems)
            )
    raise NotLearnt(first_problem, misread or ())


def learn_from_most(
    examples: list[Example],
    base: dict,
    regex_timeout: float | None = 1.0,
    leave_out_each: bool = True,
) -> tuple[LearntTemplate, list[Example]]:
    """`learn_template` over all `examples`, or, when they do not agree (one writes what the
    others' format cannot read, or its expected message contradicts its text), over fewer: all
    but those the template learnt from all of them misreads, then (`leave_out_each`) all but
    one, then each alone. The template that misreads the fewest of all the examples is kept,
    when it misreads fewer than `base` does: an example no format reads costs the others nothing.

    Returns:
        (the learnt template, the examples it was learnt from).

    Raises:
        NotLearnt: no subset gives a template that reads more examples than `base` (the message
            is the problem with all of them).
    """
    try:
        return learn_template(examples, base, regex_timeout), examples
    except NotLearnt as error:
        problem = error
    subsets = []
    if problem.misread and len(problem.misread) < len(examples):
        subsets.append([example for example in examples if example not in problem.misread])
    tried = examples[:MOST_EXAMPLES_LEFT_OUT]
    if leave_out_each and len(examples) > 1:
        subsets += (
            [tried[:at] + tried[at + 1 :] for at in range(len(tried))] if len(tried) > 2 else []
        )
        subsets += [[example] for example in tried]
    fewest = len(check_examples(base, examples, regex_timeout))
    best = None
    for subset in subsets:
        if fewest == 0:  # every example read: no later subset can do better
            break
        try:
            learnt = learn_template(subset, base, regex_timeout)
        except NotLearnt:
            continue
        wrong = len(check_examples(learnt.template, examples, regex_timeout))
        if wrong < fewest:
            fewest, best = wrong, (learnt, subset)
    if best is None:
        raise problem
    return best


def _variants(
    fields: dict, markers: list[str], base: dict, varying: dict[str, str] | None = None
) -> list[dict]:
    """The learnt fields as templates with `base`'s start anchor and content closes (and the
    markers added; a marker of `varying` as its pattern, the closes then one pattern): first
    with `base`'s fields for the parts no example shows, then without."""
    base_fields = base.get("fields", {})
    base_content = base_fields.get("content", {})
    closes, patterns = split_content_closes(base_content)
    if closes is None:  # a pattern no reader cuts: kept whole, first
        closes, patterns = [], [base_content["close_pattern"]]
    varying = varying or {}
    patterns = list(
        dict.fromkeys([*patterns, *(varying[marker] for marker in markers if marker in varying)])
    )
    closes = list(dict.fromkeys([*closes, *(m for m in markers if m not in varying)]))
    content = content_keys(closes, patterns)
    anchor_keys = {key: value for key, value in base.items() if key != "fields"}
    variants = []
    for with_base in (True, False):
        merged = dict(fields)
        if with_base:
            for key in ("reasoning_content", "tool_calls"):
                if key not in merged and key in base_fields:
                    merged[key] = base_fields[key]
        ordered = {key: merged[key] for key in ("reasoning_content", "tool_calls") if key in merged}
        variants.append({**anchor_keys, "fields": {**ordered, "content": content}})
    return variants


def _first_writer(marker: str, alignments: list[Alignment]) -> str:
    """The label of the first example whose output writes `marker` ("an example" when none does
    whole: a marker learnt as a pattern)."""
    return next((a.example.label for a in alignments if marker in a.example.output), "an example")


def _inside_message(piece: str, alignments: list[Alignment]) -> bool:
    """Whether `piece` is text of an expected message (then it is not a marker)."""
    for alignment in alignments:
        expected = alignment.example.expected or {}
        for key in ("content", "reasoning_content"):
            value = expected.get(key)
            if isinstance(value, str) and piece in value:
                return True
    return False
