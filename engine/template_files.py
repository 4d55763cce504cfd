"""Shipped template files: `templates/<name>.json`, a response template plus notes for people.

A template file wraps the response template (the object that goes into
`tokenizer_config.json`) with its name, description, the models it is for and
the generation prompt their chat template writes. The format is
`templates/template_file.schema.json`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
TEMPLATES_DIR = REPO_ROOT / "templates"

# Files in templates/ that describe the format rather than a model family.
_SCHEMA_SUFFIX = ".schema.json"


@dataclass(frozen=True)
class TemplateFile:
    """One `templates/<name>.json`: a response template plus metadata for people.

    `response_template` is the object that goes into tokenizer_config.json;
    the other attributes never do. `generation_prompt` is what the family's
    chat template writes with `add_generation_prompt=True` (the tail of the
    prefix a caller must pass); `notes` lists what the format cannot express.
    """

    name: str
    description: str
    models: tuple[str, ...]
    generation_prompt: str
    notes: tuple[str, ...]
    response_template: dict
    path: Path


def _read_json(path: Path) -> Any:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: not valid JSON: {error}") from error


def load_template_file(name_or_path: str | Path) -> TemplateFile:
    """Load `templates/<name>.json` by family name, or any wrapper file by path.

    Raises FileNotFoundError when no such file exists and ValueError when the
    file lacks `response_template` or a metadata key. The response template
    itself is not validated here; the engine's loader does that.
    """
    candidate = Path(name_or_path)
    if candidate.suffix == ".json" or candidate.parent != Path("."):
        path = candidate
    else:
        path = TEMPLATES_DIR / f"{name_or_path}.json"
    if not path.is_file():
        raise FileNotFoundError(f"no template file {path} (known: {', '.join(_template_names())})")
    data = _read_json(path)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a template file is a JSON object")
    missing = [key for key in ("name", "description", "models", "generation_prompt", "response_template") if key not in data]
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


def _template_names() -> list[str]:
    return sorted(p.name[: -len(".json")] for p in TEMPLATES_DIR.glob("*.json") if not p.name.endswith(_SCHEMA_SUFFIX))


def list_templates() -> list[TemplateFile]:
    """Every template file in `templates/`, sorted by name (schemas excluded)."""
    return [load_template_file(name) for name in _template_names()]


