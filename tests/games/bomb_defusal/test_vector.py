"""The bomb-defusal batch engine beyond the registry-driven parity test (tests/test_vector_parity.py:
every seat's observation and mask, rewards and ends against the AEC env, random, heuristic and CBS
play, five configurations, both mission draws).

Here: the engine's own fast paths, which the contract does not cover, replayed beside one
PettingZoo env per batch slot (reset with the slot's episode seed, or given its mission): the
acting seat's observation (``observe()``), its mask (``legal_mask()``) and the global state
(``state()``, MAPPO's critic input) equal the env's; the final score and round; the mission
distribution; no autoreset; ``max_cycles``; argument and action checks.
"""

from __future__ import annotations

import numpy as np
import pytest

import tom_envs  # noqa: F401
from tom_envs.core.agents import Turn
from tom_envs.driver import episode_info
from tom_envs.games.bomb_defusal.bots import CBSAgent, HeuristicAgent
from tom_envs.games.bomb_defusal.env import raw_env
from tom_envs.games.bomb_defusal.vector import BombVectorEnv
from tom_envs.registration import game_spec

SPEC = game_spec("BombDefusal")


def _reference(venv: BombVectorEnv, kwargs: dict, i: int):
    """Env ``i``'s episode in a PettingZoo env: reset with its seed, or given its mission."""
    env = raw_env(**kwargs)
    if venv.missions == "seeded":
        env.reset(seed=int(venv.episode_seeds[i]))
    else:
        env.reset(seed=0)
        env.game_state = venv.start_state(i)  # the rules' state of env i's mission
    return env


def _bots(name: str, env, seed: int) -> list:
    if name == "random":
        return []
    cfg = env.game.config
    bots = [HeuristicAgent(cfg, chat=False) if name == "heuristic" else CBSAgent(cfg)
            for _ in range(env.game.num_players)]  # fmt: skip
    for p, bot in enumerate(bots):
        bot.reset(episode_info(SPEC, env.game, p, seed if seed >= 0 else None))
    return bots


def _bot_action(bots, env, decisions) -> int:
    agent = env.agent_selection
    p = int(agent.rsplit("_", 1)[1])
    seen = env.observe(agent)
    turn = Turn(agent, p, env.view(agent), seen["observation"], seen["action_mask"], 0.0,
                decisions[p])  # fmt: skip
    decisions[p] += 1
    choice = bots[p].act(turn)
    return int(getattr(choice, "action", choice))


def joint(venv: BombVectorEnv, actions: np.ndarray) -> np.ndarray:
    """The contract's ``(B, n)`` actions: the acting seat's action, the no-op elsewhere."""
    out = np.full((venv.num_envs, venv.num_agents), venv.noop)
    out[np.arange(venv.num_envs), venv.current_player] = actions
    return out


def play_and_compare(
    kwargs: dict, player: str, seed: int, B: int, steps: int, missions: str = "seeded"
) -> int:
    """Step ``B`` batched missions ``steps`` times beside ``B`` PettingZoo envs; returns the
    number of missions finished."""
    venv = BombVectorEnv(B, missions=missions, **kwargs)
    ref_kwargs = {**kwargs, "probes": "none"}
    obs = venv.reset(seed=seed)
    n = venv.num_agents
    envs = [_reference(venv, ref_kwargs, i) for i in range(B)]
    bots = [_bots(player, envs[i], int(venv.episode_seeds[i])) for i in range(B)]
    decisions = [[0] * n for _ in range(B)]
    rng = np.random.default_rng(seed)
    finished = 0
    for t in range(steps):
        assert obs is not None
        actions = np.zeros(B, np.int64)
        state, masks, acting = venv.state(), venv.action_masks(), venv.observe()
        legal = venv.legal_mask()
        for i, env in enumerate(envs):
            agent = env.agent_selection
            p = int(agent.rsplit("_", 1)[1])
            assert venv.current_player[i] == p, (t, i)
            for q in range(n):  # every seat's observation and mask, waiting seats included
                seen = env.observe(f"player_{q}")
                assert np.array_equal(obs[i, q], seen["observation"]), (t, i, q)
                assert np.array_equal(masks[i, q, :-1], seen["action_mask"].astype(bool))
                assert masks[i, q, -1] == (q != p)  # the no-op: only waiting seats
            assert np.array_equal(acting[i], obs[i, p]) and np.array_equal(legal[i], masks[i, p, :-1])
            assert np.array_equal(state[i], env.state()), (t, i)
            if player == "random":
                actions[i] = rng.choice(np.flatnonzero(legal[i]))
            else:
                actions[i] = _bot_action(bots[i], env, decisions[i])
        obs, rewards, terminated, truncated = venv.step(joint(venv, actions))
        assert not truncated.any()
        for i, env in enumerate(envs):
            env.step(int(actions[i]))
            assert (rewards[i] == env.rewards["player_0"]).all(), (t, i)
            ended = any(env.terminations.values())
            assert terminated[i] == ended, (t, i)
            if ended:
                finished += 1
                assert venv.final_score[i] == env.game_state.score
                assert venv.final_round[i] == env.game_state.round
                envs[i] = _reference(venv, ref_kwargs, i)
                bots[i] = _bots(player, envs[i], int(venv.episode_seeds[i]))
                decisions[i] = [0] * n
    return finished


@pytest.mark.parametrize(
    ("kwargs", "seed", "missions"),
    [
        ({}, 0, "seeded"),
        ({}, 2, "batched"),
        ({"num_agents": 4, "colors": "red,green,blue,yellow", "bomb_phases": "1,2,3,4,4"}, 5,
         "batched"),
        ({"map": "random", "map_seed": 3, "num_rooms": 7, "bomb_phases": "1,1,2,2,3,3,2,3",
          "max_rounds": 12}, 6, "seeded"),
    ],
)  # fmt: skip
def test_acting_seat_views_and_the_global_state_match_the_aec_env(kwargs, seed, missions) -> None:
    assert play_and_compare(kwargs, "random", seed, B=3, steps=160, missions=missions) >= 1


def test_batched_missions_follow_the_rules_distribution() -> None:
    """Rooms a permutation, each bomb uniform over rooms, colours uniform (distinct within a
    bomb that has at most as many phases as colours), start uniform; over 20k missions."""
    N = 20000
    venv = BombVectorEnv(N, missions="batched", observations=False)
    venv.reset(seed=0)
    assert (venv.episode_seeds == -1).all()
    rooms, seq = venv.bomb_room, venv.seq
    assert (np.sort(rooms, axis=1) == np.arange(5)).all()
    tol = 4 * np.sqrt(0.2 * 0.8 / N)  # 4 standard errors
    for b in range(5):
        assert np.abs(np.bincount(rooms[:, b], minlength=5) / N - 0.2).max() < tol
    assert np.abs(np.bincount(venv.start, minlength=5) / N - 0.2).max() < tol
    third = 4 * np.sqrt(2 / 9 / N)
    for b, k in enumerate((1, 1, 2, 2, 3)):
        for s in range(k):
            assert np.abs(np.bincount(seq[:, b, s], minlength=3) / N - 1 / 3).max() < third
        if k >= 2:
            assert (seq[:, b, 0] != seq[:, b, 1]).all()
    pairs = np.bincount(seq[:, 4, 0] * 3 + seq[:, 4, 1], minlength=9)[[1, 2, 3, 5, 6, 7]] / N
    assert np.abs(pairs - 1 / 6).max() < 4 * np.sqrt(5 / 36 / N)  # 6 orders, uniform
    long = BombVectorEnv(4000, missions="batched", observations=False, bomb_phases="4")
    long.reset(seed=1)
    assert len({tuple(r) for r in long.seq[:, 0].tolist()}) > 60  # repeats allowed: 81 sequences


def test_without_autoreset_the_engine_stops_at_the_first_end() -> None:
    """CBS bots (privileged, optimal) finish missions with 90 points; without autoreset the
    finished missions stay as they ended and the engine refuses to step until reset."""
    B = 6
    venv = BombVectorEnv(B, autoreset=False, missions="seeded", max_cycles=None)
    venv.reset(seed=3)
    envs = [_reference(venv, {"probes": "none"}, i) for i in range(B)]
    bots = [_bots("cbs", envs[i], int(venv.episode_seeds[i])) for i in range(B)]
    decisions = [[0, 0, 0] for _ in range(B)]
    for _ in range(90):
        actions = np.array([_bot_action(bots[i], envs[i], decisions[i]) for i in range(B)])
        for i in range(B):
            envs[i].step(int(actions[i]))
        _, _, terminated, _ = venv.step(joint(venv, actions))
        if terminated.any():
            break
    done = np.flatnonzero(terminated)
    assert done.size and (venv.final_score[done] == 90).all() and venv.over[done].all()
    assert [int(venv.final_round[i]) for i in done] == [envs[i].game_state.round for i in done]
    assert not venv.action_masks()[done].any() and not venv.legal_mask()[done].any()
    with pytest.raises(ValueError, match="reset"):
        venv.step(joint(venv, actions))


def test_max_cycles_truncates_and_the_gym_adapter_runs() -> None:
    from tom_envs.core.vector import GymVectorEnv, RandomPartner

    venv = BombVectorEnv(4, max_cycles=2)  # 2 cycles = 2 moves of every seat = 6 steps
    venv.reset(seed=0)
    rng = np.random.default_rng(0)
    for t in range(6):
        _, _, terminated, truncated = venv.step(joint(venv, rng.integers(0, 1, 4)))
        assert not terminated.any() and truncated.all() == (t == 5)
    assert (venv.round == 1).all() and (venv.turn == 0).all()  # restarted
    gym = GymVectorEnv(BombVectorEnv(8), seat=1, partner=RandomPartner(0))
    obs, info = gym.reset(seed=0)
    assert obs.shape == (8, 348) and info["action_mask"].shape == (8, 10)
    for _ in range(20):
        mask = gym.action_masks()
        obs, rewards, _, _, info = gym.step(mask.argmax(1))
    assert rewards.shape == (8,)


def test_checks_its_arguments_and_actions() -> None:
    from tom_envs.driver import MAX_SEED
    from tom_envs.games.bomb_defusal import vector

    assert vector.MAX_SEED == MAX_SEED  # seeded missions draw episode seeds as the drivers do
    with pytest.raises(ValueError, match="symbolic_messages"):
        BombVectorEnv(2, symbolic_messages=True)
    with pytest.raises(ValueError, match="map_seed"):
        BombVectorEnv(2, map="random")
    with pytest.raises(ValueError, match="num_envs"):
        BombVectorEnv(0)
    with pytest.raises(ValueError, match="max_rounds"):
        BombVectorEnv(2, max_rounds=0)
    with pytest.raises(ValueError, match="missions"):
        BombVectorEnv(2, missions="cached")
    venv = BombVectorEnv(3)
    venv.reset(seed=0)
    with pytest.raises(ValueError, match="shape"):
        venv.step(np.zeros(3, np.int64))
    bad = venv.legal_mask().argmin(1)  # an illegal action in every env (moves to itself etc.)
    assert not venv.legal_mask()[np.arange(3), bad].any()
    with pytest.raises(ValueError, match="illegal"):
        venv.step(joint(venv, bad))
    waiting = joint(venv, venv.legal_mask().argmax(1))
    waiting[:, 2] = 0  # seat 2 waits in every env (alpha acts first): only the no-op is legal
    with pytest.raises(ValueError, match=r"actions\[0, 2\] = 0 is illegal"):
        venv.step(waiting)
