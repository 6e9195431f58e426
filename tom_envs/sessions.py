"""Sessions: consecutive episodes played with the same agent objects, for games too short to
switch a partner within an episode (bomb defusal, Capture, Escape, a Guandan deal).

:func:`play_session` plays one episode per seed with the same agents; each seated agent is told
the :class:`~tom_envs.core.agents.SessionInfo` (``id``, ``index``, ``length``, ``seed`` = the first
episode's seed) in its :class:`~tom_envs.core.agents.EpisodeInfo`, so agents that learn across
episodes may keep their memory, and each episode records it in its summary (``"session"``). A
switching partner with ``at_episode=LO-HI`` (:mod:`tom_envs.partners.switching`) plays A in the
session's episodes ``0 .. t_s - 1`` and B from episode ``t_s``, drawn from the session seed and its
key. A session is a unit: an agent's cross-episode memory cannot be restored mid-session, so a
session is replayed whole, never resumed from its middle.

After each episode, a seated agent that defines ``session_feedback(episode_return)`` is given its
own seat's return in that episode (the sum of its rewards, final reward included: the episode
driver does not promise every seat a last turn once all seats end together). It is what a learner
across episodes may use (:class:`tom_envs.known_groups.SelectorAgent`); nothing about the other
seats is passed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tom_envs.core.agents import Agent, SessionInfo
from tom_envs.driver import EpisodeDriver
from tom_envs.records import Episode

#: The longest session accepted.
MAX_SESSION = 10_000


def play_session(
    game: Any,
    agents: Sequence[Agent],
    seeds: Sequence[int],
    env_kwargs: Mapping[str, Any] | None = None,
    *,
    session_id: str | None = None,
    **driver_kwargs: Any,
) -> list[Episode]:
    """Play one episode per seed, in order, with the same ``agents`` (every seat seated);
    ``driver_kwargs`` go to :class:`~tom_envs.driver.EpisodeDriver` (``policy``, ``predict``...).
    """
    seeds = [int(s) for s in seeds]
    if not 1 <= len(seeds) <= MAX_SESSION:
        raise ValueError(f"a session has 1 to {MAX_SESSION} episodes (seeds), got {len(seeds)}")
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"a session's seeds must differ, got {seeds}")
    name = session_id or f"s{seeds[0]}x{len(seeds)}"
    out = []
    for index, seed in enumerate(seeds):
        info = SessionInfo(name, index, len(seeds), seeds[0])
        driver = EpisodeDriver(game, agents, seed, env_kwargs, session=info, **driver_kwargs)
        episode = driver.run()
        out.append(episode)
        for seat, agent in zip(episode.agents, agents, strict=True):
            feedback = getattr(agent, "session_feedback", None)
            if feedback is not None:
                feedback(float(episode.returns.get(seat, 0.0)))
    return out


__all__ = ["MAX_SESSION", "play_session"]
