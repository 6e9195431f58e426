"""The rules: each round both players name a colour at once; both score 1 when the colours match.

A pure rules engine (no Gymnasium or PettingZoo): a frozen config, a frozen state, and a
:class:`~tom_envs.core.game.Game` subclass whose methods never mutate a state.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from tom_envs.core.game import SIMULTANEOUS, Game, GameTags, StepResult
from tom_envs.games.example.view import ExampleView, observe

COLORS = ("red", "green", "blue")


@dataclass(frozen=True)
class ExampleConfig:
    """Settings (each one is a declared argument in ``env.PARAMS``)."""

    rounds: int = 5


@dataclass(frozen=True)
class ExampleState:
    """Rounds played, every round's ``(player_0's colour, player_1's colour)``, the matches."""

    round: int = 0
    history: tuple[tuple[int, int], ...] = ()
    matches: int = 0


class ExampleGame(Game[ExampleState, ExampleView]):
    """Name a colour; both players score 1 in every round where the colours match."""

    name = "example"
    #: Fixed facts of the game (the properties of :class:`~tom_envs.core.game.Game`).
    num_players: int = 2
    num_actions: int = len(COLORS)  #: action ``k`` names ``COLORS[k]``
    #: Simultaneous, no chance, the past is public, one shared reward.
    tags: GameTags = GameTags(SIMULTANEOUS, "deterministic", "perfect", "identical")
    reward_range: tuple[float, float] = (0.0, 1.0)  #: 0 or 1 a round

    def __init__(self, config: ExampleConfig | None = None) -> None:
        self.config = config or ExampleConfig()

    @property
    def max_steps(self) -> int:
        """One joint step a round."""
        return self.config.rounds

    def initial_state(self, rng: np.random.Generator) -> ExampleState:
        """Round 0 (no chance: ``rng`` is unused)."""
        return ExampleState()

    def current_players(self, state: ExampleState) -> tuple[int, ...]:
        """Both players, every round."""
        return () if self.is_terminal(state) else (0, 1)

    def legal_actions(self, state: ExampleState, player: int) -> tuple[int, ...]:
        """Every colour until the last round is played."""
        return () if self.is_terminal(state) else tuple(range(len(COLORS)))

    def apply(
        self,
        state: ExampleState,
        actions: Mapping[int, int],
        rng: np.random.Generator,
        messages: Mapping[int, str] | None = None,
    ) -> StepResult[ExampleState]:
        """Record the joint choice; a match pays both players 1."""
        match = actions[0] == actions[1]
        history = (*state.history, (actions[0], actions[1]))
        nxt = ExampleState(state.round + 1, history, state.matches + int(match))
        return StepResult(nxt, (float(match), float(match)))

    def is_terminal(self, state: ExampleState) -> bool:
        """After ``rounds`` rounds."""
        return state.round >= self.config.rounds

    def observe(self, state: ExampleState, player: int) -> ExampleView:
        """See :mod:`tom_envs.games.example.view`."""
        return observe(self, state, player)
