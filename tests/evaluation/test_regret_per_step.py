"""The functional-ToM table's regret per step, on hand-made episodes with known values.

Regret is the best response's return to a partner minus the agent's return to it; per step, it is
divided by the agent's *own* mean episode length against that partner (at least 1).
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tom_envs.evaluation.report import functional_tom
from tom_envs.runner import Episode


def _episode(ret: float, length: int) -> Episode:
    rewards = {"player_0": ret / max(length, 1), "player_1": 0.0}
    steps = [{"agent": "player_0", "rewards": rewards} for _ in range(length)]
    return Episode("tom_envs/Example-v0", 0, {}, {}, steps, {"player_0": ret, "player_1": 0.0},
                   length=length)  # fmt: skip


def _results(episodes: dict[tuple[str, str], list[Episode]]) -> SimpleNamespace:
    game = SimpleNamespace(label="G", focal_seats=(0,))
    cells = [
        SimpleNamespace(section="functional_tom", game=game, focal=a, partner=m, id=f"{a}-{m}")
        for a, m in episodes
    ]
    return SimpleNamespace(cells=cells, episodes={f"{a}-{m}": e for (a, m), e in episodes.items()})


@pytest.mark.parametrize(
    ("a_episodes", "b_episodes", "a_regret", "a_per_step"),
    [
        # b is the best response (10); a's return 4 over its own 10 steps: 0.6 a step
        ([(4.0, 10)], [(10.0, 5)], 6.0, 0.6),
        # a's mean length over its episodes (8 and 12: 10), not b's, nor the episode count
        ([(3.0, 8), (5.0, 12)], [(10.0, 5), (10.0, 5)], 6.0, 0.6),
        # an episode of no step counts as one
        ([(0.0, 0)], [(2.0, 4)], 2.0, 2.0),
    ],
)
def test_regret_per_step(a_episodes, b_episodes, a_regret, a_per_step) -> None:
    res = _results({
        ("a", "m"): [_episode(r, n) for r, n in a_episodes],
        ("b", "m"): [_episode(r, n) for r, n in b_episodes],
    })  # fmt: skip
    table = functional_tom(res, "G", {"agents": ["a", "b"]})
    rows = {r["agent"]: r for r in table["rows"]}
    assert table["best"]["m"][1] == "best known (b)"
    assert rows["a"]["regret"] == pytest.approx(a_regret)
    assert rows["a"]["regret_per_step"] == pytest.approx(a_per_step)
    assert rows["b"]["regret"] == 0.0 and rows["b"]["regret_per_step"] == 0.0
