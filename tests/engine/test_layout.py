"""The folder tree is the architecture: the import rules it shows hold, and one formatter keeps it.

Every import counts, also one inside a function (a lazy import is still a dependency).
docs/architecture.md draws the same rules.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import ROOT

ENGINE_WINGS = sorted(
    path.name
    for path in (ROOT / "engine").iterdir()
    if path.is_dir() and (path / "__init__.py").is_file()
)
# The engine's facade and command line may import any wing; the core modules may not.
ENGINE_ENTRANCES = {"engine/__init__.py", "engine/__main__.py", "engine/cli.py"}


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(
    path: Path, root: Path = ROOT, typing_only: bool = True
) -> list[tuple[str, list[str]]]:
    """(module, names) of every import in `path`, relative ones resolved to absolute names;
    without `typing_only`, not those under ``if TYPE_CHECKING:`` (never run)."""
    package = module_name(path, root)
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    found = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    if not typing_only:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and ast.unparse(node.test) in (
                "TYPE_CHECKING",
                "typing.TYPE_CHECKING",
            ):
                node.body = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.append((module, [alias.name for alias in node.names]))
    return found


def python_files(*folders: str) -> list[Path]:
    return sorted(path for folder in folders for path in (ROOT / folder).rglob("*.py"))


def within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def offending(files: list[Path], forbidden) -> list[str]:
    """`file: module` for each import of `files` that `forbidden(file, module, names)` refuses."""
    found = []
    for path in files:
        for module, names in imports_of(path):
            if forbidden(path.relative_to(ROOT).as_posix(), module, names):
                found.append(f"{path.relative_to(ROOT)}: {module}")
    return found


def test_the_engine_has_its_wings():
    assert {"authoring", "batch", "chat_templates"} <= set(ENGINE_WINGS)


def test_the_parser_core_imports_no_wing_and_no_app():
    core = [
        path
        for path in (ROOT / "engine").glob("*.py")
        if path.relative_to(ROOT).as_posix() not in ENGINE_ENTRANCES
    ]
    assert len(core) >= 15

    def forbidden(_, module, names):
        wings = [f"engine.{wing}" for wing in ENGINE_WINGS]
        if module == "engine":
            return any(name in ENGINE_WINGS for name in names)
        return any(within(module, wing) for wing in wings) or within(module, "playground")

    assert offending(core, forbidden) == []


def test_authoring_never_imports_chat_templates_and_batch_never_imports_authoring():
    assert (
        offending(
            python_files("engine/authoring"),
            lambda _, module, __: (
                within(module, "engine.chat_templates") or within(module, "engine.batch")
            ),
        )
        == []
    )
    assert (
        offending(
            python_files("engine/batch"),
            lambda _, module, __: (
                within(module, "engine.authoring") or within(module, "engine.chat_templates")
            ),
        )
        == []
    )


def test_nothing_in_the_engine_imports_the_playground():
    assert (
        offending(python_files("engine"), lambda _, module, __: within(module, "playground")) == []
    )


def test_the_playground_rooms_import_downwards():
    """server/ is the floor; parse/ stands on it; nothing below the page imports the page."""
    page = ("playground.handlers", "playground.api", "playground.wiring", "playground.outputs")
    assert (
        offending(
            python_files("playground/server"),
            lambda _, module, __: (
                within(module, "playground") and not within(module, "playground.server")
            ),
        )
        == []
    )
    assert (
        offending(
            python_files("playground/parse"),
            lambda _, module, __: (
                within(module, "playground")
                and not any(
                    within(module, room) for room in ("playground.server", "playground.parse")
                )
            ),
        )
        == []
    )
    rooms = python_files(
        "playground/parse",
        "playground/panels",
        "playground/authoring",
        "playground/model",
        "playground/server",
    )
    assert offending(rooms, lambda _, module, __: any(within(module, top) for top in page)) == []


def test_only_app_imports_the_layout_and_the_layout_never_imports_the_public_api():
    """playground/layout/ is the page, built by app.py alone; the public API is app.py's to publish."""
    assert len(python_files("playground/layout")) >= 10
    outside = [
        path
        for path in python_files("engine", "playground", "scripts", "tests")
        if not path.is_relative_to(ROOT / "playground" / "layout")
    ]
    assert offending(outside, lambda _, module, __: within(module, "playground.layout")) == []
    assert (
        offending(
            python_files("playground/layout"),
            lambda _, module, names: (
                within(module, "playground.api") or (module == "playground" and "api" in names)
            ),
        )
        == []
    )
    app_imports = [module for module, _ in imports_of(ROOT / "app.py")]
    assert "playground.layout" in app_imports


def test_no_module_takes_another_modules_private_name():
    def forbidden(_, module, names):
        ours = within(module, "engine") or within(module, "playground")
        return ours and any(name.startswith("_") and not name.startswith("__") for name in names)

    assert offending(python_files("engine", "playground") + [ROOT / "app.py"], forbidden) == []


def test_scripts_and_tests_import_support_never_a_test_module():
    files = python_files("scripts", "tests")

    def forbidden(_, module, names):
        if within(module, "tests.app") or within(module, "tests.engine"):
            return True
        return module == "tests" and any(name in ("app", "engine") for name in names)

    assert offending(files, forbidden) == []


@pytest.mark.skipif(
    shutil.which("ruff", path=str(Path(sys.executable).parent)) is None,
    reason="needs ruff (the test extra)",
)
def test_the_checkout_is_formatted():
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent))
    result = subprocess.run(
        [ruff, "format", "--check", "."], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


# The project's shape rule: a class at most 400 lines, a function at most 90.
LONGEST_CLASS, LONGEST_FUNCTION = 400, 90


def test_no_class_or_function_outgrows_the_shape_rule():
    too_long = []
    for path in python_files("engine", "playground") + [ROOT / "app.py"]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                limit = LONGEST_CLASS if isinstance(node, ast.ClassDef) else LONGEST_FUNCTION
                lines = node.end_lineno - node.lineno + 1
                if lines > limit:
                    too_long.append(
                        f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({lines} lines)"
                    )
    assert too_long == []


def import_cycles(files: list[Path], package: str, root: Path = ROOT) -> list[list[str]]:
    """Every cycle of imports among the modules of `files` that lie in `package`, each as the
    modules in import order (the first repeated at the end); one cycle per set of modules.

    `from pkg import name` counts as importing `pkg.name` when that is a module of `files`, else
    as importing `pkg`. A package's own `__init__` is not counted as imported by its modules, nor
    an import under ``if TYPE_CHECKING:`` (for annotations, never run)."""
    modules = {module_name(path, root): path for path in files}
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        targets = set()
        for imported, names in imports_of(path, root, typing_only=False):
            submodules = [f"{imported}.{name}" for name in names if f"{imported}.{name}" in modules]
            targets.update(submodules)
            if imported in modules and (len(submodules) < len(names) or not names):
                targets.add(imported)
        graph[module] = {target for target in targets if within(target, package)} - {module}
    cycles, seen = [], set()

    def visit(module: str, path: list[str]) -> None:
        for target in sorted(graph.get(module, ())):
            if target in path:
                cycle = path[path.index(target) :] + [target]
                key = frozenset(cycle)
                if key not in seen:
                    seen.add(key)
                    cycles.append(cycle)
            elif target not in done:
                visit(target, path + [target])
        done.add(module)

    done: set[str] = set()
    for module in sorted(graph):
        if module not in done:
            visit(module, [module])
    return cycles


def test_the_cycle_finder_finds_a_cycle(tmp_path):
    package = tmp_path / "engine" / "loop"
    package.mkdir(parents=True)
    for name, body in {
        "__init__.py": "",
        "a.py": "from .b import thing\n",
        "b.py": "def f():\n    from . import c\n",
        "c.py": "from engine.loop.a import other\n",
        "d.py": "from .a import other\n",
        "e.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .f import T\n",
        "f.py": "from .e import other\n",
    }.items():
        (package / name).write_text(body, encoding="utf-8")
    cycles = import_cycles(sorted(package.glob("*.py")), "engine", tmp_path)
    assert cycles == [["engine.loop.a", "engine.loop.b", "engine.loop.c", "engine.loop.a"]]


def test_the_engine_has_no_import_cycle():
    """No module of engine/ imports (at the top or inside a function) one that imports it back,
    however many modules lie between."""
    assert import_cycles(python_files("engine"), "engine") == []


def test_the_playground_has_no_import_cycle():
    """No module of playground/ imports one that imports it back, however many lie between."""
    assert import_cycles(python_files("playground"), "playground") == []


# The most lines a module of the playground may have.
LONGEST_PLAYGROUND_MODULE = 700


def test_no_playground_module_is_over_700_lines():
    lengths = {
        path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in python_files("playground")
    }
    assert len(lengths) >= 60
    assert {path: n for path, n in lengths.items() if n > LONGEST_PLAYGROUND_MODULE} == {}


# An HTML tag opened or closed in a string: an element name the page draws, then a blank, ">" or "/".
HTML_TAG = re.compile(
    r"</?(?:a|b|br|button|code|col|colgroup|details|div|em|h[1-6]|i|li|mark|ol|p|pre|section"
    r"|small|span|strong|summary|table|tbody|td|th|thead|tr|ul|wbr)[\s>/]"
)


def html_strings(path: Path) -> list[int]:
    """The lines of `path` where a string that is no docstring holds an HTML tag."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return sorted(
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and HTML_TAG.search(node.value)
    )


def test_the_tag_scan_finds_a_tag_and_ignores_markers_and_docstrings(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        '"""A <div> in a docstring."""\nA = "<tool_call>"\nB = f"<span class={A}>"\nC = "</td>"\n'
    )
    assert html_strings(sample) == [3, 4]


def test_only_the_panels_write_html_tags():
    writing = {
        path.relative_to(ROOT).as_posix()
        for path in python_files("playground") + [ROOT / "app.py"]
        if not path.is_relative_to(ROOT / "playground" / "panels") and html_strings(path)
    }
    assert writing == set()


def test_html_is_escaped_by_one_helper():
    """`playground.panels.markup.escape` in code, autoescaping templates in
    `playground.panels.fragments`: no other module calls `html.escape` or imports markupsafe's."""
    callers = []
    for path in python_files("playground") + [ROOT / "app.py"]:
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(ROOT).as_posix()
        if "html.escape(" in text and name != "playground/panels/markup.py":
            callers.append(name)
        if re.search(r"from markupsafe import [^\n]*\bescape\b", text):
            callers.append(name)
    assert callers == []
