"""The ToM tracker's output on fixed seed lists, against a recorded fixture.

``probe_fixture.json`` (``python tests/games/bomb_defusal/test_bomb_probe_fixture.py --write``)
was first recorded from the tracker that updated every mind inside ``apply``, before it became
lazy, and re-recorded when the probes stopped being frozen, thinned and balanced (issue #32): the
ground truth of every question (``knows``, ``belief``, ``evidence``, ``believed_room`` for every
player, teammate and subject) and the truths of the questions asked right after each action were
first checked equal between the two versions on every episode below (the only change is which
probes are asked and when they are given). For every configuration and every random and
heuristic-team episode of the seed lists, each step's fingerprint is: every player's probes at the
configured timing (every field: id, question, answer, ``about``, subject, no-ToM answer) and at
``timing="turn"``, the ground truth of every question, the CoordinationQA readings of the tracker
and the whole ``Minds`` value (beliefs, reports, last actions, the mind of the action's own
moment). An episode's digest hashes its steps' fingerprints in order; the fixture also keeps the
number of probes asked, so a tracker that asks nothing cannot match.

Reading the probes at every step and reading them only at a few steps (or only at the end) must
give the same fingerprints: the lazy tracker catches up from where it last stopped.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tom_envs  # noqa: F401
from tom_envs.agents import make_agent
from tom_envs.games.bomb_defusal import minds as M
from tom_envs.games.bomb_defusal import qa, tom
from tom_envs.games.bomb_defusal.rules import BombGame
from tom_envs.games.bomb_defusal.state import BombState
from tom_envs.registration import game_spec
from tom_envs.runner import play_episode

FIXTURE = Path(__file__).with_name("probe_fixture.json")
SPEC = game_spec("BombDefusal")

#: (name, env arguments, random-episode seeds, heuristic-episode seeds)
CASES: list[tuple[str, dict[str, Any], list[int], list[int]]] = [
    ("default", {}, list(range(8)), list(range(5))),
    ("turn", {"probe_timing": "turn"}, list(range(4)), list(range(3))),
    ("one", {"probes": "one", "probe_subject": "number"}, list(range(4)), list(range(3))),
    ("symbolic", {"symbolic_messages": True}, list(range(4)), list(range(3))),
    ("hidden_mates", {"teammate_locations": False}, list(range(4)), list(range(3))),
    ("explode", {"wrong_tool": "explode", "shaping": True}, list(range(4)), list(range(3))),
    ("random_map", {"map": "random", "num_rooms": 7, "bomb_phases": "1,1,2,2,3,3"},
     list(range(3)), list(range(2))),
    ("four", {"num_agents": 4, "colors": "red,green,blue,yellow"}, list(range(3)), list(range(2))),
]  # fmt: skip

#: Free-text messages the random players send (true and false claims, every extractor phrasing).
TEMPLATES = (
    "I am in Room {room}.",
    "Moving to room {room}",
    "Room {room} has no bomb.",
    "Room {room} contains Bomb {bomb}.",
    "Bomb {bomb} is defused.",
    "bomb {bomb} sequence: red, green",
    "Bomb {bomb} is in Room {room} and its remaining sequence is Blue.",
    "I need a Red tool in Room {room}.",
)


def _game(kwargs: dict[str, Any]) -> BombGame:
    return SPEC.load().make_bundle(**{**SPEC.kwargs, **kwargs}).game


def random_episode(game: BombGame, seed: int) -> list[tuple[BombState, int, dict | None]]:
    """``(state, action, messages)`` of each step of a random episode with random chat."""
    rng = np.random.default_rng(seed)
    state = game.initial_state(np.random.default_rng(10_000 + seed))
    rooms = state.mission.game_map.rooms
    out = []
    while not state.over:
        player = state.turn
        legal = game.legal_actions(state, player)
        action = int(legal[rng.integers(len(legal))])
        msgs = None
        if rng.random() < 0.35:
            text = TEMPLATES[rng.integers(len(TEMPLATES))].format(
                room=rooms[rng.integers(len(rooms))], bomb=int(rng.integers(state.mission.num_bombs)) + 1
            )
            msgs = {player: text}
        out.append((state, action, msgs))
        state = game.step(state, {player: action}, rng, msgs).state
    out.append((state, -1, None))
    return out


def heuristic_episode(game: BombGame, kwargs: dict[str, Any], seed: int):
    """The heuristic team's episode (through the runner), replayed through the rules."""
    bundle = SPEC.load().make_bundle(**{**SPEC.kwargs, **kwargs})
    agents = [make_agent("heuristic", SPEC, bundle) for _ in range(game.num_players)]
    ep = play_episode(SPEC, agents, seed=seed, env_kwargs=kwargs)
    from gymnasium.utils import seeding

    rng, _ = seeding.np_random(ep.seed)
    state = game.initial_state(rng)
    out = []
    for step in ep.steps:
        player = int(step["agent"].rsplit("_", 1)[1])
        message = step.get("message") if "message_error" not in step else None
        msgs = {player: message} if message else None
        out.append((state, int(step["action"]), msgs))
        state = game.step(state, {player: int(step["action"])}, rng, msgs).state
    out.append((state, -1, None))
    return out


def _keys(state: BombState) -> list[M.Key]:
    n_rooms, n_bombs = state.mission.game_map.num_rooms, state.mission.num_bombs
    return [(M.ROOM, r) for r in range(n_rooms)] + [
        (k, b) for k in (M.BOMB, M.SEQ, M.DEFUSED) for b in range(n_bombs)
    ]


def fingerprint(game: BombGame, state: BombState) -> tuple[str, int]:
    """One state's fingerprint (see the module docstring) and the number of probes asked."""
    parts: list[str] = []
    asked = 0
    n = game.num_players
    for p in range(n):
        probes = tom.make_probes(game, state, p)
        asked += len(probes)
        parts.append(repr(probes))
        parts.append(repr(tom.make_probes(game, state, p, "turn")))
    if state.minds is not None:
        parts.append(repr(state.minds))
        for key in _keys(state):
            for p in range(n):
                belief = M.belief(state, p, key) if key[0] != M.DEFUSED else None
                parts.append(f"{key}{p}{M.knows(state, p, key)}{belief}")
                parts.append(repr([M.evidence(state, o, p, key) for o in range(n) if o != p]))
        for p in range(n):
            parts.append(repr([M.believed_room(state, p, a) for a in range(n)]))
            for b in range(state.mission.num_bombs):
                parts.append(
                    f"{qa.believed_room(state, p, b)}{qa.believed_remaining(state, p, b)}"
                    f"{[qa.learned_as_seen_by(state, p, m, b) for m in range(n) if m != p]}"
                )
    return hashlib.sha256("\n".join(parts).encode()).hexdigest(), asked


def episode_digest(game: BombGame, steps) -> dict[str, Any]:
    """The digest of an episode's fingerprints, reading the tracker at every step in order."""
    h = hashlib.sha256()
    asked = 0
    for state, _action, _msgs in steps:
        digest, k = fingerprint(game, state)
        h.update(digest.encode())
        asked += k
    return {"digest": h.hexdigest()[:24], "steps": len(steps) - 1, "asked": asked}


def record() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, kwargs, rand, heur in CASES:
        game = _game(kwargs)
        out[name] = {
            "random": {str(s): episode_digest(game, random_episode(game, s)) for s in rand},
            "heuristic": {
                str(s): episode_digest(game, heuristic_episode(game, kwargs, s)) for s in heur
            },
        }
    return out


@pytest.fixture(scope="module")
def expected() -> dict[str, Any]:
    return json.loads(FIXTURE.read_text())


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_tracker_matches_the_recorded_fixture(case, expected) -> None:
    name, kwargs, rand, heur = case
    game = _game(kwargs)
    for s in rand:
        got = episode_digest(game, random_episode(game, s))
        assert got == expected[name]["random"][str(s)], (name, "random", s)
    for s in heur:
        got = episode_digest(game, heuristic_episode(game, kwargs, s))
        assert got == expected[name]["heuristic"][str(s)], (name, "heuristic", s)
    if name in ("default", "one", "symbolic"):
        assert sum(e["asked"] for e in expected[name]["random"].values()) > 0


@pytest.mark.parametrize("case", CASES[:4], ids=[c[0] for c in CASES[:4]])
def test_reading_the_tracker_rarely_gives_the_same_answers(case) -> None:
    """Read at a few steps, newest first, or only at the end: the tracker catches up from where
    it last stopped and every state read gives the fingerprint of reading at every step."""
    name, kwargs, rand, heur = case
    game = _game(kwargs)
    for kind, seed in [("random", rand[0]), ("random", rand[1]), ("heuristic", heur[0])]:
        def fresh(kind=kind, seed=seed):
            if kind == "random":
                return random_episode(game, seed)
            return heuristic_episode(game, kwargs, seed)

        every = [fingerprint(game, s)[0] for s, _, _ in fresh()]
        steps = fresh()
        last = len(steps) - 1
        assert fingerprint(game, steps[last][0])[0] == every[last], (name, kind, seed, "end")
        assert all(s.__dict__["minds"].__class__ is not M.PendingMinds or
                   s.__dict__["minds"].value is not None for s, _, _ in steps), "all caught up"
        rng = np.random.default_rng(seed)
        for order in ("newest_first", "oldest_first"):
            steps = fresh()
            read = sorted(rng.choice(len(steps), size=min(6, len(steps)), replace=False))
            if order == "newest_first":
                read = read[::-1]
            for i in read:
                assert fingerprint(game, steps[i][0])[0] == every[i], (name, kind, seed, order, i)


def test_unread_tracker_is_cheap_to_hold_and_released_once_read() -> None:
    """Until read, a state holds the record of its action and the state before it; once read,
    the chain is dropped (the earlier states can be freed), and copies carry the resolved
    tracker."""
    import copy
    import gc
    import pickle
    import weakref

    game = _game({})
    steps = random_episode(game, 3)
    first = weakref.ref(steps[0][0])
    final = steps[-1][0]
    held = final.__dict__["minds"]
    assert held.__class__ is M.PendingMinds and held.value is None
    clone = pickle.loads(pickle.dumps(final))
    assert clone.__dict__["minds"].__class__ is M.Minds
    assert copy.copy(final).__dict__["minds"] is final.minds
    assert clone == final and clone.minds == final.minds
    assert held.before is None and held.value is final.minds
    del steps
    gc.collect()
    assert first() is None, "the start state is no longer held by the resolved chain"


if __name__ == "__main__" and "--write" in sys.argv:
    FIXTURE.write_text(json.dumps(record(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {FIXTURE}")
