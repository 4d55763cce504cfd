"""The Tokens view in Chromium: Generate live with the demo model draws `<tool_call>` as a
control token, and a pasted output with a `<tool_call>` marked spelled out keeps it in content
and says why (the app in a subprocess, Debian's Chromium driven by Playwright)."""

from __future__ import annotations

import json

import pytest

from playground.parse.token_reading import READ_DEMO
from tests.app import test_app_browser as browser_tests
from tests.app.test_app_browser import Shots, code_text, open_page
from tests.support.paths import ROOT

# The browser suite's fixtures: the app in a subprocess, Chromium, pages of a given size.
app_url, browser, new_page = browser_tests.app_url, browser_tests.browser, browser_tests.new_page

pytestmark = pytest.mark.skipif(
    not (ROOT / "samples" / "demo-model" / "config.json").exists(), reason="demo model not built"
)


def test_generate_live_shows_tool_call_as_a_control_token(new_page, app_url, tmp_path):
    page = new_page(1440, 1000)
    shots = Shots(page, tmp_path)
    open_page(page, app_url)
    page.locator("#show-tokens input").check()
    page.get_by_role("tab", name="Event log").click()
    page.locator("#group-by-token input").check()
    page.get_by_role("tab", name="Generate live", exact=True).click()
    page.locator("#live-settings").click()
    page.locator("#enable-thinking input").uncheck()  # seed 0: the demo model calls get_weather
    page.locator("#generate-button").click()
    page.wait_for_function(
        "() => document.querySelector('#model-note').innerText.includes('Model:')", timeout=300_000
    )
    page.wait_for_function("() => !document.querySelector('.rt-status-live')", timeout=300_000)
    shots.take("generated")
    opens = page.locator("#region-map-body .rt-open.rt-by-control")
    assert opens.count() == 1, shots.where()
    assert opens.inner_text() == "<tool_call>", shots.where()
    title = opens.get_attribute("title")
    assert title.startswith(
        "tool_calls · open · matched by a control token (generated as its id) · control token "
    ), (title, shots.where())
    assert title.endswith(": id 5, '<tool_call>'"), (title, shots.where())
    assert page.locator("#region-map-body .rt-by-text").count() == 0, shots.where()
    legend = page.locator("#region-legend").inner_text()
    assert "matched by a control token" in legend and "matched in text" in legend, shots.where()
    # The event log puts each token's chunks under it: the call's open under its control token.
    groups = page.locator("#event-log-table tr.rt-token-group")
    assert groups.count() > 0, shots.where()
    assert (
        page.locator("#event-log-table tr.rt-token-group", has_text="control token").count() >= 1
    ), shots.where()
    message = json.loads(code_text(page, "message-json"))
    assert message["tool_calls"][0]["function"]["name"] == "get_weather", shots.where()


def test_a_tool_call_marked_spelled_out_stays_content_and_the_map_says_why(
    new_page, app_url, tmp_path
):
    page = new_page(1440, 1000)
    shots = Shots(page, tmp_path)
    open_page(page, app_url)  # the default sample: text, then two tool calls
    page.get_by_role("tab", name="Paste & parse", exact=True).click()
    box = page.locator("#generation textarea")
    generation = box.input_value()
    start = generation.index("<tool_call>")
    # The author selects the first <tool_call> and marks it spelled out.
    box.evaluate(
        "(box, at) => { box.focus(); box.setSelectionRange(at[0], at[1]); }", [start, start + 11]
    )
    page.locator("#mark-spelled-button").click()
    page.wait_for_function(
        "(range) => document.querySelector('#spelled-out textarea').value === range",
        arg=f"{start}:{start + 11}",
    )
    page.locator("#read-as").get_by_text(READ_DEMO).click()
    page.locator("#show-tokens input").check()
    note = page.locator("#region-map-body .rt-spelled-note")
    note.wait_for(timeout=60_000)
    shots.take("spelled-out")
    assert note.inner_text() == "✎ <tool_call> spelled out: text, not a delimiter", shots.where()
    assert note.get_attribute("title") == (
        "spelled out with ordinary tokens: only the control token's id opens or closes a "
        "region, so this is text"
    ), shots.where()
    spelled = page.locator("#region-map-body .rt-spelled")
    assert "".join(spelled.all_inner_texts()) == "<tool_call>", shots.where()
    assert "content · body" in spelled.first.get_attribute("title"), shots.where()
    message = json.loads(code_text(page, "message-json"))
    assert message["content"].startswith("Let me check both cities.\n<tool_call>\n"), shots.where()
    assert [call["function"]["arguments"]["city"] for call in message["tool_calls"]] == ["東京"]
    assert "✔ Parsed: tool_calls, content" in page.locator("#status").inner_text(), shots.where()
