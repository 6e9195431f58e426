"""Participant boards: what a person sees of their seat, for a first-time player of every game.

Each game has a module here with ``TITLE``, ``seat_names(bundle)`` (the seats as the game names
them: Alpha, Bravo, Charlie in bomb defusal), ``build(ctx) -> Board`` (drawn from the seat's player
view only: the same view bots and LLMs get), ``outcome(ctx)`` (the end in words) and, in games with
chat, ``chat(bundle, view)`` (the messages the view delivers). :func:`participant_payload` turns a
session's seat into the page's data: the board with its legend, panels of everything the seat
knows, the legal actions in words, the chat log and whose turn it is; never the LLM prompt, seeds
or any developer field. ``tests/serve/test_boards.py`` checks every registered game.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from tom_envs.serve.boards.base import Board

if TYPE_CHECKING:
    from tom_envs.serve.session import Session

__all__ = ["Board", "Ctx", "board_for", "note_chat", "participant_payload", "seat_names"]

#: The board module of each game package (``tom_envs.games.<package>``).
MODULES = {
    "matrix": "matrix",
    "example": "example",
    "bomb_defusal": "bomb",
    "collab_capture": "capture",
    "collab_escape": "escape",
    "hanabi": "hanabi",
    "guandan": "guandan",
    "coblock": "coblock",
    "overcooked": "overcooked",
}


@dataclass(frozen=True)
class Ctx:
    """What a board is drawn from: the game, the seat's view, the seat and every seat's name."""

    bundle: Any
    view: Any
    seat: int
    names: list[str]
    #: what the seat was shown before and its view no longer holds (a game's ``recall``)
    recalled: tuple[str, ...] = ()


def board_for(spec: Any) -> ModuleType:
    """The participant board module of a game (KeyError naming the game if it has none)."""
    package = spec.module.split(".")[-2]
    if package not in MODULES:
        raise KeyError(f"{spec.name} has no participant board: add one to tom_envs/serve/boards/")
    return importlib.import_module(f"tom_envs.serve.boards.{MODULES[package]}")


def seat_names(spec: Any, bundle: Any) -> list[str]:
    """The seats' names as the game names them."""
    return list(board_for(spec).seat_names(bundle))


def note_chat(session: Session) -> None:
    """Add to each person's chat log the messages their views have delivered since the last
    call, and their own messages (a log of what each seat was shown, as a person remembers it)."""
    module = board_for(session.spec)
    logs: dict[int, dict[Any, tuple[int, int, str]]] = session.__dict__.setdefault("chat_logs", {})
    seen = session.__dict__.get("chat_seen", 0)
    steps = session.driver.steps
    for s in session.specs:
        if session.specs[s] != "human":
            continue
        log = logs.setdefault(s, {})
        for i, rec in enumerate(steps[seen:], start=seen):
            if rec.get("message") and rec["agent"] == f"player_{s}":
                log.setdefault(("own", i), (len(log), s, str(rec["message"])))
        chat = getattr(module, "chat", None)
        if chat is not None:
            for key, sender, text in chat(session.bundle, session.view(s)):
                log.setdefault(key, (len(log), int(sender), str(text)))
    session.__dict__["chat_seen"] = len(steps)
    recall = getattr(module, "recall", None)
    if recall is not None:
        memory: dict[int, dict[Any, tuple[int, str]]] = session.__dict__.setdefault("recalled", {})
        for s in logs:
            mine = memory.setdefault(s, {})
            for key, text in recall(session.bundle, session.view(s)):
                mine.setdefault(key, (len(mine), str(text)))


def recalled(session: Session, seat: int) -> tuple[str, ...]:
    """The seat's remembered lines (see :func:`note_chat`), oldest first."""
    memory = session.__dict__.get("recalled", {}).get(seat, {})
    return tuple(text for _, text in sorted(memory.values()))


def participant_payload(session: Session, seat: int) -> dict[str, Any]:
    """The participant page's data for ``seat`` of ``session`` (see the module docstring)."""
    module = board_for(session.spec)
    names = list(module.seat_names(session.bundle))
    view = session.view(seat)
    note_chat(session)
    ctx = Ctx(session.bundle, view, seat, names, recalled(session, seat))
    mine = session.must_act(seat)
    board = module.build(ctx)
    data = board.to_json(list(view.legal_actions) if mine else [])
    if not mine:
        for shape in data["board"]["shapes"]:
            shape.pop("act", None)
        data["keys"] = {}
    log = sorted(session.__dict__.get("chat_logs", {}).get(seat, {}).values())
    chat_on = bool(session.game.tags.communication)
    out = {
        "title": module.TITLE,
        "seat": seat,
        "you": names[seat],
        "names": names,
        "people": [names[s] for s in sorted(s for s, v in session.specs.items() if v == "human")],
        "step": session.steps.get(seat, 0),
        "status": session.status,
        "your_turn": mine,
        "waiting_for": [names[s] for s in session.waiting_for() if s != seat],
        "chat": {"on": chat_on, "send_action": _send_action(session, view) if chat_on else None,
                 "log": [{"who": "You" if s == seat else names[s], "text": t, "mine": s == seat}
                         for _, s, t in log]},
        "outcome": module.outcome(ctx) if session.status != "playing" else "",
        **data,
    }
    return out


def _send_action(session: Session, view: Any) -> int | None:
    """The action that sends a message on its own (CoBlock's ``send_message``), if the game has
    one; otherwise a message goes with the next action."""
    text = session.bundle.text
    for a in view.legal_actions:
        if text.action_text(view, a).startswith("send_message("):
            return int(a)
    return None
