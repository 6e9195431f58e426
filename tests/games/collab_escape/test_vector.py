"""The batched CollabEscape engine beyond the registry-driven parity test
(tests/test_vector_parity.py: every step one of the rules' outcomes, observations, masks, rewards
and ends equal to the AEC env's, random, greedy and optimal play, both maps, both scenarios): the
roaming killer's draws are uniform and seeded, and the vectorised greedy partner plays what the
bot plays."""

from __future__ import annotations

import numpy as np
import pytest
from test_vector_reference import Reference

from tom_envs.games.collab_escape.bots import bot_table
from tom_envs.games.collab_escape.env import make_bundle, raw_env
from tom_envs.games.collab_escape.vector import EscapeVectorEnv


def test_roaming_killer_moves_uniformly() -> None:
    # Killer in room 3 (out: 2, 4, 8), nobody in sight: he roams to one of three rooms.
    venv = EscapeVectorEnv(6000, starts=(1, 10, 3))
    venv.reset(seed=11)
    venv.step(np.zeros((6000, 2), dtype=np.int64))
    rooms, counts = np.unique(venv.killer, return_counts=True)
    assert rooms.tolist() == [2, 4, 8]
    assert (np.abs(counts - 2000) < 5 * np.sqrt(6000 * (1 / 3) * (2 / 3))).all()
    again = EscapeVectorEnv(6000, starts=(1, 10, 3))
    again.reset(seed=11)
    again.step(np.zeros((6000, 2), dtype=np.int64))
    assert np.array_equal(again.killer, venv.killer)  # the seed decides every draw


@pytest.mark.parametrize(
    "kw",
    [{"scenario": "together"}, {"scenario": "split", "max_turns": 12},
     {"scenario": "together", "map": "prompt", "fixes_needed": 3, "max_turns": 20}],
)  # fmt: skip
def test_vectorised_greedy_partner_plays_what_the_bot_plays(kw) -> None:
    from tom_envs.games.collab_escape.vector import EscapePartner

    bundle, table = make_bundle(**kw), bot_table(**kw)
    B = 8
    agents = [[table.make("greedy", bundle), table.make("greedy", bundle)] for _ in range(B)]
    ref = Reference(lambda: raw_env(**kw), agents, seeds=list(range(B)))
    venv = EscapeVectorEnv(B, **kw)
    partner = EscapePartner(venv, "greedy", seats=(0, 1))
    obs = venv.reset(seed=0)
    fixed = 0
    for t in range(40):
        a = ref.actions()
        assert np.array_equal(partner(obs, venv.action_masks()), a), t
        fixed += int((a == 11).sum())
        obs, _, term, _ = venv.step(a)
        for i in range(B):  # follow the engine's chance (the killer's roaming) in the reference
            if term[i]:
                ref.reset(i)
            else:
                ref.envs[i].game_state = venv.state(i)
    assert fixed > 0  # the bots repaired generators
