"""THE registration table: every game, its ids, its bots and its single-agent views.

One table drives ``pettingzoo.make``, ``gymnasium.make``, the CLI, the conformance tests, the docs
and the benchmarks. A game joins the suite by adding one :class:`GameSpec` here; its module (the
game's ``env.py``) is a :class:`tom_envs.core.contract.GameModule`: ``NAME``, ``PARAMS``,
``make_bundle``, ``bot_table``, ``raw_env``, ``env``, ``parallel_env`` (the last three from
:func:`tom_envs.core.contract.env_functions`).

Registration is lazy: importing ``tom_envs`` imports no game module. PettingZoo and Gymnasium get
``"module:function"`` entry points, and a spec lists its bots' names (``bots``) for the
single-agent ids, so nothing has to be loaded to name them; ``tests/test_registry_api.py`` checks
that they equal the names of the module's ``bot_table``.

Ids::

    pettingzoo.make("aec", "tom_envs/<Name>-v<N>")          every game
    pettingzoo.make("parallel", "tom_envs/<Name>-v<N>")     simultaneous games
    gymnasium.make("tom_envs/<Name>Vs<Bot>-v<N>")           seat 0 learns, the bot fills the others
                                                            (an illegal action ends the episode
                                                            with reward -1: illegal_action=)
    gymnasium.make("tom_envs/<Name>Vs<Bot>-text-v<N>")      the same view, text in and text out
                                                            (tom_envs.wrappers; an invalid answer
                                                            is re-asked: on_invalid=)
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from functools import cache
from types import ModuleType
from typing import Any

import gymnasium
import pettingzoo

NAMESPACE = "tom_envs"


@dataclass(frozen=True)
class GameSpec:
    """One registered game.

    Attributes:
        name: CamelCase id name (``"RockPaperScissors"``).
        module: the game's env module (``"tom_envs.games.matrix.env"``).
        kwargs: default keyword arguments of the env (variants are kwargs, not subclasses).
        parallel: whether a Parallel version exists (simultaneous-move games).
        summary: one line for listings.
        version: the ``-vN`` suffix; bump it when rules, observations or rewards change.
        demo_agents: the built-in agents ``tom-envs demo`` seats in this game (never a plugin:
            the demo runs without the agent packages).
        max_cycles: default ``max_cycles`` passed by ``pettingzoo.make`` (``None``: rules' limit).
        fixed: the ``kwargs`` that make this id what it is (a matrix id's ``game``): a browser's
            request may not override them (``tom-envs serve``).
        bots: the names of the game's bots for ``kwargs``, in its ``bot_table`` order (one
            Gymnasium single-agent id each, registered without importing the game).
        example: a teaching example (``tom_envs/games/example``, docs/quickstart.md "Adding a
            game"): registered, listed, documented and conformance-tested like every game, but
            left out of CoordinationQA (it has no ``qa.py``) and of the default benchmark sweep.
        vector: the game's optional batched engine, ``"module:Class"`` (a
            :class:`tom_envs.core.vector.BatchedEngine`; ``""``: none). Every one named here is
            checked against the AEC env by ``tests/test_vector_parity.py``.
    """

    name: str
    module: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    parallel: bool = False
    summary: str = ""
    version: int = 0
    demo_agents: tuple[str, ...] = ()
    max_cycles: int | None = None
    fixed: tuple[str, ...] = ()
    bots: tuple[str, ...] = ()
    example: bool = False
    vector: str = ""

    @property
    def id(self) -> str:
        """``tom_envs/<Name>-v<N>``."""
        return f"{NAMESPACE}/{self.name}-v{self.version}"

    def load(self) -> ModuleType:
        """Import the game's env module (a :class:`~tom_envs.core.contract.GameModule`)."""
        return importlib.import_module(self.module)

    def load_vector(self) -> type[Any]:
        """The batched engine's class (``Engine(num_envs, **kwargs)``); ``LookupError`` when the
        game has none."""
        if not self.vector:
            raise LookupError(f"{self.name} has no batched engine")
        module, _, cls = self.vector.partition(":")
        return getattr(importlib.import_module(module), cls)


#: The matrix partners after the single-action ones (``tom_envs/games/matrix/bots.py``).
_MATRIX_BOTS = ("tit_for_tat", "random", "win_stay_lose_shift", "alternating", "fictitious_play")


def _matrix_game(
    name: str, game: str, title: str, demo_agents: tuple[str, ...], actions: int
) -> GameSpec:
    """One of paper 004's iterated matrix games (one env module, ``game=`` its payoff table,
    fixed): ``title`` for T=100 rounds, a single-action bot per action, then the matrix
    partners."""
    return GameSpec(
        name=name,
        module="tom_envs.games.matrix.env",
        kwargs={"game": game},
        fixed=("game",),
        parallel=True,
        summary=f"iterated {title}, T=100 (paper 004)",
        demo_agents=demo_agents,
        bots=(*(f"always_{a}" for a in range(actions)), *_MATRIX_BOTS),
        vector="tom_envs.games.matrix.vector:MatrixVectorEnv",
    )


def _maze_game(name: str, package: str, engine: str, summary: str,
               conventions: tuple[str, ...]) -> GameSpec:  # fmt: skip
    """One of paper 002's two-player room mazes (``tom_envs/games/<package>``): simultaneous,
    the ``greedy`` and ``optimal`` bots (both seated by ``tom-envs demo``), then the game's
    ``conventions`` (the zoo's convention members), and a batched engine (``vector.py``'s
    ``engine``)."""
    return GameSpec(
        name=name,
        module=f"tom_envs.games.{package}.env",
        parallel=True,
        summary=f"{summary} (paper 002)",
        demo_agents=("greedy", "optimal"),
        bots=("greedy", "optimal", *conventions),
        vector=f"tom_envs.games.{package}.vector:{engine}",
    )


GAMES: tuple[GameSpec, ...] = (
    _matrix_game(
        "RockPaperScissors",
        "rps",
        "Rock-Paper-Scissors",
        ("fictitious_play", "population:single_action"),
        actions=3,
    ),
    _matrix_game(
        "BattleOfSexes", "ibs", "Battle of the Sexes", ("fictitious_play", "tit_for_tat"), actions=2
    ),
    _matrix_game(
        "PrisonersDilemma",
        "ipd",
        "Prisoner's Dilemma",
        ("fictitious_play", "tit_for_tat"),
        actions=2,
    ),
    GameSpec(
        name="BombDefusal",
        module="tom_envs.games.bomb_defusal.env",
        summary="3-player search & rescue bomb defusal with chat and ToM probes (paper 000)",
        demo_agents=("heuristic",),
        bots=("random", "heuristic", "cbs", "split_even", "split_odd", "heuristic_silent", "passive"),
        vector="tom_envs.games.bomb_defusal.vector:BombVectorEnv",
    ),
    _maze_game(
        "CollabCapture",
        "collab_capture",
        "CaptureVectorEnv",
        "two pursuers, doors and a greedy thief; scenario= the 4 door states",
        ("lazy", "guard", "opener"),
    ),
    _maze_game(
        "CollabEscape",
        "collab_escape",
        "EscapeVectorEnv",
        "repair 2 generators, escape a killer; scenario=together|split",
        ("lazy", "far_first", "split"),
    ),
    GameSpec(
        name="Hanabi",
        module="tom_envs.games.hanabi.env",
        kwargs={"players": 2},
        summary="Hanabi, 2-5 players (players=), HLE's rules and encoding, card-knowledge ToM "
        "probes (paper 002)",
        demo_agents=("convention",),
        bots=("random", "simple", "convention"),
        vector="tom_envs.games.hanabi.vector:HanabiVectorEnv",
    ),
    GameSpec(
        name="Guandan",
        module="tom_envs.games.guandan.env",
        summary="Guandan (掼蛋), 4 players in 2 teams, wild cards, tribute; language=en|zh; "
        "match=True for a whole match (paper 001)",
        demo_agents=("heuristic", "bestp_lowv"),
        bots=("random", "bestp_lowv", "heuristic", "recommender", "leader", "supporter",
              "signal_pair", "signal_single", "pair_opener", "single_opener"),
    ),
    GameSpec(
        name="CoBlock",
        module="tom_envs.games.coblock.env",
        parallel=True,
        summary="collaborative 3D blocks world, private goals and inventories, chat; "
        "task_type=independent|skill_dependent|goal_dependent (paper 003)",
        demo_agents=("cooperative", "cooperative"),
        bots=("cooperative", "helper", "egoist", "passive", "error_prone", "mirror",
              "mirror_helper", "mirror_egoist", "mirror_passive", "mirror_error_prone"),
    ),
    GameSpec(
        name="Overcooked",
        module="tom_envs.games.overcooked.env",
        kwargs={"layout": "cramped_room"},
        parallel=True,
        summary="two chefs cook onion soup; layout= the paper's 5 kitchens; overcooked-ai 1.1.0 "
        "rules, App. A text, mid-level actions (paper 002)",
        demo_agents=("planner", "greedy"),
        bots=("greedy", "role_onions", "role_dishes", "planner", "stay"),
        vector="tom_envs.games.overcooked.vector:OvercookedVectorEnv",
    ),
    GameSpec(
        name="Example",
        module="tom_envs.games.example.env",
        parallel=True,
        summary="the teaching example: name the same colour (docs/quickstart.md)",
        demo_agents=("copycat", "stubborn"),
        bots=("copycat", "stubborn"),
        example=True,
    ),
)


@dataclass(frozen=True)
class SingleAgentSpec:
    """A Gymnasium single-agent view: one game, the learner's seat, a named bot elsewhere."""

    game: GameSpec
    bot: str
    seat: int = 0

    @property
    def id(self) -> str:
        """``tom_envs/<Name>Vs<Bot>-v<N>``."""
        return f"{NAMESPACE}/{self._name}-v{self.game.version}"

    @property
    def text_id(self) -> str:
        """``tom_envs/<Name>Vs<Bot>-text-v<N>``: the same view with text in and text out
        (:class:`tom_envs.wrappers.TextSingleAgentEnv`)."""
        return f"{NAMESPACE}/{self._name}-text-v{self.game.version}"

    @property
    def _name(self) -> str:
        camel = "".join(part.capitalize() for part in self.bot.split("_"))
        return f"{self.game.name}Vs{camel}"


def game_spec(name_or_id: str) -> GameSpec:
    """Find a game by id (``tom_envs/X-v0``), by ``X-v0`` or by ``X`` (case-insensitive)."""
    key = name_or_id.lower().removeprefix(f"{NAMESPACE}/")
    for spec in GAMES:
        if key in (spec.name.lower(), f"{spec.name.lower()}-v{spec.version}"):
            return spec
    known = ", ".join(s.name for s in GAMES)
    raise KeyError(f"unknown game {name_or_id!r}; registered games: {known}")


@cache
def single_agent_specs() -> tuple[SingleAgentSpec, ...]:
    """Every single-agent view: each game against each of its bots (``GameSpec.bots``), learner
    in seat 0. Imports no game module."""
    return tuple(SingleAgentSpec(spec, bot) for spec in GAMES for bot in spec.bots)


def register_all() -> None:
    """Register every game with PettingZoo and every single-agent view with Gymnasium (its
    vector id and its text id)."""
    for spec in GAMES:
        if spec.id not in pettingzoo.aec_registry:
            pettingzoo.register(
                "aec", spec.id, f"{spec.module}:env", max_cycles=spec.max_cycles, kwargs=spec.kwargs
            )
        if spec.parallel and spec.id not in pettingzoo.parallel_registry:
            pettingzoo.register(
                "parallel",
                spec.id,
                f"{spec.module}:parallel_env",
                max_cycles=spec.max_cycles,
                kwargs=spec.kwargs,
            )
    for sa in single_agent_specs():
        if sa.id not in gymnasium.registry:
            gymnasium.register(
                id=sa.id,
                entry_point="tom_envs.single_agent:SingleAgentEnv",
                # Gymnasium's API takes every action of the space: an illegal one ends the episode
                # with a penalty (tom_envs/single_agent.py; illegal_action="raise" to refuse it)
                kwargs={
                    "game": sa.game.name,
                    "partners": sa.bot,
                    "seat": sa.seat,
                    "illegal_action": "terminate",
                },
            )
        if sa.text_id not in gymnasium.registry:
            gymnasium.register(
                id=sa.text_id,
                entry_point="tom_envs.wrappers.single_agent:text_single_agent_env",
                # an invalid answer is re-asked with the parser's feedback, twice, then forfeits
                # to a recorded fallback (tom_envs/wrappers/answers.py; on_invalid= to choose)
                kwargs={"game": sa.game.name, "partners": sa.bot, "seat": sa.seat},
            )
