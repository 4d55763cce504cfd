"""The parse's record: its events, numbered and searchable a page at a time (the Event log
tab), and every place a delimiter matched, almost matched or would be held (Matches)."""

from __future__ import annotations

import gradio as gr

from .. import handlers
from ..panels.page_script import EVENT_LOG_JS, MATCH_LIST_JS
from ..wiring import Page


def build(page: Page, first: dict) -> None:
    """The Event log tab: search, field, page and the chunk events filter over the log, drawn
    from `first` (the first sample's loaded page)."""
    with gr.Tab("Event log", id="log"):
        with gr.Row():
            page.log_search = gr.Textbox(
                label="Search",
                placeholder="text, type, value or #",
                elem_id="log-search",
                scale=2,
            )
            page.log_field = gr.Dropdown(
                first["log_field"]["choices"],
                value="",
                label="Field",
                elem_id="log-field",
                scale=1,
            )
            page.log_page = gr.Number(
                1,
                label="Page",
                precision=0,
                minimum=1,
                elem_id="log-page",
                scale=0,
                min_width=90,
            )
            page.hide_chunks = gr.Checkbox(
                False,
                label="Hide chunk events",
                elem_id="hide-chunks",
                scale=0,
                min_width=120,
            )
            page.group_by_token = gr.Checkbox(
                False,
                label="Group by token",
                elem_id="group-by-token",
                scale=0,
                min_width=130,
            )
        page.event_log = gr.HTML(first["event_log"], elem_id="event-log", js_on_load=EVENT_LOG_JS)


def matches(page: Page) -> None:
    """The Matches tab (drawn only while shown: `handlers.select_results_tab`)."""
    with gr.Tab("Matches", id="matches"):
        page.matches = gr.HTML(elem_id="matches", js_on_load=MATCH_LIST_JS)


def wire(page: Page) -> None:
    """A click on a row shows that event (a filter or the page of the log re-draws it through
    the one listener of every display option: `region_map.wire`)."""
    page.listen(page.event_log.click, handlers.show_event, show_progress="hidden")
