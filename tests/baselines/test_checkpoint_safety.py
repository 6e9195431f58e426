"""Checkpoints cannot run code: SB3 .zip files are read without unpickling (issue #17), and a
checkpoint knows the environment it was trained on (issue #18)."""

from __future__ import annotations

import base64
import dataclasses
import io
import json
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from tom_baselines import ppo_sb3
from tom_baselines.checkpoint import CheckpointAgent
from tom_envs.agents import make_agent
from tom_envs.core.agents import EpisodeInfo
from tom_envs.registration import game_spec
from tom_envs.runner import run


class Payload:
    """Unpickling this creates ``path``: what an attacker's checkpoint would do."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def serialized(sentinel: Path) -> dict:
    blob = base64.b64encode(pickle.dumps(Payload(sentinel))).decode()
    return {":type:": "<class 'dict'>", ":serialized:": blob}


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    out = {}
    for name, masked in (("masked", True), ("plain", False)):
        root = tmp_path_factory.mktemp(name)
        args = ppo_sb3.Args(env_kwargs=["horizon=5"], partners=["tit_for_tat"], masked=masked,
                            num_envs=2, n_steps=32, batch_size=32, n_epochs=1, hidden=16,
                            total_steps=64, eval_episodes=1, progress=False, out=str(root))  # fmt: skip
        out[name] = Path(ppo_sb3.train(args)["checkpoint"])
    return out


def rewrite(src: Path, dst: Path, data: dict | None = None, members: dict | None = None) -> Path:
    """A copy of ``src`` with its ``data`` JSON and members replaced."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.namelist():
            body = zin.read(item)
            if item == "data" and data is not None:
                body = json.dumps(data).encode()
            if members and item in members:
                body = members[item]
            zout.writestr(item, body)
    return dst


def data_of(path: Path) -> dict:
    with zipfile.ZipFile(path) as zf:
        return json.loads(zf.read("data"))


@pytest.mark.parametrize("kind", ["masked", "plain"])
def test_safe_load_plays_exactly_as_sb3s_own_loader(models, kind: str) -> None:
    from sb3_contrib import MaskablePPO
    from stable_baselines3 import PPO

    safe = ppo_sb3.load_sb3_safely(models[kind])
    trusted = (MaskablePPO if kind == "masked" else PPO).load(models[kind], device="cpu")
    rng = np.random.default_rng(0)
    dim = safe.observation_space.shape[0]
    for _ in range(5):
        obs, mask = rng.random(dim).astype(np.float32), np.array([1, 0, 1])
        a = ppo_sb3.masked_probs(safe, obs, mask)
        b = ppo_sb3.masked_probs(trusted, obs, mask)
        assert np.allclose(a, b, atol=1e-7) and a[1] == 0.0
    assert type(safe.policy).__name__ == type(trusted.policy).__name__


PICKLED_FIELDS = ["policy_kwargs", "policy_class", "observation_space", "action_space"]


@pytest.mark.parametrize("field", PICKLED_FIELDS)
def test_a_pickle_in_the_data_json_never_runs(models, tmp_path: Path, field: str) -> None:
    sentinel = tmp_path / "pwned"
    evil = rewrite(models["masked"], tmp_path / "evil.zip",
                   {**data_of(models["masked"]), field: serialized(sentinel)})  # fmt: skip
    with pytest.raises(ppo_sb3.CheckpointError, match=r"trusted=true") as exc:
        make_agent(f"checkpoint:path={evil}", game_spec("RockPaperScissors"), trusted=True)
    assert field.split("_")[0] in str(exc.value) or "policy" in str(exc.value)
    assert not sentinel.exists()


@pytest.mark.parametrize("loose", ["yes", "1", "on", "y"])
def test_only_a_strict_true_opts_in_to_unpickling(models, tmp_path: Path, loose: str) -> None:
    """``trusted=yes`` (or any truthy text) is an error, never a silent opt-in to unpickling."""
    sentinel = tmp_path / "pwned"
    evil = rewrite(models["masked"], tmp_path / "evil.zip",
                   {**data_of(models["masked"]), "policy_kwargs": serialized(sentinel)})  # fmt: skip
    with pytest.raises((ValueError, ppo_sb3.CheckpointError), match="trusted"):
        make_agent(f"checkpoint:path={evil}:trusted={loose}", game_spec("RockPaperScissors"),
                   trusted=True)
    with pytest.raises(ValueError, match="trusted"):
        CheckpointAgent(str(evil), trusted=1)  # type: ignore[arg-type]
    assert not sentinel.exists()


def test_the_attack_is_live_under_sb3s_own_loader(models, tmp_path: Path) -> None:
    """The adversary: the same file loaded with trusted=true (SB3's loader) runs the payload."""
    sentinel = tmp_path / "pwned"
    evil = rewrite(models["masked"], tmp_path / "evil.zip",
                   {**data_of(models["masked"]), "policy_kwargs": serialized(sentinel)})  # fmt: skip
    with pytest.raises(Exception):  # noqa: B017 - the payload is not a dict, SB3 then fails
        CheckpointAgent(str(evil), trusted=True)
    assert sentinel.exists()


def test_a_disguised_policy_class_is_rebuilt_not_unpickled(models, tmp_path: Path) -> None:
    """A pickle hidden behind a readable, allow-listed class name: the pickle is ignored."""
    sentinel = tmp_path / "pwned"
    data = data_of(models["masked"])
    data["policy_class"] = {
        **data["policy_class"],
        ":serialized:": serialized(sentinel)[":serialized:"],
    }
    evil = rewrite(models["masked"], tmp_path / "evil.zip", data)
    agent = CheckpointAgent(str(evil))
    assert type(agent.inner.model.policy).__name__ == "MaskableActorCriticPolicy"
    assert not sentinel.exists()


def test_unknown_architectures_are_refused(models, tmp_path: Path) -> None:
    data = data_of(models["masked"])
    bad = {**data, "policy_class": {**data["policy_class"], "__module__": "evil.module"}}
    with pytest.raises(ppo_sb3.CheckpointError, match="not one of the known architectures"):
        ppo_sb3.load_sb3_safely(rewrite(models["masked"], tmp_path / "a.zip", bad))
    bad = {**data, "policy_kwargs": {"net_arch": [16, 16], "features_extractor_class": "x"}}
    with pytest.raises(ppo_sb3.CheckpointError, match="features_extractor_class"):
        ppo_sb3.load_sb3_safely(rewrite(models["masked"], tmp_path / "b.zip", bad))
    bad = {**data, "policy_kwargs": {"net_arch": [32, 32]}}  # the weights are 16 wide
    with pytest.raises(ppo_sb3.CheckpointError, match="do not fit"):
        ppo_sb3.load_sb3_safely(rewrite(models["masked"], tmp_path / "c.zip", bad))


def test_a_pickle_in_the_weights_never_runs(models, tmp_path: Path) -> None:
    sentinel = tmp_path / "pwned"
    buf = io.BytesIO()
    import torch

    torch.save({"w": Payload(sentinel)}, buf)
    evil = rewrite(models["masked"], tmp_path / "evil.zip", members={"policy.pth": buf.getvalue()})
    with pytest.raises(ppo_sb3.CheckpointError, match=r"policy\.pth is not plain weights"):
        CheckpointAgent(str(evil))
    assert not sentinel.exists()


def test_trusted_true_is_the_ordinary_sb3_load(models) -> None:
    agent = make_agent(f"checkpoint:path={models['plain']}:trusted=true",
                       game_spec("RockPaperScissors"), trusted=True)  # fmt: skip
    assert type(agent.inner.model).__name__ == "PPO"
    assert agent.inner.meta["env_id"] == "tom_envs/RockPaperScissors-v0"


def info(**kw) -> EpisodeInfo:
    base = EpisodeInfo("tom_envs/RockPaperScissors-v0", "player_0", 0, 2, 3, 0, (-1.0, 1.0), 5)
    return dataclasses.replace(base, **kw) if kw else base


def test_a_checkpoint_knows_its_environment(models) -> None:
    agent = CheckpointAgent(str(models["masked"]))
    meta = agent.inner.meta
    assert meta["env_id"] == "tom_envs/RockPaperScissors-v0"
    assert meta["env_kwargs"]["horizon"] == 5 and meta["env_kwargs"]["game"] == "rps"
    assert meta["observation_shape"] == [1 + 5 * 2 * 3]
    agent.reset(info())  # the same env: fine
    with pytest.raises(
        ValueError, match=r"trained on tom_envs/RockPaperScissors-v0.*PrisonersDilemma"
    ):
        agent.reset(info(env_id="tom_envs/PrisonersDilemma-v0"))
    if "observation_shape" in {f.name for f in dataclasses.fields(EpisodeInfo)}:
        with pytest.raises(ValueError, match=r"shape \(31,\).*gives \(61,\)"):
            agent.reset(info(observation_shape=(61,)))
        with pytest.raises(ValueError, match=r"horizon=5.*horizon=10"):
            agent.reset(info(env_kwargs={"game": "rps", "horizon": 10}))


def test_a_checkpoint_refuses_a_longer_game_in_the_runner(models) -> None:
    spec = game_spec("RockPaperScissors")
    seats = [f"checkpoint:path={models['masked']}", "always_2"]
    eps = run(spec, [lambda s=s: make_agent(s, spec, trusted=True) for s in seats], 1, 0, None, {"horizon": 5})
    assert sum(eps[0].invalid.values()) == 0
    with pytest.raises(ValueError, match=r"horizon|shape"):
        run(spec, [lambda s=s: make_agent(s, spec, trusted=True) for s in seats], 1, 0, None, {"horizon": 10})


def test_multi_input_policies_load_safely_too(tmp_path: Path) -> None:
    """MaskablePPO's MultiInputPolicy on a Dict observation: rebuilt, same action distribution."""
    import gymnasium as gym
    import torch
    from sb3_contrib import MaskablePPO

    class DictEnv(gym.Env):
        observation_space = gym.spaces.Dict({"a": gym.spaces.Box(0, 1, (4,), np.float32),
                                             "b": gym.spaces.Box(-1, 1, (2,), np.float32)})  # fmt: skip
        action_space = gym.spaces.Discrete(3)

        def reset(self, seed=None, options=None):
            super().reset(seed=seed)
            return self.observation_space.sample(), {}

        def step(self, action):
            return self.observation_space.sample(), float(action == 1), True, False, {}

        def action_masks(self):
            return np.ones(3, bool)

    model = MaskablePPO("MultiInputPolicy", DictEnv(), n_steps=16, batch_size=16, n_epochs=1,
                        policy_kwargs={"net_arch": [8]}, seed=0, device="cpu")  # fmt: skip
    model.learn(32)
    model.save(tmp_path / "dict.zip")
    safe = ppo_sb3.load_sb3_safely(tmp_path / "dict.zip")
    assert type(safe.policy).__name__ == "MaskableMultiInputActorCriticPolicy"
    space = DictEnv.observation_space
    space.seed(1)
    for _ in range(3):
        obs = space.sample()
        with torch.no_grad():
            a = safe.policy.get_distribution(safe.policy.obs_to_tensor(obs)[0]).distribution.probs
            b = model.policy.get_distribution(model.policy.obs_to_tensor(obs)[0]).distribution.probs
        assert torch.allclose(a, b)


# ------------------------------------------------------------------ identity and bad files (#31)
@pytest.mark.parametrize("kind", ["sb3", "mappo"])
def test_a_checkpoint_replaced_at_the_same_path_is_never_served_old_results(
    models, tmp_path: Path, kind: str
) -> None:
    """Adversary: the model behind a path changes; a resumed run must not reuse the old results."""
    import shutil

    from tom_envs.runner import ConfigMismatchError

    if kind == "sb3":
        first, second = models["masked"], models["plain"]
        path = tmp_path / "model.zip"
    else:
        import torch

        from tom_baselines import mappo_policy

        path = tmp_path / "model.pt"
        nets = []
        for seed in (0, 1):
            torch.manual_seed(seed)
            meta = {"game": "RockPaperScissors", "num_players": 2, "num_actions": 3,
                    "obs_dim": 31, "state_dim": 31, "hidden": 8, "recurrent": False,
                    "actor_agent_id": False}  # fmt: skip
            actor, critic = mappo_policy.build_nets(meta)
            out = mappo_policy.save_checkpoint(tmp_path / f"m{seed}.pt", actor, critic,
                                               mappo_policy.ValueNorm(), meta)  # fmt: skip
            nets.append(out)
        first, second = nets
    spec = game_spec("RockPaperScissors")
    seats = [f"checkpoint:path={path}", "always_2"]
    factories = [lambda s=s: make_agent(s, spec, trusted=True) for s in seats]
    out = tmp_path / "run"
    shutil.copy(first, path)
    a = run(spec, factories, 2, 0, out, {"horizon": 5})
    again = run(spec, factories, 2, 0, out, {"horizon": 5})  # the same file: reused as is
    assert [e.steps for e in again] == [e.steps for e in a]
    shutil.copy(second, path)
    with pytest.raises(ConfigMismatchError, match=r"settings\.file_sha256"):
        run(spec, factories, 2, 0, out, {"horizon": 5})


def _bad_checkpoints(root: Path, models) -> dict[str, Path]:
    import torch

    sentinel = root / "pwned"
    bad = {}
    buf = io.BytesIO()
    torch.save({"format": "tom_envs.mappo/1", "meta": Payload(sentinel)}, buf)
    bad["pickle payload in a .pt"] = root / "evil.pt"
    bad["pickle payload in a .pt"].write_bytes(buf.getvalue())
    bad["garbage .pt"] = root / "garbage.pt"
    bad["garbage .pt"].write_bytes(b"\x00not a checkpoint" * 50)
    bad["empty .zip"] = root / "empty.zip"
    bad["empty .zip"].write_bytes(b"")
    bad["garbage .zip"] = root / "garbage.zip"
    bad["garbage .zip"].write_bytes(b"PK\x03\x04 truncated")
    bad["pickle payload in a .zip"] = rewrite(models["masked"], root / "evil.zip",
                                              {**data_of(models["masked"]),
                                               "policy_class": serialized(sentinel)})  # fmt: skip
    bad["a folder named .pt"] = root / "folder.pt"
    bad["a folder named .pt"].mkdir()
    bad["another game's tensors"] = root / "other.pt"
    torch.save({"format": "tom_envs.mappo/1", "meta": {"game": "x"}, "actor": {}},
               bad["another game's tensors"])
    bad["a .zip without policy.pth"] = rewrite(models["masked"], root / "nopolicy.zip",
                                               members={"policy.pth": b"junk"})  # fmt: skip
    return bad


def test_bad_and_malicious_checkpoints_get_a_one_line_error(models, tmp_path: Path,
                                                            capsys) -> None:  # fmt: skip
    """`run` and `eval` refuse each with exit 2 and one line naming the file: no traceback, and
    the payloads never run."""
    from tom_envs.cli import main

    bad = _bad_checkpoints(tmp_path, models)
    for name, path in bad.items():
        code = main(["run", "RockPaperScissors", "--agents", f"checkpoint:path={path}", "random",
                     "--episodes", "1", "--out", str(tmp_path / "run")])  # fmt: skip
        err = capsys.readouterr().err
        assert code == 2, (name, err)
        assert err.startswith("error: ") and len(err.strip().splitlines()) == 1, (name, err)
        assert path.name in err and "Traceback" not in err, (name, err)
        cfg = tmp_path / "c.toml"
        cfg.write_text('name = "c"\n[[games]]\ngame = "RockPaperScissors"\n[[matchups]]\n'
                       'game = "RockPaperScissors"\nseats = ["ck", "random"]\n[agents]\n'
                       'random = "random"\n')  # fmt: skip
        code = main(["eval", str(cfg), "--validate", "--agent", f"ck=checkpoint:path={path}"])
        err = capsys.readouterr().err
        assert code == 2 and len(err.strip().splitlines()) == 1, (name, err)
        assert "Traceback" not in err, (name, err)
    assert not (tmp_path / "pwned").exists()
    assert not list(tmp_path.rglob("*.jsonl"))
