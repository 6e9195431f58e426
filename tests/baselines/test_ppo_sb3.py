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


def test_trains_against_a_partner_that_reads_the_text(tmp_path) -> None:
    """The single-agent path (SingleAgentEnv, the episode driver) with the LLM agent on a scripted
    client as the partner: its turns carry the text layer, so PPO trains against it; one model
    request per partner decision."""
    import text_partner  # tests/baselines/text_partner.py

    text_partner.REQUESTS.clear()
    summary = ppo_sb3.train(tiny(tmp_path, partners=["text_partner:ScriptedLLMPartner"],
                                 engine="envs"))  # fmt: skip
    assert summary["global_step"] >= 128 and summary["engine"] == "envs"
    # RPS: one partner decision per learner step (training, then 3 evaluation episodes of 5)
    assert len(text_partner.REQUESTS) == summary["global_step"] + 3 * 5
    assert summary["eval"]["valid_action_pct/player_1"] == 100.0


def test_self_play_partners_are_the_live_policy() -> None:
    """Per-env self-play: every other seat is played by the learner's network (not the random
    placeholders a SingleAgentEnv could have kept)."""
    live: list[ppo_sb3.SelfPlayPartner] = []
    env = ppo_sb3.make_env(ppo_sb3.Args(game="BombDefusal", self_play=True), 0, live)
    env.reset(seed=0)
    seats = env.unwrapped.driver.seats
    assert seats[0] is None and [id(s) for s in seats[1:]] == [id(p) for p in live]
    assert all(isinstance(p, ppo_sb3.SelfPlayPartner) for p in live) and len(live) == 2
