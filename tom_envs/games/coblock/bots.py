"""Partner bots for CoBlock: a cooperative pair and personas for functional Theory of Mind.

Bots read only their :class:`~tom_envs.games.coblock.view.CoBlockView` (their own goal and
inventory, the world, the dialogue, the public actions) and talk in a small, human-readable
protocol that any partner (an LLM, a person) can also use:

* disclosure: ``"Hi! My goal: red (1, 0, 1), red (1, 1, 1). My inventory: red 7, yellow 5."``
* request: ``"Please place: yellow (4, 0, 4), yellow (4, 1, 4)."``

Once both disclosures are in the dialogue, a bot that plans jointly computes the same joint plan
as its partner would (:func:`~tom_envs.games.coblock.planner.optimal_assignment`, the paper's
Alg. 1 with each agent keeping its own goal's blocks first), so two cooperative bots split the
work exactly as Alg. 1 does and reach the optimal workload balance γ = 0.5 without further talk.

| name | behaviour |
|---|---|
| ``cooperative`` | tells its goal and inventory in round 1; follows the joint plan; places what the partner asks for; when the partner stalls (two rounds idle while it had a placeable block to place) it builds the partner's share itself where it has the colour and asks for the rest; breaks wrong-coloured blocks on target cells |
| ``helper`` | helper-only (the paper's over-helpful LLM): tells its goal and inventory, builds the partner's disclosed goal and whatever it is asked for, never its own goal unless asked |
| ``egoist`` | builds only its own goal, asks the partner for the colours it lacks, ignores requests |
| ``passive`` | never speaks first and never builds on its own; answers a disclosure with its own and places exactly what it is asked for |
| ``error_prone`` | the cooperative policy, but one placement in five goes wrong (another colour it holds, or a neighbouring cell) and it never repairs its own mistakes |
| ``mirror``, ``mirror_helper``, ``mirror_egoist``, ``mirror_passive``, ``mirror_error_prone`` | the same five personas in the *mirror convention* B (below) |

**Two conventions** (:data:`CONVENTIONS`; every persona exists in both, so a convention is never
confounded with a persona). A convention is what two builders must share to split the work,
since the rules make each goal private and give some colours to one agent only (its blocks on
the partner's goal can only be placed by it, once the partner has said where):

* **A** (``cooperative`` and the original personas): the message format above, and the joint plan
  of Alg. 1 with each agent taking its *own* goal's mutual blocks first.
* **B** (the ``mirror`` personas): its own message format,
  ``"Building: (1, 0, 1) red, (1, 1, 1) red. Holding: 7 red, 5 yellow."`` and
  ``"Your blocks: (4, 0, 4) yellow."``, and the mirrored plan: the same counts, each agent taking
  its *partner's* goal's mutual blocks first (:func:`optimal_assignment` with
  ``first="partner"``).

A bot reads only its own convention's messages. Across conventions neither learns the other's
goal or its requests, so neither places the blocks only it can place on the other's goal and
the task fails unless no goal needs such help. So, by design, the best response to a member of
one convention is a member of the same convention (``cooperative`` for A, ``mirror`` for B), and
playing one convention's best response against the other's members fails most tasks (measured
on the selection seeds in ``tests/games/coblock/test_conventions.py``).

Every bot always returns a legal action and never ends the task (success ends the episode).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from tom_envs.core.agents import AgentAction, BaseAgent, EpisodeInfo, Turn
from tom_envs.core.contract import Bot, BotTable
from tom_envs.core.game import GameBundle
from tom_envs.games.coblock.planner import optimal_assignment
from tom_envs.games.coblock.rules import (
    Action,
    ActionKind,
    CoBlockConfig,
    decode_action,
    encode_action,
)
from tom_envs.games.coblock.structures import (
    COLOR_INDEX,
    COLORS,
    NEIGHBOURS,
    Block,
    Pos,
    build_order,
    fmt_block,
    in_bounds,
    pos_of,
    supported,
)
from tom_envs.games.coblock.view import CoBlockView

_ITEM = re.compile(rf"\b(?P<c>{'|'.join(COLORS)})\s*\(\s*(?P<x>-?\d+)\s*,\s*(?P<y>-?\d+)\s*,\s*(?P<z>-?\d+)\s*\)", re.I)
_ITEM_B = re.compile(rf"\(\s*(?P<x>-?\d+)\s*,\s*(?P<y>-?\d+)\s*,\s*(?P<z>-?\d+)\s*\)\s*(?P<c>{'|'.join(COLORS)})\b", re.I)
_COUNT_B = re.compile(rf"\b(?P<n>\d+)\s+(?P<c>{'|'.join(COLORS)})\b", re.I)
_DISCLOSURE_B = re.compile(r"building:\s*(.*?)\.\s*holding:\s*(.*?)(?:\.|$)", re.I | re.S)
_REQUEST_B = re.compile(r"your blocks:\s*(.*?)(?:\.|$)", re.I | re.S)
_COUNT = re.compile(rf"\b(?P<c>{'|'.join(COLORS)})\s+(?P<n>\d+)\b", re.I)
_DISCLOSURE = re.compile(r"my goal:\s*(.*?)\.\s*my inventory:\s*(.*?)(?:\.|$)", re.I | re.S)
_REQUEST = re.compile(r"please place:\s*(.*?)(?:\.|$)", re.I | re.S)
Assignment = tuple[tuple[Block, ...], tuple[Block, ...]]
#: Rounds between two requests for the same help.
REQUEST_EVERY = 4
#: Rounds a partner must idle (with a placeable block to place) before it counts as stalled.
STALL_ROUNDS = 2
#: Rounds a wrong block on a cell the partner should fill is left before a bot breaks it.
WRONG_PATIENCE = 2


# ------------------------------------------------------------------------------ protocol
def disclosure_text(goal: Sequence[Block], inventory: Sequence[int]) -> str:
    """The disclosure message of a goal and an inventory."""
    blocks = ", ".join(fmt_block(b) for b in goal) or "nothing"
    items = ", ".join(f"{COLORS[c]} {n}" for c, n in enumerate(inventory) if n) or "nothing"
    return f"Hi! My goal: {blocks}. My inventory: {items}."


def request_text(blocks: Sequence[Block]) -> str:
    """The request message for blocks the partner should place."""
    return "Please place: " + ", ".join(fmt_block(b) for b in blocks) + "."


def _blocks_in(text: str, item: re.Pattern[str] = _ITEM) -> tuple[Block, ...]:
    """The blocks named in ``text`` by ``item`` (a convention's block pattern)."""
    return tuple((int(m["x"]), int(m["y"]), int(m["z"]), COLOR_INDEX[m["c"].lower()])
                 for m in item.finditer(text))  # fmt: skip


def _parse_disclosure(text: str, head: re.Pattern[str], count: re.Pattern[str],
                      item: re.Pattern[str]) -> tuple[tuple[Block, ...], tuple[int, ...]] | None:  # fmt: skip
    m = head.search(text)
    if m is None:
        return None
    inventory = [0] * len(COLORS)
    for c in count.finditer(m.group(2)):
        inventory[COLOR_INDEX[c["c"].lower()]] = int(c["n"])
    return _blocks_in(m.group(1), item), tuple(inventory)


def parse_disclosure(text: str) -> tuple[tuple[Block, ...], tuple[int, ...]] | None:
    """``(goal blocks, inventory)`` from a disclosure message, or ``None``."""
    return _parse_disclosure(text, _DISCLOSURE, _COUNT, _ITEM)


def parse_request(text: str) -> tuple[Block, ...]:
    """The blocks a request message asks for (empty if it is not a request)."""
    m = _REQUEST.search(text)
    return _blocks_in(m.group(1)) if m else ()


# ----------------------------------------------------------------- the mirror convention B
def mirror_disclosure_text(goal: Sequence[Block], inventory: Sequence[int]) -> str:
    """Convention B's disclosure: ``"Building: (1, 0, 1) red. Holding: 7 red."``."""
    blocks = ", ".join(f"({b[0]}, {b[1]}, {b[2]}) {COLORS[b[3]]}" for b in goal) or "nothing"
    items = ", ".join(f"{n} {COLORS[c]}" for c, n in enumerate(inventory) if n) or "nothing"
    return f"Building: {blocks}. Holding: {items}."


def mirror_request_text(blocks: Sequence[Block]) -> str:
    """Convention B's request: ``"Your blocks: (4, 0, 4) yellow."``."""
    return "Your blocks: " + ", ".join(f"({b[0]}, {b[1]}, {b[2]}) {COLORS[b[3]]}" for b in blocks) + "."


def parse_mirror_disclosure(text: str) -> tuple[tuple[Block, ...], tuple[int, ...]] | None:
    """``(goal blocks, inventory)`` from a convention-B disclosure, or ``None``."""
    return _parse_disclosure(text, _DISCLOSURE_B, _COUNT_B, _ITEM_B)


def parse_mirror_request(text: str) -> tuple[Block, ...]:
    """The blocks a convention-B request asks for (empty if it is not one)."""
    m = _REQUEST_B.search(text)
    return _blocks_in(m.group(1), _ITEM_B) if m else ()


@dataclass(frozen=True)
class Convention:
    """What two builders share: how they say their goal and inventory and ask for blocks, and
    how the joint plan splits the mutual blocks (``first``, :func:`optimal_assignment`)."""

    name: str
    first: str
    disclose: Callable[[Sequence[Block], Sequence[int]], str]
    request: Callable[[Sequence[Block]], str]
    read_disclosure: Callable[[str], tuple[tuple[Block, ...], tuple[int, ...]] | None]
    read_request: Callable[[str], tuple[Block, ...]]


CONVENTIONS: dict[str, Convention] = {
    "A": Convention("A", "own", disclosure_text, request_text, parse_disclosure, parse_request),
    "B": Convention("B", "partner", mirror_disclosure_text, mirror_request_text,
                    parse_mirror_disclosure, parse_mirror_request),
}  # fmt: skip


# ------------------------------------------------------------------------------ personas
@dataclass(frozen=True)
class Persona:
    """What a bot does; see the table in the module docstring."""

    name: str
    description: str
    discloses_first: bool = True
    replies_disclosure: bool = True
    builds_own: bool = True
    plans_jointly: bool = True
    helps_partner_goal: bool = False
    follows_requests: bool = True
    requests_needs: bool = True
    takes_over: bool = True
    fixes_errors: bool = True
    error_rate: float = 0.0
    convention: str = "A"


_CONVENTION_A: tuple[Persona, ...] = (
        Persona(
            "cooperative",
            "tells its goal and inventory, follows the balanced joint plan (Alg. 1), answers "
            "requests, takes over or asks when the partner stalls, repairs wrong blocks",
        ),
        Persona(
            "helper",
            "helper-only: builds the partner's goal and what it is asked for, never its own goal "
            "unless asked",
            builds_own=False,
            plans_jointly=False,
            helps_partner_goal=True,
            requests_needs=False,
            takes_over=False,
            fixes_errors=False,
        ),
        Persona(
            "egoist",
            "builds only its own goal, asks for the colours it lacks, ignores requests",
            replies_disclosure=False,
            plans_jointly=False,
            follows_requests=False,
            takes_over=False,
            fixes_errors=False,
        ),
        Persona(
            "passive",
            "never speaks first or builds on its own; answers a disclosure and places what it is "
            "asked for",
            discloses_first=False,
            builds_own=False,
            plans_jointly=False,
            requests_needs=False,
            takes_over=False,
            fixes_errors=False,
        ),
        Persona(
            "error_prone",
            "cooperative, but 1 placement in 5 goes wrong (colour or cell) and it never repairs "
            "its own mistakes",
            fixes_errors=False,
            error_rate=0.2,
        ),
)


def _mirror(p: Persona) -> Persona:
    name = "mirror" if p.name == "cooperative" else f"mirror_{p.name}"
    return replace(p, name=name, convention="B",
                   description=f"{p.description}; in the mirror convention B (its own message "
                   "format, each takes the partner's goal first among shared colours)")  # fmt: skip


PERSONAS: dict[str, Persona] = {
    p.name: p for p in (*_CONVENTION_A, *map(_mirror, _CONVENTION_A))
}


@dataclass
class _Partner:
    """What a bot has read about its partner from the dialogue."""

    goal: tuple[Block, ...] = ()
    inventory: tuple[int, ...] | None = None
    disclosure: str | None = None
    requests: tuple[Block, ...] = ()


class CoBlockBot(BaseAgent):
    """A scripted CoBlock agent with a :class:`Persona` (any seat)."""

    def __init__(self, persona: str | Persona, config: CoBlockConfig) -> None:
        super().__init__()
        self.persona = PERSONAS[persona] if isinstance(persona, str) else persona
        self.name = self.persona.name
        self.convention = CONVENTIONS[self.persona.convention]
        self.game_config = config
        self._reset_memory()

    def _reset_memory(self) -> None:
        self.send_attempts = 0
        self.last_request: int | None = None
        self.stall = 0
        self.expected = False
        self.seen_round = -1
        self.partner_placed = [0] * len(COLORS)
        self.wrong_since: dict[Pos, int] = {}
        self._read_key: tuple[int, int] | None = None
        self._partner = _Partner()
        self._mine: str | None = None
        self._plan_key: tuple[str | None, str | None] | None = None
        self._plan: Assignment | None = None

    def reset(self, info: EpisodeInfo) -> None:
        """New episode: forget everything."""
        super().reset(info)
        self._reset_memory()

    # ----------------------------------------------------------------------- reading
    def _read_dialogue(self, view: CoBlockView) -> None:
        key = (view.dialogue_total, view.round)
        if key == self._read_key:
            return
        self._read_key = key
        partner = _Partner()
        requests: list[Block] = []
        conv = self.convention
        for m in view.chat():
            found = conv.read_disclosure(m.text)
            if m.mine:
                if found is not None:
                    self._mine = m.text
                continue
            if found is not None:
                partner.goal, partner.inventory, partner.disclosure = found[0], found[1], m.text
            requests.extend(conv.read_request(m.text))
        partner.requests = tuple(dict.fromkeys(requests))
        self._partner = partner

    def _joint_plan(self, view: CoBlockView) -> Assignment | None:
        """The joint assignment from both disclosures (``None`` until both are in the dialogue)."""
        if not self.persona.plans_jointly:
            return None
        key = (self._mine, self._partner.disclosure)
        if key == self._plan_key:
            return self._plan
        self._plan_key = key
        self._plan = None
        if self._mine is None or self._partner.disclosure is None:
            return None
        mine = self.convention.read_disclosure(self._mine)
        if mine is None or self._partner.inventory is None:
            return None
        me = view.player
        goals: list[tuple[Block, ...]] = [(), ()]
        invs: list[tuple[int, ...]] = [(), ()]
        goals[me], invs[me] = mine
        goals[1 - me], invs[1 - me] = self._partner.goal, self._partner.inventory
        if set(map(pos_of, goals[0])) & set(map(pos_of, goals[1])):
            return None  # inconsistent claims: no shared plan
        self._plan = optimal_assignment(goals, invs, first=self.convention.first)
        return self._plan

    def _track_partner(
        self, view: CoBlockView, plan: Assignment | None, cells: dict[Pos, int]
    ) -> None:
        """Update the stall counter and the partner's used colours from last round's actions."""
        if view.round == self.seen_round:
            return
        self.seen_round = view.round
        worked = False
        for e in view.records():
            if e.mine or e.round != view.round - 1:
                continue
            act = decode_action(self.game_config, e.action)
            if e.ok and act.kind in (ActionKind.PLACE, ActionKind.BREAK):
                worked = True
                if act.kind == ActionKind.PLACE:
                    self.partner_placed[act.color] += 1
        if plan is None:
            self.stall, self.expected = 0, False
            return
        if worked:
            self.stall = 0
        elif self.expected:
            self.stall += 1
        theirs = plan[1 - view.player]
        self.expected = any(
            self._partner_can(b) and _placeable(pos_of(b), cells, view.grid)
            for b in theirs
            if pos_of(b) not in cells
        )

    def _partner_can(self, block: Block) -> bool:
        inv = self._partner.inventory
        if inv is None:
            return False
        return inv[block[3]] - self.partner_placed[block[3]] > 0

    # ------------------------------------------------------------------------ acting
    def act(self, turn: Turn) -> AgentAction:
        """One decision (see the persona table)."""
        view: CoBlockView = turn.view
        legal = frozenset(view.legal_actions)
        wait = int(ActionKind.WAIT)
        if legal <= {wait}:
            return AgentAction(wait)
        self._read_dialogue(view)
        plan = self._joint_plan(view)
        cells = view.cells
        self._track_partner(view, plan, cells)
        p = self.persona
        me = view.player
        known = {pos_of(b): b[3] for b in view.goal_blocks}
        if plan is not None:
            known.update({pos_of(b): b[3] for b in self._partner.goal})

        # 1. tell my goal and inventory
        speaks = p.discloses_first or (p.replies_disclosure and self._partner.disclosure)
        can_send = int(ActionKind.SEND_MESSAGE) in legal
        if self._mine is None and self.send_attempts < 2 and can_send and speaks:
            self.send_attempts += 1
            text = self.convention.disclose(view.goal_blocks, view.inventory)
            return AgentAction(int(ActionKind.SEND_MESSAGE), message=text)

        # 2. repair wrong blocks on target cells
        if p.fixes_errors:
            choice = self._repair(view, plan, known, cells, legal)
            if choice is not None:
                return AgentAction(choice)

        # 3. what the partner asked for
        if p.follows_requests:
            pending = [b for b in self._partner.requests if cells.get(pos_of(b)) != b[3]]
            choice = self._place_first(view, pending, cells, legal)
            if choice is not None:
                return choice

        # 4. my share of the work
        mine: list[Block] = []
        if plan is not None:
            mine += plan[me]
            mine += [b for b in plan[1 - me] if not self._partner_can(b)]  # it cannot place these
        elif p.builds_own:
            mine += build_order(view.goal_blocks)
        if p.helps_partner_goal and self._partner.goal:
            mine += build_order(self._partner.goal)
        choice = self._place_first(view, mine, cells, legal)
        if choice is not None:
            return choice

        # 5. a stalled partner's share
        if p.takes_over and plan is not None and self.stall >= STALL_ROUNDS:
            choice = self._place_first(view, plan[1 - me], cells, legal)
            if choice is not None:
                return choice

        # 6. ask for what I cannot do myself
        if p.requests_needs and int(ActionKind.SEND_MESSAGE) in legal:
            choice = self._request(view, plan, cells)
            if choice is not None:
                return choice
        return AgentAction(wait)

    def _repair(
        self,
        view: CoBlockView,
        plan: Assignment | None,
        known: dict[Pos, int],
        cells: dict[Pos, int],
        legal: frozenset[int],
    ) -> int | None:
        """Break a wrong-coloured block on a target cell I am responsible for."""
        me = view.player
        mine_cells = {pos_of(b) for b in (plan[me] if plan is not None else view.goal_blocks)}
        wrong_now = {pos for pos, c in known.items() if pos in cells and cells[pos] != c}
        self.wrong_since = {pos: self.wrong_since.get(pos, view.round) for pos in sorted(wrong_now)}
        for pos in sorted(wrong_now, key=lambda q: (-q[1], q)):  # from the top down
            patient = view.round - self.wrong_since[pos] >= WRONG_PATIENCE
            if pos in mine_cells or patient:
                a = encode_action(self.game_config, Action(ActionKind.BREAK, -1, pos))
                if a in legal:
                    return a
        return None

    def _place_first(
        self,
        view: CoBlockView,
        blocks: Sequence[Block],
        cells: dict[Pos, int],
        legal: frozenset[int],
    ) -> AgentAction | None:
        """Place the first of ``blocks`` that is missing, free, placeable and in my inventory."""
        for b in blocks:
            pos = pos_of(b)
            if pos in cells or view.inventory[b[3]] <= 0:
                continue
            a = encode_action(self.game_config, Action(ActionKind.PLACE, b[3], pos))
            if a in legal:
                return AgentAction(self._maybe_wrong(view, b, cells, legal, a))
        return None

    def _maybe_wrong(
        self,
        view: CoBlockView,
        block: Block,
        cells: dict[Pos, int],
        legal: frozenset[int],
        action: int,
    ) -> int:
        """With probability ``error_rate``, another colour I hold or a neighbouring cell."""
        if self.persona.error_rate <= 0 or self.rng.random() >= self.persona.error_rate:
            return action
        pos = pos_of(block)
        others = [c for c, n in enumerate(view.inventory) if n > 0 and c != block[3]]
        if others:
            c = others[int(self.rng.integers(len(others)))]
            a = encode_action(self.game_config, Action(ActionKind.PLACE, c, pos))
            if a in legal:
                return a
        x, y, z = pos
        near = []
        for dx, dy, dz in NEIGHBOURS:
            q = (x + dx, y + dy, z + dz)
            if in_bounds(q, view.grid) and q not in cells:
                a = encode_action(self.game_config, Action(ActionKind.PLACE, block[3], q))
                if a in legal:
                    near.append(a)
        return near[int(self.rng.integers(len(near)))] if near else action

    def _request(
        self, view: CoBlockView, plan: Assignment | None, cells: dict[Pos, int]
    ) -> AgentAction | None:
        """Ask the partner to place what I cannot (at most every few rounds)."""
        if self.last_request is not None and view.round - self.last_request < REQUEST_EVERY:
            return None
        me = view.player
        if plan is not None:
            if self.stall < STALL_ROUNDS:
                return None
            needs = [b for b in plan[1 - me] if view.inventory[b[3]] <= 0]
        else:
            needs = [b for b in build_order(view.goal_blocks) if view.inventory[b[3]] <= 0]
        needs = [b for b in needs if cells.get(pos_of(b)) != b[3]]
        ready = [b for b in needs if _placeable(pos_of(b), cells, view.grid)]
        if not ready:
            return None
        self.last_request = view.round
        return AgentAction(int(ActionKind.SEND_MESSAGE), message=self.convention.request(needs[:10]))


def _placeable(pos: Pos, cells: dict[Pos, int], grid: Sequence[int]) -> bool:
    return pos not in cells and in_bounds(pos, grid) and supported(pos, cells)


def _persona_bot(persona: str, bundle: GameBundle) -> CoBlockBot:
    return CoBlockBot(persona, bundle.game.config)  # type: ignore[attr-defined]


def bot_table(**config: Any) -> BotTable:
    """A bot per persona (``cooperative`` first, then the convention-A personas, then their
    convention-B mirrors; the same for every configuration) and the populations ``personas``
    (helper, egoist, passive, error_prone: the paper's), ``mirror`` (the five convention-B
    personas) and ``all``."""
    bots = tuple(
        Bot(p.name, partial(_persona_bot, p.name), p.description) for p in PERSONAS.values()
    )
    populations = {
        "personas": ("helper", "egoist", "passive", "error_prone"),
        "mirror": tuple(p.name for p in PERSONAS.values() if p.convention == "B"),
        "all": tuple(PERSONAS),
    }
    return BotTable(bots, populations, game="CoBlock")
