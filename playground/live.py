"""Generate live: run a model and parse its output as the tokens arrive.

The model code is `playground.generation` (imported lazily: it imports torch);
this module keeps the loaded models, builds the conversation from the page's
boxes, and streams `ParseView`s while generating.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as WaitTimeout

from engine import TemplateError
from engine.errors import ResponseParseError

from . import limits
from .catalog import template_choice_for, template_text_of
from .limits import InputError, read_json, read_template, read_tools
from .outputs import PARSE_VIEWS, failed, produces, render
from .parse_view import LiveParse, ParseView
from .session import Session
from .status import status_html

# Seconds between page updates while streaming (at most ~10 a second).
UPDATE_INTERVAL = 0.1
# Models kept loaded at once (the oldest is dropped first).
MODELS_KEPT = 2
# Seconds between looks at Stop while waiting for a model load or a generation slot.
WAIT_POLL = 0.25

_model_lock = threading.Lock()
# Model name -> its load (running or done). Loads run in their own threads, so a page waiting for
# one can still answer Stop, and a model already loaded is never behind another one's download.
_models: dict[str, Future] = {}
_loader = ThreadPoolExecutor(max_workers=limits.LOADS_AT_ONCE, thread_name_prefix="model-load")
generation_slots = threading.BoundedSemaphore(limits.GENERATIONS_AT_ONCE)


def start_loading(name: str) -> Future:
    """The load of model `name` ("" for the demo model), started unless it is running or done.

    The future's result is a `playground.generation.LoadedModel`; a failed load raises its
    `ModelLoadError` from `result()` and is tried again by the next call. Past MODELS_KEPT
    models, the oldest finished load is dropped.
    """
    from . import generation

    name = (name or "").strip() or str(generation.DEFAULT_MODEL_PATH)
    with _model_lock:
        future = _models.get(name)
        if future is None or (future.done() and future.exception() is not None):
            _models.pop(name, None)
            future = _models[name] = _loader.submit(generation.load_model, name)
            finished = [other for other, load in _models.items() if load.done() and other != name]
            while len(_models) > MODELS_KEPT and finished:
                _models.pop(finished.pop(0))
        return future


def get_model(name: str):
    """Load (once per process) and return a model; raises playground.generation.ModelLoadError."""
    return start_loading(name).result()


def conversation(system: str, user: str, messages_text: str) -> list[dict]:
    """The messages to render: the messages JSON when given, else system + user turns."""
    if messages_text and messages_text.strip():
        messages = read_json(messages_text, "The messages JSON", limits.current().tools_chars)
        if not isinstance(messages, list) or not all(isinstance(m, dict) and "role" in m for m in messages):
            raise InputError('The messages JSON must be a list like [{"role": "user", "content": "Hi"}].')
        return messages
    if not (user or "").strip():
        raise InputError("Write a user message (or a messages JSON) first.")
    turns = [{"role": "system", "content": system}] if (system or "").strip() else []
    return turns + [{"role": "user", "content": user}]


def _finished(work: Future, timeout: float) -> bool:
    """Whether `work` is done, waiting at most `timeout` seconds for it."""
    try:
        work.exception(timeout)
    except WaitTimeout:
        return False
    return True


def _wait(ready, doing: str, stopped: str, session: Session):
    """Wait until `ready(timeout)` (a callable waiting at most `timeout` seconds) returns True.

    Yields a status update ("`doing`… N s") at once and then every second; Stop ends the wait
    with "Stopped `stopped`". Returns (as the generator's value) True when ready, False when stopped.
    """
    started, last = time.perf_counter(), None
    while not ready(WAIT_POLL):
        now = time.perf_counter()
        if session.stop_requested:
            session.stop_requested = False
            yield {"status": status_html(None, f"■ Stopped {stopped}. Press Generate to start again.")}
            return False
        if last is None or now - last >= 1:
            last = now
            yield {"status": status_html(None, f"{doing}… {now - started:.0f} s")}
    return True


@produces("status")
def request_stop(session: Session) -> dict:
    """Stop: end this session's replay or live generation at its next chunk."""
    session.stop_requested = True
    return {}


@produces(*PARSE_VIEWS, "template_text", "template_choice", "prefix", "generation", "model_note")
def generate(
    model_name, system, user, messages_text, live_tools_text, enable_thinking, max_new_tokens, temperature, top_p, seed,
    use_model_template, template_text, session: Session,
):
    """Generate with a model and parse as tokens arrive.

    Yields the parse panels, and at the end the template (when the model's own is used),
    the prompt as prefix and the generation, at most every UPDATE_INTERVAL seconds plus
    once at the end. Stop (`request_stop`) ends it at the next token; what was generated
    is then finalized like a finished generation.
    """
    from . import generation

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
    shown = model_name or "the demo model"
    load = start_loading(model_name)
    loading = _wait(lambda timeout: _finished(load, timeout), f"Loading {shown} (cached after the first time)", f"loading {shown}", session)
    if not (yield from loading):
        return
    try:
        loaded = load.result()
        template_note = ""
        if template is None:
            template, template_note = generation.choose_template(loaded)
        prompt = generation.render_prompt(loaded, messages, tools, enable_thinking=bool(enable_thinking))
        live = LiveParse(template, prompt.text, tools)
    except (generation.ModelLoadError, LookupError, TemplateError, ResponseParseError) as error:
        yield failed(str(error), session)
        return
    model_note = f"Model: {loaded.name}" + (f" — {template_note}" if template_note else "")
    chosen = {}
    if use_model_template:
        text = template_text_of(template)
        chosen = {"template_text": text, "template_choice": template_choice_for(text, session.template_origin or None)}
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

    slot = _wait(lambda timeout: generation_slots.acquire(timeout=timeout), "Waiting for another generation to end", "waiting for a generation slot", session)
    if not (yield from slot):
        return
    pieces = generation.stream_generation(
        loaded, prompt, max_new_tokens=max_new_tokens, temperature=float(temperature), top_p=float(top_p),
        seed=None if seed is None or seed == "" else int(seed),
    )
    stopped = False
    try:
        for piece in pieces:
            if session.stop_requested:
                stopped = True
                break
            tokens += len(piece.ids)
            live.feed(piece.text)
            now = time.perf_counter()
            if now - last >= UPDATE_INTERVAL:
                last = now
                session.view = view = snapshot()
                session.display.log_page = 10**9  # follow the newest events
                yield {**render(view, session, note=model_note, progress=f"{tokens} tokens"), **chosen, "model_note": model_note}
    finally:
        pieces.close()
        generation_slots.release()
        session.stop_requested = False
    live.finalize()
    if stopped:
        model_note = f"■ Stopped after {tokens} tokens; the text so far is parsed as if generation had ended. {model_note}"
    session.view = session.last_good = view = snapshot()
    session.replay = None
    yield {
        **render(view, session, note=model_note), **chosen,
        "prefix": prompt.text, "generation": "".join(live.parts), "model_note": model_note,
    }

