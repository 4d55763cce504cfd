"""What one request may allocate, bounded before it is allocated (no server): the redaction of a
message, a visitor's JSON tree, an answer, a download and its clean-up, a reading as tokens, a
worker's address space, the chat-template sandbox and the aligner's prose pattern. The attacks
these stop, against a real server, are rows of `scripts/bench_attacks.py`."""

from __future__ import annotations

import dataclasses
import json
import re
import tracemalloc
from pathlib import Path

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.chat_templates import align
from engine.chat_templates.render import MAX_BUILT, render_function
from playground.panels import message_view
from playground.parse import token_reading
from playground.server import admission, downloads, input_readers, limits, redact, uploads, workers
from playground.server.input_readers import InputError

# The type-name pattern redaction used before: one search at every word boundary.
OLD_TYPE = re.compile(
    r"\b(?:[a-z_]\w*\.)*([A-Z]\w*(?:Error|Exception|Exit|Interrupt|Warning))(?::\s*|\b)"
)
# The aligner's prose pattern before: tried at every letter of a word.
OLD_PROSE = regex.compile(
    r"\w[\w'\-]*(?:(?:[,;:]?[ \t]+|(?<![.!?])\n[ \t]*)\w[\w'\-]*|[.!?]+[ \t]+\w[\w'\-]*)+[.!?]*|\w[\w'\-]*[.!?]+"
)


def with_limits(monkeypatch, **caps):
    monkeypatch.setattr(limits, "LIMITS", dataclasses.replace(limits.LIMITS, **caps))


# -- every text shown is built within a budget -----------------------------------------------


def test_redaction_reads_a_bounded_prefix_in_one_pass(monkeypatch):
    searched = []

    class Counting:
        def __init__(self, pattern):
            self.pattern = pattern

        def finditer(self, text):
            searched.append(len(text))
            return self.pattern.finditer(text)

    monkeypatch.setattr(redact, "_DOTTED", Counting(redact._DOTTED))
    message = "unknown key " + "a." * 500_000
    shown = redact.redact(message)
    assert shown == message[: redact.SHOWN_CHARS] + "… (cut: the message has 1,000,012 characters)"
    assert searched == [redact.SHOWN_CHARS]  # one pass, over the prefix only


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.sampled_from(list("ab_1.: é") + ["Error", "Value", "X", "TemplateError"]), max_size=14
    ).map("".join)
)
def test_type_names_go_as_the_old_pattern_removed_them(text):
    # The engine's own errors go too: the page says what failed in words (`redact.in_words`).
    assert redact._without_types(text) == OLD_TYPE.sub("", text)


def test_quoted_input_and_near_misses_are_bounded():
    assert redact.clip("abc") == "'abc'"
    assert redact.clip("a." * 50, 6) == "'a.a.a.'… (100 characters)"
    assert redact.clip("x" * 90, 4, quoted=False) == "xxxx… (90 characters)"
    assert redact.near_miss("chunkin", ["chunking", "tab"]) == "chunking"
    assert redact.near_miss("chunking" * 3, ["chunking", "tab"]) is None  # not compared
    assert redact.near_miss("x", []) is None


# -- a visitor's JSON tree is bounded before it is walked -------------------------------------


def test_a_json_tree_is_measured_on_its_text_before_it_is_read(monkeypatch):
    with_limits(monkeypatch, json_nodes=1_000, json_depth=4)
    assert input_readers.json_shape('{"a": [1, 2, {"b": "[,,]"}]}') == (3, 6)
    with pytest.raises(InputError) as caught:
        input_readers.read_json("[" + "0," * 1_000 + "0]", "The tools JSON", 10_000)
    assert str(caught.value) == (
        "The tools JSON holds too many JSON values: 1,002 (limit 1,000, PLAYGROUND_LIMITS json_nodes)."
    )
    with pytest.raises(InputError) as caught:
        input_readers.read_json("[[[[[0]]]]]", "The template", 10_000)
    assert str(caught.value) == "The template is nested too deeply: 5 levels (limit 4)."
    assert input_readers.bounded_json("[[[[[0]]]]]") is None
    assert input_readers.bounded_json('{"a": [1]}') == {"a": [1]}


def test_walking_a_wide_tree_under_a_long_key_writes_no_path_per_item():
    tree = {"k" * 100_000: [0] * 100_000}
    tracemalloc.start()
    input_readers.check_unicode(tree, "The shared state in the link")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    # The walk's own lists (a path string per item would be 10 GB).
    assert peak < 30_000_000
    tree["k" * 100_000][7] = {"x": "\ud83d"}
    with pytest.raises(InputError) as caught:
        input_readers.check_unicode(tree, "The shared state in the link")
    assert str(caught.value) == (
        f"The shared state in the link is not valid Unicode at {'k' * 40}…[7].x: character 0 is a "
        "lone surrogate (U+D83D); an escape such as \\ud83d must come with its pair."
    )


def test_a_long_pattern_is_named_by_a_clipped_path(monkeypatch):
    long_key = "f" * 500
    template = {"fields": {long_key: {"open": "x" * 3_000, "close": "y"}, "content": {}}}
    with pytest.raises(InputError) as caught:
        input_readers.read_template(json.dumps(template))
    assert str(caught.value) == (
        f"Pattern or delimiter too long at fields.{'f' * 40}….open (limit 2,000 characters)."
    )


# -- answers are checked against a cap while they are built -----------------------------------


def test_an_answer_stops_at_its_cap_while_it_is_built(monkeypatch):
    with_limits(monkeypatch, answer_mb=1)
    built = []

    def pieces():
        for number in range(2_000):
            built.append(number)
            yield "x" * 1_000

    with pytest.raises(InputError) as caught:
        downloads.answer_text(pieces(), "The exported tokenizer_config.json")
    assert str(caught.value) == (
        "The exported tokenizer_config.json is too large: more than 1,000,000 characters "
        "(limit PLAYGROUND_LIMITS answer_mb)."
    )
    assert len(built) == 1_001  # the rest was never built
    assert downloads.answer_text(["a", "b"]) == "ab"


def test_the_openai_view_is_cut_at_the_answer_cap(monkeypatch):
    from engine.authoring.samples import load_samples
    from playground.parse.parse_view import traced_view

    sample = next(s for s in load_samples() if s.id == "qwen3/text-then-tool-calls")
    view = traced_view(sample.template, sample.prefix, sample.generation, sample.tools)
    whole = message_view.openai_stream(view)
    with_limits(monkeypatch, answer_mb=1)
    assert message_view.openai_stream(view) == whole  # far below the cap: unchanged
    lines = whole.split("\n")
    cap = len(lines[0]) + len(lines[1]) + 2
    monkeypatch.setattr(
        limits, "LIMITS", dataclasses.replace(limits.LIMITS, answer_mb=cap / 1_000_000)
    )
    cut = message_view.openai_stream(view).split("\n")
    assert cut[:3] == [
        lines[0],
        lines[1],
        f"// cut: the deltas pass {cap:,} characters (PLAYGROUND_LIMITS answer_mb); "
        "the message JSON holds the whole message",
    ]


# -- downloads: written once, within the caps, counted and cleaned up ------------------------


@pytest.fixture
def client_of_request(monkeypatch, tmp_path):
    """Requests from one client address, its files counted in a ledger of this test's own and
    Gradio's cache in `tmp_path`."""
    monkeypatch.setattr(admission, "current_client", lambda: "10.9.0.1")
    ledger = uploads.UploadLedger()
    monkeypatch.setattr(uploads, "LEDGER", ledger)
    monkeypatch.setattr(downloads, "LEDGER", ledger)
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "gradio"))
    return ledger


def test_a_download_is_charged_twice_and_replaces_the_clients_earlier_one(client_of_request):
    ledger = client_of_request
    first = Path(downloads.write_download("tokenizer_config.json", ["{", "}\n"]))
    assert first.read_text() == "{}\n" and ledger.held_bytes("10.9.0.1") == 2 * 3
    copy = downloads.gradio_copy(first)
    copy.parent.mkdir(parents=True)
    copy.write_text("{}\n")  # what Gradio does with a returned file
    second = Path(downloads.write_download("tokenizer_config.json", '{"a": 1}\n'))
    assert not first.exists() and not copy.exists() and not copy.parent.exists()
    assert ledger.held_bytes("10.9.0.1") == 2 * 9
    second_copy = downloads.gradio_copy(second)
    second_copy.parent.mkdir(parents=True)
    second_copy.write_text('{"a": 1}\n')
    second.unlink()  # swept once Gradio has its copy: the copy still counts
    assert ledger.held_bytes("10.9.0.1") == 2 * 9
    assert uploads.remove_uploads("10.9.0.1") == 1  # the page closed: Gradio's copy goes
    assert not second_copy.exists() and ledger.held_bytes("10.9.0.1") == 0


def test_a_download_past_the_cap_or_the_quota_writes_nothing(client_of_request, monkeypatch):
    with_limits(monkeypatch, answer_mb=1, client_upload_mb=1)
    with pytest.raises(InputError) as caught:
        downloads.write_download("big.json", ("x" * 100_000 for _ in range(20)), "The export")
    assert str(caught.value) == (
        "The export would take your files on the server past their quota (1.0 MB left, "
        "PLAYGROUND_LIMITS client_upload_mb and uploads_mb count downloads twice, for Gradio's "
        "copy): close older pages or try again later; nothing was written."
    )
    with_limits(monkeypatch, answer_mb=1, client_upload_mb=100)
    with pytest.raises(InputError) as caught:
        downloads.write_download("big.json", ("x" * 100_000 for _ in range(20)), "The export")
    assert str(caught.value) == (
        "The export is too large: more than 1,000,000 bytes (limit PLAYGROUND_LIMITS answer_mb); "
        "nothing was written."
    )
    assert [path for path in downloads._root.rglob("big.json")] == []


# -- a reading as tokens is bounded before it encodes -----------------------------------------


def test_a_reading_as_tokens_is_refused_past_its_caps(monkeypatch):
    with_limits(monkeypatch, token_reading_chars=1_000, token_reading_ids=500)
    with pytest.raises(InputError) as caught:
        token_reading.reading_for(token_reading.READ_DEMO, "", "😀" * 1_001)
    assert str(caught.value) == (
        "Read as tokens: the generation has 1,001 characters, more than 1,000 can be read as "
        "token ids (PLAYGROUND_LIMITS token_reading_chars); read it as text, or paste less."
    )
    reading = token_reading.reading_for(token_reading.READ_DEMO, "", "😀" * 1_000)
    with pytest.raises(InputError) as caught:
        reading.ids("😀" * 1_000)  # four ids an emoji
    assert str(caught.value) == (
        "Read as tokens: the generation gives more than 500 token ids "
        "(PLAYGROUND_LIMITS token_reading_ids); read it as text, or paste less."
    )
    with pytest.raises(InputError) as caught:
        reading.ids("hello", until=0.0)  # a deadline already past
    assert str(caught.value) == (
        "Reading the generation as tokens was stopped after 10 s (the time budget "
        "PLAYGROUND_LIMITS parse_seconds)."
    )


def test_a_reading_in_pieces_gives_the_ids_of_one_encoding(monkeypatch):
    monkeypatch.setattr(token_reading, "ENCODE_PIECE_CHARS", 40)
    reading = token_reading.reading_for(token_reading.READ_DEMO, "", "")
    text = "".join(f"line {n} of the output <tool_call>\n" for n in range(30))
    whole = reading.tokenizer.encode(text, add_special_tokens=False)
    assert reading.ids(text) == whole


# A template that keeps a new string of a million characters at each step: within every sandbox
# bound, so only the worker's address space stops it.
FILLING = (
    "{% set ns = namespace(kept=[]) %}{% for i in range(100000) %}"
    "{% set ns.kept = ns.kept + [('x' * 1000000) ~ i] %}{% endfor %}{{ ns.kept|length }}"
)
DOUBLING = (
    "{% set ns = namespace(s='x') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}"
    "{% endfor %}{{ ns.s|length }}"
)


# -- a worker's address space, and the chat-template sandbox -----------------------------------


def test_a_worker_that_passes_its_address_space_dies_alone_with_a_clear_error():
    outcome = workers.run_job(
        "chat_template",
        {
            "messages": [{"role": "user", "content": "hi"}],
            "tools": None,
            "chat_template": FILLING,
            "keywords": {},
        },
        seconds=60,
        memory_mb=1_500,
    )
    assert outcome.result is None and outcome.error in (
        "the job ran out of memory (a worker may use 1,500 MB, PLAYGROUND_LIMITS worker_mb)",
        "the worker process stopped before it answered (it may have passed its memory limit, "
        "1,500 MB, PLAYGROUND_LIMITS worker_mb)",
    )
    assert workers.running_workers() == 0


@pytest.mark.parametrize(
    ("source", "refusal"),
    [
        (
            "{{ 'x' * 2000000000 }}",
            "the chat template builds with '*' a value (characters, items or bits) of "
            "2,000,000,000 (at most 1,000,000 in this sandbox)",
        ),
        (
            "{{ 3 * [0, 1] * 600000 }}",
            "the chat template builds with '*' a value (characters, items or bits) of "
            "3,600,000 (at most 1,000,000 in this sandbox)",
        ),
        (
            "{{ 'a'|center(2000000000) }}",
            "the chat template pads a string to a width of 2,000,000,000 (at most 1,000,000 in this sandbox)",
        ),
        (
            "{{ 'a'.rjust(5000000) }}",
            "the chat template pads a string to a width of 5,000,000 (at most 1,000,000 in this sandbox)",
        ),
        (
            "{{ '%2000000000s' % 'a' }}",
            "the chat template builds with '%' a value (characters, items or bits) of "
            "2,000,000,000 (at most 1,000,000 in this sandbox)",
        ),
        (
            "{% set s = 'x' * 1000000 %}{{ s + s + s + s + s + s + s + s + s + s + s + s + s + s + s + s + s }}",
            "the chat template builds with '+' a value (characters, items or bits) of "
            "17,000,000 (at most 16,000,000 in this sandbox)",
        ),
        (
            DOUBLING,
            "the chat template joins strings into one of 16,777,216 (at most 16,000,000 in this sandbox)",
        ),
        (
            "{{ 7 ** 9000000 }}",
            "the chat template builds with '**' a value (characters, items or bits) of "
            "27,000,000 (at most 1,000,000 in this sandbox)",
        ),
    ],
)
def test_the_sandbox_refuses_to_build_past_its_bound(source, refusal):
    from jinja2.sandbox import SecurityError

    with pytest.raises(SecurityError) as caught:
        render_function()(conversations=[[{"role": "user", "content": "hi"}]], chat_template=source)
    assert str(caught.value) == refusal


def test_the_sandbox_renders_what_stays_within_its_bound():
    source = (
        "{{ 'ab' * 3 }}|{{ [0] * 2 }}|{{ 2 ** 10 }}|{{ '%-4s|%d' % ('a', 7) }}|{{ 'a'|center(5) }}|"
        "{{ ('x' * " + str(MAX_BUILT) + ") | length }}"
    )
    rendered = render_function()(
        conversations=[[{"role": "user", "content": "hi"}]], chat_template=source
    )
    assert rendered[0][0] == f"ababab|[0, 0]|1024|a   |7|  a  |{MAX_BUILT}"


# -- the aligner's prose pattern ---------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=list("ab1_'-.,!?: \t\n<[]é"), max_size=16))
def test_the_prose_pattern_finds_what_it_found_before(text):
    assert [m.span() for m in align.PROSE.finditer(text)] == [
        m.span() for m in OLD_PROSE.finditer(text)
    ]


def test_the_prose_pattern_tries_a_long_word_once():
    # One try per word: the search fails at the word's first letter and nowhere inside it.
    word = "a" * 10_000
    assert align.PROSE.search(word) is None
    assert [m.span() for m in align.PROSE.finditer(word + " and more")] == [(0, 10_009)]
