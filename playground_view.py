"""HTML views of a parse for the playground: region map, event log, chat, badges.

Pure functions from plain values (strings, lists of event dicts, engine
`Span`s) to HTML strings or Chatbot message lists. Nothing here parses,
generates or touches Gradio state, so each view is tested by calling it.

Offsets are stream offsets: 0 is the first character of the prefix after its
start-anchor cut; the generation follows the prefix tail.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

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
# Event-log rows shown; the rest are summarised in one line.
EVENT_ROWS_SHOWN = 1500

CSS = """
.rt-map { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 13px; line-height: 1.7;
  white-space: pre-wrap; word-break: break-word; padding: 10px; border: 1px solid var(--border-color-primary);
  border-radius: 8px; max-height: 460px; overflow: auto; background: var(--background-fill-primary); color: #111827; }
.rt-map span[title] { cursor: help; }
.rt-body { border-radius: 3px; }
.rt-delim { border-radius: 4px; font-weight: 700; color: #fff; padding: 0 2px; }
.rt-open { box-shadow: inset 3px 0 0 rgba(0,0,0,.35); }
.rt-close { box-shadow: inset -3px 0 0 rgba(0,0,0,.35); }
.rt-discarded { color: #6b7280; text-decoration: line-through; background: #f3f4f6; }
.rt-held { background: repeating-linear-gradient(45deg, #fef9c3, #fef9c3 4px, #fde68a 4px, #fde68a 8px);
  outline: 1px dashed #ca8a04; }
.rt-cutaway { color: #9ca3af; }
.rt-unparsed { color: #991b1b; background: #fee2e2; }
.rt-tail { opacity: .6; }
.rt-marker { display: inline-block; font-family: system-ui, sans-serif; font-size: 11px; font-weight: 600;
  padding: 0 6px; margin: 0 2px; border-radius: 9px; background: #374151; color: #fff; white-space: nowrap; }
.rt-marker.rt-gen { background: #0f766e; }
.rt-error { text-decoration: underline wavy #dc2626; text-decoration-thickness: 2px; }
.rt-marker.rt-err { background: #dc2626; }
.rt-legend { display: flex; flex-wrap: wrap; gap: 6px 12px; margin: 6px 0 4px; font-family: system-ui, sans-serif;
  font-size: 12px; align-items: center; color: var(--body-text-color); }
.rt-legend span.rt-swatch { font-family: ui-monospace, monospace; padding: 0 6px; }
.rt-log { max-height: 420px; overflow: auto; }
.rt-log table { border-collapse: collapse; width: 100%; font-size: 12px; }
.rt-log th, .rt-log td { border-bottom: 1px solid var(--border-color-primary); padding: 2px 6px; text-align: left;
  vertical-align: top; }
.rt-log th { position: sticky; top: 0; background: var(--background-fill-secondary); }
.rt-log td.rt-text, .rt-log td.rt-value { font-family: ui-monospace, monospace; white-space: pre-wrap; word-break: break-all; }
.rt-log tr.rt-prefix td { background: #f3f4f6; color: #4b5563; }
.rt-log tr.rt-finalize td { background: #f0fdf4; }
.rt-log tr.rt-dirty td.rt-text { background: #fff7ed; color: #9a3412; font-style: italic; }
.rt-log tr.rt-clean td.rt-text { background: #ecfdf5; color: #065f46; }
.rt-ws { color: #9ca3af; }
.rt-badge { display: inline-block; padding: 4px 12px; border-radius: 14px; font-weight: 700; font-family: system-ui, sans-serif; }
.rt-pass { background: #16a34a; color: #fff; }
.rt-fail { background: #dc2626; color: #fff; }
.rt-pending { background: #6b7280; color: #fff; }
.rt-figures { display: flex; gap: 18px; font-family: system-ui, sans-serif; font-size: 13px; flex-wrap: wrap; }
.rt-figures b { font-size: 16px; }
.rt-message-error { color: #b91c1c; font-weight: 600; }
"""


@dataclass(frozen=True)
class MapSpan:
    """A stretch `[start, end)` of the stream for the region map.

    `kind` is "body", "open", "close", "discarded", "held" (maybe a delimiter,
    not decided yet) or "unparsed" (after a parse error); `field` and `region`
    are set for bodies and delimiters; `captures` are a delimiter's named groups.
    """

    start: int
    end: int
    kind: str
    field: str | None = None
    region: int | None = None
    captures: dict | None = None


@dataclass(frozen=True)
class LoggedEvent:
    """One engine event with its number (1-based, in order) and phase
    ("prefix", "feed N" or "finalize")."""

    number: int
    phase: str
    event: dict


# The message keys every template uses keep one colour whatever the template's field order.
FIXED_COLOURS = {"reasoning_content": PALETTE[0], "tool_calls": PALETTE[1], "content": PALETTE[2]}


def field_colours(field_names: Sequence[str]) -> dict[str, tuple[str, str]]:
    """(tint, strong) colour pair for each field: fixed for the common message keys,
    the rest of the palette in template order."""
    free = [pair for pair in PALETTE if pair not in FIXED_COLOURS.values()]
    others = [name for name in field_names if name not in FIXED_COLOURS]
    colours = {name: free[i % len(free)] for i, name in enumerate(others)}
    return {name: FIXED_COLOURS.get(name) or colours[name] for name in field_names}


_WHITESPACE = {" ": "·", "\t": "→", "\n": "↵", "\r": "␍"}
_WHITESPACE_RE = re.compile("[ \t\n\r]")


def visible_whitespace(text: str) -> str:
    """HTML of `text` with spaces, tabs and newlines drawn as ·, → and ↵ (dimmed)."""
    return _WHITESPACE_RE.sub(
        lambda found: f'<span class="rt-ws">{_WHITESPACE[found.group()]}</span>', html.escape(text, quote=False)
    )


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


def _short_json(value: Any, limit: int = 300) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def event_log(events: Sequence[LoggedEvent], *, hide_chunks: bool = False) -> str:
    """The event log table: number, phase, type, field, chunk text, dirty, value, offsets."""
    rows = [logged for logged in events if not (hide_chunks and logged.event.get("type") == "region_chunk")]
    hidden = max(0, len(rows) - EVENT_ROWS_SHOWN)
    out = [
        '<div class="rt-log" id="event-log-table"><table><thead><tr>'
        "<th>#</th><th>phase</th><th>type</th><th>field</th><th>text</th><th>dirty</th><th>value</th><th>offsets</th>"
        "</tr></thead><tbody>"
    ]
    for logged in rows[:EVENT_ROWS_SHOWN]:
        event = logged.event
        kind = event.get("type", "?")
        classes = []
        if logged.phase == "prefix":
            classes.append("rt-prefix")
        elif logged.phase == "finalize":
            classes.append("rt-finalize")
        if kind == "region_chunk":
            classes.append("rt-dirty" if event.get("dirty") else "rt-clean")
        text = visible_whitespace(event["text"]) if "text" in event else ""
        dirty = "" if "dirty" not in event else ("dirty" if event["dirty"] else "clean")
        value = html.escape(_short_json(event["value"])) if "value" in event else ""
        offsets = f"{event['start']}–{event['end']}" if "start" in event else ""
        out.append(
            f'<tr class="{" ".join(classes)}"><td>{logged.number}</td><td>{html.escape(logged.phase)}</td>'
            f"<td>{html.escape(kind)}</td><td>{html.escape(str(event.get('field', '')))}</td>"
            f'<td class="rt-text">{text}</td><td>{dirty}</td><td class="rt-value">{value}</td><td>{offsets}</td></tr>'
        )
    if hidden:
        out.append(f'<tr><td colspan="8">… {hidden} more events not shown</td></tr>')
    if not rows:
        out.append('<tr><td colspan="8">no events</td></tr>')
    out.append("</tbody></table></div>")
    return "".join(out)


def chat_messages(message: dict | None) -> list[dict]:
    """The message as a chat shows it: reasoning as a collapsed thought, the content,
    each tool call with its arguments; other fields as small notes."""
    if not message:
        return []
    shown: list[dict] = []
    reasoning = message.get("reasoning_content")
    if reasoning:
        shown.append({"role": "assistant", "content": str(reasoning), "metadata": {"title": "💭 Thought", "status": "done"}})
    content = message.get("content")
    if content:
        shown.append({"role": "assistant", "content": content if isinstance(content, str) else _short_json(content, 4000)})
    for call in message.get("tool_calls") or []:
        function = call.get("function", call) if isinstance(call, dict) else {}
        name = function.get("name", "?") if isinstance(function, dict) else "?"
        arguments = function.get("arguments", {}) if isinstance(function, dict) else call
        body = "```json\n" + json.dumps(arguments, ensure_ascii=False, indent=2) + "\n```"
        shown.append({"role": "assistant", "content": body, "metadata": {"title": f"🛠️ Tool call: {name}"}})
    others = {k: v for k, v in message.items() if k not in ("role", "reasoning_content", "tool_calls", "content")}
    for key, value in others.items():
        shown.append({"role": "assistant", "content": f"`{key}`: {_short_json(value, 2000)}"})
    return shown


def badge(passed: bool | None, label: str) -> str:
    """A pass / fail / pending pill; `label` says what was checked."""
    kind, mark = {True: ("rt-pass", "✔ pass"), False: ("rt-fail", "✘ fail"), None: ("rt-pending", "…")}[passed]
    return f'<span class="rt-badge {kind}" id="stream-check-badge" data-passed="{str(passed).lower()}">{mark}</span> {html.escape(label)}'


def figures(items: Sequence[tuple[str, str]]) -> str:
    """A row of live figures, e.g. [("tokens", "120"), ("tokens/s", "48.0")]."""
    cells = "".join(f"<span>{html.escape(name)} <b>{html.escape(value)}</b></span>" for name, value in items)
    return f'<div class="rt-figures" id="live-figures-row">{cells}</div>'
