"""The declarative experiment: a TOML file, validated in full before any episode runs.

A config names games, agents (labels for agent specs), and what to run with them::

    name = "crossplay-matrix"        # the run's name (output directory runs/eval/<name>)
    seed = 0                          # episode seeds are seed, seed+1, ...
    episodes = 20                     # per cell (the CLI's --episodes overrides it)
    record = ["text"]                 # also record "text" and/or "observations" per decision
    max_fallback_share = 0.2          # an episode where a seat fell back on more than this share
                                      # of its decisions is failed, never a result

    [agents]                          # label = agent spec (tom_envs.agents); the CLI's
    rmax = "rmax"                     # --agent LABEL=SPEC adds or replaces one
    tft = "tit_for_tat"

    [[games]]                         # one table per game (label defaults to the name)
    game = "PrisonersDilemma"
    kwargs = { horizon = 20 }         # env keyword arguments
    focal_seats = [0]                 # seats of the evaluated agent (default [0])
    partner_seats = [1]               # seats of its partner (default: every other seat)
    others = "heuristic"              # spec for any remaining seat (e.g. Guandan's opponents)

    [[matchups]]                      # explicit seatings: one spec label per seat
    game = "PrisonersDilemma"
    seats = ["rmax", "tft"]
    paper = "0.248 ± 0.005"           # optional: the paper's figure, shown beside ours

    [crossplay]                       # every agent with every other, on each listed game
                                      # ([[crossplay]] tables: one agent list per game group)
    agents = ["rmax", "tft", "random"]
    optional_agents = ["llm"]         # joined only when defined (e.g. --agent llm=llm:...)
    games = ["PrisonersDilemma"]      # default: every game of the config

    [functional_tom]                  # each agent against each member of a population
    agents = ["rmax", "random"]
    population = "all"                # a population name of each game (tom-envs list)
    candidates = ["heuristic"]        # declared focal policies: the best one on the selection
    selection_seeds = [10000, 10010]  # seeds [first, stop) is the lower-bound reference where
                                      # no solver gives one (disjoint from the evaluation seeds)
    games = ["PrisonersDilemma"]

    [[tables]]                        # a results table (a tom_envs.tables plugin, by name):
    table = "paper004"                #   its cells play in the worker pool, with resume
    kwargs = { episodes = 100 }

    [[tables]]                        # a table that takes `agents` ({label: spec}):
    table = "functional_tom"
    kwargs = { games = ["PrisonersDilemma"] }
    optional_agents = ["llm"]         #   these labels join it when defined (--agent llm=...)

    [[learning_curves]]               # training curves written by `tom-envs train`
    csv = "runs/train/x/curve.csv"
    y = ["return_mean"]

Everything is checked by :func:`validate` before anything runs: unknown keys, unknown games,
bad env keyword arguments, unknown agent labels or specs (each is built once for each game it
plays), seat counts, and the reachability of every LLM endpoint.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tom_envs import plugins
from tom_envs.evaluation.tables import get_table, table_names
from tom_envs.registration import GameSpec, game_spec
from tom_envs.runner import EPISODES_MAX, check_seeds

RECORD_OPTIONS = ("text", "observations")
TOP_KEYS = {
    "name",
    "description",
    "seed",
    "episodes",
    "record",
    "max_fallback_share",
    "out",
    "agents",
    "games",
    "matchups",
    "crossplay",
    "functional_tom",
    "tables",
    "learning_curves",
}
GAME_KEYS = {"game", "label", "kwargs", "focal_seats", "partner_seats", "others"}


class ConfigError(ValueError):
    """A config that cannot run; the message says what and where."""


@dataclass(frozen=True)
class GameEntry:
    """One game of the config with its seating rules."""

    label: str
    game: str
    kwargs: Mapping[str, Any]
    focal_seats: tuple[int, ...]
    partner_seats: tuple[int, ...]
    others: str | None
    num_players: int

    @property
    def spec(self) -> GameSpec:
        """The registered game."""
        return game_spec(self.game)

    def seating(self, focal: str, partner: str) -> tuple[str, ...]:
        """Specs (by label) per seat: focal, partner, and ``others`` elsewhere."""
        seats: list[str | None] = [None] * self.num_players
        for s in self.focal_seats:
            seats[s] = focal
        for s in self.partner_seats:
            seats[s] = partner
        rest = [i for i, x in enumerate(seats) if x is None]
        if rest and self.others is None:
            raise ConfigError(
                f"game {self.label!r}: seats {rest} have no agent; set `others` for them"
            )
        return tuple(x if x is not None else f"={self.others}" for x in seats)


@dataclass(frozen=True)
class Cell:
    """A seating on a game: the unit that ``episodes`` seeded episodes are played for."""

    section: str  # "matchups", "crossplay" or "functional_tom"
    game: GameEntry
    labels: tuple[str, ...]  # agent labels per seat ("=spec" for a literal spec)
    focal: str | None = None  # the evaluated label (cross-play and functional ToM)
    partner: str | None = None  # the partner label or population member

    @property
    def id(self) -> str:
        """A path-safe id, unique in the run (``crossplay/PrisonersDilemma/rmax+tft``)."""
        seats = "+".join(_safe(x.lstrip("=")) for x in self.labels)
        return f"{self.section}/{_safe(self.game.label)}/{seats}"


@dataclass
class EvalConfig:
    """A validated experiment."""

    name: str
    seed: int = 0
    episodes: int = 10
    record: tuple[str, ...] = ()
    out: str | None = None
    description: str = ""
    agents: dict[str, str] = field(default_factory=dict)
    games: dict[str, GameEntry] = field(default_factory=dict)
    matchups: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    paper: dict[str, str] = field(default_factory=dict)  # matchup cell id -> the paper's figure
    crossplay: list[dict[str, Any]] = field(default_factory=list)
    functional_tom: list[dict[str, Any]] = field(default_factory=list)
    tables: list[dict[str, Any]] = field(default_factory=list)
    learning_curves: list[dict[str, Any]] = field(default_factory=list)
    source: str | None = None
    max_fallback_share: float = 0.2
    config_hash: str | None = None  # set by evaluate(): the default directory names it
    #: labels whose spec the command line gave (``--agent``): only these may name code, hosts or
    #: paths outside the current folder (:mod:`tom_envs.core.trust`); every other is the file's
    trusted_labels: frozenset[str] = frozenset()

    def trusted(self, label: str) -> bool:
        """Whether the spec behind ``label`` came from the command line (never a ``=spec``)."""
        return not label.startswith("=") and label in self.trusted_labels

    def spec_of(self, label: str) -> str:
        """The agent spec behind a label (``"=spec"`` is a literal spec)."""
        if label.startswith("="):
            return label[1:]
        if label not in self.agents:
            raise ConfigError(f"unknown agent label {label!r}; defined: {sorted(self.agents)}")
        return self.agents[label]

    def out_dir(self) -> Path:
        """Where trajectories and the report go (default ``runs/eval/<name>-<config hash>``)."""
        if self.out:
            return Path(self.out)
        suffix = f"-{self.config_hash[:8]}" if self.config_hash else ""
        return Path("runs") / "eval" / (_safe(self.name) + suffix)

    def cells(self) -> list[Cell]:
        """Every cell of the experiment, in a fixed order."""
        out: list[Cell] = []
        for game_label, labels in self.matchups:
            out.append(Cell("matchups", self.games[game_label], labels))
        for cp in self.crossplay:
            agents = cp["agents"]
            for g in cp["games"]:
                entry = self.games[g]
                for a in agents:
                    for b in agents:
                        out.append(Cell("crossplay", entry, entry.seating(a, b), a, b))
        for ft in self.functional_tom:
            for g in ft["games"]:
                entry = self.games[g]
                for member in population_members(entry, ft["population"]):
                    for a in ft["agents"]:
                        seats = entry.seating(a, f"={member}")
                        out.append(Cell("functional_tom", entry, seats, a, member))
        seen: set[str] = set()
        unique = []
        for c in out:
            if c.id not in seen:
                seen.add(c.id)
                unique.append(c)
        return unique


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.=+-]+", "_", text)[:80]


def population_members(entry: GameEntry, population: str) -> list[str]:
    """The bot names of a game's population."""
    pops = entry.spec.load().bot_table(**{**entry.spec.kwargs, **entry.kwargs}).populations
    if population not in pops:
        raise ConfigError(
            f"game {entry.label!r} has no population {population!r}; choose from {sorted(pops)}"
        )
    return list(pops[population])


def _expect(value: Any, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise ConfigError(f"{where}: expected {names}, got {value!r}")
    return value


def _keys(table: Mapping[str, Any], allowed: set[str], where: str) -> None:
    unknown = set(table) - allowed
    if unknown:
        raise ConfigError(f"{where}: unknown keys {sorted(unknown)}; allowed: {sorted(allowed)}")


def parse_config(
    data: Mapping[str, Any],
    *,
    episodes: int | None = None,
    agents: Mapping[str, str] | None = None,
    out: str | None = None,
    source: str | None = None,
) -> EvalConfig:
    """Build an :class:`EvalConfig` from parsed TOML (structure only; see :func:`validate`)."""
    _keys(data, TOP_KEYS, "config")
    name = _expect(data.get("name", Path(source).stem if source else "eval"), str, "name")
    cfg = EvalConfig(name=name, source=source)
    cfg.description = _expect(data.get("description", ""), str, "description")
    cfg.seed = data.get("seed", 0)
    cfg.episodes = episodes if episodes is not None else data.get("episodes", 10)
    try:  # whole numbers in range: seeds seed..seed+episodes-1 in [0, 2^32-1]
        check_seeds(cfg.seed, cfg.episodes)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    record = tuple(_expect(data.get("record", []), list, "record"))
    for r in record:
        if r not in RECORD_OPTIONS:
            raise ConfigError(f"record: {r!r} is not one of {RECORD_OPTIONS}")
    cfg.record = record
    share = _expect(data.get("max_fallback_share", 0.2), (int, float), "max_fallback_share")
    if isinstance(share, bool) or not 0.0 <= float(share) <= 1.0:
        raise ConfigError(f"max_fallback_share must be in [0, 1], got {share!r}")
    cfg.max_fallback_share = float(share)
    cfg.out = out or (_file_path(data["out"], "out", "out") if "out" in data else None)
    table = _expect(data.get("agents", {}), dict, "[agents]")
    cfg.agents = {str(k): _file_spec(v, f"agents.{k}") for k, v in table.items()}
    cfg.agents.update(agents or {})  # the command line's: trusted
    cfg.trusted_labels = frozenset(agents or {})
    for i, g in enumerate(_expect(data.get("games", []), list, "[[games]]")):
        entry = _game_entry(cfg, i, g)
        cfg.games[entry.label] = entry
    if not cfg.games and not data.get("tables"):  # a config of paper tables only needs none
        raise ConfigError("config: no [[games]] given")
    _parse_matchups(cfg, data)
    _parse_sections(cfg, data)
    _parse_tables(cfg, data)
    _parse_learning_curves(cfg, data)
    if not (
        cfg.matchups or cfg.crossplay or cfg.functional_tom or cfg.tables or cfg.learning_curves
    ):
        raise ConfigError(
            "config: nothing to run; give [[matchups]], [crossplay], [functional_tom], "
            "[[tables]] or [[learning_curves]]"
        )
    return cfg


def _game_entry(cfg: EvalConfig, i: int, g: Any) -> GameEntry:
    """``[[games]]`` entry ``i``: the game, its label, arguments and seats."""
    where = f"games[{i}]"
    _expect(g, dict, where)
    _keys(g, GAME_KEYS, where)
    gname = _expect(g.get("game"), str, f"{where}.game")
    try:
        spec = game_spec(gname)
    except KeyError as exc:
        raise ConfigError(f"{where}: {exc.args[0] if exc.args else exc}") from None
    label = _expect(g.get("label", spec.name), str, f"{where}.label")
    if label in cfg.games:
        raise ConfigError(f"{where}: duplicate game label {label!r}")
    kwargs = _file_kwargs(spec, _expect(g.get("kwargs", {}), dict, f"{where}.kwargs"), where)
    n = _num_players(spec, kwargs, where)
    focal = tuple(_expect(g.get("focal_seats", [0]), list, f"{where}.focal_seats"))
    default_partner = [s for s in range(n) if s not in focal]
    partner = tuple(
        _expect(g.get("partner_seats", default_partner), list, f"{where}.partner_seats")
    )
    for s in (*focal, *partner):
        if not isinstance(s, int) or not 0 <= s < n:
            raise ConfigError(f"{where}: seat {s!r} out of range for {n} players")
    if set(focal) & set(partner):
        raise ConfigError(f"{where}: focal_seats and partner_seats overlap")
    others = g.get("others")
    if others is not None:
        _file_spec(others, f"{where}.others")
    return GameEntry(label, spec.name, kwargs, focal, partner, others, n)


def _parse_matchups(cfg: EvalConfig, data: Mapping[str, Any]) -> None:
    """``[[matchups]]``: a game and one agent per seat (and the paper's figure)."""
    for i, m in enumerate(_expect(data.get("matchups", []), list, "[[matchups]]")):
        where = f"matchups[{i}]"
        _keys(_expect(m, dict, where), {"game", "seats", "paper"}, where)
        g = _game_label(cfg, m.get("game"), where)
        seats = tuple(_expect(m.get("seats"), list, f"{where}.seats"))
        if len(seats) != cfg.games[g].num_players:
            raise ConfigError(
                f"{where}: {cfg.games[g].game} has {cfg.games[g].num_players} seats, "
                f"got {len(seats)} agents"
            )
        cfg.matchups.append((g, seats))
        if "paper" in m:
            cell_id = Cell("matchups", cfg.games[g], seats).id
            cfg.paper[cell_id] = str(_expect(m["paper"], (str, int, float), f"{where}.paper"))


def _parse_sections(cfg: EvalConfig, data: Mapping[str, Any]) -> None:
    """``[crossplay]`` and ``[functional_tom]``: agents, games (and population)."""
    for section, sec in _sections(data):
        allowed = {"agents", "optional_agents", "games"}
        allowed |= {"population", "candidates", "selection_seeds"} if section == "functional_tom" else set()
        _keys(sec, allowed, f"[{section}]")
        sec["agents"] = list(_expect(sec.get("agents"), list, f"[{section}].agents"))
        optional = _expect(sec.pop("optional_agents", []), list, f"[{section}].optional_agents")
        sec["agents"] += [a for a in optional if a in cfg.agents and a not in sec["agents"]]
        if not sec["agents"]:
            raise ConfigError(f"[{section}].agents is empty")
        sec["games"] = [
            _game_label(cfg, g, f"[{section}].games")
            for g in _expect(sec.get("games", list(cfg.games)), list, f"[{section}].games")
        ]
        if section == "functional_tom":
            sec["population"] = _expect(
                sec.get("population", "all"), str, f"[{section}].population"
            )
            sec["candidates"] = [str(_expect(c, str, f"[{section}].candidates"))
                                 for c in _expect(sec.get("candidates", []), list,
                                                  f"[{section}].candidates")]  # fmt: skip
            sel = _expect(sec.get("selection_seeds", [10_000, 10_010]), list,
                          f"[{section}].selection_seeds")  # fmt: skip
            if len(sel) != 2 or not all(type(x) is int and x >= 0 for x in sel) or sel[0] >= sel[1]:
                raise ConfigError(f"[{section}].selection_seeds must be [first, stop) with "
                                  f"0 <= first < stop, got {sel!r}")  # fmt: skip
            seeds = range(cfg.seed, cfg.seed + cfg.episodes)
            sec["selection_seeds"] = list(range(sel[0], sel[1]))
            if set(sec["selection_seeds"]) & set(seeds):
                raise ConfigError(f"[{section}].selection_seeds {sel!r} overlap the evaluation "
                                  f"seeds {cfg.seed}..{cfg.seed + cfg.episodes - 1}")  # fmt: skip
        getattr(cfg, section).append(sec)


def _parse_tables(cfg: EvalConfig, data: Mapping[str, Any]) -> None:
    """``[[tables]]``: paper tables by name, their arguments checked."""
    for i, t in enumerate(_expect(data.get("tables", []), list, "[[tables]]")):
        where = f"tables[{i}]"
        _keys(_expect(t, dict, where), {"title", "table", "kwargs", "optional_agents"}, where)
        if "table" not in t:
            raise ConfigError(f"{where}: give table = NAME (one of {table_names()})")
        kwargs = _expect(t.get("kwargs", {}), dict, f"{where}.kwargs")
        _no_code_in(kwargs, f"{where}.kwargs")
        if TRUSTED_AGENTS in kwargs:
            raise ConfigError(f"{where}.kwargs.{TRUSTED_AGENTS}: set only by the command line "
                              "(--agent LABEL=SPEC with the label in the table's optional_agents)")  # fmt: skip
        try:
            get_table(_expect(t["table"], str, f"{where}.table")).check_kwargs(kwargs, where)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        entry = dict(t)
        optional = _expect(entry.pop("optional_agents", []), list, f"{where}.optional_agents")
        if optional:
            entry["kwargs"] = _join_optional(cfg, entry["table"], dict(kwargs), optional, where)
        cfg.tables.append(entry)


#: The table argument naming the added agents whose specs came from the command line (trusted).
TRUSTED_AGENTS = "trusted_agents"


def _join_optional(cfg: EvalConfig, table: str, kwargs: dict[str, Any], optional: list[Any],
                   where: str) -> dict[str, Any]:  # fmt: skip
    """A table's ``optional_agents``: each label defined (on the command line or in ``[agents]``)
    joins the table's ``agents`` with its spec; those from the command line are marked trusted
    (their specs may name an endpoint, which a file may not)."""
    params = get_table(table).parameters()
    if "agents" not in params or TRUSTED_AGENTS not in params:
        raise ConfigError(f"{where}.optional_agents: table {table!r} takes no added agents")
    agents = dict(_expect(kwargs.get("agents", {}), dict, f"{where}.kwargs.agents"))
    trusted = []
    for label in optional:
        if not isinstance(label, str) or label not in cfg.agents:
            continue  # joined only when defined
        if label in agents:
            raise ConfigError(f"{where}: agent {label!r} is both in kwargs.agents and optional_agents")
        agents[label] = cfg.agents[label]
        if cfg.trusted(label):
            trusted.append(label)
    if agents:
        kwargs["agents"] = agents
    if trusted:
        kwargs[TRUSTED_AGENTS] = trusted
    return kwargs


def _parse_learning_curves(cfg: EvalConfig, data: Mapping[str, Any]) -> None:
    """``[[learning_curves]]``: CSV files (inside the output folder) and columns."""
    for i, lc in enumerate(_expect(data.get("learning_curves", []), list, "[[learning_curves]]")):
        where = f"learning_curves[{i}]"
        _keys(_expect(lc, dict, where), {"csv", "x", "y", "label"}, where)
        _file_path(lc.get("csv"), f"{where}.csv", "out")  # read at validation: see validate()
        if "x" in lc:
            _expect(lc["x"], str, f"{where}.x")
        for y in _expect(lc.get("y", []), list, f"{where}.y"):
            _expect(y, str, f"{where}.y")
        if "label" in lc:
            _expect(lc["label"], str, f"{where}.label")
        cfg.learning_curves.append(dict(lc))


def _file_spec(value: Any, where: str) -> str:
    """An agent spec read from the config file: text that names no code
    (:mod:`tom_envs.core.trust`; which names and options it may use is checked against each game
    by :func:`validate`)."""
    from tom_envs.agents import parse_spec

    _expect(value, str, where)
    try:
        parse_spec(value, trusted=False)
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    return str(value)


def _no_code_in(value: Any, where: str) -> None:
    """Refuse any text in a table's arguments that names code (an agent list such as Guandan's
    ``agents``); every spec is checked again against its game by :func:`validate`."""
    from tom_envs.agents import parse_spec
    from tom_envs.core.trust import NotAllowed

    if isinstance(value, Mapping):
        for k, v in value.items():
            _no_code_in(v, f"{where}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _no_code_in(v, f"{where}[{i}]")
    elif isinstance(value, str):
        try:
            parse_spec(value, trusted=False)
        except NotAllowed as exc:
            raise ConfigError(f"{where}: {exc}") from None
        except ValueError:  # not an agent spec: the table checks its own arguments
            pass


def _file_path(value: Any, where: str, kind: str) -> str:
    """A path named by the config file: relative and inside the current folder."""
    from tom_envs.core.trust import inside_folder

    _expect(value, str, where)
    try:
        inside_folder(value, where, kind=kind)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    return str(value)


def _file_kwargs(spec: GameSpec, kwargs: Mapping[str, Any], where: str) -> dict[str, Any]:
    """Game arguments read from the config file, checked against the game's declarations as a
    file's (a layout path stays inside the current folder); the values are kept as written."""
    from tom_envs.core.contract import MAX_CYCLES
    from tom_envs.core.params import validate_kwargs
    from tom_envs.core.skin import SKIN

    try:
        validate_kwargs((*spec.load().PARAMS, MAX_CYCLES, SKIN), kwargs, source="file")
    except ValueError as exc:
        raise ConfigError(f"{where}: bad kwargs for {spec.name}: {exc}") from None
    return dict(kwargs)


def _sections(data: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """``[crossplay]`` / ``[functional_tom]`` tables, or arrays of them (``[[crossplay]]``)."""
    out = []
    for section in ("crossplay", "functional_tom"):
        value = data.get(section)
        if value is None:
            continue
        tables = value if isinstance(value, list) else [value]
        for t in tables:
            out.append((section, dict(_expect(t, dict, f"[{section}]"))))
    return out


def _game_label(cfg: EvalConfig, label: Any, where: str) -> str:
    if label not in cfg.games:
        raise ConfigError(
            f"{where}: game {label!r} is not among the config's games {sorted(cfg.games)}"
        )
    return str(label)


def _num_players(spec: GameSpec, kwargs: Mapping[str, Any], where: str) -> int:
    try:
        bundle = spec.load().make_bundle(**{**spec.kwargs, **kwargs})
    except (TypeError, ValueError, KeyError) as exc:
        raise ConfigError(f"{where}: bad kwargs for {spec.name}: {exc}") from None
    return int(bundle.game.num_players)


def load_config(
    path: str | Path,
    *,
    episodes: int | None = None,
    agents: Mapping[str, str] | None = None,
    out: str | None = None,
) -> EvalConfig:
    """Read and structurally check a TOML config (a name of a shipped config works too)."""
    p = resolve_config_path(path)
    try:
        data = tomllib.loads(p.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{p}: malformed TOML: {exc}") from None
    return parse_config(data, episodes=episodes, agents=agents, out=out, source=str(p))


#: Where the shipped configs' packages are told to install from (the error of a missing one).
_INSTALL_HINT = ("The shipped configs (the papers', the games' tables, crossplay, functional_tom, "
                 "quick, llm_presets) come with the tom_experiments package (the checkout's "
                 "experiments/ folder): `pip install -e .`")  # fmt: skip


def config_file(name: str) -> Path:
    """The TOML file of the shipped config ``name``: ``configs/NAME.toml`` in the package a
    ``tom_envs.configs`` plugin of that name points to. :class:`ConfigError` naming the installed
    configs for an unknown name, and the package that is missing for one that cannot be imported."""
    names = plugins.names("tom_envs.configs")
    if name not in names:
        raise ConfigError(f"no shipped config named {name!r}; installed: "
                          f"{', '.join(names) or 'none'}. {_INSTALL_HINT}")  # fmt: skip
    try:
        package = plugins.load("tom_envs.configs", name)
    except plugins.PluginError as exc:
        raise ConfigError(f"shipped config {name!r}: {exc}") from None
    path = Path(getattr(package, "__file__", None) or ".").parent / "configs" / f"{name}.toml"
    if not path.is_file():
        raise ConfigError(f"shipped config {name!r}: its package {package.__name__} has no "
                          f"configs/{name}.toml")  # fmt: skip
    return path


def shipped_configs() -> dict[str, Path]:
    """The shipped configs by name (every installed ``tom_envs.configs`` plugin that can be
    loaded; :func:`config_file` says why another cannot)."""
    out = {}
    for name in plugins.names("tom_envs.configs"):
        try:
            out[name] = config_file(name)
        except ConfigError:
            continue
    return out


def resolve_config_path(path: str | Path) -> Path:
    """A file path, or the name of a shipped config (``paper004``)."""
    p = Path(path)
    if p.exists():
        return p
    if str(path) in plugins.names("tom_envs.configs"):
        return config_file(str(path))
    names = ", ".join(plugins.names("tom_envs.configs")) or "none"
    raise ConfigError(f"no config file {str(path)!r} and no shipped config of that name; "
                      f"shipped: {names}")  # fmt: skip


def used_labels(cfg: EvalConfig) -> dict[str, set[str]]:
    """Agent labels per game label that the cells will build."""
    used: dict[str, set[str]] = {}
    for cell in cfg.cells():
        used.setdefault(cell.game.label, set()).update(cell.labels)
    return used


def endpoint_of(spec: str, *, trusted: bool = False) -> tuple[str, str | None] | None:
    """``(model, base_url)`` of an LLM agent spec that talks to a remote endpoint, else ``None``
    (``trusted``: a command-line spec, which may name code)."""
    from tom_envs.agents import parse_spec

    head, kwargs = parse_spec(spec, trusted=trusted)
    if head != "llm" or kwargs.get("local") or kwargs.get("fake"):
        return None
    return str(kwargs.get("model", "")), kwargs.get("base_url")


def check_endpoint(base_url: str | None, timeout: float = 5.0) -> None:
    """Raise :class:`ConfigError` unless ``base_url`` answers HTTP (any status) within ``timeout``."""
    import os
    import urllib.error
    import urllib.request

    url = base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
    try:
        urllib.request.urlopen(url.rstrip("/") + "/models", timeout=timeout)
    except urllib.error.HTTPError:
        return  # the server answered (401, 404...): reachable
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ConfigError(f"LLM endpoint {url} is unreachable: {reason}") from None


def validate(cfg: EvalConfig, check_endpoints: bool = True) -> list[Cell]:
    """Check everything that can be checked before running; return the cells.

    Builds every agent once for every game it plays (unknown labels, specs, bad keyword
    arguments and game arguments that contradict an agent's protocol fail here), imports every
    table function, and checks LLM endpoints.
    """
    from tom_envs.agents import make_agent
    from tom_envs.core.agents import with_required_env_kwargs

    cells = cfg.cells()
    jobs = len(cells) * cfg.episodes
    if jobs > EPISODES_MAX:
        raise ConfigError(f"{len(cells)} cells x {cfg.episodes} episodes = {jobs:,} episodes; at "
                          f"most {EPISODES_MAX:,} per run: lower episodes or split the config")  # fmt: skip
    for game_label, labels in used_labels(cfg).items():
        entry = cfg.games[game_label]
        spec = _with_kwargs(entry)
        bundle = spec.load().make_bundle(**spec.kwargs)
        for label in sorted(labels):
            agent_spec = cfg.spec_of(label)
            try:
                agent = make_agent(agent_spec, spec, bundle, trusted=cfg.trusted(label))
                with_required_env_kwargs(spec, [agent], entry.kwargs)  # the agent's protocol
            except (KeyError, ValueError) as exc:
                msg = exc.args[0] if exc.args else exc
                raise ConfigError(f"agent {label!r} on {entry.label}: {msg}") from None
            except ImportError as exc:
                raise ConfigError(f"agent {label!r} needs a missing package: {exc}") from None
    for i, lc in enumerate(cfg.learning_curves):
        _file_path(lc["csv"], f"learning_curves[{i}].csv", "file")
    _check_table_specs(cfg)
    if check_endpoints:
        seen: set[str | None] = set()
        for label in {x for v in used_labels(cfg).values() for x in v}:
            ep = endpoint_of(cfg.spec_of(label), trusted=cfg.trusted(label))
            if ep is not None and ep[1] not in seen:
                seen.add(ep[1])
                check_endpoint(ep[1])
    return cells


def _check_table_specs(cfg: EvalConfig) -> None:
    """Build once every agent the config's paper tables seat (a table's arguments may name
    agents, e.g. Guandan's ``agents``): under the file's rules unless the table's own code wrote
    the spec (``TableCell.trusted``)."""
    import dataclasses

    from tom_envs.agents import make_agent
    from tom_envs.evaluation.tables import get_table

    seen: set[tuple[str, str, bool]] = set()
    total = len(cfg.cells()) * cfg.episodes
    for i, t in enumerate(cfg.tables):
        try:
            cells = get_table(t["table"]).cells(**t.get("kwargs", {}))
            for c in cells:
                check_seeds(c.seed, c.episodes, f"cell {c.key}")
        except (TypeError, ValueError, KeyError) as exc:
            raise ConfigError(f"tables[{i}] ({t['table']}): {exc}; "
                              f"its arguments: {t.get('kwargs', {})}") from None  # fmt: skip
        total += sum(c.episodes for c in cells)
        if total > EPISODES_MAX:
            raise ConfigError(f"tables[{i}] ({t['table']}): {total:,} episodes in all; at most "
                              f"{EPISODES_MAX:,} per run: lower its budget ({t.get('kwargs', {})})")  # fmt: skip
        for c in cells:
            for s in c.seats:
                if (c.game, s, c.trusted) in seen:
                    continue
                seen.add((c.game, s, c.trusted))
                base = game_spec(c.game)
                spec = dataclasses.replace(base, kwargs={**base.kwargs, **c.kwargs})
                try:
                    make_agent(s, spec, trusted=c.trusted)
                except (KeyError, ValueError) as exc:
                    msg = exc.args[0] if exc.args else exc
                    raise ConfigError(f"tables[{i}] ({t['table']}), cell {c.key}: {msg}") from None


def _with_kwargs(entry: GameEntry) -> GameSpec:
    import dataclasses

    return dataclasses.replace(entry.spec, kwargs={**entry.spec.kwargs, **entry.kwargs})


def agents_from_cli(items: Sequence[str]) -> dict[str, str]:
    """``LABEL=SPEC`` pairs from the command line."""
    out = {}
    for item in items:
        label, sep, spec = item.partition("=")
        if not sep or not label or not spec:
            raise ConfigError(f"--agent expects LABEL=SPEC, got {item!r}")
        out[label] = spec
    return out
