"""Stable-Baselines3 ``VecEnv`` over a batched engine: PPO / MaskablePPO collect from numpy arrays.

:class:`BatchedVecEnv` puts a batched engine (:mod:`tom_envs.core.vector`, one of
``tom_envs/games/<game>/vector.py``) behind SB3's ``VecEnv`` API, so SB3's PPO and sb3-contrib's
MaskablePPO step every copy of the game with one engine call instead of a Python loop over
Gymnasium envs (``DummyVecEnv``). ``tom-envs train ppo GAME --engine batched`` builds it
(``baselines/ppo_batched.py``); it can also be used directly::

    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import VecMonitor
    from tom_envs.games.collab_capture.vector import CaptureVectorEnv, CapturePartner
    from tom_envs.integrations.sb3 import BatchedVecEnv

    engine = CaptureVectorEnv(64, keep_final_obs=True)
    venv = VecMonitor(BatchedVecEnv(engine, "partner", partner=CapturePartner(engine)))
    MaskablePPO("MlpPolicy", venv, n_steps=64).learn(50_000)

Three ways to seat the learner (``mode``); every SB3 slot is a real decision, never a filler:

* ``"partner"`` (simultaneous games): slot ``i`` is engine env ``i``; the learner plays ``seat``,
  a vectorised partner (:data:`~tom_envs.core.vector.Partner`: ``RandomPartner``,
  ``MatrixPartner``, ``CapturePartner``, ``EscapePartner``) the other seat. The slot's reward is
  the learner seat's reward of the step: what ``SingleAgentEnv`` gives (the seat acts every step).
* ``"seats"`` (simultaneous games, parameter-shared self-play, as SuperSuit's
  ``pettingzoo_env_to_vec_env``): slot ``k`` is env ``k // n``, seat ``k % n``; each slot gets its
  own seat's reward. ``num_envs = B * n``.
* ``"turns"`` (turn-based games, parameter-shared self-play): slot ``i`` is env ``i`` and its
  decision each step is that of the seat whose turn it is there (its observation, its mask
  without the engine's no-op). A waiting seat produces no transition: the engine's no-op is sent
  for it by the adapter, never chosen by the policy. The slot's reward is the team's reward of the
  move, so the slot's rewards sum to the game's (shared) return; the adapter refuses a step whose
  rewards differ between seats (this mode is for cooperative games: Hanabi, bomb defusal). A
  fixed partner in a turn-based game is not offered: the learner's envs would reach its turns at
  different engine steps, and SB3 needs one decision per slot per step.

Autoreset as SB3 expects (and as ``DummyVecEnv`` does): the step that ends an episode returns
the new episode's observation, ``dones[i] = True``, ``infos[i]["terminal_observation"]`` (the
observation the episode ended on: the learner seat's, or in ``"turns"`` the next seat in turn
order's) and ``infos[i]["TimeLimit.truncated"]`` (``max_cycles`` only). ``reset()`` returns the
observations only; seeds given with ``seed(s)`` are used at the next ``reset`` (the engine's
generator is seeded with ``s``, a partner's own generator with a stream spawned from it).
Masks: :meth:`BatchedVecEnv.action_masks` and ``env_method("action_masks")`` (what MaskablePPO
reads). Wrap it in SB3's ``VecMonitor`` for episode returns. Event-reward shaping (Overcooked's
``--event-rewards``): :class:`EventRewards` around the ``VecMonitor``, so the logged returns stay
the game's own score; on the per-env path (``--engine envs``, a rule-bot partner) each Gymnasium
env is wrapped in :class:`EventBonus`, which puts the same weighted step events in the step's info
for :class:`EventRewards` to add.

The engine must be built with ``keep_final_obs=True`` (for ``terminal_observation``) and, except
in ``"turns"`` mode on an engine with an ``observe()`` of the acting seat (bomb defusal), with
``observations=True``. Importing this module imports stable-baselines3 (the ``rl`` extra).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env.base_vec_env import (
    VecEnv,
    VecEnvIndices,
    VecEnvObs,
    VecEnvStepReturn,
    VecEnvWrapper,
)

from tom_envs.core.vector import BatchedEngine, Partner

MODES = ("partner", "seats", "turns")
#: The per-slot methods ``env_method`` answers.
SLOT_METHODS = ("action_masks",)


class BatchedVecEnv(VecEnv):
    """A batched engine as an SB3 ``VecEnv`` (see the module docstring).

    Args:
        engine: the batched engine (``keep_final_obs=True``).
        mode: ``"partner"``, ``"seats"`` or ``"turns"``.
        seat: the learner's seat in ``"partner"`` mode.
        partner: the vectorised policy of the other seat in ``"partner"`` mode.
        observation_space: the single env's observation space (default: a float32 ``Box`` of the
            engine's ``obs_size`` and bounds); a trained model keeps it, so pass the single env's
            to play the model there.
    """

    render_mode: str | None = None

    def __init__(
        self,
        engine: BatchedEngine,
        mode: str,
        seat: int = 0,
        partner: Partner | None = None,
        observation_space: spaces.Space | None = None,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        turn_based = bool(engine.turn_based)
        if (mode == "turns") != turn_based:
            want = "'turns'" if turn_based else "'partner' or 'seats'"
            raise ValueError(f"mode {mode!r} does not fit this engine "
                             f"({'turn-based' if turn_based else 'simultaneous'}: use {want})")  # fmt: skip
        if not getattr(engine, "keep_final_obs", False):
            raise ValueError("engine must keep the final observations (keep_final_obs=True)")
        n = engine.num_agents
        if mode == "partner":
            if partner is None:
                raise ValueError("mode 'partner' needs a partner")
            if not 0 <= seat < n:
                raise ValueError(f"seat must be in 0..{n - 1}, got {seat}")
        elif partner is not None:
            raise ValueError(f"mode {mode!r} has no partner (every seat is the learner)")
        self._observe_acting = mode == "turns" and not getattr(engine, "observations", True)
        if self._observe_acting and not hasattr(engine, "observe"):
            raise ValueError("engine must compute observations (observations=True)")
        if mode != "turns" and not getattr(engine, "observations", True):
            raise ValueError("engine must compute observations (observations=True)")
        self.engine, self.mode, self.seat, self.partner = engine, mode, seat, partner
        self.B, self.n = engine.num_envs, n
        self.rows = np.arange(self.B)
        self.noop = engine.num_actions - 1 if turn_based else None
        actions = engine.num_actions - 1 if turn_based else engine.num_actions
        if observation_space is None:
            low, high = getattr(engine, "obs_low", -np.inf), getattr(engine, "obs_high", np.inf)
            observation_space = spaces.Box(low, high, (engine.obs_size,), np.float32)
        if tuple(observation_space.shape or ()) != (engine.obs_size,):
            raise ValueError(f"observation_space has shape {observation_space.shape}, the engine's "
                             f"observations ({engine.obs_size},)")  # fmt: skip
        num_envs = self.B * n if mode == "seats" else self.B
        super().__init__(num_envs, observation_space, spaces.Discrete(actions))
        self._full: np.ndarray | None = None  # (B, n, D): every seat's observation now
        self._actions: np.ndarray | None = None
        self.acting = np.zeros(self.B, np.int64)  # "turns": the seat each slot's decision is for

    # ------------------------------------------------------------------ views of the engine
    def _obs_now(self, full: np.ndarray | None) -> np.ndarray:
        """The slots' observations ``(num_envs, D)`` (a copy)."""
        if self.mode == "partner":
            return np.array(full[:, self.seat], np.float32)  # type: ignore[index]
        if self.mode == "seats":
            return np.array(full.reshape(self.num_envs, -1), np.float32)  # type: ignore[union-attr]
        self.acting = np.array(self.engine.current_player, np.int64)
        if self._observe_acting:
            return np.array(self.engine.observe(), np.float32)  # type: ignore[attr-defined]
        return np.array(full[self.rows, self.acting], np.float32)  # type: ignore[index]

    def action_masks(self) -> np.ndarray:
        """``(num_envs, actions)`` bool: each slot's legal actions now (MaskablePPO reads this)."""
        masks = self.engine.action_masks()
        if self.mode == "partner":
            return masks[:, self.seat].copy()
        if self.mode == "seats":
            return masks.reshape(self.num_envs, -1).copy()
        return masks[self.rows, self.acting, : self.noop].copy()

    # ------------------------------------------------------------------ SB3 API
    def reset(self) -> np.ndarray:
        """New episodes in every env; returns the observations (the seed of ``seed()`` if any)."""
        seed = self._seeds[0]
        self._full = self.engine.reset(seed=seed)
        if seed is not None and self.partner is not None and hasattr(self.partner, "rng"):
            child = np.random.SeedSequence(seed).spawn(1)[0]
            self.partner.rng = np.random.default_rng(child)  # type: ignore[attr-defined]
        self._reset_seeds()
        self._reset_options()
        return self._obs_now(self._full)

    def step_async(self, actions: np.ndarray) -> None:
        """Store the slots' actions (``(num_envs,)`` ints)."""
        a = np.asarray(actions)
        if a.shape not in ((self.num_envs,), (self.num_envs, 1)):
            raise ValueError(f"actions must have shape ({self.num_envs},), got {a.shape}")
        self._actions = a.reshape(-1).astype(np.int64)

    def step_wait(self) -> VecEnvStepReturn:
        """One engine step of every env; autoreset as ``DummyVecEnv``."""
        if self._actions is None:
            raise ValueError("call step_async(actions) before step_wait()")
        e, a, B, n = self.engine, self._actions, self.B, self.n
        self._actions = None
        if self.mode == "partner":
            if self._full is None:
                raise ValueError("call reset() before step()")
            joint = np.array(self.partner(self._full, e.action_masks()), np.int64)  # type: ignore[misc]
            joint[:, self.seat] = a
        elif self.mode == "seats":
            joint = a.reshape(B, n)
        else:
            joint = np.full((B, n), self.noop, np.int64)
            joint[self.rows, self.acting] = a
        actor = self.acting
        full, rewards, term, trunc = e.step(joint)
        self._full = full
        done = term | trunc
        if self.mode == "partner":
            r = rewards[:, self.seat]
        elif self.mode == "seats":
            r, term, trunc, done = (rewards.reshape(-1), np.repeat(term, n), np.repeat(trunc, n),
                                    np.repeat(done, n))  # fmt: skip
        else:
            if not (rewards == rewards[:, :1]).all():
                bad = int(np.flatnonzero((rewards != rewards[:, :1]).any(axis=1))[0])
                raise ValueError(f"mode 'turns' needs a team reward; env {bad}'s seats got "
                                 f"{rewards[bad].tolist()}")  # fmt: skip
            r = rewards[:, 0]
        obs = self._obs_now(full)
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        ended = np.flatnonzero(done)
        if len(ended):
            final = e.final_obs
            assert final is not None
            if self.mode == "partner":
                last = final[:, self.seat]
            elif self.mode == "seats":
                last = final.reshape(self.num_envs, -1)
            else:
                last = final[self.rows, (actor + 1) % n]
            for i in ended.tolist():
                infos[i]["terminal_observation"] = np.array(last[i], np.float32)
                infos[i]["TimeLimit.truncated"] = bool(trunc[i] and not term[i])
        return obs, np.array(r, np.float32), done.copy(), infos

    def close(self) -> None:
        """Nothing to release."""

    def _slots(self, indices: VecEnvIndices) -> list[int]:
        out = list(self._get_indices(indices))
        for i in out:
            if not 0 <= int(i) < self.num_envs:
                raise ValueError(f"indices must be in 0..{self.num_envs - 1}, got {i}")
        return [int(i) for i in out]

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """The adapter's attribute, once per slot (the slots share one engine)."""
        value = getattr(self, attr_name)
        return [value for _ in self._slots(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set an attribute of the adapter (shared by every slot: ``indices`` must be all)."""
        if sorted(self._slots(indices)) != list(range(self.num_envs)):
            raise ValueError("set_attr: the slots share one engine; set it for all of them")
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None,
                   **method_kwargs: Any) -> list[Any]:  # fmt: skip
        """Per-slot methods: ``action_masks`` (each slot's row)."""
        if method_name not in SLOT_METHODS:
            raise ValueError(f"env_method: {method_name!r} is not one of {SLOT_METHODS}")
        masks = self.action_masks()
        return [masks[i] for i in self._slots(indices)]

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        """No slot is wrapped in a Gymnasium wrapper (use ``VecMonitor`` for episode stats)."""
        return [False for _ in self._slots(indices)]

    def get_images(self) -> Sequence[np.ndarray | None]:
        """No rendering (the PettingZoo envs render)."""
        return [None for _ in range(self.num_envs)]


#: The step-info key :class:`EventBonus` writes and :class:`EventRewards` reads on the per-env path.
BONUS_KEY = "event_bonus"


class EventBonus(gymnasium.Wrapper):
    """One single-agent env's weighted step events in its step info (``info["event_bonus"]``).

    For the per-env path (a ``DummyVecEnv`` of :class:`~tom_envs.single_agent.SingleAgentEnv`
    copies) of a simultaneous game, where each learner step is one joint step of the game: the
    bonus is ``sum(weights[what])`` over the events ``"player_<i>:<what>"`` the game reported for
    that joint step (``aec.last_events``, every chef's, as the batched engine's ``bonus`` counts
    them); a step that applied no joint step (an illegal action ending the episode) pays 0. The
    reward is untouched: :class:`EventRewards` adds the scaled bonus outside ``Monitor``.
    """

    def __init__(self, env: gymnasium.Env, weights: Mapping[str, float]) -> None:
        super().__init__(env)
        self.weights = {str(k): float(v) for k, v in weights.items()}

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        """The wrapped step, its info with the step's weighted events."""
        aec = self.env.unwrapped.aec  # type: ignore[attr-defined]
        before = aec.game_state
        obs, reward, term, trunc, info = self.env.step(action)
        events = aec.last_events if aec.game_state is not before else ()
        w = self.weights
        info = {**info, BONUS_KEY: sum(w.get(e.rpartition(":")[2], 0.0) for e in events)}
        return obs, reward, term, trunc, info


class EventRewards(VecEnvWrapper):
    """Adds per-env event rewards to the slots' rewards: a training signal only.

    ``batched.engine.bonus`` (``(B,)``, this step's weighted events of each env, e.g.
    :class:`tom_baselines.mappo_batched.EventCountingOvercooked`) times :attr:`scale` is added to
    every slot of that env (each chef's slot in ``"seats"``, the learner's in ``"partner"``), as the
    MAPPO collectors credit it to every learning seat. ``batched=None`` (the per-env path): each
    env's step info carries its bonus (:class:`EventBonus`, refused when missing) and a slot is an
    env. Wrap it *around* ``VecMonitor`` (or the ``Monitor`` of each env) so the
    logged episode returns stay the game's own. :meth:`anneal` sets ``scale = max(0, 1 -
    env_steps / horizon)`` (``env_steps``: engine steps x copies so far; ``horizon`` 0 keeps the
    scale at 1); the training loop calls it before each rollout, as ``baselines/mappo.py`` does.
    """

    def __init__(self, venv: VecEnv, batched: BatchedVecEnv | None, horizon: int = 0) -> None:
        if batched is not None and not isinstance(getattr(batched.engine, "bonus", None), np.ndarray):
            raise ValueError("the engine counts no event rewards (no per-env 'bonus' array)")
        if batched is not None and batched.mode == "turns":
            raise ValueError("event rewards are for the simultaneous modes ('partner', 'seats')")
        if horizon < 0:
            raise ValueError(f"horizon must be >= 0 env steps, got {horizon}")
        super().__init__(venv)
        self.batched, self.horizon = batched, int(horizon)
        self.scale, self.env_steps = 1.0, 0

    def anneal(self) -> float:
        """Set (and return) the scale for the env steps taken so far."""
        if self.horizon > 0:
            self.scale = max(0.0, 1.0 - self.env_steps / self.horizon)
        return self.scale

    def reset(self) -> VecEnvObs:
        """As the wrapped ``VecEnv``'s."""
        return self.venv.reset()

    def step_wait(self) -> VecEnvStepReturn:
        """The wrapped step, its rewards plus ``scale`` x the engine's event rewards."""
        obs, rewards, dones, infos = self.venv.step_wait()
        b = self.batched
        if b is None:
            if any(BONUS_KEY not in info for info in infos):
                raise ValueError(f"per-env event rewards: a step info has no {BONUS_KEY!r} "
                                 "(wrap each env in EventBonus)")  # fmt: skip
            slots = np.array([info[BONUS_KEY] for info in infos], np.float64)
            self.env_steps += len(infos)
        else:
            bonus = np.asarray(b.engine.bonus, np.float64)  # type: ignore[attr-defined]
            slots = np.repeat(bonus, b.n) if b.mode == "seats" else bonus
            self.env_steps += b.B
        shaped = np.asarray(rewards, np.float64) + self.scale * slots
        return obs, shaped.astype(np.float32), dones, infos


def slot_returns(rewards: Iterable[np.ndarray], dones: Iterable[np.ndarray]) -> list[list[float]]:
    """Per slot, the summed rewards of each finished episode (for tests and reports)."""
    out: list[list[float]] = []
    acc: np.ndarray | None = None
    for r, d in zip(rewards, dones, strict=True):
        r, d = np.asarray(r, np.float64), np.asarray(d, bool)
        if acc is None:
            acc = np.zeros_like(r)
            out = [[] for _ in range(len(r))]
        acc += r
        for i in np.flatnonzero(d).tolist():
            out[i].append(float(acc[i]))
            acc[i] = 0.0
    return out
