"""MAPPO's policy side: the networks, checkpoints, and a trained actor playing as an agent.

The actor and the centralised critic (:class:`Net`: two tanh layers, an optional GRU cell, a linear
head), the value normaliser (:class:`ValueNorm`), the checkpoint file (:func:`save_checkpoint`,
:func:`load_checkpoint`, with the environment it was trained on: :func:`check_environment`) and
:class:`MappoAgent`, which plays a checkpoint at any seat through the Turn API. Training is in
:mod:`tom_baselines.mappo`; loading a checkpoint needs only this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from tom_envs.core.agents import BaseAgent, EpisodeInfo, Turn

CHECKPOINT_FORMAT = "tom_envs.mappo/1"


# ------------------------------------------------------------------------------ networks
def layer(n_in: int, n_out: int, std: float = float(np.sqrt(2))) -> nn.Linear:
    """Linear layer with orthogonal weights and zero bias (CleanRL's ``layer_init``)."""
    lin = nn.Linear(n_in, n_out)
    nn.init.orthogonal_(lin.weight, std)
    nn.init.zeros_(lin.bias)
    return lin


class Net(nn.Module):
    """Two tanh layers, an optional GRU cell, a linear head. ``forward`` is one time step."""

    def __init__(
        self, n_in: int, n_out: int, hidden: int, recurrent: bool, head_std: float
    ) -> None:
        super().__init__()
        self.body = nn.Sequential(layer(n_in, hidden), nn.Tanh(), layer(hidden, hidden), nn.Tanh())
        self.gru = nn.GRUCell(hidden, hidden) if recurrent else None
        self.head = layer(hidden, n_out, head_std)
        self.hidden_size = hidden if recurrent else 0

    def forward(
        self, x: torch.Tensor, h: torch.Tensor, start: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Output and next hidden state; ``start`` (1 at an episode's first decision) zeroes ``h``."""
        z = self.body(x)
        if self.gru is not None:
            h = self.gru(z, h * (1.0 - start).unsqueeze(-1))
            z = h
        return self.head(z), h


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Illegal actions get a logit of -1e9 (probability 0, finite entropy)."""
    return logits.masked_fill(~mask, -1e9)


class ValueNorm:
    """Running mean and variance of the value targets; the critic predicts normalised values."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled, self.mean, self.var, self.count = enabled, 0.0, 1.0, 1e-4

    def update(self, x: np.ndarray) -> None:
        """Merge a batch's statistics (parallel variance formula)."""
        if not self.enabled or x.size == 0:
            return
        m, v, n = float(x.mean()), float(x.var()), x.size
        delta, total = m - self.mean, self.count + n
        self.mean += delta * n / total
        self.var = (self.var * self.count + v * n + delta**2 * self.count * n / total) / total
        self.count = total

    def normalize(self, x: Any) -> Any:
        """Targets into the critic's scale."""
        return (x - self.mean) / np.sqrt(self.var + 1e-8) if self.enabled else x

    def denormalize(self, x: Any) -> Any:
        """Critic outputs back into returns."""
        return x * np.sqrt(self.var + 1e-8) + self.mean if self.enabled else x


# ---------------------------------------------------------------------------- checkpoints
def save_checkpoint(
    path: str | Path, actor: Net, critic: Net, value_norm: ValueNorm, meta: Mapping[str, Any]
) -> Path:
    """Write actor, critic, value statistics and everything needed to rebuild them."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    blob = {
        "format": CHECKPOINT_FORMAT,
        "meta": dict(meta),
        "actor": actor.state_dict(),
        "critic": critic.state_dict(),
        "value_norm": [value_norm.enabled, value_norm.mean, value_norm.var, value_norm.count],
    }
    tmp = path.with_suffix(".tmp")
    torch.save(blob, tmp)
    tmp.replace(path)
    return path


def _blob(path: str | Path) -> dict[str, Any]:
    blob = torch.load(path, map_location="cpu", weights_only=True)
    if not isinstance(blob, dict) or blob.get("format") != CHECKPOINT_FORMAT:
        what = blob.get("format") if isinstance(blob, dict) else type(blob).__name__
        raise ValueError(f"{path} is not a MAPPO checkpoint ({what!r})")
    return blob


def load_actor(path: str | Path) -> tuple[Net, dict[str, Any]]:
    """The actor and ``meta`` of a checkpoint: a full one, or an actor-only one (a shipped
    partner: :func:`save_checkpoint`'s file without critic and value statistics)."""
    blob = _blob(path)
    meta = blob["meta"]
    actor, _ = build_nets(meta)
    actor.load_state_dict(blob["actor"])
    return actor, meta


def load_checkpoint(path: str | Path) -> tuple[Net, Net, ValueNorm, dict[str, Any]]:
    """Rebuild actor, critic and value statistics from :func:`save_checkpoint`'s file."""
    blob = _blob(path)
    if blob.get("critic") is None:
        raise ValueError(f"{path} holds only the actor (a shipped partner): it can play "
                         "(MappoAgent.load), not resume training")  # fmt: skip
    meta = blob["meta"]
    actor, critic = build_nets(meta)
    actor.load_state_dict(blob["actor"])
    critic.load_state_dict(blob["critic"])
    vn = ValueNorm(bool(blob["value_norm"][0]))
    vn.mean, vn.var, vn.count = (float(x) for x in blob["value_norm"][1:])
    return actor, critic, vn, meta


def _sha256(path: str | Path) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def build_nets(meta: Mapping[str, Any]) -> tuple[Net, Net]:
    """Actor and critic for the dimensions recorded in ``meta``."""
    n_players, hidden, rec = meta["num_players"], meta["hidden"], meta["recurrent"]
    actor_in = meta["obs_dim"] + (n_players if meta["actor_agent_id"] else 0)
    actor = Net(actor_in, meta["num_actions"], hidden, rec, head_std=0.01)
    critic = Net(meta["state_dim"] + n_players, 1, hidden, rec, head_std=1.0)
    return actor, critic


class CheckpointMismatchError(ValueError):
    """A checkpoint used in an environment other than the one it was trained on."""


def check_environment(meta: Mapping[str, Any], info: EpisodeInfo, name: str = "checkpoint") -> None:
    """Raise :class:`CheckpointMismatchError` naming both sides when ``info``'s environment is not
    the one ``meta`` was trained on (game, actions, observation shape, game arguments)."""
    game = str(meta.get("game", ""))
    env_game = info.env_id.split("/")[-1].rsplit("-v", 1)[0]
    if game and env_game and game != env_game:
        raise CheckpointMismatchError(f"{name} was trained on {game}, this episode is {env_game}")
    if info.num_actions != meta["num_actions"]:
        raise CheckpointMismatchError(
            f"{name} has {meta['num_actions']} actions, {env_game} has {info.num_actions}"
        )
    trained = meta.get("resolved_env_kwargs")
    if trained is None:  # an older checkpoint: the arguments it was given on top of the defaults
        trained = meta.get("env_kwargs") or {}
    diffs = []
    if info.env_kwargs is not None:
        for key, value in trained.items():
            if key not in info.env_kwargs:
                continue
            if info.env_kwargs[key] != value:
                diffs.append(
                    f"{key}={value!r} (checkpoint) vs {key}={info.env_kwargs[key]!r} (env)"
                )
    shape = meta.get("observation_shape")
    if info.observation_shape is not None:
        env_shape = tuple(info.observation_shape)
        if shape is not None and tuple(shape) != env_shape:
            diffs.append(f"observation shape {tuple(shape)} (checkpoint) vs {env_shape} (env)")
        elif shape is None and int(np.prod(env_shape)) != int(meta["obs_dim"]):
            diffs.append(f"observation size {meta['obs_dim']} (checkpoint) vs "
                         f"{int(np.prod(env_shape))} {env_shape} (env)")  # fmt: skip
    if diffs:
        raise CheckpointMismatchError(
            f"{name} was trained on another {game or 'game'} environment: " + "; ".join(diffs)
        )


class MappoAgent(BaseAgent):
    """A trained MAPPO actor as an agent: plays any seat through the Turn API.

    Args:
        actor: the actor network.
        meta: the checkpoint's ``meta`` (dimensions, game, settings).
        deterministic: play the most probable legal action instead of sampling.
        name: how trajectories name this agent.
    """

    #: the checkpoint file's SHA-256 (set by :meth:`load`; ``None`` for a live policy)
    file_sha256: str | None = None

    def __init__(
        self, actor: Net, meta: Mapping[str, Any], deterministic: bool = False, name: str = "mappo"
    ) -> None:
        super().__init__()
        self.actor, self.meta, self.deterministic, self.name = actor, meta, deterministic, name
        self.h = torch.zeros(1, actor.hidden_size)
        self.start = torch.ones(1)

    @classmethod
    def load(cls, path: str | Path, deterministic: bool = False) -> MappoAgent:
        """The agent of a checkpoint file."""
        actor, meta = load_actor(path)
        agent = cls(actor, meta, deterministic, name=f"checkpoint:path={path}")
        agent.file_sha256 = _sha256(path)
        return agent

    def config(self) -> dict[str, Any]:
        """Settings for result keys: the checkpoint's content hash, dimensions and sampling."""
        keys = ("game", "num_players", "num_actions", "obs_dim", "hidden", "recurrent",
                "actor_agent_id", "global_step")  # fmt: skip
        return {
            "kind": "mappo",
            "file_sha256": self.file_sha256,
            "deterministic": self.deterministic,
            **{k: self.meta.get(k) for k in keys},
        }

    def reset(self, info: EpisodeInfo) -> None:
        """New episode: empty memory, generator seeded from the episode (same seed, same play).

        Raises :class:`CheckpointMismatchError` when the episode's game, action count,
        observation shape or game arguments differ from the training environment's.
        """
        super().reset(info)
        check_environment(self.meta, info, self.name)
        self.h = torch.zeros(1, self.actor.hidden_size)
        self.start = torch.ones(1)

    @torch.no_grad()
    def act(self, turn: Turn) -> int:
        """Sample (or take the argmax of) the masked policy on the turn's observation."""
        x = np.asarray(turn.observation, np.float32)
        if self.meta["actor_agent_id"]:
            x = np.concatenate([x, np.eye(self.meta["num_players"], dtype=np.float32)[turn.player]])
        logits, self.h = self.actor(torch.as_tensor(x[None]), self.h, self.start)
        self.start = torch.zeros(1)
        mask = torch.as_tensor(np.asarray(turn.action_mask, bool)[None])
        probs = torch.softmax(masked_logits(logits, mask), -1)[0].double().numpy()
        if self.deterministic:
            return int(np.argmax(probs))
        return int(self.rng.choice(len(probs), p=probs / probs.sum()))
