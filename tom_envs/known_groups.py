"""Known groups for functional ToM in every game: an oracle, a fixed convention and an adaptive
learner, and the order check they must pass (issue #35).

Three generic agents; per game only their ingredients differ:

* **oracle**: told the partner's identity, it plays the *reference policy* of that partner
  (:func:`reference_policy`): the exact best response where :mod:`tom_envs.references` has one
  (matrix dynamic programme and Capture/Escape ``BestResponsePlanner``, both through
  :class:`~tom_envs.references.OracleAgent`; BombDefusal's CBS part against a ``cbs`` team),
  elsewhere the reference's own policy (a trained best response when the reference names one in
  ``details["policy"]``, else the best declared candidate chosen on selection seeds disjoint
  from the evaluation seeds). Where the reference *is* the mean of that very policy, the oracle's
  regret is 0 by construction and the check is about plumbing and sampling only.
* **fixed**: the oracle of one member ``m0``, declared per game before running, played against
  every partner.
* **adaptive**: no privileged input (its constructor and its turns carry no partner identity):

  - :class:`SelectorAgent`: UCB1 over the oracle policies (one arm per distinct reference
    policy), one arm per episode, learning from its own episode returns across the consecutive
    episodes of a session (:func:`tom_envs.sessions.play_session`). Used where the partners'
    views are private (bomb defusal, Hanabi, CoBlock, Guandan) and in Overcooked.
  - :class:`TypeBasedAgent` (CollabCapture, CollabEscape: fully observable): a posterior over
    the zoo's Markov members from the partner's observed moves (each member's policy evaluated
    on the computable state, mixed with ``epsilon`` of uniform so an unknown partner never
    zeroes every type), acting with the exact best response to the most probable member.

:func:`play_groups` plays the three groups on the same sessions (``sessions`` sessions of
``length`` consecutive episodes, the same seeds for every group and member); the session is the
unit: its regret is the mean over its episodes and over the non-random members, and the order
``oracle < adaptive < fixed`` is checked with paired bootstrap intervals over sessions
(:func:`tom_envs.partners.regret.known_groups`); :func:`order_verdict` prints ✓ or ✗ naming the
failing inequality. :func:`play_switch` plays a partner that switches from member A to member B at
a seeded episode of a session (``switch:...:at_episode=LO-HI``, invisible to the agent) and
returns the per-episode regret after the switch of the adaptive learner, the oracle of the
switching partner and the fixed agent that keeps the best response to A, with the time to recover
(:func:`tom_envs.partners.regret.adaptation`, one episode per window).

In the long games (Overcooked, Hanabi) the partner switches **within the episode**
(:func:`play_within_switch`, ``switch:a=A:b=B:at=LO-HI:key=K``): the adaptive learner there is
:class:`SlidingUCBAgent` (sliding-window UCB, Garivier & Moulines 2011, over the reference
policies, one arm per window of its own decisions, every arm acting in shadow on every turn),
and the window regret is per partner decision against the oracle of the switching partner's own
reward curve on the same seeds (:func:`tom_envs.partners.regret.round_rewards`).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tom_envs.core.agents import Agent, AgentAction, BaseAgent, EpisodeInfo, Turn, as_agent_action
from tom_envs.partners.regret import adaptation, known_groups
from tom_envs.partners.switching import parse_at, switch_point
from tom_envs.records import bootstrap_ci
from tom_envs.registration import GameSpec, game_spec

#: The oracle's spec for the games with an exact best-response player.
ORACLE_SPEC = "tom_envs.references:OracleAgent:partner="
#: UCB1's exploration constant (rewards scaled to the spread of the returns seen so far).
UCB_C = math.sqrt(2.0)
#: The members every type-based learner of CollabCapture/CollabEscape considers (the planner's
#: Markov partners: the paper's rule bots and uniform random); :func:`room_types` appends each
#: game's conventions.
ROOM_TYPES = ("greedy", "optimal", "random")


def room_types(game: str) -> tuple[str, ...]:
    """The types of ``game``'s type-based learner: :data:`ROOM_TYPES`, then the game's other
    rule bots that the planner tabulates exactly (its conventions, in bot-table order)."""
    from tom_envs.references import markov_bots

    extra = [b for b in markov_bots(game_spec(game)) if b not in ROOM_TYPES]
    return (*ROOM_TYPES, *extra)

Interval = tuple[float, float, float]


# ------------------------------------------------------------------------ reference policies
def reference_policy(game: str, partner: str, reference: Any = None) -> str | None:
    """The agent spec that plays the reference (best response) of ``partner`` in ``game``: the
    one function the oracle reads its policy through.

    ``reference`` is what the reference layer returned for this partner: a
    :class:`~tom_envs.references.Reference` (its ``details["policy"]``, a trained best response's
    agent spec, wins; a BombDefusal bracket's ``details["candidate"]``), or the agent spec of the
    best declared candidate or of a trained best response (a string, ``br/<partner>``) for a
    lower bound, in any game (a room game's learned member has no exact solver). Otherwise matrix
    and room games (exact solvers) play :class:`~tom_envs.references.OracleAgent`. ``None``: no
    policy is known.
    """
    from tom_envs.references import MATRIX_GAMES, ROOM_GAMES

    details = getattr(reference, "details", None) or {}
    if isinstance(details.get("policy"), str):
        return str(details["policy"])
    if isinstance(reference, str):  # the chosen candidate, or a trained BR's ``br/<partner>``
        return reference
    if game in (*MATRIX_GAMES, *ROOM_GAMES):
        return None if partner.startswith("zoo/") else ORACLE_SPEC + partner
    if game == "BombDefusal" and getattr(reference, "kind", None) == "exact" and partner == "cbs":
        return "cbs"  # the focal's CBS part attains the team optimum with a CBS partner
    if isinstance(details.get("candidate"), str):
        return str(details["candidate"])
    return None


# ------------------------------------------------------------------------ the verdict
def order_verdict(groups: Mapping[str, Any], digits: int = 3) -> str:
    """``✓`` when both paired gaps' intervals lie above 0 (``groups`` from
    :func:`tom_envs.partners.regret.known_groups`), else ``✗`` naming each failing inequality
    with its interval."""
    failing = []
    for key, words in (("adaptive_minus_oracle", "oracle < adaptive"),
                       ("fixed_minus_adaptive", "adaptive < fixed")):  # fmt: skip
        m, lo, hi = groups[key]
        if not lo > 0.0:
            failing.append(f"{words} fails: {key.replace('_minus_', ' − ')} = {m:.{digits}f} "
                           f"[{lo:.{digits}f}, {hi:.{digits}f}] not above 0")  # fmt: skip
    return "✓" if not failing else "✗ (" + "; ".join(failing) + ")"


# ------------------------------------------------------------------------ adaptive: selector
def _factory_from_info(info: EpisodeInfo) -> Callable[[str], Agent]:
    from tom_envs.agents import make_agent

    base = game_spec(info.env_id)
    names = {p.name for p in getattr(base.load(), "PARAMS", ())}
    given = {k: v for k, v in dict(info.env_kwargs or {}).items() if k in names}
    spec = dataclasses.replace(base, kwargs={**base.kwargs, **given})
    bundle = spec.load().make_bundle(**spec.kwargs)
    return lambda arm: make_agent(arm, spec, bundle, trusted=True)


class SelectorAgent(BaseAgent):
    """UCB1 over a fixed set of policies (arms), one arm per episode, learning from its own
    episode returns across the episodes of a session.

    Args:
        arms: the policies' agent specs (the game's oracle policies, declared by the page's own
            code; built with :func:`tom_envs.agents.make_agent` for the episode's game).
        c: UCB1's exploration constant; returns are scaled by the spread (max − min) of the
            returns seen so far in the session (1 while it is 0).
        rule: ``"ucb1"``, or ``"etc"`` (explore-then-commit: each arm once, then the best mean).

    It is told nothing about its partner: its memory is its own returns per arm in this session
    (given by :func:`tom_envs.sessions.play_session` after each episode; reset when a new session
    starts, or at every episode outside a session, where it never learns). Untried arms go first, in
    the declared order; ties go to the lower index.
    """

    name = "selector"
    description = "UCB1 over the oracle policies, one arm per episode, from its own returns"

    def __init__(self, arms: Sequence[str], c: float = UCB_C, rule: str = "ucb1") -> None:
        super().__init__()
        arms = tuple(str(a) for a in arms)
        if not arms or len(set(arms)) != len(arms):
            raise ValueError(f"arms must name one or more different policies, got {arms!r}")
        if rule not in ("ucb1", "etc"):
            raise ValueError(f"rule must be 'ucb1' or 'etc', got {rule!r}")
        if not c >= 0.0:
            raise ValueError(f"c must be >= 0, got {c!r}")
        self.arms, self.c, self.rule = arms, float(c), rule
        self.session: str | None = None
        self.history: list[tuple[int, float]] = []  # (arm index, episode return), this session
        self._agents: dict[int, Agent] = {}
        self._factory: Callable[[str], Agent] | None = None
        self._env: str | None = None
        self.arm = 0

    def choose(self) -> int:
        """The arm of the next episode from this session's history."""
        counts = np.zeros(len(self.arms))
        sums = np.zeros(len(self.arms))
        for arm, ret in self.history:
            counts[arm] += 1
            sums[arm] += ret
        untried = [i for i in range(len(self.arms)) if counts[i] == 0]
        if untried:
            return untried[0]
        means = sums / counts
        if self.rule == "etc":
            return int(np.argmax(means))
        rets = [r for _, r in self.history]
        scale = (max(rets) - min(rets)) or 1.0
        bonus = self.c * np.sqrt(np.log(len(self.history)) / counts)
        return int(np.argmax(means / scale + bonus))

    def record(self, arm: int, episode_return: float) -> None:
        """Credit one finished episode's return to ``arm``."""
        self.history.append((int(arm), float(episode_return)))

    def reset(self, info: EpisodeInfo) -> None:
        """Start an episode: forget the history at a new session, pick the arm, reset it."""
        super().reset(info)
        session = info.session
        key = None if session is None else f"{session.id}/{session.seed}"
        if key is None or key != self.session or session is None or session.index == 0:
            self.history = []
        self.session = key
        if self._env != info.env_id or self._factory is None:
            self._factory, self._env, self._agents = _factory_from_info(info), info.env_id, {}
        self.arm = self.choose()
        if self.arm not in self._agents:
            self._agents[self.arm] = self._factory(self.arms[self.arm])
        self._agents[self.arm].reset(info)

    def act(self, turn: Turn) -> int | AgentAction:
        """The current arm's action (no prediction, no message of its own)."""
        return as_agent_action(self._agents[self.arm].act(turn))

    def end_episode(self, turn: Turn) -> None:
        """Forward to the arm played."""
        end = getattr(self._agents.get(self.arm), "end_episode", None)
        if end is not None:
            end(turn)

    def session_feedback(self, episode_return: float) -> None:
        """Its own return in the episode just played (:func:`tom_envs.sessions.play_session`):
        credited to the arm it played."""
        self.record(self.arm, episode_return)


# ------------------------------------------------------------------------ adaptive: type-based
class TypeBasedAgent(BaseAgent):
    """CollabCapture/CollabEscape: a posterior over Markov member types from the partner's
    observed moves; acts with the exact best response to the most probable type.

    Args:
        types: the member names (bots the planner tabulates), with a uniform prior; ``None``
            (default): the episode's game's :func:`room_types` (the paper's bots, ``random``,
            then the game's conventions).
        epsilon: each type's policy is mixed with ``epsilon`` of uniform over the partner's
            options (a move no type makes never zeroes the posterior).

    The game is fully observable, so the partner's move is read from the state change: the
    likelihood of a type is ``sum_b pi(b | s) P(s' | s, a, b)`` with ``a`` its own last action.
    The posterior is kept across the episodes of a session and reset at a new one. Its
    prediction of the partner's next action is the likeliest action of the most probable type.
    """

    name = "typebased"
    description = "posterior over the zoo's Markov members from the partner's moves, BR to the MAP"

    def __init__(self, types: Sequence[str] | None = None, epsilon: float = 0.05) -> None:
        super().__init__()
        self.declared = None if types is None else tuple(str(t) for t in types)
        if self.declared is not None and (not self.declared
                                          or len(set(self.declared)) != len(self.declared)):  # fmt: skip
            raise ValueError(f"types must name one or more different members, got {types!r}")
        self.types: tuple[str, ...] = self.declared or ()
        if not 0.0 < epsilon <= 1.0:
            raise ValueError(f"epsilon must be in (0, 1], got {epsilon!r}")
        self.epsilon = float(epsilon)
        self.log_post = np.zeros(len(self.types))
        self.session: str | None = None
        self._prev: tuple[Any, int] | None = None
        self._planners: list[Any] = []

    @property
    def posterior(self) -> dict[str, float]:
        """The current posterior over the types (known from the first episode's reset)."""
        p = np.exp(self.log_post - self.log_post.max())
        p /= p.sum()
        return dict(zip(self.types, p.tolist(), strict=True))

    @property
    def map_type(self) -> int:
        """The index of the most probable type (the lower index on ties)."""
        return int(np.argmax(self.log_post))

    def reset(self, info: EpisodeInfo) -> None:
        """Build (from the process cache) each type's exact best-response planner."""
        from tom_envs.references import ROOM_GAMES, best_response_planner, room_setup

        super().reset(info)
        spec = game_spec(info.env_id)
        if spec.name not in ROOM_GAMES:
            raise ValueError(f"TypeBasedAgent plays {ROOM_GAMES}, not {spec.name}")
        config, self._from_view = room_setup(info, spec)
        types = self.declared or room_types(spec.name)
        self._planners = [best_response_planner(spec.name, config, t, info.player)
                          for t in types]  # fmt: skip
        session = info.session
        key = None if session is None else f"{session.id}/{session.seed}"
        if (key is None or key != self.session or session is None or session.index == 0
                or types != self.types):  # fmt: skip
            self.log_post = np.zeros(len(types))
        self.types = types
        self.session = key
        self._prev = None

    def _likelihood(self, br: Any, prev: Any, mine: int, now: Any) -> float:
        game, me = br.game, self.info.player if self.info else 0
        other = 1 - me
        k = br.horizon - int(prev.turn) if br.horizon is not None else None
        probs = br.partner.probs(game.canonical(prev), k)
        options = tuple(game.options(prev, other))
        target = game.canonical(now)
        total = 0.0
        for b in options:
            p = (1.0 - self.epsilon) * float(probs.get(b, 0.0)) + self.epsilon / len(options)
            if p <= 0.0:
                continue
            hit = sum(q for q, s in game.outcomes(prev, {me: mine, other: b})
                      if game.canonical(s) == target)  # fmt: skip
            total += p * hit
        return total

    def observe(self, prev: Any, mine: int, now: Any) -> None:
        """Update the posterior with one observed transition (``prev`` -> ``now`` after its own
        action ``mine``); a transition no type explains leaves it unchanged."""
        like = np.array([self._likelihood(br, prev, mine, now) for br in self._planners])
        if like.max() <= 0.0:
            return
        with np.errstate(divide="ignore"):
            self.log_post = self.log_post + np.log(like)

    def act(self, turn: Turn) -> AgentAction:
        """The best response to the most probable type, after reading the partner's last move."""
        state = self._from_view(turn.view)
        if self._prev is not None and int(self._prev[0].turn) + 1 == int(state.turn):
            self.observe(self._prev[0], self._prev[1], state)
        br = self._planners[self.map_type]
        action = int(br.best_action(state))
        self._prev = (state, action)
        k = br.horizon - int(state.turn) if br.horizon is not None else None
        probs = br.partner.probs(br.game.canonical(state), k)
        top = max(probs.values())
        guess = min(a for a, p in probs.items() if p >= top - 1e-12)
        return AgentAction(action, prediction={"partner_action": int(guess)})


#: SW-UCB's exploration exponent: ``ξ > 1/2`` is the condition of Garivier & Moulines's bound
#: (2011); 0.6 is the smallest round value above it.
SW_UCB_XI = 0.6


class SlidingUCBAgent(BaseAgent):
    """Sliding-window UCB (Garivier & Moulines 2011) over a fixed set of policies (arms) within
    one episode: the episode is cut into windows of ``window`` of its own decisions; each window
    is played by one arm, chosen by SW-UCB from the team reward of the last ``memory`` windows.

    Args:
        arms: the policies' agent specs (the game's reference policies, declared by the page's
            own code; built with :func:`tom_envs.agents.make_agent` for the episode's game).
        window: own decisions per arm window (``>= 1``).
        memory: SW-UCB's ``τ``, in windows: only the last ``memory`` windows count (``>= 1``).
        xi: the exploration exponent ``ξ``.

    Index of arm ``i`` after ``t`` windows: ``mean_i / B + sqrt(ξ · log(min(t, τ)) / N_i)``
    over the last ``τ`` windows (``N_i`` of them played by ``i``; an arm absent from them goes
    first, in the declared order; ties go to the lower index); ``B`` is the spread (max − min) of
    the window rewards seen so far in the episode (1 while it is 0). A window's reward is the
    sum of :attr:`Turn.reward` received from its first decision's next turn up to the next
    window's first turn (its own seat's reward: the team reward in Overcooked and Hanabi).

    **Every arm acts on every turn** (the non-playing arms in shadow, their answers discarded,
    like :class:`~tom_envs.partners.switching.SwitchingAgent`'s B), so an arm's memory (a Hanabi
    bot's card knowledge read from the public history, a recurrent policy's state) is that of an
    arm fed the same turns from the start. A shadow arm's failure never changes the game; it is
    counted in :attr:`shadow_failures`. It is told nothing about its partner, and forgets its
    statistics at every episode (it adapts within the episode only).
    """

    name = "swucb"
    description = "sliding-window UCB over the reference policies, one arm per window of steps"

    def __init__(self, arms: Sequence[str], window: int, memory: int, xi: float = SW_UCB_XI) -> None:
        super().__init__()
        arms = tuple(str(a) for a in arms)
        if not arms or len(set(arms)) != len(arms):
            raise ValueError(f"arms must name one or more different policies, got {arms!r}")
        if isinstance(window, bool) or not isinstance(window, int) or window < 1:
            raise ValueError(f"window must be a whole number >= 1 (decisions), got {window!r}")
        if isinstance(memory, bool) or not isinstance(memory, int) or memory < 1:
            raise ValueError(f"memory must be a whole number >= 1 (windows), got {memory!r}")
        if not xi > 0.0:
            raise ValueError(f"xi must be > 0, got {xi!r}")
        self.arms, self.window, self.memory, self.xi = arms, window, memory, float(xi)
        self.history: list[tuple[int, float]] = []  # (arm, window reward), this episode
        self.played: list[int] = []  # the arm of each own decision, this episode
        self.arm = 0
        self.shadow_failures = 0
        self._pending = 0.0
        self._agents: list[Agent] = []
        self._env: str | None = None

    def choose(self) -> int:
        """The arm of the next window from the last ``memory`` windows."""
        recent = self.history[-self.memory:]
        counts = np.zeros(len(self.arms))
        sums = np.zeros(len(self.arms))
        for arm, r in recent:
            counts[arm] += 1
            sums[arm] += r
        untried = [i for i in range(len(self.arms)) if counts[i] == 0]
        if untried:
            return untried[0]
        rets = [r for _, r in self.history]
        scale = (max(rets) - min(rets)) or 1.0
        t = min(len(self.history), self.memory)
        bonus = np.sqrt(self.xi * np.log(t) / counts)
        return int(np.argmax(sums / counts / scale + bonus))

    def reset(self, info: EpisodeInfo) -> None:
        """Start an episode: forget the statistics, reset every arm with the same info."""
        super().reset(info)
        if self._env != info.env_id or not self._agents:
            factory = _factory_from_info(info)
            self._agents, self._env = [factory(a) for a in self.arms], info.env_id
        for agent in self._agents:
            agent.reset(info)
        self.history, self.played, self._pending, self.shadow_failures = [], [], 0.0, 0
        self.arm = self.choose()

    def act(self, turn: Turn) -> int | AgentAction:
        """Credit the reward, close the window at its end, then every arm acts; the playing
        arm's action is returned (no prediction, no message)."""
        decision = len(self.played)
        if decision:
            self._pending += float(turn.reward)
            if decision % self.window == 0:
                self.history.append((self.arm, self._pending))
                self._pending = 0.0
                self.arm = self.choose()
        choice = None
        for i, agent in enumerate(self._agents):
            if i == self.arm:
                choice = as_agent_action(agent.act(turn))
                continue
            try:
                agent.act(turn)
            except Exception:  # a shadow arm's failure never changes the game; it is counted
                self.shadow_failures += 1
        self.played.append(self.arm)
        assert choice is not None
        return AgentAction(choice.action)

    def end_episode(self, turn: Turn) -> None:
        """Forward to every arm."""
        for agent in self._agents:
            end = getattr(agent, "end_episode", None)
            if end is not None:
                end(turn)


class SessionSwitchOracle(BaseAgent):
    """The clairvoyant oracle of a partner switching across a session's episodes: plays ``a``
    (an agent spec: the reference policy of member A) before the switch episode and ``b`` from it
    (privileged: it is given the switch's ``at_episode`` range and ``key``, and draws the same
    episode from the session seed)."""

    name = "switch_oracle"

    def __init__(self, a: str, b: str, at_episode: str, key: int) -> None:
        super().__init__()
        self.a_spec, self.b_spec = str(a), str(b)
        self.lo, self.hi = parse_at(at_episode)
        self.key = int(key)
        self._agents: dict[str, Agent] = {}
        self.playing: Agent | None = None

    def reset(self, info: EpisodeInfo) -> None:
        """Pick A's or B's policy for this episode of the session."""
        super().reset(info)
        if info.session is None:
            raise ValueError("SessionSwitchOracle plays the episodes of a session (play_session)")
        at = switch_point(info.session.seed, self.key, self.lo, self.hi)
        spec = self.a_spec if info.session.index < at else self.b_spec
        if spec not in self._agents:
            self._agents[spec] = _factory_from_info(info)(spec)
        self.playing = self._agents[spec]
        self.playing.reset(info)

    def act(self, turn: Turn) -> int | AgentAction:
        """The playing policy's action."""
        assert self.playing is not None
        return self.playing.act(turn)

    def end_episode(self, turn: Turn) -> None:
        """Forward to the playing policy."""
        end = getattr(self.playing, "end_episode", None)
        if end is not None:
            end(turn)


# ------------------------------------------------------------------------ playing the groups
@dataclass(frozen=True)
class GroupsPlan:
    """What :func:`play_groups` plays on one game (declared before running).

    Attributes:
        game: the registered game name; kwargs: its arguments.
        seats: the seat specs with ``"{focal}"`` and ``"{partner}"`` placeholders (the remaining
            seats' own specs, e.g. Guandan's opponents).
        focal_seats: the seats whose ``U`` counts (the focal's team).
        members: the non-random members checked, each with its oracle policy (agent spec).
        fixed_member: ``m0``, whose oracle is the fixed convention.
        adaptive: builds a fresh adaptive learner (called once per session).
        adaptive_name: how the page names it.
        sessions, length: ``S`` sessions of ``K`` consecutive episodes; seeds
            ``seed + i*K .. seed + i*K + K - 1`` for session ``i``, the same for every member and
            group.
    """

    game: str
    kwargs: Mapping[str, Any]
    seats: tuple[str, ...]
    focal_seats: tuple[int, ...]
    members: Mapping[str, str]
    fixed_member: str
    adaptive: Callable[[], Agent]
    adaptive_name: str
    sessions: int
    length: int
    seed: int = 20_000

    def session_seeds(self, i: int) -> list[int]:
        """The seeds of session ``i``."""
        return [self.seed + i * self.length + j for j in range(self.length)]


@dataclass
class GroupsResult:
    """Per group, the per-session regret (mean over episodes and members), its interval, the
    order check and the per-member figures."""

    plan: GroupsPlan
    per_session: dict[str, dict[int, float]]
    per_group: dict[str, Interval]
    order: dict[str, Any]
    verdict: str
    per_member: dict[str, dict[str, float]]
    arms: dict[str, list[int]] = field(default_factory=dict)
    episodes: int = 0
    seconds: float = 0.0


def _spec(plan: GroupsPlan) -> GameSpec:
    base = game_spec(plan.game)
    return dataclasses.replace(base, kwargs={**base.kwargs, **dict(plan.kwargs)})


#: Seat agents built from a spec, reused across sessions (every agent is reset at each episode;
#: the members and oracles keep no memory across episodes): ``(game, kwargs, spec) -> agent``.
_BUILT: dict[tuple[str, str, str, int], Agent] = {}


def _built(plan: GroupsPlan, spec_text: str, seat: int) -> Agent:
    from tom_envs.agents import make_agent

    key = (plan.game, repr(sorted(plan.kwargs.items())), spec_text, seat)
    if key not in _BUILT:
        if len(_BUILT) > 512:
            _BUILT.clear()
        spec = _spec(plan)
        _BUILT[key] = make_agent(spec_text, spec, spec.load().make_bundle(**spec.kwargs), trusted=True)
    return _BUILT[key]


def _seat_agents(plan: GroupsPlan, focal: Agent | str, partner: Agent | str) -> list[Agent]:
    out: list[Agent] = []
    for i, s in enumerate(plan.seats):
        given = focal if s == "{focal}" else partner if s == "{partner}" else s
        if isinstance(given, str) and given.startswith("switch:"):  # keeps a session's memory
            from tom_envs.agents import make_agent

            spec = _spec(plan)
            given = make_agent(given, spec, spec.load().make_bundle(**spec.kwargs), trusted=True)
        out.append(_built(plan, given, i) if isinstance(given, str) else given)
    return out


def play_u(plan: GroupsPlan, focal: Agent | str, partner: Agent | str,
           seeds: Sequence[int]) -> list[float]:  # fmt: skip
    """Play one session (``seeds`` in order, the same agent objects) and return each episode's
    ``U`` (the game's functional objective for the focal seats). A failed episode raises.
    Agents given as specs are built once per process and seat (members keep no memory across
    episodes); a switching partner is built fresh for each session."""
    from tom_envs.sessions import play_session

    spec = _spec(plan)
    objective = spec.load().functional_objective(**spec.kwargs)
    eps = play_session(spec, _seat_agents(plan, focal, partner), seeds, dict(plan.kwargs))
    bad = [e.seed for e in eps if e.status != "ok"]
    if bad:
        raise RuntimeError(f"{plan.game}: episodes {bad} did not finish ({eps[0].status})")
    return [float(objective(e, plan.focal_seats)) for e in eps]


def play_groups(
    plan: GroupsPlan,
    reference: Callable[[str, Sequence[int]], Sequence[float] | None],
    seed: int = 35,
) -> GroupsResult:
    """Play the three groups against every member on the plan's sessions.

    ``reference(member, seeds)`` gives the reference's exact values on those seeds, or ``None``
    when the reference is the mean of the oracle's own policy (a lower bound: the oracle's ``U``
    on the same seeds is then the reference, and its regret is 0 by construction).
    """
    t0 = time.perf_counter()
    if plan.fixed_member not in plan.members:
        raise ValueError(f"fixed member {plan.fixed_member!r} is not among {list(plan.members)}")
    cache: dict[tuple[str, str, int], list[float]] = {}
    per: dict[str, dict[str, dict[int, float]]] = {g: {} for g in ("oracle", "adaptive", "fixed")}
    arms: dict[str, list[int]] = {}
    episodes = 0
    for m, oracle in plan.members.items():
        fixed = plan.members[plan.fixed_member]
        for i in range(plan.sessions):
            seeds = plan.session_seeds(i)
            for policy in {oracle, fixed}:
                if (policy, m, i) not in cache:
                    cache[(policy, m, i)] = play_u(plan, policy, m, seeds)
                    episodes += len(seeds)
            learner = plan.adaptive()
            u_adapt = play_u(plan, learner, m, seeds)
            episodes += len(seeds)
            arms.setdefault(m, []).extend(a for a, _ in getattr(learner, "history", []))
            ref = reference(m, seeds)
            ref = cache[(oracle, m, i)] if ref is None else list(ref)
            for group, u in (("oracle", cache[(oracle, m, i)]), ("adaptive", u_adapt),
                             ("fixed", cache[(fixed, m, i)])):  # fmt: skip
                per[group].setdefault(m, {})[i] = float(np.mean(np.subtract(ref, u)))
    members = list(plan.members)
    per_session = {g: {i: float(np.mean([per[g][m][i] for m in members]))
                       for i in range(plan.sessions)} for g in per}  # fmt: skip
    order = known_groups(per_session["oracle"], per_session["adaptive"], per_session["fixed"], seed)
    per_group = {g: _ci(list(v.values()), seed + k) for k, (g, v) in enumerate(per_session.items())}
    per_member = {m: {g: float(np.mean(list(per[g][m].values()))) for g in per} for m in members}
    return GroupsResult(plan, per_session, per_group, order, order_verdict(order), per_member,
                        arms, episodes, time.perf_counter() - t0)  # fmt: skip


def _ci(values: Sequence[float], seed: int) -> Interval:
    if len(values) < 2:
        v = float(values[0]) if values else math.nan
        return (v, math.nan, math.nan)
    return bootstrap_ci(list(values), seed, resamples=2000)


# ------------------------------------------------------------------------ switch across episodes
@dataclass
class SwitchResult:
    """One (A, B) pair: the adaptation curves (per episode after the switch) of each agent."""

    a: str
    b: str
    at_episode: str
    rows: dict[str, dict[str, Any]]
    episodes: int
    seconds: float


def play_switch(
    plan: GroupsPlan,
    a: str,
    b: str,
    at_episode: str,
    reference: Callable[[str, Sequence[int]], Sequence[float] | None],
    key: int = 1,
    seed: int = 36,
    margin: float = 0.1,
) -> SwitchResult:
    """A partner that plays member ``a`` then ``b`` from a seeded episode of each session
    (``switch:a=A:b=B:at_episode=LO-HI:key=K``), against the adaptive learner (fresh per
    session), the clairvoyant oracle of the switching partner (A's reference policy, then B's)
    and the fixed agent that keeps A's reference policy. Per-episode regret against the
    reference of the member playing that episode; windows of one episode aligned on each
    session's switch; ``τ`` (episodes) within ``margin`` of the fixed agent's loss."""
    from tom_envs.partners.regret import window_sums

    t0 = time.perf_counter()
    lo, hi = parse_at(at_episode)
    if hi >= plan.length:
        raise ValueError(f"at_episode={at_episode!r} must end before the session's {plan.length} episodes")
    partner = f"switch:a={a}:b={b}:at_episode={lo}-{hi}:key={key}"
    oa, ob = plan.members[a], plan.members[b]
    losses: dict[str, list[dict[int, float]]] = {"adaptive": [], "oracle": [], "fixed": []}
    episodes = 0
    for i in range(plan.sessions):
        seeds = plan.session_seeds(i)
        at = switch_point(seeds[0], key, lo, hi)
        agents = {"adaptive": plan.adaptive(), "oracle": SessionSwitchOracle(oa, ob, f"{lo}-{hi}", key),
                  "fixed": oa}  # fmt: skip
        u = {g: play_u(plan, ag, partner, seeds) for g, ag in agents.items()}
        episodes += 3 * len(seeds)
        ref_a, ref_b = reference(a, seeds), reference(b, seeds)
        ref = [(ref_a if j < at else ref_b) for j in range(len(seeds))]
        ref_vals = [u["oracle"][j] if r is None else float(r[j]) for j, r in enumerate(ref)]
        for g in losses:
            loss = [r - x for r, x in zip(ref_vals, u[g], strict=True)]
            losses[g].append(window_sums(loss, at, 1, before=1))
    rows = {}
    for g in ("adaptive", "oracle", "fixed"):
        ad = adaptation(losses[g], losses["fixed"], 1, seed, margin=margin)
        post = [sum(v for j, v in w.items() if j >= 0) for w in losses[g]]
        rows[g] = {"windows": ad.windows, "tau": ad.tau, "tau_ci": ad.tau_ci,
                   "censored": ad.censored_share, "post": _ci(post, seed + 1)}  # fmt: skip
    return SwitchResult(a, b, at_episode, rows, episodes, time.perf_counter() - t0)


# ------------------------------------------------------------------------ switch within an episode
@dataclass
class WithinSwitchResult:
    """One (A, B) pair switching within the episode: per group (``adaptive``, ``oracle``,
    ``fixed``) the window regrets after the switch, ``τ`` and the total over the first
    ``windows_after`` windows; ``reward`` is each group's mean team reward per window (the
    oracle's row is the reference curve)."""

    a: str
    b: str
    at: str
    width: int
    seeds: list[int]
    learner: str
    rows: dict[str, dict[str, Any]]
    reward: dict[str, dict[int, float]]
    windows_after: int
    arm_share: dict[str, float]
    episodes: int
    seconds: float
    shadow_failures: int = 0
    arms: tuple[str, ...] = ()


def _play_episode(plan: GroupsPlan, focal: Agent | str, partner: str, seed: int) -> Any:
    from tom_envs.driver import EpisodeDriver

    ep = EpisodeDriver(_spec(plan), _seat_agents(plan, focal, partner), seed, dict(plan.kwargs)).run()
    if ep.status != "ok":
        raise RuntimeError(f"{plan.game}: episode {seed} did not finish ({ep.status})")
    return ep


def _arm_shares(learner: Any, oa: str, ob: str, t_sw: int, share: dict[str, list[float]]) -> None:
    """Add the learner's share of own decisions on A's reference arm before the switch point and
    on B's from it (a learner with ``arms`` and ``played``)."""
    played = list(getattr(learner, "played", []))
    arms = list(getattr(learner, "arms", ()))
    if not played or oa not in arms or ob not in arms:
        return
    pre, post = played[:t_sw], played[t_sw:]
    if pre:
        share["a_before"].append(float(np.mean([x == arms.index(oa) for x in pre])))
    if post:
        share["b_after"].append(float(np.mean([x == arms.index(ob) for x in post])))


def _pad(series: Sequence[float], n: int) -> list[float]:
    return [*map(float, series), *([0.0] * (n - len(series)))]


def play_within_switch(
    plan: GroupsPlan,
    a: str,
    b: str,
    at: str,
    learner: Callable[[], Agent],
    seeds: Sequence[int],
    width: int,
    *,
    key: int = 1,
    seed: int = 37,
    margin: float = 0.1,
    before: int = 2,
) -> WithinSwitchResult:
    """A partner that plays member ``a`` then ``b`` from a seeded decision of the episode
    (``switch:a=A:b=B:at=LO-HI:key=K``, invisible to the agent), against three focal agents on
    the same seeds: the **adaptive** ``learner()`` (built once; it must forget at every episode's
    reset: no privileged input, no memory across seeds), the
    **oracle** of the switching partner (A's reference policy, then B's from its own decision
    ``t_s``: told the switch, both run every turn as in :class:`SwitchingAgent`) and the
    **fixed** agent that keeps A's reference policy.

    Window regret (:func:`tom_envs.partners.regret.round_rewards`): per partner decision ``d``,
    the team reward from that decision up to the partner's next one; the loss of a group at ``d``
    is the oracle's reward minus the group's on the same seed (a game over early scores 0 in
    the rest of the rounds); windows of ``width`` partner decisions aligned on the switch
    (``j = -before .. -1`` before it). ``τ`` (partner decisions) is the first window from which
    the agent stays within ``margin`` of the fixed agent's loss
    (:func:`tom_envs.partners.regret.adaptation`); the total sums the first ``windows_after``
    windows every episode has."""
    from tom_envs.partners.regret import mean_windows, round_rewards, window_sums

    t0 = time.perf_counter()
    lo, hi = parse_at(at)
    partner = f"switch:a={a}:b={b}:at={lo}-{hi}:key={key}"
    oa, ob = plan.members[a], plan.members[b]
    pseat = f"player_{plan.seats.index('{partner}')}"
    fseats = [f"player_{i}" for i in plan.focal_seats]
    groups = ("adaptive", "oracle", "fixed")
    losses: dict[str, list[dict[int, float]]] = {g: [] for g in groups}
    rewards: dict[str, list[dict[int, float]]] = {g: [] for g in groups}
    share: dict[str, list[float]] = {"a_before": [], "b_after": []}
    failures = 0
    adaptive = learner()  # one object (its arms built once); it forgets at every episode
    for s in seeds:
        focal = {"adaptive": adaptive, "oracle": f"switch:a={oa}:b={ob}:at={lo}-{hi}:key={key}",
                 "fixed": oa}  # fmt: skip
        eps = {g: _play_episode(plan, focal[g], partner, s) for g in groups}
        t_s = {int(e.switch[pseat]["at_decision"]) for e in eps.values()}
        if len(t_s) != 1:
            raise RuntimeError(f"seed {s}: the partner's switch point differs between groups {t_s}")
        t_sw = t_s.pop()
        series = {g: round_rewards(e, pseat, fseats) for g, e in eps.items()}
        n = max(len(v) for v in series.values())
        series = {g: _pad(v, n) for g, v in series.items()}
        for g in groups:
            loss = [o - x for o, x in zip(series["oracle"], series[g], strict=True)]
            losses[g].append(window_sums(loss, t_sw, width, before))
            rewards[g].append(window_sums(series[g], t_sw, width, before))
        _arm_shares(adaptive, oa, ob, t_sw, share)
        failures += int(getattr(adaptive, "shadow_failures", 0))
    k = min(sum(1 for j in w if j >= 0) for w in losses["fixed"])
    rows = {}
    for g in groups:
        ad = adaptation(losses[g], losses["fixed"], width, seed, margin=margin)
        post = [sum(w[j] for j in range(k)) for w in losses[g]]
        rows[g] = {"windows": ad.windows, "tau": ad.tau, "tau_ci": ad.tau_ci,
                   "censored": ad.censored_share, "post": _ci(post, seed + 1)}  # fmt: skip
    reward = {g: mean_windows(v) for g, v in rewards.items()}
    arm_share = {k2: float(np.mean(v)) if v else math.nan for k2, v in share.items()}
    return WithinSwitchResult(a, b, at, width, [int(x) for x in seeds],
                              str(getattr(adaptive, "name", "adaptive")), rows, reward, k,
                              arm_share, 3 * len(seeds), time.perf_counter() - t0, failures,
                              tuple(getattr(adaptive, "arms", ())))  # fmt: skip


__all__ = ["ORACLE_SPEC", "ROOM_TYPES", "SW_UCB_XI", "UCB_C", "GroupsPlan", "GroupsResult",
           "SelectorAgent", "SessionSwitchOracle", "SlidingUCBAgent", "SwitchResult",
           "TypeBasedAgent", "WithinSwitchResult", "order_verdict", "play_groups", "play_switch",
           "play_u", "play_within_switch", "reference_policy", "room_types"]  # fmt: skip
