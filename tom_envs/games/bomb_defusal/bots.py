"""Partner bots for the bomb-defusal mission. They read the player view, never the state.

| name | what it does |
|---|---|
| ``random`` | uniformly random legal actions, no chat (the paper's random baseline) |
| ``heuristic`` | a decentralised team member: explores, shares what it finds by chat, defuses |
| ``cbs`` | **privileged**: plays its part of the centralised CBS plan (``tom_envs/games/bomb_defusal/planner.py``) |

``heuristic`` keeps a memory of rooms and bombs from its own view and from teammates' messages
(read with :func:`~tom_envs.games.bomb_defusal.tom.extract_facts`, so it understands the canonical
sentences it and its teammates write, and a fair share of free LLM text). Every turn it:

1. inspects the bomb in its room if it does not know its sequence, or cuts it if it holds the
   next colour;
2. otherwise takes the nearest *task* it is assigned: for each known bomb (by id), the next phase
   goes to the closest player holding its colour (ties to the lower seat), one task per player,
   computed from public locations and tools, so teammates with the same knowledge agree;
3. otherwise explores the nearest room whose contents nobody has reported, skipping rooms that
   teammates are in or announced they are heading to; then waits by a bomb whose later phase it
   can cut, or heads for a bomb whose sequence is still unknown.

It tells its teammates, in canonical sentences, what it just found (room contents on arrival, a
bomb's remaining sequence after inspecting or cutting, a defusal) and where it will be after this
action. Its messages are free text, so it plays alongside LLM agents unchanged, with or without
``symbolic_messages``.

**Members with different work splits** (the partner zoo of issue #35; designed from the rules,
each with the reason its best response differs, written before any cross-play was measured):

| name | what it does | why its best response differs |
|---|---|---|
| ``split_even`` | role split A: alpha (seat 0) owns the phases in its own colours (red, green) of the bombs in *even*-index rooms and explores/inspects only those rooms; bravo and charlie own every other phase and never touch alpha's | with it as partner, alpha's phases are left entirely to the focal: a focal that leaves them (``split_odd``; ``heuristic`` or ``cbs`` when a partner is closer) loses those bombs (10 points a phase); one that takes exactly them (``split_even``) completes without duplicated work |
| ``split_odd`` | role split B, the mirror: alpha owns its colours' phases in the *odd*-index rooms | the same with the other half: ``split_even`` as focal never cuts red/green in odd rooms and these partners never do, so those bombs are lost |
| ``heuristic_silent`` | ``heuristic`` that never chats (the design study's ``heuristic_silent``) | a teammate must watch rather than read: a focal that waits for reports (``cbs``'s plan breaks, ``heuristic`` skips rooms it believes reported) must explore and inspect itself |
| ``passive`` | never moves, cuts or talks: waits in the start room | the focal must do alone every phase it can: a focal that leaves work to a closer or convention-bound teammate loses it |

A split's roles are tied to seats (alpha is seat 0), so one policy plays both sides: as focal in
seat 0 it takes alpha's half, as partner in seats 1-2 it takes the rest. With ``wrong_tool=
"explode"``, the convention applies to the safe-cut rule too (only permitted cutters count).

``cbs`` rebuilds the full mission from the episode seed (exactly as ``reset(seed)`` draws it), so it
has information no player has; it is a planning upper bound, not a fair partner. All seats share
one plan (cached). If reality departs from the plan (a partner does not play its part) it hands
over to ``heuristic`` for the rest of the episode.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from tom_envs.core.agents import AgentAction, BaseAgent, EpisodeInfo, RandomAgent, Turn
from tom_envs.core.contract import Bot, BotTable
from tom_envs.core.game import GameBundle
from tom_envs.games.bomb_defusal.facts import extract_facts, render_facts
from tom_envs.games.bomb_defusal.planner import plan_mission
from tom_envs.games.bomb_defusal.rules import ActionKind, BombConfig, BombGame, encode_action
from tom_envs.games.bomb_defusal.view import (
    BombFact,
    BombView,
    Fact,
    LocationFact,
    RequestFact,
    ResultKind,
    RoomFact,
)


class HeuristicAgent(BaseAgent):
    """A decentralised explorer-defuser that shares its findings (see the module docstring)."""

    name = "heuristic"

    def __init__(self, config: BombConfig, chat: bool = True) -> None:
        super().__init__()
        self.game_config = config
        self.chat = chat

    def reset(self, info: EpisodeInfo) -> None:
        """Forget the previous episode."""
        super().reset(info)
        self.rooms: dict[int, set[int]] = {}  # room -> active bombs believed there
        self.where_bomb: dict[int, int] = {}  # bomb -> room
        self.remaining: dict[int, tuple[int, ...]] = {}  # bomb -> shortest known remaining
        self.gone: set[int] = set()  # bombs known defused
        self.heading: dict[int, int] = {}  # teammate -> room it announced
        self.said: set[Fact] = set()
        self.deferred: dict[int, int] = {}  # bomb -> turns I left its inspection to a teammate
        self.prev_room: int | None = None  # my room after my previous action
        self.prev_here: tuple[int, ...] = ()  # teammates in it at my previous turn

    # ----------------------------------------------------------------- memory
    def _learn_bomb(self, bomb: int, remaining: tuple[int, ...], room: int | None) -> None:
        if room is not None:
            self.where_bomb[bomb] = room
        if not remaining:
            self.gone.add(bomb)
            for bombs in self.rooms.values():
                bombs.discard(bomb)
            return
        old = self.remaining.get(bomb)
        if old is None or len(remaining) < len(old):  # progress only ever shortens it
            self.remaining[bomb] = remaining

    def _see_room(self, room: int, bombs: tuple[int, ...]) -> None:
        for b in self.rooms.get(room, set()) - set(bombs):
            self._learn_bomb(b, (), room)
        self.rooms[room] = set(bombs)
        for b in bombs:
            self.where_bomb[b] = room

    def _update(self, view: BombView) -> None:
        res = view.last_result
        if res.kind in (ResultKind.START, ResultKind.MOVED):
            self._see_room(res.room, res.bombs_seen)
        for item in view.intel:
            self._learn_bomb(item.bomb, item.remaining, item.room)
        gmap = view.game_map
        for msg in view.messages:
            facts = msg.facts or extract_facts(msg.text, msg.sender, self.game_config, gmap)
            for f in facts:
                if isinstance(f, RoomFact) and f.room != view.room:
                    self._see_room(f.room, tuple(b for b in f.bombs if b not in self.gone))
                elif isinstance(f, BombFact):
                    self._learn_bomb(f.bomb, f.remaining, f.room)
                elif isinstance(f, LocationFact) and f.agent == msg.sender:
                    self.heading[f.agent] = f.room
        self._see_room(view.room, view.room_bombs)

    # ----------------------------------------------------------------- policy
    def _positions(self, view: BombView) -> list[int]:
        out = []
        for p, r in enumerate(view.agent_rooms):
            out.append(r if r >= 0 else self.heading.get(p, view.room))
        return out

    def _fresh(self, view: BombView, bomb: int) -> bool:
        """My knowledge of ``bomb`` comes from my previous action, and nobody could cut since."""
        res = view.last_result
        fresh = res.bomb == bomb and res.kind in (
            ResultKind.INSPECTED, ResultKind.CUT, ResultKind.WRONG_TOOL
        )  # fmt: skip
        return fresh and self.prev_room == view.room

    def _safe_to_cut(self, view: BombView, bomb: int, colour: int) -> bool:
        """``wrong_tool="explode"``: cut only on fresh knowledge. Teammates act once between my
        turns, so only one already here at my previous turn could have cut since; by convention
        the lowest seat holding the colour cuts."""
        if not self._fresh(view, bomb):
            return False
        rivals = [p for p in self.prev_here if self._may_cut(view, p, view.room, colour)]
        return all(p > view.player for p in rivals)

    # ------------------------------------------------- the work split (one convention per team)
    def _may_cut(self, view: BombView, player: int, room: int, colour: int) -> bool:
        """Whether ``player`` cuts ``colour`` phases in ``room`` (here: whoever holds it)."""
        return colour in view.tools[player]

    def _may_inspect(self, view: BombView, player: int, room: int) -> bool:
        """Whether ``player`` inspects bombs in ``room`` (here: everyone everywhere)."""
        return True

    def _tasks(self, view: BombView) -> dict[int, int]:
        """Player -> room of the next phase it should cut (greedy, same for all who agree)."""
        pos = self._positions(view)
        dist = view.game_map.distance
        busy: dict[int, int] = {}
        for bomb in sorted(self.remaining):
            if bomb in self.gone or bomb not in self.where_bomb:
                continue
            room = self.where_bomb[bomb]
            colour = self.remaining[bomb][0]
            free = [p for p in range(len(pos))
                    if self._may_cut(view, p, room, colour) and p not in busy]  # fmt: skip
            if free:
                busy[min(free, key=lambda p: (dist[pos[p]][room], p))] = room
        return busy

    def _explore(self, view: BombView) -> int | None:
        dist = view.game_map.distance
        pos = self._positions(view)
        taken = {r for p, r in enumerate(pos) if p != view.player}
        taken |= {r for p, r in self.heading.items() if p != view.player}
        unknown = [r for r in range(view.game_map.num_rooms)
                   if r not in self.rooms and self._may_inspect(view, view.player, r)]  # fmt: skip
        choices = [r for r in unknown if r not in taken] or unknown
        if not choices:
            return None
        return min(choices, key=lambda r: (dist[view.room][r], r))

    def choose(self, view: BombView) -> tuple[ActionKind, int | None]:
        """The base action (inspect / go to room / use colour)."""
        here = view.room_bombs[0] if view.room_bombs else None
        if here is not None:
            rem = self.remaining.get(here)
            if rem is None:
                # one inspector per bomb: the lowest seat here; the others move on, unless the
                # answer has not come by a round later
                if self._may_inspect(view, view.player, view.room):
                    lower = [p for p in view.room_agents
                             if p < view.player and self._may_inspect(view, p, view.room)]  # fmt: skip
                    if not lower or self.deferred.get(here, 0) >= 1:
                        return ActionKind.INSPECT, None
                    self.deferred[here] = self.deferred.get(here, 0) + 1
            elif self._may_cut(view, view.player, view.room, rem[0]):
                if self.game_config.wrong_tool != "explode":
                    return ActionKind.USE, rem[0]
                if self._safe_to_cut(view, here, rem[0]):
                    return ActionKind.USE, rem[0]
                if not self._fresh(view, here):
                    return ActionKind.INSPECT, None
        target = self._tasks(view).get(view.player)
        if target is None:
            target = self._explore(view)
        if target is None:  # wait by a bomb whose later phase I can cut, or find a sequence
            waits = [
                self.where_bomb[b]
                for b, rem in sorted(self.remaining.items())
                if b not in self.gone
                and b in self.where_bomb
                and any(self._may_cut(view, view.player, self.where_bomb[b], c) for c in rem)
            ]
            unknown = [
                r for b, r in sorted(self.where_bomb.items())
                if b not in self.gone and b not in self.remaining
                and self._may_inspect(view, view.player, r)
            ]  # fmt: skip
            options = waits or unknown
            if options:
                dist = view.game_map.distance
                target = min(options, key=lambda r: (dist[view.room][r], r))
        if target is not None and target != view.room:
            return ActionKind.GO_TO, view.game_map.next_hop(view.room, target)
        return wait_action(view)

    def message(self, view: BombView, kind: ActionKind, target: int | None) -> str | None:
        """What I found since my last turn and where I will be, in canonical sentences."""
        res = view.last_result
        facts: list[Fact] = []
        room = target if kind == ActionKind.GO_TO else view.room
        facts.append(LocationFact(view.player, room))  # type: ignore[arg-type]
        if res.kind in (ResultKind.START, ResultKind.MOVED):
            facts.append(RoomFact(res.room, res.bombs_seen))
        elif res.kind in (ResultKind.INSPECTED, ResultKind.CUT, ResultKind.WRONG_TOOL):
            facts.append(BombFact(res.bomb, res.remaining, res.room))  # type: ignore[arg-type]
        elif res.kind in (ResultKind.DEFUSED, ResultKind.EXPLODED):
            facts.append(BombFact(res.bomb, ()))  # type: ignore[arg-type]
        here = view.room_bombs[0] if view.room_bombs else None
        if here is not None and kind != ActionKind.GO_TO:
            rem = self.remaining.get(here)
            if rem and rem[0] not in view.my_tools:
                facts.append(RequestFact(view.player, rem[0], view.room))
        new = [f for f in facts if f not in self.said]
        self.last_said = tuple(new)
        if not new:
            return None
        self.said.update(new)
        return render_facts(tuple(new), self.game_config, view.game_map, view.player)

    def on_shadow_message_dropped(self, message: str) -> None:
        """Its last message never reached the team (it plays in shadow, a switching partner's
        B): forget having said it, so it reports those facts once it plays."""
        self.said.difference_update(getattr(self, "last_said", ()))

    def act(self, turn: Turn) -> AgentAction:
        """Update memory, choose, and tell the team."""
        view: BombView = turn.view
        self._update(view)
        kind, target = self.choose(view)
        self.prev_room = view.room if kind != ActionKind.GO_TO else target
        self.prev_here = view.room_agents if kind != ActionKind.GO_TO else ()
        action = encode_action(self.game_config, kind, target)
        text = self.message(view, kind, target) if self.chat else None
        return AgentAction(action=action, message=text)


class SplitAgent(HeuristicAgent):
    """A role-split team member (``split_even`` / ``split_odd``, see the module docstring):
    ``heuristic`` with the work split by a fixed convention instead of by distance.

    Args:
        config: the game's configuration.
        parity: alpha's rooms are those whose index has this parity (0: even, 1: odd).
        chat: whether it reports by chat (like ``heuristic``).

    Alpha (seat 0) owns the phases of its own colours in its rooms and inspects and explores only
    there; every other seat owns every other phase (a colour alpha lacks, anywhere; alpha's
    colours outside alpha's rooms) and inspects and explores everywhere. Nobody cuts a phase it
    does not own, whoever holds the tool, and each seat assumes its teammates keep the same
    convention when it assigns tasks.
    """

    name = "split"

    def __init__(self, config: BombConfig, parity: int, chat: bool = True) -> None:
        if parity not in (0, 1):
            raise ValueError(f"parity must be 0 (even rooms) or 1 (odd rooms), got {parity!r}")
        super().__init__(config, chat=chat)
        self.parity = parity
        self.name = ("split_even", "split_odd")[parity]

    def alphas_room(self, room: int) -> bool:
        """Whether ``room`` (an index) is one of alpha's rooms under this convention."""
        return room % 2 == self.parity

    def _may_cut(self, view: BombView, player: int, room: int, colour: int) -> bool:
        if colour not in view.tools[player]:
            return False
        if colour not in view.tools[ALPHA]:
            return True  # only the others hold it
        return (player == ALPHA) == self.alphas_room(room)

    def _may_inspect(self, view: BombView, player: int, room: int) -> bool:
        return player != ALPHA or self.alphas_room(room)


class PassiveAgent(BaseAgent):
    """Never moves, cuts or talks: waits where it starts (the ``passive`` member)."""

    name = "passive"

    def __init__(self, config: BombConfig) -> None:
        super().__init__()
        self.game_config = config

    def act(self, turn: Turn) -> int:
        """The waiting action (:func:`wait_action`)."""
        return encode_action(self.game_config, *wait_action(turn.view))


#: The seat whose share a role split fixes (alpha: the focal seat of the functional-ToM page).
ALPHA = 0


@lru_cache(maxsize=32)
def _cached_plan(config: BombConfig, seed: int) -> Any:
    from gymnasium.utils import seeding

    game = BombGame(config)
    rng, _ = seeding.np_random(seed)
    state = game.initial_state(rng)
    return state.mission, plan_mission(game, state)


class CBSAgent(BaseAgent):
    """PRIVILEGED: executes its part of the centralised CBS plan (see the module docstring)."""

    name = "cbs"

    def __init__(self, config: BombConfig) -> None:
        super().__init__()
        self.game_config = config
        self.fallback = HeuristicAgent(config)

    def reset(self, info: EpisodeInfo) -> None:
        """Rebuild the mission from the seed and take this seat's part of the plan."""
        super().reset(info)
        self.fallback.reset(info)
        self.steps: list[tuple[str, int | None]] = []
        self.deviated = info.seed is None
        self.plan = None
        if info.seed is not None:
            self.mission, self.plan = _cached_plan(self.game_config, int(info.seed))
            self.steps = list(self.plan.actions[info.player])
        self.k = 0
        self.expected: ResultKind | None = None

    def act(self, turn: Turn) -> int | AgentAction:
        """The next planned action, or the heuristic's once the plan no longer holds."""
        view: BombView = turn.view
        fallback = self.fallback.act(turn)  # keeps the fallback's memory current
        if not self.deviated and self.k == 0:
            here = tuple(
                b for b, r in enumerate(self.mission.bomb_rooms) if r == self.mission.start_room
            )
            if view.room != self.mission.start_room or not set(view.room_bombs) <= set(here):
                self.deviated = True  # the seed did not rebuild this episode's mission
        if not self.deviated and self.expected is not None:
            got = view.last_result.kind
            if got != self.expected and not (
                self.expected == ResultKind.CUT and got == ResultKind.DEFUSED
            ):
                self.deviated = True
        if self.deviated:
            return fallback
        if self.k >= len(self.steps):
            self.expected = None
            return self._wait(view)
        kind, arg = self.steps[self.k]
        self.k += 1
        if kind == "move":
            self.expected = ResultKind.MOVED
            action = encode_action(self.game_config, ActionKind.GO_TO, arg)
        elif kind == "use":
            self.expected = ResultKind.CUT
            action = encode_action(self.game_config, ActionKind.USE, arg)
        else:
            self.expected = None
            return self._wait(view)
        if action not in turn.legal_actions:
            self.deviated = True
            return fallback
        return action

    def _wait(self, view: BombView) -> int:
        return encode_action(self.game_config, *wait_action(view))


def wait_action(view: BombView) -> tuple[ActionKind, int | None]:
    """An action that changes nothing: inspect a bomb here, or use a tool where no bomb is.

    A player with no tool in a room without a bomb cannot wait: it steps to a neighbour.
    """
    if view.room_bombs:
        return ActionKind.INSPECT, None
    if view.my_tools:
        return ActionKind.USE, view.my_tools[0]
    return ActionKind.GO_TO, view.game_map.neighbors[view.room][0]


def _config(bundle: GameBundle) -> BombConfig:
    return bundle.game.config  # type: ignore[attr-defined,no-any-return]


def bot_table(**config: Any) -> BotTable:
    """The bots (the same for every configuration) and the populations ``heuristic`` (the
    realistic partner) and ``all``."""
    bots = (
        Bot("random", lambda bundle: RandomAgent(),
            "uniformly random legal actions, no chat (the paper's random baseline)"),
        Bot("heuristic", lambda bundle: HeuristicAgent(_config(bundle)),
            "decentralised team member: explores, shares findings by chat, defuses"),
        Bot("cbs", lambda bundle: CBSAgent(_config(bundle)),
            "PRIVILEGED centralised CBS plan (rebuilds the mission from the episode seed); "
            "falls back to heuristic if partners leave the plan"),
        Bot("split_even", lambda bundle: SplitAgent(_config(bundle), 0),
            "role split A: alpha cuts red/green only in even-index rooms and explores only "
            "those; the others cut everything else and never alpha's phases; chats"),
        Bot("split_odd", lambda bundle: SplitAgent(_config(bundle), 1),
            "role split B (mirror of A): alpha cuts red/green only in odd-index rooms; the "
            "others everything else; chats"),
        Bot("heuristic_silent", lambda bundle: HeuristicAgent(_config(bundle), chat=False),
            "heuristic that never chats: teammates must watch, not read"),
        Bot("passive", lambda bundle: PassiveAgent(_config(bundle)),
            "never moves, cuts or talks: waits in the start room"),
    )  # fmt: skip
    populations = {"heuristic": ("heuristic",), "all": ("random", "heuristic", "cbs")}
    return BotTable(bots, populations, game="bomb-defusal")
