"""Download / export's handler: the template and tokenizer_config.json for a runtime."""

from __future__ import annotations

import time

from engine import TemplateError

from ..authoring.export import export_files
from ..outputs import (
    produces,
)
from ..panels.notes import export_note
from ..panels.status import error_html
from ..server.input_readers import InputError


@produces("template_file", "tokenizer_config_file", "export_note")
def export_template(
    template_text: str, tokenizer_config_upload: str | None, export_target: str = "transformers"
) -> dict:
    """Download / export: the template file, and tokenizer_config.json with the template merged
    in, both rewritten for the chosen runtime (what changed and what it still refuses are said)."""
    started = time.perf_counter()
    try:
        template_path, config_path, changes, remaining = export_files(
            template_text, tokenizer_config_upload, export_target or "transformers"
        )
    except (InputError, TemplateError, OSError) as error:
        return {
            "template_file": None,
            "tokenizer_config_file": None,
            "export_note": error_html(str(error)),
        }
    merged = (
        "merged into your tokenizer_config.json (its other keys kept)"
        if tokenizer_config_upload
        else (
            "a tokenizer_config.json holding only response_template: upload yours to merge into it"
        )
    )
    note = export_note(merged, (time.perf_counter() - started) * 1000, changes, remaining)
    return {
        "template_file": template_path,
        "tokenizer_config_file": config_path,
        "export_note": note,
    }
