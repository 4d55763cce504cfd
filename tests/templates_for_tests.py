"""Response templates shared by several test modules, as plain constants.

`SMOLLM3` is the SmolLM3-style template of the first example in docs/template-language.md, exactly as
written there: literal `</think>` and `</tool_call>` closes. It is NOT the
shipped `templates/smollm3.json` (whose closes are patterns); tests that need
plain literal delimiters use this one. It is the SmolLM3 workload template of `tests/workloads.py`.

Treat these as read-only: tests share the same objects, and some compare by
identity (`template is SMOLLM3`).
"""

from tests.workloads import SMOLLM3_TEMPLATE

SMOLLM3 = SMOLLM3_TEMPLATE
