"""The suite's learned zoo members (tom_experiments.zoo): shipped files, hashes, refusals, play,
and the cross-play command. No training here: the files are the shipped ones."""

from __future__ import annotations

import csv
import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from tom_envs import zoo
from tom_envs.agents import make_agent
from tom_envs.registration import game_spec
from tom_envs.runner import play_episode
from tom_experiments import zoo as suite
from tom_experiments.zoo.build import CURVE_ROWS, JOBS, strip_mappo, strip_sb3
from tom_experiments.zoo.crossplay import CrossPlay, gaps
from tom_experiments.zoo.describe import action_class, summary_line

SHIPPED = sorted({j.game for j in JOBS if suite.load_manifest(j.game) is not None})
LEARNED = [(g, m.name) for g in SHIPPED for m in suite.members(g)]
REPO = Path(__file__).resolve().parents[2]


def test_every_training_job_is_shipped() -> None:
    for game in {j.game for j in JOBS}:
        shipped = {m.name for m in suite.members(game)}
        assert shipped == {j.name for j in JOBS if j.game == game}, game


@pytest.mark.parametrize("game", SHIPPED)
def test_the_provider_lists_members_with_their_files_and_hashes(game: str) -> None:
    data = suite.load_manifest(game)
    assert data is not None and data["members"]
    listed = {m.name: m for m in zoo.members(game)}  # through the entry point, after the bots
    for entry in data["members"]:
        m = listed[entry["name"]]
        assert m.kind == "checkpoint" and m.agent_spec == "zoo/" + entry["name"]
        file = suite.DATA / game / entry["file"]
        assert hashlib.sha256(file.read_bytes()).hexdigest() == entry["sha256"] == m.sha256
        assert file.stat().st_size == entry["bytes"] < 600_000  # actor only: small
        assert m.description.startswith(("PPO self-play seed", "MAPPO self-play seed"))
        train = entry["train"]
        assert f"--seed {train['seed']}" in train["command"] and f" {game} " in train["command"]
        assert train["steps"] > 0 and train["wall_s"] > 0 and train["cpu_s"] > 0
        with (suite.DATA / game / train["curve"]).open() as fh:
            rows = list(csv.DictReader(fh))
        assert 2 <= len(rows) <= CURVE_ROWS
    assert zoo.version(game) != ""


@pytest.mark.parametrize(("game", "name"), LEARNED)
def test_each_learned_member_plays_a_seeded_episode(game: str, name: str) -> None:
    spec = game_spec(game)
    kwargs = suite.env_kwargs(game)
    n = spec.load().make_bundle(**{**spec.kwargs, **kwargs}).game.num_players

    def play() -> list[int]:
        agents = [make_agent(f"zoo/{name}", spec) for _ in range(n)]
        ep = play_episode(spec, agents, 12345, kwargs)
        assert ep.ok and sum(ep.fallbacks.values()) == 0 and sum(ep.invalid.values()) == 0
        return [s["action"] for s in ep.steps]

    first = play()
    assert first and play() == first  # same seed, same episode


@pytest.fixture
def tampered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str, Path]:
    game, name = LEARNED[0]
    shutil.copytree(suite.DATA / game, tmp_path / game)
    monkeypatch.setattr(suite, "DATA", tmp_path)
    entry = next(e for e in suite.load_manifest(game)["members"] if e["name"] == name)  # type: ignore[index]
    return game, name, tmp_path / game / entry["file"]


def test_an_untouched_copy_plays_and_keeps_the_version(tampered: tuple[str, str, Path],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    game, name, _ = tampered
    assert make_agent(f"zoo/{name}", game_spec(game)) is not None
    copied = zoo.version(game)
    monkeypatch.undo()  # the installed files again: same content elsewhere, same version
    assert zoo.version(game) == copied


def test_a_tampered_file_is_refused(tampered: tuple[str, str, Path]) -> None:
    game, name, file = tampered
    blob = bytearray(file.read_bytes())
    blob[-200] ^= 0xFF  # a flipped byte (weights or metadata); or a different valid file
    file.write_bytes(bytes(blob))
    with pytest.raises(zoo.ZooIntegrityError, match=f"{name}.*SHA-256.*refused"):
        make_agent(f"zoo/{name}", game_spec(game))


def test_a_replaced_file_is_refused(tampered: tuple[str, str, Path]) -> None:
    game, name, file = tampered
    other = next(e for e in suite.load_manifest(game)["members"] if e["name"] != name)  # type: ignore[index]
    shutil.copyfile(file.parent / other["file"], file)  # a valid checkpoint, not the declared one
    with pytest.raises(zoo.ZooIntegrityError, match="refused"):
        make_agent(f"zoo/{name}", game_spec(game))


def test_a_manifest_without_a_hash_is_refused(tampered: tuple[str, str, Path]) -> None:
    game, name, file = tampered
    path = file.parent / suite.MANIFEST
    data = json.loads(path.read_text())
    for entry in data["members"]:
        entry["sha256"] = ""
    path.write_text(json.dumps(data))
    with pytest.raises(zoo.ZooIntegrityError, match="no SHA-256"):
        make_agent(f"zoo/{name}", game_spec(game))


def test_actor_only_files_play_as_the_full_checkpoints(tmp_path: Path) -> None:
    """Stripping the critic (MAPPO) or the value network (SB3) leaves the policy unchanged."""
    from tom_baselines.mappo_policy import MappoAgent, load_checkpoint
    from tom_baselines.ppo_sb3 import load_sb3_safely, masked_probs

    data = REPO / "docs/results/data"
    mappo = tmp_path / "actor.pt"
    strip_mappo(data / "overcooked_cramped_room_mappo.pt", mappo)
    full, slim = (MappoAgent.load(p) for p in (data / "overcooked_cramped_room_mappo.pt", mappo))
    x = np.random.default_rng(0).normal(size=(16, full.meta["obs_dim"])).astype(np.float32)
    import torch

    h = torch.zeros(16, full.actor.hidden_size)
    one = torch.ones(16)
    assert torch.equal(full.actor(torch.as_tensor(x), h, one)[0],
                       slim.actor(torch.as_tensor(x), h, one)[0])  # fmt: skip
    with pytest.raises(ValueError, match="only the actor"):
        load_checkpoint(mappo)
    sb3 = tmp_path / "actor.zip"
    strip_sb3(data / "baselines_rl_bomb_ppo_batched.zip", sb3)
    assert sb3.stat().st_size < 0.6 * (data / "baselines_rl_bomb_ppo_batched.zip").stat().st_size
    a, b = load_sb3_safely(data / "baselines_rl_bomb_ppo_batched.zip"), load_sb3_safely(sb3)
    obs = np.random.default_rng(1).normal(size=(8, *a.observation_space.shape))
    mask = np.ones(a.action_space.n, bool)
    for o in obs:
        assert np.array_equal(masked_probs(a, o, mask), masked_probs(b, o, mask))
    # only the value side may be missing: a file without an actor layer is refused
    import io
    import zipfile

    from tom_baselines.ppo_sb3 import CheckpointError

    with zipfile.ZipFile(sb3) as zf:
        parts = {n: zf.read(n) for n in zf.namelist()}
    weights = torch.load(io.BytesIO(parts["policy.pth"]), weights_only=True)
    del weights["action_net.weight"]
    buf = io.BytesIO()
    torch.save(weights, buf)
    parts["policy.pth"] = buf.getvalue()
    broken = tmp_path / "broken.zip"
    with zipfile.ZipFile(broken, "w") as zf:
        for n, d in parts.items():
            zf.writestr(n, d)
    with pytest.raises(CheckpointError, match="do not fit"):
        load_sb3_safely(broken)


def test_action_classes_and_the_generated_line() -> None:
    assert action_class("J. Play my Card 2") == "play"
    assert action_class("B. Reveal Alices Yellow color cards") == "hint colour"
    assert action_class("E. Reveal Bobs rank 2 cards") == "hint rank"
    assert action_class("move up") == "move" and action_class("Press button in room 9") == "press"
    from collections import Counter

    line = summary_line({"player_0": Counter(move=8, interact=2),
                         "player_1": Counter(move=2, interact=8)}, "self-play score 1.0")  # fmt: skip
    assert line.startswith("move 50%, interact 50%; ")
    assert "does 'move' most (80% vs 20%)" in line and line.endswith("self-play score 1.0")


def test_gaps_read_self_play_against_cross_play() -> None:
    # two members with different conventions: 10 with themselves, 2 with each other (seed noise)
    noise = [0.0, 0.5, -0.5, 0.2]
    same = [10 + e for e in noise]
    cross = [2 + e for e in noise]
    cp = CrossPlay("X", ["a", "b"], [0, 1, 2, 3], "score", True, {},
                   [[same, cross], [cross, same]])  # fmt: skip
    (g,) = gaps(cp)
    assert g.estimate == pytest.approx(8.0) and g.verdict == "self-play beats cross-play"
    alike = CrossPlay("X", ["a", "b"], [0, 1, 2, 3], "score", True, {},
                      [[same, same], [same, same]])  # fmt: skip
    assert gaps(alike)[0].verdict == "no difference shown"
    lower = CrossPlay("X", ["a", "b"], [0, 1, 2, 3], "turns", False, {},
                      [[cross, same], [same, cross]])  # fmt: skip
    assert gaps(lower)[0].verdict == "self-play beats cross-play"  # fewer turns with itself


def test_the_crossplay_command_runs_on_a_tiny_seed_list(capsys: pytest.CaptureFixture[str],
                                                        tmp_path: Path) -> None:  # fmt: skip
    from tom_envs.cli import main

    game = "CollabCapture" if "CollabCapture" in SHIPPED else SHIPPED[0]
    learned = [m.agent_spec for m in suite.members(game)][:2]
    bot = next(m.name for m in zoo.members(game) if m.kind == "bot")
    out = tmp_path / "x.json"
    code = main(["zoo", "crossplay", game, "--members", bot, *learned, "--seeds", "800000",
                 "800001", "--quiet", "--json", str(out)])  # fmt: skip
    text = capsys.readouterr().out
    assert code == 0
    assert f"| focal \\ partner | {bot} | {' | '.join(learned)} |" in text
    assert "self-play minus cross-play" in text and "fallback decisions: 0" in text
    saved = json.loads(out.read_text())
    assert saved["names"] == [bot, *learned] and saved["seeds"] == [800000, 800001]
    assert all(len(cell) == 2 for row in saved["values"] for cell in row)
    from tom_experiments.zoo.page import section

    page = section(game, str(out))  # the docs section, rendered from the files
    assert f"Cross-play on zoo `{zoo.version(game)}`" in page and learned[0] in page
    assert suite.members(game)[0].sha256[:12] in page
    saved["zoo_version"] = game + "/z1-00000000"  # played on another zoo: refused
    out.write_text(json.dumps(saved))
    with pytest.raises(ValueError, match="play it again"):
        section(game, str(out))
