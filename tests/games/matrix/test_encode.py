"""Vector observations: exact vectors for hand-built states, most recent round first."""

from __future__ import annotations

import numpy as np
import pytest

from tom_envs.games.matrix.encode import MatrixEncoder
from tom_envs.games.matrix.env import make_bundle, raw_env
from tom_envs.games.matrix.rules import MatrixConfig, MatrixGame, MatrixState


def play(game: MatrixGame, joint: list[tuple[int, int]]) -> MatrixState:
    state = game.initial_state(np.random.default_rng(0))
    for a, b in joint:
        state = game.step(state, {0: a, 1: b}, None).state  # type: ignore[arg-type]
    return state


def setup(**kw: object) -> tuple[MatrixGame, MatrixEncoder]:
    cfg = MatrixConfig(**kw)  # type: ignore[arg-type]
    return MatrixGame(cfg), MatrixEncoder(cfg)


def vec(*xs: float) -> np.ndarray:
    return np.array(xs, dtype=np.float32)


def test_shapes() -> None:
    assert MatrixEncoder(MatrixConfig(game="rps")).observation_shape == (1 + 100 * 6,)
    assert MatrixEncoder(MatrixConfig(game="ibs", window=2)).observation_shape == (9,)
    assert MatrixEncoder(MatrixConfig(game="ipd", window=2, include_round=False)).state_shape == (8,)
    assert MatrixEncoder(MatrixConfig(game="rps", window=1, include_round=False)).observation_shape == (6,)
    assert MatrixEncoder(MatrixConfig(game="ibs", horizon=3, window=10)).observation_shape == (13,)


def test_ibs_window2_with_round() -> None:
    game, enc = setup(game="ibs", horizon=4, window=2)
    # t = 0: only the round (0)
    s = play(game, [])
    assert np.array_equal(enc.encode(game.observe(s, 0)), np.zeros(9, np.float32))
    # t = 1: [1/4 | me=J, other=F | empty slot]
    s = play(game, [(0, 1)])
    assert np.array_equal(enc.encode(game.observe(s, 0)), vec(0.25, 1, 0, 0, 1, 0, 0, 0, 0))
    assert np.array_equal(enc.encode(game.observe(s, 1)), vec(0.25, 0, 1, 1, 0, 0, 0, 0, 0))
    # t = 2: most recent round (F, F) first, then (J, F)
    s = play(game, [(0, 1), (1, 1)])
    assert np.array_equal(enc.encode(game.observe(s, 0)), vec(0.5, 0, 1, 0, 1, 1, 0, 0, 1))
    assert np.array_equal(enc.encode(game.observe(s, 1)), vec(0.5, 0, 1, 0, 1, 0, 1, 1, 0))
    # t = 3: the window keeps (F, F) and the new (J, J); (J, F) has dropped out
    s = play(game, [(0, 1), (1, 1), (0, 0)])
    assert np.array_equal(enc.encode(game.observe(s, 0)), vec(0.75, 1, 0, 1, 0, 0, 1, 0, 1))
    # t = T: round feature is 1
    s = play(game, [(0, 1), (1, 1), (0, 0), (1, 0)])
    assert np.array_equal(enc.encode(game.observe(s, 0)), vec(1.0, 0, 1, 1, 0, 1, 0, 1, 0))
    assert np.array_equal(enc.encode(game.observe(s, 1)), vec(1.0, 1, 0, 0, 1, 1, 0, 1, 0))


def test_rps_window2_without_round() -> None:
    game, enc = setup(game="rps", horizon=5, window=2, include_round=False)
    s = play(game, [(0, 2), (2, 1)])
    # slot 0 = round 2: me=2 (B), other=1 (F); slot 1 = round 1: me=0, other=2
    expected0 = vec(0, 0, 1, 0, 1, 0, 1, 0, 0, 0, 0, 1)
    expected1 = vec(0, 1, 0, 0, 0, 1, 0, 0, 1, 1, 0, 0)
    assert np.array_equal(enc.encode(game.observe(s, 0)), expected0)
    assert np.array_equal(enc.encode(game.observe(s, 1)), expected1)
    assert np.array_equal(enc.encode_state(s), expected0)


@pytest.mark.parametrize("g", ["rps", "ibs", "ipd"])
def test_window1_is_the_last_joint_action(g: str) -> None:
    """window=1, include_round=False: the state of the paper's RMax (zeros before round 1)."""
    game, enc = setup(game=g, horizon=6, window=1, include_round=False)
    n = game.num_actions
    s = game.initial_state(None)  # type: ignore[arg-type]
    assert np.array_equal(enc.encode(game.observe(s, 0)), np.zeros(2 * n, np.float32))
    assert np.array_equal(enc.encode(game.observe(s, 1)), np.zeros(2 * n, np.float32))
    rng = np.random.default_rng(5)
    for _ in range(6):
        a, b = int(rng.integers(n)), int(rng.integers(n))
        s = game.step(s, {0: a, 1: b}, None).state  # type: ignore[arg-type]
        one_hot = np.eye(n, dtype=np.float32)
        assert np.array_equal(
            enc.encode(game.observe(s, 0)), np.concatenate([one_hot[a], one_hot[b]])
        )
        assert np.array_equal(
            enc.encode(game.observe(s, 1)), np.concatenate([one_hot[b], one_hot[a]])
        )
    # every joint action has its own vector: the encoding is injective
    seen = set()
    for a in range(n):
        for b in range(n):
            s = game.step(game.initial_state(None), {0: a, 1: b}, None).state  # type: ignore[arg-type]
            seen.add(enc.encode(game.observe(s, 0)).tobytes())
    assert len(seen) == n * n


@pytest.mark.parametrize("g", ["rps", "ibs", "ipd"])
@pytest.mark.parametrize("window", [None, 1, 3])
@pytest.mark.parametrize("include_round", [True, False])
def test_encode_is_in_unit_box_and_matches_the_layout(
    g: str, window: int | None, include_round: bool
) -> None:
    game, enc = setup(game=g, horizon=8, window=window, include_round=include_round)
    n = game.num_actions
    rng = np.random.default_rng(0)
    s = game.initial_state(rng)
    for t in range(9):
        for p in (0, 1):
            x = enc.encode(game.observe(s, p))
            assert x.dtype == np.float32 and x.shape == enc.observation_shape
            assert x.min() >= 0.0 and x.max() <= 1.0
            off = int(include_round)
            if include_round:
                assert x[0] == np.float32(t / 8)
            slots = x[off:].reshape(-1, 2, n)
            w = min(t, game.config.seen_rounds)
            # played slots hold exactly one 1 per half, unplayed slots are zero
            assert np.array_equal(slots[:w].sum(axis=2), np.ones((w, 2)))
            assert not slots[w:].any()
            # slot 0 is the most recent round, from the seat's side
            if t:
                a, b = s.history[-1]
                mine, theirs = (a, b) if p == 0 else (b, a)
                assert slots[0, 0, mine] == 1 and slots[0, 1, theirs] == 1
        if t < 8:
            s = game.step(s, {0: int(rng.integers(n)), 1: int(rng.integers(n))}, rng).state
    assert np.array_equal(enc.encode_state(s), enc.encode(game.observe(s, 0)))


def test_env_observations_are_the_encoder_output() -> None:
    env = raw_env(game="ipd", horizon=3, window=2)
    bundle = make_bundle(game="ipd", horizon=3, window=2)
    env.reset(seed=0)
    env.step(1)
    env.step(0)
    obs = env.observe("player_1")["observation"]
    assert np.array_equal(obs, vec(1 / 3, 1, 0, 0, 1, 0, 0, 0, 0))
    assert np.array_equal(obs, bundle.encoder.encode(env.view("player_1")))
    assert np.array_equal(env.state(), vec(1 / 3, 0, 1, 1, 0, 0, 0, 0, 0))
