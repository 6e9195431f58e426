"""Exact parity with overcooked-ai 1.1.0, run when its venv exists (see shared/specs/peers.md).

The same joint action sequences (uniformly random ones, and greedy bots with random noise, which
cook, collide, use counters and deliver, from random start cells) are replayed by our rules and by
overcooked-ai in its own venv (``benchmarks/peers/overcooked_ai_replay.py``, one process for the
whole test); every state, every reward and both players' lossless observations must be identical
at every step, on all five layouts, with both cooking rules. ``TOM_ENVS_OVERCOOKED_PARITY=N``
plays N episodes of each kind instead of 1; the 1,000-episode run is in
``docs/results/overcooked_benchmarks.md`` (``python benchmarks/overcooked.py parity``).
``TOM_ENVS_NO_PEERS=1`` skips it even when the peer is installed.
"""

from __future__ import annotations

import os
from itertools import product

import pytest

from tom_envs.games.overcooked.layout import LAYOUT_NAMES
from tom_envs.games.overcooked.parity import (
    first_difference,
    greedy_policy,
    peer_available,
    record_episode,
    replay_many_in_peer,
    replay_ours,
    uniform_policy,
)
from tom_envs.games.overcooked.rules import OvercookedConfig

AVAILABLE, REASON = peer_available() if os.environ.get("TOM_ENVS_NO_PEERS") != "1" else (
    False, "TOM_ENVS_NO_PEERS=1")  # fmt: skip
pytestmark = pytest.mark.skipif(not AVAILABLE, reason=REASON)
EPISODES = int(os.environ.get("TOM_ENVS_OVERCOOKED_PARITY", "1"))
CASES = list(product(LAYOUT_NAMES, ("auto", "interact")))


@pytest.fixture(scope="module")
def replays():
    """Our episodes and the peer's answers, per (layout, cooking)."""
    batches, ours = [], {}
    for layout, cooking in CASES:
        episodes = []
        for n in range(EPISODES):
            for kind in ("uniform", "greedy"):
                config = OvercookedConfig(layout=layout, cooking=cooking,
                                          random_start=kind == "greedy")  # fmt: skip
                policy = greedy_policy(config, 0.1) if kind == "greedy" else uniform_policy
                actions, start = record_episode(config, policy, seed=1000 * n + len(episodes))
                episodes.append((config, {"actions": actions, "start": start, "trace": True}))
        ours[(layout, cooking)] = episodes
        batches.append((OvercookedConfig(layout=layout, cooking=cooking), [e for _, e in episodes]))
    answers = replay_many_in_peer(batches, obs=True)
    return {case: (ours[case], answers[i]) for i, case in enumerate(CASES)}


@pytest.mark.parametrize(("layout", "cooking"), CASES)
def test_same_actions_same_states_rewards_and_observations(replays, layout, cooking) -> None:
    episodes, (header, theirs) = replays[(layout, cooking)]
    config = OvercookedConfig(layout=layout, cooking=cooking)
    assert header["terrain"] == list(config.kitchen.grid)
    assert [tuple(p) for p in header["starts"]] == list(config.kitchen.starts)
    delivered = 0.0
    for (cfg, ep), peer in zip(episodes, theirs, strict=True):
        ours = replay_ours(cfg, ep["actions"], ep["start"], obs=True, trace=True)
        assert first_difference(ours, peer) is None, first_difference(ours, peer)
        assert len(ours.rewards) == cfg.horizon
        delivered += sum(ours.rewards)
    assert delivered > 0
