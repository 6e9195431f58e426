"""Rendering in every mode and PettingZoo's conversions, with PettingZoo's own test functions.

* ``rgb_array``: every game draws every seat's board (the browser app's picture) as an image;
  PettingZoo's ``render_test`` passes on every id.
* an unsupported mode warns and renders nothing (training code that asks for ``rgb_array`` or any
  other mode by default keeps working).
* ``is_parallelizable`` is true exactly for simultaneous games, and ``aec_to_parallel`` of those
  plays with every seat's legal mask (not only the first seat's).
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import parallel_api_test, render_test
from pettingzoo.utils.conversions import aec_to_parallel

import tom_envs  # noqa: F401  (registers the ids)
from tom_envs.core.game import SIMULTANEOUS
from tom_envs.core.render import svg_to_rgb
from tom_envs.registration import GAMES

IDS = [g.id for g in GAMES]


def _make(game_id: str, **kw):
    return pettingzoo.make("aec", game_id, **kw)


@pytest.mark.parametrize("game_id", IDS)
def test_rgb_array_is_every_seats_board(game_id: str) -> None:
    env = _make(game_id, render_mode="rgb_array")
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(6):  # a few moves in: the image still renders and changes shape never
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            break
        image = env.render()
        assert isinstance(image, np.ndarray) and image.dtype == np.uint8
        assert image.ndim == 3 and image.shape[2] == 3
        # one panel per seat, each at least a board wide; and not a blank page
        assert image.shape[1] >= 200 * len(env.possible_agents)
        assert (image < 250).any(axis=2).mean() > 0.05
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(rng.choice(legal)))


@pytest.mark.parametrize("game_id", IDS)
def test_pettingzoo_render_test(game_id: str) -> None:
    # Short episodes keep the per-step rasterising cheap; every mode is exercised to the end.
    render_test(functools.partial(_make, game_id, max_cycles=4))


@pytest.mark.parametrize("game_id", IDS)
def test_unsupported_render_mode_warns_not_raises(game_id: str) -> None:
    with pytest.warns(UserWarning, match="render_mode 'video' is not supported"):
        env = _make(game_id, render_mode="video")
    env.reset(seed=0)
    assert env.render() is None


def test_svg_rasteriser_draws_shapes_where_they_are() -> None:
    doc = (
        '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20">'
        '<rect x="0" y="0" width="10" height="10" rx="0" fill="#ff0000" stroke="#ff0000"/>'
        '<circle cx="30" cy="10" r="5" fill="#0000ff" stroke="#0000ff"/>'
        '<image href="file:///etc/passwd" x="0" y="0" width="5" height="5"/></svg>'
    )
    img = svg_to_rgb(doc)
    assert img.shape == (20, 40, 3)
    assert tuple(img[5, 5]) == (255, 0, 0)
    assert tuple(img[10, 30]) == (0, 0, 255)
    assert tuple(img[15, 15]) == (255, 255, 255)


@pytest.mark.parametrize("spec", GAMES, ids=lambda g: g.name)
def test_is_parallelizable_only_for_simultaneous_games(spec) -> None:
    env = _make(spec.id)
    simultaneous = env.unwrapped.game.tags.dynamics == SIMULTANEOUS
    assert env.unwrapped.metadata["is_parallelizable"] is simultaneous
    assert env.metadata["is_parallelizable"] is simultaneous
    if not simultaneous:
        with pytest.raises(AssertionError, match="is_parallelizable"):
            aec_to_parallel(env.unwrapped)


SIMULTANEOUS_IDS = [g.id for g in GAMES if g.parallel]


@pytest.mark.parametrize("game_id", SIMULTANEOUS_IDS)
def test_aec_to_parallel_gives_every_seat_its_mask(game_id: str) -> None:
    par = aec_to_parallel(_make(game_id, max_cycles=20).unwrapped)
    observations, _ = par.reset(seed=5)
    rng = np.random.default_rng(5)
    steps = 0
    while par.agents:
        for agent in par.agents:
            mask = observations[agent]["action_mask"]
            assert mask.sum() >= 1, f"{agent} has an all-zero mask after conversion"
        actions = {
            a: int(rng.choice(np.flatnonzero(observations[a]["action_mask"]))) for a in par.agents
        }
        observations, *_ = par.step(actions)
        steps += 1
    assert steps >= 1


@pytest.mark.parametrize("game_id", SIMULTANEOUS_IDS)
def test_converted_parallel_env_passes_parallel_api_test(game_id: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parallel_api_test(aec_to_parallel(_make(game_id, max_cycles=20).unwrapped), num_cycles=30)
