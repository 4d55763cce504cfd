"""Fuzz the engine: random templates, generations and chunkings.

Cases start from `tests.strategies.template_and_generation` and are mutated:
random content types (json, xml-inline, kv-lines, python-call-list, ...) with
random `content_args`, regex delimiters drawn from a small safe grammar, random
unicode and "byte" characters (NUL, controls, U+FFFD, lone surrogates) spliced
into the prefix and the generation, broken template keys, and random chunkings.

For each case the checks are:

* the only exceptions that escape are the documented ones: `TemplateError`,
  `ResponseParseError` (and its subclass `PatternTimeoutError`), and the
  `ValueError` of `parse_response`'s input checks (a missing prefix);
* one-shot equals streamed: the message (or the error) and every
  region's concatenated chunk text, for char-by-char and random chunkings;
* `engine.trace` does not raise on a parse error, its spans tile the prefix
  tail plus the generation, and its message equals the one-shot message.

Anything else is a *crash*. Each distinct crash is shrunk greedily to a minimal
input and printed (template, prefix, generation, chunks, expected, got).

Usage: python scripts/fuzz_engine.py [--cases N] [--seed S] [--timeout SECONDS]
Exit status 1 when a crash was found.
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

import regex

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import seed as hypothesis_seed  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import engine  # noqa: E402
from engine import (
    PatternTimeoutError,
    ResponseParseError,
    ResponseParser,
    TemplateError,
    parse_response,
    trace,
)
from tests.support.strategies import template_and_generation  # noqa: E402

REGEX_TIMEOUT = 0.5

# -- strategies -------------------------------------------------------------------

ODD_CHARACTERS = [
    "\x00",
    "\x01",
    "\x1b",
    "\x7f",
    "\x85",
    "\ufffd",
    "\u2028",
    "\u200b",
    "\ufeff",
    "\udcff",
    "\U0001f600",
    "\r",
    "\t",
    "é",
]
PATTERN_ALPHABET = ["<", ">", "/", "a", "b", "x", "[", "]", "T", "|", "{", "}", " ", "\n", "e", "d"]
CONTENT_SNIPPETS = [
    '{"name": "f", "arguments": {"a": 1}}',
    '{name: "f", arguments: {a: "x, b: y"}}',
    '[{"tool_name": "g", "parameters": {"p": true}}]',
    "{'a': 1}",
    '{"a": [1, 2, {"b": null}]',
    "<parameter=city>Paris</parameter><parameter=n>3</parameter>",
    "<k>v</k><k>w</k>",
    "name: alice\nage: 30\n\nbad line\n",
    "a=1;b=2",
    "[get_weather(city=\"Paris\", days=3), get_time(tz='UTC')]",
    "[f(a=[1, {'k': None}], b=True)]",
    "[f(1)]",
    '[f(a="\\ud83d\\ude00")]',
    "[f(a=1,)]",
    "42",
    " -3.5e2 ",
    "true",
    "<<quoted>>",
]


@st.composite
def safe_regex(draw, depth: int = 0) -> tuple[str, list[str]]:
    """A regex from a small grammar with no nested unbounded quantifiers; returns (pattern, named groups)."""
    parts, groups = [], []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(
            st.sampled_from(
                ["lit", "lit", "lit", "class", "group", "alt", "look", "named"]
                if depth < 2
                else ["lit", "class"]
            )
        )
        if kind == "lit":
            atom = draw(
                st.sampled_from(
                    [
                        *map(lambda c: "\\" + c if c in "[]|{}" else c, PATTERN_ALPHABET),
                        "\\s",
                        "\\d",
                        "\\w",
                    ]
                )
            )
        elif kind == "class":
            atom = draw(st.sampled_from(["[ab<]", "[^>]", "\\s", "\\w", ".", "[0-9]"]))
        else:
            inner, inner_groups = draw(safe_regex(depth + 1))
            if kind == "alt":
                other, other_groups = draw(safe_regex(depth + 1))
                inner, inner_groups = (
                    f"{inner}|{other}",
                    [],
                )  # named groups not repeated across branches
            if kind == "look":
                atom = draw(st.sampled_from(["(?={})", "(?!{})", "(?<={})"])).format(inner)
                inner_groups = []
            elif kind == "named":
                name = f"g{depth}{len(groups)}{draw(st.integers(0, 9))}"
                if name in groups:
                    name += "x"
                atom = f"(?P<{name}>{inner})"
                inner_groups = [name, *inner_groups]
            else:
                atom = f"(?:{inner})"
            groups += inner_groups
            if kind in ("look",):
                parts.append(atom)
                continue
            quantifier = draw(st.sampled_from(["", "", "?"]))  # groups: at most optional
            parts.append(atom + quantifier)
            continue
        quantifier = draw(
            st.sampled_from(["", "", "", "?", "*", "+", "*?", "+?", "{0,2}", "{1,3}"])
        )
        parts.append(atom + quantifier)
    return "".join(parts), groups


@st.composite
def value_parser(draw) -> dict:
    name = draw(st.sampled_from(["text", "int", "json", "bool"]))
    spec: dict = {"name": name}
    if name == "json" and draw(st.booleans()):
        spec["args"] = {"allow_non_json": draw(st.booleans())}
    return spec


@st.composite
def content_spec(draw) -> dict:
    """`content` and `content_args` (maybe with a transform suiting python-call-list)."""
    content = draw(
        st.sampled_from(
            ["text", "int", "float", "bool", "json", "xml-inline", "kv-lines", "python-call-list"]
        )
    )
    out: dict = {"content": content}
    args: dict = {}
    if content in ("text", "int", "float", "bool") and draw(st.booleans()):
        args["strip"] = draw(st.booleans())
    elif content == "json":
        for key in ("unquoted_keys", "allow_non_json"):
            if draw(st.booleans()):
                args[key] = draw(st.booleans())
        if draw(st.integers(0, 3)) == 0:
            args["string_delims"] = draw(
                st.sampled_from([[["<<", ">>"]], [["'", "'"]], [["«", "»"], ["'", "'"]]])
            )
        if draw(st.integers(0, 3)) == 0:
            args["decode_json_strings"] = draw(st.sampled_from([["arguments"], ["a", "b"]]))
    elif content == "xml-inline":
        args["tag_pattern"] = draw(
            st.sampled_from(
                [
                    r"<parameter=(?P<key>\w+)>(?P<value>.*?)</parameter>",
                    r"<(?P<key>\w+)>(?P<value>[^<]*)</(?P=key)>",
                    r"(?P<key>[a-z]+)=(?P<value>\d*)",
                    r"<(?P<key>\w)>\s*(?P<value>.*?)\s*</\w>",
                ]
            )
        )
        if draw(st.booleans()):
            args["value_parser"] = draw(value_parser())
        if draw(st.booleans()):
            args["merge_duplicates"] = draw(st.booleans())
    elif content == "kv-lines":
        if draw(st.booleans()):
            args["line_sep"] = draw(st.sampled_from(["\n", ";", "|"]))
        if draw(st.booleans()):
            args["kv_sep"] = draw(st.sampled_from([":", "=", "->"]))
        if draw(st.booleans()):
            args["strip"] = draw(st.booleans())
        if draw(st.booleans()):
            args["value_parser"] = draw(value_parser())
    if args or draw(st.booleans()):
        out["content_args"] = args
    if content == "python-call-list" and draw(st.booleans()):
        out["transform"] = {
            "type": "function",
            "function": {"name": "{name}", "arguments": "{arguments}"},
        }
        out["transform_each"] = True
    elif content == "json" and draw(st.integers(0, 3)) == 0:
        out["transform"] = {"function": "{content}"}
    return out


def _splice(draw, text: str, pieces: list[str], max_inserts: int) -> str:
    for _ in range(draw(st.integers(0, max_inserts))):
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(pieces)) + text[at:]
    return text


@st.composite
def fuzz_cases(draw) -> dict:
    template, prefix, generation = draw(template_and_generation())
    # Hypothesis biases its own draws toward boundary values; rare mutations use a Random
    # it seeds (reproducible from the run's seed) so their odds are the ones written here.
    rng = draw(st.randoms(use_true_random=True))
    fields = template["fields"]
    for name, field in list(fields.items()):
        if rng.random() < 0.5:  # a random content type
            groups_transform = field.get("transform")
            field.pop("content_args", None)
            spec = draw(content_spec())
            if groups_transform is not None:
                spec.pop("transform", None)
                spec.pop("transform_each", None)
            field.update(spec)
            if "join" in field and spec["content"] != "text":
                field.pop("join")
        for side in ("open", "close"):
            if rng.random() < 0.2 and (
                side == "close" or "open" in field or "open_pattern" in field
            ):
                pattern, _ = draw(safe_regex())
                groups = sorted(regex.compile(pattern, regex.DOTALL).groupindex)
                field.pop(side, None)
                field[f"{side}_pattern"] = pattern
                if groups and "transform" not in field:
                    field["transform"] = {
                        "value": "{content}",
                        **{g: "{" + g + "}" for g in groups},
                    }
                if (
                    "transform" in field
                    and isinstance(field["transform"], dict)
                    and not field.get("transform_each")
                ):
                    field.pop("join", None)
        if rng.random() < 0.05:
            field["optional"] = False
    if rng.random() < 0.1:
        template.pop("start_anchor")
        template["start_anchor_pattern"] = draw(
            st.sampled_from([r"<S>\n?", r"<S(?:x)?>", r"(?<=k)<S>", r"<S>(?=x)"])
        )
    if rng.random() < 0.04:  # a broken template: must be a TemplateError
        breakage = draw(
            st.sampled_from(
                ["unknown_key", "bad_type", "empty_fields", "bad_regex", "both", "mixed"]
            )
        )
        some = fields[next(iter(fields))]
        if breakage == "unknown_key":
            some["opne"] = "<x>"
        elif breakage == "bad_type":
            some["repeats"] = "yes"
        elif breakage == "empty_fields":
            template["fields"] = {}
        elif breakage == "bad_regex":
            some["close_pattern"] = "(<x"
            some.pop("close", None)
        elif breakage == "both":
            some["close"], some["close_pattern"] = "</x>", "</x>"
        else:
            some["transform"] = {"a": "x {content}"}
    pieces = [*ODD_CHARACTERS, *CONTENT_SNIPPETS, draw(st.text(max_size=6))]
    generation = _splice(draw, generation, pieces, 4)
    prefix = _splice(draw, prefix, ODD_CHARACTERS, 1)
    cuts = sorted(set(draw(st.lists(st.integers(0, max(len(generation), 0)), max_size=8))))
    return {"template": template, "prefix": prefix, "generation": generation, "cuts": cuts}


# -- running one case -------------------------------------------------------------------

DOCUMENTED = (TemplateError, ResponseParseError)


class Crash(Exception):
    """A failed check: `signature` groups crashes of the same cause."""

    def __init__(self, signature: tuple, expected, got, chunks=None):
        self.signature, self.expected, self.got, self.chunks = signature, expected, got, chunks
        super().__init__(f"{signature}: expected {expected!r}, got {got!r}")


def _where(error: BaseException) -> str:
    frames = [f for f in traceback.extract_tb(error.__traceback__) if "/engine/" in f.filename]
    frame = frames[-1] if frames else traceback.extract_tb(error.__traceback__)[-1]
    return f"{Path(frame.filename).name}:{frame.lineno}"


def _region_texts(events) -> list[tuple[str, str]]:
    regions, current = [], None
    for event in events:
        if event["type"] == "region_open":
            current = [event["field"], ""]
            regions.append(current)
        elif event["type"] == "region_chunk":
            if current is None or current[0] != event["field"]:
                raise Crash(("chunk outside its region",), "region_open first", event)
            current[1] += event["text"]
    return [tuple(r) for r in regions]


def _stream(template, prefix, chunks) -> tuple:
    """('ok', message, region texts) or ('error', type, message); a crash raises Crash."""
    try:
        parser = ResponseParser(template, prefix=prefix, regex_timeout=REGEX_TIMEOUT)
        events = list(parser.initial_events)
        for chunk in chunks:
            events += parser.feed(chunk)
        message, final = parser.finalize()
    except DOCUMENTED as error:
        return ("error", type(error).__name__, str(error))
    except Exception as error:  # noqa: BLE001 - any other exception is the finding
        raise Crash(
            ("exception", "ResponseParser", type(error).__name__, _where(error)),
            "a message or a documented error",
            f"{type(error).__name__}: {error}",
            chunks,
        ) from error
    return ("ok", message, _region_texts(events + final))


def _events(template, prefix, chunks, scan_every_chunk: bool) -> tuple:
    """('ok', events) or ('error', type); `scan_every_chunk` turns the parser's quick path off
    (events with positions never take it), and positions are then dropped to compare."""
    try:
        parser = ResponseParser(
            template, prefix=prefix, regex_timeout=REGEX_TIMEOUT, positions=scan_every_chunk
        )
        events = list(parser.initial_events)
        for chunk in chunks:
            events += parser.feed(chunk)
        events += parser.finalize()[1]
    except DOCUMENTED as error:
        return ("error", type(error).__name__)
    if scan_every_chunk:
        events = [{k: v for k, v in event.items() if k not in ("start", "end")} for event in events]
    return ("ok", events)


def check_quick_path(template, prefix, chunks) -> None:
    """The quick path must give exactly the events of a full scan of every chunk."""
    quick, full = _events(template, prefix, chunks, False), _events(template, prefix, chunks, True)
    if "PatternTimeoutError" in (quick[1], full[1]):
        return
    if quick != full:
        raise Crash(("quick path differs from a full scan",), full, quick, chunks)


def chunks_of(generation: str, cuts: list[int]) -> list[str]:
    points = [0, *[c for c in cuts if 0 < c < len(generation)], len(generation)]
    return [generation[a:b] for a, b in zip(points, points[1:]) if b > a]


def check_tiles(result: engine.Trace, chunks) -> None:
    stream_text = result.prefix_tail + result.generation
    joined = "".join(span.text for span in result.spans)
    if joined != stream_text:
        raise Crash(("trace spans do not tile the input",), stream_text, joined, chunks)
    position = 0
    for span in result.spans:
        if span.stream_start != position or span.stream_end - span.stream_start != len(span.text):
            raise Crash(
                ("trace spans out of order",),
                position,
                (span.stream_start, span.stream_end, span.text),
                chunks,
            )
        position = span.stream_end


CASE_TIME_LIMIT = 5  # seconds; a case running longer is reported as a hang


class _Hang(BaseException):
    """Raised by the alarm inside a case that runs too long (BaseException: no handler swallows it)."""


def _on_alarm(signum, frame):
    raise _Hang()


def run_case(case: dict, stats: Counter | None = None) -> None:
    """Run every check on one case under a time limit; raise Crash on a finding (a hang included)."""
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(CASE_TIME_LIMIT)
    try:
        _run_case(case, stats)
    except _Hang:
        raise Crash(
            ("hang", "case ran over the time limit"),
            "a result",
            f"no result (stopped after {CASE_TIME_LIMIT} s)",
        ) from None
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _run_case(case: dict, stats: Counter | None = None) -> None:
    stats = stats if stats is not None else Counter()
    template, prefix, generation = case["template"], case["prefix"], case["generation"]
    try:
        loaded = engine.load_template(template)
    except TemplateError:
        stats["templates rejected"] += 1
        try:
            parse_response(generation, template, prefix=None)
        except TemplateError:
            return
        except Exception as error:  # noqa: BLE001
            raise Crash(
                ("exception", "broken template", type(error).__name__, _where(error)),
                "TemplateError",
                repr(error),
            ) from error
        raise Crash(("broken template accepted by parse_response",), "TemplateError", "no error")
    except Exception as error:  # noqa: BLE001
        raise Crash(
            ("exception", "load_template", type(error).__name__, _where(error)),
            "a template or TemplateError",
            repr(error),
        ) from error
    # Input checks: a missing prefix is the documented ValueError.
    try:
        parse_response(generation, loaded, prefix=None)
        raise Crash(("missing prefix accepted",), "ValueError", "no error")
    except ResponseParseError as error:
        raise Crash(("missing prefix",), "plain ValueError", repr(error)) from error
    except ValueError as error:
        if "prefix is required" not in str(error):
            raise Crash(
                ("missing prefix message",), "prefix is required ...", str(error)
            ) from error

    try:
        one_shot_message = (
            "ok",
            parse_response(generation, loaded, prefix=prefix, regex_timeout=REGEX_TIMEOUT),
        )
    except DOCUMENTED as error:
        one_shot_message = ("error", type(error).__name__, str(error))
    except Exception as error:  # noqa: BLE001
        raise Crash(
            ("exception", "parse_response", type(error).__name__, _where(error)),
            "a message or a documented error",
            f"{type(error).__name__}: {error}",
        ) from error
    if one_shot_message[1] != "PatternTimeoutError" and any(
        spec.content == "xml-inline" for spec in loaded.fields.values()
    ):
        # Without a time budget, xml-inline tag patterns may run on their standard-`re` equivalent.
        try:
            unbudgeted = ("ok", parse_response(generation, loaded, prefix=prefix))
        except DOCUMENTED as error:
            unbudgeted = ("error", type(error).__name__, str(error))
        if unbudgeted != one_shot_message:
            raise Crash(
                ("no time budget changes the result",), one_shot_message, unbudgeted, [generation]
            )
    reference = _stream(loaded, prefix, [generation])
    if "PatternTimeoutError" in (one_shot_message[1], reference[1]):
        stats["pattern timeouts"] += 1
        return  # timing-dependent: no equality to check
    if (
        one_shot_message[0] != reference[0]
        or one_shot_message[1] != reference[1]
        or (reference[0] == "error" and one_shot_message[2] != reference[2])
    ):
        raise Crash(
            ("parse_response differs from ResponseParser",),
            one_shot_message,
            reference[:2],
            [generation],
        )
    if reference[0] == "ok":
        stats["parsed"] += 1
    else:
        stats["parse errors"] += 1
        stats[f"parse errors: {reference[1]}"] += 0
    for chunks in (list(generation), chunks_of(generation, case["cuts"])):
        streamed = _stream(loaded, prefix, chunks)
        if streamed[1] == "PatternTimeoutError":
            stats["pattern timeouts"] += 1
            return
        if streamed != reference:
            kind = (
                "message"
                if streamed[:2] != reference[:2]
                else "region texts"
                if streamed[0] == "ok"
                else "error text"
            )
            raise Crash(("streamed differs from one-shot", kind), reference, streamed, chunks)
        check_quick_path(loaded, prefix, chunks)
    chunks = chunks_of(generation, case["cuts"])
    try:
        result = trace(
            generation, loaded, prefix=prefix, chunks=chunks, regex_timeout=REGEX_TIMEOUT
        )
    except PatternTimeoutError:
        stats["pattern timeouts"] += 1
        return
    except Exception as error:  # noqa: BLE001
        raise Crash(
            ("exception", "trace", type(error).__name__, _where(error)),
            "a Trace",
            f"{type(error).__name__}: {error}",
            chunks,
        ) from error
    check_tiles(result, chunks)
    if result.error is not None and result.error.type == "PatternTimeoutError":
        stats["pattern timeouts"] += 1
        return
    traced = (
        ("ok", result.message)
        if result.error is None
        else ("error", result.error.type, result.error.message)
    )
    if traced != one_shot_message:
        raise Crash(("trace differs from parse_response",), one_shot_message, traced, chunks)


# -- shrinking ----------------------------------------------------------------------------


def _signature(case: dict) -> tuple | None:
    try:
        run_case(case)
    except Crash as crash:
        return crash.signature
    return None


def _shrink_text(case: dict, key: str, signature: tuple, deadline: float) -> None:
    size = max(len(case[key]) // 2, 1)
    while size >= 1:
        i = 0
        while i < len(case[key]) and time.monotonic() < deadline:
            text = case[key]
            candidate = dict(case, **{key: text[:i] + text[i + size :]})
            if key == "generation":
                candidate["cuts"] = [c if c <= i else max(i, c - size) for c in case["cuts"]]
            if _signature(candidate) == signature:
                case.update(candidate)
            else:
                i += size
        size //= 2


def shrink(case: dict, signature: tuple, budget: float = 60.0) -> dict:
    """Greedily remove fields, keys, characters and cuts while the same crash persists."""
    global CASE_TIME_LIMIT
    case = json.loads(json.dumps(case))
    started = time.monotonic()
    saved, CASE_TIME_LIMIT = CASE_TIME_LIMIT, min(CASE_TIME_LIMIT, 2)
    try:
        return _shrink(case, signature, budget, started)
    finally:
        CASE_TIME_LIMIT = saved


def _shrink(case: dict, signature: tuple, budget: float, started: float) -> dict:
    for _ in range(3):
        before = json.dumps(case)
        for name in list(case["template"].get("fields", {})):
            candidate = json.loads(json.dumps(case))
            del candidate["template"]["fields"][name]
            if _signature(candidate) == signature:
                case = candidate
        for name, field in list(case["template"].get("fields", {}).items()):
            for key in list(field) if isinstance(field, dict) else []:
                candidate = json.loads(json.dumps(case))
                del candidate["template"]["fields"][name][key]
                if _signature(candidate) == signature:
                    case = candidate
        for key in list(case["template"]):
            candidate = json.loads(json.dumps(case))
            del candidate["template"][key]
            if _signature(candidate) == signature:
                case = candidate
        _shrink_text(case, "generation", signature, started + budget)
        _shrink_text(case, "prefix", signature, started + budget)
        for cut in list(case["cuts"]):
            candidate = dict(case, cuts=[c for c in case["cuts"] if c != cut])
            if _signature(candidate) == signature:
                case = candidate
        if json.dumps(case) == before or time.monotonic() - started > budget:
            break
    return case


# -- main ------------------------------------------------------------------------------------


def fuzz(cases: int, seed: int, report=print) -> dict:
    stats: Counter = Counter()
    crashes: dict[tuple, tuple[dict, Crash]] = {}
    started = time.monotonic()

    @hypothesis_seed(seed)
    @settings(
        max_examples=cases,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=fuzz_cases())
    def one(case):
        stats["cases run"] += 1
        try:
            run_case(case, stats)
        except Crash as crash:
            stats["crashes"] += 1
            crashes.setdefault(crash.signature, (json.loads(json.dumps(case)), crash))
        done = stats["cases run"]
        if done % 1000 == 0:
            report(
                f"... {done} cases, {time.monotonic() - started:.0f} s, {len(crashes)} distinct crashes",
                flush=True,
            )

    one()
    stats["distinct crashes"] = len(crashes)
    report(f"cases run: {stats['cases run']}  (seed {seed}, {time.monotonic() - started:.0f} s)")
    for key in (
        "templates rejected",
        "parsed",
        "parse errors",
        "pattern timeouts",
        "crashes",
        "distinct crashes",
    ):
        report(f"{key}: {stats[key]}")
    minimal = []
    for signature, (case, crash) in crashes.items():
        small = shrink(case, signature)
        try:
            run_case(small)
            final = crash
        except Crash as again:
            final = again
        minimal.append(
            {
                "signature": list(signature),
                "case": small,
                "chunks": final.chunks,
                "expected": final.expected,
                "got": final.got,
            }
        )
        report("\nCRASH " + " / ".join(map(str, signature)))
        report("  template:   " + json.dumps(small["template"], ensure_ascii=True))
        report("  prefix:     " + repr(small["prefix"]))
        report("  generation: " + repr(small["generation"]))
        report("  chunks:     " + repr(final.chunks))
        report("  expected:   " + repr(final.expected))
        report("  got:        " + repr(final.got))
    return {"stats": dict(stats), "crashes": minimal}


def main(argv: list[str] | None = None) -> int:
    global REGEX_TIMEOUT
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--cases", type=int, default=20000, help="number of generated cases (default 20000)"
    )
    parser.add_argument(
        "--seed", type=int, default=None, help="hypothesis seed (default: random, printed)"
    )
    parser.add_argument(
        "--timeout", type=float, default=REGEX_TIMEOUT, help="regex budget per call, seconds"
    )
    args = parser.parse_args(argv)
    REGEX_TIMEOUT = args.timeout
    seed = args.seed if args.seed is not None else random.randrange(2**32)
    result = fuzz(args.cases, seed)
    return 1 if result["crashes"] else 0


if __name__ == "__main__":
    sys.exit(main())
