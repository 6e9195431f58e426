"""The reference the batched engines are checked against: B single PettingZoo AEC envs, played
alongside an engine with the same actions, seat by seat (bots or random agents choose them).

Each game's ``tests/games/<game>/test_vector.py`` drives a :class:`Reference` and an engine in
lockstep and compares observations, masks, rewards, terminations and truncations at every step.
The test below checks the reference itself: with bots it plays exactly the episodes the project's
episode driver (``tom_envs.runner.play_episode``) plays.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tom_envs.core.agents import EpisodeInfo, RandomAgent, Turn, as_agent_action
from tom_envs.core.game import GameBundle


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
        self.decisions = getattr(self, "decisions", {})
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

    def actions(self) -> np.ndarray:
        """``(B, n)``: each acting seat's agent's choice; waiting seats send the no-op."""
        out = []
        for i, env in enumerate(self.envs):
            n = env.game.num_players
            row = [self.noop if self.noop is not None else -1] * n
            acting = [env.agent_selection] if self.noop is not None else list(env.possible_agents)
            for agent in acting:
                p = int(agent.split("_")[1])
                o = env.observe(agent)
                turn = Turn(agent, p, env.view(agent), o["observation"], o["action_mask"], 0.0,
                            self.decisions[i][p])  # fmt: skip
                self.decisions[i][p] += 1
                row[p] = as_agent_action(self.agents[i][p].act(turn)).action
            out.append(row)
        return np.array(out, dtype=np.int64)

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Apply one engine step's ``actions``; ``(rewards (B, n), terminated, truncated)``.

        A finished env is not reset here: the caller resets it (with the engine's new state).
        """
        rewards, term, trunc = [], [], []
        for i, env in enumerate(self.envs):
            n = env.game.num_players
            r = np.zeros(n)
            acting = [env.agent_selection] if self.noop is not None else env.possible_agents
            for agent in list(acting):
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
