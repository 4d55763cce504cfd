"""Property tests: chunk invariance, events that add up to the message, lenient parsing, and
differential agreement with transformers' reference.

The differential test decides from the input alone which case applies:
* the implicit field had more than one stretch, or a whitespace-only one (we keep every
  stretch): events must be equal but for that field's close values; the message may differ
  only in the implicit field's key;
* the reference contradicts itself (its streamed message differs from its one-shot message),
  or loses text: recorded as a known reference fault, and we must still equal our one-shot;
* otherwise events and message must be equal exactly.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from transformers.utils.chat_parsing import ResponseParser as ReferenceParser

from engine import ResponseParser, load_template, message_from_events
from engine.authoring.samples import load_samples
from engine.authoring.stream_checks import random_chunks
from tests.support.strategies import template_and_generation
from tests.support.stream_helpers import region_texts, stream, stream_events

REFERENCE_FAULTS: list[tuple] = []


def run(parser_class, template, prefix, chunks):
    """Feed `chunks`; return (events, message) or (None, error type name)."""
    try:
        message, events = stream_events(template, chunks, prefix, parser_class=parser_class)
        return events, message
    except (ValueError, KeyError):  # the reference raises KeyError for an undefined placeholder
        return None, "error"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=template_and_generation(), seed=st.integers(0, 10**6))
def test_any_chunking_gives_the_same_message_and_region_texts(case, seed):
    template, prefix, generation = case
    one_shot_events, one_shot = run(ResponseParser, template, prefix, [generation])
    for chunks in (
        list(generation),
        random_chunks(generation, seed),
        random_chunks(generation, seed + 1, 3),
    ):
        events, message = run(ResponseParser, template, prefix, chunks)
        assert message == one_shot, (chunks, events)
        if events is not None:
            assert region_texts(events) == region_texts(one_shot_events)


def implicit_stretches(template, events) -> tuple[int, bool]:
    """How many implicit regions closed, and whether any of them was whitespace-only."""
    implicit = load_template(template).implicit_field
    if implicit is None:
        return 0, False
    closes = [e for e in events if e["type"] == "region_close" and e["field"] == implicit.name]
    texts = [t for f, t in region_texts(events) if f == implicit.name]
    return len(closes), any(not t.strip() for t in texts)


def ends_in_a_literal_start(template, prefix) -> bool:
    """Whether `prefix` ends in a proper start of one of the template's literal delimiters."""
    literals = [
        literal
        for field in template["fields"].values()
        for key in ("open", "close")
        for literal in ([field[key]] if isinstance(field.get(key), str) else field.get(key, []))
    ]
    return any(prefix.endswith(literal[:k]) for literal in literals for k in range(1, len(literal)))


def merged_at(events, boundary: int) -> list[dict]:
    """`events` with the region_chunk before index `boundary` merged into the one at it (same field)."""
    if 0 < boundary < len(events):
        last, following = events[boundary - 1], events[boundary]
        if (
            last["type"] == following["type"] == "region_chunk"
            and last["field"] == following["field"]
        ):
            return [
                *events[: boundary - 1],
                {**following, "text": last["text"] + following["text"]},
                *events[boundary + 1 :],
            ]
    return events


PREFIX_DECIDED_AS_FINAL = (
    {
        "defaults": {"role": "assistant"},
        "start_anchor": "<S>",
        "fields": {
            "reasoning_content": {"close": ["<a>", "</a>", "<"], "content_args": {"strip": False}}
        },
    },
    "</",
    "x",
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=template_and_generation(), seed=st.integers(0, 10**6))
@example(case=PREFIX_DECIDED_AS_FINAL, seed=0)
def test_agrees_with_the_reference(case, seed):
    template, prefix, generation = case
    ours_events, ours = run(ResponseParser, template, prefix, [generation])
    ref_events, ref = run(ReferenceParser, template, prefix, [generation])
    _, ref_streamed = run(ReferenceParser, template, prefix, random_chunks(generation, seed))
    if ref_streamed != ref:
        REFERENCE_FAULTS.append(("streamed differs from one-shot", template, prefix, generation))
        return
    if (
        ours_events is not None
        and ref_events is None
        and implicit_stretches(template, ours_events)[1]
    ):
        # A whitespace-only implicit stretch is not a value, so it cannot fail the parse
        # (the reference runs the content parser and transform on it and may raise).
        return
    if ours_events is None or ref_events is None:
        assert ours == ref, (ours, ref)
        return
    if ours_events != ref_events and ends_in_a_literal_start(template, prefix):
        # The reference decides the prefix as if the stream ended there, so it emits text the
        # generation could still turn into a longer literal (prefix "</", literals "<" and "</a>").
        # We hold it across the boundary (D2): its last prefix chunk arrives with the first
        # generation chunk. Only that difference is the reference's.
        boundary = len(ReferenceParser(template, prefix=prefix).initial_events)
        if merged_at(ref_events, boundary) == ours_events:
            REFERENCE_FAULTS.append(("prefix decided as final", template, prefix, generation))
            ref_events = ours_events
    implicit = load_template(template).implicit_field
    count, whitespace_only = implicit_stretches(template, ours_events)
    if implicit is not None and (count > 1 or whitespace_only):
        # Every stretch is kept and the events add up: a later or whitespace-only stretch's close carries the whole value
        # so far (or, repeating, no value), where the reference carries that stretch alone.
        ours_events, ref_events = (
            without_close_values(ours_events, implicit.name),
            without_close_values(ref_events, implicit.name),
        )
        ours = {k: v for k, v in ours.items() if k != implicit.name}
        ref = {k: v for k, v in ref.items() if k != implicit.name}
    assert ours_events == ref_events
    assert ours == ref


def without_close_values(events, field):
    """`events` with the value (or blank mark) of `field`'s region_close events left out."""
    return [
        {k: v for k, v in event.items() if k not in ("value", "blank")}
        if event["type"] == "region_close" and event["field"] == field
        else event
        for event in events
    ]


# -- events add up to the message, and lenient parsing never loses a message ------------------------

MODES = ("raise", "keep")
SHIPPED = [sample for sample in load_samples() if sample.expected_error is None]
# Text a broken generation may hold: stray delimiter starts, broken JSON, blanks.
DAMAGE = [
    "{",
    "}",
    '"',
    ",",
    "\n",
    "  ",
    "<",
    "</",
    "<tool_call>",
    "</tool_call>",
    "<think>",
    "</think>",
    '{"name": ',
    "]",
]


def parse_events(template, prefix, chunks, mode):
    """(message, events, kept error texts) of a parse fed `chunks`, or None when it raised."""
    try:
        streamed = stream(template, chunks, prefix, on_error=mode)
    except ValueError:
        assert mode == "raise", "on_error='keep' raised"
        return None
    return streamed.message, streamed.events, [str(error) for error in streamed.parser.errors]


def check_add_up_and_chunk_invariance(template, prefix, generation, seed, mode):
    whole = parse_events(template, prefix, [generation], mode)
    for chunks in (list(generation), random_chunks(generation, seed)):
        streamed = parse_events(template, prefix, chunks, mode)
        if whole is None:
            assert streamed is None, chunks
            continue
        message, events, errors = streamed
        assert (message, errors) == (whole[0], whole[2]), chunks
        assert message_from_events(events, template) == message, chunks
        assert region_texts(events) == region_texts(whole[1]), chunks


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    case=template_and_generation(contents=("text", "text", "json", "int")),
    seed=st.integers(0, 10**6),
    mode=st.sampled_from(MODES),
)
def test_events_add_up_and_any_chunking_agrees_in_both_modes(case, seed, mode):
    template, prefix, generation = case
    check_add_up_and_chunk_invariance(template, prefix, generation, seed, mode)


@pytest.mark.xfail(
    strict=True,
    reason="the regex module's partial matching misses a partial match of `.+?(?<=\\s)x` that starts at 0 in 'ab' "
    "(it reports one at 1), so streaming decides the 'a' that the one-shot close match starts with",
)
def test_a_lazy_run_before_a_lookbehind_streams_like_one_shot():
    template = {"start_anchor": "<S>", "fields": {"content": {"close_pattern": r".+?(?<=\s)x"}}}
    check_add_up_and_chunk_invariance(template, "", "ab x", 0, "raise")


@st.composite
def damaged_sample(draw):
    """A shipped sample's generation, maybe cut short, with damage written into it."""
    sample = draw(st.sampled_from(SHIPPED))
    text = sample.generation
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(DAMAGE)) + text[at:]
    if draw(st.booleans()):
        text = text[: draw(st.integers(0, len(text)))]
    return sample, text


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=damaged_sample(), seed=st.integers(0, 10**6), mode=st.sampled_from(MODES))
def test_every_shipped_template_adds_up_on_damaged_generations(case, seed, mode):
    sample, generation = case
    check_add_up_and_chunk_invariance(sample.template, sample.prefix, generation, seed, mode)


def test_every_shipped_template_is_covered_by_the_damage_test():
    from engine.template_files import list_templates

    used = {sample.template_name for sample in SHIPPED}
    assert {template.name for template in list_templates()} <= used


# -- close values stay linear in the text ------------------------------------------------------

# What a close may carry beyond the text: the constant strings of a transform ("function").
CLOSE_CONSTANT_CHARS = 16


def carried_chars(value) -> int:
    """The characters of the strings inside a close value (its text, not its JSON syntax)."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(carried_chars(key) + carried_chars(item) for key, item in value.items())
    if isinstance(value, list):
        return sum(carried_chars(item) for item in value)
    return 0


def check_close_values_are_linear(template, prefix, generation, seed, mode):
    implicit = load_template(template).implicit_field
    for chunks in ([generation], list(generation), random_chunks(generation, seed)):
        streamed = parse_events(template, prefix, chunks, mode)
        if streamed is None:
            continue
        closes = [event for event in streamed[1] if event["type"] == "region_close"]
        carried = sum(carried_chars(event["value"]) for event in closes if "value" in event)
        assert carried <= len(prefix) + len(generation) + CLOSE_CONSTANT_CHARS * len(closes), (
            chunks,
            closes,
        )
        if implicit is not None and implicit.concatenates_stretches:
            values = [e["value"] for e in closes if e["field"] == implicit.name and "value" in e]
            assert "".join(values) == streamed[0].get(implicit.name, ""), (chunks, values)


def concatenating_or_no_implicit_field(case) -> bool:
    implicit = load_template(case[0]).implicit_field
    return implicit is None or implicit.repeats or implicit.concatenates_stretches


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    case=template_and_generation(contents=("text", "text", "json", "int")).filter(
        concatenating_or_no_implicit_field
    ),
    seed=st.integers(0, 10**6),
    mode=st.sampled_from(MODES),
)
def test_close_values_carry_the_text_once_in_any_chunking(case, seed, mode):
    template, prefix, generation = case
    check_close_values_are_linear(template, prefix, generation, seed, mode)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=damaged_sample(), seed=st.integers(0, 10**6), mode=st.sampled_from(MODES))
def test_shipped_templates_close_values_carry_the_text_once(case, seed, mode):
    sample, generation = case
    check_close_values_are_linear(sample.template, sample.prefix, generation, seed, mode)


def test_many_stretches_close_with_their_own_text():
    # 200 stretches of content between tool calls: the closes carry each stretch once.
    template = {
        "start_anchor": "<S>",
        "fields": {
            "tool_calls": {"open": "<c>", "close": "</c>", "repeats": True, "content": "json"},
            "content": {},
        },
    }
    generation = (
        "".join(f'step {index}\n<c>{{"i": {index}}}</c>\n' for index in range(200)) + "done"
    )
    for mode in MODES:
        streamed = stream(template, list(generation), "", on_error=mode)
        values = [
            e["value"]
            for e in streamed.events
            if e["type"] == "region_close" and e["field"] == "content"
        ]
        assert values[:3] == ["step 0", "\n\nstep 1", "\n\nstep 2"]
        assert values[-1] == "\n\ndone"
        assert len(values) == 201
        assert (
            "".join(values)
            == streamed.message["content"]
            == "\n\n".join(f"step {i}" for i in range(200)) + "\n\ndone"
        )
        assert sum(map(len, values)) == len(streamed.message["content"]) == 1894
