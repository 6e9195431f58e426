"""A partner that changes behaviour within an episode: policy A, then policy B from a seeded point.

Paper 004's partners that change behaviour are the model: adaptation is measured as the regret
after the switch and the time the agent takes to come back near the best response (see
:mod:`tom_envs.partners.regret`). The agent spec (:mod:`tom_envs.agents`)::

    switch:a=<partner>:b=<partner>:at=<lo>-<hi>:key=<int>           within an episode
    switch:a=<partner>:b=<partner>:at_episode=<lo>-<hi>:key=<int>   across a session's episodes

``a`` and ``b`` are the names of two agents of the game (its bots, ``random``, ``zoo/<member>``;
no ``:`` inside). The switch point ``t_s`` is a number of the partner's own decisions drawn
uniformly from ``[lo, hi]`` with ``default_rng([episode seed, SWITCH_SALT, key])``: the same
episode seed and key give the same point, a different key another one. Decisions ``0 .. t_s - 1``
are A's, decisions ``t_s ..`` are B's; ``at=N`` is ``at=N-N``.

* **B runs in shadow from the start**: both members are reset with the same
  :class:`~tom_envs.core.agents.EpisodeInfo` and both act on every turn, so B's memory (a matrix
  partner's state, a bot's beliefs) is current at the switch: B's decisions after the switch are
  those of a B fed the same turns from the start. A keeps acting after the switch (its answer is
  discarded), so nothing depends on when a member stops being asked. Only the playing member's
  answer (action, chat, info) reaches the game; a shadow member's chat is dropped, and a member
  that remembers what it said may define ``on_shadow_message_dropped(message)`` to forget it.
* **Invisible**: nothing in the game, the views or the other agents' :class:`EpisodeInfo` changes
  at the switch; the key lives in the partner's spec, which no other agent is shown.
* **Recorded for the scorer only**: the episode driver writes :attr:`SwitchingAgent.switch_info`
  into the trajectory's summary (``"switch": {seat: {"from", "to", "at_decision",
  "at_joint_step"}}``).
* ``action_probs(turn)`` (the partner's known policy, when the playing member exposes one) is
  forwarded from the member playing that decision.

**Across episodes** (short games): with ``at_episode=LO-HI`` the switch is the session's episode
``t_s`` (drawn from ``default_rng([session seed, SWITCH_SALT, key])``): A plays the episodes before
it, B from it, both reset and acting in every episode (B in shadow, as above). It needs a session
(:func:`tom_envs.sessions.play_session`); an episode outside one raises ``ValueError``.
The summary records ``"unit": "episode"``, ``"at_episode"`` and the episode's ``"session_index"``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from tom_envs.core.agents import Agent, AgentAction, BaseAgent, EpisodeInfo, Turn, as_agent_action

#: The salt of the switch point's generator: ``default_rng([seed, SWITCH_SALT, key])``.
SWITCH_SALT = 15_485_863

#: The largest switch point accepted (a partner decision index).
MAX_SWITCH_AT = 10_000_000

_RANGE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$")


def parse_at(at: Any) -> tuple[int, int]:
    """``"30-60"`` -> ``(30, 60)``, ``45`` or ``"45"`` -> ``(45, 45)``.

    Raises:
        ValueError: not ``N`` or ``LO-HI`` with ``0 <= LO <= HI <= MAX_SWITCH_AT``.
    """
    if isinstance(at, bool):
        raise ValueError(f"switch: at must be N or LO-HI (partner decisions), got {at!r}")
    found = _RANGE.match(str(at))
    if not found:
        raise ValueError(f"switch: at must be N or LO-HI (partner decisions), got {at!r}")
    lo = int(found.group(1))
    hi = int(found.group(2)) if found.group(2) is not None else lo
    if not 0 <= lo <= hi <= MAX_SWITCH_AT:
        raise ValueError(
            f"switch: at={at!r} needs 0 <= LO <= HI <= {MAX_SWITCH_AT} (partner decisions)"
        )
    return lo, hi


def switch_point(seed: int | None, key: int, lo: int, hi: int) -> int:
    """The partner decision at which B starts playing: uniform in ``[lo, hi]`` from the episode
    seed and the spec's key (``seed=None``: unseeded, like every generator of an unseeded
    episode)."""
    rng = np.random.default_rng(None if seed is None else [int(seed), SWITCH_SALT, int(key)])
    return int(rng.integers(lo, hi + 1))


class SwitchingAgent(BaseAgent):
    """Plays member A until its ``at_decision``-th decision, then member B (see the module
    docstring). ``a``/``b`` are the members' names (recorded); ``factory`` builds a member from
    its name (:func:`tom_envs.agents.make_agent` for the game)."""

    name = "switch"

    def __init__(
        self,
        a: str,
        b: str,
        at: Any,
        key: int,
        factory: Callable[[str], Agent],
        unit: str = "decision",
    ) -> None:
        super().__init__()
        if not isinstance(key, int) or isinstance(key, bool) or key < 0:
            raise ValueError(f"switch: key must be a whole number >= 0, got {key!r}")
        if unit not in ("decision", "episode"):
            raise ValueError(f"switch: unit must be 'decision' or 'episode', got {unit!r}")
        self.unit = unit
        self.session_index: int | None = None
        self.a_name, self.b_name = str(a), str(b)
        self.lo, self.hi = parse_at(at)
        self.key = key
        self.a: Agent = factory(self.a_name)
        self.b: Agent = factory(self.b_name)
        self.at_decision = self.lo
        self.decisions = 0
        self.shadow_failures = 0
        self.name = f"switch:{self.a_name}->{self.b_name}"

    @property
    def phase(self) -> str:
        """``"A"`` before the switch point, ``"B"`` from it (of the next decision)."""
        if self.unit == "episode":
            return "A" if (self.session_index or 0) < self.at_decision else "B"
        return "A" if self.decisions < self.at_decision else "B"

    @property
    def playing(self) -> Agent:
        """The member whose answer the next decision plays."""
        return self.a if self.phase == "A" else self.b

    @property
    def switch_info(self) -> dict[str, Any]:
        """What the trajectory's summary records for the scorer (never shown to an agent)."""
        if self.unit == "episode":
            out: dict[str, Any] = {"from": self.a_name, "to": self.b_name, "unit": "episode",
                                   "at_episode": self.at_decision,
                                   "session_index": self.session_index, "decisions": self.decisions,
                                   "phase": self.phase}  # fmt: skip
        else:
            out = {"from": self.a_name, "to": self.b_name, "at_decision": self.at_decision,
                   "decisions": self.decisions}  # fmt: skip
        if self.shadow_failures:
            out["shadow_failures"] = self.shadow_failures
        return out

    def reset(self, info: EpisodeInfo) -> None:
        """Reset both members with the same episode info and draw this episode's switch point."""
        super().reset(info)
        self.a.reset(info)
        self.b.reset(info)
        if self.unit == "episode":
            session = info.session
            if session is None:
                raise ValueError(
                    f"{self.name}: at_episode switches across the episodes of a session; play "
                    "it with tom_envs.sessions.play_session (or use at=LO-HI)"
                )
            self.session_index = int(session.index)
            self.at_decision = switch_point(session.seed, self.key, self.lo, self.hi)
        else:
            self.at_decision = switch_point(info.seed, self.key, self.lo, self.hi)
        self.decisions = 0
        self.shadow_failures = 0

    def act(self, turn: Turn) -> int | AgentAction:
        """Both members act on ``turn``; the playing member's answer is returned."""
        playing, shadow = (self.a, self.b) if self.phase == "A" else (self.b, self.a)
        choice = playing.act(turn)
        try:
            dropped = as_agent_action(shadow.act(turn)).message
        except Exception:  # a shadow member's failure never changes the game; it is counted
            self.shadow_failures += 1
            dropped = None
        if dropped:
            forget = getattr(shadow, "on_shadow_message_dropped", None)
            if forget is not None:
                forget(dropped)
        self.decisions += 1
        return choice

    def action_probs(self, turn: Turn) -> Mapping[int, float] | None:
        """The playing member's known policy for ``turn`` (``None`` when it exposes none)."""
        probs = getattr(self.playing, "action_probs", None)
        return None if probs is None else probs(turn)

    def end_episode(self, turn: Turn) -> None:
        """Forward to both members."""
        for member in (self.a, self.b):
            end = getattr(member, "end_episode", None)
            if end is not None:
                end(turn)


def make_switching(kwargs: Mapping[str, Any], factory: Callable[[str], Agent]) -> SwitchingAgent:
    """A :class:`SwitchingAgent` from a ``switch:`` spec's keyword arguments (``a``, ``b``,
    ``at`` or ``at_episode``, ``key``); ``ValueError`` names what is missing or unknown."""
    kwargs = dict(kwargs)
    unit = "decision"
    if "at_episode" in kwargs:
        if "at" in kwargs:
            raise ValueError("switch: give at= (within an episode) or at_episode=, not both")
        kwargs["at"], unit = kwargs.pop("at_episode"), "episode"
    allowed = ("a", "b", "at", "key")
    unknown = sorted(set(kwargs) - set(allowed))
    if unknown:
        raise ValueError(
            f"switch: unknown options {unknown}; a switch takes a, b, at (or at_episode), key"
        )
    missing = [k for k in allowed if k not in kwargs]
    if missing:
        raise ValueError(
            f"switch: missing {missing}; write switch:a=<partner>:b=<partner>:at=<lo>-<hi>:key=<n>"
        )
    for k in ("a", "b"):
        if str(kwargs[k]).startswith("switch"):
            raise ValueError(f"switch: {k}={kwargs[k]!r}: a member cannot itself be a switch")
    return SwitchingAgent(
        str(kwargs["a"]), str(kwargs["b"]), kwargs["at"], kwargs["key"], factory, unit
    )


__all__ = ["MAX_SWITCH_AT", "SWITCH_SALT", "SwitchingAgent", "make_switching", "parse_at",
           "switch_point"]  # fmt: skip
