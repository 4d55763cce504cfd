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
import html
import time

import regex

from engine import TemplateError, load_template
from engine.authoring.pattern_explain import literal_runs

from ..parse.causes import diagnoses_of
from ..parse.parse_view import ParseView
from .markup import visible_whitespace

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
    body = [(s.start, s.end) for s in view.spans if s.kind in ("body", "discarded")]
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
    rows: list[tuple[int, str]] = []
    if view.cut_away:
        rows.append(
            (
                -1,
                _row(
                    "matched",
                    "start_anchor",
                    view.cut_away[-40:],
                    f"prefix –{len(view.cut_away)} (the cut)",
                    'data-i="anchor"',
                ),
            )
        )
    elif not view.anchor_found:
        rows.append(
            (-1, _row("not found", "start_anchor", "", "not in the prefix", 'data-i="anchor"'))
        )
    for index, span in enumerate(view.spans):
        if span.kind in ("open", "close") and span.delimiter_path:
            rows.append(
                (
                    span.start,
                    _row(
                        "matched",
                        span.delimiter_path,
                        view.stream[span.start : span.end],
                        _where(view, span.start, span.end),
                        f'data-i="{index}"',
                    ),
                )
            )
        elif span.kind == "held":
            rows.append(
                (
                    span.start,
                    _row(
                        "held now",
                        "",
                        view.stream[span.start : span.end],
                        _where(view, span.start, span.end),
                        f'data-i="{index}"',
                        view.held_reason,
                    ),
                )
            )
    for number, diagnosis in enumerate(diagnoses_of(view)):
        if diagnosis.stream_start is None or diagnosis.code == "anchor-not-in-prefix":
            continue
        kind = "almost" if diagnosis.code in ("near-miss", "pattern-context") else "swallowed"
        rows.append(
            (
                diagnosis.stream_start,
                _row(
                    kind,
                    diagnosis.key,
                    diagnosis.found or "",
                    _where(
                        view, diagnosis.stream_start, diagnosis.stream_end or diagnosis.stream_start
                    ),
                    f'data-d="{number}"',
                    f"expected {diagnosis.expected!r}" if diagnosis.expected else "",
                ),
            )
        )
    if view.finished:
        span_starts = [span.start for span in view.spans]
        for start, end, text, path in _possible_starts(view):
            index = max(0, bisect.bisect_right(span_starts, start) - 1)
            rows.append(
                (
                    start,
                    _row(
                        "held",
                        path,
                        text,
                        _where(view, start, end),
                        f'data-i="{index}"',
                        "a stream holds this until the next characters rule the delimiter out",
                    ),
                )
            )
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


def _row(kind: str, key: str, text: str, where: str, data: str, note: str = "") -> str:
    extra = f'<div class="rt-match-note">{html.escape(note)}</div>' if note else ""
    return (
        f'<tr class="rt-match rt-match-{kind.split()[0]}" {data} tabindex="0"><td>{html.escape(kind)}</td><td><code>{html.escape(key)}</code></td>'
        f'<td class="rt-text">{visible_whitespace(text[:120])}{extra}</td><td>{html.escape(where)}</td></tr>'
    )
