"""Batch parsing: one column batch of stored generations in, `message` and `error` columns out.

`parse_batch` is the function to hand to the engines that parse datasets at scale:
``datasets.Dataset.map(parse_batch, batched=True, num_proc=N, fn_kwargs=...)`` and
``ray.data.Dataset.map_batches(parse_batch, fn_kwargs=...)``. It reads the batch shapes they
pass (a dict of lists, a dict of numpy arrays, a pandas DataFrame, a pyarrow Table) without
importing any of them, so `import engine` stays light. docs/batch.md shows both engines and
the `python -m engine batch` command built on this function.

The template is compiled once per worker process: `load_template` caches compiled templates
keyed on the template's data, so each batch after a process's first costs one cache look-up,
and each row a parser built on the compiled template. Pass the template as a dict or JSON
text (what an engine pickles to its workers cheaply), not as a compiled `ResponseTemplate`,
which would be rebuilt every time an engine unpickles the function's arguments.
"""

from __future__ import annotations

import json
import math
from typing import Any

from ..errors import ResponseParseError
from ..parser import ON_ERROR_MODES, ResponseParser
from ..template import ResponseTemplate, load_template

# How `message` values are returned: a dict each, or its JSON text (what Arrow-backed
# engines need: one column type for messages of every shape).
MESSAGE_FORMATS = ("dict", "json")

# Between the messages of a row's kept errors in the `error` column. Messages quote texts as
# Python literals, so they rarely hold a newline; one that does has it written as "\\n".
ERROR_SEPARATOR = "\n"


class BatchInputError(ValueError):
    """A batch that cannot be parsed as asked: a missing column, or a row whose value is not text.

    Attributes:
        row: index of the offending row in the batch (0-based), or None for a missing column.
        column: the column's name.
    """

    def __init__(self, message: str, *, row: int | None, column: str):
        self.row = row
        self.column = column
        super().__init__(message)


def _batch_columns(
    batch: Any, prefix_column: str | None, output_column: str, tools_column: str | None
) -> tuple[list, list, list]:
    """The prefix, output and tools values of every row (``""`` and None where a column is not given).

    Raises:
        BatchInputError: a column is missing, or shorter or longer than the output column.
    """
    outputs = _column(batch, output_column)
    prefixes = _column(batch, prefix_column) if prefix_column is not None else [""] * len(outputs)
    tools = _column(batch, tools_column) if tools_column is not None else [None] * len(outputs)
    for column, values in ((prefix_column, prefixes), (tools_column, tools)):
        if len(values) != len(outputs):
            raise BatchInputError(
                f"column {column!r} has {len(values)} rows but {output_column!r} has {len(outputs)}",
                row=None,
                column=column,
            )
    return prefixes, outputs, tools


def _check_texts(row: int, values: tuple[tuple[Any, str | None], ...]) -> None:
    """Raise BatchInputError naming `row` and the column when a `(value, column)` is not text."""
    for value, column in values:
        if problem := text_problem(value):
            raise BatchInputError(
                f"row {row} of the batch, column {column!r}: {problem}", row=row, column=column
            )


def parse_batch(
    batch: Any,
    template: dict | str | ResponseTemplate,
    *,
    prefix_column: str | None = "prefix",
    output_column: str = "output",
    tools_column: str | None = None,
    on_error: str = "keep",
    message_format: str = "dict",
    error_fields: bool = False,
    regex_timeout: float | None = None,
    warnings: bool = False,
) -> dict[str, list]:
    """Parse every row of a column batch with one response template.

    Args:
        batch: columns by name: a dict of lists or numpy arrays (what `datasets` and Ray's
            ``"numpy"`` format pass), a pandas DataFrame (Ray's ``"pandas"`` format, pyarrow-backed
            columns included) or a pyarrow Table (Ray's ``"pyarrow"`` format).
        template: the response template, as `load_template` takes it: a dict or its JSON text
            (compiled once per process and cached; the cheapest to ship to workers), a shipped
            template's name or a file path (read each batch), or a loaded `ResponseTemplate`.
        prefix_column: the column holding each row's prompt text (the prefix the parser needs);
            None parses every row with the prefix ``""``.
        output_column: the column holding each row's generation.
        tools_column: a column of tool schemas to cast tool-call arguments by (each row a list
            of schema dicts, its JSON text, or None), or None for no tools.
        on_error: ``"keep"`` (default): a region that cannot be parsed keeps its text as
            unclaimed text (see `ResponseParser`), `message` holds what parsed and `error` the
            kept errors' messages, one a line, in order (a newline inside a message is written
            as ``\\n``). ``"raise"``: a row with a failed region
            gets `message` None and `error` the error's message. Either way the batch goes on.
        message_format: ``"dict"`` (default): each message is a JSON-able dict. ``"json"``: its
            JSON text, which is what Arrow-backed engines (`datasets`, Ray) should store: an
            Arrow column has one type, so dicts of different shapes (tool calls with different
            arguments) fail to cast, or come back with null-filled keys they never had.
        error_fields: when True, also return an `error_fields` column: each row's error fields
            (the field whose region failed, None for a message-level error), [] when none.
        regex_timeout: seconds allowed for each regex call of a template pattern, or None.
        warnings: when True, also return a `warnings` column: each row's `parser.warnings`
            (`engine.account`), one ``code: message`` a line in order, or None when the parse
            accounts for every character.

    Returns:
        ``{"message": [...], "error": [...]}`` (plus ``"error_fields"``), one value per row in
        the batch's order: a message (None only when the row failed with ``"raise"``, or with a
        pattern over its time budget) and the error text (None when nothing failed).

    Raises:
        TemplateError: the template is invalid.
        BatchInputError: a column is missing or shorter than the others, or a row's prefix or
            output is not text, or its tools are not a list of schema objects, its JSON text or
            a missing value (names the row and the column).
        ValueError: `on_error` or `message_format` is not one of the allowed values.
    """
    _check_modes(on_error, message_format)
    compiled = load_template(template)
    prefixes, outputs, tools = _batch_columns(batch, prefix_column, output_column, tools_column)
    # Per row: the message, the error text, the error fields, the warnings text.
    messages: list = []
    errors, fields, warned = [], [], []
    tools_by_text: dict[str, Any] = {}  # rows of a batch usually share one tools text
    for row, (prefix, output, row_tools) in enumerate(zip(prefixes, outputs, tools)):
        _check_texts(row, ((prefix, prefix_column), (output, output_column)))
        try:
            parser_tools = read_tools(row_tools, tools_by_text)
        except ValueError as error:
            message = f"row {row} of the batch, column {tools_column!r}: {error}"
            raise BatchInputError(message, row=row, column=tools_column) from None
        try:
            parser = ResponseParser(
                compiled, prefix, tools=parser_tools, regex_timeout=regex_timeout, on_error=on_error
            )
            message, _ = parser.finalize(output)
        except ResponseParseError as error:  # on_error="raise", or a pattern over its time budget
            message, found, parser = None, [error], None
        else:
            found = parser.errors
            if message_format == "json":
                message = json.dumps(message, ensure_ascii=False)
        messages.append(message)
        errors.append(ERROR_SEPARATOR.join(map(_one_line, found)) if found else None)
        fields.append([kept.field for kept in found])
        warned.append(_warning_lines(parser.warnings) if parser is not None else None)
    columns: dict[str, list] = {"message": messages, "error": errors}
    if error_fields:
        columns["error_fields"] = fields
    if warnings:
        columns["warnings"] = warned
    return columns


def datasets_features(features: Any = None, *, error_fields: bool = False) -> Any:
    """The `features=` for ``datasets.Dataset.map(parse_batch, ..., fn_kwargs={..., "message_format": "json"})``.

    `datasets` types a new column from the first rows it writes, so a column whose first
    thousand values are None (`error` when those rows parse) becomes null-typed and the first
    error fails to cast; these features type `message` and `error` as text up front.

    Args:
        features: the dataset's own `features`, for the columns the map keeps (None: none kept,
            as with ``remove_columns=dataset.column_names``).
        error_fields: add the `error_fields` column (as with ``error_fields=True``).

    Returns:
        A `datasets.Features`: `features`, then `message` and `error` as strings.
    """
    import datasets

    columns = dict(features or {})
    columns["message"] = datasets.Value("string")
    columns["error"] = datasets.Value("string")
    if error_fields:
        columns["error_fields"] = datasets.List(datasets.Value("string"))
    return datasets.Features(columns)


def _check_modes(on_error: str, message_format: str) -> None:
    """Raise ValueError unless `on_error` and `message_format` are allowed values."""
    if on_error not in ON_ERROR_MODES:
        raise ValueError(f"on_error must be one of {ON_ERROR_MODES}, got {on_error!r}")
    if message_format not in MESSAGE_FORMATS:
        raise ValueError(f"message_format must be one of {MESSAGE_FORMATS}, got {message_format!r}")


def _warning_lines(warnings: list) -> str | None:
    """A row's `parser.warnings` as ``code: message`` lines (newlines written as ``\\n``), or None."""
    lines = [f"{found.code}: {found.message}".replace("\n", "\\n") for found in warnings]
    return ERROR_SEPARATOR.join(lines) or None


def _one_line(error: ResponseParseError) -> str:
    return str(error).replace("\n", "\\n")


def _column_names(batch: Any) -> list[str]:
    names = getattr(batch, "column_names", None)  # pyarrow Table
    if names is None:
        names = (
            batch.columns
            if hasattr(batch, "columns") and not isinstance(batch, dict)
            else batch.keys()
        )
    return [str(name) for name in names]


def _column(batch: Any, name: str) -> list:
    """A column of the batch as a list of plain Python values."""
    try:
        values = batch[name]
    except KeyError:
        raise BatchInputError(
            f"the batch has no column {name!r} (columns: {', '.join(_column_names(batch)) or 'none'})",
            row=None,
            column=name,
        ) from None
    if hasattr(values, "to_pylist"):  # pyarrow Array or ChunkedArray
        return values.to_pylist()
    if hasattr(values, "tolist"):  # numpy array, pandas Series
        return values.tolist()
    return list(values)


def describe_value(value: Any) -> str:
    """A value's type and a short repr, for error messages."""
    shown = repr(value)
    return f"{type(value).__name__} {shown if len(shown) <= 40 else shown[:37] + '...'}"


def text_problem(value: Any) -> str | None:
    """Why `value` cannot be a prefix or a generation (it is not text), or None when it can."""
    return None if isinstance(value, str) else f"expected text, got {describe_value(value)}"


def _plain(value: Any) -> Any:
    """Numpy arrays and scalars (how Ray's numpy format hands nested Arrow values) as lists and numbers."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)) or hasattr(value, "tolist"):
        items = value.tolist() if hasattr(value, "tolist") else value
        return [_plain(item) for item in items] if isinstance(items, (list, tuple)) else items
    return value


def _is_missing(value: Any) -> bool:
    """None, or how pandas and numpy write a missing value (pandas.NA, NaN)."""
    return (
        value is None
        or type(value).__name__ == "NAType"
        or (isinstance(value, float) and math.isnan(value))
    )


def read_tools(value: Any, tools_by_text: dict[str, Any] | None = None) -> list | None:
    """One row's tools as a list of schema dicts, or None for none.

    Args:
        value: a list of schema dicts (numpy arrays of them too), its JSON text, or a missing
            value (None, pandas.NA, NaN).
        tools_by_text: a cache of decoded JSON texts, shared by the rows of a batch.

    Raises:
        ValueError: not JSON, not a list, or a tool that is not an object (says which).
    """
    if _is_missing(value):
        return None
    if isinstance(value, str):
        cache = tools_by_text if tools_by_text is not None else {}
        if value not in cache:
            try:
                cache[value] = json.loads(value)
            except json.JSONDecodeError as error:
                raise ValueError(f"not valid JSON ({error.msg} at column {error.colno})") from None
        value = cache[value]
        if value is None:
            return None
    else:
        value = _plain(value)
    if not isinstance(value, list):
        raise ValueError(f"expected a list of tool schemas, got {describe_value(value)}")
    for tool in value:
        if not isinstance(tool, dict):
            raise ValueError(f"each tool must be a JSON schema object, got {describe_value(tool)}")
    return value
