"""A model loaded in a background thread, reporting how far it is: the first Generate (or the
page's load status) reads its progress while the page already shows.

    pending = BackgroundLoad(DEFAULT_MODEL_PATH)   # at startup; returns at once
    pending.progress()    # LoadProgress(fraction=0.25, stage="Loading the tokenizer", ...)
    loaded = pending.result()    # waits; raises ModelLoadError like load_model
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from engine.chat_templates.render import ModelLoadError

from .generation import DEFAULT_MODEL_PATH, LOAD_STAGES, LoadedModel, LoadProgress, load_model

# Model loads running at once over the process: a second waits for the first (its progress says so).
# A caller that holds a slot (`load_slots.acquire()`) keeps every new load waiting.
LOADS_AT_ONCE = 1
load_slots = threading.BoundedSemaphore(LOADS_AT_ONCE)
WAITING_STAGE = "Waiting for another model's load to end"


class BackgroundLoad:
    """`load_model(name)` running in a daemon thread, started by the constructor.

    For a UI that loads its model at startup and shows how far it is:
    poll `progress()` (cheap, any thread) and call `result()` where the
    model is needed (it waits for the load to end). At most `LOADS_AT_ONCE`
    loads run at once; the others wait (stage `WAITING_STAGE`). `cancel()`
    ends a load that has not started loading yet; `forget()` drops a finished
    one's model. `on_done(load)`, when given, is called from the thread once the
    load has ended.
    """

    def __init__(
        self,
        name: str | Path = DEFAULT_MODEL_PATH,
        *,
        on_done: Callable[["BackgroundLoad"], None] | None = None,
    ):
        self.name = str(name)
        self._started = time.perf_counter()
        self._progress = LoadProgress(0.0, WAITING_STAGE, 0.0)
        self._loaded: LoadedModel | None = None
        self._error: ModelLoadError | None = None
        self._cancelled = threading.Event()
        self._finished = threading.Event()
        self._on_done = on_done
        self._thread = threading.Thread(target=self._run, name="model-load", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        def report(progress: LoadProgress) -> None:
            self._progress = progress

        try:
            while not load_slots.acquire(timeout=0.25):
                if self._cancelled.is_set():
                    raise ModelLoadError(
                        f"the load of {self.name!r} was abandoned before it started"
                    )
            try:
                if self._cancelled.is_set():
                    raise ModelLoadError(
                        f"the load of {self.name!r} was abandoned before it started"
                    )
                self._progress = LoadProgress(
                    0.0, LOAD_STAGES[0], time.perf_counter() - self._started
                )
                self._loaded = load_model(self.name, progress=report)
            finally:
                load_slots.release()
            self._progress = LoadProgress(1.0, "Ready", self._loaded.load_seconds, done=True)
        except Exception as error:
            if not isinstance(
                error, ModelLoadError
            ):  # anything else transformers raised is still a failed load
                logging.getLogger(__name__).exception("loading %s failed", self.name)
                wrapped = ModelLoadError(f"could not load {self.name!r}: {error}")
                wrapped.__cause__ = error
                error = wrapped
            self._error = error
            self._progress = LoadProgress(
                1.0, "Failed", time.perf_counter() - self._started, done=True, error=str(error)
            )
        finally:
            self._finished.set()
            if self._on_done is not None:
                self._on_done(self)

    def cancel(self) -> None:
        """Nobody wants this load any more: end it now if it is still waiting to start."""
        self._cancelled.set()

    def abandoned(self) -> bool:
        """`cancel` was called: nobody wanted this load any more."""
        return self._cancelled.is_set()

    def forget(self) -> None:
        """Drop the loaded model (its memory is freed once nothing else refers to it)."""
        self._loaded = None

    def progress(self) -> LoadProgress:
        """Where the load is now (`seconds` keeps counting while it runs)."""
        progress = self._progress
        if progress.done:
            return progress
        return LoadProgress(progress.fraction, progress.stage, time.perf_counter() - self._started)

    def done(self) -> bool:
        """The load ended, successfully or not."""
        return self._finished.is_set()

    def result(self, timeout: float | None = None) -> LoadedModel:
        """The loaded model, once the load ends.

        Args:
            timeout: seconds to wait at most; None waits as long as it takes.

        Raises:
            ModelLoadError: the load failed (the same error on every call), or its model was forgotten.
            TimeoutError: the load did not end within `timeout`.
        """
        if not self._finished.wait(timeout):
            raise TimeoutError(f"loading {self.name!r} took more than {timeout} s so far")
        if self._error is not None:
            raise self._error
        if self._loaded is None:
            raise ModelLoadError(
                f"the load of {self.name!r} was abandoned: nobody was waiting for it"
            )
        return self._loaded
