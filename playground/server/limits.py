"""Limits: caps on untrusted input, and how much of each kind of work may run at once.

Everything the page accepts from a visitor (a template, a prefix, a generation,
tools JSON, a shared link) passes through `read_template`, `read_tools` and
`check_text_sizes` before the engine sees it, so an oversized or malformed input
gets a message naming what is wrong instead of a slow parse or a traceback.

The caps come from `Limits` and can be changed with the PLAYGROUND_LIMITS
environment variable, a JSON object such as ``{"generation_chars": 2000000}``
(every key is listed in docs/app.md).

`WORK` names the kinds of work the page does, how many of each may run at
once and how many may wait; `app.py` passes `queue_options(kind)` to every
listener, so each kind gets its own slots and its own queue, and a parse never
waits behind a download or a generation (`playground.server.admission` refuses what
is over a queue or a client's share at once).

A bad PLAYGROUND_LIMITS raises `LimitsError` when this module is imported,
naming the key and what is wrong with it; `app.py` turns it into a one-line
message and stops.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import time
from dataclasses import dataclass, field, fields
from typing import Any


class LimitsError(ValueError):
    """PLAYGROUND_LIMITS cannot be used: not a JSON object, an unknown key, or a bad value (the message names it)."""


@dataclass(frozen=True)
class Limits:
    """Caps on untrusted input, time budgets, and what one visitor may hold; each has its own message.

    Attributes (characters unless said otherwise; seconds are wall-clock seconds):
        template_chars: the template JSON text.
        pattern_chars: one delimiter literal or pattern inside it.
        fields: fields in one template.
        prefix_chars, generation_chars, tools_chars: the three text inputs.
        message_chars: the user and the system message of Generate live.
        json_depth: nesting of [ and { in any JSON input.
        request_mb: the largest HTTP request body the server reads (MB); a bigger one is refused
            before it is read.
        upload_mb: the largest uploaded file (MB).
        max_new_tokens: the largest generation Generate live allows (tokens).
        prompt_tokens: the longest prompt Generate live gives the model (tokens).
        regex_seconds: what one template regex call may take on this page.
        parse_seconds: one parse (a parse, a sample, a test-case run, a lint), over all its regex calls.
        replay_seconds: one replay request (Step, Play with its pacing, /replay), stream check included.
        stream_check_seconds: the stream check at the end of a replay.
        reference_seconds: transformers' reference parse ("vs transformers"), in a worker process.
        fit_seconds: "Which template fits?" (every templates/ file on the input).
        export_seconds: writing the download files.
        generate_seconds: one Generate live, from its first token.
        chat_template_seconds: rendering a model's chat template into the prompt, in a worker process.
        conformance_seconds: one chat-template check, in a worker process.
        worker_mb: the address space of one worker process (MB).
        session_jobs: heavy jobs (a replay, a generation, a check, a comparison, a fit, an export)
            one page runs at once; another press says so on the status line.
        client_jobs: heavy jobs one client (a page, or one address over all its pages and API
            calls) may have running or waiting, and never more than half of one kind's slots;
            past it a request is refused at once.
        client_parses: parses one client may have running or waiting.
        sessions: browser sessions the server keeps; past it the least recently used is dropped.
        session_mb: what one session may keep between requests (MB, estimated); a parse over it is
            shown but not kept (#explain and the event log then ask for a re-parse).
        sessions_mb: what all sessions together may keep (MB); past it the least recently used go.
        hub_seconds: how long the Hub may take to answer before a load gives up.
        model_download_mb: the largest weights (the top-level weight files of a hub id) a load may download (MB).
        chat_template_chars: a pasted chat template (Jinja text).
        model_folders: server folders a visitor may name as a model (for Generate live and the
            chat-template check), with everything under them; the bundled demo model (and the
            folder given to ``app.py --model``) always may be. None by default.
        proxy_hops: proxies in front of the app that each add the address they saw to
            X-Forwarded-For (a client is its address): 1 on a Hugging Face Space, else 0.
    """

    template_chars: int = 64_000
    pattern_chars: int = 2_000
    fields: int = 32
    prefix_chars: int = 200_000
    generation_chars: int = 1_000_000
    tools_chars: int = 64_000
    message_chars: int = 8_000
    json_depth: int = 32
    request_mb: int = 16
    upload_mb: int = 20
    max_new_tokens: int = 2_048
    prompt_tokens: int = 4_096
    regex_seconds: float = 0.5
    parse_seconds: float = 10.0
    replay_seconds: float = 60.0
    stream_check_seconds: float = 10.0
    reference_seconds: float = 10.0
    fit_seconds: float = 10.0
    export_seconds: float = 5.0
    generate_seconds: float = 120.0
    chat_template_seconds: float = 20.0
    conformance_seconds: float = 30.0
    worker_mb: int = 3_072
    session_jobs: int = 1
    client_jobs: int = 2
    client_parses: int = 4
    sessions: int = 500
    session_mb: int = 64
    sessions_mb: int = 2_048
    hub_seconds: float = 4.0
    model_download_mb: int = 5_000
    chat_template_chars: int = 100_000
    model_folders: tuple[str, ...] = ()
    proxy_hops: int = field(default_factory=lambda: 1 if os.environ.get("SPACE_ID") else 0)

    @classmethod
    def from_json(cls, raw: str) -> "Limits":
        """The defaults overridden by `raw`, a JSON object of keys and values.

        Raises LimitsError naming every bad key (with the nearest known key) and value.
        """
        try:
            given = json.loads(raw)
        except json.JSONDecodeError as error:
            raise LimitsError(
                f"PLAYGROUND_LIMITS is not valid JSON ({error.msg} at column {error.colno}); "
                'write a JSON object such as {"generation_chars": 2000000}.'
            ) from None
        if not isinstance(given, dict):
            raise LimitsError(
                f'PLAYGROUND_LIMITS must be a JSON object such as {{"generation_chars": 2000000}}, not {json_kind(given)}.'
            )
        kinds = {item.name: item.type for item in fields(cls)}
        problems = []
        for key, value in given.items():
            if key not in kinds:
                near = difflib.get_close_matches(key, kinds, n=1, cutoff=0.6)
                hint = f" (did you mean {near[0]!r}?)" if near else ""
                problems.append(f"unknown key {key!r}{hint}")
            elif (problem := _bad_value(key, value, kinds[key])) is not None:
                problems.append(f"{key!r} {problem}")
        if problems:
            raise LimitsError(
                "PLAYGROUND_LIMITS: "
                + "; ".join(problems)
                + f". The keys are: {', '.join(kinds)} (see docs/app.md)."
            )
        return cls(**{key: _converted(value, kinds[key]) for key, value in given.items()})

    @classmethod
    def from_env(cls) -> "Limits":
        """The defaults, overridden by the PLAYGROUND_LIMITS JSON object when it is set (raises LimitsError)."""
        raw = os.environ.get("PLAYGROUND_LIMITS")
        return cls.from_json(raw) if raw and raw.strip() else cls()


def json_kind(value: Any) -> str:
    """What a JSON value is, for messages: "a boolean", "a number", "a string", "a list", "an object" or "null"
    (a value JSON cannot hold gets its type's name)."""
    names = {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "an object",
        type(None): "null",
    }
    return names.get(type(value), type(value).__name__)


# Keys that may be 0 (every other number must be above 0).
ZERO_ALLOWED = ("proxy_hops",)


def _bad_value(key: str, value: Any, kind: str) -> str | None:
    """Why `value` cannot be limit `key` of `kind` ("int", "float" or a tuple of folders), or None when it can."""
    if kind.startswith("tuple"):
        if not isinstance(value, list) or not all(
            isinstance(item, str) and item.strip() for item in value
        ):
            return (
                f'must be a list of folder paths such as ["/data/models"], got {json_kind(value)}'
            )
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"must be a number, got {json_kind(value)} ({json.dumps(value)[:40]})"
    if not math.isfinite(value) or value < 0 or (value == 0 and key not in ZERO_ALLOWED):
        return f"must be {'0 or more' if key in ZERO_ALLOWED else 'above 0'}, got {value}"
    if kind == "int" and value != int(value):
        return f"must be a whole number, got {value}"
    return None


def _converted(value: Any, kind: str) -> Any:
    if kind.startswith("tuple"):
        return tuple(value)
    return float(value) if kind == "float" else int(value)


LIMITS = Limits.from_env()


def current() -> Limits:
    """The limits in force (read at call time, so a test or a host can swap `LIMITS`)."""
    return LIMITS


def deadline(budget: str) -> float:
    """The `time.perf_counter()` value at which a request with time budget `budget` (a
    ``*_seconds`` key, e.g. "parse_seconds") must end, counted from now."""
    return time.perf_counter() + getattr(current(), budget)


def over_budget(budget: str, what: str) -> str:
    """The message for `what` ("The parse") stopped by time budget `budget`."""
    return f"{what} was stopped after {getattr(current(), budget):g} s (the time budget PLAYGROUND_LIMITS {budget})."


@dataclass(frozen=True)
class WorkKind:
    """One kind of work: `slots` run at once over the whole server (a Gradio concurrency
    group of its own), at most `waiting` more wait for a slot, and `heavy` work counts against
    a client's `session_jobs` and `client_jobs` (else against `client_parses`)."""

    slots: int
    waiting: int
    heavy: bool


# Each kind has its own slots and its own queue: a flood of one kind never refuses another.
WORK = {
    "parse": WorkKind(8, 64, False),  # parse, sample switch, lint, format, share, display changes
    "replay": WorkKind(4, 8, True),  # Step / Play with its stream check
    "model": WorkKind(
        4, 8, True
    ),  # Generate live (waiting for a load or a generation slot included)
    "export": WorkKind(4, 8, True),  # writing the download files
    "conformance": WorkKind(2, 8, True),  # chat-template checks, each in a worker process
    "infer": WorkKind(2, 8, True),  # template inference from a chat template, in a worker process
    "reference": WorkKind(2, 8, True),  # transformers' reference parse, in a worker process
    "fit": WorkKind(2, 8, True),  # "Which template fits?"
}
# Inside the "model" group: generations running at once (on 2 CPU cores one is as fast as two).
GENERATIONS_AT_ONCE = 1
# Work that counts against a session's `session_jobs`.
HEAVY_WORK = tuple(kind for kind, work in WORK.items() if work.heavy)


def queue_options(kind: str) -> dict:
    """Keyword arguments for a Gradio listener doing work of `kind` (a key of `WORK`)."""
    return {"concurrency_id": kind, "concurrency_limit": WORK[kind].slots}


def client_cap(kind: str, limits: Limits | None = None) -> int:
    """Jobs of `kind` one client may have running or waiting: `client_parses` for parsing, else
    `client_jobs`; never more than half of the kind's slots (at least one)."""
    limits = limits or current()
    work = WORK[kind]
    wanted = limits.client_jobs if work.heavy else limits.client_parses
    return max(1, min(wanted, work.slots // 2))


class InputError(ValueError):
    """Input the page refuses before parsing (too big, not JSON, wrong shape)."""


def json_depth(text: str) -> int:
    """Deepest nesting of [ and { in JSON text, found without parsing it (strings skipped)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def read_json(text: str, what: str, max_chars: int, limits: Limits | None = None) -> Any:
    """JSON text -> value, after the size and depth caps. Raises InputError naming `what`."""
    limits = limits or current()
    if len(text) > max_chars:
        raise InputError(f"{what} is too large: {len(text):,} characters (limit {max_chars:,}).")
    if (depth := json_depth(text)) > limits.json_depth:
        raise InputError(
            f"{what} is nested too deeply: {depth} levels (limit {limits.json_depth})."
        )
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(
            f"{what} is not valid JSON: {error.msg} at line {error.lineno}, column {error.colno}."
        ) from None


def _long_patterns(value: Any, path: str, limit: int) -> list[str]:
    """JSON paths of delimiter strings and patterns longer than `limit`."""
    found = []
    if isinstance(value, dict):
        for key, item in value.items():
            found += _long_patterns(item, f"{path}.{key}" if path else str(key), limit)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += _long_patterns(item, f"{path}[{i}]", limit)
    elif isinstance(value, str) and len(value) > limit:
        found.append(path)
    return found


def read_template(text: str, limits: Limits | None = None) -> dict:
    """The template dict from editor text, after the size, depth, field-count and pattern caps.

    Raises InputError (caps, not JSON, not an object); the engine's TemplateError comes later.
    """
    limits = limits or current()
    if not text or not text.strip():
        raise InputError(
            "The template is empty: pick one from templates/ in the Template tab, or load a sample."
        )
    template = read_json(text, "The template", limits.template_chars, limits)
    if not isinstance(template, dict):
        raise InputError("The template must be a JSON object with 'fields' (and 'start_anchor').")
    fields = template.get("fields")
    if isinstance(fields, dict) and len(fields) > limits.fields:
        raise InputError(f"The template has {len(fields)} fields (limit {limits.fields}).")
    anchors = {k: template[k] for k in ("start_anchor", "start_anchor_pattern") if k in template}
    if too_long := _long_patterns({**anchors, "fields": fields or {}}, "", limits.pattern_chars):
        raise InputError(
            f"Pattern or delimiter too long at {too_long[0]} (limit {limits.pattern_chars:,} characters)."
        )
    return template


def read_tools(text: str, limits: Limits | None = None) -> list | None:
    """Tools (JSON-schema list) from the tools box; None when empty."""
    limits = limits or current()
    if not text or not text.strip():
        return None
    tools = read_json(text, "The tools JSON", limits.tools_chars, limits)
    if not isinstance(tools, list) or not all(isinstance(tool, dict) for tool in tools):
        raise InputError(
            'The tools JSON must be a list of tool objects, e.g. [{"type": "function", "function": {...}}].'
        )
    return tools


def check_text_sizes(prefix: str, generation: str, limits: Limits | None = None) -> None:
    """Raise InputError when the prefix or the generation is over its cap."""
    limits = limits or current()
    if len(prefix) > limits.prefix_chars:
        raise InputError(
            f"The prefix is too long: {len(prefix):,} characters (limit {limits.prefix_chars:,})."
        )
    if len(generation) > limits.generation_chars:
        raise InputError(
            f"The generation is too long: {len(generation):,} characters (limit {limits.generation_chars:,})."
        )
