"""LLM agents end to end against a real model: SmolLM2-135M-Instruct behind llama.cpp's
OpenAI-compatible server (the session fixture ``local_server``), through the ``openai`` client.

Every registered game is played with constrained decoding; every strategy piece runs in a
composite strategy; log-probability scoring, probes, the disk cache, concurrency, the CLI spec and
the demo row are checked on the real server. Horizons are short to keep the runtime modest.
Skipped (with the reason and the install line) only when the model packages are not installed.
"""

from __future__ import annotations

import asyncio

import pytest

from tom_envs.agents import make_agent
from tom_envs.cli import main as cli_main
from tom_envs.core.aec import TomAECEnv
from tom_envs.registration import GAMES, GameSpec, game_spec
from tom_envs.runner import Episode, play_episode
from tom_llm_agents import LLMAgent
from tom_llm_agents.client import LLMRequest
from tom_llm_agents.local import MODEL_NAME
from tom_llm_agents.parallel import run_concurrent
from tom_llm_agents.prompting import DECIDERS, PIECES
from tom_llm_agents.prompting.deciders import score_continuations

PD = game_spec("PrisonersDilemma")

#: Every test here talks to the real model: ``-m "not local_llm"`` leaves them out of a quick run.
pytestmark = pytest.mark.local_llm


def partner_for(spec: GameSpec) -> str:
    return spec.bots[0] if spec.bots else "random"


def llm_steps(ep: Episode, agent: str = "player_0") -> list[dict]:
    return [s for s in ep.steps if s["agent"] == agent]


@pytest.mark.parametrize("spec", GAMES, ids=[s.name for s in GAMES])
def test_every_game_end_to_end_with_constrained_decoding(spec, local_client, tmp_path) -> None:
    n = spec.load().make_bundle(**spec.kwargs).game.num_players
    agent = LLMAgent(local_client, decoding="json")
    agents = [agent] + [make_agent(partner_for(spec), spec) for _ in range(n - 1)]
    # Guandan's first decision at seed 0 is a forced pass (the model is not called): two cycles
    cycles = 2 if spec.name == "Guandan" else 1
    ep = play_episode(spec, agents, seed=0, env_kwargs={"max_cycles": cycles}, record_text=True)
    steps = llm_steps(ep)
    assert steps, "the LLM never acted"
    assert all(s["valid"] for s in steps), [s["info"]["llm_calls"] for s in steps]
    calls = [c for s in steps for c in s["info"].get("llm_calls", [])]
    asked = [c for c in calls if c["step"] == "action"]
    assert asked and all(c["decoding"] == "json" for c in asked)
    assert all(c["messages"] and c["reply"] for c in asked)
    assert ep.metrics["valid_action_pct/player_0"] == 100.0
    probed = [s for s in steps if s.get("probes")]  # games with ToM probes: one batched call
    assert all(isinstance(p["reply"], str) and p["reply"] for s in probed for p in s["probes"])
    assert ep.metrics["usage/calls/player_0"] == len(calls)
    if probed:
        assert "probe_acc/all" in ep.metrics
    assert ep.metrics["usage/tokens_in/player_0"] > 100 * len(asked)
    assert ep.metrics["usage/tokens_out/player_0"] > 0
    assert asked[0]["model"] == MODEL_NAME
    back = Episode.read(ep.write(tmp_path / "ep.jsonl"))
    assert back.metrics == ep.metrics


#: Composite strategies covering every piece and decider; pieces that act from the second
#: decision on (belief update, Reflexion, self-reflection, Plans+Insights) get two rounds.
COMPOSITES = {
    # 000, 003 step 3 as a call, 004 Reflexion, P+I, QA ToM
    "qa+belief+reflexion+reflect_call+plans+predict": 2,
    "cot+s2a+tom+verify+social": 1,  # 002 ToM reasoning + verification; 004 S2A, Social (QA)
    "cot_steps+partner+reflect+predict_cot": 1,  # 003's one generation; 004 CoT literal ToM
    "explain+partner_call": 1,  # 002's Explanation answer; 003 partner modelling as a call
    "cot+tom1": 1,  # 001 first-order ToM planning
    "qa+tom2+social_cot": 1,  # 001 second order over the recommender's top-1; Social with CoT
    "lm+predict_lm+oracle": 1,  # 004 LM prompting, LM literal ToM (agent first), Oracle
    "qa+social_lm+oracle_max": 1,  # 004 Social LM (partner first), Oracle + max
}


def test_composites_cover_every_piece() -> None:
    used = {p for s in COMPOSITES for p in s.split("+")}
    assert set(PIECES) <= used and set(DECIDERS) <= used


@pytest.mark.parametrize("strategy", list(COMPOSITES))
def test_strategies_on_the_real_model(strategy: str, local_client) -> None:
    agent = LLMAgent(
        local_client,
        strategy=strategy,
        decoding="json",
        oracle_partner="tit_for_tat",
        recommender=lambda view: {0: 1.0, 1: 0.0},
        top_k=1,
        # A CoT prediction writes its reasoning field (<= field_chars) before the answer: 24
        # tokens, enough for the other steps, would cut it before the prediction.
        step_tokens=96 if ("predict_cot" in strategy or "social_cot" in strategy) else 24,
        field_chars=120,
    )
    rounds = COMPOSITES[strategy]
    ep = play_episode(
        PD, [agent, make_agent("tit_for_tat", PD)], seed=0, env_kwargs={"horizon": rounds}
    )
    steps = llm_steps(ep)
    assert len(steps) == rounds
    assert all(s["valid"] for s in steps)
    seen = {c["step"] for s in steps for c in s["info"]["llm_calls"]}
    expected = {
        "belief": "belief",
        "reflexion": "reflexion",
        "tom": "tom_reasoning",
        "verify": "verify",
        "s2a": "s2a",
        "partner_call": "partner_modelling",
        "reflect_call": "self_reflection",
        "tom1": "tom_order1",
        "tom2": "tom_order2",
        "lm": "lm",
    }
    for part in strategy.split("+"):
        if part in expected:
            assert expected[part] in seen, (part, seen)
    fields = [s["info"]["llm"].get("fields", {}) for s in steps]
    for part, name in (("partner", "partner_modelling"), ("reflect", "reflection")):
        if part in strategy.split("+"):  # 003's steps, answered in the one generation
            assert all(name in f for f in fields), (part, fields)
    notes = [s["info"]["llm"].get("notes", {}) for s in steps]
    if "plans" in strategy:
        assert "plans" in notes[0] and "insights" in notes[0]
    if "oracle" in strategy:
        assert notes[0]["oracle"] == "Option J"  # tit-for-tat opens with J
    if any(p.startswith(("predict", "social")) for p in strategy.split("+")):
        assert all(s["prediction"] and s["prediction"]["partner_action"] in (0, 1) for s in steps)
        assert "tom_accuracy" in ep.metrics
    if "tom2" in strategy:
        assert all(s["action"] == 0 for s in steps)  # the recommender's top-1 is the only option


def test_lm_scoring_uses_real_token_logprobs(local_client) -> None:
    agent = LLMAgent(local_client, strategy="lm")
    ep = play_episode(PD, [agent, make_agent("always_0", PD)], seed=0, env_kwargs={"horizon": 1})
    (step,) = llm_steps(ep)
    notes = step["info"]["llm"]["notes"]
    scores = notes["lm_scores"]
    assert notes["lm_exact"] and set(scores) == {"Option J", "Option F"}
    assert all(v < 0 for v in scores.values())
    assert step["action_text"] == max(scores, key=scores.get)
    # the scorer agrees with the server's own greedy continuation
    prompt = "Q: Is the sky blue? Answer yes or no.\nA:"
    greedy = local_client.complete(LLMRequest(prompt=prompt, max_tokens=1, top_logprobs=5))
    alts = {t: lp for t, lp in greedy.logprobs[0].items() if t.strip()}
    best = max(alts, key=alts.get)

    class Ctx:  # the scorer only needs request/ask
        def request(self, **kw):
            return LLMRequest(**{k: v for k, v in kw.items() if k != "temperature"})

        def ask(self, step, request):
            return local_client.complete(request)

    s = score_continuations(Ctx(), prompt, [best, "zzzz-not-a-token"])  # type: ignore[arg-type]
    assert s.exact[0] and s.logprobs[0] == pytest.approx(alts[best], abs=1e-3)
    assert not s.exact[1] and s.logprobs[1] < s.logprobs[0]


def test_probes_answered_by_the_model_and_scored(local_client, probe_bundle) -> None:
    env = TomAECEnv(probe_bundle(horizon=2), "probe_test")
    ep = play_episode(
        PD,
        [LLMAgent(local_client, decoding="json"), make_agent("tit_for_tat", PD)],
        seed=0,
        env=env,
    )
    probes = [p for s in llm_steps(ep) for p in s["probes"]]
    assert len(probes) == 4 and all(p["reply"] in ("yes", "no") for p in probes)
    assert 0.0 <= ep.metrics["probe_acc/all"] <= 100.0
    assert "probe_acc/first_order" in ep.metrics and "probe_acc/introspection" in ep.metrics


def test_cache_makes_a_rerun_free_and_identical(local_server, tmp_path) -> None:
    runs = []
    for _ in range(2):
        client = local_server.client(cache_dir=tmp_path)
        agent = LLMAgent(client, strategy="qa+predict", decoding="json")
        ep = play_episode(
            PD, [agent, make_agent("tit_for_tat", PD)], seed=0, env_kwargs={"horizon": 2}
        )
        runs.append((ep, client.stats))
    (first, s1), (second, s2) = runs
    assert s1.requests == 4 and s1.cache_hits == 0
    assert s2.requests == 0 and s2.cache_hits == 4
    texts = [[c["reply"] for c in s["info"]["llm_calls"]] for s in llm_steps(first)]
    assert texts == [[c["reply"] for c in s["info"]["llm_calls"]] for s in llm_steps(second)]
    assert [s["action"] for s in first.steps] == [s["action"] for s in second.steps]
    assert second.metrics["usage/cache_hits/player_0"] == 4


def test_deterministic_and_concurrent(local_client) -> None:
    def factories():
        return [lambda: LLMAgent(local_client), lambda: make_agent("alternating", PD)]

    together = run_concurrent(
        PD, factories(), episodes=2, seed=3, max_workers=2, env_kwargs={"horizon": 2}
    )
    alone = [play_episode(PD, [f() for f in factories()], 3 + i, {"horizon": 2}) for i in range(2)]
    assert [[s["action"] for s in e.steps] for e in together] == [
        [s["action"] for s in e.steps] for e in alone
    ]
    out = local_client.complete_many(
        [
            LLMRequest(messages=[{"role": "user", "content": f"Say {w}."}], max_tokens=4)
            for w in ("one", "two", "three")
        ]
    )
    assert len(out) == 3 and all(r.tokens_out > 0 for r in out)
    single = asyncio.run(
        local_client.acomplete(
            LLMRequest(messages=[{"role": "user", "content": "Say one."}], max_tokens=4)
        )
    )
    assert single.text == out[0].text  # temperature 0: same answer, sync or async


def test_cli_runs_an_llm_spec_with_a_base_url(local_server, tmp_path, capsys) -> None:
    code = cli_main(
        [
            "run",
            "PrisonersDilemma",
            "--agents",
            f"llm:model={MODEL_NAME}:base_url={local_server.base_url}:strategy=qa:decoding=json",
            "tit_for_tat",
            "--episodes",
            "1",
            "--kw",
            "horizon=2",
            "--out",
            str(tmp_path),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "usage/tokens_in/player_0" in out and "valid_action_pct/player_0 | 100.000" in out
    assert list(tmp_path.glob("episode_*.jsonl"))


def test_demo_row(local_server) -> None:
    from tom_llm_agents.demo import DEMO_COLUMNS, run_local_demo

    row = run_local_demo(horizon=2, client=local_server.client())
    assert row is not None and set(DEMO_COLUMNS) <= set(row)
    assert row["valid action %"][0] == 100.0
    assert row["tokens in"][0] > 0 and row["LLM calls"][0] >= 2
