"""Build the bundled demo model: corpus, tokenizer, chat template, tiny Llama.

Everything is generated here and seeded, so running the script twice on the
same machine gives the same corpus, tokenizer and (up to CPU float
non-determinism) weights. Nothing is downloaded.

    python scripts/build_demo_model.py [--out samples/demo-model] [--steps N]

Writes the model folder and `templates/demo-model.json`.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import time
from pathlib import Path

import torch
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
from transformers.utils.chat_template_utils import render_jinja_template

ROOT = Path(__file__).resolve().parent.parent
SEED = 20260
SPECIAL_TOKENS = ["<|pad|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>", "<tool_call>", "</tool_call>"]
CONVERSATIONS = 20000  # size of the training corpus
STEPS = 1600  # optimizer steps of 16 conversations each
# Pre-tokens (BPE never merges across them): a tool schema line of the system
# prompt | a newline | a name (a word starting with a capital or a non-ASCII
# letter: "Paris", "São", "東京") | a number | any run of other text. Names and
# numbers carry no space, so "Paris" in the question and in the JSON
# arguments is the same token and the model can learn to copy it.
PRE_TOKEN_PATTERN = r'\{"name": "\w+", "description"[^\n]*|\n|[\p{Lu}\P{ASCII}]\p{L}*|\p{N}+|[^\n\p{Lu}\p{N}\P{ASCII}]+'

# ---------------------------------------------------------------------------
# Chat template and response template
# ---------------------------------------------------------------------------

CHAT_TEMPLATE = r"""
{%- set enable_thinking = enable_thinking | default(false) -%}
{%- if messages and messages[0].role == 'system' -%}
  {%- set system_message = messages[0].content -%}
  {%- set messages = messages[1:] -%}
{%- else -%}
  {%- set system_message = 'You are a helpful assistant.' -%}
{%- endif -%}
{{- '<|im_start|>system\n' + system_message -}}
{%- if tools -%}
  {{- '\n\n# Tools\n<tools>' -}}
  {%- for tool in tools -%}
    {{- '\n' + ((tool.function if tool.function is defined else tool) | tojson) -}}
  {%- endfor -%}
  {{- '\n</tools>\nTo call a tool, reply with <tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>' -}}
{%- endif -%}
{{- '<|im_end|>\n' -}}
{%- for message in messages -%}
  {%- if message.role == 'assistant' -%}
    {{- '<|im_start|>assistant\n' -}}
    {%- if message.reasoning_content -%}
      {{- '<think>\n' + message.reasoning_content + '\n</think>\n\n' -}}
    {%- endif -%}
    {{- message.content or '' -}}
    {%- for call in message.tool_calls or [] -%}
      {%- set fn = call.function if call.function is defined else call -%}
      {%- if not loop.first or message.content -%}{{- '\n' -}}{%- endif -%}
      {%- set arguments = fn.arguments if fn.arguments is string else (fn.arguments | tojson) -%}
      {{- '<tool_call>\n{"name": ' + (fn.name | tojson) + ', "arguments": ' + arguments + '}\n</tool_call>' -}}
    {%- endfor -%}
    {{- '<|im_end|>\n' -}}
  {%- else -%}
    {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' -}}
  {%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
  {{- '<|im_start|>assistant\n' -}}
  {%- if enable_thinking -%}{{- '<think>\n' -}}{%- endif -%}
{%- endif -%}
""".strip()

RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "reasoning_content": {"open": "<think>", "close_pattern": "</think>|(?=<tool_call>)"},
        "tool_calls": {
            "open": "<tool_call>",
            "close_pattern": r"(?<=\})\s*</tool_call>",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": "{content}"},
        },
        "content": {"close": "<|im_end|>"},
    },
}

# ---------------------------------------------------------------------------
# Tools
# ---------------------------------------------------------------------------


def _tool(name: str, description: str, properties: dict, required: list[str]) -> dict:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


TOOLS = {
    "get_weather": _tool(
        "get_weather",
        "Weather forecast for a city.",
        {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "days": {"type": "integer", "minimum": 1, "maximum": 7},
        },
        ["city"],
    ),
    "get_time": _tool("get_time", "Current local time in a city.", {"city": {"type": "string"}}, ["city"]),
    "convert_units": _tool(
        "convert_units",
        "Convert a value between units.",
        {"value": {"type": "number"}, "from_unit": {"type": "string"}, "to_unit": {"type": "string"}},
        ["value", "from_unit", "to_unit"],
    ),
    "web_search": _tool(
        "web_search",
        "Search the web.",
        {
            "query": {"type": "string"},
            "max_results": {"type": "integer", "minimum": 1, "maximum": 10},
            "safe_search": {"type": "boolean"},
        },
        ["query"],
    ),
    "set_alarm": _tool(
        "set_alarm",
        "Set an alarm.",
        {
            "time": {"type": "string", "pattern": "^[0-2][0-9]:[0-5][0-9]$"},
            "label": {"type": "string"},
            "days": {"type": "array", "items": {"type": "string", "enum": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]}},
            "options": {
                "type": "object",
                "properties": {"snooze_minutes": {"type": "integer"}, "vibrate": {"type": "boolean"}},
            },
        },
        ["time"],
    ),
}

CITIES = [
    "Paris", "London", "Berlin", "Madrid", "Rome", "Lisbon", "Oslo", "Dublin", "Chicago", "Boston",
    "Sydney", "Cairo", "Lagos", "Lima", "Seoul", "Toronto",
    "São Paulo", "東京", "Zürich", "Kraków", "München", "Montréal", "Reykjavík", "Bogotá", "Québec", "大阪",
]
CONDITIONS = ["sunny", "cloudy", "rainy", "windy", "snowy", "foggy"]
UNIT_PAIRS = [
    ("km", "miles", 0.621371), ("miles", "km", 1.609344), ("kg", "pounds", 2.204623),
    ("pounds", "kg", 0.453592), ("celsius", "fahrenheit", None), ("liters", "gallons", 0.264172),
    ("meters", "feet", 3.28084), ("inches", "cm", 2.54),
]
TOPICS = [
    "python generators", "the history of tea", "electric cars", "how bees make honey", "black holes",
    "sourdough bread", "the Roman empire", "jazz music", "solar panels", "café culture in Wien",
    "chess openings", "rust programming", "the moon landing", "volcanoes", "origami",
]
WEEKDAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
LABELS = ["Wake up", "Gym", "Meeting", "Take medicine", "Call mom", "Réveil", "Yoga", "School run"]

# ---------------------------------------------------------------------------
# Corpus
# ---------------------------------------------------------------------------


def _call(name: str, arguments: dict) -> dict:
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


def _weather_request(rng: random.Random) -> tuple[str, dict, str]:
    city = rng.choice(CITIES)
    arguments: dict = {"city": city}
    style = rng.randrange(4)
    if style == 0:
        question = rng.choice(["What's the weather in {c}?", "How is the weather in {c} today?", "Weather in {c}?"])
    elif style == 1:
        arguments["unit"] = rng.choice(["celsius", "fahrenheit"])
        question = rng.choice(["What's the temperature in {c} in {u}?", "Weather in {c}, in {u} please."])
    elif style == 2:
        arguments["days"] = rng.randint(2, 7)
        question = rng.choice(["Give me a {d}-day forecast for {c}.", "What will the weather be in {c} for the next {d} days?"])
    else:
        arguments["unit"] = rng.choice(["celsius", "fahrenheit"])
        arguments["days"] = rng.randint(2, 7)
        question = "I need a {d}-day forecast for {c} in {u}."
    question = question.format(c=city, u=arguments.get("unit"), d=arguments.get("days"))
    return question, arguments, f"the weather in {city}"


def _weather_result(rng: random.Random, arguments: dict) -> tuple[dict, str]:
    fahrenheit = arguments.get("unit") == "fahrenheit"
    temperature = rng.randint(40, 95) if fahrenheit else rng.randint(-5, 35)
    condition = rng.choice(CONDITIONS)
    symbol = "°F" if fahrenheit else "°C"
    result = {"city": arguments["city"], "temperature": temperature, "condition": condition}
    answer = f"It is {temperature}{symbol} and {condition} in {arguments['city']}."
    return result, answer


def _time_request(rng: random.Random) -> tuple[str, dict, str]:
    city = rng.choice(CITIES)
    question = rng.choice(["What time is it in {c}?", "Current time in {c}?", "Tell me the local time in {c}."])
    return question.format(c=city), {"city": city}, f"the local time in {city}"


def _time_result(rng: random.Random, arguments: dict) -> tuple[dict, str]:
    clock = f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}"
    return {"city": arguments["city"], "time": clock}, f"It is {clock} in {arguments['city']}."


def _convert_request(rng: random.Random) -> tuple[str, dict, str]:
    from_unit, to_unit, _ = rng.choice(UNIT_PAIRS)
    value = rng.choice([rng.randint(1, 500), round(rng.uniform(0.5, 200), 1)])
    question = rng.choice(["Convert {v} {f} to {t}.", "How many {t} is {v} {f}?", "{v} {f} in {t}?"])
    arguments = {"value": value, "from_unit": from_unit, "to_unit": to_unit}
    return question.format(v=value, f=from_unit, t=to_unit), arguments, f"{value} {from_unit} in {to_unit}"


def _convert_result(rng: random.Random, arguments: dict) -> tuple[dict, str]:
    factor = next(f for a, b, f in UNIT_PAIRS if a == arguments["from_unit"] and b == arguments["to_unit"])
    value = arguments["value"]
    converted = round(value * 9 / 5 + 32 if factor is None else value * factor, 2)
    answer = f"{value} {arguments['from_unit']} is {converted} {arguments['to_unit']}."
    return {"result": converted, "unit": arguments["to_unit"]}, answer


def _search_request(rng: random.Random) -> tuple[str, dict, str]:
    topic = rng.choice(TOPICS)
    arguments: dict = {"query": topic}
    style = rng.randrange(3)
    if style == 0:
        question = rng.choice(["Search the web for {q}.", "Look up {q} online.", "Find articles about {q}."])
    elif style == 1:
        arguments["max_results"] = rng.randint(1, 10)
        question = "Find {n} results about {q}."
    else:
        arguments["max_results"] = rng.randint(1, 10)
        arguments["safe_search"] = rng.choice([True, False])
        question = "Search {q}, top {n} results, safe search " + ("on." if arguments["safe_search"] else "off.")
    return question.format(q=topic, n=arguments.get("max_results")), arguments, f"results about {topic}"


def _search_result(rng: random.Random, arguments: dict) -> tuple[dict, str]:
    count = min(arguments.get("max_results", 3), 3)
    titles = [f"{arguments['query'].title()} - part {i + 1}" for i in range(count)]
    answer = f"I found {count} results about {arguments['query']}. The first is \"{titles[0]}\"."
    return {"results": titles}, answer


def _alarm_request(rng: random.Random) -> tuple[str, dict, str]:
    hour, minute = rng.randint(5, 22), rng.choice([0, 15, 30, 45])
    clock = f"{hour:02d}:{minute:02d}"
    arguments: dict = {"time": clock}
    style = rng.randrange(4)
    if style == 0:
        question = rng.choice(["Set an alarm for {t}.", "Wake me up at {t}."])
    elif style == 1:
        arguments["label"] = rng.choice(LABELS)
        question = "Set an alarm at {t} called \"{l}\"."
    elif style == 2:
        arguments["days"] = sorted(rng.sample(WEEKDAYS, rng.randint(1, 3)), key=WEEKDAYS.index)
        question = "Set an alarm for {t} on " + " and ".join(arguments["days"]) + "."
    else:
        arguments["label"] = rng.choice(LABELS)
        arguments["days"] = sorted(rng.sample(WEEKDAYS, rng.randint(1, 3)), key=WEEKDAYS.index)
        arguments["options"] = {"snooze_minutes": rng.choice([5, 10, 15]), "vibrate": rng.choice([True, False])}
        question = (
            "Alarm \"{l}\" at {t} on " + " and ".join(arguments["days"])
            + f", snooze {arguments['options']['snooze_minutes']} minutes, vibrate "
            + ("on." if arguments["options"]["vibrate"] else "off.")
        )
    return question.format(t=clock, l=arguments.get("label")), arguments, f"an alarm at {clock}"


def _alarm_result(rng: random.Random, arguments: dict) -> tuple[dict, str]:
    alarm_id = rng.randint(1, 99)
    return {"ok": True, "alarm_id": alarm_id}, f"Done: your alarm is set for {arguments['time']}."


REQUESTS = {
    "get_weather": (_weather_request, _weather_result),
    "get_time": (_time_request, _time_result),
    "convert_units": (_convert_request, _convert_result),
    "web_search": (_search_request, _search_result),
    "set_alarm": (_alarm_request, _alarm_result),
}
PARALLEL_QUESTIONS = {
    "get_weather": "What's the weather in {a} and in {b}?",
    "get_time": "What time is it in {a} and in {b}?",
}
CHAT = [
    ("Hello!", "Hello! How can I help you today?"),
    ("Hi there", "Hi! What can I do for you?"),
    ("Thanks!", "You're welcome!"),
    ("Thank you so much.", "Happy to help!"),
    ("Who are you?", "I am a small demo assistant trained for the Response Template Playground."),
    ("Tell me a joke.", "Why did the parser cross the road? To reach the closing tag."),
    ("What is 2 + 3?", "2 + 3 = 5."),
    ("What is 7 times 6?", "7 times 6 is 42."),
    ("Say hello in French.", "Bonjour !"),
    ("Say hello in Japanese.", "こんにちは！"),
    ("What is the capital of France?", "The capital of France is Paris."),
    ("What is the capital of Japan?", "The capital of Japan is 東京 (Tokyo)."),
    ("Good night.", "Good night, sleep well!"),
]


def _conversation(rng: random.Random) -> dict:
    """One training or evaluation sample.

    Returns a dict: `messages` (the whole conversation, last one an assistant
    turn), `tools` (the offered tool schemas), `enable_thinking` (bool) and
    `needs_tool` (whether the last assistant turn calls a tool).
    """
    thinking = rng.random() < 0.35
    names = list(TOOLS)
    shape = rng.choices(["chat", "call", "preamble", "parallel", "answer"], weights=[2, 4, 2, 1.5, 3])[0]
    wanted = rng.choice(list(PARALLEL_QUESTIONS) if shape == "parallel" else names)
    others = [n for n in names if n != wanted]
    offered = [wanted] + rng.sample(others, rng.randint(0, 2))
    rng.shuffle(offered)
    tools = [TOOLS[n] for n in offered]
    messages: list[dict] = []
    if rng.random() < 0.3:
        messages.append({"role": "system", "content": rng.choice(["You are a concise assistant.", "Be helpful and brief."])})

    if shape == "chat":
        question, answer = rng.choice(CHAT)
        if rng.random() < 0.3:
            answer = "I can use these tools: " + ", ".join(offered) + "."
            question = rng.choice(["What can you do?", "Which tools do you have?"])
        turn = {"role": "assistant", "content": answer}
        if thinking:
            turn["reasoning_content"] = "The user says: " + question + " No tool is needed."
        messages += [{"role": "user", "content": question}, turn]
        return {"messages": messages, "tools": tools, "enable_thinking": thinking, "needs_tool": False}

    make_request, make_result = REQUESTS[wanted]
    if shape == "parallel":
        first, second = rng.sample(CITIES, 2)
        question = PARALLEL_QUESTIONS[wanted].format(a=first, b=second)
        calls = [_call(wanted, {"city": first}), _call(wanted, {"city": second})]
        goal = f"{wanted} for {first} and {second}"
    else:
        question, arguments, goal = make_request(rng)
        calls = [_call(wanted, arguments)]
    call_turn: dict = {"role": "assistant", "tool_calls": calls}
    if shape == "preamble":
        call_turn["content"] = rng.choice(["Let me check that for you.", "Sure, one moment.", f"I will look up {goal}."])
    if thinking:
        plural = "two calls" if len(calls) == 2 else "one call"
        call_turn["reasoning_content"] = f"The user wants {goal}. I should use {wanted}, {plural}."
    messages += [{"role": "user", "content": question}, call_turn]
    if shape != "answer":
        return {"messages": messages, "tools": tools, "enable_thinking": thinking, "needs_tool": True}

    result, answer = make_result(rng, calls[0]["function"]["arguments"])
    messages.append({"role": "tool", "content": json.dumps(result, ensure_ascii=False)})
    answer_turn = {"role": "assistant", "content": answer}
    if thinking:
        answer_turn["reasoning_content"] = f"The tool returned {goal}. I can answer now."
    messages.append(answer_turn)
    return {"messages": messages, "tools": tools, "enable_thinking": thinking, "needs_tool": False}


def make_corpus(count: int, seed: int) -> list[dict]:
    """`count` seeded conversations (see `_conversation` for their shape)."""
    rng = random.Random(seed)
    return [_conversation(rng) for _ in range(count)]


def render(sample: dict, *, generation_prompt: bool = False) -> str:
    """ChatML text of a sample, rendered with CHAT_TEMPLATE by transformers'
    sandboxed Jinja renderer (the same one `apply_chat_template` uses). With
    `generation_prompt`, the last assistant turn is replaced by the generation
    prompt (what the model is asked to continue)."""
    messages = sample["messages"][:-1] if generation_prompt else sample["messages"]
    rendered, _ = render_jinja_template(
        conversations=[messages],
        tools=sample["tools"],
        chat_template=CHAT_TEMPLATE,
        add_generation_prompt=generation_prompt,
        enable_thinking=sample["enable_thinking"],
    )
    return rendered[0]


# ---------------------------------------------------------------------------
# Tokenizer
# ---------------------------------------------------------------------------


def train_tokenizer(texts: list[str]):
    """Byte-level BPE trained on `texts`, wrapped as a PreTrainedTokenizerFast
    that carries the chat template and the response template."""
    backend = Tokenizer(models.BPE())
    # Runs of ordinary text may merge across spaces (whole JSON keys and
    # phrases become single tokens, which keeps the sequences short enough to
    # train on a CPU); see PRE_TOKEN_PATTERN. A newline is always its own
    # pre-token, so the generation prompt's final "\n" tokenizes as in training.
    backend.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(PRE_TOKEN_PATTERN), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=4096,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator(texts, trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        eos_token="<|im_end|>",
        pad_token="<|pad|>",
        chat_template=CHAT_TEMPLATE,
        model_max_length=1024,
    )
    tokenizer.response_template = RESPONSE_TEMPLATE
    return tokenizer


# ---------------------------------------------------------------------------
# Model
# ---------------------------------------------------------------------------


def encode_for_training(tokenizer, text: str) -> tuple[list[int], list[int]]:
    """Token ids of `text` and labels that train only on what the model
    writes: each assistant turn after `<|im_start|>assistant\\n` (and after the
    `<think>\\n` that the chat template pre-writes in thinking mode) up to and
    including `<|im_end|>`; other positions are -100. Never being trained to
    write `<think>` itself keeps the model from thinking unasked."""
    encoding = tokenizer(text, return_offsets_mapping=True, add_special_tokens=False)
    turns = re.finditer(r"<\|im_start\|>assistant\n(?:<think>\n)?(.*?<\|im_end\|>)", text, re.S)
    spans = [(m.start(1), m.end(1)) for m in turns]
    labels = []
    for token_id, (start, _) in zip(encoding["input_ids"], encoding["offset_mapping"]):
        inside = any(a <= start < b for a, b in spans)
        labels.append(token_id if inside else -100)
    return encoding["input_ids"], labels


def batches(examples: list[tuple[list[int], list[int]]], rng: random.Random, batch_size: int, pad_id: int):
    """Endless stream of (input_ids, labels) tensors [batch, length]; similar
    lengths are batched together to waste little on padding (right padding,
    which a causal model never attends to from real tokens)."""
    while True:
        order = list(range(len(examples)))
        rng.shuffle(order)
        for start in range(0, len(order), batch_size * 16):
            pool = sorted(order[start : start + batch_size * 16], key=lambda i: len(examples[i][0]))
            groups = [pool[i : i + batch_size] for i in range(0, len(pool), batch_size)]
            rng.shuffle(groups)
            for group in groups:
                width = max(len(examples[i][0]) for i in group)
                ids = [examples[i][0] + [pad_id] * (width - len(examples[i][0])) for i in group]
                labels = [examples[i][1] + [-100] * (width - len(examples[i][1])) for i in group]
                yield torch.tensor(ids), torch.tensor(labels)


def train_model(tokenizer, examples, steps: int, seed: int):
    """Train a small Llama on `examples` for `steps` optimizer steps on the CPU.
    Returns the model (eval mode)."""
    torch.manual_seed(seed)
    # One thread: the machine has two cores and is usually shared; two threads
    # that wait on each other are slower than one under contention.
    torch.set_num_threads(1)
    im_end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=192,
        intermediate_size=512,
        num_hidden_layers=6,
        num_attention_heads=6,
        num_key_value_heads=2,
        max_position_embeddings=1024,
        tie_word_embeddings=True,
        bos_token_id=None,
        eos_token_id=im_end,
        pad_token_id=tokenizer.pad_token_id,
    )
    model = LlamaForCausalLM(config)
    print(f"parameters: {sum(p.numel() for p in model.parameters()) / 1e6:.2f} M")
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01, betas=(0.9, 0.98))
    warmup = max(1, steps // 20)

    def lr_scale(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return 0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * (step - warmup) / (steps - warmup)))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_scale)
    stream = batches(examples, random.Random(seed), batch_size=16, pad_id=tokenizer.pad_token_id)
    model.train()
    started = time.perf_counter()
    for step in range(steps):
        ids, labels = next(stream)
        loss = model(input_ids=ids, labels=labels).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        if step % 50 == 0 or step == steps - 1:
            print(f"step {step:5d}  loss {loss.item():.3f}  {time.perf_counter() - started:6.0f} s", flush=True)
    model.eval()
    return model


def template_wrapper() -> dict:
    """The demo model's response template in the project's templates/ wrapper format."""
    return {
        "$schema": "./template_file.schema.json",
        "name": "demo-model",
        "description": (
            "The playground's bundled demo model (samples/demo-model): ChatML turns, reasoning in "
            "<think>...</think>, one JSON object per <tool_call>...</tool_call> block, answer text "
            "until <|im_end|>. Same shape as SmolLM3 and Qwen3."
        ),
        "models": ["samples/demo-model"],
        "generation_prompt": "<|im_start|>assistant\n",
        "notes": [
            "With enable_thinking=True the generation prompt is <|im_start|>assistant\n<think>\n: the reasoning "
            "region opens inside the prefix, so the prompt must be passed as prefix.",
            "Tool calls are plain JSON objects {\"name\": ..., \"arguments\": {...}}; a malformed JSON body "
            "is a parse error, not partial output.",
            "The demo model is tiny and trained on a synthetic corpus: it knows five tools only "
            "(get_weather, get_time, convert_units, web_search, set_alarm) and short chit-chat.",
        ],
        "response_template": RESPONSE_TEMPLATE,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "samples" / "demo-model")
    parser.add_argument("--conversations", type=int, default=CONVERSATIONS)
    parser.add_argument("--steps", type=int, default=STEPS)
    args = parser.parse_args()

    corpus = make_corpus(args.conversations, SEED)
    texts = [render(sample) for sample in corpus]
    tokenizer = train_tokenizer(texts)
    examples = [encode_for_training(tokenizer, text) for text in texts]
    lengths = sorted(len(ids) for ids, _ in examples)
    print(f"corpus: {len(examples)} conversations, tokens median {lengths[len(lengths) // 2]}, max {lengths[-1]}, "
          f"total {sum(lengths)}")

    started = time.perf_counter()
    model = train_model(tokenizer, examples, args.steps, SEED)
    print(f"training time: {time.perf_counter() - started:.0f} s")

    im_end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    model.generation_config = GenerationConfig(
        eos_token_id=im_end, pad_token_id=tokenizer.pad_token_id, do_sample=True, temperature=0.7, top_p=0.9,
        max_new_tokens=160,
    )
    args.out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(args.out)
    tokenizer.save_pretrained(args.out)
    (ROOT / "templates").mkdir(exist_ok=True)
    wrapper_path = ROOT / "templates" / "demo-model.json"
    wrapper_path.write_text(json.dumps(template_wrapper(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    size = sum(p.stat().st_size for p in args.out.iterdir())
    print(f"saved {args.out} ({size / 1e6:.1f} MB) and {wrapper_path}")


if __name__ == "__main__":
    main()
