"""Shared fixtures of the CoBlock tests: a tiny hand-made task and games over it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from tom_envs.games.coblock.rules import (
    Action,
    ActionKind,
    CoBlockConfig,
    CoBlockGame,
    CoBlockState,
    encode_action,
)
from tom_envs.games.coblock.structures import COLOR_INDEX, Component
from tom_envs.games.coblock.tasks import Goal, Task

RED, BLUE, YELLOW = COLOR_INDEX["red"], COLOR_INDEX["blue"], COLOR_INDEX["yellow"]


def tiny_task(name: str = "tiny") -> Task:
    """player_0: a red column (0,0,0)-(0,1,0); player_1: a blue column at x=2 plus a yellow
    block hanging from it at (3,1,0). player_0 holds red 3 and yellow 1, player_1 blue 3."""
    g0 = Goal((Component("tower", "whole", ((0, 0, 0, RED), (0, 1, 0, RED))),))
    g1 = Goal(
        (
            Component("tower", "whole", ((2, 0, 0, BLUE), (2, 1, 0, BLUE))),
            Component("symbol", "whole", ((3, 1, 0, YELLOW),)),
        )
    )
    inv0 = (3, 0, 1, 0, 0, 0)
    inv1 = (0, 3, 0, 0, 0, 0)
    return Task(name, "skill_dependent", (g0, g1), (inv0, inv1), "manual")


def place(game: CoBlockGame, colour: int, pos: tuple[int, int, int]) -> int:
    """The action id of placing ``colour`` at ``pos``."""
    return encode_action(game.config, Action(ActionKind.PLACE, colour, pos))


def brk(game: CoBlockGame, pos: tuple[int, int, int]) -> int:
    """The action id of breaking the block at ``pos``."""
    return encode_action(game.config, Action(ActionKind.BREAK, -1, pos))


WAIT, SEND, END = int(ActionKind.WAIT), int(ActionKind.SEND_MESSAGE), int(ActionKind.END_TASK)


@pytest.fixture
def task() -> Task:
    """The tiny task."""
    return tiny_task()


@pytest.fixture
def make_game(task: Task) -> Callable[..., tuple[CoBlockGame, CoBlockState]]:
    """``make_game(**config) -> (game, initial state)`` on the tiny task (grid 4×3×2)."""

    def make(**config: Any) -> tuple[CoBlockGame, CoBlockState]:
        config.setdefault("task", task)
        config.setdefault("grid", (4, 3, 2))
        game = CoBlockGame(CoBlockConfig(**config))
        return game, game.initial_state(np.random.default_rng(0))

    return make


def step(game: CoBlockGame, state: CoBlockState, a0: int, a1: int, messages=None):
    """One validated joint step."""
    return game.step(state, {0: a0, 1: a1}, np.random.default_rng(0), messages)


def last(state: CoBlockState, player: int):
    """``player``'s record in the last round."""
    return next(r for r in reversed(state.records()) if r.player == player)


def bot_episode(a0: str, a1: str, task_type: str, index: int, seed: int = 0):
    """``(episode, final state, game)`` of two agents on built-in task ``index``."""
    from tom_envs.agents import make_agent
    from tom_envs.games.coblock.metrics import replay
    from tom_envs.registration import game_spec
    from tom_envs.runner import play_episode

    spec = game_spec("CoBlock")
    kwargs = {"task_type": task_type, "task_index": index}
    ep = play_episode(spec, [make_agent(a0, spec), make_agent(a1, spec)], seed, env_kwargs=kwargs)
    game = CoBlockGame(CoBlockConfig(**kwargs))
    return ep, replay(game, seed, ep.steps), game


def placements(state: CoBlockState, game: CoBlockGame, player: int) -> list[tuple[int, ...]]:
    """``player``'s successful placements, as blocks ``(x, y, z, colour)``, in order."""
    from tom_envs.games.coblock.rules import decode_action

    out = []
    for r in state.records():
        act = decode_action(game.config, r.action)
        if r.player == player and r.ok and act.kind == ActionKind.PLACE and act.pos is not None:
            out.append((*act.pos, act.color))
    return out
