"""The command line as a new user meets it: info, filtered list, --version, one --kw flag,
max_cycles on every game, friendly errors, and agent classes found from the current folder."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tom_envs import cli, plugins
from tom_envs.core.contract import MAX_CYCLES
from tom_envs.core.skin import SKIN
from tom_envs.registration import GAMES, single_agent_specs
from tom_envs.runner import Episode

TOM_ENVS = str(Path(sys.executable).parent / "tom-envs")


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = cli.main(argv)
    except SystemExit as exc:  # argparse: --version, usage errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("spec", GAMES, ids=lambda g: g.name)
def test_info_lists_arguments_bounds_agents_and_ids(spec, capsys) -> None:
    code, out, _ = _run(["info", spec.name], capsys)
    assert code == 0
    module = spec.load()
    for p in (*module.PARAMS, MAX_CYCLES, SKIN):
        row = next(line for line in out.splitlines() if line.startswith(f"| `{p.name}` |"))
        assert f"| {p.type} |" in row and p.allowed().replace("|", "\\|") in row
    for bot in module.bot_table(**spec.kwargs).names():
        assert f"    {bot} " in out
    assert f"pettingzoo.make('aec', '{spec.id}')" in out
    assert (f"pettingzoo.make('parallel', '{spec.id}')" in out) is spec.parallel
    for sa in single_agent_specs():
        if sa.game is spec:
            assert f"gymnasium.make('{sa.id}')" in out
            assert f"gymnasium.make('{sa.text_id}')" in out


def test_list_filters(capsys) -> None:
    code, out, _ = _run(["list", "hanabi"], capsys)
    assert code == 0 and "tom_envs/Hanabi-v0" in out and "Guandan" not in out
    code, out, _ = _run(["list", "--ids"], capsys)
    ids = out.split()
    views = single_agent_specs()
    assert code == 0 and set(ids) == {g.id for g in GAMES} | {s.id for s in views} | {
        s.text_id for s in views
    }
    code, out, _ = _run(["list", "--bots", "prisoner"], capsys)
    assert code == 0 and all(line.startswith("PrisonersDilemma ") for line in out.splitlines())
    assert any(" tit_for_tat " in line for line in out.splitlines())
    code, _, err = _run(["list", "no-such-game"], capsys)
    assert code == 2 and "no game matches 'no-such-game'; games: RockPaperScissors" in err


def test_version(capsys) -> None:
    from importlib.metadata import version

    code, out, _ = _run(["--version"], capsys)
    assert code == 0 and out.strip() == f"tom-envs {version('tom-envs')}"


def test_misspelled_kw_names_the_allowed_keys(capsys, tmp_path: Path) -> None:
    argv = ["run", "PrisonersDilemma", "--kw", "horizn=3", "--episodes", "1", "--out", str(tmp_path)]
    code, _, err = _run(argv, capsys)
    assert code == 2
    assert "error: unknown game argument 'horizn'; allowed: " in err and "horizon" in err
    assert "Traceback" not in err
    code, _, err = _run([*argv[:3], "horizon", *argv[4:]], capsys)
    assert code == 2 and "--kw: expected key=value, got 'horizon'" in err


@pytest.mark.parametrize("command", ["run", "demo", "eval"])
def test_zero_episodes_is_an_error(command: str, capsys) -> None:
    argv = {"run": ["run", "PrisonersDilemma"], "demo": ["demo"], "eval": ["eval", "paper004"]}
    code, _, err = _run([*argv[command], "--episodes", "0"], capsys)
    assert code == 2 and "--episodes: expected a whole number in [1, 1,000,000], got '0'" in err


@pytest.mark.parametrize("spec", GAMES, ids=lambda g: g.name)
def test_run_max_cycles_works_for_every_game(spec, capsys, tmp_path: Path) -> None:
    argv = ["run", spec.name, "--kw", "max_cycles=2", "--episodes", "1", "--out", str(tmp_path)]
    code, out, err = _run(argv, capsys)
    assert code == 0, err
    (path,) = tmp_path.glob("*.jsonl")
    episode = Episode.read(path)
    assert episode.env_kwargs.get("max_cycles") == 2
    assert "1 episodes" in out


def test_env_kwargs_is_the_old_spelling_of_kw(capsys, tmp_path: Path, monkeypatch) -> None:
    argv = ["run", "PrisonersDilemma", "--env-kwargs", "horizon=3", "--episodes", "1"]
    code, _, err = _run([*argv, "--out", str(tmp_path)], capsys)
    assert code == 0 and "note: --env-kwargs is now --kw" in err
    (path,) = tmp_path.glob("*.jsonl")
    assert Episode.read(path).env_kwargs == {"horizon": 3}
    seen = []
    real = plugins.load  # only the trainer is faked: command plugins still build their parsers
    monkeypatch.setattr(plugins, "load", lambda group, name: (lambda a: seen.append(a) or 0)
                        if group == "tom_envs.trainers" else real(group, name))  # fmt: skip
    assert cli.main(["train", "ppo", "PrisonersDilemma", "--kw", "horizon=3", "--seed", "1"]) == 0
    assert seen == [["--game", "PrisonersDilemma", "--env-kwargs", "horizon=3", "--seed", "1"]]
    help_text = cli.build_parser()._subparsers._group_actions[0].choices["run"].format_help()
    assert "--kw" in help_text and "--env-kwargs" not in help_text  # hidden, not advertised


AGENT = textwrap.dedent(
    """
    from tom_envs.core.agents import BaseAgent

    class First(BaseAgent):
        description = "the first legal action"

        def act(self, turn):
            return min(turn.legal_actions)
    """
)


def test_agent_classes_are_found_from_the_current_folder(tmp_path: Path) -> None:
    (tmp_path / "myagent.py").write_text(AGENT)
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("")
    (tmp_path / "mypkg" / "agents.py").write_text(AGENT)
    result = subprocess.run(
        [TOM_ENVS, "run", "PrisonersDilemma", "--agents", "myagent:First", "mypkg.agents:First",
         "--kw", "horizon=3", "--episodes", "2", "--out", "out"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "myagent:First vs mypkg.agents:First, 2 episodes" in result.stdout
    missing = subprocess.run(
        [TOM_ENVS, "run", "PrisonersDilemma", "--agents", "nosuch:First", "--episodes", "1"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert "error: agent spec 'nosuch:First': cannot load 'nosuch:First'" in missing.stderr


def test_missing_extras_name_the_install_command_from_the_checkout(monkeypatch, capsys) -> None:
    import builtins

    real = builtins.__import__

    def no_serve(name, *args, **kwargs):
        if name.startswith("tom_envs.serve"):
            raise ImportError("No module named 'starlette'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_serve)
    code, _, err = _run(["serve"], capsys)
    assert code == 2 and 'pip install -e ".[serve]"' in err
    monkeypatch.setattr(builtins, "__import__", real)
    monkeypatch.setattr(plugins, "_entries", lambda group: {"ppo": _Broken()})
    code, _, err = _run(["train", "ppo", "PrisonersDilemma"], capsys)
    assert code == 2 and 'pip install -e ".[rl]"' in err and "Traceback" not in err


class _Broken:
    value = "tom_baselines.ppo_sb3:main"

    def load(self):
        raise ImportError("No module named 'stable_baselines3'")


def test_unknown_game_and_misspelled_train_argument_are_friendly(capsys) -> None:
    code, _, err = _run(["info", "hanabii"], capsys)
    assert code == 2 and "error: unknown game 'hanabii'; registered games: " in err
    code, _, err = _run(["train", "ppo", "PrisonersDilemma", "--kw", "horizn=3"], capsys)
    assert code == 2 and "unknown game argument 'horizn'; allowed: " in err
    assert "Traceback" not in err
