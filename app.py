"""Response Template Playground (minimal page until the full playground lands)."""

import json

import gradio as gr

from engine import parse_response


def parse_pasted(template_json: str, prefix: str, generation: str) -> tuple[dict, str]:
    """Parse `generation` with the template given as JSON text; return (message, error text)."""
    try:
        return parse_response(generation, json.loads(template_json), prefix=prefix), ""
    except ValueError as error:
        return {}, str(error)


with gr.Blocks(title="Response Template Playground") as demo:
    template = gr.Code(language="json", label="Response template")
    prefix = gr.Textbox(label="Prefix (prompt)")
    generation = gr.Textbox(label="Generation", lines=6)
    button = gr.Button("Parse")
    message = gr.JSON(label="Message")
    error = gr.Markdown()
    button.click(parse_pasted, [template, prefix, generation], [message, error])

if __name__ == "__main__":
    demo.launch()
