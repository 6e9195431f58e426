"""A trained checkpoint as a vectorised partner on a batched engine (``--partners zoo/<member>``).

:class:`CheckpointVectorPartner` runs a checkpoint's actor on the engine's batched observations
``(B, n, D)`` and legal masks ``(B, n, A)`` for the seats it plays, and returns the joint action
``(B, n)`` (0 in the learner's seats, which the adapter overwrites): the
:data:`~tom_envs.core.vector.Partner` interface of :class:`~tom_envs.integrations.sb3.BatchedVecEnv`
and :class:`~tom_envs.core.vector.GymVectorEnv`, like ``MatrixPartner`` and ``CapturePartner``.

Its action distribution is the single-env agent's, computed for all envs at once: a MAPPO ``.pt``
(:class:`~tom_baselines.mappo_policy.MappoAgent`: the seat's one-hot appended when the actor was
trained with it; feed-forward actors only, a recurrent one is refused) or an SB3 ``.zip``
(:func:`~tom_baselines.ppo_sb3.masked_probs`, batched). It samples from its own generator ``rng``
(the adapters reseed it from the episode seed), or plays the most probable legal action with
``deterministic=True``. ``tests/baselines/test_vector_partner.py`` checks it action by action, and
its probabilities, against the member played by the suite's runner in the single env.

Learned zoo members are built with :func:`zoo_partner`, which goes through
:func:`tom_envs.zoo.make_member`: the file must have the SHA-256 its manifest declares (checked
before loading and on the bytes loaded), and the member's training environment must be the
engine's (game, game arguments, observation shape), else the partner is refused naming both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

from tom_envs.registration import GameSpec


class CheckpointVectorPartner:
    """A loaded checkpoint policy playing ``seats`` of every env of a batched engine.

    Args:
        policy: the loaded policy: a :class:`~tom_baselines.mappo_policy.MappoAgent` or a
            :class:`~tom_baselines.ppo_sb3.SB3Agent` (a :class:`CheckpointAgent`'s ``inner``).
        seats: the seats it plays.
        seed: seed of its sampling generator.
        deterministic: play the most probable legal action (ties: the lowest index).
    """

    def __init__(self, policy: Any, seats: Sequence[int] = (1,), seed: int | None = None,
                 deterministic: bool = False) -> None:  # fmt: skip
        self.policy, self.seats = policy, tuple(int(s) for s in seats)
        self.deterministic = deterministic
        self.rng = np.random.default_rng(seed)
        meta = getattr(policy, "meta", None)
        self.kind = "mappo" if hasattr(policy, "actor") else "sb3"
        if self.kind == "mappo":
            assert isinstance(meta, Mapping)
            if meta.get("recurrent"):
                raise ValueError("a recurrent MAPPO actor has no vectorised partner yet (it "
                                 "would need per-env memory across steps)")  # fmt: skip
            self.num_players = int(meta["num_players"])
            self.agent_id = bool(meta.get("actor_agent_id"))

    @torch.no_grad()
    def probs(self, obs: np.ndarray, masks: np.ndarray, seat: int) -> np.ndarray:
        """``(B, A)``: the policy's action probabilities in ``seat`` of every env, illegal actions
        removed (renormalised; uniform over the legal ones if the policy puts nothing there)."""
        x = np.asarray(obs[:, seat], np.float32).reshape(len(obs), -1)
        mask = np.asarray(masks[:, seat], bool)
        if self.kind == "mappo":
            from tom_baselines.mappo_policy import masked_logits

            if self.agent_id:
                eye = np.eye(self.num_players, dtype=np.float32)[seat]
                x = np.concatenate([x, np.broadcast_to(eye, (len(x), len(eye)))], 1)
            actor = self.policy.actor
            h = torch.zeros(len(x), actor.hidden_size)
            logits, _ = actor(torch.as_tensor(x), h, torch.ones(len(x)))
            logits = masked_logits(logits, torch.as_tensor(mask))
            return torch.softmax(logits, -1).double().numpy()
        pol = self.policy.model.policy
        t, _ = pol.obs_to_tensor(x)
        p = pol.get_distribution(t).distribution.probs.double().numpy() * mask
        total = p.sum(1, keepdims=True)
        empty = total[:, 0] <= 0
        p[empty], total[empty] = mask[empty], mask[empty].sum(1, keepdims=True)
        return p / total

    def __call__(self, obs: np.ndarray | None, masks: np.ndarray) -> np.ndarray:
        """``(B, n)``: the policy's action in each of its seats (0 elsewhere)."""
        if obs is None:
            raise ValueError("a checkpoint partner needs the engine's observations "
                             "(observations=True)")  # fmt: skip
        out = np.zeros(masks.shape[:2], np.int64)
        for seat in self.seats:
            p = self.probs(obs, masks, seat)
            if self.deterministic:
                out[:, seat] = p.argmax(1)
                continue
            cdf = np.cumsum(p, 1)
            u = self.rng.random(len(p)) * cdf[:, -1]
            pick = np.minimum((u[:, None] > cdf).sum(1), p.shape[1] - 1)  # first cdf >= u
            bad = p[np.arange(len(p)), pick] <= 0  # u == 0 exactly: the first likely action
            pick[bad] = p[bad].argmax(1)
            out[:, seat] = pick
        return out


def zoo_partner(spec: GameSpec, name: str, kwargs: Mapping[str, Any], seats: Sequence[int],
                seed: int | None = None, deterministic: bool = False) -> CheckpointVectorPartner:  # fmt: skip
    """Zoo member ``name`` (``zoo/<member>``) of ``spec``'s game as a vectorised partner in
    ``seats``, for an engine built with game arguments ``kwargs``.

    Refused (``ValueError``/:class:`~tom_envs.zoo.ZooIntegrityError`) when the member is not a
    learned one, its file is not the one its manifest declares, or it was trained on other game
    arguments or observations than these."""
    from tom_envs import zoo
    from tom_envs.agents import make_agent
    from tom_envs.driver import episode_info
    from tom_envs.identity import resolved_env_kwargs

    member = zoo.member(name, spec.name)
    if member.kind != "checkpoint":
        raise ValueError(f"{spec.name} zoo member {name!r} is a {member.kind}, not a learned "
                         "checkpoint")  # fmt: skip
    game_kwargs = {k: v for k, v in kwargs.items() if k != "render_mode"}
    bundle = spec.load().make_bundle(**game_kwargs)
    agent: Any = zoo.make_member(name, spec, bundle, make_agent)
    shape = tuple(int(x) for x in bundle.encoder.observation_shape)
    resolved = resolved_env_kwargs(spec, game_kwargs)
    for seat in seats:  # the member's own refusal of another environment, per seat it plays
        agent.reset(episode_info(spec, bundle.game, int(seat), None, resolved, shape))
    return CheckpointVectorPartner(agent.inner, seats, seed, deterministic)


__all__ = ["CheckpointVectorPartner", "zoo_partner"]
