"""The view: everything is visible (Overcooked is fully observable), egocentrically ordered."""

from __future__ import annotations

import numpy as np
import pytest

from tom_envs.games.overcooked.view import view_state

from .helpers import game


def test_views_hold_the_whole_state_me_first() -> None:
    g = game("forced_coordination")
    rng = np.random.default_rng(0)
    s = g.initial_state(rng)
    for a in rng.integers(6, size=(60, 2)):
        s, _, _ = g.transition(s, int(a[0]), int(a[1]))
        for p in (0, 1):
            v = g.observe(s, p)
            assert v.me == s.chefs[p] and v.partner == s.chefs[1 - p]
            assert v.chefs == s.chefs
            assert view_state(v) == s  # nothing is hidden, nothing is added
            assert v.legal_actions == tuple(range(6)) and v.horizon == 400


def test_observe_refuses_other_seats() -> None:
    g = game()
    with pytest.raises(ValueError):
        g.observe(g.initial_state(np.random.default_rng(0)), 2)
