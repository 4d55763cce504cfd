"""The chat-template check's panel: a `playground.authoring.chat_template_check` outcome
(its `MatrixView`) drawn by the ``matrix`` template."""

from __future__ import annotations

from ..authoring.chat_template_check import CheckOutcome, matrix_view
from .fragments import draw

# The class of a matrix row, by its outcome.
ROW_CLASSES = {"pass": "rt-row-pass", "fail": "rt-row-fail", "not renderable": "rt-row-na"}


def matrix_html(
    outcome: CheckOutcome | None, *, pending: str = "", causes: list[str | None] | None = None
) -> str:
    """The check's panel: the summary (or the error), the lint findings, the failing rows by
    root cause (`causes`, one per row, from `root_causes`), then the matrix: failing rows
    grouped under their cause, then the others; `pending`: what is running, shown instead.

    Each row with a prompt carries ``data-row`` (its index in `outcome.rows`): a click loads
    its prompt and generation into Paste & parse.
    """
    return draw(
        "matrix",
        pending=pending,
        empty=outcome is None,
        error=outcome.error if outcome else None,
        notes=outcome.notes if outcome else [],
        view=matrix_view(outcome, causes) if outcome and outcome.report else None,
        row_classes=ROW_CLASSES,
    )
