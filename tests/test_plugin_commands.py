"""``tom_envs.commands``: an installed package adds a ``tom-envs`` subcommand by entry point.

The plugin here is a real distribution on the path of a fresh interpreter (a ``.dist-info`` folder
with its ``entry_points.txt``, as pip writes it), so the test goes through the same metadata
lookup as an installed package.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PLUGIN = '''
import argparse


def command(parser: argparse.ArgumentParser):
    """Say hello to a game (a plugin command).

    It adds its own arguments and returns the function that runs it."""
    parser.add_argument("game")
    parser.add_argument("--times", type=int, default=1)

    def run(args: argparse.Namespace) -> int:
        from tom_envs.registration import game_spec

        for _ in range(args.times):
            print(f"hello {game_spec(args.game).id}")
        return 7

    return run


def clash(parser):
    """A plugin that wants a built-in name."""
    return lambda args: 0
'''


def _install(root: Path) -> None:
    (root / "hello_plugin.py").write_text(PLUGIN)
    info = root / "hello_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hello-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[tom_envs.commands]\n"
        "hello = hello_plugin:command\n"
        "broken = no_such_module:command\n"
        "run = hello_plugin:clash\n"
    )


def _cli(root: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    script = f"import sys; from tom_envs.cli import main; sys.exit(main({list(argv)!r}))"
    return subprocess.run([sys.executable, "-c", script], env=env, cwd=root, capture_output=True,
                          text=True, timeout=300)  # fmt: skip


def test_an_installed_package_adds_a_subcommand(tmp_path: Path) -> None:
    _install(tmp_path)
    out = _cli(tmp_path, "hello", "PrisonersDilemma", "--times", "2")
    assert out.returncode == 7, out.stderr
    assert out.stdout.splitlines() == ["hello tom_envs/PrisonersDilemma-v0"] * 2
    helped = _cli(tmp_path, "--help")
    assert "Say hello to a game (a plugin command)." in helped.stdout
    own = _cli(tmp_path, "hello", "--help")
    assert "--times" in own.stdout and own.returncode == 0


def test_a_broken_or_clashing_plugin_command_is_named_not_fatal(tmp_path: Path) -> None:
    _install(tmp_path)
    broken = _cli(tmp_path, "broken", "anything", "--flag")
    assert broken.returncode == 2 and "Traceback" not in broken.stderr
    assert "no_such_module" in broken.stderr and "'broken'" in broken.stderr
    # a built-in keeps its name: the plugin's "run" is ignored, with a warning
    run = _cli(tmp_path, "run", "PrisonersDilemma", "--agents", "random", "--episodes", "1",
               "--out", str(tmp_path / "runs"))  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "plugin 'run' ignored: a built-in command has that name" in run.stderr
    assert "tom_envs/PrisonersDilemma-v0: random vs random" in run.stdout
