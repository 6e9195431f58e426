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


def test_the_paper003_table_draws_its_pictures_from_its_cells_episode(tmp_path) -> None:
    """``tom-envs reproduce paper003 --out PAGE`` draws the target and the round-5 world from the
    ``picture.arch_round5`` cell's episode (5 rounds of the cooperative pair, replayed)."""
    pytest.importorskip("matplotlib")
    from tom_envs.agents import make_agent
    from tom_envs.registration import game_spec
    from tom_envs.runner import play_episode
    from tom_experiments.coblock import PICTURE_CELL, TABLE, pictures_section

    assert PICTURE_CELL in TABLE.cells(generated=0)
    spec = game_spec("CoBlock")
    episode = play_episode(spec, [make_agent(a, spec) for a in PICTURE_CELL.seats],
                           PICTURE_CELL.seed, env_kwargs=dict(PICTURE_CELL.kwargs))  # fmt: skip
    assert episode.metrics["timesteps"] == 5  # stopped at round 5, the task not yet built
    paths = TABLE.figures({PICTURE_CELL.key: [episode]}, tmp_path / "coblock.md")
    assert [p.name for p in paths] == ["coblock_fig1_target.png", "coblock_arch_round5.png"]
    assert all(p.read_bytes().startswith(PNG) for p in paths)
    section = "\n".join(pictures_section())
    assert all(f"({p.name})" in section for p in paths)


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
