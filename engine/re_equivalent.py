"""A standard-library `re` pattern that matches exactly like a template's `regex` pattern, where one exists.

Template patterns are compiled with the `regex` module (its syntax is the format's, see
docs/template-language.md, and its `timeout` bounds hostile ones). On some shapes the standard `re`
engine is several times faster, for example the lazy value of Qwen3-Coder's
`<parameter=(?P<key>\\w+)>\\s*(?P<value>.*?)\\s*</parameter>` tag pattern, which the
`regex` module steps through at about 8 ns per character and `re` at about 2.

`re_equivalent` returns such a pattern only when it can be sure both engines give
the same matches and groups:

* the pattern parses with the standard parser without warnings (POSIX classes,
  set operations and other `regex`-only syntax are rejected or warned about);
* only the DOTALL and MULTILINE flags are used (no case folding);
* `\\s`, `\\w`, `\\d` and their negations are replaced by the exact character sets
  the `regex` module gives them (the two engines define them differently, for
  example U+001C is `\\s` only for `re`, a combining accent is `\\w` only for `regex`);
* no word boundaries (`\\b`, `\\B`), whose meaning follows `\\w`;
* no `{` other than a counted repeat (the `regex` module reads `{e<=1}` as fuzzy matching);
* repeats apply to single characters only, there are no backreferences, and no two
  adjacent repeats of the same character (`\\s*\\s*`): the standard engine has no
  timeout and no guard against such backtracking, where the `regex` module has
  both (`(a|aa)+$`, or five `\\s*` in a row, take it seconds).

Both engines still backtrack polynomially on some shapes (Qwen3-Coder's tag
pattern on a value of thousands of spaces with no closing tag is cubic in
either, and `re` is about three times faster there); a time budget
(`regex_timeout`) is what bounds them, and with one set the `regex` pattern is used.

The caller still uses the `regex` pattern whenever a time budget is set.
"""

from __future__ import annotations

import array
import functools
import re
import re._compiler as sre_compiler
import re._constants as sre_constants
import re._parser as sre_parser
import sys
import warnings

import regex

_MAX_CODE_POINT = 0x10FFFF
_ALLOWED_REGEX_FLAGS = regex.DOTALL | regex.MULTILINE | regex.UNICODE | regex.VERSION0
_ALLOWED_RE_FLAGS = (
    sre_constants.SRE_FLAG_DOTALL
    | sre_constants.SRE_FLAG_MULTILINE
    | sre_constants.SRE_FLAG_UNICODE
)
# A `{` that is not a counted repeat: the regex module may read it as fuzzy matching (`{e<=1}`),
# the standard parser as literal text.
NOT_A_COUNTED_REPEAT = regex.compile(
    r"(?<!\\)(?:\\\\)*\{(?!\d*,?\d*\})"
)  # an escaped `\{` is literal in both

_CATEGORY_SOURCES = {
    sre_constants.CATEGORY_SPACE: (r"\s", False),
    sre_constants.CATEGORY_NOT_SPACE: (r"\s", True),
    sre_constants.CATEGORY_WORD: (r"\w", False),
    sre_constants.CATEGORY_NOT_WORD: (r"\w", True),
    sre_constants.CATEGORY_DIGIT: (r"\d", False),
    sre_constants.CATEGORY_NOT_DIGIT: (r"\d", True),
}
_SINGLE_CHARACTER = (
    sre_constants.LITERAL,
    sre_constants.NOT_LITERAL,
    sre_constants.ANY,
    sre_constants.IN,
)
_REPEATS = (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, sre_constants.POSSESSIVE_REPEAT)


class _NotEquivalent(Exception):
    pass


@functools.cache
def _code_point_blocks() -> tuple[tuple[int, str], ...]:
    """Every code point as text, in two blocks `(first code point, text)` around the surrogates."""
    blocks = []
    for low, high in ((0, 0xD7FF), (0xE000, _MAX_CODE_POINT)):
        codes = array.array("I", range(low, high + 1))
        if (
            codes.itemsize == 4
        ):  # decoding 4-byte code units is ~3x faster than chr() per code point
            text = codes.tobytes().decode("utf-32-le" if sys.byteorder == "little" else "utf-32-be")
        else:
            text = "".join(map(chr, range(low, high + 1)))
        blocks.append((low, text))
    return tuple(blocks)


@functools.cache
def _category_ranges(source: str, negated: bool) -> tuple[tuple[int, int], ...]:
    """Code point ranges `(low, high)` the `regex` module's `source` class (`\\s`, `\\w`, `\\d`) matches, or does not.

    Surrogates are in no positive class, so they fall in every negated one, as in `regex`.
    """
    if negated:
        complement, start = [], 0
        for low, high in _category_ranges(source, False):
            if low > start:
                complement.append((start, low - 1))
            start = high + 1
        if start <= _MAX_CODE_POINT:
            complement.append((start, _MAX_CODE_POINT))
        return tuple(complement)
    return tuple(
        (first + found.start(), first + found.end() - 1)
        for first, text in _code_point_blocks()
        for found in regex.finditer(f"{source}+", text)
    )


def _class_items(items: list) -> list:
    rewritten = []
    for op, av in items:
        if op is sre_constants.CATEGORY:
            if av not in _CATEGORY_SOURCES:
                raise _NotEquivalent
            rewritten += [
                (sre_constants.LITERAL, low) if low == high else (sre_constants.RANGE, (low, high))
                for low, high in _category_ranges(*_CATEGORY_SOURCES[av])
            ]
        elif op in (sre_constants.LITERAL, sre_constants.RANGE, sre_constants.NEGATE):
            rewritten.append((op, av))
        else:
            raise _NotEquivalent
    return rewritten


def _rewrite(pattern: sre_parser.SubPattern, inside_repeat: bool = False) -> None:
    """Replace category classes in place; raise _NotEquivalent on anything not known to match alike."""
    for (op, av), (next_op, next_av) in zip(pattern.data, pattern.data[1:]):
        if op in _REPEATS and next_op in _REPEATS and list(av[2]) == list(next_av[2]):
            raise _NotEquivalent  # `\s*\s*...`: the regex module merges these, re backtracks O(n^k)
    for index, (op, av) in enumerate(pattern.data):
        if op in (sre_constants.LITERAL, sre_constants.NOT_LITERAL, sre_constants.ANY):
            continue
        if op is sre_constants.IN:
            pattern.data[index] = (op, _class_items(list(av)))
        elif op in _REPEATS:
            body = av[2]
            if inside_repeat or len(body.data) != 1 or body.data[0][0] not in _SINGLE_CHARACTER:
                raise _NotEquivalent
            _rewrite(body, inside_repeat=True)
        elif inside_repeat:
            raise _NotEquivalent
        elif op is sre_constants.SUBPATTERN:
            group, add_flags, del_flags, body = av
            if (add_flags | del_flags) & ~_ALLOWED_RE_FLAGS:
                raise _NotEquivalent
            _rewrite(body)
        elif op is sre_constants.BRANCH:
            for branch in av[1]:
                _rewrite(branch)
        elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            _rewrite(av[1])
        elif op is sre_constants.ATOMIC_GROUP:
            _rewrite(av)
        elif op is sre_constants.AT and av not in (
            sre_constants.AT_BOUNDARY,
            sre_constants.AT_NON_BOUNDARY,
        ):
            continue
        else:
            raise _NotEquivalent


def re_equivalent(compiled: regex.Pattern) -> re.Pattern | None:
    """A standard `re` pattern with the same matches and groups as `compiled`, or None.

    Args:
        compiled: a pattern compiled with the `regex` module.

    Returns:
        A compiled `re.Pattern` (its `.pattern` is None: it is built from a rewritten parse
        tree), or None when equivalence cannot be shown (see the module docstring).
    """
    if compiled.flags & ~_ALLOWED_REGEX_FLAGS or NOT_A_COUNTED_REPEAT.search(compiled.pattern):
        return None
    flags = (re.DOTALL if compiled.flags & regex.DOTALL else 0) | (
        re.MULTILINE if compiled.flags & regex.MULTILINE else 0
    )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            parsed = sre_parser.parse(compiled.pattern, flags)
        if parsed.state.flags & ~_ALLOWED_RE_FLAGS:
            return None
        _rewrite(parsed)
        return sre_compiler.compile(parsed, flags)
    except (_NotEquivalent, re.error, Warning, RecursionError, OverflowError):
        return None
