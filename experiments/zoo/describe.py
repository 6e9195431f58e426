"""One-line descriptions of zoo members, generated from their play (design #35, section 4.2).

A member plays every seat (self-play) on fixed seeds; each decision's action text (what the game
shows a player, e.g. ``"J. Play my Card 2"``, ``"move up"``, ``"Press button in room 9"``) is
reduced to its action class by :func:`action_class` (its verb; Hanabi's hints split into colour
and rank), and the line reports the class frequencies, the class whose frequency differs most
between the seats (a division of labour, when there is one), and the team's mean outcome. Nothing
is hand-written, so a description cannot flatter the member.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

#: The seeds descriptions are generated on (never the cross-play or evaluation seeds).
DESCRIBE_SEEDS = tuple(range(900_000, 900_020))
_PREFIX = re.compile(r"^[A-Z]{1,2}\.\s+")  # Hanabi's option letters: "J. Play my Card 2"


def action_class(text: str) -> str:
    """The class of an action from its text: its first word, lower case (``move``, ``stay``,
    ``interact``, ``press``, ``fix``, ``play``, ``discard``, ``apply``...); Hanabi's
    ``Reveal ... color`` / ``rank`` become ``hint colour`` / ``hint rank``."""
    words = _PREFIX.sub("", str(text)).strip().lower().split()
    if not words:
        return "?"
    if words[0] == "reveal":
        return "hint colour" if ("color" in words or "colour" in words) else "hint rank"
    return words[0]


def class_counts(episodes: Sequence[Any]) -> dict[str, Counter[str]]:
    """Per seat, how often each action class was chosen (the agent's own decisions only)."""
    out: dict[str, Counter[str]] = {}
    for ep in episodes:
        for step in ep.steps:
            if step.get("fallback"):
                continue
            out.setdefault(str(step["agent"]), Counter())[action_class(step["action_text"])] += 1
    return out


def summary_line(per_seat: dict[str, Counter[str]], outcome: str) -> str:
    """``"move 61%, interact 27%, stay 12%; player_1 interacts more (35% vs 19%); score 240.0"``."""
    total: Counter[str] = Counter()
    for counts in per_seat.values():
        total.update(counts)
    n = sum(total.values()) or 1
    shares = ", ".join(f"{c} {100 * k / n:.0f}%" for c, k in total.most_common(5))
    parts = [shares]
    if len(per_seat) > 1:
        best: tuple[float, str, str, float, float] | None = None
        for cls in total:
            freq = {s: c[cls] / max(1, sum(c.values())) for s, c in per_seat.items()}
            hi, lo = max(freq, key=lambda s: freq[s]), min(freq, key=lambda s: freq[s])
            gap = freq[hi] - freq[lo]
            if best is None or gap > best[0]:
                best = (gap, cls, hi, freq[hi], freq[lo])
        if best is not None and best[0] >= 0.05:
            gap, cls, seat, f_hi, f_lo = best
            parts.append(f"{seat} does '{cls}' most ({100 * f_hi:.0f}% vs {100 * f_lo:.0f}%)")
        else:
            parts.append("seats alike")
    parts.append(outcome)
    return "; ".join(parts)


def describe(seat: str, game: str, env_kwargs: dict[str, Any] | None = None,
             seeds: Sequence[int] = DESCRIBE_SEEDS, trusted: bool = False) -> str:  # fmt: skip
    """The generated line for the agent spec ``seat`` (a zoo member's ``zoo/ppo_s0`` or bot name,
    or ``checkpoint:path=...`` while building, with ``trusted=True``) playing every seat of
    ``game`` (self-play) on ``seeds``."""
    from tom_envs.agents import make_agent
    from tom_envs.registration import game_spec
    from tom_envs.runner import play_episode
    from tom_experiments.zoo.crossplay import SECONDARY, objective

    spec = game_spec(game)
    kwargs = dict(env_kwargs or {})
    n = int(spec.load().make_bundle(**{**spec.kwargs, **kwargs}).game.num_players)
    agents = [make_agent(seat, spec, trusted=trusted) for _ in range(n)]
    episodes = [play_episode(spec, agents, int(s), kwargs) for s in seeds]
    metric, _ = objective(spec.name)
    if metric in episodes[0].metrics:
        outcome = f"{metric} {np.mean([ep.metrics[metric] for ep in episodes]):.1f}"
    else:
        outcome = f"return {np.mean([np.mean(list(ep.returns.values())) for ep in episodes]):.1f}"
    second = SECONDARY.get(spec.name)
    if second and second in episodes[0].metrics:
        outcome += f", {second} {np.mean([ep.metrics[second] for ep in episodes]):.2f}"
    return summary_line(class_counts(episodes), f"self-play {outcome}")


__all__ = ["DESCRIBE_SEEDS", "action_class", "class_counts", "describe", "summary_line"]
