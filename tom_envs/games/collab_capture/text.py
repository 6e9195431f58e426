"""Natural-language rendering of a CollabCapture view, after the authors' prompts (specs §2.1).

The rules prompt is the paper's ("I Alice am playing the game "Collab Capture" with Bob ..."), its
eight rules, the layout ("Room 1 directly connects to Room 2 and Room 6.") and the doors; the state
is the paper's sentence ("I Alice am in room 1. Bob is in room 6. Thief is in room 2. Door between
room 1 and room 2 is closed. ...") followed by the lettered options ("A. Stay in current room.").
Answers are read by :func:`~tom_envs.games.room_maze.parse_lettered`: a letter, the option's text,
a bare number (the N-th listed option) or a short form ("room 5", "move to 5", "stay", "press"): a
room is written with its noun.
"""

from __future__ import annotations

from tom_envs.games.collab_capture.rules import (
    DOORS,
    MAZE,
    PLAYER_NAMES,
    Action,
    CaptureState,
)
from tom_envs.games.collab_capture.view import CaptureView
from tom_envs.games.room_maze import RoomActions, RoomText, english_list, lettered

#: The paper's answer format, verbatim (``TextObservation.answer_format``).
ANSWER_FORMAT = (
    "Format your response as:\nAnalysis: <brief explanation for your next action>.\n"
    "Action: <your selected action from the list>."
)


#: Staying and pressing, as text (``"Stay in current room"``, ``"Press button in room 9"``) and as
#: answers.
ACTIONS = RoomActions(
    int(Action.STAY), "Stay in current room", "stay|remain|wait",
    int(Action.PRESS), "Press button in room {room}", "press|push|button|toggle",
)  # fmt: skip

#: ``(action, room) -> text``: ``"Stay in current room"``, ``"Move to room 2"``, ...
action_text = ACTIONS.text


def layout_lines() -> list[str]:
    """The paper's layout list: ``"- Room 1 directly connects to Room 2 and Room 6."``."""
    return [
        f"- Room {r} directly connects to {english_list([f'Room {n}' for n in nbrs])}."
        for r, nbrs in MAZE.adjacency
    ]


def door_sentence() -> str:
    """``"There is a door between Room 1 and Room 2 controlled by a button in Room 9. ..."``."""
    return " ".join(
        f"There is a door between Room {d.rooms[0]} and Room {d.rooms[1]} controlled by a button "
        f"in Room {d.button}."
        for d in DOORS
    )


class CaptureText(RoomText[CaptureView]):
    """Text for one agent, from its view."""

    answer = ANSWER_FORMAT
    actions = ACTIONS
    maze = MAZE
    role = ("thief", ("bandit", "burglar", "poacher", "smuggler", "rustler"))

    def rules_prompt(self, view: CaptureView) -> str:
        """The paper's prompt for ``view``'s agent: goal, rules, layout, doors, answer format."""
        me, other = view.name, view.partner_name
        catch = (
            "1. A thief is caught if a player is in the same room as the thief or if the thief and "
            "a player in connected rooms move towards each other."
            if self.config.swap_capture
            else "1. A thief is caught if a player is in the same room as the thief."
        )
        return "\n".join(
            [
                f'I {me} am playing the game "Collab Capture" with {other}. I want to coordinate '
                f"with {other} to catch the thief in the environment in the minimum number of "
                f"steps. Coordination between {other} and {me} is important to trap the thief.",
                "Rules:",
                catch,
                "2. The environment is fully visible to all three entities. In each turn, player "
                "and the thief simultaneously perform one action.",
                "3. The thief always takes the greediest action to move away from the player "
                "closest to him.",
                "4. Doors can be either open or closed.",
                "5. If the door is closed, no one can pass, creating a dead end.",
                "6. Pressing the button closes an open door and opens a closed door.",
                "7. A button in a room can only be pressed if player is in that room.",
                "8. All rooms are connected by pathways with same length, and everyone can only "
                "move to connected rooms in each turn.",
                f"9. The thief must be caught within {self.config.max_turns} turns.",
                "Environment Layout:",
                *layout_lines(),
                door_sentence(),
                f"Help me {me} select my next action. {ANSWER_FORMAT}",
            ]
        )

    def observation_text(self, view: CaptureView) -> str:
        """The paper's state sentence, the turn, and the lettered options."""
        parts = [
            f"I {view.name} am in room {view.my_room}. {view.partner_name} is in room "
            f"{view.partner_room}. Thief is in room {view.thief_room}."
        ]
        parts += [
            f"Door between room {a} and room {b} is {'open' if is_open else 'closed'}."
            for a, b, _, is_open in view.doors
        ]
        lines = [" ".join(parts)]
        if view.captured:
            lines.append(f"The thief has been caught after {view.turn} turns.")
        elif not view.legal_actions:
            lines.append(f"The thief could not be caught within {view.max_turns} turns.")
        else:
            lines.append(f"Turn {view.turn + 1} of at most {view.max_turns}. Available actions:")
            lines += lettered(self.legal_actions_text(view))
        return "\n".join(lines)

    def render_state(self, state: CaptureState) -> str:
        """A spectator's line: turn, rooms, doors, outcome."""
        doors = ", ".join(
            f"door {d.rooms[0]}-{d.rooms[1]} {'open' if o else 'closed'}"
            for d, o in zip(DOORS, state.doors, strict=True)
        )
        line = (
            f"Collab Capture ({self.config.scenario}), turn {state.turn}/{self.config.max_turns}: "
            f"{PLAYER_NAMES[0]} room {state.rooms[0]}, {PLAYER_NAMES[1]} room {state.rooms[1]}, "
            f"thief room {state.thief}; {doors}"
        )
        if state.captured:
            line += "; the thief is caught"
        return line
