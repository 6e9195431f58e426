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
* ``paper003``: the eight CoT examples of 003 §4.1 (two independent, three skill-dependent, three
  goal-dependent tasks), each a world state in the suite's CoBlock XML and the paper's four steps
  (world state, partner and self modelling in App. B.2's template, self-reflection, the command).
  They are rendered with the fields the answer format asks for: the baseline preset asks for the
  world state only, so its examples show no partner modelling and no reflection.

An :class:`Example` is rendered in the answer format the agent asks for (free-text labelled lines
or a JSON object), so the examples never contradict the format that is parsed.
:func:`examples_for` picks the set for a game (``examples=auto``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Example:
    """One worked example: the situation, the reasoning and the action (as the game writes it).

    Attributes:
        situation: the state the example answers (paper 003's: the suite's CoBlock XML).
        reasoning: a one-field thought process (004's CoT examples).
        action: the action, as the game's legal action text or command.
        steps: named reasoning steps instead of ``reasoning`` (003's four steps:
            ``world_state``, ``partner_modelling``, ``reflection``; the action is the last).
        kind: the task type the example covers (003: independent, skill- or goal-dependent).
    """

    situation: str
    reasoning: str
    action: str
    steps: tuple[tuple[str, str], ...] = ()
    kind: str = ""

    def render(
        self,
        index: int,
        json_mode: bool,
        reasoning_key: str = "reasoning",
        fields: Sequence[str] | None = None,
        label: Callable[[str], str] | None = None,
        action_label: str = "Action",
    ) -> str:
        """The example as the model should answer it: the fields the answer format asks for
        (``fields``, in its order; the example's steps that are not asked are left out, so a
        baseline's examples show no partner modelling), then the action."""
        head = f"Example {index}:\n{self.situation.strip()}\n"
        if self.steps:
            wanted = list(fields) if fields is not None else [n for n, _ in self.steps]
            body = [(n, t) for n in wanted for m, t in self.steps if m == n]
        else:
            body = [(reasoning_key, self.reasoning)]
        if json_mode:
            return head + json.dumps({**dict(body), "action": self.action}, ensure_ascii=False)
        name = label or (lambda n: n.replace("_", " ").capitalize())
        lines = "".join(f"{name(n)}: {t}\n" for n, t in body)
        return head + f"{lines}{action_label}: {self.action}"


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


def _blocks(items: Sequence[tuple[str, tuple[int, int, int]]]) -> str:
    return "".join(f'<block block_type="{c}", pos=({x}, {y}, {z})>' for c, (x, y, z) in items)


def _coblock_state(
    goal: str,
    blocks: Sequence[tuple[str, tuple[int, int, int]]],
    world: Sequence[tuple[str, tuple[int, int, int]]],
    inventory: Sequence[tuple[str, int]],
    dialogue: Sequence[tuple[str, str]] = (),
    extra: Sequence[tuple[str, tuple[int, int, int]]] = (),
    last: str = "",
) -> str:
    """A world state in the suite's CoBlock XML (``tom_envs.games.coblock.text``), one line per
    element, with the comparison of the built structure against the goal (003's external check)."""
    built = set(world)
    missing = [b for b in blocks if b not in built]
    chats = "".join(f'<chat sender="{who}", message="{m}">' for who, m in dialogue)
    inv = "".join(f'<block block_type="{c}", count={n}>' for c, n in inventory)
    lines = [
        f"<Motives><VisualMotive><Description>{goal}</Description>{_blocks(blocks)}"
        "</VisualMotive></Motives>",
        f"<World>{_blocks(world)}</World>",
        f"<Inventory>{inv}</Inventory>",
        f"<Dialogue>{chats}</Dialogue>",
        f"<ComparisonResult><MissingBlocks>{_blocks(missing)}</MissingBlocks>"
        f"<ExtraBlocks>{_blocks(extra)}</ExtraBlocks></ComparisonResult>",
    ]
    if last:
        lines.append(f"<LastActionResponse {last}/>")
    return "\n".join(lines)


def _coblock_example(
    kind: str, state: str, world: str, partner: str, reflection: str, action: str
) -> Example:
    return Example(
        state,
        "",
        action,
        steps=(("world_state", world), ("partner_modelling", partner), ("reflection", reflection)),
        kind=kind,
    )


def _coblock() -> tuple[Example, ...]:
    """003's eight CoT examples (§4.1: two independent, three skill-dependent, three
    goal-dependent tasks), each a world state in the suite's XML and the paper's four steps
    (§3, App. B.2): 1) the world state understood, 2) partner and self modelling in App. B.2's
    template, 3) self-reflection on the built structure and the dialogue (team role,
    altruism/egoism, persuasion), 4) the command. Every command parses in the suite's CoBlock."""
    return (*_coblock_independent(), *_coblock_skill_dependent(), *_coblock_goal_dependent())


def _coblock_independent() -> tuple[Example, ...]:
    """003's two examples of independent tasks."""
    return (
        _coblock_example(
            "independent",
            _coblock_state(
                "a red row of 3 blocks on the ground",
                [("red", (0, 0, 0)), ("red", (1, 0, 0)), ("red", (2, 0, 0))],
                [("red", (0, 0, 0))],
                [("red", 4)],
                [("Partner", "I am building a blue tower at (4, 0, 4). I only have blue.")],
                last='command="place_block(block_type=\'red\', pos=(0, 0, 0))", status="success"',
            ),
            "My goal is a red row from (0, 0, 0) to (2, 0, 0). (0, 0, 0) is built, (1, 0, 0) "
            "and (2, 0, 0) are missing, and my 4 red blocks are enough for them.",
            "# Partner Modelling # Long-term goal: a blue tower at (4, 0, 4) # Short-term goal: "
            "building it # Partner resources: blue # Explanation: they told me, and their "
            "tower does not touch my row. # Self Modelling # Long-term goal: my red row # "
            "Short-term goal: the block at (1, 0, 0) # My resources: red 4 # Explanation: I "
            "can finish alone.",
            "My last placement succeeded and nothing extra is built. Our tasks are "
            "independent: I keep building my own part and save messages for when they matter.",
            'place_block(block_type="red", pos=(1, 0, 0))',
        ),
        _coblock_example(
            "independent",
            _coblock_state(
                "a yellow pillar of 3 blocks",
                [("yellow", (3, 0, 3)), ("yellow", (3, 1, 3)), ("yellow", (3, 2, 3))],
                [("yellow", (3, 0, 3)), ("yellow", (3, 1, 3)), ("yellow", (3, 2, 3))],
                [("yellow", 2)],
                [("Partner", "Still working on my green wall.")],
                last="command=\"place_block(block_type='yellow', pos=(3, 2, 3))\", "
                'status="success"',
            ),
            "Every block of my goal is in place: the pillar from (3, 0, 3) to (3, 2, 3) is "
            "complete and no extra block is built.",
            "# Partner Modelling # Long-term goal: a green wall # Short-term goal: finishing "
            "it # Partner resources: green # Explanation: they said they are still working. "
            "# Self Modelling # Long-term goal: done # Short-term goal: let my partner finish "
            "# My resources: yellow 2 # Explanation: my part needs nothing more.",
            "Ending the task now would end it for both of us before the wall is done. I "
            "should not end it; I tell my partner I am done and offer help instead.",
            'send_message(message="My pillar is done. Tell me if you need a block placed; '
            'I will wait for you.")',
        ),
    )


def _coblock_skill_dependent() -> tuple[Example, ...]:
    """003's three examples of skill-dependent tasks (a block only the partner has)."""
    return (
        _coblock_example(
            "skill-dependent",
            _coblock_state(
                "a blue row with a black end",
                [("blue", (0, 0, 2)), ("blue", (1, 0, 2)), ("black", (2, 0, 2))],
                [],
                [("blue", 4)],
            ),
            "Nothing is built yet. My goal needs blue blocks at (0, 0, 2) and (1, 0, 2) and a "
            "black block at (2, 0, 2). I have 4 blue blocks and no black one.",
            "# Partner Modelling # Long-term goal: unknown # Short-term goal: unknown # "
            "Partner resources: unknown # Explanation: nobody has spoken yet. # Self Modelling "
            "# Long-term goal: my row # Short-term goal: get the black block placed # My "
            "resources: blue 4 # Explanation: the black block must come from my partner.",
            "No action yet, so no error. I lack black, so I take the lead: I state my need "
            "and my inventory first, so that my partner can plan around it.",
            'send_message(message="Hi! I need a black block at (2, 0, 2); I only have blue. '
            'What do you need? I can place blue blocks for you.")',
        ),
        _coblock_example(
            "skill-dependent",
            _coblock_state(
                "a green pillar with a purple top",
                [("green", (1, 0, 1)), ("green", (1, 1, 1)), ("purple", (1, 2, 1))],
                [("green", (1, 0, 1)), ("green", (1, 1, 1))],
                [("green", 1)],
                [
                    ("You", "I need a purple block at (1, 2, 1); I have none."),
                    ("Partner", "I have purple. I will place it after my red row."),
                ],
                last='command="place_block(block_type=\'green\', pos=(1, 1, 1))", status="success"',
            ),
            "My green blocks stand at (1, 0, 1) and (1, 1, 1); only the purple block at "
            "(1, 2, 1) is missing, and I have no purple.",
            "# Partner Modelling # Long-term goal: a red row # Short-term goal: finish the "
            "row, then place my purple block # Partner resources: red and purple # "
            "Explanation: they promised the purple block after their row. # Self Modelling # "
            "Long-term goal: my pillar # Short-term goal: wait for the purple top # My "
            "resources: green 1 # Explanation: the rest of my part is built.",
            "The built structure has no error. My partner has agreed to help, so asking again "
            "would waste their rounds: I stay patient and do not push.",
            "wait()",
        ),
        _coblock_example(
            "skill-dependent",
            _coblock_state(
                "a red pillar of 2 blocks",
                [("red", (4, 0, 0)), ("red", (4, 1, 0))],
                [("red", (4, 0, 0))],
                [("red", 1), ("yellow", 3)],
                [("Partner", "Could you place a yellow block at (0, 0, 4)? I have none.")],
            ),
            "My goal needs red at (4, 0, 0) and (4, 1, 0); (4, 0, 0) is built. I have 1 red "
            "and 3 yellow blocks. The last message asks me for a yellow block at (0, 0, 4).",
            "# Partner Modelling # Long-term goal: a structure with a yellow block at (0, 0, "
            "4) # Short-term goal: get that block placed # Partner resources: no yellow # "
            "Explanation: they asked me directly. # Self Modelling # Long-term goal: my red "
            "pillar # Short-term goal: help first, then my last red block # My resources: "
            "red 1, yellow 3 # Explanation: only I can place yellow for them.",
            "Helping now unblocks my partner and costs me a single round, since my last block "
            "can follow. I choose to be altruistic here.",
            'place_block(block_type="yellow", pos=(0, 0, 4))',
        ),
    )


def _coblock_goal_dependent() -> tuple[Example, ...]:
    """003's three examples of goal-dependent tasks (one part rests on the other's)."""
    return (
        _coblock_example(
            "goal-dependent",
            _coblock_state(
                "a blue bridge deck one level up",
                [("blue", (1, 1, 3)), ("blue", (2, 1, 3)), ("blue", (3, 1, 3))],
                [],
                [("blue", 5)],
            ),
            "Nothing is built. My deck goes at (1, 1, 3), (2, 1, 3) and (3, 1, 3), one level "
            "above the ground: no block of it can be placed until a block stands below or "
            "beside it.",
            "# Partner Modelling # Long-term goal: unknown, likely the pillars under my deck "
            "# Short-term goal: unknown # Partner resources: unknown # Explanation: no message "
            "yet. # Self Modelling # Long-term goal: the blue deck # Short-term goal: learn "
            "who builds the base # My resources: blue 5 # Explanation: my deck waits on a base.",
            "Placing now is impossible, and waiting silently could leave us both stuck. I "
            "take the lead and propose the order of building.",
            'send_message(message="Hi! My blue deck goes at y=1 over (1, 0, 3) and (3, 0, 3). '
            'Are those pillars yours? Please build them first.")',
        ),
        _coblock_example(
            "goal-dependent",
            _coblock_state(
                "a blue bridge deck one level up",
                [("blue", (1, 1, 3)), ("blue", (2, 1, 3)), ("blue", (3, 1, 3))],
                [("red", (1, 0, 3)), ("red", (3, 0, 3))],
                [("blue", 5)],
                [
                    ("You", "Are the pillars at (1, 0, 3) and (3, 0, 3) yours?"),
                    ("Partner", "Yes. Pillars done!"),
                ],
                extra=[("red", (1, 0, 3)), ("red", (3, 0, 3))],
                last='command="wait()", status="success"',
            ),
            "Red blocks now stand at (1, 0, 3) and (3, 0, 3) (not part of my goal: the base), "
            "so (1, 1, 3) and (3, 1, 3) rest on them; all three deck blocks are missing and I "
            "have 5 blue.",
            "# Partner Modelling # Long-term goal: the red pillars # Short-term goal: done, "
            "waiting for my deck # Partner resources: red # Explanation: they said the pillars "
            "are done. # Self Modelling # Long-term goal: the blue deck # Short-term goal: "
            "the deck from one end # My resources: blue 5 # Explanation: my blocks can go now.",
            "Waiting was right: the base is there now and nothing is misplaced. I build "
            "without further messages.",
            'place_block(block_type="blue", pos=(1, 1, 3))',
        ),
        _coblock_example(
            "goal-dependent",
            _coblock_state(
                "a yellow block on the green base",
                [("yellow", (2, 1, 2))],
                [("green", (2, 0, 2)), ("yellow", (2, 0, 3))],
                [("yellow", 2)],
                [("Partner", "My green base block is at (2, 0, 2).")],
                extra=[("green", (2, 0, 2)), ("yellow", (2, 0, 3))],
                last="command=\"place_block(block_type='yellow', pos=(2, 0, 3))\", "
                'status="success"',
            ),
            "The green base is at (2, 0, 2). My yellow block went to (2, 0, 3), which is not in "
            "my goal, and (2, 1, 2), on top of the base, is still missing.",
            "# Partner Modelling # Long-term goal: the green base # Short-term goal: done with "
            "(2, 0, 2) # Partner resources: green # Explanation: their block is in place. # "
            "Self Modelling # Long-term goal: my yellow block # Short-term goal: correct my "
            "mistake # My resources: yellow 2 # Explanation: one yellow block is misplaced.",
            "My last placement was wrong: on the ground beside the base instead of on top. The "
            "extra block at (2, 0, 3) must go before it misleads my partner; I break it now and "
            "place (2, 1, 2) next.",
            "break_block(pos=(2, 0, 3))",
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
