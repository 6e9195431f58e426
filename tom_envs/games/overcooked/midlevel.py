"""Mid-level actions ("pick up onion from o0") grounded into moves by shortest paths.

The paper's LLM agents do not steer chefs cell by cell: they choose *mid-level* actions from a
per-state list and an action manager turns the choice into primitive moves along shortest paths,
asking again when the action completes or becomes impossible (App. A). This module is that
manager, for anyone: LLM agents, scripted bots, planners and people.

Vocabulary (the paper's wording; names of places as in :mod:`~tom_envs.games.overcooked.layout`):

| action | when offered |
|---|---|
| ``pick up onion from o0`` / ``pick up plate from p0`` | hands empty, dispenser reachable |
| ``pick up <item> from s0`` / ``... from k3`` | hands empty, that counter holds the item |
| ``start cooking c0`` | ``cooking="interact"`` only: hands empty, pot holds idle onions |
| ``place onion in c0`` | holding an onion, the pot is not cooking and not full |
| ``load soup on plate from c0`` | holding a plate, the pot is cooking or cooked |
| ``place soup for delivery in d0`` | holding a soup |
| ``place <item> on s1`` | holding something, that shared counter is empty |
| ``place <item> on k12`` | holding something, k12 the closest empty kitchen counter |
| ``wait`` | always: stay one step |
| ``move away`` | always: one step away from the partner |

Only places the chef can reach (ignoring the partner, who moves) are offered.

Grounding (:func:`next_primitive`): walk a shortest path to a cell next to the target (a step into
the partner's cell is avoided: the path goes around it when it can, else the chef waits), turn to
face it, interact. :class:`MidLevelController` tracks one chef's current mid-level action and says
when it is complete (the interaction changed what the chef holds, or started the pot) or
impossible (no longer offered, or the interaction had no effect), so the caller asks again.

:class:`MidLevelAgent` wraps any agent that chooses among mid-level options (a scripted chooser,
an LLM agent, a person) into an agent of the primitive game: it shows the inner agent a mid-level
:class:`~tom_envs.core.agents.Turn` (its view lists the options, its text is the paper's prompt)
only when a new choice is needed, and plays the grounded moves. Ready-made here:
:class:`MidLevelHumanAgent` (play at the terminal). The paper's LLM chef lives with the LLM agents
(``tom_llm_agents.overcooked.MidLevelLLMAgent``; the plain ``llm`` agent uses this interface in
Overcooked by default), so this module imports nothing from ``llm_agents``. A planner or a script
can also drive the pieces directly::

    k = kitchen(config.kitchen)
    options = mid_level_actions(k, state, player, config.cooking)
    ctrl = MidLevelController(config, player)
    ctrl.set(options[0])
    while not ctrl.needs_choice(state):          # after each env step
        action = ctrl.primitive(state)           # the primitive move to play now
        ...
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cache
from typing import Any, cast

import numpy as np

from tom_envs.core.agents import (
    AgentAction,
    BaseAgent,
    EpisodeInfo,
    Turn,
    as_agent_action,
    make_turn,
)
from tom_envs.core.game import ParseResult
from tom_envs.core.text import match_action
from tom_envs.games.overcooked.kitchen import (
    Kitchen,
    at_target,
    direction,
    greedy_step,
    kitchen,
    move_away,
    shortest_path,
    step_toward,
)
from tom_envs.games.overcooked.layout import (
    COUNTER,
    DISH_DISPENSER,
    ONION_DISPENSER,
    SERVING,
    Pos,
)
from tom_envs.games.overcooked.rules import (
    ONIONS_PER_SOUP,
    Action,
    Item,
    OvercookedConfig,
    OvercookedState,
    is_soup,
)
from tom_envs.games.overcooked.view import OvercookedView, view_state

PICK_UP, PUT_IN_POT, PLACE_ON, LOAD_SOUP, DELIVER, START_COOKING, WAIT, MOVE_AWAY = (
    "pick_up",
    "put_in_pot",
    "place_on",
    "load_soup",
    "deliver",
    "start_cooking",
    "wait",
    "move_away",
)


_WORDS = ("nothing", "onion", "plate", "soup", "soup", "soup")

#: The paper's wording of each verb, with the action's ``item`` and ``target`` filled in.
WORDING = {
    PICK_UP: "pick up {item} from {target}",
    PUT_IN_POT: "place onion in {target}",
    PLACE_ON: "place {item} on {target}",
    LOAD_SOUP: "load soup on plate from {target}",
    DELIVER: "place soup for delivery in {target}",
    START_COOKING: "start cooking {target}",
    WAIT: "wait",
    MOVE_AWAY: "move away",
}


def item_word(item: int) -> str:
    """The word for an item in mid-level actions: onion, plate or soup."""
    return _WORDS[item]


@dataclass(frozen=True, order=True)
class MidAction:
    """One mid-level action.

    Attributes:
        verb: one of ``pick_up``, ``put_in_pot``, ``place_on``, ``load_soup``, ``deliver``,
            ``start_cooking``, ``wait``, ``move_away``.
        item: ``onion``, ``plate``, ``soup`` or ``""``.
        target: the place's name (``o0``, ``c1``, ``k3``...) or ``""``.
    """

    verb: str
    item: str = ""
    target: str = ""

    @property
    def text(self) -> str:
        """The paper's wording (:data:`WORDING`)."""
        return WORDING.get(self.verb, "move away").format(item=self.item, target=self.target)

    def __str__(self) -> str:
        return self.text


WAIT_ACTION = MidAction(WAIT)
MOVE_AWAY_ACTION = MidAction(MOVE_AWAY)
#: Interned actions (the same object for the same action: cheaper to build and compare).
mid_action = cache(MidAction)


# ---------------------------------------------------------------------------- options
def closest_empty_kitchen_counter(
    k: Kitchen, state: OvercookedState | OvercookedView, pos: Pos
) -> str | None:
    """The reachable empty kitchen counter (``k``) closest to ``pos`` (ties: lowest index)."""
    best, best_d = None, None
    for name in k.kitchen_counters:
        if state.counters[k.pois[name].index]:
            continue
        d = k.goal[name].get(pos)
        if d is not None and (best_d is None or d < best_d):
            best, best_d = name, d
    return best


def mid_level_actions(
    k: Kitchen, state: OvercookedState, player: int, cooking: str = "auto"
) -> list[MidAction]:
    """The mid-level actions offered to ``player`` now (see the module table), in a fixed order."""
    me = state.chefs[player]
    pos, held = me.pos, me.held
    r = k.reachable_by_kind[k.region[pos]]
    out: list[MidAction] = []
    counters, pots = state.counters, state.pots
    if not held:
        out += [mid_action(PICK_UP, "onion", n) for n in r.onions]
        out += [mid_action(PICK_UP, "plate", n) for n in r.plates]
        for name, i in r.counters:
            item = counters[i]
            if item:
                out.append(mid_action(PICK_UP, _WORDS[item], name))
        if cooking == "interact":
            for name, i in r.pots:
                n, tick = pots[i]
                if n and tick < 0:
                    out.append(mid_action(START_COOKING, "", name))
    else:
        word = _WORDS[held]
        if held == Item.ONION:
            for name, i in r.pots:
                n, tick = pots[i]
                if tick < 0 and n < ONIONS_PER_SOUP:
                    out.append(mid_action(PUT_IN_POT, "onion", name))
        elif held == Item.DISH:
            for name, i in r.pots:
                if pots[i][1] >= 0:
                    out.append(mid_action(LOAD_SOUP, "soup", name))
        else:
            out += [mid_action(DELIVER, "soup", n) for n in r.serving]
        for name, i in r.shared:
            if not counters[i]:
                out.append(mid_action(PLACE_ON, word, name))
        closest = closest_empty_kitchen_counter(k, state, pos)
        if closest is not None:
            out.append(mid_action(PLACE_ON, word, closest))
    out += [WAIT_ACTION, MOVE_AWAY_ACTION]
    return out


def is_feasible(k: Kitchen, state: OvercookedState, player: int, action: MidAction) -> bool:
    """Whether ``action`` can still be carried out (a cheaper check than listing every option).

    A kitchen-counter placement stays feasible while that counter is empty, even if another
    empty counter has become closer.
    """
    v = action.verb
    if v in (WAIT, MOVE_AWAY):
        return True
    me = state.chefs[player]
    held = me.held
    if not k.reachable(me.pos, action.target):
        return False
    poi = k.pois[action.target]
    if v == PICK_UP:
        if held:
            return False
        if poi.kind == COUNTER:
            item = state.counters[poi.index]
            return bool(item) and item_word(item) == action.item
        return poi.kind in (ONION_DISPENSER, DISH_DISPENSER)
    if v == PLACE_ON:
        return bool(held) and item_word(held) == action.item and not state.counters[poi.index]
    if v == PUT_IN_POT:
        n, tick = state.pots[poi.index]
        return held == Item.ONION and tick < 0 and n < ONIONS_PER_SOUP
    if v == LOAD_SOUP:
        return held == Item.DISH and state.pots[poi.index][1] >= 0
    if v == DELIVER:
        return is_soup(held) and poi.kind == SERVING
    if v == START_COOKING:
        n, tick = state.pots[poi.index]
        return not held and n > 0 and tick < 0
    return False


# ---------------------------------------------------------------------------- grounding
def next_primitive(
    k: Kitchen,
    state: OvercookedState,
    player: int,
    action: MidAction,
    cook_time: int = 20,
    rng: np.random.Generator | None = None,
) -> int:
    """The primitive move that carries out ``action`` now (``STAY`` when it cannot progress).

    Loading a soup that is still cooking waits next to the pot, facing it, until it is ready.
    """
    if action.verb == WAIT:
        return int(Action.STAY)
    if action.verb == MOVE_AWAY:
        return move_away(k, state, player, rng)
    a = step_toward(k, state, player, action.target, rng)
    if a is None:
        return int(Action.STAY)
    cooking = action.verb == LOAD_SOUP and k.pot(state, action.target)[1] < cook_time
    return int(Action.STAY) if a == Action.INTERACT and cooking else a


class MidLevelController:
    """Carries out one chef's mid-level actions and says when to choose again.

    Call :meth:`needs_choice` with the current state; when True, choose an action from
    :func:`mid_level_actions` and :meth:`set` it; then :meth:`primitive` gives the move for this
    step. ``status`` says why a new choice is needed: ``"start"``, ``"completed: ..."`` or
    ``"impossible: ..."`` (no longer offered, the interaction had no effect, or the chef has been
    stuck behind its partner for ``patience`` steps).

    Walking follows :func:`~tom_envs.games.overcooked.kitchen.step_toward`, with two additions that
    keep two chefs from mirroring each other forever: a detour around the partner, once started, is
    followed to its end (unless the partner steps onto it), and after a collision the chef waits
    one step with probability 1/2.
    ``rng`` draws those choices (seed it for reproducible play).
    """

    def __init__(
        self,
        config: OvercookedConfig,
        player: int,
        patience: int = 3,
        rng: np.random.Generator | None = None,
    ) -> None:
        self.k = kitchen(config.kitchen)
        self.move = config.kitchen.tables.move
        self.cook_time = config.cook_time
        self.player = player
        self.patience = patience
        self.rng = rng if rng is not None else np.random.default_rng(player)
        self.reset()

    def reset(self) -> None:
        """Forget the current action (new episode)."""
        self.current: MidAction | None = None
        self.status = "start"
        self.steps = 0
        self._interacted: int | None = None  # held item when the last INTERACT was issued
        self._last: Any = None  # (chef, primitive) of the previous step
        self._stuck = 0
        self._blocked = False
        self._collided = False
        self._path: list[Pos] = []

    def needs_choice(self, state: OvercookedState) -> bool:
        """Update with the new state; True when the current action is done or impossible."""
        me = state.chefs[self.player]
        self._collided = False
        if self._last is not None:
            chef, action = self._last
            moved_into_floor = action < 4 and self.move[(chef.pos, action)] != chef.pos
            self._collided = moved_into_floor and me.pos == chef.pos
        cur = self.current
        if cur is None:
            return True
        if cur.verb in (WAIT, MOVE_AWAY):
            if self.steps:
                return self._finish(f"completed: {cur.text}")
            return False
        if self._interacted is not None:
            held_before = self._interacted
            self._interacted = None
            done = me.held != held_before
            if cur.verb == START_COOKING:
                done = self.k.pot(state, cur.target)[1] >= 0
            if done:
                return self._finish(f"completed: {cur.text}")
            return self._finish(f"impossible: {cur.text} (the interaction had no effect)")
        if not is_feasible(self.k, state, self.player, cur):
            return self._finish(f"impossible: {cur.text} (no longer possible)")
        if self._last is not None:
            chef, action = self._last
            if self._collided or (action == Action.STAY and self._blocked):
                self._stuck += 1
            elif chef != me or action != Action.STAY:
                self._stuck = 0
            if self._stuck >= self.patience:
                return self._finish(f"impossible: {cur.text} (blocked by the partner)")
        return False

    def _finish(self, status: str) -> bool:
        self.status = status
        self.current = None
        return True

    def set(self, action: MidAction) -> None:
        """Start carrying out ``action``."""
        self.current = action
        self.steps = 0
        self._interacted = None
        self._stuck = 0
        self._path = []

    def _walk(self, state: OvercookedState, target: str) -> int:
        me, other = state.chefs[self.player].pos, state.chefs[1 - self.player].pos
        path = self._path
        while path and path[0] == me:
            path.pop(0)
        if path:
            nxt = path[0]
            if abs(nxt[0] - me[0]) + abs(nxt[1] - me[1]) == 1 and nxt != other:
                return direction(me, nxt)
            path.clear()
        nxt = greedy_step(self.k, me, target)
        if nxt is None:
            return int(Action.STAY)
        if nxt != other:
            if self._collided and self.rng.random() < 0.5:
                return int(Action.STAY)
            return direction(me, nxt)
        if self.rng.random() < 0.5:
            detour = shortest_path(self.k, me, self.k.access_cells[target] - {other}, other)
            if detour:
                self._path = detour
                return direction(me, detour[0])
        self._blocked = True
        return int(Action.STAY)

    def primitive(self, state: OvercookedState) -> int:
        """This step's primitive move for the current action."""
        cur = self.current
        me = state.chefs[self.player]
        self._blocked = False
        if cur is None or cur.verb == WAIT:
            a = int(Action.STAY)
        elif cur.verb == MOVE_AWAY:
            a = move_away(self.k, state, self.player, self.rng)
        else:
            turn = at_target(self.k, state, self.player, cur.target)
            if turn is None:
                a = self._walk(state, cur.target)
            elif turn == Action.INTERACT and cur.verb == LOAD_SOUP:
                ready = self.k.pot(state, cur.target)[1] >= self.cook_time
                a = int(Action.INTERACT) if ready else int(Action.STAY)
            else:
                a = turn
            if a == Action.INTERACT:
                self._interacted = me.held
        self._last = (me, a)
        self.steps += 1
        return a


# ---------------------------------------------------------------------------- agent
@dataclass(frozen=True)
class MidLevelView:
    """What a mid-level chooser sees: the game view, the options and why it is asked.

    Attributes:
        player: the seat.
        game: the primitive game view (everything a chef sees).
        options: the mid-level actions offered now; action ``i`` of the inner agent is
            ``options[i]``.
        status: why a choice is needed (``"start"``, ``"completed: ..."``, ``"impossible: ..."``).
        history: my previous mid-level actions, oldest first (the paper's episodic memory).
        legal_actions: ``0 .. len(options) - 1``.
    """

    player: int
    game: OvercookedView
    options: tuple[MidAction, ...]
    status: str
    history: tuple[str, ...]
    legal_actions: tuple[int, ...]


def parse_mid_level(options: tuple[MidAction, ...], text: object) -> ParseResult:
    """Free text to an option index: the exact wording (trailing dots and case ignored), the
    option number, or a unique option named inside a longer answer. Never raises."""
    texts = {i: o.text for i, o in enumerate(options)}
    return match_action(text, texts)


class MidLevelAgent(BaseAgent):
    """An agent of the primitive game that decides with mid-level actions.

    Args:
        inner: an agent choosing among mid-level options; it receives a :class:`Turn` whose
            ``view`` is a :class:`MidLevelView`, whose ``text()`` is the paper's prompt (rules,
            state and "Available Actions") and whose ``parse`` maps text to an option. Bots,
            LLM agents and people all fit.
        config: the game's configuration.
        name: the agent's name.
        memory: how many previous mid-level actions the inner agent is shown.
    """

    def __init__(
        self, inner: Any, config: OvercookedConfig, name: str | None = None, memory: int = 5
    ) -> None:
        super().__init__()
        self.inner = inner
        self.game_config = config
        self.name = name or f"midlevel:{getattr(inner, 'name', type(inner).__name__)}"
        self.memory = memory
        self.controller = MidLevelController(config, 0)
        self.history: list[str] = []
        self.choices = 0
        self._choice_valid = True
        self._text: Any = None
        self._skin = "canonical"

    def config(self) -> dict[str, Any]:
        """The inner agent's settings (its ``config()`` or ``describe()``): it decides, the
        controller only grounds its choices; without either, this agent's constructor arguments."""
        for method in ("config", "describe"):
            fn: Any = getattr(self.inner, method, None)
            if callable(fn) and not isinstance(fn, type):
                return cast(dict[str, Any], fn())
        return super().config()

    def reset(self, info: EpisodeInfo) -> None:
        """New episode: reset the controller and the inner agent."""
        super().reset(info)
        self._skin = str((info.env_kwargs or {}).get("skin", "canonical"))
        self._text = None
        self.controller = MidLevelController(self.game_config, info.player, rng=self.rng)
        self.history = []
        self.choices = 0
        self._choice_valid = True  # whether the choice being carried out was the agent's own
        # At most one option per place, plus "wait" and "move away".
        most = len(kitchen(self.game_config.kitchen).pois) + 2
        self.inner.reset(dataclasses.replace(info, num_actions=most))

    def mid_turn(self, turn: Turn, state: OvercookedState) -> Turn:
        """The mid-level turn shown to the inner agent."""
        k = self.controller.k
        options = tuple(mid_level_actions(k, state, turn.player, self.game_config.cooking))
        view = MidLevelView(
            turn.player,
            turn.view,
            options,
            self.controller.status,
            tuple(self.history[-self.memory :]) if self.memory else (),
            tuple(range(len(options))),
        )
        if self._text is None:
            from tom_envs.core.skin import skin_text
            from tom_envs.games.overcooked.text import OvercookedText

            # in the episode's skin (``skin=``): the names the agent reads everywhere else
            self._text = skin_text(OvercookedText(self.game_config), self._skin)
        text = self._text
        read = getattr(text, "read_reply", None)
        mask = np.ones(len(options), dtype=np.int8)

        def parse(reply: str) -> ParseResult:
            if read is None:
                return parse_mid_level(options, reply)
            return cast(ParseResult, read(reply, lambda said: parse_mid_level(options, said)))

        return make_turn(
            turn.agent, view, turn.observation, mask,
            lambda: text.mid_level_observation(view), parse,
            reward=turn.reward, decision=self.choices,
        )  # fmt: skip

    def configure(self, config: OvercookedConfig) -> None:
        """Adopt the game's configuration (read from the views: the env may not be the one the
        agent was built for, e.g. ``--kw layout=...`` on the command line)."""
        self.game_config = config
        self.controller = MidLevelController(config, self.controller.player, rng=self.rng)
        self._text = None

    def act(self, turn: Turn) -> AgentAction:
        """Ask the inner agent when a new mid-level action is needed, then ground it."""
        if turn.view.config != self.game_config:
            self.configure(turn.view.config)
        state = view_state(turn.view)
        info: dict[str, Any] = {}
        valid = True
        if self.controller.needs_choice(state):
            mturn = self.mid_turn(turn, state)
            choice = as_agent_action(self.inner.act(mturn))
            options = mturn.view.options
            index = choice.action
            if index is None or not 0 <= int(index) < len(options):
                index, valid = options.index(WAIT_ACTION), False
            forfeit = isinstance(choice.info, dict) and choice.info.get("forfeit") is True
            if forfeit:  # an invalid answer loses the turn: "wait" (stay one step)
                index = options.index(WAIT_ACTION)
            chosen = options[int(index)]
            self.controller.set(chosen)
            self.history.append(chosen.text)
            self.choices += 1
            info = {"mid_level": chosen.text, "asked": mturn.view.status, **choice.info}
            valid = valid and choice.valid
            self._choice_valid = valid or forfeit  # a one-step wait: nothing left to carry out
        else:  # carrying out the last choice: a fallback's moves are the fallback's, not the agent's
            valid = self._choice_valid
            if not valid:
                info["failure"] = {"kind": "invalid", "message": "carrying out a fallback choice"}
        action = self.controller.primitive(state)
        if self.controller.current is not None:
            info.setdefault("mid_level", self.controller.current.text)
        return AgentAction(action=int(action), valid=valid, info=info)


def options_text(options: tuple[MidAction, ...] | list[MidAction]) -> str:
    """``[place onion in c0, wait, move away]`` as in the paper's prompts."""
    return "[" + ", ".join(o.text for o in options) + "]"


class HumanChooser(BaseAgent):
    """A person choosing mid-level actions at the terminal (the inner agent of
    :class:`MidLevelHumanAgent`): shows the paper's state text and the options, reads a reply,
    asks again with the parser's feedback until it names an option."""

    name = "human"

    def __init__(self, read: Any = input, write: Any = print) -> None:
        super().__init__()
        self.read, self.write = read, write

    def act(self, turn: Turn) -> int:
        """Show the state and options, read until the reply names an option."""
        text = turn.text()
        self.write(text.observation)
        for i, option in enumerate(text.legal_actions.values(), 1):
            self.write(f"  {i}. {option}")
        while True:
            result = turn.parse(self.read("your action (text or number): "))
            if result.action is not None:
                return int(result.action)
            self.write(result.feedback)


class MidLevelHumanAgent(MidLevelAgent):
    """Play a chef yourself with mid-level actions::

    tom-envs run Overcooked --agents tom_envs.games.overcooked.midlevel:MidLevelHumanAgent planner
    """

    def __init__(self, memory: int = 5) -> None:
        super().__init__(HumanChooser(), OvercookedConfig(), name="human", memory=memory)
