"""Which server folders a visitor may name as a model, and how a folder is shown to one.

A model box (Generate live, the chat-template check) takes a hub id or a
folder. On a shared server a folder is a probe: without a rule, a visitor could
load any folder holding a `config.json` (a cached gated model), read any
`chat_template.jinja`, or learn which folders exist from the messages. So the
only folders that may be named are the bundled demo model, the folder given to
``app.py --model`` (`allow_folder`), and those under PLAYGROUND_LIMITS
`model_folders`; a missing folder and a forbidden one get the same answer, and
a folder is shown by its name under the repository or under its allowed root,
never by its absolute path.
"""

from __future__ import annotations

import re
from pathlib import Path

from . import limits
from .redact import redact

ROOT = Path(__file__).resolve().parents[2]
DEMO_MODEL = ROOT / "samples" / "demo-model"
_HUB_ID = re.compile(r"[\w.-]+(/[\w.-]+)?")
_allowed: list[Path] = []  # folders the host named (app.py --model)


class FolderError(ValueError):
    """A model name that is neither a hub id nor a folder this server may load."""


def allow_folder(folder: str | Path) -> None:
    """Let visitors name `folder` too (the host chose it, e.g. ``app.py --model PATH``)."""
    _allowed.append(Path(folder).expanduser().resolve())


def allowed_roots() -> list[Path]:
    """The folders a visitor may name, everything under them included."""
    return [
        DEMO_MODEL,
        *_allowed,
        *(Path(folder).expanduser().resolve() for folder in limits.current().model_folders),
    ]


def _under(folder: Path, root: Path) -> bool:
    return folder == root or root in folder.parents


def looks_like_hub_id(name: str) -> bool:
    """Hub ids are `name` or `owner/name`; anything else is meant as a folder."""
    return not name.startswith((".", "~", "/")) and _HUB_ID.fullmatch(name) is not None


def check_model_name(name: str) -> str:
    """What to load for a model name a visitor typed: an allowed folder's absolute path, or a hub id.

    A name that is an existing folder (relative to the repository) is a folder; a name shaped
    like ``owner/name`` that is not one is a hub id; anything else is a folder.

    Raises:
        FolderError: a folder that does not exist or is not allowed, with one message for both
            that depends on the name as typed only (`_named`), never on what exists.
    """
    name = name.strip()
    folder = Path(name).expanduser()
    folder = (folder if folder.is_absolute() else ROOT / folder).resolve()
    if folder.is_dir() and any(_under(folder, root) for root in allowed_roots()):
        return str(folder)
    if looks_like_hub_id(name) and not folder.exists():
        return name
    raise FolderError(
        f"{_named(name)!r} is not a model this server can load: name a Hugging Face hub id "
        "(owner/name) or the bundled demo model (samples/demo-model); other server folders are "
        "only allowed through PLAYGROUND_LIMITS model_folders."
    )


def _named(name: str) -> str:
    """A refused folder as its message names it: as typed when it is a plain name under the
    repository (no absolute path, no home folder, no ``..``, nothing `redact` would change),
    else "(a server path)" whatever it is, so no answer tells what exists where."""
    parts = Path(name).parts
    plain = (
        name
        and not Path(name).is_absolute()
        and not name.startswith("~")
        and ".." not in parts
        and redact(name) == name
    )
    return name if plain else "(a server path)"


def shown(name: str) -> str:
    """How a model (a folder's absolute path or a hub id) is named to a visitor: a folder by its
    path under the repository or under its allowed root, a hub id as it is."""
    folder = Path(name)
    if not folder.is_absolute():
        return name
    for root in (ROOT, *allowed_roots()):
        if _under(folder, root):
            base = root if root == ROOT else root.parent
            return str(folder.relative_to(base)) or folder.name
    return folder.name
