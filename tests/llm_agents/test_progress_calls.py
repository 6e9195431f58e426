"""Every answered LLM request reaches the command's progress display: in this process (`run`) and
from the evaluation's worker processes (`eval --workers 2`), counted once each."""

from __future__ import annotations

import io
from pathlib import Path

from tom_envs.evaluation import evaluate, parse_config
from tom_envs.progress import Progress


def _llm_calls(episodes) -> int:
    return int(sum(v for e in episodes for k, v in e.metrics.items() if k.startswith("usage/calls/")))


def test_worker_processes_forward_their_llm_calls(tmp_path: Path, fake_endpoint) -> None:
    ep = fake_endpoint()
    data = {
        "name": "llmprog", "episodes": 3,
        "agents": {"tft": "tit_for_tat"},
        "games": [{"game": "PrisonersDilemma", "kwargs": {"horizon": 4}}],
        "crossplay": {"agents": ["llm", "tft"]},
    }  # fmt: skip
    out = io.StringIO()
    with Progress(label="eval llmprog", stream=out, mode="lines") as bar:
        cfg = parse_config(data, agents={"llm": f"llm:model=fake:base_url={ep.base_url}"},
                           out=str(tmp_path / "run"))  # both the command line's
        res = evaluate(cfg, workers=2, progress=bar, check_endpoints=False)
    played = [e for eps in res.episodes.values() for e in eps]
    assert not res.failures and len(played) == 12
    served = len(ep.requests)
    assert served > 0 and _llm_calls(played) == served
    assert bar.calls == served  # every request, counted once, across processes
    assert out.getvalue().splitlines()[-1].startswith(f"eval llmprog: 12/12 episodes, {served} LLM calls")


def test_run_counts_llm_calls_in_process(tmp_path: Path, fake_endpoint, capsys) -> None:
    from tom_envs.cli import main

    ep = fake_endpoint()
    code = main(["run", "PrisonersDilemma", "--agents", f"llm:model=fake:base_url={ep.base_url}",
                 "tit_for_tat", "--episodes", "2", "--kw", "horizon=3", "--no-endpoint-check",
                 "--out", str(tmp_path / "r")])  # fmt: skip
    assert code == 0
    lines = capsys.readouterr().err.strip().splitlines()
    last = [ln for ln in lines if ln.startswith("run PrisonersDilemma:")][-1]  # the bar's last
    assert last.startswith(f"run PrisonersDilemma: 2/2 episodes, {len(ep.requests)} LLM calls")
    assert lines[-1].startswith("LLM usage: 6 calls")  # then what was spent
