"""The shipped samples as column batches, and what in-process parsing makes of them.

Shared by the batch tests (in-process, datasets, Ray, the command line): every engine must give
exactly what `ResponseParser(...).finalize(generation)` gives row by row.
"""

from __future__ import annotations

import json

from engine import ResponseParseError, ResponseParser
from engine.authoring.samples import Sample, load_samples
from engine.batch.columns import ERROR_SEPARATOR


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
        "tools": [
            json.dumps(sample.tools) if sample.tools is not None else None for sample in samples
        ],
    }


def expected_row(sample: Sample, template: dict, on_error: str) -> tuple[dict | None, str | None]:
    """(message, error) as `parse_batch` must give them: in-process parsing of one sample."""
    parser = ResponseParser(template, sample.prefix, tools=sample.tools, on_error=on_error)
    try:
        message, _ = parser.finalize(sample.generation)
    except ResponseParseError as error:
        return None, str(error)
    return message, ERROR_SEPARATOR.join(str(kept) for kept in parser.errors) or None


def mixed_rows() -> tuple[list[dict], list[dict], list[tuple[dict | None, str | None]]]:
    """Every sample as one row (`id`, `template` index, prefix, output, tools), the templates, and
    the expected (message, error) of each row with ``on_error="keep"``."""
    templates, rows, expected = [], [], []
    for template, samples in sample_groups():
        for sample in samples:
            rows.append(
                {
                    "id": len(rows),
                    "template": len(templates),
                    **{k: v[0] for k, v in columns([sample]).items() if k != "id"},
                }
            )
            expected.append(expected_row(sample, template, "keep"))
        templates.append(template)
    return rows, templates, expected


def _values(column) -> list:
    return (
        column.to_pylist()
        if hasattr(column, "to_pylist")
        else column.tolist()
        if hasattr(column, "tolist")
        else list(column)
    )


def _rows_of(batch, start: int, stop: int):
    """Rows [start, stop) of a batch, in the batch's own shape (pandas, pyarrow, dict of lists or arrays)."""
    if hasattr(batch, "iloc"):
        return batch.iloc[start:stop]
    if hasattr(batch, "slice") and hasattr(batch, "column_names"):
        return batch.slice(start, stop - start)
    return {name: batch[name][start:stop] for name in batch.keys()}


def parse_mixed_batch(batch, templates: list[dict]) -> dict[str, list]:
    """`parse_batch` on each run of rows sharing a template (the `template` column indexes
    `templates`), plus the rows' `id`: a map function for the engines, importable by their workers."""
    from engine.batch.columns import parse_batch

    indices = _values(batch["template"])
    result: dict[str, list] = {"id": _values(batch["id"]), "message": [], "error": []}
    start = 0
    while start < len(indices):
        stop = start
        while stop < len(indices) and indices[stop] == indices[start]:
            stop += 1
        part = parse_batch(
            _rows_of(batch, start, stop),
            templates[indices[start]],
            tools_column="tools",
            message_format="json",
        )
        result["message"] += part["message"]
        result["error"] += part["error"]
        start = stop
    return result


def fresh_template() -> dict:
    """A working template that no process has compiled yet (its defaults hold a new uuid)."""
    import uuid

    from engine.template_files import load_template_file

    template = load_template_file("qwen3").response_template
    return {**template, "defaults": {**template.get("defaults", {}), "batch_run": uuid.uuid4().hex}}


def parse_and_count_compilations(batch, template: dict) -> dict[str, list]:
    """`parse_batch`, plus this worker's `pid` and its template-cache misses after the batch
    (`compilations`): one value per worker when no batch after its first compiled anything."""
    import os

    from engine.batch.columns import parse_batch
    from engine.template import template_cache

    result = parse_batch(batch, template, message_format="json")
    count = len(result["message"])
    return {
        **result,
        "pid": [os.getpid()] * count,
        "compilations": [template_cache.cache_info().misses] * count,
    }


def check_mixed_results(ids: list, messages: list, errors: list, expected: list) -> None:
    """The engine's output rows are in input order and equal in-process parsing."""
    assert list(ids) == list(range(len(expected)))
    got = [
        (json.loads(message) if message is not None else None, error)
        for message, error in zip(messages, errors)
    ]
    assert got == expected


def compilations_by_worker(pids: list, compilations: list) -> dict[int, set]:
    """Each worker's template-cache miss counts seen after its batches: one value each when no
    batch after a worker's first compiled anything."""
    seen: dict[int, set] = {}
    for pid, count in zip(pids, compilations):
        seen.setdefault(pid, set()).add(count)
    return seen


# -- files for the engines ----------------------------------------------------

# Text in a shard when the tests cut files: a few rows each, so that a file of a hundred rows
# makes dozens of shards, and every engine joins many parts.
TINY_SHARD_BYTES = 600


def file_rows(copies: int = 6) -> tuple[dict, list[dict]]:
    """The qwen3 template and its samples `copies` times over as file rows: `id`, `prefix`,
    `output`, `tools` (JSON text or None) and a nested `meta` to write through."""
    from engine.template_files import load_template_file

    template = load_template_file("qwen3").response_template
    samples = [sample for sample in load_samples() if sample.template_name == "qwen3"]
    rows = []
    for copy in range(copies):
        for index, sample in enumerate(samples):
            row = {key: values[0] for key, values in columns([sample]).items() if key != "id"}
            rows.append({"id": f"r{len(rows)}", **row, "meta": {"copy": copy, "sample": index}})
    return template, rows


def write_rows(
    path,
    rows: list[dict],
    *,
    blank_every: int | None = None,
    final_newline: bool = True,
    row_group_rows: int = 5,
) -> None:
    """`rows` as JSONL (a blank line after every `blank_every` rows; the last line without its
    newline unless `final_newline`) or Parquet (row groups of `row_group_rows`), by extension."""
    if str(path).endswith(".parquet"):
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=row_group_rows)
        return
    lines = []
    for index, row in enumerate(rows, 1):
        lines.append(json.dumps(row, ensure_ascii=False))
        if blank_every and index % blank_every == 0:
            lines.append("")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + ("\n" if final_newline else ""))


def run_file(
    template: dict, source, output, engine: str = "local", num_proc: int | None = None, **options
):
    """`parse_file` with the tests' settings: no progress bar, shards of `TINY_SHARD_BYTES`, tools from `tools`."""
    from engine.batch.run import parse_file

    options = {
        "tools_column": "tools",
        "batch_rows": 4,
        "progress": False,
        "shard_bytes": TINY_SHARD_BYTES,
        **options,
    }
    return parse_file(template, source, output, engine=engine, num_proc=num_proc, **options)
