"""One hostile visitor against the playground: what each attack costs everyone else.

    python scripts/bench_attacks.py [--root PATH] [--fresh] [--only 1.,3a] [--bounded]
                                    [--allow-scratch] [--limits JSON] [--json FILE]

Runs every attack of `tests/support/attacks.py` against app.py on loopback (from
checkout `--root`, default this one: pass an older checkout to measure "before"),
with `proxy_hops` 1 as on a Space, and prints one row per attack: how long the
attacking requests took and what they were told, how many were refused at once,
another visitor's /parse latency meanwhile (p95 and max over 20 parses), the memory
of the server and its worker processes together before the attack, at its peak and
after it (MB), the disk its uploads took (before / peak / after, MB), and the worker
processes it left running, and which targets it missed (the other visitor's p95 over
`TARGET_P95`, a failed parse, memory kept or at its peak over `TARGET_KEPT_MB` and
`TARGET_PEAK_MB` above before, disk over `TARGET_DISK_MB`; "held" when none). The suite
checks what the attacker is told and that no parse fails; timings are checked here, where a
loaded machine is said (the load average heads the table). A watchdog kills a server whose memory passes
`attacks.KILL_ABOVE_MB` (the row says so). `--bounded` sends smaller payloads of the
attacks that grow without bound on a checkout without the bounds (so measuring one
never takes the machine's memory); the rows say which.
`--fresh` starts a new server for every attack (an attack that jams the server
would otherwise spoil the rows after it). Figures are wall time on this machine,
disturbed by whatever else runs on it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support import attacks  # noqa: E402


def seconds(value: float | None, patience: float) -> str:
    return f"> {patience:g} s" if value is None else f"{value:.1f} s"


def triple(values: tuple[float, float, float]) -> str:
    return "/".join(f"{value:,.0f}" for value in values)


# What an attack may cost everyone else: the other visitor's p95 (s), and the memory of the
# server and its workers 10 s after (MB over before) and at its peak, and the disk after (MB).
TARGET_P95 = 2.0
TARGET_KEPT_MB = 400
TARGET_PEAK_MB = 1_500
TARGET_DISK_MB = 200


def misses(row: attacks.Row) -> list[str]:
    """The targets `row` misses ([] when it holds them all): a failed or slow victim parse, memory
    kept or peaking over its target, disk left over its target, a server that stopped."""
    found = []
    failed = sum(seconds is None for seconds in row.victim)
    if failed:
        found.append(f"{failed} failed")
    elif row.victim_p95 is None or row.victim_p95 > TARGET_P95:
        found.append("p95")
    footprint = row.footprint
    if footprint is None:
        return found + ["no footprint"]
    before, peak, after = footprint.memory_mb
    if footprint.killed:
        found.append(footprint.killed)
    if after - before > TARGET_KEPT_MB:
        found.append(f"kept +{after - before:,.0f} MB")
    if peak - before > TARGET_PEAK_MB:
        found.append(f"peak +{peak - before:,.0f} MB")
    if footprint.disk_mb[2] - footprint.disk_mb[0] > TARGET_DISK_MB:
        found.append(f"disk +{footprint.disk_mb[2] - footprint.disk_mb[0]:,.0f} MB")
    return found


def row_text(row: attacks.Row) -> str:
    victim = [s for s in row.victim if s is not None]
    failed = len(row.victim) - len(victim)
    victim_text = (
        f"{seconds(row.victim_p95, attacks.VICTIM_PATIENCE)} / {max(victim):.1f} s"
        if victim
        else "all failed"
    )
    if failed:
        victim_text += f" ({failed} failed)"
    footprint = row.footprint
    memory = triple(footprint.memory_mb) if footprint else "?"
    disk = triple(footprint.disk_mb) if footprint else "?"
    left = str(footprint.workers_left) if footprint else "?"
    said = " ".join(row.outcome.said.split())[:150] + (
        f" [{footprint.killed}]" if footprint and footprint.killed else ""
    )
    return (
        f"{row.attack:<46} | {seconds(row.outcome.seconds, attacks.PATIENCE):<9} | "
        f"{row.outcome.refused:>7} | {victim_text:<24} | {memory:<17} | {disk:<11} | {left:>4} | "
        f"{', '.join(misses(row)) or 'held':<8} | {said}"
    )


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
        "--bounded",
        action="store_true",
        help="smaller payloads where an older checkout grows without bound (for measuring one)",
    )
    options.add_argument(
        "--allow-scratch",
        action="store_true",
        help="let visitors name the attack's model copies (PLAYGROUND_LIMITS model_folders; checkouts that know it)",
    )
    args = options.parse_args()
    attacks.BOUNDED["value"] = args.bounded
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
    load = " ".join(f"{value:.2f}" for value in os.getloadavg())
    print(
        f"checkout {args.root}; load average {load}; payloads {'bounded' if args.bounded else 'full'}"
    )
    print(
        f"{'attack':<46} | {'attacker':<9} | refused | other visitor's p95 / max | "
        f"{'memory MB b/p/a':<17} | {'disk MB b/p/a':<11} | left | targets  | what the attacker was told"
    )
    try:
        for name, attack in chosen:
            if run is None or args.fresh or run.process.poll() is not None:
                if run is not None:
                    attacks.stop_server(run)
                run = attacks.start_server(args.root, limits, scratch)
                attacks.wait_for_spare(
                    run, timeout=60
                )  # a checkout with worker processes: its spare is warm
            row = attacks.under_attack(run, name, attack)
            print(row_text(row), flush=True)
            footprint = row.footprint
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
                    "memory_mb": footprint.memory_mb if footprint else None,
                    "disk_mb": footprint.disk_mb if footprint else None,
                    "workers_left": footprint.workers_left if footprint else None,
                    "killed": footprint.killed if footprint else None,
                    "missed": misses(row),
                    "details": row.outcome.details,
                }
            )
    finally:
        if run is not None:
            attacks.stop_server(run)
        shutil.rmtree(scratch, ignore_errors=True)  # the model copies (tens of MB each)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2, default=str), encoding="utf-8")


if __name__ == "__main__":
    main()
