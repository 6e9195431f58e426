"""MAPPO's batched path: rollouts on a game's batched numpy engine (bomb defusal, Overcooked).

Beside :mod:`tom_baselines.mappo` (the per-env path, which reads top to bottom and hands collection
here through :func:`batched_collector` when ``--engine`` asks for it and the run fits).
:class:`BatchedCollector` has :class:`~tom_baselines.mappo.Collector`'s interface and its
bookkeeping (a seat's transition stays open until its next decision and collects every reward
meanwhile; open transitions carry over between rollouts; 0 bootstrap at a game end), but one
tick is one call of the batched engine for all ``num_envs`` envs instead of a Python loop over AEC
envs. Self-play only (every seat learns, no fixed partners): with partners, or a configuration
the engine does not cover, ``--engine auto`` uses the per-env collector and ``--engine batched``
fails naming the reason. The engine used is recorded in the checkpoint and the curve.

Engines (``ENGINES``):

* ``BombDefusal``: :class:`~tom_envs.games.bomb_defusal.vector.BombVectorEnv`; one row per env
  per tick (the seat to act). ``--engine batched`` draws missions with numpy (the rules'
  distribution, not ``reset(seed)``'s stream); ``--engine batched-seeded`` draws every episode
  exactly as the per-env collector does (its episode seeds from ``--seed`` in the same order),
  which makes the two collectors' rollouts bit-identical (``tests/baselines/test_mappo_batched.py``).
* ``Overcooked``: :class:`~tom_envs.games.overcooked.vector.OvercookedVectorEnv`; two rows per env
  per tick (both chefs), the critic's state is player 0's observation (as ``env.state()``). The
  event rewards of ``--event-rewards`` (``OVERCOOKED_EVENTS``: the rules' event names, e.g.
  ``pickup_soup`` from a pot or a counter, ``soup_from_pot`` from a pot only (overcooked-ai's
  soup-pickup shaping), ``useful_plate``, ``potting_onion``) are counted by
  :class:`EventCountingOvercooked` with the rules' definitions (checked against the rules'
  events, step by step, in the tests).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from tom_baselines.common import parse_kv
from tom_baselines.mappo import Rollout
from tom_baselines.mappo_policy import Net, ValueNorm, masked_logits
from tom_envs.games.overcooked.layout import (
    FACE_COUNTER,
    FACE_DISHES,
    FACE_ONIONS,
    FACE_POT,
    FACE_SERVING,
)
from tom_envs.games.overcooked.vector import DISH, ONION, SOUP_1, OvercookedVectorEnv
from tom_envs.identity import resolved_env_kwargs
from tom_envs.registration import GameSpec

if TYPE_CHECKING:
    from tom_baselines.mappo import Args

#: Overcooked events the batched engine counts (the rules' definitions).
OVERCOOKED_EVENTS = ("pickup_onion", "pickup_plate", "useful_plate", "potting_onion",
                     "start_cooking", "pickup_soup", "soup_from_pot", "delivery", "place_onion",
                     "place_plate", "place_soup")  # fmt: skip


class EventCountingOvercooked(OvercookedVectorEnv):
    """The Overcooked batch engine that also sums event rewards per env (``bonus``, per step).

    The events are decided exactly as the rules' ``_interact`` decides them, from the arrays
    just before each chef's interaction (chef 0 first, as the rules do).
    """

    def __init__(self, num_envs: int, weights: Mapping[str, float], **config: Any) -> None:
        unknown = sorted(set(weights) - set(OVERCOOKED_EVENTS))
        if unknown:
            raise ValueError(f"the batched Overcooked engine counts only {OVERCOOKED_EVENTS}, "
                             f"not {unknown}")  # fmt: skip
        self.weights = {k: float(v) for k, v in weights.items()}
        self.bonus = np.zeros(num_envs)
        super().__init__(num_envs, **config)

    def _advance(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """As the engine's; ``bonus`` then holds this step's event rewards."""
        self.bonus[:] = 0.0
        return super()._advance(actions)

    def _interact(self, r: np.ndarray, p: int, reward: np.ndarray) -> None:
        w = self.weights
        if w:
            cell, facing = self.pos[r, p], self.facing[r, p]
            kind, idx = self._kind[cell, facing], self._index[cell, facing]
            h = self.held[r, p]
            bonus = np.zeros(len(r))
            empty = h == 0
            plate = (kind == FACE_DISHES) & empty
            bonus += w.get("pickup_onion", 0.0) * ((kind == FACE_ONIONS) & empty)
            bonus += w.get("pickup_plate", 0.0) * plate
            if self.K:  # counters: "pickup_<item>" / "place_<item>" (a soup of any size: soup)
                counter = kind == FACE_COUNTER
                cur = self.counters[r, np.where(counter, idx, 0)]
                pick = counter & empty & (cur != 0)
                place = counter & ~empty & (cur == 0)
                for item, name in ((cur, "pickup"), (h, "place")):
                    sel = pick if name == "pickup" else place
                    bonus += w.get(f"{name}_onion", 0.0) * (sel & (item == ONION))
                    bonus += w.get(f"{name}_plate", 0.0) * (sel & (item == DISH))
                    bonus += w.get(f"{name}_soup", 0.0) * (sel & (item >= SOUP_1))
            if "useful_plate" in w:
                plates = (self.held[r, 1 - p] == DISH) + (self.counters[r] == DISH).sum(1)
                started = ((self.pot_tick[r] >= 0) | (self.pot_n[r] >= 3)).sum(1)
                bonus += w["useful_plate"] * (plate & (plates < started))
            pot = kind == FACE_POT
            pi = np.where(pot, idx, 0)
            n, t = self.pot_n[r, pi], self.pot_tick[r, pi]
            bonus += w.get("potting_onion", 0.0) * (pot & (h == ONION) & (t < 0) & (n < 3))
            from_pot = w.get("pickup_soup", 0.0) + w.get("soup_from_pot", 0.0)
            bonus += from_pot * (pot & (h == DISH) & (t >= self._ct))
            if not self._auto:
                bonus += w.get("start_cooking", 0.0) * (pot & empty & (n > 0) & (t < 0))
            bonus += w.get("delivery", 0.0) * ((kind == FACE_SERVING) & (h >= SOUP_1))
            self.bonus[r] += bonus
        super()._interact(r, p, reward)


class BombEngine:
    """One row per env per tick: the seat whose turn it is."""

    def __init__(self, num_envs: int, kwargs: Mapping[str, Any], seed: int, missions: str) -> None:
        from tom_envs.games.bomb_defusal.vector import BombVectorEnv

        # only the acting seat's observation is encoded (observe()); actions come from the mask
        self.venv = BombVectorEnv(num_envs, missions=missions, observations=False,
                                  check_actions=False, **kwargs)  # fmt: skip
        self.venv.reset(seed=seed)
        self.rows = np.arange(num_envs)
        self.joint = np.full((num_envs, self.venv.num_agents), self.venv.noop)

    def decide(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Rows (env, seat), their observations, masks and global states."""
        v = self.venv
        return self.rows, v.current_player.copy(), v.observe(), v.legal_mask(), v.state()

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Team rewards ``(B,)``, event bonus ``(B,)`` (none here) and done ``(B,)``."""
        v = self.venv
        joint = self.joint.copy()
        joint[self.rows, v.current_player] = actions
        _, rewards, terminated, truncated = v.step(joint)
        return rewards[:, 0], np.zeros(len(rewards)), terminated | truncated


class OvercookedEngine:
    """Two rows per env per tick (both chefs act at once)."""

    def __init__(self, num_envs: int, kwargs: Mapping[str, Any], seed: int,
                 weights: Mapping[str, float]) -> None:  # fmt: skip
        self.venv = EventCountingOvercooked(num_envs, weights, **kwargs)
        self.obs = self.venv.reset(seed=seed)
        self.B = num_envs
        self.cs = np.repeat(np.arange(num_envs), 2)
        self.ps = np.tile(np.arange(2), num_envs)
        self.mask = np.ones((2 * num_envs, 6), bool)

    def decide(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Rows (env, seat), their observations, masks and global states."""
        obs = self.obs
        assert obs is not None
        state = np.repeat(obs[:, 0], 2, axis=0)  # env.state() is player_0's observation
        return self.cs, self.ps, obs.reshape(2 * self.B, -1), self.mask, state

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Shared rewards ``(B,)``, event bonus ``(B,)`` and done ``(B,)`` (lockstep)."""
        self.obs, rewards, terminated, truncated = self.venv.step(actions.reshape(self.B, 2))
        return rewards[:, 0], self.venv.bonus.copy(), terminated | truncated


def batched_engine_problem(spec: GameSpec, kwargs: Mapping[str, Any], args: Args,
                           partners: Mapping[int, str]) -> str | None:  # fmt: skip
    """Why this run cannot use a batched engine (``None``: it can)."""
    if spec.name not in ("BombDefusal", "Overcooked"):
        return f"{spec.name} has no batched engine (BombDefusal and Overcooked have one)"
    if partners:
        return "the batched collector is self-play only (no --partners)"
    if args.recurrent:
        return "the batched collector has no recurrent (--recurrent) support yet"
    if "max_cycles" in kwargs and kwargs["max_cycles"] is not None:
        return "max_cycles is not supported by the batched engines"
    events = parse_kv(args.event_rewards)
    if spec.name == "BombDefusal":
        if events:
            return "bomb defusal's batched engine emits no step events (--event-rewards)"
        if kwargs.get("symbolic_messages") in (True, "true", "True", 1):
            return "bomb defusal's batched engine has no chat (symbolic_messages)"
        if kwargs.get("map") == "random" and kwargs.get("map_seed") is None:
            return "bomb defusal's batched engine needs one map (map_seed with map='random')"
    elif sorted(set(events) - set(OVERCOOKED_EVENTS)):
        return f"the batched Overcooked engine counts only the events {OVERCOOKED_EVENTS}"
    return None


def batched_collector(
    args: Args, spec: GameSpec, kwargs: Mapping[str, Any], partners: Mapping[int, str]
) -> BatchedCollector | None:
    """The batched collector where the run fits one (``None``: with ``--engine auto``, use the
    per-env collector); ``--engine batched`` / ``batched-seeded`` on a run that does not fit
    raises ``ValueError`` naming why."""
    problem = batched_engine_problem(spec, kwargs, args, partners)
    if problem is None:
        return BatchedCollector(args, spec, kwargs)
    if args.engine == "auto":
        return None
    raise ValueError(f"--engine {args.engine}: {problem}")


class BatchedCollector:
    """Self-play rollouts on a batched engine (see the module docstring)."""

    def __init__(self, args: Args, spec: GameSpec, kwargs: Mapping[str, Any]) -> None:
        self.args, self.spec, self.kwargs = args, spec, dict(kwargs)
        env = spec.load().raw_env(**self.kwargs)  # the reference env: sizes and metadata
        self.envs = [env]
        self.game = env.game
        n = self.n = self.game.num_players
        self.learners = list(range(n))
        self.resolved = resolved_env_kwargs(spec, self.kwargs)
        self.obs_shape = tuple(int(x) for x in env.bundle.encoder.observation_shape)
        B = args.num_envs
        if spec.name == "BombDefusal":
            missions = "seeded" if args.engine == "batched-seeded" else "batched"
            game_kwargs = {k: v for k, v in self.kwargs.items() if k not in ("render_mode",)}
            self.engine: Any = BombEngine(B, game_kwargs, args.seed, missions)
            self.engine_name = f"batched ({missions} missions)"
        else:
            weights = {k: float(v) for k, v in parse_kv(args.event_rewards).items()}
            game_kwargs = {k: v for k, v in self.kwargs.items() if k not in ("render_mode",)}
            self.engine = OvercookedEngine(B, game_kwargs, args.seed, weights)
            self.engine_name = "batched"
        shape = (B, n)
        self.h = np.zeros((*shape, 0), np.float32)
        self.open_row = np.full(shape, -1)
        self.start = np.ones(shape, np.float32)
        self.returns = np.zeros(shape)
        self.decisions = np.zeros(shape, int)
        self.steps = np.zeros(B, int)
        self.eye = np.eye(n, dtype=np.float32)
        self.buffer = Rollout()
        self.shaping_scale = 1.0
        self.finished: list[dict[str, float]] = []

    @torch.no_grad()
    def collect(
        self, actor: Net, critic: Net, value_norm: ValueNorm
    ) -> tuple[dict[str, np.ndarray], int]:
        """Run ``num_steps`` ticks of the engine; returns the closed transitions and env steps."""
        buf, args, B = self.buffer, self.args, self.args.num_envs
        env_steps = 0
        for _ in range(args.num_steps):
            cs, ps, obs, mask, state = self.engine.decide()
            critic_in = np.concatenate([state, self.eye[ps]], 1)
            actor_in = np.concatenate([obs, self.eye[ps]], 1) if args.actor_agent_id else obs
            start = self.start[cs, ps]
            h = self.h[cs, ps]
            ht = torch.as_tensor(h)
            st = torch.as_tensor(start)
            logits, _ = actor(torch.as_tensor(actor_in), ht, st)
            logits = masked_logits(logits, torch.as_tensor(mask, dtype=torch.bool))
            dist = torch.distributions.Categorical(logits=logits)
            action = dist.sample()
            logp = dist.log_prob(action).numpy()
            v, _ = critic(torch.as_tensor(critic_in), ht, st)
            value = value_norm.denormalize(v.squeeze(-1).numpy())
            prev = self.open_row[cs, ps]
            for k in np.flatnonzero(prev >= 0).tolist():  # previous transitions close here
                buf.close(int(prev[k]), float(value[k]), done=False)
            new = buf.add(
                stream=cs * self.n + ps, obs=actor_in.astype(np.float32, copy=False),
                critic_in=critic_in.astype(np.float32, copy=False), mask=mask.astype(bool),
                action=action.numpy(), logp=logp, value=value.astype(np.float32),
                h_actor=h, h_critic=h, start=start,
            )  # fmt: skip
            self.open_row[cs, ps] = new
            self.start[cs, ps] = 0.0
            self.decisions[cs, ps] += 1
            rewards, bonus, done = self.engine.step(action.numpy())
            env_steps += B
            self.steps += 1
            self.returns += rewards[:, None]
            credit = rewards + self.shaping_scale * bonus
            for c in np.flatnonzero(credit).tolist():  # every seat's open transition
                for row in self.open_row[c].tolist():
                    if row >= 0:
                        buf.reward[row] += float(rewards[c])
                        if bonus[c]:
                            buf.reward[row] += self.shaping_scale * float(bonus[c])
            for c in np.flatnonzero(done).tolist():
                self.end_episode(c)
        data, self.buffer, moved = buf.split()
        for (c, p), row in np.ndenumerate(self.open_row):
            if row >= 0:
                self.open_row[c, p] = moved[int(row)]
        return data, env_steps

    def end_episode(self, c: int) -> None:
        """Close env ``c``'s open transitions (the game ended: bootstrap 0) and record it."""
        for p in self.learners:
            row = self.open_row[c, p]
            if row >= 0:
                self.buffer.close(int(row), 0.0, done=True)
        self.finished.append(
            {
                "return": float(self.returns[c].mean()),
                "length": float(self.steps[c]),
                "rounds": float(self.decisions[c].max()),
            }
        )
        self.open_row[c] = -1
        self.start[c] = 1.0
        self.returns[c] = self.decisions[c] = self.steps[c] = 0

    def pop_finished(self) -> list[dict[str, float]]:
        """Episodes finished since the last call."""
        out, self.finished = self.finished, []
        return out
