"""Synthetic generations shaped like real ones, for the speed benchmark and the tests.

`scripts/bench_engine.py` times the parser on them; the quick-path and
property tests use them as realistic streams. Each workload pairs a response
template with a seeded generator: SmolLM3 (`<think>`, `<tool_call>` JSON,
implicit content), Qwen3-Coder (a regex open with a named group, `xml-inline`
parameters, a large code argument), gpt-oss (literal channels and a regex open
with a named group) and a template whose patterns all begin with `\\s*`. Their
text is full of `<` and of near-misses of the delimiters (`<thin`, `</tool`,
`<|en`), which is what makes holding back text costly. Two agent-trace
workloads alternate content and tool calls, 1,000 or 10 calls per MB, so the
implicit field has many stretches or few.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass

KB = 1024
SEED = 20240603


# -- text generation ------------------------------------------------------------

WORDS = (
    "the user wants to know whether this value is smaller than the limit so I should compare "
    "both sides first then check the index and the list length before calling the tool maybe "
    "it returns a string or a number and the answer depends on which branch runs when the loop "
    "ends we also need the unit and the city name plus the date range and a short summary"
).split()

# Text that is full of `<` without being a delimiter.
ANGLE_BRACKETS = [
    "a < b",
    "i<n",
    "x <= y",
    "1<<4",
    "List<int>",
    "<div>",
    "</span>",
    "<br/>",
    "a<b",
    "<-",
    "<>",
    "<<",
]


def _filler(
    rng: random.Random, length: int, near_misses: list[str], whitespace: bool = False
) -> str:
    """About `length` characters of prose mixing words, `<` constructs and near-miss delimiters.

    Every near-miss is followed by a space, so none of them can complete into its delimiter.
    With `whitespace`, runs of blanks and newlines are frequent (they stress `\\s*` patterns).
    """
    pieces: list[str] = []
    size = 0
    while size < length:
        roll = rng.random()
        if roll < 0.06:
            piece = rng.choice(near_misses) + " "
        elif roll < 0.14:
            piece = rng.choice(ANGLE_BRACKETS) + " "
        elif whitespace and roll < 0.24:
            piece = rng.choice(["\n\n", "   ", "\n", " \n  ", "\t"])
        elif roll < 0.27:
            piece = ".\n"
        else:
            piece = rng.choice(WORDS) + " "
        pieces.append(piece)
        size += len(piece)
    return "".join(pieces)[: max(length - 1, 0)] + "."


def _code(rng: random.Random, length: int) -> str:
    """About `length` characters of Python-like source with comparisons, generics and markup strings."""
    lines: list[str] = []
    size = 0
    index = 0
    while size < length:
        index += 1
        line = rng.choice(
            [
                f"def step_{index}(items: list[int], limit: int = {index}) -> bool:",
                f"    if len(items) < limit and items[{index % 7}] <= {index}:",
                f"        return items[0] << {index % 5} < 1 << 20",
                f"    html = \"<div class='row'>{index}</div></tool \"  # a near-miss of the close",
                f"    values = {{k: v for k, v in zip(keys, range({index})) if v < {index * 3}}}",
                "    # reasoning: <thin and <|en are plain text here",
                f"    while i < n: i += {index % 3 + 1}",
                "",
            ]
        )
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)[:length]


@dataclass
class Case:
    """One generated input: the text after `prefix`, and what the implicit field must hold (the implicit field keeps every stretch; docs/template-language.md)."""

    text: str
    prefix: str
    implicit_expected: str | None = None


@dataclass
class Workload:
    name: str
    description: str
    template: dict
    generate: Callable[[random.Random, int], Case]
    # The generator writes more than one non-blank stretch of implicit text, so the
    # reference keeps only the last (the implicit field keeps every stretch; docs/template-language.md) and the implicit field is compared to the
    # generator's own text instead of the reference's.
    spans_implicit_stretches: bool = False


def _split_budget(size: int, fixed: int, shares: list[float]) -> list[int]:
    free = max(size - fixed, 40 * len(shares))
    return [max(int(free * share), 20) for share in shares]


CHATML_PREFIX = (
    "<|im_start|>system\nYou are a helpful assistant with tools.<|im_end|>\n"
    "<|im_start|>user\nWhat is the weather in Paris?<|im_end|>\n"
    "<|im_start|>assistant\nLet me look.<|im_end|>\n"
    "<|im_start|>user\nAnd write the report file, please.<|im_end|>\n"
    "<|im_start|>assistant\n"
)

SMOLLM3_TEMPLATE = {
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
SMOLLM3_NEAR_MISSES = [
    "<thin",
    "</thin",
    "</tool",
    "<tool_cal",
    "<|en",
    "<|im_en",
    "<think about",
    "</think about",
]


def _smollm3_case(rng: random.Random, size: int) -> Case:
    reasoning_len, argument_len, content_len = _split_budget(size, 260, [0.6, 0.25, 0.15])
    weather = {"name": "get_weather", "arguments": {"city": "Paris", "days": 3, "units": "celsius"}}
    report = {
        "name": "write_file",
        "arguments": {
            "path": "reports/paris.md",
            "content": _filler(rng, argument_len, SMOLLM3_NEAR_MISSES),
        },
    }
    content = _filler(rng, content_len, SMOLLM3_NEAR_MISSES) + " Done, caf\u00e9 \u2192 ok."
    text = (
        f"<think>\n{_filler(rng, reasoning_len, SMOLLM3_NEAR_MISSES)}\n</think>\n\n"
        f"<tool_call>\n{json.dumps(weather)}\n</tool_call>\n"
        f"<tool_call>\n{json.dumps(report)}\n</tool_call>\n"
        f"{content}<|im_end|>"
    )
    return Case(text, CHATML_PREFIX)


QWEN3_CODER_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "tool_calls": {
            "open_pattern": r"<tool_call>\s*<function=(?P<name>\w+)>",
            "close": "</tool_call>",
            "repeats": True,
            "content": "xml-inline",
            "content_args": {
                "tag_pattern": r"<parameter=(?P<key>\w+)>\s*(?P<value>.*?)\s*</parameter>",
                "value_parser": {"name": "json", "args": {"allow_non_json": True}},
            },
            "transform": {
                "type": "function",
                "function": {"name": "{name}", "arguments": "{content}"},
            },
        },
        "content": {"close": "<|im_end|>"},
    },
}
QWEN3_CODER_NEAR_MISSES = [
    "<tool_cal",
    "<tool_call ",
    "<functio",
    "</tool",
    "<|im_en",
    "<|en",
    "<param",
]


def _qwen3_coder_case(rng: random.Random, size: int) -> Case:
    preamble_len, code_len = _split_budget(size, 420, [0.2, 0.8])
    preamble = _filler(rng, preamble_len, QWEN3_CODER_NEAR_MISSES)
    text = (
        f"{preamble}\n\n"
        "<tool_call>\n<function=write_file>\n"
        "<parameter=path>\nsrc/steps.py\n</parameter>\n"
        f"<parameter=content>\n{_code(rng, code_len)}\n</parameter>\n"
        "<parameter=overwrite>\ntrue\n</parameter>\n"
        "</function>\n</tool_call>\n"
        "<tool_call>\n<function=run_tests>\n"
        '<parameter=paths>\n["tests/test_steps.py"]\n</parameter>\n'
        "<parameter=timeout>\n120\n</parameter>\n"
        "</function>\n</tool_call>"
        "<|im_end|>"
    )
    return Case(text, CHATML_PREFIX, implicit_expected=preamble.strip())


GPT_OSS_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|start|>assistant",
    "fields": {
        "reasoning_content": {"open": "<|channel|>analysis<|message|>", "close": "<|end|>"},
        "tool_calls": {
            "open_pattern": r"<\|channel\|>commentary to=functions\.(?P<name>\w+).*?<\|message\|>",
            "close": "<|call|>",
            "repeats": True,
            "content": "json",
            "transform": {
                "type": "function",
                "function": {"name": "{name}", "arguments": "{content}"},
            },
        },
        "content": {
            "open": ["<|channel|>final<|message|>", "<|channel|>commentary<|message|>"],
            "close": ["<|end|>", "<|return|>"],
        },
    },
}
GPT_OSS_NEAR_MISSES = [
    "<|en",
    "<|end",
    "<|chan",
    "<|channel",
    "<|mess",
    "<|cal",
    "<|ret",
    "<|start",
]
GPT_OSS_PREFIX = (
    "<|start|>system<|message|>You are ChatGPT.<|end|>"
    "<|start|>developer<|message|># Tools\nnamespace functions { type get_weather = (_: {city: string}) => any; }<|end|>"
    "<|start|>user<|message|>Summarise, then check the weather in Paris.<|end|>"
    "<|start|>assistant"
)


def _gpt_oss_case(rng: random.Random, size: int) -> Case:
    # Analysis, a user-visible preamble, then the tool call that ends the generation.
    reasoning_len, preamble_len, argument_len = _split_budget(size, 330, [0.6, 0.25, 0.15])
    arguments = {"city": "Paris", "notes": _filler(rng, argument_len, GPT_OSS_NEAR_MISSES)}
    text = (
        f"<|channel|>analysis<|message|>{_filler(rng, reasoning_len, GPT_OSS_NEAR_MISSES)}<|end|>"
        f"<|start|>assistant<|channel|>commentary<|message|>{_filler(rng, preamble_len, GPT_OSS_NEAR_MISSES)}<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
        f"<|message|>{json.dumps(arguments)}<|call|>"
    )
    return Case(text, GPT_OSS_PREFIX)


WHITESPACE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "reasoning_content": {"open_pattern": r"\s*<think>", "close_pattern": r"\s*</think>"},
        "tool_calls": {
            "open_pattern": r"\s*<tool_call>",
            "close_pattern": r"\s*</tool_call>",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": "{content}"},
        },
        "content": {"close_pattern": r"\s*<\|im_end\|>"},
    },
}


def _whitespace_case(rng: random.Random, size: int) -> Case:
    reasoning_len, content_len, argument_len = _split_budget(size, 200, [0.6, 0.25, 0.15])
    call = {
        "name": "search",
        "arguments": {"query": _filler(rng, argument_len, SMOLLM3_NEAR_MISSES, whitespace=True)},
    }
    text = (
        f"\n<think>\n{_filler(rng, reasoning_len, SMOLLM3_NEAR_MISSES, whitespace=True)}\n\n</think>\n\n"
        f"{_filler(rng, content_len, SMOLLM3_NEAR_MISSES, whitespace=True)}\n\n"
        f"<tool_call>\n{json.dumps(call, indent=2)}\n</tool_call>\n"
        '<tool_call>\n{"name": "get_time", "arguments": {"tz": "UTC"}}\n</tool_call>\n'
        "<|im_end|>"
    )
    return Case(text, CHATML_PREFIX)


def _calls_case(calls_per_mb: int) -> Callable[[random.Random, int], Case]:
    """An agent trace in the SmolLM3 format: stretches of content between tool calls, with
    `calls_per_mb` calls per MB of text (at least one), so the implicit field has about as
    many stretches as there are calls."""

    def generate(rng: random.Random, size: int) -> Case:
        calls = max(1, round(size * calls_per_mb / (1024 * 1024)))
        stretch_len = max((size - 90 * calls) // (calls + 1), 20)
        stretches = []
        blocks = []
        for index in range(calls):
            stretch = _filler(rng, stretch_len, SMOLLM3_NEAR_MISSES) + "\n"
            call = {
                "name": "read_file",
                "arguments": {"path": f"src/module_{index}.py", "line": index},
            }
            stretches.append(("\n" if index else "") + stretch)
            blocks.append(f"{stretches[-1]}<tool_call>\n{json.dumps(call)}\n</tool_call>")
        stretches.append("\n" + _filler(rng, stretch_len, SMOLLM3_NEAR_MISSES))
        text = "".join(blocks) + stretches[-1] + "<|im_end|>"
        return Case(text, CHATML_PREFIX, implicit_expected="".join(stretches).strip())

    return generate


WORKLOADS = {
    workload.name: workload
    for workload in [
        Workload(
            "smollm3",
            "SmolLM3: literal <think>, <tool_call> JSON, implicit content",
            SMOLLM3_TEMPLATE,
            _smollm3_case,
        ),
        Workload(
            "qwen3-coder",
            "Qwen3-Coder: regex open with a named group, xml-inline + JSON values, large code argument",
            QWEN3_CODER_TEMPLATE,
            _qwen3_coder_case,
            spans_implicit_stretches=True,
        ),
        Workload(
            "gpt-oss",
            "gpt-oss: literal channels, regex open with a named group",
            GPT_OSS_TEMPLATE,
            _gpt_oss_case,
        ),
        Workload(
            "ws-prefix",
            "every pattern starts with \\s* (no literal first character)",
            WHITESPACE_TEMPLATE,
            _whitespace_case,
        ),
        Workload(
            "calls-1000",
            "agent trace: content and tool calls alternating, 1,000 calls per MB (SmolLM3 format)",
            SMOLLM3_TEMPLATE,
            _calls_case(1000),
            spans_implicit_stretches=True,
        ),
        Workload(
            "calls-10",
            "the same with 10 calls per MB: longer stretches, the same text size",
            SMOLLM3_TEMPLATE,
            _calls_case(10),
            spans_implicit_stretches=True,
        ),
    ]
}


def make_case(workload: str, size: int, seed: int = SEED) -> Case:
    """The generation the benchmark uses for `workload` at `size` characters (for reproducing a difference)."""
    return WORKLOADS[workload].generate(random.Random(f"{seed}:{workload}:{size}"), size)


def token_chunks(text: str, seed: int = SEED) -> list[str]:
    """`text` cut into seeded pieces of 1 to 8 characters, like detokenized model output."""
    rng = random.Random(f"{seed}:chunks:{len(text)}")
    chunks = []
    start = 0
    while start < len(text):
        end = start + rng.randint(1, 8)
        chunks.append(text[start:end])
        start = end
    return chunks
