"""`re_equivalent`: a standard-`re` pattern is used only where it matches exactly like the `regex` one."""

from __future__ import annotations

import copy

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import parse_response
from engine.re_equivalent import re_equivalent
from tests.support.workloads import QWEN3_CODER_TEMPLATE

QWEN3_CODER_TAG = QWEN3_CODER_TEMPLATE["fields"]["tool_calls"]["content_args"]["tag_pattern"]


def matches(pattern, text):
    return [(found.span(), found.groupdict(), found.groups()) for found in pattern.finditer(text)]


def both(source: str, flags: int = regex.DOTALL):
    compiled = regex.compile(source, flags)
    return compiled, re_equivalent(compiled)


@pytest.mark.parametrize(
    "source, text",
    [
        (r"\s+", "a\x1c\x1d\x1e\x1f b\u00a0\u3000c\x85"),  # U+001C-001F: \s for re, not for regex
        (
            r"\w+",
            "e\u0301t\u00e9 \u00b2 x\u203fy _9",
        ),  # marks and connector punctuation: \w for regex
        (
            r"\d+",
            "\u0663\u0664 \u00b2 12",
        ),  # Arabic-Indic digits are \d in both; superscript two in neither
        (r"[^\s<]+", "ab\x1ccd\u00a0<e"),
        (r"\S+", "a\x1cb c"),
        (r"\W+", "a\u0301 \u00b2b"),
        (
            QWEN3_CODER_TAG,
            "<parameter=p\u0301>\n x\x1c \n</parameter><parameter=q>\n\n</parameter>",
        ),
    ],
)
def test_categories_follow_the_regex_module(source, text):
    compiled, standard = both(source)
    assert standard is not None
    assert matches(standard, text) == matches(compiled, text)


def test_category_sets_are_exact_where_the_engines_disagree():
    _, whitespace = both(r"\s")
    _, word = both(r"\w")
    assert whitespace.match("\x1c") is None and whitespace.match("\u3000") is not None
    assert word.match("\u0301") is not None and word.match("\u00b2") is None


@pytest.mark.parametrize(
    "source",
    [
        r"\bword\b",  # boundaries follow each engine's \w
        r"(?i)abc",  # case folding differs
        r"(a+)+$",  # nested repeats: re has no timeout, regex stays in charge
        r"(a|aa)+$",
        r"(?:ab)*",
        r"<(?P<k>\w+)>\s*\s*\s*(?P<v>\S*)</x>",  # adjacent equal repeats: regex merges them, re backtracks
        r"(?P<n>a)(?P=n)",  # backreference
        r"\p{L}+",  # regex-only syntax
        r"a{e<=1}",  # fuzzy matching in regex, literal text in re
        r"[[:alpha:]]",  # POSIX class in regex, a warned-about nested set in re
        r"(?<=a+)b",  # variable-width lookbehind: regex only
        r"(?<name>x)",  # regex-only group syntax
    ],
)
def test_patterns_without_a_proven_equivalent_stay_with_regex(source):
    assert re_equivalent(regex.compile(source, regex.DOTALL)) is None


def test_flags_other_than_dotall_and_multiline_stay_with_regex():
    assert re_equivalent(regex.compile("a.b", regex.IGNORECASE)) is None
    assert re_equivalent(regex.compile("a.b", regex.VERSION1)) is None
    assert re_equivalent(regex.compile("^a.b$", regex.MULTILINE)) is not None


PIECES = [
    "a",
    "<",
    "=",
    "/",
    "x",
    r"\s",
    r"\w",
    r"\d",
    r"\S",
    r"\W",
    ".",
    "[^<]",
    "[a-c]",
    r"[\s\d]",
    r"[^\w\s]",
    "$",
    r"\A",
    r"\Z",
    "(?=<)",
    "(?!a)",
    "(?<=a)",
]
QUANTIFIERS = ["", "", "*", "+", "?", "*?", "+?", "{1,2}", "*+"]
TEXT_CHARACTERS = [
    "a",
    "b",
    "x",
    "<",
    "=",
    "/",
    " ",
    "\n",
    "\x1c",
    "\u0301",
    "\u00b2",
    "\u0663",
    "\u00a0",
    "_",
    "1",
    "\u00e9",
]


@st.composite
def patterns(draw):
    parts = []
    for _ in range(draw(st.integers(1, 6))):
        piece = draw(st.sampled_from(PIECES))
        quantifier = (
            draw(st.sampled_from(QUANTIFIERS))
            if not piece.startswith(("(", "$", "\\A", "\\Z"))
            else ""
        )
        if draw(st.integers(0, 5)) == 0:
            piece = f"(?P<g{len(parts)}>{piece}{quantifier})"
            quantifier = ""
        parts.append(piece + quantifier)
    if draw(st.booleans()):
        cut = draw(st.integers(0, len(parts)))
        parts = parts[:cut] + ["|"] + parts[cut:]
    return "".join(parts)


@settings(max_examples=500, deadline=None)
@given(
    source=patterns(),
    text=st.lists(st.sampled_from(TEXT_CHARACTERS), max_size=30).map("".join),
    flags=st.sampled_from([regex.DOTALL, 0, regex.MULTILINE]),
)
def test_an_equivalent_pattern_finds_the_same_matches(source, text, flags):
    compiled, standard = both(source, flags)
    if standard is not None:
        assert matches(standard, text) == matches(compiled, text)


def test_xml_inline_gives_the_same_message_with_and_without_a_time_budget():
    template = copy.deepcopy(QWEN3_CODER_TEMPLATE)
    # Raw values: the \x1c before "\n</parameter>" is kept (\s is not U+001C in the regex module).
    template["fields"]["tool_calls"]["content_args"] = {"tag_pattern": QWEN3_CODER_TAG}
    generation = (
        "<tool_call>\n<function=write>\n<parameter=path>\na\u0301.py\x1c\n</parameter>\n"
        "<parameter=count>\n3\n</parameter>\n</function>\n</tool_call>"
    )
    fast = parse_response(generation, template, prefix="")
    budgeted = parse_response(generation, template, prefix="", regex_timeout=5.0)
    assert fast == budgeted
    assert fast["tool_calls"] == [
        {
            "type": "function",
            "function": {"name": "write", "arguments": {"path": "a\u0301.py\x1c", "count": "3"}},
        }
    ]
