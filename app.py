"""Response Template Playground: watch a response template parse a model's output.

    python app.py [--model PATH_OR_HUB_ID] [--share]

Host and port come from Gradio's own GRADIO_SERVER_NAME / GRADIO_SERVER_PORT.
Handlers are plain functions over `engine` (tested in tests/test_app_handlers.py);
HTML views live in `playground_view.py`; the layout is the one `gr.Blocks` at the end.
"""

from __future__ import annotations

import argparse
import base64
import functools
import html
import inspect
import json
import logging
import os
import re
import tempfile
import threading
import time
import zlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import gradio as gr

from engine import ResponseParser, TemplateError, load_template
from engine.errors import ResponseParseError
from engine.lint import lint
from engine.samples import load_samples
from engine.template_files import list_templates, load_template_file
from engine.openai_view import openai_deltas
from engine.stream_checks import check_stream, random_chunks, run_chunks
from engine.trace import trace
from playground_view import CSS, LoggedEvent, MapSpan, badge, chat_messages, event_log, figures, region_map

log = logging.getLogger("playground")

# Seconds each template regex call may take on this page (issue 8).
REGEX_TIMEOUT = 0.5
# Seconds between page updates while streaming (at most ~10 a second).
UPDATE_INTERVAL = 0.1
DEFAULT_SAMPLE = "qwen3/text-then-tool-calls"
# The Template dropdown's entry for a sample that carries its own template.
INLINE_TEMPLATE = "(inline template from sample)"
EDITED_TEMPLATE = "(edited in the Template tab)"
ROOT = Path(__file__).resolve().parent
DEMO_MODEL_PATH = ROOT / "samples" / "demo-model"


@dataclass(frozen=True)
class Limits:
    """Size caps for untrusted input; each has its own message when exceeded.

    Override any of them with the PLAYGROUND_LIMITS environment variable, a JSON
    object such as ``{"generation_chars": 2000000}``.
    """

    template_chars: int = 64_000
    pattern_chars: int = 2_000
    fields: int = 32
    prefix_chars: int = 200_000
    generation_chars: int = 1_000_000
    tools_chars: int = 64_000
    json_depth: int = 32
    max_new_tokens: int = 2_048
    stream_check_seconds: float = 10.0

    @classmethod
    def from_env(cls) -> "Limits":
        raw = os.environ.get("PLAYGROUND_LIMITS")
        return cls(**json.loads(raw)) if raw else cls()


LIMITS = Limits.from_env()


class InputError(ValueError):
    """Input the page refuses before parsing (too big, not JSON, wrong shape)."""


# ---------------------------------------------------------------------------
# Reading untrusted input
# ---------------------------------------------------------------------------


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


def _read_json(text: str, what: str, max_chars: int, limits: Limits) -> Any:
    if len(text) > max_chars:
        raise InputError(f"{what} is too large: {len(text):,} characters (limit {max_chars:,}).")
    if (depth := json_depth(text)) > limits.json_depth:
        raise InputError(f"{what} is nested too deeply: {depth} levels (limit {limits.json_depth}).")
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"{what} is not valid JSON: {error.msg} at line {error.lineno}, column {error.colno}.") from None


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


def read_template(text: str, limits: Limits = LIMITS) -> dict:
    """The template dict from editor text, after the size, depth, field-count and pattern caps.

    Raises InputError (caps, not JSON, not an object); the engine's TemplateError comes later.
    """
    if not text or not text.strip():
        raise InputError("The template is empty: pick one from templates/ in the Template tab, or load a sample.")
    template = _read_json(text, "The template", limits.template_chars, limits)
    if not isinstance(template, dict):
        raise InputError("The template must be a JSON object with 'fields' (and 'start_anchor').")
    fields = template.get("fields")
    if isinstance(fields, dict) and len(fields) > limits.fields:
        raise InputError(f"The template has {len(fields)} fields (limit {limits.fields}).")
    anchors = {k: template[k] for k in ("start_anchor", "start_anchor_pattern") if k in template}
    if too_long := _long_patterns({**anchors, "fields": fields or {}}, "", limits.pattern_chars):
        raise InputError(f"Pattern or delimiter too long at {too_long[0]} (limit {limits.pattern_chars:,} characters).")
    return template


def read_tools(text: str, limits: Limits = LIMITS) -> list | None:
    """Tools (JSON-schema list) from the tools box; None when empty."""
    if not text or not text.strip():
        return None
    tools = _read_json(text, "The tools JSON", limits.tools_chars, limits)
    if not isinstance(tools, list) or not all(isinstance(tool, dict) for tool in tools):
        raise InputError('The tools JSON must be a list of tool objects, e.g. [{"type": "function", "function": {...}}].')
    return tools


def check_text_sizes(prefix: str, generation: str, limits: Limits = LIMITS) -> None:
    if len(prefix) > limits.prefix_chars:
        raise InputError(f"The prefix is too long: {len(prefix):,} characters (limit {limits.prefix_chars:,}).")
    if len(generation) > limits.generation_chars:
        raise InputError(f"The generation is too long: {len(generation):,} characters (limit {limits.generation_chars:,}).")


# ---------------------------------------------------------------------------
# A parse, as the page shows it
# ---------------------------------------------------------------------------


@dataclass
class ParseView:
    """Everything the page shows about one parse, finished or in progress.

    Offsets are stream offsets (prefix tail after the start-anchor cut, then the
    generation). `error` is a message for people; `figures` are (name, value) pairs.
    """

    cut_away: str = ""
    stream: str = ""
    tail_length: int = 0
    spans: list[MapSpan] = field(default_factory=list)
    events: list[LoggedEvent] = field(default_factory=list)
    field_names: list[str] = field(default_factory=list)
    message: dict | None = None
    error: str | None = None
    error_offset: int | None = None
    warnings: list[str] = field(default_factory=list)
    figures: list[tuple[str, str]] = field(default_factory=list)
    finished: bool = True
    template: dict | None = None
    tools: list | None = None


def _phase(stage: str, chunk: int | None) -> str:
    return f"feed {chunk + 1}" if stage == "feed" and chunk is not None else stage


def traced_view(template: dict, prefix: str, generation: str, tools: list | None) -> ParseView:
    """Parse a whole generation with `engine.trace` and turn it into a ParseView.

    Raises TemplateError for a template that does not load; parse errors land in the view.
    """
    started = time.perf_counter()
    result = trace(generation, template, prefix=prefix, tools=tools, regex_timeout=REGEX_TIMEOUT, positions=True)
    seconds = time.perf_counter() - started
    spans = [
        MapSpan(s.stream_start, s.stream_end, s.kind, s.field, s.region, s.captures or None) for s in result.spans
    ]
    events = [LoggedEvent(i + 1, _phase(e.stage, e.chunk), e.event) for i, e in enumerate(result.events)]
    error = result.error
    return ParseView(
        cut_away=result.anchor.dropped,
        stream=result.prefix_tail + generation,
        tail_length=len(result.prefix_tail),
        spans=spans,
        events=events,
        field_names=list(template.get("fields", {})),
        message=result.message,
        error=None if error is None else f"{error.type}: {error.message}",
        error_offset=None if error is None else error.stream_offset,
        warnings=[f"{w.message} → {w.suggestion}" if w.suggestion else w.message for w in result.warnings],
        figures=[("characters", f"{len(generation):,}"), ("events", f"{len(events):,}"), ("parse", f"{seconds * 1000:.1f} ms")],
        template=template,
        tools=tools,
    )


class LiveParse:
    """A parse fed chunk by chunk (replay and live generation), viewable at any moment."""

    def __init__(self, template: dict, prefix: str, tools: list | None):
        self.template, self.tools = template, tools
        self.field_names = list(template.get("fields", {}))
        self.events: list[LoggedEvent] = []
        self.parts: list[str] = []
        self.message: dict | None = None
        self.error: ResponseParseError | None = None
        self.finished = False
        self.parse_seconds = 0.0
        self.feeds = 0
        started = time.perf_counter()
        self.parser = ResponseParser(
            template, prefix=prefix, tools=tools, regex_timeout=REGEX_TIMEOUT, positions=True, record_spans=True
        )
        self.parse_seconds += time.perf_counter() - started
        self.cut_away = prefix[: self.parser.prefix_cut]
        self.tail = prefix[self.parser.prefix_cut :]
        self._log(self.parser.initial_events, "prefix")

    def _log(self, events: list[dict], phase: str) -> None:
        start = len(self.events) + 1
        self.events.extend(LoggedEvent(start + i, phase, event) for i, event in enumerate(events))

    def feed(self, chunk: str) -> None:
        self.parts.append(chunk)
        if self.error is not None:
            return
        self.feeds += 1
        started = time.perf_counter()
        try:
            events = self.parser.feed(chunk)
        except ResponseParseError as error:
            self.error = error
            events = []
        self.parse_seconds += time.perf_counter() - started
        self._log(events, f"feed {self.feeds}")

    def finalize(self) -> None:
        self.finished = True
        if self.error is not None:
            return
        started = time.perf_counter()
        try:
            self.message, events = self.parser.finalize()
        except ResponseParseError as error:
            self.error = error
            events = []
        self.parse_seconds += time.perf_counter() - started
        self._log(events, "finalize")

    def view(self, extra_figures: list[tuple[str, str]] = ()) -> ParseView:
        stream = self.tail + "".join(self.parts)
        spans = [MapSpan(s.start, s.end, s.kind, s.field, s.region, s.match.captures if s.match else None) for s in self.parser.spans]
        decided = spans[-1].end if spans else 0
        if decided < len(stream):
            spans.append(MapSpan(decided, len(stream), "unparsed" if self.error else "held"))
        error = self.error
        return ParseView(
            cut_away=self.cut_away,
            stream=stream,
            tail_length=len(self.tail),
            spans=spans,
            events=list(self.events),
            field_names=self.field_names,
            message=self.message,
            error=None if error is None else f"{type(error).__name__}: {error}",
            error_offset=None if error is None else error.offset,
            figures=list(extra_figures),
            finished=self.finished,
            template=self.template,
            tools=self.tools,
        )


def message_json(message: dict | None) -> str:
    return "" if message is None else json.dumps(message, ensure_ascii=False, indent=2)


def openai_stream(view: ParseView) -> str:
    """The parse as OpenAI chat-completion `choices[0].delta` objects, one JSON per line,
    followed by the check that streamed tool-call arguments add up to the final ones."""
    if view.template is None or view.error:
        return ""
    derived = openai_deltas([logged.event for logged in view.events], view.template, tools=view.tools)
    lines = [json.dumps(delta, ensure_ascii=False) for delta in derived.deltas]
    for check in derived.checks:
        verdict = "ok" if check.ok else f"MISMATCH: streamed {check.streamed!r}, expected {check.expected!r}"
        lines.append(f"// tool call {check.index} ({check.name}): arguments pieces {verdict}")
    return "\n".join(lines)


def status_html(view: ParseView | None, note: str = "") -> str:
    """One line (or box) saying how the parse went."""
    parts = []
    if view is not None and view.error:
        parts.append(f'<div class="rt-status rt-status-error" id="status-error">⚠ {_escape(view.error)}</div>')
    elif view is not None and not view.finished:
        parts.append('<div class="rt-status rt-status-live">⏳ streaming…</div>')
    elif view is not None:
        keys = ", ".join(k for k in (view.message or {}) if k != "role") or "no fields"
        parts.append(f'<div class="rt-status rt-status-ok">✔ Parsed: {_escape(keys)}</div>')
    for warning in view.warnings if view else []:
        parts.append(f'<div class="rt-status rt-status-warn">△ {_escape(warning)}</div>')
    if note:
        parts.append(f'<div class="rt-status rt-status-note">{_escape(note)}</div>')
    return "".join(parts)


def _escape(text: str) -> str:
    """Escape text placed between tags (quotes stay readable)."""
    return html.escape(text, quote=False)


def error_html(message: str) -> str:
    return f'<div class="rt-status rt-status-error" id="status-error">⚠ {_escape(message)}</div>'


def render(view: ParseView, hide_chunks: bool = False, note: str = "") -> tuple:
    """The outputs of every parse, in VIEW_OUTPUTS order:
    (status, region map, event log, initial events, message JSON, chat, OpenAI stream, figures)."""
    initial = [logged.event for logged in view.events if logged.phase == "prefix"]
    return (
        status_html(view, note),
        region_map(
            cut_away=view.cut_away,
            stream=view.stream,
            tail_length=view.tail_length,
            spans=view.spans,
            events=view.events,
            field_names=view.field_names,
            error_offset=view.error_offset,
            error_text=view.error,
        ),
        event_log(view.events, hide_chunks=hide_chunks),
        json.dumps(initial, ensure_ascii=False, indent=2),
        message_json(view.message),
        chat_messages(view.message),
        openai_stream(view) if view.finished else "",
        figures(view.figures),
    )


VIEW_COUNT = 8


def failed(message: str, generation: str = "") -> tuple:
    """VIEW_OUTPUTS for input that never reached the parser: the message, the generation
    shown unparsed in the region map, the rest cleared."""
    spans = [MapSpan(0, len(generation), "unparsed")] if generation else []
    empty = ParseView(stream=generation, spans=spans, finished=True)
    outputs = list(render(empty))
    outputs[0] = error_html(message)
    return tuple(outputs)


def shielded(count: int, status_index: int):
    """Decorate a handler so an unexpected exception becomes a message in the status box.

    The handler's outputs are left as they were (gr.skip) except the status; the
    traceback goes to the server log, never to the page.
    """

    def wrap(handler):
        def report(error: BaseException) -> tuple:
            log.exception("handler %s failed", handler.__name__)
            outputs = [gr.skip()] * count
            outputs[status_index] = error_html(f"Something went wrong ({type(error).__name__}: {error}). The page still works; try again or change the input.")
            return tuple(outputs)

        if _is_generator(handler):

            @functools.wraps(handler)
            def run_generator(*args, **kwargs):
                try:
                    yield from handler(*args, **kwargs)
                except Exception as error:  # noqa: BLE001 - shown to the user instead of a traceback
                    yield report(error)

            return run_generator

        @functools.wraps(handler)
        def run(*args, **kwargs):
            try:
                return handler(*args, **kwargs)
            except Exception as error:  # noqa: BLE001
                return report(error)

        return run

    return wrap


def _is_generator(function) -> bool:
    return inspect.isgeneratorfunction(function)


# ---------------------------------------------------------------------------
# Paste & parse
# ---------------------------------------------------------------------------


def parse_inputs(template_text: str, prefix: str, generation: str, tools_text: str) -> ParseView:
    """Check the caps, then parse a pasted generation. Raises InputError / TemplateError."""
    template = read_template(template_text)
    tools = read_tools(tools_text)
    check_text_sizes(prefix or "", generation or "")
    return traced_view(template, prefix or "", generation or "", tools)


@shielded(1 + VIEW_COUNT, 1)
def parse_pasted(template_text: str, prefix: str, generation: str, tools_text: str, hide_chunks: bool) -> tuple:
    """Parse button: returns (view state, *VIEW_OUTPUTS)."""
    try:
        view = parse_inputs(template_text, prefix, generation, tools_text)
    except (InputError, TemplateError, ValueError) as error:
        shown = generation if generation and len(generation) <= LIMITS.generation_chars else ""
        return (None, *failed(str(error), shown))
    return (view, *render(view, hide_chunks))


@shielded(VIEW_COUNT, 0)
def rerender(view: ParseView | None, hide_chunks: bool) -> tuple:
    """Re-draw the last parse (the event-log filter changed)."""
    if view is None:
        return tuple(gr.skip() for _ in range(VIEW_COUNT))
    return render(view, hide_chunks)


# ---------------------------------------------------------------------------
# Chunking, replay and stream checks
# ---------------------------------------------------------------------------

CHUNKINGS = {
    "tokens": "tokenizer tokens",
    "chars": "every N characters",
    "random": "seeded random",
    "points": "split points (typed)",
}
_WORDISH = re.compile(r"\s+|\w+|[^\w\s]", re.UNICODE)
_tokenizer_lock = threading.Lock()
_tokenizer_cache: dict[str, Any] = {}


def _demo_tokenizer():
    """The demo model's tokenizer, or None when it is not built."""
    if not (DEMO_MODEL_PATH / "tokenizer_config.json").is_file():
        return None
    with _tokenizer_lock:
        if "demo" not in _tokenizer_cache:
            from transformers import AutoTokenizer

            _tokenizer_cache["demo"] = AutoTokenizer.from_pretrained(str(DEMO_MODEL_PATH))
        return _tokenizer_cache["demo"]


def token_pieces(text: str) -> tuple[list[str], str]:
    """Split `text` at the demo tokenizer's token boundaries; (pieces, what was used)."""
    tokenizer = _demo_tokenizer()
    if tokenizer is not None:
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        pieces = [tokenizer.decode([i], skip_special_tokens=False, clean_up_tokenization_spaces=False) for i in ids]
        if "".join(pieces) == text:
            return pieces, "the demo model's tokenizer"
    return [m.group() for m in _WORDISH.finditer(text)], "word and punctuation boundaries (no tokenizer that round-trips this text)"


def make_chunks(generation: str, how: str, size: int = 1, seed: int = 0, points: str = "") -> list[str]:
    """Cut `generation` into stream chunks.

    how: "tokens", "chars" (every `size` characters), "random" (seeded sizes 1..8) or
    "points" (comma-separated character offsets). Raises InputError for bad settings.
    """
    if not generation:
        return []
    if how == "tokens":
        return token_pieces(generation)[0]
    if how == "chars":
        size = int(size or 1)
        if size < 1:
            raise InputError("N must be at least 1.")
        return [generation[i : i + size] for i in range(0, len(generation), size)]
    if how == "random":
        return random_chunks(generation, int(seed or 0))
    if how == "points":
        try:
            offsets = sorted({int(p) for p in re.split(r"[,\s]+", points.strip()) if p})
        except ValueError:
            raise InputError("Split points are character offsets separated by commas, e.g. 5, 12, 40.") from None
        offsets = [o for o in offsets if 0 < o < len(generation)]
        bounds = [0, *offsets, len(generation)]
        return [generation[a:b] for a, b in zip(bounds, bounds[1:])]
    raise InputError(f"Unknown chunking {how!r}; use one of {', '.join(CHUNKINGS)}.")


def stream_check(template: dict, prefix: str, generation: str, tools: list | None, chunks: list[str]) -> tuple[bool | None, str, str]:
    """Does streaming give the one-shot result? Checks the replayed chunking, then the
    engine's own set (one character at a time, every single split, seeded random pieces)
    and truncation inside delimiters.

    The whole check has a `LIMITS.stream_check_seconds` budget: with a hostile pattern
    every feed may take the regex budget.

    Returns (passed, one-line label, Markdown details; on failure the chunking that breaks
    it); passed is None when the replay itself could not be checked within the budget.
    """
    loaded = load_template(template)
    options = {"tools": tools, "regex_timeout": REGEX_TIMEOUT}
    budget = LIMITS.stream_check_seconds  # a hostile pattern may spend the regex budget on every feed
    started = time.perf_counter()
    baseline = run_chunks(loaded, prefix, [generation], chunking="one-shot", **options)
    replayed = run_chunks(loaded, prefix, chunks, chunking="this replay", deadline=started + budget, **options)
    if replayed.stopped:
        return None, f"stream check stopped after its {budget:g} s budget", f"- replaying the {len(chunks)} chunks again took over {budget:g} s"
    remaining = max(0.0, budget - (time.perf_counter() - started))
    report = check_stream(generation, loaded, prefix=prefix, seeds=range(5), max_seconds=remaining, **options)
    mismatch = None if replayed.same_as(baseline) else replayed
    mismatch = mismatch or report.mismatch
    details = []
    if mismatch is not None:
        cuts = json.dumps(mismatch.splits[:200])
        details.append(
            f"**{mismatch.chunking}** differs from one-shot parsing (chunk boundaries at offsets `{cuts}`).\n\n"
            f"- one-shot: `{json.dumps(baseline.message, ensure_ascii=False)}` {baseline.error or ''}\n"
            f"- streamed: `{json.dumps(mismatch.message, ensure_ascii=False)}` {mismatch.error or ''}"
        )
    for leak in report.truncation_leaks[:10]:
        details.append(
            f"- truncation at {leak.cut}: fragment `{leak.fragment}` of `{leak.delimiter}` ({leak.path}) "
            f"ends up in `{leak.field}`"
        )
    details += [f"- {note}" for note in report.notes]
    if mismatch is None:
        label = f"streaming equals one-shot: this replay ({len(chunks)} chunks) and {report.runs - 1} other chunkings"
        if not report.complete:
            label += f" (the check stopped after its {budget:g} s budget)"
    else:
        label = f"streaming differs from one-shot parsing ({mismatch.chunking})"
    return mismatch is None, label, "\n".join(details)


@dataclass
class Replay:
    """Per-session replay state: the chunks and how many have been fed."""

    key: str
    chunks: list[str]
    position: int = 0
    how_note: str = ""


def _replay_key(*inputs: Any) -> str:
    return str(hash(json.dumps([str(i) for i in inputs])))


def _prepare_replay(template_text, prefix, generation, tools_text, how, size, seed, points, replay):
    template = read_template(template_text)
    tools = read_tools(tools_text)
    check_text_sizes(prefix or "", generation or "")
    load_template(template)
    key = _replay_key(template_text, prefix, generation, tools_text, how, size, seed, points)
    if replay is None or replay.key != key:
        note = f"tokens from {token_pieces(generation)[1]}" if how == "tokens" and generation else ""
        replay = Replay(key, make_chunks(generation or "", how, size, seed, points), 0, note)
    return template, tools, replay


def _replay_outputs(live: LiveParse, replay: Replay, hide_chunks: bool, checks: tuple | None) -> tuple:
    shown = replay.position
    view = live.view([("chunk", f"{shown} / {len(replay.chunks)}"), ("events", str(len(live.events)))])
    note = replay.how_note
    if checks is None:
        check_badge, details = badge(None, "finish the replay to check it against one-shot parsing"), ""
    else:
        check_badge, details = badge(checks[0], checks[1]), checks[2]
    return (replay, view, *render(view, hide_chunks, note), check_badge, details)


REPLAY_COUNT = 2 + VIEW_COUNT + 2


@shielded(REPLAY_COUNT, 2)
def replay_step(template_text, prefix, generation, tools_text, how, size, seed, points, replay, hide_chunks) -> tuple:
    """Step button: feed one more chunk; after the last one, finalize and run the stream checks;
    one more press starts over."""
    try:
        template, tools, replay = _prepare_replay(template_text, prefix, generation, tools_text, how, size, seed, points, replay)
    except (InputError, TemplateError, ValueError) as error:
        return (None, None, *failed(str(error)), badge(None, ""), "")
    if replay.position > len(replay.chunks) or (replay.position == len(replay.chunks) and replay.position):
        replay = Replay(replay.key, replay.chunks, 0, replay.how_note)
    else:
        replay = replace(replay, position=replay.position + 1)
    live = LiveParse(template, prefix or "", tools)
    for chunk in replay.chunks[: replay.position]:
        live.feed(chunk)
    checks = None
    if replay.position >= len(replay.chunks):
        live.finalize()
        checks = stream_check(template, prefix or "", generation or "", tools, replay.chunks)
    return _replay_outputs(live, replay, hide_chunks, checks)


@shielded(REPLAY_COUNT, 2)
def replay_play(template_text, prefix, generation, tools_text, how, size, seed, points, speed, hide_chunks):
    """Play button: feed every chunk at `speed` chunks per second (0: as fast as possible),
    updating the page at most every UPDATE_INTERVAL seconds; ends with the stream check."""
    try:
        template, tools, replay = _prepare_replay(template_text, prefix, generation, tools_text, how, size, seed, points, None)
    except (InputError, TemplateError, ValueError) as error:
        yield (None, None, *failed(str(error)), badge(None, ""), "")
        return
    live = LiveParse(template, prefix or "", tools)
    delay = 1.0 / float(speed) if speed else 0.0
    last = 0.0
    for i, chunk in enumerate(replay.chunks):
        live.feed(chunk)
        replay.position = i + 1
        now = time.perf_counter()
        if now - last >= UPDATE_INTERVAL:
            last = now
            yield _replay_outputs(live, replay, hide_chunks, None)
        if delay:
            time.sleep(delay)
    live.finalize()
    checks = stream_check(template, prefix or "", generation or "", tools, replay.chunks)
    yield _replay_outputs(live, replay, hide_chunks, checks)


# ---------------------------------------------------------------------------
# Samples and templates
# ---------------------------------------------------------------------------


@functools.cache
def samples_by_id() -> dict:
    return {sample.id: sample for sample in load_samples()}


@functools.cache
def template_names() -> list[str]:
    return [template_file.name for template_file in list_templates()]


def template_text_of(template: dict) -> str:
    return json.dumps(template, ensure_ascii=False, indent=2)


def sample_table() -> list[list[str]]:
    return [[s.family, s.name, s.description] for s in samples_by_id().values()]


SAMPLE_COUNT = 7 + 1 + VIEW_COUNT


@shielded(SAMPLE_COUNT, 8)
def load_sample(sample_id: str, hide_chunks: bool = False) -> tuple:
    """Load one sample case, template and all, and parse it.

    Returns (sample id, template text, prefix, generation, tools text, template choice,
    original template text, view state, *VIEW_OUTPUTS).
    """
    sample = samples_by_id().get(sample_id)
    if sample is None:
        return (gr.skip(),) * 8 + failed(f"No sample {sample_id!r}; pick one from the Samples tab.")
    text = template_text_of(sample.template)
    tools_text = json.dumps(sample.tools, ensure_ascii=False, indent=2) if sample.tools else ""
    view = traced_view(sample.template, sample.prefix, sample.generation, sample.tools)
    note = f"Sample {sample.id}: {sample.description}"
    if sample.expected_error:
        note += f" (expected to fail with: {sample.expected_error})"
    choice = sample.template_name if sample.template_name in template_names() else INLINE_TEMPLATE
    return (sample.id, text, sample.prefix, sample.generation, tools_text, choice, text, view, *render(view, hide_chunks, note))


def load_sample_at(index: int, hide_chunks: bool = False) -> tuple:
    """One click on a row of the samples table."""
    return load_sample(list(samples_by_id())[int(index)], hide_chunks)


def template_choice_for(text: str, current: str | None = None, otherwise: str = EDITED_TEMPLATE) -> str:
    """What the template dropdown should say for editor `text`: a templates/ name whose
    template it holds (the same data, in any key order or layout; `current` first, as two
    files may hold the same template), else `otherwise`: an edited template is no longer
    the file it started from."""
    try:
        data = json.loads(text)
    except (TypeError, ValueError, RecursionError):
        return otherwise
    matching = [f.name for f in list_templates() if data == f.response_template]
    if current in matching:
        return current
    return matching[0] if matching else otherwise


def template_from_file(name: str) -> tuple[str, str]:
    """(editor text, reset text) for `templates/<name>.json`."""
    if not name or name not in template_names():
        return gr.skip(), gr.skip()
    text = template_text_of(load_template_file(name).response_template)
    return text, text


def check_template(text: str) -> str:
    """Validation and lint diagnostics for the editor, as HTML (errors name the JSON path)."""
    try:
        template = read_template(text)
    except InputError as error:
        return _diagnostics_html([("error", "", str(error), "")])
    found = [(d.severity, d.path, d.message, d.suggestion) for d in lint(template)]
    return _diagnostics_html(found)


def _diagnostics_html(found: list[tuple[str, str, str, str]]) -> str:
    if not found:
        return '<div class="rt-diag rt-diag-ok" id="template-ok">✔ Template is valid; lint found nothing.</div>'
    icons = {"error": "⛔", "warning": "△", "info": "ℹ"}
    rows = []
    for severity, path, message, suggestion in found:
        hint = f"<br><i>→ {_escape(suggestion)}</i>" if suggestion else ""
        where = f"<code>{_escape(path)}</code> " if path else ""
        if path and message.startswith(f"{path}: "):
            message = message[len(path) + 2 :]
        rows.append(f'<div class="rt-diag rt-diag-{severity}">{icons.get(severity, "")} {severity}: {where}{_escape(message)}{hint}</div>')
    return '<div id="template-diagnostics-list">' + "".join(rows) + "</div>"


def format_template(text: str) -> tuple[str, str]:
    """Format button: (pretty-printed text, diagnostics). Leaves invalid JSON as typed."""
    try:
        template = read_template(text)
    except InputError as error:
        return gr.skip(), _diagnostics_html([("error", "", str(error), "")])
    pretty = template_text_of(template)
    return pretty, check_template(pretty)


def export_template(text: str) -> tuple[str | None, str | None, str]:
    """Download / export: (template.json path, tokenizer_config.json path, diagnostics).

    The export is a tokenizer_config.json fragment holding the template under
    `response_template`, to merge into a model's own tokenizer_config.json.
    """
    try:
        template = read_template(text)
        load_template(template)
    except (InputError, TemplateError) as error:
        return None, None, _diagnostics_html([("error", getattr(error, "path", ""), str(error), "")])
    folder = Path(tempfile.mkdtemp(prefix="response-template-"))
    template_path = folder / "response_template.json"
    template_path.write_text(template_text_of(template) + "\n", encoding="utf-8")
    config_path = folder / "tokenizer_config.json"
    config_path.write_text(json.dumps({"response_template": template}, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return str(template_path), str(config_path), check_template(text)


# ---------------------------------------------------------------------------
# Live generation
# ---------------------------------------------------------------------------

_model_lock = threading.Lock()
_models: dict[str, Any] = {}


def get_model(name: str):
    """Load (once per process) and return a model; raises playground.generation.ModelLoadError."""
    from playground import generation

    name = (name or "").strip() or str(generation.DEFAULT_MODEL_PATH)
    with _model_lock:
        if name not in _models:
            if len(_models) >= 2:
                _models.pop(next(iter(_models)))
            _models[name] = generation.load_model(name)
        return _models[name]


def conversation(system: str, user: str, messages_text: str) -> list[dict]:
    """The messages to render: the messages JSON when given, else system + user turns."""
    if messages_text and messages_text.strip():
        messages = _read_json(messages_text, "The messages JSON", LIMITS.tools_chars, LIMITS)
        if not isinstance(messages, list) or not all(isinstance(m, dict) and "role" in m for m in messages):
            raise InputError('The messages JSON must be a list like [{"role": "user", "content": "Hi"}].')
        return messages
    if not (user or "").strip():
        raise InputError("Write a user message (or a messages JSON) first.")
    turns = [{"role": "system", "content": system}] if (system or "").strip() else []
    return turns + [{"role": "user", "content": user}]


LIVE_COUNT = 1 + VIEW_COUNT + 4
# Sessions whose Stop button was pressed; their generation ends at the next token. (A flag
# rather than Gradio's `cancels`, which marks every output "Error" and loses the last parse.)
_stop_requests: set[str] = set()


def request_stop(request: gr.Request = None) -> None:
    """Stop button: end this session's live generation after the current token."""
    if request is not None:
        _stop_requests.add(request.session_hash)


@shielded(LIVE_COUNT, 1)
def generate_live(
    model_name, system, user, messages_text, tools_text, enable_thinking, max_new_tokens, temperature, top_p, seed,
    use_model_template, template_text, hide_chunks, template_origin=None, request: gr.Request = None,
):
    """Generate with a model and parse as tokens arrive.

    Yields (view state, *VIEW_OUTPUTS, template text, template dropdown, prefix, generation,
    model note), at most
    every UPDATE_INTERVAL seconds plus once at the end. Stop (request_stop) ends it at the next
    token; what was generated is then finalized like a finished generation.
    """
    from playground import generation

    session = getattr(request, "session_hash", None)
    _stop_requests.discard(session)

    skip5 = (gr.skip(),) * 5
    try:
        messages = conversation(system, user, messages_text)
        tools = read_tools(tools_text)
        max_new_tokens = int(max_new_tokens)
        if not 1 <= max_new_tokens <= LIMITS.max_new_tokens:
            raise InputError(f"max_new_tokens must be between 1 and {LIMITS.max_new_tokens}.")
        template = read_template(template_text) if not use_model_template else None
    except (InputError, ValueError) as error:
        yield (None, *failed(str(error)), *skip5)
        return
    loading = list(failed(""))
    loading[0] = status_html(None, f"Loading {model_name or 'the demo model'} (cached after the first time)…")
    yield (None, *loading, *skip5)
    try:
        loaded = get_model(model_name)
        template_note = ""
        if template is None:
            template, template_note = generation.choose_template(loaded)
        prompt = generation.render_prompt(loaded, messages, tools, enable_thinking=bool(enable_thinking))
        live = LiveParse(template, prompt.text, tools)
    except (generation.ModelLoadError, LookupError, TemplateError, ResponseParseError) as error:
        yield (None, *failed(str(error)), *skip5)
        return
    model_note = f"Model: {loaded.name}" + (f" — {template_note}" if template_note else "")
    template_out = template_text_of(template) if use_model_template else gr.skip()
    choice_out = template_choice_for(template_out, template_origin) if use_model_template else gr.skip()
    started = time.perf_counter()
    tokens = 0
    last = 0.0

    def snapshot() -> ParseView:
        elapsed = time.perf_counter() - started
        per_token = live.parse_seconds / tokens * 1000 if tokens else 0.0
        return live.view([
            ("tokens", str(tokens)),
            ("tokens/s", f"{tokens / elapsed:.1f}" if elapsed > 0 else "0"),
            ("parse per token", f"{per_token:.3f} ms"),
            ("elapsed", f"{elapsed:.1f} s"),
        ])

    pieces = generation.stream_generation(
        loaded, prompt, max_new_tokens=max_new_tokens, temperature=float(temperature), top_p=float(top_p),
        seed=None if seed is None or seed == "" else int(seed),
    )
    stopped = False
    try:
        for piece in pieces:
            if session in _stop_requests:
                stopped = True
                break
            tokens += len(piece.ids)
            live.feed(piece.text)
            now = time.perf_counter()
            if now - last >= UPDATE_INTERVAL:
                last = now
                view = snapshot()
                yield (view, *render(view, hide_chunks, model_note), template_out, choice_out, gr.skip(), gr.skip(), model_note)
    finally:
        pieces.close()
        _stop_requests.discard(session)
    live.finalize()
    if stopped:
        model_note = f"■ Stopped after {tokens} tokens; the text so far is parsed as if generation had ended. {model_note}"
    view = snapshot()
    yield (view, *render(view, hide_chunks, model_note), template_out, choice_out, prompt.text, "".join(live.parts), model_note)


# ---------------------------------------------------------------------------
# Deep links
# ---------------------------------------------------------------------------

MAX_STATE_PARAM = 8_000


def encode_state(state: dict) -> str:
    """URL-safe compressed JSON of the page inputs."""
    packed = zlib.compress(json.dumps(state, ensure_ascii=False).encode("utf-8"), 9)
    return base64.urlsafe_b64encode(packed).decode("ascii").rstrip("=")


def decode_state(text: str, limit: int = 1_000_000) -> dict:
    """Inverse of encode_state; refuses oversized or malformed input with InputError."""
    if len(text) > MAX_STATE_PARAM:
        raise InputError("The shared state in the link is too long.")
    try:
        packed = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        inflater = zlib.decompressobj()
        raw = inflater.decompress(packed, limit)
        if inflater.unconsumed_tail:
            raise InputError("The shared state in the link is too large.")
        state = json.loads(raw.decode("utf-8"))
    except (ValueError, zlib.error) as error:
        raise InputError(f"The shared state in the link cannot be read ({error}).") from None
    if not isinstance(state, dict):
        raise InputError("The shared state in the link cannot be read.")
    return state


def chunking_param(how: str, size: Any, seed: Any, points: str) -> str:
    if how == "chars":
        return f"chars:{int(size or 1)}"
    if how == "random":
        return f"random:{int(seed or 0)}"
    if how == "points":
        return "points:" + re.sub(r"\s+", "", points or "")
    return how


def parse_chunking_param(text: str) -> dict:
    """`chars:3` / `random:7` / `points:5,9` / `tokens` -> {how, size, seed, points}."""
    how, _, arg = (text or "").partition(":")
    settings: dict[str, Any] = {"how": how if how in CHUNKINGS else "chars"}
    try:
        if how == "chars" and arg:
            settings["size"] = max(1, int(arg))
        elif how == "random" and arg:
            settings["seed"] = int(arg)
        elif how == "points":
            settings["points"] = arg.replace(",", ", ")
    except ValueError:
        pass
    return settings


def share_query(sample_id, template_choice, how, size, seed, points, template_text, prefix, generation, tools_text) -> str:
    """The query string of a link to the current state.

    A sample left as loaded is named (`?sample=...`); edited text travels compressed in `state`.
    """
    from urllib.parse import urlencode

    params: dict[str, str] = {}
    sample = samples_by_id().get(sample_id or "")
    same_as_sample = sample is not None and (
        template_text_of(sample.template) == template_text and sample.prefix == prefix and sample.generation == generation
    )
    if sample is not None:
        params["sample"] = sample.id
    if not same_as_sample:
        if template_choice in template_names() and template_text == template_text_of(load_template_file(template_choice).response_template):
            params["template"] = template_choice
            state = {"prefix": prefix, "generation": generation, "tools": tools_text}
        else:
            state = {"template": template_text, "prefix": prefix, "generation": generation, "tools": tools_text}
        encoded = encode_state(state)
        if len(encoded) <= MAX_STATE_PARAM:
            params["state"] = encoded
    params["chunking"] = chunking_param(how, size, seed, points)
    return "?" + urlencode(params)


LOAD_COUNT = SAMPLE_COUNT + 5


def apply_query(params: dict) -> tuple:
    """Page load: apply ?sample=, ?template=, ?state= and ?chunking= (default: the first sample).

    Returns the load_sample outputs followed by (chunking how, N, seed, split points, tab).
    """
    chunking = parse_chunking_param(params.get("chunking", ""))
    chunk_outputs = (
        chunking.get("how", gr.skip()) if "chunking" in params else gr.skip(),
        chunking.get("size", gr.skip()),
        chunking.get("seed", gr.skip()),
        chunking.get("points", gr.skip()),
    )
    sample_id = params.get("sample") or DEFAULT_SAMPLE
    outputs = list(load_sample(sample_id))
    tab = gr.Tabs(selected="paste") if ("state" in params or "sample" in params or "template" in params) else gr.skip()
    try:
        if "template" in params and params["template"] in template_names():
            text = template_text_of(load_template_file(params["template"]).response_template)
            outputs[1], outputs[5], outputs[6] = text, params["template"], text
        if "state" in params:
            state = decode_state(params["state"])
            for index, key in ((1, "template"), (2, "prefix"), (3, "generation"), (4, "tools")):
                if isinstance(state.get(key), str):
                    outputs[index] = state[key]
            if isinstance(state.get("template"), str) and state["template"] != outputs[6]:
                outputs[5] = template_choice_for(state["template"], outputs[5])  # not the sample's template
        if "template" in params or "state" in params:
            text = outputs[1] if isinstance(outputs[1], str) else ""
            result = parse_pasted(text, outputs[2], outputs[3], outputs[4], False)
            outputs[7:] = result
    except InputError as error:
        outputs[8] = error_html(str(error))
    return (*outputs, *chunk_outputs, tab)


def on_load(request: gr.Request) -> tuple:
    return apply_query(dict(request.query_params) if request is not None else {})


# ---------------------------------------------------------------------------
# Layout
# ---------------------------------------------------------------------------

PAGE_CSS = CSS + """
.rt-status { padding: 6px 10px; border-radius: 6px; margin: 2px 0; font-size: 14px; }
.rt-status-error { background: #fee2e2; color: #991b1b; font-weight: 600; white-space: pre-wrap; }
.rt-status-ok { background: #dcfce7; color: #166534; }
.rt-status-live { background: #e0f2fe; color: #075985; }
.rt-status-warn { background: #fef3c7; color: #92400e; }
.rt-status-note { background: var(--background-fill-secondary); color: var(--body-text-color); }
.rt-diag { padding: 4px 8px; margin: 2px 0; border-radius: 4px; font-size: 13px; }
.rt-diag-error { background: #fee2e2; color: #991b1b; }
.rt-diag-warning { background: #fef3c7; color: #92400e; }
.rt-diag-info, .rt-diag-ok { background: #f0fdf4; color: #166534; }
"""

SHARE_JS = """(query) => {
  const url = window.location.origin + window.location.pathname + query;
  if (navigator.clipboard) { navigator.clipboard.writeText(url).catch(() => {}); }
  return url;
}"""

_first = load_sample(DEFAULT_SAMPLE)
DEFAULT_LIVE_TOOLS = json.dumps(samples_by_id()[DEFAULT_SAMPLE].tools, indent=2)
_chunking_choices = [(label, key) for key, label in CHUNKINGS.items()]

with gr.Blocks(title="Response Template Playground") as demo:
    gr.Markdown(
        "# Response Template Playground\n"
        "A **response template** turns a chat model's raw output back into a message "
        "(`reasoning_content`, `content`, `tool_calls`). Pick a sample, paste your own output, "
        "edit the template, or generate live — and see where every character went."
    )
    view_state = gr.State(_first[7])
    replay_state = gr.State(None)
    reset_text = gr.State(_first[6])
    template_origin = gr.State(_first[5])  # the dropdown's last choice other than "edited"
    with gr.Row():
        with gr.Column(scale=5, min_width=380):
            with gr.Tabs(selected="samples", elem_id="modes") as modes:
                with gr.Tab("Samples", id="samples", elem_id="tab-samples"):
                    sample_id = gr.Dropdown(
                        list(samples_by_id()), value=_first[0], label="Sample", elem_id="sample-picker", filterable=True
                    )
                    sample_rows = gr.Dataset(
                        components=[gr.Textbox(visible=False)] * 3, headers=["family", "case", "what it shows"],
                        samples=sample_table(), type="index", samples_per_page=12, label="Click a case to load it",
                        elem_id="sample-table",
                    )
                with gr.Tab("Paste & parse", id="paste", elem_id="tab-paste"):
                    prefix = gr.Textbox(_first[2], label="Prefix (the prompt, special tokens included)", lines=3, max_lines=8, elem_id="prefix")
                    generation_box = gr.Textbox(_first[3], label="Generation (raw model output)", lines=6, max_lines=16, elem_id="generation")
                    tools = gr.Code(_first[4], language="json", label="Tools (JSON schemas, optional)", lines=3, max_lines=10, elem_id="tools")
                    template_choice = gr.Dropdown([*template_names(), INLINE_TEMPLATE, EDITED_TEMPLATE], value=_first[5], label="Template (from templates/; edit it in the Template tab)", elem_id="template-choice")
                    parse_button = gr.Button("Parse", variant="primary", elem_id="parse-button")
                    with gr.Accordion("Replay as a stream", open=True):
                        with gr.Row():
                            chunking = gr.Radio(_chunking_choices, value="chars", label="Chunking", elem_id="chunking")
                        with gr.Row():
                            chunk_size = gr.Number(1, label="N (characters)", precision=0, minimum=1, elem_id="chunk-size")
                            chunk_seed = gr.Number(0, label="Seed", precision=0, elem_id="chunk-seed")
                            split_points = gr.Textbox(label="Split points (offsets)", placeholder="5, 12, 40", elem_id="split-points")
                        speed = gr.Slider(0, 200, value=40, step=1, label="Play speed (chunks per second; 0 = as fast as possible)", elem_id="speed")
                        with gr.Row():
                            step_button = gr.Button("Step ▷", elem_id="step-button")
                            play_button = gr.Button("Play ▶", elem_id="play-button")
                            stop_play_button = gr.Button("Stop ■", elem_id="stop-play-button")
                with gr.Tab("Generate live", id="live", elem_id="tab-live"):
                    model_name = gr.Textbox(str(DEMO_MODEL_PATH.relative_to(ROOT)), label="Model (local folder or hub id; default: the bundled demo model)", elem_id="model-name")
                    system_box = gr.Textbox("", label="System (optional)", lines=1, elem_id="system")
                    user_box = gr.Textbox("What's the weather in Paris?", label="User", lines=2, elem_id="user")
                    messages_box = gr.Code("", language="json", label="…or a messages JSON (wins when given)", lines=2, max_lines=8, elem_id="messages")
                    live_tools = gr.Code(DEFAULT_LIVE_TOOLS, language="json", label="Tools (JSON schemas, optional)", lines=3, max_lines=8, elem_id="live-tools")
                    with gr.Row():
                        enable_thinking = gr.Checkbox(False, label="enable_thinking", elem_id="enable-thinking")
                        use_model_template = gr.Checkbox(True, label="Use the model's template (tokenizer's own, else templates/)", elem_id="use-model-template")
                    with gr.Row():
                        max_new_tokens = gr.Slider(1, LIMITS.max_new_tokens, value=200, step=1, label="max_new_tokens", elem_id="max-new-tokens")
                        temperature = gr.Slider(0, 2, value=0.7, step=0.05, label="temperature", elem_id="temperature")
                    with gr.Row():
                        top_p = gr.Slider(0.05, 1, value=0.9, step=0.05, label="top_p", elem_id="top-p")
                        seed = gr.Number(0, label="seed", precision=0, elem_id="seed")
                    with gr.Row():
                        generate_button = gr.Button("Generate", variant="primary", elem_id="generate-button")
                        stop_button = gr.Button("Stop", variant="stop", elem_id="stop-button")
                    model_note = gr.Markdown(elem_id="model-note")
                with gr.Tab("Template", id="template", elem_id="tab-template"):
                    start_from = gr.Dropdown(template_names(), value=None, label="Start from templates/", elem_id="start-from")
                    template_code = gr.Code(_first[1], language="json", label="Response template", lines=18, max_lines=40, elem_id="template-editor")
                    diagnostics = gr.HTML(check_template(_first[1]), elem_id="template-diagnostics")
                    with gr.Row():
                        format_button = gr.Button("Format", elem_id="format-button")
                        reset_button = gr.Button("Reset", elem_id="reset-button")
                        export_button = gr.Button("Download / export", elem_id="export-button")
                    with gr.Row():
                        template_file = gr.File(label="response_template.json", elem_id="template-file")
                        tokenizer_config_file = gr.File(label="tokenizer_config.json (response_template key)", elem_id="tokenizer-config-file")
        with gr.Column(scale=7, min_width=480):
            status = gr.HTML(_first[8], elem_id="status")
            live_figures = gr.HTML(_first[15], elem_id="live-figures")
            region_map_html = gr.HTML(_first[9], label="Region map", elem_id="region-map")
            with gr.Tabs():
                with gr.Tab("Message"):
                    with gr.Row():
                        message_code = gr.Code(_first[12], language="json", label="Final message", interactive=False, elem_id="message-json")
                        chat = gr.Chatbot(_first[13], label="As a chat shows it", height=360, elem_id="chat")
                with gr.Tab("Event log"):
                    hide_chunks = gr.Checkbox(False, label="Hide chunk events", elem_id="hide-chunks")
                    event_log_html = gr.HTML(_first[10], elem_id="event-log")
                with gr.Tab("initial_events"):
                    initial_code = gr.Code(_first[11], language="json", label="Events from the prefix", interactive=False, elem_id="initial-events")
                with gr.Tab("OpenAI stream"):
                    openai_code = gr.Code(_first[14], language="json", label="Chat-completion deltas", interactive=False, elem_id="openai-stream")
                with gr.Tab("Stream checks"):
                    check_badge = gr.HTML(badge(None, "replay (Step or Play) to check streaming against one-shot parsing"), elem_id="stream-check")
                    check_details = gr.Markdown(elem_id="stream-check-details")
            with gr.Row():
                share_button = gr.Button("🔗 Copy a link to this state", size="sm", elem_id="share-button")
                share_link = gr.Textbox(label="Link", show_label=False, interactive=False, elem_id="share-link", scale=3)

    views = [status, region_map_html, event_log_html, initial_code, message_code, chat, openai_code, live_figures]
    sample_outputs = [sample_id, template_code, prefix, generation_box, tools, template_choice, reset_text, view_state, *views]
    pasted = [template_code, prefix, generation_box, tools]
    chunk_settings = [chunking, chunk_size, chunk_seed, split_points]

    demo.load(on_load, None, [*sample_outputs, *chunk_settings, modes])
    sample_id.input(load_sample, [sample_id, hide_chunks], sample_outputs)
    sample_rows.click(load_sample_at, [sample_rows, hide_chunks], sample_outputs)
    parse_button.click(parse_pasted, [*pasted, hide_chunks], [view_state, *views])
    hide_chunks.change(rerender, [view_state, hide_chunks], views)
    replay_outputs = [replay_state, view_state, *views, check_badge, check_details]
    step_button.click(replay_step, [*pasted, *chunk_settings, replay_state, hide_chunks], replay_outputs)
    playing = play_button.click(replay_play, [*pasted, *chunk_settings, speed, hide_chunks], replay_outputs)
    stop_play_button.click(None, cancels=[playing])
    template_choice.input(template_from_file, template_choice, [template_code, reset_text]).then(
        parse_pasted, [*pasted, hide_chunks], [view_state, *views]
    )
    start_from.input(template_from_file, start_from, [template_code, reset_text]).then(
        lambda name: name, start_from, template_choice
    ).then(parse_pasted, [*pasted, hide_chunks], [view_state, *views])
    template_code.change(check_template, template_code, diagnostics, trigger_mode="always_last", show_progress="hidden")
    template_code.input(parse_pasted, [*pasted, hide_chunks], [view_state, *views], trigger_mode="always_last", show_progress="hidden")
    template_choice.change(
        lambda choice, origin: origin if choice == EDITED_TEMPLATE else choice, [template_choice, template_origin], template_origin
    )
    template_code.input(
        template_choice_for, [template_code, template_origin], template_choice, trigger_mode="always_last", show_progress="hidden"
    )
    format_button.click(format_template, template_code, [template_code, diagnostics])
    reset_button.click(lambda text: text, reset_text, template_code).then(
        lambda text, origin: template_choice_for(text, origin, INLINE_TEMPLATE), [reset_text, template_origin], template_choice
    ).then(parse_pasted, [*pasted, hide_chunks], [view_state, *views])
    export_button.click(export_template, template_code, [template_file, tokenizer_config_file, diagnostics])
    generate_button.click(
        generate_live,
        [model_name, system_box, user_box, messages_box, live_tools, enable_thinking, max_new_tokens, temperature, top_p,
         seed, use_model_template, template_code, hide_chunks, template_origin],
        [view_state, *views, template_code, template_choice, prefix, generation_box, model_note],
        concurrency_limit=1, concurrency_id="generation",
    )
    stop_button.click(request_stop, None, None, queue=False)
    share_button.click(
        share_query, [sample_id, template_choice, *chunk_settings, template_code, prefix, generation_box, tools], share_link
    ).then(None, share_link, share_link, js=SHARE_JS)

demo.queue(default_concurrency_limit=8, max_size=64)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="model folder or hub id for Generate live (default: the bundled demo model)")
    parser.add_argument("--share", action="store_true", help="create a public gradio.live link")
    args = parser.parse_args()
    if args.model:
        model_name.value = args.model
    logging.basicConfig(level=logging.INFO)
    demo.launch(share=args.share, css=PAGE_CSS, show_error=False)


if __name__ == "__main__":
    main()
