"""A hub id on the page: fail in seconds when the Hugging Face Hub is out of reach, refuse oversized downloads.

transformers retries an unreachable Hub for about a minute before it gives up,
and a shared Space must not spend that long (or download a 70 GB checkpoint)
for one visitor. `check_hub_id` runs before `from_pretrained`: a quick TCP
probe of the Hub (PLAYGROUND_LIMITS `hub_seconds`); when the Hub answers, the
size of the weights is read from the Hub and compared with `model_download_mb`;
when it does not, only the local Hugging Face cache can serve the id.
"""

from __future__ import annotations

from pathlib import Path

from engine.chat_templates.render import hub_reachable

from ..server import limits

# A model repository's weight files, the ones counted against `model_download_mb`.
WEIGHT_SUFFIXES = (".safetensors", ".bin")


class HubError(ValueError):
    """A hub id that cannot be loaded here; the message names the id and the cause."""


def _weights_mb(repo_id: str, timeout: float) -> float:
    """Megabytes of the top-level weight files `from_pretrained` would download (safetensors when there are any)."""
    from huggingface_hub import HfApi

    info = HfApi().model_info(repo_id, files_metadata=True, timeout=timeout)
    files = [(s.rfilename, s.size or 0) for s in info.siblings or () if "/" not in s.rfilename]
    safetensors = [size for name, size in files if name.endswith(".safetensors")]
    weights = safetensors or [size for name, size in files if name.endswith(WEIGHT_SUFFIXES)]
    return sum(weights) / 1e6


def check_hub_id(repo_id: str) -> Path | None:
    """Decide how `repo_id` (a hub id such as "Qwen/Qwen3-0.6B") is loaded, within about `hub_seconds`.

    Returns:
        None when the Hub answers (load `repo_id` from it as usual), or the folder of
        its cached snapshot when the Hub cannot be reached but the id was downloaded before.

    Raises:
        HubError: the Hub cannot be reached and the id is not cached; the id is unknown,
            private or gated; or its weights are over `model_download_mb`.
    """
    caps = limits.current()
    reachable, why = hub_reachable(caps.hub_seconds)
    if not reachable:
        from huggingface_hub import snapshot_download

        try:
            return Path(snapshot_download(repo_id, local_files_only=True))
        except Exception:  # not cached (LocalEntryNotFoundError) or a malformed id
            raise HubError(
                f"could not load {repo_id!r}: the Hugging Face Hub is not reachable ({why}) and {repo_id!r} is not in "
                "the local cache. Without network, download the model elsewhere, copy its folder here and give the path; "
                "the bundled demo model (samples/demo-model) needs no network."
            ) from None
    try:
        megabytes = _weights_mb(
            repo_id, caps.hub_seconds / 2
        )  # huggingface_hub retries a timed-out request once
    except Exception as error:  # unknown, private or gated repo; an HTTP error or timeout
        cause = (
            f"no answer within {caps.hub_seconds:g} s"
            if "Timeout" in type(error).__name__
            else f"{type(error).__name__}: {error}"
        )
        raise HubError(f"could not load {repo_id!r} from the Hugging Face Hub ({cause}).") from None
    if megabytes > caps.model_download_mb:
        raise HubError(
            f"{repo_id!r} has {megabytes:,.0f} MB of weights, over this playground's download limit of "
            f"{caps.model_download_mb:,} MB (PLAYGROUND_LIMITS model_download_mb). Pick a smaller model."
        )
    return None
