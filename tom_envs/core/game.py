"""The contract every game implements: a pure rules engine, one player view, two renderings.

Nothing here imports gymnasium or pettingzoo. A game is four small objects:

* :class:`Game` — the rules. ``initial_state(rng)``, ``current_players(state)``,
  ``legal_actions(state, player)``, ``step(state, actions, rng)``, ``is_terminal(state)``.
  States are immutable values (frozen dataclasses), so planners, tabular learners and replays can
  keep, hash and branch from them.
* ``observe(state, player) -> view`` — the **only** place that decides what a player may see.
  A view is a frozen dataclass; it carries the player's legal actions.
* :class:`Encoder` — the view as a vector for RL (plus the global state vector for centralised
  critics). No game logic.
* :class:`TextInterface` — the view as natural language for LLMs and people, the rules prompt, the
  legal actions as text and a parser from free text to an action. No game logic.

Both renderings are computed from the same view, so an RL agent and an LLM agent get the same
information and hidden state cannot leak through one channel only.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

import numpy as np

StateT = TypeVar("StateT")
ViewT = TypeVar("ViewT")

SEQUENTIAL = "sequential"
SIMULTANEOUS = "simultaneous"


def state_replacer(cls: type[StateT]) -> Callable[..., StateT]:
    """A fast ``dataclasses.replace`` for the frozen state dataclass ``cls`` (hot rules loops).

    It copies the fields and applies the changes without ``replace``'s per-call introspection:
    same fields, values, equality and hash. Only for dataclasses without ``__post_init__`` or
    derived attributes (refused otherwise).
    """
    if hasattr(cls, "__post_init__") or "__dict__" not in cls.__dict__:
        raise TypeError(f"state_replacer needs a dataclass without __post_init__ or slots: {cls}")
    names = tuple(f.name for f in fields(cls))  # type: ignore[arg-type]
    n_fields = len(names)
    set_dict = cls.__dict__["__dict__"].__set__
    new_object = object.__new__

    def replace(state: StateT, **changes: object) -> StateT:
        d = state.__dict__
        # every field is in __dict__: the same size means nothing else is (a cached value)
        values = d.copy() if len(d) == n_fields else {name: d[name] for name in names}
        values.update(changes)
        new = new_object(cls)
        set_dict(new, values)
        return new

    return replace


@dataclass(frozen=True)
class GameTags:
    """Machine-readable facts about a game (after OpenSpiel's ``GameType``).

    Attributes:
        dynamics: ``"sequential"`` (one player acts at a time) or ``"simultaneous"``.
        chance: ``"deterministic"`` or ``"stochastic"`` (dealing, random maps, random partners).
        information: ``"perfect"`` or ``"imperfect"``.
        utility: ``"zero_sum"``, ``"general_sum"`` or ``"identical"`` (fully cooperative).
        communication: whether players can send free-text messages.
    """

    dynamics: str
    chance: str
    information: str
    utility: str
    communication: bool = False

    def __post_init__(self) -> None:
        if self.dynamics not in (SEQUENTIAL, SIMULTANEOUS):
            raise ValueError(f"dynamics must be {SEQUENTIAL!r} or {SIMULTANEOUS!r}")


class StepResult(NamedTuple, Generic[StateT]):
    """What :meth:`Game.step` returns: the next state, each player's reward and named events.

    An immutable named tuple (the rules build one per move; a tuple is built several times
    faster than a frozen dataclass).
    """

    state: StateT
    rewards: tuple[float, ...]
    events: tuple[str, ...] = ()


class IllegalActionError(ValueError):
    """An action that is out of range or illegal in the current state. The state is unchanged."""


class ResetNeeded(RuntimeError):
    """An env used before its first ``reset()`` (or stepped after its episode ended)."""


class UnknownAgentError(KeyError, ValueError):
    """An agent name the env does not have (a ``KeyError`` for mappings, a ``ValueError`` for
    arguments; its message lists the agents)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown agent"


def unknown_agent(agent: object, agents: Sequence[str]) -> UnknownAgentError:
    """The error for ``agent`` not being one of ``agents``."""
    shown = repr(agent) if len(repr(agent)) <= 60 else repr(agent)[:57] + "..."
    return UnknownAgentError(f"unknown agent {shown}; the agents are {', '.join(agents)}")


class Game(abc.ABC, Generic[StateT, ViewT]):
    """A pure rules engine. Subclasses hold a frozen config and implement the abstract methods."""

    #: Short machine name, e.g. ``"matrix"``.
    name: str = "game"

    @property
    @abc.abstractmethod
    def num_players(self) -> int:
        """Number of seats."""

    @property
    @abc.abstractmethod
    def num_actions(self) -> int:
        """Size of the discrete action space (the same for every seat)."""

    @property
    @abc.abstractmethod
    def tags(self) -> GameTags:
        """Game-theoretic tags."""

    @property
    def reward_range(self) -> tuple[float, float]:
        """Bounds on one step's reward for one player (used by optimistic learners)."""
        return (-float("inf"), float("inf"))

    @property
    def max_steps(self) -> int | None:
        """Upper bound on the number of joint steps in an episode, if the rules impose one."""
        return None

    @abc.abstractmethod
    def initial_state(self, rng: np.random.Generator) -> StateT:
        """A start state; every chance outcome is drawn from ``rng``."""

    @abc.abstractmethod
    def current_players(self, state: StateT) -> tuple[int, ...]:
        """Seats that must act now: one for sequential games, all live seats for simultaneous."""

    @abc.abstractmethod
    def legal_actions(self, state: StateT, player: int) -> tuple[int, ...]:
        """Legal actions of ``player`` in ``state`` (empty when it is not that player's turn)."""

    @abc.abstractmethod
    def apply(
        self,
        state: StateT,
        actions: Mapping[int, int],
        rng: np.random.Generator,
        messages: Mapping[int, str] | None = None,
    ) -> StepResult[StateT]:
        """Apply already-validated actions (one per current player). Pure: never mutates ``state``.

        ``messages`` (games with ``tags.communication`` only) maps a player who acts now to the free
        text it broadcasts with its action; the game decides who sees it and when.
        """

    @abc.abstractmethod
    def is_terminal(self, state: StateT) -> bool:
        """True once the episode is over."""

    @abc.abstractmethod
    def observe(self, state: StateT, player: int) -> ViewT:
        """The player's view: everything, and only, what ``player`` may see."""

    #: Longest chat message accepted (characters); longer text is an error, not silently cut.
    max_message_length: int = 2000

    def step(
        self,
        state: StateT,
        actions: Mapping[int, int],
        rng: np.random.Generator,
        messages: Mapping[int, str] | None = None,
    ) -> StepResult[StateT]:
        """Validate ``actions`` (and ``messages``) and apply them.

        Raises:
            IllegalActionError: a seat that must act has no action, a seat that must not act has
                one, an action is out of range or illegal, or a message is malformed, too long,
                from a seat that does not act now, or sent in a game without communication.
                ``state`` is left as it was.
        """
        if self.is_terminal(state):
            raise IllegalActionError("the episode is over: no action can be applied")
        expected = set(self.current_players(state))
        given = set(actions)
        if given != expected:
            raise IllegalActionError(
                f"players {sorted(expected)} must act now, got actions for {sorted(given)}"
            )
        for player, action in actions.items():
            check_action(self, state, player, action)
        if messages:
            check_messages(self, expected, messages)
        return self.apply(state, {p: int(a) for p, a in actions.items()}, rng, messages or None)

    def legal_mask(self, state: StateT, player: int) -> np.ndarray:
        """The legal actions as an int8 mask of length :attr:`num_actions`."""
        mask = np.zeros(self.num_actions, dtype=np.int8)
        legal = self.legal_actions(state, player)
        if legal:
            mask[list(legal)] = 1
        return mask


def check_action(game: Game[Any, Any], state: Any, player: int, action: Any) -> None:
    """Raise :class:`IllegalActionError` with a clear message unless ``action`` is legal."""
    if type(action) is int and action in game.legal_actions(state, player):
        return  # the common case, decided in one membership test
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        raise IllegalActionError(
            f"player {player}: action must be an integer, got {type(action).__name__} {action!r}"
        )
    if not 0 <= int(action) < game.num_actions:
        raise IllegalActionError(
            f"player {player}: action {int(action)} is out of range [0, {game.num_actions})"
        )
    legal = game.legal_actions(state, player)
    if int(action) not in legal:
        raise IllegalActionError(
            f"player {player}: action {int(action)} is illegal now; legal actions: {list(legal)}"
        )


def check_messages(game: Game[Any, Any], acting: set[int], messages: Mapping[int, str]) -> None:
    """Raise :class:`IllegalActionError` unless every message is well formed and allowed."""
    if not game.tags.communication:
        raise IllegalActionError(f"{game.name} has no communication channel: messages not allowed")
    for player, text in messages.items():
        if player not in acting:
            raise IllegalActionError(f"player {player} does not act now and cannot send a message")
        if not isinstance(text, str):
            raise IllegalActionError(
                f"player {player}: a message must be text, got {type(text).__name__}"
            )
        if len(text) > game.max_message_length:
            raise IllegalActionError(
                f"player {player}: message of {len(text)} characters exceeds the limit of "
                f"{game.max_message_length}"
            )


def piece_offsets(pieces: Sequence[tuple[str, int]]) -> tuple[dict[str, int], int]:
    """An observation laid out as named pieces in order: each piece's offset, and the total
    size."""
    offsets: dict[str, int] = {}
    at = 0
    for name, size in pieces:
        offsets[name] = at
        at += size
    return offsets, at


class Encoder(abc.ABC, Generic[ViewT, StateT]):
    """Vector renderings: a player's view for its policy, the whole state for a centralised critic."""

    #: length of :meth:`encode`'s vector (each encoder sets it)
    obs_size: int
    #: length of :meth:`encode_state`'s vector (each encoder sets it)
    state_size: int

    @property
    def observation_shape(self) -> tuple[int, ...]:
        """Shape of :meth:`encode`'s output: ``(obs_size,)``."""
        return (self.obs_size,)

    @property
    def state_shape(self) -> tuple[int, ...]:
        """Shape of :meth:`encode_state`'s output: ``(state_size,)``."""
        return (self.state_size,)

    @property
    def low(self) -> float:
        """Lower bound of every entry (for the Box space)."""
        return 0.0

    @property
    def high(self) -> float:
        """Upper bound of every entry (for the Box space)."""
        return 1.0

    @abc.abstractmethod
    def encode(self, view: ViewT) -> np.ndarray:
        """The view as a float32 vector (egocentric: "my" features first)."""

    @abc.abstractmethod
    def encode_state(self, state: StateT) -> np.ndarray:
        """The global state as a float32 vector (for ``env.state()``)."""


@dataclass(frozen=True)
class ParseResult:
    """What a text parser returns: an action, or ``None`` with feedback to show the agent.

    Attributes:
        action: the parsed legal action, or ``None`` when the text was not understood or illegal.
        feedback: a sentence for the agent: what was understood, or what went wrong and what is
            expected instead.
        message: free text to broadcast to teammates (games with chat), if any.
    """

    action: int | None
    feedback: str = ""
    message: str | None = None

    @property
    def valid(self) -> bool:
        """True when an action was parsed."""
        return self.action is not None


@dataclass(frozen=True)
class TextObservation:
    """Everything an LLM loop needs for one decision, computed from one player view.

    ``answer_format`` is the game's own answer-format instruction, verbatim as it appears in
    ``rules`` or ``observation`` (``""`` when the game states none): an agent that states its own
    format removes it, so a prompt states one format (see ``tom_llm_agents``).
    """

    rules: str
    observation: str
    legal_actions: Mapping[int, str] = field(default_factory=dict)
    answer_format: str = ""

    def prompt(self) -> str:
        """Rules, observation and the numbered legal actions as one prompt."""
        actions = "\n".join(f"- {text}" for text in self.legal_actions.values())
        return f"{self.rules}\n\n{self.observation}\n\nLegal actions:\n{actions}"


class TextInterface(abc.ABC, Generic[ViewT]):
    """Natural-language rendering of a view, and the parser back from text to an action."""

    @abc.abstractmethod
    def rules_prompt(self, view: ViewT) -> str:
        """The game's rules, written for the player who owns ``view``."""

    @abc.abstractmethod
    def observation_text(self, view: ViewT) -> str:
        """What the player sees now, as text."""

    @abc.abstractmethod
    def action_text(self, view: ViewT, action: int) -> str:
        """One action as the text an agent would write to choose it."""

    def legal_actions_text(self, view: ViewT) -> dict[int, str]:
        """Legal actions (read from the view) mapped to their text."""
        return {a: self.action_text(view, a) for a in legal_actions_of(view)}

    def answer_format(self, view: ViewT) -> str:
        """The game's answer-format instruction, verbatim as in the rules or the observation
        (default: none). Games whose prompts state a format return that text here."""
        return ""

    def text_observation(self, view: ViewT) -> TextObservation:
        """Rules, observation, legal actions and the answer format together."""
        return TextObservation(
            self.rules_prompt(view),
            self.observation_text(view),
            self.legal_actions_text(view),
            self.answer_format(view),
        )

    def parse_action(self, view: ViewT, text: str) -> ParseResult:
        """Free text to a legal action, with feedback. Never raises on any string.

        The default accepts the exact action text, a unique action text inside a longer answer,
        or the action's position in the legal list (``"2"``). Games override for richer syntax.
        """
        from tom_envs.core.text import match_action

        return match_action(text, self.legal_actions_text(view))


class SeatView(Protocol):
    """A view that names the seat it belongs to."""

    @property
    def player(self) -> int: ...


SeatViewT = TypeVar("SeatViewT", bound=SeatView)


class SeatRulesText(TextInterface[SeatViewT]):
    """A text interface whose rules prompt depends on the seat alone: :meth:`_rules_text` writes
    it from the seat's first view, and it is kept per seat in ``_rules`` (which the subclass
    creates empty, and clears when its words change, e.g. under a skin)."""

    _rules: dict[int, str]

    def rules_prompt(self, view: SeatViewT) -> str:
        """The seat's rules prompt (:meth:`_rules_text`), written once per seat."""
        cached = self._rules.get(view.player)
        if cached is None:
            cached = self._rules[view.player] = self._rules_text(view)
        return cached

    @abc.abstractmethod
    def _rules_text(self, view: SeatViewT) -> str:
        """The rules prompt of ``view``'s seat (the same for every view of that seat)."""

def legal_actions_of(view: Any) -> tuple[int, ...]:
    """The legal actions stored in a view (every view has a ``legal_actions`` field)."""
    return tuple(view.legal_actions)


@dataclass(frozen=True)
class GameBundle:
    """A configured game with its two renderings: what the adapters and agents are given.

    ``probes``, for games that offer Theory-of-Mind probes, maps ``(state, player)`` to the
    :class:`~tom_envs.core.probes.Probe` questions to put to that player now, with the truths of
    this moment; its ``moment`` attribute (``"decision"`` or ``"action"``) says when the driver
    asks (:func:`~tom_envs.core.probes.probe_moment`).
    """

    game: Game[Any, Any]
    encoder: Encoder[Any, Any]
    text: TextInterface[Any]
    probes: Callable[[Any, int], list[Any]] | None = None

    @property
    def agents(self) -> list[str]:
        """Agent names, ``player_0 … player_{n-1}``."""
        return agent_names(self.game.num_players)


def agent_names(n: int) -> list[str]:
    """``["player_0", …, "player_{n-1}"]``: the suite's naming in every game."""
    return [f"player_{i}" for i in range(n)]


def agent_index(agent: str) -> int:
    """``"player_3" -> 3``."""
    if not isinstance(agent, str):
        raise ValueError(f"agent names look like 'player_0', got {type(agent).__name__} {agent!r}")
    prefix, _, number = agent.rpartition("_")
    if prefix != "player" or not number.isdigit():
        raise ValueError(f"agent names look like 'player_0', got {agent!r}")
    return int(number)


def ordered(players: Sequence[int]) -> tuple[int, ...]:
    """Players sorted by seat."""
    return tuple(sorted(players))


def converted_history(
    cache: dict[int, tuple[tuple, tuple]],
    player: int,
    history: tuple,
    convert: Callable[[tuple, int], tuple],
) -> tuple:
    """``convert(history, player)``, converting only the new records when it can.

    Histories are immutable and grow by appending, so when the history this ``cache`` last saw
    for ``player`` is a prefix of ``history`` (the same record object at its last index), only the
    records after it are converted and appended. ``convert(records, player)`` must convert record
    by record (its result on a concatenation is the concatenation of its results)."""
    prev = cache.get(player)
    if prev is not None:
        src, out = prev
        if src is history:
            return out
        n = len(src)
        if len(history) >= n and (n == 0 or history[n - 1] is src[-1]):
            out = out + convert(history[n:], player)
            cache[player] = (history, out)
            return out
    out = convert(history, player)
    cache[player] = (history, out)
    return out
