"""The editor's diagnostics panel: the findings of `playground.authoring.diagnostics`, each a
line with its one-click fix, an error marked at its line and character in the editor's text."""

from __future__ import annotations

from ..authoring.diagnostics import Finding, editor_place, findings, marked_line
from .fragments import draw

ICONS = {"error": "⛔", "warning": "△", "info": "ℹ"}


def diagnostics_html(found: list[Finding], text: str = "") -> str:
    """The diagnostics as HTML rows, each fix a button (`data-fix` = the finding's index); with the
    editor `text`, errors are marked at their line and character (`editor_place`)."""
    rows = []
    for finding in found:
        message = finding.message
        if finding.path and message.startswith(f"{finding.path}: "):
            message = message[len(finding.path) + 2 :]
        place = editor_place(text, finding) if text and finding.severity == "error" else None
        rows.append(
            {
                "finding": finding,
                "message": message,
                "mark": marked_line(text, place) if place else None,
            }
        )
    return draw("diagnostics", rows=rows, icons=ICONS)


def check_template(text: str, near_misses: list | None = None, tokenizer=None) -> str:
    """The editor's diagnostics panel for `text` (`near_misses`, `tokenizer`: see
    `playground.authoring.diagnostics.findings`)."""
    return diagnostics_html(findings(text, near_misses, tokenizer), text)
