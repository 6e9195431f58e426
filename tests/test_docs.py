"""docs/games/ is generated from the env docstrings and the registry; it must be current."""

from __future__ import annotations

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
