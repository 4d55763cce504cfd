"""Hypothesis strategies: generated response templates and generations that stress delimiter handling.

Delimiters are drawn from a small alphabet so that they collide: literal lists
where one literal is a prefix of another, delimiters sharing prefixes across
fields, and regexes with optional groups, alternatives of different lengths,
lookaheads and named groups. Generations are built from the same pieces.
"""

from __future__ import annotations

from hypothesis import strategies as st

LITERALS = ["<a>", "</a>", "<ab>", "<b>", "</b>", "<", "[T]", "[T]x", "<|e|>"]
# (pattern, named groups)
PATTERNS = [
    (r"<a\s*>", ()),
    (r"<b(?P<n>\d+)?>", ("n",)),
    (r"</a>|</ab>", ()),
    (r"\[T(?P<name>\w+)\]", ("name",)),
    (r"</b>(?=\s*<a>)", ()),
    (r"\s*</a>", ()),
    (r"(?<=\})\s*</b>", ()),
    (r"<c>(?!x)", ()),
    (r"<d>.*?</d>", ()),
]
TEXT_PIECES = [
    "x",
    "y",
    " ",
    "\n",
    "{",
    "}",
    '"',
    "1",
    "é",
    "<",
    ">",
    "/",
    "a",
    "b",
    "[",
    "T",
    "]",
    "|",
    "e",
    "d",
    "c",
    '{"k": 1}',
    "42",
]


@st.composite
def delimiter_spec(draw, side: str) -> dict:
    kind = draw(st.sampled_from(["literal", "literal_list", "pattern"]))
    if kind == "literal":
        return {side: draw(st.sampled_from(LITERALS))}
    if kind == "literal_list":
        return {
            side: draw(st.lists(st.sampled_from(LITERALS), min_size=1, max_size=3, unique=True))
        }
    pattern, _ = draw(st.sampled_from(PATTERNS))
    return {f"{side}_pattern": pattern}


def _named_groups(field: dict) -> list[str]:
    names = []
    for key in ("open_pattern", "close_pattern"):
        for pattern, groups in PATTERNS:
            if field.get(key) == pattern:
                names += groups
    return names


@st.composite
def templates(draw, contents: tuple[str, ...] = ("text",)) -> dict:
    """A valid template with 1 to 3 fields, maybe an implicit one, each with one of `contents`."""
    names = draw(
        st.lists(
            st.sampled_from(["reasoning_content", "tool_calls", "extra", "content"]),
            min_size=1,
            max_size=3,
            unique=True,
        )
    )
    implicit = draw(st.sampled_from([None, *names]))
    fields = {}
    for name in names:
        field: dict = {}
        if name != implicit:
            field.update(draw(delimiter_spec("open")))
        if draw(st.booleans()) or name == implicit and draw(st.booleans()):
            field.update(draw(delimiter_spec("close")))
        groups = _named_groups(field)
        if groups:
            field["transform"] = {"value": "{content}", **{g: "{" + g + "}" for g in groups}}
        repeat = draw(st.sampled_from(["no", "list", "join"]))
        if repeat != "no":
            field["repeats"] = True
        if repeat == "join" and not groups:
            field["join"] = draw(st.sampled_from(["", "\n", "|"]))
        content = draw(st.sampled_from(contents))
        if content != "text":
            field["content"] = content
        elif draw(st.integers(0, 4)) == 0:
            field["content_args"] = {"strip": False}
        fields[name] = field
    return {"defaults": {"role": "assistant"}, "start_anchor": "<S>", "fields": fields}


def generation_pieces(template: dict) -> list[str]:
    pieces = list(TEXT_PIECES)
    for field in template["fields"].values():
        for key in ("open", "close"):
            value = field.get(key)
            if isinstance(value, str):
                pieces.append(value)
            elif isinstance(value, list):
                pieces += value
    return pieces + ["<a>", "</a>", "<b7>", "</b>", "[Tfoo]", "<c>", "<d>", "</d>", "<ab>", "</ab>"]


@st.composite
def template_and_generation(draw, contents: tuple[str, ...] = ("text",)):
    template = draw(templates(contents))
    pieces = generation_pieces(template)
    generation = "".join(draw(st.lists(st.sampled_from(pieces), max_size=25)))
    prefix = draw(st.sampled_from(["", "<S>", "junk<S>", "<S>x<S>"])) + "".join(
        draw(st.lists(st.sampled_from(pieces), max_size=4))
    )
    return template, prefix, generation
