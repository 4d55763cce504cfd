"""Generate live: run a model and parse its output as the tokens arrive.

The model code is `playground.model.generation` (imported lazily: it imports torch);
this module keeps the loaded models, builds the conversation from the page's
boxes, and streams `ParseView`s while generating.
"""

from __future__ import annotations

import threading
import time
from collections import Counter, OrderedDict
from contextlib import contextmanager
from typing import Any

from engine import TemplateError
from engine.errors import ResponseParseError

from .catalog import template_choice_for, template_text_of
from .outputs import PARSE_VIEWS, failed, produces, render
from .panels.status import status_html
from .parse.derived import DERIVED_VIEWS, stale_derived
from .parse.parse_view import LiveParse, ParseView
from .parse.session import Session
from .server import limits, queues
from .server.folders import FolderError, check_model_name, shown
from .server.input_readers import InputError, read_json, read_template, read_tools
from .server.redact import redact

# Seconds between page updates while streaming (at most ~10 a second); each update outlines
# what grew since the one before.
UPDATE_INTERVAL = 0.1
# Teaching pace: tokens shown per second, each in an update of its own (the model runs ahead).
TEACHING_TOKENS_PER_SECOND = 4
# Longest sleep between two looks at Stop while pacing (seconds).
PACE_STEP = 0.05
# Models kept loaded at once (the least recently used is dropped first).
MODELS_KEPT = 2

_model_lock = threading.Lock()
_models: OrderedDict[str, Any] = (
    OrderedDict()
)  # name -> LoadedModel, at most MODELS_KEPT, least recently used first
_loads: dict[str, Any] = {}  # name -> playground.model.generation.BackgroundLoad not yet collected
_waiters: Counter[str] = Counter()  # name -> Generates waiting for its load
_kept_loads: set[str] = (
    set()
)  # loads kept when they end with nobody waiting (the one app.py starts)
# Seconds between two status updates while Generate waits for a load.
LOAD_POLL = 0.25
# Generations running at once over the server (on 2 CPU cores one is as fast as two); a
# Generate waits for a slot, and Stop ends the wait.
generation_slots = threading.BoundedSemaphore(queues.GENERATIONS_AT_ONCE)


def _model_key(name: str) -> str:
    """One name per model: the default for "", an allowed folder as its absolute path (so
    "samples/demo-model" and the startup load's path are the same model), else the hub id.
    Raises FolderError for a folder the server does not allow (the same for a missing one)."""
    from .model import generation

    name = (name or "").strip()
    if not name:
        return str(generation.DEFAULT_MODEL_PATH)
    return check_model_name(name)


def _keep(key: str, loaded) -> None:
    """`loaded` is in use: keep it, dropping the least recently used past MODELS_KEPT (under the lock)."""
    _models[key] = loaded
    _models.move_to_end(key)
    while len(_models) > MODELS_KEPT:
        _models.popitem(last=False)


def _load_ended(pending) -> None:
    """A background load ended (its thread calls this): keep its model when someone waits for it
    (or it is the one app.py started), else free it; a failed load stays until a Generate reads it,
    an abandoned one goes at once."""
    with _model_lock:
        if _loads.get(pending.name) is not pending:
            return
        if (
            pending.abandoned() and not _waiters[pending.name] and pending.name not in _kept_loads
        ):  # nobody reads why it ended
            del _loads[pending.name]
            pending.forget()
            return
        if pending.progress().error is not None:
            return
        del _loads[pending.name]
        if _waiters[pending.name] or pending.name in _kept_loads:
            _keep(pending.name, pending.result())
        else:
            pending.forget()


def start_loading(name: str = "", *, keep: bool = False) -> str:
    """Begin loading a model in a background thread, unless it is loaded or loading; return its key.

    `keep`: keep the model when its load ends even if no Generate waits for it (`python app.py`
    calls this at startup for its model, so the first Generate does not wait for it and the
    page can show how far the load is, `load_status`). Raises FolderError for a folder the
    server does not allow.
    """
    from .model import generation

    key = _model_key(name)
    with _model_lock:
        if keep:
            _kept_loads.add(key)
        if key not in _models and key not in _loads:
            _loads[key] = generation.BackgroundLoad(key, on_done=_load_ended)
    return key


@contextmanager
def waiting_for(key: str):
    """Count a Generate waiting for model `key`; a load nobody waits for any more is abandoned
    (ended at once when it has not started, its model freed when it ends)."""
    with _model_lock:
        _waiters[key] += 1
    try:
        yield
    finally:
        with _model_lock:
            _waiters[key] -= 1
            pending = _loads.get(key) if not _waiters[key] and key not in _kept_loads else None
            if not _waiters[key]:
                del _waiters[key]
        if pending is not None:
            pending.cancel()


def load_status(name: str = "") -> tuple[str, bool]:
    """The model's load for the page: (a one-line Markdown status, whether it has ended).

    Ended means loaded, failed or never started; a failed load is tried again by the
    next Generate.
    """
    try:
        key = _model_key(name)
    except FolderError:
        return "", True
    shown_name = shown(key)
    with _model_lock:
        if key in _models:
            loaded = _models[key]
            return f"✔ Model ready: {shown_name} (loaded in {loaded.load_seconds:.1f} s)", True
        pending = _loads.get(key)
    if pending is None:
        return "", True
    progress = pending.progress()
    if progress.error:
        return f"✘ Loading {shown_name} failed: {redact(progress.error)}", True
    if progress.done:
        return f"✔ Model ready: {shown_name} (loaded in {progress.seconds:.1f} s)", True
    from .model.generation import LOAD_STAGES

    step = (
        f", step {LOAD_STAGES.index(progress.stage) + 1} of {len(LOAD_STAGES)}"
        if progress.stage in LOAD_STAGES
        else ""
    )
    return (
        f"⏳ Loading {shown_name}: {progress.stage.lower()}… ({progress.seconds:.1f} s{step})",
        False,
    )


def get_model(name: str):
    """The loaded model (loading it now when no background load was started; waits for one
    that was). Raises playground.model.generation.ModelLoadError (or FolderError); a failed load is
    forgotten, so the next call tries again."""
    key = start_loading(name)
    with waiting_for(key):
        with _model_lock:
            if key in _models:
                _models.move_to_end(key)
                return _models[key]
            pending = _loads.get(key)
        if pending is None:  # it ended between the two looks
            return get_model(name)
        try:
            loaded = pending.result()
        finally:
            with _model_lock:
                if _loads.get(key) is pending:
                    del _loads[key]
        with _model_lock:
            _keep(key, loaded)
            return loaded


def conversation(system: str, user: str, messages_text: str) -> list[dict]:
    """The messages to render: the messages JSON when given, else system + user turns."""
    if messages_text and messages_text.strip():
        messages = read_json(messages_text, "The messages JSON", limits.current().tools_chars)
        if not isinstance(messages, list) or not all(
            isinstance(m, dict) and "role" in m for m in messages
        ):
            raise InputError(
                'The messages JSON must be a list like [{"role": "user", "content": "Hi"}].'
            )
        return messages
    if not (user or "").strip():
        raise InputError("Write a user message (or a messages JSON) first.")
    cap = limits.current().message_chars
    for what, text in (("user", user), ("system", system or "")):
        if len(text) > cap:
            raise InputError(
                f"The {what} message is too long: {len(text):,} characters (limit {cap:,}, PLAYGROUND_LIMITS message_chars)."
            )
    turns = [{"role": "system", "content": system}] if (system or "").strip() else []
    return turns + [{"role": "user", "content": user}]


def per_token_figures(live: LiveParse, tokens: int) -> list[tuple[str, str]]:
    """The per-token figures: a plain parser's time (the path library users get) and the
    tracing the page's views need, each divided by the tokens fed."""
    if not tokens:
        return [
            ("parse per token (plain parser)", "–"),
            ("tracing per token (extra, for the views)", "–"),
        ]
    plain = live.plain
    parse = (
        "stopped: the plain parser raised"
        if plain is None or plain.stopped
        else f"{plain.seconds / tokens * 1000:.3f} ms"
    )
    return [
        ("parse per token (plain parser)", parse),
        (
            "tracing per token (extra, for the views)",
            f"{live.parse_seconds / tokens * 1000:.3f} ms",
        ),
    ]


def _paced_wait(session: Session, due: float) -> bool:
    """Sleep until `due` (a perf_counter time), looking at Stop every PACE_STEP; True when Stop came."""
    while (left := due - time.perf_counter()) > 0:
        if session.stop_requested:
            return True
        time.sleep(min(left, PACE_STEP))
    return session.stop_requested


@produces("status")
def request_stop(session: Session) -> dict:
    """Stop: end this session's replay or live generation at its next chunk."""
    session.stop_requested = True
    return {}


@produces(
    *PARSE_VIEWS,
    "template_text",
    "template_choice",
    "prefix",
    "generation",
    "model_note",
    "chunking",
    *DERIVED_VIEWS,
)
def generate(
    model_name,
    system,
    user,
    messages_text,
    live_tools_text,
    enable_thinking,
    max_new_tokens,
    temperature,
    top_p,
    seed,
    use_model_template,
    template_text,
    session: Session,
    teaching_pace: bool = False,
):
    """Generate with a model and parse as tokens arrive.

    Yields the parse panels, and at the end the template (when the model's own is used),
    the prompt as prefix and the generation, at most every UPDATE_INTERVAL seconds plus
    once at the end; each update outlines the text and events added since the one before.
    With `teaching_pace`, tokens are shown TEACHING_TOKENS_PER_SECOND a second, one update
    each. Stop (`request_stop`) ends it at the next token; what was generated is then
    finalized like a finished generation.

    The "parse per token" figure times a plain parser (`PlainParse`: the path library users
    get), fed alongside the traced one the views are drawn from; "tracing per token" is the
    traced parser's time.
    """
    from .model import generation

    session.stop_requested = False
    caps = limits.current()
    try:
        messages = conversation(system, user, messages_text)
        tools = read_tools(live_tools_text)
        max_new_tokens = int(max_new_tokens)
        if not 1 <= max_new_tokens <= caps.max_new_tokens:
            raise InputError(f"max_new_tokens must be between 1 and {caps.max_new_tokens}.")
        template = read_template(template_text) if not use_model_template else None
    except (InputError, ValueError) as error:
        yield failed(str(error), session)
        return
    try:
        key = start_loading(model_name)
    except FolderError as error:
        yield failed(str(error), session)
        return
    with waiting_for(key):
        while True:
            loading, ended = load_status(model_name)
            if (
                session.stop_requested
            ):  # Stop while waiting: nobody else waiting, the load is abandoned
                session.stop_requested = False
                yield failed(
                    "■ Stopped waiting for the model; its load is abandoned unless someone else waits for it.",
                    session,
                )
                return
            if ended:
                break
            yield {"status": status_html(None, loading)}
            time.sleep(LOAD_POLL)
        try:
            loaded = get_model(model_name)
            template_note = ""
            if template is None:
                template, template_note = generation.choose_template(loaded)
            prompt = generation.render_prompt(
                loaded,
                messages,
                tools,
                enable_thinking=bool(enable_thinking),
                seconds=caps.chat_template_seconds,
                max_tokens=caps.prompt_tokens,
            )
            live = LiveParse(template, prompt.text, tools, plain=True)
        except (
            generation.ModelLoadError,
            LookupError,
            TemplateError,
            ResponseParseError,
            FolderError,
        ) as error:
            yield failed(redact(str(error)), session)
            return
    model_note = f"Model: {shown(loaded.name)}" + (
        f" — {redact(template_note)}" if template_note else ""
    )
    if teaching_pace:
        model_note += f" — teaching pace: {TEACHING_TOKENS_PER_SECOND} tokens a second, one update each (the model runs ahead)"
    chosen = {}
    if use_model_template:
        text = template_text_of(template)
        chosen = {
            "template_text": text,
            "template_choice": template_choice_for(text, session.template_origin or None),
        }
    started = time.perf_counter()
    tokens = 0
    last = 0.0
    shown_feeds = 0  # feeds drawn by the last update
    due = 0.0  # teaching pace: when the next token may be shown (perf_counter seconds)

    def snapshot(fresh_feeds: int = 1) -> ParseView:
        elapsed = time.perf_counter() - started
        return live.view(
            [
                ("tokens", str(tokens)),
                ("tokens/s", f"{tokens / elapsed:.1f}" if elapsed > 0 else "0"),
                *per_token_figures(live, tokens),
                ("elapsed", f"{elapsed:.1f} s"),
            ],
            fresh_feeds=fresh_feeds,
        )

    waited = time.perf_counter()
    while not generation_slots.acquire(timeout=LOAD_POLL):
        if session.stop_requested:
            session.stop_requested = False
            yield failed("■ Stopped waiting for another generation to end.", session)
            return
        yield {
            "status": status_html(
                None,
                f"⏳ Waiting for another visitor's generation to end… ({time.perf_counter() - waited:.0f} s)",
            )
        }
    pieces = generation.stream_generation(
        loaded,
        prompt,
        max_new_tokens=max_new_tokens,
        temperature=float(temperature),
        top_p=float(top_p),
        seed=None if seed is None or seed == "" else int(seed),
    )
    stopped = out_of_time = False
    ends = time.perf_counter() + caps.generate_seconds
    try:
        for piece in pieces:
            if session.stop_requested:
                stopped = True
                break
            if time.perf_counter() > ends:
                stopped = out_of_time = True
                break
            if teaching_pace:
                if _paced_wait(session, due):
                    stopped = True
                    break
                due = time.perf_counter() + 1 / TEACHING_TOKENS_PER_SECOND
            tokens += len(piece.ids)
            live.feed(piece.text)
            now = time.perf_counter()
            if teaching_pace or now - last >= UPDATE_INTERVAL:
                last = now
                session.view = view = snapshot(live.feeds - shown_feeds)
                shown_feeds = live.feeds
                session.display.log_page = 10**9  # follow the newest events
                yield {
                    **render(view, session, note=model_note, progress=f"{tokens} tokens"),
                    **chosen,
                    "model_note": model_note,
                }
    finally:
        pieces.close()
        generation_slots.release()
        session.stop_requested = False
    live.finalize()
    if stopped:
        why = (
            f" (the time budget PLAYGROUND_LIMITS generate_seconds, {caps.generate_seconds:g} s)"
            if out_of_time
            else ""
        )
        model_note = f"■ Stopped after {tokens} tokens{why}; the text so far is parsed as if generation had ended. {model_note}"
    session.view = session.last_good = view = snapshot()
    session.replay = None
    generated = "".join(live.parts)
    session.generated = (generated, [end - len(live.tail) for end in live.chunk_ends[:-1]])
    template_text = chosen.get("template_text", template_text)
    yield {
        **render(view, session, note=model_note),
        **chosen,
        "prefix": prompt.text,
        "generation": generated,
        "model_note": model_note,
        "chunking": "tokens",  # a replay of this text steps through the model's own tokens
        **stale_derived(session, template_text, prompt.text, generated, live_tools_text),
    }
