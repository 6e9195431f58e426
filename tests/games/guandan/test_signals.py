"""The signalling conventions (``signal_pair``/``signal_single``) and their openers
(``pair_opener``/``single_opener``): issue #35's known groups, round 8.

The free leads recovered from a player's view against the engine's own bookkeeping, each rule on a
hand-built table, and the zoo and functional-ToM plan that declare them (their seeded golden deals
are in ``test_conventions.py``; the design and its measurements: docs/results/guandan_conventions.md,
"Round 8").
"""

from __future__ import annotations

import numpy as np
import pytest

from tom_envs import zoo
from tom_envs.core.agents import Turn
from tom_envs.games.guandan.bots import (
    BOTS,
    HeuristicAgent,
    PairOpener,
    SignalPair,
    SignalSingle,
    SingleOpener,
)
from tom_envs.games.guandan.combos import PASS, ComboType, shape_of
from tom_envs.games.guandan.rules import GuandanGame

from .helpers import action, choice, rank, turn_at

NEW = ("signal_pair", "signal_single", "pair_opener", "single_opener")


def _single(r: str) -> int:
    return action(ComboType.SINGLE, rank(r))


def _pair(r: str) -> int:
    return action(ComboType.PAIR, rank(r))


@pytest.mark.parametrize("seed", [0, 3])
def test_free_leads_from_the_view_are_the_engines_fresh_tricks(seed: int) -> None:
    """At every decision of a seeded deal, every player's recovered free leads are exactly the
    plays the engine accepted with nothing to beat (its ``lead`` was ``None``)."""
    game = GuandanGame()
    rng = np.random.default_rng(seed)
    s = game.initial_state(rng)
    agents = [BOTS[n][0]() for n in NEW]
    truth: list[tuple[int, int]] = []
    while not game.is_terminal(s):
        p = s.to_act
        for q in range(4):  # every seat's view agrees, in its own relative seats
            assert game.observe(s, q).free_leads() == [((t - q) % 4, a) for t, a in truth]
        a = agents[p].act(Turn(f"player_{p}", p, game.observe(s, p), None, None, 0.0, 0))
        if a != PASS and s.lead is None:
            truth.append((p, a))
        s = game.step(s, {p: a}, rng).state
    assert len(truth) > 5  # a whole deal has many tricks


# seat 0 and seat 2 are teammates; seat 1 acts between them
OPP = "H4 S6 D7 SQ C2 CK"
LAST = "S7 D10 C10 CQ DK DA"


def test_pair_opener_opens_with_its_weakest_pair_then_plays_heuristic() -> None:
    hand = "S3 D5 C5 S9 D9 SK"  # pairs of 5s and 9s; heuristic would open the 3
    turn = turn_at([hand, OPP, "D4 D8 HK C6", LAST], 0)
    assert choice(PairOpener, turn) == _pair("5")
    assert choice(HeuristicAgent, turn) == _single("3")
    # its second free lead (after S3 was led and every other player passed) is heuristic's
    again = turn_at([hand, OPP, "D4 D8 HK C6", LAST], 0, (_single("3"), PASS, PASS, PASS))
    assert again.view.lead is None and again.player == 0
    assert choice(PairOpener, again) == choice(HeuristicAgent, again)
    # no pair in hand: heuristic's lead
    bare = turn_at(["S3 D5 S9 SK", OPP, "D4 D8 HK C6", LAST], 0)
    assert choice(PairOpener, bare) == choice(HeuristicAgent, bare)


def test_single_opener_opens_with_a_single() -> None:
    # a 3-7 straight and a lone ace: heuristic leads the straight (the ace is no small single),
    # the single opener the ace (its plan's one single)
    turn = turn_at(["D3 C4 S5 D6 C7 SA", OPP, "D4 D8 HK C6", LAST], 0)
    assert shape_of(choice(HeuristicAgent, turn)).type == ComboType.STRAIGHT
    assert choice(SingleOpener, turn) == _single("A")
    # a straight and a pair, no plan single: the single that costs the hand least (a 9 of the pair)
    no_single = turn_at(["D3 C4 S5 D6 C7 S9 D9", OPP, "D4 D8 HK C6", LAST], 0)
    assert shape_of(choice(HeuristicAgent, no_single)).type == ComboType.STRAIGHT
    assert choice(SingleOpener, no_single) == _single("9")


def test_both_openers_go_out_when_one_play_empties_the_hand() -> None:
    assert choice(PairOpener, turn_at(["S7", OPP, "D4 D8", LAST], 0)) == _single("7")
    assert choice(SingleOpener, turn_at(["D8 C8", OPP, "D4 D8", LAST], 0)) == _pair("8")


#: seat 0 (the member's teammate) leads S3 freely, seat 1 beats it with S6: seat 2 may beat that
SINGLE_LED = (_single("3"), _single("6"))


def test_signal_pair_withdraws_after_a_single_signal_signal_single_cooperates() -> None:
    turn = turn_at(["S3 D5 C5 S9", OPP, "D4 D8 HK C6", LAST], 0, SINGLE_LED)
    # seat 1 is seat 2's previous player (relative seat 3)
    assert turn.player == 2 and turn.view.lead is not None and turn.view.lead[0] == 3
    heur = choice(HeuristicAgent, turn)
    assert heur != PASS
    assert choice(SignalPair, turn) == PASS
    assert choice(SignalSingle, turn) == heur


def test_signal_single_withdraws_after_a_pair_signal_signal_pair_cooperates() -> None:
    led = (_pair("5"), _pair("Q"))  # seat 1 beats the 5s with its queens
    opp2 = "H4 S6 D7 SQ DQ CK"
    turn = turn_at(["S3 D5 C5 S9", opp2, "D4 D8 HK CK C6", LAST], 0, led)
    # seat 1 is seat 2's previous player (relative seat 3)
    assert turn.player == 2 and turn.view.lead is not None and turn.view.lead[0] == 3
    heur = choice(HeuristicAgent, turn)
    assert heur == _pair("K")
    assert choice(SignalSingle, turn) == PASS
    assert choice(SignalPair, turn) == heur


def test_a_withdrawn_member_passes_even_when_it_could_go_out() -> None:
    turn = turn_at(["S3 D5 C5 S9", OPP, "D8", LAST], 0, SINGLE_LED)
    assert choice(HeuristicAgent, turn) == _single("8")
    assert choice(SignalPair, turn) == PASS


def test_a_withdrawn_member_leads_as_heuristic_when_it_must() -> None:
    # seat 0 leads its last card (a free single) and goes out; everyone passes: seat 2 leads
    # (wind-follow), withdrawn, and a leader cannot pass
    turn = turn_at(["S3", OPP, "D4 D8 HK C6", LAST], 0, (_single("3"), PASS, PASS, PASS))
    assert turn.player == 2 and turn.view.lead is None
    assert choice(SignalPair, turn) == choice(HeuristicAgent, turn) != PASS


def test_before_the_signal_and_after_a_follow_a_member_plays_heuristic() -> None:
    # seat 1 leads; seat 2 has seen no free lead of its teammate: heuristic
    before = turn_at(["S3 D5 C5 S9", OPP, "D4 D8 HK C6", LAST], 1, (_single("6"),))
    assert before.player == 2
    assert choice(SignalPair, before) == choice(HeuristicAgent, before) != PASS
    # seat 3 leads S7, seat 0 follows with S9 (a follow, not a free lead), seat 1 beats it with SQ
    follow = turn_at(
        ["S3 D5 C5 S9", OPP, "D4 D8 HK C6", LAST], 3, (_single("7"), _single("9"), _single("Q"))
    )
    assert follow.player == 2 and follow.view.free_leads() == [(1, _single("7"))]
    assert choice(SignalPair, follow) == choice(HeuristicAgent, follow)
    assert choice(SignalSingle, follow) == choice(HeuristicAgent, follow)


def test_the_zoo_and_the_plan_declare_them() -> None:
    from tom_experiments.functional_tom import _members

    names = [m.name for m in zoo.members("Guandan")]
    assert names[-4:] == list(NEW) and set(BOTS) == set(names)
    assert set(NEW) <= set(_members("Guandan"))
