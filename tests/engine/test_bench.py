"""The benchmark still runs: smallest size, one repeat, every workload (no timing is asserted).

Its status is 0 only when every message and event matched transformers' reference.
"""

import importlib.util
import sys

from tests.support.paths import ROOT

_SCRIPT = ROOT / "scripts" / "bench_engine.py"
_spec = importlib.util.spec_from_file_location("bench_engine", _SCRIPT)
bench = sys.modules["bench_engine"] = importlib.util.module_from_spec(
    _spec
)  # dataclasses look it up
_spec.loader.exec_module(bench)


def test_quick_benchmark_runs_and_matches_the_reference(capsys):
    status = bench.main(["--quick"])
    output = capsys.readouterr().out
    assert status == 0, output
    assert "== targets" in output


def test_profile_counts_the_paths_chunks_took(capsys):
    status = bench.main(["--profile", "--sizes", "10KB", "--workloads", "smollm3"])
    output = capsys.readouterr().out
    assert status == 0
    lines = output.splitlines()
    chunks = len(bench.token_chunks(bench.make_case("smollm3", 10 * 1024).text))
    assert lines[0].startswith(f"== profile: smollm3, 10KB, tokens: {chunks} chunks, ")
    assert lines[1].startswith("  chunks that needed: the quick test ")
    shares = dict(
        part.rsplit(" ", 1) for part in lines[1].removeprefix("  chunks that needed: ").split(", ")
    )
    assert list(shares) == [
        "the quick test",
        "its regex search",
        "a scan off the quick path",
        "a full scan (with the prefix and finalize)",
    ]
    assert all(
        0 < float(share.rstrip("%")) < 100 for share in shares.values()
    )  # each path is counted, none takes every chunk
    # Every chunk goes through feed once: its row says 100.0% per chunk.
    assert any(
        line.split()[:2] == [str(chunks), "100.0%"] and line.endswith(" feed") for line in lines[3:]
    )


def test_a_slow_reference_runs_three_times_and_each_of_ours_is_compared_with_their_median(
    monkeypatch,
):
    monkeypatch.setattr(bench, "SLOW_RUN_SECONDS", 0.0)  # every reference run counts as slow
    row = bench._measure(
        bench.WORKLOADS["smollm3"], 1024, bench.TOKENS, 4, bench._reference_engine()
    )
    assert row.difference is None
    assert (len(row.times["reference"]), len(row.times["ours"])) == (3, 4)
    median = sorted(row.times["reference"])[1]
    assert row.speedups == [median / mine for mine in row.times["ours"]]
    assert row.peak["reference"] is None  # not traced


def test_keep_events_times_runs_that_keep_every_event(capsys):
    status = bench.main(["--quick", "--keep-events", "--workloads", "gpt-oss"])
    output = capsys.readouterr().out
    assert status == 0, output
    assert "Streaming runs keep every event in one list (--keep-events)." in output
