"""Build the bundled demo model: corpus, tokenizer, chat template, tiny Llama.

Everything is generated here and seeded (the conversations come from
`scripts/demo_corpus.py`), so running the script twice on the same machine
gives the same corpus, tokenizer and weights (training runs on the CPU with
a fixed thread count). Nothing is downloaded.

    python scripts/build_demo_model.py [--out samples/demo-model] [--steps N] [--threads 2]

Writes the model folder (16-bit safetensors weights, tokenizer with its chat
template and response template, generation config) and
`templates/demo-model.json`, and prints the wall-clock and CPU time taken.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import sys
import time
from pathlib import Path

import torch
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
from transformers.utils.chat_template_utils import render_jinja_template

sys.path.insert(0, str(Path(__file__).resolve().parent))
from demo_corpus import TOOLS, make_corpus  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SEED = 20260
SPECIAL_TOKENS = [
    "<|pad|>",
    "<|im_start|>",
    "<|im_end|>",
    "<think>",
    "</think>",
    "<tool_call>",
    "</tool_call>",
]
CONVERSATIONS = 24000  # size of the training corpus
STEPS = 1800  # optimizer steps
TOKENS_PER_STEP = 2048  # a batch holds about this many tokens, padding included
# Pre-tokens (BPE never merges across them): a tool schema line of the
# system prompt | a newline | a word (letters, marks and underscores:
# "Paris", "São", "東京", "get_weather") | one digit | a run of anything
# else (spaces and punctuation). Words never carry a space and digits come
# one at a time, so "Paris" or "250" in the question and in the JSON
# arguments are the same tokens and the model learns to copy them, even for
# names it never saw. The price is more tokens per sentence, which is what a
# live demo wants anyway: the text grows word by word.
PRE_TOKEN_PATTERN = r'\{"name": "\w+", "description"[^\n]*|\n|[\p{L}\p{M}][\p{L}\p{M}_]*|\p{N}|[^\n\p{L}\p{M}\p{N}]+'

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
    # See PRE_TOKEN_PATTERN. A tool schema line is one pre-token, so a tool
    # the model knows costs one token or a few in the prompt, which keeps the
    # sequences short enough to train on a CPU. A newline is always its own
    # pre-token, so the generation prompt's final "\n" tokenizes as in training.
    backend.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(PRE_TOKEN_PATTERN), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
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


def batches(
    examples: list[tuple[list[int], list[int]]],
    rng: random.Random,
    tokens_per_batch: int,
    pad_id: int,
):
    """Endless stream of (input_ids, labels) tensors [batch, length] of about
    `tokens_per_batch` tokens each, padding included. Similar lengths are
    batched together to waste little on padding (right padding, which a
    causal model never attends to from real tokens)."""
    while True:
        order = list(range(len(examples)))
        rng.shuffle(order)
        for start in range(0, len(order), 1024):
            pool = sorted(order[start : start + 1024], key=lambda i: len(examples[i][0]))
            groups, group = [], []
            for index in pool:  # shortest first, so the newest is the widest of its group
                if group and len(examples[index][0]) * (len(group) + 1) > tokens_per_batch:
                    groups.append(group)
                    group = []
                group.append(index)
            groups.append(group)
            rng.shuffle(groups)
            for group in groups:
                width = max(len(examples[i][0]) for i in group)
                ids = [examples[i][0] + [pad_id] * (width - len(examples[i][0])) for i in group]
                labels = [examples[i][1] + [-100] * (width - len(examples[i][1])) for i in group]
                yield torch.tensor(ids), torch.tensor(labels)


# About 4.3 M parameters (8.3 MiB of 16-bit weights). Every attention head
# has its own keys and values: copying a name from the question into the
# arguments needs heads that look up different things.
MODEL_SHAPE = {
    "hidden_size": 192,
    "intermediate_size": 512,
    "num_hidden_layers": 8,
    "num_attention_heads": 6,
    "num_key_value_heads": 6,
}


def _loss(model, ids: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Next-token cross-entropy over the labelled positions. The output
    layer runs on those positions only: about half the tokens are prompt,
    and the 4096-way output layer is a large share of the cost."""
    hidden = model.model(input_ids=ids).last_hidden_state[:, :-1]
    targets = labels[:, 1:]
    trained = targets != -100
    logits = model.lm_head(hidden[trained])
    return torch.nn.functional.cross_entropy(logits, targets[trained])


def train_model(tokenizer, examples, steps: int, seed: int):
    """Train a small Llama (MODEL_SHAPE) on `examples` for `steps` optimizer
    steps on the CPU. Returns the model in eval mode, float32."""
    torch.manual_seed(seed)
    im_end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        max_position_embeddings=1024,
        tie_word_embeddings=True,
        bos_token_id=None,
        eos_token_id=im_end,
        pad_token_id=tokenizer.pad_token_id,
        **MODEL_SHAPE,
    )
    model = LlamaForCausalLM(config)
    print(f"parameters: {sum(p.numel() for p in model.parameters()) / 1e6:.2f} M", flush=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01, betas=(0.9, 0.98))
    warmup = max(1, steps // 25)

    def lr_scale(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return 0.03 + 0.97 * 0.5 * (1 + math.cos(math.pi * (step - warmup) / (steps - warmup)))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_scale)
    stream = batches(examples, random.Random(seed), TOKENS_PER_STEP, pad_id=tokenizer.pad_token_id)
    model.train()
    started, cpu_started = time.perf_counter(), time.process_time()
    for step in range(steps):
        ids, labels = next(stream)
        loss = _loss(model, ids, labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        if step % 100 == 0 or step == steps - 1:
            print(
                f"step {step:5d}  loss {loss.item():.3f}  {time.perf_counter() - started:6.0f} s wall  "
                f"{time.process_time() - cpu_started:6.0f} s CPU",
                flush=True,
            )
    model.eval()
    return model


def template_wrapper() -> dict:
    """The demo model's response template in the project's templates/ wrapper format."""
    tools = sorted({tool["function"]["name"] for tool in TOOLS.values()})
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
            'Tool calls are plain JSON objects {"name": ..., "arguments": {...}}; a malformed JSON body '
            "is a parse error, not partial output.",
            "The demo model is tiny and trained on a synthetic corpus: it knows the tools "
            + ", ".join(tools)
            + " (in the schemas of scripts/demo_corpus.py), short chit-chat, and answering "
            "from a tool result in a second turn.",
        ],
        "response_template": RESPONSE_TEMPLATE,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=ROOT / "samples" / "demo-model")
    parser.add_argument("--conversations", type=int, default=CONVERSATIONS)
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument(
        "--threads", type=int, default=2, help="torch CPU threads (the result depends on it)"
    )
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    started, cpu_started = time.perf_counter(), time.process_time()

    corpus = make_corpus(args.conversations, SEED)
    texts = [render(sample) for sample in corpus]
    tokenizer = train_tokenizer(texts)
    examples = [encode_for_training(tokenizer, text) for text in texts]
    lengths = sorted(len(ids) for ids, _ in examples)
    trained = sum(sum(label != -100 for label in labels) for _, labels in examples)
    print(
        f"corpus: {len(examples)} conversations, tokens median {lengths[len(lengths) // 2]}, max {lengths[-1]}, "
        f"total {sum(lengths)} ({trained} trained on), vocabulary {len(tokenizer)}",
        flush=True,
    )

    model = train_model(tokenizer, examples, args.steps, SEED)

    im_end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    model.generation_config = GenerationConfig(
        eos_token_id=im_end,
        pad_token_id=tokenizer.pad_token_id,
        do_sample=True,
        temperature=0.7,
        top_p=0.95,
        max_new_tokens=200,
    )
    # 16-bit weights: half the file of float32 (the model is trained in float32).
    model = model.to(torch.float16)
    args.out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(args.out)
    tokenizer.save_pretrained(args.out)
    (ROOT / "templates").mkdir(exist_ok=True)
    wrapper_path = ROOT / "templates" / "demo-model.json"
    wrapper_path.write_text(
        json.dumps(template_wrapper(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    weights = (args.out / "model.safetensors").stat().st_size
    print(f"saved {args.out} (weights {weights / 2**20:.2f} MiB) and {wrapper_path}")
    print(
        f"build time: {time.perf_counter() - started:.0f} s wall, {time.process_time() - cpu_started:.0f} s CPU "
        f"({args.threads} threads)"
    )


if __name__ == "__main__":
    main()
