"""Fixtures the app's test modules share: the app running in a subprocess, one per module (a
module's tests share its sessions' server, never another module's), and a headless Chromium."""

from __future__ import annotations

import subprocess

import pytest

from tests.support.app_server import CHROMIUM, CHROMIUM_ARGS, start_app


@pytest.fixture(scope="module")
def app_url():
    """The base URL of app.py started for this module (with the default limits); stopped after it."""
    process, url = start_app()
    yield url
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.fixture(scope="module")
def browser():
    """Debian's headless Chromium through Playwright, one for the module (skips without Playwright)."""
    playwright_api = pytest.importorskip("playwright.sync_api")
    with playwright_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()
