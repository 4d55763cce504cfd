"""The author's loop in Debian's Chromium: a test case becomes an example with one click, and an
output recorded from a wrong parse is unverified until its Confirm button is pressed."""

from __future__ import annotations

from pathlib import Path

import pytest

from playground.authoring.test_cases import cases_for_template
from tests.support.app_server import CHROMIUM, open_page, polled

playwright_api = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason="needs Debian's chromium at /usr/bin/chromium"
)

# A qwen3 call whose JSON lacks its closing brace: the region fails, and is kept as text.
BROKEN_CALL = (
    'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}\n'
    "</tool_call><|im_end|>"
)


def test_a_sample_becomes_an_example_and_a_wrong_parse_waits_for_confirm(browser, app_url):
    page = polled(browser.new_page(viewport={"width": 1440, "height": 1000}))
    page.set_default_timeout(30_000)
    try:
        open_page(page, app_url)
        page.get_by_role("tab", name="Tests", exact=True).first.click()
        page.wait_for_selector("#test-results button[data-use]")
        assert page.locator('#test-results details[data-source="output"]').count() == 0
        # One click on the first sample's button: it is one of the author's outputs, first.
        first_sample = cases_for_template("qwen3")[0]["name"]
        page.locator("#test-results button[data-use]").first.click()
        page.wait_for_selector('#test-results details[data-source="output"]')
        output_case = page.locator('#test-results details[data-source="output"]')
        assert output_case.count() == 1
        assert first_sample in output_case.locator("summary").inner_text()
        assert output_case.locator("button[data-use]").count() == 0
        # The case did not open or close: the click was the button's only.
        assert output_case.evaluate("(node) => node.open") is False

        # A pasted output whose parse fails: recorded as unverified.
        page.get_by_role("tab", name="Paste & parse").click()
        page.locator("#generation textarea").fill(BROKEN_CALL)
        page.locator("#parse-button").click()
        page.wait_for_function(
            "() => document.querySelector('#status').innerText.includes('The output does not parse')"
        )
        page.locator("#add-case-button").click()
        page.wait_for_selector("#test-results .rt-case-unverified")
        unverified = page.locator("#test-results details", has=page.locator(".rt-case-unverified"))
        assert unverified.count() == 1
        assert unverified.locator("summary").inner_text().startswith("✘ your output 2")
        assert unverified.evaluate("(node) => node.open") is True
        assert "unverified: recorded from a parse with errors or warnings" in (
            unverified.locator(".rt-diag-warning").inner_text()
        )
        # Confirm: the mark and its button go; both cases stay the author's outputs.
        unverified.locator("button[data-confirm]").click()
        page.wait_for_function("() => !document.querySelector('#test-results .rt-case-unverified')")
        assert page.locator("#test-results button[data-confirm]").count() == 0
        outputs = page.locator('#test-results details[data-source="output"] summary')
        assert outputs.count() == 2
        assert first_sample in outputs.nth(0).inner_text()
        assert outputs.nth(1).inner_text().startswith("✘ your output 2")
    finally:
        page.close()
