"""Determinism over many episodes, AEC/Parallel equivalence, random-play invariants, bad actions.

PettingZoo's ``seed_test`` stops at the first episode end and ``parallel_seed_test`` compares only
the first step; here whole sequences of episodes (seeded, reseeded and unseeded resets) are
compared step by step on two fresh env instances.
"""

from __future__ import annotations

import copy
import math

import gymnasium
import numpy as np
import pytest
from conformance_helpers import (
    aec_snapshot,
    all_games,
    assert_same,
    bundle_of,
    freeze,
    legal_choice,
    make_aec,
    make_parallel,
    make_raw,
    make_raw_parallel,
    parallel_games,
    parallel_snapshot,
    play_aec_episode,
    play_parallel_episode,
    rules_episode,
    seeds,
    single_agents,
)

from tom_envs import IllegalActionError
from tom_envs.core.game import SIMULTANEOUS
from tom_envs.single_agent import SingleAgentEnv

#: Consecutive episodes as (reset seed, action seed): seeded, unseeded continuation, reseeded,
#: and the same seed twice (which must replay the same episode in the same env instance).
EPISODES = ((3, 0), (None, 1), (11, 2), (11, 2))
ACTION_SEED = 1234
#: Episodes (seeds 0..N-1) of each fuzz test, for every game: counts, never time budgets.
FUZZ_EPISODES = 12


# ------------------------------------------------------------------------ recording
def record_aec(env, seed, rng):
    """Every observable thing after the reset and after every step of one AEC episode."""
    records = []

    def on_step(e, action):
        snap = aec_snapshot(e, rng=False)
        # The text of the agent to act (every agent's text is checked in its turns).
        snap["text"] = e.unwrapped.text_observation(e.agent_selection) if e.agents else None
        snap["action"] = action
        snap["last"] = e.last()[1:] if e.agents else None
        snap["events"] = getattr(e.unwrapped, "last_events", None)
        records.append(snap)

    play_aec_episode(env, rng, seed, on_step)
    return records


def record_parallel(env, seed, rng):
    """Returned data and every observable thing after the reset and every step."""
    records = []

    def on_step(e, joint, result):
        snap = parallel_snapshot(e, text=True, rng=False)
        snap["joint"] = joint
        snap["returned"] = result
        records.append(snap)

    play_parallel_episode(env, rng, seed, on_step)
    return records


def assert_same_episodes(a, b, label):
    assert len(a) == len(b), f"{label}: episode lengths differ ({len(a)} vs {len(b)} records)"
    for i, (ra, rb) in enumerate(zip(a, b, strict=True)):
        assert_same(ra, rb, f"{label}, record {i}")


# ---------------------------------------------------------------------- determinism
def _check_reproducible(make, record) -> None:
    env1, env2 = make(), make()
    episodes = []
    for n, (seed, action_seed) in enumerate(EPISODES):
        r1 = record(env1, seed, np.random.default_rng([ACTION_SEED, action_seed]))
        r2 = record(env2, seed, np.random.default_rng([ACTION_SEED, action_seed]))
        assert_same_episodes(r1, r2, f"episode {n} (reset seed={seed}) on two instances")
        episodes.append(r1)
    assert_same_episodes(episodes[-2], episodes[-1], "the same reset seed on one instance")


@all_games
def test_aec_episodes_are_reproducible(spec) -> None:
    _check_reproducible(lambda: make_aec(spec), record_aec)


@parallel_games
def test_parallel_episodes_are_reproducible(spec) -> None:
    _check_reproducible(lambda: make_parallel(spec), record_parallel)


def _observable(records):
    """What an agent or critic can see (drops the env's internal RNG and bookkeeping)."""
    return [freeze({k: r[k] for k in ("obs", "state", "text", "last", "agent_selection")})
            for r in records]


@all_games
def test_reset_seed_controls_chance(spec) -> None:
    """Stochastic games: different seeds differ somewhere. Deterministic games: the seed is
    irrelevant (same actions, same episode)."""
    stochastic = bundle_of(spec).game.tags.chance == "stochastic"
    env = make_aec(spec)
    runs = {}
    for seed in (0, 1, 2):
        runs[seed] = _observable(record_aec(env, seed, np.random.default_rng(ACTION_SEED)))
    distinct = {tuple(r) for r in runs.values()}
    if stochastic:
        assert len(distinct) > 1, "three reset seeds gave identical episodes in a stochastic game"
    else:
        assert len(distinct) == 1, "a game tagged deterministic depends on the reset seed"


@parallel_games
@pytest.mark.parametrize("max_cycles", [None, 3])
def test_parallel_matches_aec(spec, max_cycles) -> None:
    """The same joint actions give the same rewards, observations, masks, ends and state()."""
    kw = {} if max_cycles is None else {"max_cycles": max_cycles}
    par, aec = make_parallel(spec, **kw), make_aec(spec, **kw)
    rng = np.random.default_rng(ACTION_SEED)
    for seed in (5, None, 8):
        obs, _ = par.reset(seed=seed)
        aec.reset(seed=seed)
        assert_same(par.state(), aec.state(), "state() after reset")
        for a in par.agents:
            assert_same(obs[a]["observation"], aec.observe(a)["observation"], f"reset obs {a}")
        steps = 0
        while par.agents:
            joint = {a: legal_choice(rng, obs[a]["action_mask"]) for a in par.agents}
            # Feed the AEC env in its own order; its mask at each agent's turn must match.
            for _ in range(len(joint)):
                agent = aec.agent_selection
                assert agent in joint, f"AEC asks {agent}, not in the joint action"
                _, _, term, trunc, _ = aec.last()
                assert not (term or trunc)
                assert_same(aec.observe(agent)["action_mask"], obs[agent]["action_mask"],
                            f"step {steps}: action mask of {agent}")
                aec.step(joint[agent])
            obs, rewards, terms, truncs, _ = par.step(joint)
            steps += 1
            where = f"seed={seed}, step {steps}"
            assert_same(par.state(), aec.state(), f"{where}: state()")
            assert_same(rewards, {a: aec.rewards[a] for a in rewards}, f"{where}: rewards")
            assert_same(terms, {a: aec.terminations[a] for a in terms}, f"{where}: terminations")
            assert_same(truncs, {a: aec.truncations[a] for a in truncs}, f"{where}: truncations")
            for a in obs:
                assert_same(obs[a]["observation"], aec.observe(a)["observation"],
                            f"{where}: observation of {a}")
                assert_same(par.text_observation(a), aec.text_observation(a),
                            f"{where}: text of {a}")
                if terms[a] or truncs[a]:  # done agents can no longer act in either API
                    assert_same(obs[a]["action_mask"], aec.observe(a)["action_mask"],
                                f"{where}: final action mask of {a}")
        # The AEC env is over too: only dead steps remain.
        for agent in aec.agent_iter():
            _, _, term, trunc, _ = aec.last()
            assert term or trunc, f"AEC env still live ({agent}) after the Parallel episode ended"
            aec.step(None)
        assert not aec.agents


@single_agents
def test_single_agent_episodes_are_reproducible(sa) -> None:
    env1, env2 = gymnasium.make(sa.id), gymnasium.make(sa.id)
    rng1, rng2 = np.random.default_rng(ACTION_SEED), np.random.default_rng(ACTION_SEED)
    for seed in (4, None):
        out1, out2 = env1.reset(seed=seed), env2.reset(seed=seed)
        assert_same(out1, out2, f"reset(seed={seed})")
        for step in range(100_000):
            a1 = legal_choice(rng1, out1[-1]["action_mask"])
            a2 = legal_choice(rng2, out2[-1]["action_mask"])
            out1, out2 = env1.step(a1), env2.step(a2)
            assert_same(out1, out2, f"seed={seed}, step {step}")
            done = out1[2] or out1[3]
            if step % 10 == 0 or done:
                assert_same(env1.unwrapped.text_observation(), env2.unwrapped.text_observation(),
                            f"seed={seed}, step {step}: text")
            if done:
                break


# --------------------------------------------------------------------------- fuzzing
@all_games
def test_rules_fuzz(spec) -> None:
    """The pure rules engine under random legal play."""
    bundle = bundle_of(spec)
    game = bundle.game
    n = game.num_players
    rng = np.random.default_rng(0)
    lo, hi = game.reward_range
    for seed in seeds(FUZZ_EPISODES):
        steps = rules_episode(bundle, seed, rng)
        totals = np.zeros(n)
        for i, st in enumerate(steps):
            state = st.state
            hash(state)  # states are values: planners and tabular learners hash them
            terminal = game.is_terminal(state)
            players = game.current_players(state)
            assert bool(players) != terminal, "current_players must be empty exactly at the end"
            for p in range(n):
                legal = tuple(game.legal_actions(state, p))
                assert len(set(legal)) == len(legal)
                assert all(0 <= a < game.num_actions for a in legal)
                assert bool(legal) == (p in players), f"player {p}: legal {legal}, acting {players}"
                view = game.observe(state, p)
                assert tuple(view.legal_actions) == legal, "the view must carry the legal actions"
                assert np.array_equal(np.flatnonzero(game.legal_mask(state, p)), sorted(legal))
            if st.actions is None:
                assert i == len(steps) - 1
                continue
            frozen = freeze(copy.deepcopy(state))
            # Missing or extra seats are refused.
            first = players[0]
            missing = {p: a for p, a in st.actions.items() if p != first}
            with pytest.raises(IllegalActionError):
                game.step(state, missing, np.random.default_rng(0))
            extra = [p for p in range(n) if p not in players]
            if extra:
                with pytest.raises(IllegalActionError):
                    game.step(state, {**st.actions, extra[0]: 0}, np.random.default_rng(0))
            result = game.step(state, st.actions, np.random.default_rng(seed))
            assert freeze(state) == frozen, "Game.step mutated its input state"
            rewards = np.asarray(st.rewards, dtype=float)
            assert rewards.shape == (n,) and np.all(np.isfinite(rewards))
            assert np.all(rewards >= lo - 1e-9) and np.all(rewards <= hi + 1e-9), (
                f"rewards {rewards} outside reward_range {game.reward_range}"
            )
            if game.tags.utility == "identical":
                assert np.allclose(rewards, rewards[0]), f"identical-interest rewards {rewards}"
            assert len(result.rewards) == n
            totals += rewards
        final = steps[-1].state
        assert game.is_terminal(final), "random play did not end"
        if game.max_steps is not None:
            assert len(steps) - 1 <= game.max_steps
        if game.tags.utility == "zero_sum":
            assert abs(totals.sum()) < 1e-6, f"zero-sum game paid {totals}"
        with pytest.raises(IllegalActionError):
            game.step(final, dict.fromkeys(range(n), 0), np.random.default_rng(0))


@all_games
def test_aec_fuzz(spec) -> None:
    """Random legal AEC play: spaces, masks, rewards, episode length."""
    game = bundle_of(spec).game
    env = make_raw(spec)
    max_moves = None if game.max_steps is None else game.max_steps * game.num_players
    rng = np.random.default_rng(1)
    simultaneous = game.tags.dynamics == SIMULTANEOUS

    def check(e, action):
        for a in e.agents:
            ob = e.observe(a)
            assert e.observation_space(a).contains(ob), f"{a}: observation outside its space"
            live = not (e.terminations[a] or e.truncations[a])
            # In a simultaneous game every seat still to choose its part of the joint action
            # has its legal mask (aec_to_parallel reads them all at once); otherwise only the
            # selected agent has one.
            to_choose = a == e.agent_selection or (
                simultaneous and e._index[a] in e.unwrapped._queue
            )
            if live and to_choose:
                assert ob["action_mask"].sum() >= 1, f"{a} must act but has no legal action"
                legal = set(e.unwrapped.game.legal_actions(e.unwrapped.game_state, e._index[a]))
                assert set(np.flatnonzero(ob["action_mask"]).tolist()) == legal
            else:
                assert not ob["action_mask"].any(), f"{a} is not acting but has a non-zero mask"
            assert math.isfinite(e.rewards[a]) and math.isfinite(e._cumulative_rewards[a])
            assert set(e.rewards) == set(e.terminations) == set(e.truncations) == set(e.agents)
        assert e.state_space.contains(e.state())

    for seed in seeds(FUZZ_EPISODES):
        moves = play_aec_episode(env, rng, seed, check)
        if max_moves is not None:
            assert moves <= max_moves, f"{moves} moves > max_steps * num_players = {max_moves}"
        # Stepping a finished env with an action is refused (PettingZoo's dead-step rule).
        with pytest.raises((ValueError, IllegalActionError)):
            env.step(0)


@parallel_games
def test_parallel_fuzz(spec) -> None:
    game = bundle_of(spec).game
    env = make_raw_parallel(spec)
    rng = np.random.default_rng(2)

    def check(e, joint, result):
        obs = result[0]
        if joint is not None:
            _, rewards, terms, truncs, infos = result
            live = set(joint)
            for d in (obs, rewards, terms, truncs, infos):
                assert set(d) == live
            assert all(math.isfinite(r) for r in rewards.values())
            ended = any(terms.values()) or any(truncs.values())
            assert (not e.agents) == ended
        for a, ob in obs.items():
            assert e.observation_space(a).contains(ob)
            if a in e.agents:
                assert ob["action_mask"].sum() >= 1, f"{a} is live but has no legal action"
            else:
                assert not ob["action_mask"].any()
        assert e.state_space.contains(e.state())

    for seed in seeds(FUZZ_EPISODES):
        steps = play_parallel_episode(env, rng, seed, check)
        if game.max_steps is not None:
            assert steps <= game.max_steps
        with pytest.raises(IllegalActionError):
            env.step({})


# ---------------------------------------------------------------- malformed actions
def bad_actions(num_actions: int, mask: np.ndarray) -> list:
    """Out-of-range, wrong-type and (from the mask) illegal in-range actions."""
    illegal = [a for a in range(num_actions) if not mask[a]]
    return [-1, num_actions, num_actions + 7, 1.5, "a", "0", True, [0], np.array([0, 1]),
            np.float64(0.0), *illegal]


@all_games
def test_malformed_actions_aec(spec) -> None:
    """Every bad action raises IllegalActionError and leaves no trace: a twin env that never saw
    them plays on identically."""
    env, twin = make_raw(spec), make_raw(spec)
    n = env.game.num_actions
    rng = np.random.default_rng(3)
    for seed in (0, 1):
        env.reset(seed=seed)
        twin.reset(seed=seed)
        moves = 0
        for agent in env.agent_iter(100_000):
            _, _, term, trunc, _ = env.last()
            before = aec_snapshot(env)
            if term or trunc:
                env.step(None)
                twin.step(None)
            else:
                mask = env.observe(agent)["action_mask"]
                if moves < 12 or moves % 40 == 0:  # a sample of moves, to keep the test fast
                    for bad in bad_actions(n, mask):
                        with pytest.raises(IllegalActionError) as err:
                            env.step(bad)
                        assert str(err.value), f"no message for {bad!r}"
                        assert_same(aec_snapshot(env), before, f"after rejecting {bad!r}")
                    with pytest.raises((TypeError, ValueError)) as err:
                        env.step(None)  # None from a live agent
                    assert str(err.value)
                    assert_same(aec_snapshot(env), before, "after rejecting None")
                action = legal_choice(rng, mask)
                env.step(action)
                twin.step(action)
                moves += 1
            assert_same(aec_snapshot(env), aec_snapshot(twin), f"seed={seed}, move {moves}")
        assert not env.agents and not twin.agents


@parallel_games
def test_malformed_joint_actions_parallel(spec) -> None:
    env, twin = make_raw_parallel(spec), make_raw_parallel(spec)
    n = env.game.num_actions
    rng = np.random.default_rng(4)
    for seed in (0, 1):
        obs, _ = env.reset(seed=seed)
        twin.reset(seed=seed)
        steps = 0
        while env.agents:
            joint = {a: legal_choice(rng, obs[a]["action_mask"]) for a in env.agents}
            before = parallel_snapshot(env)
            if steps < 6 or steps % 20 == 0:
                bad_joints = [{}]
                for a in env.agents:
                    bad_joints.append({b: v for b, v in joint.items() if b != a})  # missing
                    for bad in [*bad_actions(n, obs[a]["action_mask"]), None]:
                        bad_joints.append({**joint, a: bad})
                extra = [a for a in env.possible_agents if a not in env.agents]
                bad_joints += [{**joint, f"player_{len(env.possible_agents)}": 0},
                               {**joint, "not_an_agent": 0},
                               *({**joint, a: 0} for a in extra)]
                for bad_joint in bad_joints:
                    with pytest.raises(IllegalActionError):
                        env.step(bad_joint)
                    assert_same(parallel_snapshot(env), before, f"after rejecting {bad_joint!r}")
            out = env.step(joint)
            out_twin = twin.step(joint)
            steps += 1
            assert_same(out, out_twin, f"seed={seed}, step {steps}: returned data")
            assert_same(parallel_snapshot(env), parallel_snapshot(twin), f"seed={seed}, step {steps}")
            obs = out[0]
        with pytest.raises(IllegalActionError):
            env.step(joint)


@all_games
def test_malformed_actions_single_agent(spec) -> None:
    """The Gymnasium view refuses bad actions the same way (and numpy scalars/0-d int arrays,
    as RL libraries return them, are accepted)."""
    env, twin = SingleAgentEnv(spec.name, "random"), SingleAgentEnv(spec.name, "random")
    n = env.bundle.game.num_actions
    rng = np.random.default_rng(5)

    def snap(e):
        return {"aec": aec_snapshot(e.aec), "mask": e.action_masks(), "text": e.text_observation(),
                "rng": e.np_random.bit_generator.state}

    _, info = env.reset(seed=0)
    twin.reset(seed=0)
    for step in range(100_000):
        before = snap(env)
        if step < 6 or step % 20 == 0:
            for bad in [*bad_actions(n, info["action_mask"]), None, np.array(1.5)]:
                with pytest.raises(IllegalActionError):
                    env.step(bad)
                assert_same(snap(env), before, f"after rejecting {bad!r}")
        action = legal_choice(rng, info["action_mask"])
        wrapped = [np.int64(action), np.array(action), int(action)][step % 3]
        out = env.step(wrapped)
        out_twin = twin.step(action)
        assert_same(out, out_twin, f"step {step}")
        assert_same(snap(env), snap(twin), f"step {step}")
        _, _, term, trunc, info = out
        if term or trunc:
            break
    assert term or trunc
    with pytest.raises((IllegalActionError, ValueError)):
        env.step(0)
