"""The Template tab: the response template's editor, its diagnostics and one-click fixes,
Format, Reset and Restore, the field reference, and Download / export under it."""

from __future__ import annotations

import gradio as gr

from .. import handlers
from ..catalog import template_names
from ..outputs import BACK_LABEL
from ..panels.diagnostics_panel import check_template
from ..panels.field_reference import reference_html
from ..panels.fragments import draw
from ..panels.page_script import DIAGNOSTICS_JS
from ..wiring import Page
from . import export


def build(page: Page, first: dict) -> None:
    """The Template tab, its editor filled from `first` (the first sample's loaded page)."""
    with gr.Tab("Template", id="template", elem_id="tab-template"):
        page.start_from = gr.Dropdown(
            template_names(),
            value=first["start_from"],
            label="Start from templates/",
            elem_id="start-from",
        )
        page.template_text = gr.Code(
            first["template_text"],
            language="json",
            label="Response template (Ctrl+Enter parses)",
            lines=16,
            max_lines=36,
            wrap_lines=True,
            elem_id="template-editor",
        )
        page.diagnostics = gr.HTML(
            check_template(first["template_text"]),
            elem_id="template-diagnostics",
            js_on_load=DIAGNOSTICS_JS,
        )
        with gr.Row():
            page.format_button = gr.Button("Format", elem_id="format-button")
            page.reset_button = gr.Button("Reset", elem_id="reset-button")
            page.restore_button = gr.Button("↶ Restore", visible=False, elem_id="restore-button")
            page.restore_back_button = gr.Button(
                BACK_LABEL, visible=False, elem_id="restore-back-button"
            )
        gr.HTML(draw("inference_note"))
        with gr.Accordion(
            "Field reference (from the JSON Schema)", open=False, elem_id="field-reference"
        ):
            gr.HTML(reference_html())
        export.build(page)


def wire(page: Page) -> None:
    page.listen(page.start_from.input, handlers.start_from)
    page.listen(
        page.template_text.change,
        handlers.diagnose,
        trigger_mode="always_last",
        show_progress="hidden",
    )
    page.listen(page.diagnostics.click, handlers.fix_template)
    page.listen(page.format_button.click, handlers.format_editor)
    page.listen(page.reset_button.click, handlers.reset_template)
    page.listen(page.restore_button.click, handlers.restore_template)
    page.listen(page.restore_back_button.click, handlers.restore_back)
