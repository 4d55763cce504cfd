"""Response templates: load, validate and compile the JSON spec (SPEC.md section 4).

`load_template` turns a template dict into a `ResponseTemplate`: every key
checked, every pattern compiled once, every error a `TemplateError` whose
message starts with the JSON path of the offending key and says what was
found and what is allowed.
"""

from __future__ import annotations

import copy
import functools
import json
import marshal
import re
from dataclasses import dataclass, field
from collections.abc import Callable
from pathlib import Path
from typing import Any

import regex

from .content import CONTENT_PARSERS, STREAMABLE_CONTENT
from .delimiters import Delimiter, DelimiterMatch, end_literal
from .errors import TemplateError
from .re_equivalent import re_equivalent
from .template_files import is_template_file_data, template_source
from .transform import find_mixed_placeholder

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
        "strip": (bool, "a boolean"),
    },
    "xml-inline": {
        "tag_pattern": (str, "a regex with named groups 'key' and 'value'"),
        "value_parser": (dict, 'a {"name": ..., "args": {...}} object'),
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
            ends with, when `delimiters.end_literal` finds one).
        repeats, join, optional, transform, transform_each: as in the template.
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

    @property
    def implicit(self) -> bool:
        """True for the field with no open delimiter, which catches unclaimed text."""
        return self.open is None


@dataclass(eq=False)
class WatchState:
    """What the parser looks for while one region (or none) is open.

    Attributes:
        delimiters: the delimiters that can fire (see `ResponseTemplate.watched_delimiters`).
        first_characters: characters one of which every match must contain at its start
            (after `skippable` runs), or None when some pattern is too complex to say.
        skippable: one-character tests for the optional runs a match may begin with (such as a leading `\\s*`).
        leading_runs: the distinct one-character tests of patterns that start with such a run, or
            None when some delimiter's partial matches need the regex to decide.
        quick: the parser's quick test of undecided text (`QuickTest`), or None when the
            delimiters are too complex for it.
    """

    delimiters: list[Delimiter]
    first_characters: str | None
    skippable: tuple
    leading_runs: tuple | None = None
    pattern_delimiters: list[Delimiter] = field(default_factory=list)
    literal_owner: dict[str, Delimiter] | None = None
    literal_search: regex.Pattern | None = None
    literal_prefixes: frozenset[str] = frozenset()
    literal_first_characters: str = ""
    longest_literal: int = 0
    quick: QuickTest | None = None

    @classmethod
    def of(cls, delimiters: list[Delimiter]) -> "WatchState":
        """The watch state of `delimiters`, with their start profiles `(first, skippable, run)` merged."""
        profiles = [d.start_profile for d in delimiters]
        if any(profile is None for profile in profiles):
            return cls.with_scanners(delimiters, None, ())
        first = "".join(sorted(frozenset().union(*(p[0] for p in profiles))))
        skippable = tuple(test for p in profiles for test in p[1])
        exact = all(not p[1] or p[2] is not None for p in profiles)
        runs = tuple(dict.fromkeys(p[2] for p in profiles if p[2] is not None)) if exact else None
        return cls.with_scanners(delimiters, first, skippable, runs)

    @classmethod
    def with_scanners(cls, delimiters: list[Delimiter], *profile: Any) -> "WatchState":
        literal_delimiters = [d for d in delimiters if d.literals is not None]
        state = cls(delimiters, *profile, pattern_delimiters=[d for d in delimiters if d.literals is None])
        if literal_delimiters:
            # One search over every literal of the state. The same literal in two fields
            # goes to the one that wins ties: opens before closes, then field name.
            owner: dict[str, Delimiter] = {}
            for delimiter in sorted(literal_delimiters, key=lambda d: (d.side != "open", d.field)):
                for literal in delimiter.literals:
                    owner.setdefault(literal, delimiter)
            ordered = sorted(owner, key=len, reverse=True)
            state.literal_owner = owner
            state.literal_search = regex.compile("|".join(map(regex.escape, ordered)))
            state.literal_prefixes = frozenset(literal[:k] for literal in ordered for k in range(1, len(literal)))
            state.longest_literal = len(ordered[0])
            state.literal_first_characters = "".join(dict.fromkeys(literal[0] for literal in ordered))
        state.quick = _quick_test(delimiters)
        return state

    def scan_literals(self, text: str, pos: int, at_end: bool) -> tuple[DelimiterMatch | None, int]:
        """`Delimiter.scan` for every literal delimiter of the state at once: `(earliest match, hold)`.

        The match is the leftmost, longest literal; the hold is the leftmost offset where the
        text ends in the start of a literal (including a longer literal that extends the match).
        """
        found = self.literal_search.search(text, pos)
        n = len(text)
        hold = n
        if not at_end:
            prefixes = self.literal_prefixes
            lowest = max(pos, n - self.longest_literal + 1)
            for first in self.literal_first_characters:
                i = text.find(first, lowest)
                while i != -1 and i < hold:
                    if text[i:] in prefixes:
                        hold = i
                        break
                    i = text.find(first, i + 1)
        if found is None:
            return None, hold
        start = found.start()
        if not at_end and start < hold and text[start:] in self.literal_prefixes:
            hold = start  # a longer literal may still complete at the same start
        literal = found.group()
        return DelimiterMatch(self.literal_owner[literal], start, found.end(), literal, {}), hold

    def hold_without_scan(self, text: str, pos: int, at_end: bool) -> int:
        """Where to hold `text[pos:]` when no delimiter can match in it, or -1 when a scan is needed.

        No delimiter can match when none of `first_characters` occurs; then only a trailing
        run of a pattern's leading optional characters (`\\s*`) can be a partial match.
        """
        if self.leading_runs is None:
            return -1
        for char in self.first_characters:
            if text.find(char, pos) != -1:
                return -1
        hold = len(text)
        if not at_end:
            for run in self.leading_runs:
                start = len(text)
                while start > pos and run(text[start - 1]):
                    start -= 1
                hold = min(hold, start)
        return hold

    def may_start_in(self, chunk: str) -> bool:
        """False when no delimiter can start (completely or partially) inside `chunk`.

        Only valid when all text before `chunk` is decided. `chunk` is not empty.
        """
        if self.first_characters is None:
            return True
        for char in self.first_characters:
            if char in chunk:
                return True
        last = chunk[-1]
        for skippable in self.skippable:
            if skippable(last):
                return True
        return False


def _run_start(characters: frozenset[str] | None, at_least_one: bool = False) -> str:
    """`re` source for a whole leading run of `characters` (none when None).

    The run is taken only from its first character (`(?<![...])`) and possessively: no lead
    text starts with a run character, so trying from inside the run or giving characters
    back cannot find more, and without this a long run costs time quadratic in its length.
    """
    if characters is None:
        return ""
    members = "[" + "".join(map(re.escape, sorted(characters))) + "]"
    return f"(?<!{members}){members}{'+' if at_least_one else '*'}+"


def _alternation(texts) -> str:
    return "(?:" + "|".join(map(re.escape, sorted(texts, key=lambda text: (-len(text), text)))) + ")"


# Bound on the summed squared lengths of a state's texts for building its quick test.
_QUICK_TEST_SIZE = 200_000


@dataclass(frozen=True, slots=True)
class QuickTest:
    """The parser's quick test of a watch state's undecided text (built by `_quick_test`).

    Attributes:
        search: `search(text)` returns None when no delimiter can start anywhere in `text`
            (all of it may be emitted); a match with group 1 set when no delimiter text is
            complete in `text` but it ends in a possible start of one (hold from
            `match.start()`, where a full scan holds); and a match without group 1 when a
            scan must decide.
        first: the one character every delimiter's text starts with, or "" when they differ.
            Text without it that does not end in one of `run_characters` needs no test.
        pair: the two characters every delimiter's text starts with, or "" when they differ.
            Text with `first` but without `pair`, and not ending in `first`, holds no start
            of a delimiter's text, so only a trailing run can matter.
        run_characters: the characters of the optional runs (`\\s*`) delimiters begin with.
        trailing_run: when only a trailing run can matter, the whole answer is a hold of
            it (`len(text.rstrip(trailing_run))`) if this is set (to the run's characters):
            the exact delimiters share that run and no loose one has a run. Else "" (search).
    """

    search: Callable[[str], re.Match | None]
    first: str
    pair: str
    run_characters: frozenset[str]
    trailing_run: str

    def hold(self, text: str) -> int:
        """Where to hold non-empty `text` from: `len(text)` to emit it all, -1 when a scan must decide.

        Same answer as `search`, without searching when `first`, `pair` and `trailing_run` decide.
        """
        first, pair = self.first, self.pair
        if first not in text or (pair and pair not in text and text[-1] != first):
            # No delimiter's text can start in `text`: only a trailing run can start a delimiter.
            if text[-1] not in self.run_characters:
                return len(text)
            if self.trailing_run:
                return len(text.rstrip(self.trailing_run))
        found = self.search(text)
        if found is None:
            return len(text)
        return found.start() if found.lastindex else -1


def _quick_test(delimiters: list[Delimiter]) -> QuickTest | None:
    """The parser's quick test of text undecided in a watch state of `delimiters`, or None.

    Each delimiter's matches start with known text after an optional run (`\\s*`):
    * exactly, for a literal set (its literals), a pattern with `Delimiter.fixed_texts`
      and one with `Delimiter.fixed_lead`: a match is the run and the text, so a trailing
      start of one is a partial match;
    * loosely, for a pattern with `Delimiter.loose_leads` (a lookbehind, an alternation,
      a lookahead): the text is needed but not enough, so any sign of it means a scan.
    Trailing starts are answered with a hold only for exact delimiters that share one run
    (otherwise all are treated as loose), and only when no complete text follows.
    A complete text is matched from the start of the run before it, where its delimiter's
    match may start, so the leftmost answer is never a hold after a possible match.
    The search pattern holds only escaped text and plain character classes, so the
    standard `re` module (cheaper per call than `regex` on short chunks) gives the same answer.
    """
    exact: list[tuple[frozenset[str] | None, str]] = []
    loose: list[tuple[frozenset[str] | None, str]] = []
    for delimiter in delimiters:
        if delimiter.literals is not None:
            exact += [(None, literal) for literal in delimiter.literals]
        elif delimiter.fixed_texts is not None:
            exact += [(None, text) for text in delimiter.fixed_texts]
        elif delimiter.fixed_lead is not None and (delimiter.fixed_lead.run is None or delimiter.fixed_lead.run_characters):
            exact.append((delimiter.fixed_lead.run_characters, delimiter.fixed_lead.literal))
        elif delimiter.loose_leads is not None:
            loose += delimiter.loose_leads
        else:
            return None
    if sum(len(text) ** 2 for _, text in exact + loose) > _QUICK_TEST_SIZE:
        return None  # every start of every text goes into the pattern: long texts scan instead
    if len({run for run, _ in exact}) > 1:
        loose, exact = loose + exact, []

    def by_run(leads: list) -> dict:
        groups: dict = {}
        for run, text in leads:
            groups.setdefault(run, set()).add(text)
        return groups

    def tails(leads: list) -> list[str]:
        found = []
        for run, texts in by_run(leads).items():
            starts = {text[:k] for text in texts for k in range(1, len(text))}
            if starts:
                found.append(_run_start(run) + _alternation(starts) + r"\Z")
            if run is not None:
                found.append(_run_start(run, at_least_one=True) + r"\Z")
        return found

    leads = exact + loose
    alternatives = [_run_start(run) + _alternation(texts) for run, texts in by_run(leads).items()]
    exact_tails, loose_tails = tails(exact), tails(loose)
    if exact_tails:
        complete_later = "(?!.*?" + _alternation({text for _, text in leads}) + ")"  # checked only where a tail is
        alternatives.append("(?=(" + "|".join(exact_tails) + "))" + complete_later)
    alternatives += loose_tails
    search = re.compile("|".join(alternatives) or "(?!)", re.DOTALL).search
    firsts = {text[0] for _, text in leads}
    first = firsts.pop() if len(firsts) == 1 else ""
    run_characters = frozenset().union(*(run for run, _ in leads if run))
    plain_first = bool(first) and first not in run_characters  # no run can hold or end in it
    pairs = {text[:2] for _, text in leads}
    pair = pairs.pop() if plain_first and len(pairs) == 1 else ""
    if len(pair) < 2:
        pair = ""  # a one-character text: any `first` may be its start
    exact_runs = {run for run, _ in exact}
    trailing_run = ""
    if plain_first and exact_runs and None not in exact_runs and not any(run for run, _ in loose):
        trailing_run = "".join(sorted(run_characters))
    return QuickTest(search, first, pair, run_characters, trailing_run)


@dataclass(eq=False)
class ResponseTemplate:
    """A loaded response template.

    Attributes:
        source: a deep copy of the template dict as given.
        defaults: keys always present in the message.
        fields: compiled fields by name, in template order.
        implicit_field: the field without an open delimiter, or None.
        start_anchor: the delimiter whose last match in the prefix starts the message.
    """

    source: dict
    defaults: dict
    fields: dict[str, FieldSpec]
    implicit_field: FieldSpec | None
    start_anchor: Delimiter
    watch_outside: WatchState | None = None
    watch_inside: dict[str, WatchState] | None = None
    context_width: int = 0

    def __post_init__(self) -> None:
        self.watch_outside = WatchState.of(self.watched_delimiters(None))
        self.watch_inside = {name: WatchState.of(self.watched_delimiters(spec)) for name, spec in self.fields.items()}
        every = [d for state in [self.watch_outside, *self.watch_inside.values()] for d in state.delimiters]
        self.context_width = max((d.context_width for d in every), default=0)

    def watched_delimiters(self, current: FieldSpec | None) -> list[Delimiter]:
        """Delimiters that can fire while `current` is the open region.

        Inside an explicit region only its close can fire. Outside (in the
        implicit field, or nowhere when there is none), every open can, and the
        implicit field's close.
        """
        if current is not None and not current.implicit:
            return [current.close] if current.close is not None else []
        watched = [spec.open for spec in self.fields.values() if spec.open is not None]
        if self.implicit_field is not None and self.implicit_field.close is not None:
            watched.append(self.implicit_field.close)
        return watched


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
                raise TemplateError(path, f"keys must be strings, got {_type_name(key)} {_show(key, 40)}")
            _check_json_data(item, f"{path}.{key}" if path else key, depth + 1)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_json_data(item, f"{path}[{index}]", depth + 1)
    elif value is not None and not isinstance(value, (str, bool, int, float)):
        raise TemplateError(path, f"must be JSON data (object, array, string, number, boolean or null), got {_type_name(value)}")


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _compile_regex(path: str, pattern: Any) -> regex.Pattern:
    if not isinstance(pattern, str):
        raise TemplateError(path, f"must be a regex string, got {_type_name(pattern)}")
    if pattern == "":
        raise TemplateError(path, "must not be empty")
    try:
        return regex.compile(pattern, regex.DOTALL)
    except regex.error as error:
        where = f" at position {error.pos}" if getattr(error, "pos", None) is not None else ""
        raise TemplateError(path, f"invalid regex{where}: {error.msg if hasattr(error, 'msg') else error}: {pattern!r}") from None


def _literal_list(path: str, raw: Any) -> list[str]:
    if isinstance(raw, str):
        raw = [raw]
    elif not isinstance(raw, list) or not raw:
        raise TemplateError(path, f"must be a string or a non-empty list of strings, got {_show(raw, 80)}")
    for i, literal in enumerate(raw):
        if not isinstance(literal, str):
            raise TemplateError(f"{path}.{i}", f"must be a string, got {_type_name(literal)}")
        if literal == "":
            raise TemplateError(f"{path}.{i}" if len(raw) > 1 else path, "must not be an empty string")
    return raw


def _delimiter(field_name: str, side: str, spec: dict, literal_key: str, pattern_key: str, path: str) -> Delimiter | None:
    if literal_key in spec and pattern_key in spec:
        raise TemplateError(_join(path, pattern_key), f"give either '{literal_key}' or '{pattern_key}', not both")
    if literal_key in spec:
        literals = _literal_list(_join(path, literal_key), spec[literal_key])
        return Delimiter.from_literals(field_name, side, _join(path, literal_key), literals)
    if pattern_key in spec:
        compiled = _compile_regex(_join(path, pattern_key), spec[pattern_key])
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
        hint = f"allowed: {', '.join(allowed)}" if allowed else "this content parser takes no arguments"
        raise TemplateError(f"{path}.{unknown[0]}", f"unknown argument for content '{content}' ({hint})")
    compiled = dict(args)
    for key, value in args.items():
        kind, allowed_text = allowed[key]
        if not isinstance(value, kind) or (kind is str and value == ""):
            raise TemplateError(f"{path}.{key}", f"must be {allowed_text}, got {_show(value, 60)}")
    if content == "json":
        for i, pair in enumerate(args.get("string_delims", [])):
            if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(d, str) and d for d in pair)):
                raise TemplateError(f"{path}.string_delims.{i}", f"must be an [open, close] pair of non-empty strings, got {_show(pair, 60)}")
    if content == "xml-inline":
        if "tag_pattern" not in args:
            raise TemplateError(f"{path}.tag_pattern", "is required for content 'xml-inline' (a regex with named groups 'key' and 'value')")
        tag_re = _compile_regex(f"{path}.tag_pattern", args["tag_pattern"])
        missing = [group for group in ("key", "value") if group not in tag_re.groupindex]
        if missing:
            raise TemplateError(f"{path}.tag_pattern", f"needs named groups 'key' and 'value'; missing {missing}: {args['tag_pattern']!r}")
        compiled["_tag_re"] = tag_re
        compiled["_tag_re_std"] = re_equivalent(tag_re)
        compiled["_tag_end"] = end_literal(tag_re)
    if "value_parser" in args:
        compiled["value_parser"] = _value_parser(args["value_parser"], f"{path}.value_parser")
    return compiled


def _value_parser(spec: dict, path: str) -> dict:
    unknown = sorted(set(spec) - {"name", "args"})
    if unknown:
        raise TemplateError(f"{path}.{unknown[0]}", "unknown key (allowed: name, args)")
    name = spec.get("name", "text")
    if name not in CONTENT_PARSERS:
        raise TemplateError(f"{path}.name", f"unknown content parser {name!r} (allowed: {', '.join(CONTENT_PARSERS)})")
    return {"name": name, "args": _content_args(name, spec.get("args", {}), f"{path}.args")}


def _field(name: Any, spec: Any) -> FieldSpec:
    path = f"fields.{name}"
    if not isinstance(name, str) or not name:
        raise TemplateError(path, "field names must be non-empty strings")
    if not isinstance(spec, dict):
        raise TemplateError(path, f"must be an object, got {_type_name(spec)}")
    unknown = sorted(set(spec) - set(FIELD_KEYS))
    if unknown:
        raise TemplateError(f"{path}.{unknown[0]}", f"unknown key (allowed: {', '.join(FIELD_KEYS)})")
    content = spec.get("content", "text")
    if content not in CONTENT_PARSERS:
        raise TemplateError(f"{path}.content", f"unknown content parser {_show(content, 60)} (allowed: {', '.join(CONTENT_PARSERS)})")
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
            raise TemplateError(f"{path}.join", "'join' requires 'repeats': true (join concatenates the values of repeated regions)")
    transform = spec.get("transform")
    if transform_each and transform is None:
        raise TemplateError(f"{path}.transform_each", "is set but the field has no 'transform' to apply to each element")
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
            set(open_delimiter.pattern.groupindex if open_delimiter and open_delimiter.literals is None else {})
            | set(close_delimiter.pattern.groupindex if close_delimiter and close_delimiter.literals is None else {})
        )
        if groups:
            key = "open_pattern" if open_delimiter and open_delimiter.literals is None and set(groups) & set(open_delimiter.pattern.groupindex) else "close_pattern"
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
    )


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
    template = template_source(template)
    if isinstance(template, str):
        return _load_cached(template)
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
        except (TypeError, ValueError, RecursionError):  # not JSON data (a function, a cycle, too deep): the loader names it
            return _compile_template(template)
    return _load_cached(key)


@functools.lru_cache(maxsize=128)
def _load_cached(template: str | bytes) -> ResponseTemplate:
    """The template from its JSON text or its `marshal` bytes (`load_template`'s cache key).

    Loaded templates are never mutated, so parsers of the same template share one.
    """
    return _compile_template(marshal.loads(template) if isinstance(template, bytes) else template)


def _compile_template(template: dict | str) -> ResponseTemplate:
    if isinstance(template, str):
        try:
            template = json.loads(template)
        except json.JSONDecodeError as error:
            raise TemplateError("", f"not valid JSON: {error.msg} at line {error.lineno} column {error.colno}") from None
        except RecursionError:
            raise TemplateError("", f"not a usable template: nested more than {MAX_TEMPLATE_DEPTH} levels deep") from None
    if is_template_file_data(template):
        template = template["response_template"]  # the JSON text of a templates/ file
    if not isinstance(template, dict):
        raise TemplateError("", f"a response template must be an object, got {_type_name(template)}")
    _check_json_data(template, "")
    unknown = sorted(set(template) - set(TEMPLATE_KEYS))
    if unknown:
        raise TemplateError(unknown[0], f"unknown top-level key (allowed: {', '.join(TEMPLATE_KEYS)})")
    version = template.get("version", 1)
    if version != 1 or isinstance(version, bool):
        raise TemplateError("version", f"only version 1 exists, got {_show(version, 40)}")
    defaults = template.get("defaults", {})
    if not isinstance(defaults, dict):
        raise TemplateError("defaults", f"must be an object, got {_type_name(defaults)}")
    raw_fields = template.get("fields")
    if not isinstance(raw_fields, dict) or not raw_fields:
        raise TemplateError("fields", "must be a non-empty object of field name -> field spec")
    fields = {name: _field(name, spec) for name, spec in raw_fields.items()}
    implicit = [spec for spec in fields.values() if spec.implicit]
    if len(implicit) > 1:
        raise TemplateError(
            implicit[1].path,
            f"at most one field may have no 'open'/'open_pattern' (the implicit field); found {[s.name for s in implicit]}",
        )
    if "start_anchor" not in template and "start_anchor_pattern" not in template:
        raise TemplateError("start_anchor", "is required (or 'start_anchor_pattern'): it marks where the message starts in the prefix")
    start_anchor = _delimiter("", "anchor", template, "start_anchor", "start_anchor_pattern", "")
    return ResponseTemplate(
        source=copy.deepcopy(template),
        defaults=copy.deepcopy(defaults),
        fields=fields,
        implicit_field=implicit[0] if implicit else None,
        start_anchor=start_anchor,
    )
