"""CoBlock metrics (success, timesteps, γ of Eq. 2-3 with Alg. 1) and the ToM probes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tom_envs.agents import make_agent
from tom_envs.core.agents import BaseAgent
from tom_envs.games.coblock.env import raw_env
from tom_envs.games.coblock.metrics import episode_metrics, replay, workload_balance
from tom_envs.games.coblock.probes import NEXT_OPTIONS, NOTHING, make_probes, next_substructure
from tom_envs.games.coblock.rules import CoBlockConfig, CoBlockGame
from tom_envs.registration import game_spec
from tom_envs.runner import play_episode

from .conftest import BLUE, RED, WAIT, YELLOW, place, step


@pytest.mark.parametrize(
    ("n", "opt", "gamma"),
    [
        ((8, 8), (8, 8), 0.5),
        ((10, 6), (10, 6), 0.5),  # the optimal proportion, not equal counts
        ((10, 6), (8, 8), 60 / 136),  # a = 10, b = 6
        ((3, 3), (3, 2), 6 / 13),  # a = 2, b = 3
        ((12, 0), (6, 6), 0.0),  # one agent did everything
        ((0, 0), (6, 6), math.nan),
        ((4, 4), (0, 8), math.nan),
    ],
)
def test_workload_balance(n, opt, gamma) -> None:
    got = workload_balance(n[0], n[1], opt[0], opt[1])
    if math.isnan(gamma):
        assert math.isnan(got)
    else:
        assert got == pytest.approx(gamma)


def test_episode_metrics_on_a_known_trajectory(make_game) -> None:
    game, s = make_game()
    for a0, a1 in (
        (place(game, RED, (0, 0, 0)), place(game, BLUE, (2, 0, 0))),
        (place(game, RED, (0, 1, 0)), place(game, BLUE, (2, 1, 0))),
        (place(game, YELLOW, (3, 1, 0)), place(game, BLUE, (3, 0, 0))),
    ):
        s = step(game, s, a0, a1).state
    m = episode_metrics(game, s)
    assert m["success"] == 1.0 and m["timesteps"] == 3.0 and m["actions"] == 6.0
    assert (m["build_actions/player_0"], m["build_actions/player_1"]) == (3.0, 3.0)
    assert (m["optimal_blocks/player_0"], m["optimal_blocks/player_1"]) == (3.0, 2.0)
    assert m["gamma"] == pytest.approx(6 / 13) and m["progress"] == 1.0


def test_replay_matches_the_env() -> None:
    spec = game_spec("CoBlock")
    kwargs = {"task_type": "goal_dependent", "task_index": 5}
    env = raw_env(**kwargs)
    agents = [make_agent("cooperative", spec), make_agent("error_prone", spec)]
    ep = play_episode(spec, agents, 4, env_kwargs=kwargs, env=env)
    assert replay(CoBlockGame(CoBlockConfig(**kwargs)), 4, ep.steps) == env.game_state
    assert ep.metrics["timesteps"] == ep.length


def test_probes_ground_truth(make_game) -> None:
    game, s = make_game()
    probes = {p.id: p for p in make_probes(game, s, 0)}
    assert len(probes) == 5 + 6 + 1
    truth = {k: v.answer for k, v in probes.items()}
    assert truth["partner_goal.tower"] == "yes" and truth["partner_goal.symbol"] == "yes"
    assert truth["partner_goal.arch"] == "no" and truth["partner_goal.bridge"] == "no"
    assert truth["partner_inventory.blue"] == "yes" and truth["partner_inventory.red"] == "no"
    assert truth["partner_next"] == "tower"
    assert {p.order for p in probes.values()} == {1}
    assert probes["partner_next"].options == NEXT_OPTIONS
    # about player_0 from player_1's side
    back = {p.id: p.answer for p in make_probes(game, s, 1)}
    assert back["partner_goal.tower"] == "yes" and back["partner_goal.symbol"] == "no"
    assert back["partner_inventory.red"] == "yes" and back["partner_inventory.yellow"] == "yes"
    # the next sub-structure follows the state
    s = step(game, s, WAIT, place(game, BLUE, (2, 0, 0))).state
    s = step(game, s, WAIT, place(game, BLUE, (2, 1, 0))).state
    assert next_substructure(s, 1) == "symbol"
    s = step(game, s, place(game, YELLOW, (3, 1, 0)), WAIT).state
    assert next_substructure(s, 1) == NOTHING
    s = step(game, s, place(game, RED, (1, 0, 0)), WAIT).state  # yellow used up
    assert {p.id: p.answer for p in make_probes(game, s, 1)}["partner_inventory.yellow"] == "no"


def test_probe_questions_reveal_nothing() -> None:
    """Questions and options are the same whatever the partner's goal and inventory."""
    a = CoBlockGame(CoBlockConfig(task_type="independent", task_index=0))
    b = CoBlockGame(CoBlockConfig(task_type="goal_dependent", task_index=7))
    pa = make_probes(a, a.initial_state(np.random.default_rng(0)), 0)
    pb = make_probes(b, b.initial_state(np.random.default_rng(0)), 0)
    assert [(p.id, p.question, p.options) for p in pa] == [
        (p.id, p.question, p.options) for p in pb
    ]
    assert [p.answer for p in pa] != [p.answer for p in pb]


class _SaysYes(BaseAgent):
    """Waits, and answers every probe with its first option."""

    name = "says_yes"

    def act(self, turn):
        return WAIT

    def answer_probes(self, turn, probes):
        return {p.id: p.options[0] for p in probes}


def test_runner_scores_the_probes() -> None:
    spec = game_spec("CoBlock")
    kwargs = {"task_type": "independent", "task_index": 0, "max_rounds": 3}
    ep = play_episode(spec, [_SaysYes(), make_agent("cooperative", spec)], 0, env_kwargs=kwargs)
    asked = [s for s in ep.steps if s.get("probes")]
    assert len(asked) == 3 and all(len(s["probes"]) == 12 for s in asked)
    for key in (
        "probe_acc/partner_goal",
        "probe_acc/partner_inventory",
        "probe_acc/partner_next_substructure",
        "probe_acc/first_order",
    ):
        assert key in ep.metrics
    # player_1's goal in independent task 0 is a tower: "yes" is right for the tower only
    assert ep.metrics["probe_acc/partner_goal"] == pytest.approx(100 * 1 / 5)
