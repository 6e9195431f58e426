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

Example::

    tom-envs run RockPaperScissors --agents checkpoint:path=runs/train/x/checkpoint.pt tit_for_tat
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from tom_envs.core.agents import EpisodeInfo, Turn


class CheckpointAgent:
    """Loads ``path`` (by its suffix) and plays it through the Turn API.

    Args:
        path: a MAPPO ``.pt`` or an SB3 ``.zip`` file.
        deterministic: play the most probable legal action instead of sampling.
        trusted: SB3 ``.zip`` only: load with SB3's unpickling loader (may run code in the file).
    """

    description = "a trained policy: checkpoint:path=FILE (MAPPO .pt or SB3 .zip; needs the rl extra)"
    #: options a spec read from a file or request may not set (tom_envs.trust)
    trusted_options: ClassVar[dict[str, str]] = {
        "trusted": "unpickles the file with SB3's own loader (it can run code)"
    }
    #: a file's spec may name a checkpoint only inside the current folder
    path_options = ("path",)

    def __init__(self, path: str, deterministic: bool = False, trusted: bool = False) -> None:
        if trusted is not True and trusted is not False:  # "yes", 1, ...: never a loose truth
            raise ValueError(f"checkpoint option trusted must be true or false, got {trusted!r}")
        file = Path(str(path))
        if not file.exists():
            raise ValueError(f"checkpoint {file} does not exist")
        self.name = f"checkpoint:path={path}"
        self.inner: Any
        if file.suffix == ".pt":
            from tom_baselines.mappo_policy import MappoAgent

            self.inner = MappoAgent.load(file, deterministic)
        elif file.suffix == ".zip":
            from tom_baselines.ppo_sb3 import SB3Agent

            self.inner = SB3Agent.load(file, deterministic, trusted=trusted)
        else:
            raise ValueError(f"checkpoint {file}: expected a MAPPO .pt or an SB3 .zip file")
        self.inner.name = self.name

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
