"""MAPPO (baselines/mappo.py): smoke training, turn-based reward credit, GAE, checkpoints, learning.

Tiny budgets only (seconds); the real numbers are in docs/results/baselines_rl.md.
"""

from __future__ import annotations

import csv

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import turn_game  # noqa: E402  (tests/baselines/turn_game.py: a tiny turn-based game)

from tom_baselines import mappo, mappo_policy  # noqa: E402
from tom_envs.agents import make_agent  # noqa: E402
from tom_envs.cli import main as cli  # noqa: E402
from tom_envs.registration import game_spec  # noqa: E402
from tom_envs.runner import run  # noqa: E402


def tiny(tmp_path, **kw) -> mappo.Args:
    base = dict(
        num_envs=4, num_steps=16, update_epochs=2, num_minibatches=2, hidden=32, eval_every=0,
        eval_episodes=3, progress=False, out=str(tmp_path / "run"),
    )  # fmt: skip
    return mappo.Args(**{**base, **kw})


@pytest.mark.parametrize("recurrent", [False, True], ids=["mlp", "gru"])
def test_smoke_self_play_writes_checkpoint_and_curve(tmp_path, recurrent) -> None:
    args = tiny(tmp_path, env_kwargs=["horizon=5"], total_steps=150, recurrent=recurrent)
    summary = mappo.train(args)
    assert summary["global_step"] >= 150
    for name in ("checkpoint.pt", "curve.csv", "curve.png"):
        assert (tmp_path / "run" / name).exists()
    with open(summary["curve_csv"]) as fh:
        rows = list(csv.DictReader(fh))
    assert rows and {"global_step", "return_mean", "entropy", "sps"} <= set(rows[0])
    assert "eval/return/player_0" in rows[-1]


def _turn_game_collector(args):
    """A collector on the two-seat turn game and small fresh (non-recurrent) nets for it."""
    collector = mappo.Collector(args, turn_game.SPEC, {}, {})
    actor, critic = mappo_policy.build_nets(
        {"num_players": 2, "num_actions": 3, "obs_dim": 5, "state_dim": 5, "hidden": 32,
         "recurrent": False, "actor_agent_id": False}
    )  # fmt: skip
    return collector, actor, critic


def test_turn_based_rewards_reach_the_seat_that_earned_them(tmp_path) -> None:
    """player_0's reward arrives during player_1's move; it must land on player_0's transition."""
    args = tiny(tmp_path, num_envs=2, num_steps=2 * turn_game.ROUNDS)  # exactly one episode
    collector, actor, critic = _turn_game_collector(args)
    data, steps = collector.collect(actor, critic, mappo_policy.ValueNorm())
    assert steps == 2 * 2 * turn_game.ROUNDS
    assert len(data["stream"]) == steps and data["done"].sum() == 4  # every row closed
    for c in range(2):
        p0 = np.flatnonzero(data["stream"] == 2 * c)
        p1 = np.flatnonzero(data["stream"] == 2 * c + 1)
        a0, a1 = data["action"][p0], data["action"][p1]
        expected = (a0 == 0).astype(float) + (a1 == a0).astype(float)
        np.testing.assert_allclose(data["reward"][p0], expected)
        np.testing.assert_allclose(data["reward"][p1], expected)
        assert data["done"][p0[-1]] and data["next_value"][p0[-1]] == 0.0
        np.testing.assert_allclose(data["next_value"][p0[:-1]], data["value"][p0[1:]])


def test_open_transitions_carry_into_the_next_rollout(tmp_path) -> None:
    args = tiny(tmp_path, num_envs=1, num_steps=3)  # cut mid-episode, player_0 still open
    collector, actor, critic = _turn_game_collector(args)
    first, _ = collector.collect(actor, critic, mappo_policy.ValueNorm())
    assert len(first["stream"]) == 1  # p0 round 1 closed; p1 round 1 and p0 round 2 open
    second, _ = collector.collect(actor, critic, mappo_policy.ValueNorm())
    assert list(second["stream"][:2]) == [1, 0]  # the carried rows come first, now closed


def test_gae_follows_each_seat_and_stops_at_episode_ends() -> None:
    data = {
        "stream": np.array([0, 1, 0, 1]),
        "reward": np.array([1.0, 0.0, 2.0, 0.0], np.float32),
        "value": np.array([0.5, 0.1, 0.2, 0.3], np.float32),
        "next_value": np.array([0.2, 0.3, 0.0, 0.7], np.float32),
        "done": np.array([False, False, True, False]),
    }
    g, lam = 0.9, 0.5
    adv = mappo.gae(data, g, lam)
    d2 = 2.0 - 0.2
    d0 = 1.0 + g * 0.2 - 0.5
    d3 = 0.0 + g * 0.7 - 0.3
    d1 = 0.0 + g * 0.3 - 0.1
    np.testing.assert_allclose(adv, [d0 + g * lam * d2, d1 + g * lam * d3, d2, d3], rtol=1e-6)


def test_chunks_are_consecutive_decisions_of_one_seat() -> None:
    idx = mappo.chunks(np.array([0, 1, 0, 0, 1, 0]), 2)
    assert idx.tolist() == [[0, 2], [3, 5], [1, 4]]
    assert mappo.chunks(np.array([3, 3, 3]), 2).tolist() == [[0, 1], [2, -1]]


def test_checkpoint_round_trip_and_plays_any_seat(tmp_path) -> None:
    summary = mappo.train(tiny(tmp_path, env_kwargs=["horizon=5"], total_steps=100))
    path = summary["checkpoint"]
    actor, _, _, meta = mappo_policy.load_checkpoint(path)
    blob = torch.load(path, weights_only=True)
    for name, tensor in actor.state_dict().items():
        assert torch.equal(tensor, blob["actor"][name])
    assert meta["game"] == "RockPaperScissors" and meta["num_actions"] == 3
    spec = game_spec("RockPaperScissors")
    for seats in (["tit_for_tat", f"checkpoint:path={path}"], [f"checkpoint:path={path}"] * 2):
        factories = [lambda s=s: make_agent(s, spec, trusted=True) for s in seats]
        a = run(spec, factories, 2, seed=3, env_kwargs={"horizon": 5})
        b = run(spec, factories, 2, seed=3, env_kwargs={"horizon": 5})
        assert all(sum(ep.invalid.values()) == 0 for ep in a)
        assert [s["action"] for ep in a for s in ep.steps] == [
            s["action"] for ep in b for s in ep.steps
        ]  # same seed, same play


def test_trained_policy_beats_random(tmp_path) -> None:
    """Against always_1 in 10-round RPS, random play averages 0; the trained seat wins."""
    args = tiny(tmp_path, env_kwargs=["horizon=10"], partners=["1=always_1"], total_steps=4000,
                num_envs=8, num_steps=32, lr=2e-3, eval_episodes=20)  # fmt: skip
    final = mappo.train(args)["final"]
    assert final["eval/return/player_0"] >= 7.0


def test_learns_a_turn_based_team_game(tmp_path) -> None:
    """Both seats learn; the first seat's reward comes only after its partner's move."""
    args = tiny(tmp_path, total_steps=5000, num_envs=8, num_steps=32, lr=2e-3, eval_episodes=20)
    final = mappo.train(args, spec=turn_game.SPEC)["final"]
    assert final["eval/return_mean"] >= 6.0  # random: 8/3, best: 8


def test_cli_train_then_run_checkpoint(tmp_path, capsys) -> None:
    out = tmp_path / "cli"
    argv = ["train", "mappo", "RockPaperScissors", "--env-kwargs", "horizon=3", "--total-steps",
            "50", "--num-envs", "2", "--num-steps", "8", "--eval-episodes", "2", "--no-progress",
            "--out", str(out)]  # fmt: skip
    assert cli(argv) == 0
    assert (out / "checkpoint.pt").exists() and (out / "curve.png").exists()
    agents = [f"checkpoint:path={out / 'checkpoint.pt'}", "tit_for_tat"]
    assert cli(["run", "RockPaperScissors", "--kw", "horizon=3", "--agents", *agents,
                "--episodes", "2", "--out", str(tmp_path / "traj")]) == 0  # fmt: skip
    assert "return/player_0" in capsys.readouterr().out


def test_event_rewards_shape_the_learners_transitions_and_anneal(tmp_path) -> None:
    spec = game_spec("Overcooked")
    kwargs = {**spec.kwargs, "horizon": 12, "observation": "features"}
    args = tiny(
        tmp_path, num_envs=1, num_steps=3, event_rewards=["potting_onion=3", "useful_plate=2"]
    )
    collector = mappo.Collector(args, spec, kwargs, {})
    env = collector.envs[0]
    meta = {"num_players": 2, "num_actions": 6, "obs_dim": int(env.observation_space("player_0")["observation"].shape[0]),
            "state_dim": int(env.state_space.shape[0]), "hidden": 32, "recurrent": False,
            "actor_agent_id": False}  # fmt: skip
    actor, critic = mappo_policy.build_nets(meta)
    collector.collect(actor, critic, mappo_policy.ValueNorm())
    rows = [int(collector.open_row[0, p]) for p in (0, 1)]
    assert min(rows) >= 0  # both seats' last decisions are open
    before = [collector.buffer.reward[r] for r in rows]
    returns = collector.returns.copy()
    collector.shaping_scale = 0.5
    collector.shape(0, ("player_1:potting_onion", "player_0:pickup_onion", "player_0:useful_plate"))
    after = [collector.buffer.reward[r] for r in rows]
    np.testing.assert_allclose(after, np.asarray(before) + 0.5 * (3 + 2))
    np.testing.assert_array_equal(collector.returns, returns)  # logged returns stay the game's
    # annealing: the scale falls linearly to 0 over event_rewards_horizon env steps
    args = tiny(tmp_path, game="Overcooked", env_kwargs=["horizon=12", "observation=features"],
                event_rewards=["potting_onion=3"], event_rewards_horizon=96, total_steps=192,
                num_envs=2, num_steps=12)  # fmt: skip
    summary = mappo.train(args)
    with open(summary["curve_csv"]) as fh:
        scales = [float(r["shaping_scale"]) for r in csv.DictReader(fh)]
    assert scales == pytest.approx([1.0, 1 - 24 / 96, 1 - 48 / 96, 1 - 72 / 96, 0.0, 0.0, 0.0, 0.0])


# ------------------------------------------------------------------ checkpoints know their env
SHIPPED = "docs/results/data/overcooked_cramped_room_mappo.pt"


def _info(game: str, **kwargs):
    from tom_envs.driver import episode_info
    from tom_envs.identity import resolved_env_kwargs

    spec = game_spec(game)
    bundle = spec.load().make_bundle(**{**spec.kwargs, **kwargs})
    shape = tuple(bundle.encoder.observation_shape)
    return episode_info(spec, bundle.game, 0, 0, resolved_env_kwargs(spec, kwargs), shape)


def test_checkpoint_records_its_environment_and_refuses_another(tmp_path) -> None:
    summary = mappo.train(tiny(tmp_path, env_kwargs=["horizon=5"], total_steps=60))
    agent = mappo_policy.MappoAgent.load(summary["checkpoint"])
    meta = agent.meta
    assert meta["resolved_env_kwargs"]["horizon"] == 5
    assert meta["resolved_env_kwargs"]["game"] == "rps"  # defaults resolved
    assert meta["observation_shape"] == list(_info("RockPaperScissors", horizon=5).observation_shape)
    assert meta["env_id"] == "tom_envs/RockPaperScissors-v0"
    agent.reset(_info("RockPaperScissors", horizon=5))  # its own environment: fine
    with pytest.raises(mappo_policy.CheckpointMismatchError) as err:
        agent.reset(_info("RockPaperScissors", horizon=5, window=2))
    msg = str(err.value)
    assert "window=None (checkpoint)" in msg and "window=2 (env)" in msg
    assert "observation shape" in msg  # the window changes the vector too: both named
    with pytest.raises(mappo_policy.CheckpointMismatchError, match="trained on RockPaperScissors"):
        agent.reset(_info("BattleOfSexes"))
    assert agent.config()["file_sha256"] and agent.config()["kind"] == "mappo"


def test_older_overcooked_checkpoint_needs_feature_observations(tmp_path) -> None:
    """An older checkpoint (the shipped one without its observation_shape field, as checkpoints
    were saved before it existed) with the default observation: an error at reset naming both
    sides, not a shape error at every decision."""
    import torch

    blob = torch.load(SHIPPED, map_location="cpu", weights_only=True)
    del blob["meta"]["observation_shape"]
    older = tmp_path / "older.pt"
    torch.save(blob, older)
    agent = mappo_policy.MappoAgent.load(older)
    assert "observation_shape" not in agent.meta
    with pytest.raises(mappo_policy.CheckpointMismatchError) as err:
        agent.reset(_info("Overcooked"))
    msg = str(err.value)
    assert "observation='features' (checkpoint)" in msg
    assert "observation size 45 (checkpoint)" in msg and "(env)" in msg
    agent.reset(_info("Overcooked", observation="features"))  # as trained: fine


def test_cli_run_refuses_the_mismatched_checkpoint(tmp_path, capsys) -> None:
    code = cli(["run", "Overcooked", "--agents", f"checkpoint:path={SHIPPED}", "greedy",
                "--episodes", "1", "--out", str(tmp_path)])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "observation" in err and "features" in err
    assert not list(tmp_path.rglob("*.jsonl"))  # nothing played, nothing recorded


def test_trains_against_a_partner_that_reads_the_text(tmp_path) -> None:
    """The partner is the LLM agent on a scripted client: it reads ``turn.text()`` and answers in
    words, mapped back by the game's parser. The per-env collector hands it the driver's turn
    (text layer attached), so training runs; each of its decisions is one model request."""
    import text_partner  # tests/baselines/text_partner.py

    text_partner.REQUESTS.clear()
    args = tiny(tmp_path, env_kwargs=["horizon=5"], partners=["1=text_partner:ScriptedLLMPartner"],
                num_envs=2, num_steps=10, total_steps=40, engine="envs", eval_episodes=2)  # fmt: skip
    summary = mappo.train(args)
    assert summary["global_step"] == 40 and summary["engine"] == "envs"
    # one partner decision per joint step in training (40) and evaluation (2 episodes x 5)
    assert len(text_partner.REQUESTS) == 40 + 2 * 5
    prompt = text_partner.REQUESTS[0].messages[-1]["content"]
    assert "You are currently playing round 1." in prompt  # the game's text, not a vector
    final = summary["final"]
    assert final["eval/valid_action_pct/player_1"] == 100.0  # every answer parsed to a legal move
