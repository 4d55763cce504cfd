"""The author's loop: ``infer --loop N`` learns, adds the first output the template misreads to
the examples and learns again, reporting each round; a round that loses what earlier examples
taught says so, and the loop keeps the template that misreads the least."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.chat_templates.author_loop import Round, author_loop, kept_round
from engine.chat_templates.evidence import message_differences, read_examples
from engine.chat_templates.parts import InferenceError
from tests.support.paths import ROOT
from tests.support.real_outputs import (
    MORE,
    cases_by_chat_template,
    load_cases,
    manifest,
    needs_real_outputs,
)
from tests.support.weather_outputs import (
    CALL,
    EXAMPLES,
    LISTS_TOOLS,
    OUTPUTS,
    weather_output,
)


def write_jsonl(path: Path, rows: list[dict]) -> str:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return str(path)


def run_infer(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "engine", "infer", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "400"},
    )


def run_on_weather(tmp_path: Path, examples: list[dict], *options: str):
    """`infer` on the chat template that lists the tools, with `examples` and `options`."""
    (tmp_path / "chat.jinja").write_text(LISTS_TOOLS, encoding="utf-8")
    given = write_jsonl(tmp_path / "examples.jsonl", examples)
    return run_infer("--chat-template", "chat.jinja", "--examples", given, *options, cwd=tmp_path)


def test_the_loop_adds_the_first_unread_output_and_the_next_round_reads_everything(tmp_path):
    outputs = write_jsonl(tmp_path / "outputs.jsonl", OUTPUTS)
    done = run_on_weather(tmp_path, EXAMPLES, "--outputs", outputs, "--loop", "3")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[:7] == [
        "round 1: 2 examples (example 1, example 2): outputs 1 of 3 read, examples 2 of 2 read",
        "  UNREAD output 2: reasoning_content: expected 'The user wants rain news.', got ''; "
        "content: expected 'It rains in Oslo.', got '<r>The user wants rain news.</r>It rains in "
        "Oslo.'",
        "  UNREAD output 3: reasoning_content: expected 'Check the sky first.', got ''; content: "
        "expected '', got '<r>Check the sky first.</r>'",
        "  adding output 2 to the examples",
        "round 2: 3 examples (example 1, example 2, output 2): outputs 2 of 2 read, examples 3 "
        "of 3 read",
        "kept round 2, learnt from: example 1, example 2, output 2 (add these to --examples to "
        "infer without --loop)",
        "inferred from chat.jinja: wrote chat.json",
    ]
    assert lines[-2:] == ["examples: 3 of 3 read", "outputs: 2 of 2 read"]
    written = json.loads((tmp_path / "chat.json").read_text(encoding="utf-8"))
    assert written["response_template"]["fields"]["reasoning_content"] == {
        "open": "<r>",
        "close": "</r>",
    }


def test_the_loop_stops_at_the_examples_asked_for_and_says_what_is_still_unread(tmp_path):
    outputs = write_jsonl(tmp_path / "outputs.jsonl", OUTPUTS)
    done = run_on_weather(tmp_path, EXAMPLES, "--outputs", outputs, "--loop", "2", "--json")
    assert done.returncode == 1, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert [each["round"] for each in result["rounds"]] == [1]
    assert result["rounds"][0]["outputs_read"] == 1 and result["rounds"][0]["added"] == ""
    assert result["kept_round"] == 1
    assert result["unread_examples"] == []
    assert [problem.split(":")[0] for problem in result["unread_outputs"]] == [
        "output 2",
        "output 3",
    ]


@pytest.mark.parametrize(
    ("wrong", "why"),
    [
        (
            weather_output("It is sunny.<|end|>", content="It is rainy."),
            "content: expected 'It is rainy.', got 'It is sunny.'",
        ),
        (
            weather_output(CALL.format('{"city": "Lima"}'), calls=[{"city": "Lima", "days": 3}]),
            'tool_calls: expected [(\'get_weather\', \'{"city": "Lima", "days": 3}\')], '
            "got [('get_weather', '{\"city\": \"Lima\"}')]",
        ),
    ],
    ids=["content", "arguments"],
)
def test_an_example_its_output_contradicts_is_named_and_costs_the_others_nothing(
    tmp_path, wrong, why
):
    """An example whose expected message its output does not say is named with what differs;
    the call syntax the two others teach is still learnt, so they are read."""
    done = run_on_weather(tmp_path, [*EXAMPLES, wrong])
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.splitlines()[-2:] == ["examples: 2 of 3 read", f"  UNREAD example 3: {why}"]


def test_the_loop_needs_outputs_to_add(tmp_path):
    done = run_on_weather(tmp_path, EXAMPLES, "--loop", "3")
    assert done.returncode == 2
    assert done.stdout.strip() == (
        "error: --loop N needs --outputs FILE: the loop adds the first output the template "
        "cannot read to the examples, up to N examples"
    )


@pytest.mark.parametrize(
    ("outputs", "loop", "said"),
    [
        ([], "3", "error: empty.jsonl holds no output"),
        (
            OUTPUTS,
            "1",
            "error: --loop 1 is below the 2 examples given: N counts every example a "
            "round learns from, those given included",
        ),
        (OUTPUTS, "0", "error: --loop N needs N >= 1, got 0"),
    ],
    ids=["no-output", "below-the-examples", "zero"],
)
def test_a_loop_it_cannot_run_says_which_part_is_wrong(tmp_path, outputs, loop, said):
    write_jsonl(tmp_path / "empty.jsonl", outputs)
    done = run_on_weather(tmp_path, EXAMPLES, "--outputs", "empty.jsonl", "--loop", loop)
    assert (done.returncode, done.stdout.strip()) == (2, said)


def test_a_loop_on_outputs_alone_reports_the_examples_it_took(tmp_path):
    """Without --examples the loop's examples are outputs it took; their count is still said
    (a misread one is what makes the exit 1), and the JSON holds `unread_examples`."""
    write_jsonl(tmp_path / "outputs.jsonl", [EXAMPLES[1], OUTPUTS[1]])
    (tmp_path / "chat.jinja").write_text(LISTS_TOOLS, encoding="utf-8")
    args = ("--chat-template", "chat.jinja", "--outputs", "outputs.jsonl", "--loop", "2")
    done = run_infer(*args, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert [line for line in lines if line.startswith(("round", "kept"))] == [
        "round 1: 0 examples: outputs 0 of 2 read",
        "round 2: 1 example (output 1): outputs 0 of 1 read, examples 1 of 1 read",
        "round 3: 2 examples (output 1, output 2): outputs 0 of 0 read, examples 2 of 2 read",
        "kept round 3, learnt from: output 1, output 2 (add these to --examples to infer "
        "without --loop)",
    ]
    assert lines[-2:] == ["examples: 2 of 2 read", "outputs: 0 of 0 read"]
    result = json.loads(run_infer(*args, "--json", cwd=tmp_path).stdout)
    assert (result["unread_examples"], result["unread_outputs"]) == ([], [])


def test_what_is_learnt_from_an_output_the_loop_took_names_that_output(tmp_path):
    """The learner is given each example's name, so its findings cite "output 1" as the rounds
    do, not its place among the examples ("example 1")."""
    write_jsonl(tmp_path / "outputs.jsonl", [EXAMPLES[1], OUTPUTS[1]])
    (tmp_path / "chat.jinja").write_text(LISTS_TOOLS, encoding="utf-8")
    done = run_infer(
        "--chat-template", "chat.jinja", "--outputs", "outputs.jsonl", "--loop", "2", cwd=tmp_path
    )
    lines = done.stdout.splitlines()
    assert "note: the tool-call syntax comes from the example outputs (output 1)" in lines
    assert not any("example 1" in line or "example 2" in line for line in lines)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            '\n\n{"prefix": "p", "output": 3}\n',
            "error: outputs.jsonl:3: output: a string is required",
        ),
        (
            '{"prefix": "p", "output": "o"}\n\n[1]\n',
            "error: outputs.jsonl:3: an example is a dict with prefix and output, got list",
        ),
        (
            '{"prefix": "p", "output": "o", "name": 2}\n',
            "error: outputs.jsonl:1: name: a string is required, got int",
        ),
    ],
    ids=["output", "not-a-dict", "name"],
)
def test_a_malformed_row_is_named_by_its_file_and_line(tmp_path, text, said):
    (tmp_path / "outputs.jsonl").write_text(text, encoding="utf-8")
    done = run_on_weather(tmp_path, EXAMPLES, "--outputs", "outputs.jsonl")
    assert (done.returncode, done.stdout.strip()) == (2, said)


@pytest.mark.parametrize("option", ["--examples", "--outputs"])
def test_a_file_that_is_not_utf8_is_named(tmp_path, option):
    (tmp_path / "chat.jinja").write_text(LISTS_TOOLS, encoding="utf-8")
    (tmp_path / "latin.jsonl").write_bytes(b'{"prefix": "p", "output": "caf\xe9"}\n')
    done = run_infer("--chat-template", "chat.jinja", option, "latin.jsonl", cwd=tmp_path)
    assert (done.returncode, done.stdout.strip()) == (
        2,
        "error: latin.jsonl: not UTF-8 text (byte 0xe9 at offset 30); save it as UTF-8",
    )


# -- a round that loses what earlier examples taught ------------------------------------------------

READS_CALLS = {
    "start_anchor": "<|assistant|>",
    "fields": {
        "tool_calls": {
            "open": "<calls>",
            "close": "</calls>",
            "content": "json",
            "transform_each": True,
            "transform": {
                "type": "function",
                "function": {"name": "{name}", "arguments": "{arguments}"},
            },
        },
        "content": {"close": "<|end|>"},
    },
}
READS_REASONING = {
    "start_anchor": "<|assistant|>",
    "fields": {
        "reasoning_content": {"open": "<r>", "close": "</r>"},
        "content": {"close": "<|end|>"},
    },
}


def test_a_round_that_loses_what_an_earlier_round_read_says_lost_and_is_set_aside():
    """The learner is the loop's argument: here one that reads calls from two examples and
    forgets them once a third is added. The second round fixes output 2 but loses both examples
    and output 1: it says LOST for each, sets output 2 aside and the third round starts again
    from the first round's examples with output 3; that one loses the same, and the loop keeps
    round 1 (nothing else to try)."""

    def learn(examples: list[dict]) -> dict:
        return READS_CALLS if len(examples) < 3 else READS_REASONING

    shown = []
    rounds = author_loop(
        learn,
        read_examples(EXAMPLES),
        read_examples(OUTPUTS, "output"),
        3,
        on_round=shown.append,
        template_of=lambda template: template,
    )
    assert shown == rounds
    assert [(each.examples, each.set_aside != "", each.added) for each in rounds] == [
        (["example 1", "example 2"], False, "output 2"),
        (["example 1", "example 2", "output 2"], True, "output 3"),
        (["example 1", "example 2", "output 3"], True, ""),
    ]
    second = rounds[1]
    assert [(each.label, each.lost) for each in second.misread_examples] == [
        ("example 1", True),
        ("example 2", True),
    ]
    assert [(each.label, each.lost) for each in second.misread_outputs] == [
        ("output 1", True),
        ("output 3", False),
    ]
    assert second.lines() == [
        "round 2: 3 examples (example 1, example 2, output 2): outputs 0 of 2 read, examples 1 "
        "of 3 read",
        "  LOST example 1: content: expected 'Let me look.', got 'Let me look.<calls>[{\"name\": "
        '"get_weather", "arguments": {"…; tool_calls: expected [(\'get_weather\', '
        '\'{"city": "Oslo", "days": 2}\')], got []',
        '  LOST example 2: content: expected \'\', got \'<calls>[{"name": "get_weather", '
        '"arguments": {"city": "Lima…; tool_calls: expected [(\'get_weather\', '
        '\'{"city": "Lima"}\')], got []',
        '  LOST output 1: content: expected \'\', got \'<calls>[{"name": "get_weather", '
        '"arguments": {"city": "Kyiv…; tool_calls: expected [(\'get_weather\', '
        '\'{"city": "Kyiv"}\')], got []',
        '  UNREAD output 3: content: expected \'\', got \'<calls>[{"name": "get_weather", '
        '"arguments": {"city": "Accr…; tool_calls: expected [(\'get_weather\', '
        '\'{"city": "Accra"}\')], got []',
        "  setting output 2 aside: its template misreads 4, no fewer than round 1's (2), so the "
        "next round starts from round 1's examples",
        "  adding output 3 to the examples",
    ]
    assert rounds[2].outputs == 2 and rounds[2].read_outputs == 1
    assert kept_round(rounds) is rounds[0]


def test_the_loop_raises_what_the_first_round_could_not_learn():
    def learn(examples: list[dict]) -> dict:
        raise ValueError("nothing to learn from")

    with pytest.raises(ValueError, match="^nothing to learn from$"):
        author_loop(learn, read_examples(EXAMPLES), read_examples(OUTPUTS, "output"), 4)


def test_a_later_round_whose_learning_fails_sets_its_output_aside():
    def learn(examples: list[dict]) -> dict:
        if len(examples) > 2:
            raise ValueError("the examples disagree")
        return READS_CALLS

    rounds = author_loop(
        learn,
        read_examples(EXAMPLES),
        read_examples(OUTPUTS, "output"),
        3,
        template_of=lambda template: template,
    )
    assert [each.lines()[0] for each in rounds[1:]] == [
        "round 2: 3 examples (example 1, example 2, output 2): learning failed: the examples "
        "disagree",
        "round 3: 3 examples (example 1, example 2, output 3): learning failed: the examples "
        "disagree",
    ]
    assert rounds[1].lines()[1:] == [
        "  setting output 2 aside: learning failed with it, so the next round starts from "
        "round 1's examples",
        "  adding output 3 to the examples",
    ]
    assert kept_round(rounds) is rounds[0]


READS_NOTHING = {"start_anchor": "<|assistant|>", "fields": {"content": {"close": "<|end|>"}}}
READS_BOTH = {
    "start_anchor": "<|assistant|>",
    "fields": {
        "reasoning_content": READS_REASONING["fields"]["reasoning_content"],
        "tool_calls": READS_CALLS["fields"]["tool_calls"],
        "content": {"close": "<|end|>"},
    },
}


def test_an_output_set_aside_is_tried_again_once_a_later_round_becomes_the_best():
    """The learner (keyed by the names the loop gives it) learns nothing until output 2 is an
    example. Output 1 is set aside against round 1's examples (a tie); round 3 becomes the best,
    so output 1 is tried again against its examples, and teaches the rest."""
    taught = {
        ("example 1", "example 2", "output 2"): READS_REASONING,
        ("example 1", "example 2", "output 2", "output 1"): READS_BOTH,
    }
    given = []

    def learn(examples: list[dict]) -> dict:
        names = tuple(each["name"] for each in examples)
        given.append(names)
        return taught.get(names, READS_NOTHING)

    rounds = author_loop(
        learn,
        read_examples(EXAMPLES),
        read_examples(OUTPUTS, "output"),
        4,
        template_of=lambda template: template,
    )
    assert given == [
        ("example 1", "example 2"),
        ("example 1", "example 2", "output 1"),
        ("example 1", "example 2", "output 2"),
        ("example 1", "example 2", "output 2", "output 1"),
    ]
    assert rounds[1].lines()[-2:] == [
        "  setting output 1 aside: its template misreads 5, no fewer than round 1's (5), so the "
        "next round starts from round 1's examples",
        "  adding output 2 to the examples",
    ]
    assert rounds[2].added == "output 1"
    assert rounds[3].lines() == [
        "round 4: 4 examples (example 1, example 2, output 2, output 1): outputs 1 of 1 read, "
        "examples 4 of 4 read"
    ]
    assert kept_round(rounds) is rounds[3]


def test_a_round_that_runs_out_of_time_says_so_and_not_that_its_output_failed():
    def learn(examples: list[dict]) -> dict:
        if len(examples) > 2:
            raise InferenceError("inference ran out of time after 1 s", hint="time_budget")
        return READS_CALLS

    rounds = author_loop(
        learn,
        read_examples(EXAMPLES),
        read_examples(OUTPUTS, "output"),
        3,
        template_of=lambda template: template,
    )
    assert rounds[1].lines() == [
        "round 2: 3 examples (example 1, example 2, output 2): learning failed: inference ran out "
        "of time after 1 s",
        "  setting output 2 aside: learning ran out of time, so the next round starts from round "
        "1's examples",
        "  adding output 3 to the examples",
    ]


@pytest.mark.parametrize(
    ("examples", "headline"),
    [
        ([], "round 1: 0 examples: outputs 3 of 3 read"),
        (
            ["example 1"],
            "round 1: 1 example (example 1): outputs 3 of 3 read, examples 1 of 1 read",
        ),
    ],
    ids=["none", "one"],
)
def test_a_rounds_headline_counts_its_examples_in_words(examples, headline):
    assert Round(1, examples, 3, template={}).lines() == [headline]


def test_the_benchmark_says_what_the_loop_is_scored_on_and_when_its_first_round_failed(capsys):
    bench = _bench_infer()
    row = bench.Row(
        "chat_templates", "x.jinja", scores={"calls": (1, 3, 0, 0), "loop": (0, 3, 0, 0)}
    )
    row.loop_rounds = ["round 1: learning failed: nothing to learn from"]
    bench.print_loop([row])
    assert capsys.readouterr().out.splitlines()[1:3] == [
        "the author's loop (from 2 call-making examples, up to 4; scored on the outputs left "
        "after the ones it took as examples):",
        f"  {'x.jinja':52}       1/3 ->       0/3  (the first round learnt nothing)",
    ]


# -- the short line --------------------------------------------------------------------------------


def test_a_long_value_is_shown_around_where_it_first_differs():
    expected = {"content": "a" * 100 + "XYZ" + "b" * 100}
    got = {"content": "a" * 100 + "XQZ" + "b" * 100}
    assert message_differences(expected, got, width=30) == [
        f"content: expected …{'a' * 9}XYZ{'b' * 18}…, got …{'a' * 9}XQZ{'b' * 18}…"
    ]
    assert message_differences({"content": "short"}, {"content": "shorter"}, width=30) == [
        "content: expected 'short', got 'shorter'"
    ]


# -- on a real chat template -------------------------------------------------------------------------


@needs_real_outputs
def test_the_loop_on_a_real_chat_template_reads_every_output_in_one_round(tmp_path):
    """Nemotron 3 Nano's first two call-making outputs teach all its other ten."""
    name = "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja"
    entry = next(each for each in manifest(MORE) if each["file"] == name)
    cases = cases_by_chat_template(load_cases())[name]
    calling = [case for case in cases if case["expected"].get("tool_calls")][:2]
    rest = [case for case in cases if case not in calling]

    def rows(chosen: list[dict]) -> list[dict]:
        keys = ("prefix", "output", "tools", "expected")
        return [{key: case.get(key) or "" for key in keys if case.get(key)} for case in chosen]

    done = run_infer(
        "--chat-template",
        str(MORE / name),
        "--bos-token",
        entry["bos_token"],
        "--eos-token",
        entry["eos_token"],
        "--examples",
        write_jsonl(tmp_path / "examples.jsonl", rows(calling)),
        "--outputs",
        write_jsonl(tmp_path / "outputs.jsonl", rows(rest)),
        "--loop",
        "4",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == (
        "round 1: 2 examples (example 1, example 2): outputs 10 of 10 read, examples 2 of 2 read"
    )
    assert not any(line.startswith("round 2") for line in lines)
    assert lines[-2:] == ["examples: 2 of 2 read", "outputs: 10 of 10 read"]


@pytest.mark.parametrize("width", [None, 60])
def test_the_short_line_keeps_agreeing_messages_agreeing(width):
    message = {"content": "x" * 200, "tool_calls": [{"function": {"name": "f", "arguments": {}}}]}
    assert message_differences(message, dict(message), width) == []


@needs_real_outputs
def test_the_inference_benchmark_counts_the_chat_templates_the_loop_leaves_right(capsys):
    """`bench_infer.py --loop` prints each chat template's rounds and the count side by side."""
    bench = _bench_infer()
    name = "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja"
    assert bench.main(["--shared", str(MORE.parent), "--only", name, "--loop"]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = lines.index(
        "the author's loop (from 2 call-making examples, up to 4; scored on the outputs left "
        "after the ones it took as examples):"
    )
    assert [line.split() for line in lines[at + 1 : at + 3]] == [
        [name, "10/10", "->", "10/10", "(kept", "round", "1", "of", "1)"],
        "round 1: 2 examples (example 1, example 2): outputs 10 of 10 read, examples 2 of 2 "
        "read".split(),
    ]
    assert lines[at + 3 : at + 5] == [
        "chat templates right on all their other outputs: after 2 call-making examples 1 of 1, "
        "after the author's loop 1 of 1",
        "chat templates right on all their other outputs, those marked doubt included: after 2 "
        "call-making examples 1 of 1, after the author's loop 1 of 1",
    ]


def _bench_infer():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "bench_infer", ROOT / "scripts" / "bench_infer.py"
    )
    module = sys.modules["bench_infer"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
