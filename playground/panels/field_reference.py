"""The field reference beside the template editor, drawn from the JSON Schema.

Every key of `templates/response_template.schema.json` (the template's own keys,
then a field's keys) with what the schema says it does, the values it takes,
and an example taken from a shipped template in `templates/`, so the example
is a real, working one.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from ..catalog import shipped_templates
from .markup import escape

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "templates" / "response_template.schema.json"


@functools.cache
def schema() -> dict:
    """The response template's JSON Schema (draft 2020-12)."""
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def _resolve(node: dict) -> dict:
    """A schema node with its `$ref` (to `#/$defs/...`) merged in, its own keys winning."""
    ref = node.get("$ref", "")
    if ref.startswith("#/$defs/"):
        return {
            **_resolve(schema()["$defs"][ref[len("#/$defs/") :]]),
            **{k: v for k, v in node.items() if k != "$ref"},
        }
    return node


def top_level_keys() -> dict[str, dict]:
    """The template's own keys -> their (resolved) schema."""
    return {name: _resolve(node) for name, node in schema()["properties"].items()}


def field_keys() -> dict[str, dict]:
    """A field's keys -> their (resolved) schema."""
    return {name: _resolve(node) for name, node in schema()["$defs"]["field"]["properties"].items()}


def _values(node: dict) -> str:
    if "enum" in node:
        return " · ".join(node["enum"])
    if "const" in node:
        return json.dumps(node["const"])
    if "oneOf" in node:
        kinds = [option.get("type", "") for option in node["oneOf"]]
        return " or ".join(
            "a string" if k == "string" else "a list of strings" if k == "array" else k
            for k in kinds
        )
    kind = node.get("type")
    return {
        "string": "a string",
        "boolean": "true or false",
        "object": "an object",
        "array": "a list",
    }.get(kind, "")


# Examples come from this family's template first (the default sample's), then the others by name.
FIRST_EXAMPLES = "qwen3"


@functools.cache
def examples() -> dict[str, tuple[str, str]]:
    """Key -> (an example value as JSON, the templates/ file it comes from); field keys as `fields.KEY`."""
    found: dict[str, tuple[str, str]] = {}
    for template_file in sorted(
        shipped_templates(), key=lambda f: (f.name != FIRST_EXAMPLES, f.name)
    ):
        template = template_file.response_template
        for key, value in template.items():
            if key != "fields":
                found.setdefault(key, (json.dumps(value, ensure_ascii=False), template_file.name))
        for spec in template.get("fields", {}).values():
            for key, value in spec.items():
                found.setdefault(
                    f"fields.{key}", (json.dumps(value, ensure_ascii=False), template_file.name)
                )
    return found


def _rows(keys: dict[str, dict], prefix: str) -> list[str]:
    rows = []
    for name, node in keys.items():
        description = node.get("description", "")
        example = examples().get(f"{prefix}{name}")
        example_html = (
            f'<code>{escape(_short(example[0]), quote=True)}</code> <span class="rt-muted">({escape(example[1], quote=True)})</span>'
            if example
            else ""
        )
        rows.append(
            f'<tr id="ref-{escape(prefix + name, quote=True)}"><td><code>{escape(name, quote=True)}</code></td>'
            f"<td>{escape(description, quote=True)}</td><td>{escape(_values(node), quote=True)}</td><td>{example_html}</td></tr>"
        )
    return rows


def _short(text: Any, limit: int = 90) -> str:
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def reference_html() -> str:
    """The field reference table: the template's keys, then a field's keys."""
    head = "<tr><th>key</th><th>what it does</th><th>values</th><th>example (from templates/)</th></tr>"
    return (
        '<div class="rt-reference" id="field-reference-table">'
        f"<table><thead>{head}</thead><tbody>"
        '<tr><th colspan="4">the template</th></tr>'
        + "".join(_rows(top_level_keys(), ""))
        + '<tr><th colspan="4">a field (under <code>fields.NAME</code>)</th></tr>'
        + "".join(_rows(field_keys(), "fields."))
        + "</tbody></table></div>"
    )
