"""Progress of long commands: a bar redrawn in place on a terminal (checked through a real pty),
a plain line every N items otherwise, LLM calls counted while a display is open."""

from __future__ import annotations

import io
import os
import pty
import re

import pytest

from tom_envs import progress
from tom_envs.cli import main
from tom_envs.progress import Progress


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_lines_every_n_items_when_not_a_terminal() -> None:
    out, clock = io.StringIO(), Clock()
    bar = Progress(25, "eval x", stream=out, every=10, clock=clock)
    assert bar.mode == "lines"
    for _ in range(25):
        clock.t += 2.0
        bar.update()
    bar.close()
    lines = out.getvalue().splitlines()
    assert lines == [
        "eval x: 10/25 episodes [0:20 < 0:30]",
        "eval x: 20/25 episodes [0:40 < 0:10]",
        "eval x: 25/25 episodes [0:50]",
    ]
    assert "\r" not in out.getvalue()


def test_default_every_is_a_tenth_and_failures_are_named() -> None:
    out = io.StringIO()
    with Progress(40, "run g", stream=out, clock=Clock()) as bar:
        for i in range(40):
            bar.update(failed=i == 3, note="seed 3: FAILED (boom)" if i == 3 else "")
    lines = out.getvalue().splitlines()
    assert lines[0] == "seed 3: FAILED (boom)"
    assert [ln.split(": ", 1)[1].split(" [")[0] for ln in lines[1:]] == [
        f"{k}/40 episodes, 1 failed" for k in range(4, 41, 4)
    ]


def test_llm_calls_are_counted_while_open_and_a_quiet_run_still_logs() -> None:
    out, clock = io.StringIO(), Clock()
    bar = Progress(2, "run llm", stream=out, clock=clock, quiet_s=30)
    progress.llm_call(3)
    assert bar.calls == 3 and out.getvalue() == ""  # no line before quiet_s passes
    clock.t = 31.0
    progress.llm_call()
    assert out.getvalue().splitlines() == ["run llm: 0/2 episodes, 4 LLM calls [0:31]"]
    bar.update(2)
    bar.close()
    progress.llm_call(5)  # closed: not counted
    assert bar.calls == 4
    assert out.getvalue().splitlines()[-1] == "run llm: 2/2 episodes, 4 LLM calls [0:31]"


def _pty_stream():
    master, slave = pty.openpty()
    return master, os.fdopen(slave, "w", buffering=1)


def _drain(master: int) -> str:
    chunks = []
    while True:
        import select

        ready, _, _ = select.select([master], [], [], 0.2)
        if not ready:
            return b"".join(chunks).decode()
        chunks.append(os.read(master, 65536))


def test_a_bar_redrawn_in_place_on_a_terminal() -> None:
    master, stream = _pty_stream()
    try:
        clock = Clock()
        bar = Progress(4, "eval x", stream=stream, clock=clock)
        assert bar.mode == "bar"  # decided from isatty() of a real terminal
        for _ in range(4):
            clock.t += 1
            bar.update()
            progress.llm_call(2)
        stream.flush()
        text = _drain(master)
    finally:
        stream.close()
        os.close(master)
    frames = [f for f in re.split(r"\r\x1b\[2K", text) if f]
    assert frames[0].startswith("eval x [######..................] 1/4 episodes [0:01 < 0:03]")
    assert "eval x [########################] 4/4 episodes" in frames[-1]
    assert text.endswith("\r\n") or text.endswith("\n")  # the bar's line ends with the work
    assert text.count("\n") == 1  # one line in all: every frame redrew it
    assert not bar._open and bar.calls == 6  # closed itself at 4/4; later calls not shown


def test_env_var_forces_or_silences(monkeypatch: pytest.MonkeyPatch) -> None:
    out = io.StringIO()
    monkeypatch.setenv("TOM_ENVS_PROGRESS", "off")
    bar = Progress(3, "x", stream=out)
    bar.update(3)
    progress.llm_call()
    assert out.getvalue() == "" and bar.calls == 0
    monkeypatch.setenv("TOM_ENVS_PROGRESS", "bar")
    assert Progress(3, "x", stream=io.StringIO()).mode == "bar"
    Progress(3, "x", stream=io.StringIO()).close()
    monkeypatch.setenv("TOM_ENVS_PROGRESS", "sometimes")
    with pytest.raises(ValueError, match="TOM_ENVS_PROGRESS"):
        Progress(3, "x", stream=io.StringIO())
    progress._ACTIVE.clear()


def test_run_prints_a_line_every_tenth_of_the_episodes(
    tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", "PrisonersDilemma", "--agents", "always_0", "tit_for_tat",
                 "--episodes", "20", "--kw", "horizon=3", "--out", str(tmp_path / "r")])  # fmt: skip
    assert code == 0
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("run ")]
    assert [ln.split(" [")[0] for ln in err] == [
        f"run PrisonersDilemma: {k}/20 episodes" for k in range(2, 21, 2)
    ]


def test_eval_counts_episodes_and_resumed_ones(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["eval", "quick", "--episodes", "2", "--workers", "2", "--out", str(tmp_path / "q")]
    assert main(args) == 0
    err = capsys.readouterr().err.splitlines()
    status = [ln for ln in err if ln.startswith("eval quick: ")]
    n = int(re.search(r"/(\d+) episodes", status[-1]).group(1))
    assert status[-1].startswith(f"eval quick: {n}/{n} episodes") and n >= 2
    assert main(args) == 0  # everything resumes: said once, nothing to play
    err = capsys.readouterr().err.splitlines()
    assert f"{n} already done (resumed), 0 to play" in err


def test_counting_marks_each_call_done_also_when_it_raises() -> None:
    out = io.StringIO()
    with Progress(3, "qa eval x", unit="answers", stream=out, every=1, clock=Clock()) as bar:
        answer = bar.counting(lambda item, trial: "A" if item != "bad" else 1 / 0)
        assert answer("q1", 0) == "A"
        with pytest.raises(ZeroDivisionError):
            answer("bad", 0)
        answer("q2", 0)
    assert bar.done == 3 and bar.failed == 1
    assert out.getvalue().splitlines()[-1] == "qa eval x: 3/3 answers, 1 failed [0:00]"


def test_qa_eval_reports_answers(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["qa", "eval", "--answerer", "random", "--trials", "1"]) == 0
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("qa eval random: ")]
    total = int(re.search(r"/(\d+) answers", err[-1]).group(1))
    every = total // 10  # a line every ~10% of the answers, and one for the last
    assert len(err) == -(-total // every)
    assert err[-1].startswith(f"qa eval random: {total}/{total} answers")


def test_calls_counted_after_the_last_item_get_a_final_line() -> None:
    # worker processes forward their LLM calls a little after their episodes: the line that
    # closes the display shows every call
    out = io.StringIO()
    bar = Progress(2, "eval x", stream=out, clock=Clock())
    bar.update(2)
    progress.llm_call(5)
    bar.close()
    assert out.getvalue().splitlines() == ["eval x: 2/2 episodes [0:00]",
                                           "eval x: 2/2 episodes, 5 LLM calls [0:00]"]  # fmt: skip
    quiet = io.StringIO()
    with Progress(2, "eval y", stream=quiet, clock=Clock()) as done:
        done.update(2)
    assert quiet.getvalue().splitlines() == ["eval y: 2/2 episodes [0:00]"]  # nothing new: no repeat
