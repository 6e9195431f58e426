"""Bench suites: fixed, versioned TOML files (``suites/<name>-v<version>.toml``) with their anchors.

A suite names, per game (every registered game except ``Example``): the game arguments, the seats
of the benchmarked agent (``focal_seats``), of its partner (``partner_seats``) and of anyone else
(``others``, e.g. Guandan's opponents), the partners (zoo members of :func:`tom_envs.zoo.members`:
a list of names, or ``"zoo"`` for every member), the episode seeds of every (game, partner) cell,
and the reference agents whose best mean return is the game's ``high`` anchor (measured on
``anchor_seeds``, by default the cells' seeds). The ``[anchors]``
section at the end is written by ``tom-envs bench --build-anchors NAME`` (the command is frozen
beside the values), with each game's zoo version (:func:`tom_envs.zoo.version`). The suite's
partners are those of that zoo (``"zoo"`` means the members it had): a suite whose partners have
changed since (another file, another spec) is refused, never run against other partners under the
same name; members added to the zoo later are not in it (the earlier zoos' member lists ship in
``suites/zoos.json``, each checked against its version's digest).

The suite's identity is the SHA-256 of its file bytes (anchors included): a row records it, and
rows of different suites are never put in one table.

**Version 2** adds top-level keys (:mod:`tom_experiments.bench.tom` reads them): ``objective =
"U"`` (each game is scored on its functional objective ``U``,
:mod:`tom_envs.core.functional`, instead of the focal return; equal in the matrix games, Hanabi,
Guandan and Overcooked), ``predict`` (the next-action questions: ``"every:K"`` asks agents that
answer them at their decisions 0, K, 2K, ..., fixed before play), ``selection_seeds`` (where
a declared candidate is chosen, disjoint from every cell's seeds) and ``skin`` (the skin of the
suite's disguised run, read by the bench's skinned run). Its anchors are the best-response
references: per (game, partner) ``refs`` hold the reference's kind (``exact`` from
:func:`tom_envs.references.reference_for`, else ``lower bound``: the best declared candidate),
its source and its value per seed; ``high`` is their mean and ``high_kind`` says which kind.
"""

from __future__ import annotations

import hashlib
import json
import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

SUITE_NAMES = ("small", "full")
SUITE_KEYS = {"name", "version", "description", "bootstrap", "qa", "games", "anchors", "skin",
              "predict", "objective", "selection_seeds"}  # fmt: skip
#: What a suite scores: the focal seats' return (v1) or each game's functional objective U (v2).
OBJECTIVES = ("return", "U")
GAME_KEYS = {
    "game",
    "kwargs",
    "focal_seats",
    "partner_seats",
    "others",
    "partners",
    "seeds",
    "references",
    "anchor_seeds",
}
ANCHOR_KEYS = {"low", "low_ci", "high", "high_ci", "high_by", "zoo", "episodes", "high_kind",
               "refs"}  # fmt: skip
REF_KEYS = {"kind", "source", "seeds", "values", "upper"}
#: The line that opens the anchors section (everything after it is rewritten by --build-anchors).
ANCHORS_MARK = "# --- anchors: written by `tom-envs bench --build-anchors"


class SuiteError(ValueError):
    """A suite file that cannot run; the message says what and where."""


@dataclass(frozen=True)
class SuiteGame:
    """One game of a suite: its arguments, seats, partners, seeds and references."""

    game: str
    kwargs: dict[str, Any]
    focal_seats: tuple[int, ...]
    partner_seats: tuple[int, ...]
    others: str | None
    partners: tuple[str, ...]  # zoo member names (resolved when the file says "zoo")
    seeds: tuple[int, ...]
    references: tuple[str, ...]
    #: the seeds the anchors are measured on (default: ``seeds``; more where bots are cheap)
    anchor_seeds: tuple[int, ...] = ()

    def seating(self, focal: str, partner: str, num_players: int) -> tuple[str, ...]:
        """Agent specs per seat: ``focal`` at the focal seats, ``partner`` at the partner seats,
        ``others`` elsewhere."""
        seats: list[str | None] = [None] * num_players
        for s in self.focal_seats:
            seats[s] = focal
        for s in self.partner_seats:
            seats[s] = partner
        if any(x is None for x in seats) and not self.others:
            raise SuiteError(f"{self.game}: seats without an agent and no `others`")
        return tuple(x if x is not None else str(self.others) for x in seats)


@dataclass(frozen=True)
class Anchor:
    """A game's normalisation: ``low`` (random focal with random partners) -> 0, ``high`` (the
    best declared reference's mean return over the suite's cells) -> 1."""

    low: float
    high: float
    high_by: str
    low_ci: tuple[float, float] = (math.nan, math.nan)
    high_ci: tuple[float, float] = (math.nan, math.nan)
    zoo: str = ""
    episodes: int = 0
    #: v2: ``exact``, ``lower bound`` or ``mixed`` (the kinds of the partners' references)
    high_kind: str = ""
    #: v2: per partner, its reference: ``{"kind", "source", "seeds", "values"[, "upper"]}``
    refs: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def headroom(self) -> bool:
        """Whether the scale exists (``high`` above ``low``)."""
        return self.high > self.low

    def normalise(self, value: float) -> float:
        """``(value - low) / (high - low)`` (nan without headroom)."""
        return (value - self.low) / (self.high - self.low) if self.headroom else math.nan


@dataclass
class Suite:
    """A loaded suite file."""

    name: str
    version: int
    description: str
    games: list[SuiteGame]
    bootstrap_resamples: int
    bootstrap_seed: int
    qa_items_per_game: int
    anchors: dict[str, Anchor] = field(default_factory=dict)
    anchors_command: str = ""
    sha256: str = ""
    path: Path | None = None
    #: v2: the skin of the disguised run (``None``: no skinned run unless asked for)
    skin: str | None = None
    #: v2: the next-action questions (``off``, ``all``, ``every:K``)
    predict: str = "off"
    #: what each game is scored on (:data:`OBJECTIVES`)
    objective: str = "return"
    #: v2: the seeds a declared candidate reference is chosen on
    selection_seeds: tuple[int, ...] = ()

    @property
    def key(self) -> str:
        """``small-v1``."""
        return f"{self.name}-v{self.version}"

    def game(self, name: str) -> SuiteGame:
        """A game of the suite by name."""
        for g in self.games:
            if g.game == name:
                return g
        raise SuiteError(f"suite {self.key} has no game {name!r}")

    def check_zoo(self) -> None:
        """Refuse to run when a partner of the suite differs from the member the anchors were
        built with (its kind, spec or file's SHA-256), or when the zoo the anchors were built
        with is not known (neither installed nor in :data:`ZOO_HISTORY`). Members added to a
        zoo since do not touch a suite that does not name them: its partners are frozen."""
        from tom_envs import zoo

        if not self.anchors:
            raise SuiteError(
                f"suite {self.key} has no anchors yet: run `tom-envs bench "
                f"--build-anchors {self.name}`"
            )
        missing = [g.game for g in self.games if g.game not in self.anchors]
        if missing:
            raise SuiteError(f"suite {self.key}: no anchors for {', '.join(missing)}")
        changed = []
        for g in self.games:
            frozen = frozen_rows(g.game, self.anchors[g.game].zoo)
            if frozen is None:
                changed.append(f"{g.game}: frozen {self.anchors[g.game].zoo} is unknown here "
                               f"(installed {zoo.version(g.game)})")  # fmt: skip
                continue
            now = {row[0]: row for row in zoo.identity_rows(g.game)}
            moved = [p for p in g.partners if now.get(p) != frozen.get(p)]
            if moved:
                changed.append(f"{g.game}: partners {moved} differ from the frozen "
                               f"{self.anchors[g.game].zoo}")  # fmt: skip
        if changed:
            raise SuiteError(
                f"suite {self.key} was frozen with other partners ({'; '.join(changed)}): "
                "its numbers would not be comparable; a changed partner needs a new suite version"
            )

    def describe(self) -> str:
        """One line per game: partners, seeds, arguments."""
        lines = [f"suite {self.key} (sha256 {self.sha256[:12]}): {self.description}"]
        for g in self.games:
            lines.append(
                f"  {g.game}: {len(g.partners)} partners ({', '.join(g.partners)}) x "
                f"seeds {list(g.seeds)}, args {g.kwargs or 'defaults'}"
            )
        return "\n".join(lines)


#: Earlier zoos, by version: ``{"<game>/z1-<digest>": [[name, kind, spec, sha256], ...]}``
#: (:func:`tom_envs.zoo.identity_rows`), so a suite frozen with a zoo that has since grown still
#: resolves its partners. Each entry is checked against its own digest when read.
ZOO_HISTORY = "zoos.json"


def frozen_rows(game: str, version: str) -> dict[str, list[str]] | None:
    """The members (name -> identity row) of ``game``'s zoo at ``version``: the installed zoo's
    when that is the version, else the digest-checked entry of :data:`ZOO_HISTORY`; ``None``
    when neither."""
    from tom_envs import zoo

    rows = zoo.identity_rows(game)
    if zoo.version_of(game, rows) != version:
        path = suites_dir() / ZOO_HISTORY
        history = json.loads(path.read_text()) if path.is_file() else {}
        rows = history.get(version)
        if not isinstance(rows, list) or zoo.version_of(game, rows) != version:
            return None
    return {str(row[0]): list(row) for row in rows}


def suites_dir() -> Path:
    """The folder of the shipped suite files."""
    return Path(str(resources.files("tom_experiments.bench") / "suites"))


def suite_path(name: str, version: int | None = None) -> Path:
    """The shipped file of suite ``name`` (its highest version unless ``version`` is given)."""
    if name not in SUITE_NAMES:
        raise SuiteError(f"unknown suite {name!r}; shipped suites: {', '.join(SUITE_NAMES)}")
    found = sorted(suites_dir().glob(f"{name}-v*.toml"), key=lambda p: int(p.stem.split("-v")[1]))
    if version is not None:
        found = [p for p in found if p.stem == f"{name}-v{version}"]
    if not found:
        raise SuiteError(f"no file for suite {name!r} version {version} in {suites_dir()}")
    return found[-1]


def load_suite(name: str, version: int | None = None) -> Suite:
    """A shipped suite by name (and version)."""
    return parse_suite(suite_path(name, version))


def _ints(value: Any, where: str) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(
        isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in value
    ):
        raise SuiteError(f"{where}: expected a list of whole numbers >= 0, got {value!r}")
    return tuple(value)


def _names(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(x, str) for x in value):
        raise SuiteError(f"{where}: expected a non-empty list of names, got {value!r}")
    return tuple(value)


def _game(i: int, g: Any, frozen: str = "") -> SuiteGame:
    from tom_envs import zoo
    from tom_envs.registration import game_spec

    where = f"games[{i}]"
    if not isinstance(g, dict) or not isinstance(g.get("game"), str):
        raise SuiteError(f"{where}: expected a table with `game`")
    unknown = set(g) - GAME_KEYS
    if unknown:
        raise SuiteError(f"{where}: unknown keys {sorted(unknown)}; allowed: {sorted(GAME_KEYS)}")
    spec = game_spec(g["game"])
    members = [m.name for m in zoo.members(spec.name)]
    then = frozen_rows(spec.name, frozen) if frozen else None
    if then is not None:  # "zoo" is the zoo the anchors were built with
        members = [m for m in then if m in members] + [m for m in members if m not in then]
    partners = g.get("partners", "zoo")
    resolved = (tuple(m for m in members if then is None or m in then) if partners == "zoo"
                else _names(partners, f"{where}.partners"))  # fmt: skip
    bad = [p for p in resolved if p not in members]
    if bad:
        raise SuiteError(f"{where}: {bad} are not members of the {spec.name} zoo ({members})")
    kwargs = g.get("kwargs", {})
    if not isinstance(kwargs, dict):
        raise SuiteError(f"{where}.kwargs: expected a table")
    return SuiteGame(
        game=spec.name,
        kwargs=dict(kwargs),
        focal_seats=_ints(g.get("focal_seats", [0]), f"{where}.focal_seats"),
        partner_seats=_ints(g.get("partner_seats", [1]), f"{where}.partner_seats"),
        others=g.get("others"),
        partners=resolved,
        seeds=_ints(g.get("seeds"), f"{where}.seeds"),
        references=_names(g.get("references"), f"{where}.references"),
        anchor_seeds=_ints(g.get("anchor_seeds", g.get("seeds")), f"{where}.anchor_seeds"),
    )


def _frozen_zoo(anchors: Mapping[str, Anchor], g: Any) -> str:
    """The zoo version the anchors froze for the game of table ``g`` ("" when none)."""
    from tom_envs.registration import game_spec

    name = g.get("game") if isinstance(g, dict) else None
    try:
        a = anchors.get(game_spec(name).name) if isinstance(name, str) else None
    except KeyError:  # _game names the unknown game
        return ""
    return a.zoo if a is not None else ""


def _anchors(data: Any) -> tuple[dict[str, Anchor], str]:
    if data is None:
        return {}, ""
    command = str(data.get("command", ""))
    out = {}
    for game, a in data.items():
        if game == "command":
            continue
        unknown = set(a) - ANCHOR_KEYS
        if unknown:
            raise SuiteError(f"anchors.{game}: unknown keys {sorted(unknown)}")
        out[game] = Anchor(
            float(a["low"]),
            float(a["high"]),
            str(a["high_by"]),
            tuple(a.get("low_ci", (math.nan, math.nan))),  # type: ignore[arg-type]
            tuple(a.get("high_ci", (math.nan, math.nan))),  # type: ignore[arg-type]
            str(a.get("zoo", "")),
            int(a.get("episodes", 0)),
            str(a.get("high_kind", "")),
            _refs(a.get("refs", {}), f"anchors.{game}.refs"),
        )
    return out, command


def _refs(data: Any, where: str) -> dict[str, dict[str, Any]]:
    if not isinstance(data, dict):
        raise SuiteError(f"{where}: expected a table per partner")
    out = {}
    for partner, r in data.items():
        if (
            not isinstance(r, dict)
            or set(r) - REF_KEYS
            or not {"kind", "seeds", "values"} <= set(r)
        ):
            raise SuiteError(f"{where}.{partner}: expected kind, seeds, values (and source, upper)")
        if len(r["seeds"]) != len(r["values"]):
            raise SuiteError(
                f"{where}.{partner}: {len(r['values'])} values, {len(r['seeds'])} seeds"
            )
        out[str(partner)] = dict(r)
    return out


def _v2_settings(data: Mapping[str, Any], path: Path) -> dict[str, Any]:
    """The version-2 top-level settings, checked (defaults: a v1 suite)."""
    from tom_envs.partners.prediction import predict_every

    objective = str(data.get("objective", "return"))
    if objective not in OBJECTIVES:
        raise SuiteError(f"{path}: objective {objective!r}; allowed: {OBJECTIVES}")
    predict = str(data.get("predict", "off"))
    try:
        predict_every(predict)
    except ValueError as exc:
        raise SuiteError(f"{path}: {exc}") from exc
    skin = _skin(data.get("skin"), path)
    selection = _ints(data.get("selection_seeds", []), f"{path}: selection_seeds")
    return {"skin": skin, "predict": predict, "objective": objective,
            "selection_seeds": selection}  # fmt: skip


def parse_suite(path: Path) -> Suite:
    """Read and check a suite file (raises :class:`SuiteError` naming the problem)."""
    raw = Path(path).read_bytes()
    try:
        data = tomllib.loads(raw.decode())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SuiteError(f"{path}: not a TOML file: {exc}") from exc
    unknown = set(data) - SUITE_KEYS
    if unknown:
        raise SuiteError(f"{path}: unknown keys {sorted(unknown)}; allowed: {sorted(SUITE_KEYS)}")
    anchors, command = _anchors(data.get("anchors"))
    games = [_game(i, g, _frozen_zoo(anchors, g)) for i, g in enumerate(data.get("games", []))]
    if not games:
        raise SuiteError(f"{path}: no [[games]]")
    boot = data.get("bootstrap", {})
    v2 = _v2_settings(data, Path(path))
    clash = sorted(
        set(v2["selection_seeds"]) & {s for g in games for s in (*g.seeds, *g.anchor_seeds)}
    )
    if clash:
        raise SuiteError(f"{path}: selection_seeds {clash[:5]} are also cell or anchor seeds")
    return Suite(
        name=str(data["name"]),
        version=int(data["version"]),
        description=str(data.get("description", "")),
        games=games,
        bootstrap_resamples=int(boot.get("resamples", 2000)),
        bootstrap_seed=int(boot.get("seed", 0)),
        qa_items_per_game=int(data.get("qa", {}).get("items_per_game", 0)),
        anchors=anchors,
        anchors_command=command,
        sha256=hashlib.sha256(raw).hexdigest(),
        path=Path(path),
        **v2,
    )


def _skin(value: Any, path: Path) -> str | None:
    """The suite's ``skin`` (``"s<k>"``), checked; None when absent."""
    from tom_envs.core.skin import parse_skin

    if value is None:
        return None
    try:
        return parse_skin(value)
    except ValueError as exc:
        raise SuiteError(f"{path}: skin {value!r}: {exc}") from exc


def _toml_value(v: Any) -> str:
    if isinstance(v, float) and not math.isfinite(v):
        return "nan"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return json.dumps(v)


def write_anchors(path: Path, anchors: dict[str, Anchor], command: str) -> None:
    """Replace the anchors section of a suite file (everything from :data:`ANCHORS_MARK` on)."""
    text = Path(path).read_text()
    head = text.split(ANCHORS_MARK)[0].rstrip() + "\n\n"
    lines = [
        f"{ANCHORS_MARK} {command.split('--build-anchors')[-1].strip()}` ---",
        "[anchors]",
        f"command = {json.dumps(command)}",
    ]
    for game, a in anchors.items():
        lines += [
            "",
            f"[anchors.{game}]",
            f"low = {_toml_value(a.low)}",
            f"low_ci = {_toml_value(list(a.low_ci))}",
            f"high = {_toml_value(a.high)}",
            f"high_ci = {_toml_value(list(a.high_ci))}",
            f"high_by = {json.dumps(a.high_by)}",
            f"zoo = {json.dumps(a.zoo)}",
            f"episodes = {a.episodes}",
        ]
        if a.high_kind:
            lines.append(f"high_kind = {json.dumps(a.high_kind)}")
        for partner, r in a.refs.items():
            lines += ["", f"[anchors.{game}.refs.{json.dumps(partner)}]"]
            lines += [f"{k} = {_toml_value(r[k])}" for k in ("kind", "source", "seeds", "values", "upper")
                      if r.get(k) is not None]  # fmt: skip
    Path(path).write_text(head + "\n".join(lines) + "\n")


__all__ = [
    "ANCHORS_MARK",
    "OBJECTIVES",
    "SUITE_NAMES",
    "Anchor",
    "Suite",
    "SuiteError",
    "SuiteGame",
    "load_suite",
    "parse_suite",
    "suite_path",
    "suites_dir",
    "write_anchors",
]
