"""Visitors of a running app.py, for the load tests and scripts/bench_load.py.

- `api_client(url)`: a `gradio_client.Client` for the public API (`/parse`, `/load_sample`, `/replay`, `/generate`).
- `PageVisitor`: one open browser page without a browser. It talks to the server as the
  page's own script does (queue/join, then the queue's event stream), so it reaches the page's
  private listeners (Play, Parse...) and keeps a per-session `Session`; it holds the page's
  heartbeat open, and `close()` ends it as closing the tab does, which makes the server run
  its unload listener.
- `SilentEndpoint()`: a loopback address that accepts connections and never answers (a Hub that hangs).
- `server_rss_mb(pid)`: the resident memory of the server process, read from /proc.
- `timed(call)`: (seconds, result) of a call.
"""

from __future__ import annotations

import json
import queue
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

import httpx

API = "gradio_api"


def server_rss_mb(pid: int) -> float:
    """Resident set size of process `pid` in MB (VmRSS of /proc/PID/status)."""
    for line in open(f"/proc/{pid}/status", encoding="ascii"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def timed(call: Callable, *args, **kwargs) -> tuple[float, object]:
    started = time.perf_counter()
    result = call(*args, **kwargs)
    return time.perf_counter() - started, result


def api_client(url: str, address: str | None = None):
    """A `gradio_client.Client`; `address` sends it as X-Forwarded-For (a visitor of that address)."""
    import gradio_client

    return gradio_client.Client(
        url, verbose=False, headers={"X-Forwarded-For": address} if address else None
    )


class SilentEndpoint:
    """A loopback TCP server that accepts connections and never answers; `url` is its address."""

    def __init__(self) -> None:
        import socket

        self._server = socket.socket()
        self._server.bind(("127.0.0.1", 0))
        self._server.listen(64)
        self.url = f"http://127.0.0.1:{self._server.getsockname()[1]}"
        self._accepted: list = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        try:
            while True:
                self._accepted.append(self._server.accept()[0])
        except OSError:  # closed
            pass

    def close(self) -> None:
        for connection in self._accepted:
            connection.close()
        self._server.close()


class PageFailure(RuntimeError):
    """A page listener ended in an error on the server (the message is Gradio's)."""


class PageRefused(PageFailure):
    """The server refused to queue a page listener's job (the message is its reason)."""


class PageVisitor:
    """One page of the app, opened by a visitor (see the module docstring).

    Args:
        url: the app's base URL ("http://127.0.0.1:PORT/").
        config: the app's /config (fetched when not given; pass one to many visitors).
        headers: sent with every request (``X-Forwarded-For`` makes a visitor of another address,
            as the proxy in front of a Space does).
    """

    def __init__(
        self,
        url: str,
        config: dict | None = None,
        *,
        timeout: float = 120.0,
        headers: dict | None = None,
    ):
        self.http = httpx.Client(base_url=url, timeout=timeout, headers=headers or {})
        self.config = config or self.http.get("/config").json()
        self.session_hash = uuid.uuid4().hex[:12]
        self._components = {c["id"]: c for c in self.config["components"]}
        self._dependencies = {d.get("api_name"): d for d in self.config["dependencies"]}
        self._closed = threading.Event()
        self._runner = ThreadPoolExecutor(max_workers=2)
        self._lock = threading.Lock()
        self._pending: dict[
            str, queue.Queue
        ] = {}  # event id -> its messages (None: the stream ended)
        self._reader: threading.Thread | None = None
        self._heartbeat = threading.Thread(target=self._beat, daemon=True)
        self._heartbeat.start()

    def _beat(self) -> None:
        try:
            with self.http.stream(
                "GET", f"/{API}/heartbeat/{self.session_hash}", timeout=None
            ) as response:
                for _ in response.iter_lines():
                    if self._closed.is_set():
                        return
        except httpx.HTTPError:
            pass

    def _inputs(self, dependency: dict, values: dict) -> list:
        data = []
        for component_id in dependency["inputs"]:
            component = self._components[component_id]
            props = component.get("props", {})
            elem_id = props.get("elem_id")
            data.append(
                values[elem_id]
                if elem_id in values
                else (None if component["type"] == "state" else props.get("value"))
            )
        return data

    def run(
        self, listener: str, values: dict | None = None, *, timeout: float = 120.0
    ) -> list[dict]:
        """Trigger the page listener `listener` (its api name, e.g. "page_parse") with the page's
        values, those in `values` (keyed by elem_id) replaced; wait for it to end.

        Returns every update the listener sent, the last one last, each {elem_id: value} for the
        outputs it changed (an output left as it was is None).
        Raises PageFailure when the server reports an error.
        """
        dependency = self._dependencies[listener]
        body = {
            "data": self._inputs(dependency, values or {}),
            "event_data": None,
            "fn_index": dependency["id"],
            "trigger_id": None,
            "session_hash": self.session_hash,
        }
        with self._lock:
            joined = self.http.post(f"/{API}/queue/join", json=body)
            if (
                joined.status_code != 200
            ):  # refused at the door (admission), with the reason as detail
                raise PageRefused(f"{listener}: {joined.json().get('detail', joined.text)}")
            messages: queue.Queue = queue.Queue()
            self._pending[joined.json()["event_id"]] = messages
            if self._reader is None or not self._reader.is_alive():
                self._reader = threading.Thread(target=self._read, daemon=True)
                self._reader.start()
        outputs = []
        while True:
            message = messages.get(timeout=timeout)
            if message is None:
                raise PageFailure(f"{listener}: the event stream ended before the listener did")
            kind = message.get("msg")
            if kind in ("process_generating", "process_completed") and message.get("output"):
                if kind == "process_completed" and not message.get("success", True):
                    raise PageFailure(f"{listener}: {message['output'].get('error')}")
                names = [
                    self._components[i].get("props", {}).get("elem_id")
                    for i in dependency["outputs"]
                ]
                outputs.append(dict(zip(names, message["output"].get("data") or [])))
            if kind == "process_completed":
                return outputs

    def _read(self) -> None:
        """Read the session's event stream (one for all its listeners) while any is pending."""
        while True:
            try:
                with self.http.stream(
                    "GET",
                    f"/{API}/queue/data",
                    params={"session_hash": self.session_hash},
                    timeout=None,
                ) as stream:
                    for line in stream.iter_lines():
                        if not line.startswith("data:"):
                            continue
                        message = json.loads(line[5:])
                        with self._lock:
                            pending = self._pending.get(message.get("event_id"))
                            if message.get("msg") == "process_completed":
                                self._pending.pop(message.get("event_id"), None)
                        if pending is not None:
                            pending.put(message)
            except httpx.HTTPError:
                pass
            with self._lock:
                if not self._pending or self._closed.is_set():
                    for waiting in self._pending.values():
                        waiting.put(None)
                    self._pending.clear()
                    self._reader = None
                    return

    def open(self, query: dict | None = None) -> list[dict]:
        """Load the page at `?query` (a deep link) as the browser does: the page's load listeners,
        then what follows them. Returns the outputs of the last listener (`page_open_page`)."""
        load = next(d for d in self.config["dependencies"] if d.get("api_name") == "query_params")
        body = {
            "data": [],
            "event_data": None,
            "fn_index": load["id"],
            "trigger_id": None,
            "session_hash": self.session_hash,
        }
        answered = self.http.post(f"/{API}/run/predict", params=query or {}, json=body)
        answered.raise_for_status()
        return self.run("page_open_page")

    def start(self, listener: str, values: dict | None = None) -> Future:
        """`run` in a thread: the future of its outputs (for a listener that runs while others are sent)."""
        return self._runner.submit(self.run, listener, values)

    def close(self) -> None:
        """Close the page: the heartbeat ends, and the server frees the page's session."""
        self._closed.set()
        self._runner.shutdown(wait=False, cancel_futures=True)
        self.http.close()
        self._heartbeat.join(timeout=5)
