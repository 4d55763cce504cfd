"""The demo model's training corpus (scripts/demo_corpus.py): what it teaches, and that
the evaluation prompts stay held out."""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest

from tests.support.paths import ROOT

_PATH = ROOT / "scripts" / "demo_corpus.py"
_spec = importlib.util.spec_from_file_location("demo_corpus", _PATH)
demo_corpus = importlib.util.module_from_spec(_spec)
sys.modules["demo_corpus"] = demo_corpus
_spec.loader.exec_module(demo_corpus)

SEED = 20260  # the build's seed (scripts/build_demo_model.py)


@pytest.fixture(scope="module")
def corpus() -> list[dict]:
    return demo_corpus.make_corpus(3000, SEED)


def _offered_names(sample: dict) -> list[str]:
    return [tool["function"]["name"] for tool in sample["tools"]]


def _user_questions(sample: dict) -> list[str]:
    return [m["content"] for m in sample["messages"] if m["role"] == "user"]


def test_the_corpus_is_the_same_for_a_seed():
    assert demo_corpus.make_corpus(50, SEED) == demo_corpus.make_corpus(50, SEED)
    assert demo_corpus.make_corpus(50, SEED) != demo_corpus.make_corpus(50, SEED + 1)


def test_tools_sentence_lists_the_offered_tools_in_order():
    assert demo_corpus._tools_sentence([]) == "No tools are offered."
    assert demo_corpus._tools_sentence(["get_time"]) == "The only offered tool is get_time."
    assert demo_corpus._tools_sentence(["set_alarm", "get_weather", "web_search"]) == (
        "The offered tools are set_alarm, get_weather and web_search."
    )


def test_call_reasoning_names_the_offered_tools_then_a_called_one(corpus):
    calls = [s for s in corpus if s["enable_thinking"] and s["kind"] in ("call", "parallel")]
    assert len(calls) > 300
    for sample in calls:
        turn = sample["messages"][-1]
        listed = demo_corpus._tools_sentence(_offered_names(sample))
        assert listed in turn["reasoning_content"]
        for call in turn["tool_calls"]:
            assert call["function"]["name"] in _offered_names(sample)
            assert turn["reasoning_content"].index(listed) < turn["reasoning_content"].index(
                call["function"]["name"], turn["reasoning_content"].index(listed) + len(listed)
            )


def test_missing_turns_list_the_tools_and_call_none(corpus):
    missing = [s for s in corpus if s["kind"] == "missing"]
    assert len(missing) > 300
    for sample in missing:
        turn = sample["messages"][-1]
        assert "tool_calls" not in turn
        if sample["enable_thinking"]:
            assert demo_corpus._tools_sentence(_offered_names(sample)) in turn["reasoning_content"]
            if sample["tools"]:
                assert "None of them can do that." in turn["reasoning_content"]


def test_no_small_talk_question_is_an_evaluation_question(corpus):
    held_out = {question for question, _ in demo_corpus.EVALUATION_VALUES.chat}
    chat = {q for s in corpus if s["kind"] == "chat" for q in _user_questions(s)}
    assert len(chat) == 27  # the pool's 24 pairs and 3 ways to ask what the tools can do
    assert not held_out & chat


def test_no_evaluation_value_reaches_the_training_corpus(corpus):
    values = demo_corpus.EVALUATION_VALUES
    text = json.dumps(corpus, ensure_ascii=False)
    for value in (*values.cities, *values.topics, *values.titles, *(q for q, _ in values.chat)):
        assert value not in text, value


def test_evaluation_prompts_offer_two_tools_and_alternate_thinking():
    samples = demo_corpus.evaluation_samples(20, SEED + 1)
    assert [s["kind"] for s in samples[:10]] == list(demo_corpus.EVALUATION_KINDS)
    assert all(len(s["tools"]) == 2 for s in samples)
    assert [s["enable_thinking"] for s in samples[:4]] == [False, True, False, True]
