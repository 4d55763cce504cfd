"""The region map: every character of the parse coloured by what became of it, the display
options over it (whitespace, token boundaries) with the parse's figures, and #explain under it."""

from __future__ import annotations

from functools import partial

import gradio as gr

from .. import handlers
from ..panels.page_script import EXPLAIN_JS, REGION_MAP_JS
from ..wiring import Page


def build(page: Page, first: dict) -> None:
    """The display row, the region map and #explain, drawn from `first` (the first sample's
    loaded page)."""
    with gr.Row(equal_height=False, elem_id="display-row"):
        page.figures = gr.HTML(first["figures"], elem_id="live-figures")
        page.show_whitespace = gr.Checkbox(
            False,
            label="Show whitespace",
            elem_id="show-whitespace",
            min_width=150,
            scale=0,
            container=False,
        )
        page.show_tokens = gr.Checkbox(
            False,
            label="Tokens view (boundaries, ids, control tokens)",
            elem_id="show-tokens",
            min_width=300,
            scale=0,
            container=False,
        )
    page.region_map = gr.HTML(
        first["region_map"],
        label="Region map",
        elem_id="region-map",
        js_on_load=REGION_MAP_JS,
    )
    page.explain = gr.HTML(first["explain"], elem_id="explain", js_on_load=EXPLAIN_JS)


def wire(page: Page) -> None:
    """Every option of how the parse is read or shown (whitespace and the Tokens view here, the
    event log's filters, page and grouping, the workspace's "Read as" and "Spelled out") is
    one listener, answered one change at a time: a change made while another runs is sent when
    that one is answered, so the last drawing has every option as it stands (`set_view`).
    A click on the map explains its stretch; a click sent to #explain (an event link, or the
    editor's cursor on a pattern) shows what it names."""
    triggers = [
        page.show_whitespace.change,
        page.show_tokens.change,
        page.hide_chunks.change,
        page.log_field.change,
        page.group_by_token.change,
        page.log_search.submit,
        page.log_page.submit,
        page.read_as.input,
        page.spelled_out.submit,
        page.spelled_out.blur,
    ]
    page.listen(
        partial(gr.on, triggers),
        handlers.set_view,
        trigger_mode="always_last",
        show_progress="hidden",
    )
    page.listen(page.region_map.click, handlers.explain_span, show_progress="hidden")
    page.listen(page.explain.click, handlers.show_event, show_progress="hidden")
