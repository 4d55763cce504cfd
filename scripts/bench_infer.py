"""Time template inference on every chat template: the real ones beside the checkout and the small ones in tests.

    python scripts/bench_infer.py [--shared DIR] [--isolated] [--repeats N]

For each chat template it prints the wall time of `engine.infer_template` (the best of
`--repeats` runs; the first run of the process also pays for importing transformers, so
it is timed apart), how many candidates were checked, and the matrix: passed / failed /
not renderable. `--isolated` times `infer_template_isolated` instead (a child process with
a time and memory cap, as the command line runs it), start-up included. The target is at
most 10 s a chat template on a 2-core machine.

The real chat templates are read from ../shared/chat_templates (or `--shared DIR`, the
folder holding chat_templates/manifest.json); without them only the small ones run.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.chat_templates.infer import infer_template, infer_template_isolated  # noqa: E402

TARGET_SECONDS = 10.0


def chat_templates(shared: Path) -> list[tuple[str, str, str, str]]:
    """(name, text, bos_token, eos_token) of every chat template to time."""
    found = []
    manifest = shared / "chat_templates" / "manifest.json"
    if manifest.is_file():
        for entry in json.loads(manifest.read_text(encoding="utf-8")):
            text = (shared / "chat_templates" / entry["file"]).read_text(encoding="utf-8")
            found.append((entry["file"], text, entry["bos_token"], entry["eos_token"]))
    else:
        print(
            f"note: no real chat templates at {manifest.parent}; timing the small ones in tests/support/chat_templates only"
        )
    for path in sorted((ROOT / "tests" / "support" / "chat_templates").glob("*.jinja")):
        found.append((f"tests/{path.name}", path.read_text(encoding="utf-8"), "", ""))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="python scripts/bench_infer.py", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--shared",
        type=Path,
        default=ROOT.parent / "shared",
        help="the folder holding chat_templates/",
    )
    parser.add_argument(
        "--isolated",
        action="store_true",
        help="time inference in a child process, as the CLI runs it",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="runs per chat template; the best is shown (default 3)",
    )
    options = parser.parse_args()
    infer = infer_template_isolated if options.isolated else infer_template
    templates = chat_templates(options.shared)
    started = time.perf_counter()
    infer(templates[0][1], bos_token=templates[0][2], eos_token=templates[0][3])
    print(f"first run (imports transformers): {time.perf_counter() - started:.2f} s\n")
    print(
        f"{'chat template':34} {'best':>7} {'worst':>7} {'candidates':>10}  matrix (passed/failed/not renderable)"
    )
    slowest = 0.0
    failing = []
    for name, text, bos, eos in templates:
        times = []
        for _ in range(max(1, options.repeats)):
            started = time.perf_counter()
            result = infer(text, bos_token=bos, eos_token=eos)
            times.append(time.perf_counter() - started)
        counts = result.report.counts()
        slowest = max(slowest, min(times))
        if not result.passed:
            failing.append(name)
        print(
            f"{name:34} {min(times):6.2f}s {max(times):6.2f}s {len(result.candidates):>10}  "
            f"{counts['passed']}/{counts['failed']}/{counts['not_renderable']}{'' if result.passed else '  FAILS'}"
        )
    verdict = "PASS" if slowest <= TARGET_SECONDS else "FAIL"
    print(
        f"\n[{verdict}] slowest chat template: {slowest:.2f} s (target <= {TARGET_SECONDS:g} s); "
        f"{len(templates) - len(failing)} of {len(templates)} pass their matrix"
        + (f" (failing: {', '.join(failing)})" if failing else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
