"""The ``noop_action(view)`` hook (:func:`tom_envs.core.contract.noop_hook`): the move that loses a
turn under the bench's ``forfeit`` protocol, checked on every registered game.

On seeded random playthroughs, at every decision of every seat: a declared no-op is ``None`` or
a legal action of that moment (never an illegal move played for a forfeited answer), and it is
returned at some decision (the hook is not dead code). Games without a no-op declare none; the
bench's rule table (:func:`tom_experiments.bench.forfeit.rule`) says which rule each game has.
"""

from __future__ import annotations

import numpy as np
import pytest

from tom_envs.registration import GAMES
from tom_experiments.bench.forfeit import EPISODE_RULE, rule

#: The games whose rules have a move that only loses the turn, and that move's action index.
NOOP = {"CollabCapture": 0, "CollabEscape": 0, "Overcooked": 4, "CoBlock": 0, "Guandan": 0}


@pytest.mark.parametrize("spec", GAMES, ids=[g.name for g in GAMES])
def test_a_declared_noop_is_legal_whenever_it_is_returned(spec) -> None:
    hook = getattr(spec.load(), "noop_action", None)
    assert (hook is not None) == (spec.name in NOOP), spec.name
    assert (rule(spec.name) == EPISODE_RULE) == (hook is None)
    if hook is None:
        return
    returned = 0
    for seed in (0, 1):
        env = spec.load().raw_env(**spec.kwargs, max_cycles=40)
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        while env.agents and not all(env.terminations[a] or env.truncations[a] for a in env.agents):
            agent = env.agent_selection
            if env.terminations[agent] or env.truncations[agent]:
                env.step(None)
                continue
            view = env.view(agent)
            legal = tuple(view.legal_actions)
            noop = hook(view)
            if noop is not None:
                assert noop == NOOP[spec.name] and noop in legal, (spec.name, seed, noop, legal)
                returned += 1
            env.step(int(legal[int(rng.integers(len(legal)))]))
    assert returned > 0, f"{spec.name}: the no-op was never legal in two playthroughs"
