"""Facts of the golden Rock-Paper-Scissors playthrough (``tests/golden/RockPaperScissors.txt``,
written by ``tests/golden.py``) that hold by the rules, whatever RMax explores."""

from __future__ import annotations

from golden import GOLDEN_DIR, read

GOLDEN = GOLDEN_DIR / "RockPaperScissors.txt"
ROUNDS = 20


def test_golden_facts() -> None:
    g = read(GOLDEN)
    assert g.header["agents"] == "player_0=rmax player_1=tit_for_tat"
    assert '"horizon": 20' in g.header["kwargs"]
    rounds: dict[int, dict] = {}
    for d in g.decisions:
        rounds.setdefault(d.joint_step, {})[d.agent] = d
    assert sorted(rounds) == list(range(ROUNDS))
    prev_p0 = None
    win = {(1, 0), (2, 1), (0, 2)}
    for t in range(ROUNDS):
        p0, p1 = rounds[t]["player_0"], rounds[t]["player_1"]
        assert p0.rewards is None and p1.rewards is not None  # applied on player_1's move
        assert "fallback" not in p0.fields and "fallback" not in p1.fields
        # tit-for-tat in RPS opens with rock, then best-responds to player_0's previous action
        assert p1.action == (0 if prev_p0 is None else (prev_p0 + 1) % 3), t
        r0 = 1 if (p0.action, p1.action) in win else -1 if (p1.action, p0.action) in win else 0
        assert p1.rewards == {"player_0": r0, "player_1": -r0}
        assert f"You are currently playing round {t + 1}." in p0.observation.split("\n")
        assert "partner_action" in p0.fields["prediction"]
        prev_p0 = p0.action
    assert "Q: Which Option do you choose, Option J, Option F or Option B?" in (
        rounds[0]["player_0"].observation.split("\n")
    )
    assert g.end["length"] == str(ROUNDS)
    assert float(g.metrics["optimal_return"]) == ROUNDS
