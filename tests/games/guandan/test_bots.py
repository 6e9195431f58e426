"""The rule-based agents: legal, deterministic, and in the expected order of strength."""

from __future__ import annotations

import pytest

from tom_envs.agents import make_agent
from tom_envs.registration import game_spec
from tom_envs.runner import play_episode

SPEC = game_spec("Guandan")
BOTS = ("random", "bestp_lowv", "heuristic", "recommender", "leader", "supporter",
        "signal_pair", "signal_single", "pair_opener", "single_opener")  # fmt: skip


@pytest.mark.parametrize("bot", BOTS)
def test_bots_play_legal_and_deterministic(bot) -> None:
    for seed in (0, 1):
        runs = []
        for _ in range(2):
            agents = [make_agent(bot, SPEC) for _ in range(4)]
            ep = play_episode(SPEC, agents, seed)
            assert all(s["valid"] for s in ep.steps), "a bot chose an illegal action"
            runs.append([s["action"] for s in ep.steps])
        assert runs[0] == runs[1]


def _team_wins(a: str, b: str, seeds: range) -> int:
    wins = 0
    for seed in seeds:
        for swap in (False, True):
            A = [make_agent(a, SPEC) for _ in range(2)]
            B = [make_agent(b, SPEC) for _ in range(2)]
            seats = [B[0], A[0], B[1], A[1]] if swap else [A[0], B[0], A[1], B[1]]
            ep = play_episode(SPEC, seats, seed)
            wins += ep.returns["player_1" if swap else "player_0"] > 0
    return wins


def test_rule_based_beats_random() -> None:
    assert _team_wins("heuristic", "random", range(3)) >= 5  # of 6
    assert _team_wins("bestp_lowv", "random", range(3)) >= 4


def test_heuristic_beats_bestp_lowv() -> None:
    assert _team_wins("heuristic", "bestp_lowv", range(3)) >= 4
