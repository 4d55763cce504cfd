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

from engine import TemplateError, load_template
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


# -- the architecture page's claims hold -------------------------------------------------------

ARCHITECTURE = (DOCS / "architecture.md").read_text(encoding="utf-8")
# The core's modules that do I/O on purpose, as the page says (the rest read no file).
CORE_IO = {"engine/template_files.py", "engine/tokenizer.py", "engine/cli.py"}
FILE_CALLS = re.compile(
    r"(?<![.\w])(?<!def )open\(|\.read_text\(|\.read_bytes\(|\.write_text\(|\bjson\.load\("
    r"|^\s*from (?:\.|engine\.)template_files import|^\s*import engine\.template_files",
    re.MULTILINE,
)


def test_the_core_reads_no_file_and_the_front_door_looks_names_up():
    """The core compiles what it is given; a name or a path is looked up by the function
    `engine/__init__.py` installs (`template_files.template_source`)."""
    import engine.template as core

    core_files = [
        path
        for path in sorted((ROOT / "engine").glob("*.py"))
        if path.relative_to(ROOT).as_posix() not in CORE_IO | {"engine/__init__.py"}
    ]
    assert len(core_files) >= 15
    reading = [
        path.relative_to(ROOT).as_posix()
        for path in core_files
        if FILE_CALLS.search(path.read_text(encoding="utf-8"))
    ]
    assert reading == []
    assert "installs `engine/template_files.py`'s `template_source`" in ARCHITECTURE
    from engine.template_files import template_source

    assert core.load_template("qwen3").fields.keys() == {
        "reasoning_content",
        "tool_calls",
        "content",
    }
    core.use_template_source(lambda value: value)  # the core alone: a name is no JSON
    try:
        with pytest.raises(TemplateError, match="not valid JSON"):
            core.load_template("qwen3")
    finally:
        core.use_template_source(template_source)


def test_the_page_gives_the_learners_order_as_learn_runs_them():
    import ast

    source = (ROOT / "engine" / "chat_templates" / "learner.py").read_text(encoding="utf-8")
    learn = next(
        node
        for node in ast.parse(source).body
        if isinstance(node, ast.FunctionDef) and node.name == "learn"
    )
    called = [
        node.func.id
        for node in ast.walk(learn)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id.startswith(("learn_", "propose_", "note_"))
    ]
    calls_in_order = sorted(
        (node.lineno, node.col_offset, node.func.id)
        for node in ast.walk(learn)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in called
    )
    line = re.search(r"^Learner order: (.*)$", ARCHITECTURE, flags=re.MULTILINE)[1]
    assert re.findall(r"`(\w+)`", line) == [name for _, _, name in calls_in_order]


def test_a_new_handler_goes_in_its_panels_module_of_playground_handlers():
    layout = {path.stem for path in (ROOT / "playground" / "layout").glob("*.py")}
    handlers = {path.stem for path in (ROOT / "playground" / "handlers").glob("*.py")}
    assert handlers - {"event_data"} == layout  # a handler module a panel, and event reading
    assert not (ROOT / "playground" / "handlers.py").exists()
    bullet = re.search(r"^- \*\*A new handler\*\*:(.*?)(?=^- \*\*)", ARCHITECTURE, re.M | re.S)[1]
    assert "`playground/handlers/`" in bullet and "handlers.py" not in ARCHITECTURE


def test_every_module_is_in_its_rooms_table_block_and_the_package_map_names_it():
    rows = re.findall(r"^\| `(playground/[\w/]+\.py)` \|", ARCHITECTURE, flags=re.MULTILINE)
    rooms = [path.rsplit("/", 1)[0] for path in rows]
    blocks = [room for i, room in enumerate(rooms) if i == 0 or rooms[i - 1] != room]
    assert len(blocks) == len(set(blocks)), blocks  # each room's rows in one block
    assert "playground/authoring/output_evidence.py" in rows
    import playground

    doc = playground.__doc__
    bullets = {
        match[1]: match[2]
        for match in re.finditer(r"^- `(\w+)/`:(.*?)(?=^- |\Z)", doc, re.M | re.S)
    }
    missing = []
    for path in sorted((ROOT / "playground").rglob("*.py")):
        relative = path.relative_to(ROOT / "playground")
        if path.name == "__init__.py":
            continue
        where = bullets.get(relative.parts[0]) if len(relative.parts) > 1 else doc
        if where is None or f"`{path.stem}`" not in where:
            missing.append(relative.as_posix())
    assert missing == []


def test_only_the_model_room_and_grammar_matching_import_torch():
    importing = sorted(
        path.relative_to(ROOT).as_posix()
        for path in [*(ROOT / "engine").rglob("*.py"), *(ROOT / "playground").rglob("*.py")]
        if re.search(r"^\s*(import torch|from torch\b)", path.read_text(encoding="utf-8"), re.M)
    )
    assert "engine/grammar/matching.py" in importing
    assert [
        path
        for path in importing
        if path != "engine/grammar/matching.py" and not path.startswith("playground/model/")
    ] == []
    assert (
        "Torch is imported by `playground/model/` and `engine/grammar/matching.py` only."
        in ARCHITECTURE
    )


# The files the repository's root holds: anything else (a command's output saved by hand) is stray.
ROOT_FILES = {
    ".gitignore",
    "README.md",
    "app.py",
    "pyproject.toml",
    "pytest.ini",
    "requirements.txt",
}


def test_the_root_holds_only_the_expected_files():
    root = {path.name for path in tracked_files() if path.parent == ROOT}
    assert root == ROOT_FILES
