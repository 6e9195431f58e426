"""Exact parity with overcooked-ai 1.1.0 on recorded answers: runs everywhere, CI included.

``overcooked_ai_replays.json.gz`` holds joint action sequences (uniformly random ones, and noisy
greedy bots that cook, collide, use counters and deliver, from random start cells) on all five
layouts with both cooking rules, 10 episodes of each kind, with overcooked-ai's answers: a digest
of every state, a digest of both players' lossless observations at every step, and the rewards.
Our rules replay the same actions and must give the same digests and rewards. The file was made
with the peer installed (``python -m tom_envs.games.overcooked.parity FILE 10``); the live
comparison, when the peer's venv exists, is ``test_parity.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tom_envs.games.overcooked.layout import LAYOUT_NAMES
from tom_envs.games.overcooked.parity import (
    Replay,
    first_difference,
    load_peer_answers,
    replay_ours,
)
from tom_envs.games.overcooked.rules import OvercookedConfig

CASES = load_peer_answers(Path(__file__).with_name("overcooked_ai_replays.json.gz"))


def test_record_covers_every_layout_and_cooking_rule() -> None:
    assert {(c["layout"], c["cooking"]) for c in CASES} == {
        (layout, cooking) for layout in LAYOUT_NAMES for cooking in ("auto", "interact")
    }
    for case in CASES:
        kinds = [e["random_start"] for e in case["episodes"]]
        assert kinds.count(True) == kinds.count(False) == 10


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['layout']}-{c['cooking']}")
def test_recorded_overcooked_ai_answers(case) -> None:
    config = OvercookedConfig(layout=case["layout"], cooking=case["cooking"])
    assert case["terrain"] == list(config.kitchen.grid)
    assert [tuple(p) for p in case["starts"]] == list(config.kitchen.starts)
    delivered = 0.0
    for ep in case["episodes"]:
        cfg = OvercookedConfig(
            layout=case["layout"], cooking=case["cooking"], random_start=ep["random_start"]
        )
        ours = replay_ours(cfg, [tuple(a) for a in ep["actions"]], ep["start"], obs=True)
        theirs = Replay(ep["rewards"], ep["digest"], ep["obs_digest"])
        assert first_difference(ours, theirs) is None, first_difference(ours, theirs)
        assert len(ours.rewards) == cfg.horizon
        delivered += sum(ours.rewards)
    assert delivered > 0  # the greedy episodes cook and deliver: the check covers soups


def test_a_changed_rule_is_caught() -> None:
    """The recorded digests are sensitive: one action changed, the digest no longer matches."""
    case = CASES[0]
    ep = case["episodes"][1]
    cfg = OvercookedConfig(
        layout=case["layout"], cooking=case["cooking"], random_start=ep["random_start"]
    )
    actions = [tuple(a) for a in ep["actions"]]
    actions[5] = ((actions[5][0] + 1) % 6, actions[5][1])
    ours = replay_ours(cfg, actions, ep["start"], obs=True)
    assert first_difference(ours, Replay(ep["rewards"], ep["digest"], ep["obs_digest"]))
