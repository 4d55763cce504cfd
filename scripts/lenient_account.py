"""What lenient parsing (`on_error="keep"`) makes of real outputs and of the slip cases.

Run it with ``python scripts/lenient_account.py`` from a checkout; ``--against OTHER`` runs
the same account with the engine of another checkout (a subprocess whose imports come from
there) and prints both side by side, with the outputs this checkout gets right that the
other gets wrong ("rescued").

Cases: the real outputs of ``$RESPONSE_TEMPLATES_SHARED/cases/real_outputs.jsonl`` (each
parsed with the template inferred from its chat template, in
``$RESPONSE_TEMPLATES_SHARED/chat_templates_more``; the inferred templates are kept in
``--templates`` so both engines parse with the same ones) and
``tests/support/slip_cases.json`` (each with its shipped template; its correct message is
`correct`, else `expected`). For each case, parsed in one shot with ``on_error="keep"``:

* wrong: the message differs from the correct one (text compared stripped, tool calls as
  JSON values: `engine.chat_templates.examples.message_differences`);
* delimiter in content: `content` holds a delimiter of the template that the correct
  content does not (a literal delimiter, the literal an open pattern starts with or a close
  pattern ends with, when it holds a letter or a digit).

It is a measurement, not a test: it prints figures and exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import re._parser as sre_parse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def shared() -> Path:
    return Path(os.environ.get("RESPONSE_TEMPLATES_SHARED", ROOT.parent / "shared"))


def infer_templates(path: Path) -> dict:
    """{chat template file: inferred template}, read from `path`, or inferred and written there."""
    if path.is_file():
        return json.loads(path.read_text(encoding="utf-8"))
    from engine import infer_template

    folder = shared() / "chat_templates_more"
    found = {}
    for entry in json.loads((folder / "manifest.json").read_text(encoding="utf-8")):
        text = (folder / entry["file"]).read_text(encoding="utf-8")
        tokens = {"bos_token": entry["bos_token"] or "", "eos_token": entry["eos_token"] or ""}
        found[entry["file"]] = infer_template(text, **tokens).template
    path.write_text(json.dumps(found), encoding="utf-8")
    return found


def leading_literal(pattern: str) -> str:
    """The literal text every match of `pattern` starts with ("" when none)."""
    try:
        items = list(sre_parse.parse(pattern))
    except Exception:  # a pattern the standard parser does not read
        return ""
    text = ""
    for op, value in items:
        if op is not sre_parse.LITERAL:
            break
        text += chr(value)
    return text


def delimiter_texts(template) -> set[str]:
    """The texts of a loaded template's delimiters (see the module's docstring)."""
    from engine.pattern_shapes import end_literal

    texts: set[str] = set()
    for spec in template.fields.values():
        for delimiter in (spec.open, spec.close):
            if delimiter is None:
                continue
            if delimiter.literals:
                texts.update(delimiter.literals)
                continue
            source = delimiter.pattern.pattern
            texts.add(leading_literal(source))
            for alternative in source.split("|"):
                try:
                    texts.add(end_literal(__import__("regex").compile(alternative)) or "")
                except Exception:  # an alternative cut inside a group does not compile
                    pass
    return {text for text in texts if any(c.isalnum() for c in text)}


def account(templates_path: Path) -> dict:
    """{case id: (wrong, delimiter in content, raised, strict silently wrong)} for this
    checkout's engine; strict is silently wrong when its message differs from the correct one
    and it raised nothing and reported no warning (`parser.warnings`)."""
    from engine import ResponseParseError, ResponseParser, load_template, parse_response
    from engine.chat_templates.evidence import message_differences, message_text

    cases = []
    real = shared() / "cases" / "real_outputs.jsonl"
    templates = infer_templates(templates_path)
    for line in real.read_text(encoding="utf-8").splitlines():
        if line.strip():
            case = json.loads(line)
            template = templates.get(case["chat_template_file"])
            if template is not None:
                cases.append(("real/" + case["id"], template, case, case["expected"]))
    slips = json.loads((ROOT / "tests" / "support" / "slip_cases.json").read_text())["cases"]
    for case in slips:
        correct = case.get("correct", case["expected"])
        cases.append(("slip/" + case["name"], case["template"], case, correct))
    found = {}
    for name, template, case, correct in cases:
        try:
            got = parse_response(
                case["output"],
                template,
                prefix=case.get("prefix") or "",
                tools=case.get("tools"),
                on_error="keep",
            )
        except Exception as error:  # lenient parsing must not raise: counted
            found[name] = (True, False, f"{type(error).__name__}: {error}"[:200], False)
            continue
        content = message_text(got.get("content")) or ""
        expected_content = message_text(correct.get("content")) or ""
        texts = delimiter_texts(load_template(template))
        leaked = [text for text in texts if text in content and text not in expected_content]
        silent = False
        strict = ResponseParser(template, prefix=case.get("prefix") or "", tools=case.get("tools"))
        try:
            strict.feed(case["output"])
            message, _ = strict.finalize()
            silent = bool(message_differences(correct, message)) and not strict.warnings
        except ResponseParseError:
            pass
        found[name] = (bool(message_differences(correct, got)), bool(leaked), "", silent)
    return found


def summary(found: dict) -> dict:
    rows = {}
    for group in ("real", "slip"):
        mine = {k: v for k, v in found.items() if k.startswith(group + "/")}
        rows[group] = {
            "cases": len(mine),
            "wrong": sum(v[0] for v in mine.values()),
            "delimiter in content": sum(v[1] for v in mine.values()),
            "raised": sum(bool(v[2]) for v in mine.values()),
            "strict silently wrong": sum(bool(v[3:] and v[3]) for v in mine.values()),
        }
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", help="another checkout, whose engine is measured too")
    parser.add_argument(
        "--templates",
        default="/tmp/lenient_account_templates.json",
        help="the inferred templates, kept so that both engines parse with the same ones",
    )
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not args.json:
        sys.path.insert(0, str(ROOT))  # this checkout's engine (the other's comes by PYTHONPATH)
    found = account(Path(args.templates))
    if args.json:
        print(json.dumps(found))
        return 0
    other = None
    if args.against:
        env = {**os.environ, "PYTHONPATH": str(Path(args.against).resolve())}
        run = subprocess.run(
            [sys.executable, __file__, "--json", "--templates", args.templates],
            capture_output=True,
            text=True,
            env=env,
            cwd=args.against,
            check=True,
        )
        other = json.loads(run.stdout)
    mine = summary(found)
    theirs = summary(other) if other is not None else None
    print(f"{'cases':<6} {'figure':<22} {'this':>6}" + (f" {'other':>6}" if theirs else ""))
    for group, row in mine.items():
        for figure, value in row.items():
            line = f"{group:<6} {figure:<22} {value:>6}"
            if theirs:
                line += f" {theirs[group][figure]:>6}"
            print(line)
    if other is not None:
        rescued = sorted(k for k, v in found.items() if not v[0] and other.get(k, (False,))[0])
        lost = sorted(k for k, v in found.items() if v[0] and not other.get(k, (True,))[0])
        print(f"rescued (wrong in the other, right here): {len(rescued)}")
        for name in rescued:
            print(f"  {name}")
        print(f"newly wrong (right in the other, wrong here): {len(lost)}")
        for name in lost:
            print(f"  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
