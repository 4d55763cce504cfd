"""Click to explain: what one stretch of the region map is, and why.

`explain(view, selection)` answers for a span of the map (its index), the
start anchor (`"anchor"`), the cut-away prefix (`"cut"`) or an error marker
(`"e0"`, `"e1"`, ...): the field and the template key, the delimiter and which
alternative matched, the captures and offsets, the events it produced (linked
to their rows in the event log by `data-event`), the message key it went to,
and for held text what it could still become. The page's script sends the
selection (see `playground.panels.page_script`); this module only reads the view.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from engine import load_template
from engine.authoring.pattern_explain import (
    explain_pattern,
    matching_alternative,
    pieces_taken,
    top_level_alternatives,
)
from engine.authoring.trace import TraceSpan

from ..authoring.inference import findings_for_template
from ..parse.causes import cause_of_error, diagnoses_of
from ..parse.event_store import LoggedEvent, chunks_overlapping, event_numbered, without_chunks
from ..parse.parse_view import ParseView
from .inference_panel import evidence_html
from .markup import escape, short_json, visible_whitespace

PLACEHOLDER = (
    '<div class="rt-explain-empty">Click (or tap) any stretch of the region map to see what it is: the field, '
    "the template key, the delimiter that matched, its events and where it went in the message. From the keyboard: "
    "focus the map, move with the arrow keys, press Enter.</div>"
)
EVENTS_LISTED = 12


def region_event_numbers(events: Iterable[LoggedEvent]) -> dict[int, tuple[int | None, int | None]]:
    """Region index -> (open event number, close event number).

    Regions do not nest, so the k-th `region_open` and the k-th `region_close` belong to region k.
    """
    opens: list[int] = []
    closes: list[int] = []
    for logged in events:
        kind = logged.event.get("type")
        if kind == "region_open":
            opens.append(logged.number)
        elif kind == "region_close":
            closes.append(logged.number)
    return {k: (opens[k], closes[k] if k < len(closes) else None) for k in range(len(opens))}


def _delimiter_of(template: dict, path: str | None):
    if not path or not path.startswith("fields."):
        return None
    _, name, side = path.split(".", 2)
    spec = load_template(template).fields.get(name)
    if spec is None:
        return None
    return spec.open if side.startswith("open") else spec.close


def matched_alternative(template: dict, path: str | None, matched: str | None) -> str:
    """Which literal or top-level pattern alternative matched `matched`, described for people."""
    delimiter = _delimiter_of(template, path)
    if delimiter is None or matched is None:
        return ""
    if delimiter.literals is not None:
        if len(delimiter.literals) == 1:
            return ""
        return f"the literal {matched!r} (of {len(delimiter.literals)}: {', '.join(map(repr, delimiter.literals))})"
    alternatives = top_level_alternatives(delimiter.source)
    if len(alternatives) < 2:
        return ""
    found = matching_alternative(delimiter.source, matched, flags=delimiter.pattern.flags)
    if found is None:
        return ""
    number, alternative = found
    return f"alternative {number} of {len(alternatives)}: {alternative}"


def _where(view: ParseView, start: int, end: int) -> str:
    if end <= view.tail_length:
        offset = len(view.cut_away)
        return f"prefix {start + offset}–{end + offset}"
    if start >= view.tail_length:
        return f"generation {start - view.tail_length}–{end - view.tail_length}"
    return f"prefix {start + len(view.cut_away)}– and generation –{end - view.tail_length}"


def span_events(view: ParseView, span: TraceSpan) -> list[LoggedEvent]:
    """The events a span produced: its region's open and close, and the chunks inside it."""
    if span.region is None:
        return []
    opened, closed = region_event_numbers(without_chunks(view.events)).get(
        span.region, (None, None)
    )
    opening, closing = event_numbered(view.events, opened), event_numbered(view.events, closed)
    if span.kind == "open":
        return [opening] if opening else []
    if span.kind == "close":
        return [closing] if closing else []
    found = [
        *(logged for logged in (opening, closing) if logged),
        *chunks_overlapping(view.events, span.field, span.stream_start, span.stream_end),
    ]
    return sorted(found, key=lambda logged: logged.number)


def span_of_event(view: ParseView, number: int) -> int | None:
    """The index of the span an event came from (for a click on a row of the event log)."""
    logged = event_numbered(view.events, number)
    if logged is None:
        return None
    event = logged.event
    kind = {"region_open": "open", "region_close": "close", "region_chunk": "body"}.get(
        event.get("type")
    )
    start = event.get("start")
    for index, span in enumerate(view.spans):
        if span.field != event.get("field") or start is None:
            continue
        if kind == "body" and span.kind == "body" and span.stream_start <= start < span.stream_end:
            return index
        if kind in ("open", "close") and span.kind == kind and span.stream_start == start:
            return index
    for index, span in enumerate(
        view.spans
    ):  # an implicit region opens on its first body character
        if (
            span.field == event.get("field")
            and start is not None
            and span.stream_start <= start <= span.stream_end
            and span.kind == "body"
        ):
            return index
    return None


def message_key(view: ParseView, span: TraceSpan) -> tuple[str, Any]:
    """(key path, value) of the message entry a region went to (``tool_calls[1]``, ``content``)."""
    if span.field is None or view.template is None:
        return "", None
    try:
        spec = load_template(view.template).fields.get(span.field)
    except ValueError:
        spec = None
    value = (view.message or {}).get(span.field)
    if spec is not None and spec.repeats and spec.join is None and isinstance(value, list):
        earlier = sorted(
            {
                s.region
                for s in view.spans
                if s.field == span.field and s.region is not None and s.region < span.region
            }
        )
        index = len(earlier)
        if index < len(value):
            return f"{span.field}[{index}]", value[index]
    return span.field, value


def _row(name: str, value_html: str) -> str:
    return f"<dt>{escape(name, quote=True)}</dt><dd>{value_html}</dd>"


def _code(text: str) -> str:
    return f"<code>{visible_whitespace(text)}</code>"


def _events_html(events: list[LoggedEvent]) -> str:
    if not events:
        return "none"
    items = []
    for logged in events[:EVENTS_LISTED]:
        event = logged.event
        detail = ""
        if "text" in event:
            detail = " " + _code(event["text"][:60])
        elif "value" in event:
            detail = " → " + escape(short_json(event["value"], 80), quote=True)
        elif "error" in event:
            detail = " ⚠ " + escape(str(event["error"])[:120], quote=True)
        items.append(
            f'<li><a href="#event-{logged.number}" data-event="{logged.number}" role="button">#{logged.number}</a> '
            f"{escape(event.get('type', '?'), quote=True)} ({escape(logged.phase, quote=True)}){detail}</li>"
        )
    more = (
        f"<li>… and {len(events) - EVENTS_LISTED} more</li>" if len(events) > EVENTS_LISTED else ""
    )
    return f'<ul class="rt-explain-events">{"".join(items)}{more}</ul>'


def _message_html(key: str, value: Any) -> str:
    shown = json.dumps(value, ensure_ascii=False, indent=1)
    if len(shown) > 600:
        shown = shown[:600] + "…"
    return f'<code class="rt-key">{escape(key, quote=True)}</code><pre class="rt-explain-value">{escape(shown, quote=True)}</pre>'


_TITLES = {
    "open": "Open delimiter",
    "close": "Close delimiter",
    "body": "Region body",
    "held": "Held text",
    "discarded": "Discarded text",
    "unparsed": "Not parsed",
}


def explain(
    view: ParseView | None, selection: str | int | None, inference: dict | None = None
) -> str:
    """The #explain panel's HTML for `selection` in `view` (see the module docstring). With
    `inference` (the last template inferred from a chat template, `InferredTemplate.to_dict()`),
    a delimiter or the start anchor that inference found also shows the renders that found it."""
    if view is None or selection is None or selection == "":
        return PLACEHOLDER
    selection = str(selection)
    if selection == "anchor":
        key = "start_anchor" if "start_anchor" in (view.template or {}) else "start_anchor_pattern"
        return _explain_anchor(view) + _inferred(view, inference, key)
    if selection == "cut":
        return _panel(
            "Cut-away prefix",
            _row(
                "what",
                f"the {len(view.cut_away):,} characters of the prefix before the start anchor's last match "
                "(earlier turns, the anchor itself): never parsed",
            ),
        )
    if selection.startswith("e") and selection[1:].isdecimal():
        return _explain_error(view, int(selection[1:]))
    if selection.startswith("d") and selection[1:].isdecimal():
        return _explain_diagnosis(view, int(selection[1:]))
    if not selection.isdecimal() or int(selection) >= len(view.spans):
        return PLACEHOLDER
    return _explain_span(view, view.spans[int(selection)], inference)


def _explain_span(view: ParseView, span: TraceSpan, inference: dict | None) -> str:
    """#explain for one span of the map: what it is, where, and why."""
    title = _TITLES.get(span.kind, span.kind)
    if span.stream_end <= view.tail_length and span.kind not in ("held", "unparsed"):
        title += " (in the prefix tail: the chat template wrote it)"
    rows = []
    if span.field is not None:
        rows.append(
            _row(
                "field",
                f"<code>{escape(span.field, quote=True)}</code> · template key <code>fields.{escape(span.field, quote=True)}</code>",
            )
        )
    if span.delimiter is not None:
        rows += _delimiter_rows(view, span)
    if span.captures:
        captures = ", ".join(
            f"<code>{escape(k, quote=True)}</code> = {_code(v)}" for k, v in span.captures.items()
        )
        rows.append(_row("captures", captures))
    start, end = span.stream_start, span.stream_end
    rows.append(
        _row(
            "offsets",
            f"stream {start}–{end} · {_where(view, start, end)} · {end - start:,} characters",
        )
    )
    rows.append(
        _row(
            "text",
            _code(view.stream[start : min(end, start + 300)]) + ("…" if end - start > 300 else ""),
        )
    )
    rows += _why_rows(view, span)
    rows += _token_rows(view, span)
    if span.region is not None:
        rows += _region_rows(view, span)
    return _panel(title, "".join(rows)) + _inferred(view, inference, span.delimiter_path)


# Tokens #explain lists by id and text at most (the rest are counted).
TOKENS_LISTED = 12


def _token_rows(view: ParseView, span: TraceSpan) -> list[str]:
    """For a parse of token ids: the tokens the span covers, whether a delimiter was matched
    by a control token or in text, and the control tokens spelled out inside it (and why
    they are text)."""
    tokens = view.tokens
    if tokens is None or span.stream_end <= span.stream_start:
        return []
    first, past = tokens.token_range(span.stream_start, span.stream_end)
    listed = [
        f"{'control token' if tokens.control[i] else 'token'} {i}: id {tokens.ids[i]} "
        f"{_code(tokens.pieces[i])}"
        for i in range(first, min(past, first + TOKENS_LISTED))
    ]
    if past - first > TOKENS_LISTED:
        listed.append(f"… {past - first - TOKENS_LISTED:,} more")
    rows = [_row("tokens", " · ".join(listed) or "(none read yet)")]
    if span.kind in ("open", "close"):
        matched_by = tokens.matched_by(span.stream_start, span.stream_end)
        rows.append(
            _row(
                "matched by",
                "a control token, generated as its id"
                if matched_by == "control token"
                else "text: ordinary tokens (the same text quoted by the model matches too)",
            )
        )
    for start, end in tokens.spelled_out():
        if span.stream_start <= start < span.stream_end:
            rows.append(
                _row(
                    "spelled out",
                    f"{_code(view.stream[start:end])} at {start}–{end} is written with ordinary "
                    "tokens: only the control token's id opens or closes a region, so it is text "
                    "here",
                )
            )
    return rows


def _delimiter_rows(view: ParseView, span: TraceSpan) -> list[str]:
    """A delimiter's rows: its template key, which alternative matched, the whole match, and a
    pattern piece by piece."""
    rows = [
        _row("template key", f"<code>{escape(span.delimiter_path or '', quote=True)}</code>"),
        _row("delimiter", _code(span.delimiter)),
    ]
    alternative = matched_alternative(view.template or {}, span.delimiter_path, span.matched_text)
    if alternative:
        rows.append(_row("matched", escape(alternative, quote=True)))
    if (
        span.matched_text is not None
        and span.matched_text != view.stream[span.stream_start : span.stream_end]
    ):
        rows.append(_row("whole match", _code(span.matched_text)))
    if (span.delimiter_path or "").endswith("_pattern"):
        rows.append(
            _row(
                "the pattern, piece by piece",
                pattern_html(span.delimiter, view.stream, span.stream_start),
            )
        )
    return rows


def _why_rows(view: ParseView, span: TraceSpan) -> list[str]:
    """Why held, discarded or unparsed text is so, and the error of a region that failed."""
    rows = []
    if span.kind == "held":
        rows.append(
            _row(
                "why held",
                escape(view.held_reason or "it may be the start of a delimiter", quote=True),
            )
        )
    if span.kind == "discarded":
        rows.append(
            _row(
                "why",
                "no region was open and the template has no implicit field (a field without "
                "<code>open</code>), so this text is not in the message",
            )
        )
    if span.kind == "unparsed":
        rows.append(_row("why", "the parse stopped at an error before reaching this text"))
    if span.error is not None and span.error < len(view.errors):
        error = view.errors[span.error]
        rows += _cause_rows(view, error)
        rows.append(
            _row(
                "error",
                f'<a href="#" data-select="e{span.error}" role="button">{escape(error.message, quote=True)}</a>',
            )
        )
        rows.append(
            _row(
                "kept as",
                "this region failed to parse, so its raw text, delimiters included, went to the message "
                "as unclaimed text (the implicit field, if the template has one); every other region still parsed",
            )
        )
    return rows


def _region_rows(view: ParseView, span: TraceSpan) -> list[str]:
    """The region of a span: its index, its events, and the message key it went to."""
    rows = [
        _row("region", f"{span.region} (0-based, in opening order)"),
        _row("events", _events_html(span_events(view, span))),
    ]
    key, value = message_key(view, span)
    if key and view.message is not None and key.split("[")[0] in view.message:
        rows.append(_row("message key", _message_html(key, value)))
    elif key:
        rows.append(
            _row(
                "message key",
                f"<code>{escape(key, quote=True)}</code> (not in the message: "
                + ("the parse is not finished)" if not view.finished else "empty or failed)"),
            )
        )
    return rows


def _inferred(view: ParseView, inference: dict | None, key: str | None) -> str:
    """The renders that found the template's value at `key`, when the last inference found it
    (and the editor still holds it), as a panel after the explanation; else ""."""
    return _inferred_panel(findings_for_template(inference, view.template or {}, key))


def _inferred_panel(found: list[dict]) -> str:
    """The panel "How inference found it" for findings (at most three), or "" for none."""
    if not found:
        return ""
    return (
        '<div class="rt-explain" id="explain-inferred"><div class="rt-explain-title">How inference found it</div>'
        + "".join(evidence_html(finding) for finding in found[:3])
        + "</div>"
    )


def _explain_anchor(view: ParseView) -> str:
    template = view.template or {}
    anchor = template.get("start_anchor", template.get("start_anchor_pattern", ""))
    key = "start_anchor" if "start_anchor" in template else "start_anchor_pattern"
    source = " | ".join(anchor) if isinstance(anchor, list) else str(anchor)
    rows = [_row("template key", f"<code>{key}</code>"), _row("anchor", _code(source))]
    if view.cut_away:
        rows.append(
            _row(
                "where",
                f"its last match ends at prefix offset {len(view.cut_away):,}; the prefix is cut there and "
                "the rest (the prefix tail) is parsed before the generation",
            )
        )
    elif view.anchor_found:
        rows.append(_row("where", "the prefix is empty: the generation is parsed from its start"))
    else:
        rows.append(
            _row(
                "where",
                "not found in the prefix: the whole prefix is parsed as part of the message. "
                "Is this the template of the model that wrote it, and is the whole prompt the prefix?",
            )
        )
        found = diagnoses_of(view)
        if found and found[0].code == "anchor-not-in-prefix":
            rows.append(_row("cause", escape(found[0].message, quote=True)))
            rows.append(
                _row(
                    "change",
                    f'<code class="rt-key">{key}</code>: {escape(found[0].change, quote=True)}',
                )
            )
    return _panel("Start anchor", "".join(rows))


def _cause_rows(view: ParseView, error) -> list[str]:
    """The cause of `error` (`playground.parse.causes`) and the key to change, as #explain rows."""
    cause = cause_of_error(view, error)
    if cause is None:
        return []
    return [
        _row("cause", f'<span class="rt-explain-cause">{escape(cause.message, quote=True)}</span>'),
        _row(
            "change",
            f'<code class="rt-key" data-key="{escape(cause.key, quote=True)}">{escape(cause.key, quote=True)}</code>'
            + (f": {escape(cause.change, quote=True)}" if cause.change else ""),
        ),
    ]


def _explain_diagnosis(view: ParseView, number: int) -> str:
    found = diagnoses_of(view)
    if number >= len(found):
        return PLACEHOLDER
    diagnosis = found[number]
    title = {
        "near-miss": "Near miss",
        "pattern-context": "Pattern literal, context did not match",
        "region-never-closed": "Swallowed delimiter",
    }.get(diagnosis.code, "Diagnosis")
    rows = [
        _row("cause", escape(diagnosis.message, quote=True)),
        _row("template key", f'<code class="rt-key">{escape(diagnosis.key, quote=True)}</code>'),
    ]
    if diagnosis.change:
        rows.append(_row("change", escape(diagnosis.change, quote=True)))
    if diagnosis.expected is not None:
        rows.append(_row("expected", _code(diagnosis.expected)))
    if diagnosis.found is not None:
        rows.append(_row("in the text", _code(diagnosis.found)))
    if diagnosis.stream_start is not None:
        end = diagnosis.stream_end if diagnosis.stream_end is not None else diagnosis.stream_start
        rows.append(
            _row(
                "offsets",
                f"stream {diagnosis.stream_start}–{end} · {_where(view, diagnosis.stream_start, end)}",
            )
        )
    delimiter = _delimiter_of(view.template or {}, diagnosis.key)
    if delimiter is not None and delimiter.literals is None:
        rows.append(_row("the pattern, piece by piece", pattern_html(delimiter.source)))
    return _panel(title, "".join(rows))


def _explain_error(view: ParseView, index: int) -> str:
    if index >= len(view.errors):
        return PLACEHOLDER
    error = view.errors[index]
    rows = _cause_rows(view, error)
    rows.append(_row("error", escape(error.message, quote=True)))
    if error.field:
        rows.append(_row("field", f"<code>{escape(error.field, quote=True)}</code>"))
    if error.key:
        where = (
            " (where the content parser gave up; the cause is above)"
            if rows[0].startswith("<dt>cause")
            else ""
        )
        label = "read leniently in" if error.lenient else "failed in"
        rows.append(_row(label, f"<code>{escape(error.key, quote=True)}</code>{where}"))
    if error.start is not None:
        end = error.end if error.end is not None else len(view.stream)
        rows.append(
            _row("region", f"stream {error.start}–{end} · {_where(view, error.start, end)}")
        )
    if error.position is not None and error.position < len(view.stream):
        p = error.position
        context = (
            view.stream[max(0, p - 30) : p]
            + "⟦"
            + view.stream[p]
            + "⟧"
            + view.stream[p + 1 : p + 30]
        )
        rows.append(_row("failing character", f"stream offset {p}: {_code(context)}"))
    return _panel("Parse error", "".join(rows))


_PATTERN_TITLES = {
    "open_pattern": "Open pattern",
    "close_pattern": "Close pattern",
    "start_anchor_pattern": "Start anchor pattern",
}


def _template_value(template: dict | None, path: str):
    node = template
    for part in path.split("."):
        if isinstance(node, dict):
            node = node.get(part)
        elif isinstance(node, list) and part.isdecimal() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def explain_editor_key(
    view: ParseView | None,
    path: str,
    source: str,
    inference: dict | None = None,
    template: dict | None = None,
) -> str | None:
    """#explain for a string clicked in the template editor (at dotted `path`, its text `source`).

    A pattern (a key ending in ``_pattern``): the pattern piece by piece, and how often it
    matched in the parse on screen (what each piece took in its first match). Any key the last
    template inference found (`inference`, an `infer_template` result as a dict) while the
    editor's `template` still holds its value: the two renders that found it, after that.
    None when there is nothing to say about the key.
    """
    key = re.sub(r"\.\d+$", "", path)  # a list item (an "open" of many) stands for its key
    name = key.rsplit(".", 1)[-1]
    found = _inferred_panel(findings_for_template(inference, template or {}, key))
    if not name.endswith("_pattern"):
        return found or None
    rows = [
        _row(
            "template key",
            f'<code class="rt-key" data-key="{escape(path, quote=True)}">{escape(path, quote=True)}</code>',
        ),
        _row("pattern", _code(source)),
    ]
    matches = (
        [span for span in view.spans if span.delimiter_path == path] if view is not None else []
    )
    first = None
    if view is None or view.template is None:
        pass
    elif _template_value(view.template, path) != source:
        rows.append(
            _row(
                "in this parse",
                "the parse on the map used another pattern here: parse again to see this one's matches",
            )
        )
    elif matches:
        first = matches[0]
        rows.append(
            _row(
                "in this parse",
                f"matched {len(matches):,} time{'s' if len(matches) != 1 else ''}; the first at stream "
                f"{first.stream_start}–{first.stream_end} · {_where(view, first.stream_start, first.stream_end)} (below: what each piece took there)",
            )
        )
    elif name != "start_anchor_pattern":
        rows.append(_row("in this parse", "never matched"))
    taken = (
        pattern_html(source, view.stream, first.stream_start)
        if first is not None
        else pattern_html(source)
    )
    rows.append(_row("the pattern, piece by piece", taken))
    return _panel(_PATTERN_TITLES.get(name, "Pattern"), "".join(rows)) + found


def pattern_html(source: str, text: str | None = None, start: int = 0) -> str:
    """A delimiter pattern piece by piece (`engine.authoring.pattern_explain`): each piece, what it does,
    and, for a match of it at `text[start:]`, the characters it took."""
    explanation = explain_pattern(source)
    taken = (
        {
            (piece.start, piece.end): took
            for piece, took in (pieces_taken(source, text, start) or [])
        }
        if text is not None
        else {}
    )
    rows = []
    for depth, piece in explanation.lines():
        took = (
            taken.get((piece.start, piece.end))
            if depth == 0 or len(explanation.alternatives) > 1 and depth == 1
            else None
        )
        shown = ""
        if took is not None:
            shown = _code(took) if took else "<i>nothing (takes no characters)</i>"
        rows.append(
            f'<tr><td style="padding-left:{4 + 14 * depth}px"><code>{escape(piece.text, quote=True)}</code></td>'
            f"<td>{escape(piece.meaning, quote=True)}</td>{f'<td>{shown}</td>' if taken else ''}</tr>"
        )
    error = (
        f'<div class="rt-status rt-status-error">⚠ {escape(explanation.error, quote=True)}</div>'
        if explanation.error
        else ""
    )
    took_head = "<th>took here</th>" if taken else ""  # no match to show: two columns
    return (
        f'{error}<table class="rt-pattern" id="pattern-explained"><thead><tr><th>piece</th><th>what it does</th>{took_head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _panel(title: str, rows: str) -> str:
    return f'<div class="rt-explain"><div class="rt-explain-title">{escape(title, quote=True)}</div><dl>{rows}</dl></div>'
