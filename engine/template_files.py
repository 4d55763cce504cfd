"""Shipped template files: `templates/<name>.json`, a response template plus notes for people.

A template file wraps the response template (the object that goes into
`tokenizer_config.json`) with its name, description, the models it is for and
the generation prompt their chat template writes. The format is
`templates/template_file.schema.json`.

The files ship inside the installed package (`engine/templates/`) and live in
`templates/` of a checkout; `TEMPLATES_DIR` is whichever exists, so
`engine.load_template("qwen3")` works in both.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .template import is_template_file_data

REPO_ROOT = Path(__file__).resolve().parent.parent


def shipped_folder(name: str) -> Path:
    """A folder of shipped JSON files: package data beside this module once installed
    (``engine/<name>``), the repository's ``<name>/`` in a checkout."""
    installed = Path(__file__).resolve().parent / name
    return installed if installed.is_dir() else REPO_ROOT / name


TEMPLATES_DIR = shipped_folder("templates")

# Files in templates/ that describe the format rather than a model family.
_SCHEMA_SUFFIX = ".schema.json"


@dataclass(frozen=True)
class TemplateFile:
    """One `templates/<name>.json`: a response template plus metadata for people.

    Attributes:
        name: the family name (the file name without ``.json``).
        description: a sentence for people.
        models: Hugging Face model ids the template fits.
        generation_prompt: what the family's chat template writes with
            `add_generation_prompt=True` (the tail of the prefix a caller must pass).
        notes: what the format cannot express for this family.
        response_template: the object that goes into tokenizer_config.json (the other
            attributes never do).
        path: the file.
    """

    name: str
    description: str
    models: tuple[str, ...]
    generation_prompt: str
    notes: tuple[str, ...]
    response_template: dict
    path: Path


def read_json(path: Path) -> Any:
    """The JSON value in file `path` (UTF-8).

    Raises:
        ValueError: the file is not valid JSON (the message names the file and where).
        OSError: the file cannot be read.
    """
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: not valid JSON: {error}") from error


def template_file_path(name_or_path: str | Path) -> Path:
    """The file a shipped template's name (``"qwen3"``) or a path names.

    Raises:
        FileNotFoundError: no such file (the message lists the shipped names).
    """
    candidate = Path(name_or_path)
    if candidate.suffix == ".json" or candidate.parent != Path("."):
        path = candidate
    else:
        path = TEMPLATES_DIR / f"{name_or_path}.json"
    if not path.is_file():
        raise FileNotFoundError(
            f"no template file {path} (shipped templates: {', '.join(template_names())})"
        )
    return path


def load_template_file(name_or_path: str | Path) -> TemplateFile:
    """Load `templates/<name>.json` by family name, or any wrapper file by path.

    The response template itself is not validated here; `engine.load_template` does that.

    Raises:
        FileNotFoundError: no such file.
        ValueError: the file is not JSON, or lacks `response_template` or a metadata key.
    """
    path = template_file_path(name_or_path)
    data = read_json(path)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a template file is a JSON object")
    missing = [
        key
        for key in ("name", "description", "models", "generation_prompt", "response_template")
        if key not in data
    ]
    if missing:
        raise ValueError(f"{path}: missing keys {missing}")
    if not isinstance(data["response_template"], dict):
        raise ValueError(f"{path}: 'response_template' must be an object")
    return TemplateFile(
        name=data["name"],
        description=data["description"],
        models=tuple(data["models"]),
        generation_prompt=data["generation_prompt"],
        notes=tuple(data.get("notes", ())),
        response_template=data["response_template"],
        path=path,
    )


@functools.lru_cache(maxsize=64)
def _shipped_response_template(name: str) -> str:
    """A shipped template's response template as JSON text (read once: shipped files do not change)."""
    return json.dumps(load_template_file(name).response_template, ensure_ascii=False)


def template_source(value: Any) -> Any:
    """What `engine.load_template` compiles for `value`: the plain response template.

    * a shipped template's name (``"qwen3"``) or a path to a JSON file (plain or a
      `templates/` wrapper): the file's response template;
    * a template file's object (with ``response_template`` and its metadata keys): that
      response template;
    * JSON text, a plain dict, or anything else: returned as it is, for the loader to check.

    Raises:
        FileNotFoundError: a name or path that names no file (the message lists the shipped names).
        ValueError: the file is not valid JSON.
    """
    if isinstance(value, Path) or (
        isinstance(value, str)
        and value.strip()
        and value.lstrip()[:1] not in '{["'
        and "\n" not in value
    ):
        text = str(value)
        if isinstance(value, str) and text in template_names() and not Path(text).is_file():
            return _shipped_response_template(text)
        data = read_json(template_file_path(text))
        return data["response_template"] if is_template_file_data(data) else data
    if is_template_file_data(value):
        return value["response_template"]
    return value


def template_names() -> list[str]:
    """The names of the shipped templates, sorted (the files of `TEMPLATES_DIR`, schemas excluded)."""
    return sorted(
        p.name[: -len(".json")]
        for p in TEMPLATES_DIR.glob("*.json")
        if not p.name.endswith(_SCHEMA_SUFFIX)
    )


def list_templates() -> list[TemplateFile]:
    """Every shipped template file, sorted by name: its family name, description, models and template."""
    return [load_template_file(name) for name in template_names()]
