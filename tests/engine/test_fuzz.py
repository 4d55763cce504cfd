"""A short run of the engine fuzzer (scripts/fuzz_engine.py); longer runs are for people: python scripts/fuzz_engine.py --cases 20000."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from tests.support.paths import ROOT

SCRIPT = ROOT / "scripts" / "fuzz_engine.py"


@pytest.fixture(scope="module")
def fuzz_engine():
    spec = importlib.util.spec_from_file_location("fuzz_engine", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["fuzz_engine"] = module
    spec.loader.exec_module(module)
    return module


def test_short_fuzz_run_finds_no_crash(fuzz_engine):
    lines: list[str] = []
    result = fuzz_engine.fuzz(
        300, seed=8, report=lambda *args, **kwargs: lines.append(" ".join(map(str, args)))
    )
    stats = result["stats"]
    print("\n".join(lines))
    assert stats["cases run"] >= 300
    assert stats["parsed"] > 0 and stats["parse errors"] > 0 and stats["templates rejected"] > 0
    assert result["crashes"] == [], "\n".join(lines)


def test_a_crash_is_caught_and_shrunk(fuzz_engine, monkeypatch):
    # An engine fault planted for this test: the shrinker must reduce its input.
    import engine

    original = engine.parser.ResponseParser.feed

    def faulty(self, chunk):
        if "\x00" in chunk and len(chunk) == 1:
            raise KeyError("planted")
        return original(self, chunk)

    monkeypatch.setattr(engine.parser.ResponseParser, "feed", faulty)
    case = {
        "template": {
            "start_anchor": "<S>",
            "fields": {"content": {}, "x": {"open": "<a>", "close": "</a>"}},
        },
        "prefix": "junk<S>",
        "generation": "hello <a>wor\x00ld</a> bye",
        "cuts": [3, 9],
    }
    with pytest.raises(fuzz_engine.Crash) as caught:
        fuzz_engine.run_case(case)
    assert caught.value.signature[:3] == ("exception", "ResponseParser", "KeyError")
    small = fuzz_engine.shrink(case, caught.value.signature)
    assert small["generation"] == "\x00"
    assert list(small["template"]["fields"]) in (["content"], ["x"])


def test_cli_prints_the_figures(fuzz_engine, capsys):
    assert fuzz_engine.main(["--cases", "20", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    for figure in ("cases run: ", "templates rejected: ", "parse errors: ", "crashes: 0"):
        assert figure in out
