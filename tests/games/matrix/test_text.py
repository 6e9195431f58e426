"""Text layer: the paper's prompt wording (App. C), all four name sets, and the action parser."""

from __future__ import annotations

import numpy as np
import pytest

from tom_envs.games.matrix.env import make_bundle, raw_env
from tom_envs.games.matrix.rules import MatrixState

from .test_rules import PAYOFFS  # the paper's Tables 5-7, written out by hand once

#: The paper's name sets (App. C), per game, written out by hand.
NAMES = {
    "letters": {"rps": ("J", "F", "B"), "ibs": ("J", "F"), "ipd": ("J", "F")},
    "repeated": {
        "rps": ("J" * 21, "F" * 21, "B" * 21),
        "ibs": ("J" * 21, "F" * 21),
        "ipd": ("J" * 21, "F" * 21),
    },
    "canonical": {
        "rps": ("Rock", "Paper", "Scissors"),
        "ibs": ("Fight", "Ballet"),
        "ipd": ("Cooperate", "Defect"),
    },
    "nonsense": {
        "rps": ("Pasta", "Rice", "Bread"),
        "ibs": ("Pasta", "Rice"),
        "ipd": ("Pasta", "Rice"),
    },
}
GAMES = ("rps", "ibs", "ipd")
NAME_SETS = tuple(NAMES)
COMBOS = [(g, ns) for g in GAMES for ns in NAME_SETS]


def views_after(g: str, joint: list[tuple[int, int]], **kw: object):
    bundle = make_bundle(game=g, **kw)
    game = bundle.game
    s = game.initial_state(np.random.default_rng(0))
    for a, b in joint:
        s = game.step(s, {0: a, 1: b}, None).state
    return bundle, s, game.observe(s, 0), game.observe(s, 1)


# ------------------------------------------------------------------------- exact strings
IBS_RULES_P0 = """\
You are playing a game repeatedly with another player. In this game, you can choose between Option J and Option F. You will play 5 rounds in total with the same player. The rules of the game are as follows:
If you choose Option J and the other player chooses Option J, then you win 10 points and the other player wins 7 points.
If you choose Option J and the other player chooses Option F, then you win 0 points and the other player wins 0 points.
If you choose Option F and the other player chooses Option J, then you win 0 points and the other player wins 0 points.
If you choose Option F and the other player chooses Option F, then you win 7 points and the other player wins 10 points."""

IBS_RULES_P1 = """\
You are playing a game repeatedly with another player. In this game, you can choose between Option J and Option F. You will play 5 rounds in total with the same player. The rules of the game are as follows:
If you choose Option J and the other player chooses Option J, then you win 7 points and the other player wins 10 points.
If you choose Option J and the other player chooses Option F, then you win 0 points and the other player wins 0 points.
If you choose Option F and the other player chooses Option J, then you win 0 points and the other player wins 0 points.
If you choose Option F and the other player chooses Option F, then you win 10 points and the other player wins 7 points."""

IBS_OBS_P0 = """\
In round 1, you chose Option J and the other player chose Option F. Thus, you won 0 points and the other player won 0 points.
In round 2, you chose Option F and the other player chose Option F. Thus, you won 7 points and the other player won 10 points.
In round 3, you chose Option J and the other player chose Option J. Thus, you won 10 points and the other player won 7 points.
Total so far: you 17 points, the other player 17 points.
You are currently playing round 4.
Q: Which Option do you choose, Option J or Option F?"""

IBS_OBS_P1 = """\
In round 1, you chose Option F and the other player chose Option J. Thus, you won 0 points and the other player won 0 points.
In round 2, you chose Option F and the other player chose Option F. Thus, you won 10 points and the other player won 7 points.
In round 3, you chose Option J and the other player chose Option J. Thus, you won 7 points and the other player won 10 points.
Total so far: you 17 points, the other player 17 points.
You are currently playing round 4.
Q: Which Option do you choose, Option J or Option F?"""


def test_ibs_letters_exact_text_both_seats() -> None:
    bundle, _, v0, v1 = views_after("ibs", [(0, 1), (1, 1), (0, 0)], horizon=5)
    text = bundle.text
    assert text.rules_prompt(v0) == IBS_RULES_P0
    assert text.rules_prompt(v1) == IBS_RULES_P1
    assert text.observation_text(v0) == IBS_OBS_P0
    assert text.observation_text(v1) == IBS_OBS_P1
    obs = text.text_observation(v0)
    assert obs.legal_actions == {0: "Option J", 1: "Option F"}
    assert obs.prompt() == (
        IBS_RULES_P0 + "\n\n" + IBS_OBS_P0 + "\n\nLegal actions:\n- Option J\n- Option F"
    )


def test_paper_sentence_is_in_the_prompt() -> None:
    bundle, _, v0, _ = views_after("ibs", [])
    assert (
        "If you choose Option J and the other player chooses Option F, then you win 0 points and "
        "the other player wins 0 points." in bundle.text.rules_prompt(v0)
    )
    assert "You will play 100 rounds in total" in bundle.text.rules_prompt(v0)


def test_player_1_rules_have_its_own_payoffs() -> None:
    bundle, _, v0, v1 = views_after("ibs", [])
    both_j = "If you choose Option J and the other player chooses Option J, then "
    assert both_j + "you win 10 points and the other player wins 7 points." in bundle.text.rules_prompt(v0)
    assert both_j + "you win 7 points and the other player wins 10 points." in bundle.text.rules_prompt(v1)
    # IPD: the sucker's payoff belongs to the cooperator, whichever seat it is
    bundle, _, v0, v1 = views_after("ipd", [])
    j_f = "If you choose Option J and the other player chooses Option F, then "
    for v in (v0, v1):
        assert j_f + "you win 0 points and the other player wins 10 points." in bundle.text.rules_prompt(v)


RPS_RULES = """\
You are playing a game repeatedly with another player. In this game, you can choose between Option J, Option F and Option B. You will play 3 rounds in total with the same player. The rules of the game are as follows:
If you choose Option J and the other player chooses Option J, then you receive a score of 0 and the other player receives a score of 0.
If you choose Option J and the other player chooses Option F, then you receive a score of -1 and the other player receives a score of +1.
If you choose Option J and the other player chooses Option B, then you receive a score of +1 and the other player receives a score of -1.
If you choose Option F and the other player chooses Option J, then you receive a score of +1 and the other player receives a score of -1.
If you choose Option F and the other player chooses Option F, then you receive a score of 0 and the other player receives a score of 0.
If you choose Option F and the other player chooses Option B, then you receive a score of -1 and the other player receives a score of +1.
If you choose Option B and the other player chooses Option J, then you receive a score of -1 and the other player receives a score of +1.
If you choose Option B and the other player chooses Option F, then you receive a score of +1 and the other player receives a score of -1.
If you choose Option B and the other player chooses Option B, then you receive a score of 0 and the other player receives a score of 0."""

RPS_OBS_END_WINDOW1 = """\
(Rounds 1 to 2 are not shown.)
In round 3, you chose Option B and the other player chose Option F. Thus, you received a score of +1 and the other player received a score of -1.
Total so far: you 0, the other player 0.
The game is over after 3 rounds."""


def test_rps_score_wording_window_and_game_over() -> None:
    bundle, s, v0, v1 = views_after("rps", [(0, 1), (2, 2), (2, 1)], horizon=3, window=1)
    assert bundle.text.rules_prompt(v0) == RPS_RULES
    assert bundle.text.rules_prompt(v1) == RPS_RULES  # symmetric game, same prompt
    assert bundle.text.observation_text(v0) == RPS_OBS_END_WINDOW1
    assert "win" not in bundle.text.rules_prompt(v0)
    assert bundle.text.legal_actions_text(v0) == {}
    assert bundle.text.render_state(s) == (
        "Rock, Paper, Scissors, round 3/3\n"
        "  round 1: player_0 J (-1), player_1 F (1)\n"
        "  round 2: player_0 B (0), player_1 B (0)\n"
        "  round 3: player_0 B (1), player_1 F (-1)\n"
        "  scores: player_0 0, player_1 0"
    )


def test_first_round_text() -> None:
    bundle, _, v0, _ = views_after("ipd", [], horizon=4)
    assert bundle.text.observation_text(v0) == (
        "Total so far: you 0 points, the other player 0 points.\n"
        "You are currently playing round 1.\n"
        "Q: Which Option do you choose, Option J or Option F?"
    )


def test_rps_question_lists_three_options() -> None:
    bundle, _, v0, _ = views_after("rps", [], horizon=4)
    assert bundle.text.observation_text(v0).endswith(
        "Q: Which Option do you choose, Option J, Option F or Option B?"
    )


# ------------------------------------------------------------------------- name sets
def _outcome(g: str, mine: int, theirs: int) -> str:
    if g == "rps":
        def sgn(x: int) -> str:
            return f"+{x}" if x > 0 else str(x)
        return f"you receive a score of {sgn(mine)} and the other player receives a score of {sgn(theirs)}"
    return f"you win {mine} points and the other player wins {theirs} points"


@pytest.mark.parametrize(("g", "ns"), COMBOS)
def test_every_name_set_in_every_game(g: str, ns: str) -> None:
    names = NAMES[ns][g]
    bundle, _, v0, v1 = views_after(g, [(len(names) - 1, 0)], horizon=7, action_names=ns)
    opts = [f"Option {x}" for x in names]
    assert bundle.text.names == names
    for v, seat in ((v0, 0), (v1, 1)):
        assert bundle.text.legal_actions_text(v) == dict(enumerate(opts))
        assert [bundle.text.action_text(v, a) for a in range(len(names))] == opts
        rules = bundle.text.rules_prompt(v).splitlines()
        assert len(rules) == 1 + len(names) ** 2
        choice = (", ".join(opts[:-1]) + f" and {opts[-1]}") if len(opts) > 2 else " and ".join(opts)
        assert f"you can choose between {choice}. You will play 7 rounds" in rules[0]
        expected = []
        for a in range(len(names)):
            for b in range(len(names)):
                joint = (a, b) if seat == 0 else (b, a)
                mine, theirs = PAYOFFS[g][joint][seat], PAYOFFS[g][joint][1 - seat]
                expected.append(
                    f"If you choose {opts[a]} and the other player chooses {opts[b]}, then "
                    f"{_outcome(g, mine, theirs)}."
                )
        assert rules[1:] == expected
        obs = bundle.text.observation_text(v)
        me, other = v.history[0]
        assert f"In round 1, you chose {opts[me]} and the other player chose {opts[other]}." in obs
        assert obs.endswith(f"Q: Which Option do you choose, {', '.join(opts[:-1])} or {opts[-1]}?")


@pytest.mark.parametrize(("g", "ns"), COMBOS)
def test_parse_roundtrip_every_action_every_name_set(g: str, ns: str) -> None:
    names = NAMES[ns][g]
    bundle, _, v0, v1 = views_after(g, [(0, 0)], horizon=3, action_names=ns)
    for v in (v0, v1):
        for a in v.legal_actions:
            text = bundle.text.action_text(v, a)
            for form in (
                text,
                text.lower(),
                text.upper(),
                f"  {text}.  ",
                names[a],
                names[a].lower(),
                f"I choose {text}.",
                f"I choose {names[a]}",
                f"<action>{names[a]}</action>",
                f"<action>{text}</action>",
                f"Let me think.\nAnswer: {names[a]}",
                str(a + 1),
            ):
                res = bundle.text.parse_action(v, form)
                assert res.action == a, (form, res)
                assert res.valid
                assert res.feedback == f"understood: {text}"


def test_accepted_forms_letters() -> None:
    bundle, _, v0, _ = views_after("ibs", [(0, 1)])
    expected = {
        "Option J": 0,
        "j": 0,
        "J": 0,
        "I choose Option J.": 0,
        "<action>F</action>": 1,
        "Answer: F": 1,
        "2": 1,
        "1": 0,
        "option f": 1,
        "**Option F**": 1,
        "I thought about J, but my final answer: F": 1,
        "<action>J</action> (not F)": 0,
    }
    for text, action in expected.items():
        assert bundle.text.parse_action(v0, text).action == action, text


@pytest.mark.parametrize(
    "text",
    ["J or F", "Option J or Option F", "J, F", "I choose Option J and Option F", "Rock", "banana",
     "", "   ", "3", "0", "JF", "Option", "Option Z", "<action></action>"],
)
def test_ambiguous_and_garbage_give_none_with_feedback(text: str) -> None:
    bundle, _, v0, _ = views_after("ibs", [])
    res = bundle.text.parse_action(v0, text)
    assert res.action is None and not res.valid
    assert res.feedback
    if text.strip() not in ("", "<action></action>"):
        assert "ambiguous" in res.feedback or "Option J" in res.feedback or "1-2" in res.feedback


@pytest.mark.parametrize("text", ["J or F", "Option J or Option F", "I like J and F"])
def test_ambiguous_answers_are_called_ambiguous(text: str) -> None:
    bundle, _, v0, _ = views_after("ibs", [])
    res = bundle.text.parse_action(v0, text)
    assert res.action is None
    assert "ambiguous" in res.feedback, res.feedback


def test_garbage_feedback_names_the_legal_options() -> None:
    bundle, _, v0, _ = views_after("rps", [], action_names="canonical")
    res = bundle.text.parse_action(v0, "banana")
    assert res.action is None
    for opt in ("Option Rock", "Option Paper", "Option Scissors"):
        assert opt in res.feedback
    assert bundle.text.parse_action(v0, "4").feedback == (
        "option number 4 does not exist: a bare number is the N-th listed legal action, choose 1-3"
    )


def test_non_strings_never_raise() -> None:
    bundle, _, v0, _ = views_after("rps", [])
    for bad in (None, 1, 1.5, b"J", ["J"]):
        res = bundle.text.parse_action(v0, bad)  # type: ignore[arg-type]
        assert res.action is None and res.feedback


def test_repeated_names_need_the_whole_name() -> None:
    bundle, _, v0, _ = views_after("ibs", [], action_names="repeated")
    assert bundle.text.parse_action(v0, "J").action is None
    assert bundle.text.parse_action(v0, "Option J").action is None
    assert bundle.text.parse_action(v0, "J" * 20).action is None
    assert bundle.text.parse_action(v0, "F" * 21).action == 1


def test_nothing_parses_once_the_game_is_over() -> None:
    bundle, _, v0, _ = views_after("ipd", [(0, 0)], horizon=1)
    res = bundle.text.parse_action(v0, "Option J")
    assert res.action is None and res.feedback


def test_env_text_layer() -> None:
    env = raw_env(game="ibs", horizon=5)
    env.reset(seed=0)
    for a, b in [(0, 1), (1, 1), (0, 0)]:
        env.step(a)
        env.step(b)
    assert env.text_observation("player_0").observation == IBS_OBS_P0
    assert env.text_observation("player_1").observation == IBS_OBS_P1
    assert env.text_observation("player_1").rules == IBS_RULES_P1
    assert env.parse_action("player_0", "Option F").action == 1
    # not player_1's turn yet: refused with feedback, nothing applied
    res = env.parse_action("player_1", "Option F")
    assert res.action is None and "turn" in res.feedback


def test_state_type_in_render() -> None:
    bundle = make_bundle(game="ipd", horizon=12)
    s = MatrixState(round=12, history=tuple([(0, 1)] * 12), scores=(0.0, 120.0))
    lines = bundle.text.render_state(s).splitlines()
    assert lines[0] == "Prisoner's Dilemma, round 12/12"
    assert lines[1] == "  round 3: player_0 J (0), player_1 F (10)"  # the last 10 rounds only
    assert len(lines) == 12
