"""Download / export: the template as a file, merged into the model's tokenizer_config.json.

A tokenizer_config.json holds much more than the template (special tokens,
the chat template, model limits); the export sets its `response_template` key
and keeps every other key as it was, in the same order. Without an uploaded
file it writes one holding only `response_template`, to merge by hand.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from engine import load_template

from ..catalog import template_text_of
from ..server import limits
from ..server.downloads import write_download
from ..server.input_readers import InputError, check_json_shape, check_unicode, read_template


def check_config_size(size: int) -> None:
    """Raise InputError when a tokenizer_config.json of `size` bytes (or characters) is over
    PLAYGROUND_LIMITS `upload_mb` (real ones are a few hundred KB at most)."""
    cap = limits.current().upload_mb * 1_000_000
    if size > cap:
        raise InputError(
            f"The tokenizer_config.json is too large: {size:,} bytes (limit {cap:,}, PLAYGROUND_LIMITS upload_mb)."
        )


def merged_config(template: dict, config_text: str | None) -> dict:
    """The tokenizer config with `response_template` set (a new one when `config_text` is None).

    Raises InputError when the config is not a JSON object.
    """
    if config_text is None:
        return {"response_template": template}
    what = "The uploaded tokenizer_config.json"
    check_json_shape(config_text, what)  # its depth and size, before the tree is built
    try:
        config = json.loads(config_text)
    except json.JSONDecodeError as error:
        raise InputError(f"The uploaded tokenizer_config.json is not JSON ({error}).") from None
    except ValueError:  # a number of thousands of digits
        raise InputError(
            "The uploaded tokenizer_config.json is not JSON that can be read (a number is too long)."
        ) from None
    except RecursionError:
        raise InputError("The uploaded tokenizer_config.json is nested too deeply.") from None
    if not isinstance(config, dict):
        raise InputError("The uploaded tokenizer_config.json must be a JSON object.")
    check_unicode(config, what)
    config["response_template"] = template  # an existing key keeps its place
    return config


def read_config_file(path: str | None) -> str | None:
    """The text of an uploaded tokenizer_config.json, or None when none was uploaded."""
    if not path:
        return None
    file = Path(path)
    check_config_size(file.stat().st_size)
    try:
        return file.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError("The uploaded tokenizer_config.json is not UTF-8 text.") from None


# The runtimes the export writes for: (label, `engine.authoring.portability` target).
EXPORT_TARGETS = (
    ("this playground and transformers", "transformers"),
    ("vLLM", "vllm"),
    ("SGLang", "sglang"),
    ("vLLM's Rust parser", "vllm-rust"),
)


def for_target(template: dict, target: str) -> tuple[dict, list[str], list]:
    """`template` rewritten for runtime `target` (`engine.authoring.portability.export_for`):
    (the template, what changed, what the runtime still refuses or reads differently)."""
    from engine.authoring.portability import export_for

    exported = export_for(template, target or "transformers")
    return exported.template, exported.changes, exported.remaining


def export_files(
    text: str, config_path: str | None = None, target: str = "transformers"
) -> tuple[str, str, list[str], list]:
    """Write (response_template.json, tokenizer_config.json) for editor `text`, rewritten for
    runtime `target`; return their paths, what changed and what the runtime still refuses.

    Raises InputError / TemplateError for a template that does not load or a config that is not JSON.
    """
    ends = limits.deadline("export_seconds")
    template = read_template(text)
    load_template(template)
    template, changes, remaining = for_target(template, target)
    config = merged_config(template, read_config_file(config_path))
    if time.perf_counter() > ends:
        raise InputError(limits.over_budget("export_seconds", "The export"))
    template_path = write_download(
        "response_template.json", [template_text_of(template), "\n"], "The exported template"
    )
    out_path = write_download(
        "tokenizer_config.json",
        config_pieces(config, ends),
        "The exported tokenizer_config.json",
    )
    return template_path, out_path, changes, remaining


def config_pieces(config: dict, ends: float | None = None):
    """`config` as indented JSON, piece by piece (what `write_download` counts against its caps),
    stopping with the export's time budget."""
    for count, piece in enumerate(
        json.JSONEncoder(ensure_ascii=False, indent=2).iterencode(config), 1
    ):
        if count % 4096 == 0 and ends is not None and time.perf_counter() > ends:
            raise InputError(limits.over_budget("export_seconds", "The export"))
        yield piece
    yield "\n"
