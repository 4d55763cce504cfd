"""Grammars derived from response templates: their shape, the engines that compile them, what
cannot be constrained, and the command line."""

from __future__ import annotations

import dataclasses
import json

import pytest

import engine
from engine.cli import main
from engine.grammar import ToolChoice, derive_grammar
from engine.grammar.derive import prefix_state
from engine.grammar.gbnf import gbnf_grammar
from engine.grammar.ir import CharSet, Grammar, Lit, Ref, Repeat, Seq, merge_ranges, quantifier
from engine.grammar.patterns import to_regex

xgrammar = pytest.importorskip("xgrammar")
llguidance = pytest.importorskip("llguidance")

from engine.grammar.matching import (  # noqa: E402
    SERVING_PARSER_LIMITS,
    GrammarLogitsProcessor,
    compile_grammar,
    special_tokens,
)
from tests.support.grammar_bombs import (  # noqa: E402
    CALL_LIST_TEMPLATE,
    doubling_tools,
    many_optional_fields,
)
from tests.support.grammar_walks import (  # noqa: E402
    BARE_CALL_OBJECTS,
    TOOLS,
    demo_tokenizer,
)

TIME = [
    {
        "type": "function",
        "function": {
            "name": "get_time",
            "parameters": {
                "type": "object",
                "properties": {"tz": {"type": "string"}},
                "required": ["tz"],
            },
        },
    }
]
HERMES_PREFIX = "<|im_start|>assistant\n"


def test_a_json_call_template_gives_triggered_tags_with_the_tools_schema_and_the_closer_excluded():
    derived = derive_grammar("hermes-2-pro", TIME, prefix=HERMES_PREFIX)
    assert derived.ok and derived.notes == [] and derived.unconstrainable == []
    assert derived.structural_tag() == {
        "type": "structural_tag",
        "format": {
            "type": "triggered_tags",
            "triggers": ["<tool_call>"],
            "tags": [
                {
                    "type": "tag",
                    "begin": "<tool_call>",
                    "content": {
                        "type": "sequence",
                        "elements": [
                            {"type": "regex", "pattern": "[\\t\\n ]{0,4}"},
                            {
                                "type": "json_schema",
                                "json_schema": {
                                    "type": "object",
                                    "properties": {
                                        "name": {"type": "string", "enum": ["get_time"]},
                                        "arguments": {
                                            "type": "object",
                                            "properties": {"tz": {"type": "string"}},
                                            "required": ["tz"],
                                            "additionalProperties": False,
                                        },
                                    },
                                    "required": ["name", "arguments"],
                                    "additionalProperties": False,
                                },
                                "excludes": ["</tool_call>"],
                            },
                            {"type": "regex", "pattern": "[\\t\\n\\r ]*"},
                        ],
                    },
                    "end": "</tool_call>",
                }
            ],
        },
    }


def test_a_call_object_the_open_only_looks_ahead_for_is_written_member_by_member_name_first():
    derived = derive_grammar(BARE_CALL_OBJECTS, TIME, prefix="<|a|>")
    assert derived.ok and derived.notes == [] and derived.unconstrainable == []
    tag = derived.structural_tag()["format"]["elements"][1]["content"]
    assert tag["begin"] == "{"
    assert tag["content"]["elements"][0] == {
        "type": "const_string",
        "value": '"name": "get_time", "parameters": ',
    }
    assert tag["content"]["elements"][1]["json_schema"] == TIME[0]["function"]["parameters"] | {
        "additionalProperties": False
    }
    assert tag["content"]["elements"][2] == {"type": "const_string", "value": "}"}


def test_tool_choices_map_onto_the_structural_tags_own_words():
    def body(choice, parallel=True):
        tag = derive_grammar("hermes-2-pro", TOOLS, choice, parallel, prefix=HERMES_PREFIX)
        found = tag.structural_tag()["format"]
        return {key: found.get(key) for key in ("type", "at_least_one", "stop_after_first")}

    assert body("auto") == {
        "type": "triggered_tags",
        "at_least_one": None,
        "stop_after_first": None,
    }
    assert body("auto", False) == {
        "type": "triggered_tags",
        "at_least_one": None,
        "stop_after_first": True,
    }
    assert body("required") == {
        "type": "triggered_tags",
        "at_least_one": True,
        "stop_after_first": None,
    }
    assert body("required", False) == {
        "type": "triggered_tags",
        "at_least_one": True,
        "stop_after_first": True,
    }
    assert body("none") == {"type": "any_text", "at_least_one": None, "stop_after_first": None}
    named = derive_grammar(
        "hermes-2-pro", TOOLS, "set_alarm", prefix=HERMES_PREFIX
    ).structural_tag()
    assert [
        tag["content"]["elements"][1]["json_schema"]["properties"]["name"]
        for tag in named["format"]["tags"]
    ] == [{"type": "string", "enum": ["set_alarm"]}]


def test_a_reasoning_block_the_prompt_opened_is_continued_from_its_body():
    prefix = "<|im_start|>assistant\n<think>\n"
    assert (
        prefix_state(engine.load_template("demo-model"), prefix).open_field == "reasoning_content"
    )
    derived = derive_grammar("demo-model", TIME, "none", prefix=prefix)
    assert derived.structural_tag()["format"]["elements"] == [
        {
            "type": "tag",
            "begin": "",
            "content": {"type": "any_text", "excludes": ["</think>", "<tool_call>"]},
            "end": "</think>",
        },
        {"type": "any_text", "excludes": ["<think>", "<tool_call>"]},
    ]
    closed = derive_grammar("demo-model", TIME, "none", prefix=prefix + "plan</think>")
    assert closed.structural_tag()["format"] == {
        "type": "any_text",
        "excludes": ["<think>", "<tool_call>"],
    }


def test_a_begun_answer_leaves_out_the_reasoning_that_could_have_come_first():
    fresh = derive_grammar("demo-model", TIME, "none", prefix="<|im_start|>assistant\n")
    begun = derive_grammar("demo-model", TIME, "none", prefix="<|im_start|>assistant\nSure, ")
    assert [region.field for region in fresh.plan.prelude] == ["reasoning_content"]
    assert begun.plan.prelude == []


@pytest.mark.parametrize(
    ("template", "request_", "reason"),
    [
        (
            "demo-model",
            {"tool_choice": "nope"},
            "tool_choice names 'nope', which is not among the tools",
        ),
        (
            "demo-model",
            {"tool_choice": "required", "tools": []},
            "tool_choice asks for a call, but no tool or no tool-call field exists",
        ),
        (
            "demo-model",
            {"prefix": '<|im_start|>assistant\n<tool_call>{"name": "get_time", '},
            "the prefix leaves a tool call (fields.tool_calls) open; a grammar cannot continue a call it did not start",
        ),
    ],
)
def test_a_request_no_grammar_can_honour_says_why(template, request_, reason):
    arguments = {"tools": TIME, "prefix": HERMES_PREFIX, **request_}
    derived = derive_grammar(template, **arguments)
    assert not derived.ok and derived.unconstrainable == [reason]
    with pytest.raises(
        engine.grammar.Unconstrainable, match="not among the tools|asks for a call|did not start"
    ):
        derived.structural_tag()


@pytest.mark.parametrize(
    "close_pattern",
    [
        "(?:</r>){e<=1}",  # fuzzy matching: the standard parser alone reads `{e<=1}` as text
        "(?a)</r\\w*>",  # ASCII classes
    ],
)
def test_a_pattern_the_shared_reader_refuses_is_listed_never_written_as_other_text(close_pattern):
    reason = (
        "fields.reasoning_content.close_pattern: the pattern uses syntax a grammar here cannot"
        " read (case folding, verbose mode, ASCII or locale classes, fuzzy matching such as"
        " {e<=1}, or syntax only the regex module knows)"
    )
    fields = {"reasoning_content": {"open": "<r>", "close_pattern": close_pattern}, "content": {}}
    optional = derive_grammar({"start_anchor": "<a>", "fields": fields})
    assert optional.ok and optional.notes == [reason]
    # Only the answer is written, and it never opens the left-out region.
    assert optional.gbnf() == (
        "root ::= text-1-0\n"
        'text-1-0 ::= [^<] text-1-0 | [<] text-1-1 | ""\n'
        'text-1-1 ::= [^<r] text-1-0 | [<] text-1-1 | [r] text-1-2 | ""\n'
        'text-1-2 ::= [^<>] text-1-0 | [<] text-1-1 | ""\n'
    )
    fields["reasoning_content"]["optional"] = False
    required = derive_grammar({"start_anchor": "<a>", "fields": fields})
    assert not required.ok and required.notes == [reason]
    assert required.unconstrainable == [
        "fields.reasoning_content is required but cannot be written"
    ]


def test_schema_keywords_a_form_cannot_enforce_are_listed_per_form_and_parameter():
    tools = [
        {
            "type": "function",
            "function": {
                "name": "book",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "code": {"type": "string", "pattern": "^[A-Z]{3}$", "maxLength": 3},
                        "seats": {"type": "integer", "minimum": 1, "multipleOf": 2},
                        "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
                    },
                },
            },
        }
    ]
    derived = derive_grammar(
        "llama-3.2-pythonic", tools, prefix="<|start_header_id|>assistant<|end_header_id|>\n\n"
    )
    assert derived.notes == [
        "fields.tool_calls.book.code: 'pattern' is not enforced in the GBNF form and the structural tag",
        "fields.tool_calls.book.seats: 'multipleOf' is not enforced",
        "fields.tool_calls.book.tags: 'uniqueItems' is not enforced",
    ]
    hermes = derive_grammar("hermes-2-pro", tools)
    assert hermes.notes_for("lark") == [
        "fields.tool_calls[book].arguments.tags: 'uniqueItems' is ignored by llguidance: not enforced in the Lark form",
    ]
    assert hermes.notes_for("structural-tag") == [
        "fields.tool_calls[book].arguments.code: 'maxLength' next to a 'pattern' is ignored by xgrammar: not enforced in the structural tag",
    ]
    assert hermes.notes == [
        "fields.tool_calls[book].arguments.code: 'pattern' is not enforced in the GBNF form",
        "fields.tool_calls[book].arguments.seats: 'multipleOf' is not enforced in the GBNF form",
        "fields.tool_calls[book].arguments.tags: 'uniqueItems' is not enforced in the GBNF form",
        "fields.tool_calls[book].arguments.tags: 'uniqueItems' is ignored by llguidance: not enforced in the Lark form",
        "fields.tool_calls[book].arguments.code: 'maxLength' next to a 'pattern' is ignored by xgrammar: not enforced in the structural tag",
    ]


def test_tool_choice_reads_every_request_form():
    assert ToolChoice.read({"type": "function", "function": {"name": "f"}}, False) == ToolChoice(
        "named", "f", False
    )
    assert ToolChoice.read(None) == ToolChoice("auto", None, True)
    assert ToolChoice.read("required").label == "required"
    assert ToolChoice.read("f", False).label == "f, no parallel"
    with pytest.raises(ValueError, match="tool_choice must be"):
        ToolChoice.read(3)


def test_the_structural_tag_compiles_in_xgrammar_and_the_lark_and_gbnf_in_llguidance():
    tokenizer = demo_tokenizer()
    for name in ("demo-model", "qwen3-coder", "gpt-oss", "llama-3.2-pythonic", "gemma-4"):
        derived = derive_grammar(
            name, TOOLS, prefix=engine.load_template(name).start_anchor.literals[0]
        )
        assert (
            compile_grammar(derived, tokenizer, "xgrammar", "structural-tag").engine == "xgrammar"
        )
        assert compile_grammar(derived, tokenizer, "xgrammar", "gbnf").form == "gbnf"
        assert compile_grammar(derived, tokenizer, "llguidance", "lark").form == "lark"
        assert compile_grammar(derived, tokenizer, "llguidance", "gbnf").form == "gbnf"


def test_special_tokens_are_written_as_tokens_in_the_lark_so_llguidance_accepts_the_models_own():
    tokenizer = demo_tokenizer()
    specials = special_tokens(tokenizer)
    assert {
        "<tool_call>": 5,
        "</tool_call>": 6,
        "<think>": 3,
        "</think>": 4,
    }.items() <= specials.items()
    derived = derive_grammar("demo-model", TIME, "required", prefix=HERMES_PREFIX)
    assert "<[5]>" in derived.lark(specials) and '"<tool_call>"' in derived.lark({})
    compiled = compile_grammar(derived, tokenizer, "llguidance", "lark")
    matcher = compiled.matcher()
    text = '<tool_call>\n{"name": "get_time", "arguments": {"tz": "UTC"}}\n</tool_call>'
    ids = tokenizer.encode(text, add_special_tokens=False)
    assert ids[0] == 5 and all(matcher.accept(token) for token in ids) and matcher.can_end()


def test_the_grammar_refuses_what_the_template_would_not_read_back():
    tokenizer = demo_tokenizer()
    derived = derive_grammar("hermes-2-pro", TIME, "auto", prefix=HERMES_PREFIX)
    compiled = compile_grammar(derived, tokenizer, "xgrammar", "structural-tag")

    def accepts(text: str) -> bool:
        matcher = compiled.matcher()
        return (
            all(matcher.accept(token) for token in tokenizer.encode(text, add_special_tokens=False))
            and matcher.can_end()
        )

    assert accepts(
        'Let me check.<tool_call>\n{"name": "get_time", "arguments": {"tz": "UTC"}}\n</tool_call>'
    )
    assert not accepts('<tool_call>{"name": "get_time", "arguments": {"zone": "UTC"}}</tool_call>')
    assert not accepts('<tool_call>{"name": "get_weather", "arguments": {"tz": "UTC"}}</tool_call>')
    assert not accepts(
        '<tool_call>{"name": "get_time", "arguments": {"tz": "a</tool_call>"}}</tool_call>'
    )


def test_building_a_grammar_is_quick_enough_to_do_per_request():
    derived = derive_grammar("gpt-oss", TOOLS, prefix="<|start|>assistant")
    assert (
        derived.ok
        and len(derived.gbnf()) > 0
        and "triggered_tags" in json.dumps(derived.structural_tag())
    )


def test_a_budget_ends_a_grammar_that_grows_past_it_and_says_which_bound():
    from engine.grammar import GrammarBudget, GrammarTooLarge

    # 2**30 schema values from 4.7 KB of tools: the nodes run out, not the machine's memory.
    budget = GrammarBudget(nodes=20_000)
    derived = derive_grammar(
        CALL_LIST_TEMPLATE, doubling_tools(30), prefix=HERMES_PREFIX, budget=budget
    )
    assert not derived.ok and derived.unconstrainable == [
        "the grammar is too large: more than 20,000 grammar nodes"
    ]
    assert (derived.too_large.bound, derived.too_large.limit, budget.spent) == (
        "nodes",
        20_000,
        20_001,
    )
    derived = derive_grammar(
        CALL_LIST_TEMPLATE, doubling_tools(30), prefix=HERMES_PREFIX, budget=GrammarBudget(0.2)
    )
    assert derived.unconstrainable == ["the grammar is too large: building it took more than 0.2 s"]
    assert derived.too_large.bound == "seconds"
    # Writing a format spends from the same budget, and its text is bounded.
    derived = derive_grammar(
        CALL_LIST_TEMPLATE,
        doubling_tools(8),
        prefix=HERMES_PREFIX,
        budget=GrammarBudget(chars=5_000),
    )
    assert derived.ok
    with pytest.raises(GrammarTooLarge, match="its Lark is longer than 5,000 characters"):
        derived.lark()
    with pytest.raises(GrammarTooLarge, match="its GBNF is longer than 5,000 characters"):
        derived.gbnf()
    # Without a budget nothing is bounded: the same grammar is written whole.
    assert (
        len(derive_grammar(CALL_LIST_TEMPLATE, doubling_tools(8), prefix=HERMES_PREFIX).lark())
        > 5_000
    )


def test_optional_fields_write_what_follows_them_once():
    lengths = {}
    for fields in (10, 20):
        derived = derive_grammar(many_optional_fields(fields), TIME, prefix=HERMES_PREFIX)
        # What follows each optional region (reasoning, f0... f{n-1}) is a rule, but the last's.
        assert list(derived.grammar.rules) == [
            "root",
            "text-and-calls",
            *(f"after-f{number}" for number in range(fields - 2, -1, -1)),
            "after-reasoning_content",
        ]
        lengths[fields] = len(derived.lark())
    # Ten more fields of 32 tags each add about as much again (each doubled the rest before).
    assert lengths[20] < 2.2 * lengths[10]
    compiled = compile_grammar(
        derived, demo_tokenizer(), "llguidance", parser_limits=SERVING_PARSER_LIMITS
    )
    assert compiled.parser_limits.max_lexer_states == 20_000


def test_llguidance_parser_limits_refuse_a_grammar_and_end_an_output_past_them():
    import torch

    tokenizer = demo_tokenizer()
    derived = derive_grammar("demo-model", TIME, "required", prefix=HERMES_PREFIX)
    with pytest.raises(
        ValueError,
        match=r"grammar size \(number of symbols\) too big \(limit for this grammar: 20\)",
    ):
        compile_grammar(derived, tokenizer, "llguidance", parser_limits={"max_grammar_size": 20})
    with pytest.raises(ValueError, match="parser limits are llguidance's; xgrammar has none"):
        compile_grammar(derived, tokenizer, "xgrammar", parser_limits=SERVING_PARSER_LIMITS)
    with pytest.raises(ValueError, match="parser limits are initial_lexer_fuel, max_grammar_size"):
        compile_grammar(derived, tokenizer, "llguidance", parser_limits={"lexer_states": 20})
    # Lexer states are built as tokens come: past the limit the output ends, and says why.
    compiled = compile_grammar(
        derived, tokenizer, "llguidance", parser_limits={"max_lexer_states": 20}
    )
    processor = GrammarLogitsProcessor(compiled)
    vocab = compiled.vocab_size
    scores = processor(torch.tensor([[1, 2, 3]]), torch.zeros((1, vocab)))
    allowed = torch.nonzero(scores[0] > float("-inf")).flatten().tolist()
    assert allowed == compiled.stop_ids
    assert (
        processor.problem == "llguidance: lexer error: too many states: 28 >= 20 (after 0 tokens)"
    )


def test_the_command_line_prints_each_format_and_says_when_it_cannot(tmp_path, capsys):
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TIME), encoding="utf-8")
    assert main(["grammar", "hermes-2-pro", "--tools", str(tools)]) == 0
    out = capsys.readouterr().out
    assert json.loads(out) == derive_grammar("hermes-2-pro", TIME).structural_tag()
    assert (
        main(
            ["grammar", "hermes-2-pro", "--tools", str(tools), "--format", "gbnf", "--no-parallel"]
        )
        == 0
    )
    assert capsys.readouterr().out.startswith("root ::= ")
    assert (
        main(
            [
                "grammar",
                "hermes-2-pro",
                "--tools",
                str(tools),
                "--format",
                "lark",
                "--tool-choice",
                "none",
            ]
        )
        == 0
    )
    written = capsys.readouterr()
    assert written.out.startswith(
        "// Written without a tokenizer: every delimiter is text. llguidance never matches a special\n"
        "// token against text, so for a tokenizer that has a delimiter as a special token, write\n"
        "// the grammar with that tokenizer (--tokenizer: special tokens become <[id]>).\n"
        "%llguidance {}\n\nstart: root\nroot: T1\n"
    )
    assert "note: written without --tokenizer: delimiters are text" in written.err
    assert main(["grammar", "hermes-2-pro", "--tools", str(tools), "--tool-choice", "nope"]) == 1
    assert (
        "cannot constrain: tool_choice names 'nope', which is not among the tools"
        in capsys.readouterr().err
    )


@pytest.mark.parametrize(
    "low, high, suffix",
    [
        (0, None, "*"),
        (1, None, "+"),
        (0, 1, "?"),
        (3, 3, "{3}"),
        (0, 0, "{0}"),
        (2, None, "{2,}"),
        (2, 5, "{2,5}"),
    ],
)
def test_one_quantifier_for_every_format(low, high, suffix):
    assert quantifier(low, high) == suffix


@pytest.mark.parametrize("low, high", [(-1, None), (3, 2)])
def test_a_repetition_count_that_is_no_count_is_refused(low, high):
    with pytest.raises(ValueError, match=f"not a repetition count: {low} to {high}"):
        quantifier(low, high)


def test_code_point_ranges_are_sorted_and_joined_where_they_overlap_or_touch():
    assert merge_ranges([(53, 57), (48, 52), (97, 99), (98, 122), (65, 65)]) == (
        (48, 57),
        (65, 65),
        (97, 122),
    )
    assert merge_ranges((code, code) for code in [3, 1, 2, 2, 7]) == ((1, 3), (7, 7))
    assert merge_ranges([]) == ()


REPEATS = Grammar(
    {
        "root": Seq(
            (
                Lit("a"),
                Repeat(Lit("b"), 0, 0),
                Repeat(Ref("digit"), 2, 3),
                Repeat(Ref("digit"), 3, 3),
                Repeat(Ref("digit"), 2, None),
                Repeat(Ref("digit"), 0, 0),
                Lit("z"),
            )
        ),
        "digit": CharSet(merge_ranges([(53, 57), (48, 52)])),
    }
)


def test_every_format_writes_a_repeat_with_one_quantifier_and_never_as_a_range_ending_at_0():
    # GBNF and Lark rules refuse `{0}`: a repeat that may not occur is the empty text there.
    assert gbnf_grammar(REPEATS) == (
        'root ::= "a" "" (digit{2,3}) (digit{3}) (digit{2,}) "" "z"\ndigit ::= [0-9]\n'
    )
    derived = dataclasses.replace(
        derive_grammar("demo-model", TOOLS, prefix=HERMES_PREFIX), grammar=REPEATS
    )
    assert derived.lark({"<never-written>": 7}) == (
        "%llguidance {}\n\nstart: root\n"
        'root: "a" /b{0}/ digit{2,3} digit{3} digit{2,} "" "z"\n'
        "digit: /[0-9]/\n\n"
    )
    assert to_regex(REPEATS.rules["root"].items[1]) == "b{0}"
    tokenizer = demo_tokenizer()
    assert compile_grammar(derived, tokenizer, "llguidance", "gbnf").form == "gbnf"
    assert compile_grammar(derived, tokenizer, "llguidance", "lark").form == "lark"
    assert compile_grammar(derived, tokenizer, "xgrammar", "gbnf").form == "gbnf"


def test_value_parser_by_tags_say_how_each_parameter_is_read():
    """A string parameter is written with the capture that keeps its text, any other with the
    capture whose parser reads JSON (tool typing leaves both alone)."""
    template = {
        "start_anchor": "<a>",
        "fields": {
            "tool_calls": {
                "open_pattern": r"<call=(?P<name>\w+)>",
                "close": "</call>",
                "repeats": True,
                "content": "xml-inline",
                "content_args": {
                    "tag_pattern": r'<arg=(?P<key>\w+) string="(?P<string>true|false)">(?P<value>.*?)</arg>',
                    "value_parser_by": {
                        "group": "string",
                        "parsers": {"false": {"name": "json"}},
                    },
                },
                "transform": {
                    "type": "function",
                    "function": {"name": "{name}", "arguments": "{content}"},
                },
            },
            "content": {},
        },
    }
    tools = [
        {
            "type": "function",
            "function": {
                "name": "run",
                "parameters": {
                    "type": "object",
                    "properties": {"zip": {"type": "string"}, "n": {"type": "integer"}},
                    "required": ["zip", "n"],
                },
            },
        }
    ]
    derived = derive_grammar(template, tools, tool_choice="required")
    root = derived.lark().splitlines()[6]  # after the three lines that say "no tokenizer"
    assert derived.notes == []
    assert '("<arg=zip string=\\"true\\">") T1' in root
    assert '("<arg=n string=\\"false\\">") /\\-?/ /0|[1-9][0-9]{0,14}/' in root
