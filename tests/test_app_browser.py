"""The playground end to end: the app in a subprocess, Debian's Chromium driven by Playwright.

Each step saves a screenshot under the test's tmp_path; assertion messages name it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from playground.catalog import DEFAULT_SAMPLE
from engine.samples import load_samples

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"]

playwright_api = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium at /usr/bin/chromium")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_app() -> tuple[subprocess.Popen, str]:
    """Start app.py on a free loopback port; return (process, base URL) once it answers."""
    port = free_port()
    env = {**os.environ, "GRADIO_SERVER_NAME": "127.0.0.1", "GRADIO_SERVER_PORT": str(port), "GRADIO_ANALYTICS_ENABLED": "False"}
    process = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 120
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
    raise RuntimeError("app.py did not answer within 120 s")


@pytest.fixture(scope="module")
def app_url():
    process, url = start_app()
    yield url
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()


@pytest.fixture(scope="module")
def browser():
    with playwright_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, app_url):
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(30_000)
    yield page
    context.close()


class Shots:
    """Saves numbered screenshots; `where()` gives the paths for assertion messages."""

    def __init__(self, page, folder: Path):
        self.page, self.folder, self.paths = page, folder, []

    def take(self, name: str) -> Path:
        path = self.folder / f"{len(self.paths) + 1:02d}-{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        self.paths.append(path)
        return path

    def where(self) -> str:
        return "screenshots: " + ", ".join(str(p) for p in self.paths)


def open_page(page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("#region-map-body")
    page.wait_for_function("() => document.querySelector('#status') && document.querySelector('#status').innerText.includes('Parsed')")


def code_text(page, elem_id: str) -> str:
    return page.locator(f"#{elem_id} .cm-content").inner_text()


def status_text(page) -> str:
    return page.locator("#status").inner_text()


def test_sample_in_paste_mode_shows_regions_and_message(page, app_url, tmp_path):
    shots = Shots(page, tmp_path)
    sample = next(s for s in load_samples() if s.id == "hermes-2-pro/text-then-tool-calls")
    open_page(page, app_url)
    shots.take("first-screen")
    # One click on the case in the samples table loads it, template and all.
    page.locator("#sample-picker input").click()
    page.locator("#sample-picker input").fill(sample.id)
    page.get_by_role("option", name=sample.id).click()
    page.wait_for_function(
        "(name) => document.querySelector('#status').innerText.includes(name)", arg=sample.id
    )
    page.get_by_role("tab", name="Paste & parse").click()
    page.wait_for_selector("#generation textarea")
    shots.take("sample-loaded")
    assert page.locator("#generation textarea").input_value() == sample.generation, shots.where()
    titles = page.locator("#region-map-body span[title]").evaluate_all("(spans) => spans.map(s => s.title)")
    opens = [t for t in titles if t.startswith("tool_calls · open")]
    closes = [t for t in titles if t.startswith("tool_calls · close")]
    assert len(opens) == len(sample.expected["tool_calls"]) == len(closes), (titles, shots.where())
    assert any(t.startswith("content · body") for t in titles), shots.where()
    shown = json.loads(code_text(page, "message-json"))
    assert shown == sample.expected, shots.where()


@pytest.mark.skipif(not (ROOT / "samples" / "demo-model" / "config.json").exists(), reason="demo model not built")
def test_live_generation_streams_events_then_shows_the_message(page, app_url, tmp_path):
    shots = Shots(page, tmp_path)
    open_page(page, app_url)
    page.get_by_role("tab", name="Event log").click()
    page.get_by_role("tab", name="Generate live").click()
    page.locator("#enable-thinking input").check()
    # Record every page update: was the generation still streaming, how many events were shown?
    page.evaluate(
        """() => {
        window.__updates = [];
        new MutationObserver(() => window.__updates.push({
            live: !!document.querySelector('.rt-status-live'),
            rows: document.querySelectorAll('#event-log-table tbody tr td:nth-child(3)').length,
        })).observe(document.body, {subtree: true, childList: true, characterData: true});
    }"""
    )
    page.locator("#generate-button").click()
    # The last update fills the model note under the Generate button.
    page.wait_for_function("() => document.querySelector('#model-note').innerText.includes('Model:')", timeout=150_000)
    page.wait_for_function("() => !document.querySelector('.rt-status-live')", timeout=150_000)
    shots.take("finished")
    updates = page.evaluate("() => window.__updates")
    streaming_rows = [u["rows"] for u in updates if u["live"]]
    assert streaming_rows and max(streaming_rows) >= 2, (streaming_rows[:20], shots.where())
    status = status_text(page)
    message = code_text(page, "message-json")
    assert "Parsed" in status, (status, shots.where())
    assert json.loads(message)["role"] == "assistant", shots.where()
    figures = page.locator("#live-figures").inner_text()
    assert "tokens/s" in figures, shots.where()


def test_invalid_template_shows_the_error_and_the_page_keeps_working(page, app_url, tmp_path):
    shots = Shots(page, tmp_path)
    open_page(page, app_url)
    page.get_by_role("tab", name="Template").click()
    editor = page.locator("#template-editor .cm-content")
    editor.click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.type('{"start_anchor": "<s>", "fields": {"x": {"open": "<x>", "content": "yaml"}}}')
    page.wait_for_function("() => document.querySelector('#template-diagnostics').innerText.includes('fields.x.content')")
    page.wait_for_function("() => document.querySelector('#status').innerText.includes('fields.x.content')")
    shots.take("invalid-template")
    assert "⛔" in page.locator("#template-diagnostics").inner_text(), shots.where()
    # The dropdown no longer names the template file the editor started from; Reset brings it back.
    page.get_by_role("tab", name="Paste & parse").click()
    started_from = next(s.template_name for s in load_samples() if s.id == DEFAULT_SAMPLE)  # qwen3 (demo-model has the same text)
    page.wait_for_function("() => document.querySelector('#template-choice input').value === '(edited in the Template tab)'")
    page.get_by_role("tab", name="Template").click()
    page.locator("#reset-button").click()
    page.get_by_role("tab", name="Paste & parse").click()
    page.wait_for_function("(name) => document.querySelector('#template-choice input').value === name", arg=started_from)
    page.get_by_role("tab", name="Template").click()
    editor.click()
    page.keyboard.press("Control+A")
    page.keyboard.type("{not json")
    page.wait_for_function("() => document.querySelector('#status').innerText.includes('not valid JSON')")
    shots.take("not-json")
    # The page still works: load another sample from the table.
    page.get_by_role("tab", name="Samples").click()
    page.locator("#sample-table tbody tr").nth(2).click()
    page.wait_for_function("() => document.querySelector('#status').innerText.includes('Parsed')")
    shots.take("recovered")
    assert "Traceback" not in page.content(), shots.where()


def test_replay_one_character_chunks_passes_the_stream_check(page, app_url, tmp_path):
    shots = Shots(page, tmp_path)
    open_page(page, app_url + "?sample=qwen3/reasoning-and-answer&chunking=chars:1")
    page.get_by_role("tab", name="Paste & parse").click()
    assert page.locator("#chunk-size input").input_value() == "1", shots.where()
    page.locator("#play-button").click()
    page.get_by_role("tab", name="Stream checks").click()
    page.wait_for_selector("#stream-check-badge[data-passed='true']", timeout=90_000)
    shots.take("stream-check-passed")
    assert "pass" in page.locator("#stream-check").inner_text(), shots.where()
    page.get_by_role("tab", name="Event log").click()
    shots.take("event-log")
    assert page.locator("#event-log-table tr.rt-clean").count() > 10, shots.where()
