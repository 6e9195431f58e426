"""Theory-of-Mind probes for Hanabi, with ground truth from the exact card-knowledge tracking.

Literal ToM in Hanabi is knowing what each partner knows about each of their cards (paper 002's
"Bob believes his Card 0 could be ..."). The questions are yes/no, asked to the player whose turn
it is, about every card of every partner (``probes="partner"``, the default):

=================== ===== ===========================================================
kind                order question
=================== ===== ===========================================================
partner_color       1     Does Bob know the color of his Card 2?
partner_rank        1     Does Bob know the rank of his Card 2?
partner_playable    1     Does Bob know that his Card 2 can be played now?
own_color           0     Do you know the color of your Card 2?           (``"all"``)
own_rank            0     Do you know the rank of your Card 2?            (``"all"``)
partner_knows_mine  2     Does Bob know that you know the rank of your Card 2? (``"all"``)
=================== ===== ===========================================================

Knowing a colour (rank) means one plausible colour (rank) is left after the reveals; knowing a
card is playable means every plausible colour-rank combination would continue its stack now.
Reveals are public, so the second-order answer equals the introspective one: what makes it a
probe is whether the agent realises it. Questions never mention what the player cannot see.
"""

from __future__ import annotations

from tom_envs.core.probes import Probe
from tom_envs.games.hanabi.cards import bits_of, plausible_colors, plausible_ranks
from tom_envs.games.hanabi.rules import HanabiGame
from tom_envs.games.hanabi.state import HanabiState
from tom_envs.games.hanabi.text import HanabiText

YES_NO = ("yes", "no")


def _yn(flag: bool) -> str:
    return "yes" if flag else "no"


def knows_color(code: int) -> bool:
    """Exactly one colour is plausible."""
    m = plausible_colors(code)
    return m != 0 and m & (m - 1) == 0


def knows_rank(code: int) -> bool:
    """Exactly one rank is plausible."""
    m = plausible_ranks(code)
    return m != 0 and m & (m - 1) == 0


def knows_playable(code: int, fireworks: tuple[int, ...]) -> bool:
    """Every plausible colour-rank combination would continue its stack now."""
    colors = [c for c in bits_of(plausible_colors(code)) if c < len(fireworks)]
    ranks = bits_of(plausible_ranks(code))
    return bool(colors and ranks) and all(fireworks[c] == r for c in colors for r in ranks)


class HanabiProbes:
    """``(state, player) -> [Probe]`` for a configured game (the bundle's ``probes``)."""

    def __init__(self, game: HanabiGame, text: HanabiText) -> None:
        self.game = game
        self.text = text
        self.mode = game.config.probes

    def __call__(self, state: HanabiState, player: int) -> list[Probe]:
        """The probes for ``player`` now (only on their turn; none once the game is over)."""
        if self.mode == "none" or state.current != player:
            return []
        t = self.text
        n = self.game.n
        out: list[Probe] = []
        for o in range(1, n):
            seat = (player + o) % n
            name, pron = t.name(seat), t.pronoun(seat)
            for i, code in enumerate(self.game.card_knowledge(state, seat)):
                about = {"seat": seat, "offset": o, "card": i}
                out.append(
                    Probe(
                        f"p{o}.card{i}.color",
                        "partner_color",
                        1,
                        f"Does {name} know the color of {pron} Card {i}?",
                        YES_NO,
                        _yn(knows_color(code)),
                        about,
                    )
                )
                out.append(
                    Probe(
                        f"p{o}.card{i}.rank",
                        "partner_rank",
                        1,
                        f"Does {name} know the rank of {pron} Card {i}?",
                        YES_NO,
                        _yn(knows_rank(code)),
                        about,
                    )
                )
                out.append(
                    Probe(
                        f"p{o}.card{i}.playable",
                        "partner_playable",
                        1,
                        f"Does {name} know that {pron} Card {i} can be played now?",
                        YES_NO,
                        _yn(knows_playable(code, state.fireworks)),
                        about,
                    )
                )
        if self.mode == "all":
            partner = (player + 1) % n
            pname = t.name(partner)
            for i, code in enumerate(self.game.card_knowledge(state, player)):
                about = {"seat": player, "offset": 0, "card": i}
                out.append(
                    Probe(
                        f"me.card{i}.color",
                        "own_color",
                        0,
                        f"Do you know the color of your Card {i}?",
                        YES_NO,
                        _yn(knows_color(code)),
                        about,
                    )
                )
                out.append(
                    Probe(
                        f"me.card{i}.rank",
                        "own_rank",
                        0,
                        f"Do you know the rank of your Card {i}?",
                        YES_NO,
                        _yn(knows_rank(code)),
                        about,
                    )
                )
                out.append(
                    Probe(
                        f"p1.knows_me.card{i}.rank",
                        "partner_knows_mine",
                        2,
                        f"Does {pname} know that you know the rank of your Card {i}?",
                        YES_NO,
                        _yn(knows_rank(code)),
                        {**about, "asked_about": partner},
                    )
                )
        return out
