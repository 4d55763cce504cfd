"""Hostile input to the public API and the deep links of a running app.py, through gradio_client.

Wrong types, huge values, invalid JSON, hostile regexes and bad deep-link parameters:
every answer is a clear error naming what was wrong (never a traceback), and the server
stays up and keeps parsing. Each case is one request, so the file takes seconds. Then
generated templates, inputs and deep links (hypothesis), straight to the handlers: no
traceback, no server path or Python type name (how long a parse may run is tested with the limits).
"""

from __future__ import annotations

import base64
import json
import re
import zlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import TemplateError, load_template
from playground import api, handlers
from playground.catalog import template_text_of
from playground.parse.session import Session
from playground.parse.workspace import WorkspaceInputs
from playground.server import limits
from tests.support.load_sessions import PageVisitor, api_client

gradio_client = pytest.importorskip("gradio_client")

CAPS = limits.Limits()
QWEN3 = json.loads(open("templates/qwen3.json", encoding="utf-8").read())["response_template"]
QWEN3_TEXT = template_text_of(QWEN3)
BAD_PATTERN = template_text_of(
    {**QWEN3, "fields": {"content": {"open_pattern": "(", "close": "x"}}}
)
# (a|aa)+$ backtracks for ages on a run of a's that does not end the stream; the regex budget stops it.
CATASTROPHIC = template_text_of(
    {**QWEN3, "fields": {"content": {"open": "<a>", "close_pattern": "(a|aa)+$"}}}
)

# (endpoint, arguments, a piece of the error that says what was wrong)
PARSE_CASES = [
    ("/parse", (123, "", "hi", ""), "The template must be text"),
    ("/parse", (None, "", "hi", ""), "The template is empty"),
    ("/parse", (["a"], "", "hi", ""), "The template must be text"),
    ("/parse", ("{", "", "hi", ""), "The template is not valid JSON"),
    ("/parse", ("[]", "", "hi", ""), "The template must be a JSON object"),
    ("/parse", (BAD_PATTERN, "", "hi", ""), "fields.content"),
    (
        "/parse",
        (QWEN3_TEXT, "", "x" * (CAPS.generation_chars + 1), ""),
        "The generation is too long",
    ),
    ("/parse", (QWEN3_TEXT, "p" * (CAPS.prefix_chars + 1), "hi", ""), "The prefix is too long"),
    ("/parse", (QWEN3_TEXT, 5, "hi", ""), "The prefix must be text"),
    ("/parse", (QWEN3_TEXT, "", {"a": 1}, ""), "The generation must be text"),
    ("/parse", (QWEN3_TEXT, "", "hi", "[{"), "The tools JSON is not valid JSON"),
    ("/parse", (QWEN3_TEXT, "", "hi", "[" * 100 + "]" * 100), "nested too deeply"),
    ("/parse", (CATASTROPHIC, "", "<a>" + "a" * 40 + "b", ""), "pattern too slow on this input"),
    ("/replay", (QWEN3_TEXT, "", "hi", "", "chars:-1"), "chunking"),
    ("/replay", (QWEN3_TEXT, "", "hi", "", "chars:0"), "chunking"),
    ("/replay", (QWEN3_TEXT, "", "hi", "", "points:a,b"), "chunking"),
    ("/replay", (QWEN3_TEXT, "", "hi", "", 7), "The chunking must be text"),
    ("/lint", ("{not json",), "not valid JSON"),
    ("/lint", (["x"],), "The template must be text"),
    ("/load_sample", ("no-such/sample",), "no-such/sample"),
    ("/load_sample", (12,), "The sample id must be text"),
    ("/export", ("{", ""), "not valid JSON"),
    ("/export", (QWEN3_TEXT, "{oops"), "tokenizer_config"),
]

GENERATE_CASES = [
    ({"user": "Hi", "max_new_tokens": 10**9}, "max_new_tokens must be between 1 and"),
    ({"user": "Hi", "max_new_tokens": -3}, "max_new_tokens must be between 1 and"),
    ({"user": "Hi", "max_new_tokens": "many"}, "max_new_tokens must be a whole number"),
    ({"user": "", "messages_text": "[{"}, "The messages JSON is not valid JSON"),
    ({"user": "Hi", "model_name": "../../no/such/folder"}, "is not a model this server can load"),
    ({"user": "Hi", "model_name": "/root/.ssh"}, "is not a model this server can load"),
    ({"user": "word " * 2000}, "The user message is too long"),
    ({"user": "Hi", "temperature": "hot"}, "temperature must be a number"),
]


def _error_of(result) -> str:
    if isinstance(result, list):  # /lint: the diagnostics, errors first
        return " ".join(str(item.get("message", "")) for item in result)
    return str(result.get("error") or "")


@pytest.mark.parametrize(
    ("endpoint", "arguments", "expected"), PARSE_CASES, ids=lambda value: str(value)[:40]
)
def test_bad_input_to_an_endpoint_gets_a_clear_error(loaded_app, endpoint, arguments, expected):
    result = api_client(loaded_app[1]).predict(*arguments, api_name=endpoint)
    error = _error_of(result)
    assert expected in error, error
    assert "Traceback" not in json.dumps(result)


@pytest.mark.parametrize(
    ("arguments", "expected"), GENERATE_CASES, ids=lambda value: str(value)[:40]
)
def test_bad_input_to_generate_gets_a_clear_error(loaded_app, arguments, expected):
    updates = list(api_client(loaded_app[1]).submit(**arguments, api_name="/generate"))
    assert updates[-1]["finished"] is True
    assert expected in updates[-1]["error"], updates[-1]["error"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"sample": "no-such/sample"}, "no-such/sample"),
        ({"state": "not-base64!!"}, "The link"),
        ({"chunk": "-4", "chunking": "chars:0"}, "The link"),
        ({"chunk": "²"}, "?chunk=² is not a chunk number"),  # a digit int() cannot read
        ({"template": "../../etc/passwd"}, "The link"),
    ],
    ids=lambda value: str(value)[:40],
)
def test_a_bad_deep_link_is_named_on_the_page(loaded_app, query, expected):
    page = PageVisitor(loaded_app[1])
    try:
        outputs = page.open(query)
        status = outputs[-1]["status"]
        assert expected in status and "Traceback" not in status
    finally:
        page.close()


def test_the_server_is_up_and_parsing_after_the_fuzz(loaded_app):
    process, url = loaded_app
    result = api_client(url).predict(QWEN3_TEXT, "", "<think>a</think>b", "", api_name="/parse")
    assert result["message"] == {"role": "assistant", "reasoning_content": "a", "content": "b"}
    assert process.poll() is None


# -- generated hostile input, straight to the handlers and the API (no server: hundreds of cases) ---

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.floats(allow_nan=False, width=16)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=12,
)
FIELD_KEYS = [
    "open",
    "open_pattern",
    "close",
    "close_pattern",
    "content",
    "content_args",
    "repeats",
    "join",
    "optional",
    "transform",
    "transform_each",
]
# What no message to a visitor may hold: a traceback, a server path, a Python exception type.
LEAKS = re.compile(
    r"Traceback|Something went wrong|/root/|/work/|/home/|\b(?:Type|Value|Key|Recursion|Memory|Attribute|Index)Error\b"
)


@st.composite
def hostile_templates(draw) -> str:
    """Template text: mostly template-shaped JSON with wrong values where values go, sometimes not JSON at all."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.text(max_size=40))
    fields = draw(
        st.dictionaries(
            st.sampled_from(["content", "x", "tool_calls", ""]),
            st.dictionaries(
                st.sampled_from(FIELD_KEYS),
                JSON_VALUES | st.sampled_from(["<a>", "(a|aa)+$", "json", "{content}"]),
                max_size=4,
            ),
            max_size=3,
        )
    )
    template = {
        "start_anchor": draw(st.sampled_from(["<s>", "", "(", None, ["<s>"]])),
        "fields": fields,
    }
    extra = draw(
        st.dictionaries(
            st.sampled_from(["defaults", "version", "start_anchor_pattern", "x"]),
            JSON_VALUES,
            max_size=2,
        )
    )
    return json.dumps({**template, **extra})


@st.composite
def deep_links(draw) -> dict:
    names = st.sampled_from(
        ["sample", "template", "state", "chunking", "tab", "chunk", "smaple", "__theme"]
    )
    values = st.sampled_from(
        [
            "qwen3/text-then-tool-calls",
            "no/such",
            "chars:0",
            "chars:3",
            "random:x",
            "points:1,a",
            "tokens",
            "template",
            "-1",
            "12",
            "9" * 30,
            "W" * 9000,
            "eJzLSM3JyQcABiwCFQ",
            "",
            "[" * 50,
        ]
    ) | st.text(max_size=20)
    return draw(st.dictionaries(names, values, max_size=4))


def _status(outputs: dict) -> str:
    return str(outputs.get("status", ""))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    template_text=hostile_templates(),
    generation=st.text(max_size=60),
    tools_text=st.sampled_from(["", "[", "{}", "[{}]", "[1]"]),
)
def test_generated_templates_and_inputs_get_a_message_never_a_traceback(
    template_text, generation, tools_text
):
    outputs = handlers.parse(
        WorkspaceInputs(template_text, "<s>", generation, tools_text), "", Session()
    )
    result = api.parse(template_text, "<s>", generation, tools_text)
    assert not LEAKS.search(_status(outputs)), _status(outputs)
    assert not LEAKS.search(json.dumps([result.get("status"), result.get("error")])), result
    assert not LEAKS.search(json.dumps(api.lint(template_text)))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(params=deep_links())
def test_generated_deep_links_get_a_message_never_a_traceback(params):
    outputs = handlers.open_page(params, Session())
    assert not LEAKS.search(_status(outputs)), _status(outputs)


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        ("W" * 9000, "The shared state in the link is too long"),
        (base64.urlsafe_b64encode(zlib.compress(b"[" * 200_000, 9)).decode(), "nested too deeply"),
        (base64.urlsafe_b64encode(zlib.compress(b'{"generation": 5}')).decode(), ""),
    ],
    ids=["too long", "deep", "not text"],
)
def test_a_hostile_state_parameter_is_named(state, expected):
    status = _status(handlers.open_page({"state": state}, Session()))
    assert expected in status and not LEAKS.search(status)


def test_every_bad_template_is_a_template_error():
    for bad in (
        {"content": {"x": 1}},
        {"content": ["json"]},
        {"content": "kv-lines", "content_args": {"value_parser": {"name": {}}}},
    ):
        with pytest.raises(TemplateError, match="unknown content parser"):
            load_template({"start_anchor": "<s>", "fields": {"x": {"open": "<x>", **bad}}})
