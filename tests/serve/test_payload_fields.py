"""The serve payloads field by field, table-driven (PettingZoo's board tests): the researcher
console's ``Session.payload`` and the participant page's ``participant_payload`` after a fixed
list of moves, against values worked out by hand from the game's rules.

Prisoner's Dilemma against tit-for-tat (horizon 3; action 0 cooperates, 1 defects; payoffs
(defect, cooperate) = 10 / 0, both defect = 5 / 5): tit-for-tat opens cooperating, then copies
the person's last move.
"""

from __future__ import annotations

from typing import Any

import pytest

from tom_envs.serve import Session
from tom_envs.serve.boards import participant_payload

PD_ROWS = [
    # moves, step, status, your_turn, legal ids, returns (person, tit-for-tat)
    ((), 0, "playing", True, [0, 1], (0.0, 0.0)),
    ((1,), 1, "playing", True, [0, 1], (10.0, 0.0)),  # D against its opening C
    ((1, 1), 2, "playing", True, [0, 1], (15.0, 5.0)),  # D against D
    ((1, 1, 0), 3, "done", False, [], (15.0, 15.0)),  # C against D: the sucker's 0
]


def _pd(moves: tuple[int, ...]) -> Session:
    s = Session("PrisonersDilemma", 0, ["tit_for_tat"], seed=3, env_kwargs={"horizon": 3})
    for step, action in enumerate(moves):
        s.submit(step, action)
    return s


@pytest.mark.parametrize(("moves", "step", "status", "turn", "legal", "returns"), PD_ROWS)
def test_console_and_participant_payload_fields(
    moves: tuple[int, ...],
    step: int,
    status: str,
    turn: bool,
    legal: list[int],
    returns: tuple[float, float],
) -> None:
    s = _pd(moves)
    p = s.payload()
    assert (p["game"], p["seat"], p["step"], p["status"]) == ("PrisonersDilemma", 0, step, status)
    assert p["your_turn"] is turn
    assert [a["id"] for a in p["legal"]] == legal
    assert [a["text"] for a in p["legal"]] == ["Option J", "Option F"][: len(legal)]
    assert p["returns"] == {"player_0": returns[0], "player_1": returns[1]}
    assert p["chat"] is False and p["error"] is None and p["task"] is None
    q = participant_payload(s, 0)
    assert (q["seat"], q["you"], q["names"], q["people"]) == (
        0, "Player 1", ["Player 1", "Player 2"], ["Player 1"],
    )  # fmt: skip
    assert (q["step"], q["status"], q["your_turn"], q["waiting_for"]) == (step, status, turn, [])
    assert q["chat"] == {"on": False, "send_action": None, "log": []}
    if status == "done":
        assert q["outcome"] == (
            "The game is over: you scored 15 points, the other player 15."
        ) and q["keys"] == {}
    else:
        assert q["outcome"] == ""


CHAT_ROWS = [
    # game, seat, partners, chat on, names, your turn, waiting for
    ("PrisonersDilemma", 1, ["random"], False, ["Player 1", "Player 2"], True, []),
    ("CoBlock", 1, ["random"], True, ["Player 1", "Player 2"], True, []),
    ("BombDefusal", 1, ["random", "random"], True, ["Alpha", "Bravo", "Charlie"], False, ["Alpha"]),
]


@pytest.mark.parametrize(("game", "seat", "partners", "chat", "names", "turn", "waiting"), CHAT_ROWS)
def test_seat_and_chat_fields(
    game: str,
    seat: int,
    partners: list[str],
    chat: bool,
    names: list[str],
    turn: bool,
    waiting: list[str],
) -> None:
    s = Session(game, seat, partners, seed=0)
    p: dict[str, Any] = s.payload()
    q = participant_payload(s, seat)
    assert p["seat"] == q["seat"] == seat and p["step"] == q["step"] == 0
    assert p["chat"] is chat and q["chat"]["on"] is chat
    assert (q["names"], q["you"], q["people"]) == (names, names[seat], [names[seat]])
    assert p["your_turn"] is q["your_turn"] is turn and q["waiting_for"] == waiting
    assert bool(p["legal"]) is turn  # actions are offered on the person's turn only


def test_two_people_each_see_their_own_step_and_turn() -> None:
    # two people in one Prisoner's Dilemma (a study's matched pair): the first one's move is
    # held until the second one's comes; each page counts its own decisions
    s = Session("PrisonersDilemma", [0, 1], [], seed=0, env_kwargs={"horizon": 2})
    s.submit(0, 1, seat=0)
    rows = {
        # seat: step, your turn, waiting for (others), legal ids
        0: (1, False, ["Player 2"], []),
        1: (0, True, [], [0, 1]),
    }
    for seat, (step, turn, waiting, legal) in rows.items():
        p, q = s.payload(seat), participant_payload(s, seat)
        assert (p["step"], p["your_turn"], [a["id"] for a in p["legal"]]) == (step, turn, legal)
        assert (q["step"], q["your_turn"], q["waiting_for"]) == (step, turn, waiting)
        assert q["people"] == ["Player 1", "Player 2"]
