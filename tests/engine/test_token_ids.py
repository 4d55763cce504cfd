"""Token ids: the engine reads them as transformers 5.25 does, in every chunking of the ids.

Parity is checked against the installed reference with the demo model's real tokenizer
(widened with other families' delimiter tokens, tests/support/token_parity.py), on the samples,
the shared real outputs (skipped when absent), the same outputs with a control token spelled
out with ordinary tokens, and value_parser_by / typed-value cases. Then what id mode adds: the
control-token set, spelled-out tokens staying text, incomplete characters, positions in
characters and tokens, lenient mode and nothing lost, and the input types.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from transformers import AutoTokenizer
from transformers.utils.chat_parsing import ResponseParser as ReferenceParser

from engine import (
    ResponseParser,
    check_conformance,
    get_response_parser,
    infer_template,
    parse_response,
)
from engine.authoring.samples import load_samples
from engine.chat_templates.conformance import TOOLS as MATRIX_TOOLS
from engine.template_files import load_template_file
from engine.token_ids import (
    SPELLED_MARK,
    TokenDecoder,
    _positions_of,
    control_id_table,
    control_tokens,
    spellings_overlap_free,
    token_id_list,
    whole_run_splits,
)
from tests.support.paths import CHAT_TEMPLATES, MANIFEST, TEMPLATE_FOR, needs_shared
from tests.support.real_outputs import (
    MORE,
    cases_by_chat_template,
    load_cases,
    manifest,
    needs_real_outputs,
)
from tests.support.token_parity import (
    CHUNKINGS,
    DEMO_MODEL,
    chunked,
    demo_tokenizer,
    encode,
    family_tokenizer,
    id_differences,
    spelled_out,
    stream_ids,
    wide_tokenizer,
)

ENGINE_ONLY = "decode-json-strings"  # samples whose expected message the reference cannot give
PROMPT = "<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n"


@pytest.fixture(scope="module")
def tokenizer():
    return demo_tokenizer()


@pytest.fixture(scope="module")
def template(tokenizer):
    return tokenizer.response_template


def ids_of(tokenizer, text):
    return encode(tokenizer, text)


def plain_ids(tokenizer, text):
    """`text` encoded with ordinary tokens only (every control token spelled out)."""
    return tokenizer.encode(text, add_special_tokens=False, split_special_tokens=True)


# -- parity with the reference -------------------------------------------------------------


def _differences(cases, tokenizer_for) -> tuple[list[str], dict]:
    """Every case fed as ids (and with its first control token spelled out) in every chunking."""
    differences, compared = [], {}
    for index, (name, template, prefix, generation, tools) in enumerate(cases):
        tokenizer = tokenizer_for(template)
        ids = encode(tokenizer, generation)
        prefix_ids = encode(tokenizer, prefix) if prefix else []
        for variant, fed in (("as generated", ids), ("spelled out", spelled_out(tokenizer, ids))):
            if fed is None:
                continue
            compared[variant] = compared.get(variant, 0) + 1
            for chunking, why in id_differences(
                template, fed, prefix_ids, tools, tokenizer, seed=index
            ).items():
                differences.append(f"{name} ({variant}, {chunking}): {why}")
    return differences, compared


def test_every_sample_fed_as_ids_reads_as_in_transformers_in_every_chunking():
    samples = [sample for sample in load_samples() if ENGINE_ONLY not in sample.needs]
    tokenizer = wide_tokenizer([sample.template for sample in samples])
    cases = [(f"{s.family}/{s.name}", s.template, s.prefix, s.generation, s.tools) for s in samples]
    differences, compared = _differences(cases, lambda template: tokenizer)
    assert differences == []
    assert compared["as generated"] == len(samples) > 200
    assert compared["spelled out"] > 200


REAL = [
    entry for entry in manifest(MORE) if cases_by_chat_template(load_cases()).get(entry["file"])
]


@needs_real_outputs
@pytest.mark.parametrize("entry", REAL, ids=lambda entry: entry["file"])
def test_real_outputs_fed_as_ids_read_as_in_transformers_in_every_chunking(entry):
    chat_template = (MORE / entry["file"]).read_text(encoding="utf-8")
    template = infer_template(
        chat_template, bos_token=entry["bos_token"] or "", eos_token=entry["eos_token"] or ""
    ).template
    tokenizer = family_tokenizer(chat_template)
    found = cases_by_chat_template(load_cases())[entry["file"]]
    cases = [(c["id"], template, c["prefix"] or "", c["output"], c.get("tools")) for c in found]
    differences, compared = _differences(cases, lambda template: tokenizer)
    assert differences == []
    assert compared["as generated"] == len(found)


TYPED_TAGS = r'<(?P<key>\w+)(?: string="(?P<string>true|false)")?>(?P<value>.*?)</(?P=key)>'
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "price",
            "parameters": {
                "type": "object",
                "properties": {
                    "amount": {"type": "string"},
                    "count": {"type": "integer"},
                    "ratio": {"type": ["number", "string"]},
                    "note": {"type": "string"},
                },
            },
        },
    }
]
TAGGED_CALLS = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "content": {"close": "<|im_end|>"},
        "tool_calls": {
            "open_pattern": r"<tool_call>\s*(?P<name>\w+)\n",
            "close": "</tool_call>",
            "content": "xml-inline",
            "content_args": {
                "tag_pattern": TYPED_TAGS,
                "value_parser": {"name": "json"},
                "value_parser_by": {"group": "string", "parsers": {"true": None}},
            },
            "repeats": True,
            "transform": {
                "type": "function",
                "function": {"name": "{name}", "arguments": "{content}"},
            },
        },
    },
}
JSON_CALLS = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "content": {"close": "<|im_end|>"},
        "tool_calls": {
            "open": "<tool_call>",
            "close": "</tool_call>",
            "content": "json",
            "repeats": True,
            "transform": {"type": "function", "function": "{content}"},
        },
    },
}
TYPED_CASES = [
    (
        "value_parser_by",
        TAGGED_CALLS,
        'Sure.<tool_call>price\n<amount string="true">1.50</amount><count>3</count>'
        '<ratio string="false">0.5</ratio><note>"<tool_call> is a tag"</note></tool_call><|im_end|>',
    ),
    (
        "value_parser_by, a capture with no entry",
        TAGGED_CALLS,
        '<tool_call>price\n<amount>1.50</amount><count string="true">007</count></tool_call><|im_end|>',
    ),
    (
        "typed values stay typed",
        JSON_CALLS,
        '<tool_call>{"name": "price", "arguments": {"amount": 1.5, "count": "3", "ratio": 2, '
        '"note": ["a"]}}</tool_call><|im_end|>',
    ),
]


@pytest.mark.parametrize("name, template, generation", TYPED_CASES, ids=[c[0] for c in TYPED_CASES])
def test_value_parser_by_and_typed_values_read_as_in_transformers_from_ids(
    tokenizer, name, template, generation
):
    ids = ids_of(tokenizer, generation)
    prefix = ids_of(tokenizer, PROMPT)
    for fed in (ids, spelled_out(tokenizer, ids), spelled_out(tokenizer, ids, 1)):
        assert id_differences(template, fed, prefix, TOOLS, tokenizer) == {}


def test_value_parser_by_values_from_ids_are_exactly_the_references(tokenizer):
    ids = ids_of(tokenizer, TYPED_CASES[0][2])
    message = parse_response(ids, TAGGED_CALLS, prefix=PROMPT, tools=TOOLS, tokenizer=tokenizer)
    assert message["tool_calls"] == [
        {
            "type": "function",
            "function": {
                "name": "price",
                "arguments": {
                    "amount": "1.50",
                    "count": 3,
                    "ratio": 0.5,
                    "note": "<tool_call> is a tag",
                },
            },
        }
    ]
    assert message["content"] == "Sure."


_texts = st.lists(
    st.sampled_from(
        list('ab <>/_\n{}"é東')
        + ["<tool_call>", "</tool_call>", "<think>", "</think>", "<|im_end|>", "tool", "call"]
    ),
    max_size=12,
).map("".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pieces=st.lists(st.tuples(_texts, st.booleans()), max_size=6),
    seed=st.integers(0, 10**6),
)
def test_any_ids_in_any_chunking_read_as_the_references_one_shot(tokenizer, template, pieces, seed):
    # each piece is encoded with control tokens as ids, or (False) with ordinary tokens only
    ids = [
        token_id
        for text, as_ids in pieces
        for token_id in (ids_of(tokenizer, text) if as_ids else plain_ids(tokenizer, text))
    ]
    prefix = ids_of(tokenizer, PROMPT + "<think>\n")
    assert id_differences(template, ids, prefix, None, tokenizer, seed=seed) == {}


# -- control tokens ------------------------------------------------------------------------


def test_control_tokens_are_the_special_tokens_and_those_the_chat_template_writes(tmp_path):
    tokenizer = AutoTokenizer.from_pretrained(DEMO_MODEL)
    tokenizer.add_tokens(["<tool_call>x", "<unused_tag>", "\n\n"])
    tokenizer.chat_template = (
        "{{ '<tool_call>x' }}{% for m in messages %}{{ m.content }}\n\n{% endfor %}"
    )
    found = set(control_tokens(tokenizer).values())
    assert found == {
        "<|pad|>",
        "<|im_start|>",
        "<|im_end|>",
        "<think>",
        "</think>",
        "<tool_call>",
        "</tool_call>",
        "<tool_call>x",
    }
    assert found == set(tokenizer._get_control_tokens(tokenizer.chat_template))
    tokenizer.chat_control_tokens = ["<unused_tag>"]
    found = set(control_tokens(tokenizer).values())
    assert "<unused_tag>" in found and "<tool_call>x" not in found
    assert found == set(tokenizer._get_control_tokens(tokenizer.chat_template))


def test_a_spelled_out_tool_call_tag_stays_text_and_its_id_opens_a_call(tokenizer, template):
    prose = plain_ids(tokenizer, "Use the <tool_call> tag like this.")
    call = ids_of(tokenizer, '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call><|im_end|>')
    message = parse_response(prose + call, template, prefix=PROMPT, tokenizer=tokenizer)
    assert message == {
        "role": "assistant",
        "content": "Use the <tool_call> tag like this.",
        "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {}}}],
    }
    # the same characters read as text open the call at the quote
    text = tokenizer.decode(prose + call, skip_special_tokens=False)
    with pytest.raises(ValueError):
        parse_response(text, template, prefix=PROMPT)


def test_text_that_may_become_a_spelled_out_token_is_held_until_decided(tokenizer):
    decoder = TokenDecoder(tokenizer)
    pieces = [decoder.feed([token_id]) for token_id in plain_ids(tokenizer, "a <tool_call> b <to")]
    pieces.append(decoder.flush())
    assert "".join(pieces) == "a " + SPELLED_MARK.join("<tool_call>") + " b <to"
    assert pieces[-1] == "<to"  # held to the end: it could have become a spelled token
    assert decoder.tokens.spelled_out() == [(2, 13)]


def test_an_incomplete_character_is_held_and_completes_whole(tokenizer, template):
    ids = ids_of(tokenizer, "東")
    assert len(ids) == 2  # byte-level: this character takes two tokens
    parser = ResponseParser(template, prefix=PROMPT, tokenizer=tokenizer)
    texts = [
        e["text"]
        for token_id in ids
        for e in parser.feed([token_id])
        if e["type"] == "region_chunk"
    ]
    assert all("\ufffd" not in text for text in texts)
    assert parser.finalize()[0]["content"] == "東"
    broken = ids[:1]  # the first byte only: at the end it comes out as U+FFFD
    assert (
        parse_response(broken, template, prefix=PROMPT, tokenizer=tokenizer)["content"] == "\ufffd"
    )


# -- positions, tokens, lenient mode --------------------------------------------------------


GENERATION = '<think>\nCheck.\n</think>\n\n<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call><|im_end|>'


def test_positions_are_characters_of_the_decoded_text_and_token_indices(tokenizer, template):
    ids = ids_of(tokenizer, GENERATION)
    spelled = spelled_out(
        tokenizer, ids, 2
    )  # the <tool_call>: its text in the reasoning? no: after it
    parser = ResponseParser(template, prefix=PROMPT, tokenizer=tokenizer, positions=True)
    events = list(parser.initial_events)
    for token_id in spelled:
        events += parser.feed([token_id])
    message, final = parser.finalize()
    events += final
    tokens = parser.tokens
    text = tokens.text
    assert SPELLED_MARK not in text and text == tokenizer.decode(spelled, skip_special_tokens=False)
    # nothing lost: chunks and delimiters tile the decoded text
    covered = []
    for event in events:
        if event["type"] == "region_chunk":
            assert text[event["start"] : event["end"]] == event["text"]
        if "start" in event:
            covered.append((event["start"], event["end"]))
            first, past = event["tokens"]
            if event["end"] > event["start"]:
                assert (
                    tokens.start(first) <= event["start"] and tokens.end(past - 1) >= event["end"]
                )
    assert sorted(covered)[-1][1] == len(text)
    opens = [e for e in events if e["type"] == "region_open" and e["start"] < e["end"]]
    assert [
        (e["field"], text[e["start"] : e["end"]], tokens.matched_by(e["start"], e["end"]))
        for e in opens
    ] == [("reasoning_content", "<think>", "control token")]
    assert tokens.spelled_out() == [(text.index("<tool_call>"), text.index("<tool_call>") + 11)]
    assert message["content"].startswith("<tool_call>")
    boundaries = tokens.boundaries()
    assert "".join(b["text"] for b in boundaries) == text
    assert [b["id"] for b in boundaries] == spelled
    assert boundaries[0] == {
        "index": tokens.prefix_tokens,
        "id": 3,
        "text": "<think>",
        "start": 0,
        "end": 7,
        "control": True,
    }


def test_lenient_mode_keeps_a_broken_call_body_as_content_from_ids(tokenizer, template):
    ids = ids_of(tokenizer, "Hi <tool_call>\n{broken}\n</tool_call><|im_end|>")
    parser = ResponseParser(template, prefix=PROMPT, tokenizer=tokenizer, on_error="keep")
    for token_id in ids:
        parser.feed(token_id)
    message, _ = parser.finalize()
    # The call's delimiters (control tokens) are consumed; the body that does not parse is text.
    assert message == {"role": "assistant", "content": "Hi \n{broken}"}
    assert [error.field for error in parser.errors] == ["tool_calls"]


def test_a_spelled_out_token_in_a_prefix_given_as_ids_is_text(tokenizer, template):
    prefix = ids_of(tokenizer, PROMPT) + plain_ids(tokenizer, "<think>")
    message = parse_response(
        ids_of(tokenizer, "x</think>y<|im_end|>"), template, prefix=prefix, tokenizer=tokenizer
    )
    reference = ReferenceParser(template, prefix, tokenizer=tokenizer)
    reference.feed(ids_of(tokenizer, "x</think>y<|im_end|>"))
    assert (
        message == reference.finalize()[0] == {"role": "assistant", "content": "<think>x</think>y"}
    )


# -- inputs -----------------------------------------------------------------------------------


def test_ids_as_list_numpy_and_torch_and_batches(tokenizer, template):
    ids = ids_of(tokenizer, "Hello<|im_end|>")
    other = ids_of(tokenizer, "Bye!<|im_end|>")
    expected = {"role": "assistant", "content": "Hello"}
    for form in (ids, tuple(ids), np.array(ids), torch.tensor(ids)):
        assert parse_response(form, template, prefix=PROMPT, tokenizer=tokenizer) == expected
        parser = ResponseParser(
            template, prefix=np.array(ids_of(tokenizer, PROMPT)), tokenizer=tokenizer
        )
        parser.feed(form)
        assert parser.finalize()[0] == expected
    pad = ids_of(tokenizer, "<|im_end|>")[0]
    width = max(len(ids), len(other))
    batch = [ids + [pad] * (width - len(ids)), other + [pad] * (width - len(other))]
    for form in (batch, np.array(batch), torch.tensor(batch)):
        assert parse_response(form, template, prefix=PROMPT, tokenizer=tokenizer) == [
            expected,
            {"role": "assistant", "content": "Bye!"},
        ]


def test_text_given_to_a_parser_with_a_tokenizer_is_a_type_error(tokenizer, template):
    parser = ResponseParser(template, prefix=PROMPT, tokenizer=tokenizer)
    with pytest.raises(TypeError, match="reads token ids, not text"):
        parser.feed("Hello")
    with pytest.raises(TypeError):
        ReferenceParser(template, prefix=PROMPT, tokenizer=tokenizer).feed("Hello")
    with pytest.raises(TypeError, match="reads token ids, not text"):
        parse_response("Hello", template, prefix=PROMPT, tokenizer=tokenizer)
    with pytest.raises(TypeError, match="found str 'a'"):
        parser.feed([1, "a"])


def test_get_response_parser_reads_ids_with_control_tokens(tokenizer):
    parser = get_response_parser(tokenizer, prefix=PROMPT, token_ids=True)
    parser.feed(plain_ids(tokenizer, "<think>") + ids_of(tokenizer, "ok<|im_end|>"))
    assert parser.finalize()[0] == {"role": "assistant", "content": "<think>ok"}


def test_decoding_is_linear_each_id_is_decoded_once(tokenizer, template):
    # the decoder steps the tokenizer's DecodeStream once per id: no re-decoding of the text so far
    calls = []
    decoder = TokenDecoder(tokenizer)
    stream = decoder._stream

    class Counting:
        def step(self, backend, token_ids):
            calls.extend(token_ids if isinstance(token_ids, list) else [token_ids])
            return stream.step(backend, token_ids)

    decoder._stream = Counting()
    ids = ids_of(tokenizer, "word " * 200)
    text = "".join(decoder.feed([token_id]) for token_id in ids)
    assert calls == ids and text == "word " * 200
    assert decoder.flush() == ""


@pytest.mark.parametrize("chunking", CHUNKINGS)
def test_streamed_events_add_up_to_the_message(tokenizer, template, chunking):
    ids = ids_of(tokenizer, GENERATION)
    message, events = stream_ids(
        template, chunked(ids, chunking, 3), ids_of(tokenizer, PROMPT), None, tokenizer
    )
    closes = {e["field"]: e["value"] for e in events if e["type"] == "region_close"}
    assert closes["reasoning_content"] == message["reasoning_content"] == "Check."
    assert [closes["tool_calls"]] == message["tool_calls"]


def test_trace_with_a_tokenizer_accounts_for_every_character_of_the_decoded_text(
    tokenizer, template
):
    from engine import trace

    ids = (
        ids_of(tokenizer, "Use the ")
        + plain_ids(tokenizer, "<tool_call>")
        + ids_of(
            tokenizer,
            ' tag.</think>\n\n<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call><|im_end|>',
        )
    )
    result = trace(ids, template, prefix=PROMPT + "<think>\n", tokenizer=tokenizer)
    assert result.message["reasoning_content"] == "Use the <tool_call> tag."
    assert result.generation == tokenizer.decode(ids, skip_special_tokens=False)
    assert [(s.kind, s.field, s.source, s.start, s.end, s.text) for s in result.spans] == [
        ("open", "reasoning_content", "prefix", 58, 65, "<think>"),
        ("body", "reasoning_content", "prefix", 65, 66, "\n"),
        ("body", "reasoning_content", "generation", 0, 24, "Use the <tool_call> tag."),
        ("close", "reasoning_content", "generation", 24, 32, "</think>"),
        ("body", "content", "generation", 32, 34, "\n\n"),
        ("open", "tool_calls", "generation", 34, 45, "<tool_call>"),
        ("body", "tool_calls", "generation", 45, 76, '\n{"name": "f", "arguments": {}}'),
        ("close", "tool_calls", "generation", 76, 89, "\n</tool_call>"),
        ("close", "content", "generation", 89, 99, "<|im_end|>"),
    ]
    with pytest.raises(ValueError, match="chunks must concatenate"):
        trace(ids, template, prefix=PROMPT, tokenizer=tokenizer, chunks=[ids[:3]])


def test_only_the_characters_of_control_tokens_are_held_by_control_tokens(tokenizer, template):
    # the close `\s*</tool_call>` takes an ordinary newline and a control token: as a whole
    # it was matched by a control token, but its newline was matched in text
    ids = ids_of(tokenizer, '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call><|im_end|>')
    parser = ResponseParser(template, prefix=PROMPT, tokenizer=tokenizer)
    parser.feed(ids)
    assert parser.finalize()[0]["tool_calls"][0]["function"]["name"] == "f"
    tokens = parser.tokens
    close = tokens.text.index("\n</tool_call>")
    end = close + len("\n</tool_call>")
    assert tokens.matched_by(close, end) == "control token"
    assert [
        tokens.held_by_control(start, stop)
        for start, stop in [(close, close + 1), (close + 1, end), (close, end), (close, close)]
    ] == [False, True, False, False]
    assert tokens.held_by_control(0, 11) and not tokens.held_by_control(11, 12)


@needs_shared
@pytest.mark.parametrize("entry", MANIFEST, ids=lambda entry: entry["file"])
def test_the_development_set_fed_as_ids_reads_as_in_transformers(entry):
    # every renderable row of the conformance matrix, with the family's shipped template and the
    # inferred one, all at once and one id at a time (the other chunkings run on the outputs above)
    chat_template = (CHAT_TEMPLATES / entry["file"]).read_text(encoding="utf-8")
    tokenizer = family_tokenizer(chat_template)
    tokens = {"bos_token": entry["bos_token"] or "", "eos_token": entry["eos_token"] or ""}
    templates = {
        "shipped": load_template_file(
            TEMPLATE_FOR.get(entry["file"], entry["family"])
        ).response_template,
        "inferred": infer_template(chat_template, **tokens).template,
    }
    differences, compared = [], 0
    for how, template in templates.items():
        report = check_conformance(template, chat_template, **tokens)
        for index, row in enumerate(report.situations):
            if not row.renderable:
                continue
            compared += 1
            found = id_differences(
                template,
                encode(tokenizer, row.generation),
                encode(tokenizer, row.prompt),
                MATRIX_TOOLS if row.tools else None,
                tokenizer,
                seed=index,
                chunkings=("one-shot", "per-id"),
            )
            differences += [
                f"{how} {row.name} ({chunking}): {why}" for chunking, why in found.items()
            ]
    assert differences == []
    assert compared


@given(
    ids=st.lists(st.integers(min_value=-3, max_value=12), max_size=200),
    wanted=st.sets(st.integers(min_value=0, max_value=9), max_size=4),
)
def test_control_positions_are_where_the_control_ids_are(ids, wanted):
    # the table covers ids 0-9: ids past it, and negative ids (which would index it from its
    # end), still read right
    table = control_id_table(frozenset(wanted), 10)
    expected = [at for at, token_id in enumerate(ids) if token_id in wanted]
    assert _positions_of(ids, dict.fromkeys(wanted), table) == expected
    assert _positions_of(ids, dict.fromkeys(wanted)) == expected


# -- a long run of ids decoded by one call --------------------------------------------------


def test_spellings_overlap_free_only_when_no_two_occurrences_can_overlap():
    assert spellings_overlap_free(frozenset({"<tool_call>", "</tool_call>", "<|im_end|>"}))
    assert not spellings_overlap_free(frozenset({"<a>", "<a>b"}))  # one holds the other
    assert not spellings_overlap_free(frozenset({"ab", "ba"}))  # "aba": "ab" and "ba" overlap
    assert not spellings_overlap_free(frozenset({"<x|", "|y>"}))
    assert not spellings_overlap_free(frozenset({"aa"}))  # "aaa" holds two that overlap
    assert spellings_overlap_free(frozenset())


def test_a_run_with_control_ids_is_decoded_by_one_call_and_a_spelled_out_one_is_not(tokenizer):
    assert whole_run_splits(tokenizer, tokenizer.backend_tokenizer, control_tokens(tokenizer))
    generation = (
        "<think>\nplan 東\n</think>\n\n" + "word " * 40 + "<tool_call>\n{}\n</tool_call> <to"
    )
    ids = ids_of(tokenizer, generation)
    decoder = TokenDecoder(tokenizer)
    # whole, the control tokens unmarked; the tail that may become a spelled-out token is held
    assert decoder._feed_run(ids) == generation[: -len("<to")]
    assert decoder.tokens.ids == ids and decoder._held == "<to"
    assert decoder.flush() == "<to"
    assert decoder.tokens.control == [token_id in control_tokens(tokenizer) for token_id in ids]
    spelled = plain_ids(tokenizer, "<think>") + ids
    assert TokenDecoder(tokenizer)._feed_run(spelled) is None  # more spellings than control ids
    assert TokenDecoder(tokenizer)._feed_run(ids[:-1] + ids_of(tokenizer, "東")[:1]) is None


_RUN_TEXTS = st.sampled_from(
    ["word ", "é", "東", " <tool", "_call>", "<tool_call>", "</tool_call>", "<think>"]
    + ["</think>", "\n", '{"a": 1}', "<|im_end|>", "<to", "<|im_"]
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pieces=st.lists(_RUN_TEXTS, min_size=30, max_size=90),
    spelled=st.one_of(st.none(), st.integers(0, 89)),
    first=st.integers(0, 8),
    drop=st.integers(0, 2),
)
def test_a_long_run_reads_as_the_stepped_decoder_reads_it(tokenizer, pieces, spelled, first, drop):
    # pieces with control tokens as ids, one of them (`spelled`) with ordinary tokens only; the
    # run may follow a few ids and end inside a character. One decode call (where it applies)
    # gives the text, marks, held tail and token records that decoding the run in steps gives.
    ids = [
        token_id
        for at, text in enumerate(pieces)
        for token_id in (plain_ids(tokenizer, text) if at == spelled else ids_of(tokenizer, text))
    ]
    ids = ids[: max(0, len(ids) - drop)]
    read, stepped = TokenDecoder(tokenizer), TokenDecoder(tokenizer)
    stepped._whole_runs = False
    texts = []
    for decoder in (read, stepped):
        texts.append(
            decoder.feed(ids[:first])
            + decoder.feed(ids[first:])
            + "|"
            + decoder._held
            + "|"
            + decoder.flush()
        )
    assert texts[0] == texts[1]
    assert read.tokens.ids == stepped.tokens.ids == ids
    assert read.tokens.spelled_out() == stepped.tokens.spelled_out()
    assert read.tokens.pieces == stepped.tokens.pieces
    assert read.tokens.control == stepped.tokens.control


@given(
    ids=st.lists(
        st.one_of(
            st.integers(0, 10**6),
            st.booleans(),
            st.floats(allow_nan=False),
            st.integers(0, 99).map(np.int64),
            st.just("7"),
        ),
        max_size=100,
    )
)
def test_token_id_list_takes_ints_and_names_anything_else(ids):
    for form in (ids, tuple(ids)):
        if all(isinstance(item, (int, np.integer)) for item in ids):
            checked = token_id_list(form)
            assert checked == [int(item) for item in ids]
            assert all(isinstance(item, int) for item in checked)
        else:
            bad = next(item for item in ids if not isinstance(item, (int, np.integer)))
            with pytest.raises(TypeError, match=f"found {type(bad).__name__}"):
                token_id_list(form)
