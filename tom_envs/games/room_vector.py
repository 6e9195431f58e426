"""What the batched engines of the rooms games (CollabCapture, CollabEscape) build the same way.

:class:`RoomVectorGame` is a :class:`~tom_envs.core.vector.VectorGame` for Alice and Bob: it
builds the configured rules and adopts their encoder's layout, starts every episode at the
scenario's start, and reads env ``i`` back as the rules' state from the engine's arrays, which
are named after the state's fields. :class:`RoomPartner` is a game's ``greedy`` bot as a table the
bot's own function fills. Each game's engine keeps its own tables, step, observations and masks.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import numpy as np

from tom_envs.core.vector import NamedPartner, VectorGame


class RoomVectorGame(VectorGame):
    """The shared part of the rooms games' batched engines (see the module docstring).

    A subclass sets :attr:`state_type`, calls :meth:`_init_rooms` first in its ``__init__``, and
    keeps one array per field of that state (``rooms``, ``turn``, ...), indexed by env first.
    """

    agents = ("player_0", "player_1")
    num_agents = 2
    #: the rules' state class (a dataclass) that :meth:`state` builds
    state_type: ClassVar[type]
    config: Any
    game: Any

    def _init_rooms(
        self, num_envs: int, kwargs: dict[str, Any], config: type, game: type, encoder: type
    ) -> Any:
        """Initialise the engine with its options from ``kwargs``, build ``config`` from the rest
        and the rules ``game`` from it, and adopt ``encoder``'s layout; returns the config."""
        cfg = self.config = config(**self._init_engine(num_envs, kwargs))
        self.game = game(cfg)
        self._take_layout(encoder(self.game))
        return cfg

    def start_state(self, i: int) -> Any:
        """The scenario's start: every episode starts there (no chance at the start)."""
        return self.game.initial_state(self.rng)

    def state(self, i: int) -> Any:
        """Env ``i`` as the rules' state: each field from the engine's array of that name."""
        values = {}
        for f in dataclasses.fields(self.state_type):
            v = getattr(self, f.name)[i]
            values[f.name] = tuple(x.item() for x in v) if np.ndim(v) else v.item()
        return self.state_type(**values)


class RoomPartner(NamedPartner):
    """A rooms game's ``greedy`` bot playing seats of every env of its engine: a table of its
    moves filled at construction by :meth:`_tabulate` (the bot's own function on the rules'
    views), read in ``__call__`` from the engine's state. (``optimal`` is a search, not tabulated.)
    """

    NAMES = ("greedy",)

    def __init__(self, engine: Any, name: str = "greedy", seats: tuple[int, ...] = (1,)) -> None:
        super().__init__(engine, name, seats)
        self._table = self._tabulate(engine)

    def _tabulate(self, engine: Any) -> np.ndarray:
        """The bot's move for every key its ``__call__`` reads (each game's own)."""
        raise NotImplementedError
