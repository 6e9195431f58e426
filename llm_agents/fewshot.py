"""In-context examples written for this suite from the papers' descriptions (papers 003 and 004).

Neither paper's examples can be copied as they are: paper 004 prints its CoT 3-shot prompt (Fig. 13)
as a picture, saying only that "the provided examples were customized to the actions space and
payoff structure of each of the three games"; paper 003's examples (App. B.2) use its own XML and
action functions, which differ from the suite's CoBlock text. The examples below follow what the
papers describe, in the suite's action texts, so every action they name parses in the game:

* ``paper004-rps`` / ``paper004-ibs`` / ``paper004-ipd``: three worked thought processes each (004
  Fig. 13): read the partner's past choices, predict the next one, best-respond with the payoffs.
  They use the ``letters`` action names (Option J, F, B: Tables 3 and 10) and the payoffs of the
  paper's "You" row (seat 0; in Battle of the Sexes seat 1 prefers the other option).
* ``paper003``: three consecutive CoBlock rounds (003 App. B.2: "our examples span three rounds"),
  each with partner modelling, self modelling and the command, in the suite's command syntax.

An :class:`Example` is rendered in the answer format the agent asks for (free-text labelled lines
or a JSON object), so the examples never contradict the format that is parsed.
:func:`examples_for` picks the set for a game (``examples=auto``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass


@dataclass(frozen=True)
class Example:
    """One worked example: the situation, the reasoning and the action (as the game writes it)."""

    situation: str
    reasoning: str
    action: str

    def render(self, index: int, json_mode: bool, reasoning_key: str = "reasoning") -> str:
        """The example as the model should answer it."""
        head = f"Example {index}:\n{self.situation.strip()}\n"
        if json_mode:
            body = json.dumps({reasoning_key: self.reasoning, "action": self.action})
            return head + body
        return head + f"Reasoning: {self.reasoning}\nAction: {self.action}"


def _rps() -> tuple[Example, ...]:
    return (
        Example(
            "In rounds 1 to 4 the other player chose Option J every time.",
            "The other player has chosen Option J in every round, so they will most likely "
            "choose Option J again. Against Option J, Option F scores +1, Option J scores 0 and "
            "Option B scores -1. The best response is Option F.",
            "Option F",
        ),
        Example(
            "In rounds 1 to 6 the other player chose Option B every time.",
            "The other player keeps choosing Option B. Against Option B, Option J scores +1, "
            "Option F scores -1 and Option B scores 0. I choose Option J.",
            "Option J",
        ),
        Example(
            "In rounds 1 to 3 the other player chose Option F every time.",
            "The other player always plays Option F. Against Option F, Option B scores +1, "
            "which is the most I can get. I choose Option B.",
            "Option B",
        ),
    )


def _ibs() -> tuple[Example, ...]:
    return (
        Example(
            "In rounds 1 to 4 the other player chose Option F every time.",
            "The other player always chooses Option F. If I choose Option F too I win 7 points; "
            "if I choose Option J we miscoordinate and I win 0. Coordinating on Option F is best.",
            "Option F",
        ),
        Example(
            "In rounds 1 to 5 the other player chose Option J every time.",
            "The other player keeps choosing Option J. Choosing Option J as well gives me 10 "
            "points, the most I can win in a round. I choose Option J.",
            "Option J",
        ),
        Example(
            "In round 1 the other player chose Option F; in rounds 2 and 3 they chose Option F "
            "again.",
            "Every choice of the other player so far is Option F, so they will likely repeat it. "
            "Matching them with Option F wins 7 points instead of 0. I choose Option F.",
            "Option F",
        ),
    )


def _ipd() -> tuple[Example, ...]:
    return (
        Example(
            "In rounds 1 to 4 the other player chose Option J every time.",
            "The other player always chooses Option J, whatever I do. Against Option J, "
            "Option F wins 10 points and Option J wins 8. Their choice does not depend on mine, "
            "so Option F is best.",
            "Option F",
        ),
        Example(
            "In rounds 1 to 5 the other player chose Option F every time.",
            "The other player always chooses Option F. Against Option F, Option J wins 0 points "
            "and Option F wins 5. I choose Option F.",
            "Option F",
        ),
        Example(
            "In rounds 1 to 3 the other player chose Option J, Option J, Option J.",
            "The other player has only chosen Option J; if that does not change, Option F wins "
            "10 points against their Option J, more than the 8 of Option J. I choose Option F.",
            "Option F",
        ),
    )


def _coblock() -> tuple[Example, ...]:
    return (
        Example(
            "Round 1. My goal is a green pillar of two blocks at (1, 0, 1) and (1, 1, 1) and a "
            "yellow block on top at (1, 2, 1). My inventory has 4 green blocks and no yellow. The "
            "world is empty and nobody has said anything.",
            "Partner modelling: long-term goal unknown; short-term goal unknown; partner "
            "resources unknown: I know nothing about my partner yet. Self modelling: long-term "
            "goal: my structure; short-term goal: build the green pillar; my resources: 4 green. "
            "I cannot place the yellow block myself, so I tell my partner what I need and what I "
            "have before I start building.",
            'send_message(message="Hi! I must build a green pillar at (1, 0, 1)-(1, 1, 1) with a '
            'yellow block on top at (1, 2, 1). I have green blocks only. What do you need?")',
        ),
        Example(
            'Round 2. The world is still empty. My partner said: "I need a red row on the ground '
            'from (3, 0, 0) to (5, 0, 0); I have red and yellow blocks."',
            "Partner modelling: long-term goal: a red row on the ground; short-term goal: build "
            "it; partner resources: red and yellow. They have the yellow block I lack. Self "
            "modelling: short-term goal: the first green block of my pillar, which sits on the "
            "ground and can be placed now.",
            'place_block(block_type="green", pos=(1, 0, 1))',
        ),
        Example(
            "Round 3. The world holds green at (1, 0, 1) and red at (3, 0, 0). My partner has "
            "not answered about the yellow block.",
            "Partner modelling: they are building their red row and may have missed my request. "
            "Self modelling: I place the second green block; the yellow block must go on top of "
            "it, so I remind my partner now, but the message would cost my action, so I build "
            "first and ask next round.",
            'place_block(block_type="green", pos=(1, 1, 1))',
        ),
    )


#: Every example set by name.
EXAMPLE_SETS: dict[str, tuple[Example, ...]] = {
    "paper004-rps": _rps(),
    "paper004-ibs": _ibs(),
    "paper004-ipd": _ipd(),
    "paper003": _coblock(),
}

#: ``examples=auto``: the set for each game (by registered name).
AUTO: dict[str, str] = {
    "RockPaperScissors": "paper004-rps",
    "BattleOfSexes": "paper004-ibs",
    "PrisonersDilemma": "paper004-ipd",
    "CoBlock": "paper003",
}


def examples_for(name: str, env_id: str = "") -> tuple[Example, ...]:
    """The example set ``name`` (``"auto"``: the one for ``env_id``'s game; ``""``/``"none"``:
    none). Unknown names raise ``ValueError`` naming the allowed ones."""
    if name in ("", "none"):
        return ()
    if name == "auto":
        game = env_id.split("/")[-1].split("-v")[0]
        key = AUTO.get(game)
        return EXAMPLE_SETS[key] if key else ()
    if name not in EXAMPLE_SETS:
        raise ValueError(
            f"examples must be 'auto', 'none' or one of {sorted(EXAMPLE_SETS)}, got {name!r}"
        )
    return EXAMPLE_SETS[name]
