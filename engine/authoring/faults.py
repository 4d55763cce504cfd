"""The faults a finished parse shows: warnings for template authors.

`find_warnings` reads a tracer's spans (`engine.authoring.trace`) for the faults template
authors meet most (the field reports), one function a warning:

- ``close-without-open``: another field's close delimiter inside a region's text: a missing
  prefix (a chat template that pre-writes the open delimiter), a start anchor that cut the
  prefix after that open delimiter, or a model that closes what it never opened (the advice
  says which, from the prefix and where the anchor cut it);
- ``tool-call-open-swallowed``: a tool call's open delimiter inside another region, where
  only that region's close can fire;
- ``text-discarded``: text outside every region, with no implicit field to take it;
- ``close-inside-json-string``: a JSON region that failed because its close delimiter fired
  inside a JSON string;
- ``delimiter-in-content``: text of the implicit field that is another field's open delimiter
  (or the literal text of its pattern) or the start anchor: a region that did not open there,
  so its text is in the implicit field's value.
- ``open-inside-own-region``: a region whose text holds its own field's open delimiter again:
  a second region (a second tool call) was written inside the first, whose close never came,
  so the first is lost (its text merged into the second);
- ``key-repeated``: a key that appears twice in one region's arguments (tags of `xml-inline`,
  or a JSON object): only the last value is kept, the others are overwritten.

These readings of the spans come on top of the parser's own account (`engine.account`: a near
miss of a delimiter, an argument no tag read, a call name that is not a tool's), which every
parse works out as its regions close; `with_account` puts both in one list, so a trace, the
page and the command line show one set of warnings.

Warnings are often symptoms; their cause in the author's terms is `engine.authoring.diagnosis`.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import regex

from ..account import ParseWarning
from ..template import FieldSpec, ResponseTemplate
from .diagnosis import near_misses, opener_before_cut
from .pattern_explain import literal_runs
from .suggested_patterns import close_or_lookahead, json_safe_close
from .time_budget import out_of_time, regex_timeout

if TYPE_CHECKING:
    from .trace import ParseFailure, TraceSpan


@dataclass
class TraceWarning:
    """A probable template or input fault seen in this parse.

    Attributes:
        code: a stable name (``close-without-open``, ``tool-call-open-swallowed``,
            ``close-inside-json-string``, ``text-discarded``, ``delimiter-in-content``).
        message: what was seen and what it usually means.
        suggestion: what to change, or ``""``.
        source, start, end: where (offsets into the prefix or the generation).
    """

    code: str
    message: str
    suggestion: str
    source: str
    start: int
    end: int

    def to_dict(self) -> dict:
        return asdict(self)


# What to do about each of the parser's warnings (`engine.account`), for the author.
ACCOUNT_SUGGESTIONS = {
    "near-miss": "if the output misspells the delimiter, it is a generation error; if the model "
    "writes it this way, add it to the delimiter",
    "delimiter-in-value": "check where the region's value ends: a close the output misspells, or "
    "a tag the template does not read",
    "markup-in-value": "the value nests tags: read them with a value_parser, or keep the value as text",
    "text-not-read": "check the tag pattern against this text (a tag without its close, or a value "
    "holding its own close)",
    "arguments-empty": "check the tag pattern against this call's text",
    "call-name-invalid": "the call is written in another syntax than the template reads: check "
    "the open pattern's name group",
    "call-name-unknown": "check the tools passed, or the open pattern's name group",
    "call-in-content": "check that the tool call's open delimiter matches this output",
    "close-without-open": "end the region at its own close, not at the call (or let a call "
    "inside it stay its text)",
    "call-in-region": "close the region before a tool call too, if the model calls from inside it",
    "region-unclosed": "check the region's close delimiter against the output",
}


_STREAM_OFFSET = regex.compile(r"stream offset (\d+)")


def _offset_words(locate, offset: int) -> str:
    """A stream offset as the author reads it: "generation offset 12" or "prefix offset 40"."""
    source, at = locate(offset)
    return f"stream offset {offset}" if source is None else f"{source} offset {at}"


def with_account(
    warnings: list[TraceWarning], account: list[ParseWarning], locate
) -> list[TraceWarning]:
    """`warnings` (the readings of the spans), then the parser's own `account` warnings that
    none of them already covers (one at the same place of the same source). `locate(offset)`
    gives `(source, offset)` of a stream offset."""
    merged = list(warnings)
    for found in account:
        source, start = locate(found.start)
        _, end = locate(found.end)
        if source is None:
            continue
        if source == "prefix" and end is not None and end < start:
            end = start
        if any(
            w.source == source and w.start < max(end, start + 1) and start < max(w.end, w.start + 1)
            for w in warnings
        ):
            continue
        merged.append(
            TraceWarning(
                found.code,
                _STREAM_OFFSET.sub(lambda m: _offset_words(locate, int(m.group(1))), found.message),
                ACCOUNT_SUGGESTIONS.get(found.code, ""),
                source,
                start,
                end if end is not None else start,
            )
        )
    return merged


_JSON_STRING_TAIL = regex.compile(r'"\s*[}\]]')


def _region_texts(spans: list[TraceSpan]) -> list[tuple[str | None, int | None, list[TraceSpan]]]:
    """Group body and discarded spans by region: (field, region, spans)."""
    groups: dict[tuple, list[TraceSpan]] = {}
    for span in spans:
        if span.kind == "body":
            groups.setdefault((span.field, span.region), []).append(span)
        elif span.kind == "discarded":
            groups.setdefault((None, None), []).append(span)
    return [(name, region, spans) for (name, region), spans in groups.items()]


@dataclass(frozen=True)
class _Found:
    """A match found in the text of some spans: where it starts (in one span's source) and its text."""

    source: str
    start: int
    end: int
    text: str


def _find_in_spans(spans: list[TraceSpan], needle: regex.Pattern) -> _Found | None:
    """The first non-empty match of `needle` in the text of `spans` (cut at the end of the span it
    starts in), or None."""
    text = "".join(span.text for span in spans)
    try:
        found = next(
            (
                match
                for match in needle.finditer(text, timeout=regex_timeout(0.05))
                if match.end() > match.start()
            ),
            None,
        )
    except TimeoutError:
        return None
    if found is None:
        return None
    # Locate the span holding the match start, and the match's place in the sources.
    position = 0
    for span in spans:
        length = span.end - span.start
        if position + length > found.start():
            offset = span.start + found.start() - position
            size = min(found.end() - found.start(), span.end - offset)
            return _Found(span.source, offset, offset + size, found.group())
        position += length
    return None


def find_warnings(
    spans: list[TraceSpan],
    error: ParseFailure | None,
    template: ResponseTemplate,
    *,
    prefix: str = "",
    cut: int = 0,
) -> list[TraceWarning]:
    """Probable faults visible in a finished parse (see the module docstring): its `spans`, the
    failure that stopped it (`error`, or None) and its template; `prefix` (the whole prefix) and
    `cut` (where the start anchor cut it) let the advice name the prefix the author passed."""
    warnings: list[TraceWarning] = []
    prompt = _Prompt(prefix, cut)
    for name, _, stretch in _region_texts(spans):
        if out_of_time():
            break  # past the deadline in force (the trace's): the warnings found so far
        warnings += _closes_without_open(template.fields, name, stretch, prompt)
        warnings += _swallowed_tool_calls(template.fields, name, stretch)
        warnings += _open_inside_own_region(template.fields, name, stretch, spans)
        warnings += _repeated_keys(template.fields, name, stretch)
    warnings += _delimiters_in_content(template, spans)
    warnings += _discarded_text(spans)
    warnings += _close_inside_json_string(spans, error, template.fields)
    return warnings


@dataclass(frozen=True)
class _Prompt:
    """The prefix the author passed (`text`) and where the start anchor cut it (`cut`)."""

    text: str
    cut: int


def _without_open_advice(other: FieldSpec, found: _Found, where: str, prompt: _Prompt):
    """(message, suggestion) for `other`'s close found in `where` while `other` is not open: the
    start anchor cut past the open the prompt ends with, no prefix was passed, or the prompt
    does not pre-write the open (the model closed what it never opened)."""
    said = (
        f"{found.text!r}, the close delimiter of {other.name} (its open is {other.open.source!r}), "
        f"appears inside {where} while {other.name} is not open."
    )
    opener = opener_before_cut(other, prompt.text, prompt.cut) if prompt.text else None
    if opener is not None:
        return (
            f"{said} The prefix does end with {opener!r}, {other.name}'s open delimiter, but the start "
            f"anchor cut the prefix after it, so {other.name} never opened.",
            f"end the start anchor before {opener!r}, so the prompt's {opener!r} opens {other.name}",
        )
    if not prompt.text.strip():
        return (
            f"{said} This usually means the prefix is missing the text that opened it (a chat "
            "template that pre-writes the open delimiter).",
            "pass the prompt text (with any pre-written open delimiter) as prefix",
        )
    return (
        f"{said} The prefix does not end with {other.open.source!r} either, so the model wrote the "
        "close without the open.",
        f"if the model starts its turn inside {other.name}, let {other.name} open at the start of "
        f"the turn; if {found.text!r} is only a stray marker, add it to the implicit field's closes",
    )


def _closes_without_open(
    fields: dict[str, FieldSpec],
    name: str | None,
    stretch: list[TraceSpan],
    prompt: _Prompt = _Prompt("", 0),
) -> list[TraceWarning]:
    """``close-without-open``: another field's close delimiter inside the text of region `name`
    (None: discarded text), made of the spans `stretch`."""
    warnings = []
    where = f"the {name} region" if name else "discarded text"
    own_close = fields[name].close if name else None
    own = set(own_close.literals or ()) if own_close is not None else set()
    for other in fields.values():
        if other.name == name or other.close is None:
            continue
        if other.close.literals is None:
            if own_close is not None and own_close.source == other.close.source:
                continue
            close = other.close.pattern  # only text it takes counts (not a lookahead's empty match)
        else:
            literals = [literal for literal in other.close.literals if literal not in own]
            if not literals:
                continue
            close = regex.compile("|".join(regex.escape(x) for x in literals), cache_pattern=False)
        found = _find_in_spans(stretch, close)
        if found is None:
            continue
        if other.open is not None:
            opened = _find_in_spans(stretch, other.open.pattern)
            if opened is not None and (opened.source, opened.start) < (found.source, found.start):
                continue  # its open was swallowed too: reported as such
            message, suggestion = _without_open_advice(other, found, where, prompt)
        else:
            message = (
                f"{found.text!r}, the close delimiter of the implicit field {other.name}, appears inside {where}: "
                f"that region never closed, so the text after it stayed in {name or 'the discarded text'}."
            )
            suggestion = "check the region's close delimiter (or pass the full prompt as prefix)"
        warnings.append(
            TraceWarning(
                "close-without-open", message, suggestion, found.source, found.start, found.end
            )
        )
    return warnings


def _swallowed_tool_calls(
    fields: dict[str, FieldSpec], name: str | None, stretch: list[TraceSpan]
) -> list[TraceWarning]:
    """``tool-call-open-swallowed``: a tool call's open delimiter inside the text of region
    `name` (a field with an open: the implicit field watches opens itself)."""
    if name is None or not fields[name].open:
        return []
    warnings = []
    for other in fields.values():
        if other.name == name or other.open is None or not other.is_tool_call:
            continue
        found = _find_in_spans(stretch, other.open.pattern)
        if found is None:
            continue
        warnings.append(
            TraceWarning(
                "tool-call-open-swallowed",
                f"the tool-call open delimiter {found.text!r} appears inside the {name} region and was "
                "swallowed as its text: inside a region only its own close can fire, so this call was "
                "not parsed.",
                f"close {name} also before a tool call, e.g. close_pattern "
                f"{close_or_lookahead(fields[name].close, other.open)!r}",
                found.source,
                found.start,
                found.end,
            )
        )
    return warnings


def _open_inside_own_region(
    fields: dict[str, FieldSpec],
    name: str | None,
    stretch: list[TraceSpan],
    spans: list[TraceSpan],
) -> list[TraceWarning]:
    """``open-inside-own-region``: the open delimiter of field `name` inside the text of one of
    its own regions. Inside a region only its close fires, so a second call written before the
    first one's close is read as part of the first: the first call is lost."""
    if name is None or fields[name].open is None or fields[name].close is None:
        return []
    spec = fields[name]
    found = _find_in_spans(stretch, spec.open.pattern)
    if found is None:
        return []
    region = stretch[0].region
    opened = next(
        (s for s in spans if s.kind == "open" and s.field == name and s.region == region), None
    )
    first = (
        f"opened by {opened.matched_text!r} at {opened.source} offset {opened.start}"
        if opened
        else ""
    )
    before = "".join(span.text for span in stretch)
    before = before[: before.find(found.text)] if found.text in before else before
    near = _near_close(spec, before)
    lost = "tool call" if spec.is_tool_call else f"{name} region"
    return [
        TraceWarning(
            "open-inside-own-region",
            f"the {lost} {first} is lost: its close {spec.close.source!r} never came"
            + (f" (the output has {near!r} there, a near miss of it)" if near else "")
            + f", so the {lost} opened inside it by {found.text!r} at {found.source} offset {found.start} "
            "was read as part of it and the two came out as one.",
            f"if the output misspells the close, it is a generation error; else check {spec.close.path}",
            found.source,
            found.start,
            found.end,
        )
    ]


def _near_close(spec: FieldSpec, text: str) -> str:
    """A near miss of `spec`'s close in `text` (the last one), or ""."""
    for literal in _markup_texts(spec.close):
        misses = near_misses(literal.strip(), text)
        if misses:
            return misses[-1].text
    return ""


def _repeated_keys(
    fields: dict[str, FieldSpec], name: str | None, stretch: list[TraceSpan]
) -> list[TraceWarning]:
    """``key-repeated``: a key written twice in one region's arguments, read by `xml-inline`
    tags or as a JSON object: the parsed value keeps only the last one."""
    if name is None or fields[name].open is None:
        return []
    spec = fields[name]
    text = "".join(span.text for span in stretch)
    keys: list[str] = []
    if spec.content == "xml-inline" and spec.content_args.get("_tag_re") is not None:
        try:
            keys = [
                tag.group("key")
                for tag in spec.content_args["_tag_re"].finditer(text, timeout=regex_timeout(0.05))
            ]
        except TimeoutError:
            return []
    elif spec.content == "json":
        keys = _json_repeated_keys(text)
    seen: set[str] = set()
    repeated = next((key for key in keys if key in seen or seen.add(key)), None)
    if repeated is None or spec.content_args.get("merge_duplicates"):
        return []
    lost = "call's arguments" if spec.is_tool_call else "region"
    return [
        TraceWarning(
            "key-repeated",
            f"the key {repeated!r} appears {keys.count(repeated)} times in one {name} {lost}: only the last "
            "value is kept, the others are overwritten (often two calls read as one, because the first "
            "call's close was not found).",
            "check the region's close against the output; keys that may repeat on purpose need "
            "merge_duplicates",
            stretch[0].source,
            stretch[0].start,
            stretch[-1].end,
        )
    ]


def _json_repeated_keys(text: str) -> list[str]:
    """The keys of the JSON objects in `text` that repeat within one object, each once per
    extra occurrence ([] when `text` is not JSON)."""
    repeated: list[str] = []

    def pairs(items: list[tuple[str, object]]) -> dict:
        keys = [key for key, _ in items]
        repeated.extend(key for key in keys if keys.count(key) > 1)
        return dict(items)

    try:
        json.loads(text.strip(), object_pairs_hook=pairs)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than the reader goes
        return []
    return repeated


def _markup_texts(delimiter) -> list[str]:
    """The texts a delimiter's matches hold that read as markup: its literals, or its pattern's
    literal runs of at least 3 characters with one that is neither a letter, a digit nor a blank
    (so a plain word of a pattern is never looked for)."""
    if delimiter is None:
        return []
    if delimiter.literals is not None:
        texts = list(delimiter.literals)
    else:
        texts = [run.literal for run in literal_runs(delimiter.source)]
    return [
        text
        for text in texts
        if len(text.strip()) >= 3 and any(not (c.isalnum() or c.isspace()) for c in text)
    ]


def _delimiters_in_content(
    template: ResponseTemplate, spans: list[TraceSpan]
) -> list[TraceWarning]:
    """``delimiter-in-content``: another field's open delimiter, or the start anchor, in the text
    of the implicit field: no region opened there (a pattern whose context did not fit, a model
    that ran on into a new turn), so that text is in the implicit field's value. Closes are
    ``close-without-open``'s."""
    implicit = template.implicit_field
    if implicit is None:
        return []
    stretch = [s for s in spans if s.kind == "body" and s.field == implicit.name]
    if not stretch:
        return []
    looked_for = [
        (text, spec.open.path, spec.name)
        for spec in template.fields.values()
        if not spec.implicit
        for text in _markup_texts(spec.open)
    ] + [(text, template.start_anchor.path, None) for text in _markup_texts(template.start_anchor)]
    warnings, seen = [], set()
    for text, path, name in looked_for:
        if text in seen:
            continue
        seen.add(text)
        found = _find_in_spans(stretch, regex.compile(regex.escape(text)))
        if found is None:
            continue
        what = (
            f"no {name} region opened there, so what follows it is {implicit.name}, not {name}"
            if name
            else "the model went on into a new turn, which became part of this message"
        )
        warnings.append(
            TraceWarning(
                "delimiter-in-content",
                f"{text!r}, the text of {path}, is in {implicit.name}: {what}.",
                f"click it on the map to see why {path} did not match there (if the model only "
                "mentioned it, nothing is lost)"
                if name
                else f"end {implicit.name} at the end of the turn (add the turn's end to its closes)",
                found.source,
                found.start,
                found.end,
            )
        )
    return warnings


def _discarded_text(spans: list[TraceSpan]) -> list[TraceWarning]:
    """``text-discarded``: text outside every region, with no implicit field to take it."""
    discarded = [span for span in spans if span.kind == "discarded" and span.text.strip()]
    if not discarded:
        return []
    first = discarded[0]
    count = sum(len(span.text) for span in discarded)
    return [
        TraceWarning(
            "text-discarded",
            f"{count} characters were outside every region and the template has no implicit field, so "
            f"they are not in the message (first at {first.source} offset {first.start}: {first.text[:40]!r})",
            "add a field without 'open' (usually content) to catch unclaimed text, or check that the "
            "open delimiters match this model's output",
            first.source,
            first.start,
            first.end,
        )
    ]


def _close_inside_json_string(
    spans: list[TraceSpan], error: ParseFailure | None, fields: dict[str, FieldSpec]
) -> list[TraceWarning]:
    """The ``close-inside-json-string`` warning, when a JSON region failed and the text after it
    looks like the rest of a JSON string."""
    if error is None or error.field not in fields or fields[error.field].content != "json":
        return []
    rest = "".join(span.text for span in spans if span.kind == "unparsed")
    if not _JSON_STRING_TAIL.search(rest):
        return []
    closes = [span for span in spans if span.kind == "close" and span.field == error.field]
    spec = fields[error.field]
    anchor = closes[-1] if closes else next(span for span in spans if span.kind == "unparsed")
    literal = (
        spec.close.literals[0] if spec.close is not None and spec.close.literals else "</tool_call>"
    )
    return [
        TraceWarning(
            "close-inside-json-string",
            f"the close delimiter of {error.field} probably matched inside a JSON string: the region body "
            "does not parse and the text after the close looks like the rest of a JSON string",
            f"use a close_pattern like {json_safe_close(literal)!r}",
            anchor.source,
            anchor.start,
            anchor.end,
        )
    ]
