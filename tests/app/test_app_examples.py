"""One record for a prompt, an output and its expected message, decided by one comparison: a case
gets the same verdict in Infer (the judge of inference's evidence) and in Tests; any test case
becomes an example with one click; an output recorded from a wrong parse is unverified until the
author confirms its message."""

from __future__ import annotations

import copy
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.chat_templates.evidence import Example, differing_keys, read_examples
from engine.chat_templates.judge import check_examples
from engine.template_files import load_template_file
from playground import handlers
from playground.authoring.test_cases import (
    as_examples,
    author_cases,
    matrix_cases,
    read_cases,
    run_cases,
    use_as_example,
)
from playground.catalog import template_text_of
from playground.parse.session import Session
from playground.parse.workspace import WorkspaceInputs

QWEN3 = load_template_file("qwen3").response_template
PROMPT = "<|im_start|>user\nWeather in Oslo?<|im_end|>\n<|im_start|>assistant\n"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
CALLING = (
    'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n'
    "</tool_call><|im_end|>"
)
# What qwen3 reads from CALLING.
READ = {
    "role": "assistant",
    "content": "Let me check.",
    "tool_calls": [
        {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}
    ],
}


def verdicts(case: dict) -> tuple[bool, bool]:
    """(Infer reads it right, Tests passes it) for one test case."""
    infer_reads_it = check_examples(QWEN3, read_examples(as_examples([case]))) == []
    tests_pass = run_cases(QWEN3, [case])[0].passed
    return infer_reads_it, tests_pass


def case_of(expected: dict) -> dict:
    return {
        "name": "mine",
        "source": "output",
        "prefix": PROMPT,
        "generation": CALLING,
        "expected": expected,
        "tools": TOOLS,
    }


def test_a_case_written_by_hand_gets_the_same_verdict_in_infer_and_in_tests():
    # No role, the content with the newline the model wrote, the arguments as a JSON string:
    # the same message. Tests once compared the dicts exactly and failed it while Infer read it.
    by_hand = {
        "content": "Let me check.\n",
        "tool_calls": [
            {
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
            }
        ],
    }
    assert verdicts(case_of(by_hand)) == (True, True)
    wrong_city = copy.deepcopy(READ)
    wrong_city["tool_calls"][0]["function"]["arguments"] = {"city": "Bergen"}
    assert verdicts(case_of(wrong_city)) == (False, False)
    [result] = run_cases(QWEN3, [case_of(wrong_city)])
    assert (
        '-          "city": "Bergen"' in result.diff and '+          "city": "Oslo"' in result.diff
    )


def _variant(draw) -> dict:
    expected = copy.deepcopy(READ)
    if draw(st.booleans()):
        del expected["role"]
    expected["content"] = draw(
        st.sampled_from(["Let me check.", " Let me check.\n", "Let me check!", "", None])
    )
    if draw(st.booleans()):
        expected["reasoning_content"] = draw(st.sampled_from(["", None, "Hmm."]))
    arguments = draw(
        st.sampled_from(
            [{"city": "Oslo"}, '{"city": "Oslo"}', {"city": "Oslo", "days": 1}, {"city": 1}]
        )
    )
    calls = draw(st.sampled_from(["one", "none", "empty", "renamed"]))
    if calls == "none":
        del expected["tool_calls"]
    elif calls == "empty":
        expected["tool_calls"] = []
    else:
        function = expected["tool_calls"][0]["function"]
        function["arguments"] = arguments
        if calls == "renamed":
            function["name"] = "get_time"
    return expected


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_every_expected_message_gets_one_verdict_in_infer_and_in_tests(data):
    expected = _variant(data.draw)
    infer_reads_it, tests_pass = verdicts(case_of(expected))
    assert infer_reads_it == tests_pass
    assert tests_pass == (differing_keys(expected, READ) == [])


def test_the_record_reads_back_what_it_writes():
    example = Example(0, PROMPT, CALLING, TOOLS, READ, "case", "mine")
    assert example.label == "mine" and Example(2, "", "x").label == "example 3"
    assert read_examples([example.to_dict()]) == [Example(0, PROMPT, CALLING, TOOLS, READ)]
    assert example.differences({**READ, "content": "Let me check.\n\n"}) == []
    assert example.differences({"role": "assistant", "content": "Let me check."}) == [
        "tool_calls: expected [('get_weather', '{\"city\": \"Oslo\"}')], got []"
    ]
    assert differing_keys({"content": "a", "x": 1}, {"reasoning_content": "b", "x": 2}) == [
        ("reasoning_content", "unexpected"),
        ("content", "missing"),
        ("x", "differs"),
    ]


# -- the author's loop on the page: any output an example in one click, unverified until confirmed


def _page(session: Session, generation: str, cases_text: str = "") -> dict:
    workspace = WorkspaceInputs(template_text_of(QWEN3), PROMPT, generation, json.dumps(TOOLS))
    handlers.parse(workspace, cases_text, session)
    return handlers.add_test_case(workspace, cases_text, session)


def test_an_output_from_a_clean_parse_is_an_example_with_its_message():
    session = Session()
    added = _page(session, CALLING)
    cases = json.loads(added["test_cases_text"])
    assert cases == [case_of(READ) | {"name": "your output 1"}]
    assert as_examples(cases) == [
        {"prefix": PROMPT, "output": CALLING, "tools": TOOLS, "expected": READ}
    ]
    assert "unverified" not in added["test_results"]
    assert "data-confirm" not in added["test_results"]


def test_an_output_from_a_wrong_parse_is_unverified_until_the_author_confirms_it():
    session = Session()
    # The call's JSON lacks a closing brace: the region fails and is kept as text.
    broken = CALLING.replace('"Oslo"}}', '"Oslo"}')
    added = _page(session, broken)
    [case] = json.loads(added["test_cases_text"])
    assert case["check"] == (
        "unverified: recorded from a parse with errors or warnings (The output does not parse: "
        "fields.tool_calls: json: Expecting ',' delimiter (line 2, column 54, offset 54): "
        '\'\\n{"name": "get_weather", "arguments": {"city": "O…); correct '
        "expected if needed, then Confirm"
    )
    panel = added["test_results"]
    assert '<span class="rt-case-unverified"' in panel and 'data-confirm="0"' in panel
    # Unverified: inference gets the output and its tools, not the message the wrong parse gave.
    assert as_examples([case]) == [{"prefix": PROMPT, "output": broken, "tools": TOOLS}]
    # The author corrects the message, then confirms it: inference gets it from then on.
    case["expected"] = {"role": "assistant", "content": "Let me check."}
    confirmed = handlers.tests_click(
        {"confirm": 0}, template_text_of(QWEN3), json.dumps([case]), session
    )
    [kept] = json.loads(confirmed["test_cases_text"])
    assert "check" not in kept and kept["expected"] == case["expected"]
    assert as_examples([kept])[0]["expected"] == case["expected"]
    assert "rt-case-unverified" not in confirmed["test_results"]
    assert session.test_cases_text == confirmed["test_cases_text"]
    # A click that names no case changes nothing.
    assert handlers.tests_click({"confirm": 7}, "", confirmed["test_cases_text"], session) == {}
    assert handlers.tests_click({"other": 0}, "", confirmed["test_cases_text"], session) == {}


def handlers_examples(cases_text: str) -> list[dict]:
    """The examples Infer sends for these test cases: the author's outputs."""
    return as_examples(author_cases(read_cases(cases_text)))


def test_a_matrix_row_or_a_sample_becomes_an_example_with_one_click():
    session = Session()
    row = case_of(READ) | {"name": "after-user/round-trip:tool-call", "source": "matrix"}
    sample = case_of(READ) | {"name": "qwen3/plain", "source": "sample", "generation": "Hi."}
    mine = case_of(READ) | {"name": "your output 1"}
    text = json.dumps([mine, row, sample])
    panel = handlers.run_tests(template_text_of(QWEN3), text, session)["test_results"]
    assert 'data-use="0"' not in panel and 'data-use="1"' in panel and 'data-use="2"' in panel
    # Only the author's outputs are sent to inference: the row and the sample are not, yet.
    assert [example["output"] for example in handlers_examples(text)] == [CALLING]
    clicked = handlers.tests_click({"use": 2}, template_text_of(QWEN3), text, session)
    cases = json.loads(clicked["test_cases_text"])
    assert [(case["name"], case["source"]) for case in cases] == [
        ("your output 1", "output"),
        ("qwen3/plain", "output"),
        ("after-user/round-trip:tool-call", "matrix"),
    ]
    assert (
        'data-use="2"' in clicked["test_results"] and 'data-use="1"' not in clicked["test_results"]
    )
    # Now the sample is one of the author's outputs: sent, with its verified message.
    assert handlers_examples(clicked["test_cases_text"])[1] == {
        "prefix": PROMPT,
        "output": "Hi.",
        "tools": TOOLS,
        "expected": READ,
    }
    # Clicked again on a case already the author's: nothing changes.
    assert handlers.tests_click({"use": 1}, "", clicked["test_cases_text"], session) == {}


def test_a_live_output_the_page_shows_no_parse_of_is_unverified():
    session = Session()
    _page(session, CALLING)
    session.live_output = {"prefix": PROMPT, "output": "Sunny.<|im_end|>", "tools": TOOLS}
    clicked = handlers.use_live_output(template_text_of(QWEN3), "", session)
    [case] = json.loads(clicked["test_cases_text"])
    assert (case["name"], case["expected"], case["check"]) == (
        "live output 1",
        {},
        "unverified: recorded from a parse with errors or warnings (no parse of this output is "
        "shown); correct expected if needed, then Confirm",
    )
    assert clicked["live_example_note"] == (
        "✔ Added to Tests as 'live output 1', one of your outputs: Infer (Start from a model) "
        "sends it as an example, the output and the tools it was given (confirm its message in "
        "Tests to send that too)."
    )


def test_a_matrix_row_made_an_example_is_listed_once_after_the_next_check():
    rows = [
        {
            "name": name,
            "renderable": True,
            "prompt": PROMPT,
            "generation": generation,
            "expected": READ,
            "tools": True,
        }
        for name, generation in (("with-call", CALLING), ("plain", "Hi.<|im_end|>"))
    ]
    cases = matrix_cases(rows, TOOLS)
    mine = author_cases(use_as_example(cases, 0))
    assert [case["name"] for case in mine] == ["with-call"]
    again = matrix_cases(rows, TOOLS, besides=mine)
    assert [(case["name"], case["source"]) for case in mine + again] == [
        ("with-call", "output"),
        ("plain", "matrix"),
    ]
