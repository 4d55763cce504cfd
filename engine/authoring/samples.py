"""Samples: files of test cases that prove a template (`samples/<family>.json`).

A case is a prefix, a generation and the message (or error) the template must
give; `python -m engine check TEMPLATE SAMPLES` runs them, and the tests and
the app read the repository's `samples/` through `load_samples`. The format is
documented in `samples/README.md`. Nothing here parses a generation; it only
reads, checks the shape of, and resolves the JSON files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..labelled_output import LabelledOutput
from ..template_files import TemplateFile, load_template_file, read_json, shipped_folder

SAMPLES_DIR = shipped_folder("samples")

_CASE_KEYS = {
    "name",
    "description",
    "prefix",
    "generation",
    "tools",
    "chunks",
    "template",
    "expected",
    "expected_error",
    "needs",
    "covers",
}
_SAMPLE_FILE_KEYS = {"family", "template", "description", "cases", "uncovered"}
# What an expected message may depend on that transformers' reference parser does not do
# (samples/README.md): the comparison with the reference skips the cases that need one.
REFERENCE_DIFFERENCES = {
    "keeps-every-stretch": "the implicit field keeps every stretch of unclaimed text",
    "decode-json-strings": "the json content parser's decode_json_strings, which the reference ignores",
}


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
    - `needs`: what the expected message depends on that transformers' reference does
      not do, names of `REFERENCE_DIFFERENCES` (e.g. "keeps-every-stretch").
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

    @property
    def labelled(self) -> LabelledOutput:
        """The case as the one record of a prompt, an output and the expected message (named by
        its `id`), whose `differences` is the comparison inference and the matrix use too."""
        return LabelledOutput(
            0, self.prefix, self.generation, self.tools, self.expected, "sample", self.id
        )


def _resolve_template(
    where: str, reference: Any, cache: dict[str, TemplateFile]
) -> tuple[dict, str]:
    if isinstance(reference, dict):
        return reference, "<inline>"
    if not isinstance(reference, str):
        raise ValueError(
            f"{where}: 'template' must be a template name or an inline template object"
        )
    if reference not in cache:
        try:
            cache[reference] = load_template_file(reference)
        except FileNotFoundError as error:
            raise ValueError(f"{where}: unknown template {reference!r}: {error}") from error
    return cache[reference].response_template, reference


def load_sample_file(
    path: Path, cache: dict[str, TemplateFile], template: dict | None = None
) -> list[Sample]:
    """The cases of one sample file. `template`, when given, is the template of every case that
    does not name its own (the file's `template` and `family` are then not looked up)."""
    data = read_json(path)
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
        needs = case.get("needs", [])
        if not isinstance(needs, list) or any(name not in REFERENCE_DIFFERENCES for name in needs):
            raise ValueError(
                f"{where}: 'needs' lists names of {sorted(REFERENCE_DIFFERENCES)}, got {needs!r}"
            )
        chunks = case.get("chunks")
        if chunks is not None and "".join(chunks) != case["generation"]:
            raise ValueError(f"{where}: 'chunks' do not concatenate to 'generation'")
        if template is not None and "template" not in case:
            case_template, template_name = template, "<given>"
        else:
            case_template, template_name = _resolve_template(
                where, case.get("template", data.get("template", family)), cache
            )
        samples.append(
            Sample(
                family=family,
                name=case["name"],
                description=case.get("description", ""),
                template=case_template,
                template_name=template_name,
                prefix=case["prefix"],
                generation=case["generation"],
                tools=case.get("tools"),
                chunks=tuple(chunks) if chunks is not None else None,
                expected=case.get("expected"),
                expected_error=case.get("expected_error"),
                needs=tuple(needs),
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
        samples.extend(load_sample_file(path, cache))
    return samples


def load_sample_file_metadata(path: str | Path) -> dict:
    """The file-level keys of one sample file (family, template, description,
    uncovered): what the coverage test needs besides the cases."""
    data = read_json(Path(path))
    return {key: value for key, value in data.items() if key != "cases"}
