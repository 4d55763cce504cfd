"""Download / export: the editor's template as a file for a serving runtime, merged into the
author's tokenizer_config.json when one is given."""

from __future__ import annotations

import gradio as gr

from .. import handlers
from ..authoring.export import EXPORT_TARGETS
from ..wiring import Page


def build(page: Page) -> None:
    """The Download / export accordion (open), under the editor in the Template tab."""
    with gr.Accordion("Download / export", open=True):
        page.tokenizer_config_upload = gr.File(
            label="Your tokenizer_config.json (optional: the template is merged into it)",
            file_types=[".json"],
            type="filepath",
            elem_id="tokenizer-config-upload",
        )
        page.export_target = gr.Dropdown(
            [(label, target) for label, target in EXPORT_TARGETS],
            value="transformers",
            label="For",
            info="vLLM and SGLang call reasoning 'thinking'; what a runtime refuses is listed after the export.",
            elem_id="export-target",
        )
        page.export_button = gr.Button("Download / export", elem_id="export-button")
        page.export_note = gr.HTML(elem_id="export-note")
        with gr.Row():
            page.template_file = gr.File(label="response_template.json", elem_id="template-file")
            page.tokenizer_config_file = gr.File(
                label="tokenizer_config.json", elem_id="tokenizer-config-file"
            )


def wire(page: Page) -> None:
    page.listen(page.export_button.click, handlers.export_template, work="export")
