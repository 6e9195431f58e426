"""The learned no-reasoning adversary (tom_envs/validity.py): it finds the leaks it is built
for on data it was not fitted on, stays at chance where there is none, and the gate applies
issue #32's rule."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sklearn")

from tom_envs.validity import (
    Example,
    Report,
    adversary_reports,
    format_reports,
    gate,
    kfold,
    leave_one_out,
    score_picks,
    transfer,
    wilson,
)


def _examples(n: int, seed: int, leak: str | None = None) -> list[Example]:
    """Five sorted numbers per item, the key uniform; ``leak`` moves it (``"order"``: only the
    key out of sorted order, as the old balancer did) or marks it (``"length"``: the key alone
    is written with a trailing word)."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(n):
        cands = [str(v) for v in sorted(rng.choice(40, size=5, replace=False))]
        ans = int(rng.integers(5))
        if leak == "order":
            key = cands.pop(ans)
            ans = int(rng.integers(5))
            cands.insert(ans, key)
        elif leak == "length":
            cands[ans] += " exactly"
        out.append(
            Example(
                {"game": f"g{k % 3}", "ability": ("EC", "ToM")[k % 2]},
                tuple(cands),
                ans,
                question="How many moves?",
                context="Rooms " + " ".join(cands),
                unit=f"s{k // 2}",
                id=str(k),
            )
        )
    return out


def test_wilson_interval_known_values() -> None:
    low, high = wilson(50, 100)
    assert low == pytest.approx(0.4038, abs=1e-4) and high == pytest.approx(0.5962, abs=1e-4)
    assert wilson(0, 10)[0] == 0.0 and wilson(10, 10)[1] == pytest.approx(1.0)
    assert wilson(0, 10)[1] == pytest.approx(0.2775, abs=1e-4)
    assert all(np.isnan(wilson(0, 0)))


def test_example_checks_its_arguments() -> None:
    with pytest.raises(ValueError, match="at least 2 candidates"):
        Example({"g": "a"}, ("yes",), 0)
    with pytest.raises(ValueError, match="answer 2 is not a candidate index"):
        Example({"g": "a"}, ("yes", "no"), 2)
    with pytest.raises(ValueError, match="chance must lie in"):
        Example({"g": "a"}, ("yes", "no"), 0, chance=1.5)
    assert Example({"g": "a"}, ("a", "b", "c", "d"), 1).base_rate == 0.25


@pytest.mark.parametrize("leak", ["order", "length"])
def test_adversary_finds_a_leak_on_held_out_data_and_the_gate_fails(leak: str) -> None:
    train, fresh = _examples(150, 0, leak), _examples(60, 1, leak)
    for rep in (
        kfold(train, "boosting", k=3),
        leave_one_out(train, "game", "logistic"),
        transfer(train, fresh, "boosting"),
    ):
        (pooled,) = rep.pooled(None)
        assert pooled.chance == pytest.approx(20.0)
        assert pooled.accuracy > 50.0, (leak, rep.scheme, pooled.accuracy)  # chance 20
    decision = gate([kfold(train, "boosting", k=3)], pool_by="ability")
    assert not decision.passed
    assert any("beats chance" in f for f in decision.failures)


def test_adversary_stays_near_chance_without_a_leak() -> None:
    reports = adversary_reports(_examples(240, 2), leave_out="game", fresh=_examples(90, 3), k=3)
    assert [r.scheme for r in reports] == ["3-fold", "leave-one-game-out", "fresh"] * 2
    for rep in reports:
        (pooled,) = rep.pooled(None)
        assert abs(pooled.excess) < 12.0, (rep.answerer, rep.scheme, pooled.accuracy)
        assert all(c.low < c.chance + 5.0 for c in rep.cells())  # no cell shown to beat chance
    table = format_reports(reports, pool_by="ability")
    assert "| boosting | 3-fold | g0 | EC |" in table and "**EC**" in table


def test_gate_rule_on_known_reports() -> None:
    exs = [Example({"game": "g", "ability": "ToM"}, ("a", "b"), k % 2, id=str(k)) for k in range(400)]
    right = [k % 2 == 0 for k in range(400)]  # 50%: chance
    assert gate([score_picks(exs, [0] * 400, "first")], pool_by="ability").passed
    # 60% on 400 items: lower end 55.1 >= chance + 5 -> shown to beat chance, and pooled +10
    picks = [ex.answer if k < 80 or right[k] else 1 - ex.answer for k, ex in enumerate(exs)]
    rep = score_picks(exs, picks, "leaky")
    assert rep.pooled("ability")[0].accuracy == pytest.approx(60.0)
    decision = gate([rep], pool_by="ability")
    assert not decision.passed and len(decision.failures) == 2 and decision.checks == 2
    # 54% on 400 items: not shown to beat chance by 5 (lower end 49.1), but pooled +4 > 3
    picks = [ex.answer if k < 32 or right[k] else 1 - ex.answer for k, ex in enumerate(exs)]
    decision = gate([score_picks(exs, picks, "slight")], pool_by="ability")
    assert decision.failures == (decision.failures[0],) and "pooled" in decision.failures[0]
    # far below chance fails the pooled check too (within 3 points means either side)
    picks = [1 - ex.answer if k < 80 or not right[k] else ex.answer for k, ex in enumerate(exs)]
    assert not gate([score_picks(exs, picks, "inverted")], pool_by="ability").passed


def test_repeats_average_the_fits_and_report_it() -> None:
    exs = _examples(90, 4, "length")
    rep = kfold(exs, "logistic", k=3, repeats=2)
    assert isinstance(rep, Report) and rep.repeats == 2
    assert all(c in (0.0, 0.5, 1.0) for c in rep.correct)
    assert "(mean of 2)" in format_reports([rep])
