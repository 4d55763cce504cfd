"""Limits: the caps on untrusted input, the time budgets and what one visitor may hold.

The caps come from `Limits` and can be changed with the PLAYGROUND_LIMITS
environment variable, a JSON object such as ``{"generation_chars": 2000000}``
(every key is listed in docs/app.md). `current()` is the limits in force;
`deadline(budget)` and `over_budget(budget, what)` turn a ``*_seconds`` key
into a deadline and into the message of what it stopped.

A bad PLAYGROUND_LIMITS raises `LimitsError` when this module is imported,
naming the key and what is wrong with it; `app.py` turns it into a one-line
message and stops. The kinds of work and their queues are
`playground.server.queues`; reading a visitor's input within these caps is
`playground.server.input_readers`.
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
        json_nodes: values in any JSON input (a template, tools, test cases, a tokenizer_config.json,
            a link's state, a state file), counted on its text before it is read.
        answer_mb: the largest answer one request builds (an export's files, a state file, the
            OpenAI view, the examples file), checked while it is written (MB).
        token_reading_chars: the longest generation the page reads as token ids (a tokenizer's
            encoding of it, and the parse of its ids, run within parse_seconds).
        token_reading_ids: the most token ids such a reading may give.
        request_mb: the largest HTTP request body the server reads (MB); a bigger one is refused
            before it is read.
        upload_mb: the largest uploaded file (MB).
        client_upload_mb: what one client's uploads may hold on the server's disk at once (MB);
            they are deleted when its page closes (Gradio deletes any upload after ten minutes).
        uploads_mb: what all clients' uploads may hold on the server's disk at once (MB).
        max_new_tokens: the largest generation Generate live allows (tokens).
        prompt_tokens: the longest prompt Generate live gives the model (tokens).
        regex_seconds: what one template regex call may take on this page.
        parse_seconds: one parse (a parse, a sample, a test-case run, a lint), over all its regex calls.
        regions: regions one parse or replay may open; past it the parse stops with an error naming
            the limit (its events, spans and views cost in proportion).
        value_chars: characters the region values of one parse may hold together, as JSON (a
            transform that repeats a value counts it each time): what bounds the message, the
            event log and an answer; past it the parse stops with an error naming the limit.
        replay_seconds: one replay request (Step, Play with its pacing, /replay), stream check included.
        stream_check_seconds: the stream check at the end of a replay.
        reference_seconds: transformers' reference parse ("vs transformers"), in a worker process.
        fit_seconds: "Which template fits?" (every templates/ file on the input).
        export_seconds: writing the download files.
        generate_seconds: one Generate live, from its first token.
        grammar_seconds: deriving and writing the grammar of Generate live's "Constrain to the
            template", in the server's process; past it the generation goes on unconstrained and
            the model note says why.
        grammar_nodes: grammar nodes deriving and writing that grammar may build (what bounds its
            memory in the server's process); past it, as for grammar_seconds.
        grammar_chars: the written grammar (llguidance's Lark) of "Constrain to the template";
            past it, as for grammar_seconds. llguidance's own parser limits bound compiling it
            and each token's mask (`engine.grammar.matching.SERVING_PARSER_LIMITS`).
        chat_template_seconds: rendering a model's chat template into the prompt, in a worker process.
        conformance_seconds: one chat-template check, in a worker process.
        worker_mb: the address space of one worker process (MB).
        client_worker_mb: the worker memory one client's jobs may hold at once (MB): jobs in
            worker processes (checks, comparisons, inferences, prompt renders), `worker_mb` each.
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
    json_nodes: int = 200_000
    answer_mb: int = 32
    token_reading_chars: int = 200_000
    token_reading_ids: int = 200_000
    request_mb: int = 16
    upload_mb: int = 20
    client_upload_mb: int = 100
    uploads_mb: int = 2_000
    max_new_tokens: int = 2_048
    prompt_tokens: int = 4_096
    regex_seconds: float = 0.5
    parse_seconds: float = 10.0
    regions: int = 10_000
    value_chars: int = 16_000_000
    replay_seconds: float = 60.0
    stream_check_seconds: float = 10.0
    reference_seconds: float = 10.0
    fit_seconds: float = 10.0
    export_seconds: float = 5.0
    generate_seconds: float = 120.0
    grammar_seconds: float = 5.0
    grammar_nodes: int = 100_000
    grammar_chars: int = 500_000
    chat_template_seconds: float = 20.0
    conformance_seconds: float = 30.0
    worker_mb: int = 3_072
    client_worker_mb: int = 6_144
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
