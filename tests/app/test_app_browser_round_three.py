"""The author's path, round three, in Debian's Chromium: what the handlers draw stays inside its
panel, and the page warns nothing in the console."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.app_server import CHROMIUM, open_page, polled
from tests.support.paths import CHAT_TEMPLATE_FIXTURES

playwright_api = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason="needs Debian's chromium at /usr/bin/chromium"
)


OVERFLOWING = """() => { const panel = document.querySelector('#inference').getBoundingClientRect();
  return [...document.querySelectorAll('#inference .rt-failure, #inference .rt-diag')]
    .filter(el => el.scrollWidth > el.clientWidth + 1
      || el.getBoundingClientRect().right > panel.right + 1)
    .map(el => (el.id || el.className) + ' ' + el.scrollWidth + '>' + el.clientWidth); }"""


@pytest.mark.parametrize("width", [1440, 390])
def test_the_no_edit_diagnosis_wraps_inside_the_verdict_panel(browser, app_url, width):
    """A chat template whose calls no field reads back (arguments by position): the failure
    group says "No edit is offered…" beside the rows' long unread text; it wraps inside the
    verdict panel, never over the panels beside it."""
    page = polled(browser.new_page(viewport={"width": width, "height": 900}))
    page.set_default_timeout(30_000)
    try:
        open_page(page, app_url)
        page.get_by_role("tab", name="Start from a model", exact=True).first.click()
        page.locator("#chat-template .cm-content").click()
        page.keyboard.insert_text(
            (CHAT_TEMPLATE_FIXTURES / "positional-calls.jinja").read_text(encoding="utf-8")
        )
        page.locator("#infer-button").click()
        page.wait_for_selector("#inference-no-sketch", timeout=240_000)
        page.wait_for_timeout(500)
        assert "No edit is offered" in page.locator("#inference-no-sketch").inner_text()
        assert page.evaluate(OVERFLOWING) == []
        # A value quoted with no blank in it (a long argument, a JSON string) wraps too.
        page.evaluate(
            "() => document.querySelector('#inference-no-sketch')"
            ".append(\"'\" + 'x'.repeat(600) + \"'\")"
        )
        assert page.evaluate(OVERFLOWING) == []
    finally:
        page.close()


NAN_SLIDE = """() => { const box = document.createElement('div'); document.body.append(box);
  box.animate([{height: 'NaNpx', opacity: 0}, {height: 'NaNpx', opacity: 1}], 50);
  return true; }"""


def keyframe_warnings(messages: list) -> list[str]:
    return [text for _, text in messages if "Invalid keyframe value" in text]


def test_a_slide_of_an_element_not_laid_out_warns_nothing_on_the_page(browser, app_url):
    """Chromium warns about a keyframe height of NaNpx (a bare page shows it); the page's script
    leaves such a value out, and a walk through the page warns or errs nothing."""
    bare = browser.new_page()
    try:
        messages = []
        bare.on("console", lambda message: messages.append((message.type, message.text)))
        bare.evaluate(NAN_SLIDE)
        bare.wait_for_timeout(300)
        assert keyframe_warnings(messages) != []  # the warning the page must not show
    finally:
        bare.close()
    for viewport in ({"width": 1440, "height": 1000}, {"width": 390, "height": 844}):
        page = polled(browser.new_page(viewport=viewport))
        try:
            messages = []
            page.on("console", lambda message: messages.append((message.type, message.text)))
            page.goto(app_url)
            page.wait_for_function(
                "() => (document.querySelector('#status') || {innerText: ''})"
                ".innerText.includes('Parsed')",
                timeout=120_000,
            )
            for tab in ("Template", "Generate live", "Samples", "Start from a model"):
                page.get_by_role("tab", name=tab).first.click()
                page.wait_for_timeout(300)
            page.evaluate(NAN_SLIDE)
            page.wait_for_timeout(300)
            assert keyframe_warnings(messages) == []
            assert [m for m in messages if m[0] in ("error", "warning")] == []
        finally:
            page.close()


# The generation box gets `text` as typing leaves it (an input event of a typed character), and
# Parse is pressed at once, within the pause after which the page would re-parse by itself.
TYPE_THEN_PRESS_PARSE = """(text) => {
  const box = document.querySelector('#generation textarea');
  box.focus();
  box.value = text;
  box.dispatchEvent(new InputEvent('input', {bubbles: true, inputType: 'insertText', data: text.slice(-1)}));
  document.getElementById('parse-button').click();
}"""


def test_a_press_of_parse_after_typing_sends_one_parse_not_a_second_after_the_pause(
    browser, app_url
):
    """Typing schedules a re-parse once the typing pauses; a press of Parse before that parses
    the same text, so the scheduled one is dropped: one request reaches the server, and nothing
    draws over the press's answer."""
    page = polled(browser.new_page(viewport={"width": 1440, "height": 900}))
    page.set_default_timeout(30_000)
    joined = []
    page.on(
        "request",
        lambda request: joined.append(request.post_data) if "/queue/join" in request.url else None,
    )
    try:
        open_page(page, app_url)
        page.get_by_role("tab", name="Paste & parse", exact=True).click()
        # The last key typed, then the press, in one go: a press within the pause, whatever the
        # machine's load (Playwright's own click may take longer than the pause to land).
        page.evaluate(TYPE_THEN_PRESS_PARSE, "Only words, typed.")
        page.wait_for_function(
            "() => document.querySelector('#message-json .cm-content').innerText"
            ".includes('Only words, typed.')"
        )
        page.wait_for_timeout(1500)  # past the pause that would have sent the re-parse
        parses = [data for data in joined if "Only words, typed." in (data or "")]
        assert len(parses) == 1, parses
        assert page.locator("#status").inner_text().startswith("✔ Parsed: content")
    finally:
        page.close()
