"""Trained best responses (tom_envs.best_responses, tom_experiments.zoo.br): used only for the
configuration they were trained on, integrity-checked like zoo members, labelled "trained lower
bound" (never exact), and weighed against the declared candidates. No training here: a shipped
checkpoint stands in for a trained BR in a temporary manifest; the shipped BRs are checked as
files."""

from __future__ import annotations

import csv
import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

import tom_experiments.zoo.br as brmod
from tom_envs import best_responses as brs
from tom_envs.agents import make_agent
from tom_envs.evaluation.references import candidate_reference
from tom_envs.identity import resolved_env_kwargs
from tom_envs.references import NoReference, Reference, reference_for
from tom_envs.registration import game_spec
from tom_envs.runner import play_episode
from tom_experiments import zoo as suite

GAME = "CollabEscape"
SEEDS = (0, 1, 2)


def _ship(root: Path, partner: str = "zoo/ppo_s1", seat: int = 0, **changes: Any) -> Path:
    """A BR manifest under ``root`` whose BR is the shipped ``ppo_s0`` file."""
    folder = root / GAME
    folder.mkdir(parents=True, exist_ok=True)
    dst = folder / "br_test.zip"
    shutil.copy(suite.DATA / GAME / "ppo_s0.zip", dst)
    (folder / "br_test_curve.csv").write_text("global_step,return_mean\n1,0.1\n2,0.5\n")
    entry = {"name": "br_test", "partner": partner, "partner_id": brs.partner_id(GAME, partner),
             "seat": seat, "env_kwargs": json.loads(json.dumps(resolved_env_kwargs(
                 game_spec(GAME), {}), default=str)),
             "file": dst.name, "sha256": hashlib.sha256(dst.read_bytes()).hexdigest(),
             "bytes": dst.stat().st_size,
             "train": {"command": "tom-envs train ppo ... --seed 0", "algo": "SB3 PPO",
                       "seed": 0, "steps": 2, "curve": "br_test_curve.csv"}}  # fmt: skip
    entry.update(changes)
    (folder / "br.json").write_text(json.dumps({"game": GAME, "format": 1,
                                                "best_responses": [entry]}))  # fmt: skip
    return dst


@pytest.fixture
def shipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(brmod, "DATA", tmp_path)
    return _ship(tmp_path)


def test_a_matching_br_is_the_trained_lower_bound(shipped: Path) -> None:
    ref = reference_for(GAME, "zoo/ppo_s1", 0, SEEDS)
    assert ref.kind == "lower_bound" and ref.label == "trained lower bound" != "exact"
    assert ref.trained is not None and ref.trained["name"] == "br_test"
    assert ref.trained["steps"] == 2 and ref.trained["agent_spec"] == "br/zoo/ppo_s1"
    assert "lower bound" in ref.source and "exact" not in ref.source
    spec = game_spec(GAME)
    objective = spec.load().functional_objective(**spec.kwargs)
    by_hand = [objective(play_episode(spec, [make_agent("br/zoo/ppo_s1", spec),
                                             make_agent("zoo/ppo_s1", spec)], s, {}), (0,))
               for s in SEEDS]  # fmt: skip
    assert list(ref.values) == by_hand


OTHER = [("zoo/ppo_s0", 0, {}), ("zoo/ppo_s1", 1, {}), ("zoo/ppo_s1", 0, {"scenario": "split"}),
         ("zoo/ppo_s1", 0, {"max_turns": 20})]  # fmt: skip


@pytest.mark.parametrize(("partner", "seat", "kwargs"), OTHER)
def test_another_configuration_gets_no_trained_reference(
    shipped: Path, partner: str, seat: int, kwargs: dict[str, Any]
) -> None:
    assert brs.find(GAME, partner, seat, kwargs) is None
    with pytest.raises(NoReference):
        reference_for(GAME, partner, seat, SEEDS, **kwargs)


def test_another_partner_file_gets_no_trained_reference(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setattr(brmod, "DATA", tmp_path)
    _ship(tmp_path, partner_id="sha256:" + "0" * 64)  # trained against another ppo_s1 file
    assert brs.find(GAME, "zoo/ppo_s1", 0, {}) is None
    with pytest.raises(NoReference):
        reference_for(GAME, "zoo/ppo_s1", 0, SEEDS)


def test_solvers_only_when_asked(shipped: Path) -> None:
    with pytest.raises(NoReference):
        reference_for(GAME, "zoo/ppo_s1", 0, SEEDS, trained=False)


def test_an_exact_reference_is_never_replaced(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setattr(brmod, "DATA", tmp_path)
    _ship(tmp_path, partner="greedy")
    assert brs.find(GAME, "greedy", 0, {}) is not None
    ref = reference_for(GAME, "greedy", 0, SEEDS)
    assert ref.kind == "exact" and ref.trained is None and ref.label == "exact"


def test_a_trained_reference_can_never_be_called_exact() -> None:
    with pytest.raises(ValueError, match="lower bound"):
        Reference(GAME, "zoo/ppo_s1", 0, "exact", "escaped", (0,), (1.0,), "x", trained={"a": 1})


def test_a_flipped_byte_is_refused(shipped: Path) -> None:
    data = bytearray(shipped.read_bytes())
    data[len(data) // 2] ^= 0x01
    shipped.write_bytes(bytes(data))
    with pytest.raises(brs.TrainedBRError, match="SHA-256"):
        reference_for(GAME, "zoo/ppo_s1", 0, SEEDS)
    spec = game_spec(GAME)
    with pytest.raises(brs.TrainedBRError, match="SHA-256"):
        play_episode(spec, [make_agent("br/zoo/ppo_s1", spec), make_agent("zoo/ppo_s1", spec)],
                     0, {})  # fmt: skip


def test_the_br_agent_refuses_an_episode_it_was_not_trained_for(shipped: Path) -> None:
    spec = game_spec(GAME)
    with pytest.raises(brs.TrainedBRError, match="no trained best response"):
        play_episode(spec, [make_agent("br/zoo/ppo_s1", spec), make_agent("zoo/ppo_s1", spec)],
                     0, {"scenario": "split"})  # fmt: skip


def _play(table: dict[str, float]) -> Any:
    return lambda who, seeds: {s: table[who] + 0.001 * s for s in seeds}


def test_the_better_of_trained_and_candidates_wins_on_selection_seeds() -> None:
    sel, ev = [100, 101], [0, 1]
    won = candidate_reference(_play({"a": 0.5, "b": 0.6, "br/x": 0.9}), ["a", "b"], sel, ev,
                              trained="br/x")  # fmt: skip
    assert won.kind == "trained lower bound" and won.values == {0: 0.9, 1: 0.901}
    assert "trained best response br/x won" in won.source and "b " in won.source
    lost = candidate_reference(_play({"a": 0.5, "b": 0.6, "br/x": 0.2}), ["a", "b"], sel, ev,
                               trained="br/x")  # fmt: skip
    assert lost.kind == "lower bound" and lost.values == {0: 0.6, 1: 0.601}
    assert "declared candidate b won over the trained best response br/x" in lost.source
    alone = candidate_reference(_play({"br/x": 0.3}), [], [], ev, trained="br/x")
    assert alone.kind == "trained lower bound" and alone.values == {0: 0.3, 1: 0.301}


SHIPPED = [p.parent.name for p in sorted(suite.DATA.glob("*/br.json"))]


@pytest.mark.parametrize("game", SHIPPED)
def test_shipped_brs_have_their_files_records_and_curves(game: str) -> None:
    data = brmod.load_manifest(game)
    assert data is not None and data["best_responses"]
    listed = {b.name: b for b in brs.best_responses(game)}  # through the entry point
    for e in data["best_responses"]:
        file = suite.DATA / game / e["file"]
        assert hashlib.sha256(file.read_bytes()).hexdigest() == e["sha256"] == listed[e["name"]].sha256
        assert file.stat().st_size == e["bytes"] < 600_000  # actor only
        assert e["partner_id"] == brs.partner_id(game, e["partner"])  # the partner shipped now
        t = e["train"]
        assert f"--seed {t['seed']}" in t["command"]
        assert f"--partners {brmod.partners_arg(game, e['partner'], e['seat'])} " in t["command"]
        assert e.get("others", {}) == {str(k): a for k, a in brmod.others_of(
            game, e["partner"], e["seat"]).items()}  # the seats it was trained and evaluated with
        assert t["steps"] > 0 and t["wall_s"] > 0 and t["cpu_s"] > 0
        with (suite.DATA / game / t["curve"]).open() as fh:
            assert 2 <= len(list(csv.DictReader(fh))) <= 200
        ev = e["evaluation"]
        assert ev["episodes"] == len(brmod.eval_seeds(game)) and ev["ci95"][0] <= ev["U_mean"]
        if ev["exact"] is not None:  # the gap where a solver gives the exact value
            assert ev["gap"] == pytest.approx(ev["exact"] - ev["U_mean"], abs=1e-5)


# CoBlock and Guandan: per-env recipes with the page's game arguments and seats.


@pytest.mark.parametrize("game", ["CoBlock", "Guandan"])
def test_recipes_train_on_the_pages_configuration(game: str) -> None:
    from tom_experiments.functional_tom import PLANS

    plan = PLANS[game]
    spec = game_spec(game)
    j = brmod.job(game, "random", steps=1000, seed=3)
    assert "--engine envs" in j.command and "--total-steps 1000 " in j.command
    assert "--seed 3 " in j.command and f"--seat {plan.focal_seats[0]} " in j.command
    assert resolved_env_kwargs(spec, dict(j.env_kwargs)) == resolved_env_kwargs(spec, dict(plan.kwargs))
    n = len(spec.load().raw_env(**spec.kwargs).possible_agents)
    seats = {s: (plan.others if plan.partner_seats and s not in plan.partner_seats else "random")
             for s in range(n) if s not in plan.focal_seats}  # fmt: skip
    assert brmod.seat_specs(game, "random") == seats  # the page's seats (Guandan: 2 is the partner)
    assert f"--partners {' '.join(seats.values())} --seat" in j.command


def test_guandan_seats_and_refusals() -> None:
    assert brmod.job("Guandan", "supporter").command.startswith(
        "tom-envs train ppo Guandan --partners heuristic supporter heuristic --seat 0 ")
    assert brmod.others_of("Guandan", "supporter") == {1: "heuristic", 3: "heuristic"}
    assert brmod.others_of("CoBlock", "mirror") == {}
    with pytest.raises(ValueError, match="partner's seat"):
        brmod.job("Guandan", "supporter", seat=2)
    with pytest.raises(ValueError, match="--seat"):
        brmod.job("CoBlock", "mirror", seat=2)


def _ship_guandan(root: Path, others: dict[str, str]) -> Path:
    folder = root / "Guandan"
    folder.mkdir(parents=True)
    dst = folder / "br_g.zip"
    dst.write_bytes(b"stands in for a checkpoint")  # never loaded below
    entry = {"name": "br_g", "partner": "supporter", "partner_id": "spec:supporter", "seat": 0,
             "env_kwargs": json.loads(json.dumps(resolved_env_kwargs(game_spec("Guandan"), {}),
                                                 default=str)),
             "file": dst.name, "sha256": hashlib.sha256(dst.read_bytes()).hexdigest(),
             "others": others, "train": {"steps": 2}}  # fmt: skip
    (folder / "br.json").write_text(json.dumps({"game": "Guandan", "format": 1,
                                                "best_responses": [entry]}))  # fmt: skip
    return dst


def test_a_br_with_other_seats_matches_only_those_seats(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setattr(brmod, "DATA", tmp_path)
    _ship_guandan(tmp_path, {"1": "heuristic", "3": "heuristic"})
    br = brs.find("Guandan", "supporter", 0, {}, others={1: "heuristic", 3: "heuristic"})
    assert br is not None and br.others == ((1, "heuristic"), (3, "heuristic"))
    assert brs.find("Guandan", "supporter", 0, {}) is None  # the partner in every seat: not it
    assert brs.find("Guandan", "supporter", 0, {}, others={1: "random", 3: "heuristic"}) is None
    with pytest.raises(NoReference):  # the reference API gives no seats: never this BR
        reference_for("Guandan", "supporter", 0, (0,))


def test_trained_values_seat_the_recorded_others(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setattr(brmod, "DATA", tmp_path)
    _ship_guandan(tmp_path, {"1": "heuristic", "3": "heuristic"})
    br = brs.find("Guandan", "supporter", 0, {}, others={1: "heuristic", 3: "heuristic"})
    assert br is not None
    spec = game_spec("Guandan")
    monkeypatch.setattr(brs, "load", lambda b, g, build: make_agent("random", g))  # no checkpoint
    built: list[str] = []

    def build(name: str, game: Any, *args: Any, **kwargs: Any) -> Any:
        built.append(name)
        return make_agent(name, game, *args, **kwargs)

    values = brs.trained_values(spec, br, "supporter", [5], {}, build)
    assert built == ["heuristic", "supporter", "heuristic"]  # seats 1, 2, 3
    by_hand = play_episode(spec, [make_agent("random", spec), make_agent("heuristic", spec),
                                  make_agent("supporter", spec), make_agent("heuristic", spec)],
                           5, {})  # fmt: skip
    objective = spec.load().functional_objective(**spec.kwargs)
    assert values == {5: float(objective(by_hand, (0,)))}


def test_overcooked_rule_bots_train_on_the_per_env_path_with_the_same_shaping() -> None:
    learned, bot = brmod.job("Overcooked", "zoo/mappo_s0"), brmod.job("Overcooked", "greedy")
    assert "--engine batched" in learned.command and "--engine envs" in bot.command
    same = bot.command.split(" --out ")[0].replace("greedy", "zoo/mappo_s0")
    assert same.replace("--engine envs", "--engine batched") == learned.command.split(" --out ")[0]
    assert "--engine batched" in brmod.job("Overcooked", "random").command  # vectorised
