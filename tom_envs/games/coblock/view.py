"""What one CoBlock agent sees: the only place that decides it.

Public (paper §2.1, "the state of the world consists of all public information"): the blocks in
the world, the dialogue, every agent's actions and their results, who has ended the task, the
round. Private: each agent's goal and inventory. A view holds **my** goal and **my** inventory and
nothing of the partner's; the partner's goal and inventory are left to be inferred from the
dialogue and its actions (the partner-state modelling of paper §3).

The view is egocentric: dialogue and action entries say ``mine=True`` for my own, and
``ended = (me, partner)``. Coordinates are the world's (the world is shared).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, NamedTuple

from tom_envs.core.game import converted_history
from tom_envs.games.coblock.structures import Block, Pos, pos_of

if TYPE_CHECKING:
    from tom_envs.games.coblock.rules import CoBlockGame, CoBlockState


class ChatEntry(NamedTuple):
    """A line of the dialogue: the round it was sent in, whether I sent it, the text."""

    round: int
    mine: bool
    text: str


class ActionEntry(NamedTuple):
    """An action of either agent: round, whether it is mine, action id, command, success,
    the environment's response."""

    round: int
    mine: bool
    action: int
    text: str
    ok: bool
    message: str


@dataclass(frozen=True)
class CoBlockView:
    """One agent's view (plain data, like the state: :meth:`chat` and :meth:`records` give the
    dialogue and the actions as named tuples).

    Attributes:
        player: my seat (0 or 1).
        round: rounds played so far (the current round is ``round + 1`` in 1-based text).
        max_rounds: the round limit.
        grid: ``(X, Y, Z)``.
        goal: my goal's blocks ``(x, y, z, colour)``, component by component in build order.
        goal_parts: one description per component of my goal ("a red tower of 4 blocks, ...").
        inventory: my block count per colour.
        world: every block in the world, sorted.
        dialogue: the last ``dialogue_window`` messages as ``(round, mine, text)``, oldest first.
        history: the last ``history_window`` actions of both agents as
            ``(round, mine, action, command, took effect, response)``, oldest first.
        dialogue_total: messages sent so far (``dialogue`` may show only the last ones).
        history_total: actions taken so far.
        ended: ``(I ended the task, the partner did)``.
        outcome: ``"playing"``, ``"success"``, ``"ended"`` or ``"timeout"``.
        legal_actions: what I may do now (empty once the episode is over).
    """

    player: int
    round: int
    max_rounds: int
    grid: tuple[int, int, int]
    goal: tuple[Block, ...]
    goal_parts: tuple[str, ...]
    inventory: tuple[int, ...]
    world: tuple[Block, ...]
    dialogue: tuple[tuple[int, bool, str], ...]
    history: tuple[tuple[int, bool, int, str, bool, str], ...]
    dialogue_total: int
    history_total: int
    ended: tuple[bool, bool]
    outcome: str
    legal_actions: tuple[int, ...]

    @property
    def goal_blocks(self) -> tuple[Block, ...]:
        """Every block of my goal (same as ``goal``)."""
        return self.goal

    def chat(self) -> tuple[ChatEntry, ...]:
        """The dialogue as :class:`ChatEntry` values."""
        return tuple(ChatEntry(*m) for m in self.dialogue)

    def records(self) -> tuple[ActionEntry, ...]:
        """The action history as :class:`ActionEntry` values."""
        return tuple(ActionEntry(*e) for e in self.history)

    @cached_property
    def cells(self) -> dict[Pos, int]:
        """Occupied cell -> colour."""
        return {pos_of(b): b[3] for b in self.world}

    @cached_property
    def missing(self) -> tuple[Block, ...]:
        """Blocks of my goal not in place with their colour (paper's ``<MissingBlocks>``)."""
        cells = self.cells
        return tuple(b for b in self.goal if cells.get(pos_of(b)) != b[3])

    @cached_property
    def extra(self) -> tuple[Block, ...]:
        """Blocks in the world that are not part of my goal (``<ExtraBlocks>``): the partner's
        blocks, and mistakes (a wrong colour in one of my cells shows here and in ``missing``)."""
        mine = set(self.goal)
        return tuple(b for b in self.world if b not in mine)

    @property
    def last_result(self) -> ActionEntry | None:
        """My most recent action and its result (``<LastActionResponse>``)."""
        for entry in reversed(self.history):
            if entry[1]:
                return ActionEntry(*entry)
        return None

    @property
    def partner_last(self) -> ActionEntry | None:
        """The partner's most recent action and its result."""
        for entry in reversed(self.history):
            if not entry[1]:
                return ActionEntry(*entry)
        return None


_new = object.__new__
_set_dict = CoBlockView.__dict__["__dict__"].__set__


def _mine(history: tuple, player: int) -> tuple:
    return tuple([(r, who == player, a, text, ok, msg) for r, who, a, text, ok, msg in history])


def _history(game: CoBlockGame, history: tuple, player: int) -> tuple:
    """The whole history from ``player``'s side (only new records converted: ``converted_history``)."""
    return converted_history(game._histories, player, history, _mine)


def observe(game: CoBlockGame, state: CoBlockState, player: int) -> CoBlockView:
    """Build ``player``'s view of ``state``."""
    if player not in (0, 1):
        raise ValueError(f"player must be 0 or 1, got {player}")
    cfg = game.config
    dialogue = state.dialogue
    if cfg.dialogue_window is not None:
        dialogue = dialogue[len(dialogue) - cfg.dialogue_window :] if cfg.dialogue_window else ()
    history = _history(game, state.history, player)
    if cfg.history_window is not None:
        history = history[len(history) - cfg.history_window :] if cfg.history_window else ()
    goal = state.task.goals[player]
    parts = game._goal_parts.get(id(goal))
    if parts is None or parts[0] is not goal:  # computed once per goal (tasks are immutable)
        if len(game._goal_parts) >= 1024:
            game._goal_parts.clear()
        parts = game._goal_parts[id(goal)] = (goal, tuple(c.description for c in goal.components))
    values = {
        "player": player,
        "round": state.round,
        "max_rounds": cfg.max_rounds,
        "grid": cfg.grid,
        "goal": goal.blocks,
        "goal_parts": parts[1],
        "inventory": state.inventories[player],
        "world": state.world,
        "dialogue": tuple([(r, sender == player, text) for r, sender, text in dialogue])
        if dialogue
        else (),
        "history": history,
        "dialogue_total": len(state.dialogue),
        "history_total": len(state.history),
        "ended": (state.ended[player], state.ended[1 - player]),
        "outcome": state.outcome,
        "legal_actions": game.legal_actions(state, player),
    }
    view = _new(CoBlockView)  # the frozen dataclass, filled with one call (no __post_init__)
    _set_dict(view, values)
    return view
