"""The one episode driver: seats agents, applies the failure policy, delivers chat, scores probes
and records every decision. Every loop that plays agents through a game goes through it.

Users: :func:`tom_envs.runner.play_episode` (``tom-envs run``, ``demo``, ``eval``, the RL
baselines' evaluation), the Gymnasium single-agent view (:mod:`tom_envs.single_agent`: the
learner's seat is *external*), the web app (the person's seat is external), the QA generator, and,
through the step primitive :func:`decide`, the MAPPO collector's vectorised loop.

API::

    driver = EpisodeDriver(game, agents, seed, env_kwargs, policy=FailurePolicy())
    driver.start()                 # env.reset(seed), every seated agent reset (EpisodeInfo)
    agent = driver.advance()       # seated agents act until an external seat must act: its
                                   # name ("player_k"), or None when the episode is over
    turn = driver.turn(agent)      # that seat's Turn (view, vector, mask, text layer)
    driver.play(agent, action, message=None, record={"human": True})   # the external move
    episode = driver.finish()      # an Episode (tom_envs.records): returns, counts, metrics, status
    episode = driver.run()         # all of the above for a fully seated game

``agents`` has one entry per seat: an :class:`~tom_envs.core.agents.Agent`, or ``None`` for an
external seat (a person in the web app, the learner of a Gymnasium view). :meth:`EpisodeDriver.play`
validates an external move (an illegal action or message raises
:class:`~tom_envs.core.game.IllegalActionError` and changes nothing).

**Failure policy** (:class:`FailurePolicy`, one for every command). A seated agent's decision goes
through :func:`decide`: an exception, an illegal answer, or an answer the agent itself flags
``valid=False`` is a *failure* of one kind of :data:`~tom_envs.core.agents.FAILURE_KINDS`. With
``on_failure="fallback"`` (run, eval, the web app, QA) a seeded random legal action
(:func:`fallback_rng`) is played and recorded ``"fallback": true`` with ``"failure": {"kind",
"message"}``: never as the agent's own. An agent that plays a fallback of its own (an LLM agent
after its re-prompts) reports ``valid=False`` and the kind; its move is recorded the same way.
With ``on_failure="raise"`` (training loops: a failing partner bot is a bug) the failure raises
:class:`AgentFailure`. An episode in which some seat's fallback share exceeds
``max_fallback_share`` (default 20%) is finished with status ``"failed"`` and the reason: it is
written under ``failed/`` and is never a result (:mod:`tom_envs.runner`).

**Forfeits** (``tom-envs bench --on-invalid forfeit``). An agent that flags its invalid answer
with ``info["forfeit"] = True`` (the LLM agent's ``fallback="forfeit"``) plays no move of its own:
where the game declares a no-op legal at that moment (its ``noop_action(view)`` hook,
:func:`tom_envs.core.contract.noop_hook`) the seat plays it, recorded ``"forfeit": "turn"``;
otherwise nothing is played, the step is recorded ``"forfeit": "episode"`` (``action`` None) and
every seat's episode ends there (terminated; the game's metrics hook is not run on it). Neither
counts as a fallback; both count as invalid, and the episode's metrics hold
``forfeit_turns/<seat>`` and ``forfeit_episode/<seat>``.

**Probes** (:mod:`tom_envs.core.probes`). A seated agent with ``answer_probes`` is asked the
game's probes at their moment: at its decision (before the move is applied) or right after its
action (``probe_moment``), with the truths of that same moment. The driver shuffles a step's
probes (``default_rng([seed, PROBE_SALT, step index])``), hands the agent answer-free
:class:`~tom_envs.core.probes.Question` objects and a turn of that moment whose text is rendered
in advance (no closure leads back to the env), and records each question, its position, the
reply and the truth in the step's ``"probes"`` (with ``"probe_moment"``). A failing answer is
recorded as ``probe_error``, never fatal.

**Identity** (what a result belongs to: :func:`~tom_envs.identity.episode_config`,
:func:`~tom_envs.identity.config_hash`, ...) lives in :mod:`tom_envs.identity`.

The web app (:mod:`tom_envs.serve.session`) seats the person as the external seat and plays
partners through :meth:`EpisodeDriver.advance`; the QA generator (:mod:`tom_envs.qa.generate`)
plays its scenario episodes with ``on_failure="raise"`` and asks one-step bot answers through
:func:`decide`, so a key is never a fallback move.
"""

from __future__ import annotations

import dataclasses
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tom_envs.core.agents import (
    FAILURE_KINDS,
    Agent,
    AgentAction,
    AgentFailure,
    EpisodeInfo,
    Turn,
    as_agent_action,
    env_turn,
    make_turn,
)
from tom_envs.core.game import IllegalActionError, ParseResult, agent_index
from tom_envs.core.probes import probe_moment
from tom_envs.identity import resolved_env_kwargs

#: The salt of the fallback generator: the fallback of seed ``s`` draws from
#: ``default_rng([s, FALLBACK_SALT])`` everywhere (one constant, here only).
FALLBACK_SALT = 7919

#: Episode seeds drawn from a generator (Gymnasium views, RL collectors) lie in ``[0, MAX_SEED)``.
MAX_SEED = 2**31 - 1

#: The salt of the generator that shuffles a step's probes: ``default_rng([seed, PROBE_SALT,
#: step index])``.
PROBE_SALT = 104729

#: The share of a seat's decisions that may be fallbacks before its episode is failed.
DEFAULT_MAX_FALLBACK_SHARE = 0.2

__all__ = [
    "DEFAULT_MAX_FALLBACK_SHARE",
    "FAILURE_KINDS",
    "FALLBACK_SALT",
    "MAX_SEED",
    "PROBE_SALT",
    "AgentFailure",
    "Decision",
    "EpisodeDriver",
    "FailurePolicy",
    "classify_exception",
    "decide",
    "draw_episode_seed",
    "episode_info",
    "fallback_rng",
]


def draw_episode_seed(rng: np.random.Generator) -> int:
    """The next episode seed from a run's generator (every view and collector draws the same way)."""
    return int(rng.integers(MAX_SEED))


def fallback_rng(seed: int | None) -> np.random.Generator:
    """The generator of an episode's fallback moves (seeded from the episode seed)."""
    return np.random.default_rng(None if seed is None else [int(seed), FALLBACK_SALT])


@dataclass(frozen=True)
class FailurePolicy:
    """What a failed decision does (see the module docstring).

    Attributes:
        on_failure: ``"fallback"`` (play a seeded random legal action, recorded as a fallback) or
            ``"raise"`` (raise :class:`AgentFailure`).
        max_fallback_share: an episode where any seat's fallback share exceeds this is failed.
    """

    on_failure: str = "fallback"
    max_fallback_share: float = DEFAULT_MAX_FALLBACK_SHARE

    def __post_init__(self) -> None:
        if self.on_failure not in ("fallback", "raise"):
            raise ValueError(f"on_failure must be 'fallback' or 'raise', got {self.on_failure!r}")
        if not 0.0 <= float(self.max_fallback_share) <= 1.0:
            raise ValueError(
                f"max_fallback_share must be in [0, 1], got {self.max_fallback_share!r}"
            )


def classify_exception(exc: BaseException) -> str:
    """The failure kind of an exception raised by an agent (or a model client)."""
    if isinstance(exc, AgentFailure):
        return exc.kind
    kind = getattr(exc, "kind", None)  # clients may tag their errors with a kind
    if isinstance(kind, str) and kind in FAILURE_KINDS:
        return kind
    text = f"{type(exc).__name__} {exc}".lower()
    if "context" in text and ("length" in text or "overflow" in text or "window" in text):
        return "context_overflow"
    if isinstance(exc, (ConnectionError, TimeoutError)) or "connection refused" in text:
        return "endpoint"
    return "exception"


def _signalled_failure(choice: AgentAction) -> tuple[str, str]:
    """The (kind, message) an agent attached to an answer it flagged invalid."""
    info = choice.info if isinstance(choice.info, Mapping) else {}
    failure = info.get("failure")
    kind = choice.failure
    message = ""
    if isinstance(failure, Mapping):
        kind = kind or failure.get("kind")
        message = str(failure.get("message", ""))
    if kind not in FAILURE_KINDS:
        kind = "invalid"
    return str(kind), message or "the agent reported its own output invalid"


@dataclass
class Decision:
    """One seated decision after the failure policy.

    Attributes:
        action: the action played (the agent's own, or a fallback).
        choice: the agent's answer (normalised; ``action=None`` when it raised).
        fallback: True when ``action`` is not the agent's own valid choice.
        failure: ``{"kind", "message"}`` when ``fallback``.
        latency_s: time spent in the agent's ``act``.
        traceback: the agent's traceback when it raised.
    """

    action: int
    choice: AgentAction
    fallback: bool = False
    failure: dict[str, str] | None = None
    latency_s: float = 0.0
    traceback: str | None = None


def decide(
    agent: Agent, turn: Turn, rng: np.random.Generator, policy: FailurePolicy | None = None
) -> Decision:
    """Ask ``agent`` for ``turn``'s action and apply the failure policy (the step primitive)."""
    policy = policy or FailurePolicy()
    start = time.perf_counter()
    tb = None
    failure: dict[str, str] | None = None
    try:
        choice = as_agent_action(agent.act(turn))
    except Exception as exc:  # an agent's failure is recorded (or re-raised by policy)
        if policy.on_failure == "raise":
            if isinstance(exc, AgentFailure):
                raise
            raise AgentFailure(classify_exception(exc), f"{type(exc).__name__}: {exc}") from exc
        choice = AgentAction(action=None, valid=False)
        text = exc.message if isinstance(exc, AgentFailure) else f"{type(exc).__name__}: {exc}"
        failure = {"kind": classify_exception(exc), "message": text}
        tb = traceback.format_exc(limit=3)
    latency = time.perf_counter() - start
    legal = turn.legal_actions
    action = choice.action
    own_legal = action is not None and is_int(action) and int(action) in legal
    if failure is None and not own_legal:
        failure = {"kind": "illegal", "message": f"illegal action {action!r}; legal: {list(legal)}"}
    elif failure is None and not choice.valid:
        kind, message = _signalled_failure(choice)
        failure = {"kind": kind, "message": message}
    if failure is not None and policy.on_failure == "raise":
        raise AgentFailure(failure["kind"], f"{turn.agent}: {failure['message']}")
    if not own_legal:
        action = int(legal[int(rng.integers(len(legal)))])
    return Decision(int(action), choice, failure is not None, failure, latency, tb)  # type: ignore[arg-type]


def is_int(x: Any) -> bool:
    """An integer action (Python or numpy), not a bool."""
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def episode_info(
    spec: Any,
    game: Any,
    player: int,
    seed: int | None,
    env_kwargs: Mapping[str, Any] | None = None,
    observation_shape: tuple[int, ...] | None = None,
    session: Any = None,
) -> EpisodeInfo:
    """What the agent at ``player`` is told when an episode starts (every driver tells the same)."""
    return EpisodeInfo(
        env_id=spec.id,
        agent=f"player_{player}",
        player=player,
        num_players=game.num_players,
        num_actions=game.num_actions,
        seed=seed,
        reward_range=game.reward_range,
        max_steps=game.max_steps,
        tags=game.tags,
        env_kwargs=env_kwargs,
        observation_shape=observation_shape,
        game_config=getattr(game, "config", None),
        session=session,
    )


# ------------------------------------------------------------------------------------ driver
@dataclass
class _Counts:
    decisions: dict[str, int] = field(default_factory=dict)
    fallbacks: dict[str, int] = field(default_factory=dict)
    failures: dict[str, dict[str, int]] = field(default_factory=dict)
    first_failure: dict[str, str] = field(default_factory=dict)
    #: per seat: forfeited turns and episodes (``{"turn": n, "episode": 1}``)
    forfeits: dict[str, dict[str, int]] = field(default_factory=dict)


class EpisodeDriver:
    """Plays one seeded episode of a game; see the module docstring.

    Args:
        game: a :class:`~tom_envs.registration.GameSpec` or a game name/id.
        agents: one agent per seat, ``None`` for an external seat.
        seed: the episode seed (``env.reset(seed)``, every agent's generator, the fallbacks).
        env_kwargs: overrides of the game's keyword arguments.
        env: an AEC env of that game to reuse (made when omitted).
        policy: the failure policy.
        record_steps: keep one record per decision (off: returns and counts only; faster).
        record_text: also record each text observation (the writer stores each once).
        record_observations: also record the vector observation.
        predict: ``"off"``, ``"all"`` or ``"every:K"``: ask every seated agent that has
            ``predict_partner`` what each other seat will do next, after its action (open
            next-action probes, :mod:`tom_envs.partners.prediction`; ``every:K``: only at the
            agent's decisions 0, K, 2K, ..., fixed before play), and record the known policy
            of every seat that exposes ``action_probs``.
        session: the :class:`~tom_envs.core.agents.SessionInfo` of a session's episode (every
            seated agent is told; recorded in the summary).
    """

    def __init__(
        self,
        game: Any,
        agents: Sequence[Agent | None],
        seed: int | None,
        env_kwargs: Mapping[str, Any] | None = None,
        *,
        env: Any = None,
        policy: FailurePolicy | None = None,
        record_steps: bool = True,
        record_text: bool = False,
        record_observations: bool = False,
        predict: str = "off",
        session: Any = None,
    ) -> None:
        from tom_envs.partners.prediction import predict_every
        from tom_envs.registration import GameSpec, game_spec

        predict_every(predict)  # a clear error for a bad value
        self.predict = predict
        self.session = session

        self.spec = game if isinstance(game, GameSpec) else game_spec(game)
        self.env_kwargs = dict(env_kwargs or {})
        if env is None:
            env = self.spec.load().raw_env(**{**self.spec.kwargs, **self.env_kwargs})
        self.env = env.unwrapped
        self.game = self.env.game
        self.agents_ = list(self.env.possible_agents)
        if len(agents) != len(self.agents_):
            raise ValueError(
                f"{self.spec.name} has {len(self.agents_)} seats, got {len(agents)} agents"
            )
        self.seats: list[Agent | None] = list(agents)
        self.seed = seed
        self.policy = policy or FailurePolicy()
        self.record_steps = record_steps
        self.record_text = record_text
        self.record_observations = record_observations
        self._resolved: dict[str, Any] | None = None
        self._moment = probe_moment(self.env.bundle.probes)
        self.steps: list[dict[str, Any]] = []
        self.returns: dict[str, float] = {}
        self.reward_since: dict[str, float] = {}
        self.joint_steps = 0
        self._started = False

    # ----------------------------------------------------------------- setup
    @property
    def resolved_kwargs(self) -> dict[str, Any]:
        """Every game argument with its default resolved (computed once)."""
        if self._resolved is None:
            self._resolved = resolved_env_kwargs(self.spec, self.env_kwargs)
        return self._resolved

    def start(self) -> None:
        """Reset the env with the seed and tell every seated agent about the episode."""
        env = self.env
        env.reset(seed=self.seed)
        self.rng = fallback_rng(self.seed)
        self.decisions = dict.fromkeys(self.agents_, 0)
        self.returns = dict.fromkeys(self.agents_, 0.0)
        self.reward_since = dict.fromkeys(self.agents_, 0.0)
        self.invalid = dict.fromkeys(self.agents_, 0)
        self.counts = _Counts(
            dict.fromkeys(self.agents_, 0),
            dict.fromkeys(self.agents_, 0),
            {a: {} for a in self.agents_},
        )
        self.steps = []
        self.joint_steps = 0
        self.forfeited_by: str | None = None
        self._t0 = time.perf_counter()
        shape = tuple(int(x) for x in self.env.bundle.encoder.observation_shape)
        kwargs = self.resolved_kwargs
        for i, agent in enumerate(self.seats):
            if agent is not None:
                agent.reset(
                    episode_info(self.spec, self.game, i, self.seed, kwargs, shape, self.session)
                )
        self._started = True

    # ----------------------------------------------------------------- turns
    def over(self) -> bool:
        """True once every seat is terminated or truncated."""
        env = self.env
        return not env.agents or all(env.terminations[a] or env.truncations[a] for a in env.agents)

    def turn(self, agent: str) -> Turn:
        """The Turn of ``agent`` now (its view in every form)."""
        reward = float(self.reward_since.get(agent, 0.0))
        return env_turn(self.env, agent, reward=reward, decision=self.decisions[agent])

    def advance(self) -> str | None:
        """Seated agents act (dead seats pass) until an external seat must act, or the end.

        Returns that seat's name, or ``None`` when the episode is over.
        """
        return self.advance_until(None)

    def advance_until(self, stop: Callable[[str], bool] | None) -> str | None:
        """:meth:`advance`, also stopping before a seated agent's move when ``stop(agent)``."""
        if not self._started:
            self.start()
        env = self.env
        while not self.over():
            agent = env.agent_selection
            if env.terminations[agent] or env.truncations[agent]:
                self._end_turn(agent)
                env.step(None)
                continue
            if self.seats[agent_index(agent)] is None or (stop is not None and stop(agent)):
                return agent
            self._seated_move(agent)
        return None

    def _end_turn(self, agent: str) -> None:
        obj = self.seats[agent_index(agent)]
        end = getattr(obj, "end_episode", None) if obj is not None else None
        if end is not None:
            end(self.turn(agent))

    def _new_record(self, agent: str) -> dict[str, Any]:
        record: dict[str, Any] = {
            "index": len(self.steps),
            "joint_step": self.joint_steps,
            "agent": agent,
        }
        if self.record_text:
            record["observation_text"] = self.env.text_observation(agent).observation
        if self.record_observations:
            record["observation"] = self.env.observe(agent)["observation"]
        return record

    def _seated_move(self, agent: str) -> None:
        env = self.env
        obj = self.seats[agent_index(agent)]
        assert obj is not None
        turn = self.turn(agent)
        record = self._new_record(agent) if self.record_steps else {}
        if self.predict != "off" and self.record_steps:
            from tom_envs.partners.prediction import record_policy

            record_policy(obj, turn, record)
        d = decide(obj, turn, self.rng, self.policy)
        choice = d.choice
        forfeit = self._forfeit(d, turn)
        c = self.counts
        c.decisions[agent] += 1
        if d.fallback:
            assert d.failure is not None
            if forfeit is None:
                c.fallbacks[agent] += 1
            else:
                forfeits = c.forfeits.setdefault(agent, {})
                forfeits[forfeit] = forfeits.get(forfeit, 0) + 1
            self.invalid[agent] += 1
            kinds = c.failures[agent]
            kinds[d.failure["kind"]] = kinds.get(d.failure["kind"], 0) + 1
            c.first_failure.setdefault(agent, f"{d.failure['kind']}: {d.failure['message']}")
        if self.record_steps:
            record["latency_s"] = round(d.latency_s, 6)
            record.update(
                action=d.action,
                action_text=env.bundle.text.action_text(turn.view, d.action),
                valid=not d.fallback,
                prediction=choice.prediction,
                info=choice.info,
            )
            if forfeit is not None:
                record["forfeit"] = forfeit
                record["failure"] = d.failure
            elif d.fallback:
                record["fallback"] = True
                record["failure"] = d.failure
                if d.failure and d.failure["kind"] != "invalid":  # what went wrong, in words
                    record["error"] = d.failure["message"]
            if d.traceback is not None:
                record["traceback"] = d.traceback
        if forfeit == "episode":
            self._lose_episode(agent, record)
            return
        if self.record_steps:
            if self.predict != "off":
                from tom_envs.partners.prediction import record_class

                record_class(self, record, d.action)
            if self._moment == "decision":  # the state the agent decided on (nothing moved yet)
                self._ask_probes(agent, obj, record, self.decisions[agent])
            if self.predict != "off" and getattr(obj, "predict_partner", None) is not None:
                from tom_envs.partners.prediction import ask_next_action

                ask_next_action(self, agent, obj, turn, record)  # after the action, before the step
        self._step(agent, d.action, record, choice.message)
        if self.record_steps and self._moment == "action":  # the state its action left
            self._ask_probes(agent, obj, record, self.decisions[agent] - 1)

    def _forfeit(self, d: Decision, turn: Turn) -> str | None:
        """How an illegal answer is forfeited, when the agent asked for it (``info["forfeit"]``:
        ``tom-envs bench --on-invalid forfeit``): ``"turn"`` where the game declares a no-op
        legal now (:func:`tom_envs.core.contract.noop_hook`; the decision's move becomes it),
        else ``"episode"`` (the episode is lost there). None otherwise (a fallback as usual)."""
        info = d.choice.info
        if not (d.fallback and isinstance(info, Mapping) and info.get("forfeit") is True):
            return None
        hook = getattr(self.spec.load(), "noop_action", None)
        noop = hook(turn.view) if hook is not None else None
        if noop is not None and int(noop) in turn.legal_actions:
            d.action = int(noop)
            return "turn"
        return "episode"

    def _lose_episode(self, agent: str, record: dict[str, Any]) -> None:
        """``agent`` forfeited the episode: nothing is played for its answer, every seat's episode
        ends here (terminated, as PettingZoo's ``TerminateIllegalWrapper`` ends a game)."""
        self.forfeited_by = agent
        if self.record_steps:
            record.update(action=None, action_text="", rewards=None)
            self.steps.append(record)
        env = self.env
        env.terminations = dict.fromkeys(env.agents, True)
        env.truncations = dict.fromkeys(env.agents, False)

    def _ask_probes(self, agent: str, obj: Any, record: dict[str, Any], decision: int) -> None:
        """Put the game's probes for ``agent`` at this moment to a seated agent that answers
        them (:mod:`tom_envs.core.probes`): shuffled from the episode seed and the step, as
        answer-free questions, with a turn of this moment that has no path to the game state;
        the answers are scored against the truths of the same moment."""
        answer_probes = getattr(obj, "answer_probes", None)
        if answer_probes is None:
            return
        probes = self.env.probes(agent)
        if not probes:
            return
        from tom_envs.core.probes import ask, score_asked

        rng = np.random.default_rng(
            None if self.seed is None else [int(self.seed), PROBE_SALT, int(record["index"])]
        )
        asked = ask(probes, rng)
        try:
            answers = answer_probes(self._probe_turn(agent, decision), [q for q, _ in asked])
        except Exception as exc:  # a failing probe answer is recorded, never fatal
            answers = {}
            record["probe_error"] = f"{type(exc).__name__}: {exc}"
        record["probes"] = score_asked(asked, answers if isinstance(answers, Mapping) else {})
        record["probe_moment"] = self._moment

    def _probe_turn(self, agent: str, decision: int) -> Turn:
        """``agent``'s turn now, for answering probes: its view, vector and text of this moment,
        the text rendered in advance (nothing in it leads back to the env or the game state) and
        no action to take."""
        env = self.env
        view = env.view(agent)
        obs = env.observe(agent)
        text = env.bundle.text.text_observation(view)
        return make_turn(
            agent, view, obs["observation"], obs["action_mask"], lambda: text, _no_action,
            decision=decision,
        )

    def play(
        self,
        agent: str,
        action: int,
        message: str | None = None,
        record: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """An external seat's move (validated: an illegal action or message raises
        :class:`IllegalActionError` and changes nothing). Returns its record."""
        env = self.env
        if env.agent_selection != agent or self.over():
            raise IllegalActionError(f"it is not {agent}'s turn")
        if self.seats[agent_index(agent)] is not None:
            raise IllegalActionError(f"{agent} is seated with an agent, not external")
        view = env.view(agent)
        if not is_int(action) or int(action) not in view.legal_actions:
            raise IllegalActionError(f"action {action!r} is not legal now for {agent}")
        if message and not self.game.tags.communication:
            raise IllegalActionError(f"{self.spec.name} has no chat")
        rec = self._new_record(agent) if self.record_steps else {}
        if self.record_steps:
            rec.update(
                latency_s=0.0,
                action=int(action),
                action_text=env.bundle.text.action_text(view, int(action)),
                valid=True,
                prediction=None,
                info={},
            )
            rec.update(record or {})
        if message:
            env.send_message(agent, message)  # raises before anything is applied
            if self.record_steps:
                rec["message"] = message
        self.counts.decisions[agent] += 1
        self._step(agent, int(action), rec, None)
        return rec

    def _step(self, agent: str, action: int, record: dict[str, Any], message: str | None) -> None:
        env = self.env
        if message is not None:
            if self.record_steps:
                record["message"] = message
            try:
                env.send_message(agent, message)
            except ValueError as exc:  # a bad message is recorded, the action still happens
                if self.record_steps:
                    record["message_error"] = str(exc)
        before = env.game_state
        env.step(int(action))
        self.decisions[agent] += 1
        self.reward_since[agent] = 0.0
        if env.game_state is not before:
            self.joint_steps += 1
            rewards = {a: float(env.rewards.get(a, 0.0)) for a in self.agents_}
            for a, r in rewards.items():
                self.returns[a] += r
                self.reward_since[a] += r
            if self.record_steps:
                record["rewards"] = rewards
        elif self.record_steps:
            record["rewards"] = None
        if self.record_steps:
            self.steps.append(record)

    # ----------------------------------------------------------------- end
    def failure_reason(self) -> str | None:
        """Why the episode fails the policy (a seat's fallback share over the bound), or None."""
        c = self.counts
        for agent in self.agents_:
            n, f = c.decisions[agent], c.fallbacks[agent]
            if n and f / n > self.policy.max_fallback_share:
                kinds = ", ".join(f"{k} {v}" for k, v in sorted(c.failures[agent].items()))
                return (
                    f"{agent} ({_agent_name(self.seats[agent_index(agent)])}) fell back on {f} of "
                    f"{n} decisions ({100 * f / n:.0f}% > {100 * self.policy.max_fallback_share:.0f}%;"
                    f" {kinds}); first: {c.first_failure.get(agent, '')}"
                )
        return None

    def _joint_step_of(self, agent: str, switch: Mapping[str, Any]) -> int | None:
        """The joint step of ``agent``'s switch decision (None: not reached, or not recorded)."""
        mine = [s for s in self.steps if s["agent"] == agent]
        at = int(switch.get("at_decision", -1))
        return int(mine[at]["joint_step"]) if 0 <= at < len(mine) else None

    def run(self) -> Any:
        """Play the whole episode (every seat seated) and return it."""
        self.start()
        external = self.advance()
        if external is not None:
            raise ValueError(f"{external} has no agent: use advance() and play() for it")
        return self.finish()

    def finish(self, status: str | None = None) -> Any:
        """The :class:`~tom_envs.records.Episode`, with counts, metrics and status.

        ``status`` overrides the policy's ``"ok"``/``"failed"`` (the web app's ``"abandoned"``).
        """
        from tom_envs.records import Episode, probe_accuracy, usage_totals

        names = {a: _agent_name(s) for a, s in zip(self.agents_, self.seats, strict=True)}
        ep = Episode(self.spec.id, self.seed, names, dict(self.env_kwargs))  # type: ignore[arg-type]
        ep.steps = self.steps
        ep.returns = dict(self.returns)
        ep.invalid = dict(self.invalid)
        ep.length = self.joint_steps
        ep.decisions = dict(self.counts.decisions)
        ep.fallbacks = dict(self.counts.fallbacks)
        ep.failures = {a: dict(v) for a, v in self.counts.failures.items() if v}
        for a, seat in zip(self.agents_, self.seats, strict=True):
            member = getattr(seat, "member", None)  # a population's draw (PopulationAgent)
            if isinstance(member, str):
                ep.members[a] = member
            switch = getattr(seat, "switch_info", None)  # a switching partner (for the scorer)
            if isinstance(switch, Mapping):
                ep.switch[a] = {**switch, "at_joint_step": self._joint_step_of(a, switch)}
        if self.session is not None:
            ep.session = dataclasses.asdict(self.session)
        reason = self.failure_reason()
        ep.status = status or ("failed" if reason else "ok")
        ep.failure = reason
        if self.record_steps:
            ep.metrics.update(probe_accuracy(ep.steps))
        for a in self.agents_:
            n = ep.decisions[a]
            if n:
                ep.metrics[f"fallback_pct/{a}"] = 100.0 * ep.fallbacks[a] / n
                ep.metrics.setdefault(
                    f"valid_action_pct/{a}", 100.0 - ep.metrics[f"fallback_pct/{a}"]
                )
        for a, lost in self.counts.forfeits.items():  # illegal answers forfeited (bench)
            ep.metrics[f"forfeit_turns/{a}"] = float(lost.get("turn", 0))
            ep.metrics[f"forfeit_episode/{a}"] = float(lost.get("episode", 0))
        if self.record_steps and self.forfeited_by is None:  # a lost episode has no game metrics
            hook = getattr(self.spec.load(), "episode_metrics_hook", None)
            if hook is not None:
                try:
                    ep.metrics.update(hook()(self.env.bundle, ep, self.seats))
                except Exception as exc:  # metrics must not lose the episode
                    ep.metrics["metrics_error"] = f"{type(exc).__name__}: {exc}"  # type: ignore[assignment]
        if self.record_steps:
            ep.metrics.update(usage_totals(ep.steps))
        ep.wall_time_s = time.perf_counter() - self._t0
        return ep


def _no_action(text: str) -> ParseResult:
    """The parser of a probe turn: no action is taken while answering probes."""
    return ParseResult(None, "no action can be taken while answering questions")


def _agent_name(agent: Any) -> str:
    if agent is None:
        return "external"
    return str(getattr(agent, "spec", None) or getattr(agent, "name", type(agent).__name__))
