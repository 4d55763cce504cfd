"""The template editor's diagnostics: validation, "did you mean", lint, and one-click fixes.

`findings(text)` reads editor text the way the page does (the input caps, then
the JSON Schema, the engine's loader and `engine.lint`) and returns `Finding`s,
errors first. A misspelt key (`clsoe`), content type (`jsn`) or placeholder
(`{contnet}`) gets the nearest valid name; findings that have an obvious edit
carry the fixed template (`Finding.fixed`), which the page applies in one click
(`apply_fix`).
"""

from __future__ import annotations

import ast
import copy
import functools
import json
import re
from dataclasses import dataclass
from typing import Any

from engine import TemplateError, load_template
from engine.authoring.lint import lint, lint_tokenizer
from engine.pattern_shapes import pattern_literal
from engine.template import compile_pattern
from engine.transform import placeholder_paths

from ..catalog import template_text_of
from ..panels.field_reference import schema
from ..server import limits
from ..server.input_readers import InputError, read_template
from ..server.redact import near_miss

SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}
# Lint codes whose suggestion names a close_pattern to use instead of the literal close.
_CLOSE_PATTERN_CODES = ("json-close-literal", "tool-call-swallowed-by-reasoning")
_RENAMES = {
    "reasoning-field-name": "reasoning_content",
    "content-field-name": "content",
    "tool-call-field-name": "tool_calls",
}
_QUOTED = re.compile(r"""close_pattern ('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")""")


@dataclass(frozen=True)
class Finding:
    """One diagnostic of the editor text.

    Attributes:
        severity: "error", "warning" or "info"; code: a stable name (lint's, or
            ``unknown-key``, ``unknown-placeholder``, ``unknown-value``, ``input-error``,
            ``template-error``).
        path: JSON path of the key at fault (``""`` for the whole template).
        message, suggestion: what is wrong, and what to write instead.
        fix_label: what the one-click fix does ("" when there is none); fixed: the template
            with the fix applied, or None.
    """

    severity: str
    code: str
    path: str
    message: str
    suggestion: str = ""
    fix_label: str = ""
    fixed: dict | None = None


@functools.cache
def _validator():
    from jsonschema import Draft202012Validator

    return Draft202012Validator(schema())


def _dotted(parts) -> str:
    return ".".join(str(part) for part in parts)


def _nearest(word: str, choices) -> str | None:
    return near_miss(word, choices)


def _at(template: dict, parts: list) -> Any:
    node = template
    for part in parts:
        node = node[part]
    return node


def _renamed_key(template: dict, parts: list, old: str, new: str) -> dict:
    fixed = copy.deepcopy(template)
    parent = _at(fixed, parts)
    items = [(new if key == old else key, value) for key, value in parent.items()]
    parent.clear()
    parent.update(items)
    return fixed


def _schema_findings(template: dict) -> list[Finding]:
    """Misspelt keys and enum values, with the nearest valid one (the JSON Schema knows them all)."""
    found = []
    for error in _validator().iter_errors(template):
        parts = list(error.absolute_path)
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            allowed = list(error.schema.get("properties", {}))
            for key in error.instance:
                if key in allowed or error.schema.get("additionalProperties") is not False:
                    continue
                where = _dotted([*parts, key])
                guess = _nearest(key, allowed)
                if guess is None:
                    found.append(
                        Finding(
                            "error",
                            "unknown-key",
                            where,
                            f"unknown key {key!r} (allowed: {', '.join(allowed)})",
                        )
                    )
                elif guess not in error.instance:
                    found.append(
                        Finding(
                            "error",
                            "unknown-key",
                            where,
                            f"unknown key {key!r}: did you mean {guess!r}?",
                            f"rename it to {guess}",
                            f"rename to {guess}",
                            _renamed_key(template, parts, key, guess),
                        )
                    )
        elif error.validator == "enum" and isinstance(error.instance, str):
            guess = _nearest(error.instance, error.validator_value)
            where = _dotted(parts)
            if guess is not None:
                fixed = copy.deepcopy(template)
                _at(fixed, parts[:-1])[parts[-1]] = guess
                found.append(
                    Finding(
                        "error",
                        "unknown-value",
                        where,
                        f"{error.instance!r} is not one of {', '.join(error.validator_value)}: did you mean {guess!r}?",
                        f"use {guess}",
                        f"use {guess}",
                        fixed,
                    )
                )
    return found


def _replaced_placeholder(value: Any, old: str, new: str) -> Any:
    if isinstance(value, dict):
        return {key: _replaced_placeholder(item, old, new) for key, item in value.items()}
    if isinstance(value, list):
        return [_replaced_placeholder(item, old, new) for item in value]
    if isinstance(value, str) and (value == "{" + old + "}" or value.startswith("{" + old + ".")):
        return "{" + new + value[len(old) + 1 :]
    return value


def _placeholder_findings(template: dict) -> list[Finding]:
    """Transform placeholders that name nothing: a field's names are `content` and its delimiters' named groups."""
    found = []
    fields = template.get("fields")
    if not isinstance(fields, dict):
        return found
    for name, spec in fields.items():
        if not isinstance(spec, dict) or "transform" not in spec:
            continue
        names = {"content"}
        for key in ("open_pattern", "close_pattern"):
            try:
                names |= (
                    set(compile_pattern(f"fields.{name}.{key}", spec[key]).groupindex)
                    if isinstance(spec.get(key), str)
                    else set()
                )
            except TemplateError:
                pass  # the loader names it
        for path in dict.fromkeys(placeholder_paths(spec["transform"])):
            used = path.split(".")[0]
            if used in names:
                continue
            guess = _nearest(used, names)
            where = f"fields.{name}.transform"
            if guess is None:
                found.append(
                    Finding(
                        "error",
                        "unknown-placeholder",
                        where,
                        f"placeholder {{{used}}} names nothing (known: {', '.join(sorted(names))})",
                    )
                )
                continue
            fixed = copy.deepcopy(template)
            fixed["fields"][name]["transform"] = _replaced_placeholder(
                spec["transform"], used, guess
            )
            found.append(
                Finding(
                    "error",
                    "unknown-placeholder",
                    where,
                    f"placeholder {{{used}}} names nothing: did you mean {{{guess}}}?",
                    f"use {{{guess}}}",
                    f"use {{{guess}}}",
                    fixed,
                )
            )
    return found


def _field_of(path: str) -> str | None:
    parts = path.split(".")
    return parts[1] if len(parts) >= 2 and parts[0] == "fields" else None


def _with_close_pattern(template: dict, name: str, pattern: str) -> dict:
    fixed = copy.deepcopy(template)
    spec = fixed["fields"][name]
    spec.pop("close", None)
    spec["close_pattern"] = pattern
    return fixed


def _lint_fix(template: dict, diagnostic) -> tuple[str, dict | None]:
    """(label, fixed template) for a lint diagnostic with an obvious edit, else ("", None)."""
    name = _field_of(diagnostic.path)
    fields = template.get("fields", {})
    if name not in fields:
        return "", None
    spec = fields[name]
    if diagnostic.code in _CLOSE_PATTERN_CODES:
        quoted = _QUOTED.search(diagnostic.suggestion)
        if quoted is None:
            return "", None
        pattern = ast.literal_eval(quoted.group(1))
        return f"use close_pattern {pattern}", _with_close_pattern(template, name, pattern)
    if diagnostic.code == "close-equals-open" and isinstance(spec.get("close"), str):
        pattern = "(?=" + pattern_literal(spec["close"]) + ")"
        return f"use close_pattern {pattern}", _with_close_pattern(template, name, pattern)
    if diagnostic.code == "repeats-text-without-join":
        fixed = copy.deepcopy(template)
        fixed["fields"][name]["join"] = "\n"
        return 'add "join": "\\n"', fixed
    if diagnostic.code in _RENAMES and _RENAMES[diagnostic.code] not in fields:
        new = _RENAMES[diagnostic.code]
        return f"rename the field to {new}", _renamed_key(template, ["fields"], name, new)
    return "", None


def _held(found: list[Finding], near_misses: list) -> list[Finding]:
    """`found` with each one-click fix held back that would copy a delimiter text the current
    parse shows is wrong (a near miss: the text has something else where the template expects
    it): fixing the delimiter comes first, or the fix spreads its typo to another key."""
    held = []
    for finding in found:
        written = json.dumps(finding.fixed, ensure_ascii=False) if finding.fixed else ""
        wrong = next(
            (
                miss
                for miss in near_misses
                if miss.expected
                and miss.key != finding.path
                and _written_in(miss.expected, written)
            ),
            None,
        )
        if wrong is None:
            held.append(finding)
            continue
        held.append(
            Finding(
                finding.severity,
                finding.code,
                finding.path,
                finding.message,
                f"first fix {wrong.key}: the output has {wrong.found!r} where it expects "
                f"{wrong.expected!r} (then this fix copies the right text)",
            )
        )
    return held


def _written_in(literal: str, written: str) -> bool:
    """Whether `literal` is in the JSON text `written`, as itself or escaped as a pattern."""
    escaped = pattern_literal(literal)
    return any(json.dumps(form, ensure_ascii=False)[1:-1] in written for form in (literal, escaped))


def findings(text: str, near_misses: list | None = None, tokenizer=None) -> list[Finding]:
    """Every diagnostic of editor `text`, errors first (see the module docstring).

    `near_misses`: the near-miss diagnoses (`engine.authoring.diagnosis.Diagnosis`) of the
    current parse with this template; a fix that would copy a delimiter text they show is
    wrong is held back (`_held`). `tokenizer`: the tokenizer the page reads outputs with
    (Paste & parse's "Read as"), or None: its findings (`lint_tokenizer`: delimiters that are
    not its control tokens) are added, with no one-click fix."""
    try:
        template = read_template(text)
    except InputError as error:
        return [Finding("error", "input-error", "", str(error))]
    found = _schema_findings(template) + _placeholder_findings(template)
    try:
        load_template(template)
    except TemplateError as error:
        if not any(f.path == error.path for f in found):
            found.append(Finding("error", "template-error", error.path, error.detail))
    else:
        for diagnostic in lint(template, deadline=limits.deadline("parse_seconds")):
            label, fixed = _lint_fix(template, diagnostic)
            found.append(
                Finding(
                    diagnostic.severity,
                    diagnostic.code,
                    diagnostic.path,
                    diagnostic.message,
                    diagnostic.suggestion,
                    label,
                    fixed,
                )
            )
        if tokenizer is not None:
            found += [
                Finding(d.severity, d.code, d.path, d.message, d.suggestion)
                for d in lint_tokenizer(template, tokenizer)
            ]
    if near_misses:
        found = _held(found, near_misses)
    return sorted(found, key=lambda f: SEVERITY_ORDER.get(f.severity, 3))


def apply_fix(text: str, index: int, tokenizer=None) -> str | None:
    """Editor text with finding `index` of `findings(text, tokenizer=tokenizer)` fixed, or None
    when it has no fix."""
    found = findings(text, tokenizer=tokenizer)
    if not 0 <= index < len(found) or found[index].fixed is None:
        return None
    return template_text_of(found[index].fixed)


_LINE_COLUMN = re.compile(r"line (\d+), column (\d+)")
_POSITION = re.compile(r"at position (\d+)")


_BLANK = re.compile(r"[ \t\n\r]*")


def _value_start(text: str, path: str) -> int | None:
    """Offset in editor `text` of the JSON value at a dotted `path` (``fields.x.close_pattern``,
    a digit indexing a list), found by walking the JSON's own structure (a key of the same name
    elsewhere, such as a field's ``content`` key before the field named ``content``, is never
    taken for it); None when the path is not there or the text is not JSON up to it."""
    decoder = json.JSONDecoder()
    at = _BLANK.match(text, 0).end()
    try:
        for part in path.split("."):
            at = _BLANK.match(text, at).end()
            if text[at : at + 1] == "[" and part.isdecimal():
                at = _BLANK.match(text, at + 1).end()
                for _ in range(int(part)):
                    at = _BLANK.match(text, decoder.raw_decode(text, at)[1]).end()
                    if text[at : at + 1] != ",":
                        return None
                    at = _BLANK.match(text, at + 1).end()
                continue
            if text[at : at + 1] != "{":
                return None
            at += 1
            while True:
                at = _BLANK.match(text, at).end()
                if text[at : at + 1] != '"':
                    return None
                key, at = json.decoder.scanstring(text, at + 1)
                at = _BLANK.match(text, at).end()
                if text[at : at + 1] != ":":
                    return None
                at = _BLANK.match(text, at + 1).end()
                if key == part:
                    break
                at = _BLANK.match(text, decoder.raw_decode(text, at)[1]).end()
                if text[at : at + 1] != ",":
                    return None
                at += 1
    except ValueError:
        return None
    return at


def _decoded_to_raw(text: str, start: int, position: int) -> int:
    """Offset in `text` of character `position` of the JSON string literal starting at `text[start]` (its quote)."""
    at, decoded = start + 1, 0
    while at < len(text) and decoded < position and text[at] != '"':
        at += 6 if text.startswith("\\u", at) else 2 if text[at] == "\\" else 1
        decoded += 1
    return at


def editor_place(text: str, finding: Finding) -> tuple[int, int] | None:
    """(line, column), 1-based, of what a finding is about in the editor text: a JSON error's
    place, the failing character of an invalid regex, or the key at fault; None when unknown."""
    if finding.code == "input-error":
        found = _LINE_COLUMN.search(finding.message)
        return (int(found.group(1)), int(found.group(2))) if found else None
    if not finding.path:
        return None
    at = _value_start(text, finding.path)
    if at is None:
        return None
    position = _POSITION.search(finding.message)
    if position is not None and text[at : at + 1] == '"':
        at = _decoded_to_raw(text, at, int(position.group(1)))
    line = text.count("\n", 0, at) + 1
    return line, at - (text.rfind("\n", 0, at) + 1) + 1


@dataclass(frozen=True)
class MarkedLine:
    """An editor line around a marked character: its `line` and `column` (1-based), up to 60
    characters `before` it, the `char` itself (a blank past the line's end) and up to 60 `after`."""

    line: int
    column: int
    before: str
    char: str
    after: str


def marked_line(text: str, place: tuple[int, int]) -> MarkedLine | None:
    """The editor line of `place` (line, column) around its character, or None when `text` has
    no such line."""
    line, column = place
    lines = text.split("\n")
    if not 1 <= line <= len(lines):
        return None
    content = lines[line - 1]
    index = min(max(column - 1, 0), len(content))
    return MarkedLine(
        line,
        column,
        content[max(0, index - 60) : index],
        content[index : index + 1] or " ",
        content[index + 1 : index + 60],
    )
