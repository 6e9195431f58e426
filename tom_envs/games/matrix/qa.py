"""CoordinationQA for the iterated matrix games: every item is a contrast set over the other
player's rule.

The asked player is seat 0; its own moves so far are those of a seeded random player. The other
player follows one deterministic rule of a stated family (:func:`rule_text`: always the same
option, the game's tit-for-tat, win-stay lose-shift, alternating, best reply to your option
counts). A *situation* is your moves so far and the round; its twins replay those same moves
against different rules of the family, so they differ only in the other player's choices (and the
totals they bring). A set keeps one twin per distinct key (a rule drawn per key, seeded by the
situation), each twin's key following from its own history: every rule of the family that
reproduces that history gives the same key. The options of every twin are the set's keys, so an
answerer that ignores the other player's choices is right on exactly one twin of each set. The
twins of a ToM or JP set also show the same surface of the other player's play (as many rounds
on each option, the same last option): counting its choices or copying its last one, the
shallow partner models, are right on one twin of each set too.

* **EC** ``score_after_two_rounds`` / ``other_score_after_two_rounds``: your (the other
  player's) total after two named joint actions, this round and the next (the running total,
  printed, plus the payoff table); the two joint actions are drawn uniformly among those that
  add something for the asked seat.
* **ToM** ``partner_next_action``: the option the other player will choose this round.
* **JP** ``best_action``: the option maximising your total over the remaining rounds against
  that player (``OptimalResponse.q_values``, exact); a twin is kept when its best option beats
  the others by at least 10% of the payoff range.

The partner-blind reasoner (``blind``) sees your moves, the round and the payoffs, never the
other player's choices or the totals; it picks the first option in canonical order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from tom_envs.games.matrix.bots import make_partner
from tom_envs.games.matrix.metrics import solver_for
from tom_envs.games.matrix.rules import MatrixConfig
from tom_envs.qa.items import QAItem, Scenario, contrast_set

GENERATOR_VERSION = 4

KINDS = {
    "early": "within the first three rounds",
    "last_rounds": "three rounds or fewer remain",
}

#: Your seat plays uniformly at random (seeded); the partner seat's actual rule is irrelevant:
#: every item replays your moves against the rules of the family.
SCENARIOS: list[dict[str, Any]] = [{"env_kwargs": {"horizon": 10}, "seats": ["random", "random"]}]
#: Questions are put to seat 0 (its moves are the situation; seat 1 is the rule-following player).
ASKED_SEATS = (0,)

#: Best actions must beat the rest by this share of the payoff range (JP unambiguity).
GAP = 0.10


def family(config: MatrixConfig) -> list[str]:
    """The deterministic rules the other player may follow (the hypothesis class items name)."""
    singles = [f"always_{a}" for a in range(config.num_actions)]
    return [*singles, "tit_for_tat", "win_stay_lose_shift", "alternating", "fictitious_play"]


def rule_text(config: MatrixConfig) -> str:
    """The family, as the question states it."""
    copy = config.preset.tit_for_tat == "copy"
    tft = (
        "copy your previous option (tit for tat)"
        if copy
        else "choose the option that beats your previous option (tit for tat)"
    )
    return (
        "The other player follows one fixed rule for the whole game, one of these: always the "
        f"same option; {tft}; keep its option after a round above its average payoff and "
        "otherwise switch to the next option (win-stay, lose-shift); cycle through the options "
        "in order (alternating); or choose the best reply to how often you have chosen each "
        "option so far. Every rule but the first opens with the first option."
    )


def tags(bundle: Any, state: Any, player: int) -> tuple[str, ...]:
    """The named filters ``state`` matches."""
    out = []
    if state.round < 3:
        out.append("early")
    if bundle.game.config.horizon - state.round <= 3:
        out.append("last_rounds")
    return tuple(out)


def play_against(config: MatrixConfig, rule: str, mine: Sequence[int]) -> tuple[list[int], Any]:
    """The rule's choices against your moves ``mine``, and its state after them."""
    policy = make_partner(rule, config, 1)
    s = policy.initial_state()
    theirs = []
    for a in mine:
        b = int(np.argmax(policy.action_probs(s)))
        theirs.append(b)
        s = policy.next_state(s, b, a)
    return theirs, s


def consistent(config: MatrixConfig, history: Sequence[tuple[int, int]]) -> list[str]:
    """The rules of the family that reproduce every choice of the other player in ``history``."""
    mine = [m for m, _ in history]
    theirs = [t for _, t in history]
    return [r for r in family(config) if play_against(config, r, mine)[0] == theirs]


def _next_action(config: MatrixConfig, rule: str, mine: Sequence[int]) -> int:
    policy = make_partner(rule, config, 1)
    _, s = play_against(config, rule, mine)
    return int(np.argmax(policy.action_probs(s)))


def _best_action(config: MatrixConfig, rule: str, mine: Sequence[int], left: int) -> int | None:
    """The unique best option over the ``left`` remaining rounds against ``rule`` (``None`` when
    the best is not ahead of every other option by :data:`GAP` of the payoff range)."""
    _, s = play_against(config, rule, mine)
    q = solver_for(config, rule, 0).q_values(left, s)
    order = np.argsort(-q, kind="stable")
    table = np.asarray(config.preset.payoffs, dtype=float)
    span = float(table.max() - table.min())
    if q[order[0]] - q[order[1]] < GAP * span:
        return None
    return int(order[0])


def _twin(scenario: Scenario, config: MatrixConfig, rule: str, mine: Sequence[int]) -> Scenario:
    theirs, _ = play_against(config, rule, mine)
    actions = tuple({0: int(a), 1: int(b)} for a, b in zip(mine, theirs, strict=True))
    seats = (scenario.seats[0] if scenario.seats else "random", rule)
    return replace(scenario, actions=actions, messages=(), seats=seats, variant=rule)


def _context(bundle: Any, state: Any) -> str:
    view = bundle.game.observe(state, 0)
    return f"{bundle.text.rules_prompt(view)}\n\n{bundle.text.observation_text(view)}"


def _set(
    bundle: Any,
    scenario: Scenario,
    mine: Sequence[int],
    rng: np.random.Generator,
    key_of: Callable[[str], Any],
    text_of: Callable[[Any], str],
    matched: bool,
) -> list[tuple[Scenario, str, Any, str]]:
    """One twin per distinct key among rules whose key follows from their own history (every
    rule reproducing it gives the same key), one rule drawn per key. With ``matched``, the
    twins also show the same surface of the other player's play: the same number of rounds on
    each option and the same last option (one such group drawn among those with two keys or
    more), so that counting its choices or reading its last one tells nothing."""
    from tom_envs.qa.items import replay

    config = bundle.game.config
    keys = {r: key_of(r) for r in family(config)}
    groups: dict[Any, dict[Any, list[str]]] = {}
    for rule, key in keys.items():
        if key is None:
            continue
        theirs, _ = play_against(config, rule, mine)
        rivals = consistent(config, list(zip(mine, theirs, strict=True)))
        if not all(keys[r] == key for r in rivals):
            continue
        surface = (
            (tuple(theirs.count(a) for a in range(config.num_actions)), theirs[-1])
            if matched
            else ()
        )
        groups.setdefault(surface, {}).setdefault(key, []).append(rule)
    usable = [g for g in sorted(groups, key=str) if len(groups[g]) >= 2]
    if not usable:
        return []
    by_key = groups[usable[int(rng.integers(len(usable)))]]
    twins = []
    for key in sorted(by_key, key=str):
        rules = by_key[key]
        rule = rules[int(rng.integers(len(rules)))]
        twin = _twin(scenario, config, rule, mine)
        _, state = replay(twin)
        twins.append((twin, _context(bundle, state), key, text_of(key)))
    return twins


def questions(bundle: Any, state: Any, player: int, scenario: Scenario) -> list[QAItem]:
    """The EC, ToM and JP contrast sets of the situation (your moves so far, this round)."""
    if player != 0 or state.round < 2 or state.round >= bundle.game.config.horizon:
        return []
    game, text = bundle.game, bundle.text
    config = game.config
    view = game.observe(state, 0)
    mine = [int(m) for m, _ in state.history]
    names = [text.action_text(view, a) for a in range(config.num_actions)]
    base = f"matrix/{scenario.game}/s{scenario.seed}/r{state.round}"
    rng = np.random.default_rng([scenario.seed, state.round, 17])
    items: list[QAItem] = []
    rules = rule_text(config)

    # EC: totals after two named joint actions (this round and the next), keyed per twin by its
    # totals; each pair of joint actions drawn uniformly among those that add something for the
    # asked seat (adding nothing, the total asked for would be the one printed)
    table = np.asarray(config.preset.payoffs, dtype=float)
    joint = [(x, y) for x in range(config.num_actions) for y in range(config.num_actions)]
    for kind, seat, who in (
        ("score_after_two_rounds", 0, "your"),
        ("other_score_after_two_rounds", 1, "the other player's"),
    ):
        if config.horizon - state.round < 2:
            break
        pairs = [(j, k) for j in joint for k in joint if table[j][seat] + table[k][seat] != 0]
        (a, b), (c, d) = pairs[int(rng.integers(len(pairs)))]

        def total(
            rule: str, seat: int = seat, add: float = table[a, b][seat] + table[c, d][seat]
        ) -> float:
            theirs, _ = play_against(config, rule, mine)
            done = sum(table[m, t][seat] for m, t in zip(mine, theirs, strict=True))
            return float(done + add)

        twins = _set(bundle, scenario, mine, rng, total, lambda v: f"{v:g}", matched=False)
        if len(twins) >= 2:
            items += contrast_set(
                base, "EC", kind,
                f"Suppose that in this round you choose {names[a]} and the other player chooses "
                f"{names[b]}, and in the next round you choose {names[c]} and it chooses "
                f"{names[d]}. What will {who} total score be after the next round?",
                "rules", twins,
            )  # fmt: skip

    twins = _set(bundle, scenario, mine, rng, lambda r: _next_action(config, r, mine),
                 lambda k: names[k], matched=True)  # fmt: skip
    if len(twins) >= 2:
        items += contrast_set(
            base, "ToM", "partner_next_action",
            f"{rules} Judging from its play so far, which option will it choose in this round?",
            "partner_policy", twins,
        )  # fmt: skip

    left = config.horizon - state.round
    twins = _set(bundle, scenario, mine, rng, lambda r: _best_action(config, r, mine, left),
                 lambda k: names[k], matched=True)  # fmt: skip
    if len(twins) >= 2:
        items += contrast_set(
            base, "JP", "best_action",
            f"{rules} Which option should you choose now to get the highest total score over "
            f"the remaining {left} rounds?",
            "exact_optimum", twins,
        )  # fmt: skip
    return items
