"""Stream checks: chunkings agree with one-shot; truncation inside a delimiter is reported."""

from engine import check_stream, load_template
from engine.authoring.stream_checks import MAX_EVERY_SPLIT, StreamRun, run_chunks, truncation
from engine.template_files import load_template_file

QWEN3 = load_template_file("qwen3").response_template
PREFIX = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"


def test_consistent_sample():
    generation = "<think>\nhm\n</think>\n\nHello<|im_end|>"
    report = check_stream(generation, QWEN3, prefix=PREFIX, seeds=range(3))
    assert report.ok and report.mismatch is None
    assert report.runs == 1 + 1 + (len(generation) - 1) + 3
    assert report.every_split_stride == 1 and report.notes == []
    assert report.baseline.message == {
        "role": "assistant",
        "reasoning_content": "hm",
        "content": "Hello",
    }
    assert report.baseline.regions == [["reasoning_content", "\nhm\n"], ["content", "\n\nHello"]]


def test_truncation_leaks():
    leaks = truncation("Hi<|im_end|>", QWEN3, prefix=PREFIX, step=3)
    assert [(leak.cut, leak.fragment, leak.field, leak.path) for leak in leaks] == [
        (3, "<", "content", "fields.content.close"),
        (6, "<|im", "content", "fields.content.close"),
        (9, "<|im_en", "content", "fields.content.close"),
    ]


def test_long_generation_caps_the_split_check():
    generation = "x" * (MAX_EVERY_SPLIT * 2 + 10)
    report = check_stream(generation, QWEN3, prefix=PREFIX, seeds=range(1), truncation_step=0)
    assert report.ok and report.every_split_stride == 3
    assert report.notes == [
        f"generation has {len(generation)} characters: split check tested every 3th offset, not all {len(generation) - 1}",
        "truncation check skipped",
    ]


def test_mismatch_is_reported(monkeypatch):
    # A parser fault is simulated: any run with more than one chunk loses its content.
    from engine.authoring import stream_checks

    real = stream_checks.run_chunks

    def faulty(template, prefix, chunks, **options):
        chunks = list(chunks)
        run = real(template, prefix, chunks, **options)
        if len(chunks) == 2:
            return StreamRun(run.chunking, run.splits, {"role": "assistant"}, run.regions)
        return run

    monkeypatch.setattr(stream_checks, "run_chunks", faulty)
    report = check_stream("Hello", QWEN3, prefix=PREFIX, seeds=range(1), truncation_step=0)
    assert not report.ok
    assert (report.mismatch.chunking, report.mismatch.splits, report.mismatch.message) == (
        "split@1",
        [1],
        {"role": "assistant"},
    )
    assert report.baseline.message == {"role": "assistant", "content": "Hello"}


def test_a_generation_that_fails_the_same_way_in_every_chunking_passes():
    template = {
        "start_anchor": "<S>",
        "fields": {"c": {"open": "<j>", "close": "</j>", "content": "json"}},
    }
    report = check_stream("ok <j>{bad</j> more", template, prefix="", seeds=range(3))
    assert report.ok
    assert report.baseline.error.startswith(
        "fields.c: json: Expecting property name enclosed in double quotes"
    )


def test_a_spent_budget_stops_the_check_and_says_so():
    # A hostile pattern can spend the regex budget on every feed; the whole check has its own.
    generation = "<think>\nhm\n</think>\n\nHello<|im_end|>"
    stopped = check_stream(generation, QWEN3, prefix=PREFIX, seeds=range(3), max_seconds=0)
    assert (stopped.ok, stopped.complete, stopped.runs, stopped.truncation_leaks) == (
        True,
        False,
        1,
        [],
    )
    assert stopped.notes == ["stopped after the 0 s budget: 0 chunkings compared, the rest not run"]
    finished = check_stream(generation, QWEN3, prefix=PREFIX, seeds=range(3), max_seconds=600)
    assert (finished.complete, finished.runs, finished.notes) == (
        True,
        1 + 1 + (len(generation) - 1) + 3,
        [],
    )


def test_every_run_of_the_stream_check_stops_at_the_parsers_caps():
    template = {
        "start_anchor": "<s>",
        "fields": {"r": {"open": "<r>", "close": "</r>", "repeats": True}, "content": {}},
    }
    report = check_stream("<r>1</r>" * 5, template, prefix="<s>", seeds=range(2), max_regions=2)
    assert report.ok and report.baseline.error == (
        "the parse stopped at stream offset 16: it has opened 2 regions, the most it may "
        "(max_regions); the text after it is not parsed"
    )
    run = run_chunks(load_template(template), "<s>", ["<r>" + "v" * 50], max_value_chars=10)
    assert run.error.startswith("the parse stopped at stream offset")
    assert "max_value_chars" in run.error
