"""What each serving runtime refuses in a response template, and the export that carries a
template over to it."""

from __future__ import annotations

import json

import pytest

import engine
from engine.authoring.portability import export_for, target_diagnostics
from engine.cli import main

SHIPPED = [template.name for template in engine.list_templates()]
# What vLLM's and SGLang's serving adapters refuse in the shipped templates: the reasoning
# field's name, and the one content parser their parser copies lack.
REFUSED = {
    name: [("fields.reasoning_content", "target-field-name")]
    for name in SHIPPED
    if "reasoning_content" in engine.load_template(name).fields
}
REFUSED["llama-3.2-pythonic"] = [("fields.tool_calls.content", "target-content-parser")]


@pytest.mark.parametrize("target", ["vllm", "sglang"])
@pytest.mark.parametrize("name", SHIPPED)
def test_lint_for_vllm_and_sglang_flags_exactly_what_their_adapters_refuse(name, target):
    errors = [
        (diagnostic.path, diagnostic.code)
        for diagnostic in engine.lint(name, target=target)
        if diagnostic.severity == "error"
    ]
    assert errors == REFUSED.get(name, [])


@pytest.mark.parametrize("target", ["vllm", "sglang"])
@pytest.mark.parametrize("name", SHIPPED)
def test_the_export_passes_the_runtimes_lint_unless_the_language_cannot_say_it_there(name, target):
    exported = export_for(name, target)
    errors = [
        f.path
        for f in target_diagnostics(exported.template["response_template"], target)
        if f.severity == "error"
    ]
    unservable = {
        "gpt-oss": ["fields.thinking.join"],
        "llama-3.2-pythonic": ["fields.tool_calls.content"],
    }
    assert errors == unservable.get(name, [])
    assert exported.servable == (name not in unservable)
    if "reasoning_content" in engine.load_template(name).fields:
        assert exported.changes == ["fields.reasoning_content renamed to fields.thinking"]
        back = export_for(exported.template, "transformers")
        shipped = engine.list_templates()[SHIPPED.index(name)].path.read_text(encoding="utf-8")
        assert back.template == json.loads(shipped)
        assert back.changes == ["fields.thinking renamed to fields.reasoning_content"]


def test_each_refusal_names_its_runtime_and_where_the_rule_comes_from():
    found = target_diagnostics("qwen3", "vllm")[0]
    assert found.message == (
        "vllm refuses this template: only the fields thinking, content, tool_calls are accepted "
        '("response_template contains unsupported semantic fields") '
        "(vLLM, validate_response_template_for_serving in vllm/parser/response_template.py)"
    )
    assert found.suggestion == "python -m engine export --for vllm renames it to 'thinking'"


def test_sglang_refuses_an_explicit_strip_and_the_export_removes_it():
    template = {
        "start_anchor": "<a>",
        "fields": {
            "thinking": {"open": "<t>", "close": "</t>"},
            "content": {"content_args": {"strip": True}},
        },
        "defaults": {"role": "assistant", "model": "x"},
    }
    assert [
        (f.path, f.code) for f in target_diagnostics(template, "sglang") if f.severity == "error"
    ] == [
        ("defaults.model", "target-defaults"),
        ("fields.content.content_args.strip", "target-explicit-strip"),
    ]
    assert [f.path for f in target_diagnostics(template, "vllm") if f.severity == "error"] == [
        "defaults.model"
    ]
    exported = export_for(template, "sglang")
    assert exported.template == {
        "start_anchor": "<a>",
        "fields": {"thinking": {"open": "<t>", "close": "</t>"}, "content": {}},
        "defaults": {"role": "assistant"},
    }
    assert exported.servable


def test_the_rust_parser_refuses_lookarounds_and_opens_without_a_literal_start():
    found = {
        (f.path, f.message.split(": ", 1)[1].split(" (")[0])
        for f in target_diagnostics("qwen3", "vllm-rust")
    }
    assert found == {
        (
            "fields.reasoning_content.close_pattern",
            "lookarounds are not supported by Rust's regex engine",
        ),
        ("fields.tool_calls.open_pattern", "lookarounds are not supported by Rust's regex engine"),
        ("fields.tool_calls.close_pattern", "lookarounds are not supported by Rust's regex engine"),
    }
    gpt = {
        f.path
        for f in target_diagnostics("gpt-oss", "vllm-rust")
        if f.code == "target-rust-pattern"
    }
    assert gpt == {"fields.tool_calls.open_pattern", "fields.tool_calls.close_pattern"}
    assert target_diagnostics("qwen3-coder", "vllm-rust") == []


def test_transformers_refuses_patterns_only_the_regex_module_reads():
    found = [
        (f.path, f.code)
        for f in target_diagnostics("gpt-oss", "transformers")
        if f.severity == "error"
    ]
    assert found == [("fields.tool_calls.open_pattern", "target-regex-syntax")]
    ignored = [f.path for f in target_diagnostics("granite-4", "transformers")]
    assert ignored == ["fields.tool_calls.content_args.decode_json_strings"]


def test_the_command_line_lints_for_a_target_and_exports(tmp_path, capsys):
    assert main(["lint", "qwen3", "--target", "vllm"]) == 1
    assert "vllm refuses this template" in capsys.readouterr().out
    assert main(["lint", "hermes-2-pro", "--target", "vllm"]) == 0
    capsys.readouterr()
    out = tmp_path / "qwen3-vllm.json"
    assert main(["export", "qwen3", "--for", "vllm", "--output", str(out)]) == 0
    assert "changed: fields.reasoning_content renamed to fields.thinking" in capsys.readouterr().err
    written = json.loads(out.read_text(encoding="utf-8"))
    assert list(written["response_template"]["fields"]) == ["thinking", "tool_calls", "content"]
    assert main(["lint", str(out), "--target", "vllm"]) == 0
    assert main(["export", "gpt-oss", "--for", "sglang"]) == 1
    assert "error: fields.thinking.join: sglang refuses this template" in capsys.readouterr().err
