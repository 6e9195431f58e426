"""The killer's random moves come from the seed (the golden playthrough of Collab Escape is
``tests/golden/CollabEscape.txt``, written by ``tests/golden.py``)."""

from __future__ import annotations

from golden import GoldenCase, generate


def test_the_seed_decides_the_killer() -> None:
    def text(seed: int) -> str:
        return generate(GoldenCase("CollabEscape", ("optimal", "greedy"), seed=seed))

    assert text(1) == text(1)
    assert len({text(s) for s in range(4)}) > 1
