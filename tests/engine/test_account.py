"""The parse's account (`parser.warnings`): every slip that leaves text where it does not belong
says so, in every chunking, and a correct output says nothing."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import ResponseParser
from engine.account import WARNING_CODES, ParseWarning, Vocabulary, literal_runs, near_misses
from engine.authoring.samples import load_samples
from engine.template import load_template
from engine.template_files import load_template_file

MINIMAX = load_template_file("minimax-m2").response_template
QWEN3 = load_template_file("qwen3").response_template
QWEN3_CODER = load_template_file("qwen3-coder").response_template
GLM = load_template_file("glm-4.5").response_template
MINIMAX_PREFIX = "]~b]ai\n<think>\n"
WEATHER = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            },
        },
    }
]


def minimax_output(first="</parameter>", second="</parameter>", section="</minimax:tool_call>"):
    return (
        'Two cities.\n</think>\n\n<minimax:tool_call>\n<invoke name="get_weather">\n'
        f'<parameter name="city">Paris{first}\n<parameter name="days">3{second}\n</invoke>\n'
        + section
    )


def parsed(template, prefix, output, tools=None, chunks=None):
    """(message, warnings as (code, start, end)) of `output` fed as `chunks` (default: one shot)."""
    parser = ResponseParser(template, prefix, tools=tools)
    for chunk in chunks or []:
        parser.feed(chunk)
    message, _ = parser.finalize("" if chunks else output)
    return message, [(w.code, w.start, w.end) for w in parser.warnings]


def test_a_correct_output_is_accounted_for_with_no_warning():
    message, warnings = parsed(MINIMAX, MINIMAX_PREFIX, minimax_output(), WEATHER)
    assert message["tool_calls"][0]["function"]["arguments"] == {"city": "Paris", "days": 3}
    assert warnings == []


def test_a_misspelt_section_close_left_in_content_is_a_near_miss():
    message, warnings = parsed(
        MINIMAX, MINIMAX_PREFIX, minimax_output(section="</minimax:tool_cal>")
    )
    assert message["content"] == "</minimax:tool_cal>"
    assert warnings == [("near-miss", 166, 185)]
    parser = ResponseParser(MINIMAX, MINIMAX_PREFIX)
    parser.finalize(minimax_output(section="</minimax:tool_cal>"))
    assert parser.warnings[0] == ParseWarning(
        "near-miss",
        "'</minimax:tool_cal>' at stream offset 166 in the text is a near miss of "
        "'</minimax:tool_call>' (fields.content.close): it matched nothing, so it stayed in content",
        "content",
        166,
        185,
    )


def test_without_the_account_the_message_is_the_same_and_nothing_is_warned():
    """`account=False` (what `parse_response` passes: it returns the message only) skips the
    checks; the message and the errors do not depend on them."""
    from engine import parse_response

    output = minimax_output(first="</paramter>")
    for on_error in ("raise", "keep"):
        checked = ResponseParser(MINIMAX, MINIMAX_PREFIX, tools=WEATHER, on_error=on_error)
        unchecked = ResponseParser(
            MINIMAX, MINIMAX_PREFIX, tools=WEATHER, on_error=on_error, account=False
        )
        assert checked.finalize(output) == unchecked.finalize(output)
        assert [w.code for w in checked.warnings] != [] and unchecked.warnings == []
        assert list(map(str, checked.errors)) == list(map(str, unchecked.errors))
    message, _ = parsed(MINIMAX, MINIMAX_PREFIX, output, WEATHER)
    assert parse_response(output, MINIMAX, prefix=MINIMAX_PREFIX, tools=WEATHER) == message


def test_a_misspelt_first_parameter_close_swallowing_the_next_one_is_named_twice():
    message, warnings = parsed(MINIMAX, MINIMAX_PREFIX, minimax_output(first="</paramter>"))
    assert message["tool_calls"][0]["function"]["arguments"] == {
        "city": 'Paris</paramter>\n<parameter name="days">3'
    }
    assert warnings == [("near-miss", 106, 117), ("delimiter-in-value", 78, 95)]


def test_a_misspelt_second_parameter_close_dropping_an_argument_is_text_not_read():
    message, warnings = parsed(MINIMAX, MINIMAX_PREFIX, minimax_output(second="</paramter>"))
    assert message["tool_calls"][0]["function"]["arguments"] == {"city": "Paris"}
    assert warnings == [("near-miss", 143, 154), ("text-not-read", 119, 155)]


def test_a_tag_without_its_close_or_a_value_holding_its_own_close_is_never_silent():
    unclosed = "<tool_call>\n<function=f>\n<parameter=a>\nx\n</function>\n</tool_call>"
    message, warnings = parsed(QWEN3_CODER, "", unclosed)
    assert message["tool_calls"][0]["function"]["arguments"] == {}
    assert warnings == [("arguments-empty", 25, 53)]
    swallowing = (
        "<tool_call>\n<function=f>\n<parameter=a>\nx\n<parameter=b>\ny\n</parameter>\n"
        "</function>\n</tool_call>"
    )
    message, warnings = parsed(QWEN3_CODER, "", swallowing)
    assert message["tool_calls"][0]["function"]["arguments"] == {"a": "x\n<parameter=b>\ny"}
    assert warnings == [("delimiter-in-value", 25, 36)]
    own_close = (
        "<tool_call>\n<function=f>\n<parameter=a>\nsee </parameter> here\n</parameter>\n"
        "</function>\n</tool_call>"
    )
    message, warnings = parsed(QWEN3_CODER, "", own_close)
    assert message["tool_calls"][0]["function"]["arguments"] == {"a": "see "}
    assert warnings == [("text-not-read", 61, 86)]


def test_a_call_name_that_is_not_a_name_or_not_a_tool_is_never_passed_on_silently():
    json_in_tags = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
    message, warnings = parsed(GLM, "", json_in_tags, WEATHER)
    assert message["tool_calls"][0]["function"]["name"] == '{"name":'
    assert [code for code, _, _ in warnings] == ["call-name-invalid", "arguments-empty"]
    unknown = '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>'
    message, warnings = parsed(QWEN3, "", unknown, WEATHER)
    assert warnings == [("call-name-unknown", 0, 62)]
    assert parsed(QWEN3, "", unknown)[1] == []  # no tools given: any name is a tool's


def test_a_declared_tool_with_its_parameters_in_content_is_a_call_not_read():
    block = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    message, warnings = parsed(QWEN3_CODER, "", block, WEATHER)
    assert message == {"role": "assistant", "content": block}
    assert warnings == [("call-in-content", 22, 33)]
    assert parsed(QWEN3_CODER, "", "The get_weather tool is slow today.", WEATHER)[1] == []


def test_reasoning_a_call_ended_whose_own_close_comes_later_is_named():
    draft = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    output = f"Draft: {draft}\nok.\n</think>\n\n{draft}"
    # A template that ends the reasoning at any call opener ends it at the draft: the same call
    # twice, and the reasoning's close in content.
    first_call_ends = json.loads(json.dumps(QWEN3))
    first_call_ends["fields"]["reasoning_content"]["close_pattern"] = (
        "</think>|(?=<tool_call>\\s*\\{)"
    )
    message, warnings = parsed(first_call_ends, "<|im_start|>assistant\n<think>\n", output)
    assert len(message["tool_calls"]) == 2 and message["content"] == "ok.\n</think>"
    assert warnings == [("call-in-region", 100, 108)]
    # A reasoning its own close ends keeps the draft as its text: the right reading, no warning.
    plain_close = json.loads(json.dumps(QWEN3))
    plain_close["fields"]["reasoning_content"]["close"] = "</think>"
    del plain_close["fields"]["reasoning_content"]["close_pattern"]
    message, warnings = parsed(plain_close, "<|im_start|>assistant\n<think>\n", output)
    assert len(message["tool_calls"]) == 1 and warnings == []


def test_a_region_the_end_of_the_stream_ended_after_swallowing_a_delimiter_is_named():
    output = 'Thinking.\n<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>'
    plain_close = json.loads(json.dumps(QWEN3))
    plain_close["fields"]["reasoning_content"]["close"] = "</think>"
    del plain_close["fields"]["reasoning_content"]["close_pattern"]
    _, warnings = parsed(plain_close, "<|im_start|>assistant\n<think>\n", output)
    assert warnings == [("region-unclosed", 18, 29)]
    # Cut by the end alone (a stop that stripped the close) is no warning.
    assert parsed(QWEN3, "", '<tool_call>\n{"name": "f", "arguments": {}}')[1] == []


def test_a_nested_value_whose_markers_stayed_raw_is_markup_in_value():
    template = {
        "start_anchor": "<|assistant|>",
        "fields": {
            "tool_calls": {
                "open_pattern": '<call name="(?P<name>[^"]+)">',
                "close": "</call>",
                "repeats": True,
                "content": "xml-inline",
                "content_args": {"tag_pattern": r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>"},
                "transform": {
                    "type": "function",
                    "function": {"name": "{name}", "arguments": "{content}"},
                },
            },
            "content": {},
        },
    }
    output = '<call name="create_event"><title>Lunch</title><details><where>Paris</where></details></call>'
    message, warnings = parsed(template, "", output)
    assert message["tool_calls"][0]["function"]["arguments"]["details"] == "<where>Paris</where>"
    assert warnings == [("markup-in-value", 55, 75)]


def test_a_close_is_never_a_near_miss_of_its_own_open_and_a_transposition_is_one():
    vocabulary = Vocabulary(load_template(QWEN3))
    assert near_misses(vocabulary, "a\n</tool_call> b <tool_call>", None) == []
    [miss] = near_misses(vocabulary, "Hmm.\n</thnik>\n\nHi", None)
    assert (miss.text, miss.word.text, miss.start) == ("</thnik>", "</think>", 5)


def test_the_vocabulary_is_read_from_the_compiled_template():
    assert literal_runs(load_template(MINIMAX).fields["tool_calls"].content_args["_tag_re"]) == [
        '<parameter name="',
        '">',
        "</parameter>",
    ]
    texts = sorted(Vocabulary(load_template(MINIMAX)).texts)
    assert texts == [
        "</invoke>",
        "</minimax:tool_call>",
        "</parameter>",
        "</think>",
        '<invoke name="',
        "<minimax:tool_call>",
        '<parameter name="',
        "<think>",
        "[e~[",
        "]~b]ai",
    ]


# Every shipped sample's expected message is a correct output: the account closes on each.
# The field-reports file records misparses of the reference on purpose (its cases say which
# warning the trace gives), so it is not one.
CORRECT = [s for s in load_samples() if s.expected is not None and s.family != "field-reports"]


@pytest.mark.parametrize("sample", CORRECT, ids=lambda s: f"{s.family}/{s.name}")
def test_no_shipped_sample_gives_a_warning(sample):
    parser = ResponseParser(sample.template, sample.prefix, tools=sample.tools)
    parser.finalize(sample.generation)
    assert parser.warnings == []


SLIPS = [
    (MINIMAX, MINIMAX_PREFIX, minimax_output(section="</minimax:tool_cal>"), WEATHER),
    (MINIMAX, MINIMAX_PREFIX, minimax_output(first="</paramter>"), WEATHER),
    (MINIMAX, MINIMAX_PREFIX, minimax_output(second="</paramter>"), None),
    (
        QWEN3,
        "<|im_start|>assistant\n<think>\n",
        'Draft <tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>\n</think>\n\n<tool_call>\n'
        '{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n</thnik>',
        WEATHER,
    ),
    (
        GLM,
        "",
        '<tool_call>{"name": "get_weather", "arguments": {}}</tool_call> get_weather city',
        WEATHER,
    ),
]


@settings(max_examples=60, deadline=None)
@given(data=st.data(), slip=st.sampled_from(SLIPS))
def test_the_warnings_are_the_same_in_every_chunking(data, slip):
    template, prefix, output, tools = slip
    whole = ResponseParser(template, prefix, tools=tools)
    whole.finalize(output)
    assert whole.warnings  # each slip is named
    assert {w.code for w in whole.warnings} <= set(WARNING_CODES)
    cuts = sorted(
        data.draw(st.sets(st.integers(min_value=1, max_value=len(output) - 1), max_size=40))
    )
    chunks = [output[a:b] for a, b in zip([0, *cuts], [*cuts, len(output)])]
    for pieces in (chunks, list(output)):
        streamed = ResponseParser(template, prefix, tools=tools)
        for piece in pieces:
            streamed.feed(piece)
        streamed.finalize()
        assert streamed.warnings == whole.warnings


def test_the_trace_the_openai_view_and_batch_carry_the_warnings():
    from engine import openai_view, trace
    from engine.batch.columns import parse_batch

    output = minimax_output(second="</paramter>")
    traced = trace(output, MINIMAX, prefix=MINIMAX_PREFIX)
    assert [(w.code, w.source, w.start, w.end) for w in traced.warnings] == [
        ("near-miss", "generation", 135, 146),
        ("text-not-read", "generation", 111, 147),
    ]
    assert traced.warnings[0].message.startswith(
        "'</paramter>' at generation offset 135 in the tool_calls region is a near miss of "
        "'</parameter>' (fields.tool_calls.content_args.tag_pattern)"
    )
    view = openai_view(output, MINIMAX, prefix=MINIMAX_PREFIX)
    assert [w.code for w in view.warnings] == ["near-miss", "text-not-read"]
    assert view.to_dict()["warnings"][1]["start"] == 119
    columns = parse_batch(
        {"prefix": [MINIMAX_PREFIX] * 2, "output": [minimax_output(), output]},
        MINIMAX,
        warnings=True,
    )
    assert columns["warnings"][0] is None
    assert [line.split(":")[0] for line in columns["warnings"][1].split("\n")] == [
        "near-miss",
        "text-not-read",
    ]


def test_a_batch_run_counts_the_rows_with_a_warning(tmp_path):
    import os
    import subprocess
    import sys

    from tests.support.paths import ROOT

    rows = [
        {"prefix": MINIMAX_PREFIX, "output": minimax_output()},
        {"prefix": MINIMAX_PREFIX, "output": minimax_output(second="</paramter>")},
        {"prefix": MINIMAX_PREFIX, "output": minimax_output(section="</minimax:tool_cal>")},
    ]
    source, target = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "engine",
            "batch",
            "minimax-m2",
            str(source),
            "--output",
            str(target),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TQDM_DISABLE": "1"},
    )
    assert done.returncode == 0, done.stderr
    said = done.stdout + done.stderr
    assert "2 rows with warnings (text the parse probably put where it does not belong" in said


def _near_misses_tried_everywhere(vocabulary: Vocabulary, text: str) -> list[tuple]:
    """The near misses `near_misses` must find, worked out the plain way: every place each
    piece of each word occurs (found by a step per character), every start within the word's
    edits of it, each tried with the word's fuzzy pattern; then one per place as it keeps them."""
    best: dict[int, tuple] = {}
    for near in vocabulary.near:
        target, edits = near.word.text, near.edits
        for scan in near.scans:
            for at in range(len(text)):
                if not text.startswith(scan.piece, at):
                    continue
                for start in range(max(0, at - scan.offset - edits), at - scan.offset + edits + 1):
                    if start >= len(text) or text[start] != target[0]:
                        continue
                    match = near.fuzzy.match(text, start, start + len(target) + edits)
                    if match is None:
                        continue
                    got = match.group()
                    used = sum(match.fuzzy_counts) if match.fuzzy_counts != (0, 0, 0) else 1
                    if (
                        got == target
                        or got[-1] != target[-1]
                        or len(got) < len(target) - edits
                        or used > edits
                    ):
                        continue
                    rank = (used, -len(target))
                    if start not in best or rank < best[start][0]:
                        best[start] = (rank, (target, start, match.end(), got))
    kept: list[tuple] = []
    for start in sorted(best):
        miss = best[start][1]
        if miss[3] in vocabulary.texts or vocabulary.exact_at(text, start):
            continue
        if not kept or start >= kept[-1][2]:
            kept.append(miss)
    return kept


_SLIPPED_WORDS = ["</parameter>", "<parameter=", "<tool_call>", "</tool_call>", "<|im_end|>"]


@settings(max_examples=200, deadline=None)
@given(
    pieces=st.lists(
        st.tuples(
            st.sampled_from(_SLIPPED_WORDS),
            # (where, what): "" drops the character there, "+x" inserts an x, others replace it
            st.lists(
                st.tuples(st.integers(0, 11), st.sampled_from(["", "+x", "<", ">", "/", "x"]))
            ),
            st.sampled_from(["", " ", "\n", "a<", ">>", "é"]),
        ),
        max_size=6,
    )
)
def test_near_misses_are_found_wherever_a_piece_of_the_word_is(pieces):
    # words with a few characters replaced, dropped or inserted: the scans (which test where
    # the word's last character may follow a piece before any Python step) find what trying
    # every place finds
    vocabulary = Vocabulary(load_template(QWEN3_CODER))
    text = ""
    for word, edits, after in pieces:
        for at, character in edits:
            if not word:  # every character dropped: nothing left to edit
                break
            at %= len(word)
            if character.startswith("+"):
                word = word[:at] + character[1:] + word[at:]
            else:
                word = word[:at] + character + word[at + 1 :]
        text += word + after
    found = [(m.word.text, m.start, m.end, m.text) for m in near_misses(vocabulary, text, None)]
    assert found == _near_misses_tried_everywhere(vocabulary, text)
