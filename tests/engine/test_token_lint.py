"""Lint against a tokenizer: token-shaped delimiters that are not control tokens, and control
tokens the chat template writes that no delimiter names (the demo model's real tokenizer)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import pytest

from engine.authoring.token_lint import lint_tokenizer
from tests.support.paths import ROOT
from tests.support.token_parity import DEMO_MODEL, demo_tokenizer


@pytest.fixture(scope="module")
def tokenizer():
    return demo_tokenizer()


def with_close(template: dict, close: str) -> dict:
    """The demo template with the tool-call close a literal `close`."""
    changed = copy.deepcopy(template)
    calls = changed["fields"]["tool_calls"]
    del calls["close_pattern"]
    calls["close"] = close
    return changed


def test_the_demo_template_is_clean_against_its_tokenizer(tokenizer):
    assert lint_tokenizer(tokenizer.response_template, tokenizer) == []


def test_a_close_with_a_space_is_not_the_control_token(tokenizer):
    found = lint_tokenizer(with_close(tokenizer.response_template, "</tool_call >"), tokenizer)
    assert [(d.code, d.path, d.suggestion) for d in found] == [
        ("delimiter-not-control-token", "fields.tool_calls.close", "write `</tool_call>`"),
        ("control-token-not-in-template", "", found[1].suggestion),
    ]
    assert found[0].message == (
        "`</tool_call >` is not a control token of this tokenizer (4 ordinary tokens: '</' "
        "'tool_call' ' ' '>'); the model writes `</tool_call>` as one id, which this delimiter "
        "never matches, and `</tool_call >` only matches text written with ordinary tokens"
    )
    assert found[1].message.startswith(
        "the chat template writes the control token `</tool_call>`, which no delimiter"
    )


def test_a_delimiter_of_ordinary_tokens_is_split_across_tokens(tokenizer):
    template = copy.deepcopy(tokenizer.response_template)
    template["fields"]["tool_calls"]["open"] = "<call>"
    template["fields"]["reasoning_content"]["close_pattern"] = "</think>|(?=<call>)"
    found = lint_tokenizer(template, tokenizer)
    assert [(d.code, d.path) for d in found] == [
        ("delimiter-split-across-tokens", "fields.reasoning_content.close"),
        ("delimiter-split-across-tokens", "fields.tool_calls.open"),
        ("control-token-not-in-template", ""),
    ]
    assert "(3 ordinary tokens: '<' 'call' '>')" in found[1].message


def test_lint_on_the_command_line_flags_the_close(tmp_path, tokenizer):
    path = tmp_path / "template.json"
    path.write_text(json.dumps(with_close(tokenizer.response_template, "</tool_call >")))
    result = subprocess.run(
        [sys.executable, "-m", "engine", "lint", str(path), "--tokenizer", str(DEMO_MODEL)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert (
        "warning fields.tool_calls.close: `</tool_call >` is not a control token of this tokenizer"
        in result.stdout
    )
    assert "fix: write `</tool_call>`" in result.stdout
