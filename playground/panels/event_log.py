"""The event log: every engine event of a parse, numbered, a page at a time.

The log is paged (`PAGE_ROWS` rows) and can be searched (any text of the row:
type, field, chunk text, value) and filtered by field, so a 200 KB parse with
tens of thousands of events stays quick to draw. Each row carries `data-n`,
its event number: clicking it explains the stretch it came from, and the
#explain panel links back to rows by number. The rows of the feeds an update
added are outlined while streaming.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from ..parse.event_store import LoggedEvent, without_chunks
from .markup import breakable_whitespace, escape, short_json

PAGE_ROWS = 100
# Characters of a chunk's text shown in its row (the region map has them all).
TEXT_SHOWN = 400
DIRTY_NOTE = (
    "<b>dirty</b>: the chunk is raw text of a structured value (JSON arguments, a typed field) that is only "
    "parsed when its region closes, so it is not yet the value; <b>clean</b>: the text goes into the message as shown."
)


@dataclass(frozen=True)
class LogQuery:
    """Which rows to show: a 1-based page, a search text, a field, chunk events or not,
    and an event number to highlight (its page is shown)."""

    page: int = 1
    search: str = ""
    field: str = ""
    hide_chunks: bool = False
    selected: int | None = None
    group_by_token: bool = False


def _row_text(event: dict) -> str:
    return " ".join(str(value) for value in event.values()).lower()


def matching_rows(events: Sequence[LoggedEvent], query: LogQuery) -> Sequence[LoggedEvent]:
    """The rows the query keeps, in order (`events` itself when it keeps them all)."""
    search = query.search.strip().lower()
    if not (search or query.field or query.hide_chunks):
        return events
    rows = []
    for logged in without_chunks(events) if query.hide_chunks else events:
        event = logged.event
        if query.hide_chunks and event.get("type") == "region_chunk":
            continue
        if query.field and event.get("field") != query.field:
            continue
        if search and search not in _row_text(event) and search != str(logged.number):
            continue
        rows.append(logged)
    return rows


def page_count(rows: int) -> int:
    return max(1, -(-rows // PAGE_ROWS))


def token_group(tokens, event: dict) -> tuple[int, int] | None:
    """The tokens an event's text lies in, as ``(first, past_last)`` indices, or None for an
    event without offsets (or past the tokens read)."""
    if "start" not in event or tokens is None:
        return None
    first, past = tokens.token_range(event["start"], event["end"])
    return None if first >= len(tokens.ids) else (first, max(past, first + 1))


def token_heading(tokens, group: tuple[int, int]) -> str:
    """The group row's words: each token's index, id and text, control tokens named so."""
    first, past = group
    shown = []
    for index in range(first, min(past, first + 8)):
        kind = "control token" if tokens.control[index] else "token"
        shown.append(f"{kind} {index}: id {tokens.ids[index]} {tokens.pieces[index]!r}")
    if past - first > 8:
        shown.append(f"… {past - first - 8} more tokens")
    return " · ".join(shown)


def event_log(
    events: Sequence[LoggedEvent],
    query: LogQuery = LogQuery(),
    current_phases: Collection[str] = (),
    tokens=None,
) -> tuple[str, int, int]:
    """The event log table for `query`; returns (HTML, the page shown, the number of pages).

    Rows of the phases in `current_phases` (the feeds this update added) are outlined. With
    `query.group_by_token` and `tokens` (the `engine.token_ids.StreamTokens` of a parse of
    ids), a row naming the tokens comes before the events of each token: the clean and dirty
    chunks each token released.

    Columns: number, phase, type, field, chunk text (whitespace drawn), dirty, value, offsets.
    """
    rows = matching_rows(events, query)
    pages = page_count(len(rows))
    page = min(max(1, int(query.page or 1)), pages)
    if query.selected is not None:
        if rows is events:  # every row: event N is row N - 1
            position = query.selected - 1 if 0 < query.selected <= len(rows) else None
        else:
            position = next(
                (i for i, logged in enumerate(rows) if logged.number == query.selected), None
            )
        if position is not None:
            page = position // PAGE_ROWS + 1
    first = (page - 1) * PAGE_ROWS
    shown = rows[first : first + PAGE_ROWS]
    filtered = len(rows) != len(events)
    summary = (
        (f"events {first + 1:,}–{first + len(shown):,} of {len(rows):,}" if shown else "no events")
        + (f" (filtered from {len(events):,})" if filtered else "")
        + f" · page {page} of {pages}"
    )
    out = [
        f'<div class="rt-log-summary" id="event-log-summary">{summary}</div>',
        f'<div class="rt-log-note">{DIRTY_NOTE}</div>',
        '<div class="rt-log" id="event-log-table"><table>'
        '<colgroup><col class="rt-c-n"><col class="rt-c-phase"><col class="rt-c-type"><col class="rt-c-field"><col>'
        '<col class="rt-c-dirty"><col class="rt-c-value"><col class="rt-c-offsets"></colgroup>'
        "<thead><tr><th>#</th><th>phase</th><th>type</th><th>field</th><th>text</th><th>dirty</th><th>value</th><th>offsets</th>"
        "</tr></thead><tbody>",
    ]
    grouping = query.group_by_token and tokens is not None
    if query.group_by_token and tokens is None:
        out.insert(
            2,
            '<div class="rt-log-note" id="event-log-token-note">Grouping by token needs a parse '
            "of token ids: Generate live, or Paste &amp; parse read through a tokenizer.</div>",
        )
    group: tuple[int, int] | None = None
    for logged in shown:
        if grouping:
            found = token_group(tokens, logged.event)
            if found is not None and found != group:
                group = found
                out.append(
                    f'<tr class="rt-token-group" data-tokens="{found[0]}-{found[1]}"><td colspan="8">'
                    f"{escape(token_heading(tokens, found), quote=True)}</td></tr>"
                )
        out.append(_event_row(logged, query.selected, current_phases))
    if not shown:
        out.append('<tr><td colspan="8">no events</td></tr>')
    out.append("</tbody></table></div>")
    return "".join(out), page, pages


def _event_row(logged: LoggedEvent, selected: int | None, current_phases: Collection[str]) -> str:
    """One event as a row of the log: its classes (phase, dirty or clean chunk, error, selected),
    the chunk text with whitespace drawn, the value and the offsets."""
    event = logged.event
    kind = event.get("type", "?")
    classes = []
    if logged.phase == "prefix":
        classes.append("rt-prefix")
    elif logged.phase == "finalize":
        classes.append("rt-finalize")
    if logged.phase in current_phases:
        classes.append("rt-now")
    if kind == "region_chunk":
        classes.append("rt-dirty" if event.get("dirty") else "rt-clean")
    if "error" in event:
        classes.append("rt-failed")
    if logged.number == selected:
        classes.append("rt-selected")
    text = ""
    if "text" in event:
        chunk = event["text"]
        text = breakable_whitespace(chunk[:TEXT_SHOWN])
        if len(chunk) > TEXT_SHOWN:
            text += f'<span class="rt-ws">… {len(chunk) - TEXT_SHOWN:,} more characters</span>'
    dirty = "" if "dirty" not in event else ("dirty" if event["dirty"] else "clean")
    if "value" in event:
        value = escape(short_json(event["value"]), quote=True)
    elif "error" in event:
        value = "⚠ " + escape(str(event["error"]), quote=True)
    else:
        value = ""
    offsets = f"{event['start']}–{event['end']}" if "start" in event else ""
    return (
        f'<tr class="{" ".join(classes)}" data-n="{logged.number}" id="event-{logged.number}"><td>{logged.number}</td>'
        f"<td>{escape(logged.phase, quote=True)}</td><td>{escape(kind, quote=True)}</td>"
        f"<td>{escape(str(event.get('field', '')), quote=True)}</td>"
        f'<td class="rt-text">{text}</td><td>{dirty}</td><td class="rt-value">{value}</td><td>{offsets}</td></tr>'
    )


def log_fields(events: Sequence[LoggedEvent]) -> list[str]:
    """The fields that appear in the events, in first-seen order (the field filter's choices)."""
    return list(dict.fromkeys(str(e.event["field"]) for e in events if "field" in e.event))
