"""The models kept loaded: loaded in the background, the least recently used dropped past
MODELS_KEPT, shared by every visitor (Generate live, the API, a tokenizer "Read as" asks for).

Each model is known by one key (`model_key`); `playground.model.generation` (imported lazily:
it imports torch) loads it.
"""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict
from contextlib import contextmanager
from typing import Any

from ..server.folders import FolderError, check_model_name, shown
from ..server.redact import redact
from .background import BackgroundLoad

# Models kept loaded at once (the least recently used is dropped first).
MODELS_KEPT = 2

_model_lock = threading.Lock()
_models: OrderedDict[str, Any] = (
    OrderedDict()
)  # name -> LoadedModel, at most MODELS_KEPT, least recently used first
_loads: dict[str, Any] = {}  # name -> playground.model.background.BackgroundLoad not yet collected
_waiters: Counter[str] = Counter()  # name -> Generates waiting for its load
_kept_loads: set[str] = (
    set()
)  # loads kept when they end with nobody waiting (the one app.py starts)


def model_key(name: str) -> str:
    """One name per model: the default for "", an allowed folder as its absolute path (so
    "samples/demo-model" and the startup load's path are the same model), else the hub id.
    Raises FolderError for a folder the server does not allow (the same for a missing one)."""
    from . import generation

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

    key = model_key(name)
    with _model_lock:
        if keep:
            _kept_loads.add(key)
        if key not in _models and key not in _loads:
            _loads[key] = BackgroundLoad(key, on_done=_load_ended)
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
        key = model_key(name)
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
    from .generation import LOAD_STAGES

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


def loaded_tokenizer():
    """The tokenizer of the model used last (loaded and kept), or None when none is loaded."""
    with _model_lock:
        if not _models:
            return None
        return next(reversed(_models.values())).tokenizer


def pending_load(key: str):
    """The background load of model `key` (`model_key`'s name: an allowed folder's absolute
    path, or a hub id) not yet collected by a Generate, or None: a
    `playground.model.background.BackgroundLoad`."""
    with _model_lock:
        return _loads.get(key)


def is_loaded(key: str) -> bool:
    """Whether model `key` (as for `pending_load`) is loaded and kept."""
    with _model_lock:
        return key in _models


def forget_model(key: str) -> None:
    """Drop loaded model `key` (as for `pending_load`), if kept: the next Generate loads it
    again. A load under way is not touched."""
    with _model_lock:
        _models.pop(key, None)
