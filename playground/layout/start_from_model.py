"""Start from a model: a model's chat template (a hub id, a local folder or the pasted Jinja),
a response template inferred from it, and the editor's template checked against it."""

from __future__ import annotations

import gradio as gr

from .. import handlers
from ..panels.check_matrix import matrix_html
from ..panels.inference_panel import findings_html
from ..panels.page_script import CONFORMANCE_JS, INFERENCE_JS
from ..wiring import Page

USE_EXAMPLES_LABEL = (
    "Send my outputs as examples: the one pasted in the workspace and those in Tests (the"
    " model's real outputs teach what no render shows)"
)


def build(page: Page) -> None:
    """The Start from a model tab: the chat template's source, Infer and Check, and what each found."""
    with gr.Tab("Start from a model", id="model", elem_id="tab-model"):
        page.chat_template_model = gr.Textbox(
            "",
            label="A model: a hub id or a local folder (tokenizer files only)",
            placeholder="samples/demo-model",
            elem_id="chat-template-model",
        )
        page.chat_template_text = gr.Code(
            "",
            language="jinja2",
            label="…or its chat template, pasted (the Jinja text of chat_template; wins when given)",
            lines=6,
            max_lines=16,
            wrap_lines=True,
            elem_id="chat-template",
        )
        with gr.Row():
            page.bos_token = gr.Textbox(
                "", label="bos_token (optional)", elem_id="bos-token", min_width=140
            )
            page.eos_token = gr.Textbox(
                "", label="eos_token (optional)", elem_id="eos-token", min_width=140
            )
        page.use_examples = gr.Checkbox(True, label=USE_EXAMPLES_LABEL, elem_id="use-examples")
        with gr.Row():
            page.infer_button = gr.Button(
                "Infer a template", variant="primary", elem_id="infer-button"
            )
            page.check_button = gr.Button(
                "Check the editor's template against it", elem_id="check-button"
            )
        page.inference = gr.HTML(findings_html(None), elem_id="inference", js_on_load=INFERENCE_JS)
        page.conformance = gr.HTML(
            matrix_html(None), elem_id="conformance", js_on_load=CONFORMANCE_JS
        )


def wire(page: Page) -> None:
    page.listen(page.infer_button.click, handlers.infer_chat_template, work="infer")
    page.listen(page.inference.click, handlers.inference_click, show_progress="hidden")
    page.listen(page.check_button.click, handlers.check_chat_template, work="conformance")
    page.listen(page.conformance.click, handlers.load_check_row)
