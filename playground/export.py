"""Download / export: the template as a file, and as the `response_template` key of tokenizer_config.json."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from engine import load_template

from .catalog import template_text_of
from .limits import read_template


def export_files(text: str) -> tuple[str, str]:
    """Write (response_template.json, tokenizer_config.json) for editor `text`; return their paths.

    The tokenizer_config.json is a fragment holding the template under `response_template`.
    Raises InputError / TemplateError for a template that does not load.
    """
    template = read_template(text)
    load_template(template)
    folder = Path(tempfile.mkdtemp(prefix="response-template-"))
    template_path = folder / "response_template.json"
    template_path.write_text(template_text_of(template) + "\n", encoding="utf-8")
    config_path = folder / "tokenizer_config.json"
    config_path.write_text(json.dumps({"response_template": template}, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return str(template_path), str(config_path)

