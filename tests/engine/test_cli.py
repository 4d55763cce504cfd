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
