"""Small report panels: the status line, pass/fail badges, figures, template diagnostics."""

from __future__ import annotations

import html
from collections.abc import Sequence

from .markup import escape
from .parse_view import ParseView


def status_html(view: ParseView | None, note: str = "") -> str:
    """One line (or box) saying how the parse went."""
    parts = []
    if view is not None and view.error:
        parts.append(f'<div class="rt-status rt-status-error" id="status-error">⚠ {escape(view.error)}</div>')
    elif view is not None and not view.finished:
        parts.append('<div class="rt-status rt-status-live">⏳ streaming…</div>')
    elif view is not None:
        keys = ", ".join(k for k in (view.message or {}) if k != "role") or "no fields"
        parts.append(f'<div class="rt-status rt-status-ok">✔ Parsed: {escape(keys)}</div>')
    for warning in view.warnings if view else []:
        parts.append(f'<div class="rt-status rt-status-warn">△ {escape(warning)}</div>')
    if note:
        parts.append(f'<div class="rt-status rt-status-note">{escape(note)}</div>')
    return "".join(parts)


def error_html(message: str) -> str:
    """The status line for input that never reached the parser."""
    return f'<div class="rt-status rt-status-error" id="status-error">⚠ {escape(message)}</div>'


def badge(passed: bool | None, label: str) -> str:
    """A pass / fail / pending pill; `label` says what was checked."""
    kind, mark = {True: ("rt-pass", "✔ pass"), False: ("rt-fail", "✘ fail"), None: ("rt-pending", "…")}[passed]
    return f'<span class="rt-badge {kind}" id="stream-check-badge" data-passed="{str(passed).lower()}">{mark}</span> {html.escape(label)}'


def figures(items: Sequence[tuple[str, str]]) -> str:
    """A row of live figures, e.g. [("tokens", "120"), ("tokens/s", "48.0")]."""
    cells = "".join(f"<span>{html.escape(name)} <b>{html.escape(value)}</b></span>" for name, value in items)
    return f'<div class="rt-figures" id="live-figures-row">{cells}</div>'


def diagnostics_html(found: list[tuple[str, str, str, str]]) -> str:
    """Template diagnostics as HTML rows: (severity, JSON path, message, suggestion) each."""
    if not found:
        return '<div class="rt-diag rt-diag-ok" id="template-ok">✔ Template is valid; lint found nothing.</div>'
    icons = {"error": "⛔", "warning": "△", "info": "ℹ"}
    rows = []
    for severity, path, message, suggestion in found:
        hint = f"<br><i>→ {escape(suggestion)}</i>" if suggestion else ""
        where = f"<code>{escape(path)}</code> " if path else ""
        if path and message.startswith(f"{path}: "):
            message = message[len(path) + 2 :]
        rows.append(f'<div class="rt-diag rt-diag-{severity}">{icons.get(severity, "")} {severity}: {where}{escape(message)}{hint}</div>')
    return '<div id="template-diagnostics-list">' + "".join(rows) + "</div>"
