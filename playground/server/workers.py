"""Worker processes: third-party code with no timeout of its own, run where it can be killed.

A pasted chat template, a hub model's chat template and transformers' reference
parser can loop for minutes or allocate gigabytes, and a thread cannot be
stopped. So the server never runs them itself: `run_job(kind, payload, seconds=...)`
hands one job to a worker process (this module run as
``python -m playground.server.workers``), which reads it as JSON on stdin, writes the
result as JSON on stdout and exits. A worker that has not answered within
`seconds` is killed, and the outcome says it was cut off; its address space is
capped (PLAYGROUND_LIMITS `worker_mb`), so a job that allocates too much gets a
MemoryError instead of the machine's memory, and its CPU priority is lower than
the server's (`NICENESS`). One worker is started ahead, its
imports done, so a job does not wait for transformers to import.

Each kind of job (`JOBS`) has its own slots and its own queue (`queues.WORK`,
else `POOL_WORK`): a job past a full queue is refused at once. A new kind is one
entry in `JOBS`, a function ``job(payload: dict) -> dict`` that raises
`JobError` for what the visitor should read; any other exception is logged by
the worker and reported as a failed job, with no traceback or type name.

A worker never outlives its job: whatever ends `run_job` (an answer, its time
limit, an error of the server's own) ends the worker too. And one client (an
address, `admission.current_client`) may have only as many jobs in workers as
PLAYGROUND_LIMITS `client_worker_mb` holds of `worker_mb` each, so no visitor
holds most of the machine's memory in workers.
"""

from __future__ import annotations

import atexit
import importlib
import json
import logging
import os
import select
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import admission, limits, queues

ROOT = Path(__file__).resolve().parents[2]
# kind -> the job function, as "module:function" (imported by the worker only).
JOBS = {
    "conformance": "playground.authoring.chat_template_check:check_job",
    "reference": "playground.panels.reference_diff:reference_job",
    "chat_template": "playground.model.generation:render_job",
    "infer": "playground.authoring.inference:infer_job",
    "choose": "playground.model.generation:choose_job",
}
# Slots and queue of the kinds `queues.WORK` does not list (they run inside another kind's request).
POOL_WORK = {"chat_template": queues.WorkKind(1, 8, True), "choose": queues.WorkKind(1, 8, True)}
# The largest result a worker sends back (characters of JSON).
RESULT_CHARS = 8_000_000
# How much lower a worker's CPU priority is than the server's (os.nice): a job that loops, or a
# spare importing transformers, never slows the parses of other visitors much.
NICENESS = 10
# What a worker writes once its imports are done, and how long that may take (seconds).
READY = "ready"
START_SECONDS = 120
log = logging.getLogger("playground.server.workers")


class JobError(ValueError):
    """What a job function raises for a failure the visitor should read (the message is shown)."""


@dataclass
class JobOutcome:
    """How a job ended.

    Attributes:
        result: what the job function returned (JSON data), or None.
        error: why there is no result (the job's `JobError`, the time or memory limit, a busy
            queue, a crashed worker), or None.
        cut_off: the worker ran past `seconds` and was killed.
        seconds: wall time, waiting for a slot included.
    """

    result: Any = None
    error: str | None = None
    cut_off: bool = False
    seconds: float = 0.0


# -- the worker ---------------------------------------------------------------------


def _worker_main() -> None:
    """One job: read it from stdin, run it, write the result to stdout, exit."""
    import resource

    os.nice(NICENESS)  # the server's own requests come first when the CPU is short

    # Imported ahead, so a spare waiting for its job is warm: the job modules and what they use.
    from transformers import AutoTokenizer  # noqa: F401
    from transformers.utils import chat_parsing, chat_template_utils  # noqa: F401

    for target in JOBS.values():
        importlib.import_module(target.partition(":")[0])
    import engine.chat_templates.conformance  # noqa: F401
    from engine.chat_templates.render import install_bounded_sandbox

    install_bounded_sandbox()  # every chat template a job renders: no multiplication bombs

    out = sys.stdout
    sys.stdout = sys.stderr  # whatever a library prints stays off the result channel
    out.write(READY + "\n")  # the job's time limit counts from here, not from the imports
    out.flush()
    raw = sys.stdin.read()
    if not raw.strip():
        return  # the server went away before giving this spare a job
    job = json.loads(raw)
    memory = int(job["memory_mb"]) * 1024**2
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    # A backstop should the server die mid-job: CPU seconds (user and system, as the kernel
    # counts them against the limit), counted from the start.
    usage = resource.getrusage(resource.RUSAGE_SELF)
    used = usage.ru_utime + usage.ru_stime
    budget = int(used + job["seconds"]) + 2
    resource.setrlimit(resource.RLIMIT_CPU, (budget, budget + 1))
    module, _, name = JOBS[job["kind"]].partition(":")
    # The job functions raise this module's JobError as imported, not this __main__'s.
    raised = importlib.import_module("playground.server.workers").JobError
    try:
        result = {"result": getattr(importlib.import_module(module), name)(job["payload"])}
    except raised as error:
        result = {"error": str(error)}
    except MemoryError:
        result = {
            "error": f"the job ran out of memory (a worker may use {job['memory_mb']:,} MB, PLAYGROUND_LIMITS worker_mb)"
        }
    except Exception:  # noqa: BLE001 - logged here; the visitor reads that it failed, not how
        logging.basicConfig()
        log.exception("a %s job failed", job["kind"])
        result = {"error": "the job failed in its worker process (the server log has the details)"}
    text = json.dumps(result)  # ASCII: a lone surrogate in a result is written escaped
    if len(text) > RESULT_CHARS:
        text = json.dumps(
            {
                "error": f"the result is too large ({len(text):,} characters of JSON, limit {RESULT_CHARS:,})"
            }
        )
    out.write(text)
    out.flush()


# -- the pool -----------------------------------------------------------------------


class _Pool:
    """Starts worker processes, keeping one started ahead, and counts each kind's jobs."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._spare: subprocess.Popen | None = None
        self._slots: dict[str, threading.BoundedSemaphore] = {}
        self._jobs: dict[str, int] = {}  # kind -> jobs running or waiting
        self._held_mb: dict[str, int] = {}  # client -> worker memory of its jobs running or waiting
        self.running: set[subprocess.Popen] = set()

    @staticmethod
    def _start() -> subprocess.Popen:
        return subprocess.Popen(
            [sys.executable, "-m", "playground.server.workers"],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",  # what a library prints to stderr is only logged
        )

    def take(self) -> subprocess.Popen:
        """A worker for one job (the spare when it is alive), and a new spare for the next."""
        with self._lock:
            worker = self._spare if self._spare is not None and self._spare.poll() is None else None
            self._spare = self._start()
            worker = worker or self._start()
            self.running.add(worker)
            return worker

    def close_spare(self) -> None:
        """End the worker started ahead, if any, and close its pipes (at exit: it would outlive
        its parent until it read the end of its input)."""
        with self._lock:
            spare, self._spare = self._spare, None
        if spare is None:
            return
        if spare.poll() is None:
            spare.kill()
        spare.wait()
        for pipe in (spare.stdin, spare.stdout, spare.stderr):
            pipe.close()

    def done(self, worker: subprocess.Popen) -> None:
        with self._lock:
            self.running.discard(worker)

    def enter(self, kind: str) -> threading.BoundedSemaphore | None:
        """Count a job of `kind`: its slot semaphore, or None when the kind's queue is full."""
        work = queues.WORK.get(kind) or POOL_WORK[kind]
        with self._lock:
            if self._jobs.get(kind, 0) >= work.slots + work.waiting:
                return None
            self._jobs[kind] = self._jobs.get(kind, 0) + 1
            return self._slots.setdefault(kind, threading.BoundedSemaphore(work.slots))

    def leave(self, kind: str) -> None:
        with self._lock:
            self._jobs[kind] -= 1

    def reserve(self, client: str | None, memory_mb: int) -> str | None:
        """Count `memory_mb` of worker memory against `client`'s share; the refusal when it is
        over PLAYGROUND_LIMITS `client_worker_mb` (None: reserved, or no client to count)."""
        if client is None:
            return None
        share = limits.current().client_worker_mb
        with self._lock:
            held = self._held_mb.get(client, 0)
            if held and held + memory_mb > share:
                return (
                    f"you already have jobs in worker processes holding {held:,} MB of memory (at "
                    f"most {share:,} MB at once, PLAYGROUND_LIMITS client_worker_mb): wait for them to end"
                )
            self._held_mb[client] = held + memory_mb
        return None

    def release(self, client: str | None, memory_mb: int) -> None:
        if client is None:
            return
        with self._lock:
            left = self._held_mb.get(client, 0) - memory_mb
            if left > 0:
                self._held_mb[client] = left
            else:
                self._held_mb.pop(client, None)


_pool = _Pool()
atexit.register(_pool.close_spare)


def start_spare() -> None:
    """Start the spare worker now (the server does it at start-up, so the first job is warm)."""
    with _pool._lock:
        if _pool._spare is None or _pool._spare.poll() is not None:
            _pool._spare = _pool._start()


def running_workers() -> int:
    """Worker processes running a job now (the spare not counted)."""
    with _pool._lock:
        return sum(worker.poll() is None for worker in _pool.running)


def run_job(
    kind: str, payload: dict, *, seconds: float, memory_mb: int | None = None
) -> JobOutcome:
    """Run one job of `kind` (a key of `JOBS`) in a worker process, within `seconds`.

    Args:
        payload: the job function's argument (JSON data).
        seconds: the wall-time limit of the job, from when a started worker takes it (waiting for
            a slot may take as long again, a worker's start-up up to START_SECONDS); past it the
            worker is killed.
        memory_mb: the worker's address space (default PLAYGROUND_LIMITS `worker_mb`).

    Returns a `JobOutcome`; never raises for what the job does.
    """
    started = time.perf_counter()
    memory_mb = memory_mb or limits.current().worker_mb
    client = admission.current_client()
    refused = _pool.reserve(client, memory_mb)
    if refused is not None:
        return JobOutcome(error=refused)
    try:
        slots = _pool.enter(kind)
        if slots is None:
            return JobOutcome(
                error=f"too many jobs of this kind ({kind}) are waiting; try again in a moment"
            )
        try:
            if not slots.acquire(timeout=seconds):
                return JobOutcome(
                    error=f"cut off after {seconds:g} s",
                    cut_off=True,
                    seconds=time.perf_counter() - started,
                )
            try:
                return _run(kind, payload, seconds, memory_mb, started)
            finally:
                slots.release()
        finally:
            _pool.leave(kind)
    finally:
        _pool.release(client, memory_mb)


def _ready(worker: subprocess.Popen, timeout: float) -> bool:
    """Wait (at most `timeout` seconds) for a worker to finish its imports and say so."""
    found, _, _ = select.select([worker.stdout], [], [], max(0.0, timeout))
    return bool(found) and worker.stdout.readline().strip() == READY


def _run(kind: str, payload: dict, seconds: float, memory_mb: int, started: float) -> JobOutcome:
    job = {"kind": kind, "payload": payload, "seconds": seconds, "memory_mb": memory_mb}
    took = time.perf_counter()
    worker = _pool.take()
    try:
        if not _ready(worker, START_SECONDS):
            raise subprocess.TimeoutExpired(worker.args, START_SECONDS)
        # The job's time counts from here: a worker's start-up (importing transformers, at a low
        # priority) is the server's cost, bounded by START_SECONDS, and spares hide it.
        ready = time.perf_counter()
        log.info(
            "a %s job: %.1f s waiting for a slot, %.1f s for a worker",
            kind,
            took - started,
            ready - took,
        )
        # ASCII JSON: text the job holds that UTF-8 cannot encode (a lone surrogate) still goes.
        out, err = worker.communicate(json.dumps(job), timeout=seconds)
    except subprocess.TimeoutExpired:
        worker.kill()
        worker.communicate()
        return JobOutcome(
            error=f"cut off after {seconds:g} s",
            cut_off=True,
            seconds=time.perf_counter() - started,
        )
    finally:
        if worker.poll() is None:  # whatever ended the job (an error of the server's too)
            worker.kill()
            worker.wait()
        _pool.done(worker)
    elapsed = time.perf_counter() - started
    try:
        answer = json.loads(out)
    except json.JSONDecodeError:
        log.warning(
            "a %s worker stopped (exit status %s): %s",
            kind,
            worker.returncode,
            (err or "").strip()[-4000:],
        )
        if worker.returncode == -signal.SIGXCPU:
            # The CPU backstop fired: the job spent its time budget (in CPU seconds, which
            # threads can spend faster than the clock), so it was cut off like a timed-out one.
            return JobOutcome(error=f"cut off after {seconds:g} s", cut_off=True, seconds=elapsed)
        return JobOutcome(
            error="the worker process stopped before it answered (it may have passed its memory "
            f"limit, {memory_mb:,} MB, PLAYGROUND_LIMITS worker_mb)",
            seconds=elapsed,
        )
    if (
        answer.get("error") and (err or "").strip()
    ):  # the worker's own log (a traceback) goes to the server's
        log.warning("a %s job failed: %s\n%s", kind, answer["error"], err.strip()[-4000:])
    return JobOutcome(answer.get("result"), answer.get("error"), seconds=elapsed)


if __name__ == "__main__":
    _worker_main()
