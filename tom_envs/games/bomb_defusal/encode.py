"""Vector rendering of a bomb-defusal view, and the global state for a centralised critic.

No game logic: every entry is read from the :class:`~tom_envs.games.bomb_defusal.view.BombView`
(so nothing hidden can leak), egocentric (teammates by offset 1, 2, ... after me). Sizes: ``n``
rooms, ``B`` bombs, ``m`` colours, ``N`` players, ``P`` phases of the longest bomb. Every entry is
in [0, 1]. Layout of :meth:`BombEncoder.encode` (:data:`BombEncoder.pieces` has the exact sizes)::

    my_room         n        one-hot
    round           1        round / max_rounds
    score           1        score / max_score
    teammate_rooms  (N-1)(n+1)  per teammate: one-hot room, or the last slot = not visible
    room_bombs      B        active bombs in my room
    room_agents     N-1      teammates in my room
    tools           N m      my colours, then each teammate's
    intel           B (2+n+Pm)  per bomb, my first-hand intel: known, no longer active, its room,
                             remaining sequence (phase slot × colour one-hot)
    last_result     8        kind of my last action's result (one-hot ResultKind)
    messages        (N-1) M  per teammate, its latest message since my last turn: present,
                             symbolic, location claim (n), room claims (n × (1+B)), bomb claims
                             (B × (2+Pm): claimed, defused, remaining), request (colour m, room n)
    map             n n      adjacency matrix

:meth:`BombEncoder.encode_state` (MAPPO's critic): every player's room (N n), whose turn (N), round,
score, each bomb's room (n), remaining sequence (P m) and status (active/defused/exploded), map.
"""

from __future__ import annotations

import numpy as np

from tom_envs.core.game import Encoder, piece_offsets
from tom_envs.games.bomb_defusal.state import BombConfig, BombState
from tom_envs.games.bomb_defusal.view import (
    BombFact,
    BombView,
    LocationFact,
    RequestFact,
    ResultKind,
    RoomFact,
)


class BombEncoder(Encoder[BombView, BombState]):
    """Fixed-size float32 vectors for a configuration."""

    def __init__(self, config: BombConfig) -> None:
        self.config = config
        n, b, m = config.num_rooms_of_map, config.num_bombs, config.num_colors
        k, p = config.num_agents, config.max_phases
        assert k is not None
        self.n, self.b, self.m, self.k, self.p = n, b, m, k, p
        self.intel_size = 2 + n + p * m
        self.msg_size = 2 + n + n * (1 + b) + b * (2 + p * m) + m + n
        self.pieces: tuple[tuple[str, int], ...] = (
            ("my_room", n),
            ("round", 1),
            ("score", 1),
            ("teammate_rooms", (k - 1) * (n + 1)),
            ("room_bombs", b),
            ("room_agents", k - 1),
            ("tools", k * m),
            ("intel", b * self.intel_size),
            ("last_result", len(ResultKind)),
            ("messages", (k - 1) * self.msg_size),
            ("map", n * n),
        )
        self.offsets, self.obs_size = piece_offsets(self.pieces)
        self.state_pieces: tuple[tuple[str, int], ...] = (
            ("rooms", k * n),
            ("turn", k),
            ("round", 1),
            ("score", 1),
            ("bombs", b * (n + p * m + 3)),
            ("map", n * n),
        )
        self.state_offsets, self.state_size = piece_offsets(self.state_pieces)
        #: Inside one bomb's ``intel`` block (``intel_size``): known, no longer active, its room
        #: (n), the remaining sequence (P phase slots x m colours).
        self.intel_offsets = {"known": 0, "inactive": 1, "room": 2, "sequence": 2 + n}
        #: Inside one bomb's block of the state's ``bombs`` (``bomb_state_size``): its room (n),
        #: the remaining sequence (P m), the status one-hot (active, defused, exploded).
        self.bomb_state_offsets = {"room": 0, "sequence": n, "status": n + p * m}
        self.bomb_state_size = n + p * m + 3
        self._static: dict[tuple[int, int], tuple[object, object, np.ndarray]] = {}

    def _sequence(self, out: np.ndarray, at: int, remaining: tuple[int, ...]) -> None:
        for slot, colour in enumerate(remaining[: self.p]):
            out[at + slot * self.m + colour] = 1.0

    def _map(self, out: np.ndarray, at: int, neighbors: tuple[tuple[int, ...], ...]) -> None:
        for i, nbrs in enumerate(neighbors):
            for j in nbrs:
                out[at + i * self.n + j] = 1.0

    def _static_part(self, view: BombView) -> np.ndarray:
        """The entries that do not change within an episode (tools, map), per player and map."""
        key = (view.player, id(view.game_map))
        held = self._static.get(key)
        if held is not None and held[0] is view.game_map and held[1] == view.tools:
            return held[2]
        out = np.zeros(self.obs_size, dtype=np.float32)
        o, k, m = self.offsets, self.k, self.m
        others = [(view.player + d) % k for d in range(1, k)]
        for slot, q in enumerate([view.player, *others]):
            for colour in view.tools[q]:
                out[o["tools"] + slot * m + colour] = 1.0
        self._map(out, o["map"], view.game_map.neighbors)
        if len(self._static) >= 64:  # random maps: a new map every episode
            self._static.clear()
        self._static[key] = (view.game_map, view.tools, out)
        return out

    def encode(self, view: BombView) -> np.ndarray:
        """The view as a float32 vector (layout in the module docstring)."""
        n, b, m, k = self.n, self.b, self.m, self.k
        out = self._static_part(view).copy()
        o = self.offsets
        out[o["my_room"] + view.room] = 1.0
        out[o["round"]] = view.round / view.max_rounds
        out[o["score"]] = view.score / max(view.max_score, 1)
        others = [(view.player + d) % k for d in range(1, k)]
        for slot, q in enumerate(others):
            at = o["teammate_rooms"] + slot * (n + 1)
            room = view.agent_rooms[q]
            out[at + (room if room >= 0 else n)] = 1.0
            if q in view.room_agents:
                out[o["room_agents"] + slot] = 1.0
        for bomb in view.room_bombs:
            out[o["room_bombs"] + bomb] = 1.0
        io = self.intel_offsets
        for item in view.intel:
            at = o["intel"] + item.bomb * self.intel_size
            out[at + io["known"]] = 1.0
            out[at + io["inactive"]] = 0.0 if item.remaining else 1.0
            out[at + io["room"] + item.room] = 1.0
            self._sequence(out, at + io["sequence"], item.remaining)
        out[o["last_result"] + int(view.last_result.kind)] = 1.0
        latest = {msg.sender: msg for msg in view.messages}
        for slot, q in enumerate(others):
            msg = latest.get(q)
            if msg is None:
                continue
            at = o["messages"] + slot * self.msg_size
            out[at] = 1.0
            out[at + 1] = float(msg.symbolic)
            rooms_at = at + 2 + n
            bombs_at = rooms_at + n * (1 + b)
            request_at = bombs_at + b * (2 + self.p * m)
            for fact in msg.facts:
                if isinstance(fact, LocationFact) and fact.agent == q:
                    out[at + 2 + fact.room] = 1.0
                elif isinstance(fact, RoomFact):
                    r_at = rooms_at + fact.room * (1 + b)
                    out[r_at] = 1.0
                    for bomb in fact.bombs:
                        out[r_at + 1 + bomb] = 1.0
                elif isinstance(fact, BombFact):
                    b_at = bombs_at + fact.bomb * (2 + self.p * m)
                    out[b_at] = 1.0
                    out[b_at + 1] = 0.0 if fact.remaining else 1.0
                    self._sequence(out, b_at + 2, fact.remaining)
                elif isinstance(fact, RequestFact):
                    out[request_at + fact.color] = 1.0
                    out[request_at + m + fact.room] = 1.0
        return out

    def encode_state(self, state: BombState) -> np.ndarray:
        """The whole state (layout in the module docstring)."""
        n = self.n
        out = np.zeros(self.state_size, dtype=np.float32)
        so, bo = self.state_offsets, self.bomb_state_offsets
        for p, room in enumerate(state.locations):
            out[so["rooms"] + p * n + room] = 1.0
        if not state.over:
            out[so["turn"] + state.turn] = 1.0
        out[so["round"]] = state.round / self.config.max_rounds
        out[so["score"]] = state.score / max(state.mission.max_score, 1)
        for bomb, room in enumerate(state.mission.bomb_rooms):
            b_at = so["bombs"] + bomb * self.bomb_state_size
            out[b_at + bo["room"] + room] = 1.0
            self._sequence(out, b_at + bo["sequence"], state.remaining(bomb))
            status = 0 if state.active(bomb) else (2 if state.exploded[bomb] else 1)
            out[b_at + bo["status"] + status] = 1.0
        self._map(out, so["map"], state.mission.game_map.neighbors)
        return out
