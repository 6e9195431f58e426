"""`tom-envs eval`: config validation, resume, atomic files, backends, reports, figures."""

from __future__ import annotations

import http.server
import json
import socket
import threading
from pathlib import Path

import numpy as np
import pytest
from eval_configs import pd_config

from tom_envs.cli import main
from tom_envs.evaluation import ConfigError, evaluate, load_config, parse_config, shipped_configs
from tom_envs.evaluation import backends as be
from tom_envs.evaluation.config import validate
from tom_envs.evaluation.run import write_outputs
from tom_envs.games.matrix.metrics import solver_for
from tom_envs.games.matrix.rules import MatrixConfig, payoff
from tom_envs.runner import Episode

PD = {"game": "PrisonersDilemma", "kwargs": {"horizon": 6}}


def small(tmp_path: Path, **extra: object) -> dict:
    return pd_config(tmp_path, "t", 6, **{"crossplay": {"agents": ["a0", "a1", "tft"]}, **extra})


# ------------------------------------------------------------------ validation
@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"bogus": 1}, "unknown keys"),
        ({"games": [{"game": "NoSuchGame"}]}, "NoSuchGame"),
        ({"games": [{"game": "PrisonersDilemma", "kwargs": {"horizon": 0}}]}, "bad kwargs"),
        ({"games": [{"game": "PrisonersDilemma", "kwargs": {"colour": 1}}]}, "bad kwargs"),
        ({"crossplay": {"agents": ["a0", "nobody"]}}, "unknown agent label 'nobody'"),
        ({"agents": {"a0": "no_such_bot"}}, "unknown agent 'no_such_bot'"),
        ({"matchups": [{"game": "PrisonersDilemma", "seats": ["a0"]}]}, "has 2 seats"),
        ({"matchups": [{"game": "Hanabi", "seats": ["a0", "a0"]}]}, "not among the config's games"),
        ({"episodes": 0}, r"episodes must be a whole number in \[1, 1,000,000\], got 0"),
        ({"record": ["video"]}, "record"),
        ({"crossplay": {"agents": []}}, "empty"),
    ],
)
def test_bad_configs_fail_before_any_episode(tmp_path: Path, change: dict, message: str) -> None:
    data = small(tmp_path, **change)
    with pytest.raises(ConfigError, match=message):
        cfg = parse_config(data)
        evaluate(cfg, workers=1)
    assert not (tmp_path / "run").exists()


def test_malformed_toml_and_unknown_config(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("name = 'x'\n[agents\n")
    with pytest.raises(ConfigError, match="malformed TOML"):
        load_config(bad)
    assert main(["eval", str(tmp_path / "missing.toml")]) == 2
    assert "no config file" in capsys.readouterr().err


def test_unreachable_endpoint_is_caught_up_front(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    data = small(tmp_path, agents={"a0": "always_0"})
    data["crossplay"] = {"agents": ["a0", "llm"]}
    llm = {"llm": f"llm:model=m:base_url=http://127.0.0.1:{port}/v1"}  # the command line's
    with pytest.raises(ConfigError, match="unreachable"):
        evaluate(parse_config(data, agents=llm), workers=1)
    assert not (tmp_path / "run").exists()


def test_every_shipped_config_validates() -> None:
    names = set(shipped_configs())
    assert {"paper000", "paper001", "paper002", "paper003", "paper004", "crossplay",
            "functional_tom", "quick"} <= names  # fmt: skip
    from tom_envs.evaluation.tables import get_table

    for name in names:
        cfg = load_config(name)
        cells = validate(cfg, check_endpoints=False)  # raises on anything invalid
        tables = [c for t in cfg.tables for c in get_table(t["table"]).cells(**t.get("kwargs", {}))]
        assert cells or tables, f"{name}: nothing to play"  # a tables-only config (functional_tom)


def test_optional_agents_join_only_when_defined(tmp_path: Path) -> None:
    data = small(tmp_path)
    data["crossplay"] = {"agents": ["a0"], "optional_agents": ["tft", "llm"]}
    cfg = parse_config(data)
    assert cfg.crossplay[0]["agents"] == ["a0", "tft"]


# ------------------------------------------------------------------ figures
def test_crossplay_values_by_hand(tmp_path: Path) -> None:
    res = evaluate(parse_config(small(tmp_path)), workers=1)
    cfg = MatrixConfig(game="ipd", horizon=6)
    eps = {c.id: e for c, e in ((res.cell(k), v) for k, v in res.episodes.items())}
    for cid, episodes in eps.items():
        cell = res.cell(cid)
        if cell.focal == "a0" and cell.partner == "a1":
            assert all(e.returns["player_0"] == 6 * payoff(cfg, 0, 0, 1) for e in episodes)
        if cell.focal == "tft" and cell.partner == "a1":
            # opens with 0, then copies the partner's 1 forever
            want = payoff(cfg, 0, 0, 1) + 5 * payoff(cfg, 0, 1, 1)
            assert all(e.returns["player_0"] == want for e in episodes)
    assert len(res.episodes) == 9 and all(len(v) == 3 for v in res.episodes.values())


def test_functional_tom_uses_the_exact_best_response(tmp_path: Path) -> None:
    data = small(tmp_path, functional_tom={"agents": ["rmax"], "population": "single_action"})
    del data["crossplay"]
    res = evaluate(parse_config(data), workers=1)
    from tom_envs.evaluation.report import functional_tom

    ft = functional_tom(res, "PrisonersDilemma", res.config.functional_tom[0])
    cfg = MatrixConfig(game="ipd", horizon=6)
    for partner in ("always_0", "always_1"):
        best, kind, _source = ft["best"][partner]
        assert kind == "exact"
        exact = solver_for(cfg, partner, 0).optimal_return()
        assert best == pytest.approx(exact)
    # against always-cooperate the best response defects every round: 6 x temptation
    assert ft["best"]["always_0"][0] == pytest.approx(6 * payoff(cfg, 0, 1, 0))
    rows = {r["partner"]: r for r in ft["rows"]}
    assert rows["always_0"]["regret"] == pytest.approx(
        ft["best"]["always_0"][0] - rows["always_0"]["return"][0]
    )
    assert rows["always_0"]["literal"][0] == "tom_accuracy"


# ------------------------------------------------------------------ resume / atomic / backends
def test_resume_plays_only_missing_episodes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = parse_config(small(tmp_path))
    first = evaluate(cfg, workers=1)
    calls = []
    real = be.play_episode
    monkeypatch.setattr(be, "play_episode", lambda *a, **k: calls.append(1) or real(*a, **k))
    again = evaluate(cfg, workers=1)
    assert calls == [] and again.resumed == 27 and again.played == 0
    victim = next((tmp_path / "run").rglob("episode_000001.jsonl"))
    victim.unlink()
    truncated = next(p for p in (tmp_path / "run").rglob("episode_000002.jsonl") if p != victim)
    truncated.write_text(truncated.read_text().splitlines()[0] + "\n")  # a half-written file
    third = evaluate(cfg, workers=1)
    assert len(calls) == 2 and third.played == 2 and third.resumed == 25
    for cid, eps in first.episodes.items():
        assert [e.returns for e in eps] == [e.returns for e in third.episodes[cid]]
    assert not list((tmp_path / "run").rglob(".tmp-*"))


def test_parallel_equals_sequential(tmp_path: Path) -> None:
    data = small(tmp_path)
    data["agents"]["rnd"] = "random"
    data["crossplay"] = {"agents": ["rmax", "rnd", "tft"]}
    seq = evaluate(parse_config({**data, "out": str(tmp_path / "a")}), workers=1)
    par = evaluate(parse_config({**data, "out": str(tmp_path / "b")}), workers=2)
    assert seq.episodes.keys() == par.episodes.keys()
    for cid in seq.episodes:
        a = [(e.seed, e.returns, [s["action"] for s in e.steps]) for e in seq.episodes[cid]]
        b = [(e.seed, e.returns, [s["action"] for s in e.steps]) for e in par.episodes[cid]]
        assert a == b


def test_ray_backend_matches_local(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    data = small(tmp_path)
    data["agents"]["rnd"] = "random"
    data["crossplay"] = {"agents": ["rnd", "tft"]}
    data["episodes"] = 2
    local = evaluate(parse_config({**data, "out": str(tmp_path / "a")}), workers=1)
    ray_res = evaluate(parse_config({**data, "out": str(tmp_path / "b")}), backend="ray", workers=2)
    assert ray_res.backend == "ray" and ray_res.played == 8
    for cid, eps in local.episodes.items():
        assert [e.returns for e in eps] == [e.returns for e in ray_res.episodes[cid]]


# ------------------------------------------------------------------ failing endpoint
class _Flaky(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # the models list: reachable
        body = json.dumps({"object": "list", "data": [{"id": "m", "object": "model"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:  # every completion fails with a server error
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = b'{"error": {"message": "overloaded"}}'
        self.send_response(503)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_failing_endpoint_marks_episodes_failed_and_the_rest_completes(tmp_path: Path) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Flaky)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        data = small(tmp_path, episodes=2)
        llm = f"llm:model=m:base_url={url}:max_retries=1:retry_delay_s=0.01"  # the command line's
        data["games"] = [{"game": "PrisonersDilemma", "kwargs": {"horizon": 2}}]
        data["crossplay"] = {"agents": ["a0", "llm"]}
        cfg = parse_config(data, agents={"llm": llm})
        res = evaluate(cfg, workers=1)
        llm_cells = {c.id for c in res.cells if "llm" in c.labels}
        assert {f.job.cell_id for f in res.failures} == llm_cells
        # the first 503s, then the circuit breaker they opened (server errors count toward it)
        assert all(
            "503" in f.error or "overloaded" in f.error or "circuit breaker open" in f.error
            for f in res.failures
        )
        assert set(res.episodes) == {c.id for c in res.cells} - llm_cells
        assert all(len(v) == 2 for v in res.episodes.values())
        report = write_outputs(res).read_text()
        assert "## Failed episodes" in report
        failed_dir = tmp_path / "run" / "failed"
        assert len(list(failed_dir.rglob("*.json"))) == 2 * len(llm_cells)
        # the failed trajectories are kept for inspection, but a re-run retries them
        again = evaluate(cfg, workers=1)
        assert again.played == 2 * len(llm_cells) and again.resumed == 2
    finally:
        server.shutdown()


# ------------------------------------------------------------------ report and CLI
def test_report_files_and_plots(tmp_path: Path) -> None:
    data = small(tmp_path, functional_tom={"agents": ["rmax", "tft"], "population": "all"},
                 matchups=[{"game": "PrisonersDilemma", "seats": ["rmax", "tft"], "paper": "0.248"}])  # fmt: skip
    res = evaluate(parse_config(data), workers=1)
    report = write_outputs(res, "tom-envs eval t.toml")
    text = report.read_text()
    for heading in ("## Matchups", "## Cross-play", "## Functional vs literal ToM"):
        assert heading in text
    assert "| 0.248 |" in text
    for png in ("crossplay_PrisonersDilemma.png", "regret_PrisonersDilemma.png"):
        blob = (report.parent / png).read_bytes()
        assert blob[:8] == b"\x89PNG\r\n\x1a\n" and len(blob) > 2000
    figures = json.loads((report.parent / "results.json").read_text())
    assert set(figures["crossplay"]["PrisonersDilemma"]) == {
        f"{a}|{b}" for a in ("a0", "a1", "tft") for b in ("a0", "a1", "tft")
    }
    ep = Episode.read(next((tmp_path / "run").rglob("episode_000000.jsonl")))
    for value in ep.agents.values():  # "label=spec"; population members are literal specs
        label, spec = value.split("=", 1)
        assert res.config.agents.get(label, label) == spec


def test_regret_curve_is_the_cumulative_gap(tmp_path: Path) -> None:
    data = small(tmp_path, functional_tom={"agents": ["a0", "a1"], "population": "single_action"})
    del data["crossplay"]
    res = evaluate(parse_config(data), workers=1)
    from tom_envs.evaluation.report import functional_tom

    ft = functional_tom(res, "PrisonersDilemma", res.config.functional_tom[0])
    cfg = MatrixConfig(game="ipd", horizon=6)
    # vs always_0 the exact optimum defects every round (as a1 does); vs always_1 too. a0's gap
    # per round:
    gap0 = payoff(cfg, 0, 1, 0) - payoff(cfg, 0, 0, 0)
    gap1 = payoff(cfg, 0, 1, 1) - payoff(cfg, 0, 0, 1)
    want = np.cumsum([(gap0 + gap1) / 2] * 6)
    assert np.allclose(ft["curves"]["a0"], want)
    assert np.allclose(ft["curves"]["a1"], 0)


def test_cli_eval_runs_a_shipped_config(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "q"
    assert main(["eval", "quick", "--episodes", "1", "--out", str(out), "--workers", "1"]) == 0
    assert (out / "report.md").exists()
    assert main(["eval", "--list"]) == 0
    listing = capsys.readouterr().out
    assert "paper004" in listing and "crossplay" in listing
    assert main(["eval", "quick", "--validate", "--agent", "broken"]) == 2


def test_learning_curves_are_plotted_from_training_csvs(tmp_path: Path) -> None:
    csv = tmp_path / "curve.csv"
    csv.write_text("update,global_step,return_mean\n1,100,1.0\n2,200,\n3,300,3.0\n")
    data = small(tmp_path, learning_curves=[{"csv": str(csv), "label": "mappo"}])
    from tom_envs.evaluation.report import read_curve

    x, y = read_curve(csv, "global_step", ["return_mean"])["return_mean"]
    assert x.tolist() == [100.0, 300.0] and y.tolist() == [1.0, 3.0]  # the empty cell is skipped
    report = write_outputs(evaluate(parse_config(data), workers=1))
    assert "## Learning curves" in report.read_text()
    assert (report.parent / "learning_curves.png").read_bytes()[:4] == b"\x89PNG"
    missing = small(tmp_path, learning_curves=[{"csv": str(tmp_path / "nope.csv")}])
    with pytest.raises(ConfigError, match="does not exist"):
        validate(parse_config(missing))


# ------------------------------------------------------------------ paper tables
def test_paper_table_cells_play_in_the_pool_and_match_a_serial_run(tmp_path: Path) -> None:
    """The paper004 table rendered from pool episodes equals the serial cell on the same seeds,
    and a second run resumes every episode instead of replaying it."""
    from tom_envs.evaluation.tables import episodes_by_key, get_table
    from tom_experiments import paper004

    cfg = parse_config({"name": "t", "seed": 0, "episodes": 1,
                        "tables": [{"table": "paper004", "kwargs": {"episodes": 3}}]},
                       out=str(tmp_path))  # fmt: skip
    res = evaluate(cfg, backend="local", workers=2, check_endpoints=False)
    table = get_table("paper004")
    assert res.played == len(table.cells(episodes=3)) * 3 and not res.failures
    played = episodes_by_key(table.cells(episodes=3), res.tables["paper004"])
    key = "RockPaperScissors.single_action.rmax_paper"
    pooled = paper004.cell_result("RockPaperScissors", "single_action",
                                  paper004.PAPER_RMAX_SPEC, played[key], extras=True)  # fmt: skip
    serial = paper004.run_cell("RockPaperScissors", "single_action", paper004.PAPER_RMAX_SPEC, 3,
                               extras=True)  # fmt: skip
    assert pooled.functional_regret == serial.functional_regret
    assert pooled.tom_accuracy == serial.tom_accuracy and pooled.extra == serial.extra
    assert all(ep.members.get("player_1") for ep in played[key])  # the population's draws
    again = evaluate(cfg, backend="local", workers=2, check_endpoints=False)
    assert again.played == 0 and again.resumed == res.played


@pytest.mark.parametrize(
    ("entry", "match"),
    [
        ({"fn": "os:system"}, "unknown keys"),
        ({"table": "paper999"}, "unknown table"),
        ({"table": "paper004", "kwargs": {"episodes": 2, "rm": 1}}, "takes"),
        ({"title": "no table"}, "give table = NAME"),
    ],
)
def test_a_config_cannot_name_code_or_bad_table_arguments(entry: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        parse_config({"name": "t", "tables": [entry]})


def test_cli_reproduce_runs_any_papers_config_by_name(tmp_path: Path) -> None:
    from tom_envs.cli import build_parser, main, reproducible

    papers = ("paper000", "paper001", "paper002", "paper003", "paper004")
    assert reproducible() == sorted((*papers, "hanabi", "overcooked", "functional_tom"))  # tom_experiments
    for name in reproducible():
        assert build_parser().parse_args(["reproduce", name]).paper == name
        assert [t["table"] for t in load_config(name).tables] == [name]
    assert main(["reproduce", "quick"]) == 2  # a shipped config without tables

    argv = ["reproduce", "hanabi", "--episodes", "2", "--run-dir", str(tmp_path / "run"),
            "--out", str(tmp_path / "p.md"), "--workers", "1"]  # fmt: skip
    assert main(argv) == 0
    page = (tmp_path / "p.md").read_text()
    assert "## Cross-play, 2 players (2 seeds per cell)" in page
    assert "| `random` | 0.00 ± 0.00 | 0.00 ± 0.00 | 0.00 ± 0.00 |" in page  # random bombs out
    assert "| 3 | 2 |" in page  # the convention bot with 3 players, 2 seeds
    trajectories = sorted((tmp_path / "run" / "tables" / "hanabi").rglob("*.jsonl"))
    assert len(trajectories) == (9 + 3) * 2  # 9 pairings and 3 player counts x 2 seeds
    stamps = [p.stat().st_mtime_ns for p in trajectories]
    assert main(argv) == 0  # resumed: no trajectory rewritten, the same page
    assert [p.stat().st_mtime_ns for p in trajectories] == stamps
    assert (tmp_path / "p.md").read_text() == page


def test_the_documented_config_example_parses() -> None:
    """The TOML example in ``tom_envs.evaluation.config``'s docstring is a valid config."""
    import textwrap
    import tomllib

    import tom_envs.evaluation.config as config_module

    doc = config_module.__doc__ or ""
    block = doc.split("::\n", 1)[1].split("\n\nEverything is checked", 1)[0]
    cfg = parse_config(tomllib.loads(textwrap.dedent(block)))
    assert cfg.tables == [{"table": "paper004", "kwargs": {"episodes": 100}},
                          {"table": "functional_tom", "kwargs": {"games": ["PrisonersDilemma"]}}]  # fmt: skip
    assert cfg.games and cfg.matchups and cfg.crossplay and cfg.functional_tom


def test_a_report_names_its_config_relative_to_the_working_folder(tmp_path: Path, monkeypatch) -> None:
    from tom_envs.evaluation.report import shown_path

    inside = tmp_path / "experiments" / "configs" / "x.toml"
    monkeypatch.chdir(tmp_path)
    assert shown_path(str(inside)) == "experiments/configs/x.toml"
    assert shown_path("/elsewhere/y.toml") == "/elsewhere/y.toml"  # outside: as given
    assert shown_path(None) is None
