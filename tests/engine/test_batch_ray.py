"""Batch parsing on Ray: `parse_batch` in Ray Data's `map_batches` on a local cluster, the ray
engine of `parse_file` on that cluster, and `python -m engine batch --engine ray` connecting to
it as to an existing one.

One local cluster (2 CPUs, no dashboard, on the loopback address) serves the whole module:
starting Ray costs seconds.
"""

import json
import os
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from engine.batch.files import InputFileError
from tests.support.batch_cases import (
    check_mixed_results,
    compilations_by_worker,
    file_rows,
    fresh_template,
    mixed_rows,
    parse_and_count_compilations,
    parse_mixed_batch,
    run_file,
    write_rows,
)
from tests.support.paths import ROOT as REPO_ROOT

ray = pytest.importorskip("ray")
import ray.data  # noqa: E402, F811


@pytest.fixture(scope="module")
def cluster():
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        object_store_memory=300 * 1024 * 1024,
        _node_ip_address="127.0.0.1",
        log_to_driver=False,
    )
    context = ray.data.DataContext.get_current()
    context.execution_options.preserve_order = True
    context.enable_progress_bars = False
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


@pytest.mark.parametrize("batch_format", ["pandas", "numpy", "pyarrow"])
def test_map_batches_equals_the_parser_and_keeps_order(cluster, batch_format):
    rows, templates, expected = mixed_rows()
    dataset = ray.data.from_items(rows, override_num_blocks=8)
    parsed = dataset.map_batches(
        parse_mixed_batch,
        batch_size=4,
        batch_format=batch_format,
        fn_kwargs={"templates": templates},
    )
    columns = {name: [] for name in ("id", "message", "error")}
    for batch in parsed.iter_batches(batch_size=64, batch_format="pyarrow"):
        for name in columns:
            columns[name] += batch.column(name).to_pylist()
    check_mixed_results(columns["id"], columns["message"], columns["error"], expected)


def test_workers_compile_the_template_once(cluster):
    dataset = ray.data.from_items(
        [{"prefix": "", "output": f"answer {i}"} for i in range(40)], override_num_blocks=10
    )
    parsed = dataset.map_batches(
        parse_and_count_compilations,
        batch_size=2,
        batch_format="numpy",
        fn_kwargs={"template": fresh_template()},
    )
    rows = parsed.take_all()
    assert [json.loads(row["message"])["content"] for row in rows] == [
        f"answer {i}" for i in range(40)
    ]
    seen = compilations_by_worker(
        [row["pid"] for row in rows], [row["compilations"] for row in rows]
    )
    assert os.getpid() not in seen and all(len(counts) == 1 for counts in seen.values()), seen


def test_cli_on_an_existing_cluster(cluster, tmp_path):
    rows, templates, expected = mixed_rows()
    qwen3 = [
        (row, want)
        for row, want in zip(rows, expected)
        if templates[row["template"]] == templates[rows[-1]["template"]]
    ]
    with open(tmp_path / "in.jsonl", "w", encoding="utf-8") as handle:
        for row, _ in qwen3:
            handle.write(
                json.dumps(
                    {
                        "id": row["id"],
                        "prefix": row["prefix"],
                        "output": row["output"],
                        "tools": row["tools"],
                    }
                )
                + "\n"
            )
    template = tmp_path / "template.json"
    template.write_text(json.dumps(templates[rows[-1]["template"]]))
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "engine",
            "batch",
            str(template),
            str(tmp_path / "in.jsonl"),
            "--output",
            str(tmp_path / "out.parquet"),
            "--engine",
            "ray",
            "--num-proc",
            "2",
            "--tools-column",
            "tools",
            "--batch-size",
            "2",
            "--no-progress",
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "RAY_ADDRESS": cluster},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    written = pq.read_table(tmp_path / "out.parquet").to_pylist()
    assert [row["id"] for row in written] == [row["id"] for row, _ in qwen3]
    assert [(json.loads(row["message"]), row["error"]) for row in written] == [
        want for _, want in qwen3
    ]
    assert f"{len(qwen3)} rows in " in result.stderr and "with ray (2 processes)" in result.stderr
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl", "out.parquet", "template.json"]


@pytest.mark.parametrize("target", ["jsonl", "parquet"])
def test_ray_engine_writes_the_same_file_as_one_process_from_many_shards(cluster, tmp_path, target):
    template, rows = file_rows()
    write_rows(tmp_path / "in.jsonl", rows, blank_every=7, final_newline=False)
    local = run_file(template, tmp_path / "in.jsonl", tmp_path / f"local.{target}")
    summary = run_file(template, tmp_path / "in.jsonl", tmp_path / f"ray.{target}", "ray", 2)
    assert (tmp_path / f"ray.{target}").read_bytes() == (tmp_path / f"local.{target}").read_bytes()
    assert (
        summary.shards >= 10 and summary.shards % 2 == 0 and summary.rows == local.rows == len(rows)
    )
    assert summary.errors_by_field == local.errors_by_field and summary.stages["parse"] > 0
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl", f"local.{target}", f"ray.{target}"]


def test_ray_engine_names_the_line_of_a_malformed_row_deep_in_the_file(cluster, tmp_path):
    template, rows = file_rows()
    rows[60] = {**rows[60], "output": ["not", "text"]}
    write_rows(tmp_path / "in.jsonl", rows, blank_every=7)
    with pytest.raises(InputFileError) as caught:
        run_file(template, tmp_path / "in.jsonl", tmp_path / "out.jsonl", "ray", 2)
    assert (
        str(caught.value)
        == f"{tmp_path}/in.jsonl line {61 + 60 // 7}: 'output': expected text, got list ['not', 'text']"
    )
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl"]
