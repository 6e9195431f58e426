"""docs/games/ is generated from the env docstrings and the registry; it must be current."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

from tom_envs.docs import render_pages, write_docs
from tom_envs.registration import GAMES

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
