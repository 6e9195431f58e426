"""The batched CollabCapture engine beyond the registry-driven parity test
(tests/test_vector_parity.py: observations, masks, rewards and ends against the AEC env, random,
greedy and optimal play, scenarios, thief distances, swap capture): a known capture by swap, masks
after the end, and the vectorised greedy partner, which plays what the bot plays."""

from __future__ import annotations

import numpy as np
import pytest
from test_vector_reference import Reference

from tom_envs.games.collab_capture.bots import bot_table
from tom_envs.games.collab_capture.env import make_bundle, raw_env
from tom_envs.games.collab_capture.rules import SCENARIOS
from tom_envs.games.collab_capture.vector import CaptureVectorEnv


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
            ref.reset(int(i))
    with pytest.raises(ValueError, match="greedy"):
        CapturePartner(venv, "optimal")
