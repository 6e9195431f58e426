"""The batched-engine contract (tom_envs.core.vector): autoreset, truncation, final observations,
action checks and the Gymnasium / batched multi-agent adapters, on every batched engine."""

from __future__ import annotations

import numpy as np
import pytest

from tom_envs.core.vector import (
    BatchedEngine,
    BatchedParallelEnv,
    GymVectorEnv,
    RandomPartner,
    sample_legal,
)
from tom_envs.games.overcooked.vector import OvercookedVectorEnv


def _engines(**kw):
    """A small instance of every batched engine, built with ``kw``."""
    out = {"overcooked": OvercookedVectorEnv(3, horizon=7, **kw)}
    from tom_envs.games.collab_capture.vector import CaptureVectorEnv
    from tom_envs.games.collab_escape.vector import EscapeVectorEnv
    from tom_envs.games.matrix.vector import MatrixVectorEnv

    out["matrix"] = MatrixVectorEnv(3, game="rps", horizon=7, **kw)
    # both_closed: the thief is never caught while everyone stays (action 0, always legal)
    out["collab_capture"] = CaptureVectorEnv(3, scenario="both_closed", max_turns=7, **kw)
    out["collab_escape"] = EscapeVectorEnv(3, max_turns=7, **kw)
    return out


ENGINES = sorted(_engines())


@pytest.mark.parametrize("name", ENGINES)
def test_engine_satisfies_the_protocol_and_autoresets_on_the_same_step(name) -> None:
    e = _engines(keep_final_obs=True)[name]
    assert isinstance(e, BatchedEngine)
    obs0 = np.array(e.reset(seed=3), copy=True)
    assert obs0.shape == (3, e.num_agents, e.obs_size) and obs0.dtype == np.float32
    masks = e.action_masks()
    assert masks.shape == (3, e.num_agents, e.num_actions) and masks.dtype == bool
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(15):
        before = np.array(e._observe(), copy=True)
        obs, rew, term, trunc = e.step(sample_legal(e.action_masks(), rng))
        assert rew.shape == (3, e.num_agents) and term.shape == trunc.shape == (3,)
        assert term.dtype == trunc.dtype == bool and not (term & trunc).any()
        if term.any():
            ends += 1
            done = term | trunc
            # the next episode starts inside this step: its first observation is the reset's
            if name in ("overcooked", "matrix", "collab_capture", "collab_escape"):  # fixed starts
                assert np.array_equal(obs[done], obs0[done])
            assert e.final_obs is not None and e.final_obs.shape == obs.shape
            assert not np.array_equal(e.final_obs[done], before[done]) or e.obs_size == 0
    lockstep = name in ("overcooked", "matrix")  # every env ends at the horizon together
    assert ends == 2 if lockstep else ends >= 2  # steps 7 and 14, or earlier ends as well


@pytest.mark.parametrize("name", ENGINES)
def test_max_cycles_truncates_and_no_autoreset_refuses_to_step(name) -> None:
    # Action 0 (stay, wait, ...) is always legal; nothing ends the engines' games in two steps.
    e = _engines(max_cycles=2, autoreset=False)[name]
    e.reset(seed=0)
    a = np.zeros((3, e.num_agents), dtype=np.int64)
    _, _, term, trunc = e.step(a)
    assert not term.any() and not trunc.any()
    _, _, term, trunc = e.step(a)
    assert trunc.all() and not term.any()
    with pytest.raises(ValueError, match="reset"):
        e.step(a)
    e.reset()
    e.step(a)


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
    obs, r, te, tr, infos = selfplay.step(np.zeros(selfplay.num_envs, dtype=np.int64))
    assert r.shape == te.shape == tr.shape == (3 * e.num_agents,) and not (te | tr).any()
    with pytest.raises(ValueError, match="shape"):
        selfplay.step(np.zeros(3, dtype=np.int64))


@pytest.mark.parametrize("name", ENGINES)
def test_batched_parallel_adapter(name) -> None:
    e = _engines()[name]
    env = BatchedParallelEnv(e)
    obs, infos = env.reset(seed=1)
    assert set(obs) == set(e.agents) and all(o.shape == (3, e.obs_size) for o in obs.values())
    acts = {a: np.zeros(3, dtype=np.int64) for a in e.agents}
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
