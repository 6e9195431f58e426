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

The probes are asked at the player's decision (the default moment), from the observation it acts
on. An agent receives the text, the options and the subject (the partner's name and the card
index). The partner-blind answer (``Probe.no_tom``, the known group that reasons about the cards
but ignores what the partner was told) is what the asker itself knows: it sees a partner's card,
so it "knows" its colour and rank, and it knows the card is playable exactly when it is; about its
own cards its knowledge is the truth. So ``partner_knows_mine`` (whose truth is the asker's own
knowledge) cannot separate the known groups: the reports mark it as no ToM measure.

Validity: these probes **fail** the learned-adversary gate (``tom-envs probes verify --game
Hanabi``; ``docs/results/hanabi_probes.md``). Every card of every partner is asked about, so the
card's slot and the number of questions in the step are surface cues that predict the truth
(older cards have had more reveals): a no-reasoning adversary reaches 58-64% balanced accuracy on
``partner_color`` and ``partner_rank`` against chance 50%, on held-out missions and on a fresh
seed. ``partner_playable`` is at chance for the adversary but its partner-blind answerer is not
(mostly "no"). Until the construction chooses which cards are asked about so that no surface
property carries the answer, report these accuracies only beside that adversary's score.
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


def _playable(card: int, ranks: int, fireworks: tuple[int, ...]) -> bool:
    """Whether ``card`` (``colour * ranks + rank``) would continue its stack now."""
    color, rank = divmod(card, ranks)
    return color < len(fireworks) and fireworks[color] == rank


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
        out = self._partner_probes(state, player)
        if self.mode == "all":
            out += self._own_probes(state, player)
        return out

    def _partner_probes(self, state: HanabiState, player: int) -> list[Probe]:
        """What each teammate knows about each of their cards (colour, rank, playable now)."""
        t = self.text
        n = self.game.n
        out: list[Probe] = []
        for o in range(1, n):
            seat = (player + o) % n
            name, pron = t.name(seat), t.pronoun(seat)
            hand = state.hands[seat]
            for i, code in enumerate(self.game.card_knowledge(state, seat)):
                about = {"seat": seat, "offset": o, "card": i}
                subject = {"target": name, "card": i}
                playable = _yn(_playable(hand[i], self.game.ranks, state.fireworks))
                for key, qtype, what, truth, no_tom in (
                    ("color", "partner_color", "the color of", knows_color(code), "yes"),
                    ("rank", "partner_rank", "the rank of", knows_rank(code), "yes"),
                    ("playable", "partner_playable", "that",
                     knows_playable(code, state.fireworks), playable),
                ):  # fmt: skip
                    # colour and rank: "yes" without ToM, the asker sees the card
                    tail = " can be played now" if key == "playable" else ""
                    out.append(
                        Probe(
                            f"p{o}.card{i}.{key}",
                            qtype,
                            1,
                            f"Does {name} know {what} {pron} Card {i}{tail}?",
                            YES_NO,
                            _yn(truth),
                            about,
                            no_tom=no_tom,
                            subject=subject,
                        )
                    )
        return out

    def _own_probes(self, state: HanabiState, player: int) -> list[Probe]:
        """What the asker knows of their own cards, and what the next seat knows of that."""
        out: list[Probe] = []
        partner = (player + 1) % self.game.n
        pname = self.text.name(partner)
        for i, code in enumerate(self.game.card_knowledge(state, player)):
            about = {"seat": player, "offset": 0, "card": i}
            for key, known in (("color", knows_color(code)), ("rank", knows_rank(code))):
                out.append(
                    Probe(
                        f"me.card{i}.{key}",
                        f"own_{key}",
                        0,
                        f"Do you know the {key} of your Card {i}?",
                        YES_NO,
                        _yn(known),
                        about,
                        no_tom=_yn(known),
                        subject={"card": i},
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
                    no_tom=_yn(knows_rank(code)),  # what the asker knows is the truth
                    subject={"target": pname, "card": i},
                )
            )
        return out
