"""The files of a batch run: JSONL and Parquet generations in, the same rows with `message` and `error` out.

INPUT is cut into shards that workers read on their own (`InputFile.shards`): byte ranges
that begin at a line (JSONL), or ranges of rows (Parquet, cut at row groups when there are
enough of them). `InputFile.batches` reads one shard a batch of rows at a time, checking
every row. A worker writes its rows either to OUTPUT itself (one worker) or to a part file
(`open_writer`), and `OutputFile` joins the parts into OUTPUT in shard order. No stage holds
more than a batch of rows, so memory stays bounded whatever the input's size.

Every writer and reader adds the seconds it spends to a `stages` counter, by stage:
``read`` (file bytes to rows: JSON decoding, Parquet decoding), ``convert`` (between Arrow
and Python values), ``serialise`` (messages and rows to JSON text) and ``write`` (to files,
Parquet encoding included). docs/batch.md has the output's schema.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import shutil
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from time import perf_counter
from typing import Any

from .columns import describe_value, read_tools, text_problem

# Rows per batch: the unit of reading, parsing and writing (and the row groups of a Parquet OUTPUT).
BATCH_ROWS = 1000

# Columns the output adds to each row.
MESSAGE_COLUMN, ERROR_COLUMN = "message", "error"

# The parser's columns once read: how a batch's `columns` name them.
PARSER_COLUMNS = ("prefix", "output", "tools")

_FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet", ".pq": "parquet"}

# JSONL is read in blocks of this many bytes (a line may be longer: it is carried over).
_READ_BYTES = 4 << 20

# A Parquet column chunk is read in pieces of this many bytes rather than whole: a row group
# of a million generations is gigabytes.
_PARQUET_BUFFER_BYTES = 1 << 20


class InputFileError(ValueError):
    """A malformed input file or row, naming the file and the line (JSONL) or row (Parquet).

    Attributes:
        path: the input file.
        detail: what is wrong (the message after the location).
        line, last_line: the line (and, for a range, the last line) it is on, counting from 1;
            None when the error is about the whole file or a Parquet row.
        row: the Parquet row it is on, counting from 1, or None.
    """

    def __init__(
        self,
        path: str | Path,
        detail: str,
        *,
        line: int | None = None,
        last_line: int | None = None,
        row: int | None = None,
    ):
        self.path, self.detail, self.line, self.last_line, self.row = (
            str(path),
            detail,
            line,
            last_line,
            row,
        )
        if line is not None:
            where = (
                f"{path} line {line}"
                if last_line is None or last_line == line
                else f"{path} lines {line}-{last_line}"
            )
        else:
            where = f"{path} row {row}" if row is not None else str(path)
        super().__init__(f"{where}: {detail}")

    def record(self) -> dict:
        """The error as JSON-able values, to send from a worker (`InputFileError(**record)` rebuilds it)."""
        return {
            "path": self.path,
            "detail": self.detail,
            "line": self.line,
            "last_line": self.last_line,
            "row": self.row,
        }

    def after_lines(self, lines: int) -> InputFileError:
        """The same error for a shard that starts after `lines` lines of the file (a worker counts from its shard's start)."""
        if self.line is None:
            return self
        last = None if self.last_line is None else self.last_line + lines
        return InputFileError(self.path, self.detail, line=self.line + lines, last_line=last)


def file_format(path: str | Path) -> str:
    """``"jsonl"`` or ``"parquet"``, from the file's extension.

    Raises:
        ValueError: another extension.
    """
    suffix = Path(path).suffix.lower()
    if suffix not in _FORMATS:
        raise ValueError(
            f"{path}: cannot tell the format from the extension {suffix or '(none)'!r}; use .jsonl or .parquet"
        )
    return _FORMATS[suffix]


@dataclass(frozen=True)
class Shard:
    """A piece of INPUT that one worker reads: bytes [start, stop) beginning at a line (JSONL),
    or rows [start, stop) counting from 0 (Parquet). `index` is its place in the file."""

    index: int
    start: int
    stop: int


@dataclass
class InputBatch:
    """Consecutive rows of a shard.

    Attributes:
        rows: each row's line number counted from the shard's first line (JSONL), or its row
            number in the file (Parquet), counting from 1.
        columns: the parser's columns ``prefix``, ``output`` (text) and ``tools`` (JSON text or
            None), one value per row.
        other: the columns written through to the output: a list of dicts (JSONL) or a pyarrow
            RecordBatch (Parquet).
        extent: what the batch took of its shard: bytes (JSONL, blank lines included) or rows.
    """

    rows: list[int]
    columns: dict[str, list]
    other: Any
    extent: int


class InputFile:
    """A JSONL or Parquet file of generations, cut into shards and read in batches, checked row by row.

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
        self._parse_columns = [
            c for c in (prefix_column, output_column, tools_column) if c is not None
        ]
        self.dropped = set() if keep_input else set(self._parse_columns)

    @property
    def extent(self) -> int:
        """The file's length in the unit shards are cut in: bytes (JSONL) or rows (Parquet)."""
        if self.format == "jsonl":
            return self.path.stat().st_size
        import pyarrow.parquet as pq

        return pq.ParquetFile(self.path).metadata.num_rows

    @property
    def extent_unit(self) -> str:
        """What `extent` counts, as a progress bar's unit."""
        return "B" if self.format == "jsonl" else " rows"

    @property
    def text_bytes(self) -> int:
        """About how much text the file holds: its size (JSONL), its row groups' uncompressed size (Parquet)."""
        if self.format == "jsonl":
            return self.path.stat().st_size
        import pyarrow.parquet as pq

        metadata = pq.ParquetFile(self.path).metadata
        return sum(
            metadata.row_group(group).total_byte_size for group in range(metadata.num_row_groups)
        )

    def whole(self) -> Shard:
        """The whole file as one shard."""
        return Shard(0, 0, self.extent)

    def shards(self, workers: int, shard_bytes: int) -> list[Shard]:
        """The file cut into shards of at most about `shard_bytes` of text, their count a multiple
        of `workers` (so that equal workers finish together), in order.

        A JSONL shard begins at a line. Parquet shards begin at row groups (fewer and larger
        shards when there are not enough groups), unless there are fewer groups than workers:
        then there is one shard a worker, cut inside groups, and a worker decodes the rows of its
        first group before its start to skip them (Parquet cannot seek to a row). A tiny file
        may give fewer shards than workers.
        """
        count = workers * max(1, math.ceil(self.text_bytes / (workers * shard_bytes)))
        if self.format == "jsonl":
            size = self.extent
            bounds = {self._line_start(index * size // count) for index in range(1, count)} | {
                0,
                size,
            }
        else:
            import pyarrow.parquet as pq

            metadata = pq.ParquetFile(self.path).metadata
            starts = [0]
            for group in range(metadata.num_row_groups):
                starts.append(starts[-1] + metadata.row_group(group).num_rows)
            groups, rows = metadata.num_row_groups, starts[-1]
            if groups < workers:
                bounds = {index * rows // workers for index in range(workers)} | {rows}
            else:
                count = min(count, groups - groups % workers)
                bounds = {
                    min(starts, key=lambda start: abs(start - index * rows / count))
                    for index in range(count)
                } | {rows}
        bounds = sorted(bounds)
        if len(bounds) == 1:  # an empty file
            return [Shard(0, 0, 0)]
        return [
            Shard(index, start, stop) for index, (start, stop) in enumerate(zip(bounds, bounds[1:]))
        ]

    def _line_start(self, offset: int) -> int:
        """The offset of the first line that begins at or after byte `offset`."""
        with open(self.path, "rb") as handle:
            handle.seek(max(offset - 1, 0))
            if offset > 0:
                handle.readline()
            return handle.tell()

    def lines_before(self, offset: int) -> int:
        """Lines of a JSONL file before byte `offset` (where a shard begins)."""
        lines = 0
        with open(self.path, "rb") as handle:
            while offset > 0 and (block := handle.read(min(offset, _READ_BYTES))):
                lines += block.count(b"\n")
                offset -= len(block)
        return lines

    def batches(
        self, shard: Shard, batch_rows: int = BATCH_ROWS, stages: Counter | None = None
    ) -> Iterator[InputBatch]:
        """A shard's rows in order, `batch_rows` at a time (a batch may be shorter).

        Args:
            stages: adds the seconds spent reading (and, for Parquet, converting Arrow values to
                Python ones) under ``"read"`` and ``"convert"``.

        Raises:
            InputFileError: a malformed row, or a column the output would overwrite. The line
                numbers of a JSONL shard count from its own start (see `InputFileError.after_lines`).
        """
        stages = Counter() if stages is None else stages
        if self.format == "jsonl":
            return self._jsonl_batches(shard, batch_rows, stages)
        return self._parquet_batches(shard, batch_rows, stages)

    def first_batch(self, batch_rows: int = BATCH_ROWS) -> InputBatch | None:
        """The file's first batch of rows (None for a file with none): checks the columns and the
        first rows before any worker starts, and types a Parquet OUTPUT's columns."""
        for batch in self.batches(self.whole(), batch_rows):
            return batch
        return None

    # -- JSONL --------------------------------------------------------------

    def _lines(self, shard: Shard) -> Iterator[bytes]:
        """The lines of a byte range, without their newlines (the last one may have none to take off)."""
        with open(self.path, "rb") as handle:
            handle.seek(shard.start)
            remaining, carried = shard.stop - shard.start, b""
            while remaining > 0 and (block := handle.read(min(remaining, _READ_BYTES))):
                remaining -= len(block)
                lines = (carried + block).split(b"\n")
                carried = lines.pop()
                yield from lines
            if carried:
                yield carried

    def _jsonl_batches(
        self, shard: Shard, batch_rows: int, stages: Counter
    ) -> Iterator[InputBatch]:
        rows: list[int] = []
        columns: dict[str, list] = {name: [] for name in PARSER_COLUMNS}
        other: list[dict] = []
        tools_by_text: dict[str, Any] = {}
        extent, remaining = 0, shard.stop - shard.start
        started = perf_counter()
        for number, line in enumerate(self._lines(shard), 1):
            taken = min(len(line) + 1, remaining)  # the file's last line may have no newline
            extent += taken
            remaining -= taken
            if not line.strip():
                continue
            row = _json_object(line, self.path, number)
            columns["prefix"].append(
                self._text(row, self.prefix_column, number, "--prefix-column, or --no-prefix")
            )
            columns["output"].append(self._text(row, self.output_column, number, "--output-column"))
            columns["tools"].append(
                self._tools_text(
                    row.get(self.tools_column) if self.tools_column else None, number, tools_by_text
                )
            )
            for name in (MESSAGE_COLUMN, ERROR_COLUMN):
                if name in row and name not in self.dropped:
                    raise InputFileError(
                        self.path,
                        f"the row has a {name!r} key, which the output adds; rename it",
                        line=number,
                    )
            other.append({key: value for key, value in row.items() if key not in self.dropped})
            rows.append(number)
            if len(rows) == batch_rows:
                stages["read"] += perf_counter() - started
                yield InputBatch(rows, columns, other, extent)
                rows, columns, other, extent = [], {name: [] for name in PARSER_COLUMNS}, [], 0
                started = perf_counter()
        stages["read"] += perf_counter() - started
        if rows:
            yield InputBatch(rows, columns, other, extent)

    def _text(self, row: dict, column: str | None, line: int, option: str) -> str:
        if column is None:
            return ""
        if column not in row:
            keys = ", ".join(repr(key) for key in list(row)[:10]) or "none"
            raise InputFileError(
                self.path,
                f"no {column!r} key (the row has {keys}); name the column with {option}",
                line=line,
            )
        if problem := text_problem(row[column]):
            raise InputFileError(self.path, f"{column!r}: {problem}", line=line)
        return row[column]

    def _tools_text(
        self, value: Any, line: int | None, tools_by_text: dict[str, Any], row: int | None = None
    ) -> str | None:
        try:
            tools = read_tools(value, tools_by_text)
        except ValueError as error:
            raise InputFileError(
                self.path, f"{self.tools_column!r}: {error}", line=line, row=row
            ) from None
        if tools is None:
            return None
        return value if isinstance(value, str) else json.dumps(tools, ensure_ascii=False)

    # -- Parquet ------------------------------------------------------------

    def kept_columns(self) -> list[str]:
        """A Parquet file's columns that are written through to the output, in order.

        Raises:
            InputFileError: a parser column is missing, or a column the output would overwrite is there.
        """
        import pyarrow.parquet as pq

        names = pq.ParquetFile(self.path).schema_arrow.names
        for column in self._parse_columns:
            if column not in names:
                raise InputFileError(
                    self.path, f"no column {column!r} (columns: {', '.join(names)})"
                )
        for name in (MESSAGE_COLUMN, ERROR_COLUMN):
            if name in names and name not in self.dropped:
                raise InputFileError(
                    self.path, f"has a column {name!r}, which the output adds; rename it"
                )
        return [name for name in names if name not in self.dropped]

    def _parquet_batches(
        self, shard: Shard, batch_rows: int, stages: Counter
    ) -> Iterator[InputBatch]:
        import pyarrow.parquet as pq

        kept = self.kept_columns()
        source = pq.ParquetFile(self.path, buffer_size=_PARQUET_BUFFER_BYTES, pre_buffer=False)
        metadata = source.metadata
        groups, position, first_group_row = [], 0, None
        for group in range(metadata.num_row_groups):
            rows = metadata.row_group(group).num_rows
            if position < shard.stop and position + rows > shard.start:
                groups.append(group)
                first_group_row = position if first_group_row is None else first_group_row
            position += rows
        if not groups:
            return
        tools_by_text: dict[str, Any] = {}
        position = first_group_row
        started = perf_counter()
        for record_batch in source.iter_batches(
            batch_size=batch_rows, row_groups=groups, use_threads=False
        ):
            low, high = (
                max(shard.start - position, 0),
                min(shard.stop - position, record_batch.num_rows),
            )
            first = position + low + 1
            position += record_batch.num_rows
            if high <= low:
                continue
            record_batch = record_batch.slice(low, high - low)
            count = record_batch.num_rows
            stages["read"] += perf_counter() - started
            started = perf_counter()
            columns = {}
            for name, column, option in (
                ("prefix", self.prefix_column, "--prefix-column, or --no-prefix"),
                ("output", self.output_column, "--output-column"),
            ):
                values = (
                    record_batch.column(column).to_pylist() if column is not None else [""] * count
                )
                for index, value in enumerate(values):
                    if problem := text_problem(value):
                        raise InputFileError(
                            self.path,
                            f"{column!r}: {problem} (name the column with {option})",
                            row=first + index,
                        )
                columns[name] = values
            if self.tools_column is None:
                columns["tools"] = [None] * count
            else:
                columns["tools"] = [
                    self._tools_text(value, None, tools_by_text, row=first + index)
                    for index, value in enumerate(
                        record_batch.column(self.tools_column).to_pylist()
                    )
                ]
            stages["convert"] += perf_counter() - started
            yield InputBatch(
                list(range(first, first + count)), columns, record_batch.select(kept), count
            )
            started = perf_counter()
        stages["read"] += perf_counter() - started


def _json_object(line: bytes, path: Path, number: int) -> dict:
    try:
        row = json.loads(line)
    except UnicodeDecodeError as error:
        raise InputFileError(
            path, f"not UTF-8 text ({error.reason} at byte {error.start})", line=number
        ) from None
    except json.JSONDecodeError as error:
        raise InputFileError(
            path, f"not valid JSON ({error.msg} at column {error.colno})", line=number
        ) from None
    if not isinstance(row, dict):
        raise InputFileError(
            path, f"expected a JSON object, got {describe_value(row)}", line=number
        )
    return row


def _json_default(value: Any) -> Any:
    """Parquet values JSON has no type for: dates and times as ISO 8601 text, the rest as str."""
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    return str(value)


# -- writing ----------------------------------------------------------------


def output_schema(input_file: InputFile, first: InputBatch | None) -> Any:
    """The columns of a Parquet OUTPUT (or of its parts): the written-through columns, typed by the
    input file's schema (Parquet) or by its first batch of rows (JSONL; a Parquet file has one
    schema), then `message` and `error` as strings.

    Raises:
        InputFileError: the first rows' values cannot make Parquet columns.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    if input_file.format == "parquet":
        source = pq.ParquetFile(input_file.path).schema_arrow
        kept = set(input_file.kept_columns())
        fields = [field for field in source if field.name in kept]
    elif first is None:
        fields = []
    else:
        try:
            fields = list(pa.Table.from_pylist(first.other).schema)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as error:
            raise InputFileError(
                input_file.path,
                f"these rows' values cannot make Parquet columns ({error})",
                line=first.rows[0],
                last_line=first.rows[-1],
            ) from None
    return pa.schema(
        fields + [pa.field(MESSAGE_COLUMN, pa.string()), pa.field(ERROR_COLUMN, pa.string())]
    )


def open_writer(
    path: Path,
    output_format: str,
    schema: Any,
    input_file: InputFile,
    *,
    part: bool,
    batch_rows: int = BATCH_ROWS,
):
    """A writer of rows with their results: JSONL lines, or a Parquet file (`part`: an Arrow
    stream, which `OutputFile` reads back without decoding).

    Its ``write(batch, messages, errors, stages)`` takes a batch, its messages (dicts, or None)
    and its error texts, and raises `InputFileError` (naming `input_file`) for JSONL rows that do
    not fit a Parquet `schema`; ``close()`` ends the file.
    """
    if output_format == "jsonl":
        return _JsonlWriter(path)
    return _TableWriter(path, schema, "arrow" if part else "parquet", batch_rows, input_file.path)


class _JsonlWriter:
    """Writes each row as a JSON object: its other columns, then `message` (an object) and `error`."""

    def __init__(self, path: Path):
        self._handle = open(path, "w", encoding="utf-8")

    def write(
        self,
        batch: InputBatch,
        messages: list[dict | None],
        errors: list[str | None],
        stages: Counter,
    ) -> None:
        started = perf_counter()
        rows = batch.other if isinstance(batch.other, list) else batch.other.to_pylist()
        converted = perf_counter()
        lines = []
        for row, message, error in zip(rows, messages, errors, strict=True):
            if message is not None:
                row = {**row, MESSAGE_COLUMN: message}
            if error is not None:
                row = {**row, ERROR_COLUMN: error}
            lines.append(json.dumps(row, ensure_ascii=False, default=_json_default) + "\n")
        text = "".join(lines)
        serialised = perf_counter()
        self._handle.write(text)
        stages["convert"] += converted - started
        stages["serialise"] += serialised - converted
        stages["write"] += perf_counter() - serialised

    def close(self) -> None:
        self._handle.close()


class _TableWriter:
    """Writes the other columns, then `message` (JSON text: one column type for every message's
    shape) and `error`, typed by `schema`: a Parquet file in row groups of `batch_rows` rows, or
    an Arrow stream of the batches as they come."""

    def __init__(
        self, path: Path, schema: Any, kind: str, batch_rows: int, input_path: Path | None = None
    ):
        import pyarrow as pa
        import pyarrow.parquet as pq

        self._batch_rows, self._input_path = batch_rows, input_path
        self._other_schema = pa.schema(
            [field for field in schema if field.name not in (MESSAGE_COLUMN, ERROR_COLUMN)]
        )
        if kind == "parquet":
            self._writer = pq.ParquetWriter(path, schema)
        else:
            self._sink = pa.OSFile(str(path), "wb")
            self._writer = pa.ipc.new_stream(self._sink, schema)
        self._kind = kind
        self._held: list = []  # Parquet: tables waiting to fill a row group
        self._held_rows = 0

    def write(
        self,
        batch: InputBatch,
        messages: list[dict | None],
        errors: list[str | None],
        stages: Counter,
    ) -> None:
        import pyarrow as pa

        started = perf_counter()
        texts = [
            None if message is None else json.dumps(message, ensure_ascii=False)
            for message in messages
        ]
        serialised = perf_counter()
        if isinstance(batch.other, list):
            table = self._table_from_rows(batch)
        else:
            table = pa.Table.from_batches([batch.other]).cast(self._other_schema)
        table = table.append_column(MESSAGE_COLUMN, pa.array(texts, pa.string()))
        table = table.append_column(ERROR_COLUMN, pa.array(errors, pa.string()))
        converted = perf_counter()
        self.write_table(table)
        stages["serialise"] += serialised - started
        stages["convert"] += converted - serialised
        stages["write"] += perf_counter() - converted

    def write_table(self, table) -> None:
        """Write rows already in the output's schema."""
        import pyarrow as pa

        if self._kind == "arrow":
            self._writer.write_table(table)
            return
        self._held.append(table)
        self._held_rows += table.num_rows
        if self._held_rows >= self._batch_rows:
            held = pa.concat_tables(self._held)
            whole = held.num_rows - held.num_rows % self._batch_rows
            self._writer.write_table(held.slice(0, whole), row_group_size=self._batch_rows)
            self._held = [held.slice(whole)]
            self._held_rows = held.num_rows - whole

    def _table_from_rows(self, batch: InputBatch):
        """JSONL rows as a table typed like the first batch's (a Parquet file has one schema)."""
        import pyarrow as pa

        rows, names = batch.other, set(self._other_schema.names)
        for number, row in zip(batch.rows, rows):
            if new := [key for key in row if key not in names]:
                raise InputFileError(
                    self._input_path,
                    f"key {new[0]!r} is not in the first batch of rows, and a Parquet file has one schema; "
                    "give it to every row, or write JSONL",
                    line=number,
                )
        try:
            table = pa.Table.from_pylist(rows, schema=self._other_schema)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as error:
            raise InputFileError(
                self._input_path,
                f"values do not fit the column types of the first rows ({error})",
                line=batch.rows[0],
                last_line=batch.rows[-1],
            ) from None
        if table.num_rows != len(
            rows
        ):  # rows with no other columns make an empty table: keep the count
            table = pa.table({"_": pa.nulls(len(rows))}).drop_columns(["_"])
        return table

    def close(self) -> None:
        import pyarrow as pa

        if self._kind == "parquet":
            held = [table for table in self._held if table.num_rows]
            if held:
                self._writer.write_table(pa.concat_tables(held), row_group_size=self._batch_rows)
        self._writer.close()
        if self._kind == "arrow":
            self._sink.close()


class OutputFile:
    """OUTPUT assembled from the workers' part files, appended in shard order.

    Args:
        path: where to write (the caller renames it to OUTPUT at the end).
        output_format: ``"jsonl"`` or ``"parquet"``.
        schema: a Parquet OUTPUT's columns (see `output_schema`); None for JSONL.
        batch_rows: rows per row group of a Parquet OUTPUT (as one worker writes it, so that
            every engine writes the same file).
    """

    def __init__(self, path: Path, output_format: str, schema: Any, batch_rows: int = BATCH_ROWS):
        self._format = output_format
        if output_format == "jsonl":
            self._handle = open(path, "wb")
        else:
            self._writer = _TableWriter(path, schema, "parquet", batch_rows)

    def append(self, part: Path) -> None:
        """Append a part file's rows and delete it."""
        if self._format == "jsonl":
            with open(part, "rb") as source:
                size, copied = os.fstat(source.fileno()).st_size, 0
                try:  # in the kernel, without passing the bytes through this process
                    while copied < size and (
                        step := os.copy_file_range(
                            source.fileno(), self._handle.fileno(), size - copied
                        )
                    ):
                        copied += step
                except (
                    AttributeError,
                    OSError,
                ):  # not on this system or between these file systems
                    pass
                if copied < size:
                    source.seek(copied)
                    self._handle.seek(0, os.SEEK_END)
                    shutil.copyfileobj(source, self._handle, _READ_BYTES)
                    self._handle.flush()
        else:
            import pyarrow as pa

            with pa.memory_map(str(part)) as source:
                for record_batch in pa.ipc.open_stream(source):
                    self._writer.write_table(pa.Table.from_batches([record_batch]))
        part.unlink()

    def close(self) -> None:
        if self._format == "jsonl":
            self._handle.close()
        else:
            self._writer.close()
