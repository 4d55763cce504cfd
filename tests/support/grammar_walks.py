"""The sampling round trip of derived grammars, shared by tests/engine/test_grammar_walks.py and
scripts/bench_grammar.py.

A grammar is derived from a template and a request, compiled for the demo model's tokenizer,
and walked at random (each token among those the grammar allows, `random_walk`); each output
is parsed back with the same template in strict mode, one-shot and in random chunks, and
checked: the two parses agree, every tool call's arguments validate against its tool's schema
(`jsonschema`), and the tool choice and `parallel_tool_calls` hold.
"""

from __future__ import annotations

import functools
import json
import random
import time
from dataclasses import dataclass, field

import jsonschema

import engine
from engine.grammar import derive_grammar
from tests.support.paths import CHAT_TEMPLATES, MANIFEST, ROOT

DEMO_MODEL = ROOT / "samples" / "demo-model"

# Parameters of every kind a schema gives: string, integer, number, boolean, enum, nested object, array.
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather forecast for a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "days": {"type": "integer"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                },
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "set_alarm",
            "description": "Set an alarm.",
            "parameters": {
                "type": "object",
                "properties": {
                    "time": {
                        "type": "object",
                        "properties": {"hour": {"type": "integer"}, "minute": {"type": "integer"}},
                        "required": ["hour"],
                    },
                    "volume": {"type": "number"},
                    "loud": {"type": "boolean"},
                    "days": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["time", "loud"],
            },
        },
    },
]
SCHEMAS = {tool["function"]["name"]: tool["function"]["parameters"] for tool in TOOLS}


def realistic_tools(chars: int = 62_000, seed: int = 1) -> list[dict]:
    """Tools as a large real request gives them, as many as fit in `chars` characters of
    indented JSON (the playground's tools_chars is 64,000): each with a description and two to
    seven parameters of every kind (strings, integers, numbers, booleans, enums, arrays, objects
    nested two deep), the first two required. The same list for the same arguments."""
    rng = random.Random(seed)

    def parameter(depth: int) -> dict:
        roll = rng.random()
        if roll < 0.3:
            return {"type": "string", "description": "A value the function reads, in a sentence."}
        if roll < 0.45:
            return {"type": "integer", "description": "How many.", "minimum": 0}
        if roll < 0.55:
            return {"type": "number", "description": "A quantity."}
        if roll < 0.65:
            return {"type": "boolean", "description": "Whether to do it."}
        if roll < 0.8:
            options = [f"option_{index}" for index in range(rng.randint(2, 8))]
            return {"type": "string", "enum": options, "description": "One of the options."}
        if roll < 0.9 and depth < 2:
            return {"type": "array", "items": parameter(depth + 1), "description": "A list."}
        if depth < 2:
            inner = {f"part_{index}": parameter(depth + 1) for index in range(rng.randint(1, 4))}
            return {"type": "object", "properties": inner, "required": list(inner)[:1]}
        return {"type": "string"}

    tools: list[dict] = []
    while True:
        properties = {f"param_{index}": parameter(0) for index in range(rng.randint(2, 7))}
        tool = {
            "type": "function",
            "function": {
                "name": f"tool_number_{len(tools)}",
                "description": "Does one thing the assistant may need, said in a sentence or two.",
                "parameters": {
                    "type": "object",
                    "properties": properties,
                    "required": list(properties)[:2],
                },
            },
        }
        if len(json.dumps([*tools, tool], indent=2)) > chars:
            return tools
        tools.append(tool)


NAMED = "set_alarm"
# (tool_choice, parallel_tool_calls)
CHOICES = [
    ("auto", True),
    ("auto", False),
    ("required", True),
    ("required", False),
    ("none", True),
    (NAMED, True),
]


def choice_label(choice: str, parallel: bool) -> str:
    return choice if parallel else f"{choice}, no parallel"


@dataclass
class Case:
    """One template to walk: its name, the template, and the prefix the output continues."""

    name: str
    template: dict | str
    prefix: str


def shipped_cases() -> list[Case]:
    """Every shipped template, the output starting right after its start anchor."""
    cases = []
    for template_file in engine.list_templates():
        loaded = engine.load_template(template_file.name)
        anchor = loaded.start_anchor.literals[0] if loaded.start_anchor.literals else ""
        cases.append(Case(template_file.name, template_file.name, anchor))
    return cases


@functools.cache
def inferred_cases() -> tuple[Case, ...]:
    """The templates inferred from the shared chat templates (empty when they are absent), each
    with the generation prompt of every thinking mode as its prefix."""
    cases = []
    for entry in MANIFEST:
        chat_template = (CHAT_TEMPLATES / entry["file"]).read_text(encoding="utf-8")
        try:
            result = engine.infer_template(
                chat_template, bos_token=entry["bos_token"], eos_token=entry["eos_token"]
            )
        except engine.InferenceError:
            continue
        for mode, prompt in sorted(result.generation_prompt.items()):
            suffix = f" ({mode})" if mode else ""
            cases.append(Case(f"inferred {entry['file']}{suffix}", result.template, prompt))
    return tuple(cases)


@functools.cache
def demo_tokenizer():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(DEMO_MODEL))


@dataclass
class RoundTrip:
    """What the walks of one template and tool choice gave."""

    samples: int = 0
    parsed: int = 0
    valid: int = 0
    choice_held: int = 0
    calls: int = 0
    not_ended: int = 0
    build_seconds: float = 0.0
    unconstrainable: str = ""
    notes: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures and self.parsed == self.valid == self.choice_held == self.samples


def round_trip(
    case: Case,
    choice: str,
    parallel: bool,
    samples: int,
    *,
    engine_name: str = "xgrammar",
    form: str = "structural-tag",
    seed: int = 0,
    max_tokens: int = 300,
) -> RoundTrip:
    """Walk `samples` outputs of the grammar of `case` under the request; parse and check each."""
    from engine.grammar.matching import compile_grammar, random_walk, steering_sequences

    tokenizer = demo_tokenizer()
    result = RoundTrip()
    started = time.perf_counter()
    derived = derive_grammar(case.template, TOOLS, choice, parallel, prefix=case.prefix)
    if not derived.ok:
        result.build_seconds = time.perf_counter() - started
        result.unconstrainable = "; ".join(derived.unconstrainable)
        return result
    compiled = compile_grammar(derived, tokenizer, engine_name, form)
    result.build_seconds = time.perf_counter() - started
    result.notes = list(derived.notes)
    steering = steering_sequences(derived, tokenizer)
    rng = random.Random(seed)
    attempts = 0
    while result.samples < samples and attempts < samples * 10:
        attempts += 1
        ids = random_walk(compiled, tokenizer, rng, steering, max_tokens=max_tokens)
        if ids is None:
            result.not_ended += 1
            continue
        text = tokenizer.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)
        result.samples += 1
        check_output(case, text, choice, parallel, rng, result)
    return result


def check_output(
    case: Case, text: str, choice: str, parallel: bool, rng, result: RoundTrip
) -> None:
    """Parse `text` one-shot and in random chunks (strict), then check calls and choice."""
    try:
        message = engine.parse_response(text, case.template, prefix=case.prefix, tools=TOOLS)
        parser = engine.ResponseParser(case.template, prefix=case.prefix, tools=TOOLS)
        at = 0
        while at < len(text):
            step = rng.randint(1, 12)
            parser.feed(text[at : at + step])
            at += step
        streamed, _ = parser.finalize()
        if streamed != message:
            raise ValueError(f"streamed {streamed!r} != one-shot {message!r}")
    except Exception as error:  # a parse error is what the round trip looks for
        result.failures.append(f"does not parse ({error}): {text!r}")
        return
    result.parsed += 1
    calls = message.get("tool_calls") or []
    try:
        for call in calls:
            function = call["function"]
            jsonschema.validate(function["arguments"], SCHEMAS[function["name"]])
    except (KeyError, TypeError, jsonschema.ValidationError) as error:
        result.failures.append(f"invalid call ({str(error)[:200]}): {text!r}")
        return
    result.valid += 1
    result.calls += len(calls)
    names = [call["function"]["name"] for call in calls]
    problem = None
    if choice == "required" and not calls:
        problem = "required but no call"
    elif choice == "none" and calls:
        problem = "a call under tool_choice none"
    elif choice not in ("auto", "required", "none") and (not calls or set(names) != {choice}):
        problem = f"named {choice} but got {names}"
    elif not parallel and len(calls) > 1:
        problem = f"{len(calls)} calls without parallel calls"
    if problem:
        result.failures.append(f"{problem}: {text!r}")
        return
    result.choice_held += 1
