"""The region map: every character of a parse, coloured by what became of it.

Pure functions from a `ParseView`'s parts (stream text, `MapSpan`s, logged
events) to HTML. Nothing here parses or touches Gradio state, so the map is
tested by calling it.

Offsets are stream offsets: 0 is the first character of the prefix after its
start-anchor cut; the generation follows the prefix tail.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Sequence
from typing import Any

from .parse_view import LoggedEvent, MapSpan

# Field colours (see field_colours); bodies use the light tint,
# delimiters the strong one.
PALETTE = (
    ("#dbeafe", "#2563eb"),  # blue
    ("#dcfce7", "#16a34a"),  # green
    ("#fef3c7", "#d97706"),  # amber
    ("#fce7f3", "#db2777"),  # pink
    ("#ede9fe", "#7c3aed"),  # violet
    ("#cffafe", "#0891b2"),  # cyan
    ("#ffedd5", "#ea580c"),  # orange
    ("#e0e7ff", "#4f46e5"),  # indigo
)
# Characters of cut-away prefix shown before the start-anchor cut.
CUT_PREFIX_SHOWN = 160

# The message keys every template uses keep one colour whatever the template's field order.
FIXED_COLOURS = {"reasoning_content": PALETTE[0], "tool_calls": PALETTE[1], "content": PALETTE[2]}


def field_colours(field_names: Sequence[str]) -> dict[str, tuple[str, str]]:
    """(tint, strong) colour pair for each field: fixed for the common message keys,
    the rest of the palette in template order."""
    free = [pair for pair in PALETTE if pair not in FIXED_COLOURS.values()]
    others = [name for name in field_names if name not in FIXED_COLOURS]
    colours = {name: free[i % len(free)] for i, name in enumerate(others)}
    return {name: FIXED_COLOURS.get(name) or colours[name] for name in field_names}


def _region_event_numbers(events: Iterable[LoggedEvent]) -> tuple[dict[int, tuple[int | None, int | None]], dict[tuple[int, int], int]]:
    """Region index -> (open event number, close event number), and (start, end) -> chunk event number.

    Regions do not nest, so the k-th `region_open` and the k-th `region_close` belong to region k.
    """
    opens: list[int] = []
    closes: list[int] = []
    chunks: dict[tuple[int, int], int] = {}
    for logged in events:
        kind = logged.event.get("type")
        if kind == "region_open":
            opens.append(logged.number)
        elif kind == "region_close":
            closes.append(logged.number)
        elif kind == "region_chunk" and "start" in logged.event:
            chunks[(logged.event["start"], logged.event["end"])] = logged.number
    regions = {k: (opens[k] if k < len(opens) else None, closes[k] if k < len(closes) else None) for k in range(len(opens))}
    return regions, chunks


def _span_title(span: Any, regions: dict, chunks: dict, tail_length: int) -> str:
    where = "prefix tail" if span.end <= tail_length else "generation"
    parts = [span.field or "(no field)", span.kind, f"offsets {span.start}–{span.end}", where]
    if span.region is not None:
        parts.append(f"region {span.region}")
        opened, closed = regions.get(span.region, (None, None))
        numbers = []
        if span.kind == "body" and (span.start, span.end) in chunks:
            numbers.append(f"chunk #{chunks[(span.start, span.end)]}")
        if opened is not None:
            numbers.append(f"open #{opened}")
        if closed is not None:
            numbers.append(f"close #{closed}")
        if numbers:
            parts.append("events " + ", ".join(numbers))
    if span.captures:
        parts.append("captures " + json.dumps(span.captures, ensure_ascii=False))
    return " · ".join(parts)


def _piece(text: str, classes: str, style: str, title: str) -> str:
    return f'<span class="{classes}" style="{style}" title="{html.escape(title)}">{html.escape(text)}</span>'


def region_map(
    *,
    cut_away: str,
    stream: str,
    tail_length: int,
    spans: Sequence[MapSpan],
    events: Sequence[LoggedEvent],
    field_names: Sequence[str],
    error_offset: int | None = None,
    error_text: str | None = None,
) -> str:
    """The region map: every character of the parse, coloured by what became of it.

    Args:
        cut_away: the prefix before the start-anchor cut (shown muted, shortened).
        stream: prefix tail followed by the generation (what the spans index).
        tail_length: length of the prefix tail in `stream`.
        spans: `MapSpan`s in order; gaps and text after the last span are shown unstyled.
        events: the logged events, for the event numbers in hover titles.
        field_names: the template's fields, in order (fixes the colours).
        error_offset: where a parse error was reported, if any.
        error_text: the error message, shown on the error marker.
    """
    colours = field_colours(field_names)
    regions, chunks = _region_event_numbers(events)
    out = [legend(field_names), '<div class="rt-map" id="region-map-body">']
    if cut_away:
        shown = cut_away[-CUT_PREFIX_SHOWN:]
        hidden = len(cut_away) - len(shown)
        lead = f"… {hidden} earlier characters …\n" if hidden else ""
        out.append(
            f'<span class="rt-cutaway" title="prefix before the start-anchor cut: never parsed">{html.escape(lead + shown)}</span>'
            '<span class="rt-marker" title="the prefix is cut after the last start-anchor match">✂ start anchor</span>'
        )
    elif tail_length:
        out.append('<span class="rt-marker" title="no start-anchor match: the whole prefix is parsed">prefix</span>')
    marks = {"generation": False, "error": error_offset is None}

    def add_markers(at: int) -> None:
        if not marks["generation"] and at >= tail_length:
            out.append('<span class="rt-marker rt-gen" title="the model\'s output starts here">▶ generation</span>')
            marks["generation"] = True
        if not marks["error"] and at >= error_offset:
            out.append(_error_marker(error_text))
            marks["error"] = True

    def emit(start: int, end: int, classes: str, style: str, title: str) -> None:
        cuts = sorted({start, end, *(x for x in (tail_length, error_offset) if x is not None and start < x < end)})
        for a, b in zip(cuts, cuts[1:]):
            add_markers(a)
            extra = (" rt-tail" if b <= tail_length else "") + (
                " rt-error" if error_offset is not None and a <= error_offset < b else ""
            )
            out.append(_piece(stream[a:b], classes + extra, style, title or f"offsets {a}–{b}"))

    position = 0
    for span in spans:
        start, end = max(span.start, position), span.end
        if start > position:
            emit(position, start, "rt-unknown", "", "")
        if end <= start:
            continue
        title = _span_title(span, regions, chunks, tail_length)
        if span.kind in ("discarded", "held", "unparsed"):
            classes, style = f"rt-{span.kind}", ""
            if span.kind == "held":
                title = f"held back: may be the start of a delimiter · offsets {start}–{end}"
            elif span.kind == "unparsed":
                title = f"not parsed: the parse stopped at an error · offsets {start}–{end}"
        else:
            tint, strong = colours.get(span.field, ("#e5e7eb", "#374151"))
            if span.kind == "body":
                classes, style = "rt-body", f"background:{tint}"
            else:
                classes, style = f"rt-delim rt-{span.kind}", f"background:{strong}"
        emit(start, end, classes, style, title)
        position = end
    if position < len(stream):
        emit(position, len(stream), "rt-unknown", "", "")
    add_markers(len(stream))
    out.append("</div>")
    return "".join(out)


def _error_marker(error_text: str | None) -> str:
    return f'<span class="rt-marker rt-err" title="{html.escape(error_text or "parse error")}">⚠ error here</span>'


def legend(field_names: Sequence[str]) -> str:
    """The colour key: one swatch per field, then the delimiter and special styles."""
    colours = field_colours(field_names)
    items = [f'<span class="rt-swatch rt-body" style="background:{tint}">{html.escape(name)}</span>' for name, (tint, _) in colours.items()]
    first = colours[field_names[0]][1] if field_names else "#374151"
    items += [
        f'<span class="rt-swatch rt-delim rt-open" style="background:{first}">open</span>'
        f'<span class="rt-swatch rt-delim rt-close" style="background:{first}">close</span> delimiters',
        '<span class="rt-swatch rt-tail" style="background:#e5e7eb">faded</span> prefix tail',
        '<span class="rt-swatch rt-held">pending</span> held back',
        '<span class="rt-swatch rt-discarded">discarded</span>',
        '<span class="rt-swatch rt-unparsed">unparsed</span>',
        '<span class="rt-swatch rt-error">error</span>',
    ]
    return '<div class="rt-legend" id="region-legend">' + "".join(f"<span>{item}</span>" for item in items) + "</div>"


