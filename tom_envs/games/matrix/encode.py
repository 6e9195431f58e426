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
        self.obs_size = self.state_size = (
            self.offset + self.w * 2 * self.n
        )  # the state: player_0's view
        #: The named pieces and their sizes, in order (the batched engine reads its layout here);
        #: ``history`` is W slots of ``2 n``, most recent first.
        self.pieces: tuple[tuple[str, int], ...] = (
            ("round", self.offset),
            ("history", self.w * 2 * self.n),
        )
        self.offsets = {"round": 0, "history": self.offset}
        self._cache: dict[int, tuple[tuple[tuple[int, int], ...], np.ndarray]] = {}

    def _rounds(self, history: tuple[tuple[int, int], ...], key: int) -> np.ndarray:
        """The one-hot part for ``history`` (most recent first).

        Consecutive calls for the same seat usually see the previous window plus one round: the
        previous vector is then shifted by one slot and the new round written in front, instead
        of re-encoding the whole history (O(1) Python work per step instead of O(T)).
        """
        n, n2 = self.n, 2 * self.n
        window = history[-self.w :]
        prev = self._cache.get(key)
        if prev is not None:
            last, vec = prev
            k = len(window)
            if k >= 1 and window[:-1] == last[len(last) - (k - 1) :] and len(last) >= k - 1:
                out = np.empty_like(vec)
                out[n2:] = vec[:-n2]
                out[:n2] = 0.0
                mine, other = window[-1]
                out[mine] = 1.0
                out[n + other] = 1.0
                if k < self.w:
                    out[k * n2 :] = 0.0
                self._cache[key] = (window, out)
                return out
        out = np.zeros(self.w * n2, dtype=np.float32)
        for slot, (mine, other) in enumerate(reversed(window)):
            out[slot * n2 + mine] = 1.0
            out[slot * n2 + n + other] = 1.0
        self._cache[key] = (window, out)
        return out

    def _fill(self, round_: int, history: tuple[tuple[int, int], ...], key: int) -> np.ndarray:
        out = np.empty(self.obs_size, dtype=np.float32)
        if self.offset:
            out[0] = round_ / self.config.horizon
        if history:
            out[self.offset :] = self._rounds(history, key)
        else:
            out[self.offset :] = 0.0
        return out

    def encode(self, view: MatrixView) -> np.ndarray:
        """The view as a float32 vector."""
        return self._fill(view.round, view.history, view.player)

    def encode_state(self, state: MatrixState) -> np.ndarray:
        """Joint history from player_0's side (both players see the same public history)."""
        return self._fill(state.round, state.history, -1)
