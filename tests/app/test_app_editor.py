"""The template editor's places (no browser): the key under a click, and a pattern clicked there explained."""

from __future__ import annotations

import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from playground import catalog, handlers
from playground.authoring.editor_paths import string_at
from playground.parse.session import Session

QWEN3 = catalog.samples_by_id()["qwen3/text-then-tool-calls"]
TEMPLATE = (
    '{"start_anchor": "<|im_start|>assistant\\n", "fields": {"tool_calls": {"open": ["<a>", "<b>"], '
    '"close_pattern": "(?<=\\\\})\\\\s*</tool_call>", "repeats": true, "content": "json"}}}'
)


def test_the_string_under_a_place_and_its_key_path():
    def at(needle: str):
        return string_at(TEMPLATE, TEMPLATE.index(needle) + 1)

    assert at("start_anchor") == (
        "start_anchor",
        "<|im_start|>assistant\n",
    )  # on the key: its value
    assert at("assistant") == ("start_anchor", "<|im_start|>assistant\n")
    assert at('"<b>"') == ("fields.tool_calls.open.1", "<b>")
    assert (
        at("close_pattern")
        == at("</tool_call>")
        == ("fields.tool_calls.close_pattern", "(?<=\\})\\s*</tool_call>")
    )
    assert at('"repeats"') is None and at("true") is None  # a key without a string value, a literal
    assert at('"fields"') is None and at('"tool_calls"') is None  # keys of objects
    assert (
        string_at(TEMPLATE, TEMPLATE.index(", ") + 1) is None
    )  # between values (right after a quote is still on it)
    assert string_at('{"a": "x', 6) is None and string_at('{"a": [1}', 7) is None  # broken JSON


KEYS = st.text(alphabet="abcdefgh_", min_size=1, max_size=6)
VALUES = st.recursive(
    st.text(alphabet='ab"\\\n é', max_size=6) | st.integers() | st.booleans() | st.none(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
    max_leaves=8,
)


def _strings(value, path=()):
    """Every (dotted path, string) of a JSON value's string leaves."""
    if isinstance(value, str):
        yield ".".join(path), value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, (*path, str(index)))


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(KEYS, VALUES, max_size=4), st.sampled_from([None, 2]))
def test_every_place_gives_a_string_of_the_document_and_every_string_has_a_place(document, indent):
    text = json.dumps(document, indent=indent, ensure_ascii=False)
    leaves = set(_strings(document))
    found = {string_at(text, offset) for offset in range(len(text) + 1)} - {None}
    assert found == leaves


def test_a_pattern_clicked_in_the_editor_is_explained_with_what_it_took():
    session = Session()
    handlers.load_sample(QWEN3.id, session)
    text = catalog.template_text_of(QWEN3.template)
    place = text.index("(?<=")
    out = handlers.show_event({"editor_at": place}, text, session)
    panel = re.sub(r"<[^>]+>", "", out["explain"])
    assert panel.startswith(
        "Close patterntemplate keyfields.tool_calls.close_patternpattern(?&lt;=\\})\\s*&lt;/tool_call&gt;"
    )
    assert "matched 2 times; the first at stream" in panel
    assert "<th>took here</th>" in out["explain"]
    # Not a pattern (or no key at all): #explain stays as it is.
    assert handlers.show_event({"editor_at": text.index('"repeats"') + 1}, text, session) == {}
    assert handlers.show_event({"editor_at": 0}, "{not json", session) == {}
    # The editor's pattern differs from the one parsed: no matches claimed for it.
    edited = text.replace('</tool_call>"', '</toolcall>"')
    out = handlers.show_event({"editor_at": edited.index("(?<=")}, edited, session)
    assert (
        "the parse on the map used another pattern here" in out["explain"]
        and "took here" not in out["explain"]
    )
