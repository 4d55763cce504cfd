"""The page's header with its front door (Start from a model, Pick a sample), and the Samples tab."""

from __future__ import annotations

import gradio as gr

from .. import handlers
from ..catalog import sample_table, samples_by_id
from ..panels.fragments import draw
from ..panels.page_script import HEADER_JS
from ..wiring import Page


def header() -> None:
    """The page's title, what it is for, and the two doors into it (their clicks choose a tab in
    the browser, `HEADER_JS`)."""
    gr.HTML(draw("header"), elem_id="page-header", js_on_load=HEADER_JS)


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
