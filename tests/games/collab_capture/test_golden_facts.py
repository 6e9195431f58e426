"""Facts of the golden Collab Capture playthrough (``tests/golden/CollabCapture.txt``, written by
``tests/golden.py``) that hold by the rules whatever the bots do."""

from __future__ import annotations

from golden import GOLDEN_DIR, read

GOLDEN = GOLDEN_DIR / "CollabCapture.txt"


def test_golden_facts() -> None:
    """The thief is caught; the positions in Alice's text follow the moves."""
    g = read(GOLDEN)
    assert g.header["agents"] == "player_0=optimal player_1=greedy"
    assert float(g.metrics["captured"]) == 1
    turns: dict[int, dict] = {}
    for d in g.decisions:
        turns.setdefault(d.joint_step, {})[d.agent] = d
    assert turns
    rooms = (1, 6)
    for t in sorted(turns):
        alice, bob = turns[t]["player_0"], turns[t]["player_1"]
        assert f"I Alice am in room {rooms[0]}. Bob is in room {rooms[1]}." in alice.observation
        rooms = tuple(
            int(m.rsplit(" ", 1)[1]) if m.startswith("Move to room") else r
            for m, r in zip((alice.action_text, bob.action_text), rooms, strict=True)
        )
