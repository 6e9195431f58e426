"""The ``forfeit`` illegal-answer protocol (``tom-envs bench --on-invalid forfeit``).

An illegal answer (one the game's parser cannot read as a legal action) costs the agent its move:

* **the turn**, where the game declares a no-op legal at that moment (its ``noop_action(view)``
  hook, :func:`tom_envs.core.contract.noop_hook`): the seat plays it, recorded as a forfeited
  turn (``"forfeit": "turn"`` in the step; never counted as a fallback);
* **the episode** (Kaggle's rule: an illegal move loses the game), where it has none (the matrix
  games, Hanabi, bomb defusal, Guandan when its seat leads the trick): nothing is played, the
  episode ends there (``"forfeit": "episode"``), and the bench scores it at the game's low anchor
  (the random pair's return: normalised 0), whatever the return so far.

The LLM agent asks for it with ``fallback=forfeit`` (the bench sets ``invalid=forfeit``,
``reprompts=0``, ``fallback=forfeit``); the episode driver applies the game's rule
(:meth:`tom_envs.driver.EpisodeDriver._forfeit`). Failures that are not answers (an endpoint
down, an exception) still fall back at random and are counted as fallbacks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: What :func:`rule` says of a game without a no-op.
EPISODE_RULE = "episode: no move loses a turn, so an illegal answer loses the episode (scored 0)"


def rule(game: str) -> str:
    """What an illegal answer costs in ``game`` under ``forfeit`` (its no-op hook's words)."""
    from tom_envs.registration import game_spec

    hook = getattr(game_spec(game).load(), "noop_action", None)
    if hook is None:
        return EPISODE_RULE
    what = getattr(hook, "what", "the game's no-op")
    return (
        f"turn: the seat plays the no-op ({what}); where it is not legal at that moment, the "
        "episode is lost (scored 0)"
    )


def rules_of(games: list[str]) -> dict[str, str]:
    """:func:`rule` of every game (the row's ``protocol.forfeit_rules``)."""
    return {g: rule(g) for g in games}


def scored(nums: dict[str, float], anchor: Any) -> dict[str, float]:
    """An episode's numbers as the bench scores them: a forfeited episode's return is the game's
    low anchor (what it played before is kept as ``return_played``)."""
    if nums.get("forfeit_episode") and anchor is not None:
        return {**nums, "return_played": nums["return"], "return": float(anchor.low)}
    return nums


def forfeits_of(ep: Any, agent: str) -> int:
    """The decisions ``agent`` forfeited in an episode (turns and the episode)."""
    m = ep.metrics
    return int(m.get(f"forfeit_turns/{agent}", 0) + m.get(f"forfeit_episode/{agent}", 0))


def forfeited(step: Mapping[str, Any]) -> str | None:
    """``"turn"``, ``"episode"`` or None: what a recorded step forfeited."""
    value = step.get("forfeit")
    return value if value in ("turn", "episode") else None


__all__ = ["EPISODE_RULE", "forfeited", "forfeits_of", "rule", "rules_of", "scored"]
