"""The batched-engine contract: B copies of one game stepped at once on numpy arrays.

A batched engine is **optional**: a game needs only its :class:`~tom_envs.core.contract.GameModule`
to join the suite. A game that wants fast RL data collection adds one, in
``tom_envs/games/<game>/vector.py``, and names it in its ``GameSpec`` (``vector="module:Class"``,
:mod:`tom_envs.registration`). It is a second implementation of the rules, so it is held to the
first: it computes exactly what the game's rules and encoder compute, env by env, bit for bit, and
one registry-driven test (``tests/test_vector_parity.py``) plays every registered engine beside
the AEC env on fixed seed lists (bots and random play) and compares every seat's observation and
mask, the rewards, terminations, truncations and final observations at every step, loading each
episode's start from :meth:`BatchedEngine.start_state` and matching each step's chance to one of
the rules' outcomes. Use a batched engine for RL data collection and throughput; use the
PettingZoo envs for everything else (text, probes, chat, rendering).

## The contract (:class:`BatchedEngine`)

The constructor is ``Engine(num_envs, **game_kwargs, **options)``: the game's keyword arguments
(those of its ``raw_env``) and the options of :data:`ENGINE_OPTIONS` (``autoreset``,
``max_cycles``, ``keep_final_obs``, ``observations``, ``check_actions``). Attributes:
``num_envs`` (B), ``agents`` (``("player_0", ...)``, n seats), ``num_agents`` (n), ``encoder``
(the game's own encoder for this configuration, the class ``make_bundle`` uses: the engine takes
its observation layout, the named pieces and offsets of ``games/<game>/encode.py``, from it and
keeps no second layout table), ``obs_size`` (D, ``encoder.observation_shape[0]``, the single env's
``observation_space(agent)["observation"]`` length), ``obs_low`` / ``obs_high`` (the encoder's
bounds), ``num_actions`` (A) and ``turn_based``.

* ``reset(seed=None) -> obs``: new episodes in every env; ``obs`` is ``(B, n, D)`` float32, seat
  ``p``'s row exactly the single env's ``observe(agent_p)["observation"]``. ``seed`` seeds the
  engine's one ``numpy.random.Generator``; all chance of all envs flows from it (no global RNG).
  The batch does not replay the single env's ``reset(seed=i)`` deals env by env:
  ``start_state(i)`` is the rules' state env ``i``'s current episode started from, so the rules
  engine (or an AEC env) can replay it.
* ``step(actions) -> (obs, rewards, terminated, truncated)``: ``actions`` is ``(B, n)`` ints in
  ``0..A-1``; ``rewards`` ``(B, n)`` float64 (each seat's reward of this step, as the Parallel
  env's ``rewards``); ``terminated`` and ``truncated`` ``(B,)`` bool. ``terminated`` is the rules'
  end (``is_terminal``, the horizon included, as in the single env); ``truncated`` is
  ``max_cycles`` (a cycle is one joint step, or one move of every seat in turn-based games, as in
  the single env), and only where not terminated.
* **Autoreset, same step** (Gymnasium's ``AutoresetMode.SAME_STEP``): where ``terminated |
  truncated``, the env starts its next episode inside this ``step`` (drawing from the engine's
  RNG); the returned ``obs`` rows (and masks, and ``current_player``) are those of the new episode,
  ``rewards`` are the last step's. The observations the finished episodes ended on are kept in
  ``final_obs`` (``(B, n, D)``, valid where done) when the engine was built with
  ``keep_final_obs=True`` (it costs one more encoding on the steps where an episode ends).
  With ``autoreset=False`` the finished envs are left as they are and ``step`` refuses to run
  until ``reset``.
* ``action_masks() -> (B, n, A)`` bool: the legal actions of each seat now.
* **Turn-based games** (Hanabi, bomb defusal): one seat acts per env and step; ``current_player``
  is ``(B,)``. The engine's actions are the game's actions plus one trailing **no-op**
  (``A = game actions + 1``, the no-op is ``A - 1``): a waiting seat's mask holds only the no-op
  and it must send it; the acting seat's mask is the single env's mask (never the no-op). So
  ``masks[..., :A-1]`` is exactly the single env's ``action_mask`` of every seat (all zeros for a
  waiting seat, as PettingZoo's AEC gives it) and ``masks[..., A-1]`` marks the waiting seats.
  Simultaneous games have no no-op and ``current_player`` is ``None``.
* Returned arrays may be views into the engine's buffers that the next ``step``/``reset``
  overwrites (and are then read-only): copy what you keep. The adapters below copy by default.
* Bad input raises ``ValueError`` naming ``actions`` and what is allowed (wrong shape, non-integer,
  out of range, or, when ``check_actions``, an action the mask forbids).

:class:`VectorGame` implements the bookkeeping (seeding, validation, ``max_cycles``, autoreset,
``final_obs``) once; a game's engine fills in ``_start(rows)``, ``_advance(actions)``,
``_observe()``, ``_masks()`` and ``start_state(i)``, and sets ``encoder``.

## Engines

| game | engine | seats, actions A | episodes |
|---|---|---|---|
| RPS / Battle of the Sexes / Prisoner's Dilemma | ``games/matrix/vector.py`` ``MatrixVectorEnv`` | 2 simultaneous, 3 or 2 | lockstep (the horizon) |
| CollabCapture | ``games/collab_capture/vector.py`` ``CaptureVectorEnv`` | 2 simultaneous, 11 | own clock |
| CollabEscape | ``games/collab_escape/vector.py`` ``EscapeVectorEnv`` | 2 simultaneous, 12 | own clock |
| Overcooked | ``games/overcooked/vector.py`` ``OvercookedVectorEnv`` | 2 simultaneous, 6 | lockstep |
| Hanabi | ``games/hanabi/vector.py`` ``HanabiVectorEnv`` | 2-5 turn-based, moves + no-op | own clock |
| bomb defusal | ``games/bomb_defusal/vector.py`` ``BombVectorEnv`` | ``num_agents`` (3) turn-based, moves + no-op (no probes, no chat) | own clock |

Vectorised partners (a :data:`Partner` each, for :class:`GymVectorEnv`): :class:`RandomPartner`
(every game); ``MatrixPartner`` (every matrix bot), ``CapturePartner`` and ``EscapePartner``
(``greedy``), ``HanabiPartner`` (``simple``; these three are :class:`NamedPartner`), each checked
action by action against its bot in the single env.

Throughput: ``benchmarks/batched.py`` (figures in ``benchmarks/README.md``, "Batched engines").

## Adapters
* :class:`GymVectorEnv`: a Gymnasium ``VectorEnv``. With a ``partner`` (a vectorised policy, e.g.
  :class:`RandomPartner`) one seat learns and the partner plays the others: ``num_envs = B``. With
  no partner every seat of every env is a sub-env (self-play with shared parameters):
  ``num_envs = B * n``, sub-env ``k`` is env ``k // n``, seat ``k % n``. Masks are in
  ``infos["action_mask"]`` and ``action_masks()``; final observations in ``infos["final_obs"]``.
  In turn-based games the learner also sees the steps where it waits (its mask: only the no-op).
* :class:`BatchedParallelEnv`: PettingZoo-Parallel-shaped dicts keyed by agent, every value
  batched over the B envs: ``obs[agent]`` ``(B, D)``, ``rewards[agent]`` ``(B,)``,
  ``infos[agent]["action_mask"]`` ``(B, A)``.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from tom_envs.core.game import Encoder

#: A vectorised policy for the seats nobody learns: ``(obs (B, n, D), masks (B, n, A)) -> (B, n)``
#: actions (only the partner's seats are read). It must read only its own seats' rows.
Partner = Callable[[np.ndarray, np.ndarray], np.ndarray]


@runtime_checkable
class BatchedEngine(Protocol):
    """What every ``tom_envs/games/<game>/vector.py`` engine offers (see the module docstring;
    checked on every registered engine by ``tests/test_vector_parity.py``)."""

    # Read-only members (an engine may keep them as plain attributes, narrower types included).
    @property
    def num_envs(self) -> int:
        """B."""
        ...

    @property
    def agents(self) -> tuple[str, ...]:
        """``("player_0", ...)``: the n seats."""
        ...

    @property
    def num_agents(self) -> int:
        """n."""
        ...

    @property
    def encoder(self) -> Encoder[Any, Any]:
        """The game's own encoder for this configuration (the observation layout)."""
        ...

    @property
    def obs_size(self) -> int:
        """D."""
        ...

    @property
    def obs_low(self) -> float:
        """The encoder's lower bound."""
        ...

    @property
    def obs_high(self) -> float:
        """The encoder's upper bound."""
        ...

    @property
    def num_actions(self) -> int:
        """A (turn-based games: the game's actions and the no-op)."""
        ...

    @property
    def turn_based(self) -> bool:
        """One seat acts per env and step."""
        ...

    @property
    def current_player(self) -> np.ndarray | None:
        """``(B,)``: the seat to act (turn-based games), else ``None``."""
        ...

    @property
    def final_obs(self) -> np.ndarray | None:
        """``(B, n, D)``: the observations finished episodes ended on (``keep_final_obs``)."""
        ...

    def reset(self, seed: int | None = None) -> np.ndarray | None:
        """New episodes everywhere; observations ``(B, n, D)``."""
        ...

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray | None, np.ndarray, np.ndarray, np.ndarray]:
        """``(obs, rewards (B, n), terminated (B,), truncated (B,))`` with same-step autoreset."""
        ...

    def action_masks(self) -> np.ndarray:
        """``(B, n, A)`` bool."""
        ...

    def start_state(self, i: int) -> Any:
        """The rules' state env ``i``'s current episode started from."""
        ...


def check_actions(actions: Any, num_envs: int, num_agents: int, num_actions: int) -> np.ndarray:
    """``actions`` as an int array of shape ``(B, n)`` in range, or a ``ValueError`` naming it."""
    a = np.asarray(actions)
    if a.shape != (num_envs, num_agents):
        raise ValueError(f"actions must have shape ({num_envs}, {num_agents}), got {a.shape}")
    if not np.issubdtype(a.dtype, np.integer):
        raise ValueError(f"actions must be integers, got dtype {a.dtype}")
    if a.size and (a.min() < 0 or a.max() >= num_actions):
        raise ValueError(f"actions must be in 0..{num_actions - 1}")
    return a


#: The keyword arguments of :class:`VectorGame` (every engine's options beside the game's).
ENGINE_OPTIONS = ("autoreset", "max_cycles", "keep_final_obs", "observations", "check_actions")


class VectorGame(abc.ABC):
    """Shared bookkeeping of a batched engine (the contract's reset/step/autoreset semantics).

    Args:
        num_envs: batch size B (>= 1).
        autoreset: start the next episode of an env inside the step that ends it.
        max_cycles: truncate after this many cycles (``None``: the rules' limit only).
        keep_final_obs: keep the observations episodes ended on in ``final_obs``.
        observations: compute observations (``False``: dynamics and masks only; ``obs`` is None).
        check_actions: refuse actions the masks forbid (shape and range are always checked).
    """

    agents: tuple[str, ...] = ()
    num_agents: int = 0
    #: the game's encoder for the engine's configuration (set by the engine's ``__init__``)
    encoder: Encoder[Any, Any]
    obs_size: int = 0
    num_actions: int = 0
    turn_based: bool = False
    obs_low: float = 0.0
    obs_high: float = 1.0
    #: every action is legal in every state (masks all ones): the mask check is skipped
    all_legal: bool = False

    def __init__(
        self,
        num_envs: int,
        *,
        autoreset: bool = True,
        max_cycles: int | None = None,
        keep_final_obs: bool = False,
        observations: bool = True,
        check_actions: bool = True,
    ) -> None:
        if not isinstance(num_envs, int | np.integer) or num_envs < 1:
            raise ValueError(f"num_envs must be an int >= 1, got {num_envs!r}")
        if max_cycles is not None and max_cycles < 1:
            raise ValueError(f"max_cycles must be None or >= 1, got {max_cycles}")
        self.num_envs = int(num_envs)
        self.autoreset = autoreset
        self.max_cycles = max_cycles
        self.keep_final_obs = keep_final_obs
        self.observations = observations
        self.check = check_actions
        self.rng = np.random.default_rng()
        self.current_player: np.ndarray | None = None
        self.final_obs: np.ndarray | None = None
        self._moves = np.zeros(self.num_envs, dtype=np.int64)
        self._over = np.zeros(self.num_envs, dtype=bool)
        self._all = np.arange(self.num_envs)
        self._mask_cache: np.ndarray | None = None

    def _init_engine(self, num_envs: int, kwargs: dict[str, Any]) -> dict[str, Any]:
        """Initialise with the engine options found in ``kwargs``; return the rest (the game's
        arguments), for engines whose ``__init__(num_envs, **kwargs)`` takes both."""
        options = {k: kwargs.pop(k) for k in ENGINE_OPTIONS if k in kwargs}
        VectorGame.__init__(self, num_envs, **options)
        return kwargs

    # ------------------------------------------------------------------ to implement
    @abc.abstractmethod
    def _start(self, rows: np.ndarray) -> None:
        """Start new episodes in envs ``rows`` (sorted indices), drawing chance from ``self.rng``."""

    @abc.abstractmethod
    def _advance(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Apply checked ``actions`` ``(B, n)``; return ``rewards (B, n)``, ``terminated (B,)``."""

    @abc.abstractmethod
    def _observe(self) -> np.ndarray:
        """``(B, n, D)`` float32: every seat's observation now."""

    @property
    def _flat_base(self) -> np.ndarray:
        """Offsets of each (env, seat) row in the flattened ``(B, n, A)`` masks."""
        base = getattr(self, "_flat_base_cache", None)
        if base is None:
            base = np.arange(self.num_envs * self.num_agents, dtype=np.int64) * self.num_actions
            self._flat_base_cache = base
        return base

    @abc.abstractmethod
    def _masks(self) -> np.ndarray:
        """``(B, n, A)`` bool: every seat's legal actions now (a new array: callers may write)."""

    @abc.abstractmethod
    def start_state(self, i: int) -> Any:
        """The rules' state env ``i``'s current episode started from (what the rules engine, or
        an AEC env given it as ``game_state``, replays env ``i``'s episode from)."""

    def _take_layout(self, encoder: Encoder[Any, Any]) -> None:
        """Adopt the game's encoder: ``encoder``, ``obs_size`` and the bounds come from it."""
        self.encoder = encoder
        (self.obs_size,) = encoder.observation_shape
        self.obs_low, self.obs_high = float(encoder.low), float(encoder.high)

    # ------------------------------------------------------------------ contract
    def reset(self, seed: int | None = None) -> np.ndarray | None:
        """New episodes in every env; ``seed`` seeds the engine's generator."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self._start(self._all)
        self._mask_cache = None
        self._moves[:] = 0
        self._over[:] = False
        self.final_obs = None
        return self._observe() if self.observations else None

    def _current_masks(self) -> np.ndarray:
        """The masks now, computed once per state (callers must not write to them)."""
        masks = self._mask_cache
        if masks is None:
            masks = self._masks()
            if self._over.any():
                masks[self._over] = False
            self._mask_cache = masks
        return masks

    def action_masks(self) -> np.ndarray:
        """``(B, n, A)`` bool: the legal actions of every seat now (none in a finished episode)."""
        return self._current_masks().copy()

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray | None, np.ndarray, np.ndarray, np.ndarray]:
        """One step of every env (see the module docstring for the exact semantics)."""
        if self._over.any():
            raise ValueError("some episodes are over (autoreset=False): call reset() first")
        a = check_actions(actions, self.num_envs, self.num_agents, self.num_actions)
        if self.check and not self.all_legal:
            masks = self._current_masks()
            ok = masks.reshape(-1)[self._flat_base + a.reshape(-1)]
            if not ok.all():
                k = int(np.flatnonzero(~ok)[0])
                env, seat = divmod(k, self.num_agents)
                raise ValueError(
                    f"actions[{env}, {seat}] = {int(a[env, seat])} is illegal; legal: "
                    f"{np.flatnonzero(masks[env, seat]).tolist()}"
                )
        self._mask_cache = None
        rewards, terminated = self._advance(a)
        self._moves += 1
        if self.max_cycles is not None:
            cycles = self._moves // self.num_agents if self.turn_based else self._moves
            truncated = ~terminated & (cycles >= self.max_cycles)
        else:
            truncated = np.zeros(self.num_envs, dtype=bool)
        done = terminated | truncated
        if done.any():
            if self.keep_final_obs:
                self.final_obs = np.array(self._observe(), copy=True)
            if self.autoreset:
                rows = np.flatnonzero(done)
                self._start(rows)
                self._moves[rows] = 0
            else:
                self._over = done
        obs = self._observe() if self.observations else None
        return obs, rewards, terminated, truncated


def sample_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action per row of ``masks`` (``(..., A)`` bool, each row non-empty)."""
    u = rng.random(masks.shape, dtype=np.float32)
    u += masks  # legal actions in [1, 2), the others in [0, 1)
    return u.argmax(axis=-1)


class NamedPartner:
    """A game's bot, chosen by name, playing ``seats`` of every env of its engine at once.

    The base of the per-game vectorised bots (``CapturePartner``, ``EscapePartner``,
    ``HanabiPartner``): a subclass sets :attr:`GAME` and :attr:`NAMES` (the bots it vectorises,
    the first the default), calls ``super().__init__`` to check the name and keep ``engine``,
    ``name`` and ``seats``, then builds its tables; its ``__call__`` is the :data:`Partner`.

    Args:
        engine: the game's batched engine it plays in.
        name: one of :attr:`NAMES` (default: the first).
        seats: the seats it plays (default: seat 1).
    """

    #: The game's registered name, for the error message.
    GAME: ClassVar[str]
    #: The bots this class vectorises (the first is the default).
    NAMES: ClassVar[tuple[str, ...]]

    def __init__(self, engine: Any, name: str | None = None, seats: tuple[int, ...] = (1,)) -> None:
        name = self.NAMES[0] if name is None else name
        if name not in self.NAMES:
            raise ValueError(f"vectorised {self.GAME} partners: {list(self.NAMES)}, got {name!r}")
        self.engine, self.name, self.seats = engine, name, tuple(seats)


class RandomPartner:
    """The vectorised uniform-random partner: a legal action per seat, from its own generator."""

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def __call__(self, obs: np.ndarray | None, masks: np.ndarray) -> np.ndarray:
        """``(B, n)`` random legal actions."""
        return sample_legal(masks, self.rng)


def _observed(obs: np.ndarray | None) -> np.ndarray:
    """An engine's observations, which the adapters need (built with ``observations=True``)."""
    if obs is None:
        raise ValueError("engine must compute observations (observations=True)")
    return obs


# ---------------------------------------------------------------------- Gymnasium
class GymVectorEnv(VectorEnv):
    """A batched engine as a Gymnasium ``VectorEnv`` (same-step autoreset).

    Args:
        engine: the batched engine (built with ``observations=True``).
        seat: the learner's seat when a ``partner`` plays the others.
        partner: vectorised policy of the other seats; ``None``: every seat is a sub-env.
        copy: return copies of the engine's arrays (the engine may reuse its buffers).
    """

    metadata: ClassVar[dict[str, Any]] = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(
        self,
        engine: BatchedEngine,
        seat: int = 0,
        partner: Partner | None = None,
        copy: bool = True,
    ) -> None:
        if not getattr(engine, "observations", True):
            raise ValueError("engine must compute observations (observations=True)")
        n = engine.num_agents
        if not 0 <= seat < n:
            raise ValueError(f"seat must be in 0..{n - 1}, got {seat}")
        self.engine, self.seat, self.partner, self.copy = engine, seat, partner, copy
        self.num_envs = engine.num_envs if partner is not None else engine.num_envs * n
        low, high = getattr(engine, "obs_low", -np.inf), getattr(engine, "obs_high", np.inf)
        self.single_observation_space = spaces.Box(
            low, high, shape=(engine.obs_size,), dtype=np.float32
        )
        self.single_action_space = spaces.Discrete(engine.num_actions)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._obs: np.ndarray | None = None

    def _mine(self, x: np.ndarray) -> np.ndarray:
        """Rows of the learner's sub-envs: ``(B, n, ...) -> (num_envs, ...)``."""
        out = (
            x[:, self.seat] if self.partner is not None else x.reshape(self.num_envs, *x.shape[2:])
        )
        return np.array(out, copy=True) if self.copy else out

    def action_masks(self) -> np.ndarray:
        """``(num_envs, A)`` bool (sb3-contrib's MaskablePPO reads this)."""
        return self._mine(self.engine.action_masks())

    def _infos(self) -> dict[str, Any]:
        return {"action_mask": self.action_masks()}

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset every env; ``seed`` (an int, or a list whose first item is used) seeds the engine."""
        if isinstance(seed, list | tuple):
            seed = seed[0] if seed else None
        self._obs = _observed(self.engine.reset(seed=seed))
        return self._mine(self._obs), self._infos()

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step with the learner's ``actions`` (``(num_envs,)``)."""
        e = self.engine
        a = np.asarray(actions)
        if a.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},), got {a.shape}")
        if self.partner is not None:
            if self._obs is None:
                raise ValueError("call reset() before step()")
            joint = np.array(self.partner(self._obs, e.action_masks()), dtype=np.int64)
            joint[:, self.seat] = a
        else:
            joint = a.reshape(e.num_envs, e.num_agents)
        obs, rewards, term, trunc = e.step(joint)
        obs = self._obs = _observed(obs)
        if self.partner is not None:
            r, te, tr = rewards[:, self.seat], term, trunc
        else:
            n = e.num_agents
            r, te, tr = rewards.reshape(-1), np.repeat(term, n), np.repeat(trunc, n)
        infos = self._infos()
        if e.final_obs is not None and (term | trunc).any():
            infos["final_obs"] = self._mine(e.final_obs)
            infos["_final_obs"] = te | tr
        return self._mine(obs), np.array(r, dtype=np.float64), te.copy(), tr.copy(), infos


# ---------------------------------------------------------------------- multi-agent
class BatchedParallelEnv:
    """A batched engine with PettingZoo-Parallel-shaped dicts; every value has a leading B axis.

    ``reset(seed) -> (obs, infos)``, ``step({agent: (B,) actions}) -> (obs, rewards,
    terminations, truncations, infos)``; ``infos[agent]["action_mask"]`` is ``(B, A)``. Autoreset
    as the engine (same step); ``state()`` is every seat's observation stacked ``(B, n * D)``.
    """

    def __init__(self, engine: BatchedEngine, copy: bool = True) -> None:
        self.engine, self.copy = engine, copy
        self.possible_agents = list(engine.agents)
        self.agents = list(engine.agents)
        self.num_envs = engine.num_envs
        self._obs: np.ndarray | None = None

    def _split(self, x: np.ndarray) -> dict[str, np.ndarray]:
        return {
            a: (np.array(x[:, i], copy=True) if self.copy else x[:, i])
            for i, a in enumerate(self.agents)
        }

    def _infos(self) -> dict[str, dict[str, np.ndarray]]:
        masks = self.engine.action_masks()
        return {a: {"action_mask": masks[:, i].copy()} for i, a in enumerate(self.agents)}

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, dict[str, np.ndarray]]]:
        """New episodes everywhere."""
        self._obs = _observed(self.engine.reset(seed=seed))
        return self._split(self._obs), self._infos()

    def step(self, actions: dict[str, np.ndarray]) -> tuple[dict[str, Any], ...]:
        """Every agent's ``(B,)`` actions; returns the five Parallel dicts, batched."""
        missing = set(self.agents) - set(actions)
        if missing:
            raise ValueError(f"actions must hold every agent; missing {sorted(missing)}")
        joint = np.stack([np.asarray(actions[a]) for a in self.agents], axis=1)
        obs, rewards, term, trunc = self.engine.step(joint)
        obs = self._obs = _observed(obs)
        infos = self._infos()
        if self.engine.final_obs is not None and (term | trunc).any():
            for i, a in enumerate(self.agents):
                infos[a]["final_obs"] = self.engine.final_obs[:, i].copy()
        return (
            self._split(obs),
            {a: rewards[:, i].copy() for i, a in enumerate(self.agents)},
            {a: term.copy() for a in self.agents},
            {a: trunc.copy() for a in self.agents},
            infos,
        )

    def state(self) -> np.ndarray:
        """Every seat's observation side by side, ``(B, n * D)`` (for centralised critics)."""
        if self._obs is None:
            raise ValueError("call reset() before state()")
        return self._obs.reshape(self.num_envs, -1).copy()
