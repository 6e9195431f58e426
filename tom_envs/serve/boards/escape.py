"""CollabEscape (repair two generators, then escape): the rooms and one-way passages (click a room
next to you to move there, click your room to fix its generator or wait), both players by name,
the killer, the generators with their repairs and the exit gate."""

from __future__ import annotations

from typing import Any

from tom_envs.games.collab_escape.rules import Action
from tom_envs.serve.boards.base import Board, alice_and_bob, room_board, room_positions

TITLE = "Escape together"

seat_names = alice_and_bob


def build(ctx: Any) -> Board:
    """The map with the players, the killer, generators and the gate; the situation in words."""
    view, maze = ctx.view, ctx.bundle.game.maze
    b = Board(540, 560)
    edges, pairs = [], set()
    for a in maze.rooms:
        for c in maze.out(a):
            pairs.add((min(a, c), max(a, c)))
            if a in maze.out(c):
                if a < c:
                    edges.append((a, c, "open"))
            else:
                edges.append((a, c, "oneway"))
    pos = room_positions(maze.rooms, sorted(pairs), 60, 60, 420)
    legal = set(view.legal_actions)
    acts = {r: [r] for r in maze.rooms if r in legal}
    acts[view.my_room] = [a for a in legal if a in (Action.WAIT, Action.FIX)]
    limit = f" of at most {view.max_turns}" if view.max_turns else ""
    b.headline = f"Turn {view.turn + 1}{limit} · gate {'open' if view.gate_open else 'closed'}"
    here = "fix the generator here, or wait" if Action.FIX in legal else "wait here"
    return room_board(ctx, b, pos, edges, acts, here, (view.killer_room, "K", "killer"),
                      lambda: _things(b, view, pos))  # fmt: skip


def _things(b: Board, view: Any, pos: dict[int, tuple[float, float]]) -> None:
    gen = b.mark("generator", "a generator (number: repairs still needed)", "rect", "#d35400")
    fixed = b.mark("fixed", "a repaired generator", "rect", "#27ae60")
    for room, done, needed in view.generators:
        x, y = pos[room]
        left = max(0, needed - done)
        b.rect(x - 12, y + 33, 24, 18, "#27ae60" if not left else "#d35400",
               m=fixed if not left else gen, tip=f"generator in room {room}")  # fmt: skip
        b.text(x, y + 47, str(left) if left else "✓", 12, fill="#fff", bold=True)
    gate = b.mark("gate", "the exit gate (opens when both generators are repaired)", "rect",
                  "#6c3483")  # fmt: skip
    gx, gy = pos[view.gate_room]
    b.rect(gx - 16, gy - 52, 32, 18, "#6c3483" if view.gate_open else "#999", m=gate,
           tip="the exit gate")  # fmt: skip
    b.text(gx, gy - 39, "EXIT", 10, fill="#fff", bold=True)


def outcome(ctx: Any) -> str:
    """The end of the game in words."""
    v = ctx.view
    if v.escaped:
        return "You escaped: the team won!"
    return "The killer caught a player: the team lost." if v.caught else "Time is up."
