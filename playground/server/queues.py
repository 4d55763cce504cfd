"""Queues: the kinds of work the page does, how many of each run at once and how many may wait.

`WORK` names the kinds; `app.py` passes `queue_options(kind)` to every listener,
so each kind gets its own slots and its own queue, and a parse never waits
behind a download or a generation (`playground.server.admission` refuses what
is over a queue or a client's share, `client_cap`, at once).
"""

from __future__ import annotations

from dataclasses import dataclass

from .limits import Limits, current


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


def client_cap(kind: str, caps: Limits | None = None) -> int:
    """Jobs of `kind` one client may have running or waiting: `client_parses` for parsing, else
    `client_jobs`; never more than half of the kind's slots (at least one)."""
    caps = caps or current()
    work = WORK[kind]
    wanted = caps.client_jobs if work.heavy else caps.client_parses
    return max(1, min(wanted, work.slots // 2))
