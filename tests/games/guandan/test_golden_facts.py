"""Facts of the golden Guandan playthrough (``tests/golden/Guandan.txt``, written by
``tests/golden.py``) that hold by the rules."""

from __future__ import annotations

from golden import GOLDEN_DIR, read

GOLDEN = GOLDEN_DIR / "Guandan.txt"


def test_golden_facts() -> None:
    g = read(GOLDEN)
    assert '"previous_order": [0, 2, 1, 3]' in g.header["kwargs"]
    moves = [d.action_text for d in g.decisions]
    assert "Tribute" in moves[0] and "Tribute" in moves[1], "double-down: both losers pay"
    assert "Return" in moves[2] and "Return" in moves[3]
    values = list(g.returns.values())
    assert values[0] == values[2] == -values[1] == -values[3] and abs(values[0]) in (1, 2, 3)
