"""One time budget over all of a tool's regex calls (lint, diagnosis, a trace's warnings).

An author's tools run a template's patterns on probes and on the parsed text, each call
bounded by its own `timeout`; but a tool makes many calls (every pattern on dozens of
probes, every place of a long text), and a pattern that takes just under its timeout each
time adds up to minutes. `deadline_in_force(deadline)` sets a `time.perf_counter()` value
for the tool's work in this thread (the earlier one wins when tools nest), and
`regex_timeout(most)` is what the next call may take: `most`, or less when the deadline
is nearer. Once it has passed, `regex_timeout` raises `TimeoutError`, as a regex call over
its timeout does, so every caller's existing "too slow to tell" branch ends the work at once.

The deadline lives in a context variable: each thread (each request of a server) has its own.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_deadline: ContextVar[float | None] = ContextVar("authoring_deadline", default=None)


@contextmanager
def deadline_in_force(deadline: float | None) -> Iterator[None]:
    """Bound every `regex_timeout` in this block by `deadline` (None: no bound beyond an outer one)."""
    outer = _deadline.get()
    if deadline is None or (outer is not None and outer <= deadline):
        yield
        return
    token = _deadline.set(deadline)
    try:
        yield
    finally:
        _deadline.reset(token)


def regex_timeout(most: float) -> float:
    """Seconds the next regex call may take: `most`, or what is left of the deadline in force.

    Raises:
        TimeoutError: the deadline has passed.
    """
    deadline = _deadline.get()
    if deadline is None:
        return most
    left = deadline - time.perf_counter()
    if left <= 0:
        raise TimeoutError("the tool's time budget is spent")
    return min(most, left)


def out_of_time() -> bool:
    """Whether the deadline in force has passed (False without one)."""
    deadline = _deadline.get()
    return deadline is not None and time.perf_counter() >= deadline
