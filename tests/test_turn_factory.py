"""One way into an agent: every ``Turn`` the library hands an agent comes from the factory in
``tom_envs/core/agents.py`` (``make_turn``, through ``env_turn`` / ``state_turn``), so the text
layer is always attached and an agent that reads ``turn.text()`` plays wherever a turn comes from
(the driver, the RL collectors, the QA generators, wrapper agents)."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np

from tom_envs.core.agents import env_turn, state_turn

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ("tom_envs", "baselines", "llm_agents")


def _turn_calls(path: Path) -> list[tuple[int, str]]:
    """``Turn(...)`` constructor calls in ``path``: (line, enclosing function)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Turn":
                out.append((node.lineno, fn.name))
    return out


def test_only_the_factory_constructs_turns() -> None:
    found = {
        f"{path.relative_to(ROOT)}:{line} in {fn}()"
        for package in LIBRARY
        for path in sorted((ROOT / package).rglob("*.py"))
        for line, fn in _turn_calls(path)
    }
    allowed = {s for s in found if s.startswith("tom_envs/core/agents.py") and "make_turn" in s}
    assert len(allowed) == 1 and found == allowed, sorted(found - allowed)


def test_env_and_state_turns_carry_the_same_view_vector_and_text() -> None:
    from tom_envs.games.matrix.env import raw_env

    env = raw_env(game="ipd", horizon=4)
    env.reset(seed=3)
    env.step(0)
    env.step(1)  # one round played: the history is in the view, the vector and the text
    agent = env.agent_selection
    a = env_turn(env, agent, reward=2.5, decision=1)
    b = state_turn(env.bundle, env.game_state, a.player, reward=2.5, decision=1)
    assert (a.agent, a.player, a.reward, a.decision) == (b.agent, b.player, 2.5, 1)
    assert a.view == b.view and np.array_equal(a.observation, b.observation)
    assert np.array_equal(a.action_mask, b.action_mask) and a.action_mask.any()
    assert a.text() == b.text() == env.text_observation(agent)
    legal = next(iter(a.text().legal_actions.values()))
    assert a.parse(legal).action == b.parse(legal).action == env.parse_action(agent, legal).action
