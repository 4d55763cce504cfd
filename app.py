"""Response Template Playground: watch a response template parse a model's output.

    python app.py [--model PATH_OR_HUB_ID] [--share]

Host and port come from Gradio's own GRADIO_SERVER_NAME / GRADIO_SERVER_PORT.
This file builds the page: its skeleton (two columns, their tabs), each panel built and
wired by its module in `playground/layout/`, and the public API (`playground.api`).
Handlers are `playground.handlers` (a module a panel), bound to
components by name (`playground.wiring.Page`). See docs/app.md.
"""

from __future__ import annotations

import argparse
import logging
import sys

import gradio as gr

try:
    from playground.server import limits  # noqa: F401  (imported first: it reads PLAYGROUND_LIMITS)
except ValueError as error:  # PLAYGROUND_LIMITS is wrong: the message names the key and why
    raise SystemExit(f"app.py: {error}") from None
from starlette.middleware import Middleware

from playground import api, handlers
from playground.catalog import DEFAULT_SAMPLE
from playground.layout import (
    checks,
    editor,
    event_log,
    export,
    front_door,
    generate_live,
    message,
    region_map,
    replay,
    share,
    start_from_model,
    workspace,
)
from playground.model import loaded as loaded_models
from playground.panels.page_script import PAGE_JS
from playground.panels.styles import PAGE_CSS
from playground.parse.session import Session
from playground.server import admission, queues, session_store, uploads, workers
from playground.server.allocator import return_freed_memory
from playground.server.folders import allow_folder, looks_like_hub_id
from playground.server.limits import LIMITS
from playground.server.queues import queue_options
from playground.wiring import Page, query_params, session_closed

# What every panel shows before any event: the first sample, loaded. Each visitor's session
# starts as a copy of the one that drew it (Gradio copies a State's value for every page), so a
# click on the map or a parse sent before the page-load handler has answered finds the page as
# drawn, and that handler has nothing to change under it.
opening_session = Session()
first = handlers.load_sample(DEFAULT_SAMPLE, opening_session)

# Gradio's copies of uploads and downloads: every 5 minutes, those older than 10 minutes are deleted.
CACHE_CLEANING = (300, 600)

with gr.Blocks(title="Response Template Playground", delete_cache=CACHE_CLEANING) as demo:
    page = Page()
    # Each browser session gets its own copy (no load event, no public endpoint).
    page.session = gr.State(opening_session)
    page.params = gr.State({})

    # The layout: the page's skeleton here, each panel in its module (playground/layout/).
    with gr.Row(equal_height=False, elem_id="workspace"):
        with gr.Column(scale=5, min_width=340, elem_id="inputs-column"):
            front_door.header()
            with gr.Tabs(
                selected="samples", elem_id="modes", overflow_behavior="wrap"
            ) as page.modes:
                front_door.build(page, first)
                start_from_model.build(page)
                workspace.build(page, first)
                generate_live.build(page)
                editor.build(page, first)  # with Download / export under it
            share.build(page)
        with gr.Column(scale=7, min_width=340, elem_id="results-column"):
            page.status = gr.HTML(first["status"], elem_id="status")
            replay.build(page, first)
            region_map.build(page, first)
            with gr.Tabs(
                selected="message", elem_id="results", overflow_behavior="wrap"
            ) as page.results_tabs:
                message.build(page, first)
                event_log.build(page, first)
                event_log.matches(page)
                message.initial_events(page, first)
                message.openai_stream(page)
                checks.build(page, first)
    workspace.reparse_button(page)

    # The wiring, once every component exists: each handler reads and writes components by
    # name (playground.wiring), so a panel's handlers may touch another panel's components.
    opened = demo.load(query_params, None, page.params, api_visibility="private", queue=False)
    demo.unload(session_closed)  # a closed page's parses are freed at once
    page.listen(opened.then, handlers.open_page)
    page.listen(page.modes.select, handlers.select_tab, queue=False)
    page.listen(page.results_tabs.select, handlers.select_results_tab, show_progress="hidden")
    front_door.wire(page)
    workspace.wire(page)
    region_map.wire(page)
    event_log.wire(page)
    editor.wire(page)
    export.wire(page)
    start_from_model.wire(page)
    checks.wire(page)
    replay.wire(page)
    generate_live.wire(page, opened)
    share.wire(page)

    # The public API: stable names, JSON in and out (playground.api).
    gr.api(api.parse, api_name="parse", **queue_options("parse"))
    gr.api(api.replay, api_name="replay", **queue_options("replay"))
    gr.api(api.generate, api_name="generate", **queue_options("model"))
    gr.api(api.lint, api_name="lint", **queue_options("parse"))
    gr.api(api.export, api_name="export", **queue_options("export"))
    gr.api(api.load_sample, api_name="load_sample", **queue_options("parse"))
    gr.api(api.conformance, api_name="conformance", **queue_options("conformance"))

# No queue-wide size and no route around the queue: each kind has its own queue, and
# playground.server.admission refuses what is over it, or over a client's share, at once.
demo.queue(default_concurrency_limit=queues.WORK["parse"].slots, max_size=None, api_open=False)
admission.install(demo)


def main() -> None:
    session_store.keep_lean()  # Gradio keeps no copy of what visitors send (PLAYGROUND_LIMITS sessions)
    return_freed_memory()  # before the server's threads start
    sys.setswitchinterval(admission.SWITCH_SECONDS)  # each request's regex calls wait less
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model", help="model folder or hub id for Generate live (default: the bundled demo model)"
    )
    parser.add_argument("--share", action="store_true", help="create a public gradio.live link")
    args = parser.parse_args()
    if args.model:
        page.model_name.value = args.model
        if not looks_like_hub_id(args.model):
            allow_folder(args.model)  # the host chose it: visitors may name it too
    loaded_models.start_loading(args.model or "", keep=True)
    workers.start_spare()
    logging.basicConfig(level=logging.INFO)
    # The public API endpoints are also MCP tools (/gradio_api/mcp/), for agents; see docs/app.md.
    demo.launch(
        share=args.share,
        css=PAGE_CSS,
        js=PAGE_JS,
        show_error=False,
        mcp_server=True,
        state_session_capacity=LIMITS.sessions,
        max_file_size=f"{LIMITS.upload_mb}mb",
        app_kwargs={
            # The first is outermost: a body over its cap is refused (413) before any
            # allowance is spent on it.
            "middleware": [
                Middleware(admission.RequestSizeCap),
                Middleware(admission.UnqueuedAdmission),
                Middleware(uploads.UploadQuota),
            ]
        },
    )


if __name__ == "__main__":
    main()
