"""Parse a JSONL or Parquet file of stored generations: what ``python -m engine batch`` runs.

`parse_file` cuts INPUT into shards (`engine.batch.files.InputFile.shards`) and every engine
runs the same pipeline on each, `parse_shard`: read a batch of rows, parse it with
`engine.batch.columns.parse_batch`, write it, and on to the next batch. The whole pipeline runs in
the worker, so reading and writing are spread over the workers with the parsing:

- ``local``: this process, on the whole file as one shard, writing OUTPUT itself.
- ``datasets``: `datasets.Dataset.map` over the list of shards with `num_proc` processes,
  each writing its shards' part files beside OUTPUT.
- ``ray``: a Ray task a shard, at most `num_proc` at once, on a local cluster or the one
  `RAY_ADDRESS` names (whose workers must reach INPUT and the part files at the same paths).

This process joins the parts into OUTPUT in shard order as they are done, while the workers
go on (a copy in the kernel for JSONL; Parquet is written from Arrow parts, which need no
decoding). Memory stays bounded whatever the input's size: a worker holds one batch of rows,
and this process none.

A malformed row stops the run with an `InputFileError` naming the file and line (JSONL) or row
(Parquet): the first in file order, whichever worker finds it first; the workers on later
shards stop at their next batch. docs/batch.md has more, with where the time goes.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from time import perf_counter
from typing import Any, Callable

from ..parser import ON_ERROR_MODES
from ..template import load_template
from .columns import parse_batch
from .files import (
    BATCH_ROWS,
    InputBatch,
    InputFile,
    InputFileError,
    OutputFile,
    Shard,
    file_format,
    open_writer,
    output_schema,
)

ENGINES = ("local", "datasets", "ray")

# Text in a shard, at most (prefixes and generations, about 7,000 rows of 4 KB): a worker's
# unit of work, and of the progress bar with datasets. The count of shards is a multiple of
# the workers', so that equal workers finish together.
SHARD_BYTES = 32 << 20

# Below this much text (2 to 3 s of work in one process), more processes cost more to start
# (importing datasets and forking takes about 1.7 s) than they save: `choose_engine`
# parses in this process when no engine was asked for.
SMALL_INPUT_BYTES = 48 << 20

# Label of errors that belong to no field (a required field missing, a pattern over its budget).
NO_FIELD = "(message)"

# Stages of the run, in pipeline order. Workers' stages are summed over the workers.
STAGES = (
    "start-up",
    "plan",
    "read",
    "convert",
    "parse",
    "serialise",
    "write",
    "merge",
    "shut-down",
)
APART_STAGES = (
    "start-up",
    "shut-down",
)  # paid once a run whatever its size; not in `BatchSummary.seconds`
WORKER_STAGES = ("read", "convert", "parse", "serialise", "write")


@dataclass(frozen=True)
class ShardJob:
    """What every worker needs to parse its shards (sent to each once per task or map call).

    Attributes:
        input_file: INPUT.
        template: the response template as a dict or JSON text (compiled once per process).
        parse_options: `parse_batch`'s column and error options.
        output_format: ``"jsonl"`` or ``"parquet"``.
        schema: a Parquet OUTPUT's columns (`engine.batch.files.output_schema`), or None.
        batch_rows: rows per batch.
        directory: where part files and the markers of failed shards go; None when one
            process writes OUTPUT itself.
    """

    input_file: InputFile
    template: dict | str
    parse_options: dict
    output_format: str
    schema: Any
    batch_rows: int
    directory: str | None = None

    def part(self, shard: Shard) -> Path:
        """Where a shard's part file is once whole (it is written under another name and renamed)."""
        return (
            Path(self.directory)
            / f"part-{shard.index:06d}.{'jsonl' if self.output_format == 'jsonl' else 'arrow'}"
        )

    def failed(self, shard: Shard) -> Path:
        """The mark a worker leaves when a malformed row stopped its shard."""
        return Path(self.directory) / f"failed-{shard.index:06d}"


@dataclass
class ShardResult:
    """What a worker did with a shard.

    Attributes:
        index: the shard's place in the file.
        rows, rows_with_errors, errors_by_field, rows_with_warnings: as in `BatchSummary`.
        stages: seconds spent per stage (`WORKER_STAGES`).
        error: the `InputFileError` that stopped the shard, as `InputFileError.record` gives it, or None.
        stopped: True when the worker stopped early because an earlier shard failed.
        started: when the worker began the shard (seconds since the epoch).
        cpu_seconds: CPU time the worker spent on the shard (less than its stages' wall time
            when other processes held the CPUs).
    """

    index: int
    rows: int = 0
    rows_with_errors: int = 0
    errors_by_field: dict = field(default_factory=dict)
    rows_with_warnings: int = 0
    stages: dict = field(default_factory=dict)
    error: dict | None = None
    stopped: bool = False
    started: float = 0.0
    cpu_seconds: float = 0.0

    def add(self, errors: list[str | None], error_fields: list[list[str | None]]) -> None:
        self.rows += len(errors)
        for error, fields in zip(errors, error_fields):
            if error is not None:
                self.rows_with_errors += 1
                for name in fields:
                    label = NO_FIELD if name is None else name
                    self.errors_by_field[label] = self.errors_by_field.get(label, 0) + 1


def parse_shard(
    job: ShardJob,
    shard: Shard,
    output: Path | None = None,
    on_batch: Callable[[InputBatch], None] | None = None,
) -> ShardResult:
    """Read, parse and write one shard, a batch at a time: the pipeline every engine runs.

    Args:
        job: the run's settings.
        shard: the piece of INPUT to parse.
        output: write here (OUTPUT's final format) instead of to the shard's part file.
        on_batch: called after each batch is written (the local engine's progress bar).

    Returns:
        A `ShardResult`. A malformed row does not raise: the shard stops there and its result
        holds the error, so that the caller reports the first one in file order.
    """
    result = ShardResult(index=shard.index, started=time.time())
    cpu = time.process_time()
    stages: Counter = Counter()
    template = load_template(job.template)  # compiled on a process's first shard, then cached
    path = output if output is not None else job.part(shard).with_suffix(".partial")
    writer = open_writer(
        path,
        job.output_format,
        job.schema,
        job.input_file,
        part=output is None,
        batch_rows=job.batch_rows,
    )
    try:
        for batch in job.input_file.batches(shard, job.batch_rows, stages):
            started = perf_counter()
            parsed = parse_batch(batch.columns, template, **job.parse_options)
            stages["parse"] += perf_counter() - started
            writer.write(batch, parsed["message"], parsed["error"], stages)
            result.add(parsed["error"], parsed["error_fields"])
            result.rows_with_warnings += sum(
                found is not None for found in parsed.get("warnings", ())
            )
            if on_batch is not None:
                on_batch(batch)
            if job.directory is not None and _earlier_shard_failed(job.directory, shard.index):
                result.stopped = True
                break
    except InputFileError as error:
        result.error = error.record()
        if job.directory is not None:
            job.failed(shard).touch()
    finally:
        started = perf_counter()
        writer.close()
        stages["write"] += perf_counter() - started
    if output is None and result.error is None and not result.stopped:
        os.replace(path, job.part(shard))
    result.stages = dict(stages)
    result.cpu_seconds = time.process_time() - cpu
    return result


def _earlier_shard_failed(directory: str, index: int) -> bool:
    return any(
        name.startswith("failed-") and int(name[7:]) < index for name in os.listdir(directory)
    )


@dataclass
class BatchSummary:
    """What a `parse_file` run did.

    Attributes:
        rows: rows parsed and written.
        rows_with_errors: rows whose `error` is set.
        errors_by_field: how many errors each field had (`NO_FIELD` for message-level ones),
            most first.
        rows_with_warnings: rows whose parse gave a warning (`parser.warnings`: text it probably
            put where it does not belong, see `engine.account`).
        seconds: wall time of the run: reading, parsing, writing and joining the parts; start-up
            and shut-down are not counted.
        startup_seconds: wall time before the first shard began: importing datasets or Ray;
            Ray's cluster starting (or connecting) and its workers importing the engine;
            datasets' processes starting.
        shutdown_seconds: wall time of stopping the Ray cluster this run started (or
            disconnecting from one).
        engine, workers: the engine, and its processes (for Ray, the tasks at once: all the
            cluster's CPUs unless `num_proc` says fewer).
        shards: the pieces INPUT was cut into (1 for the local engine).
        stages: seconds per stage (`STAGES`): this process's start-up, plan, merge and
            shut-down, the workers' read, convert, parse, serialise and write summed over the
            workers.
        cpu_seconds: the workers' CPU time on their shards, summed.
    """

    engine: str
    workers: int
    rows: int = 0
    rows_with_errors: int = 0
    errors_by_field: Counter = field(default_factory=Counter)
    rows_with_warnings: int = 0
    seconds: float = 0.0
    startup_seconds: float = 0.0
    shutdown_seconds: float = 0.0
    shards: int = 1
    stages: Counter = field(default_factory=Counter)
    cpu_seconds: float = 0.0

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.seconds if self.seconds else 0.0

    def add(self, result: ShardResult) -> None:
        self.rows += result.rows
        self.rows_with_errors += result.rows_with_errors
        self.errors_by_field.update(result.errors_by_field)
        self.rows_with_warnings += result.rows_with_warnings
        self.stages.update(result.stages)
        self.cpu_seconds += result.cpu_seconds

    def record(self) -> dict:
        """The summary as JSON-able values (what `scripts/bench_batch.py` reads)."""
        values = asdict(self)
        values["errors_by_field"] = dict(self.errors_by_field.most_common())
        values["stages"] = {stage: self.stages.get(stage, 0.0) for stage in STAGES}
        return values


def choose_engine(input_path: str | Path, num_proc: int | None) -> tuple[str, str | None]:
    """The engine for a run that named none: ``local`` for one process, else ``datasets``, unless
    INPUT holds less than `SMALL_INPUT_BYTES` of text, which this process parses quicker than
    `num_proc` processes start. Returns the engine and, when it chose ``local`` over more
    processes, a note saying why."""
    if (num_proc or 1) <= 1:
        return "local", None
    try:
        size = InputFile(input_path).text_bytes
    except (OSError, ValueError):  # parse_file names the problem
        return "datasets", None
    if size < SMALL_INPUT_BYTES:
        return "local", (
            f"the input is small ({size / 1e6:.1f} MB of text): parsing it in this process, which is quicker than starting "
            f"{num_proc} processes (give --engine datasets or --engine ray to use them anyway)"
        )
    return "datasets", None


def parse_file(
    template: dict | str,
    input_path: str | Path,
    output_path: str | Path,
    *,
    engine: str = "local",
    num_proc: int | None = None,
    prefix_column: str | None = "prefix",
    output_column: str = "output",
    tools_column: str | None = None,
    on_error: str = "keep",
    batch_rows: int = BATCH_ROWS,
    keep_input: bool = False,
    regex_timeout: float | None = None,
    progress: bool = True,
    shard_bytes: int = SHARD_BYTES,
) -> BatchSummary:
    """Parse every row of INPUT with `template` and write OUTPUT in the same order.

    Args:
        template: the response template (a dict or its JSON text).
        input_path, output_path: .jsonl/.ndjson or .parquet/.pq files (either format either
            way). OUTPUT is written beside itself under a temporary name and renamed at the end,
            so a failed run leaves no partial file.
        engine: ``"local"``, ``"datasets"`` or ``"ray"`` (see the module docstring).
        num_proc: worker processes (datasets: `num_proc`; Ray: at most this many tasks at once,
            and the CPUs of the local cluster it starts). None: 1 for datasets, every CPU for
            Ray. The local engine takes only 1.
        prefix_column, output_column, tools_column, on_error, regex_timeout: as for
            `parse_batch`.
        batch_rows: rows per batch (and per row group of a Parquet OUTPUT).
        keep_input: also write the prefix, output and tools columns to OUTPUT.
        progress: show a progress bar (on stderr).
        shard_bytes: text in a shard, at most (datasets and Ray).

    Returns:
        A `BatchSummary`.

    Raises:
        TemplateError: the template is invalid (before anything is read).
        InputFileError: a malformed input row (names the file and line or row).
        FileNotFoundError, ValueError: no input file; an unknown format, engine or mode.
        ImportError: the engine's package (datasets, ray, pyarrow) is not installed.
    """
    started = perf_counter()
    load_template(template)
    _check_options(engine, on_error, num_proc, batch_rows)
    input_file = InputFile(
        input_path,
        prefix_column=prefix_column,
        output_column=output_column,
        tools_column=tools_column,
        keep_input=keep_input,
    )
    output = Path(output_path)
    output_format = file_format(output)
    # The first batch is checked here, before any worker starts, and types a Parquet OUTPUT.
    first = input_file.first_batch(batch_rows)
    job = ShardJob(
        input_file=input_file,
        template=template,
        parse_options={
            "prefix_column": "prefix" if prefix_column is not None else None,
            "output_column": "output",
            "tools_column": "tools" if tools_column is not None else None,
            "on_error": on_error,
            "error_fields": True,
            "warnings": True,
            "regex_timeout": regex_timeout,
        },
        output_format=output_format,
        schema=output_schema(input_file, first) if output_format == "parquet" else None,
        batch_rows=batch_rows,
    )
    summary = BatchSummary(engine=engine, workers=num_proc or 1)
    summary.stages["plan"] = perf_counter() - started
    _run(job, output, summary, num_proc, progress, shard_bytes)
    summary.seconds = perf_counter() - started - summary.startup_seconds - summary.shutdown_seconds
    summary.stages["start-up"] = summary.startup_seconds
    summary.stages["shut-down"] = summary.shutdown_seconds
    return summary


def _check_options(engine: str, on_error: str, num_proc: int | None, batch_rows: int) -> None:
    """Raise ValueError for an unknown engine or mode, or a count out of range."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    if on_error not in ON_ERROR_MODES:
        raise ValueError(f"on_error must be one of {ON_ERROR_MODES}, got {on_error!r}")
    if num_proc is not None and num_proc < 1:
        raise ValueError(f"num_proc must be at least 1, got {num_proc}")
    if engine == "local" and (num_proc or 1) > 1:
        raise ValueError(
            "the local engine parses in this process only; for more processes use the datasets or ray engine"
        )
    if batch_rows < 1:
        raise ValueError(f"batch_rows must be at least 1, got {batch_rows}")


def _run(
    job: ShardJob,
    output: Path,
    summary: BatchSummary,
    num_proc: int | None,
    progress: bool,
    shard_bytes: int,
) -> None:
    """Run `job` on `summary.engine` into a partial file beside `output`, renamed to it at the
    end (removed when the run fails, so a failed run leaves no partial file)."""
    output.parent.mkdir(parents=True, exist_ok=True)
    partial = output.with_name(f".{output.name}.partial")
    try:
        if summary.engine == "local":
            _run_local(job, partial, summary, progress)
        else:
            with _WorkDirectory(output) as directory:
                job = replace(job, directory=str(directory))
                output_file = OutputFile(partial, job.output_format, job.schema, job.batch_rows)
                run = _run_datasets if summary.engine == "datasets" else _run_ray
                try:
                    run(job, output_file, summary, num_proc, progress, shard_bytes)
                finally:
                    output_file.close()
        os.replace(partial, output)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def _bar(progress: bool, input_file: InputFile, description: str):
    from tqdm.auto import tqdm

    hidden = (
        {} if progress else {"disable": True}
    )  # not passed when shown, so TQDM_DISABLE=1 still hides it
    unit = input_file.extent_unit
    return tqdm(
        total=input_file.extent,
        unit=unit,
        unit_scale=unit == "B",
        desc=description,
        dynamic_ncols=True,
        **hidden,
    )


def _run_local(job: ShardJob, partial: Path, summary: BatchSummary, progress: bool) -> None:
    with _bar(progress, job.input_file, "parsing") as bar:
        result = parse_shard(
            job,
            job.input_file.whole(),
            output=partial,
            on_batch=lambda batch: bar.update(batch.extent),
        )
    _take(job, result, summary)


def _take(
    job: ShardJob, result: ShardResult, summary: BatchSummary, shards: list[Shard] | None = None
) -> None:
    """Count a shard's result, or raise the error that stopped it (its lines counted from the file's start)."""
    if result.error is not None:
        error = InputFileError(**result.error)
        if shards is not None and job.input_file.format == "jsonl":
            error = error.after_lines(job.input_file.lines_before(shards[result.index].start))
        raise error
    if result.stopped:  # only after an earlier shard failed, which was raised first
        raise RuntimeError(f"shard {result.index} stopped early with no failed shard before it")
    summary.add(result)


def _merge(job: ShardJob, shard: Shard, summary: BatchSummary, output: OutputFile) -> None:
    started = perf_counter()
    output.append(job.part(shard))
    summary.stages["merge"] += perf_counter() - started


class _PartJoiner(threading.Thread):
    """Joins the parts into OUTPUT in shard order as the `datasets` processes finish them, while
    the map runs (a part appears under its final name once whole); stops at a failed shard."""

    def __init__(
        self, job: ShardJob, shards: list[Shard], summary: BatchSummary, output: OutputFile
    ):
        super().__init__(name="part joiner", daemon=True)
        self._job, self._shards, self._summary, self._output = job, shards, summary, output
        self.map_done = threading.Event()
        self.joined = 0
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            for shard in self._shards:
                while not self._job.part(shard).exists():
                    if self._job.failed(shard).exists() or (
                        self.map_done.is_set() and not self._job.part(shard).exists()
                    ):
                        return
                    time.sleep(0.02)
                _merge(self._job, shard, self._summary, self._output)
                self.joined += 1
        except BaseException as error:  # raised in the calling thread once the map is done
            self.error = error


class _WorkDirectory:
    """A temporary directory beside OUTPUT (on storage a cluster's workers may share), removed at the end."""

    def __init__(self, beside: Path):
        self.path = Path(tempfile.mkdtemp(prefix=f".{beside.name}.work-", dir=beside.parent))

    def __enter__(self) -> Path:
        return self.path

    def __exit__(self, *exc) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def _plan(job: ShardJob, summary: BatchSummary, workers: int, shard_bytes: int) -> list[Shard]:
    started = perf_counter()
    shards = job.input_file.shards(workers, shard_bytes)
    summary.shards = len(shards)
    summary.stages["plan"] += perf_counter() - started
    return shards


def _parse_shard_rows(rows: dict[str, list], job: ShardJob) -> dict[str, list]:
    """`parse_shard` as a batched `datasets` map function: a row per shard in, its result as JSON text out."""
    results = []
    for index, start, stop in zip(rows["index"], rows["start"], rows["stop"]):
        results.append(json.dumps(asdict(parse_shard(job, Shard(index, start, stop)))))
    return {"result": results}


def _run_datasets(
    job: ShardJob,
    output: OutputFile,
    summary: BatchSummary,
    num_proc: int | None,
    progress: bool,
    shard_bytes: int,
) -> None:
    importing = perf_counter()
    import datasets

    imported = perf_counter() - importing
    workers = num_proc or 1
    shards = _plan(job, summary, workers, shard_bytes)
    bars_were_on = datasets.is_progress_bar_enabled()
    (datasets.enable_progress_bars if progress else datasets.disable_progress_bars)()
    joiner = _PartJoiner(job, shards, summary, output)
    joiner.start()
    try:
        table = datasets.Dataset.from_list([asdict(shard) for shard in shards])
        called = time.time()
        parsed = table.map(
            _parse_shard_rows,
            batched=True,
            batch_size=1,
            num_proc=min(workers, len(shards)) if workers > 1 else None,
            fn_kwargs={"job": job},
            remove_columns=table.column_names,
            features=datasets.Features({"result": datasets.Value("string")}),
            load_from_cache_file=False,
            cache_file_name=str(Path(job.directory) / "results.arrow"),
            desc=f"parsing {len(shards)} shards",
        )
    finally:
        joiner.map_done.set()
        joiner.join()
        (datasets.enable_progress_bars if bars_were_on else datasets.disable_progress_bars)()
    if joiner.error is not None:
        raise joiner.error
    results = sorted(
        (ShardResult(**json.loads(text)) for text in parsed["result"]),
        key=lambda result: result.index,
    )
    summary.startup_seconds = imported + max(
        0.0, min(result.started for result in results) - called
    )
    for result in results:
        _take(job, result, summary, shards)
    if joiner.joined != len(shards):
        raise RuntimeError(
            f"{joiner.joined} of {len(shards)} parts were joined, with no failed shard"
        )


def _warm_up(template: dict | str) -> int:
    """Import the engine and compile the template in a Ray worker (before the run's clock starts)."""
    load_template(template)
    return os.getpid()


def _run_ray(
    job: ShardJob,
    output: OutputFile,
    summary: BatchSummary,
    num_proc: int | None,
    progress: bool,
    shard_bytes: int,
) -> None:
    starting = perf_counter()
    import ray

    started_here = not ray.is_initialized()
    if started_here:
        address = os.environ.get("RAY_ADDRESS")
        try:
            if address:
                # An existing cluster: ship this engine package to its workers.
                ray.init(runtime_env={"py_modules": [str(Path(__file__).resolve().parents[1])]})
            else:
                # A cluster of this machine only: on the loopback address, no dashboard.
                ray.init(num_cpus=num_proc, include_dashboard=False, _node_ip_address="127.0.0.1")
        except Exception as error:
            # Ray raises a bare Exception when its processes are slow to start ("The current node
            # timed out during startup"), ConnectionError for an unreachable address; its message
            # names neither the engine nor a way out.
            where = (
                f"the Ray cluster at RAY_ADDRESS={address}" if address else "a local Ray cluster"
            )
            raise ValueError(
                f"could not start {where}: {str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__}. "
                "On a busy machine Ray's processes can take too long to start: try again, or use --engine datasets"
            ) from error
    try:
        limit = summary.workers = num_proc or max(1, int(ray.cluster_resources().get("CPU", 1)))
        ray.get([ray.remote(num_cpus=1)(_warm_up).remote(job.template) for _ in range(limit)])
        summary.startup_seconds = perf_counter() - starting
        shards = _plan(job, summary, limit, shard_bytes)
        task = ray.remote(num_cpus=1)(parse_shard)
        running: dict = {}  # task reference -> shard index
        finished: dict[int, ShardResult] = {}
        submitted = merged = 0
        try:
            with _bar(progress, job.input_file, "parsing") as bar:
                while merged < len(shards):
                    while submitted < len(shards) and len(running) < limit:
                        running[task.remote(job, shards[submitted])] = submitted
                        submitted += 1
                    ready, _ = ray.wait(list(running), num_returns=1)
                    for reference in ready:
                        finished[running.pop(reference)] = ray.get(reference)
                    while merged in finished:  # in shard order, as soon as each is there
                        _take(job, finished.pop(merged), summary, shards)
                        _merge(job, shards[merged], summary, output)
                        bar.update(shards[merged].stop - shards[merged].start)
                        merged += 1
        finally:
            for reference in running:  # after a failure: the rest is not needed
                ray.cancel(reference)
    finally:
        stopping = perf_counter()
        if started_here:
            ray.shutdown()
        summary.shutdown_seconds = perf_counter() - stopping
