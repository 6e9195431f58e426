"""One person playing one seat of one game beside agents: the state machine behind the web app.

A :class:`Session` owns an AEC env (the same rules and validation as every other use of the
suite), the partner agents, and the record of the episode. It only ever renders the human seat's
**player view** (:meth:`payload`): the text an LLM would get, the legal actions, the game's board
drawn from that view, and the chat. Partners act through the agent API exactly as in
:mod:`tom_envs.runner` (a partner that raises or answers illegally is recorded and replaced by a
seeded random legal action), so a session is recorded as the suite's standard trajectory, with the
human's decisions marked ``"human": true`` and the human seat's agent spec ``"human"``.

Every submission carries the decision index it answers (``step``); a stale or duplicate one is
rejected with a message and changes nothing. A session whose player leaves is recorded as
abandoned (its trajectory kept, ``metrics["abandoned"] = 1``); one that ends is recorded complete.
"""

from __future__ import annotations

import dataclasses
import importlib
import time
import traceback
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tom_envs.core.agents import Agent, AgentAction, EpisodeInfo, Turn, as_agent_action
from tom_envs.core.game import IllegalActionError, agent_index
from tom_envs.registration import GameSpec, game_spec
from tom_envs.runner import Episode, probe_accuracy, usage_totals

HUMAN = "human"


class SessionError(ValueError):
    """A submission that cannot be applied (stale, duplicate, illegal, or the episode is over)."""


def board_module(spec: GameSpec) -> Any:
    """The game's ``board.py`` (``board_svg(bundle, view)``)."""
    return importlib.import_module(spec.module.rsplit(".", 1)[0] + ".board")


class Session:
    """A human seat in a game, partners in the others.

    Args:
        game: registered game name or id.
        seat: the human's seat.
        partners: one agent spec (or agent object) per *other* seat, in seat order.
        seed: the episode seed.
        env_kwargs: game keyword arguments.
        out_dir: where the trajectory is written when the session ends or is abandoned.
        participant: a participant id (study mode), recorded in the trajectory.
        task: the study task's name, if any.
    """

    def __init__(
        self,
        game: str,
        seat: int,
        partners: Sequence[str | Agent],
        seed: int = 0,
        env_kwargs: Mapping[str, Any] | None = None,
        out_dir: str | Path | None = None,
        participant: str | None = None,
        task: str | None = None,
    ) -> None:
        from tom_envs.agents import make_agent

        base = game_spec(game)
        self.spec = dataclasses.replace(base, kwargs={**base.kwargs, **(env_kwargs or {})})
        self.env_kwargs = dict(env_kwargs or {})
        self.env = self.spec.load().raw_env(**self.spec.kwargs)
        self.bundle = self.env.bundle
        self.game = self.env.game
        n = self.game.num_players
        if not 0 <= seat < n:
            raise ValueError(f"{self.spec.name} has seats 0..{n - 1}, got {seat}")
        if len(partners) != n - 1:
            raise ValueError(f"{self.spec.name} needs {n - 1} partners, got {len(partners)}")
        self.seat = seat
        self.human_agent = f"player_{seat}"
        others = [s for s in range(n) if s != seat]
        self.agents: dict[int, Agent] = {}
        self.specs: dict[int, str] = {seat: HUMAN}
        for s, p in zip(others, partners, strict=True):
            self.agents[s] = make_agent(p, self.spec, self.bundle) if isinstance(p, str) else p
            self.specs[s] = p if isinstance(p, str) else str(getattr(p, "name", type(p).__name__))
        self.id = uuid.uuid4().hex[:12]
        self.seed = seed
        self.out_dir = Path(out_dir) if out_dir is not None else None
        self.participant, self.task = participant, task
        self.status = "playing"  # "playing", "done", "abandoned"
        self.last_seen = time.monotonic()
        self.error: str | None = None
        self.env.reset(seed=seed)
        self._fallback = np.random.default_rng([seed, 7919])
        self._decisions = dict.fromkeys(self.env.possible_agents, 0)
        self._joint = 0
        self.episode = Episode(self.spec.id, seed, {f"player_{s}": self.specs[s] for s in range(n)},
                               self.env_kwargs)  # fmt: skip
        self.episode.metrics["human_seat"] = float(seat)
        self._t0 = time.perf_counter()
        for s, agent in self.agents.items():
            agent.reset(self._info(s))
        self.step = 0  # the human's decision index the next submission must carry
        self._advance()

    # ------------------------------------------------------------------ internals
    def _info(self, s: int) -> EpisodeInfo:
        g = self.game
        return EpisodeInfo(self.spec.id, f"player_{s}", s, g.num_players, g.num_actions, self.seed,
                           g.reward_range, g.max_steps, g.tags)  # fmt: skip

    def _turn(self, agent: str) -> Turn:
        env = self.env
        obs = env.observe(agent)
        return Turn(agent, agent_index(agent), env.view(agent), obs["observation"], obs["action_mask"],
                    float(env._cumulative_rewards.get(agent, 0.0)), self._decisions[agent],
                    lambda a=agent: env.text_observation(a),
                    lambda text, a=agent: env.parse_action(a, text))  # fmt: skip

    def _over(self) -> bool:
        env = self.env
        return not env.agents or all(env.terminations[a] or env.truncations[a] for a in env.agents)

    def _apply(self, agent: str, action: int, record: dict[str, Any], message: str | None) -> None:
        env = self.env
        if message:
            env.send_message(agent, message)
            record["message"] = message
        before = env.game_state
        env.step(int(action))
        self._decisions[agent] += 1
        if env.game_state is not before:
            self._joint += 1
            record["rewards"] = {a: float(env.rewards.get(a, 0.0)) for a in env.possible_agents}
            for a, r in record["rewards"].items():
                self.episode.returns[a] = self.episode.returns.get(a, 0.0) + r
        else:
            record["rewards"] = None
        self.episode.steps.append(record)

    def _partner_move(self, agent: str) -> None:
        """One partner decision, recorded as the runner records it; failures never corrupt."""
        s = agent_index(agent)
        turn = self._turn(agent)
        record: dict[str, Any] = {"index": len(self.episode.steps), "joint_step": self._joint,
                                  "agent": agent}  # fmt: skip
        start = time.perf_counter()
        error = None
        try:
            choice = as_agent_action(self.agents[s].act(turn))
        except Exception as exc:  # a failing partner is recorded, never fatal
            choice = AgentAction(action=None, valid=False)
            error = f"{type(exc).__name__}: {exc}"
            record["traceback"] = traceback.format_exc(limit=3)
        record["latency_s"] = time.perf_counter() - start
        legal = turn.legal_actions
        action, valid = choice.action, choice.valid
        if action is None or int(action) not in legal:
            error = error or f"illegal action {action!r}; legal: {list(legal)}"
            action, valid = int(legal[int(self._fallback.integers(len(legal)))]), False
        if not valid:
            self.episode.invalid[agent] = self.episode.invalid.get(agent, 0) + 1
        record.update(action=int(action), action_text=self.bundle.text.action_text(turn.view, int(action)),
                      valid=valid, prediction=choice.prediction, info=choice.info)  # fmt: skip
        if error:
            record["error"] = error
        message = choice.message if self.game.tags.communication else None
        try:
            self._apply(agent, int(action), record, message)
        except IllegalActionError as exc:  # a bad message: drop it, keep the action
            record["message_error"] = str(exc)
            record.pop("message", None)
            self._apply(agent, int(action), record, None)

    def _advance(self) -> None:
        """Let partners act (and dead seats pass) until the human must act or the episode ends."""
        env = self.env
        guard = 0
        while not self._over() and guard < 100_000:
            guard += 1
            agent = env.agent_selection
            if env.terminations[agent] or env.truncations[agent]:
                env.step(None)
                continue
            if agent == self.human_agent:
                return
            self._partner_move(agent)
        self._finish("done")

    def _finish(self, status: str) -> None:
        if self.status != "playing":
            return
        self.status = status
        ep = self.episode
        ep.length = self._joint
        for a in self.env.possible_agents:
            ep.returns.setdefault(a, 0.0)
            ep.invalid.setdefault(a, 0)
        ep.metrics.update(probe_accuracy(ep.steps))
        ep.metrics.update(usage_totals(ep.steps))
        ep.metrics["abandoned"] = float(status == "abandoned")
        if status == "done":
            hook = getattr(self.spec.load(), "episode_metrics_hook", None)
            if hook is not None:
                agents = [self.agents.get(s) for s in range(self.game.num_players)]
                try:
                    ep.metrics.update(hook()(self.bundle, ep, agents))
                except Exception as exc:  # metrics never lose the episode
                    ep.metrics["metrics_error"] = f"{type(exc).__name__}: {exc}"  # type: ignore[assignment]
        ep.wall_time_s = time.perf_counter() - self._t0
        if self.out_dir is not None:
            ep.write(self.path)

    @property
    def path(self) -> Path:
        """The trajectory file of this session."""
        who = f"{self.participant}-" if self.participant else ""
        return Path(self.out_dir or ".") / f"{who}{self.spec.name}-{self.id}.jsonl"

    # ------------------------------------------------------------------ API
    def payload(self) -> dict[str, Any]:
        """What the human's browser gets: only the human seat's view, rendered."""
        view = self.env.view(self.human_agent)
        text = self.bundle.text
        acting = self.status == "playing" and self.env.agent_selection == self.human_agent
        legal = []
        if acting:
            legal = [{"id": int(a), "text": t} for a, t in text.legal_actions_text(view).items()]
        obs = text.text_observation(view)
        return {
            "session": self.id,
            "game": self.spec.name,
            "seat": self.seat,
            "step": self.step,
            "status": self.status,
            "your_turn": acting,
            "rules": obs.rules,
            "observation": obs.observation,
            "legal": legal,
            "chat": bool(self.game.tags.communication),
            "board": board_module(self.spec).board_svg(self.bundle, view),
            "returns": {a: round(v, 3) for a, v in self.episode.returns.items()},
            "error": self.error,
            "task": self.task,
        }

    def submit(self, step: int, action: int, message: str | None = None) -> dict[str, Any]:
        """Apply the human's action for decision ``step``; raises :class:`SessionError` if it
        cannot be applied (the state is then unchanged)."""
        self.last_seen = time.monotonic()
        if self.status != "playing":
            raise SessionError(f"the episode is {self.status}: no more actions")
        if step != self.step:
            raise SessionError(f"stale or duplicate submission for decision {step}; the current "
                               f"decision is {self.step}")  # fmt: skip
        if self.env.agent_selection != self.human_agent:
            raise SessionError("it is not your turn")
        view = self.env.view(self.human_agent)
        if (
            not isinstance(action, int)
            or isinstance(action, bool)
            or action not in view.legal_actions
        ):
            raise SessionError(f"action {action!r} is not legal now")
        if message and not self.game.tags.communication:
            raise SessionError(f"{self.spec.name} has no chat")
        record: dict[str, Any] = {"index": len(self.episode.steps), "joint_step": self._joint,
                                  "agent": self.human_agent, "human": True,
                                  "observation_text": self.bundle.text.observation_text(view),
                                  "latency_s": 0.0}  # fmt: skip
        record.update(action=int(action), action_text=self.bundle.text.action_text(view, int(action)),
                      valid=True, prediction=None, info={})  # fmt: skip
        try:
            self._apply(self.human_agent, int(action), record, message or None)
        except IllegalActionError as exc:  # e.g. a malformed message: nothing was applied
            raise SessionError(str(exc)) from None
        self.step += 1
        self._advance()
        return self.payload()

    def abandon(self) -> None:
        """Record the episode as abandoned (the person left)."""
        self._finish("abandoned")
