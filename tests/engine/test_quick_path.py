"""The parser's quick path (`ResponseParser.feed` without a scan) must give exactly the events of a full scan.

Two parsers scan every chunk: one made with `quick_path=False`, and one with
`positions=True` (the quick path is only taken when events carry no positions),
whose events, with `start`/`end` removed, are the reference too.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import ResponseParseError, ResponseParser, load_template, parse_response
from engine.authoring.samples import load_samples
from engine.authoring.stream_checks import random_chunks
from tests.support.strategies import template_and_generation
from tests.support.workloads import WORKLOADS, make_case, token_chunks

SAMPLES = [sample for sample in load_samples() if sample.expected is not None]


def events_of(template, prefix, chunks, *, scan_every_chunk: bool, tools=None, quick_path=True):
    """(message, events, offsets) or (None, error type name); `scan_every_chunk` turns the quick path off
    by asking for positions, `quick_path=False` by the switch.

    `offsets` holds `parser.offset` and `parser.held_text` after each chunk.
    """
    try:
        parser = ResponseParser(
            template, prefix=prefix, tools=tools, positions=scan_every_chunk, quick_path=quick_path
        )
        events = list(parser.initial_events)
        offsets = []
        for chunk in chunks:
            events += parser.feed(chunk)
            offsets.append((parser.offset, parser.held_text))
        message, final = parser.finalize()
    except ValueError as error:
        return None, type(error).__name__
    events += final
    if scan_every_chunk:
        events = [
            {key: value for key, value in event.items() if key not in ("start", "end")}
            for event in events
        ]
    return message, events, offsets


def assert_same_as_full_scan(template, prefix, chunks, tools=None):
    quick = events_of(template, prefix, chunks, scan_every_chunk=False, tools=tools)
    full = events_of(template, prefix, chunks, scan_every_chunk=True, tools=tools)
    assert quick == full
    assert quick == events_of(
        template, prefix, chunks, scan_every_chunk=False, tools=tools, quick_path=False
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=template_and_generation(), seed=st.integers(0, 10**6))
def test_quick_path_gives_the_events_of_a_full_scan(case, seed):
    template, prefix, generation = case
    for chunks in (
        list(generation),
        random_chunks(generation, seed),
        random_chunks(generation, seed, 3),
    ):
        assert_same_as_full_scan(template, prefix, chunks)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=template_and_generation(), cut=st.integers(0, 10**6))
def test_quick_hold_answers_like_the_quick_search(case, cut):
    template, _, generation = case
    loaded = load_template(template)
    states = [loaded.watch_outside, *loaded.watch_inside.values()]
    texts = [generation[start:] for start in range(len(generation))] + [
        generation[: cut % (len(generation) + 1)] or "x"
    ]
    for quick in (state.quick for state in states if state.quick is not None):
        for text in texts:
            assert hold_answer(quick, text) == answer(quick.search, text), (quick, text)


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda sample: sample.id)
def test_quick_path_on_every_sample(sample):
    for chunks in (
        list(sample.generation),
        token_chunks(sample.generation),
        random_chunks(sample.generation, 7),
    ):
        assert_same_as_full_scan(sample.template, sample.prefix, chunks, sample.tools)


@pytest.mark.parametrize("workload", sorted(WORKLOADS))
def test_quick_path_on_benchmark_workloads(workload):
    case = make_case(workload, 4096)
    assert_same_as_full_scan(WORKLOADS[workload].template, case.prefix, token_chunks(case.text))


def quick_test(template: dict, field: str | None = None):
    loaded = load_template({"start_anchor": "<S>", **template})
    state = loaded.watch_outside if field is None else loaded.watch_inside[field]
    return state.quick


def quick_search(template: dict, field: str | None = None):
    return quick_test(template, field).search


LITERAL_TEMPLATE = {
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>"},
        "tool_calls": {"open": ["<tool_call>", "<tc>"], "close": "</tool_call>", "repeats": True},
        "content": {"close": "<|im_end|>"},
    }
}
RUN_TEMPLATE = {
    "fields": {
        "reasoning_content": {"open_pattern": r"\s*<think>", "close_pattern": r"\s*</think>"},
        "content": {"close_pattern": r"\s*<\|im_end\|>"},
    }
}


def answer(search, text):
    """What the quick search says of `text`: "emit all", ("hold from", offset) or "scan"."""
    found = search(text)
    if found is None:
        return "emit all"
    return ("hold from", found.start()) if found.lastindex else "scan"


def hold_answer(quick, text):
    """What `QuickTest.hold` says of `text`, in `answer`'s terms."""
    hold = quick.hold(text)
    return "scan" if hold < 0 else "emit all" if hold == len(text) else ("hold from", hold)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("plain words", "emit all"),
        ("a < b", "emit all"),
        ("a <thin", ("hold from", 2)),
        ("a <t", ("hold from", 2)),  # could still be <think> or <tool_call>
        ("x<|im_e", ("hold from", 1)),
        ("<", ("hold from", 0)),
        ("a <tc", ("hold from", 2)),
        ("a <tc>", "scan"),
        ("see <think> now", "scan"),
        ("end<|im_end|>", "scan"),
        ("a \n", "emit all"),  # no leading run in a literal template
    ],
)
def test_quick_search_of_literal_delimiters(text, expected):
    assert answer(quick_search(LITERAL_TEMPLATE), text) == expected
    assert hold_answer(quick_test(LITERAL_TEMPLATE), text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("plain words", "emit all"),
        ("words \n", ("hold from", 5)),  # a trailing \s run may start \s*<think>
        ("words \n<thi", ("hold from", 5)),
        ("words<", ("hold from", 5)),
        ("a \n b", "emit all"),
        ("a\n\n<think>", "scan"),
        ("\n\n", ("hold from", 0)),
    ],
)
def test_quick_search_of_patterns_with_a_leading_run(text, expected):
    assert answer(quick_search(RUN_TEMPLATE), text) == expected
    assert hold_answer(quick_test(RUN_TEMPLATE), text) == expected


WHITESPACE = "".join(sorted(quick_test(RUN_TEMPLATE).run_characters))


@pytest.mark.parametrize(
    "template, field, first, pair, trailing_run",
    [
        (LITERAL_TEMPLATE, None, "<", "", ""),  # <think>, <tool_call>, <tc> and <|im_end|>
        (LITERAL_TEMPLATE, "reasoning_content", "<", "</", ""),  # </think> only
        (LITERAL_TEMPLATE, "tool_calls", "<", "</", ""),
        (
            RUN_TEMPLATE,
            None,
            "<",
            "",
            WHITESPACE,
        ),  # <think> and <|im_end|> differ in their second character
        (RUN_TEMPLATE, "reasoning_content", "<", "</", WHITESPACE),
        (
            {"fields": {"x": {"open": "<", "close": "</x>"}}},
            None,
            "<",
            "",
            "",
        ),  # a one-character text
        (
            {
                "fields": {
                    "x": {"open_pattern": r"\s*<a>", "close": "</x>"},
                    "y": {"open_pattern": r"(?<=q)\s*<b>"},
                }
            },
            None,
            "<",
            "",
            "",
        ),
    ],
)
def test_what_spares_the_quick_search(template, field, first, pair, trailing_run):
    quick = quick_test(template, field)
    assert (quick.first, quick.pair, quick.trailing_run) == (first, pair, trailing_run)


@pytest.mark.parametrize(
    "template, field, text, expected",
    [
        # `<` without the pair `</`: nothing can start there, only a trailing run can.
        (RUN_TEMPLATE, "reasoning_content", "a < b", "emit all"),
        (RUN_TEMPLATE, "reasoning_content", "a < b \n", ("hold from", 5)),
        (RUN_TEMPLATE, "reasoning_content", "a <b \u3000", ("hold from", 4)),
        (
            RUN_TEMPLATE,
            "reasoning_content",
            "x <",
            ("hold from", 1),
        ),  # ends in `<`: may be `</think>`
        (RUN_TEMPLATE, "reasoning_content", "x </th", ("hold from", 1)),
        (RUN_TEMPLATE, "reasoning_content", "x\n</think>", "scan"),
        (RUN_TEMPLATE, "reasoning_content", "\t\n ", ("hold from", 0)),
        (LITERAL_TEMPLATE, "reasoning_content", "List<int> ", "emit all"),
        (LITERAL_TEMPLATE, "reasoning_content", "i<n</", ("hold from", 3)),
        # A run before a loose lead (after a lookbehind) needs the scan to decide.
        (
            {"fields": {"x": {"open_pattern": r"(?<=q)\s*<b>", "close": "</x>"}}},
            None,
            "q \n",
            "scan",
        ),
    ],
)
def test_quick_hold_without_a_search(template, field, text, expected):
    quick = quick_test(template, field)
    assert hold_answer(quick, text) == expected
    assert answer(quick.search, text) == expected


def test_inside_a_region_only_its_close_is_watched():
    search = quick_search(LITERAL_TEMPLATE, "reasoning_content")
    assert answer(search, "a <tool_call") == "emit all"
    assert answer(search, "a </thi") == ("hold from", 2)


@pytest.mark.parametrize(
    "template",
    [
        {"fields": {"x": {"open_pattern": r"[a-z]+>", "close": "</x>"}}},  # no fixed leading text
        {
            "fields": {"x": {"open_pattern": r"\w*<a>", "close": "</x>"}}
        },  # \w has no small exact set
        {
            "fields": {"x": {"open_pattern": r"(?:<a>)?(?=\{)", "close": "</x>"}}
        },  # optional group first
    ],
)
def test_states_the_quick_test_cannot_describe_have_none(template):
    assert quick_test(template) is None


LOOSE_TEMPLATE = {
    "fields": {
        "reasoning_content": {"open": "<think>", "close_pattern": r"</think>|(?=<tool_call>)"},
        "tool_calls": {
            "open": "<tool_call>",
            "close_pattern": r"(?<=\})\s*</tool_call>",
            "repeats": True,
        },
        "content": {},
    }
}


@pytest.mark.parametrize(
    "field, text, expected",
    [
        # Fixed texts, one of them looked at (a lookahead): answered like a literal set.
        ("reasoning_content", "so a < b", "emit all"),
        ("reasoning_content", "see <tool_call> next", "scan"),
        ("reasoning_content", "then </thi", ("hold from", 5)),
        ("reasoning_content", "then <tool_ca", ("hold from", 5)),
        # A lookbehind before the run: a trailing run or start may not be a partial match.
        ("tool_calls", '{"a": 1}', "emit all"),
        ("tool_calls", '{"a": 1} \n', "scan"),
        ("tool_calls", '{"a": "x</tool', "scan"),
        ("tool_calls", '{"a": "x < y"', "emit all"),
    ],
)
def test_quick_search_of_lookaheads_and_lookbehinds(field, text, expected):
    assert answer(quick_search(LOOSE_TEMPLATE, field), text) == expected


def test_a_literal_and_a_run_pattern_together_scan_their_trailing_starts():
    search = quick_search(
        {"fields": {"x": {"open_pattern": r"\s*<a>", "close": "</x>"}, "y": {"open": "<b>"}}}
    )
    assert answer(search, "text") == "emit all"
    assert answer(search, "text <") == "scan"  # exact answers need one shared run
    assert answer(search, "text \n") == "scan"


def test_prefilter_of_a_literal_state_is_its_first_character():
    state = load_template({"start_anchor": "<S>", **LITERAL_TEMPLATE}).watch_outside
    assert (state.quick.first, state.quick.run_characters) == ("<", frozenset())


def test_prefilter_of_a_leading_whitespace_run_is_exactly_regex_whitespace():
    state = load_template({"start_anchor": "<S>", **RUN_TEMPLATE}).watch_outside
    assert state.quick.first == "<"
    assert {" ", "\t", "\n", "\x85", "\u3000"} <= state.quick.run_characters
    assert (
        "\x1c" not in state.quick.run_characters
    )  # str.isspace() says yes, the regex module's \s says no
    assert len(state.quick.run_characters) == 25


def test_no_prefilter_when_first_characters_differ():
    state = load_template(
        {"start_anchor": "<S>", "fields": {"x": {"open": "<x>"}, "y": {"open": "[y]"}}}
    ).watch_outside
    assert state.quick.search is not None
    assert state.quick.first == ""


def test_an_optional_escaped_paren_before_a_tag_is_found_in_one_shot():
    template = {
        "start_anchor": "<S>",
        "fields": {"x": {"open": "<x>", "close_pattern": r"\(?<end>"}, "content": {}},
    }
    assert parse_response("<x>a<end>b", template, prefix="") == {"x": "a", "content": "b"}


@pytest.mark.parametrize(
    "fields, chunks",
    [
        # A lookahead that ends a group, not the pattern, is not part of a fixed text.
        (
            {
                "reasoning_content": {
                    "open": "<think>",
                    "close_pattern": r"(?:</think>(?=\n)|</r>)\n",
                },
                "content": {},
            },
            ["<think>hmm", "</think>\nHello"],
        ),
        # Under the ASCII flag \s is ASCII whitespace only.
        (
            {"x": {"open": "<x>", "close_pattern": r"(?a)\s</x>"}, "content": {}},
            ["<x>a", "b\u2003", "</", "x>d"],
        ),
        # Regex-module syntax the standard parser reads differently: a POSIX class, fuzzy matching.
        (
            {
                "t": {"open_pattern": r"<tool\d>", "close_pattern": r"</tool[[:digit:]]>"},
                "content": {},
            },
            ["<tool1>{}", "</tool1>after"],
        ),
        (
            {
                "t": {
                    "open_pattern": r"<tool\d>",
                    "close_pattern": r"(?:</think>){e<=1}|(?=<tool>)",
                },
                "content": {},
            },
            ["<tool1>a", "</thimk>after"],
        ),
        # A match may start in the run before a text, before a trailing start of another delimiter.
        (
            {
                "a": {"open": " </b>X", "close": "</a>"},
                "b": {"open_pattern": r"(?<=q)\s*</b>", "close": "</bb>"},
                "content": {},
            },
            ["hi", " q  </b>", "Y"],
        ),
        # A complete text inside a held trailing start: a scan decides.
        (
            {"c": {"close": "\n<a>\n"}, "r": {"open_pattern": r"(?=<a>)|\s*</b>"}},
            ["x", "\n\n<a>", "zz"],
        ),
        (
            {
                "a": {"open": "yb!", "close": "</a>"},
                "b": {"open_pattern": r"xyyb|(?=b)", "close": "</b>"},
                "content": {},
            },
            ["hello", "xyb", "zz"],
        ),
        # Group-like text inside a class or after an escaped paren is not a group.
        ({"x": {"open": "<x>", "close_pattern": r"[(?<ab>]x"}, "content": {}}, ["<x>1", "bx2"]),
        ({"x": {"open": "<x>", "close_pattern": r"\(?<end>"}, "content": {}}, ["<x>a", "<end>b"]),
    ],
)
def test_quick_path_on_patterns_that_once_fooled_it(fields, chunks):
    template = {"start_anchor": "<S>", "fields": fields}
    assert_same_as_full_scan(template, "", chunks)
    assert (
        events_of(template, "", chunks, scan_every_chunk=False)[0]
        == events_of(template, "", ["".join(chunks)], scan_every_chunk=True)[0]
    )


def test_long_delimiters_scan_instead_of_building_a_huge_quick_test():
    long_open = "<" + "a" * 1000 + ">"
    template = {
        "start_anchor": "<S>",
        "fields": {"x": {"open": long_open, "close": "</x>"}, "content": {}},
    }
    assert load_template(template).watch_outside.quick is None  # 1002**2 > the size bound
    assert load_template(template).watch_inside["x"].quick is not None
    assert parse_response(f"hello {long_open}y</x>", template, prefix="") == {
        "content": "hello",
        "x": "y",
    }


def feed_past_errors(template, chunks, *, scan_every_chunk: bool) -> list:
    """Feed `chunks`, catching parse errors and going on; log events (positions dropped), errors and offsets."""
    parser = ResponseParser(template, prefix="", positions=scan_every_chunk)
    log = []
    for chunk in chunks:
        try:
            log.append(
                [
                    {k: v for k, v in event.items() if k not in ("start", "end")}
                    for event in parser.feed(chunk)
                ]
            )
        except ResponseParseError as error:
            log.append(("error", error.field, error.offset))
        log.append((parser.offset, parser.held_text))
    return log


def test_quick_path_after_a_caught_parse_error():
    # The failed close leaves the region open with its body dropped; offsets must still count
    # from where the quick path began, not from the region's start.
    template = {
        "start_anchor": "<S>",
        "fields": {
            "t": {"open": "<t>", "close_pattern": r"(?<=\})\s*</t>", "content": "json"},
            "content": {},
        },
    }
    chunks = ["<t>}</t>y", "}", "y", "</t>"]
    quick = feed_past_errors(template, chunks, scan_every_chunk=False)
    assert quick == feed_past_errors(template, chunks, scan_every_chunk=True)
    assert quick[0] == ("error", "t", 3)
    assert [entry for entry in quick if isinstance(entry, tuple) and len(entry) == 2] == [
        (8, "y"),
        (10, ""),
        (11, ""),
        (15, ""),
    ]
