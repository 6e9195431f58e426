"""The browser app: ``tom-envs serve`` (the researcher console) and ``tom-envs study`` (human
studies).

The console lets a person pick a game, a seat and partners (the game's bots and populations,
``random``, ``rmax``, and the LLM or checkpoint partners the operator offers by name:
``--partner NAME=SPEC``) and play through a local web app (Starlette, websockets; bound to
127.0.0.1 by default; ``--token`` guards it on a network). A study (:mod:`tom_envs.serve.study`,
``docs/study.md``) takes participants with personal links through consent, instructions, practice
rounds, games with other people (matched in waiting rooms), bots, checkpoints or LLMs,
questionnaires and a completion code, journals every event before acknowledging it, survives
restarts, and exports a versioned dataset.

Each seat sees exactly what it may: :class:`Session` plays one episode with one or more people's
seats through the suite's one episode driver, and each game's participant board
(:mod:`tom_envs.serve.boards`) draws the seat's player view for a first-time player. Requests are
untrusted: see the threat model in ``docs/serve.md``, :mod:`tom_envs.serve.app` and
:mod:`tom_envs.serve.guard`. Sessions are recorded as the suite's standard trajectories, the
people's seats marked ``"human"``, so human-agent episodes feed the same metrics and reports as
agent-agent ones.
"""

from tom_envs.serve.session import HUMAN, Session, SessionError

__all__ = ["HUMAN", "Session", "SessionError"]
