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
before it is read (uploads have their own cap, `upload_mb`; an MCP message has a
lower one, `mcp_message_bytes`: the page's text limits, twice over).

`UnqueuedAdmission` admits what does not go through the queue: the listeners that
run at once (a tab chosen, Stop, the model's load status, the page's load), the
direct API routes and MCP messages (whose bodies `RequestSizeCap` caps at
`UNQUEUED_BODY_BYTES`, MCP messages at `mcp_message_bytes`). Each client (its address) may have
`UNQUEUED_AT_ONCE` of them running and send `UNQUEUED_PER_SECOND` a second (a
burst of `UNQUEUED_BURST`), and at most `UNQUEUED_BYTES_PER_SECOND` of their bodies;
past that it gets HTTP 429 at once. It also budgets the bytes sent to join the queue:
`JOIN_BYTES_PER_SECOND` a client, and `LARGE_BYTES_PER_SECOND` for everyone's bodies over
`LARGE_BODY_BYTES` (HTTP 503 past it), since Gradio reads every body on its event loop.
"""

from __future__ import annotations

import json
import re
import threading
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
        path = scope.get("path", "")
        upload = path.rstrip("/").endswith("/upload")
        mcp = "/mcp/" in path + "/"
        kind = "mcp" if mcp else "unqueued" if _unqueued(scope) else ""
        if kind == "mcp":
            cap = mcp_message_bytes(caps)
        elif kind == "unqueued":
            cap = UNQUEUED_BODY_BYTES
        else:  # room for the form's own fields
            cap = (caps.upload_mb if upload else caps.request_mb) * 1_000_000 + 65_536
        length = dict(scope.get("headers") or ()).get(b"content-length")
        # bytes: isdigit() is ASCII digits only, which int() reads
        if length is not None and length.isdigit() and int(length) > cap:
            return await _too_large(scope, receive, send, cap, kind)
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
            return await _too_large(scope, receive, send, cap, kind)


class _TooLarge(Exception):
    pass


def mcp_message_bytes(caps: limits.Limits | None = None) -> int:
    """The largest MCP message body the server reads (bytes): twice what the page's text boxes
    take together (the template, the prefix, the generation and the tools, each at its limit,
    with room for JSON's escapes), and 64 KB for the message around them. Far below
    `request_mb`: the MCP server reads and checks a message on the server's event loop, where
    every other request waits meanwhile."""
    caps = caps or limits.current()
    texts = caps.template_chars + caps.prefix_chars + caps.generation_chars + caps.tools_chars
    return 2 * texts + 65_536


async def _too_large(scope, receive, send, cap: int, kind: str = "") -> None:
    """Refuse a body over `cap` bytes (HTTP 413), saying which cap: of an MCP message (`kind`
    "mcp"), of a route outside the queue ("unqueued"), or of any other request."""
    if kind == "mcp":
        what = (
            f"The MCP message is too large (limit {cap / 1_000_000:.1f} MB: twice the page's text "
            "limits, PLAYGROUND_LIMITS template_chars, prefix_chars, generation_chars and "
            "tools_chars)."
        )
    elif kind == "unqueued":
        what = (
            f"The request is too large for a route outside the queue (limit {cap // 1_000} KB): "
            "send texts through the queue (/gradio_api/queue/join, or the API's /call routes)."
        )
    else:
        what = (
            f"The request is too large (limit {cap // 1_000_000} MB, PLAYGROUND_LIMITS request_mb "
            "or upload_mb)."
        )
    await send_refusal(scope, receive, send, 413, what)


# The largest body of a request outside the queue but MCP messages (bytes): the page's listeners
# that run at once send an event's data and short texts (a tab's id, a model's name). Gradio
# reads a body on the server's event loop, where every other request waits meanwhile.
UNQUEUED_BODY_BYTES = 65_536
# Requests of one client that do not go through the queue: at most this many running at once,
# this many a second (and a burst of UNQUEUED_BURST), and their bodies at most this many bytes
# a second (a burst of twice that).
UNQUEUED_AT_ONCE = 4
UNQUEUED_PER_SECOND = 10.0
UNQUEUED_BURST = 30
UNQUEUED_BYTES_PER_SECOND = 8_000_000
# The routes that run without the queue (after Gradio's /gradio_api prefix, if any): the page's
# listeners that run at once and the direct API (/run, /api), component functions, cancel and
# reset, Gradio's deep links, and MCP messages (POST only: an MCP event stream is a GET).
UNQUEUED_ROUTES = re.compile(
    r"^(?:/gradio_api)?/(?:run|api|component_server|cancel|reset|deep_link|mcp)(?:/|$)"
)
# Clients whose last request is older than this are forgotten (seconds), once there are
# more than FORGET_PAST of them.
FORGET_SECONDS = 60.0
FORGET_PAST = 10_000


# What the queue's routes (joining the queue, the API's /call) may be sent: each client at most
# this many bytes a second (a burst of twice that), and everyone together this many bytes a
# second in bodies over LARGE_BODY_BYTES (a burst of twice that). Gradio reads and checks a body
# on the server's event loop: a flood of big ones, even refused at the door, would hold up
# everyone's requests; small bodies (a parse of a sample) never wait for big ones.
JOIN_BYTES_PER_SECOND = 16_000_000
LARGE_BODY_BYTES = 1_000_000
LARGE_BYTES_PER_SECOND = 48_000_000
JOIN_ROUTES = re.compile(r"^(?:/gradio_api)?/(?:queue/join|call/)")


class ByteBudget:
    """Token buckets of bytes by key: `rate` bytes a second, up to `2 * rate` saved."""

    def __init__(self, rate: float) -> None:
        self.rate = rate
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, when)
        self._lock = threading.Lock()

    def take(self, key: str, size: int, now: float | None = None, dry: bool = False) -> bool:
        """Take `size` bytes from `key`'s bucket; False (nothing taken) when it holds fewer.
        `dry`: only say whether it could."""
        now = time.monotonic() if now is None else now
        with self._lock:
            if len(self._buckets) > FORGET_PAST:
                self._buckets = {
                    k: v for k, v in self._buckets.items() if now - v[1] <= FORGET_SECONDS
                }
            tokens, at = self._buckets.get(key, (2.0 * self.rate, now))
            tokens = min(2.0 * self.rate, tokens + max(0.0, now - at) * self.rate)
            if size > tokens or dry:
                self._buckets[key] = (tokens, now)
                return size <= tokens
            self._buckets[key] = (tokens - size, now)
            return True


class _Allowance:
    """One client's allowance: requests running, and the tokens of its two buckets."""

    __slots__ = ("running", "requests", "bytes", "at")

    def __init__(self, now: float) -> None:
        self.running = 0
        self.requests = float(UNQUEUED_BURST)
        self.bytes = 2.0 * UNQUEUED_BYTES_PER_SECOND
        self.at = now


class UnqueuedAdmission:
    """ASGI middleware: per-client admission of the requests that do not go through the queue
    (`UNQUEUED_ROUTES`; see the module docstring). A request over the client's share gets HTTP
    429 before its body is read, with a message saying which share and to wait."""

    def __init__(self, app) -> None:
        self.app = app
        self._clients: dict[str, _Allowance] = {}
        self._lock = threading.Lock()
        self._joins = ByteBudget(JOIN_BYTES_PER_SECOND)
        self._large = ByteBudget(LARGE_BYTES_PER_SECOND)

    def refusal(self, address: str, body_bytes: int, now: float | None = None) -> str | None:
        """Why one more request of `body_bytes` (its declared length, 0 when unknown) from client
        `address` may not run now, or None (it then counts as running until `done`)."""
        now = time.monotonic() if now is None else now
        with self._lock:
            if len(self._clients) > FORGET_PAST:
                for key in [
                    k
                    for k, a in self._clients.items()
                    if not a.running and now - a.at > FORGET_SECONDS
                ]:
                    del self._clients[key]
            allowance = self._clients.setdefault(address, _Allowance(now))
            passed = max(0.0, now - allowance.at)
            allowance.at = now
            allowance.requests = min(
                float(UNQUEUED_BURST), allowance.requests + passed * UNQUEUED_PER_SECOND
            )
            allowance.bytes = min(
                2.0 * UNQUEUED_BYTES_PER_SECOND,
                allowance.bytes + passed * UNQUEUED_BYTES_PER_SECOND,
            )
            if allowance.running >= UNQUEUED_AT_ONCE:
                return (
                    f"You already have {allowance.running} requests running outside the queue "
                    f"(at most {UNQUEUED_AT_ONCE} at once): wait for them to end."
                )
            if allowance.requests < 1:
                return (
                    f"Too many requests from your address (at most {UNQUEUED_PER_SECOND:g} a "
                    "second outside the queue): wait a moment."
                )
            if body_bytes > allowance.bytes:
                return (
                    f"Too much sent from your address (at most "
                    f"{UNQUEUED_BYTES_PER_SECOND / 1_000_000:g} MB a second outside the queue): "
                    "wait a moment."
                )
            allowance.requests -= 1
            allowance.bytes -= body_bytes
            allowance.running += 1
            return None

    def join_refusal(self, scope, now: float | None = None) -> tuple[int, str] | None:
        """(HTTP status, why) a request joining the queue is refused before its body is read, or
        None: its client's bytes (`JOIN_BYTES_PER_SECOND`), and a body over `LARGE_BODY_BYTES`
        everyone's (`LARGE_BYTES_PER_SECOND`). A body of undeclared length is counted by
        `RequestSizeCap` alone."""
        from starlette.requests import Request

        length = dict(scope.get("headers") or ()).get(b"content-length")
        size = int(length) if length is not None and length.isdigit() else 0
        if not size:
            return None
        address = client_address(Request(scope))
        if not self._joins.take(address, size, now, dry=True):
            return 429, (
                f"Too much sent from your address (at most "
                f"{JOIN_BYTES_PER_SECOND / 1_000_000:g} MB a second to the queue): wait a moment."
            )
        if size > LARGE_BODY_BYTES and not self._large.take("", size, now):
            return 503, (
                f"The server is receiving too much large input right now (at most "
                f"{LARGE_BYTES_PER_SECOND / 1_000_000:g} MB a second in requests over "
                f"{LARGE_BODY_BYTES / 1_000_000:g} MB, from everyone): try again in a moment."
            )
        self._joins.take(address, size, now)
        return None

    def done(self, address: str, undeclared_bytes: int = 0) -> None:
        """A request `refusal` admitted has ended; `undeclared_bytes` of its body came without a
        declared length (they are taken from the client's allowance now)."""
        with self._lock:
            allowance = self._clients.get(address)
            if allowance is not None:
                allowance.running = max(0, allowance.running - 1)
                allowance.bytes -= undeclared_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and _joining(scope):
            refused = self.join_refusal(scope)
            if refused is not None:
                return await send_refusal(scope, receive, send, *refused)
            return await self.app(scope, receive, send)
        if scope["type"] != "http" or not _unqueued(scope):
            return await self.app(scope, receive, send)
        from starlette.requests import Request

        address = client_address(Request(scope))
        length = dict(scope.get("headers") or ()).get(b"content-length")
        declared = length is not None and length.isdigit()
        refused = self.refusal(address, int(length) if declared else 0)
        if refused is not None:
            return await send_refusal(scope, receive, send, 429, refused)
        seen = 0

        async def counted():
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
            return message

        try:
            return await self.app(scope, receive if declared else counted, send)
        finally:
            self.done(address, 0 if declared else seen)


def _joining(scope) -> bool:
    """Whether the request of ASGI `scope` joins the queue (`JOIN_ROUTES`, POST)."""
    path = scope.get("path", "")
    root = scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root) :]
    return scope.get("method") == "POST" and bool(JOIN_ROUTES.match(path))


def _unqueued(scope) -> bool:
    """Whether the request of ASGI `scope` is one `UnqueuedAdmission` admits."""
    path = scope.get("path", "")
    root = scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root) :]
    if not UNQUEUED_ROUTES.match(path):
        return False
    return scope.get("method") == "POST" or "/mcp" not in path


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
