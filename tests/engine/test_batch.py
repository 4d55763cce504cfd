"""Batch parsing: `parse_batch` on every batch shape, with `datasets` in 1 and 2 processes, and
`python -m engine batch` on JSONL and Parquet files (the Ray engine: test_batch_ray.py)."""

import functools
import json
import os
import subprocess
import sys

import datasets
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import BatchInputError, ResponseParser, parse_batch
from engine.authoring.samples import load_samples
from engine.batch.columns import datasets_features
from engine.batch.files import InputFile, InputFileError, Shard
from engine.batch.run import STAGES, ShardJob, parse_shard
from engine.template import template_cache
from engine.template_files import load_template_file
from tests.support.batch_cases import (
    check_mixed_results,
    columns,
    compilations_by_worker,
    expected_row,
    file_rows,
    fresh_template,
    mixed_rows,
    parse_and_count_compilations,
    parse_mixed_batch,
    run_file,
    sample_groups,
    write_rows,
)
from tests.support.paths import ROOT as REPO_ROOT

QWEN3 = load_template_file("qwen3").response_template

# Two tool calls that are not JSON around one that is: two kept errors in one row.
TWO_BROKEN_CALLS = (
    'Checking.\n<tool_call>\n{"name": "a",}\n</tool_call>\n<tool_call>\n{"name": "b", "arguments": {"x": 1}}\n'
    "</tool_call>\n<tool_call>\n{bad}\n</tool_call>"
)
FIRST_ERROR = (
    "fields.tool_calls: json: Expecting property name enclosed in double quotes (line 2, column 14, offset 14): "
    '\'\\n{"name": "a",}\' (region at offset 21)'
)
SECOND_ERROR = (
    "fields.tool_calls: json: Expecting property name enclosed in double quotes (line 2, column 2, offset 2): "
    "'\\n{bad}' (region at offset 123)"
)


def _batch_as(shape: str, data: dict[str, list]):
    if shape == "dict of lists":
        return data
    if shape == "dict of numpy arrays":  # Ray's "numpy" format
        return {name: np.array(values, dtype=object) for name, values in data.items()}
    if shape == "pandas, pyarrow-backed":  # Ray's "pandas" format
        return pd.DataFrame(
            {
                name: pd.array(values, dtype="string[pyarrow]") if name != "id" else values
                for name, values in data.items()
            }
        )
    return pa.table(data)  # Ray's "pyarrow" format


@pytest.mark.parametrize(
    "shape", ["dict of lists", "dict of numpy arrays", "pandas, pyarrow-backed", "pyarrow Table"]
)
@pytest.mark.parametrize("on_error", ["keep", "raise"])
def test_parse_batch_equals_the_parser_on_every_sample(shape, on_error):
    rows_with_errors = 0
    for template, samples in sample_groups():
        result = parse_batch(
            _batch_as(shape, columns(samples)), template, tools_column="tools", on_error=on_error
        )
        expected = [expected_row(sample, template, on_error) for sample in samples]
        assert list(zip(result["message"], result["error"])) == expected, samples[0].family
        rows_with_errors += sum(error is not None for error in result["error"])
    # The three samples whose tool call does not parse; kept, also the two whose content holds
    # a close with no open (lenient reading consumes it and says so).
    assert rows_with_errors == (3 if on_error == "raise" else 5)


def test_kept_errors_are_joined_one_a_line_and_the_message_keeps_what_parsed():
    batch = {"prefix": ["", ""], "output": ["Fine.", TWO_BROKEN_CALLS]}
    kept = parse_batch(batch, QWEN3, error_fields=True)
    assert kept["error"] == [
        None,
        FIRST_ERROR
        + " (kept leniently: its body (21-36) is kept as text, its delimiters consumed)\n"
        + SECOND_ERROR
        + " (kept leniently: its body (123-129) is kept as text, its delimiters consumed)",
    ]
    assert kept["error_fields"] == [[], ["tool_calls", "tool_calls"]]
    assert kept["message"][0] == {"role": "assistant", "content": "Fine."}
    assert kept["message"][1] == {
        "role": "assistant",
        "content": 'Checking.\n\n{"name": "a",}\n\n\n{bad}',
        "tool_calls": [{"type": "function", "function": {"name": "b", "arguments": {"x": 1}}}],
    }
    raised = parse_batch(batch, QWEN3, on_error="raise", message_format="json", error_fields=True)
    assert raised == {
        "message": ['{"role": "assistant", "content": "Fine."}', None],
        "error": [None, FIRST_ERROR],
        "error_fields": [[], ["tool_calls"]],
    }


def test_no_prefix_column_parses_with_an_empty_prefix():
    result = parse_batch({"output": ["<think>plan</think>answer"]}, QWEN3, prefix_column=None)
    assert result == {
        "message": [{"role": "assistant", "reasoning_content": "plan", "content": "answer"}],
        "error": [None],
    }


@pytest.mark.parametrize(
    "batch, options, message",
    [
        (
            {"prefix": [""], "text": ["x"]},
            {},
            "the batch has no column 'output' (columns: prefix, text)",
        ),
        (
            {"prefix": ["", ""], "output": ["x", 5]},
            {},
            "row 1 of the batch, column 'output': expected text, got int 5",
        ),
        (
            {"prefix": [None], "output": ["x"]},
            {},
            "row 0 of the batch, column 'prefix': expected text, got NoneType None",
        ),
        (
            {"prefix": ["", ""], "output": ["x"]},
            {},
            "column 'prefix' has 2 rows but 'output' has 1",
        ),
        (
            {"prefix": [""], "output": ["x"], "tools": ["[{"]},
            {"tools_column": "tools"},
            "row 0 of the batch, column 'tools': not valid JSON (Expecting property name enclosed in double quotes at column 3)",
        ),
        (
            {"prefix": [""], "output": ["x"], "tools": [["get_weather"]]},
            {"tools_column": "tools"},
            "row 0 of the batch, column 'tools': each tool must be a JSON schema object, got str 'get_weather'",
        ),
    ],
)
def test_malformed_batches_name_the_row_and_column(batch, options, message):
    with pytest.raises(BatchInputError) as caught:
        parse_batch(batch, QWEN3, **options)
    assert str(caught.value) == message


def test_the_template_is_compiled_once_per_process_not_per_batch():
    template = {
        **QWEN3,
        "defaults": {"role": "assistant", "batch-test": "compiled once"},
    }  # not compiled before
    before = template_cache.cache_info().misses
    for _ in range(5):
        parse_batch({"prefix": [""] * 3, "output": ["a", "b", "c"]}, template)
    assert template_cache.cache_info().misses == before + 1


@pytest.mark.parametrize("num_proc", [1, 2])
def test_datasets_map_equals_the_parser_and_keeps_order(num_proc):
    rows, templates, expected = mixed_rows()
    dataset = datasets.Dataset.from_list(rows)
    parsed = dataset.map(
        parse_mixed_batch,
        batched=True,
        batch_size=8,
        num_proc=num_proc,
        fn_kwargs={"templates": templates},
        remove_columns=dataset.column_names,
        load_from_cache_file=False,
        features=datasets.Features({"id": datasets.Value("int64"), **datasets_features()}),
    )
    check_mixed_results(parsed["id"], parsed["message"], parsed["error"], expected)


def test_datasets_workers_compile_the_template_once():
    dataset = datasets.Dataset.from_dict(
        {"prefix": [""] * 40, "output": [f"answer {i}" for i in range(40)]}
    )
    parsed = dataset.map(
        parse_and_count_compilations,
        batched=True,
        batch_size=2,
        num_proc=2,
        fn_kwargs={"template": fresh_template()},
        load_from_cache_file=False,
        features=datasets.Features(
            {
                **datasets_features(dataset.features),
                "pid": datasets.Value("int64"),
                "compilations": datasets.Value("int64"),
            }
        ),
    )
    assert [json.loads(message)["content"] for message in parsed["message"]] == [
        f"answer {i}" for i in range(40)
    ]
    seen = compilations_by_worker(parsed["pid"], parsed["compilations"])
    assert len(seen) == 2 and all(len(counts) == 1 for counts in seen.values()), seen


# -- the command line -------------------------------------------------------


def run_cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "engine", "batch", *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TQDM_DISABLE": "1"},
    )


@functools.cache
def qwen3_samples():
    return [sample for sample in load_samples() if sample.template_name == "qwen3"]


@functools.cache
def qwen3_rows():
    """The qwen3 samples as JSONL rows, with an id and a nested column to write through."""
    template, samples = QWEN3, qwen3_samples()
    rows = [
        {"id": f"q{i}", **{k: v[0] for k, v in columns([s]).items() if k != "id"}, "meta": {"n": i}}
        for i, s in enumerate(samples)
    ]
    rows.append(
        {
            "id": "broken",
            "prefix": "",
            "output": TWO_BROKEN_CALLS,
            "tools": None,
            "meta": {"n": len(samples)},
        }
    )
    expected = [expected_row(s, template, "keep") for s in samples] + [
        expected_row_for_text(TWO_BROKEN_CALLS)
    ]
    return rows, expected


def expected_row_for_text(text):
    parser = ResponseParser(QWEN3, "", on_error="keep")
    message, _ = parser.finalize(text)
    return message, "\n".join(map(str, parser.errors)) or None


def write_jsonl(path, rows, blank_after=None):
    with open(path, "w", encoding="utf-8") as handle:
        for index, row in enumerate(rows):
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            if index == blank_after:
                handle.write("\n")


def test_cli_jsonl_in_process_writes_rows_in_order_with_their_other_columns(tmp_path):
    rows, expected = qwen3_rows()
    write_jsonl(tmp_path / "in.jsonl", rows, blank_after=2)
    result = run_cli(
        "qwen3",
        str(tmp_path / "in.jsonl"),
        "--output",
        str(tmp_path / "out.jsonl"),
        "--tools-column",
        "tools",
        "--batch-size",
        "4",
    )
    assert result.returncode == 0, result.stderr
    written = [
        json.loads(line)
        for line in (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    want = []
    for row, (message, error) in zip(rows, expected):
        out = {"id": row["id"], "meta": row["meta"], "message": message}
        if error is not None:
            out["error"] = error
        want.append(out)
    assert written == want
    assert f"{len(rows)} rows in " in result.stderr and "with local (1 process)" in result.stderr
    assert "1 row with errors (messages kept); errors by field: tool_calls 2" in result.stderr


def test_cli_parquet_with_datasets_in_two_processes(tmp_path):
    rows, expected = qwen3_rows()
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "in.parquet")
    result = run_cli(
        "templates/qwen3.json",
        str(tmp_path / "in.parquet"),
        "--output",
        str(tmp_path / "out.parquet"),
        "--tools-column",
        "tools",
        "--engine",
        "datasets",
        "--num-proc",
        "2",
        "--batch-size",
        "3",
        "--on-error",
        "raise",
    )
    assert result.returncode == 0, result.stderr
    table = pq.read_table(tmp_path / "out.parquet")
    assert table.column_names == ["id", "meta", "message", "error"]
    got = table.to_pylist()
    assert [row["id"] for row in got] == [row["id"] for row in rows]
    assert [row["meta"] for row in got] == [row["meta"] for row in rows]
    raised = [expected_row(sample, QWEN3, "raise") for sample in qwen3_samples()]
    raised.append((None, FIRST_ERROR))
    assert [(json.loads(r["message"]) if r["message"] else None, r["error"]) for r in got] == raised
    assert "with datasets (2 processes)" in result.stderr
    assert "1 row with errors (no message); errors by field: tool_calls 1" in result.stderr
    assert sorted(os.listdir(tmp_path)) == [
        "in.parquet",
        "out.parquet",
    ]  # the work directory is gone


def test_cli_converts_between_jsonl_and_parquet(tmp_path):
    rows, expected = qwen3_rows()
    write_jsonl(tmp_path / "in.jsonl", rows)
    assert (
        run_cli(
            "qwen3",
            str(tmp_path / "in.jsonl"),
            "--output",
            str(tmp_path / "mid.parquet"),
            "--tools-column",
            "tools",
            "--keep-input",
        ).returncode
        == 0
    )
    middle = pq.read_table(tmp_path / "mid.parquet")
    assert middle.column_names == ["id", "prefix", "output", "tools", "meta", "message", "error"]
    renamed = middle.drop_columns(["message", "error"]).rename_columns(
        ["id", "prompt", "generation", "tools", "meta"]
    )
    pq.write_table(renamed, tmp_path / "renamed.parquet")
    result = run_cli(
        "qwen3",
        str(tmp_path / "renamed.parquet"),
        "--output",
        str(tmp_path / "out.jsonl"),
        "--prefix-column",
        "prompt",
        "--output-column",
        "generation",
        "--tools-column",
        "tools",
    )
    assert result.returncode == 0, result.stderr
    written = [
        json.loads(line)
        for line in (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert [(row["id"], row["meta"], row["message"], row.get("error")) for row in written] == [
        (row["id"], row["meta"], message, error) for row, (message, error) in zip(rows, expected)
    ]


def test_cli_empty_input_writes_an_empty_output(tmp_path):
    (tmp_path / "in.jsonl").write_text("\n")
    result = run_cli(
        "qwen3",
        str(tmp_path / "in.jsonl"),
        "--output",
        str(tmp_path / "out.parquet"),
        "--engine",
        "datasets",
    )
    assert result.returncode == 0, result.stderr
    table = pq.read_table(tmp_path / "out.parquet")
    assert table.num_rows == 0 and table.column_names == ["message", "error"]
    assert "0 rows in " in result.stderr


@pytest.mark.parametrize(
    "lines, options, message",
    [
        (
            ['{"prefix": "", "output": "a"}', '{"prefix": "", "output": "b",}'],
            (),
            "in.jsonl line 2: not valid JSON (Expecting property name enclosed in double quotes at column 30)",
        ),
        (
            ['{"prefix": "", "output": "a"}', "", '{"prefix": "", "text": "b"}'],
            (),
            "in.jsonl line 3: no 'output' key (the row has 'prefix', 'text'); name the column with --output-column",
        ),
        (
            ['{"prefix": "", "output": 5}'],
            (),
            "in.jsonl line 1: 'output': expected text, got int 5",
        ),
        (
            ['{"output": "a"}'],
            (),
            "in.jsonl line 1: no 'prefix' key (the row has 'output'); name the column with --prefix-column, or --no-prefix",
        ),
        (['["a", "b"]'], (), "in.jsonl line 1: expected a JSON object, got list ['a', 'b']"),
        (
            ['{"prefix": "", "output": "a", "tools": {"name": "f"}}'],
            ("--tools-column", "tools"),
            "in.jsonl line 1: 'tools': expected a list of tool schemas, got dict {'name': 'f'}",
        ),
        (
            ['{"prefix": "", "output": "a", "message": "hi"}'],
            (),
            "in.jsonl line 1: the row has a 'message' key, which the output adds; rename it",
        ),
    ],
)
def test_cli_malformed_rows_name_the_line(tmp_path, lines, options, message):
    (tmp_path / "in.jsonl").write_text("\n".join(lines) + "\n")
    # The first line is fine: with datasets the run stops while staging, before any parsing.
    engine = "datasets" if len(lines) > 1 else "local"
    result = run_cli(
        "qwen3",
        str(tmp_path / "in.jsonl"),
        "--output",
        str(tmp_path / "out.jsonl"),
        "--engine",
        engine,
        *options,
    )
    assert result.returncode == 2
    assert result.stdout == f"error: {tmp_path}/{message}\n", result.stdout + result.stderr
    assert sorted(os.listdir(tmp_path)) == [
        "in.jsonl"
    ]  # no output, no partial file, no work directory


def test_cli_malformed_parquet_rows_name_the_row(tmp_path):
    pq.write_table(pa.table({"prefix": ["", ""], "output": ["a", None]}), tmp_path / "in.parquet")
    result = run_cli("qwen3", str(tmp_path / "in.parquet"), "--output", str(tmp_path / "out.jsonl"))
    assert result.returncode == 2
    assert result.stdout == (
        f"error: {tmp_path}/in.parquet row 2: 'output': expected text, got NoneType None (name the column with --output-column)\n"
    )


def test_importing_the_engine_loads_no_engine_package():
    code = (
        "import sys, engine, engine.batch.columns, engine.batch.files\n"
        "heavy = ('datasets', 'ray', 'pyarrow', 'torch', 'gradio', 'transformers', 'pandas')\n"
        "print(sorted(name for name in sys.modules if name.split('.')[0] in heavy))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.stdout.strip() == "[]", result.stderr


@settings(max_examples=30, deadline=None)
@given(cuts=st.lists(st.integers(min_value=0, max_value=len(qwen3_samples()) + 1), max_size=6))
def test_any_batching_gives_the_rows_their_own_results_in_order(cuts):
    rows, expected = qwen3_rows()
    data = {name: [row[name] for row in rows] for name in ("prefix", "output", "tools")}
    bounds = sorted({0, len(rows), *(min(cut, len(rows)) for cut in cuts)})
    results: list = []
    for start, stop in zip(bounds, bounds[1:]):
        part = parse_batch(
            {name: values[start:stop] for name, values in data.items()}, QWEN3, tools_column="tools"
        )
        results += zip(part["message"], part["error"])
    assert results == expected


# -- shards and engines -----------------------------------------------------


def _read_rows(input_file, shards, batch_rows):
    """(line or row number in the file, output) of every row, read shard by shard."""
    rows = []
    for shard in shards:
        before = input_file.lines_before(shard.start) if input_file.format == "jsonl" else 0
        for batch in input_file.batches(shard, batch_rows):
            rows += [
                (number + before, output)
                for number, output in zip(batch.rows, batch.columns["output"])
            ]
    return rows


@settings(max_examples=60, deadline=None)
@given(
    lines=st.lists(
        st.one_of(
            st.just(""),
            st.just("  "),
            st.text(max_size=30).map(lambda text: json.dumps({"prefix": "", "output": text})),
        ),
        max_size=25,
    ),
    newline=st.sampled_from(["\n", "\r\n"]),
    final_newline=st.booleans(),
    workers=st.integers(1, 3),
    shard_bytes=st.integers(1, 200),
    batch_rows=st.integers(1, 4),
)
def test_jsonl_shards_begin_at_lines_and_read_as_the_whole_file(
    tmp_path_factory, lines, newline, final_newline, workers, shard_bytes, batch_rows
):
    path = tmp_path_factory.mktemp("shards") / "in.jsonl"
    path.write_bytes((newline.join(lines) + (newline if final_newline and lines else "")).encode())
    input_file = InputFile(path)
    shards = input_file.shards(workers, shard_bytes)
    content = path.read_bytes()
    assert [shard.index for shard in shards] == list(range(len(shards)))
    assert shards[0].start == 0 and shards[-1].stop == len(content)
    assert all(left.stop == right.start for left, right in zip(shards, shards[1:]))
    assert all(content[shard.start - 1 : shard.start] == b"\n" for shard in shards[1:])
    assert _read_rows(input_file, shards, batch_rows) == _read_rows(
        input_file, [input_file.whole()], batch_rows
    )
    assert sum(
        batch.extent for shard in shards for batch in input_file.batches(shard, batch_rows)
    ) <= len(content)


@pytest.mark.parametrize(
    "row_group_rows, shards_by_size, shards, cut_at_groups",
    [
        (3, 10, 10, True),  # 12 row groups: cut at 10 of them
        (3, 20, 12, True),  # more shards of text than groups: one a group
        (20, 10, 2, True),  # 2 row groups for 2 workers
        (40, 10, 2, False),  # 1 row group: one shard a worker, cut inside it
    ],
)
def test_parquet_shards_read_as_the_whole_file(
    tmp_path, row_group_rows, shards_by_size, shards, cut_at_groups
):
    _, rows = file_rows(copies=3)
    write_rows(tmp_path / "in.parquet", rows, row_group_rows=row_group_rows)
    input_file = InputFile(tmp_path / "in.parquet", tools_column="tools")
    cut = input_file.shards(2, input_file.text_bytes // shards_by_size + 1)
    assert len(cut) == shards
    assert all(shard.start % row_group_rows == 0 for shard in cut) == cut_at_groups
    assert _read_rows(input_file, cut, 4) == [
        (number, row["output"]) for number, row in enumerate(rows, 1)
    ]


ENGINES_TO_COMPARE = [("datasets", 1), ("datasets", 2)]


@pytest.mark.parametrize(
    "source, target",
    [("jsonl", "jsonl"), ("jsonl", "parquet"), ("parquet", "jsonl"), ("parquet", "parquet")],
)
def test_every_engine_writes_the_same_file_from_many_shards(tmp_path, source, target):
    template, rows = file_rows()
    write_rows(tmp_path / f"in.{source}", rows, blank_every=7, final_newline=False)
    local = run_file(template, tmp_path / f"in.{source}", tmp_path / f"local.{target}")
    assert local.rows == len(rows) and local.shards == 1
    for engine, num_proc in ENGINES_TO_COMPARE:
        output = tmp_path / f"{engine}-{num_proc}.{target}"
        summary = run_file(template, tmp_path / f"in.{source}", output, engine, num_proc)
        assert output.read_bytes() == (tmp_path / f"local.{target}").read_bytes(), (
            engine,
            num_proc,
        )
        assert summary.shards >= 10 and summary.shards % num_proc == 0
        assert (summary.rows, summary.rows_with_errors, summary.errors_by_field) == (
            local.rows,
            local.rows_with_errors,
            local.errors_by_field,
        )
        assert (
            list(summary.stages)
            and set(summary.stages) <= set(STAGES)
            and summary.stages["parse"] > 0
        )
    assert sorted(os.listdir(tmp_path)) == sorted(
        [f"in.{source}", f"local.{target}", *(f"{e}-{n}.{target}" for e, n in ENGINES_TO_COMPARE)]
    )


def test_many_shards_keep_every_row_and_its_other_columns(tmp_path):
    template, rows = file_rows()
    write_rows(tmp_path / "in.jsonl", rows)
    run_file(template, tmp_path / "in.jsonl", tmp_path / "out.jsonl", "datasets", 2)
    written = [
        json.loads(line)
        for line in (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    samples = qwen3_samples()
    want = []
    for row in rows:
        message, error = expected_row(samples[row["meta"]["sample"]], template, "keep")
        want.append(
            {
                "id": row["id"],
                "meta": row["meta"],
                "message": message,
                **({"error": error} if error else {}),
            }
        )
    assert written == want


def _line_of(row: int, blank_every: int) -> int:
    """The line of the `row`-th row (from 1) of a file with a blank line after every `blank_every` rows."""
    return row + (row - 1) // blank_every


@pytest.mark.parametrize("engine, num_proc", [("local", None), ("datasets", 2)])
def test_a_malformed_row_deep_in_the_file_names_its_line(tmp_path, engine, num_proc):
    template, rows = file_rows()
    rows[60] = {**rows[60], "output": 5}
    write_rows(tmp_path / "in.jsonl", rows, blank_every=7)
    with pytest.raises(InputFileError) as caught:
        run_file(template, tmp_path / "in.jsonl", tmp_path / "out.jsonl", engine, num_proc)
    assert (
        str(caught.value)
        == f"{tmp_path}/in.jsonl line {_line_of(61, 7)}: 'output': expected text, got int 5"
    )
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl"]


def test_the_first_malformed_row_in_file_order_is_the_one_named(tmp_path):
    template, rows = file_rows()
    rows[70] = {
        **rows[70],
        "output": 7,
    }  # in a shard of the second process: found first, reported second
    rows[20] = {**rows[20], "prefix": None}
    write_rows(tmp_path / "in.jsonl", rows)
    with pytest.raises(InputFileError) as caught:
        run_file(template, tmp_path / "in.jsonl", tmp_path / "out.jsonl", "datasets", 2)
    assert (
        str(caught.value)
        == f"{tmp_path}/in.jsonl line 21: 'prefix': expected text, got NoneType None"
    )


def test_jsonl_rows_that_do_not_fit_the_parquet_columns_name_their_lines(tmp_path):
    template, rows = file_rows()
    rows[50] = {**rows[50], "meta": "not an object"}
    write_rows(tmp_path / "in.jsonl", rows, blank_every=7)
    with pytest.raises(
        InputFileError
    ) as caught:  # a batch a row: the error names the row's line alone
        run_file(
            template, tmp_path / "in.jsonl", tmp_path / "out.parquet", "datasets", 2, batch_rows=1
        )
    assert str(caught.value).startswith(
        f"{tmp_path}/in.jsonl line {_line_of(51, 7)}: values do not fit the column types of the first rows ("
    )
    with pytest.raises(
        InputFileError
    ) as caught:  # the first batch of 4 rows types the columns; 49-52 is the row's batch
        run_file(template, tmp_path / "in.jsonl", tmp_path / "out.parquet", "local")
    assert str(caught.value).startswith(
        f"{tmp_path}/in.jsonl lines {_line_of(49, 7)}-{_line_of(52, 7)}: values do not fit the column types of the first rows ("
    )


def test_a_malformed_parquet_row_deep_in_the_file_names_its_row(tmp_path):
    template, rows = file_rows()
    write_rows(tmp_path / "in.parquet", rows, row_group_rows=5)
    table = pq.read_table(tmp_path / "in.parquet")
    outputs = table.column("output").to_pylist()
    outputs[66] = None
    pq.write_table(
        table.set_column(
            table.column_names.index("output"), "output", pa.array(outputs, pa.string())
        ),
        tmp_path / "in.parquet",
        row_group_size=5,
    )
    with pytest.raises(InputFileError) as caught:
        run_file(template, tmp_path / "in.parquet", tmp_path / "out.jsonl", "datasets", 2)
    assert (
        str(caught.value)
        == f"{tmp_path}/in.parquet row 67: 'output': expected text, got NoneType None (name the column with --output-column)"
    )


def test_a_worker_stops_at_its_next_batch_once_an_earlier_shard_failed(tmp_path):
    template, rows = file_rows()
    write_rows(tmp_path / "in.jsonl", rows)
    input_file = InputFile(tmp_path / "in.jsonl", tools_column="tools")
    job = ShardJob(
        input_file,
        template,
        {"tools_column": "tools", "error_fields": True},
        "jsonl",
        None,
        4,
        str(tmp_path),
    )
    shard = Shard(3, 0, input_file.extent)
    assert parse_shard(job, shard).rows == len(rows)
    (tmp_path / "failed-000004").touch()  # a later shard failed: this one goes on
    assert parse_shard(job, shard).rows == len(rows)
    (tmp_path / "failed-000002").touch()
    result = parse_shard(job, shard)
    assert (result.rows, result.stopped, result.error) == (4, True, None)


def test_cli_small_input_with_more_processes_is_parsed_in_process_and_says_so(tmp_path):
    rows, _ = qwen3_rows()
    write_jsonl(tmp_path / "in.jsonl", rows)
    result = run_cli(
        "qwen3",
        str(tmp_path / "in.jsonl"),
        "--output",
        str(tmp_path / "out.jsonl"),
        "--num-proc",
        "2",
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.startswith(
        "note: the input is small (0.0 MB of text): parsing it in this process, which is quicker than starting 2 processes "
        "(give --engine datasets or --engine ray to use them anyway)\n"
    )
    assert "with local (1 process) -> " in result.stderr


def test_cli_profile_shows_every_stage(tmp_path):
    rows, _ = qwen3_rows()
    write_jsonl(tmp_path / "in.jsonl", rows)
    result = run_cli(
        "qwen3",
        str(tmp_path / "in.jsonl"),
        "--output",
        str(tmp_path / "out.jsonl"),
        "--engine",
        "datasets",
        "--num-proc",
        "2",
        "--profile",
    )
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    title = lines.index("where the time went: datasets, 2 shards")
    in_this_process = ("start-up", "plan", "merge", "shut-down")
    assert [line.split()[:2] for line in lines[title + 2 : title + 2 + len(STAGES)]] == [
        [stage, "this" if stage in in_this_process else "workers"] for stage in STAGES
    ]
    assert lines[title + 1].split() == ["stage", "where", "seconds", "share"]
    assert [line.split()[:2] for line in lines[-4:]] == [
        ["run", "wall"],
        ["whole", "with"],
        ["workers", "busy"],
        ["CPU", "of"],
    ]
    assert ", after " in result.stderr and " s starting the processes -> " in result.stderr
