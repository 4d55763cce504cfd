"""Lenient recovery (`engine.recovery`) as properties, for any template and any output:

* lenient parsing never raises, and gives the same message and errors in one shot, in random
  chunks and one character at a time; its events add up to the message;
* every character is accounted for: each event's text is the stream's text at its offsets,
  and every stream offset lies in an event (a delimiter or a region's text) or in an error;
  a failed region's plan covers it exactly, piece after piece, delimiters included;
* strict results do not change: a lenient parse that reports nothing gives the strict message;
* no close of the template lands in the implicit field (`engine.strays`), in any chunking.
"""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from engine import load_template, message_from_events
from engine.authoring.samples import load_samples
from engine.authoring.stream_checks import random_chunks
from engine.recovery import plan_failed_region
from engine.strays import close_texts, is_markup
from tests.support.strategies import template_and_generation
from tests.support.stream_helpers import stream

SHIPPED = [sample for sample in load_samples() if sample.expected_error is None]
GRANITE = next(sample for sample in SHIPPED if sample.id == "granite-4/answer-non-ascii")
# What a slip leaves in a generation: JSON written past its end, stray braces, prose, tags.
SLIPS = [
    '{"a": 1}',
    '{"name": "f", "arguments": {}}',
    '"{\\"a\\": 1}"',
    "}",
    "]",
    "[",
    "Let me check.",
    "\n",
    "<parameter=a>",
    "</parameter>",
    "</function>",
    "<tool_call>",
    "</tool_call>",
]


@st.composite
def slipped_sample(draw):
    """A shipped sample's generation with slips written into it, maybe cut short."""
    sample = draw(st.sampled_from(SHIPPED))
    text = sample.generation
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(SLIPS)) + text[at:]
    if draw(st.booleans()):
        text = text[: draw(st.integers(0, len(text)))]
    return sample.template, sample.prefix, text, sample.tools


@st.composite
def random_case(draw):
    template, prefix, generation = draw(template_and_generation(("text", "json", "int")))
    extra = draw(st.lists(st.sampled_from(SLIPS), max_size=4))
    for piece in extra:
        at = draw(st.integers(0, len(generation)))
        generation = generation[:at] + piece + generation[at:]
    return template, prefix, generation, None


def kept(template, prefix, chunks, tools, **options):
    streamed = stream(template, chunks, prefix, on_error="keep", tools=tools, **options)
    errors = [(str(e), e.key, e.start, e.end, e.position) for e in streamed.parser.errors]
    return streamed, errors


def check_lenient(template, prefix, generation, tools, seed):
    whole, errors = kept(template, prefix, [generation], tools)
    assert message_from_events(whole.events, template) == whole.message
    for chunks in (list(generation), random_chunks(generation, seed)):
        streamed, streamed_errors = kept(template, prefix, chunks, tools)
        assert streamed.message == whole.message, chunks
        assert streamed_errors == errors, chunks
    check_accounted_for(template, prefix, generation, tools)
    check_strict_unchanged(template, prefix, generation, tools, whole.message, errors)
    check_no_close_in_content(template, whole.events)


def check_no_close_in_content(template, events):
    """No markup close text of any field (literal, or the end of a close pattern's alternative)
    is in a value the implicit field took from one stretch of the output (the message is the
    same in every chunking, checked above).

    Stretches, not the message: the message joins the implicit field's stretches on either side
    of a consumed delimiter, and a join can spell a close the model never wrote in one piece
    (``<`` + ``<tool_call>``, a failed region's open, + ``/tool_call>`` reads ``</tool_call>``).
    """
    loaded = load_template(template)
    implicit = loaded.implicit_field
    if implicit is None:
        return
    texts = [
        str(event["value"])
        for event in events
        if event["type"] == "region_close" and event["field"] == implicit.name and "value" in event
    ]
    # The implicit field's own close text is its text wherever its pattern does not match.
    closes = {
        text
        for spec in loaded.fields.values()
        if not spec.implicit
        for text in close_texts(spec.close)
        if is_markup(text)
    }
    assert [c for c in closes if any(c in text for text in texts)] == [], texts


def check_accounted_for(template, prefix, generation, tools):
    """Each event's text is the stream's text at its offsets; every offset of the stream lies
    in an event, a delimiter or an error (with an implicit field, which receives all
    unclaimed text)."""
    streamed, _ = kept(template, prefix, [generation], tools, positions=True, record_spans=True)
    parser = streamed.parser
    text = prefix[parser.prefix_cut :] + generation
    covered = [False] * len(text)
    for start, end, kind, *_ in parser.spans:
        if kind in ("open", "close"):
            for offset in range(start, end):
                covered[offset] = True
    for event in streamed.events:
        if "start" not in event:
            continue
        if event["type"] == "region_chunk":
            assert text[event["start"] : event["end"]] == event["text"], event
        for offset in range(event["start"], event["end"]):
            covered[offset] = True
    for error in parser.errors:
        if error.start is not None:
            for offset in range(error.start, error.end):
                covered[offset] = True
    if load_template(template).implicit_field is not None:
        assert all(covered), [i for i, seen in enumerate(covered) if not seen][:10]


def check_strict_unchanged(template, prefix, generation, tools, message, errors):
    """A lenient parse that reports nothing is the strict parse."""
    if errors:
        return
    strict = stream(template, [generation], prefix, tools=tools)
    assert strict.message == message


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=slipped_sample(), seed=st.integers(0, 10**6))
@example(  # a failed region's open consumed between "<" and "/tool_call>": no close in a stretch
    case=(
        GRANITE.template,
        GRANITE.prefix,
        "<<tool_call>/tool_call>" + GRANITE.generation,
        GRANITE.tools,
    ),
    seed=0,
)
def test_shipped_templates_on_slipped_outputs(case, seed):
    check_lenient(*case, seed)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=random_case(), seed=st.integers(0, 10**6))
@example(  # the implicit field's own close text, where its lookbehind does not match, is text
    case=(
        {
            "defaults": {"role": "assistant"},
            "start_anchor": "<S>",
            "fields": {
                "reasoning_content": {"open": "<a>", "close": "<a>", "content": "json"},
                "tool_calls": {
                    "close_pattern": "(?<=\\})\\s*</b>",
                    "content_args": {"strip": False},
                },
            },
        },
        "</b>",
        "",
        None,
    ),
    seed=0,
)
def test_any_template_on_any_output(case, seed):
    check_lenient(*case, seed)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sample=st.sampled_from(SHIPPED),
    pieces=st.lists(st.sampled_from(SLIPS), max_size=6),
    data=st.data(),
)
def test_a_failed_regions_plan_covers_it_piece_after_piece(sample, pieces, data):
    template = load_template(sample.template)
    explicit = [spec for spec in template.fields.values() if not spec.implicit]
    field = data.draw(st.sampled_from(explicit))
    open_text = data.draw(st.sampled_from(["", "<open>"]))
    close_text = data.draw(st.sampled_from(["", "</close>"]))
    body = "".join(pieces)
    plan = plan_failed_region(
        template, field, open_text, body, close_text, 5, 5 + len(open_text), {}, None
    )
    at, written = 5, ""
    for piece in plan.pieces:
        assert piece.start == at, plan.pieces
        if piece.kind == "region":
            assert piece.body_start - piece.start == len(piece.open_text)
            assert piece.end - piece.body_start == len(piece.text)
            written += piece.open_text + piece.text
        else:
            assert piece.end - piece.start == len(piece.text)
            written += piece.text
        at = piece.end
    assert written == open_text + body + close_text
    assert at == 5 + len(written)
    assert plan.notes
