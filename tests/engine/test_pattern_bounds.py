"""What a template's patterns may cost to compile, checked before anything compiles them, and a
template cache bounded by what its templates weigh (docs/template-language.md, "Pattern bounds")."""

from __future__ import annotations

import json

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import TemplateError, load_template
from engine.pattern_shapes import (
    MAX_GROUP_DEPTH,
    MAX_PATTERN_SIZE,
    PatternBoundError,
    pattern_size,
)
from engine.template import MAX_TEMPLATE_PATTERN_SIZE, TemplateCache, compile_pattern


def with_open_pattern(pattern: str) -> dict:
    return {
        "start_anchor": "<s>",
        "fields": {"thing": {"open_pattern": pattern, "close": "</x>"}, "content": {}},
    }


@pytest.mark.parametrize(
    ("pattern", "size"),
    [
        ("abc", 3),
        ("a{1000}", 1000),
        ("(?:ab){100}", 200),
        ("(?:a{100}){100}", 10_000),
        ("a{0,1000000}", 1),
        ("a{3,1000000}?", 3),
        ("[a{1000}]{3}", 3),
        (r"\p{L}{5}", 5),
        ("(?P<x>ab){3}", 6),
        ("(?i)abc", 3),
        ("(?#a{5)b", 1),
        ("a|b{10}", 12),
        (r"<tool_call>\s*(?P<json>\{.*?\})\s*</tool_call>", 28),
    ],
)
def test_a_patterns_size_writes_out_its_counted_repeats(pattern, size):
    assert pattern_size(pattern) == size


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("a{4294967294}", "is too large to compile: over 10,000 pieces"),
        ("(?:(?:a{100}){100}){100}", "is too large to compile: over 10,000 pieces"),
        ("(?:a{101}){100}", "is too large to compile: over 10,000 pieces"),
        ("(" * 33 + "a" + ")" * 33, "nests groups more than 32 deep (at character 32)"),
        ("a{" + "9" * 5000 + "}", "has a repeat count of more than 10 digits (at character 1)"),
        # In verbose mode a comment may hide a ')' (the group it closes is repeated a thousand
        # times): such patterns are counted coarsely.
        ("(?x)(?:(?:a{1000}) # )\n){1000}", "is too large to compile: over 10,000 pieces"),
    ],
)
def test_a_pattern_over_its_bounds_is_refused_before_it_compiles(pattern, message):
    with pytest.raises(PatternBoundError) as caught:
        pattern_size(pattern)
    assert str(caught.value).startswith(message)
    with pytest.raises(TemplateError) as loading:
        load_template(with_open_pattern(pattern))
    assert loading.value.path == "fields.thing.open_pattern"
    assert loading.value.detail.startswith(message)
    assert str(loading.value).startswith(f"fields.thing.open_pattern {message}")


def test_thirty_two_nested_groups_still_load():
    nested = "(?:" * MAX_GROUP_DEPTH + "a" + ")" * MAX_GROUP_DEPTH
    assert load_template(with_open_pattern(nested)).fields["thing"].open.source == nested


def test_every_pattern_key_is_bounded_and_named():
    big = "x{20000}"
    cases = {
        "start_anchor_pattern": {"start_anchor_pattern": big, "fields": {"content": {}}},
        "fields.a.close_pattern": {
            "start_anchor": "<s>",
            "fields": {"a": {"open": "<a>", "close_pattern": big}},
        },
        "fields.a.content_args.tag_pattern": {
            "start_anchor": "<s>",
            "fields": {
                "a": {
                    "open": "<a>",
                    "content": "xml-inline",
                    "content_args": {"tag_pattern": big},
                }
            },
        },
        "fields.a.content_args.value_parser.args.tag_pattern": {
            "start_anchor": "<s>",
            "fields": {
                "a": {
                    "open": "<a>",
                    "content": "xml-inline",
                    "content_args": {
                        "tag_pattern": "<(?P<key>\\w+)>(?P<value>.*?)</(?P=key)>",
                        "value_parser": {
                            "name": "xml-inline",
                            "args": {"tag_pattern": big},
                        },
                    },
                }
            },
        },
    }
    for path, template in cases.items():
        with pytest.raises(TemplateError) as caught:
            load_template(template)
        assert caught.value.path == path


def test_a_templates_patterns_are_bounded_together():
    fields = {f"f{i}": {"open_pattern": f"<{i}>a{{9000}}", "close": f"</{i}>"} for i in range(12)}
    with pytest.raises(TemplateError) as caught:
        load_template({"start_anchor": "<s>", "fields": {**fields, "content": {}}})
    assert caught.value.path == "fields.f11.open_pattern"
    assert caught.value.detail.startswith(
        "the template's patterns are too large together: over 100,000 pieces"
    )
    assert MAX_TEMPLATE_PATTERN_SIZE == 10 * MAX_PATTERN_SIZE


def test_a_number_of_thousands_of_digits_is_a_template_error():
    text = '{"start_anchor": "<s>", "fields": {"content": {}}, "version": 1' + "0" * 5000 + "}"
    with pytest.raises(TemplateError, match="^not valid JSON: a number is too long to read$"):
        load_template(text)


def test_compile_pattern_names_the_key_for_any_caller():
    with pytest.raises(TemplateError, match="^explain is too large to compile"):
        compile_pattern("explain", "a{4294967294}")
    assert compile_pattern("explain", "a{3}").fullmatch("aaa")


def test_the_cache_keeps_no_heavy_template_and_stays_within_its_weight():
    cache = TemplateCache(entries=50, weight=20_000, heaviest=5_000)
    heavy = json.dumps(with_open_pattern("a{6000}"))
    assert cache(heavy).fields["thing"].open.source == "a{6000}"
    assert cache.cache_info().currsize == 0  # compiled, not kept
    for count in range(40):
        cache(json.dumps(with_open_pattern(f"a{{{1000 + count}}}")))
    info = cache.cache_info()
    assert info.weight <= 20_000 and info.currsize < 40
    light = json.dumps(with_open_pattern("b{10}"))
    assert cache(light) is cache(light)
    assert cache.cache_info().hits == 1


# Patterns built from pieces whose compiled size is known: the size read from the text is never
# smaller (it may be larger: it errs on the safe side).
_ATOMS = st.sampled_from(["a", "b", r"\d", "[xy]", ".", r"\s", " ", "#"])


def _patterns(depth: int = 3):
    def extend(inner):
        group = st.tuples(st.sampled_from(["(?:", "(", "(?=", "(?P<n>"]), inner).map(
            lambda pair: (pair[0] + pair[1][0] + ")", pair[1][1])
        )
        repeat = st.tuples(inner, st.integers(0, 40), st.sampled_from(["", ",", ",50"])).map(
            lambda args: (
                f"(?:{args[0][0]}){{{args[1]}{args[2]}}}",
                args[0][1] * max(1, args[1]),
            )
        )
        sequence = st.lists(inner, min_size=1, max_size=3).map(
            lambda parts: ("".join(p[0] for p in parts), sum(p[1] for p in parts))
        )
        alternatives = st.lists(inner, min_size=2, max_size=3).map(
            lambda parts: ("|".join(p[0] for p in parts), sum(p[1] for p in parts))
        )
        return group | repeat | sequence | alternatives

    return st.recursive(_ATOMS.map(lambda atom: (atom, 1)), extend, max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(_patterns())
def test_the_size_read_from_the_text_is_never_below_what_compiles(built):
    pattern, expanded = built
    regex.compile(pattern.replace("(?P<n>", "(?:"), regex.DOTALL)
    try:
        assert pattern_size(pattern, limit=10**12) >= expanded
    except PatternBoundError as error:
        assert "deep" in str(error)


LONG_OPEN = "<" + "tag" * 100 + ">"  # past watch.SHORT_LITERAL: its starts are not kept in a set


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.sampled_from([LONG_OPEN, LONG_OPEN[:150], LONG_OPEN[:-1], "x", "</t>", "<"]),
        max_size=8,
    ),
    st.lists(st.integers(1, 400), max_size=12),
)
def test_a_long_literal_streams_like_one_shot(pieces, cuts):
    from engine import ResponseParser, parse_response

    template = {
        "start_anchor": "<s>",
        "fields": {"t": {"open": LONG_OPEN, "close": "</t>"}, "content": {}},
    }
    generation = "".join(pieces)
    expected = parse_response(generation, template, prefix="")
    parser = ResponseParser(template, prefix="")
    at = 0
    for size in cuts:
        parser.feed(generation[at : at + size])
        at += size
    parser.feed(generation[at:])
    assert parser.finalize()[0] == expected


def test_a_template_of_long_literals_holds_no_square_of_their_length():
    import tracemalloc

    fields = {f"f{i}": {"open": f"<{i}>" + "a" * 1900, "close": f"</{i}>"} for i in range(15)}
    tracemalloc.start()
    load_template({"start_anchor": "<s>", "fields": {**fields, "content": {}}, "version": 1})
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert held < 8_000_000  # a set of every start would hold over 80 MB
