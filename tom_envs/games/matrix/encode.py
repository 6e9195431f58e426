"""Vector rendering of a matrix-game view (no game logic).

Layout of :meth:`MatrixEncoder.encode`, most recent round first::

    [round / T]                                   if include_round
    for each of the last W rounds (W = window, or T):
        one-hot(my action)  | one-hot(partner's action)     (zeros for rounds not yet played)

With ``window=1, include_round=False`` the vector is exactly the last joint action (all zeros
before the first round): the state of the paper's tabular RMax baseline.
"""

from __future__ import annotations

import numpy as np

from tom_envs.core.game import Encoder
from tom_envs.games.matrix.rules import MatrixConfig, MatrixState
from tom_envs.games.matrix.view import MatrixView


class MatrixEncoder(Encoder[MatrixView, MatrixState]):
    """One-hot window of joint actions (+ the round)."""

    def __init__(self, config: MatrixConfig) -> None:
        self.config = config
        self.n = config.num_actions
        self.w = config.seen_rounds
        self.offset = 1 if config.include_round else 0
        self._size = self.offset + self.w * 2 * self.n

    @property
    def observation_shape(self) -> tuple[int, ...]:
        """``(include_round + W * 2 * n_actions,)``."""
        return (self._size,)

    @property
    def state_shape(self) -> tuple[int, ...]:
        """The global state is player_0's view (the game has no private information)."""
        return (self._size,)

    def _fill(self, round_: int, history: tuple[tuple[int, int], ...]) -> np.ndarray:
        out = np.zeros(self._size, dtype=np.float32)
        if self.offset:
            out[0] = round_ / self.config.horizon
        n2 = 2 * self.n
        for slot, (mine, other) in enumerate(reversed(history[-self.w :])):
            base = self.offset + slot * n2
            out[base + mine] = 1.0
            out[base + self.n + other] = 1.0
        return out

    def encode(self, view: MatrixView) -> np.ndarray:
        """The view as a float32 vector."""
        return self._fill(view.round, view.history)

    def encode_state(self, state: MatrixState) -> np.ndarray:
        """Joint history from player_0's side (both players see the same public history)."""
        return self._fill(state.round, state.history)
