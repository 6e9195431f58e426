"""Disguised variants reach the LLM agent's whole prompt (issue #36, ``skin=``).

Every preset plays a few turns of its own game in skin ``s1`` against the game's bots, with a
scripted client that records every request; no request (system, rules, observation, the pieces'
own renderings such as paper 000's belief state, ToM questions) may name a canonical symbol of a
renamed category. Pieces that render from the view must go through the skin.
"""

from __future__ import annotations

import re

import pytest
from test_skins import CANONICAL_GLYPHS, CANONICAL_WORDS

from tom_envs.agents import make_agent
from tom_envs.driver import FailurePolicy
from tom_envs.registration import game_spec
from tom_envs.runner import play_episode
from tom_llm_agents import LLMAgent, ScriptedClient
from tom_llm_agents.client import LLMRequest
from tom_llm_agents.presets import PRESETS

PRESET_NAMES = sorted(PRESETS)


def _partner(game: str) -> str:
    return {"BombDefusal": "heuristic", "Guandan": "heuristic", "Hanabi": "simple",
            "CoBlock": "cooperative", "Overcooked": "greedy", "CollabEscape": "greedy",
            "CollabCapture": "greedy"}.get(game, "random")  # fmt: skip


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_a_skinned_prompt_names_no_canonical_symbol(name: str) -> None:
    preset = PRESETS[name]
    spec = game_spec(preset.game)
    seen: list[str] = []

    def script(request: LLMRequest) -> str:
        seen.extend(str(m.get("content", "")) for m in request.messages)
        return "Action: 1"

    extra = {"oracle_partner": "tit_for_tat"} if "oracle" in name else {}
    agent = LLMAgent(ScriptedClient(script), preset=name, **extra)
    n = spec.load().make_bundle(**{**spec.kwargs, **preset.env_kwargs}).game.num_players
    team = [agent, *(make_agent(_partner(spec.name), spec) for _ in range(n - 1))]
    kwargs = {**preset.env_kwargs, "skin": "s1", "max_cycles": 3}
    play_episode(spec, team, seed=0, env_kwargs=kwargs,
                 policy=FailurePolicy(max_fallback_share=1.0))  # fmt: skip
    assert seen, "the agent made no call"
    words = CANONICAL_WORDS[spec.name]
    for text in seen:
        for word in words:
            assert not re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text, re.IGNORECASE), (
                word, text[:300])  # fmt: skip
        for glyph in CANONICAL_GLYPHS.get(spec.name, ()):
            assert glyph not in text, (glyph, text[:300])
