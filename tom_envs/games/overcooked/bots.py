"""Scripted Overcooked partners, all deciding with mid-level actions.

Every bot is a *chooser* over the mid-level options of :mod:`~tom_envs.games.overcooked.midlevel`
wrapped in a :class:`~tom_envs.games.overcooked.midlevel.MidLevelAgent`, which grounds the choice
into moves by shortest paths and asks again when it completes or becomes impossible, exactly as
the paper's LLM agents are driven. The choice rules are pure functions of the state
(:func:`choose`), so the planner rolls them out as models of both chefs.

| name | rule |
|---|---|
| ``greedy`` | the nearest useful subtask: deliver a held soup; load a held plate from the readiest cooker; put a held onion in the fullest cooker that takes one; with empty hands start a full cooker (``interact`` cooking), fetch a soup left on a counter, fetch a plate when a soup is ready, else an onion while cookers need onions, else a plate while a soup cooks. Counts what the partner holds, passes items over shared counters when it cannot reach cookers or windows, and steps away when it has been blocked |
| ``role_onions`` | the greedy rules restricted to the onion role: fetching onions and filling (and starting) cookers; plates and soups only when the partner cannot do them (it cannot reach the dispensers, cookers or windows: forced coordination) |
| ``role_dishes`` | the dish role: plates, loading soups and delivering; onions only when the partner cannot do them |
| ``planner`` | a model-based planner (:mod:`~tom_envs.games.overcooked.planner`): every time it must choose, it simulates each option for 20 steps with the exact rules, both chefs continuing with the greedy rules (a partner seen idle for 12 steps is modelled as staying put), and takes the option with the best discounted return plus progress when it beats the greedy choice |
| ``stay`` | never moves (a lazy partner: what one chef scores alone) |
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from tom_envs.core.agents import BaseAgent, Turn
from tom_envs.core.contract import Bot, BotTable
from tom_envs.core.game import GameBundle
from tom_envs.games.overcooked.midlevel import (
    DELIVER,
    LOAD_SOUP,
    MOVE_AWAY_ACTION,
    PICK_UP,
    PLACE_ON,
    PUT_IN_POT,
    START_COOKING,
    WAIT_ACTION,
    Kitchen,
    MidAction,
    MidLevelAgent,
    MidLevelView,
    kitchen,
)
from tom_envs.games.overcooked.rules import (
    ONIONS_PER_SOUP,
    Action,
    Item,
    OvercookedConfig,
    OvercookedState,
    is_soup,
)
from tom_envs.games.overcooked.view import view_state

ROLES = ("any", "onions", "dishes")


class Capabilities:
    """What a chef's partition lets it do (cached per kitchen and cell region)."""

    def __init__(self, k: Kitchen, pos: tuple[int, int]) -> None:
        reach = k.reach[k.region[pos]]
        self.onions = any(n in reach for n in k.onions)
        self.plates = any(n in reach for n in k.plates)
        self.pots = any(n in reach for n in k.pots)
        self.serving = any(n in reach for n in k.serving)


_CAPS: dict[tuple[int, int], Capabilities] = {}


def _caps(k: Kitchen, pos: tuple[int, int]) -> Capabilities:
    key = (id(k), k.region[pos])
    caps = _CAPS.get(key)
    if caps is None:
        caps = _CAPS[key] = Capabilities(k, pos)
    return caps


#: Added to the distance of a place whose every access cell the partner stands on.
OCCUPIED = 100


def _distance(k: Kitchen, pos: tuple[int, int], target: str, other: tuple[int, int]) -> int:
    """Walking steps to ``target``, plus :data:`OCCUPIED` when the partner stands in the way."""
    d = k.goal[target].get(pos)
    if d is None:
        return 10_000
    return d + OCCUPIED if k.access_cells[target] == {other} else d


def _nearest(
    k: Kitchen, pos: tuple[int, int], other: tuple[int, int], actions: list[MidAction]
) -> MidAction:
    return min(actions, key=lambda a: _distance(k, pos, a.target, other))


def _allowed(role: str, a: MidAction, mine: Capabilities, partner: Capabilities) -> bool:
    """Whether a role-restricted chef may take ``a`` (held-item actions are always allowed)."""
    if role == "any" or a.verb not in (PICK_UP, START_COOKING):
        return True
    if a.verb == START_COOKING or a.item == "onion":
        if role == "onions":
            return True
        return not (partner.onions and partner.pots)
    if a.item == "plate":
        if role == "dishes":
            return True
        return not (partner.plates and partner.pots)
    # a soup lying on a counter
    return role == "dishes" or not partner.serving


def choose(
    k: Kitchen,
    config: OvercookedConfig,
    state: OvercookedState,
    player: int,
    options: list[MidAction] | tuple[MidAction, ...],
    role: str = "any",
    status: str = "",
    rng: np.random.Generator | None = None,
) -> MidAction:
    """The greedy (or role-restricted) choice among ``options`` for ``player``.

    After being blocked by the partner it steps away with probability 1/2 (``rng``; always
    without one), which breaks the symmetric standoffs two identical bots fall into.
    """
    if "blocked" in status and (rng is None or rng.random() < 0.5):
        return MOVE_AWAY_ACTION  # else choose again, avoiding what the partner blocks
    c = _Chooser(k, config, state, player, options, role, "blocked" in status)
    held = c.me.held
    if is_soup(held):
        deliver = c.of(DELIVER)
        return c.nearest(deliver) if deliver else c.hand_over("soup")
    if held == Item.DISH:
        return c.with_dish()
    if held == Item.ONION:
        return c.with_onion()
    return c.empty_handed()


class _Chooser:
    """One decision of :func:`choose`: the situation, and the greedy rules by what is held."""

    def __init__(
        self,
        k: Kitchen,
        config: OvercookedConfig,
        state: OvercookedState,
        player: int,
        options: list[MidAction] | tuple[MidAction, ...],
        role: str,
        blocked: bool,
    ) -> None:
        self.k, self.config, self.state, self.role, self.blocked = k, config, state, role, blocked
        self.me, self.other = state.chefs[player], state.chefs[1 - player]
        self.pos = self.me.pos
        self.mine, self.partner = _caps(k, self.pos), _caps(k, self.other.pos)
        if role != "any":
            options = [a for a in options if _allowed(role, a, self.mine, self.partner)]
        self.options = options
        self.pots = [(name, *k.pot(state, name)) for name in k.pots]

    def free(self, name: str) -> bool:
        """After being blocked, a place the partner stands in front of counts as unusable."""
        return not (
            self.blocked and self.mine.pots and self.k.access_cells[name] == {self.other.pos}
        )

    def of(self, verb: str, item: str | None = None) -> list[MidAction]:
        return [a for a in self.options if a.verb == verb and (item is None or a.item == item)]

    def nearest(self, actions: list[MidAction]) -> MidAction:
        return _nearest(self.k, self.pos, self.other.pos, actions)

    def idle(self) -> MidAction:
        """Nothing useful to do: get out of the partner's way when close to it."""
        d = self.k.dist[self.pos].get(self.other.pos)
        return MOVE_AWAY_ACTION if d is not None and d <= 2 else WAIT_ACTION

    def hand_over(self, word: str) -> MidAction:
        shared = [a for a in self.of(PLACE_ON, word) if a.target.startswith("s")]
        return self.nearest(shared) if shared else self.idle()

    def put_down(self, word: str) -> MidAction:
        kitchen_spot = [a for a in self.of(PLACE_ON, word) if a.target.startswith("k")]
        return kitchen_spot[0] if kitchen_spot else self.idle()

    def onions_wanted(self) -> int:
        """Onions the free pots still need, less the one the partner carries."""
        wanted = sum(
            ONIONS_PER_SOUP - n for name, n, tick in self.pots if tick < 0 and self.free(name)
        )
        return wanted - int(self.other.held == Item.ONION)

    def with_dish(self) -> MidAction:
        k, state, ct = self.k, self.state, self.config.cook_time
        loads = self.of(LOAD_SOUP)
        if loads:

            def arrival(a: MidAction) -> tuple[int, int]:
                tick = k.pot(state, a.target)[1]
                d = _distance(k, self.pos, a.target, self.other.pos)
                return (max(ct - tick, d), d)

            return min(loads, key=arrival)
        if not self.mine.pots:
            return self.hand_over("plate")
        if self.role != "dishes" and self.onions_wanted() > 0:  # pots need onions: free the hands
            return self.put_down("plate")
        return self.idle()

    def with_onion(self) -> MidAction:
        puts = [a for a in self.of(PUT_IN_POT) if self.free(a.target)]
        if puts:

            def fullness(a: MidAction) -> tuple[int, int]:
                n = self.k.pot(self.state, a.target)[0]
                return (-n, _distance(self.k, self.pos, a.target, self.other.pos))

            return min(puts, key=fullness)
        if not self.mine.pots:
            return self.hand_over("onion")
        return self.put_down("onion")  # every pot is busy: keep it on a counter for the next soup

    def sources(self, word: str) -> list[MidAction]:
        found = self.of(PICK_UP, word)
        if not self.mine.pots:  # never take back what was passed over
            found = [a for a in found if not a.target.startswith(("s", "k"))]
        return found

    def empty_handed(self) -> MidAction:
        k, state, pots, ct = self.k, self.state, self.pots, self.config.cook_time
        interact = self.config.cooking == "interact"
        if interact:
            starts = [
                a for a in self.of(START_COOKING) if k.pot(state, a.target)[0] == ONIONS_PER_SOUP
            ]
            if starts:
                return self.nearest(starts)
        on_counters = {"onion": 0, "plate": 0, "soup": 0}
        for name in k.counter_pois:
            item = k.counter_item(state, name)
            if item:
                on_counters[
                    "soup" if is_soup(item) else "onion" if item == Item.ONION else "plate"
                ] += 1
        soups = self.of(PICK_UP, "soup")
        if soups and self.mine.serving:
            return self.nearest(soups)
        ready = sum(1 for _, n, tick in pots if tick >= ct)
        cooking = sum(1 for _, n, tick in pots if tick >= 0)
        if interact:
            cooking += sum(1 for _, n, tick in pots if tick < 0 and n == ONIONS_PER_SOUP)
        plates_needed = cooking - int(self.other.held == Item.DISH)
        onions_needed = self.onions_wanted()
        if not self.mine.pots:  # a supplier: what already waits on the counters counts as delivered
            plates_needed -= on_counters["plate"]
            onions_needed -= on_counters["onion"]
        plate_src, onion_src = self.sources("plate"), self.sources("onion")
        if ready and plates_needed > 0 and plate_src:
            return self.nearest(plate_src)
        if onions_needed > 0 and onion_src:
            return self.nearest(onion_src)
        if plates_needed > 0 and plate_src:
            return self.nearest(plate_src)
        if self.role == "dishes" and plate_src and any(n for _, n, tick in pots if tick < 0):
            return self.nearest(plate_src)  # the dish role prepares a plate for the next soup
        return self.idle()


class ChooserAgent(BaseAgent):
    """An inner agent of :class:`MidLevelAgent` that applies :func:`choose` to mid-level turns."""

    def __init__(self, role: str = "any", name: str = "greedy") -> None:
        super().__init__()
        if role not in ROLES:
            raise ValueError(f"role must be one of {ROLES}, got {role!r}")
        self.role = role
        self.name = name

    def act(self, turn: Turn) -> int:
        """The index of the chosen option (the kitchen and rules are read from the view)."""
        view: MidLevelView = turn.view
        config = view.game.config
        state = view_state(view.game)
        k = kitchen(config.kitchen)
        choice = choose(
            k, config, state, view.player, view.options, self.role, view.status, self.rng
        )
        return view.options.index(choice) if choice in view.options else len(view.options) - 2


class StayAgent(BaseAgent):
    """Never moves."""

    name = "stay"

    def act(self, turn: Turn) -> int:
        """Always ``STAY``."""
        return int(Action.STAY)


def _config(bundle: GameBundle) -> OvercookedConfig:
    return bundle.game.config  # type: ignore[attr-defined,no-any-return]


def _chooser(role: str, name: str, bundle: GameBundle) -> MidLevelAgent:
    return MidLevelAgent(ChooserAgent(role, name), _config(bundle), name=name)


def _planner(bundle: GameBundle) -> MidLevelAgent:
    from tom_envs.games.overcooked.planner import PlannerChooser

    return MidLevelAgent(PlannerChooser(), _config(bundle), name="planner")


def bot_table(**config: Any) -> BotTable:
    """The bots, agents of the primitive game (the same for every layout), and the populations
    ``scripted`` (every bot that cooks) and ``roles`` (the role-based pair's two roles)."""
    bots = (
        Bot("greedy", partial(_chooser, "any", "greedy"),
            "nearest useful subtask by mid-level actions (deliver, load, fill, fetch what a "
            "cooker needs), aware of what the partner holds"),
        Bot("role_onions", partial(_chooser, "onions", "role_onions"),
            "onion role: fetches onions and fills cookers; plates and soups only when the "
            "partner cannot"),
        Bot("role_dishes", partial(_chooser, "dishes", "role_dishes"),
            "dish role: plates, loading and delivering soups; onions only when the partner "
            "cannot"),
        Bot("planner", _planner,
            "model-based planner: simulates every mid-level option 20 steps with the exact "
            "rules (both chefs continuing greedily; an idle partner modelled as idle) and takes "
            "the best return plus progress"),
        Bot("stay", lambda bundle: StayAgent(), "never moves (a lazy partner)"),
    )  # fmt: skip
    populations = {
        "scripted": ("greedy", "role_onions", "role_dishes", "planner"),
        "roles": ("role_onions", "role_dishes"),
    }
    return BotTable(bots, populations, game="Overcooked")
