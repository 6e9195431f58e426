"""Natural-language rendering of a CollabEscape view, after the authors' prompts (specs §2.2).

The rules prompt is the authors' ("In the game Collab Escape, we must cooperate with each other to
repair generators and escape the map. ...") written for the map in use: with the coded map it lists
each room's way out as coded and says which two passages are one-way (the authors' prompt described
a two-way map instead, "room 7 is connected to room 6 and 8"; ``map="prompt"`` plays that map). The
state is the authors' description ("My name is Alice. I am in room 1. Bob is in room 2. We have
information that the killer is currently located in room 6. ... Number of fixes still needed by
the generator in room 1 is 2. ... The exit gate is closed.") followed by the lettered options.
"""

from __future__ import annotations

from tom_envs.games.collab_escape.rules import (
    GATE,
    GENERATORS,
    OUTCOME_CAUGHT,
    OUTCOME_ESCAPED,
    PLAYER_NAMES,
    Action,
    EscapeConfig,
    EscapeState,
)
from tom_envs.games.collab_escape.view import (
    INTENT_ME,
    INTENT_PARTNER,
    SAW_BOTH_CHASED_ME,
    SAW_BOTH_CHASED_PARTNER,
    SAW_ME,
    SAW_PARTNER,
    EscapeView,
)
from tom_envs.games.room_maze import RoomActions, RoomText, english_list, lettered

#: The authors' answer format, verbatim (``TextObservation.answer_format``).
ANSWER_FORMAT = ' and then format your response as "Action: <letter or action>"'


#: Waiting and fixing, as text (``"Wait"``, ``"Fix generator in room 1"``) and as answers.
ACTIONS = RoomActions(
    int(Action.WAIT), "Wait", "wait|stay|remain",
    int(Action.FIX), "Fix generator in room {room}", "fix|fixing|repair|repairing",
)  # fmt: skip

#: ``(action, room) -> text``: ``"Move to room 2"``, ``"Fix generator in room 1"``, ``"Wait"``.
action_text = ACTIONS.text


class EscapeText(RoomText[EscapeView]):
    """Text for one player, from its view."""

    answer = ANSWER_FORMAT
    actions = ACTIONS
    role = ("killer", ("hunter", "stalker", "prowler", "butcher", "warden"))

    def __init__(self, config: EscapeConfig) -> None:
        super().__init__(config)
        self.maze = config.maze

    def layout(self) -> str:
        """The map in the authors' words, then the one-way passages (if any)."""
        rooms = self.maze.rooms
        links = "; ".join(
            f"room {r} is connected to room {english_list(nbrs)}" for r, nbrs in self.maze.adjacency
        )
        gens = " and ".join(str(g) for g in GENERATORS)
        text = (
            f"There are {len(rooms)} rooms (room {rooms[0]} to {rooms[-1]}). Room {gens} have "
            f"generators, and room {GATE} has the exit gate. The rooms are connected by pathways, "
            f"and you can only move to adjacent rooms. {links[0].upper()}{links[1:]}."
        )
        one_way = self.maze.one_way()
        if one_way:
            text += (
                " Some pathways are one-way: "
                + "; ".join(
                    f"from room {a} you can move to room {b}, but not from room {b} to room {a}"
                    for a, b in one_way
                )
                + "."
            )
        return text

    def rules_prompt(self, view: EscapeView) -> str:
        """The authors' prompt for the map in use, the end of the game and the answer format."""
        limit = (
            f" We have at most {view.max_turns} turns to escape."
            if view.max_turns is not None
            else ""
        )
        needed = self.config.fixes_needed
        return "\n".join(
            [
                "In the game Collab Escape, we must cooperate with each other to repair generators "
                "and escape the map. We win even if only one of us escapes the map.",
                f"Environment Details: {self.layout()}",
                "As a survivor, my goal is to avoid the killer and move to rooms with generators, "
                "repair the generators, and reach the exit gate to escape. To fully repair a "
                f"generator, it needs {needed} consecutive fix actions (i.e. one must spend {needed} "
                "consecutive turns fixing the generator in order for it be repaired; fixes by either "
                "of us count, and two fixes in the same turn count together). Survivors must also avoid being in the "
                "same room as the killer or an adjacent room, as the killer will move to catch any "
                "survivors they see in adjacent rooms. Being in the same room with the Killer "
                "results in an immediate loss.",
                "In each turn, survivors and the killer simultaneously perform one action. We "
                "cannot know each other's actions ahead of time but can make educated guesses. We "
                "should coordinate in order to fix generators, protect each other by luring the "
                "killer away, etc.",
                f"When both generators are repaired the exit gate in room {GATE} opens, and we "
                f"escape as soon as one of us is in room {GATE} while it is open.{limit}",
                f"I am {view.name}; my partner is {view.partner_name}. Help me select the best "
                "action from the list. First, consider if the current room is safe from the "
                f"killer{ANSWER_FORMAT}.",
            ]
        )

    def observation_text(self, view: EscapeView) -> str:
        """The authors' state description, then the turn and the lettered options."""
        me, other = view.name, view.partner_name
        parts = [f"My name is {me}. I am in room {view.my_room}."]
        gens = {room: (done, needed) for room, done, needed in view.generators}
        if view.i_was_fixing and view.my_room in gens:
            done, needed = gens[view.my_room]
            parts.append(
                "I have finished fixing the generator in this room."
                if done >= needed
                else "I have started to fix the generator in this room."
            )
        parts.append(f"{other} is in room {view.partner_room}.")
        if view.partner_was_fixing:
            parts.append(f"{other} was fixing the generator last turn.")
        parts.append(
            f"We have information that the killer is currently located in room {view.killer_room}."
        )
        if view.killer_intent == INTENT_ME:
            parts.append(
                f"We also have information that the killer will certainly move to the room "
                f"where {me} is."
            )
        elif view.killer_intent == INTENT_PARTNER:
            parts.append(
                f"We also have information that the killer will certainly move to the room "
                f"where {other} is."
            )
        else:
            parts.append(
                "We don't know which room the killer will move to next, but we do know that he "
                "is unaware of our current location."
            )
        memory = {
            SAW_ME: f"Last turn the killer saw {me} only.",
            SAW_PARTNER: f"Last turn the killer saw {other} only.",
            SAW_BOTH_CHASED_ME: f"Last turn the killer saw both of us and chased {me}.",
            SAW_BOTH_CHASED_PARTNER: f"Last turn the killer saw both of us and chased {other}.",
        }.get(view.killer_memory)
        if memory:
            parts.append(memory)
        for room, (done, needed) in gens.items():
            if done >= needed:
                parts.append(f"Generator in room {room} is fixed.")
            else:
                parts.append(
                    f"Number of fixes still needed by the generator in room {room} is "
                    f"{needed - done}."
                )
        parts.append(
            "The exit gate is open for escape." if view.gate_open else "The exit gate is closed."
        )
        lines = [" ".join(parts)]
        if view.escaped:
            lines.append(f"We escaped after {view.turn} turns.")
        elif view.caught:
            lines.append(f"The killer caught us after {view.turn} turns.")
        elif not view.legal_actions:
            lines.append(f"We did not escape within {view.max_turns} turns.")
        else:
            limit = f" of at most {view.max_turns}" if view.max_turns is not None else ""
            lines.append(f"Turn {view.turn + 1}{limit}. Available actions:")
            lines += lettered(self.legal_actions_text(view))
        return "\n".join(lines)

    def skin_phrases(self) -> dict[str, str]:
        """The room range "(room 1 to 10)" restated as a list, so that a skin can rename it."""
        rooms = self.maze.rooms
        listed = english_list([str(r) for r in rooms])
        return {f"(room {rooms[0]} to {rooms[-1]})": f"(rooms {listed})"}

    def render_state(self, state: EscapeState) -> str:
        """A spectator's line: turn, rooms, generators, outcome."""
        needed = self.config.fixes_needed
        gens = ", ".join(
            f"generator {room} {min(f, needed)}/{needed}"
            for room, f in zip(GENERATORS, state.fixes, strict=True)
        )
        limit = self.config.max_turns if self.config.max_turns is not None else "-"
        line = (
            f"Collab Escape ({self.config.scenario}, {self.config.map} map), turn {state.turn}/"
            f"{limit}: {PLAYER_NAMES[0]} room {state.rooms[0]}, {PLAYER_NAMES[1]} room "
            f"{state.rooms[1]}, killer room {state.killer}; {gens}"
        )
        if state.outcome == OUTCOME_ESCAPED:
            line += "; escaped"
        elif state.outcome == OUTCOME_CAUGHT:
            line += "; caught"
        return line
