"""Files the page writes for a visitor to download (exports, state files), and their clean-up.

A download is written once (`write_download`), from the pieces of its text, in a
folder of its own under one folder of the server process:

- while it is written, its size is checked against PLAYGROUND_LIMITS `answer_mb` and
  against its client's disk quota (`uploads.LEDGER`, the one uploads count against,
  `client_upload_mb` and `uploads_mb`), so a deep upload pretty-printed a hundred
  times its size stops at the cap instead of filling the disk;
- Gradio copies a returned file into its own cache (GRADIO_TEMP_DIR) after the
  handler returns; the download is charged twice its size, for that copy, and the
  copy's path (which Gradio names by the file's hash) is recorded with it, so it is
  deleted with the client's uploads when its page closes (`uploads.remove_uploads`);
- the original is needed only until Gradio has copied it: every new download deletes
  the originals older than `KEPT_SECONDS`, and a client's earlier download of the same
  file name (its page shows the newest only) is deleted, copy included, when it
  writes a new one.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Iterable

from . import admission, limits
from .input_readers import InputError
from .uploads import LEDGER

# How long a written original is kept (seconds): Gradio has copied it into its cache by then.
KEPT_SECONDS = 30
# What the disk quota charges for a download, in copies of its size: the original and Gradio's.
COPIES = 2
_lock = threading.Lock()
_root: Path | None = None


def download_folder() -> Path:
    """A new empty folder for one download (originals older than KEPT_SECONDS are deleted first)."""
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


def gradio_copy(path: Path) -> Path | None:
    """Where Gradio will keep its copy of the download at `path` (its cache folder, a folder
    named by the file's hash), or None when Gradio is not installed."""
    try:
        from gradio import processing_utils, utils
        from gradio_client import utils as client_utils
    except ImportError:
        return None
    name = client_utils.strip_invalid_filename_characters(path.name)
    return Path(utils.get_upload_folder()).resolve() / processing_utils.hash_file(path) / name


def write_download(name: str, pieces: Iterable[str] | str, what: str = "The download") -> str:
    """Write a download file called `name` from its text (or the pieces of it, in order) and
    return its path; charge it to the client of the request (`admission.current_client`).

    Raises InputError naming `what` (the file is deleted) when it grows past PLAYGROUND_LIMITS
    `answer_mb`, or past what its client may still hold on disk.
    """
    caps = limits.current()
    cap = caps.answer_mb * 1_000_000
    client = admission.current_client()
    room = LEDGER.room(client) // COPIES if client is not None else cap
    folder = download_folder()
    path = folder / name
    written = 0
    try:
        with path.open("w", encoding="utf-8") as out:
            for piece in [pieces] if isinstance(pieces, str) else pieces:
                written += len(piece.encode("utf-8"))
                if written > cap:
                    raise InputError(
                        f"{what} is too large: more than {cap:,} bytes (limit PLAYGROUND_LIMITS answer_mb); "
                        "nothing was written."
                    )
                if written > room:
                    raise InputError(
                        f"{what} would take your files on the server past their quota ({room * COPIES / 1e6:,.1f} MB "
                        "left, PLAYGROUND_LIMITS client_upload_mb and uploads_mb count downloads twice, "
                        "for Gradio's copy): close older pages or try again later; nothing was written."
                    )
                out.write(piece)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    if client is not None:
        LEDGER.downloaded(client, name, [path, gradio_copy(path)], written * COPIES)
    return str(path)


def answer_text(pieces: Iterable[str], what: str = "The answer") -> str:
    """The pieces of an answer joined, counted while they come: raises InputError naming `what`
    as soon as they pass PLAYGROUND_LIMITS `answer_mb` (characters), before the rest is built."""
    cap = limits.current().answer_mb * 1_000_000
    kept, size = [], 0
    for piece in pieces:
        size += len(piece)
        if size > cap:
            raise InputError(
                f"{what} is too large: more than {cap:,} characters (limit PLAYGROUND_LIMITS answer_mb)."
            )
        kept.append(piece)
    return "".join(kept)


def remove_upload(path: str | Path | None) -> None:
    """Delete an uploaded file once it has been read (Gradio keeps uploads in its cache)."""
    if path:
        Path(path).unlink(missing_ok=True)
