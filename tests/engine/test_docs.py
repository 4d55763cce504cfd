"""The repository documents itself: the docs cover the format, the README's commands run as
written, the Space's requirements match the package's, and nothing points outside the repository."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from engine import load_template
from engine.template import CONTENT_ARGS, FIELD_KEYS, TEMPLATE_KEYS
from tests.support.paths import ROOT

DOCS = ROOT / "docs"
LANGUAGE = (DOCS / "template-language.md").read_text(encoding="utf-8")
README = (ROOT / "README.md").read_text(encoding="utf-8")


def tracked_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    return [ROOT / name for name in listed.split("\0") if name and (ROOT / name).is_file()]


@pytest.mark.parametrize(
    "key",
    sorted(
        {
            *TEMPLATE_KEYS,
            *FIELD_KEYS,
            *CONTENT_ARGS,
            *(arg for args in CONTENT_ARGS.values() for arg in args),
        }
    ),
)
def test_the_language_reference_covers_every_key(key):
    assert f"`{key}`" in LANGUAGE


@pytest.mark.parametrize(
    "word", ["region_open", "region_chunk", "region_close", "dirty", "initial_events", "on_error"]
)
def test_the_language_reference_covers_the_events(word):
    assert f"`{word}`" in LANGUAGE or f"**`{word}`**" in LANGUAGE


def json_blocks(text: str) -> list[str]:
    return re.findall(r"```json\n(.*?)```", text, flags=re.DOTALL)


def test_every_template_example_in_the_docs_loads():
    templates = []
    for doc in sorted(DOCS.glob("*.md")):
        for block in json_blocks(doc.read_text(encoding="utf-8")):
            try:
                data = json.loads(block)
            except json.JSONDecodeError:
                continue  # a fragment of a template, not a whole one
            if isinstance(data, dict) and "fields" in data:
                templates.append((doc.name, data))
    assert templates, "no whole template example in docs/"
    for name, data in templates:
        load_template(data)  # raises TemplateError naming the key


def test_the_first_example_gives_the_message_it_says():
    template = json.loads(json_blocks(LANGUAGE)[1])
    generation = re.search(r"```text\n(.*?)\n```", LANGUAGE, flags=re.DOTALL)[1]
    from engine import parse_response

    assert parse_response(generation, template, prefix="") == {
        "role": "assistant",
        "reasoning_content": "I should greet the user",
        "tool_calls": [
            {
                "type": "function",
                "function": {"name": "greet_user", "arguments": {"greeting": "Hi!"}},
            }
        ],
    }


README_COMMANDS = [
    line for line in re.findall(r"^python -m engine .*$", README, flags=re.MULTILINE)
]


@pytest.mark.parametrize("command", README_COMMANDS)
def test_every_engine_command_in_the_readme_runs_as_written(command):
    done = subprocess.run(
        [sys.executable, *shlex.split(command)[1:]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def test_the_readme_has_engine_commands():
    assert len(README_COMMANDS) >= 4


def requirement_names(lines: list[str]) -> dict[str, str]:
    found = {}
    for line in lines:
        line = line.split("#")[0].strip()
        if not line or line.startswith("-"):
            continue
        name = re.match(r"[A-Za-z0-9_.\-]+", line)[0]
        found[name.lower()] = line[
            len(name) :
        ]  # extras included: gradio[mcp] must be gradio[mcp] in both
    return found


def test_the_space_requirements_match_the_app_extra():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    package = requirement_names(project["dependencies"] + extras["conformance"] + extras["app"])
    package.pop("response-templates")
    space = requirement_names((ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines())
    assert space.pop("torch") == "==2.13.0+cpu" and package.pop("torch") == "==2.13.0"
    assert space == package


# Spelled in pieces so this file does not match itself.
OUTSIDE_NOTES = re.compile(r"\b" + "SP" + r"EC(\.md)?\b|\b(?i:" + "iss" + r"ue) #?[0-9]+\b")


def test_nothing_points_to_notes_outside_the_repository():
    found = []
    for path in tracked_files():
        if (
            path.suffix
            not in (".py", ".md", ".sh", ".json", ".toml", ".txt", ".jinja", ".css", ".js")
            or path.stat().st_size > 2_000_000
        ):
            continue
        for number, line in enumerate(
            path.read_text(encoding="utf-8", errors="replace").splitlines(), 1
        ):
            if OUTSIDE_NOTES.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}")
    assert found == []


def test_the_architecture_page_names_every_module():
    """docs/architecture.md lists every module of engine/ and playground/ by its path, so the map
    cannot drift from the tree; every path it names exists."""
    page = (DOCS / "architecture.md").read_text(encoding="utf-8")
    modules = sorted(
        path.relative_to(ROOT).as_posix()
        for folder in ("engine", "playground")
        for path in (ROOT / folder).rglob("*.py")
    )
    assert [module for module in modules if f"`{module}`" not in page] == []
    named = set(re.findall(r"`((?:engine|playground)/[\w/]+\.py)`", page))
    assert sorted(path for path in named if not (ROOT / path).is_file()) == []
