"""Errors: template errors name the JSON path of the offending key; parse-time errors name the
field and show the offending text; misuse of the streaming API raises RuntimeError.
"""

import pytest

from engine import ResponseParseError, ResponseParser, TemplateError, load_template, parse_response


def template_error(template):
    with pytest.raises(TemplateError) as caught:
        load_template(template)
    assert isinstance(caught.value, ValueError)
    # the same error from every entry point
    with pytest.raises(TemplateError) as again:
        ResponseParser(template, prefix="")
    assert str(again.value) == str(caught.value)
    with pytest.raises(TemplateError) as again:
        parse_response("x", template, prefix="")
    assert str(again.value) == str(caught.value)
    return str(caught.value)


def field(**spec):
    return {"start_anchor": "A", "fields": {"x": {"open": "<x>", "close": "</x>", **spec}}}


# -- template errors ----------------------------------------------------------------------


def test_template_error_is_a_value_error():
    assert issubclass(TemplateError, ValueError)
    assert issubclass(ResponseParseError, ValueError)


def test_a_template_error_sent_to_another_process_arrives_whole():
    # An inference child or a batch worker sends its error back pickled: rebuilt from what its
    # __init__ takes, not from the joined message (which raised TypeError when unpickled).
    import pickle

    with pytest.raises(TemplateError) as caught:
        load_template(field(open_pattern="(?P<name>x)"))
    sent = pickle.loads(pickle.dumps(caught.value))
    assert type(sent) is TemplateError
    assert (str(sent), sent.path, sent.detail) == (
        str(caught.value),
        caught.value.path,
        caught.value.detail,
    )
    assert sent.path == "fields.x.open_pattern"


def test_unknown_top_level_key():
    assert template_error({"start_anchor": "A", "fields": {"c": {}}, "extra": 1}) == (
        "extra: unknown top-level key (allowed: version, defaults, start_anchor, start_anchor_pattern, fields)"
    )


def test_bad_version():
    assert template_error({"version": 2, "start_anchor": "A", "fields": {"c": {}}}).startswith(
        "version: only version 1 exists, got "
    )
    assert template_error({"version": True, "start_anchor": "A", "fields": {"c": {}}}).startswith(
        "version: only version 1 exists, got "
    )
    assert template_error({"version": "1", "start_anchor": "A", "fields": {"c": {}}}).startswith(
        "version: only version 1 exists, got "
    )


def test_missing_anchor():
    assert template_error({"fields": {"c": {}}}) == (
        "start_anchor: is required (or 'start_anchor_pattern'): it marks where the message starts in the prefix"
    )


def test_both_anchor_kinds():
    assert template_error(
        {"start_anchor": "A", "start_anchor_pattern": "B", "fields": {"c": {}}}
    ) == ("start_anchor_pattern: give either 'start_anchor' or 'start_anchor_pattern', not both")


def test_bad_anchor_values():
    assert (
        template_error({"start_anchor": "", "fields": {"c": {}}})
        == "start_anchor: must not be an empty string"
    )
    assert (
        template_error({"start_anchor": ["A", 3], "fields": {"c": {}}})
        == "start_anchor.1: must be a string, got int"
    )
    assert template_error({"start_anchor_pattern": "(", "fields": {"c": {}}}) == (
        "start_anchor_pattern: invalid regex at position 1: missing ): '('"
    )


def test_empty_or_missing_fields():
    message = "fields: must be a non-empty object of field name -> field spec"
    assert template_error({"start_anchor": "A", "fields": {}}) == message
    assert template_error({"start_anchor": "A"}) == message
    assert template_error({"start_anchor": "A", "fields": []}) == message


def test_defaults_must_be_an_object():
    assert (
        template_error({"start_anchor": "A", "fields": {"c": {}}, "defaults": []})
        == "defaults: must be an object, got list"
    )


def test_template_must_be_an_object():
    assert template_error([1]) == "a response template must be an object, got list"


def test_unknown_field_key():
    assert template_error(field(colse="</x>")) == (
        "fields.x.colse: unknown key (allowed: open, open_pattern, close, close_pattern, content, content_args, "
        "repeats, join, optional, transform, transform_each)"
    )


def test_field_must_be_an_object():
    assert (
        template_error({"start_anchor": "A", "fields": {"x": 3}})
        == "fields.x: must be an object, got int"
    )


def test_open_and_open_pattern():
    assert (
        template_error(field(open_pattern="<y>"))
        == "fields.x.open_pattern: give either 'open' or 'open_pattern', not both"
    )


def test_close_and_close_pattern():
    assert template_error(field(close_pattern="<y>")) == (
        "fields.x.close_pattern: give either 'close' or 'close_pattern', not both"
    )


def test_empty_delimiters():
    assert (
        template_error({"start_anchor": "A", "fields": {"x": {"open": ""}}})
        == "fields.x.open: must not be an empty string"
    )
    assert (
        template_error({"start_anchor": "A", "fields": {"x": {"open": ["<a>", ""]}}})
        == "fields.x.open.1: must not be an empty string"
    )
    assert template_error({"start_anchor": "A", "fields": {"x": {"open": []}}}).startswith(
        "fields.x.open: must be a string or a non-empty list of strings, got "
    )
    assert (
        template_error({"start_anchor": "A", "fields": {"x": {"open_pattern": ""}}})
        == "fields.x.open_pattern: must not be empty"
    )


def test_bad_regex():
    assert template_error(
        {"start_anchor": "A", "fields": {"x": {"open_pattern": "<x(", "close": "</x>"}}}
    ) == ("fields.x.open_pattern: invalid regex at position 3: missing ): '<x('")
    assert template_error(
        {"start_anchor": "A", "fields": {"x": {"open": "<x>", "close_pattern": "[a"}}}
    ).startswith("fields.x.close_pattern: invalid regex at position ")


def test_join_without_repeats():
    assert template_error(field(join=",")) == (
        "fields.x.join: 'join' requires 'repeats': true (join concatenates the values of repeated regions)"
    )


def test_join_must_be_a_string():
    assert template_error(field(join=1, repeats=True)) == "fields.x.join: must be a string, got int"


def test_repeats_and_optional_must_be_booleans():
    assert template_error(field(repeats="yes")).startswith(
        "fields.x.repeats: must be true or false, got "
    )
    assert template_error(field(optional=0)).startswith(
        "fields.x.optional: must be true or false, got "
    )
    assert template_error(field(transform_each=1, transform={})).startswith(
        "fields.x.transform_each: must be true or false, got "
    )


def test_transform_mixing_placeholder_and_text():
    assert template_error(field(transform={"a": "name: {content}"})) == (
        "fields.x.transform.a: 'name: {content}' mixes a placeholder with other text; a placeholder must be the "
        'whole string (e.g. "{content}"), and string interpolation is not supported'
    )
    assert template_error(field(transform={"a": ["ok", "x{content}"]})).startswith(
        "fields.x.transform.a.1: 'x{content}' mixes a placeholder"
    )
    assert template_error(field(transform="{content}!")).startswith(
        "fields.x.transform: '{content}!' mixes a placeholder"
    )


def test_transform_each_without_transform():
    assert template_error(field(transform_each=True)) == (
        "fields.x.transform_each: is set but the field has no 'transform' to apply to each element"
    )


def test_named_group_without_transform():
    template = {
        "start_anchor": "A",
        "fields": {"x": {"open_pattern": r"<x (?P<n>\w+)>", "close": "</x>"}},
    }
    assert template_error(template) == (
        "fields.x.open_pattern: declares named group(s) ['n'] but the field has no 'transform'; captures only reach "
        "the message through a transform. Add one that uses them, or make the groups unnamed (?:...)"
    )
    template = {
        "start_anchor": "A",
        "fields": {"x": {"open": "<x>", "close_pattern": r"</x (?P<n>\w+)>"}},
    }
    assert template_error(template).startswith(
        "fields.x.close_pattern: declares named group(s) ['n']"
    )


def test_unnamed_groups_need_no_transform():
    load_template(
        {
            "start_anchor": "A",
            "fields": {"x": {"open_pattern": r"<x (\w+)>", "close_pattern": r"</x(?:y)?>"}},
        }
    )


def test_two_implicit_fields():
    assert template_error({"start_anchor": "A", "fields": {"a": {}, "b": {"close": "x"}}}) == (
        "fields.b: at most one field may have no 'open'/'open_pattern' (the implicit field); found ['a', 'b']"
    )


def test_unknown_content():
    message = template_error(field(content="yaml"))
    assert message.startswith("fields.x.content: unknown content parser ")
    assert "yaml" in message
    assert message.endswith(
        "(allowed: text, int, float, bool, json, xml-inline, kv-lines, python-call-list)"
    )


def test_bad_content_args():
    assert template_error(field(content="json", content_args={"strict": True})) == (
        "fields.x.content_args.strict: unknown argument for content 'json' (allowed: unquoted_keys, string_delims, allow_non_json, decode_json_strings, strip)"
    )
    assert template_error(field(content="python-call-list", content_args={"a": 1})) == (
        "fields.x.content_args.a: unknown argument for content 'python-call-list' (this content parser takes no arguments)"
    )
    assert (
        template_error(field(content_args=[]))
        == "fields.x.content_args: must be an object, got list"
    )
    assert template_error(field(content="text", content_args={"strip": "yes"})).startswith(
        "fields.x.content_args.strip: must be a boolean, got "
    )
    assert template_error(field(content="kv-lines", content_args={"line_sep": ""})).startswith(
        "fields.x.content_args.line_sep: must be a non-empty string, got "
    )
    assert template_error(
        field(content="json", content_args={"string_delims": [["<"]]})
    ).startswith(
        "fields.x.content_args.string_delims.0: must be an [open, close] pair of non-empty strings, got "
    )


def test_bad_xml_inline_tag_pattern():
    assert template_error(field(content="xml-inline")) == (
        "fields.x.content_args.tag_pattern: is required for content 'xml-inline' (a regex with named groups 'key' and 'value')"
    )
    assert template_error(
        field(content="xml-inline", content_args={"tag_pattern": r"<(\w+)>"})
    ) == (
        "fields.x.content_args.tag_pattern: needs named groups 'key' and 'value'; missing ['key', 'value']: '<(\\\\w+)>'"
    )
    assert template_error(
        field(content="xml-inline", content_args={"tag_pattern": "<(?P<key>"})
    ) == ("fields.x.content_args.tag_pattern: invalid regex at position 9: missing ): '<(?P<key>'")


def test_bad_value_parser():
    assert template_error(
        field(content="kv-lines", content_args={"value_parser": {"name": "yaml"}})
    ) == (
        "fields.x.content_args.value_parser.name: unknown content parser 'yaml' "
        "(allowed: text, int, float, bool, json, xml-inline, kv-lines, python-call-list)"
    )
    assert template_error(
        field(content="kv-lines", content_args={"value_parser": {"name": "int", "args": {"x": 1}}})
    ) == (
        "fields.x.content_args.value_parser.args.x: unknown argument for content 'int' (allowed: strip)"
    )
    assert template_error(
        field(content="kv-lines", content_args={"value_parser": {"name": "int", "bogus": 1}})
    ) == ("fields.x.content_args.value_parser.bogus: unknown key (allowed: name, args)")


def test_template_as_bad_json_text():
    assert template_error("{").startswith("not valid JSON: ")


# -- prefix ------------------------------------------------------------------------------------


def test_missing_prefix_says_why():
    template = {"start_anchor": "A", "fields": {"c": {}}}
    for call in (
        lambda: parse_response("x", template),
        lambda: parse_response("x", template, prefix=None),
        lambda: ResponseParser(template),
    ):
        with pytest.raises(ValueError) as caught:
            call()
        assert not isinstance(caught.value, TemplateError)
        message = str(caught.value)
        assert message.startswith("prefix is required: pass the prompt text (or token ids)")
        assert "<think>" in message and 'prefix=""' in message


def test_broken_template_reported_before_missing_prefix():
    broken = {"start_anchor": "A", "fields": {}}
    with pytest.raises(TemplateError, match=r"^fields: "):
        parse_response("x", broken)
    with pytest.raises(TemplateError, match=r"^fields: "):
        ResponseParser(broken)


# -- parse-time errors ---------------------------------------------------------------------------


def parse_error(template, text):
    with pytest.raises(ResponseParseError) as caught:
        parse_response(text, template, prefix="")
    parser = ResponseParser(template, prefix="")
    with pytest.raises(ResponseParseError) as streamed:
        for char in text:
            parser.feed(char)
        parser.finalize()
    assert str(streamed.value) == str(caught.value)
    return caught.value


def test_bad_json_names_field_and_shows_text():
    error = parse_error(field(content="json"), 'ok<x>{"a": 1,}</x>')
    assert str(error) == (
        "fields.x: json: Expecting property name enclosed in double quotes (line 1, column 9, offset 8): "
        "'{\"a\": 1,}' (region at offset 5)"
    )
    assert (error.field, error.offset, error.text) == ("x", 5, '{"a": 1,}')


def test_bad_json_long_body_is_shortened():
    body = '{"a": "' + "y" * 1000 + '" oops}'
    error = parse_error(field(content="json"), f"<x>{body}</x>")
    assert str(error).startswith(
        "fields.x: json: Expecting ',' delimiter (line 1, column 1010, offset 1009): '{\"a\": \"yyy"
    )
    assert "... (814 characters) ..." in str(error)
    assert len(str(error)) < 400
    assert error.text == body


def test_unresolved_transform_path_names_field():
    error = parse_error(field(content="json", transform={"a": "{content.b}"}), '<x>{"a": 1}</x>')
    assert str(error).startswith(
        "fields.x: transform placeholder '{content.b}': 'content' is missing key 'b'; keys: ['a']"
    )
    assert error.field == "x" and error.text == '{"a": 1}'
    error = parse_error(field(content="json", transform={"a": "{content.a.b}"}), '<x>{"a": 1}</x>')
    assert str(error).startswith(
        "fields.x: transform placeholder '{content.a.b}' cannot index into int at 'b': 'content.a' is a int, not a dict"
    )
    error = parse_error(field(content="json", transform={"a": "{nope}"}), '<x>{"a": 1}</x>')
    assert str(error).startswith(
        "fields.x: transform placeholder '{nope}': 'nope' is not defined; in scope: ['content']"
    )


def test_unresolved_transform_path_shows_the_offending_text():
    # Parse-time errors name the field and show the offending text (shortened).
    error = parse_error(field(content="json", transform={"a": "{content.b}"}), '<x>{"a": 1}</x>')
    assert '{"a": 1}' in str(error)


def test_transform_each_on_a_non_list_names_field():
    error = parse_error(
        field(content="json", transform_each=True, transform={"n": "{n}"}), '<x>{"n": 1}</x>'
    )
    assert str(error) == (
        "fields.x: transform_each needs the content to parse to a list of objects, got \"{'n': 1}\"; region body: '{\"n\": 1}' (region at offset 3)"
    )


def test_missing_required_field():
    template = {
        "start_anchor": "A",
        "fields": {"x": {"open": "<x>", "close": "</x>", "optional": False}, "content": {}},
    }
    error = parse_error(template, "just text")
    assert (
        str(error)
        == "required field(s) ['x'] not found in the generation (they are marked 'optional': false)"
    )
    assert error.field == "x"


def test_join_on_a_non_string():
    error = parse_error(field(content="json", repeats=True, join=","), '<x>"a"</x><x>{"a": 1}</x>')
    assert str(error) == (
        "fields.x: 'join' needs every region to parse to a string, got dict from the region at offset 13: '{\"a\": 1}'"
    )
    assert (error.field, error.offset, error.text) == ("x", 13, '{"a": 1}')


def test_deeply_nested_json_is_a_clear_value_error_not_recursion_error():
    body = "[" * 100000 + "]" * 100000
    template = field(content="json")
    with pytest.raises(ValueError) as caught:
        parse_response(f"<x>{body}</x>", template, prefix="")
    assert isinstance(caught.value, ResponseParseError)
    assert str(caught.value).startswith("fields.x: json: nested too deeply to decode: '[[[[")
    assert len(str(caught.value)) < 400
    parser = ResponseParser(template, prefix="")
    for i in range(0, len(body), 5000):
        parser.feed(("<x>" if i == 0 else "") + body[i : i + 5000])
    with pytest.raises(ResponseParseError, match=r"^fields\.x: json: nested too deeply to decode"):
        parser.feed("</x>")


def test_deeply_nested_json_dict_with_unquoted_keys():
    body = "{a: " * 50000 + "1" + "}" * 50000
    with pytest.raises(ResponseParseError, match=r"^fields\.x: json: nested too deeply to decode"):
        parse_response(
            f"<x>{body}</x>", field(content="json", content_args={"unquoted_keys": True}), prefix=""
        )


# -- the streaming API -----------------------------------------------------------------------------


def test_feed_after_finalize_raises_runtime_error():
    parser = ResponseParser({"start_anchor": "A", "fields": {"c": {}}}, prefix="")
    parser.feed("hi")
    parser.finalize()
    with pytest.raises(RuntimeError, match="after finalize"):
        parser.feed("more")
    with pytest.raises(RuntimeError):
        parser.feed("")


def test_finalize_twice_raises_runtime_error():
    parser = ResponseParser({"start_anchor": "A", "fields": {"c": {}}}, prefix="")
    assert parser.finalize() == ({}, [])
    with pytest.raises(RuntimeError, match="finalize\\(\\) called twice"):
        parser.finalize()
