"""The replay: the bar that steps, plays and seeks through the generation a chunk at a time,
and how the generation is cut into chunks and how fast Play goes."""

from __future__ import annotations

import gradio as gr

from .. import handlers
from ..parse.chunking import CHUNKINGS
from ..wiring import Page


def build(page: Page, first: dict) -> None:
    """The replay bar (Back, Step, Play, Stop, the chunk scrubber up to `first`'s last chunk)
    and the replay settings (closed)."""
    with gr.Row(elem_id="replay-bar"):
        page.back_button = gr.Button("◁ Back", size="sm", elem_id="step-back-button", min_width=60)
        page.step_button = gr.Button("Step ▷", size="sm", elem_id="step-button", min_width=60)
        page.play_button = gr.Button("Play ▶", size="sm", elem_id="play-button", min_width=60)
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
    with gr.Accordion("Replay settings: chunking and speed", open=False, elem_id="replay-settings"):
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


def wire(page: Page) -> None:
    page.listen(page.step_button.click, handlers.replay_step, work="replay")
    page.listen(page.back_button.click, handlers.replay_back, work="replay")
    page.listen(page.scrubber.release, handlers.replay_seek, work="replay")
    page.listen(page.play_button.click, handlers.replay_play, work="replay")
    page.listen(
        page.stop_play_button.click, handlers.replay_stop, queue=False, show_progress="hidden"
    )
