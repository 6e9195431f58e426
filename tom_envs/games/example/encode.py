"""The view as a vector for RL: ``[round / rounds, one-hot(my last), one-hot(partner's last)]``."""

from __future__ import annotations

import numpy as np

from tom_envs.core.game import Encoder
from tom_envs.games.example.rules import COLORS, ExampleGame, ExampleState
from tom_envs.games.example.view import ExampleView, observe

N = len(COLORS)


class ExampleEncoder(Encoder[ExampleView, ExampleState]):
    """No game logic: the same numbers the view holds (zeros before the first round)."""

    obs_size = state_size = 1 + 2 * N  # the state is player_0's view (nothing is hidden)

    def __init__(self, game: ExampleGame) -> None:
        self.game = game

    def encode(self, view: ExampleView) -> np.ndarray:
        """The view's vector."""
        out = np.zeros(1 + 2 * N, dtype=np.float32)
        out[0] = view.round / view.rounds
        if view.my_last is not None and view.partner_last is not None:
            out[1 + view.my_last] = 1.0
            out[1 + N + view.partner_last] = 1.0
        return out

    def encode_state(self, state: ExampleState) -> np.ndarray:
        """Player_0's vector."""
        return self.encode(observe(self.game, state, 0))
