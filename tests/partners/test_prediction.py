"""The open next-action probe (:mod:`tom_envs.partners.prediction`): asked after the action with
the truth in the future, linked to the partner's next decision, scored beside shortcut predictors
whose values are known on hand-made sequences."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from tom_envs.agents import make_agent
from tom_envs.core.agents import RandomAgent
from tom_envs.driver import EpisodeDriver
from tom_envs.games.matrix.bots import PartnerModel as MatrixPartnerModel
from tom_envs.partners.prediction import (
    NextActionQuestion,
    PredictorAgent,
    literal_report,
    option_order,
    prediction_items,
    read_answer,
    score_items,
    shortcut_items,
)
from tom_envs.registration import game_spec


def _episode(seed: int, target_actions: list[int], asker_actions: list[int] | None = None,
             predicted: list[int | None] | None = None, policy: list[dict] | None = None):  # fmt: skip
    """Alternating asker (player_0, asking each time) and target (player_1) decisions."""
    steps = []
    for k, a in enumerate(target_actions):
        mine = (asker_actions or [0] * len(target_actions))[k]
        pred = None if predicted is None else predicted[k]
        steps.append({"index": len(steps), "agent": "player_0", "action": mine,
                      "predict": [{"target": "player_1", "source": "probe", "action": pred}]})  # fmt: skip
        step = {"index": len(steps), "agent": "player_1", "action": a}
        if policy is not None:
            step["policy"] = {str(x): p for x, p in policy[k].items()}
        steps.append(step)
    return SimpleNamespace(seed=seed, steps=steps, agents={"player_0": "x", "player_1": "y"})


def test_truth_is_the_targets_next_decision_and_unresolved_is_counted() -> None:
    steps = [
        {"index": 0, "agent": "player_0", "action": 1,
         "predict": [{"target": "player_1", "action": 2}, {"target": "player_2", "action": 0}]},
        {"index": 1, "agent": "player_2", "action": 0},
        {"index": 2, "agent": "player_1", "action": 2, "policy": {"2": 0.5, "1": 0.5}},
        {"index": 3, "agent": "player_0", "action": 0, "prediction": {"partner_action": {"player_1": 1}},
         "predict": [{"target": "player_1", "action": None}]},
    ]  # fmt: skip
    ep = SimpleNamespace(seed=5, steps=steps, agents={})
    items = prediction_items(ep)
    assert [(i.index, i.target, i.source, i.predicted, i.truth) for i in items] == [
        (0, "player_1", "probe", 2, 2),
        (0, "player_2", "probe", 0, 0),
        (3, "player_1", "probe", None, None),  # player_1 never acts again: unresolved
        (3, "player_1", "volunteered", 1, None),
    ]
    assert items[0].policy == {2: 0.5, 1: 0.5} and items[1].policy is None
    s = score_items(items)
    assert s["n"] == 2 and s["unresolved"] == 2 and s["acc"] == 1.0
    assert s["n_policy"] == 1 and s["p_pred"] == 0.5 and s["ceiling"] == 0.5


def test_volunteered_two_player_prediction_is_about_the_other_seat() -> None:
    steps = [
        {"index": 0, "agent": "player_0", "action": 1, "prediction": {"partner_action": 1}},
        {"index": 1, "agent": "player_1", "action": 0},
    ]
    items = prediction_items(SimpleNamespace(seed=0, steps=steps, agents={}))
    assert [(i.target, i.source, i.predicted, i.truth) for i in items] == [
        ("player_1", "volunteered", 1, 0)
    ]


def test_shortcuts_on_a_hand_made_sequence() -> None:
    target = [0, 1, 1, 2, 1, 1]
    items = shortcut_items(prediction_items(_episode(0, target)))
    assert [i.shortcuts["repeat_last"] for i in items] == [None, 0, 1, 1, 2, 1]
    assert [i.shortcuts["most_frequent"] for i in items] == [None, 0, 0, 1, 1, 1]
    assert score_items(items, "repeat_last")["acc"] == pytest.approx(2 / 6)
    assert score_items(items, "most_frequent")["acc"] == pytest.approx(2 / 6)
    assert score_items(items, "repeat_last")["unanswered"] == 1
    # one seed only: the context majority has no other seed to learn from
    assert all(i.shortcuts["majority_context"] is None for i in items)


def test_context_majority_is_fitted_on_other_seeds_only() -> None:
    # seed 1: the target answers my 0 with 1, my 1 with 0 ... seed 2 always plays 2
    a = _episode(1, [1, 0, 1, 0], asker_actions=[0, 1, 0, 1])
    b = _episode(2, [2, 2, 2, 2], asker_actions=[0, 1, 0, 1])
    items = shortcut_items(prediction_items(a) + prediction_items(b))
    on_a = [i.shortcuts["majority_context"] for i in items if i.seed == 1]
    on_b = [i.shortcuts["majority_context"] for i in items if i.seed == 2]
    assert on_a == [2, 2, 2, 2]  # contexts unseen in seed 2 fall back to its overall majority
    # seed 2's first context (None, 0) appears in seed 1 with next action 1
    assert on_b[0] == 1


def test_wilson_interval_and_policy_scores() -> None:
    pol = [{0: 0.8, 1: 0.2}] * 4
    ep = _episode(0, [0, 0, 1, 0], predicted=[0, 1, 1, None], policy=pol)
    s = score_items(prediction_items(ep))
    assert s["acc"] == 0.5 and s["acc_low"] < 0.5 < s["acc_high"]
    assert s["p_pred"] == pytest.approx((0.8 + 0.2 + 0.2 + 0.0) / 4)
    assert s["ceiling"] == pytest.approx(0.8) and s["unanswered"] == 1


def test_answers_are_read_by_index_text_or_number() -> None:
    opts = ("Option K", "Option J")
    assert read_answer(1, opts) == 1 and read_answer(5, opts) is None
    assert read_answer("option j", opts) == 1 and read_answer("2", opts) == 1
    assert read_answer("maybe", opts) is None and read_answer(True, opts) is None
    order = option_order(3, 7, 1, 5)
    assert sorted(order) == list(range(5)) and order == option_order(3, 7, 1, 5)


class Asked(PredictorAgent):
    """A predictor that logs when it acts and when it is asked."""

    def __init__(self, *args, log, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.log = log

    def act(self, turn):
        self.log.append(("act", turn.decision))
        return super().act(turn)

    def predict_partner(self, turn, question):
        assert isinstance(question, NextActionQuestion)
        assert set(vars(question)) == {"id", "target", "question", "options", "kind"}
        self.log.append(("asked", turn.decision))
        return super().predict_partner(turn, question)


class LoggedPartner(RandomAgent):
    def __init__(self, log) -> None:
        super().__init__()
        self.log = log

    def act(self, turn):
        self.log.append(("partner", turn.decision))
        return super().act(turn)


def test_asked_after_the_action_before_the_partner_moves() -> None:
    log: list = []
    spec = game_spec("PrisonersDilemma")
    me = Asked(RandomAgent(), MatrixPartnerModel("random"), log=log)
    EpisodeDriver(spec, [me, LoggedPartner(log)], 0, {"horizon": 3}, predict="all").run()
    assert log == [("act", 0), ("asked", 0), ("partner", 0), ("act", 1), ("asked", 1),
                   ("partner", 1), ("act", 2), ("asked", 2), ("partner", 2)]  # fmt: skip


def _run(partner: str, model: str, seeds=range(4), predict: str = "all"):
    spec = game_spec("PrisonersDilemma")
    out = []
    for seed in seeds:
        me = PredictorAgent(make_agent("random", spec), MatrixPartnerModel(model))
        out.append(EpisodeDriver(spec, [me, make_agent(partner, spec)], seed, {"horizon": 20},
                                 predict=predict).run())  # fmt: skip
    return out


def test_end_to_end_known_groups_on_alternating() -> None:
    """vs `alternating`: the exact model and the oracle score 100%, repeat-last 0%."""
    report = literal_report(_run("alternating", "alternating"))
    assert report["agent"]["acc"] == 1.0 and report["agent"]["n"] == 80
    assert report["oracle"]["acc"] == 1.0 and report["agent"]["ceiling"] == 1.0
    assert report["repeat_last"]["acc"] == 0.0
    assert 0.3 < report["most_frequent"]["acc"] < 0.7
    wrong = literal_report(_run("alternating", "always_0"))
    assert wrong["agent"]["acc"] == 0.5 and wrong["agent"]["p_pred"] == 0.5


def test_prediction_on_or_off_leaves_play_unchanged() -> None:
    on = _run("random", "random")
    off = _run("random", "random", predict="off")
    assert [[s["action"] for s in e.steps] for e in on] == [[s["action"] for s in e.steps] for e in off]
    assert all("predict" not in s and "policy" not in s for e in off for s in e.steps)
    assert all(s["policy"] == {"0": 0.5, "1": 0.5} for s in on[0].steps if s["agent"] == "player_1")


def test_switching_partner_forwards_the_playing_members_policy() -> None:
    eps = _run("switch:a=always_0:b=always_1:at=5:key=0", "always_0", seeds=[0])
    partner = [s for s in eps[0].steps if s["agent"] == "player_1"]
    assert [s["policy"] for s in partner[4:6]] == [{"0": 1.0}, {"1": 1.0}]
    assert literal_report(eps)["agent"]["acc"] == pytest.approx(5 / 20)


class FirstAction:
    """A model that always predicts action 0."""

    def reset(self, info) -> None:
        pass

    def observe(self, turn) -> None:
        pass

    def predict(self, turn, target):
        return 0


def test_bots_are_not_asked_and_big_action_spaces_without_classes_are_skipped(
    monkeypatch,
) -> None:
    spec = game_spec("Overcooked")
    ep = EpisodeDriver(spec, [make_agent("greedy", spec), make_agent("greedy", spec)], 0,
                       {"horizon": 10}, predict="all").run()  # fmt: skip
    assert not any("predict" in s for s in ep.steps)
    me = PredictorAgent(make_agent("greedy", spec), FirstAction())
    ep = EpisodeDriver(spec, [me, make_agent("greedy", spec)], 0, {"horizon": 10},
                       predict="all").run()  # fmt: skip
    asked = [s for s in ep.steps if "predict" in s]
    assert len(asked) == 10 and all(s["agent"] == "player_0" for s in asked)
    assert all(sorted(s["predict"][0]["order"]) == list(range(6)) for s in asked)
    # Overcooked declares no action classes: with its 6 actions over the limit, it is not asked
    from tom_envs.partners import prediction

    monkeypatch.setattr(prediction, "MAX_OPTIONS", 4)
    me = PredictorAgent(make_agent("greedy", spec), FirstAction())
    ep = EpisodeDriver(spec, [me, make_agent("greedy", spec)], 0, {"horizon": 10},
                       predict="all").run()  # fmt: skip
    assert not any("predict" in s for s in ep.steps)
    with pytest.raises(ValueError, match="predict must be"):
        EpisodeDriver(spec, [None] * 2, 0, predict="sometimes")


class SaysPlay(RandomAgent):
    """Answers every question with its first option's text, ``"play a card"`` when offered."""

    def predict_partner(self, turn, question):
        return "play a card" if "play a card" in question.options else question.options[0]


@pytest.mark.parametrize("game", ["Hanabi", "Guandan", "CoBlock"])
def test_large_games_are_asked_about_action_classes(game: str) -> None:
    spec = game_spec(game)
    mod = spec.load()
    classes = mod.action_classes(**spec.kwargs)
    n = len(mod.raw_env(**spec.kwargs).possible_agents)
    bot = {"Hanabi": "simple", "Guandan": "random", "CoBlock": "cooperative"}[game]
    ep = EpisodeDriver(spec, [SaysPlay()] + [make_agent(bot, spec) for _ in range(n - 1)], 0,
                       predict="all").run()  # fmt: skip
    asked = [e for s in ep.steps for e in s.get("predict", ())]
    assert asked and all(e["classes"] for e in asked)
    assert all(s["action_class"] == classes(s["action"]) for s in ep.steps)
    items = prediction_items(ep)
    for it in items:
        if it.truth is not None:
            nxt = next(s for s in ep.steps[it.index + 1:] if s["agent"] == it.target)
            assert it.kind == "class" and it.truth == classes(nxt["action"])
    report = literal_report([ep])
    assert 0.0 <= report["agent"]["acc"] <= 1.0 and report["agent"]["n"] > 0


def test_hanabi_class_answers_are_scored_in_class_space() -> None:
    spec = game_spec("Hanabi")
    ep = EpisodeDriver(spec, [SaysPlay(), make_agent("simple", spec)], 1, predict="all").run()
    items = [it for it in prediction_items(ep) if it.truth is not None]
    played = sum(it.truth == 0 for it in items)
    assert all(it.predicted == 0 for it in items)  # "play a card" is class 0 in any order
    assert literal_report([ep])["agent"]["acc"] == pytest.approx(played / len(items))


def test_play_episode_records_prediction_in_the_configuration() -> None:
    from tom_envs.runner import play_episode

    spec = game_spec("PrisonersDilemma")
    agents = [PredictorAgent(RandomAgent(), MatrixPartnerModel("tit_for_tat")),
              make_agent("tit_for_tat", spec)]  # fmt: skip
    on = play_episode(spec, agents, 0, {"horizon": 5}, predict="all")
    off = play_episode(spec, agents, 0, {"horizon": 5})
    assert on.config["record"]["predict"] is True and "predict" not in off.config["record"]
    assert on.config_hash != off.config_hash
    assert literal_report([on])["agent"]["acc"] == 1.0


@pytest.mark.parametrize("game", ["RockPaperScissors", "BombDefusal", "CollabCapture", "Hanabi",
                                  "Guandan", "CoBlock", "Overcooked"])  # fmt: skip
def test_every_game_plays_the_same_with_prediction_on(game: str) -> None:
    """Prediction on records (policies, action classes, questions to agents that answer) but
    changes no move, message or return of bots that do not answer."""
    spec = game_spec(game)
    mod = spec.load()
    n = len(mod.raw_env(**spec.kwargs).possible_agents)
    bot = {"RockPaperScissors": "random", "BombDefusal": "heuristic",
           "CoBlock": "cooperative", "Hanabi": "convention"}.get(game, mod.bot_table(
               **spec.kwargs).names()[0])  # fmt: skip
    kwargs = {"horizon": 40} if game == "Overcooked" else None
    runs = [EpisodeDriver(spec, [make_agent(bot, spec) for _ in range(n)], 2, kwargs,
                          predict=p).run() for p in ("off", "all")]  # fmt: skip
    off, on = ([(s["agent"], s["action"], s.get("message")) for s in ep.steps] for ep in runs)
    assert off == on and runs[0].returns == runs[1].returns


def test_scores_are_the_same_from_a_written_trajectory(tmp_path) -> None:
    from tom_envs.records import Episode

    eps = _run("switch:a=tit_for_tat:b=alternating:at=8:key=0", "tit_for_tat", seeds=[0, 1])
    back = [Episode.read(ep.write(tmp_path / f"{ep.seed}.jsonl")) for ep in eps]
    assert literal_report(back) == literal_report(eps)
    assert back[0].switch == eps[0].switch


def test_a_random_partner_exposes_its_uniform_policy() -> None:
    """Overcooked's generic random partner: p_pred is 1/6 whatever is predicted, the ceiling too."""
    spec = game_spec("Overcooked")
    me = PredictorAgent(make_agent("greedy", spec), FirstAction())
    ep = EpisodeDriver(spec, [me, make_agent("random", spec)], 0, {"horizon": 20},
                       predict="all").run()  # fmt: skip
    legal = [len(s["policy"]) for s in ep.steps if s["agent"] == "player_1"]
    assert legal and all(n >= 1 for n in legal)
    report = literal_report([ep])["agent"]
    assert report["n_policy"] == 20
    assert report["ceiling"] == pytest.approx(np.mean([1 / n for n in legal[:20]]))


class Positional(RandomAgent):
    """A no-reasoning answerer: always the first shown option."""

    def predict_partner(self, turn, question):
        return 0


def test_option_order_leaks_nothing_about_the_answer() -> None:
    """Against a partner that always plays the same action the truth is constant, so the only
    thing that could carry it is the shown order: the truth's shown position is uniform and a
    positional answerer sits at chance (1/3 in Rock-Paper-Scissors)."""
    spec = game_spec("RockPaperScissors")
    positions = []
    eps = []
    for seed in range(6):
        ep = EpisodeDriver(spec, [Positional(), make_agent("always_2", spec)], seed,
                           {"horizon": 50}, predict="all").run()  # fmt: skip
        eps.append(ep)
        positions += [s["predict"][0]["order"].index(2) for s in ep.steps if "predict" in s]
    counts = np.bincount(positions, minlength=3)
    expected = len(positions) / 3
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < 13.8, counts  # p = 0.001 with 2 degrees of freedom
    report = literal_report(eps)
    assert report["agent"]["acc_low"] < 1 / 3 < report["agent"]["acc_high"]
    assert report["repeat_last"]["acc"] == pytest.approx(294 / 300)  # all but each first guess


def test_learned_history_is_fitted_on_other_seeds_and_backs_off() -> None:
    # seed 1: the target alternates 0, 1, 0, 1; seed 2 repeats that pattern; seed 3 is new
    a = _episode(1, [0, 1, 0, 1, 0, 1])
    b = _episode(2, [0, 1, 0, 1, 0, 1])
    c = _episode(3, [1, 0, 1, 0])
    items = shortcut_items(prediction_items(a) + prediction_items(b) + prediction_items(c))
    on_a = [i.shortcuts["learned_history"] for i in items if i.seed == 1]
    # no history: the other seeds' overall majority (0 and 1 tie over seeds 2 and 3: the lowest)
    assert on_a[0] == 0
    # after 0 the alternation learned on seeds 2 and 3 says 1, after 1 it says 0
    assert on_a[1:] == [1, 0, 1, 0, 1]
    assert score_items([i for i in items if i.seed == 1], "learned_history")["acc"] == pytest.approx(1.0)
    # the same seed alone teaches nothing: with one seed every prediction is None
    alone = shortcut_items(prediction_items(_episode(9, [0, 1, 0, 1])))
    assert all(i.shortcuts["learned_history"] is None for i in alone)


def test_learned_history_beats_the_context_majority_on_a_period_three_partner() -> None:
    # the partner cycles 0, 1, 2: its last action alone predicts the next one exactly, and the
    # learned model finds that on the other seeds; repeat_last is always wrong
    eps = [_episode(s, [0, 1, 2] * 4) for s in range(3)]
    items = shortcut_items([it for ep in eps for it in prediction_items(ep)])
    resolved = [i for i in items if i.history]
    assert score_items(resolved, "learned_history")["acc"] == pytest.approx(1.0)
    assert score_items(resolved, "repeat_last")["acc"] == 0.0
    report = literal_report(eps)
    assert "learned_history" in report
