"""Start from a model's handlers: Check, Infer, a finding or Apply clicked, a matrix row loaded."""

from __future__ import annotations

import json

from engine.chat_templates.conformance import TOOLS as CHECK_TOOLS

from ..authoring.chat_template_check import CheckOutcome, check_from_page, root_causes
from ..authoring.inference import infer_from_page, inference_losses, with_workspace_output
from ..authoring.inference_failures import failure_groups
from ..authoring.template_edits import apply_edit
from ..authoring.test_cases import (
    as_examples,
    author_cases,
    cases_text,
    matrix_cases,
    read_cases,
)
from ..catalog import (
    samples_by_id,
    template_text_of,
)
from ..outputs import (
    INFER_OUTPUTS,
    RESTORE_BUTTONS,
    TEMPLATE_OUTPUTS,
    Update,
    editor_replaced,
    produces,
    render,
)
from ..panels.check_matrix import matrix_html
from ..panels.diagnostics_panel import check_template
from ..panels.inference_panel import evidence_html, findings_html
from ..panels.status import error_html, parse_judgement
from ..parse.derived import remember_derived
from ..parse.session import Session
from ..parse.workspace import WorkspaceInputs
from ..server import limits
from ..server.input_readers import InputError, read_template
from .event_data import event_number
from .workspace import (
    parse,
    parsed_page,
)


@produces("conformance")
def check_chat_template(
    template_text: str,
    chat_template_text: str,
    chat_template_model: str,
    bos_token: str,
    eos_token: str,
    session: Session,
):
    """Check: the editor's template against the pasted chat template (or the model's), every
    situation of the matrix, in a worker with a time limit (`playground.authoring.chat_template_check`)."""
    yield {
        "conformance": matrix_html(
            None, pending=f"Checking… (at most {limits.current().conformance_seconds:g} s)"
        )
    }
    outcome = check_from_page(
        template_text, chat_template_text, chat_template_model, bos_token, eos_token
    )
    session.check_rows, session.check_template = outcome.rows, template_text
    try:
        template = read_template(template_text)
    except InputError:
        template = None
    shown = matrix_html(outcome, causes=root_causes(outcome.rows, template))
    yield {"conformance": remember_derived(session, "conformance", shown, template_text)}


# Which matrix row shows an inferred template working, best first (by the row's check).
SHOWCASE_CHECKS = (
    "round-trip:content-and-tool-calls",
    "round-trip:tool-call",
    "round-trip:reasoning-and-answer",
    "round-trip:answer",
    "round-trip:continuation",
    "anchor",
)


def showcase_row(rows: list[dict], groups: list[dict] | None = None) -> int | None:
    """The matrix row to load into the workspace after Infer: a passing one that shows the most
    (text and calls, then a call, then reasoning and an answer...); when none passes, the first
    row of the largest failure group (what to fix first). None when no row has a prompt."""

    def rank(index: int) -> int:
        check = rows[index]["name"].rsplit("/", 1)[-1]
        return SHOWCASE_CHECKS.index(check) if check in SHOWCASE_CHECKS else len(SHOWCASE_CHECKS)

    passing = [i for i, row in enumerate(rows) if row["passed"] and row.get("prompt") is not None]
    if passing:
        return min(passing, key=lambda i: (rank(i), i))
    for group in groups or []:
        return group["rows"][0]
    return next((i for i, row in enumerate(rows) if row.get("prompt") is not None), None)


def matrix_row_note(row: dict, source: str, doubted: bool = False) -> str:
    """The status note of a matrix row Infer loads into the workspace: its name, the check's
    verdict, and what it is (a render of `source`). `doubted`: the row passed the check (its
    message is the expected one) but the parse says text was probably lost, so the note says
    what passed instead of "(passed)"."""
    if row["passed"]:
        verdict = "its message passed the check" if doubted else "passed"
    else:
        verdict = "failed"
    return f"Matrix row {row['name']} ({verdict}): a render of {source}, parsed with the inferred template."


def chat_template_owner(chat_template_text: str, chat_template_model: str) -> str:
    """Which chat template the author's outputs are made for: the model named, else the pasted
    chat template's text (blank-insensitive), as a short digest ("" when neither is given)."""
    import hashlib

    name = (chat_template_model or "").strip()
    text = "" if name else " ".join((chat_template_text or "").split())
    if not name and not text:
        return ""
    return hashlib.sha256(f"{name}\0{text}".encode()).hexdigest()[:16]


@produces(*INFER_OUTPUTS)
def infer_chat_template(
    chat_template_text: str,
    chat_template_model: str,
    bos_token: str,
    eos_token: str,
    use_examples: bool,
    workspace: WorkspaceInputs,
    test_cases_text: str,
    session: Session,
):
    """Infer: a template derived from the pasted chat template (or the model's), in a worker with
    the check's caps (`playground.authoring.inference`), with the author's outputs as examples
    (`use_examples`): the workspace's output (not a sample or a render the page put there) and
    those in Tests. It goes into the editor (the text there kept for Restore) with its matrix
    and what fails grouped by cause; one of its matrix rows is loaded into the workspace; Tests
    holds the author's outputs and the matrix rows."""
    yield {
        "inference": findings_html(
            None, pending=f"Inferring… (at most {limits.current().conformance_seconds:g} s)"
        )
    }
    try:
        mine = author_cases(read_cases(test_cases_text))
    except InputError:
        mine = []
    page_made = {sample.generation for sample in samples_by_id().values()}
    page_made |= {row.get("generation", "") for row in session.check_rows}
    # The author's outputs belong to the chat template they were made for: another one starts
    # fresh (they are set aside, not sent, and named; pasted again they count for this one).
    owner = chat_template_owner(chat_template_text, chat_template_model)
    set_aside = []
    if session.outputs_for and session.outputs_for != owner:
        set_aside = with_workspace_output(as_examples(mine), *workspace[1:], page_made)
        mine = []
    examples = (
        with_workspace_output(as_examples(mine), *workspace[1:], page_made)
        if use_examples and not set_aside
        else []
    )
    outcome = infer_from_page(
        chat_template_text, chat_template_model, bos_token, eos_token, examples
    )
    if outcome.result is None:
        yield {"inference": findings_html(None, outcome.error)}
        return
    result = outcome.result
    result["failure_groups"] = [group.to_dict() for group in failure_groups(result)]
    result["set_aside"] = len(set_aside)
    session.inference, session.outputs_for = result, owner
    text = template_text_of(result["template"])
    session.reset_text, session.template_origin = text, ""
    check = CheckOutcome(result["report"], seconds=outcome.seconds, source=outcome.source)
    session.check_rows, session.check_template = check.rows, text
    matrix = matrix_html(check, causes=root_causes(check.rows, result["template"]))
    cases = cases_text(mine + matrix_cases(check.rows, CHECK_TOOLS, besides=mine))
    session.test_cases_text = cases
    index = showcase_row(check.rows, result["failure_groups"])
    row = (
        check.rows[index] if index is not None else {"prompt": "", "generation": "", "tools": False}
    )
    tools_text = template_text_of(CHECK_TOOLS) if row.get("tools") else ""
    note = matrix_row_note(row, outcome.source) if index is not None else ""
    parsed = parsed_page(
        WorkspaceInputs(text, row["prompt"], row["generation"], tools_text), cases, session, note
    )
    view = session.view
    judgement = ""
    if note and view is not None and view.finished:
        clean, judgement = parse_judgement(view, inference_losses(view, session.inference))
        if row["passed"] and not clean:  # never "(passed)" beside "text was probably lost"
            note = matrix_row_note(row, outcome.source, doubted=True)
            parsed["status"] = render(view, session, note=note)["status"]
    # The workspace's status, said beside the verdict too (on a phone the status line sits
    # below the whole tab).
    shown = f"{note} {judgement}" if judgement else ""
    yield {
        "inference": findings_html(result, examples=len(examples), workspace_status=shown),
        "conformance": remember_derived(session, "conformance", matrix, text),
        "template_text": text,
        "diagnostics": check_template(text),
        **editor_replaced(session, workspace.template_text, text, "Infer"),
        "prefix": row["prompt"],
        "generation": row["generation"],
        "tools_text": tools_text,
        "test_cases_text": cases,
        "start_from": None,  # the editor no longer holds a templates/ file
        **parsed,
    }


@produces("explain")
def show_finding(event: dict, session: Session) -> dict:
    """A finding of the inference panel was clicked: the renders that found it, in #explain."""
    findings = (session.inference or {}).get("findings", [])
    index = event_number(event, "finding")
    if not 0 <= index < len(findings):
        return {}
    return {"explain": evidence_html(findings[index])}


@produces("explain", "template_text", "diagnostics", *RESTORE_BUTTONS, *TEMPLATE_OUTPUTS)
def inference_click(
    event: dict, workspace: WorkspaceInputs, test_cases_text: str, session: Session
) -> dict:
    """A click in the inference panel: a finding shows its renders in #explain; an Apply button
    (``apply``: the index of a failure group) applies that group's edit to the editor's
    template (the text before is kept for Restore) and parses."""
    if "apply" not in event:
        return show_finding(event, session)
    groups = (session.inference or {}).get("failure_groups", [])
    index = event_number(event, "apply")
    if not 0 <= index < len(groups) or not groups[index]["fix"]:
        return {}
    template_text = workspace.template_text
    try:
        template = json.loads(template_text or "")
    except ValueError:
        return {"status": error_html("The editor's template is not valid JSON: fix it first.")}
    if not isinstance(template, dict):
        return {}
    fixed = template_text_of(apply_edit(template, groups[index]["fix"]))
    return {
        "template_text": fixed,
        "diagnostics": check_template(fixed),
        **editor_replaced(session, template_text, fixed, "the Apply"),
        **parse(workspace.with_template(fixed), test_cases_text, session),
    }


@produces("prefix", "generation", "tools_text", "modes", *TEMPLATE_OUTPUTS)
def load_check_row(event: dict, template_text: str, test_cases_text: str, session: Session) -> dict:
    """A row of the chat-template check was clicked: its prompt becomes the prefix and its
    generation the generation (with the check's tools), parsed with the editor's template."""
    index = event_number(event, "row")
    if not 0 <= index < len(session.check_rows) or not session.check_rows[index]["prompt"]:
        return {}
    row = session.check_rows[index]
    verdict = (
        "not renderable" if not row["renderable"] else ("passed" if row["passed"] else "failed")
    )
    note = f"Chat-template check, {row['name']} ({verdict})" + (
        f": {row['detail']}" if row["detail"] else ""
    )
    if template_text != session.check_template:
        note += " The template has changed since the check."
    tools_text = template_text_of(CHECK_TOOLS)
    session.tab = "paste"
    return {
        "prefix": row["prompt"],
        "generation": row["generation"],
        "tools_text": tools_text,
        "modes": Update(selected="paste"),
        **parsed_page(
            WorkspaceInputs(template_text, row["prompt"], row["generation"], tools_text),
            test_cases_text,
            session,
            note,
        ),
    }
