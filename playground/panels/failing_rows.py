"""What fails in an inferred template and the way out, and the candidates inference checked:
the records of `playground.authoring.inference_failures` drawn by the ``failures`` and
``candidates`` templates."""

from __future__ import annotations

from markupsafe import Markup

from ..authoring.inference_failures import candidate_views, failure_views
from .fragments import draw
from .unexplained import unexplained_html


def _unread(entries: list[dict]) -> Markup:
    return Markup(
        unexplained_html(
            entries, "The text no field reads (highlighted), where it stands", "sketch-unexplained"
        )
    )


def failures_html(groups: list[dict], result: dict) -> str:
    """The failing rows by cause: the key, the cause, the rows, the findings to look at (buttons
    showing their renders), and the edit with an Apply button (``data-apply``) when known, else
    why no tool-call field is offered and the text no field reads; "" when no row fails.

    Args:
        groups: `FailureGroup.to_dict()`s of `result`.
        result: the inference result (``report``, ``findings``, ``call_sketch``,
            ``example_outputs``, ``unexplained``).
    """
    return draw("failures", failures=failure_views(groups, result), unexplained=_unread)


def candidates_html(result: dict) -> str:
    """The candidates checked, each as its counts and how it differs from the chosen template."""
    return draw("candidates", candidates=candidate_views(result))
