"""Paste & parse: the workspace every parse reads (the prefix, the generation, the tools and the
template chosen), Parse, and Which template fits?"""

from __future__ import annotations

import gradio as gr

from .. import handlers
from ..catalog import EDITED_TEMPLATE, INLINE_TEMPLATE, template_names
from ..panels.page_script import MARK_SPELLED_JS
from ..parse.token_reading import READ_AS_TEXT, READ_CHOICES
from ..wiring import Page

MONO = ["rt-mono"]


def build(page: Page, first: dict) -> None:
    """The Paste & parse tab, filled from `first` (the first sample's loaded page)."""
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
        with gr.Row(equal_height=False, elem_id="reading-row"):
            page.read_as = gr.Radio(
                list(READ_CHOICES),
                value=READ_AS_TEXT,
                label="Read the output as",
                info="as token ids, a control token is a delimiter only when it is its own id",
                elem_id="read-as",
                scale=2,
            )
            page.spelled_out = gr.Textbox(
                "",
                label="Spelled out (start:end, one a line)",
                info="read as ids, these stretches are written with ordinary tokens, as a model "
                "quoting a tag in prose writes them",
                lines=1,
                max_lines=4,
                elem_id="spelled-out",
                elem_classes=MONO,
                scale=2,
            )
            page.mark_spelled_button = gr.Button(
                "Mark selection as spelled out",
                elem_id="mark-spelled-button",
                scale=1,
                min_width=160,
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
            page.parse_button = gr.Button("Parse", variant="primary", elem_id="parse-button")
            page.fit_button = gr.Button("Which template fits?", elem_id="fit-button")
            page.use_best_button = gr.Button(
                "Use the best", visible=False, elem_id="use-best-button"
            )
        page.fits = gr.HTML(elem_id="fits")


def reparse_button(page: Page) -> None:
    """The hidden button the page's script clicks to re-parse once an edit of the workspace or the
    editor pauses, or at once after a paste (last on the page, outside both columns)."""
    page.reparse_button = gr.Button("re-parse", visible="hidden", elem_id="reparse-button")


def wire(page: Page) -> None:
    page.listen(page.parse_button.click, handlers.parse)
    page.listen(
        page.reparse_button.click,
        handlers.parse,
        trigger_mode="always_last",
        show_progress="hidden",
    )
    page.listen(page.template_choice.input, handlers.choose_template)
    # "Read as" and "Spelled out" are display options too: wired with them (region_map.wire).
    # The selected text of the generation box becomes a range of the box, then parses again.
    marked = page.mark_spelled_button.click(
        None, page.spelled_out, page.spelled_out, js=MARK_SPELLED_JS
    )
    page.listen(marked.then, handlers.set_view)  # every display option drawn with the new reading
    page.listen(page.fit_button.click, handlers.fit_templates, work="fit")
    page.listen(page.use_best_button.click, handlers.use_best)
