"""The environment package stands alone: with every plugin package removed (``tom_baselines``,
``tom_llm_agents``, ``tom_experiments`` cannot be imported), ``run``, ``eval``, ``demo``,
``qa generate`` and the registry's conformance tests work, and what needs a missing package says
which one.

Each check runs in a fresh interpreter whose first act is to put a blocker at the head of
``sys.meta_path``: any import of a plugin package raises ``ModuleNotFoundError`` naming it, as in
an environment where only ``tom_envs`` is installed. The installed entry points stay listed (the
metadata is the checkout's), which is the harder case: every plugin is announced and none loads.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BLOCKED = ("tom_baselines", "tom_llm_agents", "tom_experiments")

PRELUDE = textwrap.dedent(
    f"""
    import sys

    class _NoPlugins:
        '''Every plugin package is missing: its import raises, as if it were not installed.'''

        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in {BLOCKED!r}:
                raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
            return None

    sys.meta_path.insert(0, _NoPlugins())
    """
)


def _python(body: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    script = PRELUDE + textwrap.dedent(body) + textwrap.dedent(
        f"""
        leaked = sorted(m for m in sys.modules if m.split(".")[0] in {BLOCKED!r})
        assert not leaked, leaked
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, "-c", script], cwd=tmp, env=env, capture_output=True,
                          text=True, timeout=900)  # fmt: skip


def test_the_blocker_blocks(tmp_path: Path) -> None:
    out = _python(
        """
        for name in ("tom_baselines.rmax", "tom_llm_agents", "tom_experiments.paper004"):
            try:
                __import__(name)
            except ModuleNotFoundError as exc:
                assert exc.name == name.split(".")[0], exc.name  # the package is missing
            else:
                raise AssertionError(name)
        import tom_envs.agents  # the env package itself imports
        print("blocked")
        """,
        tmp_path,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == "blocked"


def test_run_eval_demo_and_qa_generate_work_without_any_plugin(tmp_path: Path) -> None:
    (tmp_path / "bots.toml").write_text(
        textwrap.dedent(
            """
            name = "bots"
            episodes = 1
            [agents]
            tft = "tit_for_tat"
            rnd = "random"
            fp = "fictitious_play"
            [[games]]
            game = "PrisonersDilemma"
            kwargs = { horizon = 10 }
            [crossplay]
            agents = ["tft", "rnd", "fp"]
            [functional_tom]
            agents = ["fp", "rnd"]
            population = "all"
            """
        )
    )
    out = _python(
        """
        import contextlib, io
        from tom_envs.cli import main

        def cli(*argv):
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                code = main(list(argv))
            return code, err.getvalue()

        assert cli("run", "PrisonersDilemma", "--agents", "fictitious_play", "tit_for_tat",
                   "--episodes", "2", "--out", "runs/pd")[0] == 0
        assert cli("run", "Hanabi", "--agents", "convention", "--episodes", "1",
                   "--out", "runs/hanabi")[0] == 0
        code, err = cli("eval", "bots.toml", "--workers", "1", "--out", "runs/eval")
        assert code == 0, err
        assert "Cross-play" in open("runs/eval/report.md").read()
        assert cli("demo", "--episodes", "1", "--no-llm")[0] == 0
        code, err = cli("qa", "generate", "--n", "6", "--out", "runs/qa")
        assert code == 0, err
        import os
        assert "PrisonersDilemma.jsonl" in os.listdir("runs/qa")  # its scenarios need no rmax

        # what needs a missing package says which one
        code, err = cli("reproduce", "paper004")
        assert code == 2 and "tom_experiments" in err and "not installed" in err, err
        code, err = cli("eval", "paper000")
        assert code == 2 and "tom_experiments" in err, err
        code, err = cli("run", "PrisonersDilemma", "--agents", "rmax", "tit_for_tat")
        assert code == 2 and "tom_baselines" in err and "not installed" in err, err
        code, err = cli("train", "mappo", "PrisonersDilemma")
        assert code == 2 and "tom_baselines" in err, err
        print("ok")
        """,
        tmp_path,
    )
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    assert out.stdout.strip().endswith("ok")


def test_conformance_tests_pass_without_any_plugin(tmp_path: Path) -> None:
    """The registry's conformance tests (the GameModule contract, PettingZoo's and Gymnasium's
    checkers, every single-agent view) on every game, plugins removed."""
    out = _python(
        f"""
        import pytest
        code = pytest.main(["-q", "-x", "-p", "no:cacheprovider", "-o", "addopts=",
                            {str(ROOT / "tests" / "test_registry_api.py")!r}])
        assert code == 0, code
        """,
        tmp_path,
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert " passed" in out.stdout and "failed" not in out.stdout
