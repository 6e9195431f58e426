"""Theory-of-Mind probes for CoBlock: the partner's goal, inventory and next sub-structure.

These are the three things the paper's partner-state modelling step asks an agent to infer
(§3, Step 2: "the goal, the inventory set, the immediate next plan"). Every question is written
from the asking player's side and reveals nothing of the partner's private state (the wording and
the options are the same in every task); only the answers read the full state.

Per decision, to player ``p`` about its partner ``q`` (all first order):

* ``partner_goal.<kind>`` (5): "Does your partner's goal include a <kind>?" for each base
  structure kind (a part of a kind counts: a bridge deck is part of a bridge). Yes/no.
* ``partner_inventory.<colour>`` (6): "Does your partner still have <colour> blocks?" Yes/no.
* ``partner_next``: "Which part of its goal is your partner's next sub-structure?" Options: the
  sub-structure labels (``tower``, ``arch pillars``, ``bridge deck``...) and ``"nothing: its goal
  is complete"``. Truth: the first component of the partner's goal, in its build order, that is
  incomplete and has a block placeable now; if none is placeable, the first incomplete one.

They are asked at the player's decision (the default moment). An agent receives the text, the
options and the subject (the structure kind or the colour named); the truths and their details
(``about``) stay with the game. The partner-blind answer (``Probe.no_tom``, the known group that
ignores the partner) projects the asker onto it: its own goal, its own inventory, its own next
sub-structure.
"""

from __future__ import annotations

from typing import Any

from tom_envs.core.probes import Probe
from tom_envs.games.coblock.rules import CoBlockGame, CoBlockState, Outcome
from tom_envs.games.coblock.structures import (
    COLORS,
    KINDS,
    PART_LABELS,
    Component,
    pos_of,
    supported,
)

YES_NO = ("yes", "no")
NOTHING = "nothing: its goal is complete"
NEXT_OPTIONS = (*PART_LABELS, NOTHING)


def next_substructure(state: CoBlockState, player: int) -> str:
    """The label of ``player``'s next sub-structure (see the module docstring)."""
    cells = state.cells
    incomplete: list[Component] = []
    for comp in state.task.goals[player].components:
        missing = [b for b in comp.blocks if cells.get(pos_of(b)) != b[3]]
        if not missing:
            continue
        if any(pos_of(b) not in cells and supported(pos_of(b), cells) for b in missing):
            return comp.label
        incomplete.append(comp)
    return incomplete[0].label if incomplete else NOTHING


def _yes_no(
    kind: str,
    key: str,
    truth: bool,
    own: bool,
    question: str,
    about: dict[str, Any],
    subject: dict[str, Any],
) -> Probe:
    """A first-order yes/no probe ``kind.key`` about the partner: ``truth`` is the answer, ``own``
    the answer for the asked player itself (what a reader without ToM would say)."""
    return Probe(
        id=f"{kind}.{key}",
        kind=kind,
        order=1,
        question=question,
        options=YES_NO,
        answer="yes" if truth else "no",
        about=about,
        no_tom="yes" if own else "no",
        subject=subject,
    )


def make_probes(game: CoBlockGame, state: CoBlockState, player: int) -> list[Probe]:
    """The probes to put to ``player`` now (none once the episode is over)."""
    if state.outcome != Outcome.PLAYING:
        return []
    q = 1 - player
    goal = state.task.goals[q]
    kinds = {c.kind for c in goal.components}
    mine = {c.kind for c in state.task.goals[player].components}
    partner = f"player_{q}"
    out = [
        _yes_no("partner_goal", kind, kind in kinds, kind in mine,
                f"Does your partner's goal include a {kind} (or a part of one)?",
                {"partner": partner, "structure": kind}, {"target": "partner", "structure": kind})
        for kind in KINDS
    ]  # fmt: skip
    inv, own = state.inventories[q], state.inventories[player]
    out += [
        _yes_no("partner_inventory", colour, inv[c] > 0, own[c] > 0,
                f"Does your partner still have {colour} blocks in its inventory?",
                {"partner": partner, "colour": colour, "count": inv[c]},
                {"target": "partner", "colour": colour})
        for c, colour in enumerate(COLORS)
    ]  # fmt: skip
    out.append(
        Probe(
            id="partner_next",
            kind="partner_next_substructure",
            order=1,
            question="Which part of its goal will your partner work on next? Answer with one of: "
            + "; ".join(NEXT_OPTIONS)
            + ".",
            options=NEXT_OPTIONS,
            answer=next_substructure(state, q),
            about={"partner": f"player_{q}"},
            no_tom=next_substructure(state, player),
            subject={"target": "partner"},
        )
    )
    return out
