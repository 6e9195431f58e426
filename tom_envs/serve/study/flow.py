"""What a participant's page shows at each step, and what a submitted step records.

:func:`page` is the page's whole state (the same JSON over HTTP and the websocket):
``{"kind": "consent" | "instructions" | "intro" | "waiting" | "play" | "survey" | "done" |
"declined" | "screened", "step": <step id>, "progress": {"step", "of"}, "notice", ...}``; a
``"play"`` page carries the board of :func:`tom_envs.serve.boards.participant_payload`. No page
holds a seed, an agent spec, a participant key or any other field meant for researchers.
:func:`submit` checks and records a step's answer (consent, having read, a survey), refusing a
stale step id, so a resent or double-clicked answer is recorded once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tom_envs.serve.boards import board_for, participant_payload
from tom_envs.serve.study.server import Live, Refused
from tom_envs.serve.study.spec import Item

if TYPE_CHECKING:
    from tom_envs.serve.study.server import StudyServer
    from tom_envs.serve.study.state import Participant

__all__ = ["page", "submit"]


def _items(server: StudyServer) -> dict[str, Item]:
    items = {i.id: i for i in (*server.study.survey_episode, *server.study.survey_end)}
    items.update({a.item.id: a.item for a in server.study.attention})
    return items


def _item_json(item: Item) -> dict[str, Any]:
    return {"id": item.id, "kind": item.kind, "text": item.text, "options": list(item.options),
            "required": item.required, "max_chars": item.max_chars}  # fmt: skip


async def page(server: StudyServer, pid: str) -> dict[str, Any]:
    """The participant's page now (starting their episode step when it is due)."""
    p = server.ledger.participants[pid]
    due = p.status == "active" and p.step.kind == "episode" and p.session is None
    if due and p.waiting is None and not server.journal.full:
        await server.begin(p)
    flash = server.flash.pop(pid, "")
    out: dict[str, Any] = {"title": server.study.title or "Study",
                           "progress": {"step": min(p.cursor + 1, len(p.steps)), "of": len(p.steps)}}
    out.update(await _body(server, p))
    out["notice"] = " ".join(n for n in (flash, out.get("notice", "")) if n)
    step = out.get("step", "")
    if server.shown.get(pid, ("",))[0] != step:
        server.shown[pid] = (step, server.clock())
    return out


async def _body(server: StudyServer, p: Participant) -> dict[str, Any]:
    study = server.study
    if p.status == "declined":
        return {"kind": "declined", "text": "You chose not to take part. You may close this page."}
    if p.status == "screened_out":
        return {"kind": "screened", "text": study.screen_message}
    step = p.step
    if step.kind == "consent":
        return {"kind": "consent", "step": step.id, "text": study.consent, "agree": study.agree,
                "decline": study.decline}  # fmt: skip
    if step.kind == "instructions":
        return {"kind": "instructions", "step": step.id, "text": study.instructions}
    if step.kind == "intro":
        entry = study.game(step.game)
        practice = entry.practice.episodes if entry.practice else 0
        return {"kind": "intro", "step": step.id, "game": board_for(_game_spec(entry.game)).TITLE,
                "text": entry.instructions, "practice": practice}  # fmt: skip
    if step.kind == "episode":
        return await _episode(server, p)
    if step.kind == "survey":
        items = _items(server)
        return {"kind": "survey", "step": step.id, "items": [_item_json(items[i]) for i in step.items],
                "about": "the game you just played" if step.game else "the whole study"}  # fmt: skip
    if p.status == "active":
        await server.record({"ev": "completed", "pid": p.pid, "code": server.code(p.pid)})
    return {"kind": "done", "step": step.id, "code": p.code or server.code(p.pid),
            "text": study.completion_message}  # fmt: skip


def _game_spec(name: str) -> Any:
    from tom_envs.registration import game_spec

    return game_spec(name)


async def _episode(server: StudyServer, p: Participant) -> dict[str, Any]:
    step = p.step
    live = server.live.get(p.session or "")
    if live is not None and p.pid in live.members:
        seat = live.members[p.pid]
        cached = live.cache.get(seat)
        fresh = cached is not None and cached[0] == live.session.version
        board = cached[1] if fresh and cached else await asyncio.to_thread(_render, live, seat)
        return {"kind": "play", "step": step.id, "practice": step.practice, "board": board,
                "notice": live.notice.get(p.pid, "")}  # fmt: skip
    if p.waiting is not None:
        left = max(0.0, p.waiting["deadline"] - server.wall())
        need = len(server.seating(step).people) - 1
        return {"kind": "waiting", "step": step.id, "seconds_left": round(left),
                "text": f"Waiting for {need} other participant{'s' if need > 1 else ''} to join "
                        "your game. Please keep this page open."}  # fmt: skip
    return {"kind": "waiting", "step": step.id, "seconds_left": 0,
            "text": "Your game is being prepared. Please keep this page open."}


def _render(live: Live, seat: int) -> dict[str, Any]:
    """The seat's board (off the event loop; cached per state version)."""
    s = live.session
    with s.lock:
        cached = live.cache.get(seat)
        if cached is not None and cached[0] == s.version:
            return cached[1]
        data = participant_payload(s, seat)
        live.cache[seat] = (s.version, data)
        return data


async def submit(server: StudyServer, pid: str, step: object, body: Mapping[str, Any]) -> None:
    """Record the participant's answer to their current step (:class:`Refused` if stale)."""
    server.check_room()
    p = server.ledger.participants[pid]
    if p.status != "active":
        raise Refused("this study has ended for you")
    if step != p.step.id:
        raise Refused("this page is out of date: it has been answered already")
    kind = p.step.kind
    if kind == "consent":
        agreed = body.get("agree")
        if not isinstance(agreed, bool):
            raise Refused("agree must be true or false", 400)
        await server.record({"ev": "consent", "pid": pid, "agreed": agreed})
    elif kind in ("instructions", "intro"):
        await server.record({"ev": "read", "pid": pid, "step": p.step.id, "seconds": _seconds(server, pid)})
    elif kind == "survey":
        answers, attention = check_answers(server, p.step.items, body.get("answers"))
        await server.record({"ev": "answers", "pid": pid, "step": p.step.id, "answers": answers,
                             "attention": attention, "seconds": _seconds(server, pid)})  # fmt: skip
        if (server.ledger.participants[pid].failures > server.study.max_attention_failures
                and server.study.on_attention_fail == "end"):  # fmt: skip
            await server.record({"ev": "screened", "pid": pid})
    else:
        raise Refused("nothing to submit at this step")


def _seconds(server: StudyServer, pid: str) -> float | None:
    shown = server.shown.get(pid)
    return None if shown is None else round(server.clock() - shown[1], 3)


def check_answers(server: StudyServer, ids: tuple[str, ...],
                  raw: object) -> tuple[dict[str, Any], dict[str, bool]]:  # fmt: skip
    """The answers to items ``ids`` (:class:`Refused` naming the first bad one) and, per
    attention check, whether it was passed."""
    if not isinstance(raw, dict):
        raise Refused("answers must be an object of item ids to answers", 400)
    unknown = sorted(str(k)[:40] for k in raw if k not in ids)
    if unknown:
        raise Refused(f"unknown items {unknown}", 400)
    items = _items(server)
    checks = {a.item.id: a.answer for a in server.study.attention}
    out: dict[str, Any] = {}
    for i in ids:
        item, value = items[i], raw.get(i)
        if value is None or value == "":
            if item.required:
                raise Refused(f"please answer: {item.text}", 400)
            continue
        if not isinstance(value, str):
            raise Refused(f"{i}: the answer must be text", 400)
        if item.kind != "text" and value not in item.options:
            raise Refused(f"{i}: choose one of the options", 400)
        if item.kind == "text" and len(value) > item.max_chars:
            raise Refused(f"{i}: at most {item.max_chars} characters", 400)
        out[i] = value
    attention = {i: out.get(i) == checks[i] for i in ids if i in checks}
    return out, attention
