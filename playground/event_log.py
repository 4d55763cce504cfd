"""The event log: every engine event of a parse, numbered, with its phase and offsets."""

from __future__ import annotations

import html
from collections.abc import Sequence

from .markup import short_json, visible_whitespace
from .parse_view import LoggedEvent

# Event-log rows shown; the rest are summarised in one line.
EVENT_ROWS_SHOWN = 1500


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
        value = html.escape(short_json(event["value"])) if "value" in event else ""
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
