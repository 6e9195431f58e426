"""CoordinationQA: generated items are re-verified by the engine, answerers score as they must."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from tom_envs.cli import main
from tom_envs.qa import QAItem, Scenario, parse_answer, read_suite, replay, write_suite
from tom_envs.qa import generate as qg
from tom_envs.qa.evaluate import correlation, run_answerer
from tom_envs.qa.items import item_order
from tom_envs.registration import GAMES
from tom_llm_agents.fake import ScriptedClient
from tom_llm_agents.qa import llm_answerer

QA_GAMES = qg.qa_games()


def test_every_registered_game_has_a_generator() -> None:
    """Every game but the teaching example (``GameSpec.example``, which has no ``qa.py``)."""
    assert sorted(QA_GAMES) == sorted(s.name for s in GAMES if not s.example)


@pytest.mark.parametrize("game", QA_GAMES)
def test_generated_items_verify_and_cover_the_games_abilities(game: str) -> None:
    items = qg.generate(game, np.random.default_rng(7), 3 * len(qg.abilities(game)))
    assert {i.type for i in items} == set(qg.abilities(game))
    for item in items:
        assert len(item.answers) == 1  # exactly one correct option
        assert item.details["order"] == item_order(item)  # shown in its own seeded order
        assert qg.verify(item), item.id
        assert item.scenario.game == game
    again = qg.generate(game, np.random.default_rng(7), 3 * len(qg.abilities(game)))
    assert [i.to_json() for i in again] == [i.to_json() for i in items]  # seeded


@pytest.mark.parametrize("game", QA_GAMES)
def test_a_tampered_answer_fails_verification(game: str) -> None:
    item = qg.generate(game, np.random.default_rng(3), 3)[0]
    wrong = (min(set(range(len(item.options))) - set(item.answers)),)
    tampered = QAItem(**{**item.__dict__, "answers": wrong})
    assert not qg.verify(tampered)


def test_replay_rebuilds_the_env_state_exactly() -> None:
    import pettingzoo

    for game in ("Hanabi", "Overcooked", "BombDefusal", "CoBlock"):
        (scenario, _, state), *_ = qg.sample_scenarios(game, np.random.default_rng(1), 1)
        env = pettingzoo.make("aec", f"tom_envs/{game}-v0", **scenario.env_kwargs)
        env.reset(seed=scenario.seed)
        base = env.unwrapped
        for actions, messages in zip(scenario.actions, scenario.messages, strict=True):
            for _ in range(len(actions)):
                p = int(env.agent_selection.split("_")[1])
                if p in messages:
                    base.send_message(env.agent_selection, messages[p])
                env.step(actions[p])
        assert base.game_state == state == replay(scenario)[1]


def test_contexts_come_from_the_asked_players_view_only() -> None:
    """Changing what the asked player cannot see leaves the context unchanged (the states of the
    shipped Hanabi and Guandan situations)."""
    import dataclasses

    from tom_envs.qa.generate import context_text

    checked = 0
    for item in read_suite(qg.default_suite_path("Hanabi"))[1][::6]:
        bundle, state = replay(item.scenario)
        me = item.scenario.player
        hands = list(state.hands)
        if len(set(hands[me])) < 2:
            continue
        hands[me] = tuple(reversed(hands[me]))  # my own cards, hidden from me, shuffled
        other = dataclasses.replace(state, hands=tuple(hands))
        assert context_text(bundle, other, me) == context_text(bundle, state, me)
        checked += 1
    for item in read_suite(qg.default_suite_path("Guandan"))[1][::6]:
        bundle, state = replay(item.scenario)
        me = item.scenario.player
        hands = list(state.hands)
        a, b = [s for s in range(4) if s != me][:2]
        if hands[a] == hands[b] or sum(hands[a]) != sum(hands[b]):
            continue  # two other players of equal hand sizes swap hands
        hands[a], hands[b] = hands[b], hands[a]
        other = dataclasses.replace(state, hands=tuple(hands))
        assert context_text(bundle, other, me) == context_text(bundle, state, me)
        checked += 1
    assert checked >= 10


def test_parse_answer_follows_the_paper() -> None:
    opts = ("pick up onion", "pick up plate", "wait")
    assert parse_answer("I think... Answer: B. pick up plate", opts) == 1
    assert parse_answer("Action: C)", opts) == 2
    assert parse_answer("A. because onions are needed", opts) == 0
    assert parse_answer("answer: the best is to wait here", opts) == 2  # fuzzy option text
    assert parse_answer("Answer: Z.", opts) is None
    assert parse_answer("no idea", opts) is None
    assert parse_answer("", opts) is None


def test_suite_round_trip_and_shipped_suite_headers(tmp_path: Path) -> None:
    items = qg.generate("PrisonersDilemma", np.random.default_rng(0), 6)
    path = write_suite(items, tmp_path / "s.jsonl", {"game": "PrisonersDilemma", "seed": 0})
    meta, back = read_suite(path)
    assert meta["game"] == "PrisonersDilemma" and back == items
    for game in QA_GAMES:
        meta, suite = read_suite(qg.default_suite_path(game))
        assert meta["suite_version"] == qg.SUITE_VERSION and meta["seed"] == qg.DEFAULT_SEED
        assert meta["generator_version"] == qg.qa_module(game).GENERATOR_VERSION
        assert meta["items"] == len(suite)
        assert set(meta["by_type"]) == set(qg.abilities(game))
        assert all(v >= qg.DEFAULT_PER_TYPE for v in meta["by_type"].values())


@pytest.mark.parametrize("game", QA_GAMES)
def test_a_sample_of_shipped_keys_is_recomputed_by_the_engine(game: str) -> None:
    """The fast guard of the shipped suites: a fixed sample of items per game (whole contrast
    sets included) is rebuilt from its scenario and recomputed, key and all."""
    _, items = read_suite(qg.default_suite_path(game))
    sample = items[:: max(1, len(items) // 8)]
    assert len(sample) >= 8
    for item in sample:
        assert qg.verify(item), item.id


def test_matrix_suites_regenerate_exactly() -> None:
    """One small regeneration check: the PrisonersDilemma suite's generator, run again on its
    seed, writes the shipped items (the other games are guarded by the sampled recomputation
    above; ``tom-envs qa suites --check`` regenerates them all)."""
    meta, items = qg.build_suite("PrisonersDilemma")
    shipped_meta, shipped = read_suite(qg.default_suite_path("PrisonersDilemma"))
    assert [i.to_json() for i in items] == [i.to_json() for i in shipped]
    assert meta["by_type"] == shipped_meta["by_type"]


def test_random_answerer_is_near_chance_and_oracle_is_perfect() -> None:
    items = [i for g in QA_GAMES for i in read_suite(qg.default_suite_path(g))[1]]
    rnd = qg.random_answerer(0)
    res = run_answerer(items, lambda item, t: rnd(item), "random", trials=3)
    acc, _, n = res.accuracy()
    p = qg.random_baseline(items)
    bound = 100 * 4 * math.sqrt(p * (1 - p) / (3 * n))  # 4 standard errors of 3n answers
    assert abs(acc - 100 * p) < bound
    orc = qg.oracle_answerer()
    res = run_answerer(items[::40], lambda item, t: orc(item), "oracle", trials=1)
    assert res.accuracy()[0] == 100.0 and res.invalid_count() == 0


def test_llm_evaluator_with_a_scripted_endpoint() -> None:
    items = qg.generate("CollabCapture", np.random.default_rng(2), 6)
    # a model that always answers the first correct letter on trial 0 and garbage otherwise
    state = {"n": 0}

    def reply(request: object) -> str:
        state["n"] += 1
        prompt = request.messages[-1]["content"]  # type: ignore[attr-defined]
        item = next(i for i in items if i.prompt() == prompt)
        return f"Answer: {item.answer_letters[0]}" if request.sample == 0 else "hmm"  # type: ignore[attr-defined]

    res = run_answerer(items, llm_answerer(ScriptedClient(reply)), "scripted", trials=3)
    acc, se, n = res.accuracy()
    assert n == len(items) >= 6 and acc == pytest.approx(100 / 3)
    assert se == pytest.approx(np.std([100, 0, 0], ddof=1) / math.sqrt(3))
    assert res.invalid_count() == 2 * n and state["n"] == 3 * n
    rows = {(r["game"], r["type"]): r for r in res.table()}
    assert rows[("all", "all")]["items"] == n


def test_correlation_with_agentic_scores() -> None:
    r, n = correlation({"a": (10, 1.0), "b": (20, 2.0), "c": (30, 3.5)})
    assert n == 3 and r > 0.99
    assert math.isnan(correlation({"a": (1, 1), "b": (2, 2)})[0])


def test_cli_generate_verify_eval(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    pytest.importorskip("sklearn")
    assert main(["qa", "generate", "PrisonersDilemma", "--n", "12", "--out", str(tmp_path)]) == 0
    suite = tmp_path / "PrisonersDilemma.jsonl"
    report = tmp_path / "verify.md"
    main(["qa", "verify", str(suite), "--fresh", str(suite), "--repeats", "1",
          "--out", str(report)])  # fmt: skip
    text = report.read_text()
    n = len(read_suite(suite)[1])
    assert f"{n}/{n} items verified by the engine" in text
    assert "| boosting | 5-fold |" in text and "| logistic | fresh |" in text
    assert "Gate (" in text and "Known groups" in text
    assert "| partner-blind reasoner | reference | PrisonersDilemma | ToM |" in text
    scores = tmp_path / "agentic.json"
    scores.write_text(json.dumps({"PrisonersDilemma": 10.0}))
    out = tmp_path / "report.md"
    assert main(["qa", "eval", str(suite), "--answerer", "oracle", "--trials", "1",
                 "--agentic", str(scores), "--out", str(out)]) == 0  # fmt: skip
    assert f"| PrisonersDilemma | all | {n} | 100.0 |" in out.read_text()
    bad = tmp_path / "bad.jsonl"
    lines = suite.read_text().splitlines()
    item = json.loads(lines[1])
    item["answers"] = [(item["answers"][0] + 1) % len(item["options"])]
    bad.write_text("\n".join([lines[0], json.dumps(item)]) + "\n")
    capsys.readouterr()
    assert main(["qa", "verify", str(bad), "--fresh", str(suite), "--repeats", "1"]) == 1
    assert "FAILED" in capsys.readouterr().err


def test_filters_select_scenarios() -> None:
    items = qg.generate("Hanabi", np.random.default_rng(0), 3, filters=["final_round"])
    assert items and all("final_round" in i.scenario.tags for i in items)
    with pytest.raises(ValueError, match="unknown filters"):
        qg.generate("Hanabi", np.random.default_rng(0), 3, filters=["nope"])
    assert isinstance(Scenario("Hanabi", {}, 0, ()), Scenario)
