"""Cost before the first call, a budget that stops cleanly, nothing paid twice (issue #33).

Against a loopback endpoint that counts every request (:class:`FaultyEndpoint`): the dry-run
estimate equals the calls a real run then sends; ``eval --validate`` prints it; ``--max-calls``
stops ``run`` and ``eval`` with exit code 3 and the same command continues without sending any
request twice; an ``eval`` killed with SIGKILL and run again repeats at most the requests that
were in flight (one per episode then playing), and leaves no worker behind; ``qa eval`` prints
its estimate and keeps its budget.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from importlib.util import find_spec
from pathlib import Path

import pytest

from tom_envs.agents import make_agent
from tom_envs.cli import main
from tom_envs.evaluation.cost import estimate_run
from tom_envs.qa.items import read_suite
from tom_envs.registration import game_spec
from tom_envs.runner import play_episode

pytestmark = pytest.mark.skipif(
    find_spec("openai") is None, reason="the openai package (the llm extra) is not installed"
)

PD = game_spec("PrisonersDilemma")
ROOT = Path(__file__).resolve().parents[2]


def distinct(requests: list[dict]) -> int:
    return len({json.dumps(r, sort_keys=True) for r in requests})


def write_config(
    tmp: Path, url: str, episodes: int, horizon: int, extra: str = ""
) -> tuple[Path, list[str]]:
    """A config file and the command line's ``--agent llm=SPEC --out DIR`` (an endpoint and a
    folder outside the current one are named on the command line, never by a file)."""
    cfg = tmp / "cfg.toml"
    cfg.write_text(
        f'name = "costtest"\nepisodes = {episodes}\n'
        '[agents]\ntft = "tit_for_tat"\n'
        f'[[games]]\ngame = "PrisonersDilemma"\nkwargs = {{ horizon = {horizon} }}\n'
        '[[matchups]]\ngame = "PrisonersDilemma"\nseats = ["llm", "tft"]\n'
        '[[matchups]]\ngame = "PrisonersDilemma"\nseats = ["tft", "tft"]\n'
    )
    spec = f"llm=llm:model=m:base_url={url}:temperature=0.5{extra}"
    return cfg, ["--agent", spec, "--out", str(tmp / "run")]


# ----------------------------------------------------------------------------- the estimate
@pytest.mark.parametrize("settings", ["", ":preset=paper004", ":strategy=cot+social"])
def test_the_dry_run_counts_the_calls_a_real_run_sends(faulty_endpoint, settings: str) -> None:
    ep = faulty_endpoint([{"content": "Reasoning: fine.\nPrediction: Option J\nAction: Option J"}])
    spec = f"llm:model=m:base_url={ep.base_url}:price_in=1:price_out=2{settings}"
    factories = [lambda: make_agent(spec, PD, trusted=True), lambda: make_agent("tit_for_tat", PD)]
    est = estimate_run(PD, factories, ["llm", "tft"], [0, 1, 2], {"horizon": 4})
    assert ep.requests == []  # offline: nothing was sent
    (agent,) = est.agents.values()
    assert agent.model == "m" and agent.price == (1.0, 2.0) and agent.episodes == 3
    real = [play_episode(PD, [f() for f in factories], seed, {"horizon": 4}) for seed in (0, 1, 2)]
    assert all(e.metrics["valid_action_pct/player_0"] == 100 for e in real)
    assert est.calls == len(ep.requests) > 0  # the protocol's calls per decision, exactly
    sent = sum(e.metrics["usage/tokens_in/player_0"] for e in real)
    assert est.prompt_tokens > 0 and sent > 0
    assert est.cost_max is not None and est.cost_max > 0
    text = "\n".join(est.lines())
    assert f"~{len(ep.requests)} calls" in text and "cost <= $" in text


def test_eval_validate_prints_the_estimate(faulty_endpoint, tmp_path: Path, capsys) -> None:
    ep = faulty_endpoint([{"content": "Action: Option J"}])
    cfg, llm = write_config(tmp_path, ep.base_url, episodes=5, horizon=4, extra=":probes=false")
    assert main(["eval", str(cfg), *llm, "--validate"]) == 0
    out = capsys.readouterr().out
    assert "valid; 2 cells x 5 episodes" in out
    assert "~20 calls (~4.0 per episode)" in out and "unpriced" in out
    assert ep.requests == [] and not (tmp_path / "run").exists()


def test_max_cost_needs_prices(faulty_endpoint, tmp_path: Path, capsys) -> None:
    ep = faulty_endpoint([{"content": "Action: Option J"}])
    cfg, llm = write_config(tmp_path, ep.base_url, episodes=2, horizon=2)
    assert main(["eval", str(cfg), *llm, "--max-cost", "1"]) == 2
    assert "--max-cost needs a price" in capsys.readouterr().err
    assert ep.requests == []


# ----------------------------------------------------------------------------- the budget
def test_a_budget_stops_eval_cleanly_and_the_rerun_pays_for_nothing_twice(
    faulty_endpoint, tmp_path: Path, capsys
) -> None:
    ep = faulty_endpoint([{"content": "Action: Option J"}])
    cfg, llm = write_config(tmp_path, ep.base_url, episodes=4, horizon=3, extra=":probes=false")
    assert main(["eval", str(cfg), *llm, "--workers", "1", "--max-calls", "5"]) == 3
    err = capsys.readouterr().err
    assert "stopped: budget of 5 calls reached: 5 calls sent" in err
    assert len(ep.requests) == 5
    assert main(["eval", str(cfg), *llm, "--workers", "1"]) == 0  # continues
    assert len(ep.requests) == distinct(ep.requests) == 12  # 4 episodes x 3 decisions, once each
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    total = results["usage"]["total"]
    assert total["calls"] == 12 and total["cache_hits"] == 5  # the first run's 5, replayed
    assert total["tokens_in"] == 12 * 11 and total["tokens_out"] == 12 * 3
    assert results["estimate"]["calls"] == 12  # the 4 stopped episodes, estimated before
    report = (tmp_path / "run" / "report.md").read_text()
    assert "## LLM usage" in report and "| **total** | 12 | 5 |" in report
    assert "Estimated before the first call" in report


def test_a_budget_stops_run_and_the_rerun_continues(faulty_endpoint, tmp_path: Path) -> None:
    ep = faulty_endpoint([{"content": "Action: Option J"}])
    args = ["run", "PrisonersDilemma", "--agents",
            f"llm:model=m:base_url={ep.base_url}:temperature=0.5:probes=false", "tit_for_tat",
            "--episodes", "3", "--kw", "horizon=3", "--out", str(tmp_path / "r")]  # fmt: skip
    assert main([*args, "--max-calls", "4"]) == 3
    assert sorted(p.name for p in (tmp_path / "r").glob("*.jsonl")) == ["episode_000000.jsonl"]
    assert main(args) == 0
    assert len(ep.requests) == distinct(ep.requests) == 9


def test_greedy_episodes_played_at_once_pay_once_for_the_same_request(
    faulty_endpoint, tmp_path: Path
) -> None:
    ep = faulty_endpoint([{"content": "Action: Option J", "delay": 0.1}])
    cfg, llm = write_config(tmp_path, ep.base_url, episodes=8, horizon=3, extra=":probes=false")
    llm[1] = llm[1].replace(":temperature=0.5", "")  # greedy: the same prompts
    assert main(["eval", str(cfg), *llm, "--workers", "1"]) == 0
    # the 8 episodes (played at once) ask the same 3 questions of the deterministic partner
    assert len(ep.requests) == distinct(ep.requests) == 3
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert (
        results["usage"]["total"]["calls"] == 24 and results["usage"]["total"]["cache_hits"] == 21
    )


# ----------------------------------------------------------------------------- kill and resume
def _alive(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmd = Path(f"/proc/{entry}/cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if marker in cmd and int(entry) != os.getpid():
                found.append(int(entry))
    return found


def test_a_killed_eval_resumes_repeating_at_most_the_requests_in_flight(
    faulty_endpoint, tmp_path: Path
) -> None:
    ep = faulty_endpoint([{"content": "Action: Option J", "delay": 0.2}])
    episodes, horizon = 6, 6
    cfg, llm = write_config(tmp_path, ep.base_url, episodes, horizon, extra=":probes=false")
    command = [sys.executable, "-m", "tom_envs.cli", "eval", str(cfg), *llm, "--workers", "2"]
    env = {**os.environ, "TOM_ENVS_PROGRESS": "off", "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while len(ep.requests) < 12 and time.monotonic() < deadline:
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    before, in_flight = len(ep.requests), ep.in_flight
    proc.wait()
    assert 12 <= before < episodes * horizon
    for _ in range(50):  # the workers notice their parent is gone
        if not _alive(str(cfg)):
            break
        time.sleep(0.1)
    assert _alive(str(cfg)) == []
    done = subprocess.run(command, env=env, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    repeated = len(ep.requests) - distinct(ep.requests)
    assert distinct(ep.requests) == episodes * horizon
    # each episode waits for one answer at a time, and every answer is in the cache before the
    # next request: what is repeated is at most each playing episode's last request
    assert repeated <= episodes, (repeated, in_flight)
    assert repeated <= max(in_flight, 1) + 1, (repeated, in_flight)


# ----------------------------------------------------------------------------- qa eval
def test_qa_eval_prints_its_estimate_and_keeps_its_budget(
    faulty_endpoint, tmp_path: Path, capsys, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the answers' cache: runs/qa/llm_cache
    ep = faulty_endpoint([{"content": "A"}])
    suite = ROOT / "tom_envs" / "qa" / "suites" / "PrisonersDilemma.jsonl"
    args = ["qa", "eval", str(suite), "--answerer", "llm", "--model", "m", "--base-url",
            ep.base_url, "--trials", "1", "--price-in", "1", "--price-out", "2"]  # fmt: skip
    assert main([*args, "--max-calls", "3"]) == 3
    err = capsys.readouterr().err
    n = len(read_suite(suite)[1])  # the shipped suite's size, not a number copied here
    assert f"estimate before the first LLM call: {n} answers ({n} items x 1 trials)" in err
    assert f"~{n} calls" in err and "cost <= $" in err
    assert len(ep.requests) == 3
    assert (tmp_path / "runs" / "qa" / "llm_cache").is_dir()
