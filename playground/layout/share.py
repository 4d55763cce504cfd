"""Share: a link to the page's state, the template and input as Python, and state files."""

from __future__ import annotations

import gradio as gr

from .. import handlers
from ..panels.page_script import COPY_JS, SHARE_JS
from ..wiring import Page


def build(page: Page) -> None:
    """The Share accordion (closed), under the input tabs."""
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


def wire(page: Page) -> None:
    """Share and Copy as code, each followed by its script in the browser (the link made whole
    from the query the handler wrote, and copied; the code copied); an uploaded state file
    restores its state."""
    page.listen(page.share_button.click, handlers.share).then(
        None, page.share_link, page.share_link, js=SHARE_JS
    )
    page.listen(page.state_upload.upload, handlers.upload_state)
    page.listen(page.copy_code_button.click, handlers.copy_as_code).then(
        None, page.code_snippet, None, js=COPY_JS
    )
