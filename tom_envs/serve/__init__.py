"""Human play in the browser: ``tom-envs serve``.

A person picks a game, a seat and partners (the game's bots and populations, ``random``, ``rmax``,
and the LLM or checkpoint partners the operator offers by name: ``--partner NAME=SPEC``) and plays
through a local web app (Starlette, websockets; bound to 127.0.0.1 by default; ``--token`` guards
it on a network). Requests are untrusted: see the threat model in ``docs/serve.md`` and
:mod:`tom_envs.serve.app`. The page shows exactly what that seat may see: the observation
text an LLM would get, the legal actions as buttons, a chat box in games with messages, and the
game's board drawn from the same player view (``tom_envs/games/<game>/board.py``). Sessions are
recorded as the suite's standard trajectories (``runs/human/*.jsonl``, the human seat marked), so
human-agent episodes feed the same metrics and reports as agent-agent ones. Study mode
(``--study tasks.toml``) serves a fixed task list to participant ids (``/study/<id>``) and shows
completion. See :mod:`tom_envs.serve.session` and :mod:`tom_envs.serve.app`.
"""

from tom_envs.serve.session import HUMAN, Session, SessionError

__all__ = ["HUMAN", "Session", "SessionError"]
