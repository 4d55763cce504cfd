"""The shipped samples as column batches, and what in-process parsing makes of them.

Shared by the batch tests (in-process, datasets, Ray, the command line): every engine must give
exactly what `ResponseParser(...).finalize(generation)` gives row by row.
"""

from __future__ import annotations

import json

from engine import ResponseParseError, ResponseParser
from engine.batch import ERROR_SEPARATOR
from engine.samples import Sample, load_samples


def sample_groups() -> list[tuple[dict, list[Sample]]]:
    """The samples grouped by the template they are parsed with, in order of first use."""
    groups: dict[str, tuple[dict, list[Sample]]] = {}
    for sample in load_samples():
        key = json.dumps(sample.template, sort_keys=True)
        groups.setdefault(key, (sample.template, []))[1].append(sample)
    return list(groups.values())


def columns(samples: list[Sample], first_id: int = 0) -> dict[str, list]:
    """`id`, `prefix`, `output` and `tools` (JSON text, or None) columns for `samples`."""
    return {
        "id": list(range(first_id, first_id + len(samples))),
        "prefix": [sample.prefix for sample in samples],
        "output": [sample.generation for sample in samples],
        "tools": [json.dumps(sample.tools) if sample.tools is not None else None for sample in samples],
    }


def expected_row(sample: Sample, template: dict, on_error: str) -> tuple[dict | None, str | None]:
    """(message, error) as `parse_batch` must give them: in-process parsing of one sample."""
    parser = ResponseParser(template, sample.prefix, tools=sample.tools, on_error=on_error)
    try:
        message, _ = parser.finalize(sample.generation)
    except ResponseParseError as error:
        return None, str(error)
    return message, ERROR_SEPARATOR.join(str(kept) for kept in parser.errors) or None


def all_rows(on_error: str) -> tuple[list[tuple[dict, dict]], list[tuple[dict | None, str | None]]]:
    """Every sample as (template, row) with a running `id`, and the expected (message, error) of each."""
    rows, expected = [], []
    for template, samples in sample_groups():
        for sample in samples:
            row = {key: values[0] for key, values in columns([sample], len(rows)).items()}
            rows.append((template, row))
            expected.append(expected_row(sample, template, on_error))
    return rows, expected
