"""The app in a subprocess on a free loopback port, the Chromium flags this machine needs, and
pages whose waits do not depend on the browser painting."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from tests.support.paths import ROOT

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_app(
    extra_env: dict | None = None, root: Path = ROOT, patience: float = 120
) -> tuple[subprocess.Popen, str]:
    """Start app.py of checkout `root` on a free loopback port (with `extra_env` set); return
    (process, base URL) once it answers. RuntimeError when it exits or does not answer within
    `patience` seconds (it is then killed)."""
    port = free_port()
    env = {
        **os.environ,
        "GRADIO_SERVER_NAME": "127.0.0.1",
        "GRADIO_SERVER_PORT": str(port),
        "GRADIO_ANALYTICS_ENABLED": "False",
        **(extra_env or {}),
    }
    # TEST_SERVER_LOG=<file> keeps the servers' logs (appended), to read a failure's traceback.
    log = os.environ.get("TEST_SERVER_LOG")
    process = subprocess.Popen(
        [sys.executable, "app.py"],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=open(log, "a") if log else subprocess.DEVNULL,  # noqa: SIM115 - the child holds it
    )
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"app.py exited with {process.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return process, url
        except OSError:
            time.sleep(0.5)
    process.kill()
    process.wait()
    raise RuntimeError(f"app.py did not answer within {patience:g} s")


# How often a page's wait_for_function condition is tested, in milliseconds. Playwright's default
# tests it on every animation frame, and headless Chromium may run none for seconds (the wait then
# times out although its condition holds): a timer runs whether the page paints or not.
POLL_MS = 100


def polled(page):
    """`page` (a Playwright page), its wait_for_function testing the condition every POLL_MS
    rather than on each animation frame; returns the same page. A wait that times out says
    what the page's status line held then (what the page was doing instead)."""
    wait = page.wait_for_function

    def polled_wait(expression, **options):
        try:
            return wait(expression, **{"polling": POLL_MS, **options})
        except Exception as error:
            if type(error).__name__ != "TimeoutError":
                raise
            said = page.evaluate(
                "() => (document.querySelector('#status') || {}).innerText || '(no status line)'"
            )
            raise type(error)(
                f"{error.message.splitlines()[0]}: waiting for {expression} (the status line "
                f"said {' '.join(said.split())!r})"
            ) from error

    page.wait_for_function = polled_wait
    return page


def open_page(page, url: str, ready: str = "Parsed", timeout: float = 120_000) -> None:
    """Open the page and wait until the status says `ready` (for a deep link: the linked sample's id,
    which the page-load handler puts there)."""
    page.goto(url)
    page.wait_for_selector("#region-map-body")
    # The map's script has run: a click on it is heard (before, Gradio had not bound it yet).
    page.wait_for_selector("[data-bound] #region-map-body", state="attached")
    # The page script's listeners are in place (Enter in the scrubber, Ctrl+Enter, the re-parse
    # on a pause): Gradio runs it once its tree is ready, which can be after the sample is drawn.
    page.wait_for_selector("html[data-rt-page-script=ready]", state="attached", timeout=timeout)
    page.wait_for_function(
        "(ready) => document.querySelector('#status') && document.querySelector('#status').innerText.includes(ready)",
        arg=ready,
        timeout=timeout,
    )


def set_kept(box, value: str | bool, *, hold_ms: int = 300, tries: int = 5) -> None:
    """Fill the input `box` (a Playwright locator) with `value` (a str), or check or uncheck it
    (a bool), and make sure the page kept it.

    Gradio mounts the parts of a closed accordion or an unopened tab when they are first shown,
    waits one animation frame, then gives each the props it keeps for it: a box set inside that
    frame goes back to its stored value (seen as 300 -> 1 about 10 ms after the fill). No person
    types that fast, but a headless browser may run the frame late. The box is set again until
    it holds `value` for `hold_ms` milliseconds; AssertionError after `tries` settings.
    """
    page = box.page
    held = None
    for _ in range(tries):
        if isinstance(value, bool):
            box.set_checked(value)
        else:
            box.fill(value)
        page.wait_for_timeout(hold_ms)
        held = box.is_checked() if isinstance(value, bool) else box.input_value()
        if held == value:
            return
    raise AssertionError(f"the box kept {held!r}, not {value!r}, after {tries} settings")
