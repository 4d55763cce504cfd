"""Download / export: the template as a file, merged into the model's tokenizer_config.json.

A tokenizer_config.json holds much more than the template (special tokens,
the chat template, model limits); the export sets its `response_template` key
and keeps every other key as it was, in the same order. Without an uploaded
file it writes one holding only `response_template`, to merge by hand.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from engine import load_template

from .catalog import template_text_of
from .limits import InputError, read_template

# Largest tokenizer_config.json accepted (bytes); real ones are a few hundred KB at most.
MAX_CONFIG_BYTES = 20_000_000


def merged_config(template: dict, config_text: str | None) -> dict:
    """The tokenizer config with `response_template` set (a new one when `config_text` is None).

    Raises InputError when the config is not a JSON object.
    """
    if config_text is None:
        return {"response_template": template}
    try:
        config = json.loads(config_text)
    except ValueError as error:
        raise InputError(f"The uploaded tokenizer_config.json is not JSON ({error}).") from None
    if not isinstance(config, dict):
        raise InputError("The uploaded tokenizer_config.json must be a JSON object.")
    config["response_template"] = template  # an existing key keeps its place
    return config


def read_config_file(path: str | None) -> str | None:
    """The text of an uploaded tokenizer_config.json, or None when none was uploaded."""
    if not path:
        return None
    file = Path(path)
    if file.stat().st_size > MAX_CONFIG_BYTES:
        raise InputError(f"The uploaded tokenizer_config.json is too large ({file.stat().st_size:,} bytes).")
    try:
        return file.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError("The uploaded tokenizer_config.json is not UTF-8 text.") from None


def export_files(text: str, config_path: str | None = None) -> tuple[str, str]:
    """Write (response_template.json, tokenizer_config.json) for editor `text`; return their paths.

    Raises InputError / TemplateError for a template that does not load or a config that is not JSON.
    """
    template = read_template(text)
    load_template(template)
    config = merged_config(template, read_config_file(config_path))
    folder = Path(tempfile.mkdtemp(prefix="response-template-"))
    template_path = folder / "response_template.json"
    template_path.write_text(template_text_of(template) + "\n", encoding="utf-8")
    out_path = folder / "tokenizer_config.json"
    out_path.write_text(json.dumps(config, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return str(template_path), str(out_path)
