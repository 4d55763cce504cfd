"""Content parsers: turn the raw body of a region into its value.

A registry of small pure functions keyed by the name a field gives in
`content`. Each takes `(body, content_args)` and returns the value, or raises
`ValueError` with a message that says what was wrong and where (the parser
adds the field name and the region's offset).

The names, arguments and behaviours are those of SPEC.md section 4
("FIELD keys: content").
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import regex

from .errors import shorten

# Parsers whose chunks are part of the final value (`dirty=False` events).
STREAMABLE_CONTENT = frozenset({"text", "int", "float", "bool"})


def parse_text(body: str, args: dict) -> str:
    """`text`: the body, stripped of surrounding whitespace unless `strip` is false."""
    return body.strip() if args.get("strip", True) else body


def parse_int(body: str, args: dict) -> int:
    """`int`: the stripped body as a Python int (`int()` syntax)."""
    try:
        return int(parse_text(body, args))
    except ValueError:
        raise ValueError(f"int: not an integer: {shorten(body)}") from None


def parse_float(body: str, args: dict) -> float:
    """`float`: the stripped body as a Python float (`float()` syntax)."""
    try:
        return float(parse_text(body, args))
    except ValueError:
        raise ValueError(f"float: not a number: {shorten(body)}") from None


def parse_bool(body: str, args: dict) -> bool:
    """`bool`: True when the stripped body is `true` or `1` (any case), else False."""
    return parse_text(body, args).lower() in ("true", "1")


_BARE_KEY = regex.compile(r"(\s*)(\w+)(\s*):")


def _quote_bare_keys(text: str) -> str:
    """Quote identifier keys written without quotes (`{city: "x"}`), never touching text inside strings."""
    out: list[str] = []
    i, n = 0, len(text)
    copied = 0
    while i < n:
        char = text[i]
        if char == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            continue
        if char in "{,":
            bare = _BARE_KEY.match(text, i + 1)
            if bare is not None:
                out.append(text[copied : i + 1])
                out.append(f'{bare[1]}"{bare[2]}"{bare[3]}:')
                copied = i = bare.end()
                continue
        i += 1
    out.append(text[copied:])
    return "".join(out)


def _replace_custom_strings(text: str, string_delims: list) -> str:
    """Rewrite strings written between custom delimiters as JSON strings.

    Pairs are applied in order; text already rewritten by an earlier pair is
    protected from later pairs by private-use placeholders.
    """
    placeholder_mark = "\ue000"
    while placeholder_mark in text:  # pick a marker the text does not contain
        placeholder_mark = chr(ord(placeholder_mark) + 1)
    rewritten: list[str] = []
    for open_delim, close_delim in string_delims:
        pieces, i = [], 0
        while True:
            start = text.find(open_delim, i)
            if start == -1:
                break
            end = text.find(close_delim, start + len(open_delim))
            if end == -1:
                break
            pieces.append(text[i:start])
            rewritten.append(json.dumps(text[start + len(open_delim) : end], ensure_ascii=False))
            pieces.append(f"{placeholder_mark}{len(rewritten) - 1}{placeholder_mark}")
            i = end + len(close_delim)
        pieces.append(text[i:])
        text = "".join(pieces)
    if not rewritten:
        return text
    return regex.sub(
        regex.escape(placeholder_mark) + r"(\d+)" + regex.escape(placeholder_mark),
        lambda m: rewritten[int(m[1])],
        text,
    )


def parse_json(body: str, args: dict) -> Any:
    """`json`: the body as JSON.

    Args (`content_args`): `unquoted_keys` (quote bare identifier keys),
    `string_delims` (list of `[open, close]` pairs that delimit strings instead
    of `"`), `allow_non_json` (on failure return the stripped body).

    Raises ValueError with the line, column and offset of the first error, or
    when the document is nested too deeply for the decoder.
    """
    working = body
    if args.get("string_delims"):
        working = _replace_custom_strings(working, args["string_delims"])
    if args.get("unquoted_keys"):
        working = _quote_bare_keys(working)
    try:
        return json.loads(working)
    except json.JSONDecodeError as error:
        if args.get("allow_non_json"):
            return parse_text(body, args)
        where = f"line {error.lineno}, column {error.colno}, offset {error.pos}"
        note = "" if working == body else f" after rewriting to {shorten(working)}"
        raise ValueError(f"json: {error.msg} ({where}){note}: {shorten(body)}") from None
    except RecursionError:
        if args.get("allow_non_json"):
            return parse_text(body, args)
        raise ValueError(f"json: nested too deeply to decode: {shorten(body)}") from None


def _parse_sub_value(raw: str, value_parser: dict | None, timeout: float | None) -> Any:
    if value_parser is None:
        return raw
    args = value_parser.get("args", {})
    if timeout is not None:
        args = {**args, "_timeout": timeout}  # nested patterns keep the time budget
    return parse_content(value_parser.get("name", "text"), raw, args)


def parse_xml_inline(body: str, args: dict) -> dict:
    """`xml-inline`: a flat run of tags, each one entry of a dict.

    Args: `tag_pattern` (compiled by the template loader into `_tag_re`, plus
    `_tag_re_std`, a standard-`re` equivalent (engine/re_equivalent.py) used when no time
    budget `_timeout` is passed down, and `_tag_end`, the text every tag ends with;
    named groups `key` and `value`), `value_parser` (`{"name", "args"}` applied to each
    value), `merge_duplicates` (repeated keys collect into a list; otherwise the
    last one wins).
    """
    timeout = args.get("_timeout")
    end = len(body)
    tag_end = args.get("_tag_end")
    if tag_end is not None:
        # No tag ends after the last closing text: stop there, or a tag that never closes
        # (a model looping on blanks inside a value) costs cubic backtracking.
        last = body.rfind(tag_end)
        if last < 0:
            return {}
        end = last + len(tag_end)
    if timeout is None and args.get("_tag_re_std") is not None:
        tags = args["_tag_re_std"].finditer(body, 0, end)  # same matches, faster engine (engine/re_equivalent.py)
    else:
        tag_re = args.get("_tag_re") or regex.compile(args["tag_pattern"], regex.DOTALL)
        tags = tag_re.finditer(body, 0, end, timeout=timeout)
    value_parser = args.get("value_parser")
    merge = args.get("merge_duplicates", False)
    values_by_key: dict[str, list] = {}
    for tag in tags:
        value = _parse_sub_value(tag.groupdict().get("value") or "", value_parser, timeout)
        values_by_key.setdefault(tag.group("key"), []).append(value)
    if merge:
        return {key: values if len(values) > 1 else values[0] for key, values in values_by_key.items()}
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
    for raw_line in body.split(line_sep):
        key, separator, value = parse_text(raw_line, args).partition(kv_sep)
        if separator:
            pairs[parse_text(key, args)] = _parse_sub_value(parse_text(value, args), value_parser, args.get("_timeout"))
    return pairs


class _CallListReader:
    """Recursive-descent reader for the `python-call-list` grammar (SPEC.md section 4)."""

    MAX_DEPTH = 100
    MAX_INTEGER = 2**53 - 1
    WHITESPACE = " \t\n\r"
    NAME = regex.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:[.-][A-Za-z0-9_]+)*")
    NUMBER = regex.compile(r"-?(?:0|[1-9][0-9]*)(?P<fraction>\.[0-9]+)?(?P<exponent>[eE][+-]?[0-9]+)?")
    CONSTANTS = {"True": True, "true": True, "False": False, "false": False, "None": None, "null": None}
    ESCAPES = {'"': '"', "'": "'", "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}

    def __init__(self, text: str):
        self.text = text
        self.i = 0

    def fail(self, message: str):
        raise ValueError(f"python-call-list: {message} at position {self.i}: {shorten(self.text)}")

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
        key = self.name("a keyword argument (positional arguments and trailing commas are not allowed)")
        if self.peek() != "=":
            self.fail("expected '=' (positional arguments are not allowed)")
        self.i += 1
        return key, self.value(0)

    def call(self) -> dict:
        name = self.name("a function name")
        self.expect("(")
        return {"name": name, "arguments": self.unique(self.sequence(")", self.argument), "argument")}

    def read(self) -> list[dict]:
        self.expect("[")
        calls = self.sequence("]", self.call)
        if self.peek():
            self.fail("unexpected text after the closing ']'")
        return calls


def parse_python_call_list(body: str, args: dict) -> list[dict]:
    """`python-call-list`: `[f(a=1), g(b="x")]` -> `[{"name": "f", "arguments": {"a": 1}}, ...]`.

    Strict grammar of SPEC.md section 4; every failure raises ValueError with the position.
    """
    return _CallListReader(body).read()


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
    """Run the content parser `name` on `body` with `args`; raises ValueError as the parser does."""
    return CONTENT_PARSERS[name](body, args)
