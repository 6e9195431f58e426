"""The functional-ToM table's regret per step, on hand-made episodes with known values.

Regret is the reference's value against a partner (here an exact optimum the episodes carry)
minus the agent's return to it; per step, it is divided by the agent's *own* mean episode length
against that partner (at least 1). The reference never comes from the evaluated agents.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tom_envs.evaluation.report import functional_tom
from tom_envs.registration import game_spec
from tom_envs.runner import Episode


def _episode(ret: float, length: int, seed: int = 0, optimum: float | None = 10.0) -> Episode:
    rewards = {"player_0": ret / max(length, 1), "player_1": 0.0}
    steps = [{"agent": "player_0", "rewards": rewards} for _ in range(length)]
    metrics = {} if optimum is None else {"optimal_return": optimum}
    return Episode("tom_envs/Example-v0", seed, {}, {}, steps, {"player_0": ret, "player_1": 0.0},
                   length=length, metrics=metrics)  # fmt: skip


def _results(episodes: dict[tuple[str, str], list[Episode]]) -> SimpleNamespace:
    game = SimpleNamespace(label="G", game="Example", focal_seats=(0,), partner_seats=(1,),
                           num_players=2, kwargs={}, spec=game_spec("Example"))  # fmt: skip
    cells = [
        SimpleNamespace(section="functional_tom", game=game, focal=a, partner=m, id=f"{a}-{m}")
        for a, m in episodes
    ]
    return SimpleNamespace(cells=cells, episodes={f"{a}-{m}": e for (a, m), e in episodes.items()})


@pytest.mark.parametrize(
    ("a_episodes", "b_episodes", "a_regret", "a_per_step"),
    [
        # the exact optimum is 10 (b reaches it); a's return 4 over its own 10 steps: 0.6 a step
        ([(4.0, 10)], [(10.0, 5)], 6.0, 0.6),
        # a's mean length over its episodes (8 and 12: 10), not b's, nor the episode count
        ([(3.0, 8), (5.0, 12)], [(10.0, 5), (10.0, 5)], 6.0, 0.6),
        # an episode of no step counts as one
        ([(0.0, 0)], [(2.0, 4)], 10.0, 10.0),
    ],
)
def test_regret_per_step(a_episodes, b_episodes, a_regret, a_per_step) -> None:
    res = _results({
        ("a", "m"): [_episode(r, n, seed) for seed, (r, n) in enumerate(a_episodes)],
        ("b", "m"): [_episode(r, n, seed) for seed, (r, n) in enumerate(b_episodes)],
    })  # fmt: skip
    table = functional_tom(res, "G", {"agents": ["a", "b"]})
    rows = {r["agent"]: r for r in table["rows"]}
    assert table["best"]["m"][:2] == (10.0, "exact")
    assert rows["a"]["regret"] == pytest.approx(a_regret)
    assert rows["a"]["regret_per_step"] == pytest.approx(a_per_step)
    b_mean = sum(r for r, _ in b_episodes) / len(b_episodes)
    assert rows["b"]["regret"] == pytest.approx(10.0 - b_mean)


def test_the_reference_never_comes_from_the_evaluated_agents() -> None:
    """Without an optimum, a solver or declared candidates there is no reference (n/a): the
    best evaluated agent is never promoted to one, and an agent that beats everything changes
    nothing."""
    eps = {("a", "m"): [_episode(4.0, 10, optimum=None)],
           ("b", "m"): [_episode(10.0, 5, optimum=None)]}  # fmt: skip
    table = functional_tom(_results(eps), "G", {"agents": ["a", "b"]})
    assert table["best"] == {} and table["references"] == {"m": None}
    assert all(r["regret"] is None and r["best_kind"] == "n/a" for r in table["rows"])
    # with an exact optimum, adding a (physically impossible) agent above it changes no reference
    with_opt = {("a", "m"): [_episode(4.0, 10)], ("b", "m"): [_episode(10.0, 5)]}
    before = functional_tom(_results(with_opt), "G", {"agents": ["a", "b"]})
    after = functional_tom(_results({**with_opt, ("super", "m"): [_episode(99.0, 5)]}), "G",
                           {"agents": ["a", "b", "super"]})  # fmt: skip
    assert before["best"] == after["best"]
    rows = {r["agent"]: r for r in after["rows"]}
    assert rows["a"]["regret"] == pytest.approx(6.0)
    assert rows["super"]["regret"] == pytest.approx(-89.0)  # printed negative, never adopted
