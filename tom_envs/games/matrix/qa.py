"""CoordinationQA for the iterated matrix games: EC from the payoff table, ToM from the partner's
finite-state policy, JP from the exact dynamic programme over that policy.

The asked player is seat 0; seat 1 is a scripted partner whose policy the question names (as the
paper's partner descriptions do), so the partner's next action and the best response are exact:

* **EC** ``score_after_joint_action``: your total after a named joint action this round (the
  payoff table applied to the running score; options: the totals of every joint action).
* **ToM** ``partner_next_action``: the action the partner's policy plays next given the history
  (deterministic partners only, so exactly one option is right).
* **JP** ``best_action``: the action maximising your expected total over the remaining rounds
  against that policy (``OptimalResponse.q_values``); kept when the best actions are separated
  from the rest by at least 10% of the payoff range.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tom_envs.games.matrix.bots import make_partner
from tom_envs.games.matrix.metrics import solver_for
from tom_envs.qa.items import ItemMaker, QAItem, Scenario

GENERATOR_VERSION = 1

KINDS = {
    "early": "within the first three rounds",
    "last_rounds": "three rounds or fewer remain",
    "partner_switched": "the partner changed its action in the last round",
}

_PARTNERS = ("tit_for_tat", "win_stay_lose_shift", "alternating", "fictitious_play", "always_0")
SCENARIOS: list[dict[str, Any]] = [
    {"env_kwargs": {"horizon": 10}, "seats": [first, partner]}
    for partner in _PARTNERS
    for first in ("random", "rmax")
]

#: Best actions must beat the rest by this share of the payoff range (JP unambiguity).
GAP = 0.10


def tags(bundle: Any, state: Any, player: int) -> tuple[str, ...]:
    """The named filters ``state`` matches."""
    out = []
    horizon = bundle.game.config.horizon
    if state.round < 3:
        out.append("early")
    if horizon - state.round <= 3:
        out.append("last_rounds")
    h = state.history
    if len(h) >= 2 and h[-1][1] != h[-2][1]:
        out.append("partner_switched")
    return tuple(out)


def _partner_state(policy: Any, history: Sequence[tuple[int, int]]) -> Any:
    s = policy.initial_state()
    for mine, theirs in history:  # (player_0, player_1) per round; the partner is player_1
        s = policy.next_state(s, theirs, mine)
    return s


def _context(bundle: Any, state: Any, player: int) -> str:
    view = bundle.game.observe(state, player)
    text = bundle.text
    return f"{text.rules_prompt(view)}\n\n{text.observation_text(view)}"


def questions(bundle: Any, state: Any, player: int, scenario: Scenario) -> list[QAItem]:
    """EC, ToM and JP items for seat 0 in ``state`` (none if seat 1 is not a scripted policy)."""
    if player != 0 or len(scenario.seats) < 2:
        return []
    game, text = bundle.game, bundle.text
    config = game.config
    try:
        policy = make_partner(scenario.seats[1], config, 1)
    except (KeyError, ValueError):
        return []
    view = game.observe(state, 0)
    actions = list(range(config.num_actions))
    names = [text.action_text(view, a) for a in actions]
    context = _context(bundle, state, 0)
    base = f"matrix/{scenario.game}/s{scenario.seed}/r{state.round}"
    make = ItemMaker(base, scenario, context)
    items: list[QAItem] = []
    payoffs = np.asarray(
        [[p[0] for p in row] for row in config.preset.payoffs], dtype=float
    )  # player_0's payoff

    # EC: the total after a hypothetical joint action (payoff table + running score)
    rng = np.random.default_rng([scenario.seed, state.round, 17])
    mine, theirs = int(rng.integers(len(actions))), int(rng.integers(len(actions)))
    now = float(state.scores[0])
    truth = now + payoffs[mine, theirs]
    opts = sorted({now + v for v in payoffs.ravel()})
    if len(opts) >= 3:
        items.append(
            make(
                "EC",
                "score_after_joint_action",
                (
                    f"Suppose that in this round you choose {names[mine]} and the other player "
                    f"chooses {names[theirs]}. What will your total score be after this round?"
                ),
                tuple(f"{v:g}" for v in opts),
                (opts.index(truth),),
                "rules",
            )
        )

    pstate = _partner_state(policy, state.history)
    probs = np.asarray(policy.action_probs(pstate))
    described = f"Your partner follows this fixed strategy: {policy.description}."
    if probs.max() == 1.0:
        nxt = int(probs.argmax())
        items.append(
            make(
                "ToM",
                "partner_next_action",
                f"{described} Which action will your partner play in the next round?",
                tuple(names),
                (nxt,),
                "partner_policy",
                details={"partner": policy.name},
            )
        )

    left = config.horizon - state.round
    if left >= 1:
        solver = solver_for(config, policy.name, 0)
        q = solver.q_values(left, pstate)
        lo, hi = game.reward_range
        best = q.max()
        gap_needed = GAP * (hi - lo)
        top = [a for a in actions if q[a] >= best - 1e-9]
        rest = [q[a] for a in actions if a not in top]
        if rest and best - max(rest) >= gap_needed:
            items.append(
                make(
                    "JP",
                    "best_action",
                    (
                        f"{described} Which action should you play now to get the highest total "
                        f"score over the remaining {left} rounds?"
                    ),
                    tuple(names),
                    tuple(top),
                    "exact_optimum",
                    details={"q_values": [float(x) for x in q], "gap": float(best - max(rest))},
                )
            )
    return items
