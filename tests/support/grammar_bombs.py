"""Inputs that blow up a grammar derived from a template, shared by tests/engine/test_grammar.py,
tests/app/test_app_handlers.py and the attack of tests/support/attacks.py (scripts/bench_attacks.py).

- `doubling_tools(levels)`: a tool schema that doubles at every level (kilobytes of JSON).
- `many_optional_fields(fields)`: a template of many optional fields (each once doubled the
  grammar of what follows it).
- `CALL_LIST_TEMPLATE`: a template whose tool arguments are written from the tools' schemas.
"""

from __future__ import annotations

import copy

from engine.template_files import load_template_file

# A template whose tool calls are Python call lists: their arguments are written from the tools'
# own schemas, `$ref`s resolved (the JSON forms hand `$ref`s on as they are).
CALL_LIST_TEMPLATE = {
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "tool_calls": {
            "open": "<tool_call>",
            "close": "</tool_call>",
            "content": "python-call-list",
            "transform_each": True,
            "transform": {
                "type": "function",
                "function": {"name": "{name}", "arguments": "{arguments}"},
            },
        },
        "content": {"close": "<|im_end|>"},
    },
}


def doubling_tools(levels: int = 30) -> list[dict]:
    """One tool whose parameters' schema doubles at every level: each definition's two keys are
    the next definition, through ``allOf`` (merged where it stands, so written out twice). 2**30
    values from 4.7 KB of JSON, within tools_chars and json_depth."""
    definitions = {}
    for level in range(levels):
        inner = (
            {"allOf": [{"$ref": f"#/$defs/d{level + 1}"}]}
            if level + 1 < levels
            else {"type": "string"}
        )
        definitions[f"d{level}"] = {
            "type": "object",
            "properties": {"p": inner, "q": inner},
            "required": ["p", "q"],
        }
    parameters = {
        "type": "object",
        "properties": {"x": {"allOf": [{"$ref": "#/$defs/d0"}]}},
        "required": ["x"],
        "$defs": definitions,
    }
    return [{"type": "function", "function": {"name": "bomb", "parameters": parameters}}]


def many_optional_fields(fields: int = 29, alternatives: int = 32) -> dict:
    """A template of `fields` optional fields, each opened by one of `alternatives` tags (within
    the pattern bounds): every optional field doubled the grammar of what follows it."""
    template = copy.deepcopy(load_template_file("qwen3").response_template)
    content = template["fields"].pop("content")
    for number in range(fields):
        tags = "|".join(f"<f{number}x{index}>" for index in range(alternatives))
        template["fields"][f"f{number}"] = {"open_pattern": f"(?:{tags})", "close": f"</f{number}>"}
    template["fields"]["content"] = content
    return template
