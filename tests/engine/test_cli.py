"""The command line, run as a subprocess on a shipped template and its samples."""

import json
import subprocess
import sys

from engine.authoring.samples import load_samples
from tests.support.paths import ROOT as REPO_ROOT


def run(*args, stdin=None):
    return subprocess.run(
        [sys.executable, "-m", "engine", *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        input=stdin,
        timeout=120,
    )


def test_check_passes_on_qwen3():
    result = run("check", "templates/qwen3.json", "samples/qwen3.json", "--seeds", "3")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "12 samples, 0 failure(s)" in result.stdout


def test_check_fails_on_wrong_samples(tmp_path):
    sample = next(s for s in load_samples() if s.id == "qwen3/reasoning-and-answer")
    broken = {
        "family": "qwen3",
        "cases": [
            {
                "name": "wrong",
                "prefix": sample.prefix,
                "generation": sample.generation,
                "expected": {"role": "assistant"},
            }
        ],
    }
    path = tmp_path / "samples.json"
    path.write_text(json.dumps(broken))
    result = run("check", "templates/qwen3.json", str(path), "--seeds", "1")
    assert result.returncode == 1 and "FAIL wrong" in result.stdout


def test_lint_exit_status(tmp_path):
    assert run("lint", "qwen3").returncode == 0
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"start_anchor": "<S>", "fields": {"a": {"open_pattern": "x*"}}}))
    result = run("lint", str(bad))
    assert (
        result.returncode == 1
        and "pattern-matches-empty" not in result.stdout
        and "empty string" in result.stdout
    )


def test_parse_prints_message_and_trace(tmp_path):
    sample = next(s for s in load_samples() if s.id == "qwen3/text-then-tool-calls")
    prefix = tmp_path / "prefix.txt"
    prefix.write_text(sample.prefix)
    result = run(
        "parse", "templates/qwen3.json", "--prefix", str(prefix), "-", stdin=sample.generation
    )
    assert result.returncode == 0 and json.loads(result.stdout) == sample.expected
    traced = run("parse", "qwen3", "--trace", "--prefix", str(prefix), stdin=sample.generation)
    assert traced.returncode == 0
    assert (
        "anchor cut at prefix offset 1268" in traced.stdout
        and "Let me check both cities." in traced.stdout
    )


def test_infer_past_its_timeout_says_so_and_hints_at_the_option(tmp_path):
    slow = tmp_path / "slow.jinja"
    slow.write_text(
        "{% for i in range(1200) %}{% for j in range(1200) %}{% endfor %}{% endfor %}"
        "{%- for m in messages %}<|{{ m.role }}|>{{ m.content }}<|eot|>{% endfor -%}"
        "{%- if add_generation_prompt %}<|assistant|>{% endif -%}",
        encoding="utf-8",
    )
    result = run(
        "infer", "--chat-template", str(slow), "--timeout", "0.01",
        "--output", str(tmp_path / "out.json"),
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stdout.split("\n")[:2] == [
        "error: inference ran out of time after 0.01 s: the time budget ran out while rendering: "
        "the chat template renders too slowly",
        "hint: allow more time with --timeout SECONDS",
    ]


DEMO_PROMPT = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"


def _demo_ids(spell_first_call: bool) -> list[int]:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(REPO_ROOT / "samples" / "demo-model")
    quoted = "<tool_call>"
    ids = tokenizer.encode("<think>\nUse the ", add_special_tokens=False)
    ids += tokenizer.encode(quoted, add_special_tokens=False, split_special_tokens=spell_first_call)
    return ids + tokenizer.encode(
        ' tag.</think>\n\n<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call><|im_end|>',
        add_special_tokens=False,
    )


def test_parse_with_a_tokenizer_reads_token_ids_and_keeps_a_spelled_out_tag_as_text(tmp_path):
    (tmp_path / "prefix.txt").write_text(DEMO_PROMPT, encoding="utf-8")
    (tmp_path / "ids.json").write_text(json.dumps(_demo_ids(True)), encoding="utf-8")
    args = ("parse", "demo-model", "--prefix", str(tmp_path / "prefix.txt"))
    result = run(*args, str(tmp_path / "ids.json"), "--tokenizer", "samples/demo-model")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "role": "assistant",
        "reasoning_content": "Use the <tool_call> tag.",
        "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {}}}],
    }
    # text is tokenized: its <tool_call> becomes the control token, which ends the reasoning
    text = "<think>\nUse the <tool_call> tag.</think>"
    result = run(*args, "--tokenizer", "samples/demo-model", stdin=text)
    assert result.returncode == 1
    assert "error: fields.tool_calls: json" in result.stdout


def test_parse_trace_with_a_tokenizer_shows_tokens_and_what_matched_each_delimiter(tmp_path):
    (tmp_path / "prefix.txt").write_text(DEMO_PROMPT, encoding="utf-8")
    (tmp_path / "ids.json").write_text(json.dumps(_demo_ids(True)), encoding="utf-8")
    result = run(
        "parse",
        "demo-model",
        str(tmp_path / "ids.json"),
        "--prefix",
        str(tmp_path / "prefix.txt"),
        "--tokenizer",
        "samples/demo-model",
        "--trace",
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "30 generated token(s)"
    assert "open reasoning_content: '<think>' (tokens 9-9, matched by control token)" in lines
    assert "open tool_calls: '<tool_call>' (tokens 25-25, matched by control token)" in lines
    assert "spelled out at 16: '<tool_call>' stays text" in lines


def test_lint_with_a_tokenizer_flags_a_close_that_is_not_the_control_token(tmp_path):
    template = json.loads(
        (REPO_ROOT / "samples" / "demo-model" / "tokenizer_config.json").read_text()
    )["response_template"]
    clean = tmp_path / "clean.json"
    clean.write_text(json.dumps(template), encoding="utf-8")
    result = run("lint", str(clean), "--tokenizer", "samples/demo-model")
    assert result.returncode == 0 and "no findings" in result.stdout, result.stdout
    tool_calls = template["fields"]["tool_calls"]
    del tool_calls["close_pattern"]
    tool_calls["close"] = "</tool_call >"
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(template), encoding="utf-8")
    result = run("lint", str(broken), "--tokenizer", "samples/demo-model")
    assert result.returncode == 0, result.stderr  # warnings only
    found = " ".join(result.stdout.split())
    assert (
        "warning fields.tool_calls.close: '</tool_call >' is not the control token '</tool_call>': "
        "this tokenizer encodes it as 4 ordinary token(s)"
    ) in found
    assert "fix: write '</tool_call>'" in found
