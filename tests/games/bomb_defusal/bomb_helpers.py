"""Shared helpers of the bomb-defusal tests: hand-built missions and one-line moves."""

from __future__ import annotations

import numpy as np

from tom_envs.games.bomb_defusal.maps import paper_map
from tom_envs.games.bomb_defusal.rules import ActionKind, BombGame, encode_action
from tom_envs.games.bomb_defusal.state import BombConfig, BombState, Mission

R, G, B = 0, 1, 2
RNG = np.random.default_rng(0)
PAPER = paper_map()
#: room id -> room index on the paper map
ROOM = {r: i for i, r in enumerate(PAPER.rooms)}


def mission(
    bombs: list[tuple[int, tuple[int, ...]]], start: int = 0, config: BombConfig | None = None
) -> Mission:
    """A paper-map mission from ``[(room id, sequence), ...]`` and a start room id."""
    cfg = config or BombConfig()
    return Mission(
        PAPER,
        tuple(ROOM[r] for r, _ in bombs),
        tuple(s for _, s in bombs),
        cfg.tool_colors,
        ROOM[start],
        cfg.points_per_phase,
    )


def new_game(**kw) -> BombGame:
    """A game; keyword arguments go to :class:`BombConfig`."""
    return BombGame(BombConfig(**kw))


def start(game: BombGame, bombs, at: int = 0) -> BombState:
    """The start state of a hand-built mission on ``game``."""
    return game.state_from_mission(mission(bombs, at, game.config))


def act(game: BombGame, state: BombState, kind: str, arg=None, message: str | None = None):
    """Apply the current player's ``inspect`` / ``move <room id>`` / ``use <colour>`` / ``wait``."""
    player = state.turn
    if kind == "inspect":
        a = encode_action(game.config, ActionKind.INSPECT)
    elif kind == "move":
        a = encode_action(game.config, ActionKind.GO_TO, state.mission.game_map.index(arg))
    elif kind == "use":
        a = encode_action(game.config, ActionKind.USE, arg)
    elif kind == "wait":
        from tom_envs.games.bomb_defusal.bots import wait_action

        a = encode_action(game.config, *wait_action(game.observe(state, player)))
    else:
        raise ValueError(kind)
    msgs = {player: message} if message else None
    return game.step(state, {player: a}, RNG, msgs)


def play(game: BombGame, state: BombState, moves) -> BombState:
    """Apply a list of ``(kind, arg)`` or ``(kind, arg, message)`` moves in turn order."""
    for move in moves:
        state = act(game, state, *move).state
    return state
