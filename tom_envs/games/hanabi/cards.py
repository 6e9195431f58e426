"""Hanabi's cards and what players know about them.

A card is an int ``colour * ranks + rank`` (0-based rank; colours in HLE's order ``RYGWB``).
What text, probes and bots read about one card is a small :func:`knowledge_code`: the plausible
colours and ranks as bit masks and whether the colour / rank was revealed directly. The state keeps
a whole hand's knowledge as one int in HLE's bit layout (see "Representation" in
:mod:`~tom_envs.games.hanabi.rules`), which :class:`KnowledgeLayout` encodes and decodes.
"""

from __future__ import annotations

#: Colour names in HLE's order (``RYGWB``).
COLOR_NAMES = ("Red", "Yellow", "Green", "White", "Blue")
COLOR_CHARS = "RYGWB"

#: Knowledge code layout (see :func:`knowledge_code`).
RANK_SHIFT = 5
COLOR_REVEALED = 1 << 10
RANK_REVEALED = 1 << 11
COLOR_BITS = 0x1F
RANK_BITS = 0x1F << RANK_SHIFT


def cards_per_rank(rank: int, num_ranks: int) -> int:
    """Copies of each card of ``rank`` (0-based) per colour: 3 of the lowest, 1 of the highest."""
    if rank == 0:
        return 3
    return 1 if rank == num_ranks - 1 else 2


def card_of(color: int, rank: int, num_ranks: int = 5) -> int:
    """The card int of ``(color, rank)`` (both 0-based)."""
    return color * num_ranks + rank


def knowledge_code(colors: int, ranks: int, color_revealed: bool, rank_revealed: bool) -> int:
    """Pack a card's knowledge: plausible colour and rank masks plus the two revealed flags."""
    return (
        colors
        | (ranks << RANK_SHIFT)
        | (COLOR_REVEALED if color_revealed else 0)
        | (RANK_REVEALED if rank_revealed else 0)
    )


def plausible_colors(code: int) -> int:
    """Mask of the colours a card may have, from its knowledge code."""
    return code & COLOR_BITS


def plausible_ranks(code: int) -> int:
    """Mask of the ranks a card may have, from its knowledge code."""
    return (code >> RANK_SHIFT) & 0x1F


def bits_of(mask: int) -> list[int]:
    """Indices of the set bits of ``mask``, ascending."""
    return [i for i in range(mask.bit_length()) if mask >> i & 1]


class KnowledgeLayout:
    """HLE's bit layout of a hand's card knowledge, and its decoding into per-card codes.

    ``width`` bits per card: ``C*R`` plausible cards, ``C`` revealed colour, ``R`` revealed rank.
    :meth:`code` turns one card's bits into a small :func:`knowledge_code` (plausible colour and
    rank masks and the two revealed flags), which is what text, probes and bots read.
    """

    def __init__(self, colors: int, ranks: int) -> None:
        self.colors, self.ranks = colors, ranks
        self.cr = colors * ranks
        self.width = self.cr + colors + ranks
        self.slot_mask = (1 << self.width) - 1
        self.full_slot = (1 << self.cr) - 1
        self.color_rows = tuple(((1 << ranks) - 1) << (c * ranks) for c in range(colors))
        self.rank_cols = tuple(
            sum(1 << (c * ranks + r) for c in range(colors)) for r in range(ranks)
        )
        self._codes: dict[int, int] = {}

    def slot(self, bits: int, i: int) -> int:
        """Card ``i``'s bits."""
        return (bits >> (i * self.width)) & self.slot_mask

    def code(self, bits: int, i: int) -> int:
        """Card ``i``'s knowledge as a :func:`knowledge_code`."""
        slot = (bits >> (i * self.width)) & self.slot_mask
        code = self._codes.get(slot)
        if code is None:
            cm = sum(1 << c for c, row in enumerate(self.color_rows) if slot & row)
            rm = sum(1 << r for r, col in enumerate(self.rank_cols) if slot & col)
            code = knowledge_code(
                cm,
                rm,
                bool(slot >> self.cr & ((1 << self.colors) - 1)),
                bool(slot >> (self.cr + self.colors)),
            )
            self._codes[slot] = code
        return code

    def codes(self, bits: int, n_cards: int) -> tuple[int, ...]:
        """The codes of cards ``0 .. n_cards-1``."""
        return tuple(self.code(bits, i) for i in range(n_cards))
