"""Named agents for any game: generic agents, each game's partner bots, populations, baselines.

An agent spec is a string::

    random                       uniformly random legal actions (every game)
    <bot>                        a partner bot of the game (``tom-envs list`` shows them)
    population:<name>            a bot drawn from a named population at every episode (seeded)
    zoo/<member>                 a learned member of the game's partner zoo (:mod:`tom_envs.zoo`)
    br/<partner>                 the cached best response trained against <partner>
                                 (``:seatK=SPEC`` names the other seats it was trained with)
                                 (:mod:`tom_envs.best_responses`; a lower bound)
    switch:a=A:b=B:at=LO-HI:key=K
                                 a partner that plays A, then B from its decision t_s drawn
                                 uniformly in [LO, HI] from the episode seed and K (B runs in
                                 shadow from the start; the switch is invisible to the other
                                 seats and recorded in the trajectory's summary for the scorer:
                                 :mod:`tom_envs.partners.switching`); A and B are names above
                                 without ':' (a bot, random, zoo/<member>)
    switch:a=A:b=B:at_episode=LO-HI:key=K
                                 the same across the episodes of a session (short games:
                                 :func:`tom_envs.sessions.play_session`), from the
                                 session's episode t_s
    rmax                         tabular RMax (plugin: baselines/rmax.py)
    llm:model=M:base_url=U       an LLM agent (plugin: llm_agents/agent.py; strategy=, local=true)
    checkpoint:path=FILE         a trained MAPPO .pt or SB3 PPO .zip policy (plugin:
                                 baselines/checkpoint.py)
    <name>:key=value:key=value   any of the above with keyword arguments (ints, floats, bools, str;
                                 a value may hold ':', as in base_url=http://127.0.0.1:8000/v1)
    module.path:Class            any importable Agent class (keyword arguments after a further ':');
                                 ``myagent:Cls`` (a file myagent.py) too: only from the command
                                 line (``trusted=True``), which finds them from the current folder

**Trust** (:mod:`tom_envs.core.trust`). A spec read from a file or a request (eval configs, the
shipped configs, study files, QA suites, served requests) is untrusted: :func:`make_agent`'s
default ``trusted=False`` accepts only the allow-list above (``random``, the game's bots and populations,
installed ``tom_envs.agents`` plugins), refuses the plugin options that could run code, pick a
host or leak a secret (each plugin's ``trusted_options``), and keeps the paths it names inside the
current folder (``path_options``). Only a caller that holds a spec from the person running the
command passes ``trusted=True``: the command line, and Python code for its own specs. The
permission is that argument, never something read from the spec.

Generic kinds other than ``random`` are plugins (:mod:`tom_envs.plugins`, group
``tom_envs.agents``): this package names no agent package. The partner registry is each game
module's ``bot_table(**kwargs)`` (a :class:`tom_envs.core.contract.BotTable`: bots and populations),
read through :data:`tom_envs.registration.GAMES`.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable, Mapping
from typing import Any

from tom_envs import plugins
from tom_envs.core.agents import Agent, AgentAction, BaseAgent, EpisodeInfo, RandomAgent, Turn
from tom_envs.core.game import GameBundle
from tom_envs.core.trust import HOW_TO_NAME_CODE, NotAllowed, inside_folder
from tom_envs.registration import GameSpec

#: The agent kind every game has without a plugin.
BUILTIN_AGENTS: dict[str, type] = {"random": RandomAgent}


def generic_agent_names() -> list[str]:
    """Agent kinds that play every game: ``random`` and each installed ``tom_envs.agents``
    plugin (:mod:`tom_envs.plugins`; the suite's own: ``rmax``, ``llm``, ``checkpoint``)."""
    return sorted({*BUILTIN_AGENTS, *plugins.names("tom_envs.agents")})


def _generic_class(name: str) -> Callable[..., Any]:
    if name in BUILTIN_AGENTS:
        return BUILTIN_AGENTS[name]
    return plugins.load("tom_envs.agents", name)


def describe(cls: Any) -> str:
    """An agent class's one-line description: its ``description`` or its docstring's first line."""
    text = getattr(cls, "description", None) or (cls.__doc__ or "").strip().split("\n")[0]
    return str(text)


def _load(entry: str) -> Callable[..., Any]:
    module, _, attr = entry.partition(":")
    return getattr(importlib.import_module(module), attr)


def _value(text: str) -> Any:
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low == "none":
        return None
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def _names_code(head: str, item: str) -> bool:
    """``head:item`` names a class to import: a dotted module (``mypkg.agents:Cls``) or one file
    and a capitalised class name (``myagent:Cls``; ``rmax:gamma`` stays a missing ``=value``)."""
    return "=" not in item and item.isidentifier() and ("." in head or item[:1].isupper())


def parse_spec(spec: str, *, trusted: bool = False) -> tuple[str, dict[str, Any]]:
    """``"rmax:known_threshold=2:gamma=0.9"`` -> ``("rmax", {"known_threshold": 2, "gamma": 0.9})``.

    ``module:Class`` heads (``("mypkg.agents:Cls", {...})``) are read only with ``trusted=True``;
    otherwise a spec of that shape raises :class:`~tom_envs.core.trust.NotAllowed`.
    """
    if not isinstance(spec, str):
        raise ValueError(f"an agent spec is text, got {type(spec).__name__} {str(spec)[:60]!r}")
    if len(spec) > 4000:
        raise ValueError(f"agent spec of {len(spec)} characters (at most 4000): {spec[:60]!r}...")
    parts = spec.split(":")
    head = parts[0]
    rest = parts[1:]
    if head == "population" and rest:
        head, rest = f"population:{rest[0]}", rest[1:]
    elif rest and _names_code(head, rest[0]):
        if not trusted:
            raise NotAllowed(
                f"agent spec {spec[:120]!r} names Python code ({head}:{rest[0]}); a file or a "
                "request may name only random, the game's bots, population:NAME and installed "
                f"agent plugins ({', '.join(generic_agent_names())}). To play it, "
                + HOW_TO_NAME_CODE
            )
        head, rest = f"{head}:{rest[0]}", rest[1:]
    raw: dict[str, str] = {}
    last = None
    for item in rest:
        key, eq, val = item.partition("=")
        if not eq or not key:
            if last is None:
                raise ValueError(f"agent spec {spec!r}: expected key=value after ':', got {item!r}")
            raw[last] += ":" + item  # a value holding ':' (base_url=http://host:8000/v1)
            continue
        raw[key] = val
        last = key
    return head, {k: _value(v) for k, v in raw.items()}


class PopulationAgent(BaseAgent):
    """Plays as one member of a population, drawn anew (from the episode seed) each episode.

    ``current`` is the member playing this episode (evaluation reads its exact policy from it) and
    ``member`` its name (the driver records it in the episode's ``members``).
    """

    def __init__(self, name: str, members: list[str], factory: Callable[[str], Agent]) -> None:
        super().__init__()
        if not members:
            raise ValueError(f"population {name!r} is empty")
        self.name = f"population:{name}"
        self.members = members
        self._agents = {m: factory(m) for m in members}
        self.current: Agent = self._agents[members[0]]
        self.member: str = members[0]

    def reset(self, info: EpisodeInfo) -> None:
        """Draw this episode's member, then reset it."""
        super().reset(info)
        member = self.members[int(self.rng.integers(len(self.members)))]
        self.current, self.member = self._agents[member], member
        self.current.reset(info)

    def act(self, turn: Turn) -> int | AgentAction:
        """The current member acts."""
        return self.current.act(turn)

    def end_episode(self, turn: Turn) -> None:
        """Forward to the current member."""
        end = getattr(self.current, "end_episode", None)
        if end is not None:
            end(turn)


def check_options(cls: Any, spec: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The options of an untrusted spec for the plugin class ``cls``: :class:`NotAllowed` for
    an option the plugin keeps for the command line (``trusted_options``), and every path option
    (``path_options``) kept inside the current folder."""
    restricted: dict[str, str] = dict(getattr(cls, "trusted_options", {}) or {})
    for key in kwargs:
        if key in restricted:
            raise NotAllowed(
                f"agent spec {spec[:120]!r}: option {key!r} {restricted[key]}, so a file or a "
                "request cannot set it; give this agent on the command line instead (tom-envs "
                "run --agents SPEC, tom-envs eval CONFIG --agent LABEL=SPEC, tom-envs serve "
                "--partner NAME=SPEC)"
            )
    out = dict(kwargs)
    for key in getattr(cls, "path_options", ()) or ():
        if key in out and out[key] is not None:
            kind = "dir" if key.endswith("_dir") else "file"
            out[key] = str(inside_folder(str(out[key]), f"agent spec {spec[:120]!r}: {key}",
                                         kind=kind))  # fmt: skip
    return out


def _build(entry: str, spec: str, kwargs: dict[str, Any], trusted: bool) -> Agent:
    """Load ``entry`` (a generic agent name, or ``module:Class`` when ``trusted``) and construct
    it; a bad spec raises KeyError/ValueError, never TypeError."""
    try:
        if ":" not in entry:
            cls = _generic_class(entry)
        elif trusted:
            cls = _load(entry)
        else:  # unreachable through parse_spec; kept so no other path can import a named class
            raise NotAllowed(f"agent spec {spec[:120]!r} names Python code; {HOW_TO_NAME_CODE}")
    except (ImportError, AttributeError, plugins.PluginError) as exc:
        raise KeyError(f"agent spec {spec!r}: cannot load {entry!r} ({exc})") from exc
    if not trusted:
        kwargs = check_options(cls, spec, kwargs)
    try:
        return cls(**kwargs)
    except TypeError as exc:  # unknown or missing keyword arguments
        raise ValueError(f"agent spec {spec!r}: {exc}") from exc


def make_agent(
    spec: str, game: GameSpec, bundle: GameBundle | None = None, *, trusted: bool = False
) -> Agent:
    """Build the agent named by ``spec`` for ``game`` (see the module docstring).

    ``trusted=False`` (the default) applies the rules for a spec read from a file or a request
    (:mod:`tom_envs.core.trust`: the allow-list only, refused plugin options raise
    :class:`~tom_envs.core.trust.NotAllowed`); pass ``trusted=True`` only for a spec the person
    running the command gave (the command line, your own code).

    The agent's ``spec`` attribute is set to ``spec`` (trajectory headers and result keys name it;
    :func:`tom_envs.core.agents.agent_config` adds its class and resolved settings).
    """
    if trusted is not True and trusted is not False:  # a truthy string is never a permission
        raise TypeError(f"trusted must be True or False, got {trusted!r}")
    agent = _make_agent(spec, game, bundle, trusted)
    with contextlib.suppress(AttributeError):  # __slots__ or a read-only property: keep its own
        agent.spec = spec  # type: ignore[attr-defined]
    return agent


def _make_agent(spec: str, game: GameSpec, bundle: GameBundle | None, trusted: bool) -> Agent:
    """:func:`make_agent` without recording the spec."""
    head, kwargs = parse_spec(spec, trusted=trusted)
    module = game.load()
    bundle = bundle or module.make_bundle(**game.kwargs)
    table = module.bot_table(**bot_kwargs(game.kwargs))
    if head.startswith("population:"):
        pop = head.split(":", 1)[1]
        pops = table.populations
        if pop not in pops:
            raise KeyError(f"{game.name} has no population {pop!r}; choose from {sorted(pops)}")
        if kwargs:
            raise ValueError(f"population {pop!r} takes no arguments, got {kwargs}")
        return PopulationAgent(pop, list(pops[pop]), lambda m: make_agent(m, game, bundle))
    if head == "switch":
        from tom_envs.partners.switching import make_switching

        return make_switching(kwargs, lambda m: make_agent(m, game, bundle, trusted=trusted))
    if head.startswith("br/"):  # a cached trained best response (tom_envs.best_responses)
        from tom_envs.best_responses import BestResponseAgent, others_from_options

        others = others_from_options(head, kwargs)  # seatK=SPEC: the seats it was trained with
        return BestResponseAgent(head.removeprefix("br/"), make_agent, others=others or None)
    if head.startswith("zoo/"):
        if kwargs:
            raise ValueError(f"zoo member {head!r} takes no arguments, got {kwargs}")
        from tom_envs.zoo import make_member

        return make_member(head, game, bundle, make_agent)
    if head in table:  # a game's own bot wins over a generic name
        if kwargs:
            raise ValueError(f"bot {head!r} takes no arguments, got {kwargs}")
        return table.make(head, bundle)
    if head in generic_agent_names():
        return _build(head, spec, kwargs, trusted)
    if (trusted and ":" in head
            and all(part.isidentifier() for part in head.replace(":", ".").split("."))):  # fmt: skip
        return _build(head, spec, kwargs, trusted)
    raise KeyError(
        f"unknown agent {spec[:120]!r} for {game.name}; generic: {generic_agent_names()}; bots: "
        f"{table.names()}; populations: "
        f"{sorted('population:' + p for p in table.populations)}"
    )


def bot_kwargs(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The game arguments a bot table takes: all but ``skin``, which changes only the text
    (:mod:`tom_envs.core.skin`: bots act on views and indices, untouched by a disguise)."""
    return {k: v for k, v in kwargs.items() if k != "skin"}


def agent_names(game: GameSpec) -> dict[str, str]:
    """Every agent name usable in ``game`` with a one-line description."""
    table = game.load().bot_table(**bot_kwargs(game.kwargs))
    out = {}
    for name in generic_agent_names():
        try:
            out[name] = describe(_generic_class(name))
        except plugins.PluginError as exc:  # listed, with why it cannot be used here
            out[name] = f"unavailable: {exc}"
    for bot in table.bots:
        out[bot.name] = bot.description
    for pop, members in table.populations.items():
        out[f"population:{pop}"] = "one of " + ", ".join(members) + " per episode"
    return out


__all__ = [
    "BUILTIN_AGENTS",
    "NotAllowed",
    "PopulationAgent",
    "RandomAgent",
    "agent_names",
    "check_options",
    "describe",
    "generic_agent_names",
    "make_agent",
    "parse_spec",
]
