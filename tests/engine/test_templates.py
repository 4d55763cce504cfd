"""Every ready template is valid, and the JSON Schema agrees with the validator.

The schema is what editors check templates against as people type; the engine's
loader is what actually runs. A shared list of valid and invalid templates is
fed to both so that they cannot drift apart.
"""

import json

import jsonschema
import pytest
from transformers.utils.chat_parsing.response_templates import load_response_template

from engine import load_template
from engine.authoring.samples import SAMPLES_DIR
from engine.template_files import list_templates
from tests.support.schemas import (
    FILE_SCHEMA_PATH,
    FILE_VALIDATOR,
    TEMPLATE_FILES,
    TEMPLATE_SCHEMA_PATH,
    TEMPLATE_VALIDATOR,
    read_schema,
)


@pytest.mark.parametrize("path", [TEMPLATE_SCHEMA_PATH, FILE_SCHEMA_PATH], ids=lambda p: p.name)
def test_schemas_are_valid_draft_2020_12(path):
    jsonschema.Draft202012Validator.check_schema(read_schema(path))


def test_there_are_templates():
    assert len(TEMPLATE_FILES) >= 21


@pytest.mark.parametrize("path", TEMPLATE_FILES, ids=lambda p: p.stem)
def test_template_file_validates_against_schema(path):
    data = json.loads(path.read_text(encoding="utf-8"))
    errors = sorted(FILE_VALIDATOR.iter_errors(data), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors)
    assert data.get("$schema") == "./template_file.schema.json"
    assert data["name"] == path.stem


@pytest.mark.parametrize("template_file", list_templates(), ids=lambda t: t.name)
def test_template_loads_in_validator(template_file):
    load_template(template_file.response_template)


@pytest.mark.parametrize("template_file", list_templates(), ids=lambda t: t.name)
def test_template_uses_chat_template_key_names(template_file):
    fields = set(template_file.response_template["fields"])
    assert fields <= {"reasoning_content", "content", "tool_calls"}, fields
    assert template_file.response_template.get("defaults", {}).get("role") == "assistant"


@pytest.mark.parametrize("template_file", list_templates(), ids=lambda t: t.name)
def test_every_template_has_samples(template_file):
    assert (SAMPLES_DIR / f"{template_file.name}.json").is_file(), (
        f"samples/{template_file.name}.json is missing"
    )


# --- schema and validator agree ------------------------------------------------------------------
#
# Each entry: (id, template, valid). Two flags mark what one side cannot see:
#   "schema_blind": a rule JSON Schema cannot state, e.g. regex validity for the `regex` module
#                   (checked by the validator only);
#   "reference_lax": the reference loader accepts it (our engine must reject it).

_ANCHOR = {"start_anchor": "<|im_start|>assistant\n"}
# xml-inline arguments whose value parser the tag's `kind` attribute picks.
_BY = {
    "tag_pattern": r'<a (?P<key>\w+) kind="(?P<kind>s|n)">(?P<value>.*?)</a>',
    "value_parser_by": {"group": "kind", "parsers": {"n": {"name": "json"}}},
}


def _t(fields, **top):
    return (
        {**_ANCHOR, **top, "fields": fields}
        if "start_anchor_pattern" not in top
        else {**top, "fields": fields}
    )


AGREEMENT_CASES = [
    # valid
    ("minimal", _t({"content": {}}), True, {}),
    ("full-top", _t({"content": {}}, version=1, defaults={"role": "assistant"}), True, {}),
    ("anchor-list", {"start_anchor": ["<a>", "<b>"], "fields": {"content": {}}}, True, {}),
    (
        "anchor-pattern",
        {"start_anchor_pattern": r"<\|start\|>assistant", "fields": {"content": {}}},
        True,
        {},
    ),
    (
        "open-list",
        _t({"reasoning_content": {"open": ["<think>", "[THINK]"], "close": "</think>"}}),
        True,
        {},
    ),
    (
        "open-and-close-patterns",
        _t(
            {
                "tool_calls": {
                    "open_pattern": "<a (?P<name>\\w+)>",
                    "close_pattern": "</a>",
                    "transform": {"name": "{name}"},
                }
            }
        ),
        True,
        {},
    ),
    (
        "repeats-join",
        _t({"reasoning_content": {"open": "<t>", "close": "</t>", "repeats": True, "join": "\n"}}),
        True,
        {},
    ),
    (
        "transform-each",
        _t(
            {
                "tool_calls": {
                    "open": "[",
                    "content": "json",
                    "transform_each": True,
                    "transform": {"type": "function", "function": {"name": "{name}"}},
                }
            }
        ),
        True,
        {},
    ),
    (
        "transform-dotted",
        _t(
            {"tool_calls": {"open": "<c>", "content": "json", "transform": {"f": "{content.args}"}}}
        ),
        True,
        {},
    ),
    (
        "transform-literals",
        _t(
            {
                "tool_calls": {
                    "open": "<c>",
                    "content": "json",
                    "transform": {
                        "type": "function",
                        "n": 1,
                        "b": True,
                        "z": None,
                        "l": ["x", "{content}"],
                    },
                }
            }
        ),
        True,
        {},
    ),
    (
        "json-args",
        _t(
            {
                "tool_calls": {
                    "open": "<c>",
                    "content": "json",
                    "content_args": {
                        "unquoted_keys": True,
                        "allow_non_json": True,
                        "string_delims": [["<s>", "</s>"]],
                    },
                }
            }
        ),
        True,
        {},
    ),
    (
        "json-decode-json-strings",
        _t(
            {
                "tool_calls": {
                    "open": "<c>",
                    "content": "json",
                    "content_args": {"decode_json_strings": ["arguments"]},
                }
            }
        ),
        True,
        {},
    ),
    (
        "xml-inline",
        _t(
            {
                "tool_calls": {
                    "open": "<c>",
                    "content": "xml-inline",
                    "content_args": {
                        "tag_pattern": "<(?P<key>\\w+)>(?P<value>.*?)</\\w+>",
                        "merge_duplicates": True,
                        "value_parser": {"name": "json", "args": {"allow_non_json": True}},
                    },
                }
            }
        ),
        True,
        {},
    ),
    (
        "kv-lines",
        _t(
            {
                "content": {
                    "content": "kv-lines",
                    "content_args": {
                        "kv_sep": "=",
                        "line_sep": "\n",
                        "strip": True,
                        "value_parser": {"name": "int"},
                    },
                }
            }
        ),
        True,
        {},
    ),
    (
        "typed-contents",
        _t(
            {
                "content": {"open": "<n>", "close": "</n>", "content": "int"},
                "tool_calls": {"open": "<f>", "content": "float", "content_args": {"strip": False}},
                "reasoning_content": {"open": "<b>", "content": "bool", "optional": False},
            }
        ),
        True,
        {},
    ),
    (
        "python-call-list",
        _t(
            {
                "tool_calls": {
                    "open": "[",
                    "content": "python-call-list",
                    "transform_each": True,
                    "transform": {"function": {"name": "{name}", "arguments": "{arguments}"}},
                }
            }
        ),
        True,
        {},
    ),
    (
        "pattern-lookbehind-no-transform",
        _t({"tool_calls": {"open": "<c>", "close_pattern": "(?<=\\})\\s*</c>", "content": "json"}}),
        True,
        {},
    ),
    # invalid: top level
    ("not-an-object", [], False, {}),
    ("no-fields", {**_ANCHOR}, False, {}),
    ("empty-fields", _t({}), False, {}),
    ("fields-not-object", {**_ANCHOR, "fields": [{"content": {}}]}, False, {}),
    ("version-2", _t({"content": {}}, version=2), False, {}),
    ("unknown-top-key", _t({"content": {}}, anchor="x"), False, {}),
    ("no-anchor", {"fields": {"content": {}}}, False, {}),
    (
        "both-anchors",
        {"start_anchor": "a", "start_anchor_pattern": "a", "fields": {"content": {}}},
        False,
        {},
    ),
    ("empty-anchor", {"start_anchor": "", "fields": {"content": {}}}, False, {}),
    ("empty-anchor-list", {"start_anchor": [], "fields": {"content": {}}}, False, {}),
    ("anchor-list-empty-item", {"start_anchor": ["a", ""], "fields": {"content": {}}}, False, {}),
    ("anchor-list-non-string", {"start_anchor": ["a", 1], "fields": {"content": {}}}, False, {}),
    ("defaults-not-object", _t({"content": {}}, defaults=["role"]), False, {}),
    (
        "bad-anchor-regex",
        {"start_anchor_pattern": "(", "fields": {"content": {}}},
        False,
        {"schema_blind": True},
    ),
    # invalid: fields
    ("field-not-object", _t({"content": "text"}), False, {}),
    ("unknown-field-key", _t({"content": {"strip": True}}), False, {}),
    (
        "open-and-open-pattern",
        _t({"tool_calls": {"open": "<a>", "open_pattern": "<a>"}}),
        False,
        {},
    ),
    (
        "close-and-close-pattern",
        _t({"tool_calls": {"open": "<a>", "close": "</a>", "close_pattern": "</a>"}}),
        False,
        {},
    ),
    ("empty-open", _t({"tool_calls": {"open": ""}}), False, {}),
    ("empty-close-list", _t({"tool_calls": {"open": "<a>", "close": []}}), False, {}),
    ("unknown-content", _t({"content": {"content": "yaml"}}), False, {}),
    ("join-without-repeats", _t({"reasoning_content": {"open": "<t>", "join": "\n"}}), False, {}),
    (
        "join-with-repeats-false",
        _t({"reasoning_content": {"open": "<t>", "repeats": False, "join": "\n"}}),
        False,
        {},
    ),
    (
        "join-not-string",
        _t({"reasoning_content": {"open": "<t>", "repeats": True, "join": 1}}),
        False,
        {},
    ),
    (
        "transform-each-without-transform",
        _t({"tool_calls": {"open": "[", "content": "json", "transform_each": True}}),
        False,
        {},
    ),
    (
        "transform-each-not-bool",
        _t(
            {
                "tool_calls": {
                    "open": "[",
                    "content": "json",
                    "transform_each": "yes",
                    "transform": {"name": "{name}"},
                }
            }
        ),
        False,
        {},
    ),
    (
        "transform-mixed-string",
        _t(
            {
                "tool_calls": {
                    "open": "<c>",
                    "content": "json",
                    "transform": {"name": "fn_{content}"},
                }
            }
        ),
        False,
        {},
    ),
    (
        "transform-mixed-nested",
        _t(
            {
                "tool_calls": {
                    "open": "<c>",
                    "content": "json",
                    "transform": [{"a": "x {content.b}"}],
                }
            }
        ),
        False,
        {},
    ),
    (
        "named-group-no-transform",
        _t({"tool_calls": {"open_pattern": "<f=(?P<name>\\w+)>"}}),
        False,
        {},
    ),
    (
        "close-named-group-no-transform",
        _t({"tool_calls": {"open": "<f>", "close_pattern": "</f(?P<tail>x)?>"}}),
        False,
        {},
    ),
    (
        "bad-open-regex",
        _t({"tool_calls": {"open_pattern": "[unclosed"}}),
        False,
        {"schema_blind": True},
    ),
    # rules JSON Schema cannot state
    (
        "two-implicit-fields",
        _t({"content": {}, "reasoning_content": {"close": "</think>"}}),
        False,
        {"schema_blind": True},
    ),
    # the reference loader does not check these; the engine should
    (
        "repeats-not-bool",
        _t({"tool_calls": {"open": "<c>", "repeats": "yes"}}),
        False,
        {"reference_lax": True},
    ),
    ("optional-not-bool", _t({"content": {"optional": "no"}}), False, {"reference_lax": True}),
    (
        "content-args-not-object",
        _t({"content": {"content_args": ["strip"]}}),
        False,
        {"reference_lax": True},
    ),
    (
        "unknown-json-arg",
        _t({"tool_calls": {"open": "<c>", "content": "json", "content_args": {"unquoted": True}}}),
        False,
        {"reference_lax": True},
    ),
    (
        "xml-inline-without-tag-pattern",
        _t({"tool_calls": {"open": "<c>", "content": "xml-inline"}}),
        False,
        {"reference_lax": True},
    ),
    (
        "text-with-json-arg",
        _t({"content": {"content_args": {"allow_non_json": True}}}),
        False,
        {"reference_lax": True},
    ),
    (
        "decode-json-strings-empty",
        _t(
            {
                "tool_calls": {
                    "open": "<c>",
                    "content": "json",
                    "content_args": {"decode_json_strings": []},
                }
            }
        ),
        False,
        {"reference_lax": True},
    ),
    (
        "decode-json-strings-not-list",
        _t(
            {
                "tool_calls": {
                    "open": "<c>",
                    "content": "json",
                    "content_args": {"decode_json_strings": "arguments"},
                }
            }
        ),
        False,
        {"reference_lax": True},
    ),
    (
        "value-parser-by",
        _t({"tool_calls": {"open": "<c>", "content": "xml-inline", "content_args": _BY}}),
        True,
        {},
    ),
    (
        "value-parser-by-null-keeps-the-text",
        _t(
            {
                "tool_calls": {
                    "open": "<c>",
                    "content": "xml-inline",
                    "content_args": {
                        **_BY,
                        "value_parser_by": {"group": "kind", "parsers": {"s": None}},
                    },
                }
            }
        ),
        True,
        {},
    ),
    (
        "value-parser-by-without-group",
        _t(
            {
                "tool_calls": {
                    "open": "<c>",
                    "content": "xml-inline",
                    "content_args": {**_BY, "value_parser_by": {"parsers": {}}},
                }
            }
        ),
        False,
        {"reference_lax": True},
    ),
    (
        "value-parser-by-group-the-tag-pattern-lacks",
        _t(
            {
                "tool_calls": {
                    "open": "<c>",
                    "content": "xml-inline",
                    "content_args": {
                        **_BY,
                        "value_parser_by": {"group": "type", "parsers": {}},
                    },
                }
            }
        ),
        False,
        {"schema_blind": True, "reference_lax": True},
    ),
    (
        "value-parser-by-unknown-parser",
        _t(
            {
                "tool_calls": {
                    "open": "<c>",
                    "content": "xml-inline",
                    "content_args": {
                        **_BY,
                        "value_parser_by": {"group": "kind", "parsers": {"n": {"name": "yaml"}}},
                    },
                }
            }
        ),
        False,
        {"reference_lax": True},
    ),
    (
        "value-parser-by-on-kv-lines",
        _t(
            {
                "tool_calls": {
                    "open": "<c>",
                    "content": "kv-lines",
                    "content_args": {"value_parser_by": _BY["value_parser_by"]},
                }
            }
        ),
        False,
        {"reference_lax": True},
    ),
    (
        "value-parser-unknown",
        _t(
            {
                "tool_calls": {
                    "open": "<c>",
                    "content": "kv-lines",
                    "content_args": {"value_parser": {"name": "yaml"}},
                }
            }
        ),
        False,
        {"reference_lax": True},
    ),
]


@pytest.mark.parametrize(
    "template, valid, flags", [c[1:] for c in AGREEMENT_CASES], ids=[c[0] for c in AGREEMENT_CASES]
)
def test_schema_agrees_with_validator(template, valid, flags):
    schema_says = TEMPLATE_VALIDATOR.is_valid(template)
    try:
        load_template(template)
        validator_says = True
    except (ValueError, TypeError):
        validator_says = False
    if not flags.get("schema_blind"):
        assert schema_says == valid, f"schema says {'valid' if schema_says else 'invalid'}"
    assert validator_says == valid, f"validator says {'valid' if validator_says else 'invalid'}"


@pytest.mark.parametrize("template_file", list_templates(), ids=lambda t: t.name)
def test_template_loads_in_the_reference_too(template_file):
    loaded = load_response_template(template_file.response_template)
    assert sorted(loaded.fields) == sorted(template_file.response_template["fields"])


@pytest.mark.parametrize("template_file", list_templates(), ids=lambda t: t.name)
def test_inner_template_validates_against_template_schema(template_file):
    errors = list(TEMPLATE_VALIDATOR.iter_errors(template_file.response_template))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors)
