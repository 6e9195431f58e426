"""docs/games/ is generated from the env docstrings and the registry; it must be current."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import numpy as np
import pytest

from tom_envs.docs import render_pages, write_docs
from tom_envs.registration import GAMES, game_spec

DOCS = Path(__file__).parent.parent / "docs"


def test_generated_docs_are_current() -> None:
    stale = write_docs(DOCS, check=True)
    assert not stale, f"run `tom-envs docs`: stale pages {stale}"


def test_every_game_has_a_page_with_its_ids_and_sections() -> None:
    pages = render_pages()
    text = "\n".join(pages.values())
    for spec in GAMES:
        assert f"`{spec.id}`" in text
    for rel, page in pages.items():
        if rel.endswith("README.md"):
            continue
        for section in ("## Description", "## Observation", "## Actions", "## Rewards",
                        "## Episode End", "## Arguments", "## Version History"):
            assert section in page, f"{rel} lacks {section}"


def test_the_games_index_has_four_cells_a_row_and_working_links() -> None:
    """A summary with ``|`` (``scenario=together|split``) is escaped, not split into cells."""
    index = render_pages()["games/README.md"]
    rows = [ln for ln in index.splitlines() if ln.startswith("| `tom_envs/")]
    assert len(rows) == len(GAMES)
    for row in rows:
        cells = re.split(r"(?<!\\)\|", row.strip().strip("|"))
        assert len(cells) == 4, row
        assert re.fullmatch(r" \[(\w+)\]\(\1\.md\) ", cells[3]), row


README = Path(__file__).parent.parent / "README.md"


def _fenced(text: str, lang: str) -> list[str]:
    blocks, cur, inside = [], [], False
    for line in text.splitlines():
        if not inside and line.strip() == f"```{lang}":
            inside, cur = True, []
        elif inside and line.strip() == "```":
            inside = False
            blocks.append("\n".join(cur))
        elif inside:
            cur.append(line)
    return blocks


def test_readme_example_runs_and_its_two_commands_are_first(tmp_path: Path) -> None:
    """The README's first Python block is a whole episode; its first bash block holds exactly
    the two commands, the second one running pytest (what .ci/run executes)."""
    text = README.read_text()
    example = _fenced(text, "python")[0]
    script = tmp_path / "readme_example.py"
    script.write_text(example)
    namespace = runpy.run_path(str(script))  # the project's own example, as a user runs it
    assert not namespace["env"].agents  # the episode ran to its end
    commands = [c for c in _fenced(text, "bash")[0].splitlines() if c.strip()]
    assert len(commands) == 2 and "tom-envs demo" in commands[0]
    assert commands[1].endswith("python -m pytest -q")
    assert text.index("```python") < text.index("```bash")


QUICKSTART = Path(__file__).parent.parent / "docs" / "quickstart.md"
ROOT = Path(__file__).parent.parent


def test_quickstart_adding_a_game_walks_through_files_that_exist() -> None:
    """The "Adding a game" section names the example's files (all of them, and only files that
    exist) and quotes its registry entry exactly as tom_envs/registration.py has it."""
    text = QUICKSTART.read_text()
    section = text.split("## Adding a game", 1)[1].split("\n## ", 1)[0]
    paths = set(re.findall(r"`((?:tom_envs|tests|docs)/[\w/.-]*(?:\.\w+|/))`", section))
    assert paths, "the section names no file"
    for rel in paths:
        assert (ROOT / rel).exists(), f"docs/quickstart.md names {rel}, which does not exist"
    folder = ROOT / "tom_envs" / "games" / "example"
    for file in sorted(folder.glob("*.py")):
        if file.name != "__init__.py":
            assert f"tom_envs/games/example/{file.name}" in paths, f"{file.name} not walked through"
    entry = _fenced(section, "python")[0]
    assert entry in (ROOT / "tom_envs" / "registration.py").read_text()
    assert "tom_envs.games.example" in (ROOT / "pyproject.toml").read_text()


# ----------------------------------------------------------------------------- animations
MEDIA = DOCS / "games" / "media"


def test_every_game_page_shows_an_existing_animation() -> None:
    pytest.importorskip("PIL")
    from PIL import Image

    from tom_envs.docs import ANIMATIONS, MAX_WIDTH, _page_key

    keys = {_page_key(spec.module) for spec in GAMES}
    assert keys == set(ANIMATIONS), "every game page has an animation, and only those"
    pages = render_pages()
    for key in keys:
        page = pages[f"games/{key}.md"]
        refs = re.findall(r"!\[[^\]]*\]\((media/[\w.-]+\.gif)\)", page)
        assert refs == [f"media/{key}.gif"], f"{key}.md embeds {refs}"
        assert page.index(refs[0]) < page.index("## "), "the animation sits under the title"
        path = DOCS / "games" / refs[0]
        assert path.exists(), f"missing {path}: run `tom-envs docs --animations`"
        assert path.stat().st_size < 300_000, f"{path.name} is {path.stat().st_size} bytes"
        with Image.open(path) as im:
            assert im.format == "GIF" and im.width <= MAX_WIDTH and im.n_frames >= 3
            total_ms = 0
            for i in range(im.n_frames):
                im.seek(i)
                total_ms += im.info["duration"]
            assert 2_000 <= total_ms <= 16_000, f"{path.name} lasts {total_ms} ms"


def _first_frame(path: Path) -> np.ndarray:
    from PIL import Image

    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"), dtype=np.int16)


@pytest.mark.parametrize("key", ["example", "matrix", "hanabi"])
def test_an_animation_regenerates_from_its_seed(key: str, tmp_path: Path) -> None:
    """The script plays the same seeded episode again: the same number of frames and the same
    first frame as the shipped GIF (pixels compared within palette rounding, not bytes, so another
    Pillow version passes), and its first frame is the env's own rgb_array render after reset."""
    pytest.importorskip("PIL")
    from tom_envs.docs import ANIMATIONS, episode_frames, write_animation

    anim = ANIMATIONS[key]
    frames = episode_frames(anim)
    again = episode_frames(anim)
    assert len(frames) == len(again) and all(
        np.array_equal(a, b) for a, b in zip(frames, again, strict=True)
    )
    spec = game_spec(anim.game)
    env = spec.load().raw_env(render_mode="rgb_array", **{**spec.kwargs, **dict(anim.kwargs)})
    env.reset(seed=anim.seed)
    assert np.array_equal(frames[0], env.render())
    assert len({f.tobytes() for f in frames}) > 2  # the episode moves
    new = write_animation(key, tmp_path)
    shipped = MEDIA / f"{key}.gif"
    from PIL import Image

    with Image.open(new) as a, Image.open(shipped) as b:
        assert (a.n_frames, a.size) == (b.n_frames, b.size)
    diff = np.abs(_first_frame(new) - _first_frame(shipped)).mean()
    assert diff < 2.0, f"first frames differ by {diff:.2f} per channel"
