"""The partner zoo: a versioned set of partners per game that behave differently (issue #35).

Every functional-ToM measure, every benchmark row and every study that names ``zoo:NAME`` draws
its partners from here, so that two labs that say "against the zoo" mean the same partners::

    from tom_envs import zoo
    for m in zoo.members("Hanabi"):
        print(m.name, m.kind, m.description)     # random bot ..., simple bot ..., convention bot ...
    zoo.version("Hanabi")                         # "Hanabi/z1-3f9c2a1b": changes with any member
    zoo.agent_spec("convention", "Hanabi")        # the agent spec that seats this member

Members come from two places:

- **Rule members**: the game's own partner bots (its ``bot_table``), with their one-line
  descriptions, and ``random`` in every game. Always present: the env package stands alone.
- **Learned members**: checkpoints an installed package ships (``tom_experiments`` ships the
  suite's), declared through the entry-point group ``tom_envs.zoo``: a callable
  ``members(game) -> list[Member]``. They are seated by the spec ``zoo/<name>``
  (:func:`make_member` builds the member's own ``spec``, trusted: it comes from the installed
  package, never from user input), after checking the file against the SHA-256 its package
  declares (a mismatch, or no hash, refuses with :class:`ZooIntegrityError`).

:func:`version` is a digest of the game's member list (names, kinds, specs, file hashes): any
change of a member changes it, and results record it, so rows built on different zoos are never
mixed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tom_envs import plugins

if TYPE_CHECKING:
    from tom_envs.core.agents import Agent
    from tom_envs.core.game import GameBundle
    from tom_envs.registration import GameSpec

#: Bumped when the zoo's format or the meaning of a member changes (its digest changes anyway).
ZOO_FORMAT = 1
#: The description of the uniformly random partner that every game's zoo holds.
RANDOM_DESCRIPTION = "uniformly random legal actions"
#: The prefix of a learned member's agent spec (``zoo/ppo_s1``).
PREFIX = "zoo/"


@dataclass(frozen=True)
class Member:
    """One partner of a game's zoo.

    Attributes:
        name: its name in the zoo (a bot's name, or a learned member's ``ppo_s1``).
        game: the registered game it partners in.
        kind: ``"bot"`` (a rule bot of the game) or ``"checkpoint"`` (a learned policy).
        description: one line on how it behaves.
        spec: for a bot, its name; for a learned member, the trusted agent spec the shipping
            package builds it from (``checkpoint:path=...``), never read from user input.
        sha256: the learned member's file hash (checked before it plays); ``""`` for bots.
        origin: how it was made (training command, seed, steps, curve file), for the docs.
    """

    name: str
    game: str
    kind: str
    description: str
    spec: str = ""
    sha256: str = ""
    origin: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    @property
    def agent_spec(self) -> str:
        """The agent spec that seats this member (a bot's name, or ``zoo/<name>``)."""
        return self.name if self.kind == "bot" else PREFIX + self.name


def _game(game: str) -> GameSpec:
    from tom_envs.registration import game_spec

    return game_spec(game)


def _learned(game: str) -> list[Member]:
    out: list[Member] = []
    for name in plugins.names("tom_envs.zoo"):
        provider: Callable[[str], list[Member]] = plugins.load("tom_envs.zoo", name)
        out.extend(provider(game))
    return out


def members(game: str) -> list[Member]:
    """The zoo of ``game``: its rule bots (in ``bot_table`` order), then its learned members."""
    spec = _game(game)
    table = spec.load().bot_table(**spec.kwargs)
    bots = [Member(b.name, game, "bot", b.description, spec=b.name) for b in table.bots]
    if "random" not in table:  # every zoo holds the uniform partner (an anchor of every scale)
        bots.append(Member("random", game, "bot", RANDOM_DESCRIPTION, spec="random"))
    learned = _learned(game)
    names = [m.name for m in (*bots, *learned)]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"{game}: zoo member names must be unique, repeated: {dupes}")
    return [*bots, *learned]


def member(name: str, game: str) -> Member:
    """The member ``name`` (``convention`` or ``zoo/ppo_s1`` or ``ppo_s1``) of ``game``'s zoo."""
    key = name.removeprefix(PREFIX)
    found = {m.name: m for m in members(game)}
    if key not in found:
        raise KeyError(f"{game} zoo has no member {name!r}; members: {', '.join(found)}")
    return found[key]


def agent_spec(name: str, game: str) -> str:
    """The agent spec that seats zoo member ``name`` in ``game`` (raises for an unknown one)."""
    return member(name, game).agent_spec


def identity_rows(game: str) -> list[list[str]]:
    """One row per member, ``[name, kind, spec, sha256]``: what the zoo's version is a digest of.
    A learned member counts by its file's SHA-256, not its spec (which names where the package
    is installed), so the same zoo has the same rows on every machine."""
    return [[m.name, m.kind, "" if m.sha256 else m.spec, m.sha256] for m in members(game)]


def version_of(game: str, rows: list[list[str]]) -> str:
    """``"<game>/z<format>-<digest>"`` of ``rows`` (:func:`identity_rows`)."""
    digest = hashlib.sha256(json.dumps(rows).encode()).hexdigest()[:8]
    return f"{game}/z{ZOO_FORMAT}-{digest}"


def version(game: str) -> str:
    """``"<game>/z<format>-<digest>"``: changes whenever any member of the game's zoo changes
    (a member added, removed, renamed or retrained)."""
    return version_of(game, identity_rows(game))


class ZooIntegrityError(ValueError):
    """A learned member whose loaded file is not the one its package declared (SHA-256)."""


def _refuse(m: Member, game: str, file: object, found: str) -> ZooIntegrityError:
    return ZooIntegrityError(
        f"{game} zoo member {m.name!r}: its file ({file}) has SHA-256 {found[:16]}..., the zoo "
        f"declares {m.sha256[:16]}...: refused (the file was changed after it was shipped; "
        "reinstall the package that ships it)"
    )


def _spec_path(spec: str) -> str | None:
    """The ``path=`` option of a trusted checkpoint spec (``checkpoint:path=FILE``), if any."""
    for part in spec.split(":")[1:]:
        if part.startswith("path="):
            return part.removeprefix("path=")
    return None


def make_member(
    name: str, game: GameSpec, bundle: GameBundle | None, build: Callable[..., Agent]
) -> Agent:
    """Build zoo member ``name`` with ``build`` (:func:`tom_envs.agents.make_agent`, which passes
    itself: this module never imports it back). A learned member is refused
    (:class:`ZooIntegrityError`) unless its file has the SHA-256 its package declared: checked
    before the file is loaded, and again on the bytes the checkpoint loader read."""
    from pathlib import Path

    m = member(name, game.name)
    if m.kind == "bot":
        return build(m.name, game, bundle)
    if len(m.sha256) != 64:
        raise ZooIntegrityError(f"{game.name} zoo member {m.name!r} declares no SHA-256: refused")
    file = _spec_path(m.spec)
    if file is not None:
        found = hashlib.sha256(Path(file).read_bytes()).hexdigest()
        if found != m.sha256:
            raise _refuse(m, game.name, file, found)
    # the spec comes from an installed package, not from user input: trusted
    agent = build(m.spec, game, bundle, trusted=True)
    config = getattr(agent, "config", None)
    settings: Any = config() if callable(config) else {}
    loaded = str(settings.get("file_sha256")) if isinstance(settings, dict) else "none"
    if loaded != m.sha256:
        raise _refuse(m, game.name, file, loaded)
    return agent


__all__ = ["PREFIX", "ZOO_FORMAT", "Member", "ZooIntegrityError", "agent_spec", "identity_rows",
           "make_member", "member", "members", "version", "version_of"]
