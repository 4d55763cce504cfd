"""Portability: will a runtime that serves response templates accept this one, and what changes
when it is exported there.

`target_diagnostics(template, target)` checks the rules each runtime enforces when it loads a
response template (docs/serving.md lists them with their sources):

* ``transformers``: `transformers.utils.chat_parsing` (5.25), the reference this format comes from;
* ``vllm``: vLLM's serving adapter (``validate_response_template_for_serving`` in
  ``vllm/parser/response_template.py``) and the parser copy it vendors
  (``vllm/parser/chat_parsing/``);
* ``sglang``: SGLang's serving adapter (``validate_response_template_for_serving`` in
  ``python/sglang/srt/parser/response_template.py``) and its vendored parser;
* ``vllm-rust``: the Rust port of vLLM's parser (``rust/src/parser/src/unified/hf/``).

Errors are what the runtime refuses; warnings are what it accepts but reads differently.

`export_for(template, target)` rewrites a template for a runtime where the difference is only a
name (``reasoning_content`` is ``thinking`` in vLLM and SGLang, and back for transformers) or
a key the runtime refuses but that changes nothing here (an explicit ``strip: true``), and lists
what cannot be carried over.
"""

from __future__ import annotations

import copy
import json
import re
import re._constants as sre
import re._parser as sre_parser
import warnings
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from ..template import ResponseTemplate, load_template
from ..template_files import is_template_file_data, read_json, template_file_path, template_source
from ..transform import placeholder_paths

TARGETS = ("transformers", "vllm", "sglang", "vllm-rust")
# Where each runtime's rules come from (named in every diagnostic).
SOURCES = {
    "transformers": "transformers 5.25, transformers/utils/chat_parsing",
    "vllm": "vLLM, validate_response_template_for_serving in vllm/parser/response_template.py",
    "vllm-parser": "vLLM's vendored parser, vllm/parser/chat_parsing/content_parsers.py",
    "sglang": "SGLang, validate_response_template_for_serving in python/sglang/srt/parser/response_template.py",
    "sglang-parser": "SGLang's vendored parser, python/sglang/srt/parser/chat_parsing/content_parsers.py",
    "vllm-rust": "vLLM's Rust parser, rust/src/parser/src/unified/hf/ (pattern.rs, template.rs, content.rs)",
}
# Field names the serving adapters of vLLM and SGLang accept.
SERVING_FIELDS = ("thinking", "content", "tool_calls")
RUST_FIELDS = ("content", "reasoning_content", "thinking", "tool_calls")
# Content parsers of the vendored copies (no python-call-list).
VENDORED_PARSERS = ("text", "int", "float", "bool", "json", "xml-inline", "kv-lines")
# content_args the vendored parser copies read (others are ignored there).
VENDORED_ARGS = {
    "text": {"strip"},
    "int": {"strip"},
    "float": {"strip"},
    "bool": {"strip"},
    "json": {"unquoted_keys", "string_delims", "allow_non_json"},
    "xml-inline": {"tag_pattern", "value_parser", "merge_duplicates"},
    "kv-lines": {"line_sep", "kv_sep", "strip", "value_parser"},
    "python-call-list": set(),
}
# content_args the reference parser reads: the copies' and `value_parser_by`.
REFERENCE_ARGS = {
    **VENDORED_ARGS,
    "xml-inline": VENDORED_ARGS["xml-inline"] | {"value_parser_by"},
}
# The reasoning field's name in each runtime.
REASONING_NAME = {
    "transformers": "reasoning_content",
    "vllm": "thinking",
    "sglang": "thinking",
    "vllm-rust": None,
}


@dataclass
class Finding:
    """One portability finding (the lint turns it into a `Diagnostic`)."""

    severity: str
    code: str
    path: str
    message: str
    suggestion: str = ""


_VERDICTS = {"error": "refuses this template", "warning": "reads this differently"}


def _finding(
    severity: str,
    target: str,
    path: str,
    what: str,
    code: str,
    suggestion: str = "",
    source: str | None = None,
) -> Finding:
    """A `Finding` of `severity` (``"error"``: `target` refuses the template; ``"warning"``: it
    reads it differently) at template path `path`, its message naming where the rule is
    written down (`SOURCES` of `source`, or of `target` when None)."""
    where = SOURCES[source or target]
    return Finding(
        severity, code, path, f"{target} {_VERDICTS[severity]}: {what} ({where})", suggestion
    )


# `_refuses(target, path, what, code, suggestion="", source=None)`: an error finding.
_refuses = partial(_finding, "error")
# `_differs(target, path, what, code, suggestion="", source=None)`: a warning finding.
_differs = partial(_finding, "warning")


def target_diagnostics(template, target: str) -> list[Finding]:
    """What runtime `target` refuses (errors) or reads differently (warnings) in `template`.

    Raises:
        ValueError: `target` is not one of `TARGETS`.
        TemplateError: the template does not load.
    """
    if target not in TARGETS:
        raise ValueError(f"target must be one of {', '.join(TARGETS)}, got {target!r}")
    loaded = load_template(template)
    checks = {
        "transformers": _transformers_rules,
        "vllm": lambda t: _serving_rules(t, "vllm"),
        "sglang": lambda t: _serving_rules(t, "sglang"),
        "vllm-rust": _rust_rules,
    }
    return checks[target](loaded)


# -- transformers ---------------------------------------------------------------


def _transformers_rules(template: ResponseTemplate) -> list[Finding]:
    found = []
    for path, pattern in _patterns(template):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                re.compile(pattern, re.DOTALL)
        except re.error as error:
            found.append(
                _refuses(
                    "transformers",
                    path,
                    f"the pattern uses syntax of the `regex` module that Python's `re` does not read ({error})",
                    "target-regex-syntax",
                    "write it with `re` syntax",
                )
            )
    found += _ignored_args(template, "transformers", "transformers", REFERENCE_ARGS)
    if "thinking" in template.fields and "reasoning_content" not in template.fields:
        found.append(
            Finding(
                "info",
                "target-reasoning-name",
                "fields.thinking",
                "transformers' chat templates and documentation read reasoning as 'reasoning_content'; this template writes 'thinking' (Gemma 4's checkpoint template does too)",
                "python -m engine export --for transformers renames it",
            )
        )
    return found


def _ignored_args(
    template: ResponseTemplate, target: str, source: str, known_args: dict[str, set[str]]
) -> list[Finding]:
    found = []
    for spec in template.fields.values():
        known = known_args.get(spec.content, set())
        for key in _given_args(template, spec.name):
            if key not in known:
                found.append(
                    _differs(
                        target,
                        f"{spec.path}.content_args.{key}",
                        f"the argument '{key}' of content '{spec.content}' is not read there and is ignored",
                        "target-ignored-argument",
                        "",
                        source,
                    )
                )
    return found


def _given_args(template: ResponseTemplate, name: str) -> list[str]:
    raw = template.source["fields"][name].get("content_args") or {}
    return [key for key in raw if not key.startswith("_")]


# -- vLLM and SGLang serving ---------------------------------------------------------


def _serving_rules(template: ResponseTemplate, target: str) -> list[Finding]:
    found = []
    unsupported = [name for name in template.fields if name not in SERVING_FIELDS]
    for name in unsupported:
        hint = (
            "python -m engine export --for " + target + " renames it to 'thinking'"
            if name == "reasoning_content"
            else "remove the field, or serve with a runtime that accepts it"
        )
        found.append(
            _refuses(
                target,
                f"fields.{name}",
                f'only the fields {", ".join(SERVING_FIELDS)} are accepted ("response_template contains unsupported semantic fields")',
                "target-field-name",
                hint,
            )
        )
    for key in template.defaults:
        if key != "role":
            found.append(
                _refuses(
                    target,
                    f"defaults.{key}",
                    "'defaults' may hold only 'role'",
                    "target-defaults",
                    "remove the default",
                )
            )
    for name in ("thinking", "content"):
        spec = template.fields.get(name)
        if spec is None:
            continue
        if spec.content != "text":
            found.append(
                _refuses(
                    target,
                    f"{spec.path}.content",
                    f"'{name}' must be plain text (content 'text'), not '{spec.content}'",
                    "target-text-field",
                )
            )
        if spec.transform is not None:
            found.append(
                _refuses(
                    target,
                    f"{spec.path}.transform",
                    f"'{name}' must have no transform (it cannot be streamed by the serving adapter)",
                    "target-text-field",
                )
            )
        if spec.join is not None:
            found.append(
                _refuses(
                    target,
                    f"{spec.path}.join",
                    f"'{name}' must have no join (it cannot be streamed by the serving adapter)",
                    "target-text-field",
                )
            )
        given = template.source["fields"][name].get("content_args") or {}
        if target == "sglang" and given.get("strip") is True:
            found.append(
                _refuses(
                    target,
                    f"{spec.path}.content_args.strip",
                    f"an explicit 'strip': true on '{name}' is refused (the default is accepted)",
                    "target-explicit-strip",
                    "remove the key: the default strips as well",
                )
            )
    return found + _serving_parsers(template, target)


def _serving_parsers(template: ResponseTemplate, target: str) -> list[Finding]:
    """What the serving adapters' parser copies lack or read differently."""
    found = []
    parser_source = f"{target}-parser"
    for spec in template.fields.values():
        if spec.content not in VENDORED_PARSERS:
            found.append(
                _refuses(
                    target,
                    f"{spec.path}.content",
                    f"its parser copy has no content parser '{spec.content}'",
                    "target-content-parser",
                    "",
                    parser_source,
                )
            )
        for value in _value_parsers(spec.content_args):
            if value not in VENDORED_PARSERS:
                found.append(
                    _refuses(
                        target,
                        f"{spec.path}.content_args.value_parser",
                        f"its parser copy has no content parser '{value}'",
                        "target-content-parser",
                        "",
                        parser_source,
                    )
                )
    found += _ignored_args(template, target, parser_source, VENDORED_ARGS)
    for spec in template.fields.values():
        if target == "sglang" and spec.is_tool_call and spec.content == "xml-inline":
            found.append(
                _differs(
                    target,
                    f"{spec.path}.content",
                    "xml-inline tool calls are read strictly: text between the tags that no tag matches is an error",
                    "target-strict-tags",
                )
            )
    if "tool_calls" in template.fields:
        found.append(
            Finding(
                "info",
                "target-tool-guarantees",
                "fields.tool_calls",
                f"{target} serves tool calls read by a response template only with tool_choice 'auto' and parallel calls: required, named and strict tool choices, and parallel_tool_calls=false, need a structural tag",
                "python -m engine grammar TEMPLATE --tools FILE --format structural-tag",
            )
        )
    return found


def _value_parsers(args: dict) -> list[str]:
    value = args.get("value_parser")
    return [value.get("name", "text")] if isinstance(value, dict) else []


# -- vLLM's Rust parser ------------------------------------------------------------------


def _rust_rules(template: ResponseTemplate) -> list[Finding]:
    found = []
    for name in template.fields:
        if name not in RUST_FIELDS:
            found.append(
                _refuses(
                    "vllm-rust",
                    f"fields.{name}",
                    f"only the fields {', '.join(RUST_FIELDS)} are accepted",
                    "target-field-name",
                )
            )
    for spec in template.fields.values():
        if not spec.is_tool_call and (spec.content != "text" or spec.transform is not None):
            found.append(
                _refuses(
                    "vllm-rust",
                    spec.path,
                    "text and reasoning fields must use content 'text' without a transform",
                    "target-text-field",
                )
            )
        if spec.is_tool_call and spec.join is not None:
            found.append(
                _refuses(
                    "vllm-rust",
                    f"{spec.path}.join",
                    "a tool-call field with 'join' is not supported",
                    "target-tool-join",
                )
            )
        if spec.content not in VENDORED_PARSERS:
            found.append(
                _refuses(
                    "vllm-rust",
                    f"{spec.path}.content",
                    f"there is no content parser '{spec.content}'",
                    "target-content-parser",
                )
            )
        if spec.transform is not None and not spec.transform_each:
            found += _rust_transform_scope(template, spec)
    for path, pattern in _patterns(template):
        problem = _rust_pattern_problem(
            pattern, path.endswith("tag_pattern") or path == "start_anchor_pattern"
        )
        if problem:
            found.append(
                _refuses(
                    "vllm-rust",
                    path,
                    problem,
                    "target-rust-pattern",
                    "write the delimiter without lookarounds, starting with literal text",
                )
            )
    return found


def _rust_transform_scope(template: ResponseTemplate, spec) -> list[Finding]:
    open_groups = (
        set(spec.open.pattern.groupindex)
        if spec.open is not None and spec.open.literals is None
        else set()
    )
    found = []
    for path in placeholder_paths(spec.transform):
        name = path.split(".")[0]
        if name != "content" and name not in open_groups:
            found.append(
                _refuses(
                    "vllm-rust",
                    f"{spec.path}.transform",
                    f"a transform may use only 'content' and named groups of open_pattern, not '{name}'",
                    "target-transform-scope",
                )
            )
    return found


def _rust_pattern_problem(pattern: str, anywhere: bool) -> str | None:
    """Why the Rust parser refuses `pattern`, or None: lookarounds and back-references do not
    exist in Rust's regex engine, and a delimiter must start with a finite set of literals."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parsed = sre_parser.parse(pattern)
    except Exception:
        return "the pattern cannot be read by Rust's regex engine"
    if _uses(parsed, (sre.ASSERT, sre.ASSERT_NOT)):
        return "lookarounds are not supported by Rust's regex engine"
    if _uses(parsed, (sre.GROUPREF, getattr(sre, "GROUPREF_EXISTS", None))):
        return "back-references are not supported by Rust's regex engine"
    if _uses(parsed, (getattr(sre, "ATOMIC_GROUP", None), getattr(sre, "POSSESSIVE_REPEAT", None))):
        return "atomic groups and possessive repeats are not supported by Rust's regex engine"
    if not anywhere and not _literal_prefixes(list(parsed)):
        return "a delimiter pattern must start with literal text for streaming matching"
    return None


def _uses(items, ops) -> bool:
    for op, av in items:
        if op in ops:
            return True
        children = []
        if op is sre.SUBPATTERN:
            children = [av[3]]
        elif op is sre.BRANCH:
            children = list(av[1])
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT, getattr(sre, "POSSESSIVE_REPEAT", None)):
            children = [av[2]]
        elif op in (sre.ASSERT, sre.ASSERT_NOT):
            children = [av[1]]
        if any(_uses(list(child), ops) for child in children):
            return True
    return False


def _literal_prefixes(items: list, limit: int = 64) -> bool:
    """Whether every match starts with one of a finite set of non-empty literals: literals
    first, optional literals and branches of literals allowed, no leading class or repeat."""
    if not items:
        return False
    op, av = items[0]
    if op is sre.LITERAL:
        return True
    if op is sre.SUBPATTERN:
        return _literal_prefixes(list(av[3]) + items[1:], limit)
    if op is sre.BRANCH:
        return all(_literal_prefixes(list(branch) + items[1:], limit) for branch in av[1])
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT) and av[0] == 0 and av[1] == 1:
        body = list(av[2])
        return _literal_prefixes(body, limit) and _literal_prefixes(items[1:], limit)
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT) and av[0] >= 1:
        return _literal_prefixes(list(av[2]), limit)
    return False


def _patterns(template: ResponseTemplate) -> list[tuple[str, str]]:
    out = []
    anchor = template.start_anchor
    if anchor.literals is None:
        out.append(("start_anchor_pattern", anchor.pattern.pattern))
    for spec in template.fields.values():
        for delimiter in (spec.open, spec.close):
            if delimiter is not None and delimiter.literals is None:
                out.append((delimiter.path, delimiter.pattern.pattern))
        if "tag_pattern" in spec.content_args:
            out.append((f"{spec.path}.content_args.tag_pattern", spec.content_args["tag_pattern"]))
    return out


# -- export -------------------------------------------------------------------------------


@dataclass
class Export:
    """A template rewritten for a runtime.

    Attributes:
        template: the rewritten response template (a dict; a `templates/` file keeps its wrapper).
        changes: what was rewritten, each naming the key.
        remaining: what the runtime still refuses or reads differently (its `Finding`s).
    """

    template: dict
    changes: list[str]
    remaining: list[Finding]

    @property
    def servable(self) -> bool:
        """True when the runtime accepts the rewritten template (no error remains)."""
        return not any(finding.severity == "error" for finding in self.remaining)


def export_for(template, target: str) -> Export:
    """`template` rewritten for runtime `target` (see the module docstring).

    Raises:
        ValueError: `target` is not one of `TARGETS`.
        TemplateError: the template does not load.
    """
    if target not in TARGETS:
        raise ValueError(f"target must be one of {', '.join(TARGETS)}, got {target!r}")
    if isinstance(template, ResponseTemplate):
        source = template.source
    elif isinstance(template, dict):
        source = template
    elif (
        isinstance(template, str)
        and not template.lstrip().startswith("{")
        and not Path(template).is_file()
    ):
        source = read_json(template_file_path(template))  # a shipped name: its whole file
    else:
        source = template_source(template)
    if isinstance(source, str):
        source = json.loads(source)
    wrapper = copy.deepcopy(source) if is_template_file_data(source) else None
    response = copy.deepcopy(wrapper["response_template"] if wrapper else source)
    load_template(response)  # raises TemplateError with the path
    changes: list[str] = []
    fields = response["fields"]
    wanted = REASONING_NAME[target]
    other = "thinking" if wanted == "reasoning_content" else "reasoning_content"
    if wanted and other in fields and wanted not in fields:
        response["fields"] = {
            (wanted if name == other else name): spec for name, spec in fields.items()
        }
        changes.append(f"fields.{other} renamed to fields.{wanted}")
    if target in ("vllm", "sglang"):
        for key in [key for key in response.get("defaults", {}) if key != "role"]:
            del response["defaults"][key]
            changes.append(f"defaults.{key} removed ({target} accepts only 'role')")
    if target == "sglang":
        for name in ("thinking", "content"):
            args = response["fields"].get(name, {}).get("content_args")
            if isinstance(args, dict) and args.get("strip") is True:
                del args["strip"]
                if not args:
                    del response["fields"][name]["content_args"]
                changes.append(f"fields.{name}.content_args.strip removed (true is the default)")
    remaining = target_diagnostics(response, target)
    if wrapper is not None:
        wrapper["response_template"] = response
        return Export(wrapper, changes, remaining)
    return Export(response, changes, remaining)
