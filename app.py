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

import gradio as gr

from playground import api, handlers, live
from playground.catalog import DEFAULT_SAMPLE, EDITED_TEMPLATE, INLINE_TEMPLATE, sample_table, samples_by_id, template_names, template_text_of
from playground.chunking import CHUNKINGS, DEMO_MODEL_PATH
from playground.limits import LIMITS, queue_options
from playground.page_script import SHARE_JS
from playground.session import Session, new_session
from playground.status import badge
from playground.styles import PAGE_CSS
from playground.template_editor import check_template
from playground.wiring import Page, query_params

first = handlers.load_sample(DEFAULT_SAMPLE, False, Session())
DEFAULT_LIVE_TOOLS = template_text_of(samples_by_id()[DEFAULT_SAMPLE].tools)

with gr.Blocks(title="Response Template Playground") as demo:
    page = Page()
    gr.Markdown(
        "# Response Template Playground\n"
        "A **response template** turns a chat model's raw output back into a message "
        "(`reasoning_content`, `content`, `tool_calls`). Pick a sample, paste your own output, "
        "edit the template, or generate live — and see where every character went."
    )
    page.session = gr.State(new_session)
    with gr.Row():
        with gr.Column(scale=5, min_width=380):
            with gr.Tabs(selected="samples", elem_id="modes") as page.modes:
                with gr.Tab("Samples", id="samples", elem_id="tab-samples"):
                    page.sample_id = gr.Dropdown(
                        list(samples_by_id()), value=first["sample_id"], label="Sample", elem_id="sample-picker", filterable=True
                    )
                    page.sample_rows = gr.Dataset(
                        components=[gr.Textbox(visible=False)] * 3, headers=["family", "case", "what it shows"],
                        samples=sample_table(), type="index", samples_per_page=12, label="Click a case to load it",
                        elem_id="sample-table",
                    )
                with gr.Tab("Paste & parse", id="paste", elem_id="tab-paste"):
                    page.prefix = gr.Textbox(first["prefix"], label="Prefix (the prompt, special tokens included)", lines=3, max_lines=8, elem_id="prefix")
                    page.generation = gr.Textbox(first["generation"], label="Generation (raw model output)", lines=6, max_lines=16, elem_id="generation")
                    page.tools_text = gr.Code(first["tools_text"], language="json", label="Tools (JSON schemas, optional)", lines=3, max_lines=10, elem_id="tools")
                    page.template_choice = gr.Dropdown(
                        [*template_names(), INLINE_TEMPLATE, EDITED_TEMPLATE], value=first["template_choice"],
                        label="Template (from templates/; edit it in the Template tab)", elem_id="template-choice",
                    )
                    page.parse_button = gr.Button("Parse", variant="primary", elem_id="parse-button")
                    with gr.Accordion("Replay as a stream", open=True):
                        with gr.Row():
                            page.chunking = gr.Radio([(label, key) for key, label in CHUNKINGS.items()], value="chars", label="Chunking", elem_id="chunking")
                        with gr.Row():
                            page.chunk_size = gr.Number(1, label="N (characters)", precision=0, minimum=1, elem_id="chunk-size")
                            page.chunk_seed = gr.Number(0, label="Seed", precision=0, elem_id="chunk-seed")
                            page.split_points = gr.Textbox(label="Split points (offsets)", placeholder="5, 12, 40", elem_id="split-points")
                        page.speed = gr.Slider(0, 200, value=40, step=1, label="Play speed (chunks per second; 0 = as fast as possible)", elem_id="speed")
                        with gr.Row():
                            page.step_button = gr.Button("Step ▷", elem_id="step-button")
                            page.play_button = gr.Button("Play ▶", elem_id="play-button")
                            page.stop_play_button = gr.Button("Stop ■", elem_id="stop-play-button")
                with gr.Tab("Generate live", id="live", elem_id="tab-live"):
                    page.model_name = gr.Textbox(str(DEMO_MODEL_PATH.relative_to(DEMO_MODEL_PATH.parent.parent)), label="Model (local folder or hub id; default: the bundled demo model)", elem_id="model-name")
                    page.system = gr.Textbox("", label="System (optional)", lines=1, elem_id="system")
                    page.user = gr.Textbox("What's the weather in Paris?", label="User", lines=2, elem_id="user")
                    page.messages_text = gr.Code("", language="json", label="…or a messages JSON (wins when given)", lines=2, max_lines=8, elem_id="messages")
                    page.live_tools_text = gr.Code(DEFAULT_LIVE_TOOLS, language="json", label="Tools (JSON schemas, optional)", lines=3, max_lines=8, elem_id="live-tools")
                    with gr.Row():
                        page.enable_thinking = gr.Checkbox(False, label="enable_thinking", elem_id="enable-thinking")
                        page.use_model_template = gr.Checkbox(True, label="Use the model's template (tokenizer's own, else templates/)", elem_id="use-model-template")
                    with gr.Row():
                        page.max_new_tokens = gr.Slider(1, LIMITS.max_new_tokens, value=200, step=1, label="max_new_tokens", elem_id="max-new-tokens")
                        page.temperature = gr.Slider(0, 2, value=0.7, step=0.05, label="temperature", elem_id="temperature")
                    with gr.Row():
                        page.top_p = gr.Slider(0.05, 1, value=0.9, step=0.05, label="top_p", elem_id="top-p")
                        page.seed = gr.Number(0, label="seed", precision=0, elem_id="seed")
                    with gr.Row():
                        page.generate_button = gr.Button("Generate", variant="primary", elem_id="generate-button")
                        page.stop_button = gr.Button("Stop", variant="stop", elem_id="stop-button")
                    page.model_note = gr.Markdown(elem_id="model-note")
                with gr.Tab("Template", id="template", elem_id="tab-template"):
                    page.start_from = gr.Dropdown(template_names(), value=None, label="Start from templates/", elem_id="start-from")
                    page.template_text = gr.Code(first["template_text"], language="json", label="Response template", lines=18, max_lines=40, elem_id="template-editor")
                    page.diagnostics = gr.HTML(check_template(first["template_text"]), elem_id="template-diagnostics")
                    with gr.Row():
                        page.format_button = gr.Button("Format", elem_id="format-button")
                        page.reset_button = gr.Button("Reset", elem_id="reset-button")
                        page.export_button = gr.Button("Download / export", elem_id="export-button")
                    with gr.Row():
                        page.template_file = gr.File(label="response_template.json", elem_id="template-file")
                        page.tokenizer_config_file = gr.File(label="tokenizer_config.json (response_template key)", elem_id="tokenizer-config-file")
        with gr.Column(scale=7, min_width=480):
            page.status = gr.HTML(first["status"], elem_id="status")
            page.figures = gr.HTML(first["figures"], elem_id="live-figures")
            page.region_map = gr.HTML(first["region_map"], label="Region map", elem_id="region-map")
            with gr.Tabs():
                with gr.Tab("Message"):
                    with gr.Row():
                        page.message_json = gr.Code(first["message_json"], language="json", label="Final message", interactive=False, elem_id="message-json")
                        page.chat = gr.Chatbot(first["chat"], label="As a chat shows it", height=360, elem_id="chat")
                with gr.Tab("Event log"):
                    page.hide_chunks = gr.Checkbox(False, label="Hide chunk events", elem_id="hide-chunks")
                    page.event_log = gr.HTML(first["event_log"], elem_id="event-log")
                with gr.Tab("initial_events"):
                    page.initial_events = gr.Code(first["initial_events"], language="json", label="Events from the prefix", interactive=False, elem_id="initial-events")
                with gr.Tab("OpenAI stream"):
                    page.openai_stream = gr.Code(first["openai_stream"], language="json", label="Chat-completion deltas", interactive=False, elem_id="openai-stream")
                with gr.Tab("Stream checks"):
                    page.stream_check = gr.HTML(badge(None, "replay (Step or Play) to check streaming against one-shot parsing"), elem_id="stream-check")
                    page.stream_check_details = gr.Markdown(elem_id="stream-check-details")
            with gr.Row():
                page.share_button = gr.Button("🔗 Copy a link to this state", size="sm", elem_id="share-button")
                page.share_link = gr.Textbox(label="Link", show_label=False, interactive=False, elem_id="share-link", scale=3)
    page.params = gr.State({})

    # Wiring: each handler reads and writes components by name (playground.wiring).
    opened = demo.load(query_params, None, page.params, api_visibility="private", queue=False)
    page.listen(opened.then, handlers.open_page)
    page.listen(page.sample_id.input, handlers.load_sample)
    page.listen(page.sample_rows.click, handlers.load_sample_at)
    page.listen(page.parse_button.click, handlers.parse)
    page.listen(page.hide_chunks.change, handlers.rerender)
    page.listen(page.step_button.click, handlers.replay_step, work="replay")
    playing = page.listen(page.play_button.click, handlers.replay_play, work="replay")
    page.stop_play_button.click(None, cancels=[playing])
    page.listen(page.template_choice.input, handlers.choose_template)
    page.listen(page.start_from.input, handlers.start_from)
    page.listen(page.template_text.change, handlers.diagnose, trigger_mode="always_last", show_progress="hidden")
    page.listen(page.template_text.input, handlers.edit_template, trigger_mode="always_last", show_progress="hidden")
    page.listen(page.format_button.click, handlers.format_editor)
    page.listen(page.reset_button.click, handlers.reset_template)
    page.listen(page.export_button.click, handlers.export_template, work="export")
    page.listen(page.generate_button.click, live.generate, work="generation")
    page.listen(page.stop_button.click, live.request_stop, queue=False)
    page.listen(page.share_button.click, handlers.share).then(None, page.share_link, page.share_link, js=SHARE_JS)

    # The public API: stable names, JSON in and out (playground.api).
    gr.api(api.parse, api_name="parse", **queue_options("parse"))
    gr.api(api.replay, api_name="replay", **queue_options("replay"))
    gr.api(api.generate, api_name="generate", **queue_options("generation"))
    gr.api(api.lint, api_name="lint", **queue_options("parse"))
    gr.api(api.export, api_name="export", **queue_options("export"))
    gr.api(api.load_sample, api_name="load_sample", **queue_options("parse"))

demo.queue(default_concurrency_limit=8, max_size=64)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="model folder or hub id for Generate live (default: the bundled demo model)")
    parser.add_argument("--share", action="store_true", help="create a public gradio.live link")
    args = parser.parse_args()
    if args.model:
        page.model_name.value = args.model
    logging.basicConfig(level=logging.INFO)
    demo.launch(share=args.share, css=PAGE_CSS, show_error=False)


if __name__ == "__main__":
    main()
