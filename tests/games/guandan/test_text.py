"""The text layer: the paper's rule template in English and Chinese, action texts, the parser,
and the action recommender as an LLM tool."""

from __future__ import annotations

import numpy as np
import pytest

from tom_envs.games.guandan.combos import PASS, ComboType
from tom_envs.games.guandan.env import make_bundle
from tom_envs.games.guandan.recommender import recommend, recommend_text, score_actions
from tom_envs.games.guandan.text import describe_shape, parse_cards

from .helpers import action, rank, table_state

T = ComboType


def _views(language: str, seed: int = 0, moves: int = 60):
    bundle = make_bundle(language=language)
    game = bundle.game
    rng = np.random.default_rng(seed)
    s = game.initial_state(np.random.default_rng(seed))
    out = []
    for _ in range(moves):
        p = s.to_act
        out.append(game.observe(s, p))
        legal = game.legal_actions(s, p)
        s = game.step(s, {p: legal[rng.integers(len(legal))]}, rng).state
        if game.is_terminal(s):
            break
    return bundle, out


@pytest.mark.parametrize(
    "language,headers",
    [
        (
            "en",
            (
                "General rules:",
                "Card types that cannot beat other types",
                "Card types that can beat other types",
                "Single win/loss rule",
                "Whole win/loss rule",
            ),
        ),
        (
            "zh",
            (
                "总体规则",
                "不能压制其他牌型的牌型",
                "可以压制其他牌型的牌型",
                "单局胜负规则",
                "整体胜负规则",
            ),
        ),
    ],
)
def test_rules_prompt_follows_the_paper_template(language, headers) -> None:
    bundle, views = _views(language, moves=1)
    rules = bundle.text.rules_prompt(views[0])
    positions = [rules.index(h) for h in headers]
    assert positions == sorted(positions), "sections in the template's order"
    assert "逢人配" in rules if language == "zh" else "wild card" in rules


@pytest.mark.parametrize("language", ["en", "zh"])
def test_every_action_text_parses_back(language) -> None:
    bundle, views = _views(language)
    text = bundle.text
    for v in views:
        for a, said in text.legal_actions_text(v).items():
            assert text.parse_action(v, said).action == a, said
        obs = text.observation_text(v)
        assert ("你的手牌" if language == "zh" else "Your hand") in obs


def test_observation_text_content() -> None:
    game, s = table_state(["S3 S9 H2", "S4 S5", "S6 S7", "S8 S10"], level="2")
    from tom_envs.games.guandan.text import GuandanText

    text = GuandanText(game.config)
    v = game.observe(s, 0)
    obs = text.observation_text(v)
    assert "♥2*" in obs and "You lead" in obs
    assert "Cards left: you 3, next player (opponent, player 1) 2" in obs


def test_parser_accepts_numbers_pass_words_and_cards() -> None:
    game, s = table_state(["S3 S9 C9 H2", "S4 S5", "S6 S7", "S8 S10"], level="2")
    bundle = make_bundle()
    text = bundle.text
    v = game.observe(s, 0)
    options = text.legal_actions_text(v)
    first = next(iter(options))
    assert text.parse_action(v, "1").action == first
    assert text.parse_action(v, "<action>2</action>").action == list(options)[1]
    pair9 = action(T.PAIR, rank("9"))
    assert text.parse_action(v, "I play S9 C9").action == pair9
    assert text.parse_action(v, "黑桃9 梅花9").action == pair9
    assert text.parse_action(v, "♣9 ♠9").action == pair9
    # one card: a single; a 9 and the wild: a pair of 9s (the wild stands for the other 9)
    assert text.parse_action(v, "S9 H2").action == pair9
    bad = text.parse_action(v, "S3 S9")
    assert bad.action is None and "not a legal action" in bad.feedback
    assert text.parse_action(v, "pass").action is None  # cannot pass when leading
    # following: pass words in both languages
    s2 = game.step(s, {0: action(T.SINGLE, rank("3"))}, np.random.default_rng(0)).state
    v2 = game.observe(s2, 1)
    for word in ("pass", "PASS", "过", "不出"):
        assert text.parse_action(v2, word).action == PASS
    assert text.parse_action(v2, "???").action is None


def test_parse_cards_names() -> None:
    assert parse_cards("♠10 S10 ST 黑桃10") == [4 * 8 + 1] * 4
    assert parse_cards("SmallJoker small joker SB 小王") == [52] * 4
    assert parse_cards("BigJoker HR 大王") == [53] * 3
    assert parse_cards("SJ") == [4 * rank("J") + 1], "SJ is the jack of spades"
    assert parse_cards("HAVE A DATA CANDY") == []


def test_shape_descriptions() -> None:
    from tom_envs.games.guandan.combos import shape_of

    assert describe_shape(shape_of(action(T.STRAIGHT, 6)), 0) == "Straight 3-7"
    assert describe_shape(shape_of(action(T.STRAIGHT_FLUSH, 13, 1)), 0, "zh") == "同花顺 黑桃10-A"
    assert describe_shape(shape_of(action(T.BOMB, rank("9"), size=6)), 0) == "Bomb 6×9"
    assert describe_shape(shape_of(action(T.PAIR, 15)), rank("7")) == "Pair 7 (wild cards)"


@pytest.mark.parametrize("language", ["en", "zh"])
def test_recommender_top_k(language) -> None:
    bundle, views = _views(language, seed=4)
    for v in views:
        recs = recommend(v, k=5, language=language)
        assert 1 <= len(recs) <= min(5, len(v.legal_actions))
        assert [r.score for r in recs] == sorted((r.score for r in recs), reverse=True)
        scores = score_actions(v)
        assert set(scores) == set(v.legal_actions)
        best = max(scores.values())
        assert recs[0].score == round(best, 4)
        texts = bundle.text.legal_actions_text(v)
        assert all(r.text == texts[r.action] for r in recs)
    assert recommend_text(views[0], 3, language).count("\n") == min(3, len(views[0].legal_actions))


def test_env_action_recommender_hook_scores_every_legal_action() -> None:
    from tom_envs.games.guandan.env import action_recommender

    _, views = _views("en", seed=6, moves=10)
    for v in views:
        scores = action_recommender(v)
        assert set(scores) == set(v.legal_actions)
        assert all(isinstance(x, float) for x in scores.values())


@pytest.mark.parametrize("language", ["en", "zh"])
def test_cards_that_fit_several_combinations_are_refused(language) -> None:
    """At level 2 the wild ♥2 completes ♠3-♠6 as the straight flush 2-6 or 3-7: the parser
    names both and plays neither; cards that fit one combination are played."""
    game, s = table_state(["S3 S4 S5 S6 H2 D9", "S7 S8", "S9 S10", "SJ SQ"], level="2")
    text = make_bundle(language=language).text
    view = game.observe(s, 0)
    options = text.legal_actions_text(view)
    refused = text.parse_action(view, "Action: S3 S4 S5 S6 H2")
    assert refused.action is None
    english = make_bundle().text.legal_actions_text(view)
    flushes = [a for a, t in english.items() if t.endswith("♠3 ♠4 ♠5 ♠6 ♥2*")]
    assert len(flushes) == 2 and all(repr(options[a]) in refused.feedback for a in flushes)
    pair = text.parse_action(view, "D9 H2")
    assert pair.action == action(T.PAIR, rank("9"))
