"""Files the page writes for a visitor to download (exports, state files), and their clean-up.

Each download gets a folder of its own under one folder of the server process;
Gradio copies a returned file into its own cache (which `app.py` has Gradio
clean, `delete_cache`), so the original is only needed for a moment. Every new
download first deletes the folders older than `KEPT_SECONDS`, so a visitor
pressing Share or Export in a loop cannot fill the disk.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from pathlib import Path

# How long a written download is kept (seconds): Gradio has copied it by then.
KEPT_SECONDS = 120
_lock = threading.Lock()
_root: Path | None = None


def download_folder() -> Path:
    """A new empty folder for one download (older ones are deleted first)."""
    global _root
    with _lock:
        if _root is None or not _root.is_dir():
            _root = Path(tempfile.mkdtemp(prefix="playground-downloads-"))
        now = time.time()
        for old in _root.iterdir():
            try:
                if now - old.stat().st_mtime > KEPT_SECONDS:
                    shutil.rmtree(old, ignore_errors=True)
            except OSError:
                pass
        return Path(tempfile.mkdtemp(dir=_root))


def remove_upload(path: str | Path | None) -> None:
    """Delete an uploaded file once it has been read (Gradio keeps uploads in its cache)."""
    if path:
        Path(path).unlink(missing_ok=True)
