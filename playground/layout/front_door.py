"""The page's header with its front door (Start from a model, Pick a sample), and the Samples tab."""

from __future__ import annotations

import gradio as gr

from .. import handlers
from ..catalog import sample_table, samples_by_id
from ..panels.page_script import HEADER_JS
from ..wiring import Page

HEADER = (
    "<h1>Response Template Playground</h1><p>A <b>response template</b> turns a chat model's raw"
    " output back into a message (<code>reasoning_content</code>, <code>content</code>,"
    " <code>tool_calls</code>). New model? <b>Start from a model</b>: give its chat template (a"
    " hub id, a local folder or the pasted Jinja) and a template is inferred, checked and shown"
    " working. Or pick a sample, paste an output, edit the template or generate live, and click"
    " any stretch of the region map to see where it went.</p>"
    '<div class="rt-front-door"><button type="button" class="rt-door rt-door-main"'
    ' data-tab="Start from a model" id="start-from-model">Start from a model →</button><button'
    ' type="button" class="rt-door" data-tab="Samples">Pick a sample</button></div>'
)


def header() -> None:
    """The page's title, what it is for, and the two doors into it (their clicks choose a tab in
    the browser, `HEADER_JS`)."""
    gr.HTML(HEADER, elem_id="page-header", js_on_load=HEADER_JS)


def build(page: Page, first: dict) -> None:
    """The Samples tab: a sample by id, or a case clicked in the table. `first`: the first
    sample's loaded page (`handlers.load_sample`)."""
    with gr.Tab("Samples", id="samples", elem_id="tab-samples"):
        page.sample_id = gr.Dropdown(
            list(samples_by_id()),
            value=first["sample_id"],
            label="Sample",
            elem_id="sample-picker",
            filterable=True,
        )
        page.sample_rows = gr.Dataset(
            components=[gr.Textbox(visible=False)] * 3,
            headers=["family", "case", "what it shows"],
            samples=sample_table(),
            type="index",
            samples_per_page=8,
            label="Click a case to load it",
            elem_id="sample-table",
        )


def wire(page: Page) -> None:
    page.listen(page.sample_id.input, handlers.load_sample)
    page.listen(page.sample_rows.click, handlers.load_sample_at)
