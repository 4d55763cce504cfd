"""Ready templates (`templates/`) and the samples that prove them (`samples/`).

One loader for the tests and the app, so both read the files the same way.
The formats are documented in `samples/README.md` and in
`templates/template_file.schema.json`. Nothing here parses a generation; it
only reads, checks the shape of, and resolves the JSON files.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
TEMPLATES_DIR = REPO_ROOT / "templates"
SAMPLES_DIR = REPO_ROOT / "samples"

# Files in templates/ that describe the format rather than a model family.
_SCHEMA_SUFFIX = ".schema.json"

_CASE_KEYS = {
    "name", "description", "prefix", "generation", "tools", "chunks", "template",
    "expected", "expected_error", "needs", "covers",
}
_SAMPLE_FILE_KEYS = {"family", "template", "description", "cases", "uncovered"}


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


@dataclass(frozen=True)
class Sample:
    """One case of a `samples/<family>.json` file, with its template resolved.

    - `template`: the response template dict used for this case (the family's,
      another file's when the case names one, or the case's inline dict).
    - `template_name`: the template file's name, or "<inline>".
    - `prefix`: the prompt text exactly as the chat template renders it with
      `add_generation_prompt=True`; `generation`: the raw model output.
    - `tools`: JSON-schema tools for argument casting, or None.
    - `chunks`: an explicit chunking of `generation` (e.g. real token
      boundaries), or None.
    - `expected`: the message; None exactly when `expected_error` (a
      substring of the error message) is set.
    - `needs`: deliberate differences from the reference (SPEC section 8,
      e.g. "D1") that the expected message depends on.
    - `covers`: the coverage topics this case exercises (see README).
    """

    family: str
    name: str
    description: str
    template: dict
    template_name: str
    prefix: str
    generation: str
    tools: list | None = None
    chunks: tuple[str, ...] | None = None
    expected: dict | None = None
    expected_error: str | None = None
    needs: tuple[str, ...] = ()
    covers: tuple[str, ...] = ()
    source: Path | None = field(default=None, compare=False)

    @property
    def id(self) -> str:
        """A stable test id: `family/case-name`."""
        return f"{self.family}/{self.name}"


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


def _resolve_template(where: str, reference: Any, cache: dict[str, TemplateFile]) -> tuple[dict, str]:
    if isinstance(reference, dict):
        return reference, "<inline>"
    if not isinstance(reference, str):
        raise ValueError(f"{where}: 'template' must be a template name or an inline template object")
    if reference not in cache:
        try:
            cache[reference] = load_template_file(reference)
        except FileNotFoundError as error:
            raise ValueError(f"{where}: unknown template {reference!r}: {error}") from error
    return cache[reference].response_template, reference


def _load_sample_file(path: Path, cache: dict[str, TemplateFile]) -> list[Sample]:
    data = _read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
        raise ValueError(f"{path}: a sample file is an object with a 'cases' list")
    if unknown := set(data) - _SAMPLE_FILE_KEYS:
        raise ValueError(f"{path}: unknown keys {sorted(unknown)}")
    family = data.get("family", path.stem)
    samples = []
    names = set()
    for index, case in enumerate(data["cases"]):
        where = f"{path.name} case {case.get('name', index) if isinstance(case, dict) else index!r}"
        if not isinstance(case, dict):
            raise ValueError(f"{where}: a case is an object")
        if unknown := set(case) - _CASE_KEYS:
            raise ValueError(f"{where}: unknown keys {sorted(unknown)}")
        for key in ("name", "prefix", "generation"):
            if not isinstance(case.get(key), str):
                raise ValueError(f"{where}: '{key}' must be a string")
        if case["name"] in names:
            raise ValueError(f"{where}: duplicate case name")
        names.add(case["name"])
        if ("expected" in case) == ("expected_error" in case):
            raise ValueError(f"{where}: give exactly one of 'expected' and 'expected_error'")
        chunks = case.get("chunks")
        if chunks is not None and "".join(chunks) != case["generation"]:
            raise ValueError(f"{where}: 'chunks' do not concatenate to 'generation'")
        template, template_name = _resolve_template(where, case.get("template", data.get("template", family)), cache)
        samples.append(
            Sample(
                family=family,
                name=case["name"],
                description=case.get("description", ""),
                template=template,
                template_name=template_name,
                prefix=case["prefix"],
                generation=case["generation"],
                tools=case.get("tools"),
                chunks=tuple(chunks) if chunks is not None else None,
                expected=case.get("expected"),
                expected_error=case.get("expected_error"),
                needs=tuple(case.get("needs", ())),
                covers=tuple(case.get("covers", ())),
                source=path,
            )
        )
    return samples


def load_samples(directory: str | Path | None = None) -> list[Sample]:
    """Every case of every `*.json` file in `directory` (default: the repo's
    `samples/`), in file then case order.

    Raises ValueError naming the file and case when a case is malformed or
    names a template that does not exist.
    """
    root = Path(directory) if directory is not None else SAMPLES_DIR
    cache: dict[str, TemplateFile] = {}
    samples: list[Sample] = []
    for path in sorted(root.glob("*.json")):
        samples.extend(_load_sample_file(path, cache))
    return samples


def load_sample_file_metadata(path: str | Path) -> dict:
    """The file-level keys of one sample file (family, template, description,
    uncovered): what the coverage test needs besides the cases."""
    data = _read_json(Path(path))
    return {key: value for key, value in data.items() if key != "cases"}
