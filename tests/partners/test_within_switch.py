"""The long games' switch within the episode (issue #35): the sliding-window UCB learner
(:class:`tom_envs.known_groups.SlidingUCBAgent`), its shadows, the window regret's definition
(:func:`tom_envs.partners.regret.round_rewards`) and the page's declared pairs."""

from __future__ import annotations

import dataclasses
import inspect
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from tom_envs.agents import make_agent
from tom_envs.core.agents import EpisodeInfo, Turn
from tom_envs.driver import EpisodeDriver
from tom_envs.known_groups import GroupsPlan, SlidingUCBAgent, play_within_switch
from tom_envs.partners.regret import round_rewards, window_sums
from tom_envs.registration import game_spec
from tom_experiments.functional_tom import PLANS

HANABI_ARMS = ("simple", "convention", "zoo/ppo_s0")


class Recorder(SlidingUCBAgent):
    """The learner, recording what it is told and what it answers (for the tests only)."""

    def reset(self, info: EpisodeInfo) -> None:
        self.infos = [*getattr(self, "infos", []), info]
        self.turns: list[Turn] = []
        self.answers: list[int] = []
        super().reset(info)

    def act(self, turn: Turn) -> Any:
        self.turns.append(turn)
        out = super().act(turn)
        self.answers.append(int(out.action))
        return out


def _hanabi(focal: Any, partner: str, seed: int) -> Any:
    spec = game_spec("Hanabi")
    return EpisodeDriver(spec, [focal, make_agent(partner, spec)], seed).run()


# ------------------------------------------------------------------------ SW-UCB index
def test_swucb_index_on_a_known_history() -> None:
    """History (arm, window reward): (0, 1), (1, 3), (2, 2), (1, 0); spread B = 3.
    Memory 4: t = 4, indices 1/3 + sqrt(0.6 ln 4) = 1.245, 1/2 + sqrt(0.6 ln 4 / 2) = 1.145,
    2/3 + sqrt(0.6 ln 4) = 1.579: arm 2. Memory 3: arm 0 left the window, so it goes first."""
    history = [(0, 1.0), (1, 3.0), (2, 2.0), (1, 0.0)]
    four = SlidingUCBAgent(("a", "b", "c"), window=5, memory=4)
    four.history = list(history)
    assert four.choose() == 2
    three = SlidingUCBAgent(("a", "b", "c"), window=5, memory=3)
    three.history = list(history)
    assert three.choose() == 0
    assert SlidingUCBAgent(("a", "b", "c"), window=5, memory=3).choose() == 0  # untried first


def _track(memory: int) -> list[int]:
    rng = np.random.default_rng(3)
    learner = SlidingUCBAgent(("a", "b", "c"), window=1, memory=memory)  # choose() only
    chosen = []
    for t in range(80):
        arm = learner.choose()
        chosen.append(arm)
        means = (1.0, 0.0, 0.0) if t < 40 else (0.0, 1.0, 0.0)
        learner.history.append((arm, means[arm] + float(rng.normal(0, 0.1))))
    return chosen


def test_swucb_tracks_a_change_of_the_best_arm() -> None:
    """Scripted seeded window rewards: arm 0 best for 40 windows, then arm 1. With a memory of
    8 windows each arm must reappear within every 8 windows (at most 6 of 8 for the best of 3
    arms): the learner plays the best arm most before and after the change."""
    sliding = _track(8)
    before, after = np.bincount(sliding[10:40], minlength=3), np.bincount(sliding[50:], minlength=3)
    assert before.argmax() == 0 and before[0] >= 15, before
    assert after.argmax() == 1 and after[1] >= 15, after


def test_swucb_rejects_bad_arguments() -> None:
    for kwargs, word in ((dict(arms=("simple", "simple"), window=2, memory=2), "arms"),
                         (dict(arms=("simple",), window=0, memory=2), "window"),
                         (dict(arms=("simple",), window=2, memory=True), "memory"),
                         (dict(arms=("simple",), window=2, memory=2, xi=0.0), "xi")):  # fmt: skip
        with pytest.raises(ValueError, match=word):
            SlidingUCBAgent(**kwargs)


# ------------------------------------------------------------------------ windows and shadows
def test_swucb_plays_one_arm_per_window_and_credits_the_turns_rewards() -> None:
    """Hanabi, seed 3: each window of 3 own decisions is played by one arm; the window rewards
    sum the rewards its turns report (the reward since the previous decision)."""
    learner = Recorder(HANABI_ARMS, window=3, memory=4)
    _hanabi(learner, "convention", 3)
    n = len(learner.played)
    assert len(learner.history) == (n - 1) // 3
    for k in range(0, n, 3):
        assert len(set(learner.played[k:k + 3])) == 1
    assert learner.played[:9:3] == [0, 1, 2]  # untried arms first, in the declared order
    seen = sum(t.reward for t in learner.turns[1:])
    assert sum(r for _, r in learner.history) + learner._pending == pytest.approx(seen)
    assert learner.shadow_failures == 0


def test_swucb_shadows_stay_in_sync_in_hanabi() -> None:
    """Every arm acts on every turn, so whenever an arm plays, its action is the one a fresh
    copy of that policy, reset with the same info and fed the same turns from the start, chooses
    (its card knowledge follows the same hints and plays)."""
    learner = Recorder(HANABI_ARMS, window=2, memory=3)
    ep = _hanabi(learner, "zoo/ppo_s0", 5)
    assert ep.status == "ok"
    spec = game_spec("Hanabi")
    for i, arm in enumerate(HANABI_ARMS):
        fresh = make_agent(arm, spec)
        fresh.reset(learner.infos[-1])
        replay = [int(np.asarray(getattr(a, "action", a))) for a in map(fresh.act, learner.turns)]
        mine = [k for k, a in enumerate(learner.played) if a == i]
        assert mine, arm
        assert [learner.answers[k] for k in mine] == [replay[k] for k in mine], arm


def test_swucb_receives_no_partner_identity() -> None:
    """Its constructor takes no partner; what it is told at reset is the same whichever partner
    (a switching one or a fixed member) sits opposite."""
    assert set(inspect.signature(SlidingUCBAgent.__init__).parameters) == {
        "self", "arms", "window", "memory", "xi"}
    infos = {}
    for partner in ("switch:a=convention:b=zoo/ppo_s0:at=3-5:key=1", "simple"):
        learner = Recorder(HANABI_ARMS, window=2, memory=3)
        _hanabi(learner, partner, 7)
        infos[partner] = learner.infos
        assert not any(name in repr(i) for i in learner.infos for name in ("switch", "ppo", "simple"))
    first, second = infos.values()
    assert first == second


# ------------------------------------------------------------------------ window regret
def _steps(*rows: tuple[str, dict[str, float] | None]) -> SimpleNamespace:
    return SimpleNamespace(steps=[{"agent": a, "rewards": r} for a, r in rows])


def test_round_rewards_and_window_regret_on_a_tiny_known_case() -> None:
    """Turn-based: the focal's 1 before the partner's first decision counts in round 0; rounds are
    the partner's decision and the moves after it. Simultaneous: one round per joint step."""
    turn_based = _steps(("player_0", {"player_0": 1.0}), ("player_1", {"player_0": 0.0}),
                        ("player_0", {"player_0": 2.0}), ("player_1", {"player_0": 1.0}),
                        ("player_0", {"player_0": 0.0}))  # fmt: skip
    assert round_rewards(turn_based, "player_1", ["player_0"]) == [3.0, 1.0]
    joint = _steps(("player_0", None), ("player_1", {"player_0": 20.0, "player_1": 20.0}),
                   ("player_0", None), ("player_1", {"player_0": 0.0, "player_1": 0.0}),
                   ("player_0", None), ("player_1", {"player_0": 20.0, "player_1": 20.0}))  # fmt: skip
    agent = round_rewards(joint, "player_1", ["player_0"])
    assert agent == [20.0, 0.0, 20.0]
    oracle = [20.0, 20.0, 20.0, 20.0]  # a longer game: the agent's missing round scores 0
    loss = [o - x for o, x in zip(oracle, [*agent, 0.0], strict=True)]
    assert window_sums(loss, at=2, width=1, before=2) == {-2: 0.0, -1: 20.0, 0: 0.0, 1: 20.0}
    # only whole windows inside the episode: w-1 would start before it, w1 end after it
    assert window_sums(loss, at=1, width=2, before=1) == {0: 20.0}


@pytest.fixture(scope="module")
def tiny() -> Any:
    members = {"convention": "convention", "zoo/ppo_s0": "zoo/ppo_s0"}
    plan = GroupsPlan("Hanabi", {}, ("{focal}", "{partner}"), (0,), members, "convention",
                      lambda: None, "-", 1, 1)  # fmt: skip
    return play_within_switch(plan, "convention", "zoo/ppo_s0", "6-9",
                              lambda: SlidingUCBAgent(HANABI_ARMS, 2, 3), [0, 1, 2], 3)  # fmt: skip


def test_play_within_switch_on_hanabi_is_paired_on_the_oracle(tiny: Any) -> None:
    """Three seeds: the partner's switch point is the same for the three agents of a seed; the
    oracle's regret is 0 by construction; each agent's window regret is the oracle's mean window
    reward minus its own."""
    res = tiny
    assert res.arms == HANABI_ARMS
    assert res.episodes == 9 and res.learner == "swucb" and res.windows_after >= 1
    assert all(v == 0.0 for v in res.rows["oracle"]["windows"].values())
    assert res.rows["oracle"]["post"][0] == 0.0
    for g in ("adaptive", "fixed"):
        for j, v in res.rows[g]["windows"].items():
            assert v == pytest.approx(res.reward["oracle"][j] - res.reward[g][j]), (g, j)
    assert res.rows["oracle"]["windows"][-1] == 0.0 and -2 in res.rows["fixed"]["windows"]
    assert res.shadow_failures == 0


# ------------------------------------------------------------------------ the page's declaration
def test_the_page_declares_the_long_games_switches() -> None:
    assert PLANS["Overcooked"].within_switch == ("zoo/mappo_s0", "role_onions", "100-200")
    assert PLANS["Overcooked"].within_windows == (50, 25, 8)
    assert PLANS["Hanabi"].within_switch == ("convention", "zoo/ppo_s0", "10-16")
    assert PLANS["Hanabi"].within_windows == (4, 3, 6)
    others = [g for g, p in PLANS.items() if p.within_switch and g not in ("Overcooked", "Hanabi")]
    assert others == []


def _mean_u(game: str, kwargs: dict[str, Any], focal: str, partner: str, seeds: range) -> float:
    base = game_spec(game)
    spec = dataclasses.replace(base, kwargs={**base.kwargs, **kwargs})
    objective = spec.load().functional_objective(**spec.kwargs)
    us = []
    for s in seeds:
        agents = [make_agent(focal, spec), make_agent(partner, spec)]
        us.append(float(objective(EpisodeDriver(spec, agents, s, kwargs).run(), (0,))))
    return float(np.mean(us))


@pytest.mark.parametrize(("game", "kwargs", "a_ref", "b", "b_ref", "seeds"), [
    ("Overcooked", {"horizon": 400, "observation": "features"}, "zoo/mappo_s2", "role_onions",
     "greedy", range(10_000, 10_002)),
    ("Hanabi", {}, "convention", "zoo/ppo_s0", "zoo/ppo_s0", range(10_000, 10_005)),
])  # fmt: skip
def test_the_switch_changes_the_best_response(game: str, kwargs: dict[str, Any], a_ref: str,
                                              b: str, b_ref: str, seeds: range) -> None:  # fmt: skip
    """On selection seeds, B's reference beats A's reference against B (why the pair measures
    adaptation: the fixed agent that keeps A's reference loses after the switch)."""
    assert _mean_u(game, kwargs, b_ref, b, seeds) > _mean_u(game, kwargs, a_ref, b, seeds)


def test_the_page_renders_the_within_switch_section(tiny: Any) -> None:
    """The section names the pair, its windows and the three agents; a window not every
    episode has prints as —, never nan."""
    from tom_experiments.functional_tom import GamePlan, _within_section

    plan = GamePlan("Hanabi", 1, within_switch=("convention", "zoo/ppo_s0", "6-9"),
                    within_windows=(3, 2, 3))  # fmt: skip
    refs = {m: SimpleNamespace(policy=m) for m in ("convention", "zoo/ppo_s0")}
    r = SimpleNamespace(plan=plan, within_switch=tiny, within_missing="", refs=refs)
    text = "\n".join(_within_section(r))  # type: ignore[arg-type]
    assert "`switch:a=convention:b=zoo/ppo_s0:at=6-9:key=1`" in text
    assert "W = 3 partner decisions" in text and "one arm per 2 of its own decisions" in text
    for label in ("adaptive (`swucb`)", "oracle of the switching partner",
                  "fixed (reference of `convention`)"):  # fmt: skip
        assert f"| {label} |" in text
    assert "nan" not in text
    missing = SimpleNamespace(plan=plan, within_switch=None, within_missing="B has no policy", refs={})
    assert "Not played: B has no policy." in "\n".join(_within_section(missing))  # type: ignore[arg-type]
