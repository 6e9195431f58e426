"""Theory-of-Mind probes: questions with ground truth computed by the game, asked to any agent.

A game that offers probes gives its :class:`~tom_envs.core.game.GameBundle` a ``probes`` function
``(state, player) -> list[Probe]``: the questions to put to ``player`` now, each with the answer
the rules (and the game's knowledge tracking) say is true. The runner asks every agent that
implements ``answer_probes(turn, probes) -> {probe id: answer}`` and records the answers beside
the truth, so literal ToM is scored in the same run as functional ToM. The question text is written
from the player's side and never reveals what the player may not see; only the ground truth uses
the full state.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: Conventional orders: 0 = introspection ("do you know ..."), 1 = first order ("does X know ..."),
#: 2 = second order ("does X know that you know ...").
ORDERS = {0: "introspection", 1: "first_order", 2: "second_order"}


@dataclass(frozen=True)
class Probe:
    """One question with its computed answer.

    Attributes:
        id: unique within the step (``"bomb3.contents.order1.bravo"``).
        kind: what is asked about (``"room_contents"``, ``"bomb_sequence"``, ``"next_action"``...).
        order: 0 introspection, 1 first order, 2 second order (``-1`` when not applicable).
        question: the text put to the agent.
        options: the allowed answers (``("yes", "no")`` for yes/no questions).
        answer: the true answer, one of ``options``.
        about: structured details for analysis (target player, fact, ...).
    """

    id: str
    kind: str
    order: int
    question: str
    options: tuple[str, ...]
    answer: str
    about: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.answer not in self.options:
            raise ValueError(f"probe {self.id}: answer {self.answer!r} not in {self.options}")

    def score(self, reply: object) -> bool:
        """True when ``reply`` names the true option (case, spaces and punctuation ignored)."""
        return normalise_answer(reply, self.options) == self.answer


def normalise_answer(reply: object, options: Sequence[str]) -> str | None:
    """Map free text to one option: exact match first, then the only option it starts with."""
    if isinstance(reply, bool) and tuple(o.lower() for o in options) == ("yes", "no"):
        return options[0] if reply else options[1]
    if not isinstance(reply, str):
        return None
    text = reply.strip().lower().strip(" .!\"'`*")
    for o in options:
        if text == o.lower():
            return o
    starts = [o for o in options if text.startswith(o.lower())]
    return starts[0] if len(starts) == 1 else None


def score_answers(probes: Sequence[Probe], answers: Mapping[str, object]) -> list[dict[str, Any]]:
    """Records for a trajectory: question, reply, truth and correctness for every probe."""
    out = []
    for p in probes:
        reply = answers.get(p.id)
        out.append(
            {
                "id": p.id,
                "kind": p.kind,
                "order": p.order,
                "question": p.question,
                "reply": reply,
                "truth": p.answer,
                "correct": p.score(reply),
            }
        )
    return out
