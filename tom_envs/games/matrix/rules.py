"""Rules of the iterated two-player matrix games (pure: no gymnasium, no pettingzoo).

Two players choose simultaneously among the game's actions for ``horizon`` rounds; each round pays
both players from a fixed payoff table. Presets are the three games of the paper "Theory of Mind
Benchmarks are Broken for LLMs" (Tables 5-7): Rock-Paper-Scissors, the Iterated Battle of Sexes and
the Iterated Prisoner's Dilemma. Any other bimatrix game is a :class:`MatrixConfig` away.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from tom_envs.core.game import SIMULTANEOUS, Game, GameTags, StepResult
from tom_envs.games.matrix.view import MatrixView, observe

Payoffs = tuple[tuple[tuple[float, float], ...], ...]


@dataclass(frozen=True)
class MatrixPreset:
    """A named bimatrix game.

    Attributes:
        key: short name (``"rps"``).
        title: full name for text (``"Rock, Paper, Scissors"``).
        payoffs: ``payoffs[a][b] = (reward of player_0, reward of player_1)`` when player_0 plays
            ``a`` and player_1 plays ``b``; for player_0 this is the paper's "You" table.
        canonical: canonical action names (the paper's third name set).
        tit_for_tat: the paper's tit-for-tat style rule for this game (Sec. C.3):
            ``"best_response"`` to the other's last action, or ``"copy"`` it.
        utility: ``"zero_sum"`` or ``"general_sum"``.
        points_word: the verb phrase of the paper's prompts, "win N points" or "receive a score of".
    """

    key: str
    title: str
    payoffs: Payoffs
    canonical: tuple[str, ...]
    tit_for_tat: str
    utility: str
    points_word: str = "points"


PRESETS: dict[str, MatrixPreset] = {
    "rps": MatrixPreset(
        key="rps",
        title="Rock, Paper, Scissors",
        payoffs=(
            ((0, 0), (-1, 1), (1, -1)),
            ((1, -1), (0, 0), (-1, 1)),
            ((-1, 1), (1, -1), (0, 0)),
        ),
        canonical=("Rock", "Paper", "Scissors"),
        tit_for_tat="best_response",
        utility="zero_sum",
        points_word="score",
    ),
    "ibs": MatrixPreset(
        key="ibs",
        title="Battle of the Sexes",
        payoffs=(((10, 7), (0, 0)), ((0, 0), (7, 10))),
        canonical=("Fight", "Ballet"),
        tit_for_tat="copy",
        utility="general_sum",
    ),
    "ipd": MatrixPreset(
        key="ipd",
        title="Prisoner's Dilemma",
        payoffs=(((8, 8), (0, 10)), ((10, 0), (5, 5))),
        canonical=("Cooperate", "Defect"),
        tit_for_tat="copy",
        utility="general_sum",
    ),
}


@dataclass(frozen=True)
class MatrixConfig:
    """Settings of an iterated matrix game.

    Attributes:
        game: a key of :data:`PRESETS` (``"rps"``, ``"ibs"``, ``"ipd"``).
        horizon: number of rounds T (the paper: 100).
        window: how many past rounds a player sees (``None``: the whole history, as the paper's
            prompts show it). The vector holds exactly these rounds, so text and vector agree.
        include_round: whether the vector holds the round number (t / T).
        action_names: ``"letters"`` (J, F, B), ``"repeated"`` (each letter 21 times),
            ``"canonical"`` (Rock/Paper/Scissors, Fight/Ballet, Cooperate/Defect), ``"nonsense"``
            (Pasta, Rice, Bread) - the paper's four name sets (App. C) - or ``"rps"`` (R, P, S:
            the names of the paper's Tables 1-2, Rock, Paper, Scissors only).
    """

    game: str = "rps"
    horizon: int = 100
    window: int | None = None
    include_round: bool = True
    action_names: str = "letters"
    preset: MatrixPreset = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.game not in PRESETS:
            raise ValueError(f"unknown matrix game {self.game!r}; choose from {sorted(PRESETS)}")
        if self.horizon < 1:
            raise ValueError(f"horizon must be >= 1, got {self.horizon}")
        if self.window is not None and self.window < 1:
            raise ValueError(f"window must be None or >= 1, got {self.window}")
        if self.action_names not in ACTION_NAME_SETS:
            raise ValueError(
                f"action_names must be one of {sorted(ACTION_NAME_SETS)}, got {self.action_names!r}"
            )
        if self.action_names == "rps" and self.game != "rps":
            raise ValueError(
                f"action_names='rps' (R, P, S) names Rock, Paper, Scissors only, not {self.game!r}"
            )
        object.__setattr__(self, "preset", PRESETS[self.game])

    @property
    def num_actions(self) -> int:
        """Actions per player."""
        return len(self.preset.payoffs)

    @property
    def seen_rounds(self) -> int:
        """Rounds a player sees (the window, or the whole horizon)."""
        return self.horizon if self.window is None else min(self.window, self.horizon)


ACTION_NAME_SETS = ("letters", "repeated", "canonical", "nonsense", "rps")
_LETTERS = ("J", "F", "B")
#: The paper's Tables 1-2 name the RPS actions R, P and S (App. C).
_RPS = ("R", "P", "S")
_NONSENSE = ("Pasta", "Rice", "Bread")


def action_names(config: MatrixConfig) -> tuple[str, ...]:
    """The action names of ``config.action_names`` for this game (App. C of the paper)."""
    n = config.num_actions
    if config.action_names == "letters":
        return _LETTERS[:n]
    if config.action_names == "repeated":
        return tuple(c * 21 for c in _LETTERS[:n])
    if config.action_names == "canonical":
        return config.preset.canonical
    if config.action_names == "rps":
        return _RPS
    return _NONSENSE[:n]


@dataclass(frozen=True)
class MatrixState:
    """Value-semantics state: rounds played, the joint actions so far and the scores.

    ``mirrored`` is ``history`` from player_1's side, ``(player_1's, player_0's)`` per round,
    kept beside it so that views never rebuild it (it is derived: equality ignores it).
    """

    round: int
    history: tuple[tuple[int, int], ...]
    scores: tuple[float, float]
    mirrored: tuple[tuple[int, int], ...] = field(default=(), compare=False, repr=False)

    def history_of(self, player: int) -> tuple[tuple[int, int], ...]:
        """The history as ``(player's action, other's action)`` per round."""
        if player == 0:
            return self.history
        if len(self.mirrored) != len(self.history):  # built by hand without ``mirrored``
            return tuple((b, a) for a, b in self.history)
        return self.mirrored


def payoff(config: MatrixConfig, player: int, own: int, other: int) -> float:
    """Reward of ``player`` when it plays ``own`` and the other player plays ``other``."""
    table = config.preset.payoffs
    return float(table[own][other][0] if player == 0 else table[other][own][1])


def payoff_matrix(config: MatrixConfig, player: int) -> np.ndarray:
    """``M[own, other]``: ``player``'s reward table, egocentric."""
    n = config.num_actions
    return np.array([[payoff(config, player, a, b) for b in range(n)] for a in range(n)])


class MatrixGame(Game[MatrixState, MatrixView]):
    """The iterated matrix game's rules."""

    name = "matrix"
    num_players: int = 2  #: always two

    def __init__(self, config: MatrixConfig | None = None) -> None:
        self.config = config or MatrixConfig()

    @property
    def num_actions(self) -> int:
        """Actions per player."""
        return self.config.num_actions

    @property
    def tags(self) -> GameTags:
        """Simultaneous, deterministic, perfect recall of public actions."""
        return GameTags(
            dynamics=SIMULTANEOUS,
            chance="deterministic",
            information="perfect",
            utility=self.config.preset.utility,
        )

    @property
    def reward_range(self) -> tuple[float, float]:
        """Smallest and largest payoff of the table."""
        flat = [r for row in self.config.preset.payoffs for cell in row for r in cell]
        return (float(min(flat)), float(max(flat)))

    @property
    def max_steps(self) -> int:
        """The horizon."""
        return self.config.horizon

    def initial_state(self, rng: np.random.Generator) -> MatrixState:
        """Round 0, empty history (no chance: ``rng`` is unused)."""
        return MatrixState(round=0, history=(), scores=(0.0, 0.0))

    def current_players(self, state: MatrixState) -> tuple[int, ...]:
        """Both players act every round until the horizon."""
        return () if self.is_terminal(state) else (0, 1)

    def legal_actions(self, state: MatrixState, player: int) -> tuple[int, ...]:
        """Every action, every round."""
        return () if self.is_terminal(state) else tuple(range(self.num_actions))

    def apply(
        self,
        state: MatrixState,
        actions: Mapping[int, int],
        rng: np.random.Generator,
        messages: Mapping[int, str] | None = None,
    ) -> StepResult[MatrixState]:
        """Pay both players from the table and append the joint action to the history."""
        a, b = actions[0], actions[1]
        r0, r1 = payoff(self.config, 0, a, b), payoff(self.config, 1, b, a)
        nxt = MatrixState(
            round=state.round + 1,
            history=(*state.history, (a, b)),
            scores=(state.scores[0] + r0, state.scores[1] + r1),
            mirrored=(*state.history_of(1), (b, a)),
        )
        return StepResult(nxt, (r0, r1))

    def is_terminal(self, state: MatrixState) -> bool:
        """After ``horizon`` rounds."""
        return state.round >= self.config.horizon

    def observe(self, state: MatrixState, player: int) -> MatrixView:
        """The player's egocentric view (see :mod:`tom_envs.games.matrix.view`)."""
        return observe(self, state, player)
