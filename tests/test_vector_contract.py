"""The batched-engine contract (tom_envs.core.vector): autoreset, truncation, final observations,
action checks and the Gymnasium / batched multi-agent adapters, on every registered batched engine
(``GameSpec.vector``; what they compute is checked against the AEC env by test_vector_parity.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tom_envs.core.vector import (
    BatchedEngine,
    BatchedParallelEnv,
    GymVectorEnv,
    RandomPartner,
    VectorGame,
    sample_legal,
)
from tom_envs.registration import GAMES

#: Per registered engine, arguments that end its episodes within the tests' steps (``short``); the
#: matrix games and Overcooked end every env at the horizon at once (lockstep).
SHORT: dict[str, dict[str, Any]] = {
    "RockPaperScissors": {"horizon": 7},
    "BattleOfSexes": {"horizon": 7},
    "PrisonersDilemma": {"horizon": 7},
    "Overcooked": {"horizon": 7},
    # both_closed: the thief is never caught while everyone stays (action 0, always legal)
    "CollabCapture": {"scenario": "both_closed", "max_turns": 7},
    "CollabEscape": {"max_turns": 7},
    "Hanabi": {"colors": 1, "ranks": 1, "hand_size": 1, "max_information_tokens": 1},
    "BombDefusal": {"max_rounds": 2},
}
LOCKSTEP = ("RockPaperScissors", "BattleOfSexes", "PrisonersDilemma", "Overcooked")
#: Hanabi's full game and bomb defusal's mission outlast the tests' steps; the others' limits
#: are set long enough (``long=True``) that only ``max_cycles`` ends them.
LONG: dict[str, dict[str, Any]] = {
    "RockPaperScissors": {"horizon": 50}, "BattleOfSexes": {"horizon": 50},
    "PrisonersDilemma": {"horizon": 50}, "Overcooked": {"horizon": 50},
    "CollabCapture": {"scenario": "both_closed", "max_turns": 50},
    "CollabEscape": {"max_turns": 50},
}  # fmt: skip
VECTOR_SPECS = {s.name: s for s in GAMES if s.vector}


def _engines(long: bool = False, **kw):
    """A small instance (B = 3) of every registered batched engine, built with ``kw`` (``long``:
    episodes that outlast the tests' steps; else short ones)."""
    out = {}
    for name, spec in VECTOR_SPECS.items():
        args = {**spec.kwargs, **(LONG if long else SHORT).get(name, {})}
        out[name] = spec.load_vector()(3, **args, **kw)
    return out


def _safe(e) -> np.ndarray:
    """Actions that end no episode of ``e`` soon: action 0 (stay, wait, ...) in the simultaneous
    games; in turn-based ones the acting seat's highest legal move (a reveal, in Hanabi) and the
    no-op for the others."""
    if not e.turn_based:
        return np.zeros((e.num_envs, e.num_agents), dtype=np.int64)
    m = e.action_masks()
    m[:, :, -1] &= ~m[:, :, :-1].any(axis=2)
    return e.num_actions - 1 - m[:, :, ::-1].argmax(axis=2)


ENGINES = sorted(_engines())


@pytest.mark.parametrize("name", ENGINES)
def test_engine_satisfies_the_protocol_and_autoresets_on_the_same_step(name) -> None:
    e = _engines(keep_final_obs=True)[name]
    assert isinstance(e, BatchedEngine) and isinstance(e, VectorGame)
    obs0 = np.array(e.reset(seed=3), copy=True)
    assert obs0.shape == (3, e.num_agents, e.obs_size) and obs0.dtype == np.float32
    masks = e.action_masks()
    assert masks.shape == (3, e.num_agents, e.num_actions) and masks.dtype == bool
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(15):
        before = np.array(e._observe(), copy=True)
        obs, rew, term, trunc = e.step(sample_legal(e.action_masks(), rng))
        assert obs is not None
        assert rew.shape == (3, e.num_agents) and term.shape == trunc.shape == (3,)
        assert term.dtype == trunc.dtype == bool and not (term & trunc).any()
        if term.any():
            ends += 1
            done = term | trunc
            # the next episode starts inside this step: its first observation is the reset's
            if not e.turn_based:  # fixed starts (Hanabi and bomb defusal deal anew)
                assert np.array_equal(obs[done], obs0[done])
            assert e.final_obs is not None and e.final_obs.shape == obs.shape
            assert not np.array_equal(e.final_obs[done], before[done]) or e.obs_size == 0
    lockstep = name in LOCKSTEP  # every env ends at the horizon together
    assert ends == 2 if lockstep else ends >= 2  # steps 7 and 14, or earlier ends as well


@pytest.mark.parametrize("name", ENGINES)
def test_max_cycles_truncates_and_no_autoreset_refuses_to_step(name) -> None:
    e = _engines(long=True, max_cycles=2, autoreset=False)[name]
    e.reset(seed=0)
    steps = 2 * e.num_agents if e.turn_based else 2  # a cycle: one move of every seat
    for _ in range(steps - 1):
        _, _, term, trunc = e.step(_safe(e))
        assert not term.any() and not trunc.any()
    _, _, term, trunc = e.step(_safe(e))
    assert trunc.all() and not term.any()
    assert not e.action_masks().any()  # nothing is legal in a finished episode
    with pytest.raises(ValueError, match="reset"):
        e.step(_safe(e))
    e.reset()
    e.step(_safe(e))


@pytest.mark.parametrize("name", ENGINES)
def test_bad_actions_raise_a_clear_error(name) -> None:
    e = _engines()[name]
    e.reset(seed=0)
    n, A = e.num_agents, e.num_actions
    with pytest.raises(ValueError, match="shape"):
        e.step(np.zeros((3, n + 1), dtype=int))
    with pytest.raises(ValueError, match=f"0..{A - 1}"):
        e.step(np.full((3, n), A))
    with pytest.raises(ValueError, match="integers"):
        e.step(np.zeros((3, n), dtype=float))


@pytest.mark.parametrize("name", ENGINES)
def test_gymnasium_adapter_with_a_partner_and_in_self_play(name) -> None:
    e = _engines(keep_final_obs=True)[name]
    env = GymVectorEnv(e, seat=1, partner=RandomPartner(0))
    assert env.num_envs == 3
    obs, infos = env.reset(seed=5)
    assert obs.shape == (3, e.obs_size) and env.observation_space.shape == (3, e.obs_size)
    assert infos["action_mask"].shape == (3, e.num_actions)
    full = e._observe()
    assert np.array_equal(obs, full[:, 1])
    ended = np.zeros(3, dtype=bool)
    for t in range(7):  # the horizon is 7: every env ends at least once
        obs, r, te, tr, infos = env.step(sample_legal(env.action_masks(), np.random.default_rng(t)))
        assert obs.shape == (3, e.obs_size) and r.shape == (3,)
        if (te | tr).any():
            assert np.array_equal(infos["_final_obs"], te | tr)
            assert infos["final_obs"].shape == (3, e.obs_size)
        else:
            assert "final_obs" not in infos
        ended |= te | tr
    assert ended.all()
    selfplay = GymVectorEnv(_engines()[name])
    assert selfplay.num_envs == 3 * e.num_agents
    obs, infos = selfplay.reset(seed=0)
    assert obs.shape == (3 * e.num_agents, e.obs_size)
    assert np.array_equal(
        infos["action_mask"], selfplay.engine.action_masks().reshape(obs.shape[0], -1)
    )
    obs, r, te, tr, infos = selfplay.step(_safe(selfplay.engine).reshape(-1))
    assert r.shape == te.shape == tr.shape == (3 * e.num_agents,) and not (te | tr).any()
    with pytest.raises(ValueError, match="shape"):
        selfplay.step(np.zeros(3, dtype=np.int64))


@pytest.mark.parametrize("name", ENGINES)
def test_batched_parallel_adapter(name) -> None:
    e = _engines()[name]
    env = BatchedParallelEnv(e)
    obs, infos = env.reset(seed=1)
    assert set(obs) == set(e.agents) and all(o.shape == (3, e.obs_size) for o in obs.values())
    safe = _safe(e)
    acts = {a: safe[:, i] for i, a in enumerate(e.agents)}
    obs, rew, term, trunc, infos = env.step(acts)
    assert all(r.shape == (3,) for r in rew.values())
    assert not any(t.any() for t in (*term.values(), *trunc.values()))
    assert infos[e.agents[0]]["action_mask"].shape == (3, e.num_actions)
    assert env.state().shape == (3, e.num_agents * e.obs_size)
    with pytest.raises(ValueError, match="missing"):
        env.step({e.agents[0]: np.zeros(3, dtype=np.int64)})


def test_sample_legal_draws_only_legal_actions() -> None:
    masks = np.array([[True, False, True], [False, False, True], [False, True, False]])
    draws = np.stack([sample_legal(masks, np.random.default_rng(s)) for s in range(200)])
    assert set(draws[:, 0]) == {0, 2} and set(draws[:, 1]) == {2} and set(draws[:, 2]) == {1}


def test_gymnasium_vector_wrappers_accept_the_adapter() -> None:
    """Gymnasium's own vector wrappers read the adapter's same-step autoreset and episode ends."""
    from gymnasium.wrappers.vector import RecordEpisodeStatistics

    from tom_envs.games.matrix.vector import MatrixVectorEnv

    env = RecordEpisodeStatistics(GymVectorEnv(MatrixVectorEnv(4, game="ipd", horizon=5),
                                               partner=RandomPartner(0)))  # fmt: skip
    _, info = env.reset(seed=0)
    total = np.zeros(4)
    for _ in range(5):
        assert "episode" not in info if total.any() else True
        _, r, _, _, info = env.step(np.zeros(4, dtype=np.int64))  # always cooperate
        total += r
    assert info["_episode"].all()
    assert np.array_equal(info["episode"]["r"], total) and (info["episode"]["l"] == 5).all()
