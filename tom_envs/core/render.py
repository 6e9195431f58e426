"""ANSI rendering: what a spectator sees (every seat's view, one after another)."""

from __future__ import annotations

from typing import Any

from tom_envs.core.game import GameBundle


def spectator_text(bundle: GameBundle, state: Any) -> str:
    """The whole state as text: the game's own ``render_state`` if it has one, else every view."""
    render_state = getattr(bundle.text, "render_state", None)
    if render_state is not None:
        return str(render_state(state))
    parts = []
    for i, agent in enumerate(bundle.agents):
        view = bundle.game.observe(state, i)
        parts.append(f"== {agent} ==\n{bundle.text.observation_text(view)}")
    return "\n".join(parts)
