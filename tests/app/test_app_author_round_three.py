"""The author's path, round three: Check while Infer runs, the verdict's long texts, the
wordings a new author reads, the first Generate's load (the browser's side is in
tests/app/test_app_browser_round_three.py)."""

from __future__ import annotations

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
