"""Admission: who may add a job to the server's queues, decided before the job is queued or its input read.

Gradio keeps one queue per concurrency group; `app.py` gives each kind of work
(`queues.WORK`) its own group. `install(blocks)` puts a check in front of
Gradio's queue, so a request is refused at once, with a message saying why,
when

- its kind's queue already holds `WorkKind.waiting` jobs (a flood of one kind
  never refuses another);
- its client already has its share of that kind running or waiting
  (`queues.client_cap`): a client is a page session, and an address over all
  its sessions and API calls (`client_address`);
- its page session already has `session_jobs` heavy jobs running and one more
  waiting.

Refused requests get HTTP 503 with the message as the error's detail (the page
shows it; `gradio_client` raises it). Everyone else keeps their place.

Gradio's MCP server calls the endpoints for every MCP caller through one client of
its own, so all its calls share one page session: here each MCP caller's address is
its session (`session_key`), and its refusals go back as a validation error, the one
kind of refusal whose message Gradio's client passes on to the MCP caller.

`RequestSizeCap` refuses a request body over PLAYGROUND_LIMITS `request_mb`
before it is read (uploads have their own cap, `upload_mb`).
"""

from __future__ import annotations

import json
import time
from typing import Any

from starlette.responses import Response

from . import limits, queues

# How long a thread may hold Python's interpreter lock while another waits for it (seconds). The
# regex module lets go of the lock while it matches and takes it back after, so each regex call
# of a parse may wait this long while other requests run: at Python's default, 5 ms, a parse of
# the default sample took up to 2.3 s beside four busy threads (its regex calls ran past their
# time budget); at 1 ms, at most 0.15 s, with the busy threads' work unchanged.
SWITCH_SECONDS = 0.001
# Extra heavy jobs a page session may have waiting beyond the `session_jobs` running.
SESSION_WAITING = 1
# The longest a heavy job waits for running parses in one `make_way` (seconds).
MAKE_WAY_SECONDS = 0.05
# Work kinds shown in refusals.
_NAMES = {
    "parse": "parses",
    "replay": "replays",
    "model": "generations",
    "export": "exports",
    "conformance": "chat-template checks",
    "reference": "comparisons with transformers",
    "fit": "template fits",
}


def client_address(request: Any) -> str:
    """The address a request comes from: the peer, or with PLAYGROUND_LIMITS `proxy_hops` N the
    N-th address from the right of X-Forwarded-For (what the last of N trusted proxies saw)."""
    hops = limits.current().proxy_hops
    peer = getattr(getattr(request, "client", None), "host", None) or "unknown"
    if hops <= 0:
        return peer
    headers = getattr(request, "headers", None) or {}
    seen = [
        part.strip() for part in (headers.get("x-forwarded-for") or "").split(",") if part.strip()
    ]
    return seen[-hops] if len(seen) >= hops else (seen[0] if seen else peer)


def current_client() -> str | None:
    """The address of the client whose request this thread is serving (Gradio notes each
    listener's request in its context), or None outside a request."""
    from gradio.context import LocalContext

    request = LocalContext.request.get(None)
    return None if request is None else client_address(request)


# The user Gradio's MCP server names in the calls it makes for its callers.
MCP_USER = "mcp"


def _from_mcp(request: Any) -> bool:
    headers = getattr(request, "headers", None) or {}
    return headers.get("x-gradio-user") == MCP_USER


def session_key(session_hash: str | None, request: Any) -> str | None:
    """The page session a job counts against: its Gradio session, or for a call Gradio's MCP
    server makes for an MCP caller, that caller's address (the MCP server's own client has
    one session for all of them)."""
    if request is not None and _from_mcp(request):
        return f"{MCP_USER}@{client_address(request)}"
    return session_hash


def _events(queue, kind: str) -> tuple[list, list]:
    """(waiting, running) events of concurrency group `kind`."""
    group = queue.event_queue_per_concurrency_id.get(kind)
    waiting = list(group.queue) if group is not None else []
    running = [
        event
        for job in list(queue.active_jobs)
        if job
        for event in job
        if event.concurrency_id == kind
    ]
    return waiting, running


def refusal(queue, kind: str, session: str | None, address: str) -> str | None:
    """Why a new job of `kind` from this session (`session_key`) and address may not be queued
    now, or None."""
    work = queues.WORK.get(kind)
    if work is None:
        return None
    caps = limits.current()
    name = _NAMES.get(kind, kind)
    waiting, running = _events(queue, kind)
    if len(waiting) >= work.waiting:
        return f"The server is busy with {name}: {len(waiting)} are waiting (at most {work.waiting}). Try again in a moment."
    mine = [event for event in waiting + running if _address(event) == address]
    cap = queues.client_cap(kind)
    if len(mine) >= cap:
        setting = "client_jobs" if work.heavy else "client_parses"
        return (
            f"You already have {len(mine)} {name} running or waiting (at most {cap} at once, PLAYGROUND_LIMITS "
            f"{setting}): wait for them to end."
        )
    if work.heavy and session:
        heavy = [
            event
            for heavy_kind in queues.HEAVY_WORK
            for event in sum(_events(queue, heavy_kind), [])
            if session_key(event.session_hash, event.request) == session
        ]
        allowed = caps.session_jobs + SESSION_WAITING
        if len(heavy) >= allowed:
            return (
                f"This page already has {len(heavy)} jobs running or waiting (at most {allowed}; PLAYGROUND_LIMITS "
                "session_jobs): press Stop or wait for them to end."
            )
    return None


def _address(event) -> str:
    return client_address(event.request) if event.request is not None else "unknown"


_installed: list = []  # the queue `install` checks in front of


def parses_running() -> int:
    """Parses (the "parse" kind) running now over the server (0 before `install`)."""
    if not _installed:
        return 0
    return len(_events(_installed[0], "parse")[1])


def make_way(longest: float = MAKE_WAY_SECONDS) -> None:
    """Let running parses go first: a heavy job's loop calls this now and then, and waits while
    any parse runs (at most `longest` seconds a call, so heavy work is slowed, never stopped).
    Python runs one thread at a time: without it, a replay would take half of a parse's time."""
    ends = time.perf_counter() + longest
    while parses_running() and time.perf_counter() < ends:
        time.sleep(0.002)


def install(blocks) -> None:
    """Check every job before Gradio queues it (see the module docstring); call after `blocks.queue()`."""
    queue = blocks._queue
    push = queue.push
    _installed[:] = [queue]

    async def admitted(body, request, username):
        fn = blocks.fns.get(body.fn_index) if body.fn_index is not None else None
        if fn is not None:
            session = session_key(body.session_hash, request)
            refused = refusal(queue, fn.concurrency_id, session, client_address(request))
            if refused is not None and _from_mcp(request):
                detail = {"__type__": "validate", "is_valid": False, "message": refused}
                return False, [{**detail, "parameter_name": "admission"}], "validator_error"
            if refused is not None:
                return False, refused, "queue_full"
        return await push(body, request, username)

    queue.push = admitted


class RequestSizeCap:
    """ASGI middleware: a request body over `request_mb` (or `upload_mb` for an upload) gets HTTP 413
    before the application reads it; a body without a length is counted as it arrives."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        caps = limits.current()
        upload = scope.get("path", "").rstrip("/").endswith("/upload")
        cap = (
            caps.upload_mb if upload else caps.request_mb
        ) * 1_000_000 + 65_536  # room for the form's own fields
        length = dict(scope.get("headers") or ()).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > cap:
            return await _too_large(scope, receive, send, cap)
        seen = 0

        async def counted():
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > cap:
                    raise _TooLarge
            return message

        try:
            return await self.app(scope, counted, send)
        except _TooLarge:
            return await _too_large(scope, receive, send, cap)


class _TooLarge(Exception):
    pass


async def _too_large(scope, receive, send, cap: int) -> None:
    await send_refusal(
        scope,
        receive,
        send,
        413,
        f"The request is too large (limit {cap // 1_000_000} MB, PLAYGROUND_LIMITS request_mb or "
        "upload_mb).",
    )


async def send_refusal(scope, receive, send, status: int, detail: str) -> None:
    """Answer the HTTP request of ASGI `scope` with `status` (413, 429, ...) and the JSON body
    ``{"detail": detail}``, the shape of Gradio's own errors, so the page shows `detail` and
    `gradio_client` raises it; for the middleware here (`RequestSizeCap`, `uploads.UploadQuota`).

    The answer says ``Connection: close``, so the server stops reading a body that was refused
    instead of draining it.
    """
    body = json.dumps({"detail": detail})
    response = Response(
        body, status_code=status, media_type="application/json", headers={"connection": "close"}
    )
    await response(scope, receive, send)
