"""The match list: every place a delimiter matched, almost matched, or was held as a possible start.

One row a place, in text order, with its offsets:

- *matched*: the start anchor's cut, and every open and close delimiter of the parse;
- *almost matched*: the near misses and pattern literals of `playground.parse.causes` (text close to a
  delimiter that did not match it);
- *held*: where a streaming parser held text back as the possible start of a delimiter that
  did not come (``</tool`` of ``</tool_call>`` followed by something else): the text a stream
  shows late. While streaming, the text held now.

Each row carries what the map can select: ``data-i`` (a span of the map), ``data-d`` (a
near-miss marker) or ``data-i="anchor"``; the page's script selects that place on the map and
explains it (see `playground.panels.page_script.MATCH_LIST_JS`).
"""

from __future__ import annotations

import bisect
import time

import regex

from engine import TemplateError, load_template
from engine.authoring.pattern_explain import literal_runs

from ..parse.causes import diagnoses_of
from ..parse.parse_view import ParseView
from .markup import escape, visible_whitespace

# Rows listed at most (the map has every place).
ROWS_SHOWN = 500
# Possible starts looked for per delimiter text at most, and for how long in all (seconds).
HELD_PER_DELIMITER = 50
HELD_SECONDS = 1.0


def _where(view: ParseView, start: int, end: int) -> str:
    if start >= view.tail_length:
        return f"generation {start - view.tail_length}–{end - view.tail_length}"
    offset = len(view.cut_away)
    return f"prefix {start + offset}–{min(end, view.tail_length) + offset}"


def _possible_starts(view: ParseView) -> list[tuple[int, int, str, str]]:
    """(start, end, text, delimiter path) where at least half of a delimiter text's first characters
    (a literal, or a pattern's literal run) stand in region text without the rest of it following."""
    try:
        template = load_template(view.template)
    except (TemplateError, ValueError):
        return []
    found = []
    ends = time.perf_counter() + HELD_SECONDS
    body = [(s.stream_start, s.stream_end) for s in view.spans if s.kind in ("body", "discarded")]
    starts = [a for a, _ in body]
    for spec in template.fields.values():
        for delimiter in (spec.open, spec.close):
            if delimiter is None:
                continue
            texts = (
                delimiter.literals
                if delimiter.literals is not None
                else [run.literal for run in literal_runs(delimiter.source)]
            )
            for literal in texts:
                if len(literal) < 4:
                    continue
                head = literal[: max(2, len(literal) // 2)]
                count = 0
                search = regex.compile(regex.escape(head), cache_pattern=False)
                for match in search.finditer(view.stream):
                    if time.perf_counter() > ends:
                        return found  # the list is drawn within its time (the map has every place)
                    at = match.start()
                    if view.stream.startswith(literal, at):
                        continue
                    k = bisect.bisect_right(starts, at) - 1
                    if k < 0 or not body[k][0] <= at < body[k][1]:
                        continue
                    end = at + len(head)
                    while (
                        end < len(view.stream)
                        and end - at < len(literal)
                        and view.stream[end] == literal[end - at]
                    ):
                        end += 1
                    found.append((at, end, view.stream[at:end], delimiter.path))
                    count += 1
                    if count >= HELD_PER_DELIMITER:
                        break
    return found


def match_list_html(view: ParseView | None) -> str:
    """The match list of `view` as a table (see the module docstring)."""
    if view is None:
        return '<div class="rt-note">No parse yet.</div>'
    rows = [*_anchor_rows(view), *_span_rows(view), *_diagnosis_rows(view)]
    if view.finished:
        rows += _possible_start_rows(view)
    rows.sort(key=lambda row: row[0])
    shown = "".join(row for _, row in rows[:ROWS_SHOWN])
    more = (
        f'<div class="rt-note">… and {len(rows) - ROWS_SHOWN:,} more places</div>'
        if len(rows) > ROWS_SHOWN
        else ""
    )
    return (
        f'<div class="rt-log-summary" id="match-summary">{len(rows):,} places: every delimiter match, near miss and possible start. '
        "Click one to select it on the map.</div>"
        '<div class="rt-log rt-matches" id="match-list"><table><colgroup><col class="rt-c-kind"><col class="rt-c-key"><col><col class="rt-c-where"></colgroup>'
        "<thead><tr><th>what</th><th>template key</th><th>text</th><th>where</th></tr></thead>"
        f"<tbody>{shown}</tbody></table></div>{more}"
    )


def _anchor_rows(view: ParseView) -> list[tuple[int, str]]:
    """The start anchor's row: where it cut the prefix, or that it is not in it."""
    if view.cut_away:
        where = f"prefix –{len(view.cut_away)} (the cut)"
        row = _row("matched", "start_anchor", view.cut_away[-40:], where, 'data-i="anchor"')
        return [(-1, row)]
    if not view.anchor_found:
        return [(-1, _row("not found", "start_anchor", "", "not in the prefix", 'data-i="anchor"'))]
    return []


def _span_rows(view: ParseView) -> list[tuple[int, str]]:
    """A row for every delimiter that matched and for the text held now: (stream offset, row)."""
    rows = []
    for index, span in enumerate(view.spans):
        start, end = span.stream_start, span.stream_end
        if span.kind in ("open", "close") and span.delimiter_path:
            row = _row(
                "matched",
                span.delimiter_path,
                view.stream[start:end],
                _where(view, start, end),
                f'data-i="{index}"',
            )
            rows.append((start, row))
        elif span.kind == "held":
            row = _row(
                "held now",
                "",
                view.stream[start:end],
                _where(view, start, end),
                f'data-i="{index}"',
                view.held_reason,
            )
            rows.append((start, row))
    return rows


def _diagnosis_rows(view: ParseView) -> list[tuple[int, str]]:
    """A row for every near miss and swallowed delimiter the diagnoses found."""
    rows = []
    for number, diagnosis in enumerate(diagnoses_of(view)):
        start = diagnosis.stream_start
        if start is None or diagnosis.code == "anchor-not-in-prefix":
            continue
        kind = "almost" if diagnosis.code in ("near-miss", "pattern-context") else "swallowed"
        row = _row(
            kind,
            diagnosis.key,
            diagnosis.found or "",
            _where(view, start, diagnosis.stream_end or start),
            f'data-d="{number}"',
            f"expected {diagnosis.expected!r}" if diagnosis.expected else "",
        )
        rows.append((start, row))
    return rows


def _possible_start_rows(view: ParseView) -> list[tuple[int, str]]:
    """A row for every place a stream would hold (`_possible_starts`), pointing at its span."""
    rows = []
    span_starts = [span.stream_start for span in view.spans]
    for start, end, text, path in _possible_starts(view):
        index = max(0, bisect.bisect_right(span_starts, start) - 1)
        row = _row(
            "held",
            path,
            text,
            _where(view, start, end),
            f'data-i="{index}"',
            "a stream holds this until the next characters rule the delimiter out",
        )
        rows.append((start, row))
    return rows


def _row(kind: str, key: str, text: str, where: str, data: str, note: str = "") -> str:
    extra = f'<div class="rt-match-note">{escape(note, quote=True)}</div>' if note else ""
    return (
        f'<tr class="rt-match rt-match-{kind.split()[0]}" {data} tabindex="0"><td>{escape(kind, quote=True)}</td><td><code>{escape(key, quote=True)}</code></td>'
        f'<td class="rt-text">{visible_whitespace(text[:120])}{extra}</td><td>{escape(where, quote=True)}</td></tr>'
    )
