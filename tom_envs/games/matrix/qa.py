"""CoordinationQA for the iterated matrix games: EC from the payoff table, ToM and JP about a
partner whose rule must be inferred from its play, JP from the exact dynamic programme.

The asked player is seat 0; seat 1 is a deterministic scripted partner. Its rule is never stated:
the question names only the family of simple rules (:data:`RULES`), and an item is kept only when
every rule of that family that reproduces the other player's moves so far gives the same key.

* **EC** ``score_after_joint_action`` / ``other_score_after_joint_action``: your (the other
  player's) total after a named joint action this round (payoff table + running score);
  ``best_reply``: your best option this round against a named option of the other player.
* **ToM** ``partner_next_action``: the option the other player will choose this round.
* **JP** ``best_action``: the option maximising your expected total over the remaining rounds
  against that partner (``OptimalResponse.q_values``); kept when the best options are separated
  from the rest by at least 10% of the payoff range.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tom_envs.games.matrix.bots import make_partner, partner_names
from tom_envs.games.matrix.metrics import solver_for
from tom_envs.qa.items import ItemMaker, QAItem, Scenario

GENERATOR_VERSION = 2

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


#: The hypothesis class a ToM / JP question names: the suite's deterministic partner rules.
RULES = (
    "always the same option; copy your previous option (tit for tat); keep its option after a good "
    "round and switch after a bad one (win-stay, lose-shift); alternate between options; or "
    "choose the best reply to how often you have chosen each option so far"
)


def _partner_state(policy: Any, history: Sequence[tuple[int, int]]) -> Any:
    s = policy.initial_state()
    for mine, theirs in history:  # (player_0, player_1) per round; the partner is player_1
        s = policy.next_state(s, theirs, mine)
    return s


def _context(bundle: Any, state: Any, player: int) -> str:
    view = bundle.game.observe(state, player)
    text = bundle.text
    return f"{text.rules_prompt(view)}\n\n{text.observation_text(view)}"


def candidates(config: Any, history: Sequence[tuple[int, int]]) -> list[str]:
    """The deterministic partner rules that reproduce every action of the other player in
    ``history`` (what the asked player can infer from the rounds it saw)."""
    out = []
    for name in partner_names(config):
        if name == "random":
            continue
        policy = make_partner(name, config, 1)
        s, ok = policy.initial_state(), True
        for mine, theirs in history:
            if policy.action_probs(s)[theirs] != 1.0:
                ok = False
                break
            s = policy.next_state(s, theirs, mine)
        if ok:
            out.append(name)
    return out


def _next_action(config: Any, name: str, history: Sequence[tuple[int, int]]) -> int | None:
    policy = make_partner(name, config, 1)
    probs = np.asarray(policy.action_probs(_partner_state(policy, history)))
    return int(probs.argmax()) if probs.max() == 1.0 else None


def _best_set(config: Any, name: str, history: Sequence[tuple[int, int]], left: int, gap: float):
    policy = make_partner(name, config, 1)
    q = solver_for(config, policy.name, 0).q_values(left, _partner_state(policy, history))
    top = tuple(a for a in range(config.num_actions) if q[a] >= q.max() - 1e-9)
    rest = [q[a] for a in range(config.num_actions) if a not in top]
    if not rest or q.max() - max(rest) < gap:
        return None, q
    return top, q


def answerable(bundle: Any, state: Any, item: QAItem) -> bool:
    """EC items read the payoff table and the totals, all printed. ToM and JP items are keyed by
    the partner actually played; they are answerable only when every rule of :data:`RULES` that
    reproduces the other player's moves so far (at least two rounds) gives the same key."""
    if item.type == "EC":
        return True
    config = bundle.game.config
    view = bundle.game.observe(state, 0)
    history = list(view.history)
    if len(history) < 2 or view.first_round != 1:  # the whole history must be on screen
        return False
    names = candidates(config, history)
    if not names:
        return False
    options = [bundle.text.action_text(view, a) for a in range(config.num_actions)]
    want = {item.options[a] for a in item.answers}
    for name in names:
        if item.kind == "partner_next_action":
            a = _next_action(config, name, history)
            if a is None or {options[a]} != want:
                return False
        else:
            lo, hi = bundle.game.reward_range
            top, _ = _best_set(config, name, history, config.horizon - state.round, GAP * (hi - lo))
            if top is None or {options[a] for a in top} != want:
                return False
    return True


def questions(bundle: Any, state: Any, player: int, scenario: Scenario) -> list[QAItem]:
    """EC, ToM and JP items for seat 0 in ``state`` (none if seat 1 is not a scripted policy)."""
    if player != 0 or len(scenario.seats) < 2:
        return []
    game, text = bundle.game, bundle.text
    config = game.config
    partner = scenario.seats[1]
    if partner not in partner_names(config) or partner == "random":
        return []
    view = game.observe(state, 0)
    actions = list(range(config.num_actions))
    names = [text.action_text(view, a) for a in actions]
    context = _context(bundle, state, 0)
    base = f"matrix/{scenario.game}/s{scenario.seed}/r{state.round}"
    make = ItemMaker(base, scenario, context)
    items: list[QAItem] = []
    payoffs = np.asarray([[p[0] for p in row] for row in config.preset.payoffs], dtype=float)
    theirs_pay = np.asarray([[p[1] for p in row] for row in config.preset.payoffs], dtype=float)

    # EC: totals after a hypothetical joint action, and the best reply to a named action
    rng = np.random.default_rng([scenario.seed, state.round, 17])
    mine, theirs = int(rng.integers(len(actions))), int(rng.integers(len(actions)))
    for kind, table, score, who in (
        ("score_after_joint_action", payoffs, float(state.scores[0]), "your"),
        (
            "other_score_after_joint_action",
            theirs_pay,
            float(state.scores[1]),
            "the other player's",
        ),
    ):
        truth = score + table[mine, theirs]
        opts = sorted({score + v for v in table.ravel()})
        if len(opts) >= 3:
            items.append(
                make(
                    "EC",
                    kind,
                    (
                        f"Suppose that in this round you choose {names[mine]} and the other player "
                        f"chooses {names[theirs]}. What will {who} total score be after this round?"
                    ),
                    tuple(f"{v:g}" for v in opts),
                    (opts.index(truth),),
                    "rules",
                )
            )
    other = int(rng.integers(len(actions)))
    col = payoffs[:, other]
    top = tuple(a for a in actions if col[a] == col.max())
    if len(top) < len(actions):
        items.append(
            make(
                "EC",
                "best_reply",
                (
                    f"If the other player chooses {names[other]} in this round, which option "
                    "gives you the most points in this round?"
                ),
                tuple(names),
                top,
                "rules",
            )
        )

    rules = f"The other player follows one fixed rule for the whole game: {RULES}."
    nxt = _next_action(config, partner, state.history)
    if nxt is not None:
        items.append(
            make(
                "ToM",
                "partner_next_action",
                f"{rules} Judging from its play so far, which option will it choose in this round?",
                tuple(names),
                (nxt,),
                "partner_policy",
                details={"partner": partner},
            )
        )

    left = config.horizon - state.round
    if left >= 1:
        lo, hi = game.reward_range
        best, q = _best_set(config, partner, state.history, left, GAP * (hi - lo))
        if best is not None:
            items.append(
                make(
                    "JP",
                    "best_action",
                    (
                        f"{rules} Which option should you choose now to get the highest total "
                        f"score over the remaining {left} rounds?"
                    ),
                    tuple(names),
                    best,
                    "exact_optimum",
                    details={"partner": partner, "q_values": [float(x) for x in q]},
                )
            )
    return items
