"""Partner bots for Hanabi, over the player view; every seat, every player count.

| name | strategy | 2-player self-play |
|---|---|---|
| ``random`` | a uniformly random legal move | ~0 (random play loses its lives) |
| ``simple`` | plays a card its reveals prove playable; else reveals to a partner a playable card they do not know about (the rank first, then the colour); else discards its oldest unrevealed card (or, with all tokens in the box, reveals) | see docs/results/hanabi.md |
| ``convention`` | SmartBot's conventions (play clues on the newest touched card, warnings on the next discard, discard finesse), :mod:`tom_envs.games.hanabi.smartbot` | see docs/results/hanabi.md |

The scores are measured by ``tom-envs reproduce hanabi`` (1,000 seeds per pairing).
"""

from __future__ import annotations

from typing import Any

from tom_envs.core.agents import Agent, BaseAgent, RandomAgent, Turn
from tom_envs.core.contract import Bot, BotTable
from tom_envs.core.game import GameBundle
from tom_envs.games.hanabi.cards import (
    COLOR_REVEALED,
    RANK_REVEALED,
    KnowledgeLayout,
    plausible_colors,
    plausible_ranks,
)
from tom_envs.games.hanabi.probes import knows_playable
from tom_envs.games.hanabi.rules import (
    HanabiConfig,
)
from tom_envs.games.hanabi.smartbot import ConventionBot
from tom_envs.games.hanabi.view import HanabiView


class SimpleBot(BaseAgent):
    """Play what the reveals prove playable, reveal playable cards, discard the oldest unrevealed
    card. Deterministic; reads only the view."""

    name = "simple"

    def __init__(self, config: HanabiConfig) -> None:
        super().__init__()
        self.game_config = config
        self.layout = KnowledgeLayout(config.colors, config.ranks)

    def act(self, turn: Turn) -> int:
        """The first rule that applies (see the class docstring)."""
        view: HanabiView = turn.view
        cfg = self.game_config
        h, r = cfg.cards_per_hand, cfg.ranks
        legal = view.legal_actions
        mine = self.layout.codes(view.knowledge[0], view.my_hand_size)
        for i, code in enumerate(mine):
            if knows_playable(code, view.fireworks):
                return h + i
        if view.information_tokens > 0:
            for o in range(1, view.num_players):
                theirs = self.layout.codes(view.knowledge[o], view.hand_size(o))
                for i, card in enumerate(view.hands[o - 1]):
                    color, rank = divmod(card, r)
                    if view.fireworks[color] != rank:
                        continue
                    code = theirs[i]
                    if knows_playable(code, view.fireworks):
                        continue
                    ranks_known = plausible_ranks(code) == 1 << rank
                    colors_known = plausible_colors(code) == 1 << color
                    if not ranks_known:
                        return 2 * h + (view.num_players - 1) * cfg.colors + (o - 1) * r + rank
                    if not colors_known:
                        return 2 * h + (o - 1) * cfg.colors + color
        if view.information_tokens < cfg.max_information_tokens:
            for i, code in enumerate(mine):
                if not code & (COLOR_REVEALED | RANK_REVEALED):
                    return i
            return 0
        reveals = [a for a in legal if a >= 2 * h]
        return reveals[0] if reveals else legal[0]


def _named(agent: Agent, name: str) -> Agent:
    agent.name = name  # type: ignore[attr-defined]
    return agent


def _config(bundle: GameBundle) -> HanabiConfig:
    return bundle.game.config  # type: ignore[attr-defined,no-any-return]


def bot_table(**config: Any) -> BotTable:
    """The bots (the same for every configuration) and the populations ``all`` and
    ``scripted``."""
    bots = (
        Bot("random", lambda bundle: _named(RandomAgent(), "random"),
            "uniformly random legal moves"),
        Bot("simple", lambda bundle: _named(SimpleBot(_config(bundle)), "simple"),
            "plays cards its reveals prove playable, reveals playable cards, discards the oldest "
            "unrevealed card"),
        Bot("convention", lambda bundle: _named(ConventionBot(_config(bundle)), "convention"),
            "SmartBot's conventions (O'Dwyer): play clues, valuable-card warnings, discard "
            "finesse"),
    )  # fmt: skip
    populations = {"all": ("random", "simple", "convention"), "scripted": ("simple", "convention")}
    return BotTable(bots, populations, game="Hanabi")
