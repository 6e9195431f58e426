"""The view as text for LLMs and people; the default parser maps answers back to actions."""

from __future__ import annotations

from tom_envs.core.game import TextInterface
from tom_envs.core.skin import COLOUR_POOL, Symbols
from tom_envs.games.example.rules import COLORS
from tom_envs.games.example.view import ExampleView


class ExampleText(TextInterface[ExampleView]):
    """Rules, what happened last round, and the colours as the legal actions."""

    def rules_prompt(self, view: ExampleView) -> str:
        """The rules for this player."""
        return (
            f"You and a partner each name a colour ({', '.join(COLORS)}) at the same time, for "
            f"{view.rounds} rounds. You both score 1 point in every round where you name the same "
            "colour. You cannot talk."
        )

    def observation_text(self, view: ExampleView) -> str:
        """Round, last round's colours and the matches so far."""
        now = f"Round {view.round + 1} of {view.rounds}." if view.legal_actions else "Game over."
        last = ""
        if view.my_last is not None and view.partner_last is not None:
            last = (
                f" Last round you named {COLORS[view.my_last]} and your partner named "
                f"{COLORS[view.partner_last]}."
            )
        return f"{now}{last} Matches so far: {view.matches}."

    def action_text(self, view: ExampleView, action: int) -> str:
        """The colour's name (``"red"``)."""
        return COLORS[action]

    def skin_symbols(self) -> tuple[Symbols, ...]:
        """What a skin renames (``skin=``, :mod:`tom_envs.core.skin`): the colours."""
        return (Symbols("colour", COLORS, COLOUR_POOL),)
