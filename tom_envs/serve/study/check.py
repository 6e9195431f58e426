"""A study's partners and game arguments, checked against the operator's presets and resolved
into the seatings the server plays (:func:`check_study`).

Every game argument is checked as a file's (:func:`tom_envs.core.params.validate_kwargs`,
``source="file"``), every partner is built once (so a bad name, a refused option or a missing
checkpoint stops the study before the first participant): agents from the file under the rules for
untrusted specs, the operator's presets (``--partner NAME=SPEC``) as the operator's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tom_envs.serve.study.spec import Condition, GameEntry, Partner, Study, StudyError

__all__ = ["Seating", "check_study", "partner_spec", "seating"]

PRACTICE = "practice"


@dataclass(frozen=True)
class Seating:
    """How one game is played in one condition: the registered game, its checked arguments, the
    seats people take, and one agent spec per other seat (with whether it is the operator's)."""

    game: str
    kwargs: Mapping[str, Any]
    seats: int
    people: tuple[int, ...]
    partners: tuple[str, ...]
    trusted: tuple[bool, ...]
    condition: str


def zoo_spec(name: str, game: str) -> str:
    """The agent spec of member ``name`` of ``game``'s partner zoo (:mod:`tom_envs.zoo`)."""
    from tom_envs import zoo

    try:
        return zoo.agent_spec(name, game)
    except KeyError as exc:
        raise StudyError(f"zoo:{name}: {exc.args[0]}") from None


def partner_spec(partner: Partner, presets: Mapping[str, str], game: str,
                 where: str) -> tuple[str, bool]:  # fmt: skip
    """``(agent spec, trusted)`` of a non-human partner (the operator's presets are trusted)."""
    from tom_envs.agents import parse_spec

    if partner.kind == "agent":
        return partner.spec, False
    if partner.kind == "zoo":
        return zoo_spec(partner.name, game), False
    if partner.name not in presets:
        given = sorted(presets) or "none"
        raise StudyError(f"{where}: the operator's partner {partner.name!r} is not given; start "
                         f"with --partner {partner.name}=SPEC (given: {given})")  # fmt: skip
    spec = presets[partner.name]
    if partner.kind == "preset":
        return spec, True
    head, options = parse_spec(spec, trusted=True)
    if head != "llm":
        raise StudyError(f"{where}: endpoint {partner.name!r} must be an LLM preset "
                         f"(--partner {partner.name}=llm:model=M:base_url=URL), it is {head!r}")  # fmt: skip
    if "preset" in options:
        raise StudyError(f"{where}: endpoint {partner.name!r} already names a protocol preset; "
                         "give the protocol in the study file only")  # fmt: skip
    return f"{spec}:preset={partner.llm}", True


def _game_kwargs(entry: GameEntry | None, name: str, kwargs: Mapping[str, Any],
                 where: str) -> tuple[Any, dict[str, Any], int]:  # fmt: skip
    """``(game spec with the arguments, checked arguments, number of seats)``."""
    from tom_envs.core.params import validate_kwargs
    from tom_envs.core.skin import SKIN
    from tom_envs.registration import game_spec

    try:
        spec = game_spec(name)
        module = spec.load()
        fixed = sorted(k for k in kwargs if k in spec.fixed)
        if fixed:
            raise ValueError(f"{fixed[0]!r} is fixed by the game {spec.name}")
        checked = validate_kwargs((*module.PARAMS, SKIN), kwargs, source="file")
        full = dataclasses.replace(spec, kwargs={**spec.kwargs, **checked})
        seats = module.make_bundle(**full.kwargs).game.num_players
    except (KeyError, ValueError, TypeError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        raise StudyError(f"{where}: {msg}") from None
    if entry is not None and not 0 <= entry.seat < seats:
        raise StudyError(f"{where}.seat: {spec.name} has seats 0 to {seats - 1}, got {entry.seat}")
    return full, checked, seats


def seating(study: Study, entry: GameEntry, condition: Condition | None,
            presets: Mapping[str, str]) -> Seating:  # fmt: skip
    """The seating of ``entry`` in ``condition`` (``None``: its practice rounds)."""
    where = f"games {entry.name!r}, " + (f"condition {condition.name!r}" if condition else PRACTICE)
    practice = entry.practice
    kwargs = practice.kwargs if condition is None and practice is not None else entry.kwargs
    full, checked, n = _game_kwargs(entry, entry.game, kwargs, where)
    if condition is None:
        assert practice is not None
        people, partner, others = 1, practice.partner, None
    elif condition.partner.kind == "human":
        people = condition.people or n
        partner = None
        others = _others(condition, n, people, where)
    else:
        people, partner, others = 1, condition.partner, None
    if not 1 <= people <= n:
        raise StudyError(f"{where}: people must be 1 to {n} in {full.name}, got {people}")
    seats = tuple((entry.seat + k) % n for k in range(people))
    fill = partner if partner is not None else others
    specs, trusted = [], []
    for _ in range(n - people):
        assert fill is not None
        spec, ok = partner_spec(fill, presets, full.name, where)
        specs.append(spec)
        trusted.append(ok)
    return Seating(full.name, checked, n, seats, tuple(specs), tuple(trusted),
                   condition.name if condition else PRACTICE)  # fmt: skip


def _others(condition: Condition, n: int, people: int, where: str) -> Partner | None:
    if people >= n:
        if condition.others:
            raise StudyError(f"{where}: others is set but people fill every seat")
        return None
    if not condition.others:
        raise StudyError(f"{where}: {people} people in a game of {n} seats: give others = AGENT "
                         "for the remaining seats")  # fmt: skip
    return _agent_partner(condition.others, f"{where}: others")


def _agent_partner(text: str, where: str) -> Partner:
    for prefix, kind in (("preset:", "preset"), ("zoo:", "zoo")):
        if text.startswith(prefix):
            return Partner(kind, name=text[len(prefix):])
    if text == "human":
        raise StudyError(f"{where}: an agent is needed here, not \"human\"")
    return Partner("agent", spec=text)


def check_study(study: Study, presets: Mapping[str, str] | None = None) -> dict[tuple[str, str], Seating]:
    """Check every game, condition and partner of ``study`` (building each partner once) and
    return the seatings by ``(game name, condition name or "practice")``; :class:`StudyError`
    names the first problem."""
    from tom_envs.agents import make_agent
    from tom_envs.registration import game_spec

    presets = dict(presets or {})
    out: dict[tuple[str, str], Seating] = {}
    for entry in study.games:
        cells: list[Condition | None] = list(study.conditions)
        if entry.practice is not None:
            cells.append(None)
        for condition in cells:
            s = seating(study, entry, condition, presets)
            out[(entry.name, s.condition)] = s
            spec = dataclasses.replace(game_spec(s.game), kwargs={**game_spec(s.game).kwargs,
                                                                   **s.kwargs})  # fmt: skip
            bundle = spec.load().make_bundle(**spec.kwargs)
            for p, ok in zip(s.partners, s.trusted, strict=True):
                _build(make_agent, p, spec, bundle, ok, f"games {entry.name!r}, {s.condition}")
            if condition is not None and condition.on_leave != "end":
                leave = _agent_partner(condition.on_leave, f"{condition.name}: on_leave")
                p, ok = partner_spec(leave, presets, s.game, f"condition {condition.name!r}")
                _build(make_agent, p, spec, bundle, ok, f"condition {condition.name!r} on_leave")
    return out


def _build(make_agent: Any, spec: str, game: Any, bundle: Any, trusted: bool, where: str) -> None:
    try:
        make_agent(spec, game, bundle, trusted=trusted)
    except (KeyError, ValueError, TypeError, ImportError, OSError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        raise StudyError(f"{where}: partner {spec[:120]!r}: {msg}") from None
