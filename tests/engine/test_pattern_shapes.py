"""What a delimiter pattern's matches look like (`engine.pattern_shapes`), read from its parse tree.

The scanners skip regex calls on these answers, so each must be exact or "unknown".
"""

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

from engine.pattern_shapes import (
    Lead,
    MatchStart,
    context_width,
    literal_match_start,
    match_start,
    pattern_literal,
    read_pattern,
)
from engine.template import compile_pattern

WHITESPACE = frozenset(filter(regex.compile(r"\s").fullmatch, map(chr, range(0x3001))))


def start_of(pattern: str) -> MatchStart:
    return match_start(regex.compile(pattern, regex.DOTALL))


@pytest.mark.parametrize(
    "pattern, texts",
    [
        (r"</think>|(?=<tool_call>)", ("<tool_call>", "</think>")),
        (r"</a>|</ab>", ("</ab>", "</a>")),
        (r"<[ab]>", ("<a>", "<b>")),
        (r"a|", None),  # can match the empty string
        (r"</b>(?=\s*<a>)", None),  # the lookahead has a run
        (r"x(?=y)z", None),  # a lookahead inside the text
        (r"<c>(?!x)", None),
    ],
)
def test_whole_texts(pattern, texts):
    start = match_start(regex.compile(pattern, regex.DOTALL))
    assert (tuple(lead.text for lead in start.leads) if start.whole else None) == texts


@pytest.mark.parametrize(
    "pattern, width",
    [
        (r"(?<=\})\s*</tool_call>", 1),
        (r"(?<=ab|cd)x", 2),
        (r"\bword", 1),
        (r"[^<]+>", 0),  # a negated class is not an anchor
        (r"<x(?P<n>\w+)>", 0),
        (r"(?<=a+)x", 256),  # variable width (regex module only): not measured
        (r"\Gx", 256),
    ],
)
def test_context_width(pattern, width):
    assert context_width(regex.compile(pattern, regex.DOTALL)) == width


def test_a_leading_run_and_fixed_text_is_one_exact_lead():
    start = start_of(r"\s*<think>")
    assert (start.first_characters, start.leads, start.exact, start.whole) == (
        "<",
        (Lead(WHITESPACE, "<think>"),),
        True,
        False,
    )
    assert start.lead == Lead(WHITESPACE, "<think>")
    assert start.leading_runs == start.run_tests and len(start.run_tests) == 1


def test_a_lookbehind_before_the_run_makes_the_lead_loose():
    start = start_of(r"(?<=\})\s*</tool_call>")
    assert (start.first_characters, start.leads, start.exact, start.lead) == (
        "<",
        (Lead(WHITESPACE, "</tool_call>"),),
        False,
        None,
    )
    assert start.leading_runs is None  # the run is not the pattern's first item


def test_alternatives_give_one_lead_each():
    start = start_of(r"<\|end\|>|<\|return\|>")
    assert (start.leads, start.exact, start.whole, start.lead) == (
        (Lead(None, "<|return|>"), Lead(None, "<|end|>")),
        True,
        True,
        None,
    )


@pytest.mark.parametrize("pattern", [r"[a-z]+>", r"(?i)<think>", r"\w*<a>", r"(?:<a>)?(?=\{)"])
def test_what_the_analysis_does_not_model_has_no_leads(pattern):
    assert start_of(pattern).leads is None


def test_a_literal_set():
    start = literal_match_start(["<tool_call>", "<tc>"])
    assert (start.first_characters, start.leads, start.exact, start.whole, start.leading_runs) == (
        "<",
        (Lead(None, "<tool_call>"), Lead(None, "<tc>")),
        True,
        True,
        (),
    )


def test_the_union_of_a_state():
    union = MatchStart.union([start_of(r"\s*<a>"), start_of(r"\s*<b>")])
    assert (union.first_characters, union.exact, union.lead, len(union.leading_runs)) == (
        "<",
        True,
        None,
        1,
    )
    mixed = MatchStart.union([start_of(r"\s*<a>"), literal_match_start(["[b]"])])
    assert (mixed.first_characters, mixed.exact) == ("<[", False)  # the leads do not share one run
    assert start_of(r"[a-z]+>").first_characters == "abcdefghijklmnopqrstuvwxyz"
    assert (
        MatchStart.union([start_of(r"<a>"), start_of(r"(?i)<b>")]).first_characters is None
    )  # case folding: unknown


@pytest.mark.parametrize(
    "pattern, text, pos, at_end, hold",
    [
        # One exact lead: no lead, no match; a trailing run and start of the lead is held.
        (r"\s*<think>", "plain words", 0, False, 11),
        (r"\s*<think>", "words \n<thi", 0, False, 5),
        (r"\s*<think>", "ab \n", 3, False, 3),  # the run is held from where undecided text starts
        (r"\s*<think>", "words <think>", 0, False, -1),
        (
            r"\s*<think>",
            "words \n<thi",
            0,
            True,
            -1,
        ),  # at the end a first character means the regex decides
        (r"\s*<think>", "words \n", 0, True, 7),  # nothing is held at the end
        # No single lead: the first characters and the run tests decide.
        (r"(?<=\})\s*</tool_call>", "no brace", 0, False, 8),
        (
            r"(?<=\})\s*</tool_call>",
            "then \n",
            0,
            False,
            -1,
        ),  # the run after a lookbehind needs the regex
        (r"(?<=\})\s*</tool_call>", "x < y", 0, False, -1),
        (r"[a-z]+>", "anything", 0, False, -1),  # unknown: always the regex
    ],
)
def test_hold_without_match(pattern, text, pos, at_end, hold):
    assert start_of(pattern).hold_without_match(text, pos, at_end) == hold


# A pattern with one exact lead is searched before the end of the stream by one anchored match per
# occurrence of its lead's text; that must find what the regex's own partial search finds.
EXACT_LEAD_PATTERNS = [
    r"\s*<tool_call>(?=\s*\{)",
    r"\s*</think>",
    r"<a>\s*(?P<name>\w+)>",
    r"[ \t]*<x>b?c",
    r"\n*<x>(?:y|yz)$",
]
PIECES = [
    "<tool_call>",
    "<tool_",
    "<",
    " ",
    "\n",
    "\t",
    "{",
    "x",
    "</think>",
    "</th",
    "<a>",
    "n>",
    "<x>",
    "b",
    "c",
    "y",
    "z",
]


@given(
    st.sampled_from(EXACT_LEAD_PATTERNS),
    st.lists(st.sampled_from(PIECES), max_size=14),
    st.integers(0, 20),
)
def test_a_pattern_with_an_exact_lead_finds_what_a_partial_search_finds(source, pieces, pos):
    from engine.delimiters import Delimiter

    delimiter = Delimiter.from_pattern(
        "x", "close", "fields.x.close_pattern", regex.compile(source, regex.DOTALL)
    )
    assert delimiter.start.lead is not None
    text = "".join(pieces)
    pos = min(pos, len(text))
    expected = delimiter.pattern.search(text, pos, partial=True) if pos < len(text) else None
    found = delimiter._first_partial(text, pos, None)
    assert (found and (found.span(), found.partial)) == (
        expected and (expected.span(), expected.partial)
    )


def test_the_pattern_reader_gives_the_tree_and_each_named_groups_written_name():
    tree = read_pattern(
        regex.compile(r"(?:<a=(?P<name>\w+)>|<b=(?<name>\w+)>)[(?P<x>]+(?P<args>.*)", regex.DOTALL)
    )
    assert tree.group_names == {1: "name", 2: "name", 3: "args"}
    assert [str(group) for group in tree.parsed.state.groupdict] == ["g0", "g1", "g2"]


@pytest.mark.parametrize(
    "pattern",
    [
        r"(?:</r>){e<=1}",  # fuzzy matching: the standard parser would read `{e<=1}` as text
        r"(?a)</r\w>",  # ASCII classes
        r"(?i)</r>",
        r"(?x)</r> # comment",
        r"[[:alpha:]]+",
        r"\p{L}+",
    ],
)
def test_the_pattern_reader_refuses_what_the_standard_parser_would_read_differently(pattern):
    assert read_pattern(regex.compile(pattern, regex.DOTALL)) is None


@pytest.mark.parametrize(
    "text, pattern",
    [
        ("<|im_end|>", r"<\|im_end\|>"),
        ("<tool-call>", "<tool-call>"),  # a hyphen is literal outside a class: no `\-`
        ("[TOOL_CALLS]", r"\[TOOL_CALLS\]"),
        ("a.b (c) # d", r"a\.b \(c\) # d"),  # spaces and `#` stay as written
        ("{x}^$*+?", r"\{x\}\^\$\*\+\?"),
        ("a\\b\n", "a\\\\b\n"),  # a backslash is doubled, a newline stays itself
        ("~&=!<>:", "~&=!<>:"),
        ("", ""),
    ],
)
def test_a_literal_is_written_as_the_pattern_that_reads_like_it(text, pattern):
    assert pattern_literal(text) == pattern


@given(st.text(max_size=40))
def test_a_literal_pattern_matches_exactly_its_text(text):
    compiled = compile_pattern("fields.x.close_pattern", pattern_literal(text) + "|$")
    assert compiled.fullmatch(text) is not None
    assert compiled.match(text + "tail").group() == text
