"""Coarse action classes of a game (ϕ): what a next-action question asks about when the game has
too many actions for a fair multiple-choice question (Guandan's 280 plays, CoBlock's 1,263
placements, Hanabi's 20 moves).

A game declares them where it keeps its metrics and exports them from ``env.py`` as the optional
hook ``action_classes(**config) -> ActionClasses`` (:data:`tom_envs.core.contract.OPTIONAL_HOOKS`);
:mod:`tom_envs.partners.prediction` then asks "what kind of move will <partner> make next?" over
the class names, and scores it against the class of the partner's actual move.

Core: imports only the standard library.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class ActionClasses:
    """The classes of a game's actions.

    Attributes:
        names: the class names as options (distinct, in a fixed order).
        of: the class index of an action id.
        noun: what the question calls a class (``"kind of move"``).
    """

    names: tuple[str, ...]
    of: Callable[[int], int]
    noun: str = "kind of move"

    def __post_init__(self) -> None:
        if len(self.names) < 2 or len(set(self.names)) != len(self.names):
            raise ValueError(f"action classes need two or more distinct names, got {self.names}")

    def __call__(self, action: int) -> int:
        """The class index of ``action`` (``ValueError`` when the game maps it outside)."""
        k = int(self.of(int(action)))
        if not 0 <= k < len(self.names):
            raise ValueError(f"action {action} maps to class {k}, not in 0..{len(self.names) - 1}")
        return k


__all__ = ["ActionClasses"]
