"""One hostile visitor against the playground: what each attack costs everyone else.

    python scripts/bench_attacks.py [--root PATH] [--fresh] [--only 1.,3a] [--allow-scratch] [--json FILE]

Runs every attack of `tests/support/attacks.py` against app.py on loopback (from checkout
`--root`, default this one: pass an older checkout to measure "before"), and
prints one row per attack: how long the attacking requests took and what they
were told, how many were refused at once, another visitor's /parse latency
meanwhile (p95 and max over 20 parses), and the server's memory after it.
`--fresh` starts a new server for every attack (an attack that jams the server
would otherwise spoil the rows after it). Figures are wall time on this
machine, disturbed by whatever else runs on it.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support import attacks  # noqa: E402


def seconds(value: float | None, patience: float) -> str:
    return f"> {patience:g} s" if value is None else f"{value:.1f} s"


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument(
        "--root",
        type=Path,
        default=ROOT,
        help="the checkout whose app.py is attacked (default: this one)",
    )
    options.add_argument("--fresh", action="store_true", help="a new server for every attack")
    options.add_argument("--only", default="", help="comma-separated attack numbers, e.g. 1.,3a")
    options.add_argument("--limits", default="", help="PLAYGROUND_LIMITS for the server (JSON)")
    options.add_argument("--json", type=Path, help="also write the rows to this file")
    options.add_argument(
        "--allow-scratch",
        action="store_true",
        help="let visitors name the attack's model copies (PLAYGROUND_LIMITS model_folders; checkouts that know it)",
    )
    args = options.parse_args()
    chosen = [
        (name, attack)
        for name, attack in attacks.ATTACKS
        if not args.only or any(name.startswith(prefix) for prefix in args.only.split(","))
    ]
    limits = json.loads(args.limits) if args.limits else None
    scratch = Path(tempfile.mkdtemp(prefix="attack-models-"))
    if args.allow_scratch:
        limits = {**(limits or {}), "model_folders": [str(scratch)]}
    rows, run = [], None
    print(
        f"{'attack':<50} | {'attacking requests':<22} | refused | other visitor's parse p95 / max | server MB | what the attacker was told"
    )
    try:
        for name, attack in chosen:
            if run is None or args.fresh:
                if run is not None:
                    attacks.stop_server(run)
                run = attacks.start_server(args.root, limits, scratch)
                attacks.wait_for_spare(
                    run, timeout=60
                )  # a checkout with worker processes: its spare is warm
            row = attacks.under_attack(run, name, attack)
            victim = [s for s in row.victim if s is not None]
            failed = len(row.victim) - len(victim)
            victim_text = (
                f"{seconds(row.victim_p95, attacks.VICTIM_PATIENCE)} / {max(victim):.1f} s"
                if victim
                else "all failed"
            )
            if failed:
                victim_text += f" ({failed} of {len(row.victim)} failed)"
            print(
                f"{name:<50} | {seconds(row.outcome.seconds, attacks.PATIENCE):<22} | {row.outcome.refused:>7} | "
                f"{victim_text:<31} | {row.memory[0]:>6.0f} +{row.memory[1]:.0f} | {row.outcome.said[:160]}",
                flush=True,
            )
            rows.append(
                {
                    "attack": name,
                    "attacker_seconds": row.outcome.seconds,
                    "said": row.outcome.said,
                    "refused": row.outcome.refused,
                    "victim": row.victim,
                    "victim_p95": row.victim_p95,
                    "server_mb": row.memory[0],
                    "workers_mb": row.memory[1],
                    "details": row.outcome.details,
                }
            )
    finally:
        if run is not None:
            attacks.stop_server(run)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2, default=str), encoding="utf-8")


if __name__ == "__main__":
    main()
