"""A small author's-loop material: a chat template that lists the tools and renders no call (so
only the examples show how calls are written), its one tool, and labelled outputs of it (the
rows `infer --examples` and `--outputs` read: prefix, output, tools, expected message)."""

from __future__ import annotations

# A chat template that writes the tools in the system prompt and never renders a call.
LISTS_TOOLS = (
    "{%- if tools %}<|sys|>Tools: {{ tools | tojson }}<|end|>{% endif -%}"
    "{%- for m in messages -%}<|{{ m.role }}|>{{ m.content or '' }}<|end|>{% endfor -%}"
    "{%- if add_generation_prompt %}<|assistant|>{% endif -%}"
)
WEATHER = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            },
        },
    }
]
# How the model writes its calls (the arguments object goes in the braces).
CALL = '<calls>[{{"name": "get_weather", "arguments": {}}}]</calls><|end|>'


def weather_output(output: str, **expected) -> dict:
    """A labelled output of `LISTS_TOOLS`: `expected` holds the message's keys, `calls` a list
    of arguments objects of get_weather."""
    calls = [
        {"type": "function", "function": {"name": "get_weather", "arguments": arguments}}
        for arguments in expected.pop("calls", [])
    ]
    message = {"role": "assistant", **expected, **({"tool_calls": calls} if calls else {})}
    prefix = "<|sys|>Tools: []<|end|><|user|>weather?<|end|><|assistant|>"
    return {"prefix": prefix, "output": output, "tools": WEATHER, "expected": message}


# Two call-making examples, then three other outputs: one more call, and two with reasoning
# markup no example shows.
EXAMPLES = [
    weather_output(
        "Let me look." + CALL.format('{"city": "Oslo", "days": 2}'),
        content="Let me look.",
        calls=[{"city": "Oslo", "days": 2}],
    ),
    weather_output(CALL.format('{"city": "Lima"}'), calls=[{"city": "Lima"}]),
]
OUTPUTS = [
    weather_output(CALL.format('{"city": "Kyiv"}'), calls=[{"city": "Kyiv"}]),
    weather_output(
        "<r>The user wants rain news.</r>It rains in Oslo.<|end|>",
        reasoning_content="The user wants rain news.",
        content="It rains in Oslo.",
    ),
    weather_output(
        "<r>Check the sky first.</r>" + CALL.format('{"city": "Accra"}'),
        reasoning_content="Check the sky first.",
        calls=[{"city": "Accra"}],
    ),
]
