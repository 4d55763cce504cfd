"""Hostile input to the public API and the deep links of a running app.py, through gradio_client.

Wrong types, huge values, invalid JSON, hostile regexes and bad deep-link parameters:
every answer is a clear error naming what was wrong (never a traceback), and the server
stays up and keeps parsing. Each case is one request, so the file takes seconds.
"""

from __future__ import annotations

import json

import pytest

from playground import limits
from playground.catalog import template_text_of
from tests.load_sessions import PageVisitor, api_client

gradio_client = pytest.importorskip("gradio_client")

CAPS = limits.Limits()
QWEN3 = json.loads(open("templates/qwen3.json", encoding="utf-8").read())["response_template"]
QWEN3_TEXT = template_text_of(QWEN3)
BAD_PATTERN = template_text_of({**QWEN3, "fields": {"content": {"open_pattern": "(", "close": "x"}}})
# (a|aa)+$ backtracks for ages on a run of a's that does not end the stream; the regex budget stops it.
CATASTROPHIC = template_text_of({**QWEN3, "fields": {"content": {"open": "<a>", "close_pattern": "(a|aa)+$"}}})

# (endpoint, arguments, a piece of the error that says what was wrong)
PARSE_CASES = [
    ("/parse", (123, "", "hi", ""), "The template must be text"),
    ("/parse", (None, "", "hi", ""), "The template is empty"),
    ("/parse", (["a"], "", "hi", ""), "The template must be text"),
    ("/parse", ("{", "", "hi", ""), "The template is not valid JSON"),
    ("/parse", ("[]", "", "hi", ""), "The template must be a JSON object"),
    ("/parse", (BAD_PATTERN, "", "hi", ""), "fields.content"),
    ("/parse", (QWEN3_TEXT, "", "x" * (CAPS.generation_chars + 1), ""), "The generation is too long"),
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
    ({"user": "Hi", "model_name": "../../no/such/folder"}, "no folder"),
    ({"user": "Hi", "temperature": "hot"}, "temperature must be a number"),
]


def _error_of(result) -> str:
    if isinstance(result, list):  # /lint: the diagnostics, errors first
        return " ".join(str(item.get("message", "")) for item in result)
    return str(result.get("error") or "")


@pytest.mark.parametrize(("endpoint", "arguments", "expected"), PARSE_CASES, ids=lambda value: str(value)[:40])
def test_bad_input_to_an_endpoint_gets_a_clear_error(loaded_app, endpoint, arguments, expected):
    result = api_client(loaded_app[1]).predict(*arguments, api_name=endpoint)
    error = _error_of(result)
    assert expected in error, error
    assert "Traceback" not in json.dumps(result)


@pytest.mark.parametrize(("arguments", "expected"), GENERATE_CASES, ids=lambda value: str(value)[:40])
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
