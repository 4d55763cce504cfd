"""Model families: which `templates/` file a model's chat template calls for.

A family shows itself by markers in its chat template's source (special tokens,
the way it writes a tool call) and, where markers cannot tell two families apart,
by `config.model_type`. `FAMILY_RULES` lists them from specific to generic;
`family_template` returns the first that matches. Where one family's chat
templates teach the model different formats (Llama 3.2's JSON calls or vLLM's
pythonic ones; Phi-4-mini's functools list or llama.cpp's `<|tool_call|>` tags),
each format has its own template and the rules pick by what the chat template
teaches. The app's Generate live (`playground.model.generation.choose_template`) uses
this when a model ships no response template of its own.
"""

from __future__ import annotations

from collections.abc import Collection

# (template file name, markers that must all occur in the chat template source,
# config.model_type values one of which must match when given). Ordered from
# specific to generic; the first matching rule wins.
FAMILY_RULES: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("gpt-oss", ("<|start|>assistant",), ()),
    ("mistral-v11", ("[TOOL_CALLS]", "[ARGS]"), ()),
    ("mistral", ("[TOOL_CALLS]",), ()),
    # DeepSeek V3.1 writes an empty <think></think> after the assistant token when thinking is off.
    ("deepseek-v3.1", ("<｜Assistant｜><think></think>",), ()),
    ("deepseek-r1", ("<｜Assistant｜>",), ()),
    ("functiongemma", ("<start_function_call>",), ()),
    ("gemma-4", ("<|turn>",), ()),
    ("command-r7b", ("<|START_OF_TURN_TOKEN|>",), ()),
    ("granite-4", ("<|start_of_role|>", "<tool_call>"), ()),
    ("granite-3", ("<|start_of_role|>",), ()),
    ("kimi-k2", ("<|im_assistant|>",), ()),
    # GLM-4.5, 4.6 and 4.7 share one template.
    ("glm-4.5", ("<arg_key>",), ()),
    ("minimax-m2", ("]~b]",), ()),
    # vLLM's Phi-4-mini chat template teaches functools[...]; llama.cpp's teaches <|tool_call|> tags;
    # Microsoft's own writes no calls, and the model card's format is functools[...].
    ("phi-4-mini", ("functools",), ()),
    ("phi-4-mini-tool-call", ("<|tool_call|>", "<|assistant|>"), ()),
    ("phi-4-mini", ("<|tool|>", "<|assistant|>"), ()),
    # Llama 4's header tokens, or the pythonic call example of vLLM's Llama 3.2 chat template.
    ("llama-3.2-pythonic", ("<|header_start|>",), ()),
    ("llama-3.2-pythonic", ("<|start_header_id|>", "func_name1("), ()),
    ("llama-3.2-pythonic", (), ("llama4",)),
    # Llama 3.2's own chat template dates its system turn with strftime_now; 3.1 and 3.3 do not.
    ("llama-3.2", ("<|start_header_id|>", "strftime_now"), ()),
    ("llama-3.1", ("<|start_header_id|>",), ()),
    ("qwen3-coder", ("<|im_start|>", "<function="), ()),
    ("ernie-4.5", ("<|im_start|>", "<response>"), ()),
    ("smollm3", ("<|im_start|>", "/no_think"), ()),
    # QwQ's generation prompt always opens the reasoning; Qwen3's opens it only by enable_thinking.
    ("qwq", ("<|im_start|>", "<|im_start|>assistant\\n<think>\\n"), ()),
    ("qwq", ("<|im_start|>", "<think>"), ("qwen2",)),
    ("qwen3", ("<|im_start|>", "<think>"), ()),
    ("hermes-2-pro", ("<|im_start|>", "<tool_call>"), ()),
    ("smollm3", (), ("smollm3",)),
    ("qwen3", (), ("qwen3", "qwen3_moe")),
)


def family_template(
    chat_template: str, model_type: str = "", available: Collection[str] | None = None
) -> tuple[str, str] | None:
    """The `templates/` file a model family's chat template calls for, by `FAMILY_RULES`.

    Args:
        chat_template: the chat template's Jinja source (several named ones joined).
        model_type: the model's `config.model_type` ("" when unknown).
        available: template names to choose from (None: every rule's name).

    Returns:
        (template name, the signals that picked it, as a phrase for the user), or None
        when no rule matches.
    """
    for name, markers, model_types in FAMILY_RULES:
        if available is not None and name not in available:
            continue
        if not all(marker in chat_template for marker in markers):
            continue
        if model_types and model_type not in model_types:
            continue
        signals = [f"the chat template contains {' and '.join(markers)}"] if markers else []
        if model_types:
            signals.append(f"config.model_type is {model_type!r}")
        return name, " and ".join(signals)
    return None
