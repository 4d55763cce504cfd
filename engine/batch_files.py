"""Parse a JSONL or Parquet file of stored generations: what ``python -m engine batch`` runs.

`parse_file` reads INPUT in batches of rows, parses them with `engine.batch.parse_batch` and
writes OUTPUT in the same order: each row's other columns, then `message` and `error`. Three
engines run the parsing:

- ``local``: this process, one batch at a time (read, parse, write).
- ``datasets``: the rows' prefix, output and tools columns are staged as Parquet shards in a
  work directory beside OUTPUT, `datasets.Dataset.map` parses them in `num_proc` processes
  into memory-mapped Arrow files, and INPUT is read again to write each row with its result.
- ``ray``: the same shards, read by Ray Data and parsed by its streaming execution on the
  workers of the cluster (a local one, or the one `RAY_ADDRESS` names); results come back
  in order while INPUT is read again alongside them.

Memory stays bounded whatever the input's size: no stage holds more than a batch of rows in a
Python list, and the engines' workers a shard or a block at a time. Reading INPUT twice (rather than sending its other columns
through the engine) keeps those columns exactly as they were, whatever their JSON shapes.

Every row is checked when it is first read, so a malformed row (a line that is not a JSON
object, a missing column, an output that is not text) stops the run before any parsing, with
an `InputError` naming the file and line (JSONL) or row (Parquet). docs/batch.md has more.
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .batch import datasets_features, describe_value, parse_batch, read_tools, text_problem
from .parser import ON_ERROR_MODES
from .template import load_template

ENGINES = ("local", "datasets", "ray")

# Rows per batch: the unit of reading, parsing, staging and writing.
BATCH_ROWS = 1000

# Text in one staged shard (prefixes and generations, in characters): Ray reads a shard as one
# or more blocks to spread over its workers, and each file costs it some metadata work.
SHARD_CHARACTERS = 8_000_000

# Columns the output adds to each row.
MESSAGE_COLUMN, ERROR_COLUMN = "message", "error"

_FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet", ".pq": "parquet"}

# The parser's columns once read: how the staged shards and the engines' batches name them.
_STAGED_COLUMNS = ("prefix", "output", "tools")

# Label of errors that belong to no field (a required field missing, a pattern over its budget).
NO_FIELD = "(message)"


class InputError(ValueError):
    """A malformed input file or row: says which file and which line (JSONL) or row (Parquet)."""


def file_format(path: str | Path) -> str:
    """``"jsonl"`` or ``"parquet"``, from the file's extension.

    Raises:
        ValueError: another extension.
    """
    suffix = Path(path).suffix.lower()
    if suffix not in _FORMATS:
        raise ValueError(f"{path}: cannot tell the format from the extension {suffix or '(none)'!r}; use .jsonl or .parquet")
    return _FORMATS[suffix]


@dataclass
class InputBatch:
    """Consecutive rows of the input file.

    Attributes:
        rows: each row's line number (JSONL) or row number (Parquet), counting from 1.
        columns: the parser's columns ``prefix``, ``output`` (text) and ``tools`` (JSON text or
            None), one value per row.
        other: the columns written through to the output: a list of dicts (JSONL) or a pyarrow
            RecordBatch (Parquet).
    """

    rows: list[int]
    columns: dict[str, list]
    other: Any


class InputFile:
    """A JSONL or Parquet file of generations, read in batches and checked row by row.

    Args:
        path: the file; its extension gives the format (.jsonl/.ndjson or .parquet/.pq).
        prefix_column: the column of prompt texts, or None to parse every row with prefix "".
        output_column: the column of generations.
        tools_column: the column of tool schemas (a list, or its JSON text), or None.
        keep_input: write the prefix, output and tools columns through to the output too
            (by default only the other columns are).

    Attributes:
        format: ``"jsonl"`` or ``"parquet"``.
        dropped: the columns not written through to the output.

    Raises:
        FileNotFoundError: no such file.
        ValueError: an extension that names no known format.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        prefix_column: str | None = "prefix",
        output_column: str = "output",
        tools_column: str | None = None,
        keep_input: bool = False,
    ):
        self.path = Path(path)
        self.format = file_format(self.path)
        if not self.path.is_file():
            raise FileNotFoundError(f"no input file {self.path}")
        self.prefix_column = prefix_column
        self.output_column = output_column
        self.tools_column = tools_column
        self._parse_columns = [c for c in (prefix_column, output_column, tools_column) if c is not None]
        self.dropped = set() if keep_input else set(self._parse_columns)

    def count_rows(self) -> int:
        """Rows in the file (for JSONL, its lines: blank ones are counted but skipped)."""
        if self.format == "parquet":
            import pyarrow.parquet as pq

            return pq.ParquetFile(self.path).metadata.num_rows
        lines, last = 0, b"\n"
        with open(self.path, "rb") as handle:
            while block := handle.read(1 << 20):
                lines += block.count(b"\n")
                last = block[-1:]
        return lines + (last != b"\n")

    def batches(self, batch_rows: int = BATCH_ROWS) -> Iterator[InputBatch]:
        """The file's rows in order, `batch_rows` at a time (the last batch may be shorter).

        Raises:
            InputError: a malformed row (names the file and line or row) or a column the
                output would overwrite.
        """
        if self.format == "jsonl":
            return self._jsonl_batches(batch_rows)
        return self._parquet_batches(batch_rows)

    # -- JSONL --------------------------------------------------------------

    def _jsonl_batches(self, batch_rows: int) -> Iterator[InputBatch]:
        rows: list[int] = []
        columns: dict[str, list] = {name: [] for name in _STAGED_COLUMNS}
        other: list[dict] = []
        tools_by_text: dict[str, Any] = {}
        with open(self.path, "rb") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                where = f"{self.path} line {number}"
                row = _json_object(line, where)
                columns["prefix"].append(self._text(row, self.prefix_column, where, "--prefix-column, or --no-prefix"))
                columns["output"].append(self._text(row, self.output_column, where, "--output-column"))
                columns["tools"].append(self._tools_text(row.get(self.tools_column) if self.tools_column else None, where, tools_by_text))
                for name in (MESSAGE_COLUMN, ERROR_COLUMN):
                    if name in row and name not in self.dropped:
                        raise InputError(f"{where}: the row has a {name!r} key, which the output adds; rename it")
                other.append({key: value for key, value in row.items() if key not in self.dropped})
                rows.append(number)
                if len(rows) == batch_rows:
                    yield InputBatch(rows, columns, other)
                    rows, columns, other = [], {name: [] for name in _STAGED_COLUMNS}, []
        if rows:
            yield InputBatch(rows, columns, other)

    def _text(self, row: dict, column: str | None, where: str, option: str) -> str:
        if column is None:
            return ""
        if column not in row:
            keys = ", ".join(repr(key) for key in list(row)[:10]) or "none"
            raise InputError(f"{where}: no {column!r} key (the row has {keys}); name the column with {option}")
        if problem := text_problem(row[column]):
            raise InputError(f"{where}: {column!r}: {problem}")
        return row[column]

    def _tools_text(self, value: Any, where: str, tools_by_text: dict[str, Any]) -> str | None:
        try:
            tools = read_tools(value, tools_by_text)
        except ValueError as error:
            raise InputError(f"{where}: {self.tools_column!r}: {error}") from None
        if tools is None:
            return None
        return value if isinstance(value, str) else json.dumps(tools, ensure_ascii=False)

    # -- Parquet ------------------------------------------------------------

    def _parquet_batches(self, batch_rows: int) -> Iterator[InputBatch]:
        import pyarrow.parquet as pq

        source = pq.ParquetFile(self.path)
        schema = source.schema_arrow
        for column in self._parse_columns:
            if column not in schema.names:
                raise InputError(f"{self.path}: no column {column!r} (columns: {', '.join(schema.names)})")
        for name in (MESSAGE_COLUMN, ERROR_COLUMN):
            if name in schema.names and name not in self.dropped:
                raise InputError(f"{self.path}: has a column {name!r}, which the output adds; rename it")
        kept = [name for name in schema.names if name not in self.dropped]
        first = 1
        tools_by_text: dict[str, Any] = {}
        for record_batch in source.iter_batches(batch_size=batch_rows):
            count = record_batch.num_rows
            columns = {}
            for name, column, option in (
                ("prefix", self.prefix_column, "--prefix-column, or --no-prefix"),
                ("output", self.output_column, "--output-column"),
            ):
                values = record_batch.column(column).to_pylist() if column is not None else [""] * count
                for index, value in enumerate(values):
                    if problem := text_problem(value):
                        raise InputError(f"{self.path} row {first + index}: {column!r}: {problem} (name the column with {option})")
                columns[name] = values
            if self.tools_column is None:
                columns["tools"] = [None] * count
            else:
                columns["tools"] = [
                    self._tools_text(value, f"{self.path} row {first + index}", tools_by_text)
                    for index, value in enumerate(record_batch.column(self.tools_column).to_pylist())
                ]
            yield InputBatch(list(range(first, first + count)), columns, record_batch.select(kept))
            first += count


def _json_object(line: bytes, where: str) -> dict:
    try:
        row = json.loads(line)
    except UnicodeDecodeError as error:
        raise InputError(f"{where}: not UTF-8 text ({error.reason} at byte {error.start})") from None
    except json.JSONDecodeError as error:
        raise InputError(f"{where}: not valid JSON ({error.msg} at column {error.colno})") from None
    if not isinstance(row, dict):
        raise InputError(f"{where}: expected a JSON object, got {describe_value(row)}")
    return row


def _json_default(value: Any) -> Any:
    """Parquet values JSON has no type for: dates and times as ISO 8601 text, the rest as str."""
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    return str(value)


# -- writing ----------------------------------------------------------------


class _JsonlWriter:
    """Writes each row as a JSON object: its other columns, then `message` (an object) and `error`."""

    def __init__(self, path: Path):
        self._handle = open(path, "w", encoding="utf-8")

    def write(self, batch: InputBatch, messages: list[str | None], errors: list[str | None]) -> None:
        rows = batch.other if isinstance(batch.other, list) else batch.other.to_pylist()
        lines = []
        for row, message, error in zip(rows, messages, errors, strict=True):
            text = json.dumps(row, ensure_ascii=False, default=_json_default)
            added = []
            if message is not None:
                added.append(f'"{MESSAGE_COLUMN}": {message}')  # already JSON text
            if error is not None:
                added.append(f'"{ERROR_COLUMN}": {json.dumps(error, ensure_ascii=False)}')
            if added:
                text = text[:-1] + (", " if row else "") + ", ".join(added) + "}"
            lines.append(text)
        self._handle.write("".join(line + "\n" for line in lines))

    def close(self, input_file: InputFile) -> None:
        self._handle.close()


class _ParquetWriter:
    """Writes the other columns, then `message` (JSON text: one column type for every message's
    shape) and `error`; the schema is the first batch's."""

    def __init__(self, path: Path):
        self._path = path
        self._writer = None
        self._other_schema = None

    def write(self, batch: InputBatch, messages: list[str | None], errors: list[str | None]) -> None:
        import pyarrow as pa

        if isinstance(batch.other, list):
            table = self._table_from_rows(batch)
        else:
            table = pa.Table.from_batches([batch.other])
        table = table.append_column(MESSAGE_COLUMN, pa.array(messages, pa.string()))
        table = table.append_column(ERROR_COLUMN, pa.array(errors, pa.string()))
        if self._writer is None:
            import pyarrow.parquet as pq

            self._writer = pq.ParquetWriter(self._path, table.schema)
        self._writer.write_table(table)

    def _table_from_rows(self, batch: InputBatch):
        """JSONL rows as a table typed like the first batch's (a Parquet file has one schema)."""
        import pyarrow as pa

        rows = batch.other
        where = f"lines {batch.rows[0]}-{batch.rows[-1]}"
        if self._other_schema is None:
            try:
                table = pa.Table.from_pylist(rows)
            except (pa.ArrowInvalid, pa.ArrowTypeError) as error:
                raise InputError(f"{where}: these rows' values cannot make Parquet columns ({error})") from None
            self._other_schema = table.schema
        else:
            names = set(self._other_schema.names)
            for number, row in zip(batch.rows, rows):
                if new := [key for key in row if key not in names]:
                    raise InputError(
                        f"line {number}: key {new[0]!r} is not in the first batch of rows, and a Parquet file has "
                        "one schema; give it to every row, or write JSONL"
                    )
            try:
                table = pa.Table.from_pylist(rows, schema=self._other_schema)
            except (pa.ArrowInvalid, pa.ArrowTypeError) as error:
                raise InputError(f"{where}: values do not fit the column types of the first rows ({error})") from None
        if table.num_rows != len(rows):  # rows with no other columns make an empty table: keep the count
            table = pa.table({"_": pa.nulls(len(rows))}).drop_columns(["_"])
        return table

    def close(self, input_file: InputFile) -> None:
        if self._writer is None:  # no rows: still a valid file with the output's columns
            import pyarrow as pa
            import pyarrow.parquet as pq

            fields = []
            if input_file.format == "parquet":
                source = pq.ParquetFile(input_file.path).schema_arrow
                fields = [f for f in source if f.name not in input_file.dropped]
            schema = pa.schema(fields + [pa.field(MESSAGE_COLUMN, pa.string()), pa.field(ERROR_COLUMN, pa.string())])
            pq.write_table(schema.empty_table(), self._path)
            return
        self._writer.close()


# -- the run ----------------------------------------------------------------


@dataclass
class BatchSummary:
    """What a `parse_file` run did.

    Attributes:
        rows: rows parsed and written.
        rows_with_errors: rows whose `error` is set.
        errors_by_field: how many errors each field had (`NO_FIELD` for message-level ones),
            most first.
        seconds: wall time of the whole run (reading, parsing and writing).
        engine, workers: the engine, and its processes (None: all the Ray cluster's CPUs).
    """

    engine: str
    workers: int | None
    rows: int = 0
    rows_with_errors: int = 0
    errors_by_field: Counter = field(default_factory=Counter)
    seconds: float = 0.0

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.seconds if self.seconds else 0.0

    def add(self, errors: list[str | None], error_fields: list[list[str | None]]) -> None:
        self.rows += len(errors)
        for error, fields in zip(errors, error_fields):
            if error is not None:
                self.rows_with_errors += 1
                self.errors_by_field.update(NO_FIELD if name is None else name for name in fields)


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
) -> BatchSummary:
    """Parse every row of INPUT with `template` and write OUTPUT in the same order.

    Args:
        template: the response template (a dict or its JSON text).
        input_path, output_path: .jsonl/.ndjson or .parquet/.pq files (either format either
            way). OUTPUT is written beside itself under a temporary name and renamed at the end,
            so a failed run leaves no partial file.
        engine: ``"local"``, ``"datasets"`` or ``"ray"`` (see the module docstring).
        num_proc: worker processes (datasets: `num_proc`; Ray: at most this many parsing tasks
            at once, and the CPUs of the local cluster it starts). None: 1 for datasets, every
            CPU for Ray. The local engine takes only 1.
        prefix_column, output_column, tools_column, on_error, regex_timeout: as for
            `parse_batch`.
        batch_rows: rows per batch (and per row group of the staged shards).
        keep_input: also write the prefix, output and tools columns to OUTPUT.
        progress: show progress bars (on stderr).

    Returns:
        A `BatchSummary`.

    Raises:
        TemplateError: the template is invalid (before anything is read).
        InputError: a malformed input row (names the file and line or row).
        FileNotFoundError, ValueError: no input file; an unknown format, engine or mode.
        ImportError: the engine's package (datasets, ray, pyarrow) is not installed.
    """
    started = time.perf_counter()
    load_template(template)
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    if on_error not in ON_ERROR_MODES:
        raise ValueError(f"on_error must be one of {ON_ERROR_MODES}, got {on_error!r}")
    if num_proc is not None and num_proc < 1:
        raise ValueError(f"num_proc must be at least 1, got {num_proc}")
    if engine == "local" and (num_proc or 1) > 1:
        raise ValueError("the local engine parses in this process only; for more processes use the datasets or ray engine")
    if batch_rows < 1:
        raise ValueError(f"batch_rows must be at least 1, got {batch_rows}")
    input_file = InputFile(
        input_path, prefix_column=prefix_column, output_column=output_column, tools_column=tools_column, keep_input=keep_input
    )
    output = Path(output_path)
    output_format = file_format(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    partial = output.with_name(f".{output.name}.partial")
    writer = _JsonlWriter(partial) if output_format == "jsonl" else _ParquetWriter(partial)
    parse_options = {
        "template": template,
        "prefix_column": "prefix" if prefix_column is not None else None,
        "output_column": "output",
        "tools_column": "tools" if tools_column is not None else None,
        "on_error": on_error,
        "message_format": "json",
        "error_fields": True,
        "regex_timeout": regex_timeout,
    }
    workers = 1 if engine == "local" else num_proc if engine == "ray" else (num_proc or 1)
    summary = BatchSummary(engine=engine, workers=workers)
    run = {"local": _run_local, "datasets": _run_datasets, "ray": _run_ray}[engine]
    try:
        run(input_file, writer, summary, parse_options, batch_rows=batch_rows, num_proc=num_proc, progress=progress, work_beside=output)
        writer.close(input_file)
        os.replace(partial, output)
    except BaseException:
        try:
            writer.close(input_file)
        finally:
            partial.unlink(missing_ok=True)
        raise
    summary.seconds = time.perf_counter() - started
    return summary


def _bar(progress: bool, total: int | None, description: str):
    from tqdm.auto import tqdm

    hidden = {} if progress else {"disable": True}  # not passed when shown, so TQDM_DISABLE=1 still hides it
    return tqdm(total=total, unit=" rows", desc=description, dynamic_ncols=True, **hidden)


def _settle(bar) -> None:
    """End a bar whose total counted blank JSONL lines at the rows actually read."""
    bar.total = bar.n
    bar.refresh()


def _write(writer, summary: BatchSummary, batch: InputBatch, result: dict[str, list]) -> None:
    if len(result["message"]) != len(batch.rows):
        raise RuntimeError(f"the engine returned {len(result['message'])} results for {len(batch.rows)} rows at row {batch.rows[0]}")
    writer.write(batch, result["message"], result["error"])
    summary.add(result["error"], result["error_fields"])


def _run_local(input_file, writer, summary, parse_options, *, batch_rows, num_proc, progress, work_beside) -> None:
    with _bar(progress, input_file.count_rows(), "parsing") as bar:
        for batch in input_file.batches(batch_rows):
            _write(writer, summary, batch, parse_batch(batch.columns, **parse_options))
            bar.update(len(batch.rows))
        _settle(bar)


def _stage(input_file: InputFile, directory: Path, batch_rows: int, progress: bool) -> list[str]:
    """Write the parser's columns as Parquet shards (a row group per batch, a new shard once one
    holds `SHARD_CHARACTERS` of text); return their paths in order."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([(name, pa.string()) for name in _STAGED_COLUMNS])
    paths: list[str] = []
    shard, shard_characters = None, 0
    try:
        with _bar(progress, input_file.count_rows(), "reading") as bar:
            for batch in input_file.batches(batch_rows):
                if shard is None:
                    paths.append(str(directory / f"shard-{len(paths):06d}.parquet"))
                    shard, shard_characters = pq.ParquetWriter(paths[-1], schema), 0
                shard.write_table(pa.table(batch.columns, schema=schema))
                shard_characters += sum(map(len, batch.columns["output"])) + sum(map(len, batch.columns["prefix"]))
                if shard_characters >= SHARD_CHARACTERS:
                    shard.close()
                    shard = None
                bar.update(len(batch.rows))
            _settle(bar)
    finally:
        if shard is not None:
            shard.close()
    return paths


class _WorkDirectory:
    """A temporary directory beside OUTPUT (on storage a cluster's workers may share), removed at the end."""

    def __init__(self, beside: Path):
        self.path = Path(tempfile.mkdtemp(prefix=f".{beside.name}.work-", dir=beside.parent))

    def __enter__(self) -> Path:
        return self.path

    def __exit__(self, *exc) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def _write_results(input_file, writer, summary, results: Iterator[dict[str, list]], batch_rows: int, bar) -> None:
    """Read INPUT again beside the engine's results (same order, same batch size) and write both."""
    for batch, result in zip(input_file.batches(batch_rows), results, strict=True):
        _write(writer, summary, batch, result)
        bar.update(len(batch.rows))


def _run_datasets(input_file, writer, summary, parse_options, *, batch_rows, num_proc, progress, work_beside) -> None:
    import datasets

    with _WorkDirectory(work_beside) as work:
        shards = _stage(input_file, work, batch_rows, progress)
        if not shards:
            return
        bars_were_on = datasets.is_progress_bar_enabled()
        datasets.disable_progress_bars()  # loading the shards: our reading bar already counted them
        try:
            staged = datasets.Dataset.from_parquet(shards, cache_dir=str(work / "cache"))
            if progress:
                datasets.enable_progress_bars()
            parsed = staged.map(
                parse_batch,
                batched=True,
                batch_size=batch_rows,
                num_proc=num_proc if num_proc and num_proc > 1 else None,
                fn_kwargs=parse_options,
                remove_columns=staged.column_names,
                features=datasets_features(error_fields=True),
                desc="parsing",
            )
        finally:
            (datasets.enable_progress_bars if bars_were_on else datasets.disable_progress_bars)()
        with _bar(progress, len(parsed), "writing") as bar:
            _write_results(input_file, writer, summary, parsed.iter(batch_size=batch_rows), batch_rows, bar)


def parse_to_arrow(batch: Any, **parse_options) -> Any:
    """`parse_batch` returning a pyarrow Table of fixed types, so Ray's blocks share one schema
    (a batch with no error would otherwise make a null-typed `error` column)."""
    import pyarrow as pa

    schema = pa.schema([(MESSAGE_COLUMN, pa.string()), (ERROR_COLUMN, pa.string()), ("error_fields", pa.list_(pa.string()))])
    return pa.table(parse_batch(batch, **parse_options), schema=schema)


def _run_ray(input_file, writer, summary, parse_options, *, batch_rows, num_proc, progress, work_beside) -> None:
    import ray
    import ray.data

    started_here = not ray.is_initialized()
    if started_here:
        if os.environ.get("RAY_ADDRESS"):
            # An existing cluster: ship this engine package to its workers.
            ray.init(runtime_env={"py_modules": [str(Path(__file__).resolve().parent)]})
        else:
            # A cluster of this machine only: on the loopback address, no dashboard.
            ray.init(num_cpus=num_proc, include_dashboard=False, _node_ip_address="127.0.0.1")
    context = ray.data.DataContext.get_current()
    settings = {
        "enable_progress_bars": False,  # ours counts the rows written
        # Blocks of at most 16 MB (Ray's default is 128 MB): a worker holds a block, its rows as
        # Python strings and its results at once, so this bounds each worker's memory.
        "target_max_block_size": 16 * 1024 * 1024,
        # Ray 2.60's default Parquet reader starts a pool of 32 footer-reading actors (a process
        # and about 100 MB each) per read; its first reader needs none.
        "use_datasource_v2": False,
    }
    saved = {name: getattr(context, name, None) for name in settings}
    saved_order = context.execution_options.preserve_order
    try:
        for name, value in settings.items():
            setattr(context, name, value)
        context.execution_options.preserve_order = True
        with _WorkDirectory(work_beside) as work:
            shards = _stage(input_file, work, batch_rows, progress)
            if not shards:
                return
            if not num_proc:
                limit = {}
            elif hasattr(ray.data, "TaskPoolStrategy"):
                limit = {"compute": ray.data.TaskPoolStrategy(size=num_proc)}
            else:  # Ray before `compute` took a task-pool strategy
                limit = {"concurrency": num_proc}
            # A block per shard at least, so that every worker gets some.
            parsed = ray.data.read_parquet(shards, override_num_blocks=len(shards)).map_batches(
                parse_to_arrow, batch_size=batch_rows, batch_format="pyarrow", fn_kwargs=parse_options, **limit
            )
            results = (
                {name: column.to_pylist() for name, column in zip(table.column_names, table.columns)}
                for table in parsed.iter_batches(batch_size=batch_rows, batch_format="pyarrow")
            )
            try:
                with _bar(progress, _shard_rows(shards), "parsing") as bar:
                    _write_results(input_file, writer, summary, results, batch_rows, bar)
            finally:
                results.close()  # stop the execution before Ray shuts down
    finally:
        for name, value in saved.items():  # a caller's own Ray session keeps its settings
            setattr(context, name, value)
        context.execution_options.preserve_order = saved_order
        if started_here:
            ray.shutdown()


def _shard_rows(shards: list[str]) -> int:
    """Rows in the staged shards."""
    import pyarrow.parquet as pq

    return sum(pq.ParquetFile(path).metadata.num_rows for path in shards)
