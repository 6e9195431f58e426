"""The participant's board of every registered game: drawn from the seat's view only, every
marker explained, every legal action in words, clicks offering only legal actions, the seats named
as the game names them, and nothing meant for researchers."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from tom_envs.registration import GAMES
from tom_envs.serve.boards import board_for, participant_payload
from tom_envs.serve.session import Session

#: Keys that must never reach a participant's page.
FORBIDDEN = {"seed", "observation", "rules", "token", "config", "spec", "kwargs", "env_kwargs",
             "prompt", "partners", "agent", "participant"}  # fmt: skip


def _keys(obj: object) -> set[str]:
    if isinstance(obj, dict):
        return set(obj) | {k for v in obj.values() for k in _keys(v)}
    if isinstance(obj, list):
        return {k for v in obj for k in _keys(v)}
    return set()


def check(payload: dict, session: Session, seat: int) -> None:
    """The properties every board has, at any moment of any game."""
    json.dumps(payload)  # plain data
    assert not (_keys(payload) & FORBIDDEN), _keys(payload) & FORBIDDEN
    legal = set(session.view(seat).legal_actions) if session.must_act(seat) else set()
    shapes = payload["board"]["shapes"]
    clickable = {a for s in shapes for a in s.get("act", [])}
    assert clickable <= legal
    assert {a["id"] for a in payload["actions"]} == legal
    assert all(not a["label"].startswith("action ") for a in payload["actions"])
    legend = {e["key"]: e for e in payload["legend"]}
    assert all(s["m"] in legend for s in shapes if "m" in s)
    assert all(e["text"] for e in legend.values())
    markers = [s for s in shapes if s["k"] in ("circle", "rect", "poly", "line") and "m" not in s]
    plain = [s for s in markers if s["k"] != "circle" or s.get("tip")]
    assert len(plain) == len(markers), "a marker without a legend entry"
    assert payload["you"] == payload["names"][seat] and payload["headline"]


@pytest.mark.parametrize("spec", GAMES, ids=lambda g: g.name)
def test_every_game_has_a_board_a_first_time_player_can_read(spec) -> None:
    board_for(spec)  # every registered game has one
    n = spec.load().make_bundle(**spec.kwargs).game.num_players
    for seat in range(n):
        s = Session(spec.name, seat, ["random"] * (n - 1), seed=seat + 1)
        s.advance()
        rng = np.random.default_rng(seat)
        for _ in range(6):
            check(participant_payload(s, seat), s, seat)
            if s.status != "playing":
                break
            legal = list(s.view(seat).legal_actions)
            s.apply(seat, s.steps[seat], int(rng.choice(legal)))
            s.advance()
        if s.status != "playing":
            assert participant_payload(s, seat)["outcome"]


def test_seats_are_named_as_the_game_names_them() -> None:
    s = Session("BombDefusal", 1, ["heuristic", "heuristic"], seed=0)
    s.advance()
    p = participant_payload(s, 1)
    assert p["you"] == "Bravo" and p["names"] == ["Alpha", "Bravo", "Charlie"]
    texts = {e["text"] for e in p["legend"]}
    assert {"Alpha", "Bravo (you)", "Charlie"} <= texts and any("bomb" in t for t in texts)
    assert "player_0" not in json.dumps(p)


def test_hanabi_shows_everything_known_in_full_and_says_bobs_cards() -> None:
    s = Session("Hanabi", 0, ["simple"], seed=4)
    s.advance()
    p = participant_payload(s, 0)
    words = json.dumps(p)
    assert "Bob's cards" in words and "Bobs" not in words
    ranks = [sh["text"] for sh in p["board"]["shapes"] if sh["k"] == "text" and sh["text"] == "1 2 3 4 5"]
    assert len(ranks) == 10  # five of mine and five of Bob's, every rank still possible, uncut
    hints = [a for a in p["actions"] if a["group"] == "Hint"]
    assert hints and all(a["label"].startswith("Tell Bob which cards are") for a in hints)


def test_hidden_cards_never_change_the_board() -> None:
    s = Session("Hanabi", 0, ["convention"], seed=4)
    s.advance()
    state = s.env.game_state
    mine = tuple(reversed(state.hands[0]))
    a = participant_payload(s, 0)
    s.env.game_state = dataclasses.replace(state, hands=(mine, *state.hands[1:]))
    s.version += 1
    assert participant_payload(s, 0)["board"] == a["board"]
    g = Session("Guandan", 0, ["random"] * 3, seed=4)
    g.advance()
    st = g.env.game_state
    hands = list(st.hands)
    hands[1], hands[2] = hands[2], hands[1]
    x = participant_payload(g, 0)
    g.env.game_state = dataclasses.replace(st, hands=tuple(hands))
    assert participant_payload(g, 0)["board"] == x["board"]


def test_objects_are_clickable_where_that_is_natural() -> None:
    oc = Session("Overcooked", 0, ["greedy"], seed=0)
    oc.advance()
    p = participant_payload(oc, 0)
    assert set(p["keys"]) >= {"ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight", " "}
    assert sum(1 for sh in p["board"]["shapes"] if sh["k"] == "rect" and sh.get("act")) >= 3
    cb = Session("CoBlock", 0, ["cooperative"], seed=0)
    cb.advance()
    q = participant_payload(cb, 0)
    cells = [sh for sh in q["board"]["shapes"] if sh["k"] == "rect" and sh.get("act")]
    assert len(cells) > 20 and q["chat"]["send_action"] is not None
    gd = Session("Guandan", 0, ["random"] * 3, seed=1)
    gd.advance()
    r = participant_payload(gd, 0)
    assert r["select"] and all(sh["sel"].split(":")[0] for sh in r["board"]["shapes"] if "sel" in sh)
    assert all("faces" in a for a in r["actions"] if a["label"] != "Pass")


def test_the_chat_log_is_what_the_seat_was_shown() -> None:
    from tom_envs.core.agents import AgentAction, BaseAgent

    class Talker(BaseAgent):
        name = "talker"

        def act(self, turn):
            return AgentAction(action=int(turn.legal_actions[0]), message="room 5 is clear")

    s = Session("BombDefusal", 2, [Talker(), Talker()], seed=0)
    s.advance()
    p = participant_payload(s, 2)
    assert [m["who"] for m in p["chat"]["log"]] == ["Alpha", "Bravo"]
    s.apply(2, 0, int(s.view(2).legal_actions[0]), "thanks")
    s.advance()
    log = participant_payload(s, 2)["chat"]["log"]
    assert [m["text"] for m in log][:3] == ["room 5 is clear", "room 5 is clear", "thanks"]
    assert log[2]["mine"] and log[2]["who"] == "You"


def test_what_a_seat_was_shown_stays_on_its_page() -> None:
    """CoBlock's view lists only the last ten actions; the page keeps every one it showed."""
    s = Session("CoBlock", 0, ["cooperative"], seed=0)
    s.advance()
    for _ in range(8):
        participant_payload(s, 0)
        s.apply(0, s.steps[0], int(s.view(0).legal_actions[0]))  # wait
        s.advance()
    lines = next(p for p in participant_payload(s, 0)["panels"] if p["title"] == "Actions so far")
    assert len(s.view(0).history) == 10 and len(lines["lines"]) == s.view(0).history_total == 16
