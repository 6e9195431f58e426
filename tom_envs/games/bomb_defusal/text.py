"""Natural-language rendering of a bomb-defusal view and the tolerant action parser (App. A-B).

* :meth:`BombText.rules_prompt` is the paper's task-context prompt (App. A.1), with the map, the
  numbers and the tools of the configuration (word for word for the default mission) and the role.
* :meth:`BombText.observation_text` follows the original text game (specs §1.8): ``Your observation
  is: Round: r. Total team score: s. Results: <result of my last action> Room contents: You are
  currently in Room r. Contents of this room include ...`` then the teammates' locations (the
  format of App. A.2) and ``Communication messages sent by your teammates: Player bravo: "..."``.
* Results use the original messages: ``You inspected Bomb 3. This bomb is a 2-stage bomb and its
  remaining sequence is Red-Green.`` and so on (:func:`result_text`). The error feedback of App. B
  comes back from :meth:`BombText.parse_action` when an answer names an action the rules do not
  allow now (a room not adjacent, inspecting where there is no bomb, a tool one lacks): the paper
  consumed the turn with that feedback; here the parser returns it with no action, and the LLM
  layer's invalid-output policy applies (re-ask, or the runner's counted fallback).
* The parser reads ``Action selection: <action>. Message to Team: "<message>"`` in any case, with
  any quotes (straight, curly, single, guillemets, backticks) or none, with markdown, in either
  order; ``Move to Room X`` (also go/head/walk ... room X, ``go_to_node_X``), ``Inspect Bomb``,
  ``Apply X Tool`` (also use/cut/defuse ... X); the earliest action named wins. It also accepts the
  exact text of a legal action, ``<action>...</action>``, or the 1-based number of a legal action.
"""

from __future__ import annotations

import re

from tom_envs.core.game import ParseResult, TextInterface
from tom_envs.core.skin import CALLSIGN_POOL, COLOUR_POOL, NAME_POOL, Symbols, number_pool
from tom_envs.core.text import NUMBER, answer_segment, option_number, tag_content
from tom_envs.games.bomb_defusal.maps import PAPER_ROOMS
from tom_envs.games.bomb_defusal.rules import (
    ActionKind,
    MessageOption,
    decode_action,
    encode_action,
)
from tom_envs.games.bomb_defusal.state import BombConfig, BombState
from tom_envs.games.bomb_defusal.view import ActionResult, BombView, ResultKind

_WORDS = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen", "twenty",
)  # fmt: skip

#: App. B's error feedback (templates; ``{…}`` are fields).
INVALID = "Your action is invalid."
NOT_ADJACENT = (
    "You can not directly move to Room {room} because it is not adjacent to your current location, "
    "Room {current}. Consider taking a detour to another room first and then move to your "
    "destination."
)
NO_BOMB_TO_INSPECT = (
    "There is no bomb in the current current location, Room {room}, for you to inspect."
)
WRONG_TOOL = (
    "You can not apply Tool {color} to Bomb {bomb} because the sequence of this bomb is {seq}. "
    "You will need to apply other color tool first."
)
NO_BOMB_TO_DEFUSE = "There is no bomb in your current location, room {room}, for you to defuse."
MISSING_TOOL = (
    "You do not have Tool {color}. Consider asking your teammates who have this tool to help you "
    "defuse the bomb."
)

_OPEN_CLOSE = {
    '"': '"',
    "“": '”"',
    "”": '”"',
    "„": '“”"',
    "'": "'",
    "‘": "’'",
    "’": "’'",
    "«": "»",
    "»": "«",
    "`": "`",
}


def _word(k: int) -> str:
    return _WORDS[k] if 0 <= k < len(_WORDS) else str(k)


def _and(items: list[str], conj: str = "and") -> str:
    if len(items) <= 1:
        return "".join(items)
    if len(items) == 2:
        return f"{items[0]} {conj} {items[1]}"
    return ", ".join(items[:-1]) + f", {conj} " + items[-1]


#: App. A.1's answer format, verbatim (``TextObservation.answer_format``).
ANSWER_FORMAT = (
    "To facilitate our interaction, reply your action selection and communication messages in "
    'this fixed format: Action selection: Your action. Message to Team: "Your Message".'
)


class BombText(TextInterface[BombView]):
    """Text for one player, from its view."""

    def __init__(self, config: BombConfig) -> None:
        self.config = config

    # ------------------------------------------------------------- vocabulary
    def color(self, c: int) -> str:
        """``"Red"``."""
        return self.config.colors[c].capitalize()

    def sequence(self, colours: tuple[int, ...]) -> str:
        """``"Red-Green"``."""
        return "-".join(self.color(c) for c in colours)

    def player(self, p: int) -> str:
        """``"Player bravo"``."""
        return f"Player {self.config.agents[p]}"

    def _contents(self, agents: tuple[int, ...], bombs: tuple[int, ...]) -> str:
        parts = []
        if agents:
            parts.append(" and ".join(self.player(a) for a in agents))
        if bombs:
            parts.append(", ".join(f"Bomb {b + 1}" for b in bombs))
        return ", ".join(parts)

    def skin_symbols(self) -> tuple[Symbols, ...]:
        """What a skin renames (``skin=``, :mod:`tom_envs.core.skin`): the tool colours, the
        players' call signs, the room numbers (after "room", "rooms", "numbered", "node", lists
        included) and the bomb numbers (after "bomb"), each onto numbers 1-99 that name no room
        or bomb of this configuration."""
        cfg = self.config
        rooms = sorted({*PAPER_ROOMS, *range(cfg.num_rooms_of_map)})
        callsigns = CALLSIGN_POOL + tuple(n.lower() for n in NAME_POOL)
        return (
            Symbols("colour", cfg.colors, COLOUR_POOL),
            Symbols("player", cfg.agents, callsigns),
            Symbols("room", tuple(map(str, rooms)), number_pool(),
                    before=r"(?i:rooms?\s+|numbered\s+|node\s+|node_)", listed=True),
            Symbols("bomb", tuple(str(b + 1) for b in range(len(cfg.bomb_phases))),
                    number_pool(), before=r"(?i:bomb\s+)"),
        )  # fmt: skip

    # ---------------------------------------------------------------- prompts
    def rules_prompt(self, view: BombView) -> str:
        """The task-context prompt of App. A.1 for this configuration, plus the player's role."""
        cfg = self.config
        gmap = view.game_map
        n_others = len(cfg.agents) - 1
        phases = sorted(set(cfg.bomb_phases))
        kinds = _and([f"{_word(k)}-phase" for k in phases])
        counts = _and([str(k) for k in phases], "or")
        example = "-".join(cfg.colors[:2]) if cfg.num_colors > 1 else cfg.colors[0]
        first, second = cfg.colors[0], cfg.colors[min(1, cfg.num_colors - 1)]
        tools = [
            _and(list(cfg.tools[p])) if cfg.tools[p] else "no"  # type: ignore[index]
            for p in range(len(cfg.agents))
        ]
        names = [a.capitalize() for a in cfg.agents]
        if len(names) == 3 and all(len(t) == 2 for t in cfg.tools):  # type: ignore[union-attr]
            # App. A.1's sentence, written for the reader's seat (the paper prints Alpha's)
            me, a, b = ((view.player + k) % 3 for k in range(3))
            tool_text = (
                f"As player {names[me]}, you have {tools[me]} tools, player {names[a]} wields "
                f"{tools[a]}, and player {names[b]} possesses {tools[b]}."
            )
        else:
            tool_text = "; ".join(
                f"player {names[p]} has {tools[p]} tools" for p in range(len(names))
            )
            tool_text = tool_text[0].upper() + tool_text[1:] + "."
        per_player = {len(t) for t in cfg.tools}  # type: ignore[union-attr]
        equipped = (
            f"Each player is equipped with {_word(per_player.pop())} color-coded wire cutters."
            if len(per_player) == 1
            else "Each player is equipped with color-coded wire cutters."
        )
        plural = "s" if view.num_bombs != 1 else ""
        teammates = "both of your teammates" if n_others == 2 else "all of your teammates"
        if n_others == 1:
            teammates = "your teammate"
        locations = " and the current location of your teammates" if cfg.teammate_locations else ""
        return (
            "Welcome to our interactive text game! In this game, you'll assume the role of a "
            "specialist on a search and rescue team. Alongside "
            f"{_word(n_others)} other player{'s' if n_others != 1 else ''}, you'll navigate a "
            f"{_word(gmap.num_rooms)}-room environment with a mission to defuse "
            f"{_word(view.num_bombs)} hidden bomb{plural}.\n\n"
            "The Map: Imagine a network of rooms represented by a connected graph where each node "
            "corresponds to a room, and the edges between nodes depict hallways. "
            f"{gmap.describe()} You can only travel to adjacent, directly connected rooms at each "
            "turn.\n\n"
            f"The Challenge: Scattered among these rooms {'are' if plural else 'is'} "
            f"{_word(view.num_bombs)} bomb{plural}, each coded with different phases represented "
            "by colors. To defuse them, you'll need to "
            "use the correct wire-cutting tools in the correct sequence. There are "
            f"{kinds} bombs, needing {counts} color-coded tool applications in sequence to "
            f"disarm. For instance, a bomb with a {example} phase sequence requires the {first} "
            f"tool first, then the {second} one. Points are awarded based on the number of tools "
            "used for defusing a bomb, with each tool use worth "
            f"{cfg.points_per_phase} points. Your task is to maximize the team score as soon as "
            "possible. The challenge is that the bomb locations and sequences are unknown to "
            "players at the start.\n\n"
            f"Tools: {equipped} {tool_text}\n\n"
            "Actions: Each round, you can opt to do one of the following: 1) Move to an adjacent "
            "room, 2) Inspect a bomb's phase sequence in your current room, or 3) Apply your wire "
            "cutters to a bomb in the current room.\n\n"
            "Communications: In addition to selecting an action to take from the above list, you "
            f"can also send communication message texts to {teammates} in each round. The "
            f"message text you sent will be shared with {teammates} in their observation in the "
            "next round.\n\n"
            "Observation: While you can only see what's in your current room and read text "
            "messages from teammates. You'll also be informed of the current round number, team "
            f"score{locations}. Your teammates have the same observability as you. They will not "
            "be able to know your action and its consequences unless you explicitly "
            "communicate.\n\n"
            f"{ANSWER_FORMAT} To move to an adjacent room, say: "
            "'Move to Room X'. To inspect the "
            "sequence of a bomb in your current room, say: 'Inspect Bomb'. To apply a wire cutter "
            "tool, say: 'Apply X Tool'. Remember, your replies must adhere strictly to these "
            "rules. Feel free to ask clarifying questions if needed. I'll supply the necessary "
            "information as we progress. Are you ready to take on this explosive challenge?\n\n"
            f"You are playing as Player {cfg.agents[view.player]}."
        )

    def answer_format(self, view: BombView) -> str:
        """App. A.1's answer format (``Action selection: ... Message to Team: ...``)."""
        return ANSWER_FORMAT

    # ------------------------------------------------------------ observation
    def result_text(self, view: BombView, result: ActionResult) -> str:
        """The original game's message for an action result."""
        rooms = view.game_map.rooms
        room = rooms[result.room]
        k = result.kind
        if k in (ResultKind.START, ResultKind.MOVED):
            found = self._contents(result.agents_seen, result.bombs_seen) or "nothing"
            return f"You moved to Room {room}. In the new room you found {found}."
        bomb = None if result.bomb is None else result.bomb + 1
        if k == ResultKind.INSPECTED:
            return (
                f"You inspected Bomb {bomb}. This bomb is a {result.stages}-stage bomb and its "
                f"remaining sequence is {self.sequence(result.remaining)}."
            )
        color = self.color(result.color) if result.color is not None else ""
        if k == ResultKind.DEFUSED:
            return f"You applied Tool {color} to Bomb {bomb}. This bomb is defused successfully."
        if k == ResultKind.CUT:
            return (
                f"You applied Tool {color} to Bomb {bomb}. This bomb is active and its remaining "
                f"sequence is {self.sequence(result.remaining)}."
            )
        if k == ResultKind.WRONG_TOOL:
            return WRONG_TOOL.format(color=color, bomb=bomb, seq=self.sequence(result.remaining))
        if k == ResultKind.EXPLODED:
            return f"You applied Tool {color} to Bomb {bomb}. The wrong tool made the bomb explode."
        return NO_BOMB_TO_DEFUSE.format(room=room)

    def observation_text(self, view: BombView) -> str:
        """Round, score, my last result, my room, teammates' locations, messages (specs §1.8)."""
        rooms = view.game_map.rooms
        contents = self._contents(view.room_agents, view.room_bombs)
        room_line = (
            f"Contents of this room include {contents}."
            if contents
            else "There is nothing else in this room."
        )
        parts = [
            f"Your observation is: Round: {view.round}. Total team score: {view.score}.",
            f"Results: {self.result_text(view, view.last_result)}",
            f"Room contents: You are currently in Room {rooms[view.room]}. {room_line}",
        ]
        where = []
        for p, r in enumerate(view.agent_rooms):
            place = f"Room {rooms[r]}" if r >= 0 else "an unknown room"
            where.append(f"{self.player(p)} is in {place}")
        parts.append("Teammate Locations: " + "; ".join(where) + ".")
        if self.config.intel_in_text and view.intel:
            intel = []
            for item in view.intel:
                state = (
                    f"remaining sequence {self.sequence(item.remaining)}"
                    if item.remaining
                    else "no longer active"
                )
                intel.append(
                    f"Bomb {item.bomb + 1} in Room {rooms[item.room]}: {state} (round {item.round})"
                )
            parts.append("Your bomb intel: " + "; ".join(intel) + ".")
        if view.messages:
            said = " ".join(f'{self.player(m.sender)}: "{m.text}".' for m in view.messages)
            parts.append(f"Communication messages sent by your teammates: {said}")
        if view.turn < 0:
            parts.append("The mission is over.")
        return " ".join(parts)

    # ---------------------------------------------------------------- actions
    def base_text(self, view: BombView, kind: ActionKind, target: int | None) -> str:
        """``"Inspect Bomb"``, ``"Move to Room 5"``, ``"Apply Red Tool"``."""
        if kind == ActionKind.INSPECT:
            return "Inspect Bomb"
        if kind == ActionKind.GO_TO:
            return f"Move to Room {view.game_map.rooms[target]}"  # type: ignore[index]
        return f"Apply {self.color(target)} Tool"  # type: ignore[arg-type]

    def option_text(self, option: MessageOption, color: int | None) -> str:
        """The symbolic message option as it appears in an action's text."""
        if option == MessageOption.SHARE_ROOM:
            return "<share my room>"
        if option == MessageOption.SHARE_BOMBS:
            return "<share my bomb intel>"
        if option == MessageOption.ASK:
            return f"<ask for a {self.color(color)} tool here>"  # type: ignore[arg-type]
        return ""

    def action_text(self, view: BombView, action: int) -> str:
        """``"Move to Room 5"``; with a symbolic message ``"... Message to Team: <share my room>"``."""
        dec = decode_action(self.config, action, view.game_map.num_rooms)
        text = self.base_text(view, dec.kind, dec.target)
        if dec.option != MessageOption.NONE:
            text += f". Message to Team: {self.option_text(dec.option, dec.option_color)}"
        return text

    # ---------------------------------------------------------------- parsing
    def parse_action(self, view: BombView, text: str) -> ParseResult:
        """Free text to a legal action, the message to send, and feedback (never raises).

        The action is read from the answer segment every game reads
        (:func:`~tom_envs.core.text.answer_segment`: the last ``<action>`` tag, else the last
        ``Action selection:``/``Action:`` label's line, else the whole reply), after the message
        (``Message to Team: ...``) is taken out; linear in the reply."""
        if not isinstance(text, str):
            return ParseResult(None, f"{INVALID} Expected text, got {type(text).__name__}.")
        legal = self.legal_actions_text(view)
        if not legal:
            return ParseResult(None, "no action is legal for you now")
        by_norm = {_norm(t): a for a, t in legal.items()}
        tagged = tag_content(text)
        for candidate in (text, tagged):
            if candidate is not None and _norm(candidate) in by_norm:
                a = by_norm[_norm(candidate)]
                return ParseResult(a, f"understood: {legal[a]}")
        action_part, message = split_reply(text)
        bare = _norm(action_part)
        if NUMBER.fullmatch(bare):  # the suite's rule: a bare number is the N-th listed action
            number = option_number(bare, legal)
            return ParseResult(number.action, number.feedback, message)
        base, feedback = self._parse_base(view, action_part)
        if base is None:
            return ParseResult(None, feedback, message)
        kind, target = base
        action = encode_action(self.config, kind, target)
        if action not in legal:  # e.g. not this player's turn
            return ParseResult(None, f"{INVALID} That action is not legal now.", message)
        return ParseResult(action, f"understood: {legal[action]}", message)

    def _parse_base(
        self, view: BombView, text: str
    ) -> tuple[tuple[ActionKind, int | None] | None, str]:
        """The earliest action named in ``text``, checked against the rules (App. B feedback).

        A move is a moving verb followed by ``room N`` in the same sentence, a tool use a using
        verb followed by a colour in the same sentence (:func:`first_in_sentence`: one pass over
        the text, however many verbs it repeats)."""
        low = text.lower().translate(str.maketrans({"*": " ", "_": " "}))
        low = low.replace("go to node ", "go to room ")
        colours = "|".join(re.escape(c) for c in self.config.colors)
        hits: list[tuple[int, str, str | None]] = []
        m = re.search(r"\binspect\w*", low)
        if m:
            hits.append((m.start(), "inspect", None))
        m = first_in_sentence(low, _MOVE_VERB, _ROOM_NUMBER)
        if m:
            hits.append((m[0], "move", m[1].group(1)))
        m = first_in_sentence(low, _USE_VERB, re.compile(rf"\b({colours})\b"))
        if m:
            hits.append((m[0], "apply", m[1].group(1)))
        else:
            c = re.search(rf"\b({colours})\s+(?:tool|cutter|wire[- ]?cutter|wire)s?\b", low)
            if c:
                hits.append((c.start(), "apply", c.group(1)))
            elif re.search(r"\b(?:apply|use|cut)\b", low):
                hits.append((len(low), "apply", None))  # a tool named without a known colour
        if not hits:  # App. B's feedback: the prompt states the one answer format
            return None, INVALID
        _, kind, arg = min(hits, key=lambda h: h[0])
        rooms = view.game_map.rooms
        here = rooms[view.room]
        if kind == "inspect":
            if not view.room_bombs:
                return None, NO_BOMB_TO_INSPECT.format(room=here)
            return (ActionKind.INSPECT, None), ""
        if kind == "move":
            room = int(arg)  # type: ignore[arg-type]
            if room not in rooms:
                listed = _and([str(r) for r in rooms])
                return None, f"{INVALID} There is no Room {room}; the rooms are {listed}."
            idx = rooms.index(room)
            if idx == view.room:
                return None, f"{INVALID} You are already in Room {room}."
            if not view.game_map.adjacent(view.room, idx):
                return None, NOT_ADJACENT.format(room=room, current=here)
            return (ActionKind.GO_TO, idx), ""
        if arg is None:
            named = _and([self.color(c) for c in range(self.config.num_colors)], "or")
            return None, f"{INVALID} Name the tool's colour: {named}."
        colour = self.config.colors.index(arg)
        if colour not in view.my_tools:
            return None, MISSING_TOOL.format(color=self.color(colour))
        return (ActionKind.USE, colour), ""

    # --------------------------------------------------------------- spectator
    def render_state(self, state: BombState) -> str:
        """A spectator's summary of the whole state."""
        m = state.mission
        rooms = m.game_map.rooms
        lines = [
            f"Round {state.round}/{self.config.max_rounds}, score {state.score}/{m.max_score}"
            + (", over" if state.over else f", {self.config.agents[state.turn]} to act")
        ]
        lines.append(
            "  agents: "
            + ", ".join(
                f"{self.config.agents[p]} in Room {rooms[r]}" for p, r in enumerate(state.locations)
            )
        )
        for b in range(m.num_bombs):
            status = (
                "exploded"
                if state.exploded[b]
                else (
                    "defused"
                    if state.defused(b)
                    else f"remaining {self.sequence(state.remaining(b))}"
                )
            )
            lines.append(
                f"  Bomb {b + 1} in Room {rooms[m.bomb_rooms[b]]}: "
                f"{self.sequence(m.sequences[b])}, {status}"
            )
        for msg in state.chat[-len(self.config.agents) :]:
            lines.append(f'  {self.config.agents[msg.sender]} (round {msg.round}): "{msg.text}"')
        return "\n".join(lines)


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip().lower()).strip(" .!\"'`*")


_MESSAGE_MARK = re.compile(r"(?i)\bmessage\s*(?:to\s*(?:the\s*)?team)?\s*[:：]")
#: Labels of the action besides every game's (``Action selection:`` is one of those).
_ACTION_LABELS = ("action selected", "action choice")
_ACTION_MARK = re.compile(r"(?i)\baction\s*(?:selection|selected|choice)?\s*[:：]")
_MOVE_VERB = re.compile(
    r"\b(?:move|moving|go|going|goes|head\w*|walk\w*|travel\w*|proceed\w*|return\w*|"
    r"enter\w*)\b"
)
_ROOM_NUMBER = re.compile(r"\broom\s*(?:no\.?\s*|number\s*|#\s*)?([0-9]{1,6})(?![0-9])")
_USE_VERB = re.compile(r"\b(?:apply\w*|use|using|cut\w*|defus\w*|snip\w*)\b")


def first_in_sentence(
    text: str, verb: re.Pattern[str], obj: re.Pattern[str]
) -> tuple[int, re.Match[str]] | None:
    """The earliest ``verb`` followed by ``obj`` in the same sentence (no ``.`` or new line
    between the verb's end and the object's start): ``(verb start, object match)``, or ``None``.

    One pass per pattern and a binary search per verb, so a reply repeating a verb thousands of
    times costs a linear scan (a lazy ``verb[^.\n]*?obj`` regular expression rescans the rest of
    the sentence from every verb: quadratic)."""
    import bisect

    objects = [(m.start(), m) for m in obj.finditer(text)]
    if not objects:
        return None
    starts = [o[0] for o in objects]
    stops = [m.start() for m in re.finditer(r"[.\n]", text)]
    for v in verb.finditer(text):
        k = bisect.bisect_left(starts, v.end())
        if k == len(starts):
            break  # no object after this verb, nor after any later one
        nxt = bisect.bisect_left(stops, v.end())
        if nxt == len(stops) or starts[k] < stops[nxt]:
            return v.start(), objects[k][1]
    return None


def split_reply(text: str) -> tuple[str, str | None]:
    """``"Action selection: X. Message to Team: "Y""`` -> ``("X.", "Y")`` (tolerant, see above).

    The message is the text after ``Message to Team:`` (up to a following ``Action selection:`` or
    a blank line), without its outer quotes of any kind; ``None`` when absent or empty. The action
    is the answer segment (:func:`~tom_envs.core.text.answer_segment`) of what remains: inside an
    ``<action>`` tag when there is one.
    """
    tagged = tag_content(text)
    body = tagged if tagged is not None else text
    msg_m = _MESSAGE_MARK.search(body)
    message = None
    rest = body
    if msg_m:
        end = len(body)
        act_m = _ACTION_MARK.search(body, msg_m.end())
        if act_m:
            end = act_m.start()
        blank = re.search(r"\n\s*\n", body[msg_m.end() : end])
        if blank:
            end = msg_m.end() + blank.start()
        message = _unquote(body[msg_m.end() : end])
        rest = body[: msg_m.start()] + "\n" + body[end:]
    return answer_segment(rest, _ACTION_LABELS), message


def _unquote(raw: str) -> str | None:
    s = raw.strip().strip("*_ ").strip()
    if s and s[0] in _OPEN_CLOSE:
        closers = _OPEN_CLOSE[s[0]]
        end = max(s.rfind(c, 1) for c in closers)
        s = s[1:end] if end > 0 else s[1:]
    s = s.strip().strip("*_ ").strip()
    return s or None
