"""Every protocol preset end to end on its game with the bundled SmolLM2-135M (the session's
``local_server``), and the presets as the CLI and eval configs select them.

One decision (or the first few, where forced moves come first) per preset, with the answer
budgets capped (``max_tokens=16``, ``step_tokens=8``) and at most one further attempt after an
invalid answer (``reprompts=1``, ``verify_rounds=1``) so the whole file stays within a few
minutes on a small machine; everything else is the preset's own protocol. A 135M model often
answers invalidly: that must show up as a counted fallback of kind ``unparseable``, never as a
crash, an ``exception`` or an endpoint failure. ``docs/results/llm_presets.md`` has the figures.
"""

from __future__ import annotations

import pytest

from tom_envs.evaluation.config import load_config, validate
from tom_envs.registration import game_spec
from tom_envs.runner import Episode
from tom_llm_agents import LLMAgent, ScriptedClient
from tom_llm_agents.local import MODEL_NAME, local_model_status
from tom_llm_agents.presets import PRESETS
from tom_llm_agents.protocol_report import decision_stats, run_preset

#: One decision per preset (Guandan's first decision at seed 0 is a forced pass: two cycles).
#: Guandan is played in English here: SmolLM2's tokenizer spends several tokens per Chinese
#: character, so paper 001's Chinese prompt costs a minute of prompt evaluation on a small
#: machine (docs/results/llm_presets.md plays it in Chinese; test_llm_protocols.py checks the
#: Chinese scaffolding with a scripted model).
ONE_DECISION = {
    "RockPaperScissors": {"horizon": 1},
    "BattleOfSexes": {"horizon": 1},
    "PrisonersDilemma": {"horizon": 1},
    "Guandan": {"max_cycles": 2, "language": "en"},
}
CAPS = {"max_tokens": 16, "step_tokens": 8, "reprompts": 1, "verify_rounds": 1}


def mine(ep: Episode) -> list[dict]:
    return [s for s in ep.steps if s["agent"] == "player_0"]


@pytest.mark.local_llm
@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_end_to_end_on_its_game(name: str, local_client) -> None:
    p = PRESETS[name]
    short = ONE_DECISION.get(p.game, {"max_cycles": 1})
    # English Guandan for speed (above): the preset's language=zh is waived, and recorded so
    english = {"game_args": "none"} if "language" in short else {}
    ep, agent = run_preset(p, local_client, 0, env_kwargs=short, **CAPS, **english)
    steps = mine(ep)
    asked = [s for s in steps if not s["info"].get("forced")]
    assert asked, f"{name}: the model was never asked"
    for s in steps:
        failure = s.get("failure") or s["info"].get("failure")
        fallback = bool(s.get("fallback") or s["info"].get("fallback"))
        assert s["valid"] or failure["kind"] == "unparseable", failure  # a counted fallback
        assert s["valid"] != fallback
    calls = [c for s in steps for c in s["info"].get("llm_calls", [])]
    assert calls and all(c["model"] == MODEL_NAME for c in calls)
    assert all(c["reply"] is not None and c["messages"] for c in calls)
    # the papers' way: free text (or LM prompting's log-probabilities), never constrained
    assert {c["decoding"] for c in calls} <= {"free", "logprobs", "completion"}
    config = agent.config()
    assert config["preset"] == name and config["decoding"] == "free"
    assert config["max_tokens"] == 16  # the cap is recorded with the result
    m = ep.metrics
    assert m["usage/calls/player_0"] == len(calls)  # probe calls are in the step records too
    assert 0.0 <= m["valid_action_pct/player_0"] <= 100.0
    st = decision_stats([ep])
    assert st["valid_pct"] + st["fallback_pct"] == pytest.approx(100.0)
    for key, value in p.env_kwargs.items():  # the preset's game arguments were played
        assert ep.env_kwargs[key] == short.get(key, value)


def test_presets_are_selected_by_name_from_a_spec_and_an_eval_config() -> None:
    from tom_envs.agents import make_agent

    pytest.importorskip("openai")
    spec = "llm:preset=paper004-cot:model=m:base_url=http://127.0.0.1:9/v1:max_tokens=4096"
    agent = make_agent(spec, game_spec("RockPaperScissors"), trusted=True)
    assert agent.config()["preset"] == "paper004-cot" and agent.max_tokens == 4096
    cfg = load_config("llm_presets")
    named = {s.split("preset=")[1].split(":")[0] for s in cfg.agents.values() if "preset=" in s}
    assert {"paper000", "paper002-overcooked", "paper003", "paper004"} <= named
    assert named <= set(PRESETS)
    ok, why = local_model_status()
    if not ok:  # validating builds each agent: local=true starts the bundled model
        pytest.skip(f"local LLM {why}")
    cells = validate(cfg, check_endpoints=False)
    assert {c.section for c in cells} == {"matchups"} and len(cells) >= 7


def test_probes_switch_off_in_every_game_with_probes() -> None:
    """``probes=false``: no probe is computed or asked in any game that offers them."""
    from tom_envs.agents import make_agent
    from tom_envs.runner import play_episode

    for game in ("BombDefusal", "Hanabi", "CoBlock", "CollabCapture", "CollabEscape"):
        spec = game_spec(game)
        n = spec.load().make_bundle(**spec.kwargs).game.num_players
        for on in (True, False):
            c = ScriptedClient(lambda r: "q1: yes\nAction: 1")
            agent = LLMAgent(c, probes=on, probe_batch=True)
            others = [make_agent("random", spec) for _ in range(n - 1)]
            ep = play_episode(spec, [agent, *others], seed=0, env_kwargs={"max_cycles": n})
            probed = [s for s in mine(ep) if s.get("probes")]
            asked = [x for s in mine(ep) for x in s["info"]["llm_calls"] if x["step"] == "probe"]
            assert bool(probed) == bool(asked) == on, (game, on)
            assert agent.config()["probes"] is on
