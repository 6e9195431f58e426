"""CoBlock's fast paths against their plain definitions, on states of random and bot play.

The rules keep derived values per state (the free cells as bit masks, the world updated in place
from the cells a round changed, the target blocks in place counted from the change) and the
encoder keeps its one-hot grids per tuple of blocks and assembles the vector in one call. Each is
checked here against the computation it replaces: the legal actions from
:func:`placeable_cells`, the world sorted from the cells, ``matched`` counted afresh, and the
observation built entry by entry from the documented layout.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from tom_envs.agents import make_agent
from tom_envs.games.coblock.encode import CoBlockEncoder
from tom_envs.games.coblock.metrics import replay
from tom_envs.games.coblock.rules import (
    PLACE_OFFSET,
    ActionKind,
    CoBlockConfig,
    CoBlockGame,
    CoBlockState,
    cell_index,
    decode_action,
    placeable_cells,
)
from tom_envs.games.coblock.structures import COLORS
from tom_envs.registration import game_spec
from tom_envs.runner import play_episode

SPEC = game_spec("CoBlock")


def _random_states(cfg: CoBlockConfig, seeds: range) -> list[CoBlockState]:
    """Every state of random play (with a message now and then) over ``seeds``."""
    game = CoBlockGame(cfg)
    out = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        s = game.initial_state(rng)
        out.append(s)
        while not game.is_terminal(s):
            joint = {p: int(rng.choice(game.legal_actions(s, p))) for p in (0, 1)}
            talk = {0: f"round {s.round}"} if rng.random() < 0.2 else None
            s = game.apply(s, joint, rng, talk).state
            out.append(s)
    return out


def _bot_states(task_type: str, index: int, seed: int) -> tuple[CoBlockGame, list[CoBlockState]]:
    """Every state of a cooperative pair's episode (they build the target: success)."""
    agents = [make_agent("cooperative", SPEC), make_agent("cooperative", SPEC)]
    kwargs = {"task_type": task_type, "task_index": index}
    ep = play_episode(SPEC, agents, seed, env_kwargs=kwargs)
    game = CoBlockGame(CoBlockConfig(**kwargs))
    states = [replay(game, seed, ep.steps[: 2 * k]) for k in range(len(ep.steps) // 2 + 1)]
    assert states[-1].outcome == "success"
    return game, states


def _reference_legal(game: CoBlockGame, s: CoBlockState, player: int) -> tuple[int, ...]:
    cfg = game.config
    if s.outcome != "playing":
        return ()
    if cfg.end_rule == "all" and s.ended[player]:
        return (0,)
    n = cfg.cells
    free = [cell_index(cfg.grid, p) for p in placeable_cells(s.cells, cfg.grid)]
    out = [0, 1, 2]
    for c, count in enumerate(s.inventories[player]):
        if count > 0:
            out += [PLACE_OFFSET + c * n + i for i in free]
    out += sorted(PLACE_OFFSET + len(COLORS) * n + cell_index(cfg.grid, p) for p in s.cells)
    return tuple(out)


def _fresh(s: CoBlockState) -> CoBlockState:
    """The same state without any value kept on it."""
    return dataclasses.replace(s)


def _reference_vector(enc: CoBlockEncoder, v) -> np.ndarray:
    """The observation entry by entry, from the layout in encode.py's docstring."""
    cfg, n, o = enc.config, enc.n, enc.offsets
    out = np.zeros(enc.observation_shape, dtype=np.float32)
    for x, y, z, c in v.world:
        out[o["world"] + c * n + cell_index(cfg.grid, (x, y, z))] = 1
    for x, y, z, c in v.goal:
        out[o["my_goal"] + c * n + cell_index(cfg.grid, (x, y, z))] = 1
    for c, k in enumerate(v.inventory):
        out[o["my_inventory"] + c] = min(k / cfg.max_inventory, 1.0)
    out[o["round"]] = min(v.round / v.max_rounds, 1.0)
    mine, partner = v.last_result, v.partner_last
    out[o["my_last"] + (2 if mine is None else 0 if mine.ok else 1)] = 1
    if partner is not None:
        out[o["partner_last"] + int(decode_action(cfg, partner.action).kind)] = 1
        out[o["partner_last"] + len(ActionKind)] = float(partner.ok)
    out[o["new_message"]] = float(any(e.round == v.round - 1 and not e.mine for e in v.chat()))
    out[o["ended"]], out[o["ended"] + 1] = float(v.ended[0]), float(v.ended[1])
    return out


CONFIGS = [
    {},
    {"end_rule": "all", "reward": "progress", "max_rounds": 40},
    {"generated": True, "history_window": 2, "dialogue_window": 1},
]


@pytest.mark.parametrize("kwargs", CONFIGS)
def test_random_play_equals_the_plain_definitions(kwargs) -> None:
    cfg = CoBlockConfig(**kwargs)
    game, enc = CoBlockGame(cfg), CoBlockEncoder(cfg)
    states = _random_states(cfg, range(6))
    assert len(states) > 100 and max(len(s.world) for s in states) >= 8
    for s in states:
        cells = s.cells
        assert s.world == tuple(sorted((*p, c) for p, c in cells.items()))
        assert s.matched() == _fresh(s).matched()
        for p in (0, 1):
            assert game.legal_actions(s, p) == _reference_legal(game, s, p)
            assert game.legal_actions(_fresh(s), p) == _reference_legal(game, s, p)
            v = game.observe(s, p)
            assert np.array_equal(enc.encode(v), _reference_vector(enc, v))


@pytest.mark.parametrize("task_type,index", [("independent", 3), ("goal_dependent", 5)])
def test_bot_play_to_success_equals_the_plain_definitions(task_type, index) -> None:
    game, states = _bot_states(task_type, index, seed=index)
    enc = CoBlockEncoder(game.config)
    for s in states:
        assert s.world == tuple(sorted((*p, c) for p, c in s.cells.items()))
        assert s.matched() == _fresh(s).matched()
        for p in (0, 1):
            assert game.legal_actions(s, p) == _reference_legal(game, s, p)
            v = game.observe(s, p)
            assert np.array_equal(enc.encode(v), _reference_vector(enc, v))
    assert states[-1].matched() == len(states[-1].task.target_cells)


def test_a_hand_made_world_in_any_order_steps_like_its_sorted_twin() -> None:
    cfg = CoBlockConfig(task_type="independent", task_index=0)
    game = CoBlockGame(cfg)
    s = game.initial_state(np.random.default_rng(0))
    sorted_world = ((0, 0, 0, 1), (0, 1, 0, 1), (2, 0, 3, 0))
    twin = dataclasses.replace(s, world=sorted_world)
    shuffled = dataclasses.replace(s, world=sorted_world[::-1])
    colour = next(c for c, k in enumerate(s.inventories[0]) if k)
    place = PLACE_OFFSET + colour * cfg.cells + cell_index(cfg.grid, (0, 2, 0))
    brk = PLACE_OFFSET + len(COLORS) * cfg.cells + cell_index(cfg.grid, (2, 0, 3))
    a = game.apply(twin, {0: place, 1: brk}, np.random.default_rng(0)).state
    b = game.apply(shuffled, {0: place, 1: brk}, np.random.default_rng(0)).state
    assert a == b and a.world == ((0, 0, 0, 1), (0, 1, 0, 1), (0, 2, 0, colour))
    assert a.matched() == b.matched() == _fresh(a).matched()


def test_a_block_outside_the_grid_is_a_clear_error() -> None:
    cfg = CoBlockConfig(task_type="independent", task_index=0)
    game, enc = CoBlockGame(cfg), CoBlockEncoder(cfg)
    s = game.initial_state(np.random.default_rng(0))
    odd = dataclasses.replace(s, world=((cfg.grid[0], 0, 0, 0),))
    for p in (0, 1):  # the rules list what the reference computation lists
        assert game.legal_actions(odd, p) == _reference_legal(game, odd, p)
    with pytest.raises(ValueError, match="outside the grid"):
        enc.encode(game.observe(odd, 0))
