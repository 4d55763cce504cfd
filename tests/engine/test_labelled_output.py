"""One record for a prompt, an output and the expected message, with one comparison: the
author's examples, the shipped samples and the conformance matrix's rows are all
`engine.labelled_output.LabelledOutput`, and a row's verdict is its record's `differences`."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.authoring.samples import load_samples
from engine.chat_templates.conformance import check_conformance
from engine.chat_templates.evidence import Example, read_examples
from engine.labelled_output import (
    LabelledOutput,
    message_differences,
    parse_labelled,
    read_labelled_outputs,
)
from engine.template_files import load_template_file
from tests.support.paths import CHAT_TEMPLATES, MANIFEST, needs_shared

SAMPLES = [sample for sample in load_samples() if sample.expected is not None]


def test_examples_samples_and_rows_are_one_record():
    example = read_examples([{"prefix": "p", "output": "o", "expected": {"content": "o"}}])[0]
    assert isinstance(example, Example) and isinstance(example, LabelledOutput)
    sample = SAMPLES[0]
    assert type(sample.labelled) is LabelledOutput
    assert (sample.labelled.label, sample.labelled.prefix, sample.labelled.output) == (
        sample.id,
        sample.prefix,
        sample.generation,
    )


@pytest.mark.parametrize("sample", SAMPLES, ids=[sample.id for sample in SAMPLES])
def test_every_shipped_sample_reads_to_its_message_by_the_one_comparison(sample):
    """Strictly, as `check` parses samples by default."""
    message, errors = parse_labelled(sample.template, sample.labelled, on_error="raise")
    assert errors == []
    assert sample.labelled.differences(message) == []


def test_a_stray_close_in_content_is_kept_strictly_and_consumed_leniently():
    """The judge of inference reads leniently: a close with no open region is consumed there,
    while the strict parse `check` uses keeps it as text (the sample's expected message)."""
    sample = next(
        each
        for each in SAMPLES
        if each.id == "deepseek-v3.1/thinking-off-content-mentions-think-close"
    )
    lenient, errors = parse_labelled(sample.template, sample.labelled)
    assert sample.labelled.differences(lenient) == [
        "content: expected 'Write </think> right after the reasoning, then the answer.', got "
        "'Write  right after the reasoning, then the answer.'"
    ]
    assert len(errors) == 1 and "where no reasoning_content region is open: consumed" in errors[0]


@needs_shared
@pytest.mark.parametrize(
    ("chat_template", "template", "counts"),
    [("qwen3.jinja", "qwen3", (40, 0)), ("qwen3.jinja", "hermes-2-pro", (5, 35))],
)
def test_a_matrix_row_is_a_labelled_output_judged_by_its_differences(
    chat_template, template, counts
):
    """Parsing a row's record gives the row's message again, and the row passed exactly when
    its record finds no difference."""
    item = next(entry for entry in MANIFEST if entry["file"] == chat_template)
    response_template = load_template_file(template).response_template
    report = check_conformance(
        response_template,
        (CHAT_TEMPLATES / chat_template).read_text(encoding="utf-8"),
        bos_token=item["bos_token"],
        eos_token=item["eos_token"],
    )
    rows = [row for row in report.situations if row.renderable]
    assert (sum(row.passed for row in rows), sum(not row.passed for row in rows)) == counts
    for row in rows:
        record = row.labelled
        assert (record.label, record.prefix, record.output) == (
            row.name,
            row.prompt,
            row.generation,
        )
        assert parse_labelled(response_template, record)[0] == row.got
        assert row.passed == (record.differences(row.got) == [])


def test_a_record_without_an_expected_message_refuses_to_compare():
    record = LabelledOutput(0, "p", "o", kind="output")
    with pytest.raises(ValueError, match="^output 1: no expected message to compare with$"):
        record.differences({"content": "o"})


_TEXT = st.text(alphabet="ab <>\n", max_size=12)
_MESSAGE = st.fixed_dictionaries(
    {},
    optional={
        "content": st.one_of(st.none(), _TEXT),
        "reasoning_content": st.one_of(st.none(), _TEXT),
        "tool_calls": st.lists(
            st.fixed_dictionaries(
                {
                    "function": st.fixed_dictionaries(
                        {
                            "name": st.sampled_from(["f", "g"]),
                            "arguments": st.dictionaries(
                                st.sampled_from(["x", "y"]), st.integers(0, 3)
                            ),
                        }
                    )
                }
            ),
            max_size=2,
        ),
    },
)


@given(
    prefix=_TEXT,
    output=_TEXT,
    expected=st.one_of(st.none(), _MESSAGE),
    got=_MESSAGE,
    width=st.integers(8, 40),
)
def test_a_record_survives_its_file_line_and_compares_the_same_at_any_width(
    prefix, output, expected, got, width
):
    record = LabelledOutput(0, prefix, output, None, expected)
    assert read_labelled_outputs([record.to_dict()]) == [record]
    if expected is not None:
        full, short = record.differences(got), record.differences(got, width)
        assert full == message_differences(expected, got)
        assert [line.split(":")[0] for line in short] == [line.split(":")[0] for line in full]
        assert record.differences(expected) == []


def test_a_name_goes_out_with_the_row_and_comes_back_as_the_label():
    """A row's name survives `to_dict(with_name=True)` and `read_labelled_outputs`, so what
    learns from the rows the author's loop gives it names each as the loop does; plain
    `to_dict` leaves it out (the page's cases are numbered as examples)."""
    row = {"prefix": "p", "output": "o", "name": "output 2"}
    (read,) = read_labelled_outputs([row], "example")
    assert (read.label, read.to_dict(with_name=True)) == ("output 2", row)
    assert read.to_dict() == {"prefix": "p", "output": "o"}
    (unnamed,) = read_labelled_outputs([{"prefix": "p", "output": "o"}])
    assert (unnamed.label, unnamed.to_dict(with_name=True)) == (
        "example 1",
        {"prefix": "p", "output": "o"},
    )


@pytest.mark.parametrize(
    ("places", "said"),
    [
        (None, "outputs[1].prefix: a string is required"),
        (["out.jsonl:1", "out.jsonl:4"], "out.jsonl:4: prefix: a string is required"),
    ],
    ids=["by-position", "by-file-and-line"],
)
def test_a_malformed_row_is_named_where_it_was_read(places, said):
    rows = [{"prefix": "p", "output": "o"}, {"output": "o"}]
    with pytest.raises(ValueError) as raised:
        read_labelled_outputs(rows, "output", places=places)
    assert str(raised.value) == said
