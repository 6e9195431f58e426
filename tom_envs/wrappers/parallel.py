"""The PettingZoo Parallel text wrapper: every seat's prompt in, every seat's answer out."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from pettingzoo import ParallelEnv
from pettingzoo.utils.wrappers import BaseParallelWrapper

from tom_envs.core.game import IllegalActionError, TextObservation, agent_index, check_messages
from tom_envs.core.parallel import TomParallelEnv
from tom_envs.wrappers.answers import prompt_text, seat_info
from tom_envs.wrappers.spaces import TextObs, TextSpaces


class TextParallelEnv(TextSpaces, BaseParallelWrapper):
    """A tom_envs Parallel environment (simultaneous games) with text observations and actions.

    ``reset()`` and ``step(answers)`` return each seat's prompt (rules, observation, legal
    actions; see :class:`~tom_envs.wrappers.aec.TextAECEnv`); ``answers`` maps each seat to its
    free-text answer, read by the game's parser. The joint action is applied once every seat's
    answer names an action (its own, or a fallback); the infos are the AEC wrapper's.

    Under ``on_invalid="reask"``, a step in which some seats answered invalidly applies nothing:
    those seats get their prompt again with the feedback (and their action mask), the others keep
    the answer they gave (their mask is zeros) and the next ``step`` needs answers only from the
    seats re-asked (:attr:`awaiting`); answers from the other live seats are accepted and not
    read (counted as ``"unread"`` in :meth:`episode_record`: ask only the awaited seats to
    save the calls). Rewards of such a step are 0, or ``invalid_reward`` for an invalid answer.

    Args:
        env: a Parallel environment of the suite (``pettingzoo.make("parallel", ...)``).
        on_invalid, **policy: the invalid-answer policy, as for
            :class:`~tom_envs.wrappers.aec.TextAECEnv`.
    """

    _raw: TomParallelEnv
    wraps = (ParallelEnv, TomParallelEnv, "pettingzoo.make('parallel', 'tom_envs/...')")

    def _setup(self) -> None:
        self.possible_agents = list(self._raw.possible_agents)
        self.agents: list[str] = []
        self._tobs: dict[str, TextObservation] = {}  # each live seat's text now
        self._awaiting: set[str] = set()  # the seats whose answers the next step reads
        self._held: dict[str, dict[str, Any]] = {}  # answers naming an action, until the joint step
        self._last: dict[str, dict[str, Any]] = {}  # each seat's last answer record

    def _sampler(self, agent: str) -> Callable[[], Mapping[int, str] | None]:
        ref = weakref.ref(self)

        def legal() -> Mapping[int, str] | None:
            owner = ref()
            if owner is None or agent not in owner.agents or agent not in owner._tobs:
                return None
            return owner._tobs[agent].legal_actions

        return legal

    @property
    def unwrapped(self) -> TomParallelEnv:
        """The suite's Parallel env under every wrapper."""
        return self._raw

    @property
    def max_cycles(self) -> int | None:
        """The env's ``max_cycles`` (set through, as PettingZoo's ``parallel_api_test`` does)."""
        return self._raw.max_cycles

    @max_cycles.setter
    def max_cycles(self, value: int | None) -> None:
        self._raw.max_cycles = value

    @property
    def awaiting(self) -> list[str]:
        """The seats whose answers the next ``step`` reads (all live seats but after a re-ask)."""
        return [a for a in self.agents if a in self._awaiting]

    # ---------------------------------------------------------------- episode
    def reset(
        self, seed: int | None = None, options: dict | None = None
    ) -> tuple[dict[str, TextObs], dict[str, dict[str, Any]]]:
        """Start an episode: every seat's prompt and info."""
        self.env.reset(seed=seed, options=options)
        self._judge.reset(seed)
        self.agents = list(self._raw.agents)
        self._awaiting = set(self.agents)
        self._held, self._last = {}, {}
        self._tobs = {a: self._raw.text_observation(a) for a in self.agents}
        return self._observations(self.agents)

    def _observations(
        self, agents: list[str]
    ) -> tuple[dict[str, TextObs], dict[str, dict[str, Any]]]:
        """Prompts and infos of ``agents`` from ``self._tobs`` (masks for the awaited seats)."""
        template = self.policy.feedback_template
        feedback = self._judge.feedback
        obs: dict[str, TextObs] = {}
        infos: dict[str, dict[str, Any]] = {}
        for a in agents:
            tobs = self._tobs[a]
            asked = a in self._awaiting
            obs[a] = TextObs(prompt_text(tobs, feedback.get(a), template))
            mask = self._masks(tobs.legal_actions) if asked else self._masks()
            infos[a] = seat_info(mask, tobs if asked else None, self._last.get(a), self.policy)
        return obs, infos

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        """Each awaited seat answers in free text; returns prompts, rewards, terminations,
        truncations and infos of the seats that were live."""
        if not self.agents:
            raise IllegalActionError("the episode is over: call reset()")
        if not isinstance(actions, Mapping):
            raise IllegalActionError(
                f"answers must map each agent to its text, got {type(actions).__name__}"
            )
        missing = [a for a in self.agents if a in self._awaiting and a not in actions]
        extra = sorted(str(a) for a in actions if a not in self.agents)
        if missing or extra:
            raise IllegalActionError(
                f"answers are needed from {self.awaiting} (from another live agent they are not "
                f"read); missing {missing}, not playing {extra}"
            )
        raw, judge = self._raw, self._judge
        agents = list(self.agents)
        penalties: dict[str, float] = {}
        ended = False
        for a in agents:
            if a not in self._awaiting:
                if a in actions:  # its held answer stands: counted, not read
                    judge.counts[a]["unread"] += 1
                continue
            legal_text = self._tobs[a].legal_actions
            record = judge.judge(
                a,
                actions[a],
                partial(raw.parse_action, a),
                lambda a=a: raw.view(a).legal_actions,
                legal_text.__getitem__,
            )
            self._last[a] = record
            if not record["valid"]:
                penalties[a] = self.policy.reward
            if record["outcome"] in ("played", "fallback"):
                self._held[a] = record
            ended = ended or record["outcome"] == "terminate"
        rewards = {a: penalties.get(a, 0.0) for a in agents}
        if ended:  # as PettingZoo's TerminateIllegalWrapper ends a game; nothing is applied
            self._awaiting, self._held = set(), {}
            self.agents = []
            obs, infos = self._observations(agents)
            return obs, rewards, dict.fromkeys(agents, True), dict.fromkeys(agents, False), infos
        self._awaiting = {a for a in agents if a not in self._held}
        if self._awaiting:  # some seats are asked again: nothing is applied yet
            obs, infos = self._observations(agents)
            return obs, rewards, dict.fromkeys(agents, False), dict.fromkeys(agents, False), infos
        joint = {a: r["played"] for a, r in self._held.items()}
        messages = {}
        for a, record in self._held.items():
            message = record.get("message")
            if message:
                seat = agent_index(a)
                try:
                    check_messages(raw.game, {seat}, {seat: message})
                    messages[a] = message
                except IllegalActionError as exc:
                    record["message_error"] = str(exc)
        self._held = {}
        step = self.env.step
        result = step(joint, messages) if messages else step(joint)  # type: ignore[call-arg]
        _, paid, terms, truncs, _ = result
        rewards = {a: float(paid[a]) + penalties.get(a, 0.0) for a in paid}
        self.agents = list(raw.agents)
        self._awaiting = set(self.agents)
        self._tobs = {a: raw.text_observation(a) for a in paid}
        obs, infos = self._observations(list(paid))
        return obs, rewards, dict(terms), dict(truncs), infos

    def episode_record(self) -> dict[str, Any]:
        """This episode's answers as plain data (see ``TextAECEnv.episode_record``)."""
        raw = self._raw
        return self._judge.record(env=raw.metadata["name"], max_cycles=raw.max_cycles)


__all__ = ["TextParallelEnv"]
