"""Response templates shared by several test modules, as plain constants.

`SMOLLM3` is the SmolLM3-style template of the first example in docs/template-language.md, exactly as
written there: literal `</think>` and `</tool_call>` closes. It is NOT the
shipped `templates/smollm3.json` (whose closes are patterns); tests that need
plain literal delimiters use this one. It is the SmolLM3 workload template of `tests/support/workloads.py`.

Treat these as read-only: tests share the same objects, and some compare by
identity (`template is SMOLLM3`).
"""

import json

from tests.support.workloads import SMOLLM3_TEMPLATE

SMOLLM3 = SMOLLM3_TEMPLATE

# The SmolLM3 case the handler tests parse: a prompt, a generation and its message.
SMOL_TEXT = json.dumps(SMOLLM3)
PREFIX = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
GENERATION = '<think>\nI should greet the user\n</think>\n\n<tool_call>{"name": "greet_user", "arguments": {"greeting": "Hi!"}}</tool_call>'
EXPECTED = {
    "role": "assistant",
    "reasoning_content": "I should greet the user",
    "tool_calls": [
        {"type": "function", "function": {"name": "greet_user", "arguments": {"greeting": "Hi!"}}}
    ],
}
