"""Response templates: load, validate and compile the JSON spec (docs/template-language.md).

`load_template` turns a template dict into a `ResponseTemplate`: every key
checked, every pattern compiled once, every error a `TemplateError` whose
message starts with the JSON path of the offending key and says what was
found and what is allowed.

A template may come from a stranger (a hosted playground, a shared link), so
what it costs to compile is bounded before anything compiles: each pattern's
size and nesting (`pattern_shapes.pattern_size`, `compile_pattern`) and the
size of all its patterns together (`MAX_TEMPLATE_PATTERN_SIZE`). Loaded
templates are cached by content, and the cache is bounded by what its
templates weigh (`TemplateCache`), not only by their number.
"""

from __future__ import annotations

import copy
import json
import marshal
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import regex

from .content import CONTENT_PARSERS, STREAMABLE_CONTENT
from .delimiters import Delimiter
from .errors import TemplateError
from .pattern_shapes import MAX_PATTERN_SIZE, PatternBoundError, end_literal, pattern_size
from .re_equivalent import re_equivalent
from .transform import compile_transform, find_mixed_placeholder
from .watch import WatchState, watch_states

TEMPLATE_KEYS = ("version", "defaults", "start_anchor", "start_anchor_pattern", "fields")
# Delimiters, then content, then how regions combine into the message.
FIELD_KEYS = ("open", "open_pattern", "close", "close_pattern", "content", "content_args")
FIELD_KEYS += ("repeats", "join", "optional", "transform", "transform_each")
# content name -> {argument: (type or types, description of what is allowed)}
CONTENT_ARGS: dict[str, dict[str, tuple[type | tuple[type, ...], str]]] = {
    "text": {"strip": (bool, "a boolean")},
    "int": {"strip": (bool, "a boolean")},
    "float": {"strip": (bool, "a boolean")},
    "bool": {"strip": (bool, "a boolean")},
    "json": {
        "unquoted_keys": (bool, "a boolean"),
        "string_delims": (list, "a list of [open, close] string pairs"),
        "allow_non_json": (bool, "a boolean"),
        "decode_json_strings": (list, "a non-empty list of key names"),
        "strip": (bool, "a boolean"),
    },
    "xml-inline": {
        "tag_pattern": (str, "a regex with named groups 'key' and 'value'"),
        "value_parser": (dict, 'a {"name": ..., "args": {...}} object'),
        "value_parser_by": (dict, 'a {"group": ..., "parsers": {...}} object'),
        "merge_duplicates": (bool, "a boolean"),
    },
    "kv-lines": {
        "line_sep": (str, "a non-empty string"),
        "kv_sep": (str, "a non-empty string"),
        "strip": (bool, "a boolean"),
        "value_parser": (dict, 'a {"name": ..., "args": {...}} object'),
    },
    "python-call-list": {},
}


@dataclass(eq=False)
class FieldSpec:
    """One compiled field of a template.

    Attributes:
        name: the message key it writes.
        path: its JSON path, ``fields.<name>``.
        open, close: its delimiters, or None (no open: the implicit field; no close: runs to the end).
        content: content parser name; content_args: its arguments (compiled patterns added as ``_tag_re``,
            ``_tag_re_std`` when a standard-`re` equivalent exists, and ``_tag_end``, the text every tag
            ends with, when `pattern_shapes.end_literal` finds one).
        repeats, join, optional, transform, transform_each: as in the template.
        build: the transform compiled (`transform.compile_transform`), or None without one.
        dirty: True when chunks are raw text of a structured value (`dirty` flag of chunk events).
    """

    name: str
    path: str
    content: str
    content_args: dict
    dirty: bool
    open: Delimiter | None
    close: Delimiter | None
    transform: Any
    transform_each: bool
    repeats: bool
    join: str | None
    optional: bool
    build: Callable[[dict], Any] | None = None

    @property
    def implicit(self) -> bool:
        """True for the field with no open delimiter, which catches unclaimed text."""
        return self.open is None

    @property
    def is_tool_call(self) -> bool:
        """True for a field that produces tool calls: named ``tool_calls``, or transformed into
        ``{"function": ...}``."""
        if self.name == "tool_calls":
            return True
        return isinstance(self.transform, dict) and "function" in self.transform

    @property
    def concatenates_stretches(self) -> bool:
        """True for a non-repeating implicit `text` field without a transform: each of its closes
        carries its own stretch of unclaimed text, and its value is those closes' values
        concatenated (the rule is in `engine.events`)."""
        return (
            self.open is None
            and not self.repeats
            and self.content == "text"
            and self.transform is None
        )


@dataclass(eq=False)
class ResponseTemplate:
    """A loaded response template.

    Attributes:
        source: a deep copy of the template dict as given.
        defaults: keys always present in the message.
        fields: compiled fields by name, in template order.
        implicit_field: the field without an open delimiter, or None.
        start_anchor: the delimiter whose last match in the prefix starts the message.
        watch_outside: what the parser watches for outside explicit regions (`watch.WatchState`).
        watch_inside: what it watches for inside each field's region, by field name.
        context_width: decided characters before the scan position that any pattern may look at.
        pattern_pieces: what its patterns compile to together (`pattern_shapes.pattern_size`).
    """

    source: dict
    defaults: dict
    fields: dict[str, FieldSpec]
    implicit_field: FieldSpec | None
    start_anchor: Delimiter
    watch_outside: WatchState = field(init=False, repr=False)
    watch_inside: dict[str, WatchState] = field(init=False, repr=False)
    context_width: int = field(init=False)
    pattern_pieces: int = 0

    def __post_init__(self) -> None:
        self.watch_outside, self.watch_inside, self.context_width = watch_states(
            self.fields, self.implicit_field
        )


def _join(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else str(key)


def _show(value: Any, limit: int = 60) -> str:
    """A template value as JSON text, cut to about `limit` characters."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# Deeper nesting than this in a template is refused (no real template nests beyond ten levels).
MAX_TEMPLATE_DEPTH = 64


def _check_json_data(value: Any, path: str, depth: int = 0) -> None:
    """Raise TemplateError at the first value under `path` that JSON cannot hold (a function, a
    tuple, a non-string key), or where nesting goes deeper than MAX_TEMPLATE_DEPTH."""
    if depth > MAX_TEMPLATE_DEPTH and isinstance(value, (dict, list)):
        raise TemplateError(path, f"nested more than {MAX_TEMPLATE_DEPTH} levels deep")
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise TemplateError(
                    path, f"keys must be strings, got {_type_name(key)} {_show(key, 40)}"
                )
            _check_json_data(item, f"{path}.{key}" if path else key, depth + 1)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_json_data(item, f"{path}[{index}]", depth + 1)
    elif value is not None and not isinstance(value, (str, bool, int, float)):
        raise TemplateError(
            path,
            f"must be JSON data (object, array, string, number, boolean or null), got {_type_name(value)}",
        )


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def compile_pattern(path: str, pattern: Any, flags: int = regex.DOTALL) -> regex.Pattern:
    """A template pattern compiled, after its bounds are checked (see `pattern_shapes.pattern_size`).

    Args:
        path: the pattern's JSON path in the template, for messages (``fields.x.open_pattern``).
        pattern: what the template holds there (a non-empty regex string is expected).
        flags: the `regex` flags (the format compiles with DOTALL).

    Raises:
        TemplateError: at `path`: not a non-empty string, over the bounds, or not a valid regex
            (with the position of the fault when the regex module gives one).
    """
    if not isinstance(pattern, str):
        raise TemplateError(path, f"must be a regex string, got {_type_name(pattern)}")
    if pattern == "":
        raise TemplateError(path, "must not be empty")
    try:
        pattern_size(pattern)
        # Not kept in the regex module's own cache (500 patterns of any size): loaded templates
        # are kept by `TemplateCache`, within its weight.
        return regex.compile(pattern, flags, cache_pattern=False)
    except PatternBoundError as error:
        raise TemplateError(path, f"{error}: {_show(pattern, 80)}", predicate=True) from None
    except regex.error as error:
        where = f" at position {error.pos}" if getattr(error, "pos", None) is not None else ""
        raise TemplateError(
            path,
            f"invalid regex{where}: {error.msg if hasattr(error, 'msg') else error}: {pattern!r}",
        ) from None
    except (ValueError, OverflowError, RecursionError):  # the regex module's own limits
        raise TemplateError(
            path, f"invalid regex: it cannot be compiled: {_show(pattern, 80)}"
        ) from None


# What a template's patterns may weigh together (pieces, as `pattern_shapes.pattern_size` counts).
MAX_TEMPLATE_PATTERN_SIZE = 100_000
_PATTERN_KEYS = ("open_pattern", "close_pattern")


def _template_patterns(template: dict) -> list[tuple[str, str]]:
    """(JSON path, text) of every pattern string a template holds, in template order: the start
    anchor's, each field's delimiters', and the tag patterns of its content arguments (value
    parsers included); whatever is not a string is left to the checks of its key."""
    found = []
    if isinstance(template.get("start_anchor_pattern"), str):
        found.append(("start_anchor_pattern", template["start_anchor_pattern"]))
    fields = template.get("fields")
    for name, spec in (fields if isinstance(fields, dict) else {}).items():
        if not isinstance(spec, dict):
            continue
        path = f"fields.{name}"
        found += [
            (f"{path}.{key}", spec[key]) for key in _PATTERN_KEYS if isinstance(spec.get(key), str)
        ]
        found += _content_patterns(spec.get("content_args"), f"{path}.content_args")
    return found


def _content_patterns(args: Any, where: str) -> list[tuple[str, str]]:
    """(JSON path, text) of the tag patterns in content arguments `args` at `where`, value
    parsers' (`value_parser`, each of `value_parser_by`'s) included."""
    if not isinstance(args, dict):
        return []
    found = []
    if isinstance(args.get("tag_pattern"), str):
        found.append((f"{where}.tag_pattern", args["tag_pattern"]))
    parsers = [(f"{where}.value_parser", args.get("value_parser"))]
    by = args.get("value_parser_by")
    by_parsers = by.get("parsers") if isinstance(by, dict) else None
    if isinstance(by_parsers, dict):
        parsers += [
            (f"{where}.value_parser_by.parsers.{capture}", parser)
            for capture, parser in by_parsers.items()
        ]
    for parser_path, parser in parsers:
        if isinstance(parser, dict):
            found += _content_patterns(parser.get("args"), f"{parser_path}.args")
    return found


def _check_pattern_sizes(template: dict) -> int:
    """The size of all the template's patterns together (before any is compiled).

    Raises TemplateError at the pattern that is over its own bounds, or at the one that takes
    the total past `MAX_TEMPLATE_PATTERN_SIZE`."""
    total = 0
    for path, text in _template_patterns(template):
        try:
            total += pattern_size(text)
        except PatternBoundError as error:
            raise TemplateError(path, f"{error}: {_show(text, 80)}", predicate=True) from None
        if total > MAX_TEMPLATE_PATTERN_SIZE:
            raise TemplateError(
                path,
                f"the template's patterns are too large together: over {MAX_TEMPLATE_PATTERN_SIZE:,} "
                "pieces once their counted repeats are written out (each pattern may have "
                f"{MAX_PATTERN_SIZE:,}); use open-ended repeats or smaller counts",
            )
    return total


def _literal_list(path: str, raw: Any) -> list[str]:
    if isinstance(raw, str):
        raw = [raw]
    elif not isinstance(raw, list) or not raw:
        raise TemplateError(
            path, f"must be a string or a non-empty list of strings, got {_show(raw, 80)}"
        )
    for i, literal in enumerate(raw):
        if not isinstance(literal, str):
            raise TemplateError(f"{path}.{i}", f"must be a string, got {_type_name(literal)}")
        if literal == "":
            raise TemplateError(
                f"{path}.{i}" if len(raw) > 1 else path, "must not be an empty string"
            )
    return raw


def _delimiter(
    field_name: str, side: str, spec: dict, literal_key: str, pattern_key: str, path: str
) -> Delimiter | None:
    if literal_key in spec and pattern_key in spec:
        raise TemplateError(
            _join(path, pattern_key), f"give either '{literal_key}' or '{pattern_key}', not both"
        )
    if literal_key in spec:
        literals = _literal_list(_join(path, literal_key), spec[literal_key])
        return Delimiter.from_literals(field_name, side, _join(path, literal_key), literals)
    if pattern_key in spec:
        compiled = compile_pattern(_join(path, pattern_key), spec[pattern_key])
        return Delimiter.from_pattern(field_name, side, _join(path, pattern_key), compiled)
    return None


def _bool_key(spec: dict, key: str, path: str, default: bool) -> bool:
    value = spec.get(key, default)
    if not isinstance(value, bool):
        raise TemplateError(f"{path}.{key}", f"must be true or false, got {_show(value, 60)}")
    return value


def _content_args(content: str, args: Any, path: str) -> dict:
    """Validate `content_args` for `content`; return a copy with compiled patterns added."""
    if not isinstance(args, dict):
        raise TemplateError(path, f"must be an object, got {_type_name(args)}")
    allowed = CONTENT_ARGS[content]
    unknown = sorted(set(args) - set(allowed))
    if unknown:
        hint = (
            f"allowed: {', '.join(allowed)}"
            if allowed
            else "this content parser takes no arguments"
        )
        raise TemplateError(
            f"{path}.{unknown[0]}", f"unknown argument for content '{content}' ({hint})"
        )
    compiled = dict(args)
    for key, value in args.items():
        kind, allowed_text = allowed[key]
        if not isinstance(value, kind) or (kind is str and value == ""):
            raise TemplateError(f"{path}.{key}", f"must be {allowed_text}, got {_show(value, 60)}")
    if content == "json":
        for i, pair in enumerate(args.get("string_delims", [])):
            if not (
                isinstance(pair, list)
                and len(pair) == 2
                and all(isinstance(d, str) and d for d in pair)
            ):
                raise TemplateError(
                    f"{path}.string_delims.{i}",
                    f"must be an [open, close] pair of non-empty strings, got {_show(pair, 60)}",
                )
        keys = args.get("decode_json_strings")
        if keys is not None and not (keys and all(isinstance(key, str) and key for key in keys)):
            raise TemplateError(
                f"{path}.decode_json_strings",
                f"must be a non-empty list of key names, got {_show(keys, 60)}",
            )
    if content == "xml-inline":
        if "tag_pattern" not in args:
            raise TemplateError(
                f"{path}.tag_pattern",
                "is required for content 'xml-inline' (a regex with named groups 'key' and 'value')",
            )
        tag_re = compile_pattern(f"{path}.tag_pattern", args["tag_pattern"])
        missing = [group for group in ("key", "value") if group not in tag_re.groupindex]
        if missing:
            raise TemplateError(
                f"{path}.tag_pattern",
                f"needs named groups 'key' and 'value'; missing {missing}: {args['tag_pattern']!r}",
            )
        compiled["_tag_re"] = tag_re
        compiled["_tag_re_std"] = re_equivalent(tag_re)
        compiled["_tag_end"] = end_literal(tag_re)
        if "value_parser_by" in args:
            compiled["value_parser_by"] = _value_parser_by(
                args["value_parser_by"], tag_re, f"{path}.value_parser_by"
            )
    if "value_parser" in args:
        compiled["value_parser"] = _value_parser(args["value_parser"], f"{path}.value_parser")
    return compiled


def _value_parser_by(spec: dict, tag_re: Any, path: str) -> dict:
    """Validate `value_parser_by` (`{"group": G, "parsers": {capture: parser or null}}`) against
    the compiled `tag_re`; return it with each parser validated."""
    unknown = sorted(set(spec) - {"group", "parsers"})
    if unknown:
        raise TemplateError(f"{path}.{unknown[0]}", "unknown key (allowed: group, parsers)")
    group, parsers = spec.get("group"), spec.get("parsers")
    if not isinstance(group, str) or not group:
        raise TemplateError(
            f"{path}.group",
            f"must be the name of a named group of tag_pattern, got {_show(group, 60)}",
        )
    if group not in tag_re.groupindex:
        raise TemplateError(
            f"{path}.group",
            f"value_parser_by names group {group!r}, which tag_pattern does not define "
            f"(its named groups: {', '.join(tag_re.groupindex)}): {tag_re.pattern!r}",
        )
    if not isinstance(parsers, dict):
        raise TemplateError(
            f"{path}.parsers",
            "must be an object mapping what the group captures to a value parser "
            f'({{"name": ..., "args": {{...}}}}, or null to keep the text), got {_show(parsers, 60)}',
        )
    checked = {}
    for capture, parser in parsers.items():
        where = f"{path}.parsers.{capture}"
        if parser is not None and not isinstance(parser, dict):
            raise TemplateError(
                where,
                f'must be a {{"name": ..., "args": {{...}}}} object or null, got {_show(parser, 60)}',
            )
        checked[capture] = None if parser is None else _value_parser(parser, where)
    return {"group": group, "parsers": checked}


def _value_parser(spec: dict, path: str) -> dict:
    unknown = sorted(set(spec) - {"name", "args"})
    if unknown:
        raise TemplateError(f"{path}.{unknown[0]}", "unknown key (allowed: name, args)")
    name = spec.get("name", "text")
    if not isinstance(name, str) or name not in CONTENT_PARSERS:
        shown = repr(name) if isinstance(name, str) else _show(name, 60)
        raise TemplateError(
            f"{path}.name",
            f"unknown content parser {shown} (allowed: {', '.join(CONTENT_PARSERS)})",
        )
    return {"name": name, "args": _content_args(name, spec.get("args", {}), f"{path}.args")}


def _field(name: Any, spec: Any) -> FieldSpec:
    path = f"fields.{name}"
    if not isinstance(name, str) or not name:
        raise TemplateError(path, "field names must be non-empty strings")
    if not isinstance(spec, dict):
        raise TemplateError(path, f"must be an object, got {_type_name(spec)}")
    unknown = sorted(set(spec) - set(FIELD_KEYS))
    if unknown:
        raise TemplateError(
            f"{path}.{unknown[0]}", f"unknown key (allowed: {', '.join(FIELD_KEYS)})"
        )
    content = spec.get("content", "text")
    if not isinstance(content, str) or content not in CONTENT_PARSERS:
        raise TemplateError(
            f"{path}.content",
            f"unknown content parser {_show(content, 60)} (allowed: {', '.join(CONTENT_PARSERS)})",
        )
    open_delimiter = _delimiter(name, "open", spec, "open", "open_pattern", path)
    close_delimiter = _delimiter(name, "close", spec, "close", "close_pattern", path)
    content_args = _content_args(content, spec.get("content_args", {}), f"{path}.content_args")
    repeats = _bool_key(spec, "repeats", path, False)
    optional = _bool_key(spec, "optional", path, True)
    transform_each = _bool_key(spec, "transform_each", path, False)
    join = spec.get("join")
    if join is not None:
        if not isinstance(join, str):
            raise TemplateError(f"{path}.join", f"must be a string, got {_type_name(join)}")
        if not repeats:
            raise TemplateError(
                f"{path}.join",
                "'join' requires 'repeats': true (join concatenates the values of repeated regions)",
            )
    transform = spec.get("transform")
    if transform_each and transform is None:
        raise TemplateError(
            f"{path}.transform_each",
            "is set but the field has no 'transform' to apply to each element",
        )
    if transform is not None:
        mixed = find_mixed_placeholder(transform, f"{path}.transform")
        if mixed:
            raise TemplateError(
                mixed[0],
                f"{mixed[1]!r} mixes a placeholder with other text; a placeholder must be the whole string "
                '(e.g. "{content}"), and string interpolation is not supported',
            )
    else:
        groups = sorted(
            set(
                open_delimiter.pattern.groupindex
                if open_delimiter and open_delimiter.literals is None
                else {}
            )
            | set(
                close_delimiter.pattern.groupindex
                if close_delimiter and close_delimiter.literals is None
                else {}
            )
        )
        if groups:
            key = (
                "open_pattern"
                if open_delimiter
                and open_delimiter.literals is None
                and set(groups) & set(open_delimiter.pattern.groupindex)
                else "close_pattern"
            )
            raise TemplateError(
                f"{path}.{key}",
                f"declares named group(s) {groups} but the field has no 'transform'; captures only reach the "
                "message through a transform. Add one that uses them, or make the groups unnamed (?:...)",
            )
    return FieldSpec(
        name=name,
        path=path,
        open=open_delimiter,
        close=close_delimiter,
        content=content,
        content_args=content_args,
        repeats=repeats,
        join=join,
        optional=optional,
        transform=copy.deepcopy(transform),
        transform_each=transform_each,
        dirty=content not in STREAMABLE_CONTENT,
        build=None if transform is None else compile_transform(copy.deepcopy(transform)),
    )


# The keys of a `templates/` file besides its response template (the file's wrapper).
WRAPPER_KEYS = ("$schema", "name", "description", "models", "generation_prompt", "notes")


def is_template_file_data(data: Any) -> bool:
    """Whether `data` is a template file's object (a wrapper holding `response_template`)."""
    return (
        isinstance(data, dict)
        and "response_template" in data
        and set(data) <= {*WRAPPER_KEYS, "response_template"}
    )


def _as_given(value: Any) -> Any:
    return value


# What `load_template` compiles for a value: the core reads no file, so a shipped template's
# name or a path is looked up by the function the package's front door (`engine/__init__.py`)
# installs with `use_template_source` (`engine.template_files.template_source`).
_template_source: Callable[[Any], Any] = _as_given


def use_template_source(source: Callable[[Any], Any]) -> None:
    """Install `source`: the function `load_template` passes what it is given to first, which
    returns the plain response template (a dict, JSON text) for a name, a path or a template
    file's object, and anything else as it is. `engine/__init__.py` installs
    `engine.template_files.template_source`."""
    global _template_source
    _template_source = source


def load_template(template: dict | str | Path | ResponseTemplate) -> ResponseTemplate:
    """Validate and compile a response template.

    Args:
        template: the template dict or its JSON text; a shipped template's name (``"qwen3"``,
            see `engine.list_templates`); a path to a JSON file; a `templates/` file's object
            or text (its ``response_template`` is used); or an already loaded
            `ResponseTemplate` (returned as is).

    Returns:
        The compiled `ResponseTemplate`.

    Raises:
        TemplateError (a ValueError): names the JSON path of the offending key, what was
            found and what is allowed.
        FileNotFoundError: a name or path that names no file (the message lists the shipped names).
    """
    if isinstance(template, ResponseTemplate):
        return template
    template = _template_source(template)
    if isinstance(template, str):
        return template_cache(template)
    try:
        # The cache key of a dict is its `marshal` serialization, twice cheaper than JSON text
        # and exact about types (True is not 1). Version 2 writes no object references, so
        # equal data gives equal bytes whatever else refers to it.
        key = marshal.dumps(template, 2)
        if marshal.loads(key) != template:  # a str subclass written as bytes, a NaN: use JSON text
            raise ValueError("not marshal data")
    except ValueError:
        try:
            key = json.dumps(template, ensure_ascii=False)
        except (
            TypeError,
            ValueError,
            RecursionError,
        ):  # not JSON data (a function, a cycle, too deep): the loader names it
            return _compile_template(template)
    return template_cache(key)


class CacheInfo(NamedTuple):
    """What a `TemplateCache` has done: as `functools.lru_cache` reports it, and its weight."""

    hits: int
    misses: int
    maxsize: int
    currsize: int
    weight: int


class TemplateCache:
    """Loaded templates by content (`load_template`'s key: JSON text or `marshal` bytes).

    Bounded by what the templates weigh as well as by their number: a template's weight is
    its patterns' size (`ResponseTemplate.pattern_pieces`) plus its key's length, about what
    its compiled form holds. The least recently used go once there are more than `entries`
    or they weigh more than `weight`; a template heavier than `heaviest` is compiled every
    time and never kept, so no caller can fill the cache with its own templates' patterns.
    Loaded templates are never mutated, so parsers of the same template share one.
    """

    def __init__(self, entries: int = 128, weight: int = 400_000, heaviest: int = 50_000):
        """`entries`: the most templates kept; `weight`: the most they may weigh together;
        `heaviest`: the most one may weigh and be kept (weights in pattern pieces and
        characters, see the class)."""
        self.entries, self.weight, self.heaviest = entries, weight, heaviest
        self._kept: OrderedDict[str | bytes, tuple[ResponseTemplate, int]] = OrderedDict()
        self._lock = threading.Lock()
        self._hits = self._misses = self._held = 0

    def __call__(self, key: str | bytes) -> ResponseTemplate:
        """The loaded template of `key` (JSON text, or `marshal` bytes of a dict): kept, or
        compiled now (and kept when it is light enough).

        Raises:
            TemplateError: the template is invalid (compiled, never kept).
        """
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
                self._hits += 1
                return found[0]
            self._misses += 1
        loaded = _compile_template(marshal.loads(key) if isinstance(key, bytes) else key)
        weight = loaded.pattern_pieces + len(key)
        if weight > self.heaviest:
            return loaded
        with self._lock:
            if key not in self._kept:
                self._kept[key] = (loaded, weight)
                self._held += weight
            while len(self._kept) > self.entries or self._held > self.weight:
                self._held -= self._kept.popitem(last=False)[1][1]
        return loaded

    def cache_info(self) -> CacheInfo:
        """Hits and misses (compilations) since the last `cache_clear`, the most templates kept,
        how many are kept and what they weigh."""
        with self._lock:
            return CacheInfo(self._hits, self._misses, self.entries, len(self._kept), self._held)

    def cache_clear(self) -> None:
        """Drop every kept template and zero the counts."""
        with self._lock:
            self._kept.clear()
            self._hits = self._misses = self._held = 0


# `load_template`'s cache: its `cache_info()` says how many templates were compiled and kept.
template_cache = TemplateCache()


def _compile_template(template: dict | str) -> ResponseTemplate:
    if isinstance(template, str):
        try:
            template = json.loads(template)
        except json.JSONDecodeError as error:
            raise TemplateError(
                "", f"not valid JSON: {error.msg} at line {error.lineno} column {error.colno}"
            ) from None
        except RecursionError:
            raise TemplateError(
                "", f"not a usable template: nested more than {MAX_TEMPLATE_DEPTH} levels deep"
            ) from None
        except ValueError:  # a number of thousands of digits, which Python will not convert
            raise TemplateError("", "not valid JSON: a number is too long to read") from None
    if is_template_file_data(template):
        template = template["response_template"]  # the JSON text of a templates/ file
    if not isinstance(template, dict):
        raise TemplateError(
            "", f"a response template must be an object, got {_type_name(template)}"
        )
    _check_json_data(template, "")
    unknown = sorted(set(template) - set(TEMPLATE_KEYS))
    if unknown:
        raise TemplateError(
            unknown[0], f"unknown top-level key (allowed: {', '.join(TEMPLATE_KEYS)})"
        )
    version = template.get("version", 1)
    if version != 1 or isinstance(version, bool):
        raise TemplateError("version", f"only version 1 exists, got {_show(version, 40)}")
    defaults = template.get("defaults", {})
    if not isinstance(defaults, dict):
        raise TemplateError("defaults", f"must be an object, got {_type_name(defaults)}")
    raw_fields = template.get("fields")
    if not isinstance(raw_fields, dict) or not raw_fields:
        raise TemplateError("fields", "must be a non-empty object of field name -> field spec")
    pieces = _check_pattern_sizes(template)
    fields = {name: _field(name, spec) for name, spec in raw_fields.items()}
    implicit = [spec for spec in fields.values() if spec.implicit]
    if len(implicit) > 1:
        raise TemplateError(
            implicit[1].path,
            f"at most one field may have no 'open'/'open_pattern' (the implicit field); found {[s.name for s in implicit]}",
        )
    if "start_anchor" not in template and "start_anchor_pattern" not in template:
        raise TemplateError(
            "start_anchor",
            "is required (or 'start_anchor_pattern'): it marks where the message starts in the prefix",
        )
    start_anchor = _delimiter("", "anchor", template, "start_anchor", "start_anchor_pattern", "")
    return ResponseTemplate(
        source=copy.deepcopy(template),
        defaults=copy.deepcopy(defaults),
        fields=fields,
        implicit_field=implicit[0] if implicit else None,
        start_anchor=start_anchor,
        pattern_pieces=pieces,
    )
