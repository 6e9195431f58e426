"""Rules of the bomb-defusal search & rescue mission (paper 000; pure: no gymnasium, no pettingzoo).

Three specialists (alpha, bravo, charlie) act in turn, alpha → bravo → charlie each round, each
action applied at once. Rooms are nodes of a connected graph. Each bomb has a sequence of coloured
phases; cutting the current phase needs a wire cutter of that colour. A bomb is defused when its
last phase is cut, and the team scores 10 × its number of phases. The episode ends when every bomb
is defused or after 30 rounds. Defaults follow the original code (specs §1.1-1.7):

* map: rooms 0, 3, 5, 6, 8 with hallways 0-3, 0-5, 0-6, 0-8, 3-8, 5-6, 6-8;
* five bombs, one per room: the rooms are randomly permuted and assigned to bombs 1..5; bombs 1-2
  have one phase (a uniform colour), bombs 3-4 two distinct colours, bomb 5 a permutation of all
  three; all agents start in one uniformly random room. Draw order from ``reset(seed)``'s
  generator: room permutation, colours bomb by bomb, start room;
* tools: alpha red+green, bravo green+blue, charlie blue+red (agent i holds colours i and i+1);
* a wrong colour is rejected with feedback and changes nothing (``wrong_tool="reject"``); the
  "bomb explodes" variant and the +1/−1 reward shaping of the paper's MAPPO are options.

Actions (specs §1.5), ``n`` rooms, ``m`` colours: ``0`` inspect the bomb here; ``1 + i`` go to room
index ``i`` (legal iff adjacent); ``1 + n + c`` use colour ``c`` (legal iff I hold it). With
``symbolic_messages`` each of these ``n + m + 1`` base actions is paired with one of ``3 + m``
message options (none, share my room, share my bomb intel, ask for colour ``c`` here), flattened as
``base * (3 + m) + option``; see :func:`decode_action`.

Several bombs may share a room (more bombs than rooms); "inspect" and the tools then act on the
room's active bomb with the lowest id.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from enum import IntEnum

import numpy as np

from tom_envs.core.game import SEQUENTIAL, Game, GameTags, StepResult, state_replacer
from tom_envs.games.bomb_defusal import minds, tom
from tom_envs.games.bomb_defusal.maps import random_map
from tom_envs.games.bomb_defusal.state import MTURK_BOMBS, BombConfig, BombState, Mission
from tom_envs.games.bomb_defusal.view import (
    ActionResult,
    BombFact,
    BombView,
    ChatMessage,
    Fact,
    Intel,
    LocationFact,
    RequestFact,
    ResultKind,
    RoomFact,
    observe,
)

_replace = state_replacer(BombState)  # dataclasses.replace without its per-call cost
_EVENTS = {kind: kind.name.lower() for kind in ResultKind}  # the step event of each result
_RESULT = {f.name: f.default for f in fields(ActionResult)}  # ActionResult's defaults


def _result(kind: ResultKind, room: int, bomb: int | None = None, **given: object) -> ActionResult:
    """``ActionResult(kind, room, bomb, **given)`` without the frozen dataclass's per-field cost
    (same fields, values, equality and hash)."""
    out = _new(ActionResult)
    out.__dict__.update(_RESULT, kind=kind, room=room, bomb=bomb, **given)
    return out


def _put(values: tuple, index: int, value: object) -> tuple:
    """``values`` with ``values[index]`` replaced by ``value``."""
    out = list(values)
    out[index] = value
    return tuple(out)


_new = object.__new__


class ActionKind(IntEnum):
    """The three classes of base action."""

    INSPECT = 0
    GO_TO = 1
    USE = 2


class MessageOption(IntEnum):
    """Symbolic message options (``ASK`` is followed by one option per colour)."""

    NONE = 0
    SHARE_ROOM = 1
    SHARE_BOMBS = 2
    ASK = 3


@dataclass(frozen=True)
class Decoded:
    """A flat action split into its parts: base action and (symbolic) message option."""

    kind: ActionKind
    target: int | None  # room index (GO_TO) or colour (USE)
    option: MessageOption = MessageOption.NONE
    option_color: int | None = None  # the colour asked for (ASK)

    @property
    def base(self) -> tuple[ActionKind, int | None]:
        """The base action without the message."""
        return (self.kind, self.target)


def decode_action(config: BombConfig, action: int, num_rooms: int | None = None) -> Decoded:
    """Split a flat action index (see the module docstring for the layout)."""
    n = config.num_rooms_of_map if num_rooms is None else num_rooms
    k = config.num_message_options
    base, opt = divmod(int(action), k)
    if base == 0:
        kind, target = ActionKind.INSPECT, None
    elif base <= n:
        kind, target = ActionKind.GO_TO, base - 1
    else:
        kind, target = ActionKind.USE, base - 1 - n
    if opt < MessageOption.ASK:
        return Decoded(kind, target, MessageOption(opt))
    return Decoded(kind, target, MessageOption.ASK, opt - MessageOption.ASK)


def encode_action(
    config: BombConfig,
    kind: ActionKind,
    target: int | None = None,
    option: MessageOption = MessageOption.NONE,
    option_color: int | None = None,
) -> int:
    """The flat index of a base action and message option (inverse of :func:`decode_action`)."""
    n = config.num_rooms_of_map
    if kind == ActionKind.INSPECT:
        base = 0
    elif kind == ActionKind.GO_TO:
        base = 1 + int(target)  # type: ignore[arg-type]
    else:
        base = 1 + n + int(target)  # type: ignore[arg-type]
    opt = int(option) if option != MessageOption.ASK else MessageOption.ASK + int(option_color)  # type: ignore[arg-type]
    if opt and not config.symbolic_messages:
        raise ValueError("message options need symbolic_messages=True")
    return base * config.num_message_options + opt


class BombGame(Game[BombState, BombView]):
    """The bomb-defusal rules."""

    name = "bomb_defusal"

    def __init__(self, config: BombConfig | None = None) -> None:
        self.config = config or BombConfig()
        self._options = self.config.num_message_options
        self._players: int = self.config.num_agents  # type: ignore[assignment]
        self._decoded: dict[tuple[int, int], Decoded] = {}

    # ------------------------------------------------------------------ facts
    @property
    def num_players(self) -> int:
        """Team size (3)."""
        return self.config.num_agents  # type: ignore[return-value]

    @property
    def num_actions(self) -> int:
        """``(n + m + 1) × message options`` (9 for the paper's mission without symbolic chat)."""
        return self.config.num_base_actions * self.config.num_message_options

    @property
    def tags(self) -> GameTags:
        """Sequential, stochastic, imperfect information, fully cooperative, with chat."""
        return GameTags(
            dynamics=SEQUENTIAL,
            chance="stochastic",
            information="imperfect",
            utility="identical",
            communication=True,
        )

    @property
    def reward_range(self) -> tuple[float, float]:
        """One step pays at most one defusal (+1 shaping); −1 with shaping and explosions."""
        best = self.config.points_per_phase * self.config.max_phases
        shaping = 1.0 if self.config.shaping else 0.0
        low = -1.0 if self.config.shaping and self.config.wrong_tool == "explode" else 0.0
        return (low, float(best) + shaping)

    @property
    def max_steps(self) -> int:
        """``max_rounds × players`` actions."""
        return self.config.max_rounds * self.num_players

    # ------------------------------------------------------------------ chance
    def draw_mission(self, rng: np.random.Generator) -> Mission:
        """Draw the map (random maps only), bomb rooms, sequences and start room from ``rng``."""
        cfg = self.config
        gmap = cfg.fixed_map or random_map(cfg.num_rooms, cfg.extra_edge_prob, rng)
        m = cfg.num_colors
        if cfg.layout == "mturk":
            rooms = tuple(gmap.index(r) for r, _ in MTURK_BOMBS)
            return Mission(
                gmap, rooms, tuple(s for _, s in MTURK_BOMBS), cfg.tool_colors,
                gmap.index(0), cfg.points_per_phase,
            )  # fmt: skip
        perm = rng.permutation(gmap.num_rooms)
        rooms = tuple(int(perm[i % gmap.num_rooms]) for i in range(cfg.num_bombs))
        seqs = []
        for k in cfg.bomb_phases:
            if k <= m:
                seqs.append(tuple(int(c) for c in rng.choice(m, size=k, replace=False)))
            else:
                seqs.append(tuple(int(c) for c in rng.integers(m, size=k)))
        if cfg.start_room is None:
            start = int(rng.integers(gmap.num_rooms))
        else:
            start = gmap.index(cfg.start_room)
        return Mission(gmap, rooms, tuple(seqs), cfg.tool_colors, start, cfg.points_per_phase)

    def initial_state(self, rng: np.random.Generator) -> BombState:
        """A new mission drawn from ``rng`` (see :meth:`draw_mission`), round 1, alpha to act."""
        return self.state_from_mission(self.draw_mission(rng))

    def state_from_mission(self, mission: Mission) -> BombState:
        """The start state of a given mission (chance outcomes injected, e.g. by tests)."""
        n_agents, n_bombs = self.num_players, mission.num_bombs
        if len(mission.tools) != n_agents:
            raise ValueError(f"the mission has tools for {len(mission.tools)} agents")
        start = mission.start_room
        state = BombState(
            mission=mission,
            time=0,
            round=1,
            turn=0,
            over=False,
            locations=(start,) * n_agents,
            progress=(0,) * n_bombs,
            exploded=(False,) * n_bombs,
            score=0,
            results=(),
            intel=((None,) * n_bombs,) * n_agents,
            chat=(),
            last_action_time=(-1,) * n_agents,
            inactive_at=(-1,) * n_bombs,
        )
        bombs = self.active_bombs_in(state, start)
        results = tuple(
            ActionResult(
                ResultKind.START,
                start,
                agents_seen=tuple(q for q in range(n_agents) if q != p),
                bombs_seen=bombs,
            )
            for p in range(n_agents)
        )
        state = _replace(state, results=results)
        if self.config.probes != "none":  # everyone perceives the start, when first read
            state = _replace(state, minds=minds.PendingMinds(self, None))
        return state

    # ------------------------------------------------------------------ queries
    def active_bombs_in(self, state: BombState, room: int) -> tuple[int, ...]:
        """Active bombs in room index ``room``, by id."""
        bombs = state.mission.bombs_by_room[room]
        if len(bombs) == 1:  # the common case: one bomb per room
            return bombs if state.active(bombs[0]) else ()
        return tuple(b for b in bombs if state.active(b))

    def current_players(self, state: BombState) -> tuple[int, ...]:
        """The seat whose turn it is (none once over)."""
        return () if state.over else (state.turn,)

    def base_legal(self, state: BombState, player: int) -> tuple[int, ...]:
        """Legal base actions (``0 … n+m``) of ``player`` now."""
        return self._legal(state, player, 1)

    def legal_actions(self, state: BombState, player: int) -> tuple[int, ...]:
        """Legal flat actions: legal base actions × every message option."""
        return self._legal(state, player, self._options)

    def _legal(self, state: BombState, player: int, k: int) -> tuple[int, ...]:
        """Legal base actions × ``k`` message options, kept per mission (they depend only on the
        player, its room and whether an active bomb is there)."""
        if state.over or player != state.turn:
            return ()
        mission = state.mission
        room = state.locations[player]
        bomb_here = bool(self.active_bombs_in(state, room))
        key = (k, player, room, bomb_here)
        cache = mission.legal_cache
        out = cache.get(key)
        if out is None:
            gmap = mission.game_map
            base = [0] if bomb_here else []
            base.extend(1 + j for j in gmap.neighbors[room])
            base.extend(1 + gmap.num_rooms + c for c in mission.tools[player])
            out = cache[key] = tuple(b * k + o for b in base for o in range(k))
        return out

    def is_terminal(self, state: BombState) -> bool:
        """Every bomb defused (or exploded), or the round limit reached."""
        return state.over

    def observe(self, state: BombState, player: int) -> BombView:
        """The player's view (see :mod:`tom_envs.games.bomb_defusal.view`)."""
        return observe(self, state, player)

    def decode(self, state: BombState, action: int) -> Decoded:
        """Split a flat action of this state's map."""
        key = (int(action), state.mission.game_map.num_rooms)
        dec = self._decoded.get(key)
        if dec is None:
            dec = decode_action(self.config, action, key[1])
            if len(self._decoded) < 4096:
                self._decoded[key] = dec
        return dec

    # ------------------------------------------------------------------ dynamics
    def resolve(
        self, state: BombState, player: int, kind: ActionKind, target: int | None
    ) -> tuple[BombState, ActionResult, float, float]:
        """Apply one base action's physical effect: (state, result, team points, shaping)."""
        mission = state.mission
        room = state.locations[player]
        if kind == ActionKind.GO_TO:
            assert target is not None
            locations = _put(state.locations, player, target)
            moved = _replace(state, locations=locations)
            result = _result(
                ResultKind.MOVED,
                target,
                agents_seen=tuple(
                    p for p, r in enumerate(locations) if r == target and p != player
                ),
                bombs_seen=self.active_bombs_in(state, target),
            )
            return moved, result, 0.0, 0.0
        bombs = self.active_bombs_in(state, room)
        if kind == ActionKind.INSPECT:
            bomb = bombs[0]
            seq = mission.sequences[bomb]
            result = _result(
                ResultKind.INSPECTED, room, bomb, remaining=state.remaining(bomb), stages=len(seq)
            )
            return state, result, 0.0, 0.0
        assert target is not None
        if not bombs:
            return state, _result(ResultKind.NO_BOMB, room, color=target), 0.0, 0.0
        bomb = bombs[0]
        seq = mission.sequences[bomb]
        if seq[state.progress[bomb]] == target:
            progress = _put(state.progress, bomb, state.progress[bomb] + 1)
            nxt = _replace(state, progress=progress)
            shaping = 1.0 if self.config.shaping else 0.0
            if nxt.defused(bomb):
                points = mission.value(bomb)
                nxt = _replace(nxt, score=state.score + points)
                result = _result(ResultKind.DEFUSED, room, bomb, color=target)
                return nxt, result, float(points), shaping
            result = _result(
                ResultKind.CUT, room, bomb, color=target, remaining=nxt.remaining(bomb)
            )
            return nxt, result, 0.0, shaping
        if self.config.wrong_tool == "explode":
            exploded = tuple(v or b == bomb for b, v in enumerate(state.exploded))
            nxt = _replace(state, exploded=exploded)
            shaping = -1.0 if self.config.shaping else 0.0
            return nxt, ActionResult(ResultKind.EXPLODED, room, bomb, color=target), 0.0, shaping
        result = _result(
            ResultKind.WRONG_TOOL, room, bomb, color=target, remaining=state.remaining(bomb)
        )
        return state, result, 0.0, 0.0

    def symbolic_facts(
        self, state: BombState, player: int, option: MessageOption, color: int | None
    ) -> tuple[Fact, ...]:
        """The facts a symbolic message option tells, from ``player``'s knowledge in ``state``.

        Rendered after the action resolves, from what the sender has seen: ``SHARE_ROOM`` its room
        (where it is, which bombs are active there and the intel it has on them), ``SHARE_BOMBS``
        all its first-hand bomb intel, ``ASK`` where it is and the colour it needs there.
        """
        room = state.locations[player]
        intel = [i for i in state.intel[player] if i is not None]

        def fact(i: Intel) -> BombFact:  # a defused bomb's room is not said
            return BombFact(i.bomb, i.remaining, i.room if i.remaining else None)

        if option == MessageOption.SHARE_ROOM:
            here = self.active_bombs_in(state, room)
            known = [fact(i) for i in intel if i.bomb in here]
            return (LocationFact(player, room), RoomFact(room, here), *known)
        if option == MessageOption.SHARE_BOMBS:
            return tuple(fact(i) for i in intel)
        if option == MessageOption.ASK:
            assert color is not None
            return (LocationFact(player, room), RequestFact(player, color, room))
        return ()

    def apply(
        self,
        state: BombState,
        actions: Mapping[int, int],
        rng: np.random.Generator,
        messages: Mapping[int, str] | None = None,
    ) -> StepResult[BombState]:
        """Apply the acting player's action and message, advance the turn, record the action for
        the tracker (brought up to date when read: :class:`~.minds.PendingMinds`)."""
        player = state.turn
        dec = self.decode(state, actions[player])
        nxt, result, points, shaping = self.resolve(state, player, dec.kind, dec.target)
        time = state.time + 1
        events = [_EVENTS[result.kind]]
        # first-hand intel
        if result.bomb is not None and result.kind != ResultKind.NO_BOMB:
            rem = nxt.remaining(result.bomb)
            if result.kind in (ResultKind.INSPECTED, ResultKind.WRONG_TOOL):
                rem = result.remaining
            mine = list(nxt.intel[player])
            mine[result.bomb] = Intel(result.bomb, result.room, rem, state.round)
            intel = _put(nxt.intel, player, tuple(mine))
            nxt = _replace(nxt, intel=intel)
        if result.kind in (ResultKind.DEFUSED, ResultKind.EXPLODED):
            assert result.bomb is not None
            inactive = _put(nxt.inactive_at, result.bomb, time)
            nxt = _replace(nxt, inactive_at=inactive)
            events.append(f"bomb{result.bomb + 1}")
        # chat: the symbolic option (rendered now, from the sender's knowledge) then free text
        message = None
        facts: tuple[Fact, ...] = ()
        texts = []
        if dec.option != MessageOption.NONE:
            facts = self.symbolic_facts(nxt, player, dec.option, dec.option_color)
            texts.append(tom.render_facts(facts, self.config, state.mission.game_map, player))
        free = (messages or {}).get(player)
        if free is not None and free.strip():
            texts.append(free.strip())
            facts = facts + tom.extract_facts(free, player, self.config, state.mission.game_map)
        if texts:
            message = ChatMessage(
                player, time, state.round, " ".join(texts), facts, dec.option != MessageOption.NONE
            )
            events.append("message")
        # turn order
        last = _put(state.last_action_time, player, time)
        results = _put(state.results, player, result)
        turn, rnd = player + 1, state.round
        if turn == self._players:
            turn, rnd = 0, rnd + 1
        done = rnd > self.config.max_rounds
        if not done and result.kind in (ResultKind.DEFUSED, ResultKind.EXPLODED):
            done = not any(nxt.active(b) for b in range(state.mission.num_bombs))
        tracked = None  # a tracked state's tracker catches up when read (PendingMinds)
        if state.__dict__["minds"] is not None:
            tracked = minds.PendingMinds(self, state, player, result, message)
        nxt = _replace(
            nxt,
            minds=tracked,
            time=time,
            round=state.round if done else rnd,
            turn=turn,
            over=done,
            results=results,
            chat=nxt.chat + ((message,) if message else ()),
            last_action_time=last,
        )
        reward = points + shaping
        return StepResult(nxt, (reward,) * self._players, tuple(events))
