"""Natural-language rendering of an Overcooked view, after the paper's App. A.

The rules prompt is the paper's game description ``G`` with the layout description ``L_i`` (its
shape, its places, and which partition each chef is in and what it can reach). The observation is
the paper's state description ``D(S)``: both inventories; for both chefs the distance in steps to
every point of interest (``o0`` onion dispensers, ``p0`` plate dispensers, ``c0`` cookers, ``d0``
delivery windows, ``s0`` shared counters, the closest empty kitchen counter ``k``), saying when one
is blocked by the other chef or inaccessible; the cookers (onions, on/off, soup state); the
counters. Two action vocabularies share that description:

* the env's primitive actions ("move up", "move down", "move right", "move left", "stay",
  "interact"), with the chef's cell and facing added to the observation;
* the mid-level actions of :mod:`~tom_envs.games.overcooked.midlevel` ("pick up onion from o0",
  "place onion in c0", ...), listed as "Available Actions: [...]" exactly as in the paper's
  prompt (:meth:`OvercookedText.mid_level_observation`), whose rules carry App. A.1's line
  "We have agreed to follow the following conventions: ..." (:data:`CONVENTIONS`, the
  conventions of the authors' agent).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from tom_envs.core.game import ParseResult, TextInterface, TextObservation
from tom_envs.core.skin import NAME_POOL, Mirror, Symbols
from tom_envs.core.text import answer_segment, match_action
from tom_envs.games.overcooked.kitchen import Kitchen, kitchen, walking_distances
from tom_envs.games.overcooked.layout import DIRECTION_NAMES, TERRAIN, TERRAIN_NAMES
from tom_envs.games.overcooked.midlevel import closest_empty_kitchen_counter, options_text
from tom_envs.games.overcooked.rules import (
    Action,
    Chef,
    OvercookedConfig,
    OvercookedState,
    item_name,
)
from tom_envs.games.overcooked.view import OvercookedView

if TYPE_CHECKING:
    from tom_envs.games.overcooked.midlevel import MidLevelView

ACTION_TEXT = {
    Action.NORTH: "move up",
    Action.SOUTH: "move down",
    Action.EAST: "move right",
    Action.WEST: "move left",
    Action.STAY: "stay",
    Action.INTERACT: "interact",
}
#: Extra words the primitive parser accepts (whole answer, case and punctuation ignored).
SYNONYMS = {
    "up": Action.NORTH,
    "north": Action.NORTH,
    "move north": Action.NORTH,
    "go up": Action.NORTH,
    "down": Action.SOUTH,
    "south": Action.SOUTH,
    "move south": Action.SOUTH,
    "go down": Action.SOUTH,
    "right": Action.EAST,
    "east": Action.EAST,
    "move east": Action.EAST,
    "go right": Action.EAST,
    "left": Action.WEST,
    "west": Action.WEST,
    "move west": Action.WEST,
    "go left": Action.WEST,
    "wait": Action.STAY,
    "noop": Action.STAY,
    "no-op": Action.STAY,
    "do nothing": Action.STAY,
    "use": Action.INTERACT,
    "interact with it": Action.INTERACT,
}


def _units(d: int) -> str:
    return f"{d} units away"


#: App. A.1's conventions line, with the conventions of the authors' Overcooked agent.
CONVENTIONS = (
    "We have agreed to follow the following conventions: 1. We will try to maximize the number "
    "of deliveries. 2. We will try to be efficient and prepare for the next soup while the "
    "current soup is cooking."
)

#: The paper's mid-level answer format, verbatim (``TextObservation.answer_format``).
ANSWER_FORMAT = (
    "Format your response as:\nExplanation: <Brief explanation for my next action>.\nAction: "
    "<action>.\nOnly select one action."
)


#: A skin's ingredient words (singular; the plural adds "s"; each takes "an", as "onion" does).
SKIN_INGREDIENTS = ("artichoke", "aubergine", "avocado", "eggplant", "endive")


class OvercookedText(TextInterface[OvercookedView]):
    """Text for one chef, from its view (App. A of the paper)."""

    def __init__(self, config: OvercookedConfig) -> None:
        self.config = config
        self.layout = config.kitchen
        self.k: Kitchen = kitchen(self.layout)
        self._rules: dict[tuple[int, bool], str] = {}

    # ------------------------------------------------------------------ rules
    def _names(self, player: int) -> tuple[str, str]:
        names = self.config.names
        return names[player], names[1 - player]

    def game_rules(self) -> str:
        """The game description ``G``."""
        c = self.config
        start = (
            "it starts cooking by itself when the third onion goes in"
            if c.cooking == "auto"
            else "interact with it with empty hands to start cooking whatever is in it (only a "
            "soup of three onions is worth points)"
        )
        reward = f"{c.delivery_reward:g}"
        return (
            "Two chefs cook and deliver onion soup together. An onion soup needs three onions. "
            "Onions come from onion dispensers (o0, o1, ...) and plates from plate dispensers "
            f"(p0, ...). Put three onions in a cooker (c0, c1, ...); {start}, and the soup is "
            f"cooked after {c.cook_time} steps. A chef holding a plate loads the cooked soup on "
            "the plate from the cooker, then places the soup for delivery at a delivery window "
            f"(d0, ...): every delivered soup gives {reward} points to the team. A chef carries "
            "one item at a time and can put items down on counters and pick them up again: "
            "shared counters (s0, ...) can be reached from both sides of a partition, kitchen "
            "counters (k0, ...) are the other counters. To use a dispenser, cooker, window or "
            "counter a chef stands next to it and faces it. Chefs cannot walk through each "
            "other. Both chefs act at the same time, every step, and the game lasts "
            f"{c.horizon} steps."
        )

    def layout_description(self, player: int) -> str:
        """The layout description ``L_i``: name, shape, places, partitions."""
        lay, k = self.layout, self.k
        me, partner = self._names(player)
        counts = []
        for prefix, names in (
            ("onion dispenser", k.onions),
            ("plate dispenser", k.plates),
            ("cooker", k.pots),
            ("delivery window", k.serving),
            ("shared counter", k.shared),
        ):
            if names:
                plural = "s" if len(names) > 1 else ""
                counts.append(f"{len(names)} {prefix}{plural} ({', '.join(names)})")
        text = (
            f"The layout is {lay.title}, a kitchen of {lay.width} by {lay.height} cells with "
            f"{', '.join(counts)}."
        )
        if lay.description:
            text += f" {lay.description}"
        regions = sorted(set(k.region.values()))
        if len(regions) > 1:
            parts = []
            starts = lay.starts if player == 0 else lay.starts[::-1]
            for who, cell in zip((me, partner), starts, strict=True):
                reach = [n for n in k.pois if n[0] in "opcds" and k.reachable(cell, n)]
                subject = "I start" if who == me else f"{who} starts"
                parts.append(f"{subject} in a partition that reaches {', '.join(reach)}")
            text += " The kitchen is divided into partitions: " + "; ".join(parts) + "."
        return text

    def rules_prompt(self, view: OvercookedView) -> str:
        """The paper's system prompt, for primitive actions."""
        return self._prompt(view.player, mid_level=False)

    def _prompt(self, player: int, mid_level: bool) -> str:
        key = (player, mid_level)
        if key not in self._rules:
            me, partner = self._names(player)
            tail = (
                f"{CONVENTIONS}\nI'll provide my action history, current state, teammate's "
                f"status, and my possible actions. Help me select the best action from the list. "
                f"{ANSWER_FORMAT}"
                if mid_level
                else "Each step I choose one primitive action: move up, move down, move right, "
                "move left (moving towards a counter, dispenser, cooker or window only turns me "
                "to face it), stay, or interact with the cell I face."
            )
            self._rules[key] = (
                f"I am {me}. I am playing the game Overcooked with my partner {partner}. "
                f"{self.layout_description(player)}\n"
                f"Overcooked has the following rules: {self.game_rules()}\n{tail}"
            )
        return self._rules[key]

    # ------------------------------------------------------------------ state
    def _locations(self, chef: Chef, other: Chef, other_name: str, state: OvercookedView) -> str:
        k = self.k
        blocked = walking_distances(k, chef.pos, other.pos)
        parts = []
        for name in (*k.onions, *k.plates, *k.pots, *k.serving, *k.shared):
            free = k.distance(chef.pos, name)
            if free is None:
                parts.append(f"{name} is inaccessible.")
                continue
            cells = [c for c in k.access_cells[name] if c in blocked]
            around = min((blocked[c] for c in cells), default=None)
            if around is None:
                parts.append(f"{name} is blocked by {other_name}.")
            elif around > free:
                parts.append(
                    f"{name} is {_units(free)} blocked by {other_name} ({around} units around)."
                )
            else:
                parts.append(f"{name} is {_units(free)}.")
        closest = closest_empty_kitchen_counter(k, state, chef.pos)
        if closest is not None:
            d = k.distance(chef.pos, closest)
            parts.append(f"Closest empty kitchen counter {closest} is {_units(d or 0)}.")
        return " ".join(parts)

    def _environment(self, view: OvercookedView) -> str:
        k, ct = self.k, self.config.cook_time
        parts = []
        for name in k.pots:
            n, tick = k.pot(view, name)
            if tick < 0:
                parts.append(
                    f"{name} contains {n} out of 3 onions. {name} is off. Soup in {name} is "
                    "not started."
                )
            elif tick < ct:
                parts.append(
                    f"{name} contains {n} out of 3 onions. {name} is on. Soup in {name} is "
                    f"cooking ({ct - tick} steps left)."
                )
            else:
                parts.append(
                    f"{name} contains {n} out of 3 onions. {name} is off. Soup in {name} is cooked."
                )
        for name in k.shared:
            item = k.counter_item(view, name)
            parts.append(f"{name} contains {item_name(item)}." if item else f"{name} is empty.")
        filled = [
            f"{n} contains {item_name(k.counter_item(view, n))}."
            for n in k.kitchen_counters
            if k.counter_item(view, n)
        ]
        parts += filled or ["Kitchen counters are empty."]
        return " ".join(parts)

    def state_description(self, view: OvercookedView) -> str:
        """The paper's ``D(S)``: inventories, both chefs' locations, cookers and counters."""
        other_name = self._names(view.player)[1]
        me, other = view.me, view.partner
        return "\n".join(
            [
                f"<Inventory>: I am holding {item_name(me.held)}. {other_name} is holding "
                f"{item_name(other.held)}.",
                f"<My Location Information>: {self._locations(me, other, other_name, view)}",
                f"<{other_name}'s Location Information>: {self._locations(other, me, 'me', view)}",
                f"<Environment Details>: {self._environment(view)}",
                f"<Time>: step {view.timestep} of {view.horizon}; score {view.score:g}.",
            ]
        )

    def _facing(self, chef: Chef) -> str:
        x, y = chef.pos
        dx, dy = ((0, -1), (0, 1), (1, 0), (-1, 0))[chef.facing]
        front = (x + dx, y + dy)
        kind = self.layout.terrain(front)
        name = next((p.name for p in self.k.pois.values() if p.pos == front), None)
        what = TERRAIN_NAMES[kind] + (f" {name}" if name else "")
        return f"at cell ({x}, {y}) facing {DIRECTION_NAMES[chef.facing]}, towards the {what}"

    def observation_text(self, view: OvercookedView) -> str:
        """``D(S)`` plus both chefs' cells and facing (what primitive moves need)."""
        _, other_name = self._names(view.player)
        lines = [
            self.state_description(view),
            f"<Position>: I am {self._facing(view.me)}. {other_name} is "
            f"{self._facing(view.partner)}. Cells are (column, row), row 0 at the top.",
        ]
        if not view.legal_actions:
            lines.append(f"The game is over after {view.horizon} steps.")
        return "\n".join(lines)

    # ------------------------------------------------------------------ actions
    def action_text(self, view: OvercookedView, action: int) -> str:
        """``"move up"``, ..., ``"stay"``, ``"interact"``."""
        return ACTION_TEXT[Action(action)]

    def parse_action(self, view: OvercookedView, text: str) -> ParseResult:
        """Accepts the action texts, "up"/"north"/"go up" and the like, "wait", the list number,
        read from the answer segment like every game's (an ``<action>`` tag, ``Action:``,
        ``Answer:``...: :func:`~tom_envs.core.text.answer_segment`). Never raises."""
        result = match_action(text, self.legal_actions_text(view))
        if result.valid or not isinstance(text, str) or not view.legal_actions:
            return result
        word = re.sub(r"\s+", " ", answer_segment(text).lower()).strip(" .!\"'`*")
        if word in SYNONYMS and SYNONYMS[word] in view.legal_actions:
            a = int(SYNONYMS[word])
            return ParseResult(a, f"understood: {ACTION_TEXT[Action(a)]}")
        return result

    # ------------------------------------------------------------------ mid-level
    def mid_level_observation(self, view: MidLevelView) -> TextObservation:
        """The paper's mid-level prompt: rules, history, state, "Available Actions: [...]"."""
        history = ", ".join(view.history) if view.history else "none yet"
        body = "\n".join(
            [
                f"<My Action History>: {history}.",
                f"<Last Action Status>: {view.status}.",
                self.state_description(view.game),
                f"Available Actions: {options_text(view.options)}",
            ]
        )
        return TextObservation(
            self._prompt(view.player, mid_level=True),
            body,
            {i: o.text for i, o in enumerate(view.options)},
            ANSWER_FORMAT,
        )

    # ------------------------------------------------------------------ spectator
    def skin_mirrors(self) -> tuple[Mirror, ...]:
        """The kitchen may be mirrored left to right by a skin (the rules have no handedness):
        every cell ``(x, y)`` becomes ``(W-1-x, y)``, "left" and "right" (not the time left) and
        "east" and "west" change places, in the actions' names too ("move left" then moves the
        chef east in the canonical kitchen, where it is shown moving west), the layout's prose
        ("the left wall") and the drawn kitchen read mirrored, and answers are read back through
        the same reflection."""
        width = self.layout.width
        cells = "".join(sorted(TERRAIN)) + "12"
        return (Mirror("x", r"\((?P<x>\d{1,3}), \d{1,3}\)", width,
                       swaps=(("left", "right"), ("east", "west")), not_after=("step", "steps"),
                       rows=rf"^[{re.escape(cells)}]{{{width}}}$"),)  # fmt: skip

    def skin_symbols(self) -> tuple[Symbols, ...]:
        """What a skin renames (``skin=``, :mod:`tom_envs.core.skin`): the chefs' names and the
        ingredient (``onion``/``onions``). Points of interest keep their labels (``o0``, ``c0``);
        cells and directions change only in a mirroring skin (:meth:`skin_mirrors`)."""
        return (
            Symbols("chef", tuple(self.config.names), NAME_POOL),
            Symbols("ingredient", ("onion",), SKIN_INGREDIENTS),
            Symbols("ingredients", ("onions",), tuple(w + "s" for w in SKIN_INGREDIENTS),
                    follows="ingredient"),
        )  # fmt: skip

    def render_state(self, state: OvercookedState) -> str:
        """The kitchen drawn as text (``1``/``2`` the chefs) with every chef, pot and counter."""
        rows = [list(r) for r in self.layout.grid]
        for i, chef in enumerate(state.chefs):
            rows[chef.pos[1]][chef.pos[0]] = str(i + 1)
        lines = [
            f"{self.layout.title}, step {state.timestep}/{self.config.horizon}, score "
            f"{state.score:g}",
            *("".join(r) for r in rows),
        ]
        for i, chef in enumerate(state.chefs):
            lines.append(
                f"player_{i} ({self.config.names[i]}, {i + 1}) at {chef.pos} facing "
                f"{DIRECTION_NAMES[chef.facing]}, holding {item_name(chef.held)}"
            )
        view = OvercookedView(
            0,
            state.timestep,
            self.config.horizon,
            *state.chefs,
            state.pots,
            state.counters,
            state.score,
            (),
            self.config,
        )
        lines.append(self._environment(view))
        return "\n".join(lines)


__all__ = ["ACTION_TEXT", "CONVENTIONS", "SYNONYMS", "OvercookedText"]
