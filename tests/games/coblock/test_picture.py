"""The isometric PNG picture (matplotlib is optional: the package never imports it itself)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from tom_envs.games.coblock.rules import CoBlockConfig, CoBlockGame
from tom_envs.games.coblock.tasks import builtin_tasks

PNG = b"\x89PNG\r\n\x1a\n"


def test_target_and_state_pictures(tmp_path) -> None:
    pytest.importorskip("matplotlib")
    from tom_envs.games.coblock import picture

    task = builtin_tasks("goal_dependent")[1]
    data = picture.render_png(task.target, (6, 5, 6), title=task.name)
    assert data.startswith(PNG) and len(data) > 5_000
    game = CoBlockGame(CoBlockConfig(task=task))
    s = game.initial_state(np.random.default_rng(0))
    assert picture.state_png(s, game.config.grid).startswith(PNG)
    out = picture.save_png(data, tmp_path / "x" / "t.png")
    assert out.read_bytes() == data
    from tom_envs.experiments.coblock import main

    assert main(["picture", "--task", "independent:2", "--out", str(tmp_path / "m.png")]) == 0
    assert (tmp_path / "m.png").read_bytes().startswith(PNG)
    argv = ["picture", "--task", "independent:3", "--agents", "cooperative", "cooperative",
            "--rounds", "2", "--out", str(tmp_path / "r.png")]  # fmt: skip
    assert main(argv) == 0 and (tmp_path / "r.png").read_bytes().startswith(PNG)


def test_projection_orders_near_blocks_lower() -> None:
    from tom_envs.games.coblock.picture import project

    assert project(0, 0, 0) == (0.0, 0.0)
    assert project(1, 0, 1)[1] < project(0, 0, 0)[1] < project(0, 1, 0)[1]
    assert project(1, 0, 0)[0] > 0 > project(0, 0, 1)[0]


def test_the_env_does_not_import_matplotlib() -> None:
    code = (
        "import sys, tom_envs, pettingzoo\n"
        "env = pettingzoo.make('aec', 'tom_envs/CoBlock-v0')\n"
        "env.reset(seed=0)\n"
        "assert 'matplotlib' not in sys.modules, 'matplotlib imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
