"""Overcooked: the kitchen, both chefs by name (arrow: where each faces; label: what each holds),
pots with their onions and cooking time, items on counters. Click a tile next to your chef to walk
there (or turn to face it), the tile you face to use it (pick up, put down, serve), or your chef to
stay; the arrow keys and the space bar do the same."""

from __future__ import annotations

from typing import Any

from tom_envs.games.overcooked.layout import (
    COUNTER,
    DIRECTIONS,
    DISH_DISPENSER,
    FLOOR,
    ONION_DISPENSER,
    POT,
    SERVING,
    TERRAIN_NAMES,
)
from tom_envs.games.overcooked.rules import Action, item_name
from tom_envs.serve.boards.base import SEAT_COLOURS, Board

TITLE = "Overcooked"
TILE = {COUNTER: "#c8a96e", ONION_DISPENSER: "#f5d76e", DISH_DISPENSER: "#dfe6e9", POT: "#555",
        SERVING: "#9bd39b", FLOOR: "#fbfbf6"}  # fmt: skip
WORD = {ONION_DISPENSER: "onions", DISH_DISPENSER: "plates", SERVING: "serve"}
ARROW = ("↑", "↓", "→", "←")
MOVE_WORDS = ("Walk up", "Walk down", "Walk right", "Walk left")
KEYS = {"ArrowUp": Action.NORTH, "ArrowDown": Action.SOUTH, "ArrowRight": Action.EAST,
        "ArrowLeft": Action.WEST, " ": Action.INTERACT, "s": Action.STAY}  # fmt: skip
S, TOP = 64, 8


def seat_names(bundle: Any) -> list[str]:
    """The chefs' names (Alice and Bob)."""
    return list(bundle.game.config.names)


def build(ctx: Any) -> Board:
    """The kitchen from the chef's view."""
    view = ctx.view
    layout = view.config.kitchen
    b = Board(layout.width * S + 16, TOP + layout.height * S + 8)
    clicks = _clicks(view)
    for ch, text in TERRAIN_NAMES.items():
        b.mark(f"tile:{ch}", text, "rect", TILE[ch], "#999")
    for y, row in enumerate(layout.grid):
        for x, ch in enumerate(row):
            ch = ch if ch in TILE else FLOOR
            act = clicks.get((x, y), [])
            b.rect(8 + x * S, TOP + y * S, S, S, TILE[ch], "#d4a017" if act else "#999",
                   m=f"tile:{ch}", act=act, rx=0, sw=3 if act else 1,
                   tip=_tip(ch, act))  # fmt: skip
            if ch in WORD:
                b.text(8 + x * S + S / 2, TOP + y * S + S - 8, WORD[ch], 11, act=act)
    _pots_and_counters(b, view, layout)
    _chefs(b, view, ctx.names)
    for a in view.legal_actions:
        b.label(a, MOVE_WORDS[a] if a < 4 else ("Stay" if a == Action.STAY else
                                                 "Use what you face (interact)"))  # fmt: skip
    b.keys = {k: int(a) for k, a in KEYS.items() if a in view.legal_actions}
    cook = view.config.cook_time
    b.panel("How soup is made", [
        "Put 3 onions in a pot; it cooks by itself" if view.config.cooking == "auto"
        else "Put 3 onions in a pot, then use the pot to start cooking",
        f"It cooks for {cook} steps; then take it out with a plate and bring it to the delivery "
        f"window for {view.config.delivery_reward:g} points (shared).",
        "Keys: the arrows walk, the space bar uses what you face, s stays."])  # fmt: skip
    b.panel("Who holds what", [f"You ({ctx.names[view.player]}): {item_name(view.me.held)}",
                               f"{ctx.names[1 - view.player]}: {item_name(view.partner.held)}"])  # fmt: skip
    b.headline = f"Step {view.timestep} of {view.horizon} · score {view.score:g}"
    return b


def _clicks(view: Any) -> dict[tuple[int, int], list[int]]:
    """The tiles a click acts on: next to my chef (walk or turn), the faced one (use), mine."""
    legal = set(view.legal_actions)
    if not legal:
        return {}
    x, y = view.me.pos
    out: dict[tuple[int, int], list[int]] = {(x, y): [Action.STAY] if Action.STAY in legal else []}
    grid = view.config.kitchen.grid
    for d, (dx, dy) in enumerate(DIRECTIONS):
        nx, ny = x + dx, y + dy
        if not (0 <= ny < len(grid) and 0 <= nx < len(grid[ny])):
            continue
        ch = grid[ny][nx]
        faced = d == view.me.facing and ch not in (FLOOR, "1", "2")
        act = Action.INTERACT if faced else d
        if act in legal:
            out[(nx, ny)] = [int(act)]
    return out


def _tip(ch: str, act: list[int]) -> str:
    what = TERRAIN_NAMES.get(ch, "floor")
    if not act:
        return what
    verb = {int(Action.INTERACT): "use it", int(Action.STAY): "stay"}.get(act[0], "walk here / face it")
    return f"{what}: {verb}"


def _pots_and_counters(b: Board, view: Any, layout: Any) -> None:
    cook = view.config.cook_time
    for (x, y), (n, tick) in zip(layout.pots, view.pots, strict=True):
        cx, cy = 8 + x * S + S / 2, TOP + y * S
        state = "" if tick < 0 else ("ready!" if tick >= cook else f"cooking {cook - tick}")
        b.text(cx, cy + 26, f"{n}/3 onions", 11, fill="#fff", bold=True)
        b.text(cx, cy + 44, state, 11, fill="#ffd54f", bold=True)
    for (x, y), item in zip(layout.counters, view.counters, strict=True):
        if item:
            b.text(8 + x * S + S / 2, TOP + y * S + S / 2 + 4, item_name(item), 11, bold=True)


def _chefs(b: Board, view: Any, names: list[str]) -> None:
    for seat, chef in ((view.player, view.me), (1 - view.player, view.partner)):
        you = seat == view.player
        key = b.mark(f"seat{seat}", f"{names[seat]}{' (you)' if you else ''}: the arrow shows "
                     "where the chef faces", "circle", SEAT_COLOURS[seat], letter=names[seat][0])  # fmt: skip
        x, y = chef.pos
        cx, cy = 8 + x * S + S / 2, TOP + y * S + S / 2 - 4
        arrow = ARROW[chef.facing] if chef.facing < 4 else ""
        b.token(cx, cy, 18, SEAT_COLOURS[seat], f"{names[seat][0]}{arrow}", key, you=you,
                tip=names[seat], act=[Action.STAY] if you and Action.STAY in view.legal_actions
                else [])  # fmt: skip
        if chef.held:
            b.text(cx, cy + 32, item_name(chef.held), 10, bold=True)


def outcome(ctx: Any) -> str:
    """The end of the game in words."""
    return f"Time is up: the kitchen delivered {ctx.view.score:g} points."
