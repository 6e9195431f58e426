"""One LLM game on the bundled local model, for ``tom-envs demo``.

:func:`run_local_demo` starts the local llama.cpp server (SmolLM2-135M-Instruct), plays a short
episode of an LLM agent against a partner bot and returns a row for the demo table with the
model's valid-action %, tokens and calls. It returns ``None`` when the model is not installed
(:func:`tom_llm_agents.local.local_model_status` says why and how to install it).
"""

from __future__ import annotations

import time
from typing import Any

from tom_envs.agents import make_agent
from tom_envs.registration import game_spec
from tom_envs.runner import format_table, run, summarize
from tom_llm_agents.agent import LLMAgent
from tom_llm_agents.client import BaseLLMClient
from tom_llm_agents.local import MODEL_NAME, LocalServer, local_model_status

#: Columns of the row :func:`run_local_demo` returns, in display order.
DEMO_COLUMNS = [
    "game",
    "agents",
    "episodes",
    "return player_0",
    "return player_1",
    "valid action %",
    "tokens in",
    "tokens out",
    "LLM calls",
    "ΔFunctional/T",
    "ToM %",
    "seconds",
]


def run_local_demo(
    game: str = "PrisonersDilemma",
    partner: str = "tit_for_tat",
    strategy: str = "qa+predict",
    horizon: int = 3,
    episodes: int = 1,
    seed: int = 0,
    client: BaseLLMClient | None = None,
    decoding: str = "json",
) -> dict[str, Any] | None:
    """Play ``episodes`` short episodes (``horizon`` rounds) of the local LLM against ``partner``.

    Returns a demo-table row (values are ``(mean, 95% half-width)`` as in the demo), or ``None``
    when the local model is not installed. ``client`` reuses a running server's client instead
    of starting one. ``decoding`` is ``"json"`` (constrained: a 135M model rarely names a legal
    action in free text) and is shown in the row's agent label.
    """
    ok, _ = local_model_status()
    if not ok and client is None:
        return None
    spec = game_spec(game)
    t0 = time.perf_counter()

    def play(c: BaseLLMClient) -> list[Any]:
        factories = [
            lambda: LLMAgent(c, strategy=strategy, decoding=decoding),
            lambda: make_agent(partner, spec),
        ]
        return run(spec, factories, episodes, seed, env_kwargs={"horizon": horizon})

    if client is not None:
        eps = play(client)
    else:
        with LocalServer() as server:
            eps = play(server.client())
    s = summarize(eps)
    return {
        "game": spec.name,
        "agents": (
            f"llm({client.model if client else MODEL_NAME}, {strategy}, {decoding}) vs {partner}"
        ),
        "episodes": len(eps),
        "return player_0": s["return/player_0"],
        "return player_1": s.get("return/player_1", ""),
        "valid action %": s.get("valid_action_pct/player_0", ""),
        "tokens in": s.get("usage/tokens_in/player_0", ""),
        "tokens out": s.get("usage/tokens_out/player_0", ""),
        "LLM calls": s.get("usage/calls/player_0", ""),
        "ΔFunctional/T": s.get("functional_regret", ""),
        "ToM %": s.get("tom_accuracy", ""),
        "seconds": round(time.perf_counter() - t0, 2),
    }


def demo_note() -> str:
    """Why the LLM row is missing and how to get it (for the demo's output)."""
    ok, why = local_model_status()
    return "" if ok else f"LLM agent game skipped: the local model is {why}"


def demo_section(seed: int = 0) -> str:
    """The LLM part of ``tom-envs demo`` (the ``llm`` plugin of group ``tom_envs.demos``): one game
    on the local model as a table, or why it was skipped."""
    row = run_local_demo(seed=seed)
    if row is None:
        return demo_note()
    return (
        "LLM agent on the local model (SmolLM2-135M-Instruct, llama.cpp, offline):\n"
        + format_table([row], DEMO_COLUMNS)
    )
