"""Learning an output format from two example outputs, as a property over random formats
(tests/support/random_formats.py): the template learnt from a format's two examples, with
their expected messages or from the outputs and tools alone, reads 20 other outputs of the
format to their messages in all three parse modes. scripts/bench_random_formats.py runs the
same over hundreds of formats and prints the rate and the feature mix.
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.chat_templates.evidence import read_examples
from engine.chat_templates.example_fields import learn_template
from tests.support.random_formats import FEATURES, random_format
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
