"""Run transformers' own chat-parsing tests against this engine instead of transformers.

    curl -L -o /tmp/test_chat_parsing.py \\
        https://raw.githubusercontent.com/huggingface/transformers/main/tests/utils/test_chat_parsing.py
    python scripts/run_reference_tests.py /tmp/test_chat_parsing.py

The test file is not part of this repository (it is transformers' code). This script
copies it to a temporary folder, points its one import of the public API
(`from transformers.utils.chat_parsing import ResponseParser, parse_response`) at
`engine`, and runs it with pytest. Nothing else in the file is changed.

Tests that cannot say anything about this engine are deselected, each with its reason:
those that download a tokenizer from the Hugging Face Hub (`from_pretrained`), when the
Hub is not reachable, and those that test transformers' private helpers (names or
attributes starting with an underscore, such as `_coerce` or `parser._output`). No test is
deselected for a behaviour this engine changes on purpose: the engine's defaults are the
reference's wherever the test file asserts them.

Exit status: pytest's (0 when every selected test passed).
"""

from __future__ import annotations

import argparse
import ast
import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
PUBLIC_IMPORT = "from transformers.utils.chat_parsing import ResponseParser, parse_response"
OUR_IMPORT = "from engine import ResponseParser, parse_response"


def hub_reachable(timeout: float = 3.0) -> bool:
    """Whether huggingface.co answers on port 443 within `timeout` seconds."""
    try:
        with socket.create_connection(("huggingface.co", 443), timeout=timeout):
            return True
    except OSError:
        return False


def _private_uses(node: ast.AST, private_imports: set[str]) -> set[str]:
    """Private names of transformers that `node` uses: imported private names, and
    attributes starting with an underscore (`parser._output`)."""
    found = set()
    for item in ast.walk(node):
        if isinstance(item, ast.Name) and item.id in private_imports:
            found.add(item.id)
        elif (
            isinstance(item, ast.Attribute)
            and item.attr.startswith("_")
            and not item.attr.startswith("__")
        ):
            if not (
                isinstance(item.value, ast.Name) and item.value.id == "self"
            ):  # the test class's own helpers
                found.add(item.attr)
    return found


def deselected_tests(source: str, hub: bool) -> dict[str, str]:
    """`{"Class::test_name": reason}` for tests that need the Hub (when it is unreachable) or
    transformers' private names, directly or through the test file's own helper functions."""
    tree = ast.parse(source)
    private_imports = {
        alias.asname or alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("transformers")
        for alias in node.names
        if alias.name.startswith("_")
    }
    # The test file's own helper functions, module-level or methods of its test classes.
    helpers = {
        node.name: node
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("test")
    }

    def uses(node: ast.AST, seen: set[str]) -> tuple[set[str], bool]:
        private = _private_uses(node, private_imports)
        needs_hub = any(
            isinstance(item, ast.Attribute) and item.attr == "from_pretrained"
            for item in ast.walk(node)
        )
        for item in ast.walk(node):
            name = (
                item.id
                if isinstance(item, ast.Name)
                else item.attr
                if isinstance(item, ast.Attribute)
                else None
            )
            if name in helpers and name not in seen:
                seen.add(name)
                inner, inner_hub = uses(helpers[name], seen)
                private |= inner
                needs_hub |= inner_hub
        return private, needs_hub

    found: dict[str, str] = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        for item in node.body:
            if not isinstance(item, ast.FunctionDef) or not item.name.startswith("test"):
                continue
            private, needs_hub = uses(item, set())
            if private:
                found[f"{node.name}::{item.name}"] = (
                    f"uses transformers' private {', '.join(sorted(private))}"
                )
            elif needs_hub and not hub:
                found[f"{node.name}::{item.name}"] = (
                    "downloads a tokenizer from the Hub, which is unreachable"
                )
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "test_file", type=Path, help="a copy of transformers' tests/utils/test_chat_parsing.py"
    )
    parser.add_argument("pytest_args", nargs="*", help="extra pytest arguments (after --)")
    args = parser.parse_args(argv)
    source = args.test_file.read_text(encoding="utf-8")
    if PUBLIC_IMPORT not in source:
        print(
            f"error: {args.test_file} does not import the public API as expected ({PUBLIC_IMPORT!r})",
            file=sys.stderr,
        )
        return 2
    hub = hub_reachable()
    skipped = deselected_tests(source, hub)
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "test_chat_parsing_on_engine.py"
        copy.write_text(source.replace(PUBLIC_IMPORT, OUR_IMPORT), encoding="utf-8")
        command = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            folder,
            str(copy),
        ]
        command += [f"--deselect={copy.name}::{test}" for test in skipped] + args.pytest_args
        for test, reason in sorted(skipped.items()):
            print(f"deselected {test}: {reason}")
        environment = {
            **os.environ,
            "HF_HUB_OFFLINE": os.environ.get("HF_HUB_OFFLINE", "0" if hub else "1"),
            "PYTHONPATH": os.pathsep.join(
                filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])
            ),
        }
        return subprocess.call(command, cwd=folder, env=environment)


if __name__ == "__main__":
    sys.exit(main())
