"""Conformance: every shipped template against the real chat templates of its family.

The chat templates are read from `../shared/chat_templates` next to the repository
(or from `$RESPONSE_TEMPLATES_SHARED/chat_templates`); they are never copied into
the repository, because their licences differ. Tests that need them skip when the
folder is absent.
"""

import json
import os
import subprocess
import sys

import pytest

from engine import check_conformance, load_chat_template, parse_response
from engine.chat_templates.conformance import TOOLS
from engine.chat_templates.families import family_template
from engine.chat_templates.render import (
    ChatTemplateRenderer,
    ChatTemplateRenderError,
    ModelLoadError,
    find_thinking_switch,
)
from engine.template_files import load_template_file
from tests.support.paths import CHAT_TEMPLATES, MANIFEST, TEMPLATE_FOR, needs_shared
from tests.support.paths import ROOT as REPO_ROOT

# (rows passed, rows not renderable) per chat template; no row may fail.
EXPECTED_COUNTS = {
    "qwen3.jinja": (40, 0),
    "qwq.jinja": (31, 9),
    "smollm3.jinja": (32, 8),
    "hermes2pro.jinja": (20, 0),  # without tools, rendered with tools=[] (it iterates them)
    "qwen3coder.jinja": (20, 0),
    "r1-distill-qwen.jinja": (37, 3),
    "r1-distill-llama.jinja": (15, 5),
    "r1-llamacpp.jinja": (3, 5),
    "r1-vllm.jinja": (20, 0),
    "v3-vllm.jinja": (20, 0),
    "v31.jinja": (40, 0),
    "gpt-oss.jinja": (40, 0),
    "llama31.jinja": (13, 4),
    "llama33.jinja": (13, 4),
    "llama32.jinja": (13, 4),
    "llama32-pythonic.jinja": (12, 8),
    "llama4-pythonic.jinja": (16, 4),
    "mistral-nemo.jinja": (20, 0),
    "mistral-vllm.jinja": (20, 0),
    "mistral-small-3.2.jinja": (20, 0),
    "devstral.jinja": (20, 0),
    "ministral-3-reasoning.jinja": (20, 0),
    "kimi-k2.jinja": (20, 0),
    "kimi-k2-instruct.jinja": (6, 5),
    "kimi-k2-thinking.jinja": (6, 5),
    "minimax-m2.jinja": (16, 4),
    "glm-4.6.jinja": (40, 0),
    "granite-3.3.jinja": (32, 8),
    "granite-4.0.jinja": (20, 0),
    "command-r7b.jinja": (40, 0),
    "phi-4-mini.jinja": (16, 4),
    "ernie-4.5-thinking.jinja": (20, 0),
    "functiongemma.jinja": (12, 6),
    "gemma-4.jinja": (40, 0),
    "functiongemma-litert.jinja": (6, 5),
}


def chat_template(name: str) -> str:
    return (CHAT_TEMPLATES / name).read_text(encoding="utf-8")


def entry(name: str) -> dict:
    return next(m for m in MANIFEST if m["file"] == name)


def report_for(file_name: str, template_name: str | None = None):
    item = entry(file_name)
    template = load_template_file(
        template_name or TEMPLATE_FOR.get(file_name, item["family"])
    ).response_template
    return check_conformance(
        template, chat_template(file_name), bos_token=item["bos_token"], eos_token=item["eos_token"]
    )


def row(report, name):
    return next(s for s in report.situations if s.name == name)


def run_cli(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "engine", *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


@needs_shared
def test_manifest_is_the_one_the_counts_describe():
    assert sorted(m["file"] for m in MANIFEST) == sorted(EXPECTED_COUNTS)


@needs_shared
@pytest.mark.parametrize("file_name", sorted(EXPECTED_COUNTS))
def test_shipped_template_conforms(file_name):
    report = report_for(file_name)
    failures = [f"{s.name}: {s.detail}" for s in report.failed]
    assert failures == []
    counts = report.counts()
    assert (counts["passed"], counts["not_renderable"]) == EXPECTED_COUNTS[file_name]
    assert report.passed and report.exit_code == 0
    assert report.diagnostics == []
    for situation in report.situations:
        if not situation.renderable:
            assert situation.detail and situation.expected is None and situation.got is None, (
                situation.name
            )


@needs_shared
def test_mismatched_pair_is_caught():
    report = report_for("gpt-oss.jinja", "qwen3")
    assert not report.passed and report.exit_code == 1
    assert report.counts() == {"passed": 0, "failed": 40, "not_renderable": 0}
    assert report.thinking_switch == "reasoning_effort"
    anchor = row(report, "first-turn/thinking-on/anchor")
    assert anchor.expected == {"role": "assistant"}
    assert anchor.got["content"].startswith("<|start|>system<|message|>You are ChatGPT")
    assert anchor.detail.endswith("(the start anchor is not in the prompt)")
    assert [d.code for d in report.diagnostics] == ["anchor-not-in-prompts"]


@needs_shared
def test_after_tool_result_anchor_check_names_the_earlier_turn():
    # The old Mistral anchor ([/INST] only) cuts before the earlier call and its result.
    template = {
        "defaults": {"role": "assistant"},
        "start_anchor": "[/INST]",
        "fields": load_template_file("mistral").response_template["fields"],
    }
    report = check_conformance(
        template, chat_template("mistral-nemo.jinja"), bos_token="<s>", eos_token="</s>"
    )
    anchor = row(report, "after-tool-result/anchor")
    assert not anchor.passed
    assert anchor.got["tool_calls"] == [
        {
            "type": "function",
            "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 1}},
        }
    ]
    assert (
        anchor.got["content"]
        == '[TOOL_RESULTS]{"content": {"forecast": "cloudy", "high_c": 18}, "call_id": "call00001"}[/TOOL_RESULTS]'
    )
    assert anchor.detail.startswith('unexpected content "[TOOL_RESULTS]')


@needs_shared
def test_tool_call_ids_satisfy_mistral():
    # Nine alphanumerics, or Mistral's templates refuse the conversation.
    report = report_for("mistral-small-3.2.jinja")
    prompt = row(report, "after-tool-result/anchor").prompt
    assert prompt.endswith(
        '[TOOL_CALLS]get_weather[CALL_ID]call00001[ARGS]{"city": "Paris", "days": 1}</s>'
        '[TOOL_RESULTS]call00001[TOOL_CONTENT]{"forecast": "cloudy", "high_c": 18}[/TOOL_RESULTS]'
    )


@needs_shared
def test_rows_carry_prompt_and_generation_to_replay():
    report = report_for("qwen3.jinja")
    trip = row(report, "after-tool-result/thinking-on/round-trip:content-and-tool-calls")
    assert trip.generation.startswith("<think>\n\n</think>\n\nChecking both now.\n<tool_call>\n")
    assert trip.prompt.endswith(
        '<tool_response>\n{"forecast": "cloudy", "high_c": 18}\n</tool_response><|im_end|>\n<|im_start|>assistant\n'
    )
    replayed = parse_response(
        trip.generation,
        load_template_file("qwen3").response_template,
        prefix=trip.prompt,
        tools=TOOLS,
    )
    assert replayed == trip.got == trip.expected
    assert trip.expected["tool_calls"][1]["function"]["arguments"] == {
        "title": 'Team "offsite" 🎉',
        "notify": False,
        "details": {"room": {"floor": 2, "name": "B-2"}, "tags": ["q1", "планы"]},
    }


@needs_shared
def test_normalisations_are_named():
    mistral = row(
        report_for("mistral-nemo.jinja"), "first-turn-tools/round-trip:content-and-tool-calls"
    )
    assert mistral.passed and mistral.normalisations == (
        "content: the chat template does not write it for this turn",
    )
    assert mistral.detail == "normalised content: the chat template does not write it for this turn"
    gpt = row(
        report_for("gpt-oss.jinja"),
        "first-turn-tools/thinking-on/round-trip:content-and-tool-calls",
    )
    assert gpt.passed and gpt.normalisations == (
        "tool_calls: the chat template writes 1 of the 2 calls for this turn",
        "content: the chat template writes it exactly as it writes reasoning, so it reads as reasoning",
    )
    assert gpt.expected == {
        "role": "assistant",
        "reasoning_content": "Checking both now.",
        "tool_calls": [
            {
                "type": "function",
                "function": {"name": "get_weather", "arguments": {"city": "Zürich", "days": 3}},
            }
        ],
    }
    ernie = row(
        report_for("ernie-4.5-thinking.jinja"), "first-turn/round-trip:reasoning-and-answer"
    )
    assert ernie.normalisations == (
        "reasoning: the chat template does not write it for this turn",
        "the chat template ends every conversation with '<|im_end|>\\n\\n<|im_start|>assistant\\n<think>\\n', cut off",
    )


@needs_shared
def test_not_renderable_rows_give_the_template_s_own_error():
    kimi = row(report_for("kimi-k2-thinking.jinja"), "multi-turn/anchor")
    assert not kimi.renderable and not kimi.passed
    assert kimi.detail == (
        "the chat template refuses this conversation: SecurityError: access to attribute 'append' "
        "of 'list' object is unsafe."
    )
    llama = row(report_for("llama31.jinja"), "after-parallel-tool-results/anchor")
    assert (
        llama.detail
        == "the chat template refuses this conversation: TemplateError: This model only supports single tool-calls at once!"
    )
    qwq = row(report_for("qwq.jinja"), "first-turn/thinking-on/round-trip:reasoning-and-answer")
    assert qwq.detail.startswith(
        "the generation prompt pre-writes '<think>\\n', which leaves reasoning_content open, "
        "but the chat template writes this turn without it"
    )
    pythonic = row(report_for("llama32-pythonic.jinja"), "first-turn-tools/round-trip:tool-call")
    assert pythonic.detail.startswith(
        "the chat template writes set_alarm's argument label without quotes "
        "(label=wake up ☕), which no parser can read back as the argument"
    )


def test_nothing_renderable_exits_2():
    report = check_conformance(
        load_template_file("qwen3").response_template, '{{ raise_exception("no chats here") }}'
    )
    assert report.exit_code == 2 and not report.passed
    details = {s.name: s.detail for s in report.situations}
    assert details.pop("prefill/anchor") == (
        'the chat template refuses this conversation: ValueError: continue_final_message is set to "content" but '
        "this is not an accepted field in the chat_template"
    )
    assert set(details.values()) == {
        "the chat template refuses this conversation: TemplateError: no chats here"
    }
    assert [s.name for s in report.situations] == [
        "first-turn/anchor",
        "first-turn-tools/anchor",
        "multi-turn/anchor",
        "after-tool-result/anchor",
        "after-parallel-tool-results/anchor",
        "prefill/anchor",
    ]


def test_thinking_switch_of_the_demo_model():
    source = load_chat_template(str(REPO_ROOT / "samples" / "demo-model"))
    assert (
        find_thinking_switch(source.chat_template, eos_token=source.eos_token) == "enable_thinking"
    )
    renderer = ChatTemplateRenderer(source.chat_template, source.bos_token, source.eos_token)
    assert renderer.call_style == ("", False) and renderer.trailer == ""


def test_bad_arguments():
    template = load_template_file("qwen3").response_template
    with pytest.raises(ValueError, match="give exactly one of chat_template"):
        check_conformance(template)
    with pytest.raises(ValueError, match="the chat template is empty"):
        check_conformance(template, "  ")
    with pytest.raises(ModelLoadError, match="no folder"):
        load_chat_template("./no/such/folder")


# -- the command line ---------------------------------------------------------------


@needs_shared
def test_cli_json_report():
    item = entry("qwen3.jinja")
    result = run_cli(
        "conformance",
        "qwen3",
        "--chat-template",
        str(CHAT_TEMPLATES / "qwen3.jinja"),
        "--eos-token",
        item["eos_token"],
        "--json",
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["passed"] is True and report["thinking_switch"] == "enable_thinking"
    assert report["counts"] == {"passed": 40, "failed": 0, "not_renderable": 0}
    assert set(report["situations"][0]) == {
        "name",
        "passed",
        "renderable",
        "detail",
        "expected",
        "got",
        "prompt",
        "generation",
        "normalisations",
        "tools",
    }


@needs_shared
def test_cli_mismatch_exits_1_and_says_why():
    result = run_cli(
        "conformance",
        "templates/qwen3.json",
        "--chat-template",
        str(CHAT_TEMPLATES / "gpt-oss.jinja"),
    )
    assert result.returncode == 1
    assert "FAIL first-turn/thinking-on/anchor" in result.stdout
    assert "anchor-not-in-prompts" not in result.stdout  # the message, not the code, is printed
    assert "occurs in none of the 12 rendered prompts" in result.stdout
    assert result.stdout.rstrip().endswith("40 situations: 0 passed, 40 failed, 0 not renderable")


@needs_shared
def test_cli_lint_with_chat_template():
    result = run_cli(
        "lint", "llama-3.2", "--chat-template", str(CHAT_TEMPLATES / "llama4-pythonic.jinja")
    )
    assert result.returncode == 0
    assert (
        "the start anchor '<|start_header_id|>assistant<|end_header_id|>\\n\\n' occurs in none of the 6 rendered prompts"
        in result.stdout
    )
    assert (
        run_cli(
            "lint",
            "llama-3.2-pythonic",
            "--chat-template",
            str(CHAT_TEMPLATES / "llama4-pythonic.jinja"),
        ).stdout
        == "no findings\n"
    )


def test_cli_model_from_a_local_folder():
    result = run_cli("conformance", "demo-model", "--model", "samples/demo-model")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.rstrip().endswith("40 situations: 36 passed, 0 failed, 4 not renderable")


def test_cli_hub_id_fails_fast_offline():
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    result = run_cli(
        "conformance", "qwen3", "--model", "response-templates-tests/no-such-model", env=env
    )
    assert result.returncode == 2
    assert (
        "error: the Hugging Face Hub is not reachable (HF_HUB_OFFLINE is set) and "
        "'response-templates-tests/no-such-model' is not in the local cache."
    ) in result.stdout


def test_hub_that_does_not_answer():
    # A closed local port stands in for a Hub that cannot be reached.
    script = (
        "from engine import load_chat_template\n"
        "try:\n    load_chat_template('response-templates-tests/no-such-model')\n"
        "except ValueError as error:\n    print(error)\n"
    )
    env = {**os.environ, "HF_ENDPOINT": "http://127.0.0.1:9", "HF_HUB_OFFLINE": "0"}
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert result.stdout.startswith(
        "the Hugging Face Hub is not reachable (cannot connect to 127.0.0.1:9 ("
    )


def test_cli_usage_errors_exit_2():
    assert run_cli("conformance", "qwen3").returncode == 2
    missing = run_cli("conformance", "qwen3", "--chat-template", "no-such-file.jinja")
    assert (
        missing.returncode == 2
        and "No such file or directory: 'no-such-file.jinja'" in missing.stdout
    )


def test_import_engine_stays_light():
    script = "import sys, engine; print(sorted(m for m in ('transformers', 'torch', 'gradio') if m in sys.modules))"
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.stdout.strip() == "[]"


def test_missing_transformers_is_named():
    script = (
        "import sys\nsys.modules['transformers'] = None\n"
        "from engine import check_conformance\n"
        "try:\n    check_conformance({'start_anchor': '<a>', 'fields': {'content': {}}}, '{{ messages }}')\n"
        "except ImportError as error:\n    print(error)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.stdout.strip() == (
        "rendering a chat template needs transformers (and jinja2): pip install transformers "
        "jinja2, or pip install -r requirements.txt"
    )


@needs_shared
@pytest.mark.parametrize("entry", MANIFEST, ids=[entry["file"] for entry in MANIFEST])
def test_generate_live_picks_the_family_template_from_the_chat_template_alone(entry):
    # A model with no response_template of its own and no templates/ entry naming it: the
    # family rules read its chat template (config.model_type unknown) and pick the template
    # this conformance check passes.
    chat_template = (CHAT_TEMPLATES / entry["file"]).read_text(encoding="utf-8")
    picked = family_template(chat_template)
    assert picked is not None and picked[0] == TEMPLATE_FOR.get(entry["file"], entry["family"])


@needs_shared
def test_cli_a_broken_call_close_fails_every_row_with_a_call(tmp_path):
    # One call that happens to be the last thing written still parses when its region runs to
    # the end of the output; the matrix must not count that as reading the close.
    source = json.loads((REPO_ROOT / "templates" / "minimax-m2.json").read_text())
    source["response_template"]["fields"]["tool_calls"]["close"] = "</invok>"
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(source))
    result = run_cli(
        "conformance", str(path), "--chat-template", str(CHAT_TEMPLATES / "minimax-m2.jinja")
    )
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    failed = [line for line in lines if line.startswith("FAIL ")]
    assert failed == [
        f"FAIL {situation}/round-trip:tool-call"
        for situation in (
            "first-turn-tools",
            "multi-turn",
            "after-tool-result",
            "after-parallel-tool-results",
        )
    ]
    assert (
        "    the tool_calls region opened at offset 65 of the output never reached its close "
        "'</invok>': it ended at the end of the output"
    ) in lines
    # Every other row with a call is one the chat template cannot show (not a pass).
    passed_with_calls = [line for line in lines if line.startswith("ok ") and "tool-call" in line]
    assert passed_with_calls == []
    assert lines[-1] == "20 situations: 12 passed, 4 failed, 4 not renderable"


APPENDING = "{%- set seen = [] -%}{%- for m in messages %}{% set _ = seen.append(m.role) %}{% endfor %}{{ seen | join(',') }}"


def test_a_renderer_allowing_mutation_renders_a_list_the_template_appends_to_and_the_default_refuses():
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Yo"}]
    with pytest.raises(ChatTemplateRenderError, match="'append' of 'list' object is unsafe"):
        ChatTemplateRenderer(APPENDING).render(messages)
    assert ChatTemplateRenderer(APPENDING, allow_mutation=True).render(messages) == "user,assistant"
    # Allowed for that renderer's renders only: another renderer of the same template still refuses.
    with pytest.raises(ChatTemplateRenderError, match="is unsafe"):
        ChatTemplateRenderer(APPENDING).render(messages)


def test_a_list_grown_in_place_past_the_sandbox_bound_is_refused():
    growing = (
        "{%- set seen = [] -%}{%- set chunk = range(100000) | list -%}"
        "{%- for i in range(11) %}{% set _ = seen.extend(chunk) %}{% endfor %}{{ seen | length }}"
    )
    with pytest.raises(
        ChatTemplateRenderError,
        match="grows a list or dict in place to 1,100,000 \\(at most 1,000,000 in this sandbox\\)",
    ):
        ChatTemplateRenderer(growing, allow_mutation=True).render(
            [{"role": "user", "content": "Hi"}]
        )


def test_a_renderer_with_values_as_text_writes_numbers_and_booleans_as_their_json_text():
    joined = (
        "{%- for m in messages %}{% for c in m.tool_calls or [] %}{% for k in c.function.arguments %}"
        "{{ k + '=' + c.function.arguments[k] + ';' }}{% endfor %}{% endfor %}{% endfor %}"
    )
    call = {
        "id": "call00001",
        "type": "function",
        "function": {"name": "f", "arguments": {"a": "x", "n": 3, "b": True, "z": None}},
    }
    messages = [{"role": "assistant", "content": "", "tool_calls": [call]}]
    with pytest.raises(ChatTemplateRenderError, match="TypeError: can only concatenate str"):
        ChatTemplateRenderer(joined).render(messages)
    assert (
        ChatTemplateRenderer(joined, values_as_text=True).render(messages)
        == "a=x;n=3;b=true;z=null;"
    )
