"""The game-module contract, written as code: what a game's ``env.py`` provides, and the helpers
that provide most of it.

A game is one folder ``tom_envs/games/<game>/`` with the standard files (``rules.py``,
``view.py``, ``encode.py``, ``text.py``, ``board.py``, ``bots.py``, ``env.py``) and one
``GameSpec`` line in :mod:`tom_envs.registration`. Its ``env.py`` is a :class:`GameModule`:

* ``NAME`` and ``PARAMS`` (the declared keyword arguments, :mod:`tom_envs.core.params`);
* ``make_bundle(**config)``: the configured game with its encoder, text (and probes);
* ``bot_table(**config)``: its partner bots and populations, a :class:`BotTable` (written in
  ``bots.py`` and imported into ``env.py``);
* ``raw_env``, ``env``, ``parallel_env``: built from ``make_bundle`` by :func:`env_functions`,
  one line: ``raw_env, env, parallel_env = env_functions(NAME, make_bundle)``;
* optionally ``episode_metrics_hook()`` (the per-episode metrics the runner records; most games
  declare it with :func:`lazy_hook`, or with the configured hooks below in one
  :func:`metrics_hooks` line), ``action_recommender(view)`` (a tool hook for LLM agents),
  ``functional_objective(**config)`` (the game's functional objective ``U``,
  :mod:`tom_envs.core.functional`), ``action_classes(**config)`` (coarse action classes for
  next-action questions, :mod:`tom_envs.core.action_classes`) and ``noop_action(view)`` (the
  move that loses a turn, :func:`noop_hook`); see :data:`OPTIONAL_HOOKS`.

Beside it, a game **may** have a batched engine (``vector.py``: B copies stepped at once on numpy
arrays, for RL data collection), named in its ``GameSpec`` (``vector="module:Class"``). That is a
second contract, :class:`tom_envs.core.vector.BatchedEngine` (its module docstring says what an
engine must provide), and a second implementation of the rules, so it is held to the first:
``tests/test_vector_parity.py`` plays every registered engine beside the AEC env (observations and
masks of every seat, rewards, episode ends) on fixed seed lists. A game without one loses nothing
but that speed.

Everything here is core: it imports only :mod:`tom_envs.core`.
"""

from __future__ import annotations

import importlib
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from tom_envs.core.aec import TomAECEnv
from tom_envs.core.agents import Agent
from tom_envs.core.game import GameBundle
from tom_envs.core.parallel import TomParallelEnv
from tom_envs.core.params import Param
from tom_envs.core.wrappers import OrderEnforcing

#: Module attributes a game may add to the contract; callers look them up with ``getattr``.
OPTIONAL_HOOKS = (
    "episode_metrics_hook",
    "action_recommender",
    "functional_objective",
    "action_classes",
    "noop_action",
)

#: The one env-level argument every game takes besides its ``PARAMS`` (not a rule: it only cuts
#: episodes short), checked like them by ``raw_env`` and ``parallel_env``.
MAX_CYCLES = Param(
    "max_cycles",
    "int",
    None,
    "truncate after this many cycles (every game; not a rule)",
    low=1,
    high=10_000_000,
    optional=True,
)

#: A bot's constructor: the configured game in, a fresh agent out.
BotFactory = Callable[[GameBundle], Agent]


@dataclass(frozen=True)
class Bot:
    """One partner bot of a game.

    Attributes:
        name: what ``--agents``, ``make_agent`` and the single-agent ids call it (``tit_for_tat``).
        factory: builds a fresh agent for a configured game (a new one per seat).
        description: one line for ``tom-envs list`` and the docs.
    """

    name: str
    factory: BotFactory
    description: str


@dataclass(frozen=True)
class BotTable:
    """Every partner bot of a game (in a fixed order) and its named populations.

    Attributes:
        bots: the bots, in the order they are listed (and registered as single-agent views).
        populations: population name -> member bot names (``population:<name>`` agents draw one
            member per episode); stored read-only, members as tuples.
        game: the game's name in error messages (``"unknown Hanabi bot ..."``).

    Raises:
        ValueError: two bots share a name, a population is empty or names a bot not in ``bots``.
    """

    bots: tuple[Bot, ...]
    populations: Mapping[str, tuple[str, ...]] = field(default_factory=dict, hash=False)
    game: str = "game"

    def __post_init__(self) -> None:
        bots = tuple(self.bots)
        names = [b.name for b in bots]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"{self.game}: bot names must be unique, repeated: {dupes}")
        pops = {str(k): tuple(v) for k, v in self.populations.items()}
        for pop, members in pops.items():
            if not members:
                raise ValueError(f"{self.game}: population {pop!r} is empty")
            unknown = [m for m in members if m not in names]
            if unknown:
                raise ValueError(
                    f"{self.game}: population {pop!r} names unknown bots {unknown}; bots: {names}"
                )
        object.__setattr__(self, "bots", bots)
        object.__setattr__(self, "populations", types.MappingProxyType(pops))

    def names(self) -> list[str]:
        """The bot names, in table order."""
        return [b.name for b in self.bots]

    def __contains__(self, name: object) -> bool:
        return any(b.name == name for b in self.bots)

    def bot(self, name: str) -> Bot:
        """The :class:`Bot` called ``name``.

        Raises:
            KeyError: no such bot; the message lists the game's bots.
        """
        for b in self.bots:
            if b.name == name:
                return b
        raise KeyError(f"unknown {self.game} bot {name!r}; choose from {self.names()}")

    def make(self, name: str, bundle: GameBundle) -> Agent:
        """A fresh agent of bot ``name`` for the configured game ``bundle`` (KeyError if unknown)."""
        return self.bot(name).factory(bundle)

    def describe(self, name: str) -> str:
        """Bot ``name``'s one-line description (KeyError if unknown)."""
        return self.bot(name).description

    def population(self, name: str) -> tuple[str, ...]:
        """The members of population ``name``.

        Raises:
            KeyError: no such population; the message lists the game's populations.
        """
        if name not in self.populations:
            raise KeyError(
                f"{self.game} has no population {name!r}; choose from {sorted(self.populations)}"
            )
        return self.populations[name]


#: ``raw_env(render_mode=None, max_cycles=None, **config)``.
RawEnvFn = Callable[..., TomAECEnv]
#: ``env(**kwargs)``: ``raw_env`` inside PettingZoo's order enforcement.
EnvFn = Callable[..., OrderEnforcing]
#: ``parallel_env(render_mode=None, max_cycles=None, **config)``.
ParallelEnvFn = Callable[..., TomParallelEnv]


@runtime_checkable
class GameModule(Protocol):
    """What every game's ``env.py`` module provides (checked on every registered game by
    ``tests/test_registry_api.py``). Functions are module-level; ``self`` is the module.

    Attributes:
        NAME: the PettingZoo metadata name (``"overcooked_v0"``); games whose name depends on
            the configuration (``matrix_ipd_v0``, ``hanabi_3p_v0``) give :func:`env_functions` a
            template of the keyword arguments instead and set ``NAME`` to the default's name.
        PARAMS: the declared keyword arguments (``make_bundle`` validates against them).

    Optional module attributes (not part of the protocol check; see :data:`OPTIONAL_HOOKS`):
    ``episode_metrics_hook() -> (bundle, episode, agents) -> dict[str, float]``,
    ``action_recommender(view) -> dict[int, float]``,
    ``functional_objective(**config) -> FunctionalObjective``,
    ``action_classes(**config) -> ActionClasses`` and ``noop_action(view) -> int | None``.
    """

    NAME: str
    PARAMS: tuple[Param, ...]

    def make_bundle(self, **config: Any) -> GameBundle:
        """The configured game with its encoder and text (and probes): validates ``config``."""
        ...

    def bot_table(self, **config: Any) -> BotTable:
        """The partner bots and populations for this configuration."""
        ...

    def raw_env(
        self, render_mode: str | None = None, max_cycles: int | None = None, **config: Any
    ) -> TomAECEnv:
        """The AEC environment without wrappers."""
        ...

    def env(self, **kwargs: Any) -> OrderEnforcing:
        """The AEC environment with PettingZoo's order enforcement."""
        ...

    def parallel_env(
        self, render_mode: str | None = None, max_cycles: int | None = None, **config: Any
    ) -> TomParallelEnv:
        """The Parallel environment (simultaneous games; a sequential game raises ValueError)."""
        ...


def env_functions(
    name: str | Callable[[dict[str, Any]], str],
    make_bundle: Callable[..., GameBundle],
    params: tuple[Param, ...] = (),
) -> tuple[RawEnvFn, EnvFn, ParallelEnvFn]:
    """The three PettingZoo constructors of a game, built from its bundle factory.

    Args:
        name: the PettingZoo metadata name; a template whose ``{fields}`` are keyword arguments,
            filled from those given over the defaults of ``params`` (``"hanabi_{players}p_v0"``);
            or a function of the keyword arguments given that returns it.
        make_bundle: the game's ``make_bundle(**config) -> GameBundle``.
        params: the game's ``PARAMS``, whose defaults fill a template's fields.

    Returns:
        ``(raw_env, env, parallel_env)``, module-level functions of the game's ``env.py`` (their
        ``__module__`` is ``make_bundle``'s, so they pickle by reference):

        * ``raw_env(render_mode=None, max_cycles=None, **config)``: a
          :class:`~tom_envs.core.aec.TomAECEnv` (illegal actions raise ``IllegalActionError``);
        * ``env(**kwargs)``: ``raw_env(**kwargs)`` inside
          :class:`~tom_envs.core.wrappers.OrderEnforcing`;
        * ``parallel_env(render_mode=None, max_cycles=None, **config)``: a
          :class:`~tom_envs.core.parallel.TomParallelEnv` (same rules, seeds and episodes);
          sequential games raise ``ValueError`` (they have no Parallel version).
    """

    defaults = {p.name: p.default for p in params}

    def _name(config: dict[str, Any]) -> str:
        if not isinstance(name, str):
            return name(config)
        return name.format_map({**defaults, **config}) if "{" in name else name

    def raw_env(
        render_mode: str | None = None, max_cycles: int | None = None, **config: Any
    ) -> TomAECEnv:
        """The AEC environment without wrappers (illegal actions raise ``IllegalActionError``)."""
        cycles = MAX_CYCLES.parse(max_cycles)
        return TomAECEnv(make_bundle(**config), _name(config), render_mode, cycles)

    def env(**kwargs: Any) -> OrderEnforcing:
        """The AEC environment with PettingZoo's order enforcement."""
        return OrderEnforcing(raw_env(**kwargs))

    def parallel_env(
        render_mode: str | None = None, max_cycles: int | None = None, **config: Any
    ) -> TomParallelEnv:
        """The Parallel environment (same rules, same seeds, same episodes)."""
        cycles = MAX_CYCLES.parse(max_cycles)
        return TomParallelEnv(make_bundle(**config), _name(config), render_mode, cycles)

    module = getattr(make_bundle, "__module__", __name__)
    for fn in (raw_env, env, parallel_env):
        fn.__module__ = module
        fn.__qualname__ = fn.__name__
    return raw_env, env, parallel_env


def lazy_hook(target: str) -> Callable[[], Any]:
    """A game's hook (:data:`OPTIONAL_HOOKS`) that returns the object ``target``
    (``"module:name"``), imported when the hook is called, not when ``env.py`` is:
    ``episode_metrics_hook = lazy_hook("tom_envs.games.hanabi.metrics:trajectory_metrics")``."""
    module, _, attr = target.partition(":")

    def hook() -> Any:
        return getattr(importlib.import_module(module), attr)

    hook.__doc__ = f"``{target}``, imported on the first call."
    return hook


#: What each configured hook returns (:func:`configured_hook`).
HOOK_DOCS = {
    "functional_objective": "The game's functional objective ``U`` for this configuration "
    "(:mod:`tom_envs.core.functional`).",
    "action_classes": "The coarse classes of an action for this configuration "
    "(:mod:`tom_envs.core.action_classes`), for next-action questions.",
}


def configured_hook(
    make_bundle: Callable[..., GameBundle], module: str, name: str
) -> Callable[..., Any]:
    """A game-module hook ``name(**config)``: ``name(game)`` of the game's ``module`` (where
    it keeps its metrics, imported at the first call) on the configured game
    (``make_bundle(**config).game``, so the configuration is validated).

    One line in a game's ``env.py``::

        functional_objective = configured_hook(make_bundle, f"{__package__}.metrics",
                                               "functional_objective")
    """
    if not module.startswith("tom_envs.games."):
        raise ValueError(f"configured_hook: {module!r} is not a game module (tom_envs.games.*)")

    def hook(**config: Any) -> Any:
        return getattr(importlib.import_module(module), name)(make_bundle(**config).game)

    hook.__name__ = hook.__qualname__ = name
    hook.__module__ = getattr(make_bundle, "__module__", __name__)
    hook.__doc__ = HOOK_DOCS.get(name, f"``{module}.{name}`` of the configured game.")
    return hook


def metrics_hooks(
    make_bundle: Callable[..., GameBundle],
    configured: tuple[str, ...] = ("functional_objective",),
    episode_metrics: str = "trajectory_metrics",
) -> tuple[Callable[..., Any], ...]:
    """A game's hooks kept in its ``metrics`` module (beside ``make_bundle``'s module):
    ``episode_metrics_hook`` (:func:`lazy_hook` of the function named ``episode_metrics``), then
    one :func:`configured_hook` for each name of ``configured``, in that order.

    One line in a game's ``env.py``::

        episode_metrics_hook, functional_objective = metrics_hooks(make_bundle)
    """
    module = f"{make_bundle.__module__.rpartition('.')[0]}.metrics"
    hooks = [configured_hook(make_bundle, module, name) for name in configured]
    return (lazy_hook(f"{module}:{episode_metrics}"), *hooks)


def noop_hook(action: int, what: str) -> Callable[[Any], int | None]:
    """A game's ``noop_action(view)`` hook: ``action`` when it is legal in ``view``, else None.

    The no-op is the move that loses a turn without doing anything else the rules reward or
    punish (Overcooked's stay, Guandan's pass when passing is legal, CoBlock's wait, staying put
    in Capture and Escape). An agent whose answer is illegal under the ``forfeit`` protocol
    (``tom-envs bench --on-invalid forfeit``) plays it, recorded as a forfeited turn; where a game
    declares none, or it is not legal at that moment (Guandan's leader), the episode is lost
    there (the driver ends it). ``tests/test_registry_api.py`` checks on seeded playthroughs of
    every registered game that a declared no-op is legal whenever it is returned.

    One line in a game's ``env.py``::

        noop_action = noop_hook(int(Action.STAY), "stay in place")
    """
    no_op = int(action)

    def noop_action(view: Any) -> int | None:
        return no_op if no_op in view.legal_actions else None

    noop_action.__doc__ = (
        f"The move that loses a turn ({what}, action {no_op}) when legal in ``view``, else None."
    )
    noop_action.what = what  # type: ignore[attr-defined]  # the rule in words (the bench's table)
    return noop_action


__all__ = [
    "HOOK_DOCS",
    "MAX_CYCLES",
    "OPTIONAL_HOOKS",
    "Bot",
    "BotFactory",
    "BotTable",
    "GameModule",
    "configured_hook",
    "env_functions",
    "lazy_hook",
    "metrics_hooks",
    "noop_hook",
]
