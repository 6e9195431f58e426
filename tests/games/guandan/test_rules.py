"""Rules of a deal and of a match: dealing, trick play, wind-follow, scoring, tribute, passing A."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tom_envs.core.game import IllegalActionError
from tom_envs.games.guandan.cards import BIG_JOKER, hand_from_cards
from tom_envs.games.guandan.combos import GIVE_BASE, PASS, ComboType
from tom_envs.games.guandan.rules import (
    OVER,
    PLAY,
    RETURN,
    TRIBUTE,
    GuandanGame,
    return_cards,
    tribute_cards,
)
from tom_envs.games.guandan.state import GuandanConfig

from .helpers import action, hand, rank, step, table_state

T = ComboType


def test_deal_is_27_cards_each_from_two_decks() -> None:
    game = GuandanGame()
    state = game.initial_state(np.random.default_rng(7))
    assert [sum(h) for h in state.hands] == [27] * 4
    totals = [sum(h[c] for h in state.hands) for c in range(54)]
    assert totals == [2] * 54
    assert state.phase == PLAY and state.lead is None and state.tribute is None
    again = game.initial_state(np.random.default_rng(7))
    assert again == state
    assert game.initial_state(np.random.default_rng(8)).hands != state.hands


def test_trick_returns_to_the_last_player_after_everyone_passes() -> None:
    game, s = table_state(["S3 S9", "S4 S5", "S6 S7", "S8 S10"])
    s = step(game, s, action(T.SINGLE, rank("3")))
    s = step(game, s, action(T.SINGLE, rank("5")))  # player 1 beats
    assert s.to_act == 2 and s.lead[0] == 1
    for _ in range(3):
        s = step(game, s, PASS)
    assert s.lead is None and s.to_act == 1, "the last player to play leads the next trick"
    with pytest.raises(IllegalActionError):
        game.step(s, {1: PASS}, np.random.default_rng(0))  # the leader cannot pass


def test_wind_follow_the_teammate_leads_after_a_player_goes_out() -> None:
    game, s = table_state(["SA", "S3 S4", "S5 S6", "S7 S8"])
    s = step(game, s, action(T.SINGLE, rank("A")))  # player 0 goes out
    assert s.finished == (0,) and s.to_act == 1
    s = step(game, s, PASS)
    s = step(game, s, PASS)
    s = step(game, s, PASS)
    assert s.lead is None and s.to_act == 2, "player 0's teammate leads (wind-follow)"


def test_finished_players_are_skipped() -> None:
    game, s = table_state(["SA", "S3 S4", "S5 S6", "S7 S8"])
    s = step(game, s, action(T.SINGLE, rank("A")))
    s = step(game, s, PASS)
    s = step(game, s, PASS)
    s = step(game, s, PASS)
    s = step(game, s, action(T.SINGLE, rank("5")))
    s = step(game, s, action(T.SINGLE, rank("8")))  # player 3
    assert s.to_act == 1, "player 0 is out: after player 3 comes player 1"


def test_first_and_second_ends_the_deal_with_plus_three() -> None:
    game, s = table_state(["SA", "S3 S4", "HR", "S5 S6"])
    s = step(game, s, action(T.SINGLE, rank("A")))
    s = step(game, s, PASS)
    result = game.step(s, {2: action(T.SINGLE, 14)}, np.random.default_rng(0))
    expected_order, advance = (0, 2, 1, 3), 3
    end = result.state
    assert end.phase == OVER and game.is_terminal(end)
    assert end.results[-1].order == expected_order
    assert end.results[-1].advance == advance
    assert result.rewards == (advance, -advance, advance, -advance)
    assert end.levels == (advance, 0)


def test_first_and_fourth_advances_one_and_three_out_ends_the_deal() -> None:
    # 0 out first with A; 1 and 3 go out; 2 is last: team 0 wins +1
    game, s = table_state(["SA", "HR", "S4 S5 S6", "SB"])
    s = step(game, s, action(T.SINGLE, rank("A")))
    s = step(game, s, action(T.SINGLE, 14))  # player 1 out (big joker)
    s = step(game, s, PASS)
    s = step(game, s, PASS)  # player 3 passes; trick back to player 1 who is out -> player 3
    assert s.to_act == 3 and s.lead is None
    result = game.step(s, {3: action(T.SINGLE, 13)}, np.random.default_rng(0))
    end = result.state
    assert end.results[-1].order == (0, 1, 3, 2)
    assert end.results[-1].winner == 0 and end.results[-1].advance == 1
    assert result.rewards == (1.0, -1.0, 1.0, -1.0)


def _tribute_game(order, **cfg):
    game = GuandanGame(GuandanConfig(previous_order=order, start_levels=(3, 0), **cfg))
    for seed in range(20):  # a deal without anti-tribute
        s = game.initial_state(np.random.default_rng(seed))
        if not s.tribute.anti:
            return game, s
    raise AssertionError("no deal without anti-tribute")


def test_double_down_tribute_and_return() -> None:
    game, s = _tribute_game((0, 2, 1, 3))
    assert s.phase == TRIBUTE and s.tribute.payers == (1, 3)
    assert s.level == 3, "the deal is played at the previous winners' level"
    paid = {}
    for payer in (1, 3):
        legal = game.legal_actions(s, payer if s.to_act == payer else s.to_act)
        seat = s.to_act
        cards = [a - GIVE_BASE for a in legal]
        assert cards == tribute_cards(s.hands[seat], s.level)
        paid[seat] = cards[0]
        s = step(game, s, legal[0])
    assert s.phase == RETURN
    receivers = dict(zip(s.tribute.payers, s.tribute.receivers, strict=True))
    assert set(receivers.values()) == {0, 2}
    # the larger card goes to the first-place player
    from tom_envs.games.guandan.cards import card_value

    big = max(paid, key=lambda p: (card_value(paid[p], 3), p == 1))
    assert receivers[big] == 0 and s.tribute.leader == big
    for _ in range(2):
        seat = s.to_act
        legal = game.legal_actions(s, seat)
        assert [a - GIVE_BASE for a in legal] == return_cards(s.hands[seat], s.level)
        s = step(game, s, legal[0])
    assert s.phase == PLAY and s.to_act == big
    assert [sum(h) for h in s.hands] == [27] * 4


@pytest.mark.parametrize("rule,payer", [("losing_team_last", 3), ("last_place", 2)])
def test_single_down_payer_variants(rule, payer) -> None:
    # finishing order 0, 1, 3, 2: team 0 first and fourth
    _game, s = _tribute_game((0, 1, 3, 2), single_down_payer=rule)
    assert s.tribute.payers == (payer,)


def test_anti_tribute_when_the_payers_hold_both_big_jokers() -> None:
    game = GuandanGame(GuandanConfig(previous_order=(0, 2, 1, 3)))
    s = game.initial_state(np.random.default_rng(0))
    hands = list(s.hands)
    # give both big jokers to the payers (swap them out of whoever holds them)
    for seat in range(4):
        while hands[seat][BIG_JOKER] and seat not in (1, 3):
            h = list(hands[seat])
            h[BIG_JOKER] -= 1
            c = next(k for k in range(52) if hands[1][k])
            h[c] += 1
            hands[seat] = bytes(h)
            h1 = list(hands[1])
            h1[c] -= 1
            h1[BIG_JOKER] += 1
            hands[1] = bytes(h1)
    s2 = game.deal_from_hands(tuple(hands), previous_order=(0, 2, 1, 3))
    assert s2.tribute.anti and s2.phase == PLAY and s2.to_act == 0
    off = GuandanGame(GuandanConfig(previous_order=(0, 2, 1, 3), anti_tribute=False))
    assert off.deal_from_hands(tuple(hands)).phase == TRIBUTE


def test_tribute_never_pays_the_wild_card_and_returns_are_low() -> None:
    level = rank("5")
    h = hand("H5 H5 SA C3 D9")  # the hearts of 5 are wild at level 5
    assert tribute_cards(h, level) == [4 * rank("A") + 1]
    h2 = hand("S5 SA D3 C10 HJ")
    assert return_cards(h2, level) == [4 * rank("3") + 3, 4 * rank("10") + 2]


def _match_end(levels, level_team, winner_second: bool, **cfg):
    game = GuandanGame(GuandanConfig(match=True, start_levels=levels, level_team=level_team, **cfg))
    base = game.initial_state(np.random.default_rng(0))
    hands = ["SA", "S3 S4", "HR", "S5 S6"] if winner_second else ["SA", "HR", "S4 S5", "S3 S6"]
    s = replace(base, hands=tuple(hand(h) for h in hands), to_act=0, lead=None)
    s = step(game, s, action(T.SINGLE, rank("A")))
    if winner_second:
        s = step(game, s, PASS)
        return game, game.step(s, {2: action(T.SINGLE, 14)}, np.random.default_rng(1))
    return game, None


def test_passing_a_wins_the_match() -> None:
    game, result = _match_end((12, 5), 0, True)
    end = result.state
    assert end.winner == 0 and game.is_terminal(end) and end.results[-1].passed_a
    assert "match_over" in result.events


def test_winning_at_the_opponents_level_does_not_pass_a() -> None:
    game, result = _match_end((12, 5), 1, True)  # played at team 1's level 7
    s = result.state
    assert s.winner is None and not game.is_terminal(s), "the match goes on with a new deal"
    assert s.levels == (12, 5) and s.level_team == 0 and s.level == 12
    assert s.phase == TRIBUTE or s.tribute.anti  # the next deal starts with tribute
    assert s.deal == 1 and len(s.results) == 1


def test_a_fail_limit_drops_back_to_two() -> None:
    _game, result = _match_end((5, 12), 1, True, a_fail_limit=1)  # team 1 at its A loses
    assert result.state.levels == (8, 0)


def test_hand_vectors_are_bytes_and_states_hash() -> None:
    game = GuandanGame()
    s = game.initial_state(np.random.default_rng(0))
    assert all(isinstance(h, bytes) for h in s.hands)
    hash(s)
    assert hand_from_cards([0, 0, 53]) == bytes([2] + [0] * 52 + [1])


def test_config_validation() -> None:
    with pytest.raises(ValueError):
        GuandanConfig(start_levels=(0, 13))
    with pytest.raises(ValueError):
        GuandanConfig(previous_order=(0, 1, 2, 2))
    with pytest.raises(ValueError):
        GuandanConfig(language="fr")
    with pytest.raises(ValueError):
        GuandanConfig(single_down_payer="nobody")


def test_a_whole_match_through_the_env() -> None:
    """heuristic (0, 2) against random (1, 3), match=True: tribute deals, levels climb, A passed."""
    from tom_envs.agents import make_agent
    from tom_envs.registration import game_spec
    from tom_envs.runner import play_episode

    spec = game_spec("Guandan")
    agents = [make_agent(a, spec) for a in ("heuristic", "random", "heuristic", "random")]
    env = spec.load().raw_env(match=True)
    ep = play_episode(spec, agents, 3, env_kwargs={"match": True}, env=env)
    end = env.unwrapped.game_state
    assert end.winner == 0 and end.levels[0] == 12 and end.results[-1].passed_a
    assert len(end.results) >= 5, "from 2 to A takes at least 4 deals, then passing A"
    phases = [s["action_text"].split()[0] for s in ep.steps]
    assert "Tribute" in phases and "Return" in phases
    assert ep.returns["player_0"] == sum(
        r.advance if r.winner == 0 else -r.advance for r in end.results
    )


@pytest.mark.parametrize(
    ("payer1", "payer3", "to_first", "leader"),
    [
        # payers 1 and 3 (double-down after 0, 2): each pays its only highest card, an ace or a
        # king (the level is 5: no wild card here); the larger card goes to the first-place
        # player 0, the other to player 2, and the payer of the larger card leads
        ("SA S3", "CK D4", 1, 1),
        ("SK S3", "CA D4", 3, 3),
        # a tie: the payer seated after the first-place player (1) pays player 0 and leads
        ("SA S3", "CA D4", 1, 1),
        ("HK S3", "DK D4", 1, 1),
    ],
)
def test_double_down_tribute_receivers(payer1, payer3, to_first, leader) -> None:
    game, s = _tribute_game((0, 2, 1, 3))
    assert s.tribute.payers == (1, 3) and s.to_act == 1
    s = replace(s, hands=(s.hands[0], hand(payer1), s.hands[2], hand(payer3)))
    for _ in range(2):
        (only,) = game.legal_actions(s, s.to_act)  # one highest card each
        s = step(game, s, only)
    receivers = dict(zip(s.tribute.payers, s.tribute.receivers, strict=True))
    assert receivers[to_first] == 0 and receivers[4 - to_first] == 2
    assert s.tribute.leader == leader
