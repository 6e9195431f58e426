"""Many iterated matrix games stepped at once with numpy: the batched engine.

:class:`MatrixVectorEnv` plays ``num_envs`` copies of one configured game (RPS, Battle of the
Sexes, Prisoner's Dilemma, any :class:`~tom_envs.games.matrix.rules.MatrixConfig`) under the
batched-engine contract of :mod:`tom_envs.core.vector`. Observations are exactly the single env's
(:class:`~tom_envs.games.matrix.encode.MatrixEncoder`: ``[t/T]`` then the last W rounds as one-hot
``(mine, partner's)`` pairs, most recent first), rewards the payoff table's;
``tests/games/matrix/test_vector.py`` checks both step by step against the PettingZoo env.

Episodes run in lockstep (no chance, a fixed horizon): every env starts at ``reset`` and ends at
the horizon together; ``terminated`` then, as in the single env.

How it is fast: each seat's history lives in one float32 row, written from the end towards the
front, so the observation is a sliding window over that row. A step writes the round number and
two ones per seat and moves the window; nothing is copied. The observations returned are
therefore read-only views that the next ``step``/``reset`` changes (the contract allows it; the
Gymnasium and multi-agent adapters copy by default).

Example::

    venv = MatrixVectorEnv(1024, game="ipd")
    obs = venv.reset(seed=0)                       # (1024, 2, 601) float32
    obs, rewards, terminated, truncated = venv.step(rng.integers(2, size=(1024, 2)))
    venv.state(3)                                  # env 3 as a MatrixState
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tom_envs.core.vector import VectorGame
from tom_envs.games.matrix.encode import MatrixEncoder
from tom_envs.games.matrix.rules import MatrixConfig, MatrixGame, MatrixState, payoff


class MatrixVectorEnv(VectorGame):
    """``num_envs`` iterated matrix games of one configuration, stepped with numpy.

    Args:
        num_envs: batch size B.
        **kwargs: the engine's options (``autoreset``, ``max_cycles``, ``keep_final_obs``,
            ``observations``, ``check_actions``: see :class:`~tom_envs.core.vector.VectorGame`)
            and the keyword arguments of :class:`MatrixConfig` (``game``, ``horizon``, ``window``,
            ``include_round``; ``action_names`` changes only the text).
    """

    agents = ("player_0", "player_1")
    num_agents = 2
    all_legal = True

    def __init__(self, num_envs: int, **kwargs: Any) -> None:
        cfg = self.config = MatrixConfig(**self._init_engine(num_envs, kwargs))
        self.game = MatrixGame(cfg)
        enc = MatrixEncoder(cfg)
        self._take_layout(enc)
        n = self.num_actions = enc.n
        self._n2 = 2 * n
        self._off = enc.offsets["history"]  # the round cell, if any, comes first
        self._w = enc.w
        self._T = cfg.horizon
        # pay[a0, a1] = (player_0's reward, player_1's reward)
        self._pay = np.array(
            [[(payoff(cfg, 0, a, b), payoff(cfg, 1, b, a)) for b in range(n)] for a in range(n)]
        )
        # One row per (env, seat): [.. written backwards ..][round][slot 0][slot 1]...[zeros]
        self._p0 = self._off + self._T * self._n2  # where slot 0 starts before any round
        self._len = self._p0 + self._w * self._n2
        self._buf = np.zeros((num_envs * 2, self._len), dtype=np.float32)
        self._flat = self._buf.reshape(-1)
        base = np.arange(num_envs * 2, dtype=np.int64) * self._len
        self._base0, self._base1 = base[0::2], base[1::2]  # rows of seat 0 and seat 1
        self._rounds = np.array([np.float32(r / self._T) for r in range(self._T + 1)])
        self._ones = np.ones((num_envs, 2, n), dtype=bool)
        self.reset()

    # ------------------------------------------------------------------ contract
    def _start(self, rows: np.ndarray) -> None:
        if len(rows) != self.num_envs:  # pragma: no cover - lockstep makes this impossible
            raise RuntimeError("matrix episodes run in lockstep: all envs restart together")
        self.round = 0
        self.episodes = getattr(self, "episodes", -1) + 1  # episodes started (every env at once)
        self.history = np.zeros((self.num_envs, self._T, 2), dtype=np.int8)
        self.scores = np.zeros((self.num_envs, 2), dtype=np.float64)
        if self.observations:
            self._buf.fill(0.0)

    def _advance(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        a = actions
        a0, a1 = a[:, 0], a[:, 1]
        rewards = self._pay[a0, a1]
        self.history[:, self.round] = a
        self.scores += rewards
        self.round += 1
        if self.observations:
            pos = self._p0 - self.round * self._n2  # slot 0 of the new window
            flat, n = self._flat, self.num_actions
            if self._off:
                self._buf[:, pos + self._n2 - 1] = 0.0  # the previous round number's cell
                self._buf[:, pos - 1] = self._rounds[self.round]
            p0 = self._base0 + pos
            p1 = self._base1 + pos
            flat[p0 + a0] = 1.0
            flat[p0 + n + a1] = 1.0
            flat[p1 + a1] = 1.0
            flat[p1 + n + a0] = 1.0
        return rewards, np.full(self.num_envs, self.round >= self._T)

    def _observe(self) -> np.ndarray:
        start = self._p0 - self.round * self._n2 - self._off
        view = self._buf[:, start : start + self.obs_size].reshape(self.num_envs, 2, self.obs_size)
        view.flags.writeable = False
        return view

    def _masks(self) -> np.ndarray:
        return self._ones.copy()

    def start_state(self, i: int) -> MatrixState:
        """Round 0, no history: every episode starts there (no chance)."""
        return self.game.initial_state(self.rng)

    # ------------------------------------------------------------------ inspection
    def state(self, i: int) -> MatrixState:
        """Env ``i`` as a :class:`MatrixState` (for checks and the rules' tools)."""
        hist = tuple((int(x), int(y)) for x, y in self.history[i, : self.round])
        return MatrixState(
            round=self.round,
            history=hist,
            scores=(float(self.scores[i, 0]), float(self.scores[i, 1])),
        )


class MatrixPartner:
    """A matrix partner bot (:mod:`tom_envs.games.matrix.bots`) playing seats of every env at once.

    A :data:`~tom_envs.core.vector.Partner` for :class:`~tom_envs.core.vector.GymVectorEnv`: it
    reads the engine's history (never another seat's observation) and plays, env by env, what the
    bot of that name plays in the single env. The bots are finite-state machines: their states
    reachable from the start are enumerated once into tables (action probabilities and the update
    by the joint action); ``fictitious_play``, whose state is the count of the other's actions,
    is computed from the counts. ``random`` draws from the partner's own generator (``seed``).

    Args:
        engine: the :class:`MatrixVectorEnv` it plays in.
        name: a bot name of :func:`~tom_envs.games.matrix.bots.partner_names`.
        seats: the seats it plays (default: seat 1).
        seed: the generator of its random choices.
    """

    def __init__(
        self,
        engine: MatrixVectorEnv,
        name: str,
        seats: tuple[int, ...] = (1,),
        seed: int | None = None,
    ) -> None:
        from tom_envs.games.matrix.bots import FictitiousPlay, make_partner

        self.engine, self.name, self.seats = engine, name, tuple(seats)
        self.rng = np.random.default_rng(seed)
        n = engine.num_actions
        self._tables = []
        for seat in self.seats:
            policy = make_partner(name, engine.config, seat)
            if isinstance(policy, FictitiousPlay):
                self._tables.append(("counts", policy.matrix))
                continue
            index = {policy.initial_state(): 0}
            order = [policy.initial_state()]
            nxt: list[list[int]] = []
            for state in order:  # breadth first over the reachable states
                row = []
                for own in range(n):
                    for other in range(n):
                        s = policy.next_state(state, own, other)
                        if s not in index:
                            if len(index) >= 10_000:
                                raise ValueError(
                                    f"partner {name!r} has too many states to tabulate"
                                )
                            index[s] = len(order)
                            order.append(s)
                        row.append(index[s])
                nxt.append(row)
            probs = np.array([policy.action_probs(s) for s in order])
            self._tables.append(("fsm", (np.cumsum(probs, axis=1), np.array(nxt))))
        self._round = -1
        self._episode = -1
        self._states: list[np.ndarray] = []

    def _sync(self) -> None:
        """Bring the partner's states to the engine's round (replaying its history if needed)."""
        e = self.engine
        if e.episodes != self._episode or e.round < self._round:
            self._episode = e.episodes
            self._states = [
                np.zeros(e.num_envs, dtype=np.int64)
                if kind == "fsm"
                else np.zeros((e.num_envs, e.num_actions), dtype=np.int64)
                for kind, _ in self._tables
            ]
            self._round = 0
        while self._round < e.round:
            joint = e.history[:, self._round].astype(np.int64)
            for k, (seat, (kind, table)) in enumerate(zip(self.seats, self._tables, strict=True)):
                own, other = joint[:, seat], joint[:, 1 - seat]
                if kind == "fsm":
                    n = e.num_actions
                    self._states[k] = table[1][self._states[k], own * n + other]
                else:
                    self._states[k][np.arange(e.num_envs), other] += 1
            self._round += 1

    def __call__(self, obs: np.ndarray | None, masks: np.ndarray) -> np.ndarray:
        """``(B, 2)``: the bot's actions in its seats (0 elsewhere)."""
        self._sync()
        e = self.engine
        out = np.zeros((e.num_envs, 2), dtype=np.int64)
        for k, (seat, (kind, table)) in enumerate(zip(self.seats, self._tables, strict=True)):
            if kind == "fsm":
                cum = table[0][self._states[k]]  # (B, n) cumulative probabilities
                u = self.rng.random(e.num_envs)
                out[:, seat] = np.minimum((u[:, None] >= cum).sum(axis=1), e.num_actions - 1)
            else:
                out[:, seat] = (self._states[k] @ table.T).argmax(axis=1)  # ties: lowest action
        return out
