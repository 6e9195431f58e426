"""Rules of Overcooked (pure: no gymnasium, no pettingzoo), step for step those of overcooked-ai.

Two chefs move at the same time on a grid kitchen. Each step every chef chooses one of six
actions: move north/south/east/west (a move into a non-floor cell only turns the chef to face
it), stay, or interact with the cell it faces. Interactions are resolved first, player_0's before
player_1's, then movement (two chefs that would end on the same cell or swap cells both stay where
they were, but still turn), then the pots cook. Onion soup: put three onions in a pot, let it cook
``cook_time`` steps, load it on a plate (interact with the pot holding a plate) and deliver it at
the serving window for ``delivery_reward`` points, shared by both chefs. The episode lasts
``horizon`` steps.

Two cooking rules (``OvercookedConfig.cooking``):

* ``"auto"`` (default, the paper's and original Overcooked-AI's "old dynamics"): a pot starts
  cooking by itself when its third onion goes in. This is overcooked-ai's ``old_dynamics=True``.
* ``"interact"`` (overcooked-ai 1.1.0 as released on PyPI): a chef with empty hands must interact
  with a pot to start cooking whatever is in it (1 to 3 onions); a soup of fewer than three onions
  is worth nothing when delivered.

Both match overcooked-ai exactly (``tests/games/overcooked/test_parity.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from typing import NamedTuple

import numpy as np

from tom_envs.core.game import SIMULTANEOUS, Game, GameTags, StepResult
from tom_envs.games.overcooked.layout import (
    FACE_COUNTER,
    FACE_DISHES,
    FACE_ONIONS,
    FACE_POT,
    FACE_SERVING,
    Layout,
    Pos,
    load_layout,
)
from tom_envs.games.overcooked.view import OvercookedView, observe


class Action(IntEnum):
    """The six primitive actions, in overcooked-ai's order (``Action.INDEX_TO_ACTION``)."""

    NORTH = 0
    SOUTH = 1
    EAST = 2
    WEST = 3
    STAY = 4
    INTERACT = 5


class Item(IntEnum):
    """What a chef holds or a counter carries. A soup is always cooked once out of its pot."""

    NOTHING = 0
    ONION = 1
    DISH = 2
    SOUP_1 = 3  # a cooked soup of 1 onion ("interact" cooking only; worth nothing)
    SOUP_2 = 4  # 2 onions ("interact" cooking only; worth nothing)
    SOUP_3 = 5  # the onion soup of three onions


ALL_ACTIONS: tuple[int, ...] = tuple(int(a) for a in Action)
ONIONS_PER_SOUP = 3
COOKING_RULES = ("auto", "interact")
#: Pot contents when empty: (onions, cooking tick); the tick is -1 before cooking starts.
EMPTY_POT = (0, -1)
PLAYER_NAMES = ("Alice", "Bob")


def is_soup(item: int) -> bool:
    """Whether an item code is a (cooked) soup."""
    return item >= Item.SOUP_1


def soup_item(onions: int) -> int:
    """The item code of a cooked soup of ``onions`` onions."""
    return Item.SOUP_1 + onions - 1


def soup_onions(item: int) -> int:
    """Onions in a soup item."""
    return item - Item.SOUP_1 + 1


def item_name(item: int) -> str:
    """``"onion"``, ``"plate"`` (a dish), ``"soup"`` (3 onions), ``"soup of 1 onion"``..."""
    if item == Item.ONION:
        return "onion"
    if item == Item.DISH:
        return "plate"
    if item == Item.SOUP_3:
        return "soup"
    if is_soup(item):
        n = soup_onions(item)
        return f"soup of {n} onion{'s' if n > 1 else ''}"
    return "nothing"


@dataclass(frozen=True)
class OvercookedConfig:
    """Everything that defines a game (frozen, hashable).

    Attributes:
        layout: a packaged layout name (``cramped_room``, ``asymmetric_advantages``,
            ``coordination_ring``, ``forced_coordination``, ``counter_circuit``) or the path of a
            layout ``.txt`` file.
        horizon: steps per episode (400 in the paper).
        cook_time: steps a soup cooks (20).
        delivery_reward: points of a delivered onion soup, given to both chefs (20).
        cooking: ``"auto"`` (a full pot starts cooking by itself; the paper) or ``"interact"``
            (overcooked-ai 1.1.0: an empty-handed chef starts it).
        random_start: draw both start cells uniformly among distinct floor cells each episode
            (overcooked-ai's ``random_start_pos``) instead of the layout's cells 1 and 2.
        observation: the vector: ``"lossless"`` planes, compact ``"features"``, or ``"both"``.
        names: the chefs' names in text (the paper's Alice and Bob).
    """

    layout: str = "cramped_room"
    horizon: int = 400
    cook_time: int = 20
    delivery_reward: float = 20.0
    cooking: str = "auto"
    random_start: bool = False
    observation: str = "both"
    names: tuple[str, str] = PLAYER_NAMES
    kitchen: Layout = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.cooking not in COOKING_RULES:
            raise ValueError(f"cooking must be one of {COOKING_RULES}, got {self.cooking!r}")
        if self.horizon < 1:
            raise ValueError(f"horizon must be >= 1, got {self.horizon}")
        if self.cook_time < 1:
            raise ValueError(f"cook_time must be >= 1, got {self.cook_time}")
        if self.observation not in ("lossless", "features", "both"):
            raise ValueError(
                f"observation must be 'lossless', 'features' or 'both', got {self.observation!r}"
            )
        if len(self.names) != 2 or self.names[0] == self.names[1]:
            raise ValueError(f"names must be two different names, got {self.names!r}")
        object.__setattr__(self, "names", tuple(self.names))
        object.__setattr__(self, "kitchen", load_layout(self.layout))


class Chef(NamedTuple):
    """One chef: cell, facing direction (index into ``layout.DIRECTIONS``) and held item."""

    pos: Pos
    facing: int
    held: int


@dataclass(frozen=True, slots=True)
class OvercookedState:
    """Value-semantics state.

    Attributes:
        timestep: steps played.
        chefs: both chefs, in player order.
        pots: ``(onions, cooking tick)`` per pot (``layout.pots`` order); the tick is -1 until
            cooking starts, then counts up to ``cook_time`` (ready).
        counters: the item on each counter cell (``layout.counters`` order), ``Item.NOTHING``
            when empty.
        score: points delivered so far (the same for both chefs).
    """

    timestep: int
    chefs: tuple[Chef, Chef]
    pots: tuple[tuple[int, int], ...]
    counters: tuple[int, ...]
    score: float = 0.0


class OvercookedGame(Game[OvercookedState, OvercookedView]):
    """The rules, for one configured kitchen."""

    name = "overcooked"
    num_players: int = 2  #: two chefs
    num_actions: int = len(Action)  #: six primitive actions

    def __init__(self, config: OvercookedConfig | None = None) -> None:
        self.config = config or OvercookedConfig()
        self.layout = self.config.kitchen
        t = self.layout.tables
        self._move = t.move
        self._front = t.front
        self._cook_time = self.config.cook_time
        self._auto = self.config.cooking == "auto"
        self._value = float(self.config.delivery_reward)
        self._horizon = self.config.horizon

    # ------------------------------------------------------------------ facts
    @property
    def tags(self) -> GameTags:
        """Simultaneous, perfect information, fully cooperative."""
        return GameTags(
            dynamics=SIMULTANEOUS,
            chance="stochastic" if self.config.random_start else "deterministic",
            information="perfect",
            utility="identical",
        )

    @property
    def reward_range(self) -> tuple[float, float]:
        """0 to both chefs delivering a soup in the same step."""
        return (0.0, 2 * self._value)

    @property
    def max_steps(self) -> int:
        """The horizon."""
        return self._horizon

    # ------------------------------------------------------------------ states
    def initial_state(self, rng: np.random.Generator) -> OvercookedState:
        """Both chefs on their start cells facing north, empty pots and counters.

        With ``random_start`` the two cells are drawn from ``rng`` (distinct floor cells).
        """
        starts = self.layout.starts
        if self.config.random_start:
            floor = self.layout.floor
            a = int(rng.integers(len(floor)))
            b = int(rng.integers(len(floor) - 1))
            starts = (floor[a], floor[b + (b >= a)])
        return OvercookedState(
            timestep=0,
            chefs=(Chef(starts[0], 0, 0), Chef(starts[1], 0, 0)),
            pots=(EMPTY_POT,) * len(self.layout.pots),
            counters=(0,) * len(self.layout.counters),
        )

    def current_players(self, state: OvercookedState) -> tuple[int, ...]:
        """Both chefs act every step until the horizon."""
        return () if state.timestep >= self._horizon else (0, 1)

    def legal_actions(self, state: OvercookedState, player: int) -> tuple[int, ...]:
        """All six actions are always legal (as in overcooked-ai)."""
        return () if state.timestep >= self._horizon else ALL_ACTIONS

    def is_terminal(self, state: OvercookedState) -> bool:
        """After ``horizon`` steps."""
        return state.timestep >= self._horizon

    def observe(self, state: OvercookedState, player: int) -> OvercookedView:
        """The chef's view (everything is visible; see :mod:`tom_envs.games.overcooked.view`)."""
        return observe(self, state, player)

    # ------------------------------------------------------------------ dynamics
    def step(
        self,
        state: OvercookedState,
        actions: Mapping[int, int],
        rng: np.random.Generator,
        messages: Mapping[int, str] | None = None,
    ) -> StepResult[OvercookedState]:
        """Validated step (:meth:`Game.step`), with a fast path for the common well-formed case.

        Every action is legal until the horizon, so a joint action of two plain ints in
        ``0..5`` for seats 0 and 1 (and no message) is valid and applied directly; anything else
        goes through the full checks, which raise ``IllegalActionError`` as for every game.
        """
        if (
            not messages
            and type(actions) is dict
            and len(actions) == 2
            and state.timestep < self._horizon
        ):
            a0, a1 = actions.get(0), actions.get(1)
            if type(a0) is int and type(a1) is int and 0 <= a0 < 6 and 0 <= a1 < 6:
                nxt, reward, events = self.transition(state, a0, a1)
                return StepResult(nxt, (reward, reward), events)
        return super().step(state, actions, rng, messages)

    def apply(
        self,
        state: OvercookedState,
        actions: Mapping[int, int],
        rng: np.random.Generator,
        messages: Mapping[int, str] | None = None,
    ) -> StepResult[OvercookedState]:
        """Interactions (player_0 first), then movement with collisions, then cooking."""
        nxt, reward, events = self.transition(state, actions[0], actions[1])
        return StepResult(nxt, (reward, reward), events)

    def transition(
        self, state: OvercookedState, a0: int, a1: int
    ) -> tuple[OvercookedState, float, tuple[str, ...]]:
        """The unchecked transition: next state, shared reward and events (planners use this).

        Events are ``"player_<i>:<what>"``: ``pickup_onion``, ``pickup_plate`` (and
        ``useful_plate`` when fewer plates are in play than started pots, overcooked-ai's
        shaping rule), ``potting_onion``, ``start_cooking``, ``pickup_soup`` (and
        ``soup_from_pot`` when the soup comes from the pot: overcooked-ai pays its soup-pickup
        shaping there only), ``delivery``, ``place_<item>`` and ``pickup_<item>`` on counters
        (a soup taken off a counter is a ``pickup_soup`` without ``soup_from_pot``).
        """
        c0, c1 = state.chefs
        pots = state.pots
        counters = state.counters
        reward = 0.0
        events: tuple[str, ...] = ()
        if a0 == 5 or a1 == 5:
            pots_l, counters_l = list(pots), list(counters)
            held = [c0.held, c1.held]
            ev: list[str] = []
            for i, (a, chef) in enumerate(((a0, c0), (a1, c1))):
                if a == 5:
                    reward += self._interact(i, chef, held, pots_l, counters_l, ev)
            if held[0] != c0.held:
                c0 = Chef(c0.pos, c0.facing, held[0])
            if held[1] != c1.held:
                c1 = Chef(c1.pos, c1.facing, held[1])
            pots, counters, events = tuple(pots_l), tuple(counters_l), tuple(ev)
        # Movement: each chef's intended cell; a collision (same cell or a swap) keeps both put.
        move = self._move
        p0, p1 = c0.pos, c1.pos
        n0 = move[(p0, a0)] if a0 < 4 else p0
        n1 = move[(p1, a1)] if a1 < 4 else p1
        if n0 == n1 or (n0 == p1 and n1 == p0):
            n0, n1 = p0, p1
        f0 = a0 if a0 < 4 else c0.facing
        f1 = a1 if a1 < 4 else c1.facing
        if n0 != p0 or f0 != c0.facing:
            c0 = Chef(n0, f0, c0.held)
        if n1 != p1 or f1 != c1.facing:
            c1 = Chef(n1, f1, c1.held)
        # Cooking.
        pots = self._cook(pots)
        return (
            OvercookedState(state.timestep + 1, (c0, c1), pots, counters, state.score + reward),
            reward,
            events,
        )

    def _cook(self, pots: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
        cook_time = self._cook_time
        out = None
        for i, (n, tick) in enumerate(pots):
            if tick < 0:
                if not (self._auto and n == ONIONS_PER_SOUP):
                    continue
                tick = 0  # a full pot starts cooking by itself and cooks this very step
            elif tick >= cook_time:
                continue
            if out is None:
                out = list(pots)
            out[i] = (n, tick + 1)
        return pots if out is None else tuple(out)

    def _interact(
        self,
        i: int,
        chef: Chef,
        held: list[int],
        pots: list[tuple[int, int]],
        counters: list[int],
        events: list[str],
    ) -> float:
        """One chef's interaction, in place on ``held``, ``pots`` and ``counters``."""
        kind, index = self._front[(chef.pos, chef.facing)]
        h = held[i]
        if kind == FACE_COUNTER:
            item = counters[index]
            if h and not item:
                counters[index], held[i] = h, 0
                events.append(f"player_{i}:place_{item_name(h).split()[0]}")
            elif not h and item:
                counters[index], held[i] = 0, item
                events.append(f"player_{i}:pickup_{item_name(item).split()[0]}")
        elif kind == FACE_ONIONS:
            if not h:
                held[i] = Item.ONION
                events.append(f"player_{i}:pickup_onion")
        elif kind == FACE_DISHES:
            if not h:
                held[i] = Item.DISH
                events.append(f"player_{i}:pickup_plate")
                # overcooked-ai's "useful dish pickup" (its shaping rule): fewer plates in play
                # than pots that have started (cooking, ready or full)
                plates = (held[1 - i] == Item.DISH) + sum(c == Item.DISH for c in counters)
                started = sum(1 for n, tick in pots if tick >= 0 or n >= ONIONS_PER_SOUP)
                if plates < started:
                    events.append(f"player_{i}:useful_plate")
        elif kind == FACE_POT:
            n, tick = pots[index]
            if not h:
                if not self._auto and n > 0 and tick < 0:
                    pots[index] = (n, 0)
                    events.append(f"player_{i}:start_cooking")
            elif h == Item.DISH:
                if tick >= self._cook_time:
                    pots[index], held[i] = EMPTY_POT, soup_item(n)
                    events.append(f"player_{i}:pickup_soup")
                    # overcooked-ai pays its SOUP_PICKUP_REWARD here only, not for a soup
                    # taken back off a counter (which is also a "pickup_soup")
                    events.append(f"player_{i}:soup_from_pot")
            elif h == Item.ONION and tick < 0 and n < ONIONS_PER_SOUP:
                pots[index], held[i] = (n + 1, -1), 0
                events.append(f"player_{i}:potting_onion")
        elif kind == FACE_SERVING and is_soup(h):
            held[i] = 0
            value = self._value if h == Item.SOUP_3 else 0.0
            events.append(f"player_{i}:delivery")
            return value
        return 0.0
