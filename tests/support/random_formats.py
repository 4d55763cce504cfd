"""Random output formats, each with outputs and the messages they mean: development material for
learning a format from example outputs that cannot be overfitted.

A format is drawn from a small grammar of features (`FEATURES`, and with `more` those of `MORE_FEATURES`), seeded:

* reasoning wrapper: none, markup (``<a>…</a>``), brackets (``[A]…[/A]``), special tokens
  (``<|a|>…<|b|>``), or pre-written (the prompt ends with the opener);
* answer wrapper: none, markup, brackets, special tokens;
* headers between regions: none, one (before the answer), one per region (a marker, a word
  that names the region, a marker);
* call syntax: a JSON object per call (the name inside, under keys drawn from a few pairs), a
  JSON list of them, a Python-style list, or the name in a header followed by its arguments as
  JSON, as ``key:value`` pairs in braces, as Python keyword arguments, as tags, or as
  ``key: value`` lines;
* the call open: markup, a special token, a plain word, or none (where the payload says where
  a call starts); the close: its own marker or none (the end of the output closes the calls);
* separators between calls, and blanks after opens and before closes;
* JSON written with blanks after ``:`` and ``,`` or without; reasoning and answers of one
  sentence, or of several sentences over lines.

With `more`, facts seen in real outputs too (`MORE_FEATURES`): a header word each output writes
anew, calls keyed by the function's name, quotes inside string values, Python-style calls
without list brackets, answer markup only some outputs write, a JSON arguments key that varies
between outputs, and an index only some outputs write between calls.

Marker strings are random consonant runs, never a real model's markers. `Format.example(rng)`
writes one output with its expected message; `Format.examples()` gives the two examples a
learner gets (one call with two arguments after an answer; two calls), `Format.fresh(rng, n)`
other outputs to check on.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "find_item",
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "limit": {"type": "integer"},
                    "exact": {"type": "boolean"},
                },
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "send_note",
            "parameters": {
                "type": "object",
                "properties": {"to": {"type": "string"}, "text": {"type": "string"}},
            },
        },
    },
]
PARAMETERS = {
    tool["function"]["name"]: tool["function"]["parameters"]["properties"] for tool in TOOLS
}
WORDS = "river stone maple quiet amber north harbor candle meadow silver window orchard".split()
# Argument values: names no sentence of `WORDS` holds.
NAMES = "Paris Oslo Lima Kyiv Quito Accra Perth Hanoi Dakar Riga Tunis Sofia".split()
CONSONANTS = "bcdfghjklmnpqrstvwxz"

FEATURES = {
    "reasoning": ("none", "markup", "bracket", "special", "prewritten"),
    "answer": ("none", "markup", "bracket", "special"),
    "headers": ("none", "one", "per-region"),
    "calls": (
        "json-object",
        "json-list",
        "python-list",
        "name-json",
        "name-braces",
        "name-python",
        "name-tags",
        "name-lines",
    ),
    "call_open": ("markup", "special", "word", "none"),
    "call_close": ("marker", "none"),
    "separator": ("none", "newline", "comma", "space"),
    "blanks": ("none", "space", "newline"),
    "json": ("spaced", "compact"),
    "prose": ("sentence", "lines"),
}
# Features drawn only with `random_format(seed, more=True)`, from a generator of their own so
# that the formats of `FEATURES` stay the same: the word of a header that each output writes
# anew (a recipient, a channel name).
MORE_FEATURES = {
    "header_word": ("fixed", "varies"),
    # Calls as a JSON list of objects keyed by the function's name (``[{"NAME": {...}}]``),
    # in place of the drawn call syntax.
    "keyed_list": ("no", "yes"),
    # Format facts seen in real outputs (each drawn after the ones above, so those stay drawn
    # the same). Quotes inside string values: code (``print('Oslo')``) and quoted words.
    "quoted_values": ("no", "yes"),
    # A Python-style list written without its brackets: the calls one after another.
    "bare_python": ("no", "yes"),
    # The answer's markup written by only some outputs (the others write the bare text); the
    # examples write it.
    "optional_answer": ("no", "yes"),
    # A JSON call's arguments key that varies between outputs (``arguments`` or ``parameters``);
    # the two examples write one each.
    "arguments_key": ("fixed", "varies"),
    # A token that only some outputs write between two calls: an index that varies (``#7``).
    "call_index": ("no", "some"),
    # A header word between a marker and the body that varies between outputs: the content's
    # header names a channel, one of a few, anew in each output (the examples show one of them).
    "channel_word": ("fixed", "varies"),
    # A second call syntax that some outputs write (calls written as JSON objects or a JSON list
    # only): bare JSON call objects with no marker around them, or each call as its name, a
    # marker and the arguments (``NAME[ARGS]{...}``). The second example writes it, the first
    # the format's own; other outputs write either.
    "second_syntax": ("none", "bare-json", "name-args"),
    # Tag-style arguments (calls ``name-tags``) of a tool with an object parameter: the object
    # written as tags inside its parameter's tag. The first example calls that tool.
    "nested_tags": ("no", "yes"),
    # Tag-style arguments: the tag names its parameter in an attribute and says in another
    # whether the value is a string, the others written as JSON
    # (``<arg name="days" string="false">3</arg>``); some strings are digits.
    "tag_attributes": ("no", "yes"),
    # Arguments after the name (calls ``name-json``) in a dialect of JSON: keys without quotes,
    # strings between marks of the format's own (``{city:<|ab|>Oslo<|ab|>,days:3}``, ``«Oslo»``).
    "json_dialect": ("no", "yes"),
}
# The tool with an object parameter the calls of `nested_tags` may make.
NESTED_TOOL = {
    "type": "function",
    "function": {
        "name": "plan_trip",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "stay": {
                    "type": "object",
                    "properties": {"nights": {"type": "integer"}, "hotel": {"type": "string"}},
                },
            },
        },
    },
}
# The two keys a JSON call's arguments go under when `arguments_key` varies.
ARGUMENTS_KEYS = ("arguments", "parameters")
# Where a header writes this output's channel word (`channel_word`).
CHANNEL = "{channel}"
# The keys a JSON call object holds its name and arguments under.
CALL_KEYS = [("name", "arguments"), ("name", "parameters"), ("tool", "args"), ("function", "input")]


def _word(rng: random.Random, size: int | None = None) -> str:
    return "".join(rng.choice(CONSONANTS) for _ in range(size or rng.randint(2, 5)))


def _pair(rng: random.Random, kind: str) -> tuple[str, str]:
    word = _word(rng)
    if kind == "markup":
        return f"<{word}>", f"</{word}>"
    if kind == "bracket":
        return f"[{word.upper()}]", f"[/{word.upper()}]"
    if kind == "special":
        return f"<|{word}|>", f"<|{_word(rng)}|>"
    return f"{word}:", ""


def _value(rng: random.Random, schema: dict, quotes: bool = False, digits: bool = False):
    """A value of `schema`'s type; with `quotes`, strings may hold quotes; with `digits`, some
    strings are digits."""
    kind = schema["type"]
    if kind == "object":
        return {
            key: _value(rng, value, quotes, digits) for key, value in schema["properties"].items()
        }
    if kind == "integer":
        return rng.randint(1, 999)
    if kind == "boolean":
        return rng.random() < 0.5
    if digits and rng.random() < 0.3:
        return str(rng.randint(10000, 99999))
    words = " ".join(rng.choice(NAMES) for _ in range(rng.randint(1, 2)))
    if quotes and rng.random() < 0.6:
        return rng.choice((f"print('{words}')", f'say "{words}" twice', f"{words}'s"))
    return words


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 7))).capitalize() + "."


@dataclass
class Format:
    """One random output format: its features and the markers drawn for them."""

    seed: int
    features: dict[str, str]
    anchor: str
    reasoning: tuple[str, str] = ("", "")
    answer: tuple[str, str] = ("", "")
    headers: dict[str, str] = field(default_factory=dict)
    call_open: str = ""
    call_close: str = ""
    separator: str = ""
    blank: str = ""
    keys: tuple[str, str] = ("name", "arguments")
    middle: str = ""
    # The word each output writes in its headers' "{}" (a header word that varies).
    header_word: str = ""
    # Which of the two examples is being written (0, 1), or None for another output.
    teaching: int | None = None
    # Per output: the answer written without its markup; the index written before the second
    # call and counted up (0: none).
    bare_answer: bool = False
    index_start: int = 0
    # The channel words the content's header may write (`channel_word`), and this output's.
    channels: tuple[str, ...] = ()
    channel: str = ""
    # The marker between a call's name and its arguments in the second call syntax
    # (``[ARGS]``), and whether this output writes its calls in that syntax.
    arguments_marker: str = ""
    second: bool = False
    # The marks a string is written between in the arguments' dialect of JSON (`json_dialect`).
    string_marks: tuple[str, str] = ("«", "»")

    @property
    def prefix(self) -> str:
        lead = self.reasoning[0] if self.features["reasoning"] == "prewritten" else ""
        return f"USER: what now?\n{self.anchor}{lead}"

    def base(self) -> dict:
        """The template a chat template would give: the start anchor, nothing else."""
        return {"start_anchor": self.anchor, "fields": {"content": {}}}

    # -- writing ----------------------------------------------------------------------------

    @property
    def tools(self) -> list[dict]:
        """The tools the prompt offers: with `nested_tags`, one more with an object parameter."""
        return TOOLS + [NESTED_TOOL] if self.features.get("nested_tags") == "yes" else TOOLS

    def _tag(self, key: str, value) -> str:
        """One tag-style argument; an object as tags inside the tag."""
        if isinstance(value, dict):
            inner, kind = "".join(self._tag(k, v) for k, v in value.items()), "false"
        else:
            inner, kind = _bare(value), "true" if isinstance(value, str) else "false"
        if self.features.get("tag_attributes") == "yes":
            return f'<arg name="{key}" string="{kind}">{inner}</arg>'
        return f"<arg={key}>{inner}</arg>"

    def _arguments(self, name: str, arguments: dict) -> str:
        shape = self.features["calls"]
        if shape == "name-braces":
            return "{" + ",".join(f"{k}:{_bare(v)}" for k, v in arguments.items()) + "}"
        if shape == "name-python":
            return "(" + ", ".join(f"{k}={_python(v)}" for k, v in arguments.items()) + ")"
        if shape == "name-tags":
            return "".join(self._tag(k, v) for k, v in arguments.items())
        if shape == "name-lines":
            return "".join(f"\n{k}: {_bare(v)}" for k, v in arguments.items()) + "\n"
        if shape == "name-json" and self.features.get("json_dialect") == "yes":
            return self._dialect(arguments)
        return self._json(arguments)

    def _dialect(self, value) -> str:
        """`value` in the arguments' dialect of JSON: keys bare, strings between the marks."""
        if isinstance(value, dict):
            return "{" + ",".join(f"{k}:{self._dialect(v)}" for k, v in value.items()) + "}"
        if isinstance(value, list):
            return "[" + ",".join(self._dialect(item) for item in value) + "]"
        if isinstance(value, str):
            return f"{self.string_marks[0]}{value}{self.string_marks[1]}"
        return _json(value)

    def _json(self, value) -> str:
        compact = self.features["json"] == "compact"
        return json.dumps(value, separators=(",", ":") if compact else None)

    def _sentences(self, rng: random.Random) -> str:
        if self.features["prose"] == "sentence":
            return _sentence(rng)
        return "\n".join(_sentence(rng) for _ in range(rng.randint(2, 3)))

    def _call(self, index: int, name: str, arguments: dict) -> str:
        shape = self.features["calls"]
        if shape == "json-object":
            return self._json({self.keys[0]: name, self.keys[1]: arguments})
        middle = self.middle.replace("#", str(index))
        return f"{name}{middle}{self._arguments(name, arguments)}"

    def _second_calls(self, calls: list[tuple[str, dict]]) -> tuple[list[str], str]:
        """The calls in the second call syntax, each written, and what parts them: bare JSON
        objects one a line, or each call as the open, the name, the arguments' marker and the
        arguments."""
        if self.features["second_syntax"] == "bare-json":
            return [self._json({self.keys[0]: n, self.keys[1]: a}) for n, a in calls], "\n"
        blank = self.blank
        return [
            f"{self.call_open}{blank if self.call_open else ''}{n}{self.arguments_marker}"
            f"{self._json(a)}{blank if self.call_close else ''}{self.call_close}"
            for n, a in calls
        ], ""

    def _joined(self, written: list[str], separator: str) -> str:
        """The calls written one after another, parted by `separator`; with an index, it
        stands before each call after the first."""
        if not self.index_start:
            return separator.join(written)
        between = separator or " "
        return written[0] + "".join(
            f"{separator}#{self.index_start + i}{between}{call}"
            for i, call in enumerate(written[1:])
        )

    def _calls(self, calls: list[tuple[str, dict]]) -> str:
        shape, blank = self.features["calls"], self.blank
        if self.second:
            return self._joined(*self._second_calls(calls))
        if self.features.get("keyed_list") == "yes":
            body = self._json([{n: a} for n, a in calls])
            return (
                f"{self.call_open}{blank}{body}{blank if self.call_close else ''}{self.call_close}"
            )
        if shape == "json-list":
            body = self._json([{self.keys[0]: n, self.keys[1]: a} for n, a in calls])
            return (
                f"{self.call_open}{blank}{body}{blank if self.call_close else ''}{self.call_close}"
            )
        if shape == "python-list":
            written = [
                f"{n}(" + ", ".join(f"{k}={_python(v)}" for k, v in a.items()) + ")"
                for n, a in calls
            ]
            if self.features.get("bare_python") == "yes":
                body = (self.separator or "\n").join(written)
            else:
                body = "[" + ", ".join(written) + "]"
            return (
                f"{self.call_open}{blank}{body}{blank if self.call_close else ''}{self.call_close}"
            )
        written = [
            f"{self.call_open}{blank if self.call_open else ''}{self._call(i, n, a)}"
            f"{blank if self.call_close else ''}{self.call_close}"
            for i, (n, a) in enumerate(calls)
        ]
        return self._joined(written, self.separator)

    def write(self, reasoning: str, content: str, calls: list[tuple[str, dict]]) -> str:
        parts = []
        headers = {
            region: header.replace("{}", self.header_word).replace(CHANNEL, self.channel)
            for region, header in self.headers.items()
        }
        if self.features["reasoning"] == "prewritten":
            parts.append(f"{reasoning}{self.reasoning[1]}")
        elif reasoning and self.features["reasoning"] != "none":
            parts.append(
                headers.get("reasoning", "") + f"{self.reasoning[0]}{reasoning}{self.reasoning[1]}"
            )
        if content:
            opener, closer = ("", "") if self.bare_answer else self.answer
            parts.append(headers.get("content", "") + f"{opener}{content}{closer}")
        if calls:
            parts.append(headers.get("calls", "") + self._calls(calls))
        return "\n".join(parts)

    def example(
        self,
        rng: random.Random,
        reasoning: bool,
        content: bool,
        calls: int,
        arguments: int | None = None,
    ) -> dict:
        """One output and its expected message."""
        thought = (
            self._sentences(rng) if reasoning or self.features["reasoning"] == "prewritten" else ""
        )
        if self.features["reasoning"] == "none":
            thought = ""
        answer = self._sentences(rng) if content else ""
        if self.features.get("header_word") == "varies":
            self.header_word = _word(rng, rng.randint(3, 6))
        teaching = self.teaching
        self.bare_answer = (
            self.features.get("optional_answer") == "yes"
            and teaching is None
            and rng.random() < 0.5
        )
        if self.features.get("arguments_key") == "varies":
            key = ARGUMENTS_KEYS[teaching] if teaching is not None else rng.choice(ARGUMENTS_KEYS)
            self.keys = (self.keys[0], key)
        self.index_start = 0
        if self.features.get("call_index") == "some":
            if teaching == 1 or (teaching is None and rng.random() < 0.5):
                self.index_start = rng.randint(1, 50)
        if self.channels and self.features.get("channel_word") == "varies":
            self.channel = self.channels[0] if teaching is not None else rng.choice(self.channels)
        if self.features.get("second_syntax", "none") != "none":
            self.second = teaching == 1 or (teaching is None and rng.random() < 0.5)
        quotes = self.features.get("quoted_values") == "yes"
        digits = self.features.get("tag_attributes") == "yes"
        parameters = {
            tool["function"]["name"]: tool["function"]["parameters"]["properties"]
            for tool in self.tools
        }
        made = []
        for at in range(calls):
            name = rng.choice(sorted(parameters))
            if self.features.get("nested_tags") == "yes" and teaching == 0 and at == 0:
                name = NESTED_TOOL["function"]["name"]
            keys = list(parameters[name])
            count = arguments if arguments is not None else rng.randint(1, len(keys))
            chosen = keys[: max(1, min(count, len(keys)))]
            made.append(
                (
                    name,
                    {key: _value(rng, parameters[name][key], quotes, digits) for key in chosen},
                )
            )
        expected: dict = {"role": "assistant"}
        if thought:
            expected["reasoning_content"] = thought
        if made:
            expected["tool_calls"] = [
                {"type": "function", "function": {"name": n, "arguments": a}} for n, a in made
            ]
        if answer:
            expected["content"] = answer
        return {
            "prefix": self.prefix,
            "output": self.write(thought, answer, made),
            "tools": self.tools,
            "expected": expected,
        }

    def examples(self, single_calls: bool = False) -> list[dict]:
        """The two examples a learner gets: reasoning, an answer and one call with two
        arguments; reasoning and two calls (with `single_calls`, one call of any arguments:
        no example shows what parts two calls or two arguments)."""
        rng = random.Random(self.seed * 7 + 1)
        shapes = [(True, True, 1, None), (True, False, 1, None)]
        if not single_calls:
            shapes = [(True, True, 1, 2), (True, False, 2, None)]
        found = []
        for teaching, (reasoning, content, calls, arguments) in enumerate(shapes):
            self.teaching = teaching
            try:
                found.append(self.example(rng, reasoning, content, calls, arguments))
            finally:
                self.teaching = None
        return found

    def fresh(self, count: int = 20) -> list[dict]:
        """`count` other outputs of the format: reasoning, an answer and up to three calls each
        there or not (an answer or a call always)."""
        rng = random.Random(self.seed * 7 + 2)
        found = []
        for _ in range(count):
            calls = rng.choice([0, 1, 1, 2, 3])
            content = calls == 0 or rng.random() < 0.5
            found.append(self.example(rng, rng.random() < 0.8, content, calls))
        return found


def _json(value) -> str:
    return json.dumps(value)


def _python(value) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"
    return _json(value)


def _bare(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def random_format(seed: int, more: bool = False) -> Format:
    """The format `seed` draws (the same seed, the same format); with `more`, also the features
    of `MORE_FEATURES` (the features of `FEATURES` drawn the same)."""
    rng = random.Random(seed)
    features = {name: rng.choice(choices) for name, choices in FEATURES.items()}
    if more:
        extra = random.Random(f"more {seed}")
        features |= {name: extra.choice(choices) for name, choices in MORE_FEATURES.items()}
        if features["header_word"] == "varies" or features["channel_word"] == "varies":
            # The calls' header varies: both examples show it.
            features["headers"] = "per-region"
        # What a fact cannot go with: a second call syntax is one of JSON calls; objects and
        # attributes in tags are of tag-style arguments.
        if features["calls"] not in ("json-object", "json-list") or features["keyed_list"] == "yes":
            features["second_syntax"] = "none"
        if features["calls"] != "name-tags" or features["keyed_list"] == "yes":
            features["nested_tags"] = features["tag_attributes"] = "no"
        if features["calls"] != "name-json" or features["keyed_list"] == "yes":
            features["json_dialect"] = "no"
    shape = features["calls"]
    # What a feature cannot go with: a name written in a header needs an open unless the
    # arguments' own bracket follows it; lines need an open and a close.
    if shape in ("name-json", "name-tags", "name-lines") and features["call_open"] == "none":
        features["call_open"] = "special"
    if shape == "name-lines":
        features["call_close"] = "marker"
    if (
        shape in ("json-object", "name-json")
        and features["call_close"] == "none"
        and features["separator"] == "none"
    ):
        features["separator"] = "newline"
    if shape in ("name-braces", "name-python") and features["separator"] == "none":
        features["separator"] = "space"
    made = Format(seed, features, anchor=f"<|{_word(rng, 4)}|>\n")
    if features["reasoning"] != "none":
        made.reasoning = _pair(
            rng, "special" if features["reasoning"] == "prewritten" else features["reasoning"]
        )
    if features["answer"] != "none":
        made.answer = _pair(rng, features["answer"])
    left, right = f"<|{_word(rng, 3)}|>", f"<|{_word(rng, 3)}|>"
    if features["headers"] == "one":
        made.headers = {"content": f"{left}{_word(rng)}{right}"}
    elif features["headers"] == "per-region":
        made.headers = {
            region: f"{left}{_word(rng)}{right}" for region in ("reasoning", "content", "calls")
        }
        if features["reasoning"] == "prewritten":
            del made.headers["reasoning"]
    if features.get("header_word") == "varies":
        # The calls' header names a recipient anew in each output.
        made.headers["calls"] = f"{left}to={{}}{right}"
    if features.get("channel_word") == "varies":
        # The content's header names a channel, one of a few, anew in each output.
        words = random.Random(f"channels {seed}")
        made.channels = tuple(dict.fromkeys(_word(words, 5) for _ in range(3)))
        # The header's own word stays when the fact is switched off after drawing.
        made.channel = made.headers["content"][len(left) : -len(right)]
        made.headers["content"] = f"{left}{CHANNEL}{right}"
    marks = random.Random(f"dialect {seed}")
    word = _word(marks, 2)
    made.string_marks = marks.choice([(f"<|{word}|>",) * 2, (f"<{word}>",) * 2, ("«", "»")])
    if features.get("second_syntax") == "name-args":
        made.arguments_marker = f"[{_word(random.Random(f'arguments {seed}'), 4).upper()}]"
    opener, closer = {
        "markup": _pair(rng, "markup"),
        "special": _pair(rng, "special"),
        "word": (_word(rng, 4), ""),
        "none": ("", ""),
    }[features["call_open"]]
    if features["call_open"] == "word":
        closer = f"<|{_word(rng, 3)}|>"
    made.call_open = opener
    made.call_close = closer if features["call_close"] == "marker" else ""
    made.separator = {"none": "", "newline": "\n", "comma": ", ", "space": " "}[
        features["separator"]
    ]
    made.blank = {"none": "", "space": " ", "newline": "\n"}[features["blanks"]]
    if features["call_open"] == "word" and not made.blank:
        made.blank = " "  # a word glued to what follows it would be one word
    made.keys = rng.choice(CALL_KEYS)
    if shape == "name-json":
        made.middle = rng.choice(["", ":#", "\n", " ", f"<|{_word(rng, 3)}|>"])
    elif shape == "name-tags":
        made.middle = rng.choice(["\n", " ", f"<|{_word(rng, 3)}|>"])
    return made
