"""Format variants that serving stacks meet for known families, each parsed by its shipped template.

Each variant is shown by cases of samples/ (prompts rendered from the chat template
that produces them). Here every such case is checked the way `check_stream` checks a
generation: one shot, one character at a time, split once at every offset and 20 seeded
random chunkings; each must give the one-shot message, which is the case's expected
message. tests/engine/test_samples.py runs the
same cases through its own chunkings and the reference comparison.
"""

import pytest

from engine import check_stream
from engine.authoring.samples import load_samples

SAMPLES = {sample.id: sample for sample in load_samples()}

VARIANTS = {
    "glm-4.7-thinking-off-prompt": [
        "glm-4.5/glm-4.7-thinking-off-text-then-tool-call",
        "glm-4.5/glm-4.7-thinking-off-multi-turn-answer",
    ],
    "glm-4.7-call-inside-unclosed-reasoning": [
        "glm-4.5/glm-4.7-tool-calls-inside-unclosed-reasoning",
        "glm-4.5/glm-4.7-reasoning-mentions-tool-call-tag",
    ],
    "functiongemma-after-tool-result": [
        "functiongemma/after-tool-result-litert-template",
        "functiongemma/after-tool-result-litert-template-next-call",
        "functiongemma/after-tool-result-ollama-renderer",
    ],
    "phi-4-mini-tool-call-tags": [
        f"phi-4-mini-tool-call/{name}"
        for name in (
            "text-then-tool-calls",
            "multi-turn-nested-arguments",
            "typed-arguments",
            "truncated-before-close",
            "close-delimiter-inside-argument-string",
            "after-tool-result",
        )
    ],
    "phi-4-mini-functools": ["phi-4-mini/text-then-tool-calls"],
    "kimi-k2-thinking-calls-inside-unclosed-think": [
        "kimi-k2/thinking-calls-inside-unclosed-think-no-section",
        "kimi-k2/thinking-calls-inside-unclosed-think-no-call-ends",
        "kimi-k2/thinking-section-inside-think-then-think-close",
    ],
    "gpt-oss-stray-header": [
        "gpt-oss/stray-header-before-analysis",
        "gpt-oss/stray-header-before-final",
    ],
    "granite-4-arguments-as-json-string": [
        "granite-4/arguments-as-json-string",
        "granite-4/arguments-as-json-string-typed",
    ],
    "call-inside-unclosed-reasoning": [
        f"{family}/tool-call-inside-unclosed-reasoning"
        for family in ("deepseek-v3.1", "gemma-4", "minimax-m2", "mistral-v11")
    ],
}
CASES = [(variant, sample_id) for variant, ids in VARIANTS.items() for sample_id in ids]


@pytest.mark.parametrize("variant, sample_id", CASES, ids=[f"{v}:{s}" for v, s in CASES])
def test_variant_parses_right_in_every_chunking(variant, sample_id):
    sample = SAMPLES[sample_id]
    report = check_stream(
        sample.generation,
        sample.template,
        prefix=sample.prefix,
        tools=sample.tools,
        truncation_step=0,
    )
    assert report.baseline.message == sample.expected
    assert report.ok, (
        f"{report.mismatch.chunking}: {report.mismatch.message or report.mismatch.error}"
    )
    assert (
        report.every_split_stride == 1 and report.runs == 1 + 1 + (len(sample.generation) - 1) + 20
    )
