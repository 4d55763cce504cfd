"""The Stream checks panel: the verdict badge of a `playground.authoring.stream_check` result,
then its findings by severity."""

from __future__ import annotations

from .fragments import draw
from .status import badge

ICONS = {"error": "⛔", "warning": "△", "note": "ℹ"}
SEVERITIES = ("error", "warning", "note")


def report_html(result, pending: str = "") -> str:
    """The Stream checks panel for `result` (a `StreamCheckResult`: ``passed``, ``label``,
    ``warnings``, ``findings`` with ``severity`` and ``text``), or, for None, a badge saying
    what to do (`pending`, else: replay to the end)."""
    if result is None:
        return badge(
            None,
            pending
            or "replay (Step or Play) to the end to check streaming against one-shot parsing",
        )
    findings = sorted(result.findings, key=lambda finding: SEVERITIES.index(finding.severity))
    return badge(result.passed, result.label, warnings=result.warnings) + draw(
        "stream_findings", findings=findings, icons=ICONS
    )
