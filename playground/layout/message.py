"""The message the parse gave: as JSON and as a chat shows it (the Message tab), the events the
prefix alone gave (initial_events), and the chat-completion deltas an OpenAI-compatible server
would stream (OpenAI stream). Drawn by every parse (`playground.outputs.render`); nothing to wire."""

from __future__ import annotations

import gradio as gr

from ..wiring import Page


def build(page: Page, first: dict) -> None:
    """The Message tab: the values changed from the model's text, the message as JSON and as a
    chat, drawn from `first` (the first sample's loaded page)."""
    with gr.Tab("Message", id="message"):
        page.value_changes = gr.HTML(first["value_changes"], elem_id="value-changes-panel")
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


def initial_events(page: Page, first: dict) -> None:
    """The initial_events tab: the events the prefix gave before the generation."""
    with gr.Tab("initial_events", id="initial"):
        page.initial_events = gr.Code(
            first["initial_events"],
            language="json",
            label="Events from the prefix",
            interactive=False,
            max_lines=24,
            elem_id="initial-events",
        )


def openai_stream(page: Page) -> None:
    """The OpenAI stream tab (drawn only while shown: `handlers.select_results_tab`)."""
    with gr.Tab("OpenAI stream", id="openai"):
        page.openai_stream = gr.Code(
            "",
            language="json",
            label="Chat-completion deltas",
            interactive=False,
            max_lines=24,
            elem_id="openai-stream",
        )
