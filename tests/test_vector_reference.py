"""The reference the batched engines are checked against: B single PettingZoo AEC envs, played
alongside an engine with the same actions, seat by seat (bots or random agents choose them).

``tests/test_vector_parity.py`` drives a :class:`Reference` and every registered engine in
lockstep and compares observations, masks, rewards, terminations and truncations at every step;
the per-game tests use it for their vectorised partners. Each episode of the reference starts from
the engine's own start (:meth:`~tom_envs.core.vector.BatchedEngine.start_state`), and where a step
draws chance (the roaming killer of CollabEscape) :meth:`Reference.align_chance` seeds the
reference env's generator so that the rules draw the outcome the engine drew, and fails when the
engine's outcome is none of the rules' outcomes. The tests below check the reference itself: with
bots it plays exactly the episodes the project's episode driver plays, and chance alignment finds
every outcome of a chance step and refuses an impossible one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from tom_envs.core.agents import EpisodeInfo, RandomAgent, as_agent_action, env_turn
from tom_envs.core.game import GameBundle

#: Generators tried, after the env's own, to draw the engine's outcome of a chance step: a step
#: with k equally likely outcomes misses one with probability (1 - 1/k)^64 (< 1e-7 for k = 4).
CHANCE_SEEDS = 64


class Reference:
    """B single AEC envs with one agent per seat.

    Args:
        make_env: builds one raw AEC env (``env.raw_env(**kwargs)``).
        agents: per env, one agent per seat (``None``: a :class:`RandomAgent`).
        seeds: per env, the seed of its first ``reset`` and of its agents.
        noop: the engine's no-op action (turn-based games), or ``None``.
    """

    def __init__(
        self,
        make_env: Callable[[], Any],
        agents: Sequence[Sequence[Any]],
        seeds: Sequence[int],
        noop: int | None = None,
    ) -> None:
        self.envs = [make_env() for _ in seeds]
        self.agents = [[a if a is not None else RandomAgent() for a in row] for row in agents]
        self.seeds = list(seeds)
        self.noop = noop
        self.episodes = [0] * len(seeds)
        self.decisions: dict[int, list[int]] = {}
        self.aligned = 0  # chance steps whose outcome needed another generator than the env's
        for i in range(len(seeds)):
            self.reset(i)

    @property
    def bundle(self) -> GameBundle:
        """The first env's configured game."""
        return self.envs[0].bundle

    def reset(self, i: int, state: Any = None) -> None:
        """New episode in env ``i`` (seeded), optionally starting from the rules state ``state``."""
        env = self.envs[i]
        seed = self.seeds[i] * 1000 + self.episodes[i]
        self.episodes[i] += 1
        env.reset(seed=seed)
        if state is not None:
            env.game_state = state
            env._schedule()
        game = env.game
        for p, agent in enumerate(self.agents[i]):
            agent.reset(
                EpisodeInfo(
                    env_id="test", agent=f"player_{p}", player=p, num_players=game.num_players,
                    num_actions=game.num_actions, seed=seed, reward_range=game.reward_range,
                    max_steps=game.max_steps, tags=game.tags, game_config=game.config,
                )
            )  # fmt: skip
        self.decisions[i] = [0] * game.num_players

    def observe(self) -> tuple[np.ndarray, np.ndarray]:
        """Every env's ``(n, D)`` observations and ``(n, A_game)`` masks, stacked over envs."""
        obs, masks = [], []
        for env in self.envs:
            o = [env.observe(a) for a in env.possible_agents]
            obs.append(np.stack([x["observation"] for x in o]))
            masks.append(np.stack([x["action_mask"] for x in o]).astype(bool))
        return np.stack(obs), np.stack(masks)

    def current_player(self) -> np.ndarray:
        """The acting seat of every env (turn-based games)."""
        return np.array([int(env.agent_selection.split("_")[1]) for env in self.envs])

    def _acting(self, env: Any) -> list[str]:
        return [env.agent_selection] if self.noop is not None else list(env.possible_agents)

    def actions(self) -> np.ndarray:
        """``(B, n)``: each acting seat's agent's choice; waiting seats send the no-op."""
        out = []
        for i, env in enumerate(self.envs):
            n = env.game.num_players
            row = [self.noop if self.noop is not None else -1] * n
            for agent in self._acting(env):
                p = int(agent.split("_")[1])
                turn = env_turn(env, agent, decision=self.decisions[i][p])
                self.decisions[i][p] += 1
                row[p] = as_agent_action(self.agents[i][p].act(turn)).action
            out.append(row)
        return np.array(out, dtype=np.int64)

    def align_chance(
        self, i: int, actions: np.ndarray, obs: np.ndarray, rewards: np.ndarray, terminated: bool
    ) -> None:
        """Before env ``i`` applies ``actions``: give its generator one that makes the rules draw
        the outcome an engine drew, seen as the observations of every seat after the step
        (``obs``, ``(n, D)``: the final observations where the episode ended), the ``rewards``
        ``(n,)`` and ``terminated``. The env's own generator is tried first, then seeds
        ``0..CHANCE_SEEDS-1``; raises ``AssertionError`` when none draws that outcome (the engine's
        step is not one the rules can take)."""
        env = self.envs[i]
        game, encoder = env.game, env.bundle.encoder
        state = env.game_state
        joint = {p: int(actions[i, p]) for p in game.current_players(state)}
        own = np.random.default_rng()
        own.bit_generator.state = env.np_random.bit_generator.state
        for k, rng in enumerate([own, *(np.random.default_rng(s) for s in range(CHANCE_SEEDS))]):
            keep = np.random.default_rng()
            keep.bit_generator.state = rng.bit_generator.state
            result = game.apply(state, joint, rng)
            nxt = result.state
            if (
                bool(game.is_terminal(nxt)) == bool(terminated)
                and np.array_equal(np.asarray(result.rewards, np.float64), rewards)
                and all(
                    np.array_equal(encoder.encode(game.observe(nxt, p)), obs[p])
                    for p in range(game.num_players)
                )
            ):
                if k:  # the env's own generator would draw another outcome: replace it
                    env.np_random = keep
                    self.aligned += 1
                return
        raise AssertionError(
            f"env {i}: the engine's step from {state} with actions {joint} is none of the rules' "
            f"outcomes (tried the env's generator and {CHANCE_SEEDS} seeds)"
        )

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Apply one engine step's ``actions``; ``(rewards (B, n), terminated, truncated)``.

        A finished env is not reset here: the caller resets it (with the engine's new state).
        """
        rewards, term, trunc = [], [], []
        for i, env in enumerate(self.envs):
            n = env.game.num_players
            r = np.zeros(n)
            for agent in self._acting(env):
                p = int(agent.split("_")[1])
                env.step(int(actions[i, p]))
            for p, agent in enumerate(env.possible_agents):
                r[p] = env.rewards[agent]
            rewards.append(r)
            term.append(all(env.terminations.values()))
            trunc.append(all(env.truncations.values()))
        return np.stack(rewards), np.array(term), np.array(trunc)


def test_reference_with_bots_plays_the_drivers_episodes() -> None:
    from tom_envs.games.matrix.bots import bot_table
    from tom_envs.games.matrix.env import make_bundle, raw_env
    from tom_envs.runner import play_episode

    bundle = make_bundle(game="ipd", horizon=12)
    table = bot_table(game="ipd", horizon=12)
    names = ("win_stay_lose_shift", "random")
    ref = Reference(
        lambda: raw_env(game="ipd", horizon=12),
        [[table.make(x, bundle) for x in names]],
        seeds=[4],
    )
    moves = []
    for _ in range(12):
        a = ref.actions()
        moves.append(a[0].tolist())
        ref.step(a)
    seed = ref.seeds[0] * 1000  # the reference's first episode seed
    ep = play_episode(
        "PrisonersDilemma", [table.make(x, bundle) for x in names], seed=seed,
        env_kwargs={"horizon": 12},
    )  # fmt: skip
    played = [s["action"] for s in ep.steps if "action" in s]
    assert played == [x for m in moves for x in m]
    assert len(set(played)) == 2  # both actions occur: the comparison is not trivial


def test_chance_alignment_finds_every_outcome_and_refuses_an_impossible_one() -> None:
    """CollabEscape, the killer in room 3 with nobody in sight: he roams to room 2, 4 or 8. For
    each room, the aligned reference env draws exactly that room; room 5 is no outcome."""
    from tom_envs.games.collab_escape.env import raw_env

    ref = Reference(lambda: raw_env(starts=(1, 10, 3)), [[None, None]], seeds=[0])
    env = ref.envs[0]
    game, enc = env.game, env.bundle.encoder
    start = env.game_state
    wait = np.array([[0, 0]])  # action 0: wait
    rooms = []
    for killer in (2, 4, 8):
        nxt = replace(start, killer=killer, turn=1)
        obs = np.stack([enc.encode(game.observe(nxt, p)) for p in (0, 1)])
        ref.reset(0, start)
        ref.align_chance(0, wait, obs, np.zeros(2), False)
        ref.step(wait)
        rooms.append(ref.envs[0].game_state.killer)
    assert rooms == [2, 4, 8] and ref.aligned >= 1
    nowhere = replace(start, killer=5, turn=1)
    obs = np.stack([enc.encode(game.observe(nowhere, p)) for p in (0, 1)])
    ref.reset(0, start)
    with pytest.raises(AssertionError, match="none of the rules' outcomes"):
        ref.align_chance(0, wait, obs, np.zeros(2), False)
