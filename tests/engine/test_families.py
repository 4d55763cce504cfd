"""Family rules: the template file a chat template calls for, by what it teaches the model.

The shipped chat templates of ../shared are checked in tests/engine/test_conformance.py
(`test_generate_live_picks_the_family_template_from_the_chat_template_alone`);
these cases are chat templates the conformance matrix does not hold.
"""

import pytest

from engine.chat_templates.families import FAMILY_RULES, family_template
from engine.template_files import list_templates

# The lines that tell the formats apart, as each chat template writes them.
LLAMA_CPP_PHI_4_MINI = (
    "{{- '<|system|>' + system_message -}}{{- '<|tool|>' + (tool['function'] | tojson) + '<|/tool|>' -}}"
    '{{- \'To use a tool, respond in this format: <|tool_call|>{"name": "foo", "arguments": {"a": 1}}<|/tool_call|>\' -}}'
    "{{- '<|tool_call|>' + (tool_call['function'] | tojson) + '<|/tool_call|>' -}}{{- '<|assistant|>' -}}"
)
VLLM_PHI_4_MINI = (
    "{{ '<|system|>' }}{{ '<|tool|>' + tools | tojson + '<|/tool|>' }}"
    "{{ 'functools[' + message['tool_calls'] | tojson + ']' }}{{ '<|assistant|>' }}"
)
MICROSOFT_PHI_4_MINI = "{{ '<|' + message['role'] + '|>' + message['content'] + '<|tool|>' + message['tools'] + '<|/tool|>' }}{{ '<|assistant|>' }}"
GLM_4_7 = (
    "<tool_call>{function-name}<arg_key>{arg-key-1}</arg_key><arg_value>{arg-value-1}</arg_value>...</tool_call>"
    "<|assistant|>{{- '</think>' if (enable_thinking is defined and not enable_thinking) else '<think>' -}}"
)


@pytest.mark.parametrize(
    "chat_template, name",
    [
        (LLAMA_CPP_PHI_4_MINI, "phi-4-mini-tool-call"),
        (VLLM_PHI_4_MINI, "phi-4-mini"),
        (MICROSOFT_PHI_4_MINI, "phi-4-mini"),
        (GLM_4_7, "glm-4.5"),
    ],
    ids=["phi-4-mini-llama.cpp", "phi-4-mini-vllm", "phi-4-mini-microsoft", "glm-4.7"],
)
def test_the_chat_template_picks_the_format_it_teaches(chat_template, name):
    assert family_template(chat_template)[0] == name


def test_the_signals_are_named():
    assert family_template(LLAMA_CPP_PHI_4_MINI) == (
        "phi-4-mini-tool-call",
        "the chat template contains <|tool_call|> and <|assistant|>",
    )
    assert family_template("<|im_start|>", "qwen3") == ("qwen3", "config.model_type is 'qwen3'")


def test_only_available_templates_are_picked():
    assert family_template(LLAMA_CPP_PHI_4_MINI, available={"phi-4-mini"}) == (
        "phi-4-mini",
        "the chat template contains <|tool|> and <|assistant|>",
    )
    assert family_template(LLAMA_CPP_PHI_4_MINI, available=set()) is None
    assert family_template("{{ messages }}") is None


def test_every_rule_names_a_shipped_template():
    assert {name for name, _, _ in FAMILY_RULES} <= {
        template_file.name for template_file in list_templates()
    }
