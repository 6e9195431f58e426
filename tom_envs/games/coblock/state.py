"""CoBlock's settings and state values, which the rules (:mod:`~tom_envs.games.coblock.rules`) read
and never mutate: :class:`CoBlockConfig`, the episode's :class:`Outcome` values, the public
dialogue and action records (:class:`ChatLine`, :class:`ActionRecord`) and :class:`CoBlockState`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from tom_envs.games.coblock.structures import COLORS, Block, Pos, fmt_pos, in_bounds
from tom_envs.games.coblock.tasks import DEFAULT_GRID, TASK_TYPES, Task, builtin_tasks

TASK_CHOICES = (*TASK_TYPES, "all")
END_RULES = ("either", "all")
REWARDS = ("sparse", "progress")
TEXT_FORMATS = ("xml", "plain", "both")


class Outcome:
    """Values of :attr:`CoBlockState.outcome`."""

    PLAYING = "playing"
    SUCCESS = "success"
    ENDED = "ended"
    TIMEOUT = "timeout"


class ChatLine(NamedTuple):
    """One message of the public dialogue."""

    round: int
    sender: int
    text: str


class ActionRecord(NamedTuple):
    """One agent's action in one round and what came of it (public: both agents see it).

    ``text`` is the command as written (``place_block(block_type="red", pos=(0, 0, 1))``), ``ok``
    whether it took effect, ``message`` the environment's response.
    """

    round: int
    player: int
    action: int
    text: str
    ok: bool
    message: str


@dataclass(frozen=True)
class CoBlockConfig:
    """Settings of a CoBlock game.

    Attributes:
        task_type: the built-in set to draw from at reset: ``"independent"``,
            ``"skill_dependent"``, ``"goal_dependent"`` or ``"all"`` (the 72 tasks together).
        task_index: play this task of the set every episode (``None``: drawn from the reset seed;
            ignored with ``generated``).
        generated: draw a freshly generated task of ``task_type`` from the reset seed instead
            (``"all"`` picks the type from the seed too).
        task: play exactly this :class:`~tom_envs.games.coblock.tasks.Task` (injected chance).
        grid: ``(X, Y, Z)``: cells ``0 <= x < X``, ``0 <= y < Y`` (up), ``0 <= z < Z``.
        max_rounds: the round limit.
        end_rule: ``"either"`` (paper: an agent's end_task ends the episode) or ``"all"``.
        chat_with_actions: deliver text sent with any action (default: only with send_message).
        reward: ``"sparse"`` (+1 to both on success) or ``"progress"`` (the change in the share of
            target blocks in place, every round; so +1 in total on success).
        text_format: ``"xml"`` (paper App. B.1), ``"plain"`` or ``"both"``.
        history_window: how many past actions the text shows (``None``: all).
        dialogue_window: how many past messages the text shows (``None``: all).
        max_inventory: count at which the vector's inventory entries saturate at 1.
    """

    task_type: str = "all"
    task_index: int | None = None
    generated: bool = False
    task: Task | None = None
    grid: tuple[int, int, int] = DEFAULT_GRID
    max_rounds: int = 60
    end_rule: str = "either"
    chat_with_actions: bool = False
    reward: str = "sparse"
    text_format: str = "xml"
    history_window: int | None = 10
    dialogue_window: int | None = None
    max_inventory: int = 30

    def __post_init__(self) -> None:
        object.__setattr__(self, "grid", tuple(int(g) for g in self.grid))
        if self.task_type not in TASK_CHOICES:
            raise ValueError(f"task_type must be one of {TASK_CHOICES}, got {self.task_type!r}")
        if len(self.grid) != 3 or min(self.grid) < 1:
            raise ValueError(f"grid must be three positive sizes, got {self.grid}")
        if self.max_rounds < 1:
            raise ValueError(f"max_rounds must be >= 1, got {self.max_rounds}")
        for name, value, allowed in (
            ("end_rule", self.end_rule, END_RULES),
            ("reward", self.reward, REWARDS),
            ("text_format", self.text_format, TEXT_FORMATS),
        ):
            if value not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
        if self.task_index is not None:
            n = len(self.task_pool())
            if not 0 <= self.task_index < n:
                raise ValueError(f"task_index must be in [0, {n}), got {self.task_index}")
        for w in (self.history_window, self.dialogue_window):
            if w is not None and w < 0:
                raise ValueError("history_window and dialogue_window must be None or >= 0")
        if not self.generated:
            tasks = (self.task,) if self.task is not None else self.task_pool()
            for task in tasks:
                outside = [b for b in task.target if not in_bounds(b, self.grid)]
                if outside:
                    raise ValueError(
                        f"task {task.name} does not fit the grid {self.grid}: block "
                        f"{fmt_pos(outside[0])} is outside"
                    )

    @property
    def cells(self) -> int:
        """Number of cells ``X * Y * Z``."""
        x, y, z = self.grid
        return x * y * z

    @property
    def num_actions(self) -> int:
        """``3 + (colours + 1) * cells``: wait, send, end, place per colour and cell, break."""
        return 3 + (len(COLORS) + 1) * self.cells

    def task_pool(self) -> tuple[Task, ...]:
        """The built-in tasks ``task_type`` draws from."""
        if self.task_type == "all":
            return tuple(t for tt in TASK_TYPES for t in builtin_tasks(tt))
        return builtin_tasks(self.task_type)


@dataclass(frozen=True)
class CoBlockState:
    """Value-semantics state of a CoBlock episode.

    Every field is plain data (strings, ints, bools and tuples of them), so a state is cheap to
    hash, compare, copy and serialise: the task is kept as its canonical JSON text (:attr:`task`
    gives the :class:`~tom_envs.games.coblock.tasks.Task`), and the dialogue and history as plain
    tuples (:meth:`chat` and :meth:`records` give them as named tuples).

    Attributes:
        task_json: the task (goals and starting inventories), canonical JSON.
        round: rounds played.
        world: every block in the world, ``(x, y, z, colour)``, sorted.
        inventories: current counts per colour, per player.
        dialogue: ``(round, sender, text)`` per message, oldest first (public).
        history: ``(round, player, action, command, took effect, response)`` per action, oldest
            first (public).
        ended: who has chosen end_task.
        outcome: ``"playing"``, ``"success"``, ``"ended"`` or ``"timeout"``.
    """

    task_json: str
    round: int
    world: tuple[Block, ...]
    inventories: tuple[tuple[int, ...], tuple[int, ...]]
    dialogue: tuple[tuple[int, int, str], ...] = ()
    history: tuple[tuple[int, int, int, str, bool, str], ...] = ()
    ended: tuple[bool, bool] = (False, False)
    outcome: str = Outcome.PLAYING

    @classmethod
    def start(cls, task: Task) -> CoBlockState:
        """Round 0 of ``task``: an empty world and the starting inventories."""
        return cls(task_json=task_to_json(task), round=0, world=(), inventories=task.inventories)

    @property
    def task(self) -> Task:
        """The task (parsed once per distinct JSON text)."""
        return task_from_json(self.task_json)

    @property
    def cells(self) -> dict[Pos, int]:
        """Occupied cell -> colour (derived from ``world``; built once, kept out of the fields so
        equality, hashing and serialisation see only ``world``). Do not mutate."""
        cached = self.__dict__.get("_cells")
        if cached is None:
            cached = {(b[0], b[1], b[2]): b[3] for b in self.world}
            object.__setattr__(self, "_cells", cached)
        return cached

    def records(self) -> tuple[ActionRecord, ...]:
        """The history as :class:`ActionRecord` values."""
        return tuple(ActionRecord(*r) for r in self.history)

    def chat(self) -> tuple[ChatLine, ...]:
        """The dialogue as :class:`ChatLine` values."""
        return tuple(ChatLine(*m) for m in self.dialogue)

    def matched(self) -> int:
        """Target blocks in place with their colour (computed once per state, kept like
        ``cells`` out of the fields)."""
        cached = self.__dict__.get("_matched")
        if cached is None:
            cells = self.cells
            cached = sum(1 for pos, c in self.task.target_cells.items() if cells.get(pos) == c)
            object.__setattr__(self, "_matched", cached)
        return cached


_JSON: dict[int, tuple[Task, str]] = {}


def task_to_json(task: Task) -> str:
    """The canonical JSON text of a task (what :class:`CoBlockState` stores); kept per task
    object (tasks are immutable; the built-in ones are drawn again and again)."""
    hit = _JSON.get(id(task))
    if hit is not None and hit[0] is task:
        return hit[1]
    text = json.dumps(task.to_dict(), sort_keys=True, separators=(",", ":"))
    if len(_JSON) >= 1024:
        _JSON.clear()
    _JSON[id(task)] = (task, text)
    return text


@lru_cache(maxsize=1024)
def task_from_json(text: str) -> Task:
    """Inverse of :func:`task_to_json` (cached: states of one episode share one Task)."""
    return Task.from_dict(json.loads(text))
