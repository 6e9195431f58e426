"""Rules of the bomb-defusal mission: tables of moves, the paper's mission, edge cases."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from bomb_helpers import ROOM, B, G, R, act, new_game, play, start
from gymnasium.utils import seeding

from tom_envs.core.game import IllegalActionError
from tom_envs.games.bomb_defusal.maps import PAPER_EDGES, PAPER_ROOMS, GameMap, random_map
from tom_envs.games.bomb_defusal.rules import (
    ActionKind,
    MessageOption,
    decode_action,
    encode_action,
)
from tom_envs.games.bomb_defusal.state import BombConfig
from tom_envs.games.bomb_defusal.view import ResultKind


# ------------------------------------------------------------------------ the paper's mission
def test_default_config_is_the_papers_mission() -> None:
    cfg = BombConfig()
    assert cfg.fixed_map is not None
    assert cfg.fixed_map.rooms == (0, 3, 5, 6, 8)
    assert cfg.fixed_map.edges == ((0, 3), (0, 5), (0, 6), (0, 8), (3, 8), (5, 6), (6, 8))
    nbrs = {
        r: {cfg.fixed_map.rooms[j] for j in cfg.fixed_map.neighbors[i]}
        for i, r in enumerate(cfg.fixed_map.rooms)
    }
    assert nbrs == {0: {3, 5, 6, 8}, 3: {0, 8}, 5: {0, 6}, 6: {0, 5, 8}, 8: {0, 3, 6}}
    assert cfg.agents == ("alpha", "bravo", "charlie")
    assert cfg.tools == (("red", "green"), ("green", "blue"), ("blue", "red"))
    assert cfg.bomb_phases == (1, 1, 2, 2, 3) and cfg.max_score == 90
    assert cfg.max_rounds == 30 and cfg.wrong_tool == "reject" and not cfg.shaping
    game = new_game()
    assert game.num_players == 3 and game.num_actions == 9  # n + m + 1
    assert game.max_steps == 90
    assert game.tags.dynamics == "sequential" and game.tags.utility == "identical"
    assert game.tags.communication


def test_missions_follow_the_original_generator() -> None:
    game = new_game()
    starts = set()
    for seed in range(200):
        rng, _ = seeding.np_random(seed)
        m = game.draw_mission(rng)
        assert sorted(m.bomb_rooms) == [0, 1, 2, 3, 4], "one bomb per room"
        assert [len(s) for s in m.sequences] == [1, 1, 2, 2, 3]
        for s in m.sequences:
            assert len(set(s)) == len(s), "phases of one bomb have distinct colours"
        assert sorted(m.sequences[4]) == [0, 1, 2], "bomb 5 uses every colour"
        starts.add(m.start_room)
    assert starts == {0, 1, 2, 3, 4}, "the start room is drawn among all rooms"


def test_draw_order_is_permutation_colours_start() -> None:
    game = new_game()
    rng, _ = seeding.np_random(7)
    m = game.draw_mission(rng)
    rng2, _ = seeding.np_random(7)
    perm = rng2.permutation(5)
    seqs = [tuple(int(c) for c in rng2.choice(3, size=k, replace=False)) for k in (1, 1, 2, 2, 3)]
    start_room = int(rng2.integers(5))
    assert m.bomb_rooms == tuple(int(x) for x in perm)
    assert m.sequences == tuple(seqs) and m.start_room == start_room


def test_seeded_reset_is_reproducible_and_seeds_differ() -> None:
    game = new_game()
    a = game.initial_state(seeding.np_random(3)[0])
    b = game.initial_state(seeding.np_random(3)[0])
    c = game.initial_state(seeding.np_random(4)[0])
    assert a == b and hash(a) == hash(b)
    assert a.mission != c.mission


def test_mturk_layout() -> None:
    game = new_game(layout="mturk")
    s = game.initial_state(np.random.default_rng(0))
    rooms = s.mission.game_map.rooms
    assert [rooms[r] for r in s.mission.bomb_rooms] == [0, 3, 5, 6, 8]
    assert s.mission.sequences == ((R,), (G,), (B, G, R), (G, R), (R, B))
    assert rooms[s.mission.start_room] == 0 and s.mission.max_score == 90


# ----------------------------------------------------------------------------- actions
def test_action_layout_and_round_trip() -> None:
    cfg = BombConfig()
    assert decode_action(cfg, 0).kind == ActionKind.INSPECT
    assert [decode_action(cfg, a).target for a in range(1, 6)] == [0, 1, 2, 3, 4]
    assert [decode_action(cfg, a).target for a in range(6, 9)] == [R, G, B]
    sym = BombConfig(symbolic_messages=True)
    assert sym.num_message_options == 6 and new_game(symbolic_messages=True).num_actions == 54
    for a in range(54):
        d = decode_action(sym, a)
        assert encode_action(sym, d.kind, d.target, d.option, d.option_color) == a
    d = decode_action(sym, 7 * 6 + 3 + B)
    assert (d.kind, d.target, d.option, d.option_color) == (ActionKind.USE, G, MessageOption.ASK, B)


@pytest.mark.parametrize(
    "room, bombs, player, legal",
    [
        (0, [(0, (R,))], 0, {"inspect", "go 3", "go 5", "go 6", "go 8", "use red", "use green"}),
        (0, [(3, (R,))], 1, {"go 3", "go 5", "go 6", "go 8", "use green", "use blue"}),
        (3, [(0, (R,))], 0, {"go 0", "go 8", "use red", "use green"}),
        (5, [(5, (B,))], 0, {"inspect", "go 0", "go 6", "use red", "use green"}),
    ],
)
def test_legal_action_table(room, bombs, player, legal) -> None:
    game = new_game()
    s = start(game, bombs, at=room)
    s = dataclasses.replace(s, turn=player)
    names = set()
    for a in game.legal_actions(s, player):
        d = decode_action(game.config, a)
        if d.kind == ActionKind.INSPECT:
            names.add("inspect")
        elif d.kind == ActionKind.GO_TO:
            names.add(f"go {s.mission.game_map.rooms[d.target]}")
        else:
            names.add(f"use {game.config.colors[d.target]}")
    assert names == legal
    assert game.legal_actions(s, (player + 1) % 3) == ()


# ----------------------------------------------------------------------------- dynamics
def test_move_inspect_cut_defuse_table() -> None:
    game = new_game()
    s = start(game, [(0, (R, B)), (3, (G,))], at=0)
    # alpha inspects, bravo cuts the wrong colour (blue is second), charlie waits
    r = act(game, s, "inspect")
    res = r.state.results[0]
    assert res.kind == ResultKind.INSPECTED and res.remaining == (R, B) and res.stages == 2
    assert r.rewards == (0.0, 0.0, 0.0) and r.state.turn == 1
    r = act(game, r.state, "use", B)
    assert r.state.results[1].kind == ResultKind.WRONG_TOOL
    assert r.state.progress == (0, 0), "a wrong colour is rejected and changes nothing"
    assert r.state.results[1].remaining == (R, B), "the feedback shows the sequence"
    r = act(game, r.state, "move", 3)
    assert r.state.locations[2] == ROOM[3] and r.state.round == 2 and r.state.turn == 0
    assert r.state.results[2].kind == ResultKind.MOVED and r.state.results[2].bombs_seen == (1,)
    # round 2: alpha cuts red, bravo cuts blue (defuses: 20 points), charlie has no green
    r = act(game, r.state, "use", R)
    assert r.state.results[0].kind == ResultKind.CUT and r.state.results[0].remaining == (B,)
    assert r.rewards == (0.0, 0.0, 0.0)
    r = act(game, r.state, "use", B)
    assert r.state.results[1].kind == ResultKind.DEFUSED
    assert r.rewards == (20.0, 20.0, 20.0) and r.state.score == 20
    assert r.state.inactive_at[0] == r.state.time
    assert game.active_bombs_in(r.state, ROOM[0]) == ()
    # a tool where no bomb is: nothing happens
    r = act(game, r.state, "wait")
    assert not r.state.over


def test_defusing_the_last_bomb_ends_the_episode_mid_round() -> None:
    game = new_game()
    s = start(game, [(0, (G,))], at=0)
    r = act(game, s, "use", G)  # alpha holds green
    assert r.state.over and r.state.round == 1 and r.rewards == (10.0,) * 3
    assert game.current_players(r.state) == ()
    with pytest.raises(IllegalActionError):
        game.step(r.state, {0: 0}, np.random.default_rng(0))


def test_round_limit() -> None:
    game = new_game(max_rounds=2)
    s = start(game, [(8, (R,))], at=0)
    s = play(game, s, [("wait",)] * 5)
    assert not s.over and s.round == 2 and s.turn == 2
    s = act(game, s, "wait").state
    assert s.over and s.round == 2 and s.score == 0


def test_illegal_actions_raise_and_leave_the_state() -> None:
    game = new_game()
    s = start(game, [(3, (R,))], at=5)
    for a in (0, 1 + ROOM[3], 1 + ROOM[5], 6 + B):  # no bomb, not adjacent, here, no blue
        with pytest.raises(IllegalActionError):
            game.step(s, {0: a}, np.random.default_rng(0))
    with pytest.raises(IllegalActionError):
        game.step(s, {1: 1}, np.random.default_rng(0))


def test_explode_variant_and_shaping() -> None:
    game = new_game(wrong_tool="explode", shaping=True)
    assert game.reward_range == (-1.0, 31.0)
    s = start(game, [(0, (B, R)), (0, (R,))], at=0)
    r = act(game, s, "use", R)  # alpha: wrong colour on bomb 1 (the lowest active here)
    assert r.state.results[0].kind == ResultKind.EXPLODED and r.state.exploded == (True, False)
    assert r.rewards == (-1.0,) * 3 and r.state.score == 0
    r = act(game, r.state, "inspect")  # bravo: now bomb 2 is the room's bomb
    assert r.state.results[1].bomb == 1
    r = act(game, r.state, "use", R)  # charlie: correct, defuses: 10 + 1 shaping
    assert r.rewards == (11.0,) * 3 and r.state.score == 10 and r.state.over


def test_shaping_rewards_each_correct_cut() -> None:
    game = new_game(shaping=True)
    s = start(game, [(0, (G, B)), (5, (R,))], at=0)
    r = act(game, s, "use", G)
    assert r.rewards == (1.0,) * 3
    r = act(game, r.state, "use", B)
    assert r.rewards == (21.0,) * 3


def test_several_bombs_in_a_room_are_handled_lowest_first() -> None:
    game = new_game(bomb_phases=(1, 1, 1, 1, 1, 1, 1))
    s = start(game, [(0, (G,)), (0, (R,)), (3, (R,)), (5, (R,)), (6, (R,)), (8, (R,)), (8, (B,))])
    r = act(game, s, "use", R)  # bomb 1 needs green: rejected
    assert r.state.results[0].kind == ResultKind.WRONG_TOOL and r.state.results[0].bomb == 0
    r = act(game, r.state, "use", G)  # bravo: defuses bomb 1
    r = act(game, r.state, "inspect")  # charlie: now bomb 2
    assert r.state.results[2].bomb == 1


def test_states_are_values() -> None:
    game = new_game()
    s = game.initial_state(seeding.np_random(0)[0])
    before = hash(s)
    r = act(game, s, "wait", message="hello")
    assert hash(s) == before and s.chat == () and r.state.chat[0].text == "hello"
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.round = 5  # type: ignore[misc]
    rng, a = np.random.default_rng(0), game.legal_actions(s, 0)[-1]
    assert game.step(s, {0: a}, rng).state == game.step(s, {0: a}, rng).state


# ------------------------------------------------------------------------- configuration
def test_every_size_is_configurable() -> None:
    game = new_game(
        map="random", num_rooms=8, num_agents=4, colors="red,green,blue,yellow",
        bomb_phases="1,2,3,4,2,1,1,3", max_rounds=20,
    )  # fmt: skip
    assert game.num_players == 4 and game.num_actions == 8 + 4 + 1
    assert game.config.tools == (
        ("red", "green"),
        ("green", "blue"),
        ("blue", "yellow"),
        ("yellow", "red"),
    )
    rng = np.random.default_rng(1)
    s = game.initial_state(rng)
    assert s.mission.game_map.num_rooms == 8 and len(s.mission.sequences) == 8
    assert [len(q) for q in s.mission.sequences] == [1, 2, 3, 4, 2, 1, 1, 3]
    # random legal play through the rules
    for _ in range(200):
        if s.over:
            break
        legal = game.legal_actions(s, s.turn)
        s = game.step(s, {s.turn: int(rng.choice(legal))}, rng).state
    assert s.over


def test_random_maps_are_connected_and_seeded() -> None:
    for seed in range(30):
        m = random_map(7, 0.2, np.random.default_rng(seed))
        assert m == random_map(7, 0.2, np.random.default_rng(seed))
        assert all(d < 7 for row in m.distance for d in row), "connected"
    fixed = new_game(map="random", map_seed=5)
    a = fixed.initial_state(np.random.default_rng(1)).mission.game_map
    b = fixed.initial_state(np.random.default_rng(2)).mission.game_map
    assert a == b
    per_episode = new_game(map="random", num_rooms=6)
    maps = {per_episode.initial_state(np.random.default_rng(s)).mission.game_map for s in range(10)}
    assert len(maps) > 1


def test_bad_configs_are_refused() -> None:
    with pytest.raises(ValueError, match="no agent holds"):
        BombConfig(tools=(("red",), ("red",), ("green",)))
    with pytest.raises(ValueError):
        BombConfig(map="maze")
    with pytest.raises(ValueError):
        BombConfig(wrong_tool="ignore")
    with pytest.raises(ValueError):
        BombConfig(start_room=7)
    with pytest.raises(ValueError, match="connected"):
        GameMap((0, 1, 2), ((0, 1),))
    assert GameMap(PAPER_ROOMS, PAPER_EDGES).describe().startswith("The rooms are numbered 0, 3, 6")


# ------------------------------------------------------------- the fast paths keep the values
@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"symbolic_messages": True},
        {"map": "random", "num_rooms": 4, "bomb_phases": "1,2,2,3,1,2"},  # rooms with two bombs
        {"wrong_tool": "explode", "num_agents": 4, "colors": "red,green,blue,yellow"},
    ],
)
def test_cached_legal_actions_views_and_results_match_their_definitions(kwargs) -> None:
    """Legal actions (kept per mission, player, room and bomb presence), views and action
    results (built without the dataclasses' __init__) against the definitions, on random play."""
    from tom_envs.games.bomb_defusal.view import ActionResult, BombView

    game = new_game(**kwargs)
    k = game.config.num_message_options
    view_fields = {f.name for f in dataclasses.fields(BombView)}
    result_fields = {f.name for f in dataclasses.fields(ActionResult)}
    rng = np.random.default_rng(7)
    for seed in range(12):
        state = game.initial_state(np.random.default_rng(seed))
        while not state.over:
            p = state.turn
            gmap, room = state.mission.game_map, state.locations[p]
            bombs = tuple(
                b for b, r in enumerate(state.mission.bomb_rooms) if r == room and state.active(b)
            )
            assert game.active_bombs_in(state, room) == bombs
            base = ([0] if bombs else []) + [1 + j for j in gmap.neighbors[room]]
            base += [1 + gmap.num_rooms + c for c in state.mission.tools[p]]
            assert game.base_legal(state, p) == tuple(base)
            assert game.legal_actions(state, p) == tuple(b * k + o for b in base for o in range(k))
            assert all(game.legal_actions(state, q) == () for q in range(game.num_players) if q != p)
            view = game.observe(state, p)
            assert set(view.__dict__) == view_fields
            assert view == BombView(**view.__dict__) and hash(view) == hash(BombView(**view.__dict__))
            legal = game.legal_actions(state, p)
            a = legal[rng.integers(len(legal))]
            assert game.decode(state, a) == decode_action(game.config, a, gmap.num_rooms)
            state = game.step(state, {p: a}, rng).state
            result = state.results[p]
            assert set(result.__dict__) == result_fields
            assert result == ActionResult(**result.__dict__)
            assert hash(result) == hash(ActionResult(**result.__dict__))
        assert all(game.legal_actions(state, q) == () for q in range(game.num_players))
