"""The playground end to end: the app in a subprocess, Debian's Chromium driven by Playwright.

Each step saves a screenshot under the test's tmp_path; assertion messages name it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.authoring.samples import load_samples
from playground.catalog import DEFAULT_SAMPLE
from playground.parse.token_reading import READ_DEMO
from tests.support.app_server import CHROMIUM, open_page, polled, set_kept
from tests.support.paths import CHAT_TEMPLATE_FIXTURES, ROOT

playwright_api = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason="needs Debian's chromium at /usr/bin/chromium"
)


@pytest.fixture
def page(browser, app_url):
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = polled(context.new_page())
    page.set_default_timeout(30_000)
    yield page
    context.close()


class Shots:
    """Saves numbered screenshots; `where()` gives the paths for assertion messages."""

    def __init__(self, page, folder: Path):
        self.page, self.folder, self.paths = page, folder, []

    def take(self, name: str) -> Path:
        """Save a screenshot; a handler that failed inside Gradio (its "Error" badge or toast) fails the test."""
        path = self.folder / f"{len(self.paths) + 1:02d}-{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        self.paths.append(path)
        errors = self.page.get_by_text("Error", exact=True)
        assert not any(errors.nth(i).is_visible() for i in range(errors.count())), (
            f"Gradio shows an error: {self.where()}"
        )
        return path

    def where(self) -> str:
        return "screenshots: " + ", ".join(str(p) for p in self.paths)


def code_text(page, elem_id: str) -> str:
    """A code editor's whole text: CodeMirror's document (its DOM draws only the lines in view,
    each wrapped line split over several boxes), else the drawn text."""
    page.wait_for_selector(f"#{elem_id} .cm-content", state="attached")
    text = page.evaluate(
        """(id) => {
          const content = document.querySelector(`#${id} .cm-content`);
          const handle = content && (content.cmTile || content.cmView);
          const view = handle && (handle.view || handle.editorView);
          return view ? view.state.doc.toString() : null;
        }""",
        elem_id,
    )
    return text if text is not None else page.locator(f"#{elem_id} .cm-content").inner_text()


def status_text(page) -> str:
    return page.locator("#status").inner_text()


def test_sample_in_paste_mode_shows_regions_and_message(page, app_url, tmp_path):
    shots = Shots(page, tmp_path)
    sample = next(s for s in load_samples() if s.id == "hermes-2-pro/text-then-tool-calls")
    open_page(page, app_url)
    shots.take("first-screen")
    # One click on the case in the samples table loads it, template and all.
    page.locator("#sample-picker input").click()
    page.locator("#sample-picker input").fill("")
    page.locator("#sample-picker input").press_sequentially(
        sample.id
    )  # typed: the list filters as the keys come
    page.get_by_role("option", name=sample.id).click()
    page.wait_for_function(
        "(name) => document.querySelector('#status').innerText.includes(name)", arg=sample.id
    )
    page.get_by_role("tab", name="Paste & parse").click()
    page.wait_for_selector("#generation textarea")
    shots.take("sample-loaded")
    assert page.locator("#generation textarea").input_value() == sample.generation, shots.where()
    titles = page.locator("#region-map-body span[title]").evaluate_all(
        "(spans) => spans.map(s => s.title)"
    )
    opens = [t for t in titles if t.startswith("tool_calls · open")]
    closes = [t for t in titles if t.startswith("tool_calls · close")]
    assert len(opens) == len(sample.expected["tool_calls"]) == len(closes), (titles, shots.where())
    assert any(t.startswith("content · body") for t in titles), shots.where()
    shown = json.loads(code_text(page, "message-json"))
    assert shown == sample.expected, shots.where()


@pytest.mark.skipif(
    not (ROOT / "samples" / "demo-model" / "config.json").exists(), reason="demo model not built"
)
def test_live_generation_streams_events_then_shows_the_message(page, app_url, tmp_path):
    shots = Shots(page, tmp_path)
    open_page(page, app_url)
    page.get_by_role("tab", name="Event log").click()
    page.get_by_role("tab", name="Generate live").click()
    page.locator(
        "#live-settings"
    ).click()  # system, messages, tools, thinking and sampling sit under Generate
    set_kept(page.locator("#enable-thinking input"), True)
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
    page.wait_for_function(
        "() => document.querySelector('#model-note').innerText.includes('Model:')", timeout=150_000
    )
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
    # After the run token boundaries are off (they read as characters), and the label says "Message".
    assert page.locator("#region-map-body .rt-tok-odd").count() == 0, shots.where()
    assert (
        page.locator("#message-json label, #message-json [data-testid=block-info]")
        .first.inner_text()
        .strip()
        == "Message"
    )
    page.locator("#show-tokens input").check()
    page.wait_for_selector("#region-map-body .rt-tok-odd")
    # A replay of this generation steps through the model's own tokens.
    page.locator("#replay-settings").click()  # chunking sits under the replay bar
    assert page.locator("#chunking input[value=tokens]").is_checked(), shots.where()


def test_invalid_template_shows_the_error_and_the_page_keeps_working(page, app_url, tmp_path):
    shots = Shots(page, tmp_path)
    open_page(page, app_url)
    page.get_by_role("tab", name="Template").click()
    editor = page.locator("#template-editor .cm-content")
    editor.click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.type(
        '{"start_anchor": "<s>", "fields": {"x": {"open": "<x>", "content": "yaml"}}}'
    )
    page.wait_for_function(
        "() => document.querySelector('#template-diagnostics').innerText.includes('fields.x.content')"
    )
    page.wait_for_function(
        "() => document.querySelector('#status').innerText.includes('fields.x.content')"
    )
    shots.take("invalid-template")
    assert "⛔" in page.locator("#template-diagnostics").inner_text(), shots.where()
    # The dropdown no longer names the template file the editor started from; Reset brings it back.
    page.get_by_role("tab", name="Paste & parse").click()
    started_from = next(
        s.template_name for s in load_samples() if s.id == DEFAULT_SAMPLE
    )  # qwen3 (demo-model has the same text)
    page.wait_for_function(
        "() => document.querySelector('#template-choice input').value === '(edited in the Template tab)'"
    )
    page.get_by_role("tab", name="Template").click()
    page.locator("#reset-button").click()
    page.get_by_role("tab", name="Paste & parse").click()
    page.wait_for_function(
        "(name) => document.querySelector('#template-choice input').value === name",
        arg=started_from,
    )
    page.get_by_role("tab", name="Template").click()
    editor.click()
    page.keyboard.press("Control+A")
    page.keyboard.type("{not json")
    page.wait_for_function(
        "() => document.querySelector('#status').innerText.includes('not valid JSON')"
    )
    shots.take("not-json")
    # The page still works: load another sample from the table.
    page.get_by_role("tab", name="Samples").click()
    page.locator("#sample-table tbody tr").nth(2).click()
    page.wait_for_function("() => document.querySelector('#status').innerText.includes('Parsed')")
    shots.take("recovered")
    assert "Traceback" not in page.content(), shots.where()


def test_replay_one_character_chunks_passes_the_stream_check(page, app_url, tmp_path):
    shots = Shots(page, tmp_path)
    open_page(
        page,
        app_url + "?sample=qwen3/reasoning-and-answer&chunking=chars:1",
        ready="qwen3/reasoning-and-answer",
    )
    page.locator("#replay-settings").click()  # chunking and speed sit under the replay bar
    assert page.locator("#chunk-size input").input_value() == "1", shots.where()
    page.locator("#play-button").click()
    page.get_by_role("tab", name="Stream checks").click()
    page.wait_for_selector("#stream-check-badge[data-passed='true']", timeout=90_000)
    shots.take("stream-check-passed")
    assert "pass" in page.locator("#stream-check").inner_text(), shots.where()
    page.get_by_role("tab", name="Event log").click()
    shots.take("event-log")
    assert page.locator("#event-log-table tr.rt-clean").count() > 10, shots.where()


# ---------------------------------------------------------------------------
# The workspace: one screen, click to explain, nothing wiped, readable, shareable
# ---------------------------------------------------------------------------


@pytest.fixture
def new_page(browser):
    """Open pages with their own viewport and colour scheme: new_page(width, height, dark=False, phone=False)."""
    contexts = []

    def make(width: int, height: int, *, dark: bool = False, phone: bool = False):
        options = {
            "viewport": {"width": width, "height": height},
            "color_scheme": "dark" if dark else "light",
        }
        if phone:
            options.update(is_mobile=True, has_touch=True, device_scale_factor=2)
        context = browser.new_context(**options)
        contexts.append(context)
        made = polled(context.new_page())
        made.set_default_timeout(30_000)
        return made

    yield make
    for context in contexts:
        context.close()


# WCAG contrast of every text-bearing element matching `selector`: the text colour against the
# background it is drawn on (the first opaque background up the tree, each gradient stop counted).
CONTRAST_JS = """(selector) => {
  const parse = (text) => {
    const m = text.match(/rgba?\\(([^)]+)\\)/);
    if (!m) return null;
    const p = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
    return {r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1};
  };
  const colours = (text) => (text.match(/rgba?\\([^)]+\\)/g) || []).map(parse);
  const over = (top, bottom) => ({r: top.r * top.a + bottom.r * (1 - top.a), g: top.g * top.a + bottom.g * (1 - top.a),
                                  b: top.b * top.a + bottom.b * (1 - top.a), a: 1});
  const backgrounds = (element) => {
    const layers = [];
    for (let node = element; node; node = node.parentElement) {
      const style = getComputedStyle(node);
      const stops = colours(style.backgroundImage);
      if (stops.length) { layers.push(stops); if (stops.every((c) => c.a === 1)) break; }
      const colour = parse(style.backgroundColor);
      if (colour && colour.a > 0) { layers.push([colour]); if (colour.a === 1) break; }
    }
    let result = [{r: 255, g: 255, b: 255, a: 1}];
    for (const layer of layers.reverse()) result = layer.flatMap((top) => result.map((bottom) => over(top, bottom)));
    return result;
  };
  const luminance = ({r, g, b}) => [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
    .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
  const ratio = (a, b) => { const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  // A brightness() filter on an ancestor (the code editors' tokens in the light theme) scales the text as drawn.
  const brightness = (element) => {
    let factor = 1;
    for (let node = element; node; node = node.parentElement) {
      const found = getComputedStyle(node).filter.match(/brightness\\(([\\d.]+)\\)/);
      if (found) factor *= Number(found[1]);
    }
    return factor;
  };
  const dimmed = (colour, factor) => ({r: colour.r * factor, g: colour.g * factor, b: colour.b * factor, a: colour.a});
  return [...document.querySelectorAll(selector)].filter((element) =>
    [...element.childNodes].some((child) => child.nodeType === 3 && child.textContent.trim())
  ).map((element) => {
    const style = getComputedStyle(element);
    const text = dimmed(over(parse(style.color), backgrounds(element)[0]), brightness(element));
    const worst = Math.min(...backgrounds(element).map((background) => ratio(text, background)));
    return {classes: element.className, text: element.textContent.slice(0, 30), ratio: Math.round(worst * 100) / 100};
  });
}"""
MUTED = ("rt-cutaway", "rt-note", "rt-explain-empty", "rt-ws")


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_map_legend_and_event_log_are_readable_in_both_themes(new_page, app_url, tmp_path, dark):
    page = new_page(1440, 900, dark=dark)
    shots = Shots(page, tmp_path)
    open_page(
        page, app_url + "?sample=qwen3/reasoning-and-answer", ready="qwen3/reasoning-and-answer"
    )
    assert page.evaluate("() => document.body.classList.contains('dark')") == dark, (
        "Gradio did not follow the colour scheme"
    )
    page.get_by_role("tab", name="Event log").click()
    page.wait_for_selector("#event-log-table tr[data-n]")
    shots.take("themed")
    page.get_by_role("tab", name="Template").click()
    page.wait_for_selector("#template-diagnostics .rt-diag")
    measured = page.evaluate(
        CONTRAST_JS,
        "#region-map span, #region-legend span, #event-log-table td, #event-log-table td span, #status div, #explain div, "
        "#template-diagnostics div",
    )
    assert len(measured) > 20, measured
    too_low = [
        m for m in measured if m["ratio"] < (3 if any(c in m["classes"] for c in MUTED) else 4.5)
    ]
    assert not too_low, (too_low, shots.where())


def test_map_status_and_replay_bar_fit_one_screen_and_stay_there(new_page, app_url, tmp_path):
    page = new_page(1440, 900)
    shots = Shots(page, tmp_path)
    open_page(page, app_url)

    def on_screen(selector: str) -> bool:
        box = page.locator(selector).bounding_box()
        return (
            box is not None
            and box["y"] >= 0
            and box["y"] + box["height"] <= 900
            and box["x"] + box["width"] <= 1440
        )

    shots.take("first-screen")
    for selector in ("#status", "#replay-bar", "#region-map-body", "#step-button", "#play-button"):
        assert on_screen(selector), (selector, page.locator(selector).bounding_box(), shots.where())
    # Editing a long template scrolls the page; the map, the status and the transport stay put.
    page.get_by_role("tab", name="Template").click()
    page.locator("#field-reference").click()
    page.mouse.wheel(0, 2000)
    page.wait_for_timeout(300)
    assert page.evaluate("() => window.scrollY") > 200, shots.where()
    shots.take("scrolled")
    for selector in ("#status", "#replay-bar", "#region-map-body"):
        assert on_screen(selector), (selector, page.locator(selector).bounding_box(), shots.where())


def test_clicking_a_tool_call_delimiter_explains_it(new_page, app_url, tmp_path):
    page = new_page(1440, 900)
    shots = Shots(page, tmp_path)
    open_page(page, app_url)
    page.locator("#region-map-body span[data-i]", has_text="<tool_call>").first.click()
    page.wait_for_function(
        "() => document.querySelector('#explain').innerText.includes('Open delimiter')"
    )
    shots.take("explained")
    text = page.locator("#explain").inner_text()
    for expected in (
        "fields.tool_calls.open",
        "<tool_call>",
        "region_open",
        "tool_calls[0]",
        "get_weather",
    ):
        assert expected in text, (expected, text, shots.where())
    # Its event links to the event log: the row is shown and highlighted.
    number = page.locator("#explain [data-event]").first.get_attribute("data-event")
    page.locator("#explain [data-event]").first.click()
    page.wait_for_selector(f"#event-log-table tr.rt-selected[data-n='{number}']")
    shots.take("event-row")
    # From the keyboard: focus the map, move with Home and the arrows, explain with Enter.
    page.locator("#region-map-body").focus()
    page.keyboard.press("Home")
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => document.querySelector('#explain').innerText.includes('Cut-away prefix')"
    )
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => document.querySelector('#explain').innerText.includes('Start anchor')"
    )
    shots.take("keyboard")


def test_an_invalid_template_keeps_the_last_good_parse_marked_stale(new_page, app_url, tmp_path):
    page = new_page(1440, 900)
    shots = Shots(page, tmp_path)
    open_page(page, app_url)
    message = code_text(page, "message-json")
    page.get_by_role("tab", name="Template").click()
    editor = page.locator("#template-editor .cm-content")
    editor.click()
    page.keyboard.press("Control+End")
    page.keyboard.type(",")
    page.wait_for_selector("#stale-marker", timeout=60_000)
    shots.take("stale")
    assert "not valid JSON" in status_text(page), shots.where()
    assert "last good parse (stale)" in status_text(page), shots.where()
    assert code_text(page, "message-json") == message, shots.where()  # nothing is wiped
    assert page.locator("#region-map-body .rt-delim").count() > 0, shots.where()
    page.keyboard.press("Backspace")
    page.wait_for_function(
        "() => !document.querySelector('#stale-marker') && document.querySelector('#status').innerText.includes('Parsed')"
    )
    shots.take("valid-again")


def test_undo_in_the_template_editor_parses_the_text_it_brings_back(new_page, app_url, tmp_path):
    page = new_page(1440, 900)
    shots = Shots(page, tmp_path)
    open_page(page, app_url)
    headline = page.locator("#status").get_by_text("Parsed:").inner_text()
    page.get_by_role("tab", name="Template").click()
    page.locator("#template-editor .cm-content").click()
    page.keyboard.press("Control+End")
    page.keyboard.type(",")
    page.wait_for_selector("#stale-marker", timeout=60_000)
    shots.take("edited")
    page.keyboard.press("Control+z")
    page.wait_for_function("() => !document.querySelector('#stale-marker')", timeout=60_000)
    shots.take("undone")
    assert headline in status_text(page), shots.where()
    assert "not valid JSON" not in status_text(page), shots.where()


def test_a_chunk_typed_in_the_scrubber_before_any_replay_seeks_on_enter(
    new_page, app_url, tmp_path
):
    page = new_page(1440, 900)
    shots = Shots(page, tmp_path)
    open_page(page, app_url)
    # One chunk a character (the default chunking): the scrubber's range is the generation's length.
    chunks = len(next(s for s in load_samples() if s.id == DEFAULT_SAMPLE).generation)
    box = page.locator("#replay-scrubber input[type=number]")
    assert box.get_attribute("max") == str(chunks)
    box.fill("30")
    box.press("Enter")
    try:
        page.wait_for_function(
            "(text) => document.querySelector('#status').innerText.includes(text)",
            arg=f"chunk 30 / {chunks}",
            timeout=60_000,
        )
    except playwright_api.TimeoutError:
        shots.take("not-seeked")
        said = page.locator("#status").inner_text()
        raise AssertionError(
            f"no seek to chunk 30: {said!r}, {box.input_value()!r}, {shots.where()}"
        )
    shots.take("seeked")
    assert page.get_by_text("greater than maximum").count() == 0, shots.where()


def test_a_state_too_big_for_a_link_says_so_and_round_trips_as_a_file(new_page, app_url, tmp_path):
    import random

    page = new_page(1440, 900)
    shots = Shots(page, tmp_path)
    open_page(page, app_url)
    rng = random.Random(17)
    generation = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789 ") for _ in range(30_000))
    page.get_by_role("tab", name="Paste & parse").click()
    page.locator("#generation textarea").fill(generation)
    page.locator("#parse-button").click()
    page.wait_for_function(
        "() => document.querySelector('#live-figures').innerText.includes('30,000')"
    )
    page.locator("#share").click()
    page.locator("#share-button").click()
    page.wait_for_selector("#share-warning")
    shots.take("share-warning")
    warning = page.locator("#share-warning").inner_text()
    assert "too big for a link" in warning and "generation" in warning, (warning, shots.where())
    with page.expect_download() as download:
        page.locator("#state-file a").first.click()
    state_path = tmp_path / "state.json"
    download.value.save_as(state_path)
    # A new visitor uploads the file: everything comes back.
    other = new_page(1440, 900)
    open_page(other, app_url)
    other.locator("#share").click()
    other.locator("#state-upload input[type=file]").set_input_files(str(state_path))
    other.wait_for_function(
        "() => document.querySelector('#live-figures').innerText.includes('30,000')"
    )
    assert other.locator("#generation textarea").input_value() == generation


def test_phone_layout_shows_the_map_early_and_hides_no_tab(new_page, app_url, tmp_path):
    page = new_page(390, 844, phone=True)
    shots = Shots(page, tmp_path)
    open_page(page, app_url)
    shots.take("phone")
    top = page.evaluate(
        "() => document.querySelector('#region-map-body').getBoundingClientRect().top + window.scrollY"
    )
    assert top < 2 * 844, (top, shots.where())
    for tabs in ("#modes", "#results"):
        buttons = page.locator(f"{tabs} [role=tab]")
        assert buttons.count() >= 4, shots.where()
        for i in range(buttons.count()):
            box = buttons.nth(i).bounding_box()
            assert box is not None and box["width"] > 0 and box["x"] + box["width"] <= 390, (
                tabs,
                i,
                box,
                shots.where(),
            )
        assert (
            page.locator(f"{tabs} .overflow-menu").count() == 0
            or not page.locator(f"{tabs} .overflow-menu").first.is_visible()
        )
    # Touch: a tap explains a stretch too.
    page.locator("#region-map-body span[data-i]", has_text="<tool_call>").first.tap()
    page.wait_for_function(
        "() => document.querySelector('#explain').innerText.includes('Open delimiter')"
    )
    shots.take("tapped")


# ---------------------------------------------------------------------------
# The cause, not the symptom; the faults a new user met
# ---------------------------------------------------------------------------


def state_link(
    url: str, template: dict, sample: str = "qwen3/text-then-tool-calls", **extra
) -> str:
    """A deep link to `sample` with `template` in the editor (as Share writes it)."""
    from playground.authoring.share import PageState, share_link

    query, _ = share_link(
        PageState(
            sample,
            "",
            {"template": json.dumps(template, indent=2)},
            extra.get("chunking", "chars:1"),
            "paste",
            0,
        )
    )
    return url + query


def damaged_qwen3(change: str) -> dict:
    from engine.template_files import load_template_file

    template = load_template_file("qwen3").response_template
    if change == "close":
        template["fields"]["tool_calls"]["close_pattern"] = r"(?<=\})\s*</toolcall>"
    else:
        template["start_anchor"] = "<|im_start|>model\n"
    return template


@pytest.mark.parametrize(
    ("change", "headline", "key"),
    [
        (
            "close",
            "⚠ Cause (fields.tool_calls.close_pattern): fields.tool_calls.close_pattern expects '</toolcall>', but the text has '</tool_call>'",
            "fields.tool_calls.close_pattern",
        ),
        (
            "anchor",
            "⚠ Cause (start_anchor): The start anchor '<|im_start|>model\\n' is not in the prefix",
            "start_anchor",
        ),
    ],
)
def test_the_headline_names_the_cause_and_explain_points_at_its_key(
    new_page, app_url, tmp_path, change, headline, key
):
    page = new_page(1440, 900)
    shots = Shots(page, tmp_path)
    open_page(page, state_link(app_url, damaged_qwen3(change)), ready="Cause")
    shots.take("cause")
    first = page.locator("#status > div > div, #status .rt-status").first.inner_text()
    assert first.startswith(headline), (first, shots.where())
    page.locator("#region-map-body [data-e]").first.click()
    page.wait_for_function(
        "(key) => document.querySelector('#explain').innerText.includes(key)", arg=key
    )
    assert page.locator(f"#explain .rt-key[data-key='{key}']").count() == 1, shots.where()
    shots.take("explained")


def test_stop_after_steps_leaves_the_parse_finalized_there(new_page, app_url, tmp_path):
    page = new_page(1440, 900)
    shots = Shots(page, tmp_path)
    open_page(
        page,
        app_url + "?sample=qwen3/text-then-tool-calls&chunking=chars:3",
        ready="qwen3/text-then-tool-calls",
    )
    # The first sample is this one: the link is applied once its tab (Paste & parse) shows.
    page.wait_for_selector("#generation textarea")
    for step in range(1, 6):
        page.locator("#step-button").click()
        page.wait_for_function(
            "(n) => document.querySelector('#status').innerText.includes(`chunk ${n} / 72`)",
            arg=step,
        )
    page.locator("#stop-play-button").click()
    page.wait_for_function(
        "() => document.querySelector('#status').innerText.includes('Stopped at chunk 5 of 72')"
    )
    shots.take("stopped")
    assert "[object Object]" not in status_text(page), shots.where()
    assert json.loads(code_text(page, "message-json")) == {
        "role": "assistant",
        "content": "Let me check bo",
    }, shots.where()


def test_the_match_list_selects_a_near_miss_on_the_map_and_a_pattern_is_explained(
    new_page, app_url, tmp_path
):
    page = new_page(1440, 900)
    shots = Shots(page, tmp_path)
    open_page(page, state_link(app_url, damaged_qwen3("close")), ready="Cause")
    page.get_by_role("tab", name="Matches").click()
    page.wait_for_selector("#match-list tr[data-d]")
    page.locator("#match-list tr[data-d]").first.click()
    page.wait_for_function(
        "() => document.querySelector('#explain').innerText.includes('Near miss')"
    )
    shots.take("near-miss")
    assert page.locator("#region-map-body .rt-focus[data-d]").count() == 1, shots.where()
    # A delimiter pattern clicked on the map, piece by piece, with what \s* took there.
    page.locator("#region-map-body span[data-i]", has_text="<tool_call>").first.click()
    # The near miss's panel has a pattern table too: wait for the open pattern's own rows.
    page.wait_for_function(
        """() => [...document.querySelectorAll('#explain #pattern-explained tbody tr')]
            .some((row) => row.innerText.startsWith('(?=\\\\s*\\\\{)') && row.innerText.includes('looks ahead'))"""
    )
    rows = page.locator("#explain #pattern-explained tbody tr").all_inner_texts()
    assert any(row.startswith("(?=\\s*\\{)") and "looks ahead" in row for row in rows), (
        rows,
        shots.where(),
    )
    shots.take("pattern")


def test_phone_event_log_columns_are_readable_and_generate_is_followed_by_the_map(
    new_page, app_url, tmp_path
):
    page = new_page(390, 844, phone=True)
    shots = Shots(page, tmp_path)
    open_page(page, app_url)
    page.get_by_role("tab", name="Generate live").click()
    page.wait_for_selector("#generate-button")
    generate = page.evaluate(
        "() => document.querySelector('#generate-button').getBoundingClientRect().top + window.scrollY"
    )
    map_top = page.evaluate(
        "() => document.querySelector('#region-map-body').getBoundingClientRect().top + window.scrollY"
    )
    shots.take("phone-live")
    # Generate and the map's first lines (60 px) share one screen; Share waits at the end of the page.
    assert 0 < map_top - generate and map_top + 60 - generate <= 844, (
        generate,
        map_top,
        shots.where(),
    )
    share = page.locator("#share").bounding_box()
    results = page.locator("#results").bounding_box()
    assert share["y"] > results["y"] and share["x"] + share["width"] <= 390, (
        share,
        results,
        shots.where(),
    )
    page.get_by_role("tab", name="Event log").click()
    page.wait_for_selector("#event-log-table tr[data-n]")
    widths = page.evaluate(
        "() => [...document.querySelectorAll('#event-log-table tr[data-n]:first-child td')].map((td) => td.getBoundingClientRect().width)"
    )
    shots.take("phone-log")
    assert min(widths) >= 30 and widths[4] >= 120, (widths, shots.where())


def test_generate_and_the_first_map_lines_share_one_desktop_screen(new_page, app_url, tmp_path):
    page = new_page(1440, 900)
    shots = Shots(page, tmp_path)
    open_page(page, app_url)
    page.get_by_role("tab", name="Generate live").click()
    page.wait_for_selector("#generate-button")
    shots.take("live")
    generate = page.locator("#generate-button").bounding_box()
    lines = page.locator("#region-map-body").bounding_box()
    assert generate["y"] + generate["height"] <= 900 and lines["y"] + 40 <= 900, (
        generate,
        lines,
        shots.where(),
    )


# WCAG contrast of every visible text node of the page (each element holding one, inputs and
# text areas by their value): its colour, with the opacity of its ancestors and any brightness
# filter, against each background it is drawn on. Hidden tabs, collapsed accordions and empty
# text are not drawn, so they are not measured.
TEXT_CONTRAST_JS = """() => {
  const parse = (text) => {
    const m = text.match(/rgba?\\(([^)]+)\\)/);
    if (!m) return null;
    const p = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
    return {r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1};
  };
  const colours = (text) => (text.match(/rgba?\\([^)]+\\)/g) || []).map(parse);
  const over = (top, bottom) => ({r: top.r * top.a + bottom.r * (1 - top.a), g: top.g * top.a + bottom.g * (1 - top.a),
                                  b: top.b * top.a + bottom.b * (1 - top.a), a: 1});
  const backgrounds = (element) => {
    const layers = [];
    for (let node = element; node; node = node.parentElement) {
      const style = getComputedStyle(node);
      const stops = colours(style.backgroundImage);
      if (stops.length) { layers.push(stops); if (stops.every((c) => c.a === 1)) break; }
      const colour = parse(style.backgroundColor);
      if (colour && colour.a > 0) { layers.push([colour]); if (colour.a === 1) break; }
    }
    let result = [{r: 255, g: 255, b: 255, a: 1}];
    if (document.body.classList.contains('dark') && !layers.length) result = [{r: 11, g: 15, b: 25, a: 1}];
    for (const layer of layers.reverse()) result = layer.flatMap((top) => result.map((bottom) => over(top, bottom)));
    return result;
  };
  const luminance = ({r, g, b}) => [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
    .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
  const ratio = (a, b) => { const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const brightness = (element) => {
    let factor = 1;
    for (let node = element; node; node = node.parentElement) {
      const found = getComputedStyle(node).filter.match(/brightness\\(([\\d.]+)\\)/);
      if (found) factor *= Number(found[1]);
    }
    return factor;
  };
  const opacity = (element) => {
    let value = 1;
    for (let node = element; node; node = node.parentElement) value *= Number(getComputedStyle(node).opacity);
    return value;
  };
  const visible = (element) => {
    const style = getComputedStyle(element);
    if (style.visibility === 'hidden' || style.display === 'none') return false;
    const box = element.getBoundingClientRect();
    return box.width > 0 && box.height > 0;
  };
  const measure = (element, text) => {
    const style = getComputedStyle(element);
    const colour = parse(style.color);
    const alpha = opacity(element);
    const base = backgrounds(element);
    const drawn = over({...colour, a: colour.a * alpha}, base[0]);
    const factor = brightness(element);
    const text_ = {r: drawn.r * factor, g: drawn.g * factor, b: drawn.b * factor, a: 1};
    const worst = Math.min(...base.map((background) => ratio(text_, background)));
    const path = [];
    for (let node = element; node && path.length < 4; node = node.parentElement) path.push(node.id ? '#' + node.id : node.tagName.toLowerCase() + (typeof node.className === 'string' && node.className ? '.' + node.className.split(' ')[0] : ''));
    return {classes: typeof element.className === 'string' ? element.className : '', path: path.reverse().join(' > '), text: text.slice(0, 30), colour: style.color, ratio: Math.round(worst * 100) / 100};
  };
  const found = [], seen = new Set();
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  let node;
  while ((node = walker.nextNode())) {
    const text = node.textContent.trim();
    const element = node.parentElement;
    if (!text || !element || seen.has(element)) continue;
    if (['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE'].includes(element.tagName)) continue;
    if (!visible(element)) continue;
    const range = document.createRange(); range.selectNodeContents(node);
    const rects = [...range.getClientRects()].filter((r) => r.width > 0 && r.height > 0);
    if (!rects.length) continue;
    seen.add(element);
    found.push(measure(element, text));
  }
  for (const element of document.querySelectorAll('input:not([type=checkbox]):not([type=radio]):not([type=range]):not([type=file]), textarea')) {
    if (!element.value || !visible(element)) continue;
    found.push(measure(element, element.value));
  }
  return found;
}"""


def settle(page) -> None:
    """Wait until no component is pending (Gradio dims a panel while its handler runs)."""
    page.wait_for_function(
        "() => !document.querySelector('.pending, .generating, .eta-bar, .progress-text')"
    )
    page.wait_for_timeout(300)


INPUT_TABS = ("Samples", "Start from a model", "Paste & parse", "Generate live", "Template")
RESULTS_TABS = (
    "Message",
    "Event log",
    "Matches",
    "initial_events",
    "OpenAI stream",
    "Stream checks",
    "Tests",
    "vs transformers",
)


def measure_every_tab(page) -> list[dict]:
    """The contrast of every visible text node, with each input tab and each results tab shown."""
    measured = []
    for tab in INPUT_TABS:
        page.get_by_role("tab", name=tab, exact=True).click()
        settle(page)
        measured += page.evaluate(TEXT_CONTRAST_JS)
    for tab in RESULTS_TABS:
        page.get_by_role("tab", name=tab, exact=True).click()
        settle(page)
        measured += page.evaluate(TEXT_CONTRAST_JS)
    return measured


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_every_visible_text_has_contrast_in_both_themes(new_page, app_url, tmp_path, dark):
    """Every visible text node, on every tab: the code editors' syntax colours, the chat view's
    code, the footer, an inference that fails with its way out, and the changed values."""
    page = new_page(1440, 900, dark=dark)
    shots = Shots(page, tmp_path)
    open_page(page, app_url + "?sample=qwen3/typed-arguments", ready="qwen3/typed-arguments")
    page.wait_for_selector("#value-changes")
    measured = measure_every_tab(page)
    page.get_by_role("tab", name="Start from a model", exact=True).click()
    page.locator("#chat-template .cm-content").click()
    # Calls whose arguments stand by position: no field reads them, so inference fails.
    page.keyboard.insert_text(CHAT_TEMPLATE_FIXTURES.joinpath("positional-calls.jinja").read_text())
    page.locator("#infer-button").click()
    page.wait_for_selector("#inference-failures", timeout=120_000)
    settle(page)
    shots.take("themed")
    measured += measure_every_tab(page)
    found = {m["path"].split(" > ")[-1] for m in measured}
    for part in ("footer", "cm-", "rt-failure", "value-changes", "token"):
        assert any(part in m["path"] or part in m["classes"] for m in measured), (
            part,
            sorted(found)[:50],
        )
    too_low = sorted((m for m in measured if m["ratio"] < 4.5), key=lambda m: m["ratio"])
    assert len(measured) > 1000 and not too_low, (too_low[:20], shots.where())
    lowest = min(m["ratio"] for m in measured)
    print(
        f"lowest contrast ({'dark' if dark else 'light'}): {lowest} over {len(measured)} text nodes"
    )


# ---------------------------------------------------------------------------
# Start from a chat template
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_a_template_inferred_from_a_chat_template_goes_into_the_editor_and_explains_its_delimiters(
    new_page, app_url, tmp_path, dark
):
    page = new_page(1440, 900, dark=dark)
    shots = Shots(page, tmp_path)
    open_page(page, app_url)
    page.get_by_role("tab", name="Start from a model").click()
    # The tab's parts are mounted as it opens: a box filled at once may be set back.
    set_kept(
        page.locator("#chat-template-model textarea, #chat-template-model input").first,
        "samples/demo-model",
    )
    page.locator("#infer-button").click()
    page.wait_for_selector("#inference-badge", timeout=120_000)
    shots.take("inferred")
    assert "passes its matrix" in page.locator("#inference-badge").inner_text(), shots.where()
    assert "✔ conforms" in page.locator("#conformance").inner_text(), shots.where()
    page.get_by_role("tab", name="Template").click()
    template = json.loads(code_text(page, "template-editor"))
    assert template["fields"]["reasoning_content"]["open"] == "<think>", shots.where()
    page.get_by_role("tab", name="Start from a model").click()
    # A finding clicked: #explain shows the two renders that found it, the difference marked,
    # brought into view (never drawn below the fold with nothing visible).
    page.locator("button[data-finding]").first.click()
    page.wait_for_function(
        "() => document.querySelector('#explain').innerText.includes('found by comparing these two renders')"
    )
    page.wait_for_timeout(300)
    shots.take("evidence")
    box = page.locator("#explain .rt-evidence").bounding_box()
    assert box is not None and -1 <= box["y"] < 900 - 40, (box, shots.where())
    marks = page.locator("#explain mark.rt-evidence-diff")
    assert marks.count() == 2, shots.where()
    ratio = page.evaluate(
        CONTRAST_JS, "#explain mark.rt-evidence-diff, #explain .rt-evidence-label"
    )
    assert ratio and all(m["ratio"] >= 4.5 for m in ratio), (ratio, shots.where())
    # The reasoning opener clicked in the editor: the renders that found it.
    page.get_by_role("tab", name="Template").click()
    page.locator("#template-editor").scroll_into_view_if_needed()
    at = page.evaluate(EDITOR_TEXT_AT_JS, '"<think>"')
    assert at is not None, shots.where()
    page.mouse.click(at["x"], at["y"])
    page.wait_for_selector(
        "#explain #explain-inferred .rt-evidence[data-key='fields.reasoning_content.open']"
    )
    shots.take("editor-evidence")


# ---------------------------------------------------------------------------
# The template editor: errors marked where they are, patterns explained; focus; Copy as code
# ---------------------------------------------------------------------------

# The on-screen box of the character at line:column (1-based) of the template editor, from its
# DOM text (independent of the page script), and the character itself.
EDITOR_CHAR_JS = """([line, column]) => {
  const row = document.querySelectorAll('#template-editor .cm-line')[line - 1];
  if (!row) return null;
  const walker = document.createTreeWalker(row, NodeFilter.SHOW_TEXT);
  let left = column - 1, node;
  while ((node = walker.nextNode())) {
    const chars = [...node.textContent];
    if (left < chars.length) {
      const start = chars.slice(0, left).join('').length;
      const range = document.createRange();
      range.setStart(node, start);
      range.setEnd(node, start + chars[left].length);
      const box = range.getBoundingClientRect();
      return {x: box.x, y: box.y, width: box.width, height: box.height, char: chars[left]};
    }
    left -= chars.length;
  }
  return null;
}"""
# The centre of the first occurrence of `text` in the template editor's lines.
EDITOR_TEXT_AT_JS = """(text) => {
  for (const row of document.querySelectorAll('#template-editor .cm-line')) {
    const walker = document.createTreeWalker(row, NodeFilter.SHOW_TEXT);
    let node;
    while ((node = walker.nextNode())) {
      const at = node.textContent.indexOf(text);
      if (at < 0) continue;
      const range = document.createRange();
      range.setStart(node, at);
      range.setEnd(node, at + text.length);
      const box = range.getBoundingClientRect();
      return {x: box.x + box.width / 2, y: box.y + box.height / 2};
    }
  }
  return null;
}"""


def replace_editor_text(page, text: str) -> None:
    page.locator("#template-editor .cm-content").click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(text)


def assert_marked_at(page, shots, line: int, column: int, char: str) -> None:
    """The editor shows one error mark, over the character at line:column, which is `char`."""
    page.wait_for_selector(
        f"#template-editor .rt-editor-mark[data-line='{line}'][data-column='{column}']"
    )
    mark = page.locator("#template-editor .rt-editor-mark")
    assert mark.count() == 1, shots.where()
    # The marks are drawn again when the editor resizes or the diagnostics re-render: a box read
    # in between is None, so it is read again (for up to 5 s).
    for _ in range(50):
        try:
            box = mark.bounding_box(timeout=1_000) if mark.count() == 1 else None
        except playwright_api.TimeoutError:  # taken away and not drawn again within the second
            box = None
        target = page.evaluate(EDITOR_CHAR_JS, [line, column])
        if box is not None and target is not None:
            break
        page.wait_for_timeout(100)
    assert box is not None and mark.count() == 1, shots.where()
    assert target is not None and target["char"] == char, (target, shots.where())
    centre = (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    assert (
        target["x"] <= centre[0] <= target["x"] + target["width"]
        and target["y"] <= centre[1] <= target["y"] + target["height"]
    ), (box, target, shots.where())


def test_json_and_regex_errors_are_marked_in_the_editor_at_their_character(
    new_page, app_url, tmp_path
):
    page = new_page(1440, 900)
    shots = Shots(page, tmp_path)
    open_page(page, app_url)
    page.get_by_role("tab", name="Template").click()
    replace_editor_text(
        page, '{"start_anchor": "<s>",\n  "fields": {"x": {"open": "<x>" "close": "</x>"}}}'
    )
    page.wait_for_function(
        "() => document.querySelector('#template-diagnostics').innerText.includes('line 2, column 34')"
    )
    assert_marked_at(page, shots, 2, 34, '"')
    shots.take("json-error-marked")
    # "Show in the editor" selects that character.
    page.locator("#template-diagnostics .rt-goto").click()
    assert page.evaluate("() => window.getSelection().toString()") == '"', shots.where()
    # Editing takes the mark away at once (the diagnostics of the edited text, here the same
    # error, may mark it again at once); the next diagnostics mark the new place (a regex error).
    page.evaluate(
        """() => { const mark = document.querySelector('#template-editor .rt-editor-mark');
          window.rtMarkGone = false;
          new MutationObserver(() => { if (!mark.isConnected) window.rtMarkGone = true; })
            .observe(document.querySelector('#template-editor'), {childList: true, subtree: true}); }"""
    )
    page.keyboard.press("End")
    page.keyboard.type(" ")
    page.wait_for_function("() => window.rtMarkGone", timeout=5_000)
    replace_editor_text(
        page,
        '{"start_anchor": "<s>",\n  "fields": {"x": {"open": "<x>", "close_pattern": "(?<=\\\\})\\\\s*</x>("}}}',
    )
    page.wait_for_function(
        "() => document.querySelector('#template-diagnostics').innerText.includes('invalid regex at position 15')"
    )
    assert_marked_at(
        page, shots, 2, 70, '"'
    )  # the pattern ends without closing its group: marked at its end
    shots.take("regex-error-marked")
    # A valid template has no mark.
    replace_editor_text(
        page,
        '{"start_anchor": "<s>",\n  "fields": {"x": {"open": "<x>", "close_pattern": "(?<=\\\\})\\\\s*</x>"}}}',
    )
    page.wait_for_function(
        "() => !document.querySelector('#template-diagnostics').innerText.includes('invalid regex')"
    )
    page.wait_for_timeout(300)
    assert page.locator("#template-editor .rt-editor-mark").count() == 0, shots.where()


def test_a_pattern_clicked_in_the_editor_is_explained_piece_by_piece(new_page, app_url, tmp_path):
    page = new_page(1440, 900)
    shots = Shots(page, tmp_path)
    open_page(
        page, app_url
    )  # qwen3/text-then-tool-calls: two tool calls, closed by (?<=\})\s*</tool_call>
    page.get_by_role("tab", name="Template").click()
    page.wait_for_selector("#template-editor .cm-line")
    at = page.evaluate(EDITOR_TEXT_AT_JS, "s*</tool_call>")
    assert at is not None, shots.where()
    page.mouse.click(at["x"], at["y"])
    page.wait_for_function(
        "() => document.querySelector('#explain').innerText.includes('Close pattern')"
    )
    shots.take("close-pattern")
    text = page.locator("#explain").inner_text()
    assert "fields.tool_calls.close_pattern" in text and "matched 2 times" in text, (
        text,
        shots.where(),
    )
    rows = page.locator("#explain #pattern-explained tbody tr").all_inner_texts()
    assert rows[0].startswith("(?<=\\})\tlooks behind"), (rows, shots.where())
    assert rows[2].startswith("\\s*\tany run of whitespace") and rows[2].endswith("↵"), (
        rows,
        shots.where(),
    )  # it took the newline
    # The keys around a pattern leave #explain as it is; the open pattern is explained too.
    at = page.evaluate(EDITOR_TEXT_AT_JS, '"repeats"')
    page.mouse.click(at["x"], at["y"])
    page.wait_for_timeout(500)
    assert "Close pattern" in page.locator("#explain").inner_text(), shots.where()
    at = page.evaluate(EDITOR_TEXT_AT_JS, "(?=\\\\s*\\\\{)")
    page.mouse.click(at["x"], at["y"])
    page.wait_for_function(
        "() => document.querySelector('#explain').innerText.includes('Open pattern')"
    )
    rows = page.locator("#explain #pattern-explained tbody tr").all_inner_texts()
    assert any(row.startswith("(?=\\s*\\{)\tlooks ahead") for row in rows), (rows, shots.where())


def test_focus_stays_on_the_sample_dropdown_after_a_pick(new_page, app_url, tmp_path):
    page = new_page(1440, 900)
    shots = Shots(page, tmp_path)
    open_page(page, app_url)
    picker = page.locator("#sample-picker input")
    picker.click()
    picker.fill("")
    picker.press_sequentially("hermes-2-pro/answer")  # typed: the list filters as the keys come
    page.get_by_role("option", name="hermes-2-pro/answer-non-ascii").click()
    page.wait_for_function(
        "() => document.querySelector('#status').innerText.includes('hermes-2-pro/answer-non-ascii')"
    )
    page.wait_for_timeout(1000)  # the page re-draws after the load; focus must survive that
    shots.take("picked-with-the-mouse")
    assert page.evaluate("() => !!document.activeElement.closest('#sample-picker')"), (
        page.evaluate("() => document.activeElement.outerHTML.slice(0, 120)"),
        shots.where(),
    )
    # From the keyboard: type, ArrowDown, Enter; the next key still goes to the dropdown.
    picker.fill("")
    picker.press_sequentially("qwen3/reasoning-and")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => document.querySelector('#status').innerText.includes('qwen3/reasoning-and-answer')"
    )
    page.wait_for_timeout(1000)
    assert page.evaluate("() => !!document.activeElement.closest('#sample-picker')"), shots.where()


def test_copy_as_code_copies_a_snippet_that_prints_the_message_shown(new_page, app_url, tmp_path):
    import ast

    page = new_page(1440, 900)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    shots = Shots(page, tmp_path)
    open_page(
        page, app_url + "?sample=qwen3/reasoning-and-answer", ready="qwen3/reasoning-and-answer"
    )
    page.locator("#share").click()
    page.locator("#copy-code-button").click()
    page.wait_for_function(
        "() => (document.querySelector('#code-snippet .cm-content') || {innerText: ''}).innerText.includes('parse_response')"
    )
    shots.take("snippet")
    copied = page.evaluate("() => navigator.clipboard.readText()")
    assert copied.startswith("from engine import ResponseParser, parse_response"), (
        copied[:200],
        shots.where(),
    )
    script = tmp_path / "snippet.py"
    script.write_text(copied)
    ran = subprocess.run(
        [sys.executable, str(script)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    printed = ast.literal_eval(ran.stdout.splitlines()[0])
    assert printed == json.loads(code_text(page, "message-json")), (printed, shots.where())


def test_the_template_tab_names_the_file_the_editor_started_from(new_page, app_url, tmp_path):
    page = new_page(1440, 900)
    shots = Shots(page, tmp_path)
    open_page(page, app_url)  # the first sample's template is in the editor from the start
    page.get_by_role("tab", name="Template").click()
    page.wait_for_selector("#start-from input")
    shots.take("template-tab")
    assert page.locator("#start-from input").input_value() == "qwen3", shots.where()
    # A link to another sample names that sample's template file.
    open_page(
        page, app_url + "?sample=hermes-2-pro/typed-arguments", ready="hermes-2-pro/typed-arguments"
    )
    page.get_by_role("tab", name="Template").click()
    page.wait_for_function(
        "() => document.querySelector('#start-from input').value === 'hermes-2-pro'"
    )


@pytest.mark.parametrize("phone", [False, True], ids=["desktop", "phone"])
def test_the_fit_ranking_reads_in_its_column_and_names_a_leftover_prefix(
    new_page, app_url, tmp_path, phone
):
    gpt_oss = next(s for s in load_samples() if s.id == "gpt-oss/text-then-tool-calls")
    page = new_page(390, 844, phone=True) if phone else new_page(1440, 900)
    shots = Shots(page, tmp_path)
    open_page(page, app_url)
    page.get_by_role("tab", name="Paste & parse").click()
    page.locator("#generation textarea").fill(gpt_oss.generation)  # the qwen3 prefix stays
    page.locator("#fit-button").click()
    page.wait_for_selector("#fits-table tr.rt-best")
    page.locator("#fits").scroll_into_view_if_needed()
    shots.take("fits")
    assert page.locator("#fits-table tr.rt-best td").nth(1).inner_text() == "gpt-oss", shots.where()
    assert "The prefix does not look like gpt-oss's" in page.locator("#fits-family").inner_text(), (
        shots.where()
    )
    # Nothing spills over its cell, and the table fits its column (no sideways scrolling).
    spilled = page.evaluate("""() => [...document.querySelectorAll('#fits-table td, #fits-table th')]
        .filter((td) => td.scrollWidth > td.clientWidth + 1).map((td) => td.textContent.slice(0, 40))""")
    assert not spilled, (spilled, shots.where())
    box = page.evaluate(
        "() => { const t = document.querySelector('#fits-table'); return [t.scrollWidth, t.clientWidth]; }"
    )
    assert box[0] <= box[1], (box, shots.where())
    # Each problem reads on a line of its own under its template's figures.
    problem = page.locator("#fits-table tr.rt-best + tr.rt-fit-problem td").nth(1)
    assert problem.inner_text().startswith(
        "the start anchor '<|start|>assistant' is not in the prefix"
    ), shots.where()
    table = page.locator("#fits-table table").bounding_box()
    assert problem.bounding_box()["width"] > 0.7 * table["width"], (
        problem.bounding_box(),
        table,
        shots.where(),
    )


@pytest.mark.skipif(
    not (ROOT / "samples" / "demo-model" / "config.json").exists(), reason="demo model not built"
)
def test_constrain_to_the_template_with_a_required_call_gives_one_valid_call(
    page, app_url, tmp_path
):
    pytest.importorskip("llguidance")
    shots = Shots(page, tmp_path)
    open_page(page, app_url)
    page.get_by_role("tab", name="Generate live").click()
    page.locator("#live-settings").click()
    set_kept(page.locator("#enable-thinking input"), False)
    set_kept(page.locator("#constrain input"), True)
    choice = page.locator("#tool-choice input")
    choice.click()
    choice.fill("required, no parallel")
    choice.press("Enter")
    page.locator("#generate-button").click()
    page.wait_for_function(
        "() => document.querySelector('#model-note').innerText.includes('constrained to the template')",
        timeout=150_000,
    )
    page.wait_for_function("() => !document.querySelector('.rt-status-live')", timeout=150_000)
    shots.take("constrained")
    note = page.locator("#model-note").inner_text()
    assert "tool choice required, no parallel" in note, (note, shots.where())
    message = json.loads(code_text(page, "message-json"))
    assert len(message["tool_calls"]) == 1, (message, shots.where())
    assert "Parsed" in status_text(page), shots.where()
    # The region map shows the call as it formed: an open, a body and a close of tool_calls.
    titles = page.locator("#region-map-body [title]").evaluate_all("els => els.map(e => e.title)")
    assert any(t.startswith("tool_calls · open") for t in titles), shots.where()


# ---------------------------------------------------------------------------
# From a new model to a verified template: the author's path
# ---------------------------------------------------------------------------

WALK_CHAT_TEMPLATE = "xml-parameters"
# A real output the author has (the model's own, after its prompt): a call with two arguments.
WALK_PREFIX = "<turn user>Weather in Oslo for two days?</turn>\n<turn assistant>"
WALK_OUTPUT = (
    "Let me look that up.\n<tool name=get_weather>\n<arg=city>Oslo</arg>\n<arg=days>2</arg>\n"
    "</tool></turn>"
)


def inferred_walk_template() -> dict:
    """The template inference gives for the walk's chat template (what the page puts in the editor)."""
    from engine import infer_template

    chat_template = CHAT_TEMPLATE_FIXTURES.joinpath(f"{WALK_CHAT_TEMPLATE}.jinja").read_text()
    return infer_template(chat_template, bos_token="", eos_token="").template


def catalog_template(name: str) -> dict:
    from engine.template_files import load_template_file

    return load_template_file(name).response_template


def tap(page, selector: str, phone: bool) -> None:
    (page.locator(selector).first.tap if phone else page.locator(selector).first.click)()


def summary(page) -> tuple[int, int]:
    found = page.locator("#test-summary")
    return int(found.get_attribute("data-passed")), int(found.get_attribute("data-total"))


@pytest.mark.parametrize("mode", ["light", "dark", "phone"])
def test_the_walk_from_a_pasted_chat_template_to_a_red_test(new_page, app_url, tmp_path, mode):
    phone = mode == "phone"
    width, height = (390, 844) if phone else (1440, 900)
    page = new_page(width, height, dark=mode == "dark", phone=phone)
    shots = Shots(page, tmp_path)
    open_page(page, app_url)
    # The front door: "Start from a model" on the first screen, beside the samples.
    door = page.locator("#start-from-model").bounding_box()
    assert (
        door is not None
        and door["y"] + door["height"] <= height
        and door["x"] + door["width"] <= width
    )
    shots.take("first-screen")
    tap(page, "#start-from-model", phone)
    page.wait_for_selector("#chat-template .cm-content")
    chat_template = CHAT_TEMPLATE_FIXTURES.joinpath(f"{WALK_CHAT_TEMPLATE}.jinja").read_text()
    tap(page, "#chat-template .cm-content", phone)
    page.keyboard.insert_text(chat_template)
    tap(page, "#infer-button", phone)
    page.wait_for_selector("#inference-badge", timeout=120_000)
    page.wait_for_function(
        "() => document.querySelector('#status').innerText.includes('Matrix row')"
    )
    settle(page)
    shots.take("inferred")
    assert "passes its matrix" in page.locator("#inference-badge").inner_text(), shots.where()
    # The workspace shows the template working on one of the chat template's own renders:
    # "Parsed", no failure banner, no "does not fit", nothing lost.
    status = status_text(page)
    assert status.startswith("✔ Parsed: tool_calls, content"), (status, shots.where())
    assert (
        page.locator(
            "#status .rt-status-error, #status .rt-status-misfit, #status #status-lost"
        ).count()
        == 0
    ), shots.where()
    # Nothing of the Start tab spills out of its column (the finding keys wrap, never clip).
    clipped = page.evaluate(
        """(width) => [...document.querySelectorAll('#inference button.rt-finding, #inference code')]
        .filter((e) => e.getBoundingClientRect().right > width + 1 || e.scrollWidth > e.clientWidth + 1)
        .map((e) => e.textContent.slice(0, 40))""",
        width,
    )
    assert not clipped and page.evaluate("() => document.documentElement.scrollWidth") <= width, (
        clipped,
        shots.where(),
    )
    # A finding tapped: its evidence is brought into view.
    tap(page, "#inference button[data-finding]", phone)
    page.wait_for_selector("#explain .rt-evidence")
    page.wait_for_timeout(400)
    evidence = page.locator("#explain .rt-evidence").bounding_box()
    # Scrolled to the top of the screen: a fraction of a pixel above it is still in view.
    assert evidence is not None and -1 <= evidence["y"] < height - 40, (evidence, shots.where())
    shots.take("evidence")
    # The Tests tab holds the matrix rows, all passing, never another family's samples.
    page.get_by_role("tab", name="Tests", exact=True).click()
    page.wait_for_selector("#test-summary")
    assert summary(page) == (20, 20), shots.where()
    assert page.locator("#test-results details[data-source=sample]").count() == 0, shots.where()
    # The author pastes a real output: parsed right.
    page.get_by_role("tab", name="Paste & parse", exact=True).click()
    page.locator("#prefix textarea").fill(WALK_PREFIX)
    page.locator("#generation textarea").fill(WALK_OUTPUT)
    tap(page, "#parse-button", phone)
    page.wait_for_function(
        "() => document.querySelector('#message-json .cm-content').innerText.includes('Oslo')"
    )
    settle(page)
    shots.take("output-parsed")
    assert json.loads(code_text(page, "message-json"))["tool_calls"] == [
        {
            "type": "function",
            "function": {"name": "get_weather", "arguments": {"city": "Oslo", "days": 2}},
        }
    ], shots.where()
    assert status_text(page).startswith("✔ Parsed: tool_calls, content"), shots.where()
    if phone:
        # On a phone the pattern table reads: what a piece took is never one character wide.
        page.locator("#region-map-body span[data-i]", has_text="<tool name=").first.tap()
        page.wait_for_selector("#explain #pattern-explained")
        widths = page.evaluate(
            "() => [...document.querySelectorAll('#pattern-explained tr:first-child th')].map((th) => th.getBoundingClientRect().width)"
        )
        page.locator("#explain").scroll_into_view_if_needed()
        shots.take("phone-pattern")
        assert len(widths) == 3 and min(widths) >= 60, (widths, shots.where())
    # It becomes a test case, first, and passes.
    page.get_by_role("tab", name="Tests", exact=True).click()
    tap(page, "#add-case-button", phone)
    page.wait_for_function("() => document.querySelector('#test-summary').dataset.total === '21'")
    assert summary(page) == (21, 21), shots.where()
    shots.take("test-case")
    # An edit that breaks it turns it red.
    page.get_by_role("tab", name="Template", exact=True).click()
    broken = inferred_walk_template()
    calls = broken["fields"]["tool_calls"]
    calls["open_pattern"] = calls["open_pattern"].replace("name=", "function=")
    replace_editor_text(page, json.dumps(broken, indent=2))
    page.get_by_role("tab", name="Tests", exact=True).click()
    page.wait_for_function(
        "() => document.querySelector('#test-summary').dataset.passed !== document.querySelector('#test-summary').dataset.total"
    )
    settle(page)
    shots.take("red")
    mine = page.locator("#test-results details[data-source=output] summary").first.inner_text()
    assert mine.startswith("✘ your output 1"), (mine, shots.where())
    assert page.locator("#test-summary.rt-status-error").count() == 1, shots.where()


@pytest.mark.skipif(
    not (ROOT / "samples" / "demo-model" / "config.json").exists(), reason="demo model not built"
)
def test_generate_live_after_an_edit_keeps_the_edited_template(new_page, app_url, tmp_path):
    from engine.template_files import load_template_file

    page = new_page(1440, 900)
    shots = Shots(page, tmp_path)
    open_page(page, app_url)
    mine = load_template_file("demo-model").response_template
    mine["fields"]["content"]["close"] = [
        *(
            [mine["fields"]["content"]["close"]]
            if isinstance(mine["fields"]["content"]["close"], str)
            else mine["fields"]["content"]["close"]
        ),
        "<|my_end|>",
    ]
    page.get_by_role("tab", name="Template", exact=True).click()
    replace_editor_text(page, json.dumps(mine, indent=2))
    page.get_by_role("tab", name="Paste & parse", exact=True).click()
    page.wait_for_function(
        "() => document.querySelector('#template-choice input').value === '(edited in the Template tab)'"
    )
    page.get_by_role("tab", name="Generate live", exact=True).click()
    page.locator("#generate-button").click()
    page.wait_for_function(
        "() => document.querySelector('#model-note').innerText.includes('your edited template was kept')",
        timeout=150_000,
    )
    page.wait_for_function("() => !document.querySelector('.rt-status-live')", timeout=150_000)
    shots.take("kept")
    page.get_by_role("tab", name="Template", exact=True).click()
    assert "<|my_end|>" in page.locator("#template-editor .cm-content").inner_text(), shots.where()
    assert not page.locator("#restore-button").is_visible(), shots.where()
    # The author chooses the model's: it replaces the edit, which Restore brings back.
    page.get_by_role("tab", name="Generate live", exact=True).click()
    page.locator("#use-model-button").click()
    page.get_by_role("tab", name="Template", exact=True).click()
    page.wait_for_function(
        "() => !document.querySelector('#template-editor .cm-content').innerText.includes('<|my_end|>')"
    )
    page.wait_for_selector("#restore-button", state="visible")
    assert (
        page.locator("#restore-button").inner_text()
        == "↶ Restore the template before Use the model's template"
    )
    page.locator("#restore-button").click()
    page.wait_for_function(
        "() => document.querySelector('#template-editor .cm-content').innerText.includes('<|my_end|>')"
    )
    shots.take("restored")
    # Restore kept the model's template: Back puts it in the editor again.
    page.wait_for_selector("#restore-back-button", state="visible")
    assert (
        page.locator("#restore-back-button").inner_text() == "↷ Back to the text Restore replaced"
    )
    page.locator("#restore-back-button").click()
    page.wait_for_function(
        "() => !document.querySelector('#template-editor .cm-content').innerText.includes('<|my_end|>')"
    )
    page.wait_for_selector("#restore-back-button", state="hidden")
    assert (
        page.locator("#restore-button").inner_text()
        == "↶ Restore the template before Use the model's template"
    ), shots.where()
    shots.take("back")


def test_a_paste_into_the_template_editor_keeps_the_line_starts_in_view(
    new_page, app_url, tmp_path
):
    page = new_page(1440, 900)
    shots = Shots(page, tmp_path)
    open_page(page, app_url)
    page.get_by_role("tab", name="Template", exact=True).click()
    template = catalog_template("qwen3")
    template["fields"]["content"]["close"] = [f"<|end_of_part_{i}|>" for i in range(60)]
    long_line = json.dumps(template)  # one line, over a thousand characters
    assert len(long_line) > 1000
    replace_editor_text(page, long_line)
    page.wait_for_timeout(500)
    shots.take("pasted")
    scrolled = page.evaluate(
        "() => document.querySelector('#template-editor .cm-scroller').scrollLeft"
    )
    editor = page.locator("#template-editor .cm-content").bounding_box()
    first = page.evaluate(EDITOR_CHAR_JS, [1, 1])
    assert scrolled == 0 and first is not None and first["char"] == "{", (
        scrolled,
        first,
        shots.where(),
    )
    assert editor["x"] <= first["x"] <= editor["x"] + editor["width"], (
        editor,
        first,
        shots.where(),
    )


@pytest.mark.parametrize("frames", ["painted", "never painted"])
def test_the_map_follows_a_stream_to_a_tool_call_below_its_box(new_page, app_url, tmp_path, frames):
    page = new_page(1440, 900)
    if frames == "never painted":
        # A headless or background browser may run no animation frame for seconds: the page's
        # own script must follow the stream without one (Playwright's isolated world keeps its own).
        page.add_init_script("window.requestAnimationFrame = () => 0;")
    shots = Shots(page, tmp_path)
    open_page(page, app_url)  # the qwen3 sample: its template reads <tool_call> JSON calls
    generation = "".join(f"Line {i} of a long answer before the call.\n" for i in range(80)) + (
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n</tool_call>'
    )
    page.get_by_role("tab", name="Paste & parse", exact=True).click()
    page.locator("#generation textarea").fill(generation)
    page.locator("#parse-button").click()
    # The pasted output's parse, drawn before the replay starts (the sample's figures already
    # say "events": a parse landing during the replay would end the wait below early).
    page.wait_for_function(
        "() => document.querySelector('#region-map-body').innerText.includes('Line 79 of')"
    )
    page.locator("#replay-settings").click()
    # 300 characters a chunk, 15 chunks a second: 12 frames, each with new text below the box.
    # A fill lost to the accordion's first mount left chunks of 1 character: 3,500 frames ran
    # past the replay's 60 s budget, and the replay stopped before the call.
    for box, text in (("#chunk-size input", "300"), ("#speed input[type=number]", "15")):
        set_kept(page.locator(box), text)
        page.locator(box).press("Enter")
    page.evaluate(
        """() => {
        window.__streamed = false;
        new MutationObserver(() => {
            if (document.querySelector('#region-map-body .rt-now')) window.__streamed = true;
        }).observe(document.body, {subtree: true, childList: true});
    }"""
    )
    page.locator("#play-button").click()
    # Once it has played, the map still shows where the stream ended: the call, inside the map's box.
    page.wait_for_function(
        "() => window.__streamed && !document.querySelector('#region-map-body .rt-now')",
        timeout=180_000,  # a loaded server may start the replay late
    )
    page.wait_for_timeout(500)  # and it stays there
    place = page.evaluate(
        """() => {
          const body = document.querySelector('#region-map-body');
          const call = [...body.querySelectorAll('span')].filter((node) => /get_weather/.test(node.textContent)).pop();
          // No call on the map: what the map and the status line show instead, for the message.
          if (!call) return {scrolled: body.scrollTop, inside: false, map_end: body.innerText.slice(-160),
                             status: document.querySelector('#status').innerText.slice(0, 300)};
          const box = body.getBoundingClientRect(), at = call.getBoundingClientRect();
          return {scrolled: body.scrollTop, inside: at.top >= box.top - 1 && at.bottom <= box.bottom + 1};
        }"""
    )
    assert place["scrolled"] > 0 and place["inside"], (place, shots.where())
    shots.take("followed")


def test_a_link_naming_a_model_opens_the_start_tab_and_infers(new_page, app_url, tmp_path):
    page = new_page(1440, 900)
    shots = Shots(page, tmp_path)
    page.goto(app_url + "?chat_template_model=samples/demo-model")
    page.wait_for_selector("#inference-badge", timeout=120_000)
    settle(page)
    shots.take("linked")
    box = page.locator("#chat-template-model textarea, #chat-template-model input").first
    assert box.input_value() == "samples/demo-model", shots.where()
    assert "passes its matrix" in page.locator("#inference-badge").inner_text(), shots.where()
    assert page.locator("#modes button.selected[role=tab]").inner_text() == "Start from a model"
    assert status_text(page).startswith("✔ Parsed"), shots.where()


def test_a_sample_tapped_on_a_phone_brings_its_status_into_view(new_page, app_url, tmp_path):
    page = new_page(390, 844, phone=True)
    shots = Shots(page, tmp_path)
    open_page(page, app_url)
    page.locator("#sample-table tr", has_text="multi-turn-nested-arguments").first.tap()
    page.wait_for_function(
        "() => document.querySelector('#status').innerText.includes('multi-turn-nested-arguments')"
    )
    page.wait_for_timeout(1500)  # the status may grow after its first change
    place = page.locator("#status").bounding_box()  # before the full-page screenshot
    shots.take("phone-sample-tapped")
    assert place is not None and place["y"] >= -1 and place["y"] + place["height"] <= 845, (
        place,
        shots.where(),
    )


def test_generate_tapped_on_a_phone_brings_the_status_and_the_map_into_view(
    new_page, app_url, tmp_path
):
    page = new_page(390, 844, phone=True)
    shots = Shots(page, tmp_path)
    open_page(page, app_url)
    page.get_by_role("tab", name="Generate live").click()
    button = page.locator("#generate-button")
    # At the bottom of the screen the status is below it, once the tab is laid out (a loaded
    # machine draws the tab's parts one after another: the status showed above them first).
    page.wait_for_function(
        """() => { document.querySelector('#generate-button').scrollIntoView({block: 'end'});
        const status = document.querySelector('#status').getBoundingClientRect();
        return status.top + status.height > window.innerHeight; }"""
    )
    button.tap()
    # Any step of the generation said on the status line (a loaded machine may take seconds to
    # render the prompt in a worker before the model loads or streams).
    page.wait_for_function(
        "() => /⏳|streaming|Loading|Stopped after/.test(document.querySelector('#status').innerText)"
    )
    page.wait_for_timeout(300)
    status = page.locator("#status").bounding_box()  # before the full-page screenshot
    map_top = page.locator("#region-map-body").bounding_box()["y"]
    shots.take("phone-generate-tapped")
    assert -1 <= status["y"] <= 60 and map_top + 60 <= 844, (status, map_top, shots.where())
    page.wait_for_function(
        "() => /Parsed|Stopped/.test(document.querySelector('#status').innerText)", timeout=120_000
    )


# An output of a chat template whose calls no field can read (positional arguments).
UNREAD_PREFIX = "<|user|>Weather in Oslo?<|eot|>\n<|assistant|>"
UNREAD_OUTPUT = 'On it.<|calls|>get_weather("Oslo", 2)<|/calls|><|eot|>'


def test_a_live_output_becomes_an_example_in_one_click_and_a_failed_learn_marks_what_it_missed(
    new_page, app_url, tmp_path
):
    page = new_page(1440, 900)
    shots = Shots(page, tmp_path)
    open_page(page, app_url)
    # Generate live, then one click: the output is one of the author's outputs in Tests.
    page.get_by_role("tab", name="Generate live").click()
    page.locator("#generate-button").click()
    page.wait_for_function(
        "() => document.querySelector('#model-note').innerText.includes('Model:')", timeout=150_000
    )
    page.wait_for_function("() => !document.querySelector('.rt-status-live')", timeout=150_000)
    page.locator("#use-as-example-button").click()
    page.wait_for_function(
        "() => document.querySelector('#live-example-note').innerText.includes('Added to Tests')"
    )
    shots.take("used-as-example")
    assert (
        page.locator("#live-example-note")
        .inner_text()
        .startswith("✔ Added to Tests as 'live output 1', one of your outputs")
    ), shots.where()
    page.get_by_role("tab", name="Tests", exact=True).click()
    mine = page.locator("#test-results details[data-source=output]")
    assert mine.count() == 1, shots.where()
    assert mine.first.locator("summary").inner_text().startswith("✔ live output 1"), shots.where()
    # The demo model's output parses cleanly: sent with the message it parsed to, not unverified.
    assert (
        page.locator("#live-example-note")
        .inner_text()
        .endswith(
            "sends it as an example, the output, the tools it was given and the message it parsed to."
        )
    ), shots.where()
    assert "unverified" not in mine.first.text_content(), shots.where()
    # An output whose call no field reads, pasted, and a chat template inferred: the panel marks
    # in that output the text the learn could not explain.
    page.get_by_role("tab", name="Paste & parse", exact=True).click()
    page.locator("#prefix textarea").fill(UNREAD_PREFIX)
    page.locator("#generation textarea").fill(UNREAD_OUTPUT)
    page.get_by_role("tab", name="Start from a model", exact=True).click()
    page.locator("#chat-template .cm-content").click()
    page.keyboard.insert_text(CHAT_TEMPLATE_FIXTURES.joinpath("keyed-calls.jinja").read_text())
    page.locator("#infer-button").click()
    page.wait_for_selector("#inference-unexplained", timeout=120_000)
    page.locator("#inference-unexplained").scroll_into_view_if_needed()
    shots.take("unexplained")
    entry = page.locator("#inference-unexplained .rt-unexplained-entry").first
    assert entry.locator(".rt-evidence-label").inner_text() == "example 1: your output"
    marks = entry.locator("mark.rt-unexplained-text")
    # The renders teach the keyed calls' markers: only the call no field reads is marked.
    assert [marks.nth(i).inner_text() for i in range(marks.count())] == [
        "get_weather",
    ], shots.where()
    assert marks.nth(0).get_attribute("title") == (
        "'get_weather' is written as a call but no call was read"
    )
    ratio = page.evaluate(CONTRAST_JS, "#inference mark.rt-unexplained-text")
    assert ratio and all(m["ratio"] >= 4.5 for m in ratio), (ratio, shots.where())


def paste_chat_template(page, name: str) -> None:
    """Replace the Start tab's chat template with fixture `name`."""
    page.locator("#chat-template .cm-content").click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(CHAT_TEMPLATE_FIXTURES.joinpath(f"{name}.jinja").read_text())


def infer_and_wait(page, old: str = "") -> None:
    """Press Infer and wait for a verdict other than `old` (the previous one's text)."""
    page.locator("#infer-button").click()
    page.wait_for_function(
        "(old) => { const v = document.querySelector('#inference-report'); return v && v.innerText !== old; }",
        arg=old,
        timeout=120_000,
    )
    settle(page)
    page.wait_for_timeout(500)  # the scroll that brings the verdict into view


def in_view(page, selector: str) -> bool:
    """The top of `selector`'s first element is on the screen (with a line of it under)."""
    top = page.evaluate("(s) => document.querySelector(s).getBoundingClientRect().top", selector)
    return -1 <= top and top + 20 <= page.evaluate("() => window.innerHeight")


def test_a_second_chat_template_starts_fresh_and_each_verdict_comes_into_view(
    new_page, app_url, tmp_path
):
    page = new_page(1440, 900)
    shots = Shots(page, tmp_path)
    open_page(page, app_url)
    page.locator("#start-from-model").click()
    page.wait_for_selector("#chat-template .cm-content")
    paste_chat_template(page, "listed-tools")
    page.evaluate("() => window.scrollTo(0, 0)")
    infer_and_wait(page)
    verdict_shown = in_view(page, "#inference-badge")  # before a full-page screenshot scrolls
    shots.take("first-inferred")
    assert verdict_shown, shots.where()
    first = page.locator("#inference-report").inner_text()
    # The author pastes the first model's output and keeps it as a test case.
    page.get_by_role("tab", name="Paste & parse", exact=True).click()
    page.locator("#prefix textarea").fill("<|assistant|>")
    page.locator("#generation textarea").fill(
        'Checking.<<go>>[get_weather(city="Oslo")]<</go>><|eot|>'
    )
    page.locator("#parse-button").click()
    # Its parse first: a case added before it lands would be the sample's output.
    page.wait_for_function(
        "() => document.querySelector('#region-map-body').innerText.includes('Oslo')"
    )
    page.get_by_role("tab", name="Tests", exact=True).click()
    # One press (a parse still running when it lands leaves the case in the panel).
    page.locator("#add-case-button").click()
    page.wait_for_selector("#test-results details[data-source=output]", timeout=120_000)
    # Another model's chat template: nothing of the first reaches its inference.
    page.get_by_role("tab", name="Start from a model", exact=True).click()
    paste_chat_template(page, WALK_CHAT_TEMPLATE)
    page.evaluate("() => window.scrollTo(0, 0)")
    infer_and_wait(page, first)
    verdict_shown = in_view(page, "#inference-badge")
    shots.take("second-inferred")
    assert verdict_shown, shots.where()
    report = page.locator("#inference-report").inner_text()
    assert "given as examples" not in report, shots.where()
    assert (
        page.locator("#inference-fresh")
        .inner_text()
        .startswith(
            "Started fresh for this chat template: 1 output made for the previous chat template"
        )
    ), shots.where()
    page.get_by_role("tab", name="Template", exact=True).click()
    assert "<<go>>" not in code_text(page, "template-editor"), shots.where()
    page.get_by_role("tab", name="Tests", exact=True).click()
    page.wait_for_selector("#test-summary")
    assert page.locator("#test-results details[data-source=output]").count() == 0, shots.where()
    total = summary(page)[1]
    assert page.locator("#test-results details[data-source=matrix]").count() == total, shots.where()


def test_phone_key_names_wrap_between_names_and_the_status_is_said_by_the_verdict(
    new_page, app_url, tmp_path
):
    page = new_page(390, 844, phone=True)
    shots = Shots(page, tmp_path)
    open_page(page, app_url)
    page.locator("#start-from-model").tap()
    page.wait_for_selector("#chat-template .cm-content")
    paste_chat_template(page, "listed-tools")
    infer_and_wait(page)
    verdict_shown = in_view(page, "#inference-badge")  # before a full-page screenshot scrolls
    shots.take("inferred")
    assert verdict_shown, shots.where()
    # Each name of a key path sits on one line (a narrow screen breaks only after the dots).
    broken = page.evaluate(
        """() => [...document.querySelectorAll('#inference code.rt-key')].flatMap((code) =>
             [...code.childNodes].filter((node) => node.nodeType === 3).filter((node) => {
               const range = document.createRange(); range.selectNodeContents(node);
               const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
               return tops.size > 1;
             }).map((node) => node.textContent))"""
    )
    # The workspace's status is said under the verdict, not only far below the tab.
    near = page.evaluate(
        """() => document.querySelector('#inference-workspace').getBoundingClientRect().top
                 - document.querySelector('#inference-badge').getBoundingClientRect().top"""
    )
    assert page.locator("#inference-workspace").inner_text().startswith("Matrix row "), (
        shots.where()
    )
    assert 0 < near < 300, (near, shots.where())
    assert page.locator("#inference code.rt-key").count() >= 3, shots.where()
    assert broken == [], (broken, shots.where())


def test_the_chat_label_stop_and_export_label_read_plainly(new_page, app_url, tmp_path):
    page = new_page(1440, 900)
    shots = Shots(page, tmp_path)
    open_page(page, app_url)  # the default sample: text, then two tool calls
    page.locator("#chat .thought").first.wait_for()
    shots.take("chat")
    boxes = page.evaluate(
        """() => { const chat = document.querySelector('#chat');
             const box = (e) => e.getBoundingClientRect().toJSON();
             return {label: box(chat.querySelector('[data-testid=block-label]')),
                     messages: box(chat.querySelector('.bubble-wrap')),
                     call: box(chat.querySelector('.thought'))}; }"""
    )
    label, messages, call = boxes["label"], boxes["messages"], boxes["call"]
    # The label sits above the messages' box, so no message (the first tool call) is under it.
    assert label["bottom"] <= messages["top"] + 1, (boxes, shots.where())
    # What shows of the first tool call (the box clips what scrolled out) is below the label.
    assert max(call["top"], messages["top"]) >= label["bottom"], (boxes, shots.where())
    page.get_by_role("tab", name="Generate live", exact=True).click()
    page.wait_for_selector("#stop-button")
    colour = page.evaluate(
        "() => getComputedStyle(document.querySelector('#stop-button')).backgroundColor"
    )
    red, green, blue = (int(part) for part in colour[colour.index("(") + 1 : -1].split(",")[:3])
    assert not (red > 180 and green < 120 and blue < 120), (colour, shots.where())
    page.get_by_role("tab", name="Template", exact=True).click()
    page.wait_for_selector("#export-target")
    assert page.locator("#export-target [data-testid=block-info]").inner_text() == "For", (
        shots.where()
    )


# The Tokens view: Generate live with the demo model draws `<tool_call>` as a control token; a
# pasted output with a `<tool_call>` marked spelled out keeps it in content and says why.
@pytest.mark.skipif(
    not (ROOT / "samples" / "demo-model" / "config.json").exists(), reason="demo model not built"
)
def test_generate_live_shows_tool_call_as_a_control_token(new_page, app_url, tmp_path):
    page = new_page(1440, 1000)
    shots = Shots(page, tmp_path)
    open_page(page, app_url)
    page.locator("#show-tokens input").check()
    page.get_by_role("tab", name="Event log").click()
    set_kept(page.locator("#group-by-token input"), True)
    page.get_by_role("tab", name="Generate live", exact=True).click()
    page.locator("#live-settings").click()
    # Seed 0 without thinking: the demo model calls get_weather.
    set_kept(page.locator("#enable-thinking input"), False)
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
    # Matched in text: at most what the close takes before `</tool_call>` (an ordinary newline).
    by_text = page.locator("#region-map-body .rt-by-text")
    titles = [by_text.nth(k).get_attribute("title") for k in range(by_text.count())]
    assert all(
        title.startswith("tool_calls · close · matched in text (ordinary tokens) · token ")
        for title in titles
    ), (titles, shots.where())
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


@pytest.mark.skipif(
    not (ROOT / "samples" / "demo-model" / "config.json").exists(), reason="demo model not built"
)
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
    # The reading as ids and the Tokens view, the second ticked while the first still runs:
    # the page answers them one at a time, so the map ends with both.
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
    # A call left in content is never plain green, even one the author marked spelled out: the
    # status says its close (a control token's id) was consumed with no call open, and names the
    # tool sitting in content.
    status = " ".join(page.locator("#status").inner_text().split())
    assert status.startswith("⚠ "), (status, shots.where())
    assert (
        "lenient reading at stream offset 115: '</tool_call>' is the close of tool_calls where no "
        "tool_calls region is open: consumed"
    ) in status, shots.where()
    assert (
        "△ the tool 'get_weather' is named at generation offset 48 in content, with its "
        "parameter 'city'"
    ) in status, shots.where()
    assert "</tool_call>" not in message["content"], shots.where()
