"""A trained policy file as an agent: ``checkpoint:path=FILE`` in ``tom-envs run`` and everywhere.

* ``.pt``: a MAPPO checkpoint (:mod:`baselines.mappo`), any seat.
* ``.zip``: a stable-baselines3 PPO or sb3-contrib MaskablePPO model (:mod:`baselines.ppo_sb3`);
  illegal actions are masked out of its action distribution before sampling.

Example::

    tom-envs run RockPaperScissors --agents checkpoint:path=runs/train/x/checkpoint.pt tit_for_tat
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tom_envs.core.agents import EpisodeInfo, Turn


class CheckpointAgent:
    """Loads ``path`` (by its suffix) and plays it through the Turn API.

    Args:
        path: a MAPPO ``.pt`` or an SB3 ``.zip`` file.
        deterministic: play the most probable legal action instead of sampling.
    """

    def __init__(self, path: str, deterministic: bool = False) -> None:
        file = Path(str(path))
        if not file.exists():
            raise ValueError(f"checkpoint {file} does not exist")
        self.name = f"checkpoint:path={path}"
        self.inner: Any
        if file.suffix == ".pt":
            from baselines.mappo import MappoAgent

            self.inner = MappoAgent.load(file, deterministic)
        elif file.suffix == ".zip":
            from baselines.ppo_sb3 import SB3Agent

            self.inner = SB3Agent.load(file, deterministic)
        else:
            raise ValueError(f"checkpoint {file}: expected a MAPPO .pt or an SB3 .zip file")
        self.inner.name = self.name

    def reset(self, info: EpisodeInfo) -> None:
        """Start of an episode."""
        self.inner.reset(info)

    def act(self, turn: Turn) -> int:
        """The policy's action for this turn (always legal)."""
        return int(self.inner.act(turn))
