"""Where the tests find the checkout, the development material beside it and their own fixtures."""

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("RESPONSE_TEMPLATES_SHARED", ROOT.parent / "shared"))
CHAT_TEMPLATE_FIXTURES = Path(__file__).resolve().parent / "chat_templates"

CHAT_TEMPLATES = SHARED / "chat_templates"
MANIFEST_PATH = CHAT_TEMPLATES / "manifest.json"
MANIFEST = json.loads(MANIFEST_PATH.read_text(encoding="utf-8")) if MANIFEST_PATH.is_file() else []
needs_shared = pytest.mark.skipif(
    not MANIFEST,
    reason=f"no chat templates at {CHAT_TEMPLATES} (set RESPONSE_TEMPLATES_SHARED to the folder holding chat_templates/)",
)

# Chat templates of a family that one response template cannot serve together with the
# family's own: vLLM's pythonic Llama templates want the pythonic call format.
TEMPLATE_FOR = {
    "llama32-pythonic.jinja": "llama-3.2-pythonic",
    "llama4-pythonic.jinja": "llama-3.2-pythonic",
}
