"""Every sample parses to its expected message, in one shot and streamed.

Streaming is checked one character at a time, with the case's explicit chunks
(token boundaries) when it has them, and with 20 seeded random chunkings. Each
must give the one-shot message, and each region's concatenated chunk text must
equal that region's body in the one-shot parse (streaming equals one-shot); and
the region_close events must add up to the message.
"""

import pytest
from transformers.utils.chat_parsing import parse_response as reference_parse_response

from engine import load_template, message_from_events, parse_response
from engine.authoring.samples import SAMPLES_DIR, load_sample_file_metadata, load_samples
from tests.support.stream_helpers import random_cuts, stream_events

SAMPLES = load_samples()
RANDOM_CHUNKINGS = 20
# What every family must show (or explain in the sample file's "uncovered").
TOPICS = {
    "reasoning",
    "tool_call",
    "parallel_tool_calls",
    "content_before_tool_call",
    "multi_turn",
    "truncated",
    "non_ascii",
    "nested_arguments",
    "typed_arguments",
}


def _stream(sample, chunks):
    """Feed `chunks`; return (message, regions) where regions is a list of
    [field, concatenated chunk text, closed value]."""
    message, events = stream_events(sample.template, chunks, sample.prefix, tools=sample.tools)
    assert message_from_events(events, sample.template) == message, (
        "the region_close events do not add up to the message"
    )
    return message, _regions(events)


def _regions(events):
    regions, open_region = [], None
    for event in events:
        if event["type"] == "region_open":
            assert open_region is None, f"{event} while {open_region[0]} is open"
            open_region = [event["field"], "", None]
        elif event["type"] == "region_chunk":
            assert open_region is not None and event["field"] == open_region[0], event
            assert event["text"], "empty region_chunk"
            open_region[1] += event["text"]
        elif event["type"] == "region_close":
            assert open_region is not None and event["field"] == open_region[0], event
            open_region[2] = event.get("value")
            regions.append(open_region)
            open_region = None
    assert open_region is None, f"region {open_region[0]} never closed"
    return regions


def _chunkings(sample):
    yield "one-character", list(sample.generation)
    if sample.chunks is not None:
        yield "explicit", list(sample.chunks)
    for seed in range(RANDOM_CHUNKINGS):
        yield f"random-{seed}", random_cuts(sample.generation, seed)


VALUE_SAMPLES = [s for s in SAMPLES if s.expected_error is None]
ERROR_SAMPLES = [s for s in SAMPLES if s.expected_error is not None]


def test_samples_exist():
    assert len({s.family for s in SAMPLES}) >= 21


@pytest.mark.parametrize("sample", VALUE_SAMPLES, ids=lambda s: s.id)
def test_one_shot(sample):
    message = parse_response(
        sample.generation, sample.template, prefix=sample.prefix, tools=sample.tools
    )
    assert message == sample.expected


@pytest.mark.parametrize("sample", VALUE_SAMPLES, ids=lambda s: s.id)
def test_streaming_equals_one_shot(sample):
    whole_message, whole_regions = _stream(sample, [sample.generation])
    assert whole_message == sample.expected
    implicit = load_template(sample.template).implicit_field
    for region_field, body, value in whole_regions:
        field = sample.template["fields"][region_field]
        if implicit is not None and region_field == implicit.name and not implicit.repeats:
            continue  # its closes carry the whole value so far, over every stretch
        if (
            field.get("content", "text") == "text"
            and "transform" not in field
            and isinstance(value, str)
        ):
            stripped = field.get("content_args", {}).get("strip", True)
            assert value == (body.strip() if stripped else body), (
                f"{region_field}: chunk text is not the region body"
            )
    for label, chunks in _chunkings(sample):
        message, regions = _stream(sample, chunks)
        assert message == sample.expected, f"chunking {label}: {chunks!r}"
        assert regions == whole_regions, f"chunking {label}: region bodies differ from one-shot"


@pytest.mark.parametrize("sample", ERROR_SAMPLES, ids=lambda s: s.id)
def test_expected_error(sample):
    with pytest.raises(Exception) as one_shot:
        parse_response(sample.generation, sample.template, prefix=sample.prefix, tools=sample.tools)
    assert sample.expected_error in str(one_shot.value)
    with pytest.raises(Exception) as streamed:
        _stream(sample, list(sample.generation))
    assert sample.expected_error in str(streamed.value)


FAMILIES = sorted({s.family for s in SAMPLES})


@pytest.mark.parametrize("family", FAMILIES)
def test_family_coverage(family):
    cases = [s for s in SAMPLES if s.family == family]
    assert len(cases) >= 4, f"{family}: {len(cases)} cases, want at least 4"
    covered = set().union(*(s.covers for s in cases))
    assert not (unknown := covered - TOPICS), f"unknown topics {unknown}"
    uncovered = load_sample_file_metadata(SAMPLES_DIR / f"{family}.json").get("uncovered", {})
    assert not (both := covered & set(uncovered)), (
        f"{sorted(both)} both covered and marked uncovered"
    )
    missing = TOPICS - covered - set(uncovered)
    assert not missing, (
        f"{family} does not cover {sorted(missing)} (cover them or explain under 'uncovered')"
    )


@pytest.mark.parametrize("sample", [s for s in VALUE_SAMPLES if not s.needs], ids=lambda s: s.id)
def test_reference_gives_the_same_message(sample):
    """transformers' reference agrees on every sample except those that need what it does not do
    (the implicit field keeping every stretch, decode_json_strings)."""
    message = reference_parse_response(
        sample.generation, sample.template, prefix=sample.prefix, tools=sample.tools
    )
    assert message == sample.expected
