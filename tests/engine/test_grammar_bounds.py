"""Grammars that honour a tool's whole schema: numeric bounds, string lengths and patterns, item
counts, required keys, anyOf and $ref, in each form (the Lark form through llguidance's own JSON
Schema support, GBNF and the structural tag as far as they can say it, the rest named)."""

from __future__ import annotations

import dataclasses
import json
import random

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from engine.grammar import derive_grammar
from engine.grammar.bounds import integer, number, pattern_regex, whole_range
from engine.grammar.json_excludes import (
    avoiding_regex,
    first_characters_regex,
    refused,
    schema_for_lark,
)
from engine.grammar.patterns import to_regex

llguidance = pytest.importorskip("llguidance")
pytest.importorskip("xgrammar")

from engine.grammar.matching import DeadEnd, compile_grammar, random_walk  # noqa: E402
from tests.support.grammar_walks import (  # noqa: E402
    KEYWORD_TOOLS,
    demo_tokenizer,
    round_trip,
    shipped_cases,
)

HERMES_PREFIX = "<|im_start|>assistant\n"
WEATHER = [tool for tool in KEYWORD_TOOLS if tool["function"]["name"] == "get_weather"]


def _within(value, low, low_x, high, high_x) -> bool:
    return (low is None or (value > low if low_x else value >= low)) and (
        high is None or (value < high if high_x else value <= high)
    )


def _schema(low, low_x, high, high_x) -> dict:
    schema = {}
    if low is not None:
        schema["exclusiveMinimum" if low_x else "minimum"] = low
    if high is not None:
        schema["exclusiveMaximum" if high_x else "maximum"] = high
    return schema


bound = st.one_of(st.none(), st.integers(-1200, 1200))


@settings(max_examples=150, deadline=None)
@given(bound, st.booleans(), bound, st.booleans(), st.lists(st.integers(-3000, 3000), max_size=40))
def test_integer_bounds_allow_exactly_the_integers_between_them(low, low_x, high, high_x, probes):
    schema = _schema(low, low_x, high, high_x)
    try:
        node = integer(schema)
    except ValueError:  # the bounds allow no integer
        assert not any(_within(v, low, low_x, high, high_x) for v in range(-3001, 3001))
        return
    if node is None:
        assert schema == {}
        return
    written = regex.compile(to_regex(node))
    for value in [*probes, low or 0, high or 0, (low or 0) + 1, (high or 0) - 1]:
        assert (written.fullmatch(str(value)) is not None) == _within(
            value, low, low_x, high, high_x
        ), (schema, value)
    assert written.fullmatch("-0") is None or _within(0, low, low_x, high, high_x)
    assert written.fullmatch("007") is None


@settings(max_examples=150, deadline=None)
@given(
    bound,
    st.booleans(),
    bound,
    st.booleans(),
    st.lists(st.decimals(-3000, 3000, places=2, allow_nan=False), max_size=40),
)
def test_number_bounds_allow_the_numbers_between_them_and_no_other(
    low, low_x, high, high_x, probes
):
    schema = _schema(low, low_x, high, high_x)
    try:
        node = number(schema)
    except ValueError:
        assert low is not None and high is not None and (low > high or low == high)
        return
    if node is None:
        assert schema == {}
        return
    written = regex.compile(to_regex(node))
    for value in probes:
        text = format(value, "f")
        inside = _within(float(value), low, low_x, high, high_x)
        accepted = written.fullmatch(text) is not None
        # Never outside; inside, every number except a negative zero is written.
        assert not accepted or inside, (schema, text)
        assert accepted or not inside or float(value) == 0 and text.startswith("-"), (schema, text)


def test_a_number_bound_that_is_not_whole_is_named_not_enforced():
    with pytest.raises(ValueError, match="the bound 0.5 is not a whole number"):
        number({"minimum": 0.5})
    assert to_regex(whole_range(7, 123)) == "[7-9]|[1-9][0-9]|1[01][0-9]|12[0-3]"


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.text(alphabet="<>/ab|", min_size=1, max_size=5), min_size=1, max_size=3),
    st.lists(st.text(alphabet="<>/ab|x", max_size=14), max_size=30),
)
def test_the_avoiding_regex_matches_exactly_the_texts_without_the_literals(literals, texts):
    exact = avoiding_regex(tuple(literals))
    narrow = regex.compile(first_characters_regex(tuple(literals)))
    for text in texts:
        holds = any(literal in text for literal in literals)
        if exact is not None:  # None: too long a regex (the narrower one serves)
            assert (regex.fullmatch(exact, text) is None) == holds, (literals, text)
        assert not holds or narrow.fullmatch(text) is None


def test_json_schema_patterns_are_read_as_whole_strings_or_named_not_enforced():
    assert pattern_regex("^[A-Z]{2}-\\d{3}$") == "[A-Z]{2}-[0-9]{3}"
    assert pattern_regex("ab") == "(?:(?s:.)*(?:ab))(?s:.)*"
    assert pattern_regex("^a/b$") == "a\\/b"
    assert pattern_regex("^a|b$") is None  # an anchor would bind to one alternative
    assert pattern_regex("(?=x)y") is None
    assert pattern_regex("(") is None


def test_the_lark_form_hands_the_whole_schema_to_llguidance_with_strings_kept_off_the_delimiters():
    schema = {
        "type": "object",
        "properties": {
            "city": {"type": "string", "maxLength": 12},
            "unit": {"enum": ["c", "f"]},
            "extra": {"type": "object", "properties": {"a": {"type": "integer"}}},
        },
        "required": ["city"],
        "additionalProperties": False,
    }
    prepared = schema_for_lark(schema, ("}",))
    assert prepared == {
        "x-guidance": {
            "whitespace_flexible": False,
            "item_separator": ", ?",
            "key_separator": ": ?",
            "lenient": True,
        },
        "type": "object",
        "properties": {
            "city": {"type": "string", "maxLength": 12, "allOf": [{"$ref": "#/$defs/x-avoid"}]},
            "unit": {"enum": ["c", "f"]},
            "extra": {
                "type": "object",
                "properties": {"a": {"type": "integer"}},
                "additionalProperties": False,
            },
        },
        "required": ["city"],
        "additionalProperties": False,
        "$defs": {"x-avoid": {"pattern": "^(?:[^\\}])*$"}},
    }
    lark = derive_grammar("hermes-2-pro", WEATHER, "required").lark({})
    assert 'json_1: %json {"x-guidance"' in lark
    assert '"days":{"type":"integer","minimum":1,"maximum":9}' in lark


@pytest.mark.parametrize(
    "arguments, allowed",
    [
        ('{"city": "Paris", "days": 9}', True),
        ('{"city": "Paris", "days": 10}', False),  # maximum
        ('{"city": "Paris", "days": 0}', False),  # minimum
        ('{"city": "Parisandfarther", "days": 2}', False),  # maxLength
        ('{"city": "P", "days": 2}', False),  # minLength
        ('{"city": "Paris", "days": 2, "level": 5}', True),
        ('{"city": "Paris", "days": 2, "level": 0}', False),  # exclusiveMinimum
        ('{"city": "Paris", "days": 2, "level": 9.6e30}', False),  # maximum
        ('{"city": "Pa</tool_call>", "days": 2}', False),  # the delimiter that ends the call
        ('{"days": 2}', False),  # required
    ],
)
def test_llguidance_on_the_lark_form_allows_only_calls_valid_against_the_whole_schema(
    arguments, allowed
):
    tokenizer = demo_tokenizer()
    derived = derive_grammar("hermes-2-pro", WEATHER, "required", prefix=HERMES_PREFIX)
    compiled = compile_grammar(derived, tokenizer, "llguidance", "lark")
    text = f'<tool_call>\n{{"name": "get_weather", "arguments": {arguments}}}\n</tool_call>'
    matcher = compiled.matcher()
    ids = tokenizer.encode(text, add_special_tokens=False)
    accepted = all(matcher.accept(token) for token in ids) and matcher.can_end()
    assert accepted == allowed


def test_what_llguidance_ignores_is_named_per_parameter_and_agrees_with_llguidance():
    schema = {
        "type": "object",
        "properties": {
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
            "when": {"type": "string", "format": "calendar-week"},
            "day": {"type": "string", "format": "date"},
            "n": {"not": {"type": "integer"}},
        },
    }
    assert refused(schema, "args") == [
        "args.tags: 'uniqueItems'",
        "args.when: 'format' 'calendar-week'",
        "args.n: 'not'",
    ]
    grammar = llguidance.grammar_from(
        "lark", "start: %json " + json.dumps(schema_for_lark(schema, ()))
    )
    error, warnings = llguidance.LLMatcher.validate_grammar_with_warnings(grammar)
    assert not error
    assert sorted(warnings) == [
        'Unimplemented keys: ["not"]',
        'Unimplemented keys: ["uniqueItems"]',
        "Unknown format: calendar-week",
    ]


def test_a_walk_that_reaches_a_dead_end_is_a_failure_not_a_long_walk():
    tokenizer = demo_tokenizer()
    derived = derive_grammar("hermes-2-pro", WEATHER, "required", prefix=HERMES_PREFIX)
    compiled = compile_grammar(derived, tokenizer, "llguidance", "lark")
    # A string between two equal delimiters that may not hold the delimiter, the opening one
    # included: no text ever closes it (what the Lark form wrote for gemma-4 before).
    lark = 'start: "x" T\nT: /<a>(?s:.)*<a>/ & ~/(?s:.*)(?:<a>)(?s:.*)<a>/\n'
    dead = dataclasses.replace(compiled, compiled=llguidance.grammar_from("lark", lark))
    with pytest.raises(DeadEnd, match="dead end after") as ended:
        for seed in range(20):
            random_walk(dead, tokenizer, random.Random(seed), max_tokens=60)
    assert tokenizer.decode(ended.value.ids).startswith("x")


def test_walks_of_every_shipped_templates_lark_under_auto_and_required_give_only_valid_calls():
    bad, samples = [], 0
    for case in shipped_cases():
        for choice in ("auto", "required"):
            result = round_trip(
                case, choice, True, 2, engine_name="llguidance", form="lark", seed=5
            )
            samples += result.samples
            bad += [f"{case.name} {choice}: {failure[:300]}" for failure in result.failures]
            assert result.noted == 0, case.name  # nothing the Lark form leaves unenforced
    assert bad == [] and samples == 2 * 2 * len(engine.list_templates())


def test_lint_for_a_serving_runtime_says_the_lark_form_needs_the_tokenizer():
    found = [d for d in engine.lint("qwen3", target="vllm") if d.code == "grammar-special-tokens"]
    assert [(d.severity, d.path) for d in found] == [("info", "fields.reasoning_content.open")]
    assert "<tool_call>" in found[0].message and "--tokenizer" in found[0].suggestion
    assert not [d for d in engine.lint("qwen3") if d.code == "grammar-special-tokens"]
