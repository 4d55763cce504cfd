"""The hosted playground under load: latency and server memory with several visitors at once.

    python scripts/bench_load.py [--sessions 8] [--seconds 10]

Starts app.py on loopback (as a host would run it, with this machine's network: with
none, a hub id shows how the app fails offline), then prints:

- two identical rounds of N concurrent sessions parsing and switching samples through
  the public API: p50/p95 latency of each, and the server's memory (RSS) per round;
- a page replaying a 200 KB paste a character at a time for 30 s: the memory it adds,
  and the latency of other sessions' parses meanwhile;
- a generation with the bundled demo model: how long parses take while it runs;
- a hub id (Qwen/Qwen3-0.6B): how long it takes to fail, its message, and a concurrent
  parse's latency.

Targets (reported, not asserted): the second round grows memory by at most 60 MB; the
replay adds at most 80 MB and others' parses take at most 3 s; the hub id fails within
10 s and a concurrent parse takes at most 3 s.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.authoring.samples import load_samples  # noqa: E402
from playground.catalog import template_text_of  # noqa: E402
from tests.support.app_server import start_app  # noqa: E402
from tests.support.load_sessions import PageVisitor, api_client, server_rss_mb, timed  # noqa: E402

CASES = [s for s in load_samples() if s.expected is not None and not s.tools]
REPLAY_CHARS = 200_000
REPLAY_SECONDS = 30.0


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


def latency_line(name: str, seconds: list[float]) -> str:
    return f"{name:<14} n={len(seconds):<5} p50 {percentile(seconds, 0.5) * 1000:7.0f} ms   p95 {percentile(seconds, 0.95) * 1000:7.0f} ms   max {max(seconds, default=0) * 1000:7.0f} ms"


class Parser:
    """One API session parsing (and switching samples) in a loop until stopped; latencies in seconds."""

    def __init__(self, url: str, index: int, switch: bool = True):
        self.client = api_client(url, f"10.1.0.{index + 1}")  # each a visitor of its own address
        self.sample = CASES[index % len(CASES)]
        self.template_text = template_text_of(self.sample.template)
        self.switch = switch
        self.parses: list[float] = []
        self.switches: list[float] = []
        self.failures = 0

    def once(self) -> None:
        sample = self.sample
        seconds, result = timed(
            self.client.predict,
            self.template_text,
            sample.prefix,
            sample.generation,
            "",
            api_name="/parse",
        )
        self.parses.append(seconds)
        self.failures += result.get("message") != sample.expected
        if self.switch:
            seconds, result = timed(self.client.predict, sample.id, api_name="/load_sample")
            self.switches.append(seconds)
            self.failures += result.get("message") != sample.expected

    def until(self, stop: threading.Event) -> None:
        while not stop.is_set():
            self.once()


def parse_round(url: str, sessions: int, seconds: float) -> tuple[list[float], list[float], int]:
    parsers = [Parser(url, index) for index in range(sessions)]
    stop = threading.Event()
    with ThreadPoolExecutor(max_workers=sessions) as pool:
        running = [pool.submit(parser.until, stop) for parser in parsers]
        time.sleep(seconds)
        stop.set()
        for future in running:
            future.result()
    return (
        [s for p in parsers for s in p.parses],
        [s for p in parsers for s in p.switches],
        sum(p.failures for p in parsers),
    )


def while_running(
    url: str, work, seconds_at_least: float = 0.0
) -> tuple[float, object, list[float]]:
    """Run `work()` in a thread while one session parses in a loop; (work seconds, its result, parse latencies)."""
    parser = Parser(url, 3, switch=False)
    outcome: dict = {}

    def run() -> None:
        outcome["seconds"], outcome["result"] = timed(work)

    worker = threading.Thread(target=run)
    worker.start()
    started = time.perf_counter()
    while worker.is_alive() or time.perf_counter() - started < seconds_at_least:
        parser.once()
    worker.join()
    return outcome["seconds"], outcome["result"], parser.parses


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument(
        "--sessions", type=int, default=8, help="concurrent parse sessions per round (default 8)"
    )
    options.add_argument(
        "--seconds", type=float, default=10.0, help="length of each round in seconds (default 10)"
    )
    args = options.parse_args()
    process, url = start_app()
    try:
        pid = process.pid
        api_client(url).predict(
            CASES[0].id, api_name="/load_sample"
        )  # the first request warms the server
        print(f"server up: {server_rss_mb(pid):.0f} MB")

        print(
            f"\n{args.sessions} concurrent sessions parsing and switching samples, two identical rounds of {args.seconds:g} s"
        )
        memory = [server_rss_mb(pid)]
        for number in (1, 2):
            parses, switches, failures = parse_round(url, args.sessions, args.seconds)
            memory.append(server_rss_mb(pid))
            print(
                f"round {number}: memory {memory[-1]:.0f} MB ({memory[-1] - memory[-2]:+.0f} MB), {failures} wrong results"
            )
            print("  " + latency_line("parse", parses))
            print("  " + latency_line("sample switch", switches))
        print(f"second round grew memory by {memory[2] - memory[1]:+.0f} MB (target <= 60 MB)")

        print(
            f"\na page replaying {REPLAY_CHARS // 1000} KB a character at a time (Play, fastest), watched for {REPLAY_SECONDS:g} s"
        )
        sample = CASES[0]
        generation = (sample.generation * (REPLAY_CHARS // len(sample.generation) + 1))[
            :REPLAY_CHARS
        ]
        page = PageVisitor(url)
        before, peak = server_rss_mb(pid), 0.0
        values = {
            "generation": generation,
            "prefix": sample.prefix,
            "template-editor": template_text_of(sample.template),
            "chunking": "chars",
            "chunk-size": 1,
            "speed": 0,
        }
        sampling = threading.Event()

        def watch() -> None:
            nonlocal peak
            while not sampling.is_set():
                peak = max(peak, server_rss_mb(pid))
                time.sleep(0.2)

        watcher = threading.Thread(target=watch)
        watcher.start()
        replay_seconds, _, parses = while_running(
            url, lambda: page.run("page_replay_play", values), REPLAY_SECONDS
        )
        sampling.set()
        watcher.join()
        after = server_rss_mb(pid)
        page.close()
        time.sleep(1.0)
        closed = server_rss_mb(pid)
        print(
            f"replay took {replay_seconds:.1f} s; memory {before:.0f} MB before, peak {peak:.0f} MB ({peak - before:+.0f} MB), "
            f"{after:.0f} MB after 30 s ({after - before:+.0f} MB; target <= 80 MB), {closed:.0f} MB after the page closed"
        )
        print("  " + latency_line("others' parse", parses) + "   (target max <= 3000 ms)")

        print(
            "\na generation with the bundled demo model (200 new tokens) while another session parses"
        )
        client = api_client(url)
        list(client.submit("Hi", max_new_tokens=4, api_name="/generate"))  # load the model first

        def generate():
            return list(
                client.submit(
                    "What's the weather in Paris?", max_new_tokens=200, seed=0, api_name="/generate"
                )
            )

        seconds, updates, parses = while_running(url, generate)
        print(f"generation took {seconds:.1f} s ({len(updates)} updates)")
        print("  " + latency_line("parse meanwhile", parses))

        print(
            "\na hub id (Qwen/Qwen3-0.6B) with this machine's network, while another session parses"
        )

        def fail():
            return list(
                api_client(url).submit("Hi", model_name="Qwen/Qwen3-0.6B", api_name="/generate")
            )[-1]

        seconds, last, parses = while_running(url, fail)
        outcome = last.get("error") or "loaded (the Hub is reachable here)"
        print(f"the load ended after {seconds:.1f} s (target <= 10 s): {outcome}")
        print("  " + latency_line("parse meanwhile", parses) + "   (target max <= 3000 ms)")
        print(f"\nserver memory at the end: {server_rss_mb(pid):.0f} MB")
    finally:
        process.terminate()
        process.wait(timeout=10)


if __name__ == "__main__":
    main()
