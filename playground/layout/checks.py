"""The checks on a template: does streaming give the one-shot result (Stream checks), the
template's test cases re-run on every edit (Tests), and transformers' reference parser on the
same input (vs transformers)."""

from __future__ import annotations

import gradio as gr

from .. import handlers
from ..panels.page_script import TESTS_JS
from ..panels.stream_report import report_html
from ..wiring import Page


def build(page: Page, first: dict) -> None:
    """The Stream checks, Tests and vs transformers tabs; the tests and their results from
    `first` (the first sample's loaded page)."""
    with gr.Tab("Stream checks", id="checks"):
        page.stream_check = gr.HTML(report_html(None), elem_id="stream-check")
    with gr.Tab("Tests", id="tests"):
        page.test_results = gr.HTML(
            first["test_results"], elem_id="test-results", js_on_load=TESTS_JS
        )
        with gr.Row():
            page.add_case_button = gr.Button(
                "Use the current output as an example",
                size="sm",
                elem_id="add-case-button",
            )
            page.export_cases_button = gr.Button(
                "Download as examples (JSONL)", size="sm", elem_id="export-cases-button"
            )
        page.examples_file = gr.File(
            label="examples.jsonl (for python -m engine infer --examples)",
            elem_id="examples-file",
        )
        with gr.Accordion("Test cases (JSON: name, prefix, generation, expected)", open=False):
            page.test_cases_text = gr.Code(
                first["test_cases_text"],
                language="json",
                lines=8,
                max_lines=24,
                wrap_lines=True,
                elem_id="test-cases",
            )
    with gr.Tab("vs transformers", id="reference"):
        page.compare_button = gr.Button(
            "Compare with transformers' reference parser",
            size="sm",
            elem_id="compare-button",
        )
        page.reference = gr.HTML(elem_id="reference")


def wire(page: Page) -> None:
    page.listen(
        page.test_cases_text.input,
        handlers.run_tests,
        trigger_mode="always_last",
        show_progress="hidden",
    )
    page.listen(page.add_case_button.click, handlers.add_test_case)
    page.listen(page.test_results.click, handlers.tests_click, show_progress="hidden")
    page.listen(page.export_cases_button.click, handlers.export_cases, work="export")
    page.listen(page.compare_button.click, handlers.compare_reference, work="reference")
