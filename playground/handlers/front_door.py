"""The front door's handlers: a sample loaded (from the picker or the Samples table)."""

from __future__ import annotations

from ..authoring.test_cases import (
    cases_for_template,
    cases_text,
)
from ..catalog import (
    INLINE_TEMPLATE,
    samples_by_id,
    template_names,
    template_text_of,
)
from ..outputs import (
    SAMPLE_OUTPUTS,
    Update,
    derived_views,
    editor_replaced,
    failed,
    produces,
)
from ..panels.stream_report import report_html
from ..parse.parse_view import traced_view
from ..parse.session import Session
from ..parse.workspace import WorkspaceInputs
from .workspace import (
    show,
    tests_panel,
)


def sample_outputs(sample_id: str, session: Session, editor: str | None = None) -> dict:
    """The page for one sample; `editor` is the editor's text it replaces (kept for Restore),
    None on page load."""
    sample = samples_by_id().get(sample_id)
    if sample is None:
        return failed(f"No sample {sample_id!r}; pick one from the Samples tab.", session)
    text = template_text_of(sample.template)
    tools_text = template_text_of(sample.tools) if sample.tools else ""
    view = traced_view(sample.template, sample.prefix, sample.generation, sample.tools)
    note = f"Sample {sample.id}: {sample.description}"
    if sample.expected_error:
        note += f" (expected to fail with: {sample.expected_error})"
    choice = sample.template_name if sample.template_name in template_names() else INLINE_TEMPLATE
    session.reset_text, session.replay, session.sample_id = text, None, sample.id
    if choice != INLINE_TEMPLATE:
        session.template_origin = choice
    cases = cases_text(
        cases_for_template(choice if choice != INLINE_TEMPLATE else None, sample.template)
    )
    session.test_cases_text = cases
    restore = (
        editor_replaced(session, editor, text, "loading a sample") if editor is not None else {}
    )
    return {
        **restore,
        "sample_id": sample.id,
        "template_text": text,
        "prefix": sample.prefix,
        "generation": sample.generation,
        "tools_text": tools_text,
        "template_choice": choice,
        "test_cases_text": cases,
        "test_results": tests_panel(text, cases, session),
        "stream_check": report_html(None),
        "scrubber": Update(value=0, maximum=max(1, len(sample.generation))),
        "start_from": session.template_origin
        if session.template_origin in template_names()
        else None,
        **derived_views(
            session, WorkspaceInputs(text, sample.prefix, sample.generation, tools_text)
        ),
        **show(view, session, note=note),
    }


@produces(*SAMPLE_OUTPUTS)
def load_sample(sample_id: str, session: Session, template_text: str | None = None) -> dict:
    """Load one sample case, template and all, and parse it (the editor's text is kept for
    Restore)."""
    return sample_outputs(sample_id, session, template_text)


@produces(*SAMPLE_OUTPUTS)
def load_sample_at(sample_rows: int, session: Session, template_text: str | None = None) -> dict:
    """One click on a row of the samples table (`sample_rows` is the row index)."""
    return sample_outputs(list(samples_by_id())[int(sample_rows)], session, template_text)
