"""The causes of a parse as the page shows them: the diagnoses a `ParseView` carries.

The tracer works the diagnoses out once, when the parse ends (`engine.authoring.diagnosis`;
while streaming a region is not closed yet, so nothing is diagnosed), and the view carries
them to every panel: `diagnoses_of(view)` reads them. `cause_of_error(view, error)` is
the diagnosis that explains a region's parse error, so #explain and the status line point
at the template key to change rather than at the content parser that gave up; `brief` and
`leading_of` say a diagnosis in one line and pick the one to lead with.
"""

from __future__ import annotations

from engine.authoring.diagnosis import Diagnosis

from .parse_view import ErrorMark, ParseView


def diagnoses_of(view: ParseView | None) -> list[Diagnosis]:
    """The diagnoses of `view`, the start anchor first ([] while streaming or without a view)."""
    if view is None or not view.finished:
        return []
    return view.diagnoses


def leading_of(diagnoses: list[Diagnosis]) -> Diagnosis | None:
    """The first diagnosis worth leading with (an error or a warning), or None."""
    return next((d for d in diagnoses if d.severity != "note"), None)


def brief(diagnosis: Diagnosis) -> str:
    """A diagnosis in one line without its places, the same for every parse it explains."""
    if diagnosis.code == "near-miss":
        return f"{diagnosis.key} expects {diagnosis.expected!r} where the text has {diagnosis.found!r}: {diagnosis.change}"
    if diagnosis.code == "anchor-not-in-prefix":
        return f"the start anchor {diagnosis.expected or ''!r} is not in the prompt: {diagnosis.change}"
    if diagnosis.code == "pattern-context":
        return f"{diagnosis.key} does not match around its literal {diagnosis.expected!r}: {diagnosis.change or 'check the pattern'}"
    return f"{diagnosis.key}: {diagnosis.change or diagnosis.code}"


def leading(view: ParseView | None) -> list[Diagnosis]:
    """The diagnoses worth a line of the status (errors and warnings, not notes)."""
    return [d for d in diagnoses_of(view) if d.severity != "note"]


def cause_of_error(view: ParseView, error: ErrorMark) -> Diagnosis | None:
    """The diagnosis behind `error`: the start anchor when it is not in the prefix, else one
    about the failed region's field whose place lies inside the region."""
    found = diagnoses_of(view)
    if found and found[0].code == "anchor-not-in-prefix":
        return found[0]
    for diagnosis in found:
        if diagnosis.severity == "note" or diagnosis.stream_start is None:
            continue
        inside = (
            error.start is not None
            and error.end is not None
            and error.start <= diagnosis.stream_start < error.end
        )
        if inside or (diagnosis.field is not None and diagnosis.field == error.field):
            return diagnosis
    return None
