"""CollabEscape views (egocentric, killer intent and memory, chance never visible), vector, the
authors' text for both maps, and the parser."""

from __future__ import annotations

import pytest

from tom_envs.games.collab_escape.bots import state_from_view
from tom_envs.games.collab_escape.encode import OFFSETS, SIZE
from tom_envs.games.collab_escape.env import make_bundle, raw_env
from tom_envs.games.collab_escape.rules import (
    MEM_BOTH_ALICE,
    MEM_BOTH_BOB,
    MEM_NONE,
    MEM_SAW_ALICE,
    MEM_SAW_BOB,
    OUTCOME_CAUGHT,
    Action,
    EscapeState,
)
from tom_envs.games.collab_escape.view import (
    INTENT_ME,
    INTENT_PARTNER,
    INTENT_UNAWARE,
    SAW_BOTH_CHASED_ME,
    SAW_BOTH_CHASED_PARTNER,
    SAW_ME,
    SAW_NOBODY,
    SAW_PARTNER,
    EscapeView,
    absolute_memory,
    egocentric_memory,
)

W, F = int(Action.WAIT), int(Action.FIX)
BUNDLE = make_bundle()
GAME, TEXT, ENC = BUNDLE.game, BUNDLE.text, BUNDLE.encoder


def test_views_are_egocentric() -> None:
    s = EscapeState(
        rooms=(5, 1), killer=6, fixes=(1, 0), memory=MEM_SAW_BOB, fixing=(False, True), turn=2
    )
    v0, v1 = GAME.observe(s, 0), GAME.observe(s, 1)
    assert v0 == EscapeView(
        player=0,
        my_room=5,
        partner_room=1,
        killer_room=6,
        killer_intent=INTENT_ME,
        killer_memory=SAW_PARTNER,
        generators=((1, 1, 2), (6, 0, 2)),
        gate_room=7,
        gate_open=False,
        i_was_fixing=False,
        partner_was_fixing=True,
        turn=2,
        max_turns=30,
        escaped=False,
        caught=False,
        legal_actions=(4, 6, W),
    )
    assert (v1.killer_intent, v1.killer_memory, v1.i_was_fixing) == (INTENT_PARTNER, SAW_ME, True)
    assert v1.legal_actions == (2, 10, F, W)
    assert GAME.observe(EscapeState(rooms=(1, 2), killer=6), 0).killer_intent == INTENT_UNAWARE


@pytest.mark.parametrize(
    "memory", [MEM_NONE, MEM_SAW_ALICE, MEM_SAW_BOB, MEM_BOTH_ALICE, MEM_BOTH_BOB]
)
def test_memory_round_trips_and_views_rebuild_the_state(memory) -> None:
    for player in (0, 1):
        assert absolute_memory(egocentric_memory(memory, player), player) == memory
        s = EscapeState(
            rooms=(3, 8), killer=9, fixes=(2, 1), memory=memory, fixing=(True, False), turn=7
        )
        assert state_from_view(GAME.observe(s, player)) == s
    assert egocentric_memory(MEM_BOTH_BOB, 1) == SAW_BOTH_CHASED_ME
    assert egocentric_memory(MEM_BOTH_BOB, 0) == SAW_BOTH_CHASED_PARTNER
    assert egocentric_memory(MEM_NONE, 1) == SAW_NOBODY


def test_the_killers_next_random_move_is_nowhere_in_the_view() -> None:
    # Same state, different chance: different killer moves, from identical views and renderings.
    env_a, env_b = raw_env(), raw_env()
    landed = set()
    for seed in range(12):
        env_a.reset(seed=0)
        env_b.reset(seed=seed)
        for agent in ("player_0", "player_1"):
            assert env_a.view(agent) == env_b.view(agent)
            assert env_a.text_observation(agent) == env_b.text_observation(agent)
        env_b.step(W)
        env_b.step(W)
        landed.add(env_b.game_state.killer)
    assert landed == {5, 7}  # the killer in 6 roams to 5 or 7


def test_vector_layout() -> None:
    assert SIZE == 46
    s = EscapeState(
        rooms=(5, 1),
        killer=6,
        fixes=(1, 2),
        memory=MEM_BOTH_BOB,
        fixing=(True, False),
        turn=3,
        outcome=OUTCOME_CAUGHT,
    )
    v = ENC.encode(GAME.observe(s, 1))  # Bob's side
    assert v[OFFSETS["my_room"] + 0] == 1 and v[OFFSETS["partner_room"] + 4] == 1
    assert v[OFFSETS["killer_room"] + 5] == 1
    assert v[OFFSETS["killer_intent"] : OFFSETS["killer_intent"] + 3].tolist() == [0, 0, 1]
    assert v[OFFSETS["killer_memory"] + SAW_BOTH_CHASED_ME] == 1
    assert v[OFFSETS["generator_fixes"] : OFFSETS["generator_fixes"] + 2].tolist() == [0.5, 1.0]
    assert v[OFFSETS["fixing"] : OFFSETS["fixing"] + 2].tolist() == [0.0, 1.0]
    assert v[OFFSETS["time"]] == pytest.approx(0.1)
    assert v[OFFSETS["outcome"] : OFFSETS["outcome"] + 2].tolist() == [0.0, 1.0]
    assert v.sum() == pytest.approx(3 + 1 + 1 + 1.5 + 1 + 0.1 + 1)


def test_the_authors_state_description() -> None:
    s = GAME.initial_state(None)
    assert TEXT.observation_text(GAME.observe(s, 0)) == (
        "My name is Alice. I am in room 1. Bob is in room 2. We have information that the killer "
        "is currently located in room 6. We don't know which room the killer will move to next, "
        "but we do know that he is unaware of our current location. Number of fixes still needed "
        "by the generator in room 1 is 2. Number of fixes still needed by the generator in room 6 "
        "is 2. The exit gate is closed.\n"
        "Turn 1 of at most 30. Available actions:\n"
        "A. Move to room 2.\n"
        "B. Move to room 10.\n"
        "C. Fix generator in room 1.\n"
        "D. Wait."
    )
    s = EscapeState(
        rooms=(1, 7), killer=6, fixes=(1, 2), memory=MEM_BOTH_ALICE, fixing=(True, False), turn=5
    )
    text = TEXT.observation_text(GAME.observe(s, 1))
    for sentence in (
        "My name is Bob. I am in room 7. Alice is in room 1. Alice was fixing the generator last "
        "turn.",
        "We also have information that the killer will certainly move to the room where Bob is.",
        "Last turn the killer saw both of us and chased Alice.",
        "Number of fixes still needed by the generator in room 1 is 1. Generator in room 6 is "
        "fixed. The exit gate is closed.",
    ):
        assert sentence in text
    mine = TEXT.observation_text(GAME.observe(s, 0))
    assert "I have started to fix the generator in this room." in mine


def test_rules_prompt_tells_the_map_in_use() -> None:
    view = GAME.observe(GAME.initial_state(None), 0)
    coded = TEXT.rules_prompt(view)
    assert coded.startswith("In the game Collab Escape, we must cooperate")
    assert "room 7 is connected to room 3 and 6" in coded
    assert (
        "Some pathways are one-way: from room 7 you can move to room 3, but not from room 3 "
        "to room 7; from room 8 you can move to room 7, but not from room 7 to room 8."
    ) in coded
    assert "We have at most 30 turns to escape." in coded
    prompt = make_bundle(map="prompt").text.rules_prompt(view)
    assert "room 7 is connected to room 6 and 8" in prompt and "one-way" not in prompt


PARSE_VIEW = GAME.observe(EscapeState(rooms=(6, 2), killer=9), 0)
# Alice in 6: A. Move to room 5, B. Move to room 7, C. Fix generator in room 6, D. Wait


@pytest.mark.parametrize(
    ("answer", "action"),
    [
        ("A", 5),
        ("Action: B", 7),
        ("C. Fix generator in room 6.", F),
        ("d", W),
        ("Action: move to room 7", 7),
        ("2", 7),  # a bare number is the N-th listed option (B), never a room
        ("3", F),
        ("room 5", 5),
        ("fix", F),
        ("I will fix the generator", F),
        ("wait", W),
        ("<action>Wait</action>", W),
    ],
)
def test_parser_accepts(answer, action) -> None:
    result = TEXT.parse_action(PARSE_VIEW, answer)
    assert result.action == action, (answer, result.feedback)


@pytest.mark.parametrize(
    "answer", ["E", "7", "move to room 8", "fix or wait", "run!", "", "Action: room 5 or room 7"]
)
def test_parser_refuses_with_feedback(answer) -> None:
    result = TEXT.parse_action(PARSE_VIEW, answer)
    assert result.action is None and result.feedback.strip()


def test_render_state() -> None:
    env = raw_env(render_mode="ansi", scenario="split", map="prompt")
    env.reset(seed=0)
    assert env.render() == (
        "Collab Escape (split, prompt map), turn 0/30: Alice room 1, Bob room 5, killer room 6; "
        "generator 1 0/2, generator 6 0/2"
    )
