"""Batch parsing speed and memory, side by side: in-process, datasets and Ray at 1 and 2 workers.

Run it with ``python scripts/bench_batch.py`` (``--help`` for the options); the table for 10^5
and 10^6 rows is ``python scripts/bench_batch.py --rows 100000 1000000``. For each row count it
writes a JSONL file of SmolLM3-shaped generations of about 4 KB (reasoning, tool calls and
content, cycling through 200 seeds of tests/support/workloads.py) to a temporary directory, runs
`engine.batch.run.parse_file` (what ``python -m engine batch`` runs) on it once per engine and
worker count in a fresh Python process, and deletes the file at the end.

It prints, for each run (the best of ``--repeats``, runs interleaved so that a change in the
machine's load touches every engine alike):

- start+stop: importing the engine's package and starting its workers (Ray's cluster), then
  stopping Ray, reported apart as the command reports them; run: the wall time between;
  rows/s of the run;
- speedup: the in-process run's time over this run's; efficiency: the speedup over the workers
  (1.00 is perfect scaling); whole: the wall time of the whole process, start-up included;
- CPU: the workers' CPU seconds on their shards (measured inside them), and the CPU seconds of
  the whole process tree (start-up and Ray's own processes included; sampled every half second,
  so a little low). On a loaded machine the wall times stretch while the CPU seconds do not: a
  2-worker run whose workers' CPU equals the in-process run's does no extra work, and runs
  twice as fast where it has two free cores;
- peak memory of the process and all its workers (sampled every half second): resident (RSS,
  summed) and anonymous (Pss_Anon: heap and arrays, a page forked processes share counted once;
  not memory-mapped file pages, which the kernel drops at will). Bounded memory means the
  anonymous peak does not grow with the rows;
- where the time went: each stage's seconds (the workers' summed over them), and the share of
  parsing in the workers' time.

Every engine's output must equal the in-process one byte for byte (their SHA-256 digests are
compared), or the script stops. It is a benchmark, not a test: timings depend on the machine
and its load (it prints the load average before and after).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.batch.run import STAGES, WORKER_STAGES  # noqa: E402
from tests.support.workloads import KB, SMOLLM3_TEMPLATE, make_case  # noqa: E402

DISTINCT_ROWS = 200  # distinct generations, repeated to make up the rows

# name on the command line -> (label, engine, workers). The in-process run always comes first:
# every speedup is against it.
RUNS = {
    "local": ("in-process", "local", 1),
    "datasets:1": ("datasets", "datasets", 1),
    "datasets:2": ("datasets", "datasets", 2),
    "ray:1": ("ray (local)", "ray", 1),
    "ray:2": ("ray (local)", "ray", 2),
}

# What each run's process executes: `parse_file`, then its summary as JSON on stdout.
RUNNER = """
import json, sys
from engine.batch.run import parse_file
options = json.loads(sys.argv[1])
summary = parse_file(**options)
print(json.dumps(summary.record()))
"""


def write_input(path: Path, rows: int, size: int = 4 * KB) -> int:
    """Write `rows` JSONL rows (`id`, `prefix`, `output`) cycling through DISTINCT_ROWS generations; return the bytes."""
    cases = [make_case("smollm3", size, seed=seed) for seed in range(min(rows, DISTINCT_ROWS))]
    tails = [json.dumps({"prefix": case.prefix, "output": case.text})[1:] + "\n" for case in cases]
    with open(path, "w", encoding="utf-8") as handle:
        for start in range(0, rows, 10_000):
            handle.write(
                "".join(
                    f'{{"id": {index}, ' + tails[index % len(tails)]
                    for index in range(start, min(rows, start + 10_000))
                )
            )
    return path.stat().st_size


def _anonymous_bytes(pid: int) -> int:
    """Pss_Anon of a process: its memory not backed by a file, each page it shares with other
    processes (a forked worker's inherited pages) counted in proportion."""
    with open(f"/proc/{pid}/smaps_rollup") as rollup:
        for line in rollup:
            if line.startswith("Pss_Anon:"):
                return int(line.split()[1]) * 1024
    return 0


@dataclass
class Run:
    """One run's figures."""

    label: str
    engine: str
    workers: int
    summary: dict = field(default_factory=dict)
    whole: float = float("inf")
    rss: float = 0.0
    anonymous: float = 0.0
    tree_cpu: float = 0.0
    digest: str = ""

    @property
    def name(self) -> str:
        return f"{self.label}, {self.workers} worker{'s' if self.workers > 1 else ''}"

    @property
    def seconds(self) -> float:
        return self.summary.get("seconds", float("inf"))


def run_once(run: Run, source: Path, output: Path, batch_rows: int) -> None:
    """Run `parse_file` in a fresh process; keep the figures of the fastest run, the highest memory peaks."""
    import psutil

    options = {
        "template": SMOLLM3_TEMPLATE,
        "input_path": str(source),
        "output_path": str(output),
        "engine": run.engine,
        "num_proc": None if run.engine == "local" else run.workers,
        "batch_rows": batch_rows,
        "progress": False,
    }
    env = {**os.environ, "TQDM_DISABLE": "1", "PYTHONPATH": str(ROOT)}
    env.pop("RAY_ADDRESS", None)  # a local cluster of `workers` CPUs, as the command starts
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-c", RUNNER, json.dumps(options)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    watched = psutil.Process(process.pid)
    peak = peak_anonymous = 0
    cpu_by_process: dict[
        tuple[int, float], float
    ] = {}  # (pid, creation time) -> CPU seconds last seen
    while process.poll() is None:
        rss = anonymous = 0
        try:
            for member in [watched, *watched.children(recursive=True)]:
                try:
                    rss += member.memory_info().rss
                    anonymous += _anonymous_bytes(member.pid)
                    times = member.cpu_times()
                    cpu_by_process[(member.pid, member.create_time())] = times.user + times.system
                except (psutil.Error, OSError):
                    pass
        except psutil.Error:
            pass
        peak, peak_anonymous = max(peak, rss), max(peak_anonymous, anonymous)
        time.sleep(0.5)
    whole = time.perf_counter() - started
    stdout, stderr = process.communicate()
    if process.returncode != 0:
        raise SystemExit(f"{run.name} failed ({process.returncode}):\n{stderr[-2000:]}")
    summary = json.loads(stdout.strip().splitlines()[-1])
    digest = hashlib.sha256()
    with open(output, "rb") as handle:
        while block := handle.read(1 << 24):
            digest.update(block)
    output.unlink()
    if run.digest and digest.hexdigest() != run.digest:
        raise SystemExit(f"{run.name}: the output differs from its previous run")
    run.digest = digest.hexdigest()
    if summary["seconds"] < run.seconds:
        run.summary, run.whole, run.tree_cpu = summary, whole, sum(cpu_by_process.values())
    run.rss, run.anonymous = max(run.rss, peak / 1e6), max(run.anonymous, peak_anonymous / 1e6)


def measure(
    rows: int, names: list[str], repeats: int, batch_rows: int, output_format: str, work: Path
) -> list[Run]:
    runs = [Run(*RUNS[name]) for name in ["local", *(name for name in names if name != "local")]]
    source = work / f"input-{rows}.jsonl"
    print(f"writing {rows:,} rows ...", file=sys.stderr)
    size = write_input(source, rows)
    print(
        f"{rows:,} rows, {size / 1e6:,.0f} MB of JSONL; output {output_format}, batches of {batch_rows:,} rows",
        file=sys.stderr,
    )
    try:
        for repeat in range(repeats):
            for run in runs:
                print(f"  run {repeat + 1}/{repeats}: {run.name} ...", file=sys.stderr)
                run_once(run, source, work / f"output.{output_format}", batch_rows)
    finally:
        source.unlink(missing_ok=True)
    for run in runs[1:]:
        if run.digest != runs[0].digest:
            raise SystemExit(
                f"{rows:,} rows: {run.name} wrote another output than the in-process run"
            )
    return runs


def _print_tables(results: dict[int, list[Run]]) -> None:
    print(
        f"{'rows':>9}  {'engine':26} {'shards':>6} {'start+stop s':>12} {'run s':>7} {'rows/s':>7} {'speedup':>7} "
        f"{'efficiency':>10} {'whole s':>8} {'work CPU s':>10} {'tree CPU s':>10} {'peak RSS MB':>11} {'anon MB':>8}"
    )
    for rows, runs in results.items():
        local = runs[0]
        for run in runs:
            speedup = local.seconds / run.seconds
            print(
                f"{rows:>9,}  {run.name:26} {run.summary['shards']:>6} {run.summary['startup_seconds'] + run.summary['shutdown_seconds']:>12.2f} {run.seconds:>7.2f} "
                f"{rows / run.seconds:>7,.0f} {speedup:>7.2f} {speedup / run.workers:>10.2f} {run.whole:>8.2f} "
                f"{run.summary['cpu_seconds']:>10.2f} {run.tree_cpu:>10.2f} {run.rss:>11,.0f} "
                f"{run.anonymous:>8,.0f}"
            )
    print("\nwhere the time went (seconds; the workers' stages summed over the workers):")
    print(
        f"{'rows':>9}  {'engine':26} "
        + " ".join(f"{stage:>9}" for stage in STAGES)
        + f" {'parse share':>11}"
    )
    for rows, runs in results.items():
        for run in runs:
            stages = run.summary["stages"]
            work = sum(stages[stage] for stage in WORKER_STAGES)
            print(
                f"{rows:>9,}  {run.name:26} "
                + " ".join(f"{stages[stage]:>9.2f}" for stage in STAGES)
                + f" {stages['parse'] / work:>11.0%}"
            )
    lines = []
    for rows, runs in results.items():
        by_name = {(run.engine, run.workers): run for run in runs}
        for engine in ("datasets", "ray"):
            if (engine, 1) in by_name and (engine, 2) in by_name:
                one, two = by_name[(engine, 1)], by_name[(engine, 2)]
                lines.append(
                    f"{rows:>9,}  {engine:9} 2 workers x{one.seconds / two.seconds:.2f} of 1, efficiency {one.seconds / (2 * two.seconds):.2f}; "
                    f"x{runs[0].seconds / two.seconds:.2f} of in-process (x{runs[0].whole / two.whole:.2f} whole process)"
                )
    if lines:
        print(
            "\nscaling, 2 workers against 1 of the same engine (rows/s of 2 / twice those of 1; 1.00 is perfect):"
        )
        print("\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--rows",
        type=int,
        nargs="+",
        default=[100_000],
        help="row counts to run, each a generated file (default 100000; the full table: 100000 1000000)",
    )
    parser.add_argument(
        "--repeats", type=int, default=1, help="runs of each engine; the fastest counts (default 1)"
    )
    parser.add_argument(
        "--runs",
        nargs="+",
        choices=list(RUNS),
        default=list(RUNS),
        help="which engines and worker counts (default: all; the in-process run is always made)",
    )
    parser.add_argument(
        "--batch-size",
        type=int,
        default=1000,
        help="rows per batch (default 1000, the command's default)",
    )
    parser.add_argument(
        "--output-format",
        choices=["jsonl", "parquet"],
        default="jsonl",
        help="OUTPUT's format (default jsonl)",
    )
    parser.add_argument(
        "--work-dir",
        help="where the input and output files go (default: the system's temporary directory)",
    )
    args = parser.parse_args(argv)
    load = " ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"load average before: {load} ({os.cpu_count()} CPUs)")
    results = {}
    with tempfile.TemporaryDirectory(dir=args.work_dir, prefix="bench_batch-") as work:
        for rows in args.rows:
            results[rows] = measure(
                rows, args.runs, args.repeats, args.batch_size, args.output_format, Path(work)
            )
    print(
        f"best of {args.repeats}; every engine's output equals the in-process one byte for byte\n"
    )
    _print_tables(results)
    print(f"\nload average after: {' '.join(f'{value:.2f}' for value in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
