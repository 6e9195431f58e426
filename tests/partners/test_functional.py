"""The functional objective ``U`` of every game (:mod:`tom_envs.core.functional`): declared by every
registered game but ``Example``, finite on a played episode, and equal to its stated formula."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from tom_envs.agents import make_agent
from tom_envs.core.contract import OPTIONAL_HOOKS
from tom_envs.core.functional import FunctionalObjective, metric_objective, return_objective
from tom_envs.driver import EpisodeDriver
from tom_envs.registration import GAMES

#: a cheap partner for each game (its first bot unless named here)
CHEAP = {"BombDefusal": "heuristic", "CoBlock": "cooperative", "Overcooked": "greedy",
         "Guandan": "random", "Hanabi": "simple"}  # fmt: skip

GAME_IDS = [g.name for g in GAMES]


def test_hook_is_optional_and_listed() -> None:
    assert "functional_objective" in OPTIONAL_HOOKS


@pytest.mark.parametrize("spec", GAMES, ids=GAME_IDS)
def test_every_game_but_example_declares_u_finite_on_a_played_episode(spec) -> None:
    mod = spec.load()
    hook = getattr(mod, "functional_objective", None)
    if spec.name == "Example":
        assert hook is None
        return
    assert callable(hook), f"{spec.name} declares no functional_objective"
    u = hook(**spec.kwargs)
    assert isinstance(u, FunctionalObjective)
    assert u.name and u.unit
    assert u.horizon is None or (isinstance(u.horizon, int) and u.horizon >= 1)
    table = mod.bot_table(**spec.kwargs)
    bot = CHEAP.get(spec.name, table.names()[0])
    n = len(spec.load().raw_env(**spec.kwargs).possible_agents)
    agents = [make_agent("random", spec)] + [make_agent(bot, spec) for _ in range(n - 1)]
    ep = EpisodeDriver(spec, agents, 0).run()
    value = u(ep, [0])
    assert math.isfinite(value)
    for name in u.components:  # the raw components are the episode's metrics
        assert name in ep.metrics


def test_formulas_on_known_episodes() -> None:
    bomb = next(g for g in GAMES if g.name == "BombDefusal").load().functional_objective()
    ep = SimpleNamespace(seed=0, returns={}, metrics={"team_score": 60.0, "rounds": 20.0})
    assert bomb(ep, [0]) == pytest.approx(60.0 - 6.0)
    assert bomb.horizon == 30
    cap = next(g for g in GAMES if g.name == "CollabCapture").load().functional_objective()
    ep = SimpleNamespace(seed=0, returns={}, metrics={"captured": 1.0, "turns": 10.0})
    assert cap(ep, [0]) == pytest.approx(1.0 - 10.0 / 31.0)
    # one capture outweighs every turn: the slowest capture beats no capture
    slow = SimpleNamespace(seed=0, returns={}, metrics={"captured": 1.0, "turns": 30.0})
    never = SimpleNamespace(seed=0, returns={}, metrics={"captured": 0.0, "turns": 0.0})
    assert cap(slow, [0]) > cap(never, [0])
    gd = next(g for g in GAMES if g.name == "Guandan").load().functional_objective()
    ep = SimpleNamespace(seed=0, returns={"player_0": 2.0, "player_1": -2.0, "player_2": 2.0,
                                          "player_3": -2.0}, metrics={})  # fmt: skip
    assert gd(ep, [0, 2]) == 2.0 and gd(ep, [1]) == -2.0
    with pytest.raises(ValueError, match="not one team"):
        gd(ep, [0, 1])


def test_missing_metric_and_bad_values_are_loud() -> None:
    u = metric_objective("x", "points", 10, "score")
    with pytest.raises(KeyError, match="no metric 'score'"):
        u(SimpleNamespace(seed=3, returns={}, metrics={}), [0])
    with pytest.raises(ValueError, match="value nan"):
        u(SimpleNamespace(seed=3, returns={}, metrics={"score": float("nan")}), [0])
    r = return_objective("r", "points", 5)
    assert r(SimpleNamespace(seed=0, returns={"player_0": 4.0}, metrics={}), 0) == 4.0
    assert r.per_step(r.regret(10.0, 4.0)) == pytest.approx(6.0 / 5)
    with pytest.raises(ValueError, match="horizon"):
        FunctionalObjective("x", "u", lambda e, f: 0.0, 0)
    with pytest.raises(ValueError, match="at least one seat"):
        r(SimpleNamespace(seed=0, returns={}, metrics={}), [])


def test_configured_hooks_are_named_documented_and_refuse_other_modules() -> None:
    from tom_envs.core.contract import configured_hook

    mod = next(g for g in GAMES if g.name == "Hanabi").load()
    for name in ("functional_objective", "action_classes"):
        hook = getattr(mod, name)
        assert hook.__name__ == name and hook.__module__ == mod.__name__ and hook.__doc__
    with pytest.raises(ValueError, match="not a game module"):
        configured_hook(mod.make_bundle, "os", "system")
    with pytest.raises(ValueError):  # the configuration is validated
        mod.functional_objective(players=9)
