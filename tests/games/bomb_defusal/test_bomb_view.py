"""What a player sees: nothing hidden leaks through the view, the vector or the text."""

from __future__ import annotations

import dataclasses

import numpy as np
from bomb_helpers import ROOM, B, G, R, new_game, play, start
from gymnasium.utils import seeding

from tom_envs.games.bomb_defusal.encode import BombEncoder
from tom_envs.games.bomb_defusal.rules import BombGame, BombState
from tom_envs.games.bomb_defusal.text import BombText


def renderings(game: BombGame, state: BombState, player: int):
    view = game.observe(state, player)
    return view, BombEncoder(game.config).encode(view), BombText(game.config).observation_text(view)


def hidden_twin(game: BombGame, state: BombState, player: int, rng) -> BombState:
    """The same state except what ``player`` cannot see: the sequences of bombs it has no intel
    on (same length and progress, other colours), and the rooms of bombs it has no intel on that
    are outside its room (moved to another room outside its room)."""
    m = state.mission
    known = {i.bomb for i in state.intel[player] if i is not None}
    mine = state.locations[player]
    seqs, rooms = list(m.sequences), list(m.bomb_rooms)
    for b in range(m.num_bombs):
        if b in known or not state.active(b):
            continue
        seqs[b] = tuple(int(c) for c in rng.permutation(3)[: len(seqs[b])])
        if rooms[b] != mine:
            others = [r for r in range(m.game_map.num_rooms) if r != mine]
            rooms[b] = int(rng.choice(others))
    twin_mission = dataclasses.replace(m, sequences=tuple(seqs), bomb_rooms=tuple(rooms))
    return dataclasses.replace(state, mission=twin_mission)


def test_hidden_information_never_reaches_a_player() -> None:
    game = new_game(probes="none")
    rng = np.random.default_rng(0)
    checked = differs = 0
    for seed in range(25):
        s = game.initial_state(seeding.np_random(seed)[0])
        for _ in range(40):
            if s.over:
                break
            for p in range(3):
                twin = hidden_twin(game, s, p, rng)
                v1, x1, t1 = renderings(game, s, p)
                v2, x2, t2 = renderings(game, twin, p)
                assert v1 == v2, f"seed {seed}: the view of player {p} depends on hidden facts"
                assert np.array_equal(x1, x2) and t1 == t2
                checked += 1
                differs += not np.array_equal(game_state_vec(game, s), game_state_vec(game, twin))
            legal = game.legal_actions(s, s.turn)
            s = game.step(s, {s.turn: int(rng.choice(legal))}, rng).state
    assert checked > 1000 and differs > checked // 2, "the twins really differ (in state())"


def game_state_vec(game, state):
    return BombEncoder(game.config).encode_state(state)


def test_other_rooms_and_uninspected_sequences_are_not_in_the_text() -> None:
    game = new_game()
    s = start(game, [(0, (R,)), (8, (B, G, R)), (3, (G, B))], at=0)
    for p in range(3):
        _, _, text = renderings(game, s, p)
        assert "Bomb 2" not in text and "Bomb 3" not in text
        assert "Red" not in text and "Blue" not in text and "Green" not in text
    s = play(game, s, [("inspect",)])
    _, _x, text = renderings(game, s, 0)
    assert "remaining sequence is Red" in text
    _, _x1, text1 = renderings(game, s, 1)
    assert "Red" not in text1, "bravo did not inspect"


def test_intel_is_first_hand_and_may_be_stale() -> None:
    game = new_game()
    s = start(game, [(0, (G, B))], at=0)
    s = play(game, s, [("inspect",), ("use", B), ("move", 3), ("wait",)])
    # alpha inspected (Green-Blue); bravo's blue was rejected: it learned the sequence too
    assert [(i.bomb, i.remaining) for i in game.observe(s, 0).intel] == [(0, (G, B))]
    assert [(i.bomb, i.remaining) for i in game.observe(s, 1).intel] == [(0, (G, B))]
    assert game.observe(s, 2).intel == ()
    s = play(game, s, [("use", G)])  # round 2, bravo cuts green
    assert [i.remaining for i in game.observe(s, 1).intel] == [(B,)]
    assert [i.remaining for i in game.observe(s, 0).intel] == [(G, B)], "alpha's intel is stale"


def test_vector_layout_and_egocentric_order() -> None:
    game = new_game()
    enc = BombEncoder(game.config)
    assert enc.observation_shape == (348,) and enc.state_shape == (130,)
    assert sum(size for _, size in enc.pieces) == 348
    s = start(game, [(0, (R, B)), (5, (G,))], at=0)
    s = play(game, s, [("inspect",), ("move", 5), ("move", 6)])
    for p in range(3):
        view = game.observe(s, p)
        x = enc.encode(view)
        assert x.dtype == np.float32 and x.min() >= 0 and x.max() <= 1
        o = enc.offsets
        assert x[o["my_room"] + view.room] == 1
        slot = (p + 1) % 3
        at = o["teammate_rooms"]
        assert x[at + view.agent_rooms[slot]] == 1, "teammate at offset 1 comes first"
    alpha = enc.encode(game.observe(s, 0))
    at = enc.offsets["intel"]
    assert alpha[at] == 1 and alpha[at + 2 + ROOM[0]] == 1
    assert alpha[at + 2 + 5 + R] == 1 and alpha[at + 2 + 5 + 3 + B] == 1  # Red then Blue
    assert alpha[enc.offsets["last_result"] + 2] == 1  # INSPECTED


def test_messages_and_their_facts_reach_the_vector() -> None:
    game = new_game(symbolic_messages=True)
    enc = BombEncoder(game.config)
    s = start(game, [(0, (R, B)), (5, (G,))], at=0)
    from tom_envs.games.bomb_defusal.rules import ActionKind, MessageOption, encode_action

    a = encode_action(game.config, ActionKind.INSPECT, None, MessageOption.SHARE_ROOM)
    s = game.step(s, {0: a}, np.random.default_rng(0)).state
    msg = s.chat[-1]
    assert msg.symbolic and msg.text == (
        "I am in Room 0. Room 0 contains Bomb 1. Bomb 1 is in Room 0 and its remaining sequence "
        "is Red-Blue."
    ), "rendered after the action, from the sender's knowledge"
    x = enc.encode(game.observe(s, 2))  # charlie: alpha is at offset 1 (slot 0), bravo slot 1
    at = enc.offsets["messages"]
    assert x[at] == 1 and x[at + 1] == 1 and x[at + 2 + ROOM[0]] == 1
    bombs_at = at + 2 + 5 + 5 * (1 + 5)
    assert x[bombs_at] == 1 and x[bombs_at + 2 + R] == 1 and x[bombs_at + 2 + 3 + B] == 1
    assert x[at + enc.msg_size] == 0, "bravo sent nothing"


def test_hidden_teammate_locations() -> None:
    game = new_game(teammate_locations=False)
    s = play(game, start(game, [(0, (R,))], at=0), [("move", 3)])
    assert game.observe(s, 1).agent_rooms == (-1, ROOM[0], ROOM[0])
    assert game.observe(s, 0).agent_rooms == (ROOM[3], -1, -1)
    enc = BombEncoder(game.config)
    x = enc.encode(game.observe(s, 1))
    assert x[enc.offsets["teammate_rooms"] + 5] == 0  # charlie (offset 1) visible in room 0
    assert x[enc.offsets["teammate_rooms"] + 6 + 5] == 1  # alpha (offset 2) not visible


def test_state_vector_is_complete() -> None:
    game = new_game()
    s = start(game, [(0, (R, B)), (5, (G,))], at=0)
    x = BombEncoder(game.config).encode_state(s)
    assert x.shape == (130,) and x[:15].sum() == 3 and x[15] == 1  # alpha's turn
    width = 5 + 9 + 3
    bomb0 = 15 + 3 + 2
    assert x[bomb0 + ROOM[0]] == 1 and x[bomb0 + 5 + R] == 1 and x[bomb0 + 5 + 3 + B] == 1
    assert x[bomb0 + width + ROOM[5]] == 1 and x[bomb0 + width + 5 + G] == 1
