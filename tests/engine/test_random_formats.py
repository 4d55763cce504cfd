"""Learning an output format from two example outputs, as a property over random formats
(tests/support/random_formats.py): the template learnt from a format's two examples, with
their expected messages or from the outputs and tools alone, reads 20 other outputs of the
format to their messages in all three parse modes. scripts/bench_random_formats.py runs the
same over hundreds of formats and prints the rate and the feature mix.
"""

from __future__ import annotations

import random

import regex
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from engine.chat_templates.evidence import read_examples
from engine.chat_templates.example_fields import learn_template
from tests.support.random_formats import FEATURES, Format, random_format
from tests.support.real_outputs import score_case


def _misread(seed: int, with_expected: bool) -> list[str]:
    fmt = random_format(seed)
    examples = fmt.examples()
    if not with_expected:
        examples = [{k: v for k, v in example.items() if k != "expected"} for example in examples]
    template = learn_template(read_examples(examples), fmt.base()).template
    rng = random.Random(seed)
    return [
        f"{case['output']!r}: {why[0]}"
        for case in fmt.fresh(20)
        for why in [score_case(template, case, rng)]
        if why
    ]


@settings(max_examples=30, deadline=None, derandomize=True)
@given(seed=st.integers(min_value=0, max_value=10**6), with_expected=st.booleans())
def test_a_format_learnt_from_two_examples_reads_fresh_outputs_in_all_three_modes(
    seed, with_expected
):
    assert _misread(seed, with_expected) == []


def test_the_generator_draws_every_feature_value_and_repeats_a_seed():
    drawn = {(name, random_format(seed).features[name]) for seed in range(300) for name in FEATURES}
    assert drawn == {(name, choice) for name, choices in FEATURES.items() for choice in choices}
    assert random_format(7).examples() == random_format(7).examples()
    assert random_format(7).examples() != random_format(8).examples()


def test_more_features_leave_the_other_features_as_drawn_and_vary_the_calls_header():
    for seed in range(40):
        plain, more = random_format(seed), random_format(seed, more=True)
        assert {name: more.features[name] for name in FEATURES if name != "headers"} == {
            name: plain.features[name] for name in FEATURES if name != "headers"
        }
    fmt = next(
        random_format(seed, more=True)
        for seed in range(40)
        if random_format(seed, more=True).features["header_word"] == "varies"
    )
    headers = [example["output"] for example in fmt.examples()]
    left, right = fmt.headers["calls"].split("{}")
    words = [output.split(left)[-1].split(right)[0] for output in headers]
    assert left.endswith("to=") and words[0] != words[1] and all(map(str.isalpha, words))


# -- the format facts seen in real outputs, one at a time -------------------------------------

# Each fact's value when it is off.
FACTS_OFF = {
    "quoted_values": "no",
    "bare_python": "no",
    "optional_answer": "no",
    "arguments_key": "fixed",
    "call_index": "no",
    "json_dialect": "no",
}


def _with_fact(seed: int, fact: str, value: str) -> Format:
    """The format `seed` draws with `more`, `fact` set to `value` and the other facts off."""
    fmt = random_format(seed, more=True)
    fmt.features |= {name: off for name, off in FACTS_OFF.items() if name != fact}
    fmt.features[fact] = value
    return fmt


def _seeds(keep) -> list[int]:
    """The seeds below 600 whose format (with `more`) `keep` takes, calls not keyed by name."""
    return [
        seed
        for seed in range(600)
        if random_format(seed, more=True).features["keyed_list"] == "no"
        and keep(random_format(seed, more=True).features)
    ]


def _misread_by(fmt: Format, with_expected: bool) -> list[str]:
    examples = fmt.examples()
    if not with_expected:
        examples = [{k: v for k, v in example.items() if k != "expected"} for example in examples]
    template = learn_template(read_examples(examples), fmt.base()).template
    rng = random.Random(fmt.seed)
    return [
        f"{case['output']!r}: {why[0]}"
        for case in fmt.fresh(20)
        for why in [score_case(template, case, rng)]
        if why
    ]


def _argument_values(fmt: Format) -> list:
    return [
        value
        for case in fmt.fresh(20)
        for call in case["expected"].get("tool_calls", [])
        for value in call["function"]["arguments"].values()
    ]


@settings(max_examples=15, deadline=None, derandomize=True)
@given(seed=st.sampled_from(_seeds(lambda features: True)), with_expected=st.booleans())
def test_quotes_inside_string_values_are_the_values_own(seed, with_expected):
    """Code and quoted words inside a string value (``print('Oslo')``, ``say "Oslo" twice``):
    the quotes belong to the value, the syntax's own quotes do not; without messages, a
    parenthesis the value opens it closes too."""
    fmt = _with_fact(seed, "quoted_values", "yes")
    values = [value for value in _argument_values(fmt) if isinstance(value, str)]
    assert any("'" in value or '"' in value for value in values)
    assert _misread_by(fmt, with_expected) == []


@settings(max_examples=10, deadline=None, derandomize=True)
@given(
    seed=st.sampled_from(
        _seeds(lambda features: features["calls"] in ("name-braces", "name-tags", "name-lines"))
    )
)
def test_code_in_a_bare_value_is_read_whole_from_the_outputs_alone(seed):
    """Arguments written without quotes (``{city:print('Oslo')}``, tags, lines): from the
    outputs and tools alone, a value holding code keeps its parentheses."""
    fmt = _with_fact(seed, "quoted_values", "yes")
    outputs = " ".join(example["output"] for example in fmt.examples())
    outputs += " ".join(case["output"] for case in fmt.fresh(20))
    assert regex.search(r"print\('[^']*'\)", outputs)
    assert _misread_by(fmt, with_expected=False) == []


@settings(max_examples=10, deadline=None, derandomize=True)
@given(
    seed=st.sampled_from(_seeds(lambda features: features["calls"] == "python-list")),
    with_expected=st.booleans(),
)
def test_python_style_calls_written_without_list_brackets_one_after_another(seed, with_expected):
    fmt = _with_fact(seed, "bare_python", "yes")
    two_calls = fmt.examples()[1]
    assert len(regex.findall(r"\w+\(", two_calls["output"])) == 2
    assert not regex.search(r"\[\s*\w+\(", two_calls["output"])
    assert _misread_by(fmt, with_expected) == []


@settings(max_examples=15, deadline=None, derandomize=True)
@given(
    seed=st.sampled_from(_seeds(lambda features: features["answer"] != "none")),
    with_expected=st.booleans(),
)
def test_answer_markup_only_some_outputs_write(seed, with_expected):
    """The examples write the answer's markup; other outputs write it or the bare text."""
    fmt = _with_fact(seed, "optional_answer", "yes")
    answers = [case for case in fmt.fresh(20) if case["expected"].get("content")]
    opener = fmt.answer[0]
    assert opener in fmt.examples()[0]["output"]
    assert {opener in case["output"] for case in answers} == {True, False}
    assert _misread_by(fmt, with_expected) == []


# Call syntaxes that write each call on its own (not one list holding them all).
_ONE_BY_ONE = ("json-object", "name-json", "name-braces", "name-python", "name-tags", "name-lines")


@settings(max_examples=15, deadline=None, derandomize=True)
@given(seed=st.sampled_from(_seeds(lambda features: features["calls"] in _ONE_BY_ONE)))
def test_an_index_only_some_outputs_write_between_calls_is_dropped_whatever_its_number(seed):
    """The second example writes ``#N`` between its calls; other outputs write another number
    there, or none."""
    fmt = _with_fact(seed, "call_index", "some")
    assert regex.search(r"#\d+", fmt.examples()[1]["output"])
    several = [case["output"] for case in fmt.fresh(20) if case["output"].count(fmt.call_open) > 1]
    assert several
    assert _misread_by(fmt, with_expected=True) == []


def test_an_arguments_key_that_varies_is_written_both_ways_by_the_two_examples():
    """A JSON call's arguments under ``arguments`` in one output and ``parameters`` in
    another: the two examples show both keys, the expected messages are alike. (The learner
    reads both: a call object's head, its arguments key included, goes into the open pattern;
    `test_a_second_call_syntax_with_an_index_and_a_varying_arguments_key_together`.)"""
    seeds = _seeds(lambda features: features["calls"] in ("json-object", "json-list"))
    for seed in seeds[:20]:
        fmt = _with_fact(seed, "arguments_key", "varies")
        first, second = (example["output"] for example in fmt.examples())
        key = fmt.keys[0]
        assert f'"{key}"' in first and f'"{key}"' in second
        assert ('"arguments"' in first, '"parameters"' in second) == (True, True)
        assert "parameters" not in first.replace('"parameters"', "")


# Each later fact's value when it is off (`_with_fact` switches the others off).
FACTS_OFF |= {
    "channel_word": "fixed",
    "second_syntax": "none",
    "nested_tags": "no",
    "tag_attributes": "no",
}


@settings(max_examples=12, deadline=None, derandomize=True)
@given(
    seed=st.sampled_from(_seeds(lambda features: features["channel_word"] == "varies")),
    with_expected=st.booleans(),
)
def test_a_channel_word_no_example_shows_is_still_a_header(seed, with_expected):
    """The content's header names a channel anew in each output (``<|a|>final<|b|>``); the
    examples show one of its words, other outputs write others."""
    fmt = _with_fact(seed, "channel_word", "varies")
    left, right = fmt.headers["content"].split("{channel}")
    written = {
        case["output"].split(left)[1].split(right)[0]
        for case in fmt.fresh(20)
        if case["expected"].get("content") and left in case["output"]
    }
    shown = fmt.examples()[0]["output"]
    # A format whose other outputs happen to write only words the first example shows tests
    # nothing here.
    assume(len(written) > 1 and any(f"{left}{word}{right}" not in shown for word in written))
    assert _misread_by(fmt, with_expected) == []


# Formats whose calls are JSON objects or a JSON list.
_JSON_CALLS = _seeds(lambda features: features["calls"] in ("json-object", "json-list"))


@settings(max_examples=12, deadline=None, derandomize=True)
@given(
    seed_and_syntax=st.tuples(
        st.sampled_from(_JSON_CALLS), st.sampled_from(["bare-json", "name-args"])
    ),
    with_expected=st.booleans(),
)
# Two objects of the format's own syntax in one output parted by a comma, where the examples
# write two calls in a row (in the second syntax) with only a line break between.
@example(seed_and_syntax=(433, "bare-json"), with_expected=False)
def test_a_second_call_syntax_the_second_example_writes_is_read_in_other_outputs(
    seed_and_syntax, with_expected
):
    """Calls as JSON objects or a JSON list in one output, and in another as bare JSON objects
    with no marker, or as ``NAME[ARGS]{...}``: one field reads both."""
    seed, syntax = seed_and_syntax
    fmt = _with_fact(seed, "second_syntax", syntax)
    if syntax == "name-args" and not fmt.arguments_marker:
        fmt.arguments_marker = "[ARGZ]"
    first, second = (example["output"] for example in fmt.examples())
    if syntax == "name-args":
        assert fmt.arguments_marker in second and fmt.arguments_marker not in first
    else:
        assert regex.search(r'(?:^|\n)\{"', second)
    assert _misread_by(fmt, with_expected) == []


# Formats whose calls open with a plain word or with nothing of their own.
_UNMARKED_JSON_CALLS = _seeds(
    lambda features: (
        features["calls"] in ("json-object", "json-list")
        and features["call_open"] in ("word", "none")
    )
)


@settings(max_examples=10, deadline=None, derandomize=True)
@given(seed=st.sampled_from(_UNMARKED_JSON_CALLS), with_expected=st.booleans())
def test_name_first_calls_beside_json_calls_that_open_with_a_word_or_nothing(seed, with_expected):
    """``NAME[ARGS]{...}`` in one output, JSON calls opened by a plain word or by nothing but
    the header before them in another: the header that frames a word before every part is no
    call's open, the word glued to it opens the list, and the arguments may stand under a key
    no example shows."""
    fmt = _with_fact(seed, "second_syntax", "name-args")
    fmt.features["arguments_key"] = "varies"
    if not fmt.arguments_marker:
        fmt.arguments_marker = "[ARGZ]"
    first, second = (example["output"] for example in fmt.examples())
    assert fmt.arguments_marker in second and fmt.arguments_marker not in first
    assert _misread_by(fmt, with_expected) == []


def _tag_seeds() -> list[int]:
    return _seeds(lambda features: features["calls"] == "name-tags")


@settings(max_examples=12, deadline=None, derandomize=True)
@given(seed=st.sampled_from(_tag_seeds()), attributes=st.booleans(), with_expected=st.booleans())
def test_objects_written_as_tags_inside_a_parameters_tag(seed, attributes, with_expected):
    """A parameter whose value is an object, written as tags of the same syntax inside its own
    tag (``<arg=stay><arg=nights>3</arg></arg>``), with or without attributes in each tag; from
    the outputs alone, the tool's schema says which parameter is an object."""
    fmt = _with_fact(seed, "nested_tags", "yes")
    fmt.features["tag_attributes"] = "yes" if attributes else "no"
    first = fmt.examples()[0]
    stay = first["expected"]["tool_calls"][0]["function"]["arguments"].get("stay")
    assert isinstance(stay, dict) and regex.search(r"</arg>\s*</arg>", first["output"])
    assert _misread_by(fmt, with_expected) == []


@settings(max_examples=10, deadline=None, derandomize=True)
@given(seed=st.sampled_from(_tag_seeds()))
def test_a_tag_attribute_decides_whether_a_value_is_a_string(seed):
    """``<arg name="zip" string="true">75001</arg>`` is the string "75001";
    ``string="false"`` values are JSON (``3``, ``true``)."""
    fmt = _with_fact(seed, "tag_attributes", "yes")
    outputs = [case["output"] for case in fmt.fresh(20)]
    assert any('string="true"' in output for output in outputs)
    assert any(isinstance(value, str) and value.isdigit() for value in _argument_values(fmt)), (
        "some string values are digits, which only the attribute keeps strings"
    )
    assert _misread_by(fmt, with_expected=True) == []


def test_the_template_language_reads_objects_nested_in_tags_with_a_recursive_tag_pattern():
    """What the learner writes for objects inside tags, checked by hand: a tag pattern whose
    value matches inner tags balanced, and a value parser chosen by whether the value starts
    with a tag, read again one level down."""
    from engine.chat_templates.argument_readers import PairSyntax
    from tests.support.real_outputs import parse_modes

    syntax = PairSyntax("<p=", ">", "</p>", "", False, nested=True)
    template = {
        "start_anchor": "U:",
        "fields": {
            "tool_calls": {
                "open_pattern": r"<c>(?P<name>\w+)\n",
                "close": "</c>",
                "repeats": True,
                **syntax.content(),
                "transform": {
                    "type": "function",
                    "function": {"name": "{name}", "arguments": "{content}"},
                },
            },
            "content": {},
        },
    }
    output = "ok <c>plan\n<p=a>x y</p><p=b><p=c>3</p><p=d><p=e>true</p></p></p></c>"
    for mode, (message, error) in parse_modes(
        template, {"prefix": "U:", "output": output, "tools": None}, random.Random(3)
    ).items():
        assert error == "", mode
        assert message["tool_calls"][0]["function"]["arguments"] == {
            "a": "x y",
            "b": {"c": 3, "d": {"e": True}},
        }, mode


@settings(max_examples=12, deadline=None, derandomize=True)
@given(
    seed=st.sampled_from(_JSON_CALLS),
    syntax=st.sampled_from(["bare-json", "name-args"]),
    with_expected=st.booleans(),
)
def test_a_second_call_syntax_with_an_index_and_a_varying_arguments_key_together(
    seed, syntax, with_expected
):
    """Facts that meet in one output: a second call syntax, an index some outputs write between
    calls (with the separator on both sides of it: ``}, #4, {``), an arguments key that varies
    and quotes inside values."""
    fmt = _with_fact(seed, "second_syntax", syntax)
    fmt.features |= {"call_index": "some", "arguments_key": "varies", "quoted_values": "yes"}
    if syntax == "name-args" and not fmt.arguments_marker:
        fmt.arguments_marker = "[ARGZ]"
    assert regex.search(r"#\d+", fmt.examples()[1]["output"])
    assert _misread_by(fmt, with_expected) == []


_ANSWERED_BARE_OBJECTS = _seeds(
    lambda features: (
        features["calls"] == "json-object"
        and features["call_open"] == "none"
        and features["answer"] != "none"
    )
)


@settings(max_examples=8, deadline=None, derandomize=True)
@given(seed=st.sampled_from(_ANSWERED_BARE_OBJECTS), with_expected=st.booleans())
def test_a_call_object_after_an_answer_in_its_markup_beside_name_first_calls(seed, with_expected):
    """The first example's one call object follows the answer's close (and maybe a header),
    the second writes ``NAME[ARGS]{...}`` calls: whether that close is also the call's open no
    example tells, so other outputs' call objects are read with it, after another call, or
    alone."""
    fmt = _with_fact(seed, "second_syntax", "name-args")
    if not fmt.arguments_marker:
        fmt.arguments_marker = "[ARGZ]"
    first = fmt.examples()[0]["output"]
    assert regex.search(regex.escape(fmt.answer[1]) + r"[^{]*\{", first)
    assert _misread_by(fmt, with_expected) == []


@settings(max_examples=10, deadline=None, derandomize=True)
@given(
    seed=st.sampled_from(_seeds(lambda features: features["calls"] == "name-json")),
    with_expected=st.booleans(),
)
def test_arguments_in_a_dialect_of_json_with_strings_between_the_formats_own_marks(
    seed, with_expected
):
    """Keys without quotes, strings between marks the format chose (``<|ab|>``, ``«`` and
    ``»``), numbers and booleans bare: the marks are syntax, the text between them the value."""
    fmt = _with_fact(seed, "json_dialect", "yes")
    opening, closing = fmt.string_marks
    calls = fmt.examples()[0]["output"]
    assert regex.search(rf"\{{\w+:{regex.escape(opening)}[^{{]*{regex.escape(closing)}", calls)
    assert _misread_by(fmt, with_expected) == []
