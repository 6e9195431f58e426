"""SB3 PPO / MaskablePPO (baselines/ppo_sb3.py): smoke training, self-play, checkpoints, learning."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from tom_baselines import ppo_sb3
from tom_envs.agents import make_agent
from tom_envs.registration import game_spec
from tom_envs.runner import run


def tiny(tmp_path, **kw) -> ppo_sb3.Args:
    base = dict(
        env_kwargs=["horizon=5"], num_envs=2, n_steps=32, batch_size=32, n_epochs=2, hidden=16,
        total_steps=128, eval_episodes=3, progress=False, out=str(tmp_path / "run"),
    )  # fmt: skip
    return ppo_sb3.Args(**{**base, **kw})


@pytest.mark.parametrize(
    "kw",
    [{"partners": ["tit_for_tat"]}, {"partners": ["random"], "masked": False}, {"self_play": True}],
    ids=["maskable-vs-bot", "plain-ppo", "self-play"],
)
def test_smoke(tmp_path, kw) -> None:
    summary = ppo_sb3.train(tiny(tmp_path, **kw))
    assert summary["global_step"] >= 128
    for name in ("model.zip", "curve.csv", "curve.png"):
        assert (tmp_path / "run" / name).exists()
    assert "return/player_0" in summary["eval"]


def test_learner_in_seat_1(tmp_path) -> None:
    summary = ppo_sb3.train(tiny(tmp_path, seat=1, partners=["always_0"]))
    assert summary["eval"]["return_mean"] == summary["eval"]["return/player_1"]


def test_checkpoint_plays_any_seat_with_legal_actions(tmp_path) -> None:
    path = ppo_sb3.train(tiny(tmp_path, partners=["tit_for_tat"]))["checkpoint"]
    spec = game_spec("RockPaperScissors")
    for seats in ([f"checkpoint:path={path}", "always_2"], ["always_2", f"checkpoint:path={path}"]):
        eps = run(
            spec, [lambda s=s: make_agent(s, spec, trusted=True) for s in seats], 2, 0, None, {"horizon": 5}
        )
        assert all(sum(ep.invalid.values()) == 0 for ep in eps)


def test_trained_policy_beats_random(tmp_path) -> None:
    """Against always_1 in 10-round RPS, random play averages 0; the trained seat wins."""
    args = tiny(tmp_path, env_kwargs=["horizon=10"], partners=["always_1"], total_steps=6144,
                num_envs=4, n_steps=128, batch_size=128, n_epochs=4, hidden=32, lr=3e-3,
                eval_episodes=20)  # fmt: skip
    assert ppo_sb3.train(args)["eval"]["return/player_0"] >= 7.0
