"""Tabular RMax (baselines/rmax.py): convergence, predictions, determinism, the generic
observation state, and the paper-004 tabular targets on a reduced budget."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import pytest

from baselines.rmax import RMaxAgent
from tom_envs.agents import make_agent
from tom_envs.core.agents import BaseAgent, EpisodeInfo, Turn
from tom_envs.experiments.paper004 import PAPER_TABULAR, RMAX_SPEC, run_cell
from tom_envs.registration import game_spec
from tom_envs.runner import Episode, play_episode

RPS = game_spec("RockPaperScissors")


def seat_steps(ep: Episode, seat: int) -> list[dict]:
    return [s for s in ep.steps if s["agent"] == f"player_{seat}"]


def play_vs(
    agent: object, bot: str, seed: int, seat: int = 0, spec=RPS, env_kwargs: dict | None = None
) -> Episode:
    partner = make_agent(bot, spec)
    agents = [agent, partner] if seat == 0 else [partner, agent]
    return play_episode(spec, agents, seed, env_kwargs=env_kwargs)


def trajectory(ep: Episode) -> list[tuple]:
    """Everything decided and received, as hashable tuples."""
    return [
        (
            s["agent"],
            s["action"],
            tuple(sorted((s["prediction"] or {}).items())),
            tuple(sorted((s["rewards"] or {}).items())),
        )
        for s in ep.steps
    ]


# --------------------------------------------------------------------------- learning
@pytest.mark.parametrize("seat", [0, 1])
def test_converges_to_scissors_against_always_paper(seat: int) -> None:
    """RPS vs always_1 (paper): RMax ends up playing scissors (2) every round, predicting paper.

    Bound: with state = last joint action there are 4 reachable states (start, and (a, paper) for
    a in 0..2) with 3 actions each, and each state-action is known after one visit
    (known_threshold=1), so at most 12 rounds are spent before the plan is fixed.
    """
    for seed in range(10):
        ep = play_vs(RMaxAgent(), "always_1", seed, seat)
        mine = seat_steps(ep, seat)
        actions = [s["action"] for s in mine]
        preds = [s["prediction"]["partner_action"] for s in mine]
        assert len(actions) == 100
        assert all(a == 2 for a in actions[12:]), (seed, actions[:20])
        # one observation of the partner suffices: every prediction from round 2 on is paper
        assert all(p == 1 for p in preds[1:]), (seed, preds[:5])
        assert ep.metrics["focal_player"] == seat
        assert ep.metrics["optimal_return"] == 100.0
        assert ep.metrics["tom_accuracy"] >= 99.0
        assert ep.returns[f"player_{seat}"] >= 100 - 2 * 12
        assert ep.metrics["functional_regret"] <= 0.24
        assert all(s["valid"] for s in mine)


def test_learns_cooperation_with_tit_for_tat_in_ipd() -> None:
    ipd = game_spec("PrisonersDilemma")
    ep = play_vs(RMaxAgent(), "tit_for_tat", 0, spec=ipd)
    actions = [s["action"] for s in seat_steps(ep, 0)]
    # after exploring it settles on mutual cooperation, and defects in the very last round
    assert actions[-1] == 1
    assert actions[40:99] == [0] * 59
    assert ep.metrics["tom_regret"] == 0.0


def test_persist_keeps_the_model_across_episodes() -> None:
    agent = RMaxAgent(persist=True)
    partner = make_agent("always_1", RPS)
    first = play_episode(RPS, [agent, partner], 0)
    second = play_episode(RPS, [agent, partner], 1)
    assert first.metrics["functional_regret"] > 0
    assert second.metrics["functional_regret"] == 0.0
    assert [s["action"] for s in seat_steps(second, 0)] == [2] * 100


def test_discounted_planning_also_converges() -> None:
    ep = play_vs(RMaxAgent(planning="discount", gamma=0.9), "always_1", 0)
    actions = [s["action"] for s in seat_steps(ep, 0)]
    assert all(a == 2 for a in actions[12:])


# ------------------------------------------------------------------------ determinism
def test_same_seed_same_trajectory() -> None:
    for bot in ("always_1", "tit_for_tat", "random"):
        a = play_vs(RMaxAgent(), bot, 5)
        b = play_vs(RMaxAgent(), bot, 5)
        assert trajectory(a) == trajectory(b)
        assert a.metrics == b.metrics
    # reusing one agent object: reset() starts from scratch (persist=False)
    agent = RMaxAgent()
    first = play_vs(agent, "tit_for_tat", 3)
    play_vs(agent, "tit_for_tat", 4)
    assert trajectory(play_vs(agent, "tit_for_tat", 3)) == trajectory(first)


def test_different_seeds_may_differ() -> None:
    trajectories = {tuple(trajectory(play_vs(RMaxAgent(), "always_1", s))) for s in range(10)}
    assert len(trajectories) > 1  # exploration ties are broken by the seeded generator


# --------------------------------------------------------------------------- arguments
@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"known_threshold": 0}, "known_threshold"),
        ({"known_threshold": -2}, "known_threshold"),
        ({"planning": "mcts"}, "planning"),
        ({"gamma": 1.0}, "gamma"),
        ({"gamma": -0.1}, "gamma"),
        ({"state": "history"}, "state"),
        ({"tie_break": "first"}, "tie_break"),
    ],
)
def test_invalid_constructor_arguments(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RMaxAgent(**kwargs)


def test_infinite_r_max_is_refused_at_reset() -> None:
    agent = RMaxAgent(r_max=float("inf"))
    info = EpisodeInfo("x", "player_0", 0, 2, 3, 0, (-1.0, 1.0), 100)
    with pytest.raises(ValueError, match="r_max"):
        agent.reset(info)


def test_agent_spec_arguments_reach_the_agent() -> None:
    agent = make_agent("rmax:known_threshold=2:planning=discount:gamma=0.5", RPS)
    assert isinstance(agent, RMaxAgent)
    assert (agent.m, agent.planning, agent.gamma) == (2, "discount", 0.5)


# ---------------------------------------------------------------- observation state
def test_observation_state_equals_last_action_state() -> None:
    """With window=1, include_round=False the observation *is* the last joint action, so RMax on
    the generic observation state plays exactly the same episodes as on ``view.last_actions``."""
    kw = {"window": 1, "include_round": False}
    for spec_name, bot in (("RockPaperScissors", "always_1"), ("BattleOfSexes", "tit_for_tat"),
                           ("PrisonersDilemma", "win_stay_lose_shift")):
        spec = game_spec(spec_name)
        for seed in range(2):
            auto = play_vs(RMaxAgent(), bot, seed, spec=spec, env_kwargs=kw)
            obs = play_vs(RMaxAgent(state="observation"), bot, seed, spec=spec, env_kwargs=kw)
            assert trajectory(auto) == trajectory(obs)


@dataclass(frozen=True)
class BareView:
    """A view of some other game: legal actions and a round counter, no ``last_actions``."""

    legal_actions: tuple[int, ...]
    round: int


class HideLastActions(BaseAgent):
    """Shows the inner agent only the vector observation (a game without ``last_actions``)."""

    name = "hidden"

    def __init__(self, inner: RMaxAgent) -> None:
        super().__init__()
        self.inner = inner

    def reset(self, info: EpisodeInfo) -> None:
        super().reset(info)
        self.inner.reset(info)

    def _hide(self, turn: Turn) -> Turn:
        return dataclasses.replace(turn, view=BareView(turn.view.legal_actions, turn.view.round))

    def act(self, turn: Turn):
        return self.inner.act(self._hide(turn))

    def end_episode(self, turn: Turn) -> None:
        self.inner.end_episode(self._hide(turn))


def test_generic_observation_state_without_last_actions() -> None:
    kw = {"window": 1, "include_round": False}
    for seed in range(3):
        agent = RMaxAgent()
        ep = play_vs(HideLastActions(agent), "always_1", seed, env_kwargs=kw)
        mine = seat_steps(ep, 0)
        assert all(s["prediction"] is None for s in mine)  # no partner action to count
        assert all(s["action"] == 2 for s in mine[12:])
        assert all(k[0] == "obs" for k in agent.index)  # states came from the vectors
        assert 2 <= len(agent.index) <= 4  # the start and some (a, paper) joint actions
        assert "tom_accuracy" not in ep.metrics
        assert ep.metrics["functional_regret"] <= 0.24


def test_last_actions_state_needs_a_view_with_them() -> None:
    agent = RMaxAgent(state="last_actions")
    agent.reset(EpisodeInfo("x", "player_0", 0, 2, 3, 0, (-1.0, 1.0), 10))
    turn = Turn("player_0", 0, BareView((0, 1, 2), 0), np.zeros(6, np.float32),
                np.ones(3, np.int8), 0.0, 0)
    with pytest.raises(ValueError, match="last_actions"):
        agent.act(turn)


# --------------------------------------------------------------- paper 004 targets
#: Full run for reference (`.venv/bin/tom-envs reproduce paper004 --episodes 300`, seeds 0..299,
#: about 90 s for all 12 rows), RMax rows, ours vs the paper (ΔFunctional/T, ΔToM/T, ToM %):
#:   RPS single  0.046±0.003 | 0.011±0.001 | 99.3±0.1   paper 0.083±0.004, 0.039±0.006, 97.4±0.4
#:   RPS tft     0.111±0.006 | 0.049±0.001 | 96.7±0.1   paper 0.224±0.007, 0.105,       93.0
#:   IBS single  0.171±0.009 | 0.044±0.005 | 99.5±0.1   paper 0.211±0.012, 0.088±0.020, 98.7±0.3
#:   IBS tft     0.322±0.024 | 0.000±0.000 | 98.2±0.1   paper 0.468±0.031, 0.162±0.005, 98.1±0.1
#:   IPD single  0.086±0.007 | 0.000±0.000 | 99.5±0.1   paper 0.086±0.009, 0.071±0.015, 98.6±0.3
#:   IPD tft     0.247±0.003 | 0.000±0.000 | 98.0±0.1   paper 0.248±0.005, 0.070,       98.0
#: With 100 episodes (seeds 0..99) the six RMax cells take 12-18 s together (no slow mark needed).
#:
#: Margin: 100 episodes estimate our mean less precisely than 300 (or the paper's runs), and a
#: single-action cell also depends on which always_k each seed draws. So ours may exceed the
#: paper's bound by our own 95% half-width (1.96 standard errors of our 100-episode mean): the test
#: fails only when our mean is worse than the paper's figure + its CI by more than our own
#: sampling error. E.g. IPD single-action: 0.0957 ± 0.0115 at 100 episodes vs 0.086 + 0.009.
EPISODES = 100


def _margin(ci: float) -> float:
    return 0.0 if math.isnan(ci) else ci


@pytest.mark.parametrize(("game", "partner"), list(PAPER_TABULAR), ids=lambda x: str(x))
def test_paper004_tabular_targets_on_a_reduced_budget(game: str, partner: str) -> None:
    cell = run_cell(game, partner, RMAX_SPEC, EPISODES, seed=0)
    f_paper, f_ci, t_paper, t_ci, acc_paper, acc_ci = PAPER_TABULAR[(game, partner)]
    (f, f_h), (t, t_h), (acc, acc_h) = cell.functional_regret, cell.tom_regret, cell.tom_accuracy
    assert cell.episodes == EPISODES
    assert not math.isnan(f) and not math.isnan(t) and not math.isnan(acc)
    assert f <= f_paper + f_ci + _margin(f_h), (game, partner, cell.functional_regret)
    assert t <= t_paper + t_ci + _margin(t_h), (game, partner, cell.tom_regret)
    assert acc >= acc_paper - acc_ci - _margin(acc_h), (game, partner, cell.tom_accuracy)
    # and RMax is far from uniform random (whose ΔFunctional/T is 1 in RPS, 2-6 elsewhere)
    assert f < 0.5
