"""A JSON Schema's bounds on values as grammar, for the forms that write a schema out themselves
(GBNF, and Lark for arguments that are not plain JSON): ``minimum``/``maximum`` (and their
exclusive forms) as digits, and ``pattern`` as a regex llguidance's Lark can intersect a string
with (`pattern_regex`). String lengths are repetition bounds on `ir.Text` (its writers).

Integers between two bounds are a finite set of digit strings: a range splits into ranges of
one length, and each of those into a few shapes "a fixed prefix, one digit from a range, any
digits" (``[1-8][0-9]`` and ``9[0-5]`` for 10 to 95). Numbers are written without an exponent
when bounded: an integer part in range and a fraction, the integer part at a bound taking only
the fractions that keep the value inside. Bounds must be whole numbers for numbers (`number`
raises ValueError otherwise: the caller notes the bound as not enforced).

Integers stay within 15 digits, as the unbounded grammar writes them (every value exact).
"""

from __future__ import annotations

import math

import regex

from .ir import CharSet, Lit, Node, Repeat, alt, optional, seq

DIGITS = CharSet(((48, 57),))
NONZERO = CharSet(((49, 57),))
LARGEST = 10**15 - 1  # the largest integer the grammar writes (15 digits)


def read_bounds(schema: dict) -> tuple[float | None, bool, float | None, bool]:
    """``(low, low_exclusive, high, high_exclusive)`` from `schema`'s ``minimum``, ``maximum``,
    ``exclusiveMinimum`` and ``exclusiveMaximum`` (numbers, or draft 4's booleans); None: no
    bound on that side. Of two bounds on one side, the tighter one."""
    low, low_x, high, high_x = None, False, None, False

    def number(value) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool)

    if number(schema.get("minimum")):
        low = schema["minimum"]
        low_x = schema.get("exclusiveMinimum") is True
    if number(schema.get("maximum")):
        high = schema["maximum"]
        high_x = schema.get("exclusiveMaximum") is True
    if number(schema.get("exclusiveMinimum")):
        value = schema["exclusiveMinimum"]
        if low is None or value >= low:
            low, low_x = value, True
    if number(schema.get("exclusiveMaximum")):
        value = schema["exclusiveMaximum"]
        if high is None or value <= high:
            high, high_x = value, True
    return low, low_x, high, high_x


def integer(schema: dict) -> Node | None:
    """The integers `schema`'s bounds allow, or None when it has none (the caller writes any
    integer).

    Raises:
        ValueError: the bounds allow no integer (the caller notes them as not enforced).
    """
    low, low_x, high, high_x = read_bounds(schema)
    if low is None and high is None:
        return None
    first = -LARGEST if low is None else math.floor(low) + 1 if low_x else math.ceil(low)
    last = LARGEST if high is None else math.ceil(high) - 1 if high_x else math.floor(high)
    first, last = max(first, -LARGEST), min(last, LARGEST)
    if first > last:
        raise ValueError("the bounds allow no integer")
    options = []
    if first < 0:  # negative values: a minus and a magnitude
        options.append(seq(Lit("-"), whole_range(max(1, -min(last, -1)), -first)))
    if last >= 0:
        options.append(whole_range(max(first, 0), last))
    return alt(*options)


def number(schema: dict) -> Node | None:
    """The numbers `schema`'s bounds allow (no exponent), or None when it has no bound.

    Raises:
        ValueError: a bound is not a whole number, or the bounds allow no number (the caller
            notes them as not enforced).
    """
    low, low_x, high, high_x = read_bounds(schema)
    if low is None and high is None:
        return None
    for bound in (low, high):
        if bound is not None and (bound != math.floor(bound) or abs(bound) > LARGEST):
            raise ValueError(f"the bound {bound} is not a whole number of at most 15 digits")
    low = None if low is None else int(low)
    high = None if high is None else int(high)
    if low is not None and high is not None and (low > high or low == high and (low_x or high_x)):
        raise ValueError("the bounds allow no number")
    options = []
    if high is None or high >= 0:  # zero and above
        start, start_x = (low, low_x) if low is not None and low >= 0 else (0, False)
        options.append(_non_negative(start, start_x, high, high_x))
    if low is None or low < 0:  # below zero: a minus and a magnitude above zero
        end, end_x = (-high, high_x) if high is not None and high < 0 else (0, True)
        options.append(
            seq(Lit("-"), _non_negative(end, end_x, None if low is None else -low, low_x))
        )
    options = [option for option in options if option is not None]
    if not options:
        raise ValueError("the bounds allow no number")
    return alt(*options)


def _non_negative(low: int, low_x: bool, high: int | None, high_x: bool) -> Node | None:
    """Numbers x >= 0 with low < x (low_x) or low <= x, and x < high (high_x) or x <= high
    (high None: no upper bound); None when there is none."""
    any_fraction = optional(seq(Lit("."), Repeat(DIGITS, 1, 15)))
    zero_fraction = optional(seq(Lit("."), Repeat(Lit("0"), 1, 15)))
    above_zero = seq(Lit("."), Repeat(Lit("0"), 0, 14), NONZERO, Repeat(DIGITS, 0, 14))
    if high is not None and low == high:
        return None if low_x or high_x else seq(Lit(str(low)), zero_fraction)
    options = [seq(Lit(str(low)), above_zero if low_x else any_fraction)]
    last_inner = LARGEST if high is None else high - 1
    if low + 1 <= last_inner:
        options.append(seq(whole_range(low + 1, last_inner), any_fraction))
    if high is not None and not high_x:
        options.append(seq(Lit(str(high)), zero_fraction))
    return alt(*options)


def whole_range(first: int, last: int) -> Node:
    """The integers `first`..`last` (0 <= first <= last) in decimal without leading zeros."""
    options = []
    for length in range(len(str(first)), len(str(last)) + 1):
        low = max(first, 10 ** (length - 1) if length > 1 else 0)
        high = min(last, 10**length - 1)
        if low <= high:
            options += _same_length(str(low), str(high))
    return alt(*options)


def _same_length(low: str, high: str) -> list[Node]:
    """Digit strings of one length from `low` to `high`."""
    if low == high:
        return [Lit(low)]
    if len(low) == 1:
        return [CharSet(((ord(low), ord(high)),))]
    if low[0] == high[0]:
        return [seq(Lit(low[0]), rest) for rest in _same_length(low[1:], high[1:])]
    size = len(low) - 1
    options: list[Node] = []
    first_full, last_full = int(low[0]), int(high[0])
    if low[1:] != "0" * size:
        options += [seq(Lit(low[0]), rest) for rest in _same_length(low[1:], "9" * size)]
        first_full += 1
    if high[1:] != "9" * size:
        last_full -= 1
    if first_full <= last_full:
        options.append(
            seq(
                CharSet(((48 + first_full, 48 + last_full),)),
                DIGITS if size == 1 else Repeat(DIGITS, size, size),
            )
        )
    if high[1:] != "9" * size:
        options += [seq(Lit(high[0]), rest) for rest in _same_length("0" * size, high[1:])]
    return options


# Escapes a JSON Schema pattern may use that the regex llguidance reads takes differently
# (JSON Schema's \d and \w are ASCII).
_CLASS_ESCAPES = {"d": "0-9", "w": "0-9A-Za-z_"}
_NEGATED_ESCAPES = {"D": "[^0-9]", "W": "[^0-9A-Za-z_]"}


def pattern_regex(pattern: str) -> str | None:
    """`pattern` (a JSON Schema ``pattern``: an ECMA regex that may match anywhere in the
    string) as a regex every whole string it allows matches, in llguidance's Lark syntax
    (inside ``/.../``), or None when it uses what that syntax cannot say here (lookaround,
    backreferences, word boundaries, anchors anywhere but at its two ends, or it does not
    compile)."""
    if not isinstance(pattern, str):
        return None
    try:
        regex.compile(pattern)
    except regex.error:
        return None
    if regex.search(r"\\[1-9bBkAzZG]|\(\?[=!<]|\(\?P=", pattern):
        return None
    body = pattern
    starts = body.startswith("^")
    ends = body.endswith("$") and not body.endswith("\\$")
    body = body[1 if starts else 0 : len(body) - 1 if ends else len(body)]
    out: list[str] = []
    depth = 0
    in_class = False
    index = 0
    while index < len(body):
        char = body[index]
        if char == "\\" and index + 1 < len(body):
            escaped = body[index + 1]
            if escaped in _CLASS_ESCAPES:
                inner = _CLASS_ESCAPES[escaped]
                out.append(inner if in_class else f"[{inner}]")
            elif escaped in _NEGATED_ESCAPES and not in_class:
                out.append(_NEGATED_ESCAPES[escaped])
            elif escaped in _NEGATED_ESCAPES:
                return None
            else:
                out.append(char + escaped)
            index += 2
            continue
        if in_class:
            in_class = char != "]" or out[-1] == "["
            out.append("\\/" if char == "/" else char)
        elif char == "[":
            in_class = True
            out.append(char)
        elif char in "^$":
            return None
        elif char == "|" and depth == 0 and (starts or ends):
            return None  # an anchor would bind to one alternative only
        else:
            depth += char == "("
            depth -= char == ")"
            out.append("\\/" if char == "/" else char)
        index += 1
    written = "".join(out)
    if not starts:
        written = "(?s:.)*(?:" + written + ")"
    if not ends:
        written = "(?:" + written + ")(?s:.)*"
    return written


def string_bounds(schema: dict, path: str, notes: list[str]) -> tuple[int, int | None, str | None]:
    """``(minLength, maxLength, pattern as a Lark regex)`` of a string schema; what cannot be
    enforced is noted (a pattern is enforced by the Lark form only)."""
    low = schema.get("minLength", 0)
    low = low if isinstance(low, int) and not isinstance(low, bool) and low > 0 else 0
    high = schema.get("maxLength")
    high = high if isinstance(high, int) and not isinstance(high, bool) and high >= low else None
    pattern = schema.get("pattern")
    regex_ = pattern_regex(pattern) if pattern is not None else None
    if pattern is not None and regex_ is None:
        notes.append(f"{path}: 'pattern' {pattern!r} is not enforced")
    elif pattern is not None:
        notes.append(f"{path}: 'pattern' is not enforced in the GBNF form and the structural tag")
    return low, high, regex_
