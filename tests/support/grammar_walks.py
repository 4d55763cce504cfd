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
from engine.grammar.derive import FORM_LABELS
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
# The same kinds of parameters with the keywords that bound values: integer and number ranges
# (inclusive and exclusive), string lengths and patterns, item counts, nested required objects,
# anyOf and a $ref, as strict tool calling promises them.
KEYWORD_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather forecast for a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "minLength": 2, "maxLength": 12},
                    "days": {"type": "integer", "minimum": 1, "maximum": 9},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                    "level": {"type": "number", "exclusiveMinimum": 0, "maximum": 5},
                },
                "required": ["city", "days"],
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
                        "properties": {
                            "hour": {"type": "integer", "minimum": 0, "maximum": 23},
                            "minute": {"type": "integer", "minimum": 0, "exclusiveMaximum": 60},
                        },
                        "required": ["hour", "minute"],
                    },
                    "volume": {"type": "number", "minimum": -10, "maximum": 10},
                    "loud": {"type": "boolean"},
                    "days": {
                        "type": "array",
                        "items": {"type": "string", "minLength": 1, "maxLength": 3},
                        "minItems": 1,
                        "maxItems": 3,
                    },
                },
                "required": ["time", "loud"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "file_ticket",
            "description": "File a ticket for a person.",
            "parameters": {
                "type": "object",
                "properties": {
                    "code": {"type": "string", "pattern": "^[A-Z]{2}-[0-9]{3}$"},
                    "priority": {
                        "anyOf": [
                            {"type": "integer", "minimum": 1, "maximum": 3},
                            {"type": "string", "enum": ["low", "high"]},
                        ]
                    },
                    "owner": {"$ref": "#/$defs/person"},
                },
                "required": ["code"],
                "$defs": {
                    "person": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string", "minLength": 1, "maxLength": 10},
                            "age": {"type": "integer", "minimum": 18, "maximum": 120},
                        },
                        "required": ["name"],
                    }
                },
            },
        },
    },
]
_NUMERIC_KEYWORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")


def schemas_of(tools: list[dict]) -> dict[str, dict]:
    """Tool name -> its parameters' schema."""
    return {tool["function"]["name"]: tool["function"]["parameters"] for tool in tools}


def noted(notes: list[str], form: str, keyword: str, where: list) -> bool:
    """Whether the grammar's `notes` say that `keyword` of the parameter at `where` (the
    failing value's path in the arguments) is not enforced in `form`: a note that names no
    form holds for all of them, one that says "in the ..." for those it names."""
    names = [str(part) for part in where if isinstance(part, str)]
    for note in notes:
        if " in the " in note and FORM_LABELS[form] not in note.split(" in the ", 1)[1]:
            continue  # as DerivedGrammar.notes_for: a note for other forms
        said = f"'{keyword}'" in note or keyword in _NUMERIC_KEYWORDS and "bounds" in note
        if said and (not names or any(name in note for name in names[-1:])):
            return True
    return False


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


# Call objects with no marker, found by looking ahead for an object with the name's key among
# its first members (as inference learns them from renders and example outputs).
BARE_CALL_OBJECTS = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|a|>",
    "fields": {
        "tool_calls": {
            "open_pattern": '(?=\\{\\s*(?:"(?:[^"\\\\\\n]|\\\\.)*"\\s*:\\s*(?:"(?:[^"\\\\\\n]|\\\\.)*"|[\\w.+\\-]+)\\s*,\\s*){0,8}"name"\\s*:)',
            "close_pattern": "(?<=\\})(?:\\s*[,;])?(?=\\s*(?:\\{|<\\|z\\|>|$))",
            "repeats": True,
            "content": "json",
            "transform": {
                "type": "function",
                "function": {"name": "{content.name}", "arguments": "{content.parameters}"},
            },
        },
        "content": {"close": "<|z|>"},
    },
}


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
    dead_ends: int = 0
    noted: int = 0  # calls valid except for keywords the form's notes say it cannot enforce
    # Outputs whose invalid call holds bytes that are not UTF-8 (U+FFFD once decoded): the
    # engine let them through (xgrammar takes overlong UTF-8 forms for one character), so
    # the string is longer decoded than the grammar counted. Listed apart from failures.
    invalid_utf8: int = 0
    engine_failures: list[str] = field(default_factory=list)
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
    tools: list[dict] | None = None,
) -> RoundTrip:
    """Walk `samples` outputs of the grammar of `case` under the request (`tools`, by default
    `KEYWORD_TOOLS`); parse and check each. A walk that reaches a dead end (no token continues
    where the output may not end) is a failed sample."""
    from engine.grammar.matching import (
        DeadEnd,
        compile_grammar,
        random_walk,
        steering_sequences,
    )

    tools = KEYWORD_TOOLS if tools is None else tools
    tokenizer = demo_tokenizer()
    result = RoundTrip()
    started = time.perf_counter()
    derived = derive_grammar(case.template, tools, choice, parallel, prefix=case.prefix)
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
        try:
            ids = random_walk(compiled, tokenizer, rng, steering, max_tokens=max_tokens)
        except DeadEnd as end:
            result.samples += 1
            result.dead_ends += 1
            text = tokenizer.decode(
                end.ids, skip_special_tokens=False, clean_up_tokenization_spaces=False
            )
            result.failures.append(f"{end}: {text!r}")
            continue
        if ids is None:
            result.not_ended += 1
            continue
        text = tokenizer.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)
        result.samples += 1
        check_output(case, text, choice, parallel, rng, result, tools, form, derived.notes)
    return result


def check_output(
    case: Case,
    text: str,
    choice: str,
    parallel: bool,
    rng,
    result: RoundTrip,
    tools: list[dict] | None = None,
    form: str = "structural-tag",
    notes: list[str] = (),
) -> None:
    """Parse `text` one-shot and in random chunks (strict), then check calls (each against its
    tool's whole schema, `jsonschema`) and the choice. A call that breaks only keywords the
    form's `notes` say it cannot enforce counts as `noted`, not as a failure."""
    tools = KEYWORD_TOOLS if tools is None else tools
    schemas = schemas_of(tools)
    try:
        message = engine.parse_response(text, case.template, prefix=case.prefix, tools=tools)
        parser = engine.ResponseParser(case.template, prefix=case.prefix, tools=tools)
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
    only_noted = False
    try:
        for call in calls:
            function = call["function"]
            validator = jsonschema.Draft202012Validator(schemas[function["name"]])
            for error in validator.iter_errors(function["arguments"]):
                if not noted(notes, form, error.validator, list(error.absolute_path)):
                    raise error
                only_noted = True
    except (KeyError, TypeError, jsonschema.ValidationError) as error:
        failure = f"invalid call ({str(error)[:200]}): {text!r}"
        if "\ufffd" in text:
            result.invalid_utf8 += 1
            result.engine_failures.append(failure)
        else:
            result.failures.append(failure)
        return
    result.valid += 1
    result.noted += only_noted
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
