"""Generate live: a model's output parsed as its tokens arrive, its settings, and the model's
background load shown until it ends."""

from __future__ import annotations

import gradio as gr

from .. import handlers
from ..catalog import DEFAULT_SAMPLE, samples_by_id, template_text_of
from ..handlers import generate_live as live
from ..model.loaded import load_status
from ..parse.chunking import DEMO_MODEL_PATH
from ..server.limits import LIMITS
from ..wiring import Page

DEFAULT_LIVE_TOOLS = template_text_of(samples_by_id()[DEFAULT_SAMPLE].tools)
USE_MODEL_TEMPLATE_LABEL = (
    "Use the model's template (tokenizer's own, else templates/); an edited template is kept"
)


def build(page: Page) -> None:
    """The Generate live tab: the model, the user's message, Generate, Stop and Use as example
    (the output just generated added to Tests, for Infer), the model's note
    and load status (`page.model_status`, refreshed by `page.model_status_timer`), the settings."""
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
            # Neutral while nothing runs; the page script turns it red while Generate runs.
            page.stop_button = gr.Button("Stop", variant="secondary", elem_id="stop-button")
            # One click: the output just generated becomes one of the author's outputs in
            # Tests, an example Infer sends (Start from a model).
            page.use_live_example_button = gr.Button(
                "Use as example", elem_id="use-as-example-button"
            )
        page.live_example_note = gr.Markdown(elem_id="live-example-note")
        page.model_note = gr.Markdown(elem_id="model-note")
        page.use_model_button = gr.Button(
            "Use the model's template",
            size="sm",
            visible=False,
            elem_id="use-model-button",
        )
        page.model_status = gr.Markdown(elem_id="model-status")
        page.model_status_timer = gr.Timer(0.5)
        _settings(page)


def _settings(page: Page) -> None:
    """Generation settings: system, messages, tools, thinking, sampling (closed at first)."""
    with gr.Accordion(
        "Generation settings: system, messages, tools, thinking, sampling",
        open=False,
        elem_id="live-settings",
    ):
        page.system = gr.Textbox("", label="System (optional)", lines=1, elem_id="system")
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
                True, label=USE_MODEL_TEMPLATE_LABEL, elem_id="use-model-template"
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
        _sampling(page)


def _sampling(page: Page) -> None:
    """The sampling settings: max_new_tokens (up to PLAYGROUND_LIMITS `max_new_tokens`),
    temperature, top_p, seed."""
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
            0, 2, value=0.7, step=0.05, label="temperature", elem_id="temperature"
        )
    with gr.Row():
        page.top_p = gr.Slider(0.05, 1, value=0.9, step=0.05, label="top_p", elem_id="top-p")
        page.seed = gr.Number(0, label="seed", precision=0, elem_id="seed")


def show_load_status(model_name: str):
    """The model's background load (started by `app.main`): its progress as Markdown, and the
    status timer, kept ticking until the load ends."""
    text, ended = load_status(model_name)
    return text, gr.Timer(active=not ended)


def wire(page: Page, opened) -> None:
    """Generate, Stop, Use as example and Use the model's template; the load status, shown once the page has
    opened (`opened`: the page's load event) and then on each tick of its timer."""
    page.listen(page.generate_button.click, live.generate, work="model")
    page.listen(page.stop_button.click, live.request_stop, queue=False)
    page.listen(page.use_model_button.click, live.use_model_template_now, work="model")
    page.listen(page.use_live_example_button.click, handlers.use_live_output)
    for listen in (page.model_status_timer.tick, opened.then):
        listen(
            show_load_status,
            page.model_name,
            [page.model_status, page.model_status_timer],
            queue=False,
            show_progress="hidden",
            api_visibility="private",
        )
