"""A trained policy file as an agent: ``checkpoint:path=FILE`` in ``tom-envs run`` and everywhere.

* ``.pt``: a MAPPO checkpoint (:mod:`tom_baselines.mappo_policy`), any seat.
* ``.zip``: a stable-baselines3 PPO or sb3-contrib MaskablePPO model (:mod:`tom_baselines.ppo_sb3`);
  illegal actions are masked out of its action distribution before sampling.

**Checkpoints cannot run code by default.** A MAPPO ``.pt`` is read with
``torch.load(weights_only=True)``. An SB3 ``.zip`` is read without unpickling anything
(:func:`tom_baselines.ppo_sb3.load_sb3_safely`): the policy is rebuilt from an allow-listed architecture
(PPO/MaskablePPO ``MlpPolicy`` or ``MultiInputPolicy`` with a recorded ``net_arch`` and a known
activation) and its weights are loaded as plain tensors; any other file is refused with an error
that says so. ``trusted=true`` (``checkpoint:path=FILE:trusted=true``) uses SB3's own loader,
which unpickles the file and can run code embedded in it: only for files you made or trust. A
browser can never set it (``tom-envs serve`` takes checkpoints only as operator presets).

A checkpoint records the environment it was trained on (env id, resolved game arguments,
observation shape); :meth:`CheckpointAgent.reset` refuses an episode that differs, naming both.

**Identity.** Every checkpoint kind is keyed by its content: :meth:`CheckpointAgent.config` (what
result keys record) holds the file's SHA-256 and size, so a file replaced at the same path is a
different agent and its old results are never reused. A file that changes while it is loaded, is
not a regular file, is larger than :data:`MAX_BYTES` or cannot be read as a checkpoint is refused
with a one-line :class:`ValueError` naming the file and why (never a traceback).

Example::

    tom-envs run RockPaperScissors --agents checkpoint:path=runs/train/x/checkpoint.pt tit_for_tat
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, ClassVar

from tom_envs.core.agents import EpisodeInfo, Turn

#: The largest checkpoint file read (bytes).
MAX_BYTES = 2 * 2**30


def file_sha256(path: Path) -> tuple[str, int]:
    """``(SHA-256 hex digest, size in bytes)`` of a file, read in blocks."""
    h, size = hashlib.sha256(), 0
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
            size += len(block)
    return h.hexdigest(), size


class CheckpointAgent:
    """Loads ``path`` (by its suffix) and plays it through the Turn API.

    Args:
        path: a MAPPO ``.pt`` or an SB3 ``.zip`` file.
        deterministic: play the most probable legal action instead of sampling.
        trusted: SB3 ``.zip`` only: load with SB3's unpickling loader (may run code in the file).
    """

    description = "a trained policy: checkpoint:path=FILE (MAPPO .pt or SB3 .zip; needs the rl extra)"
    #: options a spec read from a file or request may not set (tom_envs.core.trust)
    trusted_options: ClassVar[dict[str, str]] = {
        "trusted": "unpickles the file with SB3's own loader (it can run code)"
    }
    #: a file's spec may name a checkpoint only inside the current folder
    path_options = ("path",)

    def __init__(self, path: str, deterministic: bool = False, trusted: bool = False) -> None:
        if trusted is not True and trusted is not False:  # "yes", 1, ...: never a loose truth
            raise ValueError(f"checkpoint option trusted must be true or false, got {trusted!r}")
        file = Path(str(path))
        if file.suffix not in (".pt", ".zip"):
            raise ValueError(f"checkpoint {file}: expected a MAPPO .pt or an SB3 .zip file")
        if not file.exists():
            raise ValueError(f"checkpoint {file} does not exist")
        if not file.is_file():
            raise ValueError(f"checkpoint {file} is not a regular file")
        if file.stat().st_size > MAX_BYTES:
            raise ValueError(f"checkpoint {file} is larger than {MAX_BYTES} bytes")
        self.name = f"checkpoint:path={path}"
        self.deterministic, self.trusted = deterministic, trusted
        self.kind = "mappo" if file.suffix == ".pt" else "sb3"
        self.file_sha256, self.file_bytes = file_sha256(file)
        self.inner: Any = self._load(file, deterministic, trusted)
        if file_sha256(file)[0] != self.file_sha256:  # the results must belong to what was read
            raise ValueError(f"checkpoint {file} changed while it was being loaded; load it again")
        self.inner.name = self.name
        if self.kind == "mappo":
            self.inner.file_sha256 = self.file_sha256

    @staticmethod
    def _load(file: Path, deterministic: bool, trusted: bool) -> Any:
        """The policy of the file, or a one-line ValueError saying why it cannot be one."""
        try:
            if file.suffix == ".pt":
                from tom_baselines.mappo_policy import MappoAgent

                return MappoAgent.load(file, deterministic)
            from tom_baselines.ppo_sb3 import SB3Agent

            return SB3Agent.load(file, deterministic, trusted=trusted)
        except (ImportError, ValueError):  # a missing extra; the safe loader's own refusals
            raise
        except Exception as exc:  # unpickling refusals, corrupt archives, shape errors
            why = " ".join(str(exc).split())[:300] or type(exc).__name__
            raise ValueError(f"checkpoint {file} cannot be loaded as a "
                             f"{'MAPPO' if file.suffix == '.pt' else 'SB3'} checkpoint: "
                             f"{type(exc).__name__}: {why}") from None  # fmt: skip

    def config(self) -> dict[str, Any]:
        """Settings for result keys: the file's content hash and size, its kind and the loaded
        policy's own settings (dimensions, architecture, sampling)."""
        inner = getattr(self.inner, "config", None)
        settings = inner() if callable(inner) else {}
        return {
            **(settings if isinstance(settings, dict) else {}),
            "kind": self.kind,
            "file_sha256": self.file_sha256,
            "file_bytes": self.file_bytes,
            "deterministic": self.deterministic,
            "trusted_loader": self.trusted,
        }

    def reset(self, info: EpisodeInfo) -> None:
        """Start of an episode: refuses one whose environment differs from the checkpoint's
        (env id, observation shape, game arguments), naming both sides."""
        from tom_baselines.ppo_sb3 import check_env_match

        meta = getattr(self.inner, "meta", None)
        if isinstance(meta, dict):
            check_env_match(meta, info, self.name)
        self.inner.reset(info)

    def act(self, turn: Turn) -> int:
        """The policy's action for this turn (always legal)."""
        return int(self.inner.act(turn))

    def action_probs(self, turn: Turn) -> dict[int, float] | None:
        """The distribution of :meth:`act` on this turn, where the loaded policy knows it without
        memory of the episode (SB3 policies); ``None`` otherwise (MAPPO actors may be recurrent)."""
        probs = getattr(self.inner, "action_probs", None)
        return None if probs is None else probs(turn)
