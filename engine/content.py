"""Content parsers: turn the raw body of a region into its value.

A registry of small pure functions keyed by the name a field gives in
`content`. Each takes `(body, content_args)` and returns the value, or raises
`ContentError` (a `ValueError`) with a message that says what was wrong and
where, and the offset in the body where parsing failed when it is known (the
parser adds the field name and the region's offset, and turns that offset into
a stream position).

The names, arguments and behaviours are documented in
`docs/template-language.md` ("content").
"""

from __future__ import annotations

import bisect
import json
import math
from collections.abc import Callable
from typing import Any

import regex

from .errors import ContentError, shorten

# Parsers whose chunks are part of the final value (`dirty=False` events).
STREAMABLE_CONTENT = frozenset({"text", "int", "float", "bool"})


def parse_text(body: str, args: dict) -> str:
    """`text`: the body, stripped of surrounding whitespace unless `strip` is false."""
    return body.strip() if args.get("strip", True) else body


def _first_visible(body: str) -> int:
    """Offset of the first character that is not whitespace (the length for a blank body)."""
    return len(body) - len(body.lstrip())


def parse_int(body: str, args: dict) -> int:
    """`int`: the stripped body as a Python int (`int()` syntax)."""
    try:
        return int(parse_text(body, args))
    except ValueError:
        raise ContentError(f"int: not an integer: {shorten(body)}", _first_visible(body)) from None


def parse_float(body: str, args: dict) -> float:
    """`float`: the stripped body as a Python float (`float()` syntax)."""
    try:
        return float(parse_text(body, args))
    except ValueError:
        raise ContentError(f"float: not a number: {shorten(body)}", _first_visible(body)) from None


def parse_bool(body: str, args: dict) -> bool:
    """`bool`: True when the stripped body is `true` or `1` (any case), else False."""
    return parse_text(body, args).lower() in ("true", "1")


# A rewritten JSON text keeps "marks" back to the body it came from: `(rewritten_offset,
# body_offset, copied)` at the start of every run; inside a copied run offsets move together,
# and every offset of a generated run (a quoted key, a re-encoded string) maps to where its
# original text started.
Marks = list[tuple[int, int, bool]]

# Characters that make an unquoted key's extent unclear: it may be two keys, a value or a nested object.
_AMBIGUOUS_KEY_CHARACTERS = '{}[],"\n\r'


def _body_position(marks: Marks, position: int) -> int:
    """The body offset of `position` in a text rewritten with `marks`."""
    index = bisect.bisect_right(marks, (position, math.inf, True)) - 1
    if index < 0:
        return position
    rewritten, original, copied = marks[index]
    return original + (position - rewritten) if copied else original


def _compose(outer: Marks, inner: Marks) -> Marks:
    """Marks from a second rewrite (`outer`, of the first rewrite's text) back to the body (`inner`).

    A run the second rewrite copied may hold runs the first generated (a string it quoted):
    the first rewrite's marks inside the run are carried over, so an offset after such a
    string still maps to where the body writes it."""
    composed: Marks = []
    for index, (rewritten, original, copied) in enumerate(outer):
        if not copied:
            composed.append((rewritten, _body_position(inner, original), False))
            continue
        end = outer[index + 1][0] - rewritten + original if index + 1 < len(outer) else math.inf
        at = bisect.bisect_right(inner, (original, math.inf, True)) - 1
        if at < 0:
            composed.append((rewritten, original, True))
        else:
            inner_at, body_at, inner_copied = inner[at]
            shift = original - inner_at if inner_copied else 0
            composed.append((rewritten, body_at + shift, inner_copied))
        for inner_at, body_at, inner_copied in inner[at + 1 :]:
            if inner_at >= end:
                break
            composed.append((rewritten + inner_at - original, body_at, inner_copied))
    return composed


class _Rewrite:
    """Builds a rewritten text from copied runs of the original and generated pieces, with its marks."""

    def __init__(self, original: str):
        self.original = original
        self.pieces: list[str] = []
        self.marks: Marks = []
        self.length = 0
        self.copied_to = 0  # original offset up to which text has been copied or replaced

    def replace(self, start: int, end: int, replacement: str) -> None:
        """Copy the original up to `start`, then write `replacement` for `original[start:end]`."""
        self.copy_to(start)
        self.marks.append((self.length, start, False))
        self.pieces.append(replacement)
        self.length += len(replacement)
        self.copied_to = end

    def copy_to(self, end: int) -> None:
        if end > self.copied_to:
            self.marks.append((self.length, self.copied_to, True))
            self.pieces.append(self.original[self.copied_to : end])
            self.length += end - self.copied_to
            self.copied_to = end

    def result(self) -> tuple[str, Marks]:
        self.copy_to(len(self.original))
        return "".join(self.pieces), self.marks


def _skip_json_string(text: str, i: int) -> int:
    """The offset after the double-quoted string that starts at `text[i]` (or the end of the text)."""
    n = len(text)
    i += 1
    while i < n and text[i] != '"':
        i += 2 if text[i] == "\\" else 1
    return i + 1


def _quote_bare_keys(text: str) -> tuple[str, Marks]:
    """Quote object keys written without quotes, reading each key's text up to its `:`.

    `{name: 1, Basic LLM Chain: {next: 2}}` gives `{"name": 1, "Basic LLM Chain": {"next": 2}}`.
    Only key positions are read (after `{` or `,` inside an object), so text inside quoted
    strings and values is never touched. A key whose text holds a bracket, brace, comma,
    quote or line break is ambiguous and raises `ContentError`.
    """
    rewrite = _Rewrite(text)
    containers: list[str] = []  # the open `{` and `[` around the current offset
    expect_key = False
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char == '"':
            i = _skip_json_string(text, i)
            expect_key = False
            continue
        if char in " \t\n\r":
            i += 1
            continue
        if char in "{[":
            containers.append(char)
            expect_key = char == "{"
        elif char in "}]":
            if containers:
                containers.pop()
            expect_key = False
        elif char == ",":
            expect_key = bool(containers) and containers[-1] == "{"
        elif expect_key and char not in ":'":
            colon = text.find(":", i)
            if colon != -1:
                key = text[i:colon].rstrip()
                unclear = next((c for c in key if c in _AMBIGUOUS_KEY_CHARACTERS), None)
                if unclear is not None:
                    raise ContentError(
                        f"json: the unquoted key {shorten(key, 60)} at offset {i} is ambiguous: it holds {unclear!r}, "
                        "so where the key ends is unclear; quote it",
                        position=i + key.index(unclear),
                    )
                rewrite.replace(i, i + len(key), json.dumps(key, ensure_ascii=False))
                i = colon + 1
                expect_key = False
                continue
            expect_key = False
        else:
            expect_key = False
        i += 1
    return rewrite.result()


def _find_unclaimed(text: str, needle: str, start: int, claimed: list[tuple[int, int]]) -> int:
    """The first offset >= `start` where `needle` occurs outside the `claimed` ranges, or -1."""
    i = text.find(needle, start)
    while i != -1:
        inside = next((end for begin, end in claimed if begin <= i < end), None)
        if inside is None:
            return i
        i = text.find(needle, inside)
    return -1


def _replace_custom_strings(text: str, string_delims: list) -> tuple[str, Marks]:
    """Rewrite strings written between custom delimiters as JSON strings.

    Pairs are applied in order: each one claims its strings (an open, then the next close),
    and text an earlier pair claimed is opaque to later pairs, so `<<it's>>` stays one
    string when `'` is a later pair.
    """
    claimed: list[tuple[int, int]] = []
    strings: list[tuple[int, int, str]] = []
    for open_delimiter, close_delimiter in string_delims:
        i = 0
        while True:
            start = _find_unclaimed(text, open_delimiter, i, claimed)
            if start == -1:
                break
            end = _find_unclaimed(text, close_delimiter, start + len(open_delimiter), claimed)
            if end == -1:
                break
            strings.append(
                (start, end + len(close_delimiter), text[start + len(open_delimiter) : end])
            )
            i = end + len(close_delimiter)
        claimed = sorted((start, end) for start, end, _ in strings)
    rewrite = _Rewrite(text)
    for start, end, inner in sorted(strings):
        if (
            start >= rewrite.copied_to
        ):  # a later pair's string around an earlier one keeps the outer
            rewrite.replace(start, end, json.dumps(inner, ensure_ascii=False))
    return rewrite.result()


def parse_json(body: str, args: dict) -> Any:
    """`json`: the body as JSON.

    Args (`content_args`): `unquoted_keys` (quote keys written without quotes, reading
    each key's text up to its `:`), `string_delims` (list of `[open, close]` pairs that
    delimit strings instead of `"`), `allow_non_json` (on failure return the stripped body),
    `decode_json_strings` (keys whose value may be an object or array written as a JSON
    string: see `_decode_json_strings`).

    Raises ContentError with the line, column and offset of the first error (its
    `position` is that offset in `body`, also after a rewrite), when an unquoted key is
    ambiguous, or when the document is nested too deeply for the decoder.
    """
    working, marks = body, [(0, 0, True)]
    try:
        if args.get("string_delims"):
            working, marks = _replace_custom_strings(working, args["string_delims"])
        if args.get("unquoted_keys"):
            working, quoted = _quote_bare_keys(working)
            marks = _compose(quoted, marks)
        value = json.loads(working)
    except ContentError:
        if args.get("allow_non_json"):
            return parse_text(body, args)
        raise
    except json.JSONDecodeError as error:
        if args.get("allow_non_json"):
            return parse_text(body, args)
        position = _body_position(marks, error.pos)
        line = body.count("\n", 0, position) + 1
        column = position - (body.rfind("\n", 0, position) + 1) + 1
        where = f"line {line}, column {column}, offset {position}"
        note = "" if working == body else f" after rewriting to {shorten(working)}"
        raise ContentError(
            f"json: {error.msg} ({where}){note}: {shorten(body)}", position
        ) from None
    except RecursionError:
        if args.get("allow_non_json"):
            return parse_text(body, args)
        raise ContentError(f"json: nested too deeply to decode: {shorten(body)}") from None
    keys = args.get("decode_json_strings")
    return _decode_json_strings(value, keys) if keys else value


def json_value_end(body: str, args: dict) -> int | None:
    """The offset in `body` just past the first complete JSON value it starts with (leading
    whitespace allowed), read with the same rewrites as `parse_json` (`string_delims`,
    `unquoted_keys`); None when the body does not start with one.

    Lenient parsing (`engine.recovery`) keeps that value when text follows it in the region.
    """
    working, marks = body, [(0, 0, True)]
    try:
        if args.get("string_delims"):
            working, marks = _replace_custom_strings(working, args["string_delims"])
        if args.get("unquoted_keys"):
            working, quoted = _quote_bare_keys(working)
            marks = _compose(quoted, marks)
        start = len(working) - len(working.lstrip())
        _, end = json.JSONDecoder().raw_decode(working, start)
    except (ContentError, ValueError, RecursionError):
        return None
    # The last character of the value maps back to the body (a generated run maps to its start).
    return _body_position(marks, end - 1) + 1 if end > start else None


def _decode_json_strings(value: Any, keys: list[str]) -> Any:
    """`value` with each of `keys` whose value is a string holding a JSON object or array
    replaced by what it decodes to, in the object itself or in each object of a list.

    Some models write a tool call's arguments as a JSON string (Granite 4:
    `"arguments": "{\\"city\\": \\"Paris\\"}"`); serving stacks decode it. A string that
    is not an encoded object or array (`"Paris"`, broken JSON) is kept as written.
    """
    for item in value if isinstance(value, list) else [value]:
        if not isinstance(item, dict):
            continue
        for key in keys:
            written = item.get(key)
            if not isinstance(written, str) or not written.strip().startswith(("{", "[")):
                continue
            try:
                decoded = json.loads(written)
            except (ValueError, RecursionError):
                continue
            if isinstance(decoded, (dict, list)):
                item[key] = decoded
    return value


def _parse_sub_value(raw: str, value_parser: dict | None, timeout: float | None, at: int) -> Any:
    """`raw` (found at offset `at` of the body) parsed with `value_parser`; a failure's position is moved to the body."""
    if value_parser is None:
        return raw
    args = value_parser.get("args", {})
    if timeout is not None:
        args = {**args, "_timeout": timeout}  # nested patterns keep the time budget
    try:
        return parse_content(value_parser.get("name", "text"), raw, args)
    except ContentError as error:
        position = None if error.position is None or at < 0 else at + error.position
        raise ContentError(str(error), position) from None


def tag_matches(body: str, args: dict, timeout: float | None):
    """The matches of an `xml-inline` field's tag pattern in `body`, in order (`args`: the
    field's compiled content_args; `timeout`: seconds for the `regex` engine, None for its
    standard-`re` equivalent). Linear where a tag never closes: the search ends at the last
    closing text (`_tag_end`)."""
    end = len(body)
    tag_end = args.get("_tag_end")
    if tag_end is not None:
        # No tag ends after the last closing text: stop there, or a tag that never closes
        # (a model looping on blanks inside a value) costs cubic backtracking.
        last = body.rfind(tag_end)
        if last < 0:
            return ()
        end = last + len(tag_end)
    if timeout is None and args.get("_tag_re_std") is not None:
        # same matches, faster engine (engine/re_equivalent.py)
        return args["_tag_re_std"].finditer(body, 0, end)
    tag_re = args.get("_tag_re") or regex.compile(args["tag_pattern"], regex.DOTALL)
    return tag_re.finditer(body, 0, end, timeout=timeout)


def parse_xml_inline(body: str, args: dict) -> dict:
    """`xml-inline`: a flat run of tags, each one entry of a dict.

    Args: `tag_pattern` (compiled by the template loader into `_tag_re`, plus
    `_tag_re_std`, a standard-`re` equivalent (engine/re_equivalent.py) used when no time
    budget `_timeout` is passed down, and `_tag_end`, the text every tag ends with;
    named groups `key` and `value`), `value_parser` (`{"name", "args"}` applied to each
    value), `value_parser_by` (`{"group", "parsers"}`: each tag's value parser is the one
    `parsers` gives for what the named `group` captured in that tag, `value_parser` when it
    gives none or the group took no part in the match; a parser given as None keeps the
    value's text), `merge_duplicates` (repeated keys collect into a list; otherwise the
    last one wins).
    """
    timeout = args.get("_timeout")
    read_tags = args.get("_tag_reader")  # lenient parsing's own reading (`engine.recovery`)
    tags = tag_matches(body, args, timeout) if read_tags is None else read_tags(body)
    value_parser = args.get("value_parser")
    by = args.get("value_parser_by")
    merge = args.get("merge_duplicates", False)
    values_by_key: dict[str, list] = {}
    for tag in tags:
        parser = value_parser
        if by is not None:
            parser = by["parsers"].get(tag.group(by["group"]), value_parser)
        value = _parse_sub_value(
            tag.groupdict().get("value") or "", parser, timeout, tag.start("value")
        )
        values_by_key.setdefault(tag.group("key"), []).append(value)
    if merge:
        return {
            key: values if len(values) > 1 else values[0] for key, values in values_by_key.items()
        }
    return {key: values[-1] for key, values in values_by_key.items()}


def parse_kv_lines(body: str, args: dict) -> dict:
    """`kv-lines`: `key<kv_sep>value` lines (split at the first separator).

    Args: `line_sep` ("\\n"), `kv_sep` (":"), `strip` (true), `value_parser`.
    Empty lines and lines without `kv_sep` are skipped.
    """
    line_sep = args.get("line_sep", "\n")
    kv_sep = args.get("kv_sep", ":")
    value_parser = args.get("value_parser")
    pairs: dict[str, Any] = {}
    strip = args.get("strip", True)
    line_start = 0
    for raw_line in body.split(line_sep):
        line = parse_text(raw_line, args)
        key, separator, value = line.partition(kv_sep)
        if separator:
            # Where the (stripped) value starts in the body, for error positions.
            at = line_start + len(key) + len(kv_sep)
            if strip:
                at += _first_visible(raw_line) + _first_visible(value)
            pairs[parse_text(key, args)] = _parse_sub_value(
                parse_text(value, args), value_parser, args.get("_timeout"), at
            )
        line_start += len(raw_line) + len(line_sep)
    return pairs


class _CallListReader:
    """Recursive-descent reader for the `python-call-list` grammar (docs/template-language.md)."""

    MAX_DEPTH = 100
    MAX_INTEGER = 2**53 - 1
    WHITESPACE = " \t\n\r"
    NAME = regex.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:[.-][A-Za-z0-9_]+)*")
    NUMBER = regex.compile(
        r"-?(?:0|[1-9][0-9]*)(?P<fraction>\.[0-9]+)?(?P<exponent>[eE][+-]?[0-9]+)?"
    )
    CONSTANTS = {
        "True": True,
        "true": True,
        "False": False,
        "false": False,
        "None": None,
        "null": None,
    }
    ESCAPES = {
        '"': '"',
        "'": "'",
        "\\": "\\",
        "/": "/",
        "b": "\b",
        "f": "\f",
        "n": "\n",
        "r": "\r",
        "t": "\t",
    }

    def __init__(self, text: str):
        self.text = text
        self.i = 0

    def fail(self, message: str):
        raise ContentError(
            f"python-call-list: {message} at position {self.i}: {shorten(self.text)}", self.i
        )

    def peek(self) -> str:
        text, n = self.text, len(self.text)
        while self.i < n and text[self.i] in self.WHITESPACE:
            self.i += 1
        return text[self.i] if self.i < n else ""

    def expect(self, char: str) -> None:
        if self.peek() != char:
            self.fail(f"expected {char!r}")
        self.i += 1

    def sequence(self, close: str, read_item: Callable[[], Any]) -> list:
        items: list = []
        if self.peek() == close:
            self.i += 1
            return items
        while True:
            items.append(read_item())
            if self.peek() == close:
                self.i += 1
                return items
            self.expect(",")

    def unique(self, pairs: list[tuple[str, Any]], what: str) -> dict:
        out: dict = {}
        for key, value in pairs:
            if key in out:
                self.fail(f"repeated {what} {key!r}")
            out[key] = value
        return out

    def name(self, what: str) -> str:
        self.peek()
        found = self.NAME.match(self.text, self.i)
        if found is None:
            self.fail(f"expected {what}")
        self.i = found.end()
        return found[0]

    def string(self) -> str:
        text, n = self.text, len(self.text)
        quote = text[self.i]
        start = self.i
        self.i += 1
        out: list[str] = []
        while True:
            if self.i >= n or text[self.i] in "\n\r":
                self.i = start
                self.fail("unterminated string")
            char = text[self.i]
            if char == quote:
                self.i += 1
                return "".join(out)
            if "\ud800" <= char <= "\udfff":
                self.fail("lone surrogate in string")
            if char != "\\":
                out.append(char)
                self.i += 1
                continue
            escape = text[self.i + 1 : self.i + 2]
            if escape in self.ESCAPES:
                out.append(self.ESCAPES[escape])
                self.i += 2
                continue
            if escape != "u":
                self.fail(f"unsupported escape {text[self.i : self.i + 2]!r}")
            escape_start = self.i
            code = self.hex4(self.i + 2)
            self.i += 6
            if 0xD800 <= code <= 0xDBFF and text.startswith("\\u", self.i):
                low = self.hex4(self.i + 2)
                if 0xDC00 <= low <= 0xDFFF:
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    self.i += 6
            if 0xD800 <= code <= 0xDFFF:
                self.i = escape_start
                self.fail("lone surrogate escape")
            out.append(chr(code))

    def hex4(self, at: int) -> int:
        digits = self.text[at : at + 4]
        if len(digits) != 4 or any(c not in "0123456789abcdefABCDEF" for c in digits):
            self.fail("invalid \\u escape")
        return int(digits, 16)

    def value(self, depth: int) -> Any:
        char = self.peek()
        if char in ("'", '"'):
            return self.string()
        if char in ("[", "{"):
            if depth >= self.MAX_DEPTH:
                self.fail(f"lists and dicts nested more than {self.MAX_DEPTH} levels deep")
            self.i += 1
            if char == "[":
                return self.sequence("]", lambda: self.value(depth + 1))
            return self.unique(self.sequence("}", lambda: self.pair(depth + 1)), "key")
        number = self.NUMBER.match(self.text, self.i)
        if number is not None:
            if number["fraction"] is None and number["exponent"] is None:
                if len(number[0]) > 17 or abs(int(number[0])) > self.MAX_INTEGER:
                    self.fail("integer outside -(2^53-1) .. 2^53-1")
                self.i = number.end()
                return int(number[0])
            result = float(number[0])
            if math.isinf(result):
                self.fail("number too large")
            self.i = number.end()
            return result
        constant = self.NAME.match(self.text, self.i)
        if constant is not None and constant[0] in self.CONSTANTS:
            self.i = constant.end()
            return self.CONSTANTS[constant[0]]
        self.fail("expected a string, number, list, dict, True, False or None")

    def pair(self, depth: int) -> tuple[str, Any]:
        if self.peek() not in ("'", '"'):
            self.fail("dict keys must be strings")
        key = self.string()
        self.expect(":")
        return key, self.value(depth)

    def argument(self) -> tuple[str, Any]:
        key = self.name(
            "a keyword argument (positional arguments and trailing commas are not allowed)"
        )
        if self.peek() != "=":
            self.fail("expected '=' (positional arguments are not allowed)")
        self.i += 1
        return key, self.value(0)

    def call(self) -> dict:
        name = self.name("a function name")
        self.expect("(")
        return {
            "name": name,
            "arguments": self.unique(self.sequence(")", self.argument), "argument"),
        }

    def read(self) -> list[dict]:
        self.expect("[")
        calls = self.sequence("]", self.call)
        if self.peek():
            self.fail("unexpected text after the closing ']'")
        return calls


def parse_python_call_list(body: str, args: dict) -> list[dict]:
    """`python-call-list`: `[f(a=1), g(b="x")]` -> `[{"name": "f", "arguments": {"a": 1}}, ...]`.

    Strict grammar (docs/template-language.md); every failure raises ContentError with the position.
    """
    return _CallListReader(body).read()


def call_list_end(body: str) -> int | None:
    """The offset in `body` just past the complete call list it starts with (leading whitespace
    allowed), or None when it does not start with one (`engine.recovery` keeps that list when
    text follows it in the region)."""
    reader = _CallListReader(body)
    try:
        reader.expect("[")
        reader.sequence("]", reader.call)
    except ContentError:
        return None
    return reader.i


# The end of the complete value a body starts with, by content parser (lenient parsing).
VALUE_ENDS: dict[str, Callable[[str, dict], int | None]] = {
    "json": json_value_end,
    "python-call-list": lambda body, args: call_list_end(body),
}

CONTENT_PARSERS: dict[str, Callable[[str, dict], Any]] = {
    "text": parse_text,
    "int": parse_int,
    "float": parse_float,
    "bool": parse_bool,
    "json": parse_json,
    "xml-inline": parse_xml_inline,
    "kv-lines": parse_kv_lines,
    "python-call-list": parse_python_call_list,
}


def parse_content(name: str, body: str, args: dict) -> Any:
    """Run the content parser `name` on `body` with `args`.

    Raises:
        ContentError (a ValueError): the body does not parse; its `position` says where, when known.
        ValueError: other failures of a parser.
    """
    return CONTENT_PARSERS[name](body, args)
