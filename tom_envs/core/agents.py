"""The agent interface shared by bots, planners, tabular learners, trained policies and LLMs.

An agent is told about the episode once (:meth:`Agent.reset` with an :class:`EpisodeInfo`), then
asked for one decision per turn (:meth:`Agent.act` with a :class:`Turn`). A turn carries the
structured player view (for bots), the vector and mask (for RL policies) and the text layer (for
LLMs and people), all of the same view. An agent answers with an action, or with an
:class:`AgentAction` that also carries probe answers (e.g. its prediction of the partner's next
action), raw model text and token counts, which the runner records in the trajectory.

Two optional methods serve literal-ToM scoring (:mod:`tom_envs.partners.prediction`): a partner
whose policy is known exposes ``action_probs(turn) -> {action: probability}`` (asked before it
acts, only when prediction is on; :class:`RandomAgent` and the matrix partners do), and an agent
that answers "what will <partner> do next?" implements ``predict_partner(turn, question)``.

An agent whose protocol needs certain game arguments (paper 001's LLM agent plays Guandan in
Chinese, ``language="zh"``) says so with a ``required_env_kwargs(game)`` method; every command
that plays episodes (``run``, ``eval``, ``reproduce``) applies them through
:func:`with_required_env_kwargs`, and refuses, before anything is played, a run whose own game
arguments say otherwise.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, Self, runtime_checkable

import numpy as np

from tom_envs.core.game import ParseResult, TextObservation, agent_index


@dataclass(frozen=True)
class EpisodeInfo:
    """What an agent is told when an episode starts."""

    env_id: str
    agent: str
    player: int
    num_players: int
    num_actions: int
    seed: int | None
    reward_range: tuple[float, float]
    max_steps: int | None
    tags: Any = None
    env_kwargs: Mapping[str, Any] | None = None
    """every game argument with its default resolved (:func:`tom_envs.identity.resolved_env_kwargs`)"""
    observation_shape: tuple[int, ...] | None = None
    """the shape of ``Turn.observation`` in this episode (checkpoints check it at reset)"""
    game_config: Any = None
    """the game's configuration object (its public rules: layout, payoffs, names), when known"""
    session: SessionInfo | None = None
    """set when this episode is one of a session of consecutive episodes played with the same
    agents (:func:`tom_envs.sessions.play_session`): agents that learn across episodes
    may keep their memory"""


@dataclass(frozen=True)
class SessionInfo:
    """Which session an episode belongs to: ``id``, its ``index`` (0-based) of ``length``
    episodes, and the session ``seed`` (its first episode's seed)."""

    id: str
    index: int
    length: int
    seed: int | None


#: Why a decision fell back (the failure taxonomy of every episode driver):
#:
#: * ``exception``: the agent raised (a bug, a shape mismatch, ...);
#: * ``endpoint``: a model endpoint failed after its retries (refused, timed out, 5xx, breaker);
#: * ``context_overflow``: the prompt did not fit the model's context;
#: * ``unparseable``: the agent's reply named no legal action;
#: * ``illegal``: the agent answered with an action that is not legal now (or none);
#: * ``invalid``: the agent reported its own output invalid without naming a kind;
#: * ``rate_limited``: a model endpoint kept answering 429, or asked to wait longer than allowed;
#: * ``oversized``: a model's reply was larger than the client's cap (never read in full).
FAILURE_KINDS = (
    "exception",
    "endpoint",
    "context_overflow",
    "unparseable",
    "illegal",
    "invalid",
    "rate_limited",
    "oversized",
)


class AgentFailure(Exception):
    """Raised by an agent that cannot decide; ``kind`` is one of :data:`FAILURE_KINDS`."""

    def __init__(self, kind: str, message: str) -> None:
        if kind not in FAILURE_KINDS:
            raise ValueError(f"failure kind must be one of {FAILURE_KINDS}, got {kind!r}")
        super().__init__(message)
        self.kind = kind
        self.message = message


@dataclass
class Turn:
    """One decision: the same player view in every form an agent might want.

    Attributes:
        agent: ``"player_k"``.
        player: ``k``.
        view: the structured player view (a frozen dataclass of the game's ``view.py``).
        observation: the vector observation.
        action_mask: int8 mask of legal actions.
        reward: reward received since this agent's previous decision.
        decision: how many decisions this agent has made in the episode before this one.
    """

    agent: str
    player: int
    view: Any
    observation: np.ndarray
    action_mask: np.ndarray
    reward: float
    decision: int
    _text: Callable[[], TextObservation] | None = field(default=None, repr=False)
    _parse: Callable[[str], ParseResult] | None = field(default=None, repr=False)

    @property
    def legal_actions(self) -> tuple[int, ...]:
        """Legal actions, from the view."""
        return tuple(self.view.legal_actions)

    def text(self) -> TextObservation:
        """Rules prompt, observation text and legal actions as text (computed on request)."""
        if self._text is None:
            raise RuntimeError("this turn has no text layer attached")
        return self._text()

    def parse(self, text: str) -> ParseResult:
        """Parse free text into a legal action, with feedback; never raises."""
        if self._parse is None:
            raise RuntimeError("this turn has no text layer attached")
        return self._parse(text)


# ------------------------------------------------------------------------- the Turn factory
def make_turn(
    agent: str,
    view: Any,
    observation: np.ndarray,
    action_mask: np.ndarray,
    text: Callable[[], TextObservation],
    parse: Callable[[str], ParseResult],
    *,
    reward: float = 0.0,
    decision: int = 0,
) -> Turn:
    """THE way to build a :class:`Turn`: every form of one view, the text layer always attached.

    Every caller that hands a turn to an agent builds it here (the episode driver, the RL
    collectors, the QA generators, wrapper agents that re-present a turn), through
    :func:`env_turn` or :func:`state_turn` when it has an env or a rules state, so an agent
    the runner can play (a text-reading LLM agent included) can play wherever a turn comes from.

    Args:
        agent: ``"player_k"``.
        view: the structured player view.
        observation: the vector observation of ``view``.
        action_mask: the legal-action mask.
        text: returns the view's :class:`TextObservation` (called on request only).
        parse: free text -> :class:`ParseResult` for this view (never raises).
        reward: the reward received since this agent's previous decision.
        decision: how many decisions this agent has made in the episode before this one.
    """
    return Turn(agent, agent_index(agent), view, observation, action_mask, float(reward),
                int(decision), text, parse)  # fmt: skip


def env_turn(env: Any, agent: str, *, reward: float = 0.0, decision: int = 0) -> Turn:
    """The turn of ``agent`` in the AEC env ``env`` now (a :class:`tom_envs.core.aec.TomAECEnv`):
    its view, ``observe(agent)``'s vector and mask, the text layer of the env's bundle on that
    view. What the episode driver hands a seated agent; the RL collectors hand their partners
    the same."""
    seen = env.observe(agent)
    view = env.view(agent)
    text = env.bundle.text
    return make_turn(
        agent, view, seen["observation"], seen["action_mask"],
        lambda: text.text_observation(view), lambda reply: text.parse_action(view, reply),
        reward=reward, decision=decision,
    )  # fmt: skip


def state_turn(
    bundle: Any, state: Any, player: int, *, reward: float = 0.0, decision: int = 0
) -> Turn:
    """The turn of seat ``player`` in the rules state ``state`` of the configured game
    ``bundle`` (a :class:`~tom_envs.core.game.GameBundle`), with no env: the rules' view, the
    encoder's vector, the rules' legal mask and the bundle's text layer (QA scenarios, planners)."""
    game, text = bundle.game, bundle.text
    view = game.observe(state, player)
    return make_turn(
        f"player_{player}", view, bundle.encoder.encode(view), game.legal_mask(state, player),
        lambda: text.text_observation(view), lambda reply: text.parse_action(view, reply),
        reward=reward, decision=decision,
    )  # fmt: skip


@dataclass
class AgentAction:
    """An action plus what the runner should record beside it.

    Attributes:
        action: the chosen action (``None`` only for an agent that failed; the runner then plays a
            counted fallback).
        prediction: probe answers, e.g. ``{"partner_action": 2}``.
        valid: False when the agent's own output was invalid and ``action`` is a fallback.
        message: chat text to broadcast with the action (games with communication).
        info: anything else worth keeping (raw LLM text, tokens, re-prompts, ...). LLM calls go
            in ``info["llm_calls"]`` as ``[{"messages": [...], "reply", "usage", "latency_s",
            "cache_hit", "decoding"}]``; the trajectory writer stores each message once per file.
        failure: with ``valid=False``, why (one of :data:`FAILURE_KINDS`; ``info["failure"]``
            with a ``kind`` works too).
    """

    action: int | None
    prediction: dict[str, Any] | None = None
    valid: bool = True
    message: str | None = None
    info: dict[str, Any] = field(default_factory=dict)
    failure: str | None = None


@runtime_checkable
class Agent(Protocol):
    """What every agent implements."""

    name: str

    def reset(self, info: EpisodeInfo) -> None:
        """Start of an episode."""

    def act(self, turn: Turn) -> int | AgentAction:
        """Choose an action for this turn."""
        ...


def jsonable(value: Any, depth: int = 0) -> Any:
    """A JSON-ready copy of a setting: numbers, strings, lists, dicts and dataclasses as dicts.

    Anything else (a game bundle, a network, a client) becomes ``"<TypeName>"``: it names what was
    passed without pretending to describe it (an agent whose such argument changes its results
    overrides ``config()``).
    """
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if depth > 6:
        return f"<{type(value).__name__}>"
    if isinstance(value, (list, tuple)):
        return [jsonable(v, depth + 1) for v in value]
    if isinstance(value, Mapping):
        return {str(k): jsonable(v, depth + 1) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: jsonable(getattr(value, f.name), depth + 1) for f in dataclasses.fields(value)
        }
    return f"<{type(value).__name__}>"


def _settings_arg(value: Any) -> Any:
    """A constructor argument as a setting: plain values as they are, objects by type name."""
    if value is None or isinstance(value, (bool, int, float, str, np.generic)):
        return jsonable(value)
    if isinstance(value, (list, tuple)):
        return [_settings_arg(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _settings_arg(v) for k, v in value.items()}
    return f"<{type(value).__name__}>"


def agent_config(agent: Any) -> dict[str, Any]:
    """An agent's identity for result keys: its spec, class and resolved settings.

    ``{"spec": ..., "class": "module.Class", "settings": {...}}``; the settings are the agent's
    ``config()`` (or ``describe()``) when it has one, else the constructor arguments a
    :class:`BaseAgent` remembers, else ``{}``.
    """
    cls = type(agent)
    out: dict[str, Any] = {
        "spec": str(getattr(agent, "spec", None) or getattr(agent, "name", cls.__name__)),
        "class": f"{cls.__module__}.{cls.__qualname__}",
    }
    settings: Any = getattr(agent, "_init_args", {})
    inner = getattr(agent, "inner", None)  # a wrapper (a checkpoint loader) describes its policy
    for obj in (agent, inner) if inner is not None else (agent,):
        fn = next(
            (
                f
                for f in (getattr(obj, m, None) for m in ("config", "describe"))
                if callable(f) and not isinstance(f, type)  # an attribute `config` is no method
            ),
            None,
        )
        if fn is not None:
            settings = fn()
            break
    out["settings"] = jsonable(settings if isinstance(settings, Mapping) else {"value": settings})
    return out


class EnvKwargsConflict(ValueError):
    """An agent requires a game argument the run sets otherwise (or two agents disagree)."""


def required_env_kwargs(agents: Sequence[Any], game: str) -> dict[str, Any]:
    """The game arguments the agents require on ``game`` (each agent's
    ``required_env_kwargs(game)``, if it has one), merged; agents that disagree raise
    :class:`EnvKwargsConflict`."""
    out: dict[str, Any] = {}
    owner: dict[str, str] = {}
    for agent in agents:
        hook: Any = getattr(agent, "required_env_kwargs", None)
        if not callable(hook):
            continue
        name = str(getattr(agent, "spec", None) or getattr(agent, "name", type(agent).__name__))
        required: Any = hook(game) or {}  # a mapping (checked by dict())
        for key, value in dict(required).items():
            if key in out and out[key] != value:
                raise EnvKwargsConflict(
                    f"{name} requires the game argument {key}={value!r} but {owner[key]} requires "
                    f"{key}={out[key]!r}: these agents cannot play one game"
                )
            out[key], owner[key] = value, name
    return out


def with_required_env_kwargs(
    spec: Any, agents: Sequence[Any], env_kwargs: Mapping[str, Any] | None
) -> dict[str, Any]:
    """``env_kwargs`` with the game arguments the agents require added (see the module
    docstring). ``spec`` is the game's registration (its ``name`` and registered ``kwargs``).

    An argument the run gives (or the game id registers) with another value raises
    :class:`EnvKwargsConflict`, naming the agent, the argument and both values: a result is
    never played under a protocol other than the one its agent describes."""
    given = dict(env_kwargs or {})
    required = required_env_kwargs(agents, str(spec.name))
    if not required:
        return given
    registered = dict(getattr(spec, "kwargs", {}) or {})
    for key, value in required.items():
        for source, where in ((given, "the run sets"), (registered, f"the id {spec.name} sets")):
            if key in source and source[key] != value and str(source[key]) != str(value):
                who = next(
                    str(getattr(a, "spec", None) or getattr(a, "name", type(a).__name__))
                    for a in agents
                    if key in dict(getattr(a, "required_env_kwargs", lambda g: {})(spec.name))
                )
                raise EnvKwargsConflict(
                    f"{who} requires the game argument {key}={value!r} (its protocol), but "
                    f"{where} {key}={source[key]!r}. Drop that argument (the agent's is applied "
                    "for you), or configure the agent to play the run's own arguments (an LLM "
                    "agent: game_args=none, recorded as a departure from its preset)"
                )
        given[key] = value
    return given


class BaseAgent:
    """Convenience base: stores the episode info and a seeded generator; override :meth:`act`.

    It remembers the arguments its constructor was called with (defaults filled in), which
    :meth:`config` reports.
    """

    name = "agent"

    _init_args: dict[str, Any]

    def __new__(cls, *args: Any, **kwargs: Any) -> Self:
        """Create the agent and remember its constructor arguments (for :meth:`config`)."""
        obj = super().__new__(cls)
        try:
            bound = inspect.signature(cls.__init__).bind(obj, *args, **kwargs)
            bound.apply_defaults()
            items = list(bound.arguments.items())[1:]  # without self
            params = inspect.signature(cls.__init__).parameters
            init_args: dict[str, Any] = {}
            for k, v in items:
                kind = params[k].kind
                if kind is inspect.Parameter.VAR_KEYWORD:
                    init_args.update({str(a): _settings_arg(b) for a, b in v.items()})
                elif kind is inspect.Parameter.VAR_POSITIONAL:
                    init_args[k] = _settings_arg(list(v))
                else:
                    init_args[k] = _settings_arg(v)
        except (TypeError, ValueError):  # a signature we cannot read: no settings recorded
            init_args = {}
        obj._init_args = init_args
        return obj

    def config(self) -> dict[str, Any]:
        """The agent's settings: its constructor arguments, defaults resolved (JSON-ready)."""
        return dict(getattr(self, "_init_args", {}))

    def __init__(self) -> None:
        self.info: EpisodeInfo | None = None
        self.rng = np.random.default_rng(0)

    def reset(self, info: EpisodeInfo) -> None:
        """Remember the episode and seed ``self.rng`` from it (same seed, same choices)."""
        self.info = info
        self.rng = np.random.default_rng(None if info.seed is None else [info.seed, info.player])

    def act(self, turn: Turn) -> int | AgentAction:  # pragma: no cover - abstract
        """Choose an action."""
        raise NotImplementedError

    def end_episode(self, turn: Turn) -> None:
        """Called once when the episode ends (final reward in ``turn.reward``)."""


class RandomAgent(BaseAgent):
    """Uniformly random legal actions (every game)."""

    name = "random"

    def act(self, turn: Turn) -> int:
        """A uniformly random legal action."""
        legal = turn.legal_actions
        return int(legal[self.rng.integers(len(legal))])

    def action_probs(self, turn: Turn) -> dict[int, float]:
        """Its policy, known: uniform over the legal actions (for next-action scoring)."""
        legal = turn.legal_actions
        return {int(a): 1.0 / len(legal) for a in legal}


def as_agent_action(choice: int | AgentAction | np.integer) -> AgentAction:
    """Normalise an agent's answer."""
    if isinstance(choice, AgentAction):
        return choice
    return AgentAction(action=int(choice))
