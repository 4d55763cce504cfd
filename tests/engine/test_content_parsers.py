"""Each content parser of docs/template-language.md and each of its `content_args`, with exact values.

Values are read through a template field `v` (`<v>...</v>`), one-shot and
streamed one character at a time, and compared with transformers' reference
where the two are meant to agree.
"""

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers.utils.chat_parsing import parse_response as reference_parse_response

from engine import ResponseParseError, ResponseParser, load_template, parse_response
from engine.content import json_value_end, parse_content, parse_xml_inline
from engine.errors import ContentError
from engine.pattern_shapes import end_literal


def template(content, args=None, **field):
    spec = {"open": "<v>", "close": "</v>", "content": content, **field}
    if args is not None:
        spec["content_args"] = args
    return {"start_anchor": "<|assistant|>", "fields": {"v": spec}}


def value(content, body, args=None, reference=True):
    """The value of field `v` for `<v>body</v>`; one-shot, streamed and reference must agree."""
    tpl = template(content, args)
    text = f"<v>{body}</v>"
    message = parse_response(text, tpl, prefix="")
    parser = ResponseParser(tpl, prefix="")
    for char in text:
        parser.feed(char)
    assert parser.finalize()[0] == message
    if reference:
        assert reference_parse_response(text, tpl, prefix="") == message
    return message.get("v")


def error(content, body, args=None):
    """The ResponseParseError message for `<v>body</v>` (one-shot; streamed gives the same)."""
    tpl = template(content, args)
    with pytest.raises(ResponseParseError) as one_shot:
        parse_response(f"<v>{body}</v>", tpl, prefix="")
    parser = ResponseParser(tpl, prefix="")
    with pytest.raises(ResponseParseError) as streamed:
        for char in f"<v>{body}</v>":
            parser.feed(char)
        parser.finalize()
    assert str(streamed.value) == str(one_shot.value)
    assert one_shot.value.field == "v"
    return str(one_shot.value)


# -- text / int / float / bool -------------------------------------------------------


def test_text_strips_by_default():
    assert value("text", "  a b \n") == "a b"


def test_text_strip_false():
    assert value("text", "  a b \n", {"strip": False}) == "  a b \n"
    assert value("text", "  a b \n", {"strip": True}) == "a b"


def test_int():
    assert value("int", " -12 ") == -12
    assert value("int", "\n0\n") == 0
    assert value("int", "123456789012345678901234567890") == 123456789012345678901234567890


def test_int_rejects_non_integers():
    assert error("int", "4.5") == "fields.v: int: not an integer: '4.5' (region at offset 3)"
    assert error("int", "x") == "fields.v: int: not an integer: 'x' (region at offset 3)"


def test_float():
    assert value("float", " 2.5 ") == 2.5
    assert value("float", "-1e3") == -1000.0
    assert value("float", "7") == 7.0
    assert isinstance(value("float", "7"), float)


def test_float_rejects_non_numbers():
    assert error("float", "abc") == "fields.v: float: not a number: 'abc' (region at offset 3)"


@pytest.mark.parametrize(
    "body, expected",
    [
        ("true", True),
        (" True ", True),
        ("TRUE", True),
        ("1", True),
        ("false", False),
        ("0", False),
        ("yes", False),
        ("", False),
    ],
)
def test_bool(body, expected):
    assert value("bool", body) is expected


# -- json -----------------------------------------------------------------------------


def test_json_plain():
    assert value("json", ' {"a": [1, 2.5, true, null, "x"]} ') == {"a": [1, 2.5, True, None, "x"]}
    assert value("json", "42") == 42
    assert value("json", '"s"') == "s"


def test_json_error_shows_position_and_text():
    assert error("json", '{"a": 1') == (
        "fields.v: json: Expecting ',' delimiter (line 1, column 8, offset 7): '{\"a\": 1' (region at offset 3)"
    )


def test_json_unquoted_keys():
    assert value("json", '{a: 1, b_2: [1, {c: "d"}]}', {"unquoted_keys": True}) == {
        "a": 1,
        "b_2": [1, {"c": "d"}],
    }


def test_json_unquoted_keys_keeps_quoted_strings_intact():
    assert value("json", '{a: "x, b: y"}', {"unquoted_keys": True}) == {"a": "x, b: y"}
    assert value("json", '{"a": "k: v", b: "{c: 1}"}', {"unquoted_keys": True}) == {
        "a": "k: v",
        "b": "{c: 1}",
    }
    assert value("json", '{"a": "esc\\" d: 1", e: 2}', {"unquoted_keys": True}) == {
        "a": 'esc" d: 1',
        "e": 2,
    }


def test_json_unquoted_keys_off_rejects_bare_keys():
    assert error("json", "{a: 1}").startswith(
        "fields.v: json: Expecting property name enclosed in double quotes (line 1, column 2, offset 1)"
    )


def test_json_string_delims():
    assert value("json", '{"a": <<he said "hi">>}', {"string_delims": [["<<", ">>"]]}) == {
        "a": 'he said "hi"'
    }
    assert value("json", "{'a': 'b'}", {"string_delims": [["'", "'"]]}) == {"a": "b"}


def test_json_string_delims_several_pairs():
    args = {"string_delims": [["<<", ">>"], ["'", "'"]]}
    assert value("json", "{'k': <<it's>>, 'n': 1}", args, reference=False) == {"k": "it's", "n": 1}


def test_json_string_delims_with_unquoted_keys():
    args = {"string_delims": [["<<", ">>"]], "unquoted_keys": True}
    assert value("json", "{key: <<a: b, c: d>>}", args) == {"key": "a: b, c: d"}


def test_json_offsets_after_both_rewrites_point_into_the_body():
    # Strings between marks, then bare keys: an offset after a rewritten string still maps to
    # where the body writes it (the end of the value, and an error's position).
    args = {"string_delims": [["<escape>", "<escape>"]], "unquoted_keys": True}
    body = "{key:<escape>a b<escape>,n:<escape>7<escape>}<end_call><end_turn>"
    assert json_value_end(body, args) == body.index("}") + 1
    broken = "{a:<escape>x y<escape>,b:<escape>7<escape> z}"
    with pytest.raises(ContentError) as raised:
        parse_content("json", broken, args)
    assert raised.value.position == broken.index("z}")


def test_json_allow_non_json():
    assert value("json", " not json ", {"allow_non_json": True}) == "not json"
    assert value("json", '{"a": 1', {"allow_non_json": True}) == '{"a": 1'
    assert value("json", '{"a": 1}', {"allow_non_json": True}) == {"a": 1}


def test_json_allow_non_json_false_raises():
    assert error("json", "nope", {"allow_non_json": False}) == (
        "fields.v: json: Expecting value (line 1, column 1, offset 0): 'nope' (region at offset 3)"
    )


def test_json_decode_json_strings():
    # An object or array written as a JSON string is decoded at the listed keys only.
    args = {"decode_json_strings": ["arguments"]}
    body = '{"name": "f", "arguments": "{\\"city\\": \\"Paris\\", \\"days\\": [1, 2]}", "id": "{\\"x\\": 1}"}'
    assert value("json", body, args, reference=False) == {
        "name": "f",
        "arguments": {"city": "Paris", "days": [1, 2]},
        "id": '{"x": 1}',
    }
    assert value("json", '{"arguments": " [1, {\\"a\\": null}] "}', args, reference=False) == {
        "arguments": [1, {"a": None}]
    }


def test_json_decode_json_strings_in_each_object_of_a_list():
    args = {"decode_json_strings": ["arguments"]}
    body = '[{"arguments": "{\\"a\\": 1}"}, {"arguments": {"b": 2}}, 3, {"other": "{}"}]'
    assert value("json", body, args, reference=False) == [
        {"arguments": {"a": 1}},
        {"arguments": {"b": 2}},
        3,
        {"other": "{}"},
    ]


def test_json_decode_json_strings_keeps_other_strings():
    # Plain text, broken JSON and an encoded scalar stay as written; so does a body that is not an object.
    args = {"decode_json_strings": ["arguments"]}
    assert value("json", '{"arguments": "Paris"}', args) == {"arguments": "Paris"}
    assert value("json", '{"arguments": "{\\"city\\": "}', args) == {"arguments": '{"city": '}
    assert value("json", '{"arguments": "[1"}', args) == {"arguments": "[1"}
    assert value("json", '{"arguments": "42"}', args) == {"arguments": "42"}
    assert value("json", '"{\\"a\\": 1}"', args) == '{"a": 1}'


def test_json_decode_json_strings_after_unquoted_keys():
    args = {"decode_json_strings": ["arguments"], "unquoted_keys": True}
    assert value("json", '{name: "f", arguments: "{\\"a\\": 1}"}', args, reference=False) == {
        "name": "f",
        "arguments": {"a": 1},
    }


@pytest.mark.parametrize("keys", [[], [""], "arguments", [1]])
def test_json_decode_json_strings_must_list_key_names(keys):
    with pytest.raises(
        ValueError,
        match=r"fields\.v\.content_args\.decode_json_strings: must be a non-empty list of key names",
    ):
        load_template(template("json", {"decode_json_strings": keys}))


# -- xml-inline -------------------------------------------------------------------------

TAGS = {"tag_pattern": r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>"}


def test_xml_inline_tag_pattern_values_are_strings_last_duplicate_wins():
    assert value("xml-inline", "<a>1</a> <b> x </b>junk<a>2</a>", TAGS) == {"a": "2", "b": " x "}


def test_xml_inline_empty_body():
    assert value("xml-inline", "", TAGS) is None  # {} is dropped from the message


def test_xml_inline_merge_duplicates():
    assert value(
        "xml-inline", "<a>1</a><b>x</b><a>2</a><a>3</a>", {**TAGS, "merge_duplicates": True}
    ) == {
        "a": ["1", "2", "3"],
        "b": "x",
    }
    assert value("xml-inline", "<a>1</a><a>2</a>", {**TAGS, "merge_duplicates": False}) == {
        "a": "2"
    }


def test_xml_inline_value_parser():
    args = {**TAGS, "value_parser": {"name": "json"}}
    assert value("xml-inline", '<a>1</a><b>"x"</b><c>[1]</c>', args) == {"a": 1, "b": "x", "c": [1]}


def test_xml_inline_value_parser_with_args_and_merge():
    args = {
        **TAGS,
        "value_parser": {"name": "json", "args": {"allow_non_json": True}},
        "merge_duplicates": True,
    }
    assert value("xml-inline", "<a>1</a><a>x</a><b>{}</b>", args) == {"a": [1, "x"], "b": {}}


def test_xml_inline_value_parser_failure_names_the_field():
    args = {**TAGS, "value_parser": {"name": "int"}}
    assert (
        error("xml-inline", "<a>1</a><b>x</b>", args)
        == "fields.v: int: not an integer: 'x'; region body: '<a>1</a><b>x</b>' (region at offset 3)"
    )


# Tags whose `s` attribute says whether the value is a string.
TYPED_TAGS = r'<(?P<key>\w+)(?: s="(?P<s>yes|no)")?>(?P<value>.*?)</(?P=key)>'


@pytest.mark.parametrize(
    "by, body, expected",
    [
        (  # a capture with no entry falls back to value_parser (none: the text)
            {"group": "s", "parsers": {"no": {"name": "json"}}},
            '<a s="yes">1.50</a><b s="no">1.50</b><c s="no">[1]</c>',
            {"a": "1.50", "b": 1.5, "c": [1]},
        ),
        (  # null keeps the text; a group that took no part falls back too
            {"group": "s", "parsers": {"yes": None}},
            '<a s="yes">007</a><b>7</b>',
            {"a": "007", "b": 7},
        ),
        (  # the key itself can pick the parser
            {"group": "key", "parsers": {"zip": {"name": "text"}}},
            "<zip>75001</zip><n>3</n>",
            {"zip": "75001", "n": 3},
        ),
    ],
)
def test_xml_inline_value_parser_by_picks_each_tags_parser_as_transformers_does(by, body, expected):
    args = {"tag_pattern": TYPED_TAGS, "value_parser": {"name": "json"}, "value_parser_by": by}
    if by["parsers"] == {"no": {"name": "json"}}:
        del args["value_parser"]
    assert value("xml-inline", body, args) == expected


def test_xml_inline_value_parser_by_with_merge_duplicates():
    args = {
        "tag_pattern": TYPED_TAGS,
        "value_parser_by": {"group": "s", "parsers": {"no": {"name": "json"}}},
        "merge_duplicates": True,
    }
    assert value("xml-inline", '<a s="no">1</a><a s="yes">1</a>', args) == {"a": [1, "1"]}


@pytest.mark.parametrize(
    "by, error_text",
    [
        (
            {"group": "type", "parsers": {}},
            "fields.v.content_args.value_parser_by.group: value_parser_by names group 'type', "
            "which tag_pattern does not define (its named groups: key, s, value): ",
        ),
        (
            {"group": "s"},
            "fields.v.content_args.value_parser_by.parsers: must be an object mapping what the "
            "group captures to a value parser",
        ),
        (
            {"group": "s", "parsers": {"no": {"name": "yaml"}}},
            "fields.v.content_args.value_parser_by.parsers.no.name: unknown content parser 'yaml'",
        ),
        (
            {"group": "s", "parsers": {"no": "json"}},
            "fields.v.content_args.value_parser_by.parsers.no: must be a",
        ),
        (
            {"group": "s", "parsers": {}, "default": None},
            "fields.v.content_args.value_parser_by.default: unknown key (allowed: group, parsers)",
        ),
    ],
)
def test_xml_inline_value_parser_by_errors_name_the_field_and_key_at_load(by, error_text):
    with pytest.raises(ValueError) as raised:
        load_template(template("xml-inline", {"tag_pattern": TYPED_TAGS, "value_parser_by": by}))
    assert str(raised.value).startswith(error_text)


@pytest.mark.parametrize(
    "pattern, ending",
    [
        (r"<parameter=(?P<key>\w+)>\s*(?P<value>.*?)\s*</parameter>", "</parameter>"),
        (r"<p=(?P<key>\w+)>(?P<value>.*?)(?:</p>)", "</p>"),  # a group that ends the pattern
        (r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>", None),  # a backreference
        (r"(?P<key>a)(?P<value>.*?)</x>(?=\n)", None),  # looks past the match
        (r"(?P<key>a)(?P<value>.*?)</x>\b", None),
        (r"(?P<key>a)(?P<value>.*)$", None),
        (r"(?P<key>a)(?P<value>.*?)(?:</x>|</y>)", None),  # no one ending
        (r"(?i)<a>(?P<key>x)(?P<value>y)</a>", None),  # case folding is not read
        (r"<p=(?P<key>\w+)>(?P<value>.*?)(?i:</p>)", None),  # nor scoped flags
    ],
)
def test_end_literal_of_tag_patterns(pattern, ending):
    assert end_literal(regex.compile(pattern, regex.DOTALL)) == ending


XML_PATTERNS = [
    r"<parameter=(?P<key>\w+)>\s*(?P<value>.*?)\s*</parameter>",
    r"<(?P<key>[ab])>(?P<value>.*)</[ab]>",  # greedy: the last ending counts
    r"(?<=\n)<(?P<key>\w)>(?P<value>[^<]*)</t>",
    r"<(?P<key>[ab])>(?P<value>.*?)(?i:</A>)",  # found in review: no ending is read inside (?i:...)
]


@settings(max_examples=300, deadline=None)
@given(
    pattern=st.sampled_from(XML_PATTERNS),
    pieces=st.lists(
        st.sampled_from(
            [
                "<parameter=a>",
                "<parameter=b>",
                "</parameter>",
                "<a>",
                "<b>",
                "</a>",
                "</t>",
                " ",
                "\n",
                "x",
                "<",
                "1",
            ]
        ),
        max_size=14,
    ),
)
def test_stopping_at_the_last_ending_finds_the_same_tags(pattern, pieces):
    body = "".join(pieces)
    args = (
        load_template(
            {
                "start_anchor": "<S>",
                "fields": {
                    "v": {
                        "open": "<v>",
                        "content": "xml-inline",
                        "content_args": {"tag_pattern": pattern, "merge_duplicates": True},
                    }
                },
            }
        )
        .fields["v"]
        .content_args
    )
    unbounded = {key: value for key, value in args.items() if key != "_tag_end"}
    assert parse_xml_inline(body, args) == parse_xml_inline(body, unbounded)
    assert parse_xml_inline(body, {**args, "_timeout": 5.0}) == parse_xml_inline(
        body, {**unbounded, "_timeout": 5.0}
    )


# -- kv-lines ------------------------------------------------------------------------------


def test_kv_lines_defaults():
    # split at the first separator; empty lines and lines without a separator are skipped
    assert value("kv-lines", "a: 1\n\nno sep\n b : x: y \nc:") == {"a": "1", "b": "x: y", "c": ""}


def test_kv_lines_line_sep_and_kv_sep():
    assert value("kv-lines", "a=1; b = 2;c", {"line_sep": ";", "kv_sep": "="}) == {
        "a": "1",
        "b": "2",
    }


def test_kv_lines_multi_character_separators():
    assert value("kv-lines", "a => 1 || b => 2", {"line_sep": "||", "kv_sep": "=>"}) == {
        "a": "1",
        "b": "2",
    }


def test_kv_lines_strip_false():
    assert value("kv-lines", "a: 1\n b :x ", {"strip": False}) == {"a": " 1", " b ": "x "}


def test_kv_lines_value_parser():
    assert value("kv-lines", 'a: 1\nb: [true]\nc: "s"', {"value_parser": {"name": "json"}}) == {
        "a": 1,
        "b": [True],
        "c": "s",
    }
    assert value("kv-lines", "a: true\nb: no", {"value_parser": {"name": "bool"}}) == {
        "a": True,
        "b": False,
    }
    assert value("kv-lines", "age: 30", {"value_parser": {"name": "int"}}) == {"age": 30}


# -- python-call-list --------------------------------------------------------------------------


def calls(body):
    return value("python-call-list", body)


def call_error(body):
    return error("python-call-list", body)


def test_python_call_list_spec_example():
    assert calls("[get_weather(city=\"Paris\", days=3), get_time(tz='UTC')]") == [
        {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}},
        {"name": "get_time", "arguments": {"tz": "UTC"}},
    ]


def test_python_call_list_empty_list_and_no_arguments():
    assert calls("[]") is None  # [] is an empty value, dropped from the message
    assert calls("[f()]") == [{"name": "f", "arguments": {}}]


def test_python_call_list_whitespace_anywhere_and_dotted_dashed_names():
    assert calls(' [ ns.get-x ( a = 1 , b = "2" ) , g ( ) ] \n') == [
        {"name": "ns.get-x", "arguments": {"a": 1, "b": "2"}},
        {"name": "g", "arguments": {}},
    ]


def test_python_call_list_escapes():
    assert calls(r'[f(a="x\"y\\z\/\b\f\n\r\t", b=' + r"'it\'s', c='\"')]") == [
        {"name": "f", "arguments": {"a": 'x"y\\z/\b\f\n\r\t', "b": "it's", "c": '"'}}
    ]


def test_python_call_list_unicode_escapes_and_surrogate_pairs_joined():
    assert calls(r'[f(a="\u00e9\ud83d\ude00", b="\u0041")]') == [
        {"name": "f", "arguments": {"a": "é😀", "b": "A"}}
    ]


def test_python_call_list_lone_surrogates_rejected():
    high = call_error(r'[f(a="\ud83d")]')
    assert high.startswith("fields.v: python-call-list: lone surrogate escape at position ")
    low = call_error(r'[f(a="\ude00x")]')
    assert low.startswith("fields.v: python-call-list: lone surrogate escape at position ")
    raw = call_error('[f(a="\ud83d")]')
    assert raw.startswith("fields.v: python-call-list: lone surrogate in string at position 6")


def test_python_call_list_bad_escapes():
    assert call_error(r'[f(a="\x41")]').startswith(
        "fields.v: python-call-list: unsupported escape '\\\\x' at position 6"
    )
    assert call_error(r'[f(a="\u12")]').startswith(
        "fields.v: python-call-list: invalid \\u escape at position 6"
    )


def test_python_call_list_integer_range():
    assert calls("[f(a=9007199254740991, b=-9007199254740991, c=0)]") == [
        {"name": "f", "arguments": {"a": 9007199254740991, "b": -9007199254740991, "c": 0}}
    ]
    assert call_error("[f(a=9007199254740992)]").startswith(
        "fields.v: python-call-list: integer outside -(2^53-1) .. 2^53-1 at position 5"
    )
    assert call_error("[f(a=-9007199254740992)]").startswith(
        "fields.v: python-call-list: integer outside -(2^53-1) .. 2^53-1 at position 5"
    )


def test_python_call_list_floats():
    assert calls("[f(a=1.5e3, b=-0.25, c=2E-2, d=1.0)]") == [
        {"name": "f", "arguments": {"a": 1500.0, "b": -0.25, "c": 0.02, "d": 1.0}}
    ]
    assert call_error("[f(a=1e400)]").startswith(
        "fields.v: python-call-list: number too large at position 5"
    )


def test_python_call_list_constants_both_spellings():
    assert calls("[f(a=True, b=False, c=None, d=true, e=false, f=null)]") == [
        {
            "name": "f",
            "arguments": {"a": True, "b": False, "c": None, "d": True, "e": False, "f": None},
        }
    ]
    assert call_error("[f(a=TRUE)]").startswith(
        "fields.v: python-call-list: expected a string, number, list, dict, True, False or None at position 5"
    )


def test_python_call_list_nested_lists_and_dicts():
    assert calls('[f(a=[1, [2, {"k": [3]}]], b={"x": {"y": None}, \'z\': []})]') == [
        {"name": "f", "arguments": {"a": [1, [2, {"k": [3]}]], "b": {"x": {"y": None}, "z": []}}}
    ]


def test_python_call_list_nesting_limit_100():
    ok = "[f(a=" + "[" * 100 + "]" * 100 + ")]"
    nested = []
    for _ in range(99):
        nested = [nested]
    assert calls(ok) == [{"name": "f", "arguments": {"a": nested}}]
    too_deep = "[f(a=" + "[" * 101 + "]" * 101 + ")]"
    assert call_error(too_deep).startswith(
        "fields.v: python-call-list: lists and dicts nested more than 100 levels deep at position 105"
    )
    dicts = "[f(a=" + '{"k": ' * 101 + "1" + "}" * 101 + ")]"
    assert call_error(dicts).startswith(
        "fields.v: python-call-list: lists and dicts nested more than 100 levels deep at position 605"
    )


def test_python_call_list_no_positional_arguments():
    assert call_error("[f(1)]").startswith(
        "fields.v: python-call-list: expected a keyword argument (positional arguments and trailing commas are not allowed) at position 3"
    )


def test_python_call_list_no_trailing_commas():
    assert call_error("[f(a=1,)]").startswith(
        "fields.v: python-call-list: expected a keyword argument"
    )
    assert " at position 7: " in call_error("[f(a=1,)]")
    assert call_error("[f(a=1), ]").startswith(
        "fields.v: python-call-list: expected a function name at position 9"
    )
    assert call_error("[f(a=[1,])]").startswith(
        "fields.v: python-call-list: expected a string, number, list, dict, True, False or None at position 8"
    )
    assert call_error('[f(a={"a": 1,})]').startswith(
        "fields.v: python-call-list: dict keys must be strings at position 13"
    )


def test_python_call_list_no_repeated_names():
    assert call_error("[f(a=1, a=2)]").startswith(
        "fields.v: python-call-list: repeated argument 'a' at position 12"
    )
    assert call_error('[f(a={"k": 1, "k": 2})]').startswith(
        "fields.v: python-call-list: repeated key 'k' at position 21"
    )


def test_python_call_list_nothing_after_the_closing_bracket():
    assert call_error("[f(a=1)] x").startswith(
        "fields.v: python-call-list: unexpected text after the closing ']' at position 9"
    )
    assert call_error("[f(a=1)][g()]").startswith(
        "fields.v: python-call-list: unexpected text after the closing ']' at position 8"
    )


def test_python_call_list_other_failures_give_the_position():
    assert (
        call_error("f(a=1)")
        == "fields.v: python-call-list: expected '[' at position 0: 'f(a=1)' (region at offset 3)"
    )
    assert call_error("[f(a=1)").startswith(
        "fields.v: python-call-list: expected ',' at position 7"
    )
    assert call_error("[f(a=01)]").startswith(
        "fields.v: python-call-list: expected ',' at position 6"
    )
    assert call_error('[f(a="x\ny")]').startswith(
        "fields.v: python-call-list: unterminated string at position 5"
    )
    assert call_error("[f(a={k: 1})]").startswith(
        "fields.v: python-call-list: dict keys must be strings at position 6"
    )
    assert call_error("[.f()]").startswith(
        "fields.v: python-call-list: expected a function name at position 1"
    )
