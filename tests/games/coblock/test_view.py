"""CoBlock views and vectors: private goals and inventories stay private, views are egocentric."""

from __future__ import annotations

import numpy as np

from tom_envs.games.coblock.encode import CoBlockEncoder, pieces
from tom_envs.games.coblock.env import make_bundle
from tom_envs.games.coblock.rules import CoBlockConfig, CoBlockGame, cell_index
from tom_envs.games.coblock.structures import COLORS, Component
from tom_envs.games.coblock.tasks import Goal, Task
from tom_envs.games.coblock.text import CoBlockText

from .conftest import BLUE, RED, SEND, WAIT, YELLOW, place, step, tiny_task

GREEN, PURPLE = COLORS.index("green"), COLORS.index("purple")


def _other_partner(task: Task) -> Task:
    """The same task for player_0, but a different goal and inventory for player_1."""
    g1 = Goal((Component("symbol", "whole", ((3, 0, 1, GREEN), (3, 1, 1, PURPLE))),))
    return Task(
        task.name, task.type, (task.goals[0], g1), (task.inventories[0], (0, 0, 0, 4, 4, 0))
    )


def _play(task: Task, text_format: str = "both"):
    """A few rounds in which player_1 only waits or talks (so both tasks allow the same play)."""
    bundle = make_bundle(task=task, grid=(4, 3, 2), text_format=text_format)
    game: CoBlockGame = bundle.game  # type: ignore[assignment]
    s = game.initial_state(np.random.default_rng(0))
    states = [s]
    for a0, a1, msg in (
        (place(game, RED, (0, 0, 0)), SEND, {1: "hi there"}),
        (SEND, WAIT, {0: "my goal is red"}),
        (place(game, YELLOW, (1, 0, 0)), WAIT, None),
    ):
        s = step(game, s, a0, a1, msg).state
        states.append(s)
    return bundle, states


def test_partner_goal_and_inventory_are_hidden() -> None:
    task = tiny_task()
    b1, states1 = _play(task)
    b2, states2 = _play(_other_partner(task))
    for s1, s2 in zip(states1, states2, strict=True):
        v1, v2 = b1.game.observe(s1, 0), b2.game.observe(s2, 0)
        assert v1 == v2, "player_0's view depends on player_1's private goal or inventory"
        assert np.array_equal(b1.encoder.encode(v1), b2.encoder.encode(v2))
        assert b1.text.text_observation(v1) == b2.text.text_observation(v2)
        # and the partner does see a difference in its own view
        assert b1.game.observe(s1, 1) != b2.game.observe(s2, 1)


def test_view_contents_are_mine() -> None:
    bundle, states = _play(tiny_task())
    s = states[-1]
    v0, v1 = bundle.game.observe(s, 0), bundle.game.observe(s, 1)
    assert v0.goal_blocks == ((0, 0, 0, RED), (0, 1, 0, RED))
    assert v0.inventory == s.inventories[0] and v1.inventory == s.inventories[1]
    assert v0.world == v1.world == s.world
    assert [m.mine for m in v0.chat()] == [False, True]
    assert [m.mine for m in v1.chat()] == [True, False]
    assert v0.last_result is not None and v0.last_result.mine and v0.last_result.ok
    assert v0.partner_last is not None and not v0.partner_last.mine
    assert v0.missing == ((0, 1, 0, RED),)
    assert v0.extra == ((1, 0, 0, YELLOW),)
    text = bundle.text.observation_text(v0)
    for hidden in ("blue", "(2, 0, 0)", "(3, 1, 0)"):
        assert hidden not in text, f"player_0's text mentions {hidden!r} of player_1's goal"


def test_seat_swap_symmetry() -> None:
    task = tiny_task()
    swapped = Task(task.name, task.type, task.goals[::-1], task.inventories[::-1])
    g1 = CoBlockGame(CoBlockConfig(task=task, grid=(4, 3, 2)))
    g2 = CoBlockGame(CoBlockConfig(task=swapped, grid=(4, 3, 2)))
    red, blue = (RED, (0, 0, 0)), (BLUE, (2, 0, 0))  # player_0's and player_1's first blocks
    s1, s2 = (
        step(g, g.initial_state(np.random.default_rng(0)), place(g, *a0), place(g, *a1)).state
        for g, a0, a1 in ((g1, red, blue), (g2, blue, red))  # the same round, seats swapped
    )
    a, b = g1.observe(s1, 0), g2.observe(s2, 1)
    assert (a.goal, a.inventory, a.world, a.legal_actions) == (
        b.goal,
        b.inventory,
        b.world,
        b.legal_actions,
    )
    enc1, enc2 = CoBlockEncoder(g1.config), CoBlockEncoder(g2.config)
    assert np.array_equal(enc1.encode(a), enc2.encode(b))


def test_windows() -> None:
    task = tiny_task()
    game = CoBlockGame(
        CoBlockConfig(task=task, grid=(4, 3, 2), history_window=2, dialogue_window=1)
    )
    s = game.initial_state(np.random.default_rng(0))
    for i in range(3):
        s = step(game, s, SEND, WAIT, {0: f"m{i}"}).state
    v = game.observe(s, 0)
    assert [m.text for m in v.chat()] == ["m2"] and v.dialogue_total == 3
    assert len(v.history) == 2 and v.history_total == 6
    text = CoBlockText(game.config).observation_text(v)
    assert "m2" in text and "m1" not in text


# ------------------------------------------------------------------------------ encode
def test_vector_layout() -> None:
    task = tiny_task()
    cfg = CoBlockConfig(task=task, grid=(4, 3, 2))
    game, enc = CoBlockGame(cfg), CoBlockEncoder(cfg)
    n = cfg.cells
    assert [p[0] for p in pieces(cfg)] == [
        "world",
        "my_goal",
        "my_inventory",
        "round",
        "my_last",
        "partner_last",
        "new_message",
        "ended",
    ]
    assert enc.observation_shape == (2 * 6 * n + 19,)
    assert enc.state_shape == (3 * 6 * n + 15,)
    s = game.initial_state(np.random.default_rng(0))
    s = step(game, s, place(game, RED, (0, 0, 0)), SEND, {1: "hello"}).state
    v = game.observe(s, 0)
    x = enc.encode(v)
    o = enc.offsets
    world = np.flatnonzero(x[: 6 * n])
    assert world.tolist() == [RED * n + cell_index(cfg.grid, (0, 0, 0))]
    goal = np.flatnonzero(x[o["my_goal"] : o["my_goal"] + 6 * n]).tolist()
    assert goal == sorted(RED * n + cell_index(cfg.grid, p) for p in ((0, 0, 0), (0, 1, 0)))
    assert x[o["my_inventory"] + RED] == np.float32(2 / 30)
    assert x[o["round"]] == np.float32(1 / 60)
    assert x[o["my_last"]] == 1.0  # my placement took effect
    assert x[o["partner_last"] + 1] == 1.0 and x[o["partner_last"] + 5] == 1.0  # send, ok
    assert x[o["new_message"]] == 1.0
    assert enc.encode(game.observe(s, 1))[o["new_message"]] == 0.0  # its own message
    state = enc.encode_state(s)
    assert state[RED * n + cell_index(cfg.grid, (0, 0, 0))] == 1.0
    g1 = [6 * n * 2 + BLUE * n + cell_index(cfg.grid, (2, 0, 0))]
    assert state[g1[0]] == 1.0  # player_1's goal is in the critic's state only
    x[:] = 0  # the encoder hands out copies
    assert enc.encode(v).any()


def test_vector_hides_nothing_extra() -> None:
    """The vector is a function of the view: a view equal in every field encodes equally."""
    task = tiny_task()
    b1, st1 = _play(task)
    b2, st2 = _play(_other_partner(task))
    assert np.array_equal(
        b1.encoder.encode(b1.game.observe(st1[-1], 0)),
        b2.encoder.encode(b2.game.observe(st2[-1], 0)),
    )
    assert not np.array_equal(b1.encoder.encode_state(st1[-1]), b2.encoder.encode_state(st2[-1]))
