"""Batch parsing speed, side by side: in-process, datasets at 1 and 2 processes, local Ray.

Run it with ``python scripts/bench_batch.py`` (``--help`` for the options). Every engine parses
the same rows (SmolLM3-shaped generations of about 4 KB with reasoning, tool calls and content,
from tests/workloads.py) with `engine.batch.parse_batch`, and the script prints rows per second
and MB/s for each, then the scaling efficiency: the rows per second of 2 processes divided by
twice those of 1 (1.00 is perfect scaling). Engine start-up (a datasets process pool is part of
every `map`, so it is counted; Ray's cluster and its first task are not) is left to the figures
it belongs to, and each engine's result is checked against the in-process one.

``--memory ROWS`` instead writes a JSONL file of ROWS such rows and runs
``python -m engine batch`` on it with each engine, printing the peak resident memory of the
command and all its worker processes (summed, sampled every 0.1 s), and their anonymous memory
(heap and arrays, not pages of memory-mapped files, which the kernel can drop at will; a page
that forked processes share counted once): bounded memory means the anonymous peak does not
grow with the input. The RSS of the datasets engine includes the pages of its memory-mapped
Arrow files it has touched, and a page its forked workers share with it once per process.

It is a benchmark, not a test: timings depend on the machine and its load (it prints the load
average before and after).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.batch import datasets_features, parse_batch  # noqa: E402
from tests.workloads import KB, SMOLLM3_TEMPLATE, make_case  # noqa: E402

DISTINCT_ROWS = 200  # distinct generations, repeated to make up the rows


def make_rows(count: int, size: int = 4 * KB) -> dict[str, list]:
    """`count` rows as columns `id`, `prefix`, `output`: generations cycling through DISTINCT_ROWS seeds."""
    cases = [make_case("smollm3", size, seed=seed) for seed in range(min(count, DISTINCT_ROWS))]
    return {
        "id": list(range(count)),
        "prefix": [cases[i % len(cases)].prefix for i in range(count)],
        "output": [cases[i % len(cases)].text for i in range(count)],
    }


def _options(template: dict) -> dict:
    return {"template": template, "message_format": "json"}


def run_in_process(columns: dict[str, list], batch_size: int) -> list[str]:
    messages = []
    for start in range(0, len(columns["output"]), batch_size):
        batch = {name: values[start : start + batch_size] for name, values in columns.items()}
        messages += parse_batch(batch, **_options(SMOLLM3_TEMPLATE))["message"]
    return messages


def run_datasets(dataset, batch_size: int, num_proc: int) -> list[str]:
    parsed = dataset.map(
        parse_batch, batched=True, batch_size=batch_size, num_proc=num_proc, fn_kwargs=_options(SMOLLM3_TEMPLATE),
        remove_columns=dataset.column_names, features=datasets_features(), load_from_cache_file=False,
    )
    return parsed["message"]


def run_ray(table, batch_size: int) -> list[str]:
    import ray.data

    parsed = ray.data.from_arrow(table).repartition(8).map_batches(
        parse_batch, batch_size=batch_size, batch_format="pyarrow", fn_kwargs=_options(SMOLLM3_TEMPLATE)
    )
    return [message for batch in parsed.iter_batches(batch_size=1000, batch_format="pyarrow") for message in batch.column("message").to_pylist()]


def timed(label: str, function, *args, expected=None, repeats: int = 1) -> tuple[str, float, list]:
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function(*args)
        best = min(best, time.perf_counter() - start)
    if expected is not None and result != expected:
        raise SystemExit(f"{label}: messages differ from in-process parsing")
    return label, best, result


def speed(rows: int, batch_size: int, repeats: int) -> int:
    import datasets
    import pyarrow as pa
    import ray

    datasets.disable_progress_bars()
    columns = make_rows(rows)
    megabytes = sum(len(text.encode()) for text in columns["output"]) / 1e6
    print(f"load average before: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} ({os.cpu_count()} CPUs)")
    print(f"{rows} rows, {megabytes / rows * 1e3:.1f} KB generations on average, batches of {batch_size} rows, best of {repeats}\n")
    results = []
    label, seconds, expected = timed("in-process", run_in_process, columns, batch_size, repeats=repeats)
    results.append((label, seconds))
    with tempfile.TemporaryDirectory() as work:
        # On disk, memory-mapped, as a loaded dataset is: workers open the file instead of unpickling the rows.
        datasets.Dataset.from_dict(columns).save_to_disk(f"{work}/rows")
        dataset = datasets.load_from_disk(f"{work}/rows")
        for num_proc in (1, 2):
            results.append(
                timed(f"datasets num_proc={num_proc}", run_datasets, dataset, batch_size, num_proc, expected=expected, repeats=repeats)[:2]
            )
        del dataset
    ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False)
    try:
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False
        context.execution_options.preserve_order = True
        table = pa.table(columns)
        run_ray(table.slice(0, 50), batch_size)  # start the workers
        results.append(timed("ray (local, 2 CPUs)", run_ray, table, batch_size, expected=expected, repeats=repeats)[:2])
    finally:
        ray.shutdown()
    print(f"{'engine':24} {'seconds':>8} {'rows/s':>8} {'MB/s':>6}")
    for label, seconds in results:
        print(f"{label:24} {seconds:8.2f} {rows / seconds:8.0f} {megabytes / seconds:6.1f}")
    rates = {label: rows / seconds for label, seconds in results}
    print(f"\nscaling efficiency, datasets 2 processes / (2 x 1 process): {rates['datasets num_proc=2'] / (2 * rates['datasets num_proc=1']):.2f}")
    print(f"ray on 2 CPUs / (2 x in-process): {rates['ray (local, 2 CPUs)'] / (2 * rates['in-process']):.2f}")
    print(f"load average after: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    return 0


def _anonymous_bytes(pid: int) -> int:
    """Pss_Anon of a process: its memory not backed by a file (heap, stacks, arrays), each page
    it shares with other processes (a forked worker's inherited pages) counted in proportion."""
    with open(f"/proc/{pid}/smaps_rollup") as rollup:
        for line in rollup:
            if line.startswith("Pss_Anon:"):
                return int(line.split()[1]) * 1024
    return 0


def peak_memory(command: list[str], env: dict) -> tuple[int, float, float, list[str]]:
    """Run `command`; return its status, the peaks (MB) of the summed RSS and of the summed
    anonymous memory (Pss_Anon) of it and its descendants, and the last lines of its stderr."""
    import psutil

    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    watched = psutil.Process(process.pid)
    peak = peak_anonymous = 0
    while process.poll() is None:
        try:
            tree = [watched, *watched.children(recursive=True)]
            rss = anonymous = 0
            for member in tree:
                try:
                    rss += member.memory_info().rss
                    anonymous += _anonymous_bytes(member.pid)
                except (psutil.Error, OSError):
                    pass
            peak, peak_anonymous = max(peak, rss), max(peak_anonymous, anonymous)
        except psutil.Error:
            pass
        time.sleep(0.1)
    return process.returncode, peak / 1e6, peak_anonymous / 1e6, process.stderr.read().strip().splitlines()[-2:]


def memory(rows: int) -> int:
    columns = make_rows(rows)
    with tempfile.TemporaryDirectory() as work:
        source = Path(work) / "input.jsonl"
        with open(source, "w", encoding="utf-8") as handle:
            for index in range(rows):
                handle.write(json.dumps({name: values[index] for name, values in columns.items()}) + "\n")
        del columns
        template = Path(work) / "template.json"
        template.write_text(json.dumps(SMOLLM3_TEMPLATE))
        print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print(f"input: {rows} rows, {source.stat().st_size / 1e6:.0f} MB of JSONL\n")
        print(f"{'engine':22} {'peak RSS (MB)':>14} {'anonymous (MB)':>16}  summary")
        env = {**os.environ, "TQDM_DISABLE": "1"}
        env.pop("RAY_ADDRESS", None)
        for label, options in (("local", ["--engine", "local"]), ("datasets num_proc=2", ["--num-proc", "2"]),
                               ("ray (local, 2 CPUs)", ["--engine", "ray", "--num-proc", "2"])):
            output = Path(work) / "output.jsonl"
            command = [sys.executable, "-m", "engine", "batch", str(template), str(source), "--output", str(output), *options]
            status, peak, anonymous, tail = peak_memory(command, env)
            print(f"{label:22} {peak:14.0f} {anonymous:16.0f}  {' / '.join(line.split(' -> ')[0] for line in tail) if status == 0 else f'FAILED ({status}): {tail}'}")
            output.unlink(missing_ok=True)
        print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=8000, help="rows to parse (default 8000)")
    parser.add_argument("--batch-size", type=int, default=250, help="rows per batch (default 250)")
    parser.add_argument("--repeats", type=int, default=1, help="runs per engine; the fastest counts (default 1)")
    parser.add_argument("--memory", type=int, metavar="ROWS", help="peak RSS of `python -m engine batch` on ROWS generated rows, per engine")
    args = parser.parse_args(argv)
    if args.memory:
        return memory(args.memory)
    return speed(args.rows, args.batch_size, args.repeats)


if __name__ == "__main__":
    sys.exit(main())
