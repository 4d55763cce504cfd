"""The inference panel of Start from a model, and a finding's renders for #explain: the
records of `playground.authoring.inference` drawn by the ``inference`` and ``evidence``
templates."""

from __future__ import annotations

from markupsafe import Markup

from ..authoring.inference import evidence_of, inference_report
from .failing_rows import candidates_html, failures_html
from .fragments import draw
from .unexplained import unexplained_html


def evidence_html(finding: dict) -> str:
    """A finding's sentence, then each render it compared: its label and the text around where
    the two differ (or the whole render, cut, when there is one). `finding`: one of an
    `InferredTemplate.to_dict()`'s ``findings``."""
    return draw("evidence", evidence=evidence_of(finding))


def findings_html(
    result: dict | None,
    error: str | None = None,
    pending: str = "",
    examples: int = 0,
    workspace_status: str = "",
) -> str:
    """The inference panel: the verdict (the matrix, what is missing), the failing rows by cause
    with the way out (`playground.panels.failing_rows`), what was found (each finding a
    button showing its renders in #explain, ``data-finding``), the fallbacks, the notes, and
    the candidates as changes against the chosen one; or the error, or what is running
    (`pending`).

    Args:
        result: an `InferredTemplate.to_dict()` (with the page's ``example_outputs``,
            ``unexplained``, ``call_sketch``, ``failure_groups``, ``set_aside``), or None.
        examples: how many of the author's outputs were given.
        workspace_status: the workspace's status after Infer, in one sentence, shown under the
            verdict ("" for none).
    """
    if pending or error or result is None:
        return draw("inference", pending=pending, error=error, report=None, workspace_status="")
    report = inference_report(result, examples)
    unread = unexplained_html(
        report.unread,
        "What the template could not explain in your outputs (highlighted)",
        "inference-unexplained",
    )
    return draw(
        "inference",
        pending="",
        error=None,
        report=report,
        workspace_status=workspace_status,
        unread=Markup(unread),
        failures=Markup(failures_html(result.get("failure_groups", []), result)),
        candidates=Markup(candidates_html(result) if report.candidates else ""),
    )
