"""The one PettingZoo AEC adapter every game uses: it translates, it decides nothing.

Sequential games: ``agent_selection`` is the seat the rules say must act. Simultaneous games: the
seats that must act are asked one after another; their actions are held until the last one arrives,
then the joint action is applied (as in PettingZoo's ``rps``). A held action is never visible to the
seats asked after it: observations are computed from the rules state, which only changes when the
joint action is applied.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from numpy.random import PCG64 as _PCG64
from numpy.random import Generator as _Generator
from pettingzoo import AECEnv

from tom_envs.core.game import (
    SIMULTANEOUS,
    GameBundle,
    IllegalActionError,
    ParseResult,
    ResetNeeded,
    TextObservation,
    agent_index,
    check_action,
    check_messages,
    unknown_agent,
)
from tom_envs.core.render import check_render_mode, render


class LegalDiscrete(spaces.Discrete):
    """``Discrete`` whose unmasked :meth:`sample` draws an action that is legal now.

    PettingZoo's own checkers (``state_test``, ``parallel_seed_test``) and its canonical Parallel
    loop call ``env.action_space(agent).sample()`` without a mask; in a game with illegal actions
    that would raise. Without a mask, this space asks its env for the agent's current legal-action
    mask; when every action is legal, or none is (not this agent's turn, or the episode is over),
    it samples exactly like ``Discrete``. ``sample(mask)`` is Gymnasium's. Pickled or copied, it
    forgets its env and becomes a plain ``Discrete``.
    """

    def __init__(self, n: int, legal_mask: Callable[[], np.ndarray | None] | None = None) -> None:
        super().__init__(n)
        self._legal_mask = legal_mask

    def sample(self, mask: Any = None, probability: Any = None) -> Any:
        """A legal action now (see the class docstring), or Gymnasium's sample with a mask."""
        if mask is None and probability is None and self._legal_mask is not None:
            legal = self._legal_mask()
            if legal is not None and 0 < int(legal.sum()) < self.n:
                return super().sample(mask=legal.astype(np.int8))
        return super().sample(mask=mask, probability=probability)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_legal_mask"] = None
        return state


def _mask_of(env: Any, agent: str) -> Callable[[], np.ndarray | None]:
    """A callable giving ``env.sample_mask(agent)`` without keeping ``env`` alive."""
    ref = weakref.ref(env)

    def legal() -> np.ndarray | None:
        owner = ref()
        return None if owner is None else owner.sample_mask(agent)

    return legal


def make_spaces(
    bundle: GameBundle, env: Any = None
) -> tuple[dict[str, spaces.Space], dict[str, spaces.Space]]:
    """Observation and action spaces, one object per agent (PettingZoo's seeding needs identity).

    With ``env`` (which must offer ``sample_mask(agent)``), the action spaces are
    :class:`LegalDiscrete`: their unmasked ``sample()`` gives a legal action.
    """
    enc, game = bundle.encoder, bundle.game
    obs, act = {}, {}
    for agent in bundle.agents:
        obs[agent] = spaces.Dict(
            {
                "observation": spaces.Box(
                    low=enc.low, high=enc.high, shape=enc.observation_shape, dtype=np.float32
                ),
                "action_mask": spaces.Box(0, 1, shape=(game.num_actions,), dtype=np.int8),
            }
        )
        legal = None if env is None else _mask_of(env, agent)
        act[agent] = LegalDiscrete(game.num_actions, legal)
    return obs, act


class SeatSpaces:
    """What both env APIs (the AEC and the Parallel env) share: the constructor's arguments,
    checked and kept (:meth:`_configure`), and the per-seat spaces, made once by
    :func:`make_spaces` and looked up by agent name (an unknown name lists the agents)."""

    _obs_spaces: dict[str, spaces.Space]
    _act_spaces: dict[str, spaces.Space]
    possible_agents: list[str]
    metadata: dict[str, Any]
    #: the API plays simultaneous-move games only (the Parallel API)
    simultaneous_only: ClassVar[bool] = False

    def __init__(
        self,
        bundle: GameBundle,
        name: str,
        render_mode: str | None = None,
        max_cycles: int | None = None,
    ) -> None:
        """Check the arguments (a sequential game where :attr:`simultaneous_only` is a
        ``ValueError``) and keep them (:meth:`_configure`, with the API's :meth:`_metadata`), then
        the API's own state (:meth:`_setup`), every seat's spaces and the state space; no episode
        yet (no agents, no ``game_state``: every use says "call reset()")."""
        super().__init__()
        simultaneous = bundle.game.tags.dynamics == SIMULTANEOUS
        if self.simultaneous_only and not simultaneous:
            raise ValueError(f"{name} is sequential: it has no Parallel version")
        self._configure(bundle, name, render_mode, max_cycles, **self._metadata(simultaneous))
        self._setup()
        self._obs_spaces, self._act_spaces = make_spaces(bundle, self)
        enc = bundle.encoder
        self.state_space = spaces.Box(enc.low, enc.high, shape=enc.state_shape, dtype=np.float32)
        self.game_state: Any = None
        self.np_random, self._np_random_seed = seeding.np_random(None)
        self.agents: list[str] = []

    def _metadata(self, simultaneous: bool) -> dict[str, Any]:
        """What the API adds to the metadata of a (``simultaneous``-move or sequential) game."""
        return {}

    def _setup(self) -> None:
        """The API's own state, kept once the arguments are (before the spaces are made)."""

    def _configure(
        self,
        bundle: GameBundle,
        name: str,
        render_mode: str | None,
        max_cycles: int | None,
        **metadata: Any,
    ) -> None:
        """Check ``render_mode`` and ``max_cycles`` and keep them with the bundle, its game, its
        agents and an instance copy of the class metadata with this game's ``name`` (and
        ``metadata``)."""
        render_mode = check_render_mode(render_mode, name)
        if max_cycles is not None and max_cycles < 1:
            raise ValueError(f"max_cycles must be >= 1, got {max_cycles}")
        self.bundle = bundle
        self.game = bundle.game
        self.metadata = {**self.metadata, "name": name, **metadata}
        self.render_mode = render_mode
        self.max_cycles = max_cycles
        self.possible_agents = bundle.agents

    def observation_space(self, agent: str) -> spaces.Space:
        """The Dict space of ``{"observation", "action_mask"}``."""
        try:
            return self._obs_spaces[agent]
        except (KeyError, TypeError):
            raise unknown_agent(agent, self.possible_agents) from None

    def action_space(self, agent: str) -> spaces.Space:
        """Discrete over the game's action catalogue."""
        try:
            return self._act_spaces[agent]
        except (KeyError, TypeError):
            raise unknown_agent(agent, self.possible_agents) from None


class TomAECEnv(SeatSpaces, AECEnv):
    """PettingZoo AEC environment over a :class:`~tom_envs.core.game.GameBundle`.

    Besides the PettingZoo API it offers the text layer for LLM loops and people:
    :meth:`text_observation`, :meth:`parse_action` and :meth:`view` (the structured player view).

    Misuse gets a clear error, never an ``AttributeError`` from inside: any use before ``reset()``
    raises :class:`~tom_envs.core.game.ResetNeeded`, an agent name the game does not have raises
    :class:`~tom_envs.core.game.UnknownAgentError` (listing the agents), a malformed, out-of-range
    or illegal action raises :class:`~tom_envs.core.game.IllegalActionError` and changes nothing.

    Args:
        bundle: the configured game with its encoder and text interface.
        name: PettingZoo metadata name, e.g. ``"matrix_rps_v0"``.
        render_mode: ``None``, ``"ansi"`` (a spectator's text of the whole state), ``"rgb_array"``
            (every seat's board as an image) or ``"human"`` (see :mod:`tom_envs.core.render`);
            another mode warns and renders nothing.
        max_cycles: truncate after this many cycles (a cycle is one joint step in simultaneous
            games and one move of every seat in sequential games); ``None`` for the rules' limit.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi", "rgb_array", "human"],
        "name": "tom_env",
        "is_parallelizable": False,
    }

    def _metadata(self, simultaneous: bool) -> dict[str, Any]:
        # ``aec_to_parallel`` is exact only for simultaneous games (the rules apply once a cycle).
        return {"is_parallelizable": simultaneous}

    def _setup(self) -> None:
        self._index = {a: i for i, a in enumerate(self.possible_agents)}
        self._n_actions = self.game.num_actions
        self._n_players = self.game.num_players
        # A step that pays nobody: its rewards, and what rewards[agent] becomes (see step()).
        self._no_rewards = (0.0,) * self._n_players
        self._zero_map = dict.fromkeys(self.possible_agents, 0.0)
        self._encode = self.bundle.encoder.encode
        self._observe = self.game.observe
        # Optional encoder fast path: ``encode_player(state, seat)`` gives
        # ``(encode(view), view.legal_actions)`` of ``game.observe(state, seat)`` without the view.
        self._encode_player = getattr(self.bundle.encoder, "encode_player", None)
        self._masks: dict[tuple[int, ...], np.ndarray] = {}
        self._simultaneous = self.game.tags.dynamics == SIMULTANEOUS
        # before the first reset: nobody selected (every use says "call reset()")
        self.agent_selection: Any = None
        self.terminations: dict[str, bool] = {}
        self.truncations: dict[str, bool] = {}
        self._cumulative_rewards: dict[str, float] = {}

    # ----------------------------------------------------------------- misuse
    def _seat(self, agent: Any) -> int:
        """The seat of ``agent``, or :class:`UnknownAgentError` listing the agents."""
        index = self._index.get(agent) if isinstance(agent, str) else None
        if index is None:
            raise unknown_agent(agent, self.possible_agents)
        return index

    def _live(self, what: str) -> None:
        """:class:`ResetNeeded` unless an episode has been started."""
        if self.game_state is None:
            raise ResetNeeded(f"{what} before reset(): call reset(seed=...) first")

    # ------------------------------------------------------------------ reset
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start an episode; ``seed`` makes it reproducible (all chance comes from it)."""
        if seed is not None:
            if type(seed) is int and seed >= 0:
                # What ``seeding.np_random(seed)`` builds (PCG64 seeded through SeedSequence(seed),
                # whose entropy is ``seed``), without its checks' cost: same stream.
                self.np_random, self._np_random_seed = _Generator(_PCG64(seed)), seed
            else:
                self.np_random, self._np_random_seed = seeding.np_random(seed)
        self.game_state = self.game.initial_state(self.np_random)
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self._pending: dict[int, int] = {}
        self._messages: dict[int, str] = {}
        self._queue: list[int] = []
        self._cycles = 0
        self._moves = 0
        self._joint_steps = 0
        self._skip_agent_selection = None
        self.last_events: tuple[str, ...] = ()
        self._schedule()

    def _schedule(self) -> None:
        """Queue the seats that must act now and select the first."""
        self._queue = list(self.game.current_players(self.game_state))
        self.agent_selection = (
            self.possible_agents[self._queue[0]] if self._queue else self.agents[0]
        )

    # ---------------------------------------------------------------- observe
    def view(self, agent: str) -> Any:
        """The structured player view (what bots and text read)."""
        self._live("view()")
        return self.game.observe(self.game_state, self._seat(agent))

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """PettingZoo's ``last()``, with a clear error before ``reset()`` or after the end."""
        if self.agent_selection not in self._cumulative_rewards:
            self._live("last()")
            raise ResetNeeded("last() after the episode ended (every agent is done): call reset()")
        return super().last(observe)

    def _acting(self, agent: str) -> bool:
        return (
            agent == self.agent_selection
            and agent in self.terminations
            and not (self.terminations[agent] or self.truncations[agent])
        )

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """Vector observation and action mask.

        The mask is all zeros unless ``agent`` must act: it is ``agent_selection``, or, in a
        simultaneous game, a seat that has still to choose its part of the current joint action (so
        that ``aec_to_parallel`` hands every seat its legal actions).
        """
        index = self._index.get(agent) if type(agent) is str else None
        if index is None or self.game_state is None:
            self._live("observe()")
            index = self._seat(agent)  # raises: not an agent of this game
        fast = self._encode_player
        view = None
        if fast is not None:
            obs, legal = fast(self.game_state, index)
        else:
            view = self._observe(self.game_state, index)
            obs = self._encode(view)
            legal = view  # its legal actions are read below, only when the mask needs them
        if agent == self.agent_selection or (self._simultaneous and index in self._queue):
            terminations = self.terminations
            if agent in terminations and not (terminations[agent] or self.truncations[agent]):
                if legal is view and view is not None:
                    legal = view.legal_actions
                if type(legal) is not tuple:
                    legal = tuple(legal)
                mask = self._masks.get(legal)
                if mask is None:  # one mask per distinct legal set, copied out (callers may write)
                    mask = np.zeros(self._n_actions, dtype=np.int8)
                    if legal:
                        mask[list(legal)] = 1
                    if len(self._masks) < 4096:
                        self._masks[legal] = mask
                return {"observation": obs, "action_mask": mask.copy()}
        return {"observation": obs, "action_mask": np.zeros(self._n_actions, dtype=np.int8)}

    def state(self) -> np.ndarray:
        """Global state vector for centralised critics."""
        self._live("state()")
        return self.bundle.encoder.encode_state(self.game_state)

    def sample_mask(self, agent: str) -> np.ndarray | None:
        """The mask ``action_space(agent).sample()`` draws from (``None`` before ``reset``)."""
        if self.game_state is None or agent not in getattr(self, "terminations", {}):
            return None
        if not self._acting(agent):
            return None
        return self.game.legal_mask(self.game_state, agent_index(agent))

    # ------------------------------------------------------------------- text
    def text_observation(self, agent: str) -> TextObservation:
        """Rules prompt, observation text and legal actions as text, from ``agent``'s view."""
        return self.bundle.text.text_observation(self.view(agent))

    def parse_action(self, agent: str, text: object) -> ParseResult:
        """Parse free text into a legal action for ``agent``; gives feedback and never raises on
        the text (only on misuse: before ``reset()``, an unknown agent)."""
        view = self.view(agent)
        if not self._acting(agent):
            return ParseResult(None, f"it is not {agent}'s turn to act")
        return self.bundle.text.parse_action(view, text)  # type: ignore[arg-type]

    def render(self) -> str | np.ndarray | None:
        """The whole state in ``render_mode``: text, an RGB image, or a window (``None``)."""
        if self.render_mode is not None:
            self._live("render()")
        return render(self.bundle, self.game_state, self.render_mode)

    def close(self) -> None:
        """Nothing to release."""

    def probes(self, agent: str) -> list[Any]:
        """Theory-of-Mind probes to put to ``agent`` now, with ground truth (empty if none)."""
        self._live("probes()")
        seat = self._seat(agent)
        fn = self.bundle.probes
        return [] if fn is None else list(fn(self.game_state, seat))

    # ------------------------------------------------------------------- chat
    def send_message(self, agent: str, text: str) -> None:
        """Attach a chat message to ``agent``'s next action (games with communication only).

        The message is validated now and delivered with the action when it is applied; the game
        decides who sees it. Raises :class:`~tom_envs.core.game.IllegalActionError` if ``agent``
        is not the one to act, the game has no chat, or the text is not a valid message.
        """
        self._live("send_message()")
        player = self._seat(agent)
        if not self._acting(agent):
            raise IllegalActionError(f"it is not {agent}'s turn: it cannot send a message now")
        check_messages(self.game, {player}, {player: text})
        self._messages[player] = text

    # ------------------------------------------------------------------- step
    def step(self, action: Any) -> None:
        """Act for ``agent_selection``. Illegal or malformed actions raise, leaving no trace."""
        agent = self.agent_selection
        terminations = self.terminations
        if agent not in terminations:
            self._live("step()")
            raise IllegalActionError("the episode is over: call reset()")
        if terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        player = self._index[agent]
        game = self.game
        state = self.game_state
        if type(action) is not int or action not in game.legal_actions(state, player):
            check_action(game, state, player, action)  # raises unless legal (e.g. a numpy int)
            action = int(action)
        self._cumulative_rewards[agent] = 0.0
        self._moves += 1
        queue = self._queue
        del queue[0]
        if queue:  # simultaneous game, more seats to ask
            self._pending[player] = action
            self._clear_rewards()
            self.agent_selection = self.possible_agents[queue[0]]
            return
        # Every pending action was checked as it arrived and every message when it was sent; the
        # queue guarantees exactly the seats that must act, so the rules apply directly.
        pending = self._pending
        pending[player] = action
        if self._messages:
            messages = {p: m for p, m in self._messages.items() if p in pending}
            self._messages = {}
        else:
            messages = None
        result = game.apply(state, pending, self.np_random, messages or None)
        self._pending = {}
        state = self.game_state = result.state
        self.last_events = result.events
        rewards, cumulative = self.rewards, self._cumulative_rewards
        paid = result.rewards
        if type(paid) is tuple and paid == self._no_rewards and len(rewards) == self._n_players:
            rewards.update(self._zero_map)  # nobody is paid: the cumulative rewards stay
        else:
            for a, r in zip(self.possible_agents, paid, strict=True):
                if a in rewards:
                    if type(r) is not float:  # float(r) of a float is r itself: skip the call
                        r = float(r)
                    rewards[a] = r
                    cumulative[a] += r
        self._joint_steps += 1
        self._cycles = self._joint_steps if self._simultaneous else self._moves // self._n_players
        if game.is_terminal(state):
            self.terminations = dict.fromkeys(self.agents, True)
            self.agent_selection = self.agents[0]
        elif self.max_cycles is not None and self._cycles >= self.max_cycles:
            self.truncations = dict.fromkeys(self.agents, True)
            self.agent_selection = self.agents[0]
        else:
            queue = self._queue = list(game.current_players(state))
            self.agent_selection = self.possible_agents[queue[0]] if queue else self.agents[0]
