"""The benchmark still runs: smallest size, one repeat, every workload (no timing is asserted).

Its status is 0 only when every message and event matched transformers' reference.
"""

from engine import bench


def test_quick_benchmark_runs_and_matches_the_reference(capsys):
    status = bench.main(["--quick"])
    output = capsys.readouterr().out
    assert status == 0, output
    assert "== targets" in output
