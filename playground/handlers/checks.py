"""The checks' handlers: the test cases run, added (any output made an example in one click),
confirmed and downloaded; the reference compared."""

from __future__ import annotations

from engine import TemplateError

from ..authoring.inference import (
    inference_losses,
)
from ..authoring.test_cases import (
    author_cases,
    cases_text,
    confirm_case,
    examples_jsonl,
    read_cases,
    unverified_note,
    use_as_example,
)
from ..outputs import (
    produces,
)
from ..panels import reference_diff
from ..panels.status import error_html, probable_losses
from ..panels.test_results import results_html
from ..parse.derived import remember_derived
from ..parse.parse_view import ParseView
from ..parse.session import Session
from ..parse.workspace import WorkspaceInputs
from ..server.downloads import write_download
from ..server.input_readers import InputError, read_tools
from .event_data import event_number
from .workspace import (
    parse_inputs,
    tests_panel,
)


@produces("test_results")
def run_tests(template_text: str, test_cases_text: str, session: Session) -> dict:
    """The test cases changed: re-run them."""
    session.test_cases_text = test_cases_text
    return {"test_results": tests_panel(template_text, test_cases_text, session)}


def wrong_parse_reasons(view: ParseView | None, session: Session) -> list[str]:
    """Why the parse `view` shows may not be the output's message, a sentence each ([] when
    nothing says so): its failed regions, its warnings, then the text it probably lost (what the
    last inference knows was lost included). An output recorded from such a parse is unverified."""
    if view is None:
        return []
    found = [error.message for error in view.errors] + [w.message for w in view.warnings]
    found += probable_losses(view, inference_losses(view, session.inference))
    return list(dict.fromkeys(found))


@produces("test_cases_text", "test_results")
def add_test_case(workspace: WorkspaceInputs, test_cases_text: str, session: Session) -> dict:
    """Add the current input, with the message it parses to now, as a test case."""
    try:
        cases = read_cases(test_cases_text)
        tools = read_tools(workspace.tools_text)
    except InputError as error:
        return {"test_results": results_html([], 0, str(error))}
    view = session.view
    message = view.message if view is not None else None
    # The author's outputs are numbered among themselves (the rows after them are the page's).
    mine = author_cases(cases)
    case = {
        "name": f"your output {len(mine) + 1}",
        "source": "output",
        "prefix": workspace.prefix or "",
        "generation": workspace.generation or "",
        "expected": message or {},
    }
    if note := unverified_note(wrong_parse_reasons(view, session)):
        # Recorded from a wrong parse: not evidence until the author confirms its message.
        case["check"] = note
    if tools:
        case["tools"] = tools
    # The author's outputs first: they run before the matrix rows, and inference reads them.
    text = cases_text([*mine, case, *(c for c in cases if c not in mine)])
    session.test_cases_text = text
    return {
        "test_cases_text": text,
        "test_results": tests_panel(workspace.template_text, text, session),
    }


@produces("test_cases_text", "test_results")
def tests_click(event: dict, template_text: str, test_cases_text: str, session: Session) -> dict:
    """A button in the Tests panel: *Use as example* (``use``: a case's index) makes a matrix
    row or a sample one of the author's outputs, which Infer sends as an example; *Confirm*
    (``confirm``: a case's index) takes an unverified case's expected message as it stands.
    Anything else (an index out of range, a case already changed) leaves the cases as they are."""
    try:
        cases = read_cases(test_cases_text)
    except InputError as error:
        return {"test_results": results_html([], 0, str(error))}
    if "use" in event:
        changed = use_as_example(cases, event_number(event, "use"))
    elif "confirm" in event:
        changed = confirm_case(cases, event_number(event, "confirm"))
    else:
        return {}
    if changed == cases:
        return {}
    text = cases_text(changed)
    session.test_cases_text = text
    return {"test_cases_text": text, "test_results": tests_panel(template_text, text, session)}


@produces("examples_file", "test_results")
def export_cases(template_text: str, test_cases_text: str) -> dict:
    """Download the test cases as examples: a JSONL file of ``{"prefix", "output", "tools"?,
    "expected"}``, what `python -m engine infer --examples` reads (every case: the author's
    outputs and the rows)."""
    try:
        cases = read_cases(test_cases_text)
    except InputError as error:
        return {"examples_file": None, "test_results": results_html([], 0, str(error))}
    path = write_download("examples.jsonl", examples_jsonl(cases), "The examples file")
    return {"examples_file": path}


@produces("reference")
def compare_reference(workspace: WorkspaceInputs, session: Session) -> dict:
    """Compare with transformers: this engine's message and the reference's, side by side (marked
    stale when the input changes afterwards)."""
    try:
        view = parse_inputs(workspace)
    except (InputError, TemplateError, ValueError) as error:
        return {"reference": error_html(str(error))}
    shown = reference_diff.compare(
        view.template,
        workspace.prefix or "",
        workspace.generation or "",
        view.tools,
        view.message,
        view.error,
    )
    return {"reference": remember_derived(session, "reference", shown, *workspace)}
