"""Partner bots and the runner integration (metrics, probes); the golden playthrough is
``tests/golden/BombDefusal.txt`` (``tests/test_golden.py``)."""

from __future__ import annotations

import numpy as np
import pytest

import tom_envs  # noqa: F401
from tom_envs.agents import make_agent
from tom_envs.core.agents import AgentAction
from tom_envs.games.bomb_defusal.planner import exhaustive_optimum
from tom_envs.registration import game_spec
from tom_envs.runner import play_episode, run

SPEC = game_spec("BombDefusal")


def team(name: str, env_kwargs=None, episodes: int = 20, seed: int = 0):
    bundle = SPEC.load().make_bundle(**{**SPEC.kwargs, **(env_kwargs or {})})
    factories = [lambda: make_agent(name, SPEC, bundle)] * bundle.game.num_players
    return run(SPEC, factories, episodes, seed=seed, env_kwargs=env_kwargs)


def test_heuristic_team_defuses_everything() -> None:
    eps = team("heuristic", episodes=40)
    scores = [e.metrics["team_score"] for e in eps]
    rounds = [e.metrics["rounds"] for e in eps]
    assert scores == [90.0] * 40
    assert np.mean(rounds) <= 11.5 and max(rounds) <= 16
    assert all(e.invalid == dict.fromkeys(e.invalid, 0) for e in eps)
    assert all(e.metrics["messages"] > 10 for e in eps), "it talks"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"symbolic_messages": True},
        {"teammate_locations": False},
        {"map": "random", "num_rooms": 7, "bomb_phases": "1,1,2,2,3,3"},
        {"num_agents": 4, "colors": "red,green,blue,yellow"},
        {"wrong_tool": "explode", "shaping": True},
    ],
)
def test_heuristic_team_in_other_configurations(kwargs) -> None:
    eps = team("heuristic", kwargs, episodes=8)
    done = [e.metrics["completed"] for e in eps]
    assert np.mean(done) >= 0.75, kwargs


def test_cbs_team_is_optimal_through_the_env() -> None:
    from gymnasium.utils import seeding

    from tom_envs.games.bomb_defusal.rules import BombConfig, BombGame

    game = BombGame(BombConfig(probes="none"))
    eps = team("cbs", episodes=10)
    for ep in eps:
        state = game.initial_state(seeding.np_random(ep.seed)[0])
        assert ep.metrics["team_score"] == 90
        assert ep.metrics["rounds"] == exhaustive_optimum(game, state)
        assert ep.metrics["messages"] == 0


def test_cbs_falls_back_when_partners_leave_the_plan() -> None:
    agents = [make_agent("cbs", SPEC), make_agent("random", SPEC), make_agent("cbs", SPEC)]
    for seed in range(5):
        ep = play_episode(SPEC, agents, seed=seed)
        assert all(s["valid"] for s in ep.steps if s["agent"] != "player_1")
    assert agents[0].deviated or agents[2].deviated


def test_bots_are_deterministic_and_random_is_legal() -> None:
    a = team("heuristic", episodes=3, seed=5)
    b = team("heuristic", episodes=3, seed=5)
    assert [[s["action"] for s in e.steps] for e in a] == [
        [s["action"] for s in e.steps] for e in b
    ]
    r = team("random", episodes=5)
    assert all(e.metrics["valid_action_pct"] == 100.0 for e in r)
    assert all(e.metrics["rounds"] <= 30 for e in r)


class Answering:
    """A heuristic player that answers every probe question with ``policy(question)``."""

    def __init__(self, policy) -> None:
        self.inner = make_agent("heuristic", SPEC)
        self.policy = policy
        self.name = "answering"
        self.env = None  # the exact answerer's privileged access (set by the test)

    def reset(self, info) -> None:
        self.inner.reset(info)

    def act(self, turn) -> AgentAction:
        return self.inner.act(turn)

    def answer_probes(self, turn, questions):
        return {q.id: self.policy(q, self, turn) for q in questions}


def exact(q, me, turn) -> str:
    """The known group that models every player exactly: the game's own truth of the moment,
    read through the env this test double was handed (no agent gets that)."""
    return {p.question: p.answer for p in me.env.probes(turn.agent)}[q.question]


def _play(policy, seed: int):
    from tom_envs.driver import EpisodeDriver

    team = [Answering(policy) for _ in range(3)]
    driver = EpisodeDriver(SPEC, team, seed)
    for a in team:
        a.env = driver.env
    return driver.run()


def test_runner_scores_probes_per_order() -> None:
    oracle = _play(exact, 1)
    for order in ("introspection", "first_order", "second_order"):
        assert oracle.metrics[f"probe_acc/{order}"] == 100.0
    yes = _play(lambda q, me, turn: "Yes.", 1)
    no = _play(lambda q, me, turn: "no", 1)
    for order in ("first_order", "second_order"):
        assert yes.metrics[f"probe_acc/{order}"] + no.metrics[f"probe_acc/{order}"] == 100.0
    steps = [s for s in oracle.steps if s.get("probes")]
    # every action is asked about right after it, but a tool used where no bomb is (no subject)
    assert all(s["action_text"].startswith("Apply") for s in oracle.steps if s not in steps)
    assert len(steps) >= len(oracle.steps) - 2
    for s in steps:  # per subject: its introspection, then 2 teammates x 2 orders
        subjects = {p["id"].split(".order")[0] for p in s["probes"]}
        assert len(s["probes"]) == 5 * len(subjects) and s["probe_moment"] == "action"
        assert [p["qid"] for p in s["probes"]] == [f"q{i + 1}" for i in range(len(s["probes"]))]
        assert all(p["no_tom"] in ("yes", "no") for p in s["probes"])


def test_metrics_hook_replays_the_episode() -> None:
    ep = play_episode(SPEC, [make_agent("heuristic", SPEC) for _ in range(3)], seed=2)
    assert ep.metrics["team_score"] == sum(
        s["rewards"]["player_0"] for s in ep.steps if s["rewards"]
    )
    assert ep.metrics["completed"] == 1.0 and ep.metrics["bombs_defused"] == 5
    assert ep.metrics["rounds"] == (ep.length - 1) // 3 + 1
    shaped = play_episode(
        SPEC,
        [make_agent("heuristic", SPEC) for _ in range(3)],
        seed=2,
        env_kwargs={"shaping": True},
    )
    assert shaped.metrics["team_score"] == 90.0, "shaping does not count in the score"
    assert shaped.returns["player_0"] == 90.0 + 9, "+1 per correct cut (9 phases)"


def test_llm_style_agent_with_free_text_and_a_failed_move() -> None:
    """A text agent through Turn.parse: refused actions keep their message (false announcement)."""

    class Texter:
        name = "texter"

        def reset(self, info) -> None:
            self.k = 0

        def act(self, turn) -> AgentAction:
            self.k += 1
            reply = (
                'Action selection: Move to Room 99. Message to Team: "I\'m heading to room 3"'
                if self.k == 1
                else "Action selection: Inspect Bomb. Message to Team: 'checking'"
            )
            res = turn.parse(reply)
            if not res.valid:
                return AgentAction(None, valid=False, message=res.message)
            return AgentAction(res.action, message=res.message)

    ep = play_episode(
        SPEC, [Texter(), make_agent("heuristic", SPEC), make_agent("heuristic", SPEC)], seed=0
    )
    first = ep.steps[0]
    assert not first["valid"] and first["message"] == "I'm heading to room 3"
    assert ep.metrics["valid_action_pct/player_0"] < 100.0


def test_single_agent_view_delivers_partners_messages() -> None:
    from tom_envs.single_agent import SingleAgentEnv

    env = SingleAgentEnv("BombDefusal", partners="heuristic", symbolic_messages=True)
    _, info = env.reset(seed=0)
    _, _, _, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    text = env.text_observation().observation
    assert "Communication messages sent by your teammates: Player bravo:" in text
    assert env.aec.view("player_0").messages[0].facts, "the heuristic's sentences carry facts"


def test_probes_are_answered_from_the_observation_of_their_moment() -> None:
    """At the paper's timing the actor is asked right after its action, from its observation of
    the state the action left (the action's own result), and the truths are that moment's; the
    turn it is handed takes no action."""
    seen = []

    def policy(q, me, turn):
        seen.append((turn.agent, turn.decision, turn.text().observation, turn.parse("Inspect Bomb")))
        return exact(q, me, turn)

    ep = _play(policy, 4)
    assert seen and ep.metrics["probe_acc/all"] == 100.0
    by_agent: dict[str, list] = {}
    for s in ep.steps:
        by_agent.setdefault(s["agent"], []).append(s)
    kinds = set()
    for agent, decision, observation, parsed in seen:
        action = by_agent[agent][decision]["action_text"]
        assert by_agent[agent][decision].get("probes"), "asked in the record of that action"
        if action.startswith("Move to Room"):
            assert f"Results: You moved to Room {action.rsplit(' ', 1)[1]}." in observation
            kinds.add("move")
        elif action == "Inspect Bomb":
            assert "Results: You inspected Bomb" in observation
            kinds.add("inspect")
        assert parsed.action is None and "no action" in parsed.feedback
    assert kinds == {"move", "inspect"}
