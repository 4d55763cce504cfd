"""The engine is a library: `import engine` loads no model runtime, UI or tokenizer framework.

Checked in a fresh interpreter, since this test process has imported them already.
"""

import subprocess
import sys

from tests.support.paths import ROOT

REPO_ROOT = ROOT
HEAVY = ("torch", "gradio", "transformers")


def test_import_engine_loads_neither_torch_gradio_nor_transformers():
    code = f"import sys, engine; print(sorted(name for name in {HEAVY!r} if name in sys.modules))"
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
