"""Uploads: what each client keeps on the server's disk, within a quota, and removed with its page.

Gradio's `/gradio_api/upload` route takes files before any listener runs, so the
queues never see it: without a rule one client could fill the disk with files that
Gradio deletes only ten to fifteen minutes later. `UploadQuota` (ASGI middleware)
counts every upload against its client (an address, as `admission.client_address`
reads it): the files of its uploads still on disk, and the uploads arriving now.
An upload that would take a client past PLAYGROUND_LIMITS `client_upload_mb`, or
all clients past `uploads_mb`, is refused (HTTP 429, the reason in its detail)
before its body is read, or as soon as a body without a declared length goes over.
`remove_uploads(address)` deletes a client's uploads when its page closes.

The same ledger counts the files the page writes for a client to download
(`downloads.write_download`: the file and Gradio's copy of it in its cache), so
the quotas cover everything a client can make the server keep on disk.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from starlette.requests import Request

from . import limits
from .admission import client_address, send_refusal

# What one upload counts at least (bytes): a flood of tiny files is still a flood.
LEAST_CHARGE = 64 * 1024


@dataclass
class _Upload:
    paths: list[Path]
    charged: int
    at: float = field(default_factory=time.time)
    download: str | None = None  # a download's file name; None for an upload


class UploadLedger:
    """Each client's uploads on disk and in flight (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: dict[str, list[_Upload]] = {}
        self._arriving: dict[str, int] = {}

    def _held(self, address: str) -> int:
        """Bytes of `address`'s uploads still on disk (those Gradio or the page deleted are dropped)."""
        kept = [
            upload
            for upload in self._kept.get(address, [])
            if any(p.exists() for p in upload.paths)
        ]
        if kept:
            self._kept[address] = kept
        else:
            self._kept.pop(address, None)
        return sum(upload.charged for upload in kept)

    def admit(self, address: str, declared: int) -> tuple[str | None, int]:
        """Count `declared` bytes arriving for `address`: (the refusal when they would take it, or
        all clients, past the quota, else None; the bytes it held before)."""
        caps = limits.current()
        charge = max(declared, LEAST_CHARGE)
        with self._lock:
            held = self._held(address) + self._arriving.get(address, 0)
            if held + charge > caps.client_upload_mb * 1_000_000:
                return over_quota(held), held
            everyone = sum(self._held(other) for other in list(self._kept)) + sum(
                self._arriving.values()
            )
            if everyone + charge > caps.uploads_mb * 1_000_000:
                return (
                    f"The server holds {everyone / 1e6:,.0f} MB of uploads (at most {caps.uploads_mb:,} MB, "
                    "PLAYGROUND_LIMITS uploads_mb): try again in a few minutes."
                ), held
            self._arriving[address] = self._arriving.get(address, 0) + charge
        return None, held

    def arrived(self, address: str, declared: int, paths: list[Path], received: int) -> None:
        """The upload counted by `admit` ended: keep `paths` (possibly none) against `address`."""
        with self._lock:
            left = self._arriving.get(address, 0) - max(declared, LEAST_CHARGE)
            if left > 0:
                self._arriving[address] = left
            else:
                self._arriving.pop(address, None)
            if paths:
                self._kept.setdefault(address, []).append(
                    _Upload(paths, max(received, LEAST_CHARGE))
                )

    def room(self, address: str) -> int:
        """Bytes `address` may still add to the disk: the least of what its quota and the
        server's leave."""
        caps = limits.current()
        with self._lock:
            held = self._held(address) + self._arriving.get(address, 0)
            everyone = sum(self._held(other) for other in list(self._kept)) + sum(
                self._arriving.values()
            )
        return max(
            0, min(caps.client_upload_mb * 1_000_000 - held, caps.uploads_mb * 1_000_000 - everyone)
        )

    def downloaded(self, address: str, name: str, paths: list[Path | None], charged: int) -> None:
        """Count a download called `name` written for `address` (its file and Gradio's copy,
        `charged` bytes); delete its earlier download of that name, which the page no longer shows."""
        kept = [path for path in paths if path is not None]
        with self._lock:
            earlier = [up for up in self._kept.get(address, []) if up.download == name]
            self._kept[address] = [
                up for up in self._kept.get(address, []) if up.download != name
            ] + [_Upload(kept, charged, download=name)]
        for upload in earlier:
            for path in upload.paths:
                if path not in kept:
                    _delete(path)

    def remove(self, address: str) -> int:
        """Delete every upload of `address` now; returns how many files were deleted."""
        with self._lock:
            uploads = self._kept.pop(address, [])
        return sum(_delete(path) for upload in uploads for path in upload.paths)

    def held_bytes(self, address: str) -> int:
        """Bytes of `address`'s uploads on disk now."""
        with self._lock:
            return self._held(address)


def _delete(path: Path) -> bool:
    """Delete a kept file, and the folder it was alone in (Gradio keeps each file in a folder
    named by its hash); whether the file was there."""
    try:
        path.unlink()
    except OSError:
        return False
    try:
        path.parent.rmdir()  # only when empty
    except OSError:
        pass
    return True


def over_quota(held: int) -> str:
    """The refusal of an upload from a client holding `held` bytes of uploads."""
    return (
        f"You have {held / 1e6:,.1f} MB of uploads on the server (at most "
        f"{limits.current().client_upload_mb:,} MB per client, PLAYGROUND_LIMITS client_upload_mb): "
        "they are deleted when your page closes, or ten minutes after the upload."
    )


LEDGER = UploadLedger()


def remove_uploads(address: str) -> int:
    """Delete `address`'s uploads (its page closed); how many files were deleted."""
    return LEDGER.remove(address)


class _OverQuota(Exception):
    pass


class UploadQuota:
    """ASGI middleware: every POST to an upload route counts against its client's quota
    (`UploadLedger`); over it, HTTP 429 before the body is read."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        if (
            scope["type"] != "http"
            or scope.get("method") != "POST"
            or not scope.get("path", "").rstrip("/").endswith("/upload")
        ):
            return await self.app(scope, receive, send)
        address = client_address(Request(scope))
        length = dict(scope.get("headers") or ()).get(b"content-length", b"")
        declared = int(length) if length.isdigit() and len(length) < 19 else 0
        refused, held = LEDGER.admit(address, declared)
        if refused is not None:
            return await send_refusal(scope, receive, send, 429, refused)
        quota = limits.current().client_upload_mb * 1_000_000
        received, answer, status = 0, [], [0]

        async def counted():
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if held + max(received, declared) > quota:
                    raise _OverQuota
            return message

        async def kept(message):
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            elif message["type"] == "http.response.body" and status[0] == 200:
                answer.append(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, counted, kept)
        except _OverQuota:
            await send_refusal(scope, receive, send, 429, over_quota(held + received))
        finally:
            LEDGER.arrived(address, declared, _paths(b"".join(answer)), received)


def _paths(body: bytes) -> list[Path]:
    """The files an upload route's answer names (a JSON list of paths), or [] for anything else."""
    try:
        named = json.loads(body) if body else []
    except ValueError:
        return []
    return [Path(p) for p in named if isinstance(p, str)] if isinstance(named, list) else []
