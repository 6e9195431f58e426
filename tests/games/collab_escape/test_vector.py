"""The batched CollabEscape engine follows the rules step by step: its next state is one of the
rules' outcomes of the joint action (only the roaming killer's room is chance), and observations,
masks, rewards and episode ends equal the PettingZoo env's (random, greedy and optimal play, both
maps, both scenarios); the roaming killer's draws are uniform."""

from __future__ import annotations

import numpy as np
import pytest
from test_vector_reference import Reference

from tom_envs.games.collab_escape.bots import bot_table
from tom_envs.games.collab_escape.env import make_bundle, raw_env
from tom_envs.games.collab_escape.rules import EscapeState
from tom_envs.games.collab_escape.vector import EscapeVectorEnv

CASES = [
    {"scenario": "together"},
    {"scenario": "split", "max_turns": 12},
    {"scenario": "together", "map": "prompt", "fixes_needed": 3, "max_turns": 20},
    {"scenario": "split", "map": "prompt", "max_turns": None},
]


@pytest.mark.parametrize("kw", CASES)
def test_batched_follows_the_rules_and_the_encoder(kw) -> None:
    bundle, table = make_bundle(**kw), bot_table(**kw)
    names = [None, "greedy", "optimal"]
    pairs = [(x, y) for x in names for y in names] + [("greedy", "greedy")] * 3 + [(None, None)] * 4
    agents = [[table.make(x, bundle) if x else None for x in pair] for pair in pairs]
    B = len(pairs)
    ref = Reference(lambda: raw_env(**kw), agents, seeds=list(range(B)))
    game = ref.bundle.game
    venv = EscapeVectorEnv(B, keep_final_obs=True, **kw)
    obs = venv.reset(seed=0)
    ends = {"escaped": 0, "caught": 0, "limit": 0}
    roamed = 0
    for t in range(80):
        r_obs, r_masks = ref.observe()
        assert np.array_equal(obs, r_obs), f"step {t}"
        assert np.array_equal(venv.action_masks(), r_masks), f"step {t}"
        a = ref.actions()
        before = [ref.envs[i].game_state for i in range(B)]
        obs, rewards, term, trunc = venv.step(a)
        assert not trunc.any()
        for i in range(B):
            outcomes = game._outcomes(before[i], {0: int(a[i, 0]), 1: int(a[i, 1])})
            states = [s for _, s, _ in outcomes]
            roamed += len(states) > 1
            if term[i]:  # the env restarted: the state it ended on is read from final_obs
                seen = [s for s in states if np.array_equal(_encode(ref, s), venv.final_obs[i])]
                assert len(seen) == 1, f"step {t}, env {i}"
                got = seen[0]
            else:
                got = venv.state(i)
                assert got in states, f"step {t}, env {i}: {got} not among {states}"
            assert rewards[i].tolist() == [float(game.succeeded(got))] * 2
            assert term[i] == game.is_terminal(got)
            if term[i]:
                kind = (
                    "escaped" if game.succeeded(got) else "caught" if game.failed(got) else "limit"
                )
                ends[kind] += 1
                ref.reset(i)
                assert venv.state(i) == ref.envs[i].game_state  # the start, in the same step
            else:
                ref.envs[i].game_state = got
    assert ends["caught"] > 0 and ends["escaped"] > 0, ends
    if kw["scenario"] == "together":  # in "split" the killer sees Bob at once and keeps chasing
        assert roamed > 0


def _encode(ref: Reference, state: EscapeState) -> np.ndarray:
    """Both seats' observations of ``state``, as the single env encodes them."""
    game, enc = ref.bundle.game, ref.bundle.encoder
    return np.stack([enc.encode(game.observe(state, p)) for p in (0, 1)])


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


@pytest.mark.parametrize("kw", CASES)
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
