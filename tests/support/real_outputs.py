"""Real model outputs for the chat templates in ../shared/chat_templates_more, and how a template
is scored on them (tests and scripts/bench_infer.py share this).

A case is a prompt (`prefix`, rendered from the chat template named in `chat_template_file`),
an `output` a serving stack's own test suite says the model wrote, the `tools` given, and the
`expected` message. A case passes when the template gives `expected` parsed three ways: in one
shot, in random chunks of 1-12 characters, and one character at a time (text compared after
strip(); missing, None and "" alike; tool calls by order, name and arguments as JSON values).
Cases with a `doubt` field are scored apart from the others ("headline").
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from engine import ResponseParser, parse_response
from engine.chat_templates.evidence import message_differences
from tests.support.paths import SHARED

MORE = SHARED / "chat_templates_more"
CASES_PATH = SHARED / "cases" / "real_outputs.jsonl"
# The modes a case is parsed in.
MODES = ("one-shot", "random-chunks", "per-char")

needs_real_outputs = pytest.mark.skipif(
    not (MORE / "manifest.json").is_file() or not CASES_PATH.is_file(),
    reason=f"no chat templates and real outputs at {MORE} and {CASES_PATH} "
    "(set RESPONSE_TEMPLATES_SHARED to the folder holding chat_templates_more/ and cases/)",
)


def manifest(folder: Path) -> list[dict]:
    """The entries of `folder`/manifest.json (file, bos_token, eos_token, ...), [] when absent."""
    path = folder / "manifest.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []


def load_cases(path: Path = CASES_PATH) -> list[dict]:
    """Every case of the real-outputs file, [] when absent."""
    if not path.is_file():
        return []
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def cases_by_chat_template(cases: list[dict]) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for case in cases:
        found.setdefault(case.get("chat_template_file"), []).append(case)
    return found


def as_examples(cases: list[dict]) -> list[dict]:
    """Cases as `infer_template(examples=...)` takes them: prompt, output and tools (not the
    expected message: an author rarely has it)."""
    return [
        {"prefix": case.get("prefix") or "", "output": case["output"], "tools": case.get("tools")}
        for case in cases
    ]


def parse_modes(
    template: dict, case: dict, rng: random.Random
) -> dict[str, tuple[dict | None, str]]:
    """{mode: (message or None, "" or the error)} for each of `MODES` (errors kept, as content)."""
    prefix, output, tools = case.get("prefix") or "", case["output"], case.get("tools")

    def streamed(chunks: list[str]) -> dict:
        parser = ResponseParser(template, prefix, tools=tools, on_error="keep")
        for chunk in chunks:
            parser.feed(chunk)
        return parser.finalize()[0]

    def random_chunks() -> list[str]:
        chunks, at = [], 0
        while at < len(output):
            size = rng.randint(1, 12)
            chunks.append(output[at : at + size])
            at += size
        return chunks

    runs = {
        "one-shot": lambda: parse_response(
            output, template, prefix=prefix, tools=tools, on_error="keep"
        ),
        "random-chunks": lambda: streamed(random_chunks()),
        "per-char": lambda: streamed(list(output)),
    }
    found = {}
    for mode, run in runs.items():
        try:
            found[mode] = (run(), "")
        except Exception as error:  # any failure fails the mode, and says why
            found[mode] = (None, f"{type(error).__name__}: {error}")
    return found


def score_case(template: dict | None, case: dict, rng: random.Random) -> list[str]:
    """Why the case fails with `template` ([] when every mode gives the expected message)."""
    if template is None:
        return ["no template"]
    why = []
    for mode, (message, error) in parse_modes(template, case, rng).items():
        if error:
            why.append(f"{mode}: {error}")
        else:
            why += [
                f"{mode}: {difference}"
                for difference in message_differences(case["expected"], message)
            ]
    return why
