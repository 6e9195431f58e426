"""Partner bots, in the one bot-table format every game uses: ``bot_table(**config)``.

| name | rule |
|---|---|
| ``copycat`` | names the colour its partner named last round (red first): it models its partner |
| ``stubborn`` | always names red |
"""

from __future__ import annotations

from typing import Any

from tom_envs.core.agents import BaseAgent, Turn
from tom_envs.core.contract import Bot, BotTable


class CopyCat(BaseAgent):
    """Names the partner's last colour (red in the first round)."""

    name = "copycat"

    def act(self, turn: Turn) -> int:
        """Read the partner's last colour from the view."""
        last = turn.view.partner_last
        return 0 if last is None else int(last)


class Stubborn(BaseAgent):
    """Always red."""

    name = "stubborn"

    def act(self, turn: Turn) -> int:
        """Colour 0."""
        return 0


def bot_table(**config: Any) -> BotTable:
    """The bots (the same for every configuration) and the population ``all``."""
    bots = (
        Bot("copycat", lambda bundle: CopyCat(), "names the colour its partner named last round"),
        Bot("stubborn", lambda bundle: Stubborn(), "always names red"),
    )
    return BotTable(bots, {"all": ("copycat", "stubborn")}, game="Example")
