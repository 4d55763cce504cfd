"""Response Template Playground: watch a response template parse a model's output.

    python app.py [--model PATH_OR_HUB_ID] [--share]

Host and port come from Gradio's own GRADIO_SERVER_NAME / GRADIO_SERVER_PORT.
This file is the layout and the wiring only: handlers are `playground.handlers`
(and `playground.live` for Generate live), bound to components by name
(`playground.wiring.Page`); the public API is `playground.api`. See docs/app.md.
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

from playground import api, handlers, live
from playground.authoring.chat_template_check import matrix_html
from playground.authoring.diagnostics import check_template
from playground.authoring.export import EXPORT_TARGETS
from playground.authoring.inference import findings_html
from playground.authoring.stream_check import report_html
from playground.catalog import (
    DEFAULT_SAMPLE,
    EDITED_TEMPLATE,
    INLINE_TEMPLATE,
    sample_table,
    samples_by_id,
    template_names,
    template_text_of,
)
from playground.panels.field_reference import reference_html
from playground.panels.page_script import (
    CONFORMANCE_JS,
    COPY_JS,
    DIAGNOSTICS_JS,
    EVENT_LOG_JS,
    EXPLAIN_JS,
    HEADER_JS,
    INFERENCE_JS,
    MATCH_LIST_JS,
    PAGE_JS,
    REGION_MAP_JS,
    SHARE_JS,
)
from playground.panels.styles import PAGE_CSS
from playground.parse.chunking import CHUNKINGS, DEMO_MODEL_PATH
from playground.parse.session import Session
from playground.server import admission, queues, uploads, workers
from playground.server.allocator import return_freed_memory
from playground.server.folders import allow_folder, looks_like_hub_id
from playground.server.limits import LIMITS
from playground.server.queues import queue_options
from playground.wiring import Page, query_params, session_closed

first = handlers.load_sample(DEFAULT_SAMPLE, Session())
DEFAULT_LIVE_TOOLS = template_text_of(samples_by_id()[DEFAULT_SAMPLE].tools)
MONO = ["rt-mono"]

# Gradio's copies of uploads and downloads: every 5 minutes, those older than 10 minutes are deleted.
CACHE_CLEANING = (300, 600)

with gr.Blocks(title="Response Template Playground", delete_cache=CACHE_CLEANING) as demo:
    page = Page()
    page.session = gr.State(
        Session()
    )  # each browser session gets its own copy (no load event, no public endpoint)
    page.params = gr.State({})
    with gr.Row(equal_height=False, elem_id="workspace"):
        with gr.Column(scale=5, min_width=340, elem_id="inputs-column"):
            gr.HTML(
                "<h1>Response Template Playground</h1><p>A <b>response template</b> turns a chat model's raw output back into a "
                "message (<code>reasoning_content</code>, <code>content</code>, <code>tool_calls</code>). New model? "
                "<b>Start from a model</b>: give its chat template (a hub id, a local folder or the pasted Jinja) and a "
                "template is inferred, checked and shown working. Or pick a sample, paste an output, edit the template or "
                "generate live, and click any stretch of the region map to see where it went.</p>"
                '<div class="rt-front-door"><button type="button" class="rt-door rt-door-main" data-tab="Start from a model" '
                'id="start-from-model">Start from a model →</button><button type="button" class="rt-door" '
                'data-tab="Samples">Pick a sample</button></div>',
                elem_id="page-header",
                js_on_load=HEADER_JS,
            )
            with gr.Tabs(
                selected="samples", elem_id="modes", overflow_behavior="wrap"
            ) as page.modes:
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
                    page.use_examples = gr.Checkbox(
                        True,
                        label="Send my outputs as examples: the one pasted in the workspace and those in Tests (the model's real outputs teach what no render shows)",
                        elem_id="use-examples",
                    )
                    with gr.Row():
                        page.infer_button = gr.Button(
                            "Infer a template", variant="primary", elem_id="infer-button"
                        )
                        page.check_button = gr.Button(
                            "Check the editor's template against it", elem_id="check-button"
                        )
                    page.inference = gr.HTML(
                        findings_html(None), elem_id="inference", js_on_load=INFERENCE_JS
                    )
                    page.conformance = gr.HTML(
                        matrix_html(None), elem_id="conformance", js_on_load=CONFORMANCE_JS
                    )
                with gr.Tab("Paste & parse", id="paste", elem_id="tab-paste"):
                    page.prefix = gr.Textbox(
                        first["prefix"],
                        label="Prefix (the prompt, special tokens included)",
                        lines=3,
                        max_lines=8,
                        elem_id="prefix",
                        elem_classes=MONO,
                    )
                    # A fixed height: a growing box measures its whole text on every keystroke (slow on a big paste).
                    page.generation = gr.Textbox(
                        first["generation"],
                        label="Generation (raw model output; Ctrl+Enter parses)",
                        lines=10,
                        max_lines=10,
                        elem_id="generation",
                        elem_classes=MONO,
                    )
                    page.tools_text = gr.Code(
                        first["tools_text"],
                        language="json",
                        label="Tools (JSON schemas, optional)",
                        lines=3,
                        max_lines=10,
                        elem_id="tools",
                    )
                    page.template_choice = gr.Dropdown(
                        [*template_names(), INLINE_TEMPLATE, EDITED_TEMPLATE],
                        value=first["template_choice"],
                        label="Template (from templates/; edit it in the Template tab)",
                        elem_id="template-choice",
                    )
                    with gr.Row():
                        page.parse_button = gr.Button(
                            "Parse", variant="primary", elem_id="parse-button"
                        )
                        page.fit_button = gr.Button("Which template fits?", elem_id="fit-button")
                        page.use_best_button = gr.Button(
                            "Use the best", visible=False, elem_id="use-best-button"
                        )
                    page.fits = gr.HTML(elem_id="fits")
                with gr.Tab("Generate live", id="live", elem_id="tab-live"):
                    page.model_name = gr.Textbox(
                        str(DEMO_MODEL_PATH.relative_to(DEMO_MODEL_PATH.parent.parent)),
                        label="Model (local folder or hub id; default: the bundled demo model)",
                        elem_id="model-name",
                    )
                    page.user = gr.Textbox(
                        "What's the weather in Paris?", label="User", lines=2, elem_id="user"
                    )
                    # The main action right under the message, so the map below stays in reach (a phone stacks the columns).
                    with gr.Row():
                        page.generate_button = gr.Button(
                            "Generate", variant="primary", elem_id="generate-button"
                        )
                        page.stop_button = gr.Button("Stop", variant="stop", elem_id="stop-button")
                    page.model_note = gr.Markdown(elem_id="model-note")
                    page.use_model_button = gr.Button(
                        "Use the model's template",
                        size="sm",
                        visible=False,
                        elem_id="use-model-button",
                    )
                    model_status = gr.Markdown(elem_id="model-status")
                    model_status_timer = gr.Timer(0.5)
                    with gr.Accordion(
                        "Generation settings: system, messages, tools, thinking, sampling",
                        open=False,
                        elem_id="live-settings",
                    ):
                        page.system = gr.Textbox(
                            "", label="System (optional)", lines=1, elem_id="system"
                        )
                        page.messages_text = gr.Code(
                            "",
                            language="json",
                            label="…or a messages JSON (wins when given)",
                            lines=2,
                            max_lines=8,
                            elem_id="messages",
                        )
                        page.live_tools_text = gr.Code(
                            DEFAULT_LIVE_TOOLS,
                            language="json",
                            label="Tools (JSON schemas, optional)",
                            lines=3,
                            max_lines=8,
                            elem_id="live-tools",
                        )
                        with gr.Row():
                            page.enable_thinking = gr.Checkbox(
                                True, label="enable_thinking", elem_id="enable-thinking"
                            )
                            page.use_model_template = gr.Checkbox(
                                True,
                                label="Use the model's template (tokenizer's own, else templates/); an edited template is kept",
                                elem_id="use-model-template",
                            )
                            page.teaching_pace = gr.Checkbox(
                                False,
                                label=f"Teaching pace ({live.TEACHING_TOKENS_PER_SECOND} tokens a second)",
                                elem_id="teaching-pace",
                            )
                        with gr.Row():
                            page.constrain = gr.Checkbox(
                                False,
                                label="Constrain to the template (every token one its grammar allows)",
                                elem_id="constrain",
                            )
                            page.tool_choice = gr.Dropdown(
                                list(live.TOOL_CHOICES),
                                value="auto",
                                allow_custom_value=True,
                                label="Tool choice (or a tool's name)",
                                elem_id="tool-choice",
                            )
                        with gr.Row():
                            page.max_new_tokens = gr.Slider(
                                1,
                                LIMITS.max_new_tokens,
                                value=200,
                                step=1,
                                label="max_new_tokens",
                                elem_id="max-new-tokens",
                            )
                            page.temperature = gr.Slider(
                                0,
                                2,
                                value=0.7,
                                step=0.05,
                                label="temperature",
                                elem_id="temperature",
                            )
                        with gr.Row():
                            page.top_p = gr.Slider(
                                0.05, 1, value=0.9, step=0.05, label="top_p", elem_id="top-p"
                            )
                            page.seed = gr.Number(0, label="seed", precision=0, elem_id="seed")
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
                        page.restore_button = gr.Button(
                            "↶ Restore", visible=False, elem_id="restore-button"
                        )
                        page.restore_back_button = gr.Button(
                            handlers.BACK_LABEL, visible=False, elem_id="restore-back-button"
                        )
                    gr.HTML(
                        '<div class="rt-note">To infer a template from a model, or check this one against '
                        "a chat template: the <b>Start from a model</b> tab.</div>"
                    )
                    with gr.Accordion(
                        "Field reference (from the JSON Schema)",
                        open=False,
                        elem_id="field-reference",
                    ):
                        gr.HTML(reference_html())
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
                            label="For (vLLM and SGLang call reasoning 'thinking'; what they refuse is listed)",
                            elem_id="export-target",
                        )
                        page.export_button = gr.Button("Download / export", elem_id="export-button")
                        page.export_note = gr.HTML(elem_id="export-note")
                        with gr.Row():
                            page.template_file = gr.File(
                                label="response_template.json", elem_id="template-file"
                            )
                            page.tokenizer_config_file = gr.File(
                                label="tokenizer_config.json", elem_id="tokenizer-config-file"
                            )
            with gr.Accordion("Share", open=False, elem_id="share"):
                with gr.Row():
                    page.share_button = gr.Button(
                        "🔗 Copy a link to this state", size="sm", elem_id="share-button"
                    )
                    page.share_link = gr.Textbox(
                        label="Link",
                        show_label=False,
                        interactive=False,
                        elem_id="share-link",
                        scale=3,
                    )
                page.share_warning = gr.HTML(elem_id="share-warning-box")
                page.copy_code_button = gr.Button(
                    "Copy as code (parse_response / ResponseParser)",
                    size="sm",
                    elem_id="copy-code-button",
                )
                page.code_snippet = gr.Code(
                    "",
                    language="python",
                    label="The current template and input as Python (runs as it is)",
                    interactive=False,
                    max_lines=20,
                    elem_id="code-snippet",
                )
                with gr.Row():
                    page.state_file = gr.File(label="State file (download)", elem_id="state-file")
                    page.state_upload = gr.File(
                        label="Restore a state file (upload)",
                        file_types=[".json"],
                        type="filepath",
                        elem_id="state-upload",
                    )
        with gr.Column(scale=7, min_width=340, elem_id="results-column"):
            page.status = gr.HTML(first["status"], elem_id="status")
            with gr.Row(elem_id="replay-bar"):
                page.back_button = gr.Button(
                    "◁ Back", size="sm", elem_id="step-back-button", min_width=60
                )
                page.step_button = gr.Button(
                    "Step ▷", size="sm", elem_id="step-button", min_width=60
                )
                page.play_button = gr.Button(
                    "Play ▶", size="sm", elem_id="play-button", min_width=60
                )
                page.stop_play_button = gr.Button(
                    "Stop ■", size="sm", elem_id="stop-play-button", min_width=60
                )
                page.scrubber = gr.Slider(
                    0,
                    first["scrubber"]["maximum"],
                    value=0,
                    step=1,
                    label="chunk",
                    elem_id="replay-scrubber",
                    min_width=180,
                    scale=3,
                )
            with gr.Accordion(
                "Replay settings: chunking and speed", open=False, elem_id="replay-settings"
            ):
                page.chunking = gr.Radio(
                    [(label, key) for key, label in CHUNKINGS.items()],
                    value="chars",
                    label="Chunking",
                    elem_id="chunking",
                )
                with gr.Row():
                    page.chunk_size = gr.Number(
                        1, label="N (characters)", precision=0, minimum=1, elem_id="chunk-size"
                    )
                    page.chunk_seed = gr.Number(0, label="Seed", precision=0, elem_id="chunk-seed")
                    page.split_points = gr.Textbox(
                        label="Split points (offsets)",
                        placeholder="5, 12, 40",
                        elem_id="split-points",
                    )
                page.speed = gr.Slider(
                    0,
                    200,
                    value=40,
                    step=1,
                    label="Play speed (chunks per second; 0 = as fast as possible)",
                    elem_id="speed",
                )
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
                    label="Show token boundaries",
                    elem_id="show-tokens",
                    min_width=190,
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
            with gr.Tabs(
                selected="message", elem_id="results", overflow_behavior="wrap"
            ) as page.results_tabs:
                with gr.Tab("Message", id="message"):
                    page.value_changes = gr.HTML(
                        first["value_changes"], elem_id="value-changes-panel"
                    )
                    with gr.Row():
                        page.message_json = gr.Code(
                            first["message_json"],
                            language="json",
                            label="Message",
                            interactive=False,
                            max_lines=24,
                            elem_id="message-json",
                        )
                        page.chat = gr.Chatbot(
                            first["chat"], label="As a chat shows it", height=360, elem_id="chat"
                        )
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
                    page.event_log = gr.HTML(
                        first["event_log"], elem_id="event-log", js_on_load=EVENT_LOG_JS
                    )
                with gr.Tab("Matches", id="matches"):
                    page.matches = gr.HTML(elem_id="matches", js_on_load=MATCH_LIST_JS)
                with gr.Tab("initial_events", id="initial"):
                    page.initial_events = gr.Code(
                        first["initial_events"],
                        language="json",
                        label="Events from the prefix",
                        interactive=False,
                        max_lines=24,
                        elem_id="initial-events",
                    )
                with gr.Tab("OpenAI stream", id="openai"):
                    page.openai_stream = gr.Code(
                        "",
                        language="json",
                        label="Chat-completion deltas",
                        interactive=False,
                        max_lines=24,
                        elem_id="openai-stream",
                    )
                with gr.Tab("Stream checks", id="checks"):
                    page.stream_check = gr.HTML(report_html(None), elem_id="stream-check")
                with gr.Tab("Tests", id="tests"):
                    page.test_results = gr.HTML(first["test_results"], elem_id="test-results")
                    with gr.Row():
                        page.add_case_button = gr.Button(
                            "Add the current input as a test case",
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
                    with gr.Accordion(
                        "Test cases (JSON: name, prefix, generation, expected)", open=False
                    ):
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
    page.reparse_button = gr.Button("re-parse", visible="hidden", elem_id="reparse-button")

    # Wiring: each handler reads and writes components by name (playground.wiring).
    opened = demo.load(query_params, None, page.params, api_visibility="private", queue=False)
    demo.unload(session_closed)  # a closed page's parses are freed at once
    page.listen(opened.then, handlers.open_page)
    page.listen(page.sample_id.input, handlers.load_sample)
    page.listen(page.sample_rows.click, handlers.load_sample_at)
    page.listen(page.parse_button.click, handlers.parse)
    page.listen(
        page.reparse_button.click,
        handlers.parse,
        trigger_mode="always_last",
        show_progress="hidden",
    )
    for display_option in (
        page.hide_chunks,
        page.show_whitespace,
        page.show_tokens,
        page.log_field,
    ):
        page.listen(display_option.change, handlers.set_display, show_progress="hidden")
    page.listen(page.log_search.submit, handlers.set_display, show_progress="hidden")
    page.listen(page.log_page.submit, handlers.set_display, show_progress="hidden")
    page.listen(page.region_map.click, handlers.explain_span, show_progress="hidden")
    page.listen(page.explain.click, handlers.show_event, show_progress="hidden")
    page.listen(page.event_log.click, handlers.show_event, show_progress="hidden")
    page.listen(page.modes.select, handlers.select_tab, queue=False)
    page.listen(page.results_tabs.select, handlers.select_results_tab, show_progress="hidden")
    page.listen(page.template_choice.input, handlers.choose_template)
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
    page.listen(page.export_button.click, handlers.export_template, work="export")
    page.listen(page.infer_button.click, handlers.infer_chat_template, work="infer")
    page.listen(page.inference.click, handlers.inference_click, show_progress="hidden")
    page.listen(page.check_button.click, handlers.check_chat_template, work="conformance")
    page.listen(page.conformance.click, handlers.load_check_row)
    page.listen(page.fit_button.click, handlers.fit_templates, work="fit")
    page.listen(page.use_best_button.click, handlers.use_best)
    page.listen(
        page.test_cases_text.input,
        handlers.run_tests,
        trigger_mode="always_last",
        show_progress="hidden",
    )
    page.listen(page.add_case_button.click, handlers.add_test_case)
    page.listen(page.export_cases_button.click, handlers.export_cases, work="export")
    page.listen(page.compare_button.click, handlers.compare_reference, work="reference")
    page.listen(page.step_button.click, handlers.replay_step, work="replay")
    page.listen(page.back_button.click, handlers.replay_back, work="replay")
    page.listen(page.scrubber.release, handlers.replay_seek, work="replay")
    page.listen(page.play_button.click, handlers.replay_play, work="replay")
    page.listen(
        page.stop_play_button.click, handlers.replay_stop, queue=False, show_progress="hidden"
    )
    page.listen(page.generate_button.click, live.generate, work="model")
    page.listen(page.stop_button.click, live.request_stop, queue=False)
    page.listen(page.use_model_button.click, live.use_model_template_now, work="model")

    # The model's background load (started by main()) shows its progress until it ends.
    def show_load_status(model_name: str):
        text, ended = live.load_status(model_name)
        return text, gr.Timer(active=not ended)

    # Shown once the page has opened, then on each tick of the timer.
    for listen in (model_status_timer.tick, opened.then):
        listen(
            show_load_status,
            page.model_name,
            [model_status, model_status_timer],
            queue=False,
            show_progress="hidden",
            api_visibility="private",
        )
    page.listen(page.share_button.click, handlers.share).then(
        None, page.share_link, page.share_link, js=SHARE_JS
    )
    page.listen(page.state_upload.upload, handlers.upload_state)
    page.listen(page.copy_code_button.click, handlers.copy_as_code).then(
        None, page.code_snippet, None, js=COPY_JS
    )

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
    live.start_loading(args.model or "", keep=True)
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
            "middleware": [Middleware(admission.RequestSizeCap), Middleware(uploads.UploadQuota)]
        },
    )


if __name__ == "__main__":
    main()
