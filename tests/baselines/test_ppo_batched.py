"""SB3 PPO on the batched engines (tom_envs/integrations/sb3.py, baselines/ppo_batched.py).

The adapter's transitions against the per-env path (the same actions give the same observations,
rewards, dones, terminal observations and masks; training from one seed gives the same weights),
the turn-based self-play slots against the PettingZoo env, SB3's own VecEnv machinery, the engine
choice, and learning.
"""

from __future__ import annotations

import csv
import json
import zipfile

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.utils import check_for_correct_spaces
from stable_baselines3.common.vec_env import DummyVecEnv, VecCheckNan, VecMonitor

from tom_baselines import ppo_batched, ppo_sb3
from tom_envs.core.vector import RandomPartner
from tom_envs.games.bomb_defusal.env import raw_env as bomb_env
from tom_envs.games.bomb_defusal.vector import BombVectorEnv
from tom_envs.games.collab_capture.vector import CapturePartner, CaptureVectorEnv
from tom_envs.games.matrix.vector import MatrixPartner, MatrixVectorEnv
from tom_envs.games.overcooked.vector import OvercookedVectorEnv
from tom_envs.integrations.sb3 import BatchedVecEnv, slot_returns
from tom_envs.registration import game_spec
from tom_envs.single_agent import SingleAgentEnv


def tiny(tmp_path, **kw) -> ppo_sb3.Args:
    base = dict(
        env_kwargs=["horizon=10"], partners=["tit_for_tat"], num_envs=4, n_steps=32,
        batch_size=64, n_epochs=2, hidden=16, total_steps=1024, eval_episodes=3,
        progress=False, out=str(tmp_path / "run"),
    )  # fmt: skip
    return ppo_sb3.Args(**{**base, **kw})


def per_env(game: str, partner: str, B: int, seed: int, **kw) -> DummyVecEnv:
    venv = DummyVecEnv([lambda: Monitor(SingleAgentEnv(game, partners=partner, **kw))] * B)
    venv.seed(seed)
    return venv


CASES = {  # game, partner, game kwargs, batched engine + vectorised partner
    "rps-tit_for_tat": ("RockPaperScissors", "tit_for_tat", {"horizon": 6},
                        lambda B, kw: (e := MatrixVectorEnv(B, game="rps", keep_final_obs=True, **kw),
                                       MatrixPartner(e, "tit_for_tat"))),
    "ipd-alternating": ("PrisonersDilemma", "alternating", {"horizon": 5},
                        lambda B, kw: (e := MatrixVectorEnv(B, game="ipd", keep_final_obs=True, **kw),
                                       MatrixPartner(e, "alternating"))),
    "capture-greedy-truncated": ("CollabCapture", "greedy", {"max_cycles": 2},
                                 lambda B, kw: (e := CaptureVectorEnv(B, keep_final_obs=True, **kw),
                                                CapturePartner(e, "greedy"))),
    "capture-greedy": ("CollabCapture", "greedy", {"scenario": "both_closed"},
                       lambda B, kw: (e := CaptureVectorEnv(B, keep_final_obs=True, **kw),
                                      CapturePartner(e, "greedy"))),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CASES))
def test_transitions_equal_the_per_env_path(case) -> None:
    """Same actions -> the same observations, rewards, dones, terminal observations, truncation
    flags, masks and episode statistics as a DummyVecEnv of SingleAgentEnv copies."""
    game, partner, kw, build = CASES[case]
    B = 3
    ref = per_env(game, partner, B, seed=5, **kw)
    engine, vpartner = build(B, kw)
    space = ref.observation_space
    ours = VecMonitor(BatchedVecEnv(engine, "partner", partner=vpartner, observation_space=space))
    ours.seed(5)
    a_obs, b_obs = ref.reset(), ours.reset()
    rng = np.random.default_rng(0)
    ends = truncs = 0
    for t in range(40):
        masks = get_action_masks(ref)
        assert np.array_equal(masks, get_action_masks(ours)), t
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        a_obs, a_r, a_d, a_i = ref.step(actions)
        b_obs, b_r, b_d, b_i = ours.step(actions)
        assert np.array_equal(a_obs, b_obs) and np.array_equal(a_r, b_r), t
        assert np.array_equal(a_d, b_d), t
        for i in np.flatnonzero(a_d):
            ends += 1
            truncs += a_i[i]["TimeLimit.truncated"]
            assert np.array_equal(a_i[i]["terminal_observation"], b_i[i]["terminal_observation"])
            assert a_i[i]["TimeLimit.truncated"] == b_i[i]["TimeLimit.truncated"]
            assert a_i[i]["episode"]["r"] == pytest.approx(b_i[i]["episode"]["r"])
            assert a_i[i]["episode"]["l"] == b_i[i]["episode"]["l"]
    assert ends >= B  # episodes ended (and restarted) inside the comparison
    assert (truncs > 0) == ("truncated" in case)


@pytest.mark.parametrize(
    ("game", "partner", "kw"),
    [("RockPaperScissors", "tit_for_tat", ["horizon=10"]), ("CollabCapture", "greedy", [])],
)
def test_training_equals_the_per_env_path(tmp_path, game, partner, kw) -> None:
    """MaskablePPO from one seed against a deterministic partner learns the same weights on the
    batched engine as on the per-env copies (the transitions are the same)."""
    runs = {}
    for engine in ("envs", "batched"):
        args = tiny(tmp_path, game=game, partners=[partner], env_kwargs=kw, engine=engine,
                    out=str(tmp_path / engine))  # fmt: skip
        summary = ppo_sb3.train(args)
        assert summary["engine"] == engine
        runs[engine] = (MaskablePPO.load(summary["checkpoint"]).policy.state_dict(), summary)
    (wa, sa), (wb, sb) = runs["envs"], runs["batched"]
    assert all(torch.equal(wa[k], wb[k]) for k in wa)
    with open(sa["curve_csv"]) as fa, open(sb["curve_csv"]) as fb:
        ra, rb = list(csv.DictReader(fa)), list(csv.DictReader(fb))
    assert [r["return_mean"] for r in ra] == [r["return_mean"] for r in rb]
    assert sa["eval"] == sb["eval"]


def test_overcooked_self_play_slots_are_the_parallel_envs_seats() -> None:
    """Mode "seats": slot 2i+p is env i's chef p, step for step against the Parallel env."""
    from tom_envs.games.overcooked.env import parallel_env

    kw = {"layout": "cramped_room", "observation": "features", "horizon": 7}
    B = 2
    ours = BatchedVecEnv(OvercookedVectorEnv(B, keep_final_obs=True, **kw), "seats")
    assert ours.num_envs == 2 * B
    obs = ours.reset()
    refs = [parallel_env(**kw) for _ in range(B)]
    seen = [r.reset(seed=i)[0] for i, r in enumerate(refs)]
    rng = np.random.default_rng(1)
    ends = 0
    for t in range(16):
        for i in range(B):
            for p in range(2):
                assert np.array_equal(obs[2 * i + p], seen[i][f"player_{p}"]["observation"]), t
        actions = rng.integers(6, size=2 * B)
        obs, rewards, dones, infos = ours.step(actions)
        for i, ref in enumerate(refs):
            nxt, rew, term, trunc, _ = ref.step(
                {f"player_{p}": int(actions[2 * i + p]) for p in range(2)}
            )
            for p in range(2):
                assert rewards[2 * i + p] == rew[f"player_{p}"], t
                assert dones[2 * i + p] == (term[f"player_{p}"] or trunc[f"player_{p}"]), t
                if dones[2 * i + p]:
                    final = infos[2 * i + p]["terminal_observation"]
                    assert np.array_equal(final, nxt[f"player_{p}"]["observation"]), t
                    assert infos[2 * i + p]["TimeLimit.truncated"] is False
            ends += bool(dones[2 * i])
            seen[i] = ref.reset(seed=100 + t)[0] if dones[2 * i] else nxt  # a fixed start
    assert ends == 2 * B  # two episode ends per env compared


@pytest.mark.parametrize("seed", [0, 1])
def test_bomb_turns_slots_are_the_acting_seats(seed) -> None:
    """Mode "turns": each slot's decision is the acting seat's (its observation, its mask without
    the no-op); rewards are the AEC env's team rewards, so a slot's episode rewards sum to the
    game's return (and to the team score without shaping); the terminal observation is the next
    seat's. Missions drawn as reset(seed) draws them, so the PettingZoo env replays each one."""
    kw = {"bomb_phases": "2", "max_rounds": 6}
    B = 4
    engine = BombVectorEnv(B, missions="seeded", observations=False, keep_final_obs=True, **kw)
    ours = BatchedVecEnv(engine, "turns")
    assert ours.action_space.n == engine.num_actions - 1  # the game's actions, no no-op
    ours.seed(seed)
    obs = ours.reset()
    ref_kw = {**kw, "probes": "none"}

    def fresh(i):
        env = bomb_env(**ref_kw)
        env.reset(seed=int(engine.episode_seeds[i]))
        return env

    envs = [fresh(i) for i in range(B)]
    returns = np.zeros(B)
    rng = np.random.default_rng(seed)
    rewards_seen, dones_seen, ended = [], [], 0
    for t in range(60):
        masks = ours.action_masks()
        for i, env in enumerate(envs):
            agent = env.agent_selection
            assert ours.acting[i] == int(agent.rsplit("_", 1)[1]), (t, i)
            seen = env.observe(agent)
            assert np.array_equal(obs[i], seen["observation"]), (t, i)
            assert np.array_equal(masks[i], seen["action_mask"].astype(bool)), (t, i)
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        actor = ours.acting.copy()
        obs, rewards, dones, infos = ours.step(actions)
        rewards_seen.append(rewards)
        dones_seen.append(dones)
        for i, env in enumerate(envs):
            env.step(int(actions[i]))
            assert rewards[i] == env.rewards["player_0"], (t, i)
            returns[i] += env.rewards["player_0"]
            over = any(env.terminations.values())
            assert dones[i] == over, (t, i)
            if over:
                ended += 1
                final = infos[i]["terminal_observation"]
                nxt = f"player_{(actor[i] + 1) % 3}"
                assert np.array_equal(final, env.observe(nxt)["observation"]), (t, i)
                assert infos[i]["TimeLimit.truncated"] is False
                assert returns[i] == env.game_state.score  # no shaping: the return is the score
                returns[i] = 0.0
                envs[i] = fresh(i)
    assert ended >= B
    per_slot = slot_returns(rewards_seen, dones_seen)
    assert sum(len(r) for r in per_slot) == ended


def test_sb3_vecenv_machinery() -> None:
    """SB3's own wrappers and helpers on the adapter: VecCheckNan (raising), VecMonitor, the
    masking helpers MaskablePPO uses, get_attr / set_attr / env_method, seeding, evaluation."""
    from sb3_contrib.common.maskable.evaluation import evaluate_policy as masked_evaluate

    def make() -> BatchedVecEnv:
        engine = CaptureVectorEnv(4, scenario="both_closed", keep_final_obs=True)
        return BatchedVecEnv(engine, "partner", partner=RandomPartner(0))

    venv = make()
    check_for_correct_spaces(venv, venv.observation_space, venv.action_space)
    checked = VecCheckNan(VecMonitor(venv), raise_exception=True)
    assert is_masking_supported(checked)
    checked.seed(3)
    first = [checked.reset()]
    rng = np.random.default_rng(0)
    for _ in range(50):
        masks = get_action_masks(checked)
        assert masks.shape == (4, 11) and np.array_equal(masks, venv.action_masks())
        assert all(m.any() for m in masks)
        first.append(checked.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))[0])
    again = make()  # the same seed replays the engine and the partner's own generator
    again.seed(3)
    second = [again.reset()]
    rng = np.random.default_rng(0)
    for _ in range(50):
        masks = again.action_masks()
        second.append(again.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))[0])
    assert all(np.array_equal(a, b) for a, b in zip(first, second, strict=True))
    assert venv.get_attr("render_mode") == [None] * 4
    assert [m.tolist() for m in venv.env_method("action_masks", indices=[1, 3])] == [
        venv.action_masks()[1].tolist(), venv.action_masks()[3].tolist()]  # fmt: skip
    with pytest.raises(ValueError, match="not one of"):
        venv.env_method("render")
    with pytest.raises(ValueError, match="share one engine"):
        venv.set_attr("seat", 1, indices=[0])
    with pytest.raises(ValueError, match="actions must have shape"):
        venv.step(np.zeros(3, np.int64))
    model = MaskablePPO("MlpPolicy", VecMonitor(make()), n_steps=16, batch_size=32, seed=0)
    mean, _ = masked_evaluate(model, VecMonitor(make()), n_eval_episodes=4, warn=False)
    assert np.isfinite(mean)


def test_adapter_refuses_what_it_cannot_do() -> None:
    """Mode and engine must fit; turn-based self-play needs a team reward."""
    capture = CaptureVectorEnv(2, keep_final_obs=True)
    with pytest.raises(ValueError, match="does not fit this engine"):
        BatchedVecEnv(capture, "turns")
    with pytest.raises(ValueError, match="needs a partner"):
        BatchedVecEnv(capture, "partner")
    with pytest.raises(ValueError, match="keep_final_obs"):
        BatchedVecEnv(CaptureVectorEnv(2), "seats")
    with pytest.raises(ValueError, match="does not fit this engine"):
        BatchedVecEnv(BombVectorEnv(2, keep_final_obs=True), "partner", partner=RandomPartner())

    class Selfish(BombVectorEnv):  # seat 0 gets one point more than the others
        def _advance(self, actions):
            rewards, done = super()._advance(actions)
            rewards = rewards.copy()
            rewards[:, 0] += 1.0
            return rewards, done

    venv = BatchedVecEnv(Selfish(2, keep_final_obs=True), "turns")
    venv.reset()
    masks = venv.action_masks()
    with pytest.raises(ValueError, match="needs a team reward"):
        venv.step(np.array([np.flatnonzero(m)[0] for m in masks]))


def test_engine_choice_is_explicit_and_recorded(tmp_path) -> None:
    spec = game_spec("RockPaperScissors")
    choose = ppo_batched.choose_engine
    assert choose(tiny(tmp_path, engine="auto"), spec) == "batched"
    assert choose(tiny(tmp_path, engine="envs"), spec) == "envs"
    population = tiny(tmp_path, engine="auto", partners=["population:single_action"])
    assert choose(population, spec) == "envs"
    with pytest.raises(ValueError, match="no vectorised version"):
        choose(tiny(tmp_path, engine="batched", partners=["population:single_action"]), spec)
    # every matrix bot of the game has a vectorised version, and nothing else does
    for name in ("always_2", "fictitious_play", "win_stay_lose_shift"):
        assert choose(tiny(tmp_path, engine="batched", partners=[name]), spec) == "batched"
    with pytest.raises(ValueError, match="no vectorised version"):  # RPS has actions 0..2
        choose(tiny(tmp_path, engine="batched", partners=["always_3"]), spec)
    hanabi = game_spec("Hanabi")
    assert choose(tiny(tmp_path, engine="auto", partners=["simple"]), hanabi) == "envs"
    with pytest.raises(ValueError, match="turn-based"):
        choose(tiny(tmp_path, engine="batched", partners=["simple"]), hanabi)
    assert choose(tiny(tmp_path, engine="batched", self_play=True), hanabi) == "batched"
    with pytest.raises(ValueError, match="no batched engine"):
        choose(tiny(tmp_path, engine="batched", self_play=True), game_spec("Guandan"))
    with pytest.raises(ValueError, match="engine must be one of"):
        choose(tiny(tmp_path, engine="jax"), spec)
    summary = ppo_sb3.train(tiny(tmp_path, total_steps=256))
    assert summary["engine"] == "batched"
    with zipfile.ZipFile(summary["checkpoint"]) as zf:
        meta = json.loads(zf.read(ppo_sb3.META_NAME))
    assert meta["engine"] == "batched" and "tit_for_tat" in meta["engine_detail"]
    with open(summary["curve_csv"]) as fh:
        rows = list(csv.DictReader(fh))
    assert {r["engine"] for r in rows} == {"batched"} and float(rows[-1]["cpu_s"]) > 0


@pytest.mark.parametrize("seed", [0, 1])
def test_maskable_ppo_learns_on_the_batched_engine(tmp_path, seed) -> None:
    """Against always_1 in 10-round RPS, random play averages 0; the trained seat wins."""
    args = tiny(tmp_path, partners=["always_1"], total_steps=6144, n_steps=128, batch_size=128,
                n_epochs=4, hidden=32, lr=3e-3, eval_episodes=20, seed=seed, engine="batched")  # fmt: skip
    summary = ppo_sb3.train(args)
    assert summary["engine"] == "batched"
    assert summary["eval"]["return/player_0"] >= 7.0


def test_turn_based_self_play_learns_a_small_mission(tmp_path) -> None:
    """Bomb defusal, one single-phase bomb, 4 rounds, every seat the learner (mode "turns"):
    the team's return rises (at most 10 points; the first rollouts score about 3)."""
    args = tiny(tmp_path, game="BombDefusal", env_kwargs=["bomb_phases='1'", "max_rounds=4"],
                self_play=True, num_envs=32, n_steps=32, batch_size=256, n_epochs=4, hidden=64,
                lr=2e-3, total_steps=32 * 32 * 20, eval_episodes=20, seed=3, engine="batched")  # fmt: skip
    summary = ppo_sb3.train(args)
    with open(summary["curve_csv"]) as fh:
        rows = [r for r in csv.DictReader(fh) if r.get("return_mean") and r.get("update")]
    first = np.mean([float(r["return_mean"]) for r in rows[:3]])
    last = np.mean([float(r["return_mean"]) for r in rows[-3:]])
    assert last >= first + 2.0, (first, last)
    assert summary["eval"]["return_mean"] >= first + 2.0


@pytest.mark.parametrize(
    "kw", [{"self_play": True}, {"seat": 1, "partners": ["always_0"]}], ids=["self-play", "seat-1"]
)
def test_the_per_env_path_stays_available(tmp_path, kw) -> None:
    """``--engine envs`` keeps the DummyVecEnv path (test_ppo_sb3's runs now take ``auto``)."""
    summary = ppo_sb3.train(tiny(tmp_path, engine="envs", total_steps=256, **kw))
    assert summary["engine"] == "envs" and summary["global_step"] >= 256
    assert "DummyVecEnv" in summary["engine_detail"]
    if "seat" in kw:
        assert summary["eval"]["return_mean"] == summary["eval"]["return/player_1"]


def test_the_shipped_bomb_model_plays_a_team_from_the_safe_loader() -> None:
    """docs/results 2d's model: loads without unpickling, records the batched engine, and as a
    team of three beats the random team's 30 rounds by far on seeded episodes."""
    from tom_envs.agents import make_agent
    from tom_envs.runner import run

    path = "docs/results/data/baselines_rl_bomb_ppo_batched.zip"
    agent = ppo_sb3.SB3Agent.load(path)
    assert agent.meta["engine"] == "batched" and "acting seat" in agent.meta["engine_detail"]
    spec = game_spec("BombDefusal")
    kw = {"shaping": True, "probes": "none"}
    team = [lambda: make_agent(f"checkpoint:path={path}", spec, trusted=True)] * 3
    episodes = run(spec, team, 5, 100000, None, kw)
    assert all(sum(ep.invalid.values()) == 0 for ep in episodes)
    rounds = [ep.metrics["rounds"] for ep in episodes]
    assert np.mean(rounds) <= 15, rounds  # random team: 29.87 rounds (docs/results 2d)


# ------------------------------------------------------------- Overcooked event-reward shaping
def test_overcooked_event_rewards_are_the_rules_events_and_the_logged_return_is_the_score(
    tmp_path,
) -> None:
    """Self-play slots, biased random play, 8 kitchens x 250 steps (100-step episodes): each
    event's weight is a distinct power of ten, so a slot's shaped reward is its env's game reward
    plus exactly the rules' events of the step (``OvercookedGame.transition``) and MAPPO's
    batched engine's bonus for the same actions; ``VecMonitor``'s episode returns (what the curve
    logs) are the game's unshaped score."""
    from tom_baselines.mappo_batched import OVERCOOKED_EVENTS, OvercookedEngine
    from tom_envs.games.overcooked.rules import OvercookedConfig, OvercookedGame
    from tom_envs.integrations.sb3 import EventRewards

    weights = {e: 10.0**i for i, e in enumerate(OVERCOOKED_EVENTS)}
    B, horizon = 8, 100
    kw = ["layout=cramped_room", "observation=features", f"horizon={horizon}"]
    events = [f"{k}={v:g}" for k, v in weights.items()]
    args = tiny(tmp_path, game="Overcooked", self_play=True, env_kwargs=kw, num_envs=B,
                engine="batched", event_rewards=events)  # fmt: skip
    spec = game_spec("Overcooked")
    batched, detail = ppo_batched.make_batched_venv(args, spec, None)
    assert "event rewards" in detail
    venv = EventRewards(VecMonitor(batched), batched, horizon=0)
    venv.seed(0)
    venv.reset()
    mappo_engine = OvercookedEngine(B, {"layout": "cramped_room", "observation": "features",
                                        "horizon": horizon}, 0, weights)  # fmt: skip
    game = OvercookedGame(OvercookedConfig(layout="cramped_room", horizon=horizon))
    states = [game.initial_state(np.random.default_rng(0)) for _ in range(B)]
    rng = np.random.default_rng(3)
    score, shaped_sum = np.zeros(2 * B), np.zeros(2 * B)
    logged: list[float] = []
    seen: set[str] = set()
    for t in range(250):
        a = np.where(rng.random(2 * B) < 0.4, 5, rng.integers(0, 5, 2 * B))
        _, rewards, dones, infos = venv.step(a)
        mappo_rewards, mappo_bonus, mappo_done = mappo_engine.step(a)
        for i in range(B):
            states[i], r, ev = game.transition(states[i], int(a[2 * i]), int(a[2 * i + 1]))
            want = sum(weights[e.rpartition(":")[2]] for e in ev)
            seen |= {e.rpartition(":")[2] for e in ev}
            for p in range(2):
                k = 2 * i + p
                assert rewards[k] == np.float32(r + want), (t, i, ev)
                assert rewards[k] == np.float32(mappo_rewards[i] + mappo_bonus[i]), (t, i)
                score[k] += r
                shaped_sum[k] += rewards[k]
            assert dones[2 * i] == dones[2 * i + 1] == mappo_done[i] == ((t + 1) % horizon == 0)
            if dones[2 * i]:
                states[i] = game.initial_state(np.random.default_rng(0))
        for k in np.flatnonzero(dones).tolist():
            logged.append(infos[k]["episode"]["r"])
            assert infos[k]["episode"]["r"] == pytest.approx(score[k]), (t, k)
            score[k] = 0.0
    assert len(logged) == 2 * 2 * B  # two episodes per slot compared
    assert {"pickup_onion", "pickup_plate", "potting_onion"} <= seen, seen
    assert shaped_sum.sum() > sum(logged) + 1000  # the shaping was paid, and not logged


def test_event_rewards_anneal_to_zero_at_the_horizon_and_are_recorded(tmp_path) -> None:
    """2 kitchens x 50 steps = 100 env steps (200 learner steps) per rollout, horizon 250 env
    steps: the scale of rollouts 1..5 is 1, 0.6, 0.2, 0, 0 (MAPPO's rule: set from the env steps
    before the rollout); the model's metadata records the shaping."""
    args = tiny(tmp_path, game="Overcooked", self_play=True, num_envs=2, n_steps=50,
                batch_size=100, hidden=8, total_steps=1000, eval_episodes=1, engine="batched",
                env_kwargs=["layout=cramped_room", "observation=features", "horizon=50"],
                event_rewards=["potting_onion=3", "useful_plate=3", "soup_from_pot=5"],
                event_rewards_horizon=250)  # fmt: skip
    summary = ppo_sb3.train(args)
    with open(summary["curve_csv"]) as fh:
        rows = [r for r in csv.DictReader(fh) if r["update"]]
    assert [float(r["shaping_scale"]) for r in rows] == pytest.approx([1, 0.6, 0.2, 0, 0])
    assert [int(r["env_steps"]) for r in rows] == [100, 200, 300, 400, 500]
    assert [int(r["global_step"]) for r in rows] == [200, 400, 600, 800, 1000]
    assert all(float(r["return_mean"]) % 20 == 0 for r in rows)  # the score: 20 per soup
    with zipfile.ZipFile(summary["checkpoint"]) as zf:
        meta = json.loads(zf.read(ppo_sb3.META_NAME))
    assert meta["event_rewards"] == {"potting_onion": 3.0, "useful_plate": 3.0, "soup_from_pot": 5.0}
    assert meta["event_rewards_horizon"] == 250 and meta["engine"] == "batched"


def test_event_rewards_are_refused_where_they_are_not_counted(tmp_path) -> None:
    choose, oc = ppo_batched.choose_engine, game_spec("Overcooked")
    ev = ["potting_onion=3"]
    shaped = dict(self_play=True, event_rewards=ev)
    assert choose(tiny(tmp_path, engine="auto", **shaped), oc) == "batched"
    assert choose(tiny(tmp_path, engine="envs", **shaped), oc) == "envs"  # EventBonus there
    # a rule bot has no vectorised version: the per-env path, shaped (never silently unshaped)
    assert choose(tiny(tmp_path, engine="auto", partners=["greedy"], event_rewards=ev), oc) == "envs"
    with pytest.raises(ValueError, match="only the batched Overcooked engine"):
        choose(tiny(tmp_path, engine="auto", event_rewards=ev), game_spec("RockPaperScissors"))
    with pytest.raises(ValueError, match="only Overcooked's step events"):
        choose(tiny(tmp_path, engine="envs", event_rewards=ev), game_spec("RockPaperScissors"))
    with pytest.raises(ValueError, match="'juggle_plates' is not an event"):
        choose(tiny(tmp_path, engine="batched", self_play=True,
                    event_rewards=["juggle_plates=3"]), oc)  # fmt: skip
    with pytest.raises(ValueError, match="not a finite number"):
        choose(tiny(tmp_path, engine="batched", self_play=True, event_rewards=["delivery=nan"]), oc)
    with pytest.raises(ValueError, match="horizon must be >= 0"):
        choose(tiny(tmp_path, engine="batched", event_rewards_horizon=-1, **shaped), oc)


def _weighted(weights: dict[str, float], events: tuple[str, ...]) -> float:
    return sum(weights[e.rpartition(":")[2]] for e in events)


def test_per_env_event_bonus_is_the_rules_events_of_the_joint_step() -> None:
    """``EventBonus`` on a ``SingleAgentEnv`` against ``greedy``, learner in seat 1, random
    learner actions over 3 episodes of 50 steps: each step's bonus is the rules' weighted events
    of the joint step found by replaying it (``OvercookedGame.transition``: the partner's action
    is the one that reproduces the next state), the final step's included; the reward untouched."""
    from tom_baselines.mappo_batched import OVERCOOKED_EVENTS
    from tom_envs.games.overcooked.rules import OvercookedConfig, OvercookedGame
    from tom_envs.integrations.sb3 import BONUS_KEY, EventBonus

    weights = {e: 10.0**i for i, e in enumerate(OVERCOOKED_EVENTS)}
    env = EventBonus(Monitor(SingleAgentEnv("Overcooked", partners="greedy", seat=1,
                                            layout="cramped_room", horizon=50)), weights)  # fmt: skip
    game = OvercookedGame(OvercookedConfig(layout="cramped_room", horizon=50))
    aec = env.unwrapped.aec
    rng = np.random.default_rng(4)
    seen, paid, steps = set(), 0.0, 0
    for episode in range(3):
        env.reset(seed=episode)
        done = False
        while not done:
            state, mine = aec.game_state, int(np.where(rng.random() < 0.5, 5, rng.integers(5)))
            _, reward, term, trunc, info = env.step(mine)
            done, steps = term or trunc, steps + 1
            found = {_weighted(weights, ev) for a in range(6)
                     for nxt, r, ev in [game.transition(state, a, mine)]
                     if nxt == aec.game_state and r == reward}  # fmt: skip
            assert found == {info[BONUS_KEY]}, (episode, steps)
            seen |= {e.rpartition(":")[2] for e in aec.last_events}
            paid += info[BONUS_KEY]
    assert steps == 150 and {"pickup_onion", "potting_onion"} <= seen and paid > 0


def test_per_env_event_rewards_are_added_and_never_logged(tmp_path) -> None:
    """The per-env path with ``--event-rewards`` (``make_venv``): each slot's reward is the
    unshaped run's plus ``scale x`` its step info's bonus, the same seeds giving the same
    episodes; the logged (``Monitor``) returns are the unshaped run's; a missing bonus is
    refused."""
    from tom_envs.integrations.sb3 import BONUS_KEY, EventRewards

    common = dict(game="Overcooked", partners=["greedy"], num_envs=2, engine="envs",
                  env_kwargs=["layout=cramped_room", "observation=features", "horizon=30"])  # fmt: skip
    spec = game_spec("Overcooked")
    shaped, shaping, *_, detail = ppo_sb3.make_venv(
        tiny(tmp_path, event_rewards=["potting_onion=3", "pickup_onion=1"], **common), spec, [])
    plain, none, *_ = ppo_sb3.make_venv(tiny(tmp_path, **common), spec, [])
    assert isinstance(shaping, EventRewards) and none is None and "event rewards" in detail
    for venv in (shaped, plain):
        venv.seed(7)
        venv.reset()
    shaping.scale = 0.5
    rng = np.random.default_rng(0)
    extra, logged = 0.0, []
    for _ in range(60):  # two episodes per env
        a = np.where(rng.random(2) < 0.5, 5, rng.integers(0, 5, 2))
        _, r_s, d_s, i_s = shaped.step(a)
        _, r_p, d_p, i_p = plain.step(a)
        bonus = np.array([i[BONUS_KEY] for i in i_s])
        assert np.allclose(r_s, r_p + 0.5 * bonus) and list(d_s) == list(d_p)
        extra += bonus.sum()
        logged += [(a["episode"]["r"], b["episode"]["r"]) for a, b in zip(i_s, i_p, strict=True)
                   if "episode" in a]  # fmt: skip
    assert extra > 0 and len(logged) == 4 and all(x == y for x, y in logged)
    assert shaping.env_steps == 120
    bare = EventRewards(plain, None)
    bare.reset()
    with pytest.raises(ValueError, match="event_bonus"):
        bare.step(np.array([5, 5]))
