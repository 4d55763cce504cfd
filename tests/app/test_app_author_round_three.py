"""The author's path, round three: Check while Infer runs, the verdict's long texts, the
wordings a new author reads, the first Generate's load (the browser's side is in
tests/app/test_app_browser_round_three.py)."""

from __future__ import annotations

import json

import gradio as gr

from playground import handlers
from playground.parse.session import Session, heavy_job
from playground.server import limits
from playground.wiring import Page

CHECK_INPUTS = (
    "template_text",
    "chat_template_text",
    "chat_template_model",
    "bos_token",
    "eos_token",
)


def test_check_while_infer_runs_says_already_running_in_its_own_panel():
    """Check's handler writes only the matrix: a refusal shown on the status line would be a
    component it does not write (Gradio's "Returned component not specified as output" and a
    bare red Error badge); it is said in the matrix's panel, as Generate says it."""
    with gr.Blocks():
        page = Page()
        page.conformance, page.status = gr.HTML(), gr.HTML()
        for name in CHECK_INPUTS:
            setattr(page, name, gr.Textbox())
        page.session = gr.State()
        bound = page.bound(handlers.check_chat_template, heavy=True, work="conformance")
        session = Session()
        cap = limits.current().session_jobs
        with heavy_job(session, cap, "infer") as admitted:
            assert admitted is None
            (answer,) = list(bound("{}", "", "", "", "", session))
        assert list(answer) == [page.conformance]
        shown = answer[page.conformance]
        assert "rt-status-error" in shown
        assert (
            f"This page is already running a template inference (at most {cap} at once,"
            " PLAYGROUND_LIMITS session_jobs): wait for it to end." in shown
        )
        assert session.heavy_jobs == 0 and session.running_jobs == []


def test_the_authors_outputs_are_numbered_among_themselves_not_after_the_matrix_rows():
    from playground.authoring.test_cases import cases_text
    from playground.parse.workspace import WorkspaceInputs

    rows = [
        {"name": f"row {i}", "source": "matrix", "prefix": "", "generation": "x", "expected": {}}
        for i in range(40)
    ]
    session = Session()
    handlers.load_sample("qwen3/text-then-tool-calls", session)
    template = session.view.template
    workspace = WorkspaceInputs(json.dumps(template), "", "hello", "")
    first = handlers.add_test_case(workspace, cases_text(rows), session)
    second = handlers.add_test_case(
        workspace._replace(generation="again"), first["test_cases_text"], session
    )
    names = [case["name"] for case in json.loads(second["test_cases_text"])]
    assert names[:3] == ["your output 1", "your output 2", "row 0"]
    assert "case 41" not in second["test_cases_text"]


def test_a_matrix_row_that_passed_is_never_called_passed_beside_probably_lost_text():
    from playground.handlers.start_from_model import matrix_row_note

    row = {"name": "first-turn/round-trip:answer", "passed": True}
    assert matrix_row_note(row, "the chat template") == (
        "Matrix row first-turn/round-trip:answer (passed): a render of the chat template, parsed"
        " with the inferred template."
    )
    assert matrix_row_note(row, "the chat template", doubted=True) == (
        "Matrix row first-turn/round-trip:answer (its message passed the check): a render of the"
        " chat template, parsed with the inferred template."
    )
    assert "(failed)" in matrix_row_note({**row, "passed": False}, "x", doubted=True)


def test_the_first_generate_says_each_step_before_its_first_token():
    """Loading, rendering the prompt (in a worker: seconds on a busy server) and the first
    token are each said on the status line before the first parse update."""
    from playground.handlers import generate_live as live

    session = Session()
    updates = list(
        live.generate(
            "samples/demo-model", "", "Hi", "", "", False, 3, 0.7, 0.9, 0, True, "", session
        )
    )
    first_parse = next(i for i, update in enumerate(updates) if "region_map" in update)
    before = [update["status"] for update in updates[:first_parse]]
    assert all(set(update) == {"status"} for update in updates[:first_parse])
    said = [
        step
        for step in (
            "⏳ samples/demo-model: rendering the prompt with its chat template…",
            "⏳ samples/demo-model: generating, its first token is on its way…",
        )
        if any(step in status for status in before)
    ]
    assert len(said) == 2
    assert before.index(next(s for s in before if said[0] in s)) < before.index(
        next(s for s in before if said[1] in s)
    )
    assert "Parsed" in updates[-1]["status"]


def test_a_parse_that_ran_while_a_case_was_added_leaves_the_case_in_the_tests_panel():
    """The page sends its copy of the test cases with each parse. A parse sent before Add case
    lands after it (a loaded server): its Tests panel must not be drawn from that older copy,
    which would hide the added case (it stays in the cases text, so a second press would add it
    twice)."""
    from playground.parse.workspace import WorkspaceInputs

    session = Session()
    page = handlers.load_sample("qwen3/text-then-tool-calls", session)
    before = page["test_cases_text"]  # the copy the in-flight parse carries
    workspace = WorkspaceInputs(page["template_text"], page["prefix"], page["generation"], "")
    added = handlers.add_test_case(workspace, before, session)
    assert 'data-source="output"' in added["test_results"]
    late = handlers.parse(workspace._replace(generation="Checking."), before, session)
    # The template and the cases the panel shows did not change: the panel is left alone.
    assert "test_results" not in late
    # A new template text redraws it, from the cases with the added one.
    edited = json.loads(page["template_text"])
    edited["description"] = "edited"
    redrawn = handlers.parse(workspace._replace(template_text=json.dumps(edited)), before, session)
    assert 'data-source="output"' in redrawn["test_results"]
    assert "your output 1" in redrawn["test_results"]
