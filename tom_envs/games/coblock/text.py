"""Natural-language rendering of a CoBlock view and the command parser (no game logic).

Two renderings of the same view (``text_format``):

* ``"xml"``: the paper's world state (App. B.1, and the original code's prompt): ``<Motives>``
  with a ``<VisualMotive>`` (description and block list of my goal), ``<World>``, ``<Inventory>``,
  ``<Dialogue>``, the recent ``<ActionHistory>``, ``<ComparisonResult>`` (``<MissingBlocks>`` and
  ``<ExtraBlocks>`` of the built structure against my goal: the self-reflection check of §3) and
  ``<LastActionResponse>``. Blocks are written as in the paper,
  ``<block block_type="red", pos=(0, 0, 2)>``. The ground is ``y = 0`` (the paper's prompt says
  ``y = 1``, a slip the original code does not follow).
* ``"plain"``: the same facts in sentences; ``"both"``: XML, then the sentences.

Commands follow the paper: ``place_block(block_type="red", pos=(0, 0, 1))``,
``break_block(pos=(3, 1, 3))``, ``send_message(message="Hello, partner")``, ``wait()``,
``end_task()`` (``end_session(...)`` is accepted too). The parser executes the first command it
finds (the original code runs the first parsable line) in the answer segment every game reads
(the last ``<action>`` tag, else the line after the last ``Action:``/``Answer:``/``Command:``
label, else the whole reply: :func:`~tom_envs.core.text.answer_segment`); it also reads plain
phrases ("place a red block at (1, 0, 2)", "break the block at (1, 0, 2)", "say: hi", "wait"). An
impossible command is refused with the original code's messages ("Block exists", "Block with type red not found in inventory",
"Block position (x, y, z) is not either on the ground or adjacent to any existing block.").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from tom_envs.core.game import Game, ParseResult, SeatRulesText
from tom_envs.core.skin import COLOUR_POOL, NAME_POOL, Mirror, Symbols
from tom_envs.core.text import NUMBER, answer_segment, option_number
from tom_envs.games.coblock.rules import (
    Action,
    ActionKind,
    CoBlockConfig,
    CoBlockState,
    command_text,
    decode_action,
    encode_action,
)
from tom_envs.games.coblock.structures import (
    COLOR_INDEX,
    COLORS,
    Block,
    fmt_block,
    fmt_pos,
    in_bounds,
    supported,
)
from tom_envs.games.coblock.view import CoBlockView

_COLOURS = "|".join(COLORS)
_CMD = re.compile(r"\b(place_block|break_block|send_message|end_task|end_session|wait)\s*\(", re.I)
_TRIPLE = re.compile(r"\(\s*(-?\d{1,9})\s*,\s*(-?\d{1,9})\s*,\s*(-?\d{1,9})\s*\)")
_BLOCK_TYPE = re.compile(r"""^\s*["']?([A-Za-z]+)["']?\s*[,)]""")
_NAMED_TYPE = re.compile(r"""block_type\s*=\s*["']?([A-Za-z]+)""", re.I)
_NL_PLACE = re.compile(
    rf"\b(?:place|put|add|build|lay)\b[^\n]{{0,60}}?\b({_COLOURS})\b[^\n]{{0,40}}?"
    r"\(\s*(-?\d{1,9})\s*,\s*(-?\d{1,9})\s*,\s*(-?\d{1,9})\s*\)",
    re.I,
)
_NL_BREAK = re.compile(
    r"\b(?:break|remove|destroy|delete)\b[^\n]{0,60}?"
    r"\(\s*(-?\d{1,9})\s*,\s*(-?\d{1,9})\s*,\s*(-?\d{1,9})\s*\)",
    re.I,
)
_NL_SAY = re.compile(
    r"^\s*(?:send(?: a)? message|say|tell(?: my)?(?: partner)?)\s*[:\-]\s*(.+)$", re.I | re.S
)
_WAIT_WORDS = {"wait", "pass", "do nothing", "skip"}
_END_WORDS = {"end", "end task", "end the task", "end_task", "end session", "end_session"}
_PLACEHOLDERS = {"", "...", "…", "<your text>", "your text"}

USAGE = (
    'write one command: place_block(block_type="red", pos=(0, 0, 1)), break_block(pos=(0, 0, 1)), '
    'send_message(message="..."), wait() or end_task()'
)


def xml_block(block: Block) -> str:
    """``<block block_type="red", pos=(0, 0, 2)>`` (the paper's notation)."""
    return f'<block block_type="{COLORS[block[3]]}", pos={fmt_pos(block)}>'


def _attr(text: str) -> str:
    return text.replace('"', "'").replace("\n", " ")


def _log(title: str, entries: Sequence[tuple[int, bool, str]]) -> list[str]:
    """``title`` and a ``round r, you|partner: what`` line per entry (nothing without entries)."""
    if not entries:
        return []
    return [title, *(f"  round {r + 1}, {'you' if mine else 'partner'}: {what}"
                     for r, mine, what in entries)]  # fmt: skip


def _blocks_sentence(blocks: tuple[Block, ...], limit: int = 40) -> str:
    shown = ", ".join(fmt_block(b) for b in blocks[:limit])
    more = len(blocks) - limit
    return shown + (f", and {more} more" if more > 0 else "")


def _inventory_items(inventory: tuple[int, ...]) -> list[tuple[str, int]]:
    return [(COLORS[c], n) for c, n in enumerate(inventory) if n > 0]


class CoBlockText(SeatRulesText[CoBlockView]):
    """Text for one agent, from its view."""

    def __init__(self, config: CoBlockConfig) -> None:
        self.config = config
        self._rules: dict[int, str] = {}
        self._obs: dict[int, tuple[CoBlockView, str]] = {}
        self._legal: dict[int, tuple[CoBlockView, dict[int, str], frozenset[int]]] = {}

    # ------------------------------------------------------------------------ rules
    def _rules_text(self, view: CoBlockView) -> str:
        """The task description (paper App. B.1, adapted: ground y = 0, end_task, bounds)."""
        player = view.player
        x, y, z = self.config.grid
        end = (
            "ends the task for both of you"
            if self.config.end_rule == "either"
            else "says you are done; the task ends once both of you have ended it"
        )
        lines = [
            f"You are player_{player}, a builder collaborating with a partner in CoBlock, a "
            "Minecraft-like blocks world, to build a target structure together. Each of you has "
            "a private goal (a part of the target) and a private inventory of coloured blocks: "
            "neither of you can see the other's goal or inventory, so talk to find out who "
            "needs what. The task succeeds when every block of both goals is in place with its "
            "colour.",
            f"The world is a grid: x from 0 to {x - 1}, y from 0 (the ground) to {y - 1} (y is "
            f"up), z from 0 to {z - 1}. A block can be placed in an empty cell when you have a "
            "block of that colour and the cell is on the ground (y = 0) or shares a face with an "
            "existing block (yours or your partner's).",
            "Each round you and your partner each take one action at the same time; the round "
            f"ends when both have acted. You have at most {self.config.max_rounds} rounds.",
            "Commands (one per round):",
            '  place_block(block_type="red", pos=(0, 0, 1))  place a red block at (0, 0, 1); '
            "it leaves your inventory",
            "  break_block(pos=(3, 1, 3))  destroy the block at (3, 1, 3); it is gone for good",
            '  send_message(message="Hello, partner")  say something to your partner',
            "  wait()  do nothing this round",
            f"  end_task()  {end}",
            f"Block colours: {', '.join(COLORS)}.",
        ]
        if self.config.text_format in ("xml", "both"):
            lines += [
                "Each round you get the world state in this format: <Motives> your goal "
                "(a description and the list of its blocks), <World> every block built so far, "
                "<Inventory> your blocks and their counts (each placed block leaves it), "
                "<Dialogue> the messages so far, <ActionHistory> the recent actions of both of "
                "you, <ComparisonResult> the blocks of your goal still missing and the blocks "
                "that are not part of your goal, <LastActionResponse> the result of your last "
                "command.",
            ]
        return "\n".join(lines)

    # ------------------------------------------------------------------ observation
    def observation_text(self, view: CoBlockView) -> str:
        """The view as XML, sentences, or both (``text_format``)."""
        cached = self._obs.get(view.player)
        if cached is not None and cached[0] is view:
            return cached[1]
        fmt = self.config.text_format
        if fmt == "xml":
            text = self.xml(view)
        elif fmt == "plain":
            text = self.plain(view)
        else:
            text = self.xml(view) + "\n\n" + self.plain(view)
        self._obs[view.player] = (view, text)
        return text

    def xml(self, view: CoBlockView) -> str:
        """The paper's XML world state (App. B.1) with the comparison and last response."""
        out = [
            "<Input>",
            f'<Myself name="player_{view.player}"/>',
            f'<Round current="{view.round + 1}" max="{view.max_rounds}"/>',
            "<Motives>",
            "<VisualMotive>",
        ]
        for part in view.goal_parts:
            out.append(f"<Description>{part}</Description>")
        out += [xml_block(b) for b in view.goal]
        out += ["</VisualMotive>", "</Motives>", "<World>"]
        out += [xml_block(b) for b in view.world]
        out += ["</World>", "<Inventory>"]
        out += [f'<block block_type="{c}", count={n}>' for c, n in _inventory_items(view.inventory)]
        out += ["</Inventory>", "<Dialogue>"]
        for m in view.chat():
            who = "You" if m.mine else "Partner"
            out.append(f'<chat sender="{who}", round={m.round + 1}, message="{_attr(m.text)}">')
        out += ["</Dialogue>", "<ActionHistory>"]
        for e in view.records():
            who = "You" if e.mine else "Partner"
            status = "success" if e.ok else "failed"
            out.append(
                f'<action round={e.round + 1}, actor="{who}", command="{_attr(e.text)}", '
                f'status="{status}", message="{_attr(e.message)}">'
            )
        out += ["</ActionHistory>", "<ComparisonResult>", "<MissingBlocks>"]
        out += [xml_block(b) for b in view.missing]
        out += ["</MissingBlocks>", "<ExtraBlocks>"]
        out += [xml_block(b) for b in view.extra]
        out += ["</ExtraBlocks>", "</ComparisonResult>"]
        last = view.last_result
        if last is not None:
            status = "success" if last.ok else "failed"
            out.append(
                f'<LastActionResponse command="{_attr(last.text)}", status="{status}", '
                f'message="{_attr(last.message)}"/>'
            )
        if any(view.ended):
            out.append(
                f'<Ended you="{"yes" if view.ended[0] else "no"}", '
                f'partner="{"yes" if view.ended[1] else "no"}"/>'
            )
        if not view.legal_actions:
            out.append(f'<Outcome result="{view.outcome}"/>')
        out.append("</Input>")
        return "\n".join(out)

    def plain(self, view: CoBlockView) -> str:
        """The view in sentences."""
        goal = view.goal
        lines = [
            f"Round {view.round + 1} of {view.max_rounds}. You are player_{view.player}.",
            f"Your goal ({len(goal)} blocks): "
            + "; ".join(view.goal_parts)
            + f". Its blocks: {_blocks_sentence(goal)}.",
        ]
        items = _inventory_items(view.inventory)
        inv = ", ".join(f"{c} {n}" for c, n in items) if items else "nothing left"
        lines.append(f"Your inventory: {inv}.")
        if view.world:
            lines.append(
                f"Blocks in the world ({len(view.world)}): {_blocks_sentence(view.world)}."
            )
        else:
            lines.append("The world is empty.")
        said = [(m.round, m.mine, f'"{m.text}"') for m in view.chat()]
        lines += _log("Dialogue:", said) or ["No messages yet."]
        done = [(e.round, e.mine, f"{e.text} ({'done' if e.ok else 'failed'}: {e.message})")
                for e in view.records()]  # fmt: skip
        lines += _log("Recent actions:", done)
        missing, extra = view.missing, view.extra
        if not missing:
            lines.append("Compared with your goal: every block of your goal is in place.")
        else:
            lines.append(
                f"Compared with your goal: {len(missing)} block(s) missing: "
                f"{_blocks_sentence(missing)}."
            )
        if extra:
            lines.append(
                f"{len(extra)} block(s) in the world are not part of your goal: "
                f"{_blocks_sentence(extra)}."
            )
        last = view.last_result
        if last is not None:
            verb = "succeeded" if last.ok else "failed"
            lines.append(f"Your last action {last.text} {verb}: {last.message}")
        if view.ended[1] and not view.ended[0]:
            lines.append("Your partner has ended the task.")
        if not view.legal_actions:
            lines.append(f"The episode is over: {view.outcome}.")
        return "\n".join(lines)

    # ---------------------------------------------------------------------- actions
    def action_text(self, view: CoBlockView, action: int) -> str:
        """The command for an action id (send_message shows a ``"..."`` placeholder)."""
        return command_text(decode_action(self.config, action))

    def _legal_map(self, view: CoBlockView) -> tuple[dict[int, str], frozenset[int]]:
        cached = self._legal.get(view.player)
        if cached is not None and cached[0] is view:
            return cached[1], cached[2]
        cfg = self.config
        texts = {a: command_text(decode_action(cfg, a)) for a in view.legal_actions}
        legal = frozenset(view.legal_actions)
        self._legal[view.player] = (view, texts, legal)
        return texts, legal

    def legal_actions_text(self, view: CoBlockView) -> dict[int, str]:
        """Legal actions mapped to their commands (a copy; cached per view)."""
        return dict(self._legal_map(view)[0])

    # ----------------------------------------------------------------------- parser
    def parse_action(self, view: CoBlockView, text: str) -> ParseResult:
        """A command (or a plain phrase) to a legal action, with feedback. Never raises."""
        if not isinstance(text, str):
            return ParseResult(None, f"expected text, got {type(text).__name__}; {USAGE}")
        if not view.legal_actions:
            return ParseResult(None, "no action is legal for you now: the episode is over")
        raw = answer_segment(text, labels=("command",))
        if not raw.strip():
            return ParseResult(None, f"empty answer; {USAGE}")
        bare = raw.strip().strip(" .!\"'`*")
        if NUMBER.fullmatch(bare):  # the suite's rule: a bare number is the N-th listed action
            return option_number(bare, self.legal_actions_text(view))
        parsed = self._read(raw)
        if isinstance(parsed, str):
            return ParseResult(None, parsed)
        action, message = parsed
        return self._check(view, action, message)

    def _read(self, raw: str) -> tuple[Action, str | None] | str:
        """The first command in ``raw`` as an :class:`Action` (+ message), or feedback."""
        m = _CMD.search(raw)
        if m is not None:
            name = m.group(1).lower()
            args = raw[m.end() : m.end() + 400]
            if name == "wait":
                return Action(ActionKind.WAIT), None
            if name in ("end_task", "end_session"):
                return Action(ActionKind.END_TASK), None
            if name == "send_message":
                return Action(ActionKind.SEND_MESSAGE), _message(raw[m.end() :])
            triple = _TRIPLE.search(args)
            if triple is None:
                return f"{name} needs a position like pos=(1, 0, 2); {USAGE}"
            pos = (int(triple.group(1)), int(triple.group(2)), int(triple.group(3)))
            if name == "break_block":
                return Action(ActionKind.BREAK, -1, pos), None
            named = _NAMED_TYPE.search(args[: triple.start()]) or _BLOCK_TYPE.match(args)
            colour = named.group(1).lower() if named else ""
            if colour not in COLOR_INDEX:
                shown = f"unknown block type {colour!r}" if colour else "no block_type given"
                return f"{shown}; the colours are {', '.join(COLORS)}"
            return Action(ActionKind.PLACE, COLOR_INDEX[colour], pos), None
        words = re.sub(r"\s+", " ", raw.strip().lower()).strip(" .!\"'`*()")
        if words in _WAIT_WORDS:
            return Action(ActionKind.WAIT), None
        if words in _END_WORDS:
            return Action(ActionKind.END_TASK), None
        say = _NL_SAY.match(raw)
        if say is not None:
            return Action(ActionKind.SEND_MESSAGE), say.group(1).strip().strip("\"'") or None
        place = _NL_PLACE.search(raw)
        brk = _NL_BREAK.search(raw)
        if place is not None and (brk is None or place.start() <= brk.start()):
            pos = (int(place.group(2)), int(place.group(3)), int(place.group(4)))
            return Action(ActionKind.PLACE, COLOR_INDEX[place.group(1).lower()], pos), None
        if brk is not None:
            pos = (int(brk.group(1)), int(brk.group(2)), int(brk.group(3)))
            return Action(ActionKind.BREAK, -1, pos), None
        return f"could not find a command in {raw.strip()[:80]!r}; {USAGE}"

    def _check(self, view: CoBlockView, action: Action, message: str | None) -> ParseResult:
        """Accept ``action`` if it is legal for ``view``; otherwise say why not."""
        cfg = self.config
        _, legal = self._legal_map(view)
        if action.kind == ActionKind.SEND_MESSAGE and message is not None:
            limit = Game.max_message_length
            if len(message) > limit:
                return ParseResult(
                    None, f"message of {len(message)} characters exceeds the limit of {limit}"
                )
        if action.pos is not None and not in_bounds(action.pos, cfg.grid):
            x, y, z = cfg.grid
            return ParseResult(
                None,
                f"Position {fmt_pos(action.pos)} is outside the world (x 0-{x - 1}, y 0-{y - 1}, "
                f"z 0-{z - 1}).",
            )
        a = encode_action(cfg, action)
        if a in legal:
            if action.kind == ActionKind.SEND_MESSAGE and message is None:
                return ParseResult(
                    a,
                    "understood send_message, but without text: nothing will be sent; write "
                    'send_message(message="your words")',
                )
            shown = command_text(action, message)
            return ParseResult(a, f"understood: {shown}", message)
        if view.ended[0] and legal == {int(ActionKind.WAIT)}:
            return ParseResult(None, "you have ended the task: you can only wait()")
        cells = view.cells
        if action.kind == ActionKind.BREAK:
            return ParseResult(None, f"No block at {fmt_pos(action.pos)} to break.")  # type: ignore[arg-type]
        if action.kind == ActionKind.PLACE:
            pos = action.pos
            assert pos is not None
            if pos in cells:
                return ParseResult(None, f"Block exists at {fmt_pos(pos)}.")
            if view.inventory[action.color] <= 0:
                return ParseResult(
                    None, f"Block with type {COLORS[action.color]} not found in inventory"
                )
            if not supported(pos, cells):
                return ParseResult(
                    None,
                    f"Block position {fmt_pos(pos)} is not either on the ground or adjacent to "
                    "any existing block.",
                )
        return ParseResult(None, f"{command_text(action)} is not possible now; {USAGE}")

    # -------------------------------------------------------------------- spectator
    def skin_mirrors(self) -> tuple[Mirror, ...]:
        """The x axis may be mirrored by a skin (``x -> X - 1 - x`` in every position, ``(x,
        y, z)``): the rules are the same under it (gravity and the ground are on y)."""
        triple = r"\(\s*(?P<x>-?\d{1,9})\s*,\s*-?\d{1,9}\s*,\s*-?\d{1,9}\s*\)"
        return (Mirror("x", triple, self.config.grid[0]),)

    def skin_symbols(self) -> tuple[Symbols, ...]:
        """What a skin renames (``skin=``, :mod:`tom_envs.core.skin`): the block colours and the
        two builders' names (``player_0``). Coordinates keep theirs (gravity and the ground are
        stated in them)."""
        return (
            Symbols("colour", tuple(COLORS), COLOUR_POOL),
            Symbols("player", ("player_0", "player_1"), NAME_POOL, case_sensitive=True),
        )  # fmt: skip

    def render_state(self, state: CoBlockState) -> str:
        """A spectator's summary: round, outcome, progress, the world, goals and last actions."""
        task = state.task
        lines = [
            f"CoBlock {task.name} ({task.type}), round {state.round}/{self.config.max_rounds}, "
            f"{state.outcome}; {state.matched()}/{len(task.target_cells)} target blocks in place",
        ]
        for p in (0, 1):
            inv = ", ".join(f"{c} {n}" for c, n in _inventory_items(state.inventories[p]))
            lines.append(f"  player_{p} goal: {task.goals[p].description}")
            lines.append(f"  player_{p} inventory: {inv or 'empty'}")
        world = _blocks_sentence(state.world, 60) if state.world else "empty"
        lines.append(f"  world: {world}")
        for rec in state.records()[-2:]:
            status = "ok" if rec.ok else "failed"
            lines.append(f"  round {rec.round + 1} player_{rec.player}: {rec.text} ({status})")
        for line in state.chat()[-2:]:
            lines.append(f'  round {line.round + 1} player_{line.sender} says: "{line.text}"')
        return "\n".join(lines)


def _message(rest: str) -> str | None:
    """The text of ``send_message(`` + ``rest``: quoted or bare, ``None`` if absent or a
    placeholder."""
    body = re.match(r"\s*(?:message\s*=\s*)?", rest)
    i = body.end() if body else 0
    if i < len(rest) and rest[i] in "\"'":
        quote = rest[i]
        end = re.search(re.escape(quote) + r"\s*\)", rest[i + 1 :])
        if end is not None:
            text = rest[i + 1 : i + 1 + end.start()]
        else:
            line = rest[i + 1 :].split("\n", 1)[0]
            text = line.rstrip().rstrip(")").rstrip().rstrip(quote)
    else:
        line = rest[i:].split("\n", 1)[0]
        close = line.rfind(")")
        text = line[:close] if close >= 0 else line
    text = text.strip()
    return None if text.lower() in _PLACEHOLDERS else text
