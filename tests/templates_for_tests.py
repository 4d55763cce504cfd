"""Response templates shared by several test modules, as plain constants.

`SMOLLM3` is the SmolLM3-style template of SPEC.md section 9, exactly as
written there: literal `</think>` and `</tool_call>` closes. It is NOT the
shipped `templates/smollm3.json` (whose closes are patterns); tests that need
plain literal delimiters use this one. `engine/bench.py` keeps its own copy.

Treat these as read-only: tests share the same objects, and some compare by
identity (`template is SMOLLM3`).
"""

SMOLLM3 = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>"},
        "tool_calls": {
            "open": "<tool_call>",
            "close": "</tool_call>",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": "{content}"},
        },
        "content": {"close": "<|im_end|>"},
    },
}
