"""The AEC env's fast paths give exactly what the plain computation gives."""

from __future__ import annotations

import numpy as np
import pettingzoo
import pytest

from tom_envs.core.game import IllegalActionError, agent_index
from tom_envs.registration import GAMES


@pytest.mark.parametrize("spec", GAMES, ids=lambda s: s.name)
def test_cached_masks_equal_fresh_masks_and_are_private(spec) -> None:
    env = pettingzoo.make("aec", spec.id)
    base = env.unwrapped
    rng = np.random.default_rng(0)
    for seed in (0, 1):
        env.reset(seed=seed)
        for i, agent in enumerate(env.agent_iter(max_iter=120)):
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            fresh = base.game.legal_mask(base.game_state, agent_index(agent))
            assert np.array_equal(obs["action_mask"], fresh)
            obs["action_mask"][:] = 0  # a caller writing to its mask must not change the next one
            again = env.observe(agent)["action_mask"]
            assert np.array_equal(again, fresh)
            legal = np.flatnonzero(fresh)
            if i % 7 == 3:  # an illegal action still raises and leaves no trace
                bad = int(np.flatnonzero(fresh == 0)[0]) if (fresh == 0).any() else -1
                with pytest.raises(IllegalActionError):
                    base.step(bad)
                assert np.array_equal(env.observe(agent)["action_mask"], fresh)
            env.step(int(rng.choice(legal)))


def test_hanabi_bit_table_equals_unpackbits() -> None:
    from tom_envs.games.hanabi.env import make_bundle

    b = make_bundle(players=3)
    game, enc = b.game, b.encoder
    rng = np.random.default_rng(5)
    s = game.initial_state(rng)
    for _ in range(40):
        if game.is_terminal(s):
            break
        p = game.current_players(s)[0]
        view = game.observe(s, p)
        raw = np.frombuffer(enc.view_bits(view).to_bytes(enc.nbytes, "little"), dtype=np.uint8)
        want = np.unpackbits(raw, count=enc.size, bitorder="little").astype(np.float32)
        got = enc.encode(view)
        assert got.dtype == np.float32 and np.array_equal(got, want)
        s = game.step(s, {p: int(rng.choice(game.legal_actions(s, p)))}, rng).state
