"""The batched CollabCapture engine computes what the PettingZoo env computes, env by env, step by
step: observations, masks, rewards, terminations (random, greedy and optimal play, every scenario,
both thief distances, with and without swap capture)."""

from __future__ import annotations

import numpy as np
import pytest
from test_vector_reference import Reference

from tom_envs.games.collab_capture.bots import bot_table
from tom_envs.games.collab_capture.env import make_bundle, raw_env
from tom_envs.games.collab_capture.rules import SCENARIOS
from tom_envs.games.collab_capture.vector import CaptureVectorEnv

CASES = [{"scenario": s} for s in SCENARIOS] + [
    {"scenario": "both_closed", "thief_distance": "graph", "max_turns": 12},
    {"scenario": "door12_closed", "swap_capture": False, "max_turns": 9},
    {"scenario": "both_open", "starts": (5, 8, 3), "max_turns": 15},
]


@pytest.mark.parametrize("kw", CASES)
def test_batched_matches_the_single_env(kw) -> None:
    bundle, table = make_bundle(**kw), bot_table(**kw)
    names = [None, "greedy", "optimal"]
    pairs = [(x, y) for x in names for y in names] + [(None, None)] * 7  # 16 envs
    agents = [[table.make(x, bundle) if x else None for x in pair] for pair in pairs]
    B = len(pairs)
    ref = Reference(lambda: raw_env(**kw), agents, seeds=list(range(B)))
    venv = CaptureVectorEnv(B, keep_final_obs=True, **kw)
    obs = venv.reset(seed=0)
    ends = captures = 0
    for t in range(70):
        r_obs, r_masks = ref.observe()
        assert np.array_equal(obs, r_obs), f"step {t}"
        assert np.array_equal(venv.action_masks(), r_masks), f"step {t}"
        a = ref.actions()
        obs, rewards, term, trunc = venv.step(a)
        r_rew, r_term, r_trunc = ref.step(a)
        assert np.array_equal(rewards, r_rew), f"step {t}"
        assert np.array_equal(term, r_term) and np.array_equal(trunc, r_trunc)
        if term.any():
            final, _ = ref.observe()
            assert np.array_equal(venv.final_obs[term], final[term])
        for i in range(B):
            if term[i]:
                ends += 1
                captures += ref.envs[i].game_state.captured
                ref.reset(i)
            assert venv.state(i) == ref.envs[i].game_state
    assert ends >= B and captures >= 1  # episodes ended (some by capture) and restarted


def test_masks_are_zero_after_the_end_without_autoreset() -> None:
    venv = CaptureVectorEnv(2, autoreset=False, scenario="both_open")
    venv.reset()
    # Env 0: Alice 1 -> 2 while the thief (tie between 1 and 3: listed order) flees 2 -> 1: a
    # capture by swap. Env 1: both stay; the thief flees to 3.
    _, rewards, term, _ = venv.step(np.array([[2, 0], [0, 0]]))
    assert term.tolist() == [True, False] and rewards.tolist() == [[1.0, 1.0], [0.0, 0.0]]
    assert venv.state(0).thief == 1 and venv.state(1).thief == 3
    masks = venv.action_masks()
    assert not masks[0].any() and masks[1].any()
    with pytest.raises(ValueError, match="reset"):
        venv.step(np.zeros((2, 2), dtype=int))


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_vectorised_greedy_partner_plays_what_the_bot_plays(scenario) -> None:
    from tom_envs.games.collab_capture.vector import CapturePartner

    kw = {"scenario": scenario, "max_turns": 10}
    bundle, table = make_bundle(**kw), bot_table(**kw)
    B = 8
    agents = [[None, table.make("greedy", bundle)] for _ in range(B)]  # seat 0 plays at random
    ref = Reference(lambda: raw_env(**kw), agents, seeds=list(range(B)))
    venv = CaptureVectorEnv(B, **kw)
    partner = CapturePartner(venv, "greedy", seats=(0, 1))
    obs = venv.reset(seed=0)
    for t in range(25):
        a = ref.actions()
        assert np.array_equal(partner(obs, venv.action_masks())[:, 1], a[:, 1]), t
        obs, _, term, _ = venv.step(a)
        ref.step(a)
        for i in np.flatnonzero(term):
            ref.reset(i)
    with pytest.raises(ValueError, match="greedy"):
        CapturePartner(venv, "optimal")
