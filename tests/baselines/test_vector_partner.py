"""The vectorised checkpoint partner (``--partners zoo/<member>`` on a batched engine) plays as
the member plays in the single env: action by action and probability by probability on the
engine's own observations and masks, fixed seeds; refusals of a tampered file and of other game
arguments. No training here: the members are the shipped ones."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from tom_baselines.checkpoint import CheckpointAgent
from tom_baselines.ppo_batched import batched_problem
from tom_baselines.ppo_sb3 import Args, masked_probs
from tom_baselines.vector_partner import CheckpointVectorPartner, zoo_partner
from tom_envs import zoo
from tom_envs.core.agents import Turn
from tom_envs.driver import episode_info
from tom_envs.identity import resolved_env_kwargs
from tom_envs.registration import game_spec

OC = {"layout": "cramped_room", "observation": "features"}
CASES = [("Overcooked", "zoo/mappo_s0", OC, 8, 60), ("CollabEscape", "zoo/ppo_s0", {}, 16, 30),
         ("CollabCapture", "zoo/ppo_s1", {}, 16, 30)]  # fmt: skip


def _member(game: str, name: str, kwargs: dict[str, Any], deterministic: bool) -> CheckpointAgent:
    """The member as the single env seats it (its file, integrity-checked), for seat 1."""
    spec = game_spec(game)
    m = zoo.member(name, game)
    path = m.spec.split("path=", 1)[1]
    agent = CheckpointAgent(path, deterministic=deterministic)
    assert agent.file_sha256 == m.sha256
    bundle = spec.load().make_bundle(**kwargs)
    shape = tuple(int(x) for x in bundle.encoder.observation_shape)
    agent.reset(episode_info(spec, bundle.game, 1, 5, resolved_env_kwargs(spec, kwargs), shape))
    return agent


def _single_probs(agent: CheckpointAgent, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    inner = agent.inner
    if agent.kind == "sb3":
        return masked_probs(inner.model, obs, mask)
    import torch

    from tom_baselines.mappo_policy import masked_logits

    x = np.asarray(obs, np.float32)
    if inner.meta["actor_agent_id"]:
        x = np.concatenate([x, np.eye(inner.meta["num_players"], dtype=np.float32)[1]])
    with torch.no_grad():
        logits, _ = inner.actor(torch.as_tensor(x[None]), torch.zeros(1, inner.actor.hidden_size),
                                torch.ones(1))  # fmt: skip
        logits = masked_logits(logits, torch.as_tensor(np.asarray(mask, bool)[None]))
    return torch.softmax(logits, -1)[0].double().numpy()


@pytest.mark.parametrize(("game", "name", "kwargs", "envs", "steps"), CASES)
def test_vector_partner_equals_the_member_action_by_action(
    game: str, name: str, kwargs: dict[str, Any], envs: int, steps: int
) -> None:
    spec = game_spec(game)
    engine = spec.load_vector()(envs, **kwargs)
    obs = engine.reset(seed=11)
    partner = zoo_partner(spec, name, kwargs, (1,), deterministic=True)
    single = _member(game, name, kwargs, deterministic=True)
    rng = np.random.default_rng(3)
    compared = 0
    for t in range(steps):
        masks = engine.action_masks()
        joint = partner(obs, masks)
        assert (joint[:, 0] == 0).all()
        probs = partner.probs(obs, masks, 1)
        for i in range(envs):
            o, m = obs[i, 1], masks[i, 1]
            turn = Turn(f"player_{1}", 1, None, o, m.astype(np.int8), 0.0, t)
            assert joint[i, 1] == single.act(turn), (game, t, i)
            np.testing.assert_allclose(probs[i], _single_probs(single, o, m), atol=1e-6)
            compared += 1
        legal0 = masks[:, 0]
        joint[:, 0] = [rng.choice(np.flatnonzero(legal0[i])) for i in range(envs)]
        obs, _, _, _ = engine.step(joint)
    assert compared == envs * steps


def test_sampling_is_legal_seeded_and_follows_the_probabilities() -> None:
    spec = game_spec("Overcooked")
    engine = spec.load_vector()(64, **OC)
    obs = engine.reset(seed=2)
    masks = engine.action_masks()
    a = zoo_partner(spec, "zoo/mappo_s1", OC, (1,), seed=7)
    b = zoo_partner(spec, "zoo/mappo_s1", OC, (1,), seed=7)
    draws = np.stack([a(obs, masks)[:, 1] for _ in range(200)])
    assert (draws == np.stack([b(obs, masks)[:, 1] for _ in range(200)])).all()  # seeded
    assert masks[np.arange(64)[None, :], 1, draws].all()  # always legal
    p = a.probs(obs, masks, 1)[0]  # every env starts alike: env 0's probabilities
    freq = np.bincount(draws.ravel(), minlength=len(p)) / draws.size
    assert np.abs(freq - p).max() < 0.03  # 12,800 draws: 3 standard errors at most ~0.013


def test_batched_ppo_accepts_learned_members_only() -> None:
    spec = game_spec("Overcooked")
    args = Args(game="Overcooked", partners=["zoo/mappo_s0"], env_kwargs=["layout=cramped_room",
                "observation=features"])  # fmt: skip
    assert batched_problem(args, spec) is None
    args.partners = ["greedy"]
    assert "no vectorised version" in str(batched_problem(args, spec))
    args.partners = ["zoo/nope"]
    assert "no vectorised version" in str(batched_problem(args, spec))


def test_other_game_arguments_and_a_tampered_file_are_refused(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    spec = game_spec("Overcooked")
    with pytest.raises(ValueError, match=r"observation|shape|trained"):
        zoo_partner(spec, "zoo/mappo_s0", {"layout": "cramped_room", "observation": "both"}, (1,))
    m = zoo.member("zoo/mappo_s0", "Overcooked")
    bad = tmp_path / "mappo_s0.pt"
    shutil.copy(m.spec.split("path=", 1)[1], bad)
    data = bytearray(bad.read_bytes())
    data[len(data) // 2] ^= 0x01
    bad.write_bytes(bytes(data))
    fake = zoo.Member(m.name, m.game, m.kind, m.description, f"checkpoint:path={bad}", m.sha256)
    monkeypatch.setattr(zoo, "member", lambda name, game: fake)
    with pytest.raises(zoo.ZooIntegrityError):
        zoo_partner(spec, "zoo/mappo_s0", OC, (1,))


def test_recurrent_actors_are_refused() -> None:
    class Fake:
        actor = None

        def __init__(self) -> None:
            self.meta = {"recurrent": True, "num_players": 2}

    with pytest.raises(ValueError, match="recurrent"):
        CheckpointVectorPartner(Fake())
