"""CoBlock: the shared 3D world drawn in perspective (your goal's missing blocks as dashed
outlines), and one flat map per height level (click a cell to place a block of a colour you hold
there, or to remove the block in it). Your goal, your inventory, the dialogue and every action of
both builders are listed in full; chat is an action (send a message)."""

from __future__ import annotations

from typing import Any

from tom_envs.games.coblock.picture import PALETTE, _faces
from tom_envs.games.coblock.rules import ActionKind, decode_action
from tom_envs.games.coblock.structures import COLORS, pos_of
from tom_envs.serve.boards.base import Board

TITLE = "CoBlock"
CELL, SHADE = 22, {"top": 1.0, "east": 0.8, "south": 0.62}
#: Height of the perspective picture above the level maps.
PICTURE = 330


def seat_names(bundle: Any) -> list[str]:
    """Two builders."""
    return ["Player 1", "Player 2"]


def chat(bundle: Any, view: Any) -> list[tuple[Any, int, str]]:
    """The partner's messages in this view: ``(key, sender, text)``."""
    first = view.dialogue_total - len(view.dialogue)
    other = 1 - view.player
    return [(("m", first + k), other, text) for k, (_, mine, text) in enumerate(view.dialogue)
            if not mine]  # fmt: skip


def words(view: Any, config: Any, action: int) -> str:
    """An action in plain words."""
    act = decode_action(config, action)
    if act.kind == ActionKind.PLACE and act.pos is not None:
        x, y, z = act.pos
        return f"Place a {COLORS[act.color]} block at x={x}, z={z}, height {y}"
    if act.kind == ActionKind.BREAK and act.pos is not None:
        x, y, z = act.pos
        return f"Remove the block at x={x}, z={z}, height {y}"
    return {ActionKind.WAIT: "Wait (do nothing this round)",
            ActionKind.SEND_MESSAGE: "Send the message in the chat box",
            ActionKind.END_TASK: "End the task (you think the structure is done)"}[act.kind]  # fmt: skip


def build(ctx: Any) -> Board:
    """The world in perspective, the per-level maps, and the builder's facts."""
    view, cfg = ctx.view, ctx.bundle.game.config
    gx, gy, gz = view.grid
    per_row = max(1, min(gy, 900 // ((gx + 1) * CELL)))
    rows = (gy + per_row - 1) // per_row
    b = Board(max(700, per_row * (gx + 1) * CELL + 20), PICTURE + 40 + rows * ((gz + 2) * CELL + 10))
    for c in COLORS:
        b.mark(f"block:{c}", f"a {c} block", "rect", PALETTE[c])
    b.mark("goal", "a block of your goal that is not in place yet (dashed: its colour)", "rect",
           "#fff", "#333", dash="4,3")  # fmt: skip
    b.mark("empty", "an empty cell (click a highlighted one to place or remove a block)", "rect",
           "#fbfbf6", "#ccc")  # fmt: skip
    _perspective(b, view)
    _levels(b, view, cfg, per_row)
    for a in view.legal_actions:
        kind = decode_action(cfg, a).kind
        group = "Build" if kind in (ActionKind.PLACE, ActionKind.BREAK) else ""
        b.label(a, words(view, cfg, a), group)
    _panels(b, view, cfg, ctx.recalled)
    b.headline = f"Round {view.round + 1} of {view.max_rounds}"
    return b


def _perspective(b: Board, view: Any) -> None:
    gx, gy, gz = view.grid
    cells = {pos_of(bk): bk[3] for bk in view.world}
    ghost = {pos_of(bk): bk[3] for bk in view.goal if cells.get(pos_of(bk)) != bk[3]}
    cos = 0.8660254
    scale = min((PICTURE - 30) / (gy + (gx + gz) / 2), (b.width - 40) / ((gx + gz) * cos))
    ox, oy = b.width / 2 - scale * (gx - gz) * cos / 2, 15 + scale * gy
    ground = [(0, 0, 0), (gx, 0, 0), (gx, 0, gz), (0, 0, gz)]
    b.poly([_screen(p, scale, ox, oy) for p in ground], "#f2f2ee", "#ccc")
    for name, corner in (("x", (gx + 0.6, 0, 0)), ("z", (0, 0, gz + 0.6))):
        x, y = _screen(corner, scale, ox, oy)
        b.text(x, y + 4, name, 13, fill="#666", bold=True)
    order = sorted({**ghost, **cells}.items(), key=lambda kv: (sum(kv[0]), kv[0][1]))
    for pos, colour in order:
        solid = pos in cells
        colour = cells.get(pos, colour)
        for face, pts in _faces(*pos).items():
            fill = _shade(PALETTE[COLORS[colour]], SHADE[face]) if solid else "none"
            b.poly([(ox + scale * x, oy - scale * y) for x, y in pts], fill,
                   "#222" if solid else PALETTE[COLORS[colour]],
                   m=f"block:{COLORS[colour]}" if solid else "goal",
                   dash="" if solid else "4,3", sw=1 if solid else 2)  # fmt: skip


def _screen(p: tuple[int, int, int], scale: float, ox: float, oy: float) -> tuple[float, float]:
    from tom_envs.games.coblock.picture import project

    x, y = project(*p)
    return ox + scale * x, oy - scale * y


def _shade(colour: str, factor: float) -> str:
    r, g, bl = (min(255, int(int(colour[i : i + 2], 16) * factor)) for i in (1, 3, 5))
    return f"#{r:02x}{g:02x}{bl:02x}"


def _levels(b: Board, view: Any, cfg: Any, per_row: int) -> None:
    """One x-z map per height: blocks, missing goal blocks, and the actions per cell."""
    gx, gy, gz = view.grid
    cells = {pos_of(bk): bk[3] for bk in view.world}
    goal = {pos_of(bk): bk[3] for bk in view.goal}
    acts: dict[tuple[int, int, int], list[int]] = {}
    for a in view.legal_actions:
        act = decode_action(cfg, a)
        if act.pos is not None:
            acts.setdefault(act.pos, []).append(a)
    top = PICTURE + 10
    b.text(10, top, "Each map below is one height level seen from above (x to the right, z "
           "down). Click a highlighted cell to build there.", 12, "start", fill="#444")  # fmt: skip
    for y in range(gy):
        col, row = y % per_row, y // per_row
        x0, y0 = 10 + col * (gx + 1) * CELL, top + 22 + row * ((gz + 2) * CELL + 10)
        b.text(x0, y0 + 10, f"height {y}" + (" (ground)" if y == 0 else ""), 11, "start", bold=True)
        for x in range(gx):
            for z in range(gz):
                _cell(b, (x, y, z), x0 + x * CELL, y0 + 16 + z * CELL, cells, goal, acts)


def _cell(b: Board, pos: tuple[int, int, int], px: float, py: float, cells: dict, goal: dict,
          acts: dict) -> None:  # fmt: skip
    act = acts.get(pos, [])
    tip = f"x={pos[0]}, z={pos[2]}, height {pos[1]}"
    if pos in cells:
        colour = COLORS[cells[pos]]
        b.rect(px, py, CELL - 2, CELL - 2, PALETTE[colour], "#d4a017" if act else "#222",
               m=f"block:{colour}", act=act, tip=f"{colour} block at {tip}", rx=2,
               sw=2 if act else 1)  # fmt: skip
    elif pos in goal:
        colour = COLORS[goal[pos]]
        b.rect(px, py, CELL - 2, CELL - 2, "#fff", PALETTE[colour], m="goal", act=act,
               tip=f"your goal: a {colour} block at {tip}", rx=2, dash="4,3", sw=2)  # fmt: skip
    else:
        b.rect(px, py, CELL - 2, CELL - 2, "#fffbe6" if act else "#fbfbf6",
               "#d4a017" if act else "#ccc", m="empty", act=act, tip=tip, rx=2)  # fmt: skip


def recall(bundle: Any, view: Any) -> list[tuple[Any, str]]:
    """The actions this view lists, keyed by their place in the game (the view shows only the
    last few: the page keeps every one the seat was shown)."""
    first = view.history_total - len(view.history)
    return [(("action", first + k), _action_line(view, bundle.game.config, entry))
            for k, entry in enumerate(view.history)]  # fmt: skip


def _action_line(view: Any, cfg: Any, entry: tuple) -> str:
    rnd, mine, action, _, ok, message = entry
    what = words(view, cfg, action)
    return f"Round {rnd + 1}, {'You' if mine else 'Partner'}: {what}" + ("" if ok else f" (failed: {message})")


def _panels(b: Board, view: Any, cfg: Any, remembered: tuple[str, ...] = ()) -> None:
    b.panel("Your goal (only you know it)", list(view.goal_parts) or ["none"])
    missing = [f"a {COLORS[bk[3]]} block at x={bk[0]}, z={bk[2]}, height {bk[1]}"
               for bk in view.missing]  # fmt: skip
    b.panel("Still missing from your goal", missing or ["nothing: your part is complete"])
    b.panel("Your blocks (only you know them)",
            [f"{COLORS[c]}: {n}" for c, n in enumerate(view.inventory) if n] or ["none left"])  # fmt: skip
    done = [f"You {'have' if view.ended[0] else 'have not'} ended the task; your partner "
            f"{'has' if view.ended[1] else 'has not'}."]  # fmt: skip
    log = list(remembered) or [_action_line(view, cfg, e) for e in view.history]
    earlier = view.history_total - len(log)
    if earlier > 0:
        log.insert(0, f"({earlier} earlier actions are not listed here)")
    b.panel("Actions so far", log or ["none yet"])
    b.panel("Ending", done)


def outcome(ctx: Any) -> str:
    """The end of the game in words."""
    v = ctx.view
    return {"success": "The structure is complete: the task succeeded!",
            "ended": "The task was ended.", "timeout": "Time is up: the rounds are over."}.get(
                v.outcome, "The game is over.")  # fmt: skip
