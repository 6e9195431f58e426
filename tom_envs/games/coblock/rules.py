"""Rules of CoBlock, the collaborative blocks world of paper 003 (pure: no gymnasium, no pettingzoo).

Two agents build a target structure on an integer 3D grid (``y`` up, ground ``y = 0``). Each has a
private goal (a part of the target) and a private inventory of coloured blocks. Every round both
choose one action at the same time; the actions are applied one after the other (player_0 first
in even rounds, player_1 first in odd rounds, so neither seat always wins a race) and the round
advances. Actions (paper §2.1):

* ``place_block(colour, pos)``: legal when the cell is inside the grid and empty, the agent holds
  a block of that colour and the cell is on the ground or face-adjacent to a block (the gravity
  rule, :func:`~tom_envs.games.coblock.structures.supported`). One block leaves the inventory.
* ``break_block(pos)``: legal when a block is there; the block is gone for good (not returned).
* ``send_message``: the text travels through the core message channel (``Game.apply``'s
  ``messages``) and joins the public dialogue. Without text it fails and sends nothing. Text sent
  with any *other* action is not delivered (one action per round, as in the paper), unless
  ``chat_with_actions=True``.
* ``wait``; ``end_task``.

Legality is decided on the state both agents saw. If the partner's action, applied first in the
same round, makes an action impossible (it took the cell, or broke the only neighbour), the action
fails with the original code's message ("Block exists", "Block position (x, y, z) is not either on
the ground or adjacent to any existing block.") and changes nothing.

The episode ends with success when every target block is in place with its colour (extra blocks
are not checked, as in the original ``validCurrentStructure``), when an agent ends the task
(``end_rule="either"``, the paper; ``"all"``: once every agent has ended, as the original code),
or after ``max_rounds`` rounds.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from operator import itemgetter

import numpy as np

from tom_envs.core.game import SIMULTANEOUS, Game, GameTags, StepResult
from tom_envs.games.coblock.state import (
    END_RULES,
    REWARDS,
    TASK_CHOICES,
    TEXT_FORMATS,
    ActionRecord,
    ChatLine,
    CoBlockConfig,
    CoBlockState,
    Outcome,
    task_from_json,
    task_to_json,
)
from tom_envs.games.coblock.structures import COLORS, NEIGHBOURS, Pos, fmt_pos, in_bounds, supported
from tom_envs.games.coblock.tasks import TASK_TYPES, Task, generate_task
from tom_envs.games.coblock.view import CoBlockView, observe

#: Re-exported: the settings and state values live in :mod:`~tom_envs.games.coblock.state`.
__all__ = [
    "END_RULES", "PLACE_OFFSET", "REWARDS", "TASK_CHOICES", "TEXT_FORMATS", "Action", "ActionKind",
    "ActionRecord", "ChatLine", "CoBlockConfig", "CoBlockGame", "CoBlockState", "Outcome",
    "cell_index", "cell_pos", "command_text", "decode_action", "encode_action", "placeable_cells",
    "task_from_json", "task_to_json",
]  # fmt: skip


class ActionKind(IntEnum):
    """The five kinds of action."""

    WAIT = 0
    SEND_MESSAGE = 1
    END_TASK = 2
    PLACE = 3
    BREAK = 4


@dataclass(frozen=True)
class Action:
    """A decoded action: its kind and, for place/break, the colour and cell."""

    kind: ActionKind
    color: int = -1
    pos: Pos | None = None


# ---------------------------------------------------------------------- action catalogue
PLACE_OFFSET = 3


def cell_index(grid: tuple[int, int, int], pos: Pos) -> int:
    """Index of a cell: ``(x * Y + y) * Z + z``."""
    return (pos[0] * grid[1] + pos[1]) * grid[2] + pos[2]


def cell_pos(grid: tuple[int, int, int], index: int) -> Pos:
    """Inverse of :func:`cell_index`."""
    xy, z = divmod(index, grid[2])
    x, y = divmod(xy, grid[1])
    return (x, y, z)


def encode_action(config: CoBlockConfig, action: Action) -> int:
    """The action id of ``action``.

    Layout: ``0`` wait, ``1`` send_message, ``2`` end_task, ``3 + colour * cells + cell`` place,
    ``3 + colours * cells + cell`` break.
    """
    if action.kind < ActionKind.PLACE:
        return int(action.kind)
    if action.pos is None or not in_bounds(action.pos, config.grid):
        raise ValueError(f"position {action.pos} is outside the grid {config.grid}")
    cell = cell_index(config.grid, action.pos)
    if action.kind == ActionKind.PLACE:
        if not 0 <= action.color < len(COLORS):
            raise ValueError(f"unknown colour index {action.color}")
        return PLACE_OFFSET + action.color * config.cells + cell
    return PLACE_OFFSET + len(COLORS) * config.cells + cell


def decode_action(config: CoBlockConfig, action: int) -> Action:
    """The :class:`Action` of an action id (raises ``ValueError`` when out of range)."""
    if not 0 <= action < config.num_actions:
        raise ValueError(f"action {action} is out of range [0, {config.num_actions})")
    if action < PLACE_OFFSET:
        return Action(ActionKind(action))
    rest = action - PLACE_OFFSET
    color, cell = divmod(rest, config.cells)
    pos = cell_pos(config.grid, cell)
    if color == len(COLORS):
        return Action(ActionKind.BREAK, -1, pos)
    return Action(ActionKind.PLACE, color, pos)


def command_text(action: Action, message: str | None = None) -> str:
    """The paper's command syntax for an action (App. B.1)."""
    if action.kind == ActionKind.PLACE:
        assert action.pos is not None
        return f'place_block(block_type="{COLORS[action.color]}", pos={fmt_pos(action.pos)})'
    if action.kind == ActionKind.BREAK:
        assert action.pos is not None
        return f"break_block(pos={fmt_pos(action.pos)})"
    if action.kind == ActionKind.SEND_MESSAGE:
        shown = "..." if message is None else message.replace('"', "'")
        return f'send_message(message="{shown}")'
    if action.kind == ActionKind.END_TASK:
        return "end_task()"
    return "wait()"


def placeable_cells(cells: Mapping[Pos, int], grid: tuple[int, int, int]) -> list[Pos]:
    """Empty in-grid cells a block may be placed in now (ground, or next to a block), sorted."""
    out = {(x, 0, z) for x in range(grid[0]) for z in range(grid[2])}
    for x, y, z in cells:
        for dx, dy, dz in NEIGHBOURS:
            q = (x + dx, y + dy, z + dz)
            if in_bounds(q, grid):
                out.add(q)
    return sorted(p for p in out if p not in cells)


_ALWAYS = (int(ActionKind.WAIT), int(ActionKind.SEND_MESSAGE), int(ActionKind.END_TASK))


def _picker(indices: list[int], n: int) -> Callable[[Sequence[int]], tuple[int, ...]]:
    """A function taking a row of ``n`` consecutive action ids to ``(row[0] + i for i in
    indices)`` (one C call for two or more indices inside the row; ``indices`` ascend)."""
    if indices and not (indices[0] >= 0 and indices[-1] < n):  # blocks outside the grid
        return lambda row: tuple([row[0] + i for i in indices])
    if len(indices) >= 2:
        return itemgetter(*indices)
    if indices:
        i = indices[0]
        return lambda row: (row[i],)
    return lambda row: ()


_EVENTS: dict[tuple[int, str, bool], str] = {}


def _event(player: int, name: str, ok: bool) -> str:
    """``player_<p>:<kind>:ok|failed`` (the strings kept)."""
    key = (player, name, ok)
    hit = _EVENTS.get(key)
    if hit is None:
        hit = _EVENTS[key] = f"player_{player}:{name}:{'ok' if ok else 'failed'}"
    return hit


def _new_state(values: dict) -> CoBlockState:
    """A :class:`CoBlockState` from its field values (and derived entries), without the frozen
    dataclass's per-field ``__init__`` cost."""
    state = _object_new(CoBlockState)
    _set_state_dict(state, values)
    return state


_object_new = object.__new__
_set_state_dict = CoBlockState.__dict__["__dict__"].__set__


def _touched(order: tuple[int, int], actions: Mapping[int, int], decoded: dict) -> list[Pos]:
    """The cells the round's place and break actions name (each once)."""
    out: list[Pos] = []
    for p in order:
        act = decoded[int(actions[p])][0]
        if act.pos is not None and act.pos not in out:
            out.append(act.pos)
    return out


def _changed_world(world: tuple, changed: list[Pos], cells: dict[Pos, int]) -> tuple:
    """``tuple(sorted(cells))`` as blocks, from the sorted ``world`` of the cells before the round
    and the cells that changed in it."""
    out = list(world)
    for pos in changed:
        i = bisect_left(out, pos)  # (x, y, z) sorts just before (x, y, z, colour)
        if i < len(out) and out[i][:3] == pos:
            del out[i]
        colour = cells.get(pos)
        if colour is not None:
            out.insert(i, (*pos, colour))
    return tuple(out)


class CoBlockGame(Game[CoBlockState, CoBlockView]):
    """The CoBlock rules."""

    name = "coblock"
    num_players: int = 2  #: always two

    def __init__(self, config: CoBlockConfig | None = None) -> None:
        self.config = config or CoBlockConfig()
        self._legal: dict[int, tuple[CoBlockState, tuple[int, ...]]] = {}
        # Grid tables for the legal moves: each cell's index, the ground cells and each cell's
        # in-grid neighbours, by index (sorting indices sorts positions: see cell_index).
        grid = self.config.grid
        cells = [(x, y, z) for x in range(grid[0]) for y in range(grid[1]) for z in range(grid[2])]
        self._cell_of = {p: cell_index(grid, p) for p in cells}
        self._ground = frozenset(self._cell_of[p] for p in cells if p[1] == 0)
        self._nbrs: list[tuple[int, ...]] = [()] * len(cells)
        for p in cells:
            x, y, z = p
            self._nbrs[self._cell_of[p]] = tuple(
                cell_index(grid, q)
                for q in ((x + dx, y + dy, z + dz) for dx, dy, dz in NEIGHBOURS)
                if in_bounds(q, grid)
            )
        # The same as bit masks (bit i = cell i), and each byte of a mask's cells by value.
        self._ground_mask = sum(1 << i for i in self._ground)
        self._nbr_masks = [sum(1 << j for j in nb) for nb in self._nbrs]
        self._bytes = (len(cells) + 7) // 8
        self._byte_cells = [
            [tuple(8 * j + b for b in range(8) if v >> b & 1) for v in range(256)]
            for j in range(self._bytes)
        ]
        # Each colour's place actions and the break actions, one per cell index: the legal
        # actions pick the free (occupied) cells out of these rows with one itemgetter per state.
        n = len(cells)
        self._rows = tuple(
            tuple(range(PLACE_OFFSET + c * n, PLACE_OFFSET + (c + 1) * n))
            for c in range(len(COLORS) + 1)
        )
        self._views: dict[int, tuple[CoBlockState, CoBlockView]] = {}
        self._histories: dict[int, tuple[tuple, tuple]] = {}  # view.py: per player, converted
        self._goal_parts: dict[int, tuple] = {}  # id(goal) -> (goal, its parts' descriptions)
        # action id -> (decoded action, command, event name, responses): see _decode
        self._decoded: dict[int, tuple[Action, str, str, tuple[str, ...]]] = {}

    @property
    def num_actions(self) -> int:
        """See :meth:`CoBlockConfig.num_actions`."""
        return self.config.num_actions

    @property
    def tags(self) -> GameTags:
        """Simultaneous, stochastic task draw, private goals and inventories, shared reward, chat."""
        fixed = self.config.task is not None or (
            self.config.task_index is not None and not self.config.generated
        )
        return GameTags(
            dynamics=SIMULTANEOUS,
            chance="deterministic" if fixed else "stochastic",
            information="imperfect",
            utility="identical",
            communication=True,
        )

    @property
    def reward_range(self) -> tuple[float, float]:
        """Sparse: [0, 1]; progress: [-1, 1] (a round can undo placed blocks)."""
        return (0.0, 1.0) if self.config.reward == "sparse" else (-1.0, 1.0)

    @property
    def max_steps(self) -> int:
        """``max_rounds``."""
        return self.config.max_rounds

    # ---------------------------------------------------------------------- setup
    def draw_task(self, rng: np.random.Generator) -> Task:
        """The episode's task: injected, fixed by index, generated, or drawn from the set."""
        cfg = self.config
        if cfg.task is not None:
            return cfg.task
        if cfg.generated:
            kind = cfg.task_type
            if kind == "all":
                kind = TASK_TYPES[int(rng.integers(len(TASK_TYPES)))]
            return generate_task(kind, rng, cfg.grid)
        pool = cfg.task_pool()
        index = cfg.task_index if cfg.task_index is not None else int(rng.integers(len(pool)))
        return pool[index]

    def initial_state(self, rng: np.random.Generator) -> CoBlockState:
        """An empty world and the drawn task's inventories."""
        return CoBlockState.start(self.draw_task(rng))

    def current_players(self, state: CoBlockState) -> tuple[int, ...]:
        """Both agents act every round until the end."""
        return () if state.outcome != Outcome.PLAYING else (0, 1)

    def legal_actions(self, state: CoBlockState, player: int) -> tuple[int, ...]:
        """Wait, send, end, every valid placement of a held colour, and breaking any block."""
        if state.outcome != Outcome.PLAYING or player not in (0, 1):
            return ()
        cached = self._legal.get(player)
        if cached is not None and cached[0] is state:
            return cached[1]
        legal = self._compute_legal(state, player)
        self._legal[player] = (state, legal)
        return legal

    def _compute_legal(self, state: CoBlockState, player: int) -> tuple[int, ...]:
        cfg = self.config
        if cfg.end_rule == "all" and state.ended[player]:
            return (int(ActionKind.WAIT),)
        pick_free, pick_occupied = self._pickers(state)
        rows = self._rows
        out = list(_ALWAYS)
        for c, count in enumerate(state.inventories[player]):
            if count > 0:
                out += pick_free(rows[c])
        out += pick_occupied(rows[-1])
        return tuple(out)

    def _pickers(self, state: CoBlockState) -> tuple[Callable, Callable]:
        """Functions taking the free (occupied) cells' entries out of a row indexed by cell, as
        a tuple in ascending cell order; built once per state (both players use them)."""
        cached = state.__dict__.get("_pickers")
        if cached is None:
            free, occupied = self._free_and_occupied(state)
            n = self.config.cells
            cached = (_picker(free, n), _picker(occupied, n))
            object.__setattr__(state, "_pickers", cached)
        return cached

    def _free_and_occupied(self, state: CoBlockState) -> tuple[list[int], list[int]]:
        """The indices of :func:`placeable_cells` and of the occupied cells, ascending; computed
        once per state (both players' legal moves use them) and kept, like ``cells``, out of the
        state's fields."""
        cached = state.__dict__.get("_free")
        if cached is not None:
            return cached
        cell_of = self._cell_of
        cells = state.cells
        try:
            occupied = sorted([cell_of[p] for p in cells])
        except KeyError:  # a block outside the grid (a hand-made state): the reference computation
            grid = self.config.grid
            free = [cell_index(grid, p) for p in placeable_cells(cells, grid)]
            occupied = sorted(cell_index(grid, p) for p in cells)
        else:  # ground or next to a block, and empty: as bit masks, then listed byte by byte
            masks = self._nbr_masks
            near = self._ground_mask
            taken = 0
            for i in occupied:
                near |= masks[i]
                taken |= 1 << i
            byte_cells = self._byte_cells
            free = []
            for j, v in enumerate((near & ~taken).to_bytes(self._bytes, "little")):
                if v:
                    free += byte_cells[j][v]
        cached = (free, occupied)
        object.__setattr__(state, "_free", cached)
        return cached

    # ---------------------------------------------------------------------- apply
    def apply(
        self,
        state: CoBlockState,
        actions: Mapping[int, int],
        rng: np.random.Generator,
        messages: Mapping[int, str] | None = None,
    ) -> StepResult[CoBlockState]:
        """Apply both actions in this round's order, then check success, ending and the limit.

        Deterministic: ``rng`` is not used (the task was drawn at reset).
        """
        cfg = self.config
        cells = dict(state.cells)
        inventories = [list(state.inventories[0]), list(state.inventories[1])]
        dialogue = list(state.dialogue)
        ended = list(state.ended)
        records = []
        events = []
        before = state.matched()
        order = (0, 1) if state.round % 2 == 0 else (1, 0)
        decoded = self._decoded
        for p in order:
            action = int(actions[p])
            entry = decoded.get(action)
            if entry is None:
                entry = decoded[action] = self._decode(action)
            act, command, name, responses = entry
            text = messages.get(p) if messages else None
            ok, response = self._execute(p, act, text, cells, inventories, ended, responses)
            if act.kind == ActionKind.SEND_MESSAGE:
                if ok:
                    dialogue.append((state.round, p, text or ""))
                command = command_text(act, text)
            elif text is not None:
                if cfg.chat_with_actions and text.strip():
                    dialogue.append((state.round, p, text))
                else:
                    response += " (the text was not sent: only send_message carries a message)"
            records.append((state.round, p, action, command, ok, response))
            events.append(_event(p, name, ok))
        changed = [
            p for p in _touched(order, actions, decoded) if cells.get(p) != state.cells.get(p)
        ]
        world, after = self._world_after(state, cells, changed, before)
        target = len(state.task.target_cells)
        if after == target:
            outcome = Outcome.SUCCESS
        elif (cfg.end_rule == "either" and any(ended)) or all(ended):
            outcome = Outcome.ENDED
        elif state.round + 1 >= cfg.max_rounds:
            outcome = Outcome.TIMEOUT
        else:
            outcome = Outcome.PLAYING
        nxt = _new_state(
            {
                "task_json": state.task_json,
                "round": state.round + 1,
                "world": world,
                "inventories": (tuple(inventories[0]), tuple(inventories[1])),
                "dialogue": tuple(dialogue),
                "history": state.history + tuple(records),
                "ended": (ended[0], ended[1]),
                "outcome": outcome,
                # derived values, kept out of the fields (see CoBlockState.cells): the world
                # is sorted(cells) (so the next round may update it in place)
                "_cells": cells,
                "_matched": after,
                "_sorted": True,
            }
        )
        if outcome != Outcome.PLAYING:
            events.append(f"episode:{outcome}")
        if cfg.reward == "sparse":
            r = 1.0 if outcome == Outcome.SUCCESS else 0.0
        else:
            r = (after - before) / target
        return StepResult(nxt, (r, r), tuple(events))

    @staticmethod
    def _world_after(
        state: CoBlockState, cells: dict[Pos, int], changed: list[Pos], before: int
    ) -> tuple[tuple[tuple[int, int, int, int], ...], int]:
        """The next world (sorted blocks) and the number of target blocks in place, both from
        the ``changed`` cells alone."""
        old = state.cells
        task_cells = state.task.target_cells
        after = before
        for pos in changed:  # the target blocks now in place, counted from the change alone
            want = task_cells.get(pos)
            if want is not None:
                after += (cells.get(pos) == want) - (old.get(pos) == want)
        if not changed and (not state.world or state.__dict__.get("_sorted")):
            world = state.world
        elif not state.world or state.__dict__.get("_sorted"):
            world = _changed_world(state.world, changed, cells)
        else:  # a hand-made state: its world may be in any order
            world = tuple(sorted((x, y, z, c) for (x, y, z), c in cells.items()))
        return world, after

    def _decode(self, action: int) -> tuple[Action, str, str, tuple[str, ...]]:
        """An action id's decoded action, command (send_message: the placeholder), event name and
        responses (place: placed, no such colour, unsupported; break: broken, no block)."""
        act = decode_action(self.config, action)
        pos = act.pos
        if act.kind == ActionKind.PLACE:
            assert pos is not None
            colour = COLORS[act.color]
            responses: tuple[str, ...] = (
                f"A {colour} block was placed at {fmt_pos(pos)}.",
                f"Block with type {colour} not found in inventory",
                f"Block position {fmt_pos(pos)} is not either on the ground or adjacent to any "
                "existing block.",
            )
        elif act.kind == ActionKind.BREAK:
            assert pos is not None
            responses = (
                f"The block at {fmt_pos(pos)} was broken.",
                f"No block at {fmt_pos(pos)} to break.",
            )
        else:
            responses = ()
        return act, command_text(act), act.kind.name.lower(), responses

    def _execute(
        self,
        player: int,
        act: Action,
        text: str | None,
        cells: dict[Pos, int],
        inventories: list[list[int]],
        ended: list[bool],
        responses: tuple[str, ...],
    ) -> tuple[bool, str]:
        """Carry out one action on the round's working copies; ``(took effect, response)``
        (``responses``: the action's texts, from :meth:`_decode`)."""
        kind = act.kind
        if kind == ActionKind.WAIT:
            return True, "Waited."
        if kind == ActionKind.END_TASK:
            ended[player] = True
            return True, "Ended the task."
        if kind == ActionKind.SEND_MESSAGE:
            if text is None or not text.strip():
                return False, "No message text: nothing was sent."
            return True, "Message sent."
        pos = act.pos
        assert pos is not None
        if kind == ActionKind.BREAK:
            if pos not in cells:
                return False, responses[1]
            del cells[pos]
            return True, responses[0]
        # place: the original code's checks, in its order
        if pos in cells:
            return False, "Block exists"
        if inventories[player][act.color] <= 0:
            return False, responses[1]
        if not supported(pos, cells):
            return False, responses[2]
        cells[pos] = act.color
        inventories[player][act.color] -= 1
        return True, responses[0]

    def is_terminal(self, state: CoBlockState) -> bool:
        """Success, ended, or out of rounds."""
        return state.outcome != Outcome.PLAYING

    def observe(self, state: CoBlockState, player: int) -> CoBlockView:
        """``player``'s view (see :mod:`tom_envs.games.coblock.view`); cached per state."""
        cached = self._views.get(player)
        if cached is not None and cached[0] is state:
            return cached[1]
        view = observe(self, state, player)
        self._views[player] = (state, view)
        return view
