"""ToM probes: what each partner knows about each card, with ground truth from the tracking."""

from __future__ import annotations

from tom_envs.agents import make_agent
from tom_envs.core.agents import AgentAction, BaseAgent, Turn
from tom_envs.core.probes import Question
from tom_envs.driver import EpisodeDriver
from tom_envs.games.hanabi.cards import knowledge_code
from tom_envs.games.hanabi.env import make_bundle, raw_env
from tom_envs.games.hanabi.probes import knows_color, knows_playable, knows_rank
from tom_envs.registration import game_spec

from .decks import act, deck_with, play, reveal_color, reveal_rank


def truths(probes) -> dict[str, str]:
    return {p.id: p.answer for p in probes}


def test_knowledge_predicates() -> None:
    fw = (1, 0, 0, 0, 0)
    red2 = knowledge_code(0b00001, 0b00010, True, True)
    any_one = knowledge_code(0b11110, 0b00001, False, True)  # a 1 of any colour but red
    assert knows_color(red2) and knows_rank(red2) and knows_playable(red2, fw)
    assert not knows_color(any_one) and knows_rank(any_one)
    assert knows_playable(any_one, fw)  # every non-red stack is at 0: any 1 but red plays
    assert not knows_playable(any_one, (1, 1, 0, 0, 0))
    assert not knows_playable(knowledge_code(0b11111, 0b11111, False, False), fw)


def test_partner_probes_follow_the_reveals() -> None:
    b = make_bundle()
    game = b.game
    s = game.state_from_deck(deck_with(game, ["R1 R2 R3 R4 R5", "Y1 G1 Y2 G2 B3"]))
    probes = b.probes(s, 0)
    assert len(probes) == 15 and all(p.order == 1 for p in probes)
    assert all(p.answer == "no" for p in probes)
    assert probes[0].question == "Does Bob know the color of his Card 0?"
    assert probes[2].question == "Does Bob know that his Card 0 can be played now?"
    assert b.probes(s, 1) == []  # only the player to act is asked
    s = act(game, s, reveal_rank(game, 1))  # Alice: Bob's 1s (cards 0 and 1)
    s = act(game, s, play(game, 4))  # Bob plays B3: a misplay; Alice to act
    t = truths(b.probes(s, 0))
    assert t["p1.card0.rank"] == "yes" and t["p1.card0.color"] == "no"
    assert t["p1.card0.playable"] == "yes"  # any 1 plays on empty stacks
    assert t["p1.card2.rank"] == "no"
    s = act(game, s, reveal_color(game, "Y"))
    s = act(game, s, play(game, 0))  # Bob plays Y1
    t = truths(b.probes(s, 0))
    assert t["p1.card0.playable"] == "yes"  # G1: a 1 but not yellow; every other 1 plays
    assert t["p1.card1.color"] == "yes" and t["p1.card1.rank"] == "no"  # Y2: yellow
    assert t["p1.card1.playable"] == "no"  # yellow, rank unknown


def test_all_probes_include_introspection_and_second_order() -> None:
    b = make_bundle(probes="all")
    game = b.game
    s = game.state_from_deck(deck_with(game, ["R1 R2 R3 R4 R5", "Y1 G1 Y2 G2 B3"]))
    s = act(game, s, reveal_rank(game, 1))
    s = act(game, s, reveal_rank(game, 2, 1))  # Bob reveals Alice's 2 (card 1)
    probes = b.probes(s, 0)
    orders = sorted({p.order for p in probes})
    assert orders == [0, 1, 2] and len(probes) == 15 + 10 + 5
    t = truths(probes)
    assert t["me.card1.rank"] == "yes" and t["me.card0.rank"] == "no"
    assert t["p1.knows_me.card1.rank"] == "yes"
    assert make_bundle(probes="none").probes(s, 0) == []


class Oracle(BaseAgent):
    """The known group that models the partner exactly: answers from the game's own truths, read
    through the env this test double is handed (no agent gets that); plays the first legal move."""

    name = "oracle"
    env = None

    def act(self, turn: Turn) -> AgentAction:
        return AgentAction(int(turn.legal_actions[0]))

    def answer_probes(self, turn: Turn, questions) -> dict[str, str]:
        assert all(isinstance(q, Question) for q in questions)
        truth = {p.question: p.answer for p in self.env.probes(turn.agent)}
        return {q.id: truth[q.question] for q in questions}


def test_the_runner_scores_probe_answers() -> None:
    spec = game_spec("Hanabi")
    oracle = Oracle()
    driver = EpisodeDriver(spec, [oracle, make_agent("simple", spec)], 3)
    oracle.env = driver.env
    ep = driver.run()
    assert ep.metrics["probe_acc/all"] == 100.0
    assert ep.metrics["probe_acc/partner_rank"] == 100.0
    asked = [p for s in ep.steps for p in s.get("probes", ())]
    assert asked and {p["subject"]["target"] for p in asked} == {"Bob"}
    env = raw_env()
    env.reset(seed=0)
    assert [p.kind for p in env.probes("player_0")][:3] == [
        "partner_color",
        "partner_rank",
        "partner_playable",
    ]
    assert env.probes("player_1") == []
