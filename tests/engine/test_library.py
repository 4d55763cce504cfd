"""The engine as a library: shipped templates by name, the installed package, and the CLI's warnings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile

import pytest

import engine
from engine.authoring.samples import load_samples
from engine.cli import main as cli
from engine.template_files import TEMPLATES_DIR, template_names
from tests.support.paths import ROOT

QWEN3_FILE = ROOT / "templates" / "qwen3.json"
QWEN3 = json.loads(QWEN3_FILE.read_text(encoding="utf-8"))
GENERATION = "<think>\nSum it.\n</think>\n\nIt is 4."
EXPECTED = {"role": "assistant", "reasoning_content": "Sum it.", "content": "It is 4."}


@pytest.mark.parametrize(
    "given",
    [
        "qwen3",
        str(QWEN3_FILE),
        QWEN3_FILE,
        QWEN3,
        json.dumps(QWEN3),
        QWEN3["response_template"],
        json.dumps(QWEN3["response_template"]),
    ],
    ids=["name", "path", "Path", "wrapper", "wrapper-text", "template", "template-text"],
)
def test_load_template_takes_a_name_a_path_a_wrapper_or_the_template(given):
    loaded = engine.load_template(given)
    assert loaded.source == QWEN3["response_template"]
    assert engine.parse_response(GENERATION, given, prefix="<|im_start|>assistant\n") == EXPECTED


def test_an_unknown_name_lists_the_shipped_ones():
    with pytest.raises(FileNotFoundError) as raised:
        engine.load_template("qwen4")
    assert (
        str(raised.value)
        == f"no template file {TEMPLATES_DIR / 'qwen4.json'} (shipped templates: {', '.join(template_names())})"
    )


def test_list_templates_gives_names_models_and_templates():
    shipped = {template.name: template for template in engine.list_templates()}
    assert sorted(shipped) == sorted(
        p.stem for p in (ROOT / "templates").glob("*.json") if not p.name.endswith(".schema.json")
    )
    assert shipped["qwen3"].models[0] == "Qwen/Qwen3-0.6B"
    assert shipped["qwen3"].response_template == QWEN3["response_template"]
    assert all(template.models and template.description for template in shipped.values())


def test_the_wheel_ships_the_templates_and_works_outside_the_checkout(tmp_path):
    """Build the wheel, install it into a folder, and parse by name from a directory outside the checkout."""
    wheels, target, elsewhere = tmp_path / "wheels", tmp_path / "site", tmp_path / "elsewhere"
    elsewhere.mkdir()
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(wheels), str(ROOT)],
        check=True,
        timeout=300,
    )
    [wheel] = wheels.glob("response_templates-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "engine/templates/qwen3.json" in names and "engine/parser.py" in names
    assert "engine/samples/qwen3.json" in names and "engine/authoring/trace.py" in names
    assert not [name for name in names if name.startswith("engine/samples/demo-model/")]
    assert not [
        name for name in names if name.startswith(("playground/", "tests/", "samples/", "scripts/"))
    ]
    subprocess.run(
        [*pip, "install", "--no-deps", "--target", str(target), str(wheel)], check=True, timeout=300
    )
    script = (
        "import sys, engine, json; from engine.authoring.samples import load_samples; "
        "print(json.dumps([engine.__file__, engine.parse_response(sys.argv[1], engine.load_template('qwen3'), prefix=''),"
        " sorted(m for m in ('torch', 'gradio', 'transformers') if m in sys.modules), len(load_samples())]))"
    )
    environment = {**os.environ, "PYTHONPATH": str(target)}
    done = subprocess.run(
        [sys.executable, "-c", script, GENERATION],
        cwd=elsewhere,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    location, message, heavy, sample_count = json.loads(done.stdout)
    assert location == str(target / "engine" / "__init__.py")
    assert sample_count == len(load_samples())
    assert message == EXPECTED
    assert heavy == []
    cli_run = subprocess.run(
        [sys.executable, "-m", "engine", "lint", "qwen3"],
        cwd=elsewhere,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (cli_run.returncode, cli_run.stdout) == (0, "no findings\n")


def test_parse_without_a_prefix_says_so(tmp_path, capsys):
    generation = tmp_path / "generation.txt"
    generation.write_text("Thinking.\n</think>\n\nIt is 4.")
    assert cli(["parse", "qwen3", str(generation)]) == 0
    captured = capsys.readouterr()
    assert captured.err.startswith(
        "note: no --prefix, so the prefix is empty: a region the chat template opens in the prompt"
    )
    assert json.loads(captured.out) == {
        "role": "assistant",
        "content": "Thinking.\n</think>\n\nIt is 4.",
    }
    assert cli(["parse", "qwen3", str(generation), "--prefix", os.devnull]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("name", ["qwen3", "qwq", "smollm3"])
def test_the_missing_prefix_warning_fires_for_pattern_closes(name):
    result = engine.trace("Thinking.\n</think>\n\nIt is 4.", name, prefix="")
    assert [warning.code for warning in result.warnings] == ["close-without-open"]
    assert result.warnings[0].message.startswith(
        "'</think>', the close delimiter of reasoning_content (its open is '<think>')"
    )


def test_check_explains_truncation_leaks_and_exits_zero(tmp_path, capsys):
    samples = tmp_path / "samples.json"
    samples.write_text(
        json.dumps(
            {
                "cases": [
                    {
                        "name": "short",
                        "prefix": "",
                        "generation": "Hi<|im_end|>",
                        "expected": {"role": "assistant", "content": "Hi"},
                    }
                ]
            }
        )
    )
    assert cli(["check", "qwen3", str(samples), "--seeds", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "ok   short  (15 chunkings agree; 9 truncation leaks)"
    assert lines[1] == "    leak: cut at 3 leaves '<' of '<|im_end|>' at the end of content"
    assert lines[-2:] == [
        "1 samples, 0 failure(s)",
        "1 sample(s) with truncation leaks: when a generation stops inside a delimiter (a token limit), the delimiter's "
        "first characters end up as text at the end of a field. This is a warning about cut-off streams, not a failure: "
        "the exit status counts only failures. See docs/cli.md.",
    ]
