"""Trained best responses: a focal policy trained against one fixed partner, a labelled lower bound.

Where no solver gives the exact best response to a partner (Hanabi, Overcooked, learned partners),
a best response (BR) *trained* against that fixed partner is the next reference: some focal policy
reaches its value, so it is **at most** the true best response's value. It is a *lower bound*,
always labelled ``"trained lower bound"`` and never called exact (issue #35).

Packages ship trained BRs through the entry-point group ``tom_envs.best_responses``: a callable
``best_responses(game) -> list[TrainedBestResponse]`` (``tom_experiments`` ships the suite's,
built by ``tom-envs zoo br GAME PARTNER``, manifests ``experiments/zoo/data/<Game>/br.json``). A
cached BR is used only for the configuration it was trained on: the same game, the same
*resolved* game arguments, the same focal seat and the same partner, by content (a learned
partner by its file's SHA-256, a bot by its name): :func:`find`. Anything else gets no trained
reference; :func:`mismatches` says what differs for the cached BRs of a partner that do not match
(the seat, an argument with both values, a retrained partner).

A BR plays as the agent spec ``br/<partner>`` (``br/zoo/mappo_s0``, ``br/greedy``):
:class:`BestResponseAgent` finds, when an episode starts, the cached BR matching that episode's
game, arguments and seat, checks its file against the declared SHA-256 (before loading and on the
bytes loaded, like a zoo member) and plays it; with no match it refuses, naming what exists.
:func:`trained_values` plays it against the partner on given seeds and returns the game's
functional objective ``U`` per seed (the reference's values).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tom_envs import plugins
from tom_envs.core.agents import BaseAgent, EpisodeInfo, Turn

if TYPE_CHECKING:
    from tom_envs.registration import GameSpec

#: The group packages ship trained BRs through.
GROUP = "tom_envs.best_responses"
#: The agent spec prefix of a trained BR (``br/<partner>``).
PREFIX = "br/"
#: What every trained reference is called (never "exact").
LABEL = "trained lower bound"


class TrainedBRError(ValueError):
    """A trained BR that cannot be used: no match for the configuration, or a changed file."""


@dataclass(frozen=True)
class TrainedBestResponse:
    """One cached BR: the focal ``seat``'s policy trained against ``partner`` in ``game``.

    Attributes:
        game: the registered game name.
        name: its name in its manifest (``br_mappo_s0_s0``).
        partner: the partner's agent spec (``greedy``, ``zoo/mappo_s0``).
        partner_id: the partner's identity by content (:func:`partner_id`).
        seat: the focal seat it plays.
        env_kwargs: the resolved game arguments it was trained on.
        spec: the trusted agent spec of its file (``checkpoint:path=FILE``), from the package.
        sha256: its file's SHA-256 (checked before it plays).
        origin: how it was trained (command, algorithm, seed, steps, wall and CPU seconds, curve,
            final evaluation), for the docs.
        others: ``((seat, spec), ...)``, the seats neither the focal nor the partner plays and
            their fixed agents (Guandan's opponents); empty: the partner plays every other seat.
    """

    game: str
    name: str
    partner: str
    partner_id: str
    seat: int
    env_kwargs: Mapping[str, Any]
    spec: str
    sha256: str
    origin: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False)
    others: tuple[tuple[int, str], ...] = ()

    @property
    def agent_spec(self) -> str:
        """The agent spec that plays it: ``br/<partner>``."""
        return PREFIX + self.partner

    def describe(self) -> str:
        """One line: trainer, budget, seed, file."""
        o = self.origin
        return (f"{LABEL}: {o.get('algo', '?')} trained against {self.partner} in seat "
                f"{self.seat}, {o.get('steps', '?')} steps, seed {o.get('seed', '?')}, "
                f"{self.name} (sha256 {self.sha256[:12]})")  # fmt: skip


def _normal(value: Any) -> Any:
    """A game argument as compared across a manifest (JSON) and an episode (tuples as lists)."""
    return json.loads(json.dumps(value, sort_keys=True, default=str))


def partner_id(game: str, partner: str) -> str:
    """The partner's identity by content: a learned zoo member's file SHA-256 (``sha256:...``),
    else ``spec:<its spec>`` (a bot is its name; its code is the game's version)."""
    from tom_envs import zoo

    if partner.startswith(zoo.PREFIX):
        m = zoo.member(partner, game)
        if m.kind == "checkpoint":
            return f"sha256:{m.sha256}"
    return f"spec:{partner}"


def best_responses(game: str) -> list[TrainedBestResponse]:
    """Every trained BR installed packages ship for ``game``."""
    out: list[TrainedBestResponse] = []
    for name in plugins.names(GROUP):
        provider: Callable[[str], list[TrainedBestResponse]] = plugins.load(GROUP, name)
        out.extend(provider(game))
    return out


def seat_layout(others: Mapping[int, str] | None) -> tuple[tuple[int, str], ...]:
    """``others`` as a BR records it: ``((seat, spec), ...)`` sorted by seat."""
    return tuple(sorted((int(k), str(v)) for k, v in dict(others or {}).items()))


def others_from_options(head: str, options: Mapping[str, Any]) -> dict[int, str]:
    """The ``br/<partner>:seat1=heuristic:seat3=heuristic`` options as ``{seat: spec}``: the
    other seats' agents a BR was trained with (only matched against the manifest, never built
    from here); any other option is refused, naming what is allowed."""
    out = {}
    for key, value in options.items():
        m = re.fullmatch(r"seat([0-9])", str(key))
        if m is None:
            raise ValueError(f"trained best response {head!r} takes only seatK=SPEC (the other "
                             f"seats' agents it was trained with), got {key!r}")  # fmt: skip
        out[int(m.group(1))] = str(value)
    return out


def agent_spec_of(br: TrainedBestResponse) -> str:
    """The agent spec that plays ``br`` in its recorded seats (``br/<partner>`` plus
    ``:seatK=SPEC`` for each other seat it was trained with)."""
    return br.agent_spec + "".join(f":seat{k}={v}" for k, v in br.others)


def _configuration(game: str | GameSpec, env_kwargs: Mapping[str, Any] | None
                   ) -> tuple[GameSpec, dict[str, Any], dict[str, Any]]:  # fmt: skip
    """(spec, the game's own arguments among ``env_kwargs``, their resolved normal form): what a
    BR's recorded configuration is compared with."""
    from tom_envs.identity import resolved_env_kwargs
    from tom_envs.registration import game_spec

    spec = game if not isinstance(game, str) else game_spec(game)
    params = {p.name for p in getattr(spec.load(), "PARAMS", ())}  # resolved ones carry more
    kwargs = {k: v for k, v in dict(env_kwargs or {}).items() if k in params}
    return spec, kwargs, _normal(resolved_env_kwargs(spec, kwargs))


def find(game: str | GameSpec, partner: str, seat: int, env_kwargs: Mapping[str, Any] | None = None,
         sha256: str | None = None,
         others: Mapping[int, str] | None = None) -> TrainedBestResponse | None:  # fmt: skip
    """The cached BR for exactly this configuration (game, resolved arguments, seat, partner by
    content, the agents of the remaining seats ``others``, none by default), or ``None``. Several
    matches: the largest training budget (steps), then the latest in manifest order; never chosen
    by its results. ``sha256``: only the BR with that file."""
    if not isinstance(partner, str):
        return None
    spec, _, want = _configuration(game, env_kwargs)
    try:
        pid = partner_id(spec.name, partner)
    except KeyError:  # not a member of this game's zoo
        return None
    found = [br for br in best_responses(spec.name)
             if br.seat == seat and br.partner_id == pid and _normal(dict(br.env_kwargs)) == want
             and sha256 in (None, br.sha256) and br.others == seat_layout(others)]  # fmt: skip
    if not found:
        return None
    budget = max(int(br.origin.get("steps") or 0) for br in found)
    return [br for br in found if int(br.origin.get("steps") or 0) == budget][-1]


def mismatches(game: str | GameSpec, partner: str, seat: int,
               env_kwargs: Mapping[str, Any] | None = None,
               others: Mapping[int, str] | None = None) -> list[str]:  # fmt: skip
    """Why each cached BR *for this partner* (by name or by content) is not the one :func:`find`
    gives for this configuration: one line per such BR naming what differs (the seat, the game
    arguments with both values, the partner's content: a retrained partner, the other seats'
    agents). Empty when none is cached for the partner, or when one matches."""
    spec, kwargs, want = _configuration(game, env_kwargs)
    if find(spec, partner, seat, kwargs, others=others) is not None:
        return []
    try:
        pid: str | None = partner_id(spec.name, partner)
    except KeyError:  # not a member of this game's zoo
        pid = None
    out = []
    for br in best_responses(spec.name):
        if br.partner != partner and br.partner_id != pid:
            continue
        why = []
        if br.seat != seat:
            why.append(f"seat {br.seat}, not {seat}")
        if br.partner_id != pid:
            why.append(f"trained against another {br.partner} ({br.partner_id[:19]}..., now "
                       f"{str(pid)[:19]}...)")  # fmt: skip
        if br.others != seat_layout(others):
            why.append(f"other seats {dict(br.others)} (here {dict(seat_layout(others))})")
        have = _normal(dict(br.env_kwargs))
        diff = sorted(k for k in {*have, *want} if have.get(k) != want.get(k))
        if diff:
            why.append("game arguments " + ", ".join(
                f"{k}={have.get(k)!r} (here {want.get(k)!r})" for k in diff))  # fmt: skip
        out.append(f"{br.name}: " + "; ".join(why or ["no difference found"]))
    return out


def _file_of(spec: str) -> Path | None:
    for part in spec.split(":")[1:]:
        if part.startswith("path="):
            return Path(part.removeprefix("path="))
    return None


def load(br: TrainedBestResponse, game: GameSpec, build: Callable[..., Any]) -> Any:
    """The BR's checkpoint agent built with ``build`` (:func:`tom_envs.agents.make_agent`, which
    passes itself: this module never imports it back), refused (:class:`TrainedBRError`) unless
    its file has the declared SHA-256: checked before loading and on the bytes the loader read."""
    file = _file_of(br.spec)
    if len(br.sha256) != 64 or file is None:
        raise TrainedBRError(f"trained BR {br.name} of {br.game} declares no file or SHA-256")
    found = hashlib.sha256(file.read_bytes()).hexdigest()
    if found != br.sha256:
        raise TrainedBRError(f"trained BR {br.name} of {br.game}: its file {file} has SHA-256 "
                             f"{found[:16]}..., the manifest declares {br.sha256[:16]}...: "
                             "refused")  # fmt: skip
    agent = build(br.spec, game, None, trusted=True)  # the spec comes from the installed package
    config = getattr(agent, "config", None)
    settings: Any = config() if callable(config) else {}
    loaded = settings.get("file_sha256") if isinstance(settings, dict) else None
    if loaded != br.sha256:
        raise TrainedBRError(f"trained BR {br.name}: the loaded bytes have SHA-256 {loaded}, "
                             f"the manifest declares {br.sha256}: refused")  # fmt: skip
    return agent


class BestResponseAgent(BaseAgent):
    """``br/<partner>``: the cached BR against ``partner`` for the episode's configuration.

    Resolved when each episode starts (game, resolved game arguments and seat from the episode's
    info); refuses with :class:`TrainedBRError` when no cached BR matches, naming the ones there
    are. Plays the checkpoint as trained (sampling, seeded per episode by the checkpoint agent).
    ``others`` (``{seat: spec}``): the remaining seats' agents the BR was trained with (Guandan's
    opponents); the episode's info does not carry them, so the caller declares them, and a BR
    trained with other seats than declared never matches (``br/<partner>`` alone: none).
    """

    description = "a trained best response to a fixed partner: br/<partner> (a lower bound)"

    def __init__(self, partner: str, build: Callable[..., Any], sha256: str | None = None,
                 others: Mapping[int, str] | None = None) -> None:  # fmt: skip
        super().__init__()
        if not partner:
            raise ValueError("br/<partner>: name the partner, e.g. br/zoo/mappo_s0")
        self.partner, self.build, self.pinned = partner, build, sha256
        self.others = dict(others or {})
        self.name = PREFIX + partner
        self.inner: Any = None
        self.br: TrainedBestResponse | None = None

    def reset(self, info: EpisodeInfo) -> None:
        from tom_envs.registration import game_spec

        super().reset(info)
        spec = game_spec(info.env_id)
        br = find(spec, self.partner, info.player, info.env_kwargs or {}, self.pinned, self.others)
        if br is None:
            have = [f"{b.partner} seat {b.seat} {dict(b.env_kwargs)}"
                    + (f" others {dict(b.others)}" if b.others else "")
                    for b in best_responses(spec.name)]  # fmt: skip
            raise TrainedBRError(f"{spec.name}: no trained best response to {self.partner!r} in "
                                 f"seat {info.player} with game arguments {info.env_kwargs}"
                                 f"{f' and other seats {self.others}' if self.others else ''}; "
                                 f"cached: {have or 'none'} (build one: tom-envs zoo br)")  # fmt: skip
        if self.br is None or br.sha256 != self.br.sha256:
            self.inner, self.br = load(br, spec, self.build), br
        self.inner.reset(info)

    def config(self) -> dict[str, Any]:
        """Settings for result keys: the partner and, once resolved, the BR file's hash."""
        return {"partner": self.partner, "file_sha256": self.br.sha256 if self.br else None}

    def act(self, turn: Turn) -> int:
        if self.inner is None:
            raise RuntimeError("reset() first")
        return int(self.inner.act(turn))


def trained_values(game: GameSpec, br: TrainedBestResponse, partner: str, seeds: Sequence[int],
                   env_kwargs: Mapping[str, Any], build: Callable[..., Any]) -> dict[int, float]:  # fmt: skip
    """``{seed: U}``: the BR as focal (its seat) against ``partner`` in every other seat but the
    BR's ``others`` (their recorded agents), agents built with ``build``
    (:func:`tom_envs.agents.make_agent`)."""
    from tom_envs.runner import play_episode

    kwargs = {k: v for k, v in env_kwargs.items() if k != "render_mode"}
    objective = game.load().functional_objective(**{**game.kwargs, **kwargs})
    others = dict(br.others)
    agent = BestResponseAgent(partner, build, br.sha256, others)  # this BR, not another cached one
    n = game.load().make_bundle(**{**game.kwargs, **kwargs}).game.num_players
    out = {}
    for s in seeds:
        seats = [agent if i == br.seat else build(others.get(i, partner), game) for i in range(n)]
        ep = play_episode(game, seats, int(s), kwargs)
        out[int(s)] = float(objective(ep, (br.seat,)))
    return out


__all__ = ["GROUP", "LABEL", "PREFIX", "BestResponseAgent", "TrainedBRError",
           "TrainedBestResponse", "agent_spec_of", "best_responses", "find", "load", "mismatches",
           "others_from_options", "partner_id", "seat_layout", "trained_values"]
