"""PPO from stable-baselines3 (MaskablePPO from sb3-contrib) on the Gymnasium single-agent views.

The learner plays one seat of any registered game (:class:`~tom_envs.single_agent.
SingleAgentEnv`); named partner agents fill the other seats, exactly as in ``tom-envs run``. With
``--masked`` (the default) it is sb3-contrib's MaskablePPO reading the env's ``action_masks()``;
``--no-masked`` is plain PPO (an illegal sampled action is then an error, so use it only in games
where every action is always legal, such as the matrix games).

Parameter-shared self-play (``--self-play``): every other seat is played by the learner's own
current network (sampled with the legal mask), and the env copies cycle the learner's seat, so one
set of parameters learns to play every seat. Only the learner seat's decisions are trained on
(``baselines/mappo.py`` trains on every seat's decisions with a centralised critic).

Batched engines (``--engine auto``, the default): on a game with a batched numpy engine the copies
are stepped at once by :class:`tom_envs.integrations.sb3.BatchedVecEnv` instead of a
``DummyVecEnv`` of Gymnasium envs (``baselines/ppo_batched.py``: which runs fit, how the seats are
played); ``--engine envs`` keeps the per-env path, ``--engine batched`` refuses a run that does not
fit. The engine used is in ``model.zip``'s ``tom_envs.json`` and in the curve's ``engine`` column.

Outputs in ``--out``: ``model.zip`` (loads as an agent: ``checkpoint:path=.../model.zip``),
``curve.csv`` and ``curve.png``; the final evaluation runs through the suite's runner, so game
metrics (ΔFunctional/T in the matrix games) are reported.

Run::

    tom-envs train ppo RockPaperScissors --partners tit_for_tat --total-steps 200000
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from tom_baselines.common import (
    LearningCurve,
    evaluate,
    parse_kv,
    parse_settings,
    progress_bar,
    seat_agents,
)
from tom_envs.core.agents import Agent, BaseAgent, EpisodeInfo, Turn, jsonable
from tom_envs.registration import game_spec
from tom_envs.single_agent import SingleAgentEnv


@dataclass
class Args:
    """SB3 PPO settings (every field is a ``--flag`` of ``tom-envs train ppo``)."""

    game: str = "RockPaperScissors"
    """registered game name or id"""
    env_kwargs: list[str] = field(default_factory=list)
    """game keyword arguments as key=value (e.g. horizon=10)"""
    partners: list[str] = field(default_factory=lambda: ["random"])
    """agent specs for the other seats: one for all of them, or one per other seat in seat order"""
    seat: int = 0
    """the learner's seat (self-play cycles it over the env copies)"""
    event_rewards: list[str] = field(default_factory=list)
    """reward shaping from Overcooked's step events as NAME=VALUE (as train mappo's; on the batched
    engine or the per-env path); training signal only: logged returns and evaluations stay the game's;
    overcooked-ai's shaping: potting_onion=3 useful_plate=3 soup_from_pot=5"""
    event_rewards_horizon: int = 0
    """anneal the event rewards linearly to 0 over this many env steps (0: keep them constant)"""
    self_play: bool = False
    """the other seats are played by the learner's own current policy (parameter sharing)"""
    masked: bool = True
    """sb3-contrib MaskablePPO with the legal-action masks (else stable-baselines3 PPO)"""
    total_steps: int = 200_000
    """learner steps (decisions of the learning seat)"""
    num_envs: int = 8
    """env copies (DummyVecEnv)"""
    n_steps: int = 256
    """steps per copy per rollout"""
    batch_size: int = 512
    """minibatch size"""
    n_epochs: int = 10
    """PPO epochs per rollout"""
    lr: float = 3e-4
    """Adam learning rate"""
    gamma: float = 0.99
    """discount"""
    gae_lambda: float = 0.95
    """GAE lambda"""
    clip_range: float = 0.2
    """PPO ratio clip"""
    ent_coef: float = 0.01
    """entropy bonus"""
    vf_coef: float = 0.5
    """value loss weight"""
    hidden: int = 64
    """width of the two hidden layers of the policy and value networks"""
    seed: int = 0
    """seed of SB3, the env episodes and the partners"""
    eval_episodes: int = 50
    """episodes of the final evaluation (the suite's runner, game metrics included)"""
    eval_deterministic: bool = False
    """evaluate the greedy policy instead of sampling"""
    out: str | None = None
    """output directory (default runs/train/ppo-GAME-seedS)"""
    threads: int = 1
    """torch CPU threads"""
    progress: bool = True
    """show a progress bar"""
    engine: str = "auto"
    """rollouts: "auto" (the game's batched numpy engine where it has one and the run fits it,
    else the per-env Gymnasium copies), "envs" (always the copies) or "batched" (the engine, or
    fail naming why); see baselines/ppo_batched.py"""


# --------------------------------------------------------------------------- the policy as agent
def masked_probs(model: Any, observation: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The model's action probabilities for one observation, illegal actions removed."""
    policy = model.policy
    with torch.no_grad():
        obs, _ = policy.obs_to_tensor(np.asarray(observation, np.float32))
        probs = policy.get_distribution(obs).distribution.probs[0].double().numpy()
    probs = probs * np.asarray(mask, bool)
    total = probs.sum()
    if total <= 0:  # the model puts (numerically) nothing on the legal actions: uniform over them
        probs, total = np.asarray(mask, float), float(np.sum(mask))
    return probs / total


#: Policies a checkpoint may name (read from its ``data`` JSON, never unpickled): SB3 PPO's and
#: sb3-contrib MaskablePPO's ``MlpPolicy`` and ``MultiInputPolicy``, by (module, class).
SAFE_POLICIES: dict[tuple[str, str], tuple[str, str]] = {
    ("stable_baselines3.common.policies", "ActorCriticPolicy"):
        ("stable_baselines3.common.policies", "ActorCriticPolicy"),
    ("stable_baselines3.common.policies", "MultiInputActorCriticPolicy"):
        ("stable_baselines3.common.policies", "MultiInputActorCriticPolicy"),
    ("sb3_contrib.common.maskable.policies", "MaskableActorCriticPolicy"):
        ("sb3_contrib.common.maskable.policies", "MaskableActorCriticPolicy"),
    ("sb3_contrib.common.maskable.policies", "MaskableMultiInputActorCriticPolicy"):
        ("sb3_contrib.common.maskable.policies", "MaskableMultiInputActorCriticPolicy"),
}  # fmt: skip
#: Activation functions a checkpoint may name (``activation_fn`` in its policy_kwargs).
SAFE_ACTIVATIONS = ("Tanh", "ReLU", "ELU", "LeakyReLU", "GELU", "SiLU")
#: Plain-JSON policy keyword arguments a checkpoint may carry, besides net_arch/activation_fn.
SAFE_POLICY_KWARGS = ("ortho_init", "share_features_extractor", "normalize_images")
#: The value side of an actor-critic policy's weights: an actor-only file (a shipped partner of
#: the zoo) may leave these out; the policy then plays, its value estimates are meaningless.
VALUE_KEYS = ("mlp_extractor.value_net.", "value_net.", "vf_features_extractor.")
#: The name of the suite's metadata inside a saved ``model.zip`` (env id, kwargs, shape).
META_NAME = "tom_envs.json"
_MAX_ZIP_MEMBER = 512 * 2**20  # bytes: a member larger than this is refused, not read


class CheckpointError(ValueError):
    """A checkpoint the safe loader refuses (it says why, and how to load it if trusted)."""


@dataclass
class SafeModel:
    """What :class:`SB3Agent` needs of an SB3 model: the policy and its spaces."""

    policy: Any
    observation_space: Any
    action_space: Any
    meta: dict[str, Any] = field(default_factory=dict)


def _refuse(path: Any, what: str) -> CheckpointError:
    return CheckpointError(
        f"checkpoint {path}: {what}. The safe loader reads only plain JSON and weights; load a "
        "file you trust with checkpoint:path=...:trusted=true (it unpickles, and so may run code)"
    )


def _member(zf: Any, name: str, path: Any) -> bytes:
    try:
        info = zf.getinfo(name)
    except KeyError:
        raise _refuse(path, f"no {name!r} in the zip") from None
    if info.file_size > _MAX_ZIP_MEMBER:
        raise _refuse(path, f"{name!r} is {info.file_size} bytes (more than {_MAX_ZIP_MEMBER})")
    return zf.read(name)


def _plain(data: dict[str, Any], key: str, path: Any) -> Any:
    """A ``data`` entry that must be plain JSON (a pickled one is refused, never unpickled)."""
    value = data.get(key)
    if isinstance(value, dict) and ":serialized:" in value:
        raise _refuse(path, f"{key!r} is a pickled object")
    return value


def _space(entry: Any, key: str, path: Any) -> Any:
    """Rebuild an observation or action space from the readable attributes SB3 writes beside
    its pickle (the pickle itself is ignored)."""
    import gymnasium as gym

    if not isinstance(entry, dict):
        raise _refuse(path, f"{key!r} is missing")
    kind = str(entry.get(":type:", ""))
    if key == "action_space":
        if not kind.endswith(".Discrete'>") and "LegalDiscrete" not in kind:
            raise _refuse(path, f"action space {kind} (only Discrete is supported)")
        try:
            n, start = int(entry["n"]), int(entry.get("start", 0))
        except (KeyError, TypeError, ValueError):
            raise _refuse(path, "the action space has no readable size") from None
        if not 1 <= n <= 10**6 or start != 0:
            raise _refuse(path, f"action space of {n} actions starting at {start}")
        return gym.spaces.Discrete(n)
    dtype = str(entry.get("dtype", ""))
    if kind.endswith("spaces.box.Box'>"):
        shape = entry.get("_shape")
        if (
            not isinstance(shape, list)
            or not all(isinstance(d, int) and 0 < d <= 10**6 for d in shape)
            or dtype not in ("float32", "float64")
        ):
            raise _refuse(path, f"observation space {shape} {dtype} (a float Box is supported)")
        return gym.spaces.Box(-np.inf, np.inf, tuple(shape), np.dtype(dtype))
    if kind.endswith("spaces.dict.Dict'>"):
        import re

        text = str(entry.get("spaces", ""))
        found = re.findall(r"'(\w+)': Box\([^()]*?, \(([\d, ]*)\), (float32|float64)\)", text)
        if not found or len(found) != text.count("Box("):
            raise _refuse(path, "a Dict observation space whose parts are not float Boxes")
        parts = {}
        for name, dims, dt in found:
            shape = tuple(int(d) for d in dims.replace(" ", "").split(",") if d)
            parts[name] = gym.spaces.Box(-np.inf, np.inf, shape, np.dtype(dt))
        return gym.spaces.Dict(parts)
    raise _refuse(path, f"observation space {kind}")


def _policy_class(entry: Any, path: Any) -> type:
    """The allow-listed policy class named (in plain text) by ``policy_class``."""
    import importlib
    import re

    if not isinstance(entry, dict):
        raise _refuse(path, "no policy_class")
    module = str(entry.get("__module__", ""))
    match = re.fullmatch(
        r"<function (\w+)\.__init__ at 0x[0-9a-f]+>", str(entry.get("__init__", ""))
    )
    key = (module, match.group(1) if match else "")
    if key not in SAFE_POLICIES:
        raise _refuse(path, f"policy {key[0]}.{key[1] or '?'} is not one of the known "
                      f"architectures {sorted(c for _, c in SAFE_POLICIES)}")  # fmt: skip
    mod, cls = SAFE_POLICIES[key]
    return getattr(importlib.import_module(mod), cls)


def _policy_kwargs(entry: Any, path: Any) -> dict[str, Any]:
    import torch.nn as nn

    if entry is None:
        return {}
    if not isinstance(entry, dict) or ":serialized:" in entry:
        raise _refuse(path, "policy_kwargs is a pickled object")
    out: dict[str, Any] = {}
    for key, value in entry.items():
        if key == "net_arch":

            def ok(arch: Any) -> bool:
                return isinstance(arch, list) and len(arch) <= 8 and all(
                    isinstance(w, int) and not isinstance(w, bool) and 1 <= w <= 4096 for w in arch
                )  # fmt: skip

            if not (ok(value) or (isinstance(value, dict) and set(value) <= {"pi", "vf"}
                                  and all(ok(v) for v in value.values()))):  # fmt: skip
                raise _refuse(path, f"net_arch {str(value)[:80]} (lists of at most 8 widths)")
            out[key] = value
        elif key == "activation_fn":
            name = str(value).rsplit(".", 1)[-1].strip("'>")
            if name not in SAFE_ACTIVATIONS:
                raise _refuse(path, f"activation {str(value)[:80]}")
            out[key] = getattr(nn, name)
        elif key in SAFE_POLICY_KWARGS and isinstance(value, bool):
            out[key] = value
        else:
            raise _refuse(path, f"policy keyword {key!r} is not one of the known ones")
    return out


def load_sb3_safely(path: str | Path) -> SafeModel:
    """An SB3 PPO/MaskablePPO ``.zip`` read without unpickling anything.

    The zip's ``data`` JSON is read as JSON: its ``:serialized:`` (cloudpickle) fields are never
    decoded; the policy class, spaces and network settings come from the readable text SB3 writes
    beside them and must be on the allow-lists above; ``policy.pth`` is loaded with
    ``torch.load(weights_only=True)``. Anything else raises :class:`CheckpointError`.
    """
    import io
    import json
    import zipfile

    try:
        zf = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as exc:
        raise CheckpointError(f"checkpoint {path}: not a readable zip ({exc})") from None
    with zf:
        try:
            data = json.loads(_member(zf, "data", path))
        except (ValueError, UnicodeDecodeError):
            raise _refuse(path, "'data' is not JSON") from None
        if not isinstance(data, dict):
            raise _refuse(path, "'data' is not a JSON object")
        policy_cls = _policy_class(data.get("policy_class"), path)
        kwargs = _policy_kwargs(_plain(data, "policy_kwargs", path), path)
        obs_space = _space(data.get("observation_space"), "observation_space", path)
        act_space = _space(data.get("action_space"), "action_space", path)
        if isinstance(obs_space, gym_dict_type()) != ("MultiInput" in policy_cls.__name__):
            raise _refuse(path, f"{policy_cls.__name__} with observation space {obs_space}")
        try:
            weights = torch.load(io.BytesIO(_member(zf, "policy.pth", path)), map_location="cpu",
                                 weights_only=True)  # fmt: skip
        except Exception as exc:  # the weights-only unpickler refuses anything but tensors
            raise _refuse(path, f"policy.pth is not plain weights ({type(exc).__name__})") from None
        meta: dict[str, Any] = {}
        if META_NAME in zf.namelist():
            try:
                meta = json.loads(_member(zf, META_NAME, path))
            except (ValueError, UnicodeDecodeError):
                raise _refuse(path, f"{META_NAME} is not JSON") from None
    policy = policy_cls(obs_space, act_space, lambda _: 0.0, **kwargs)
    try:
        if not isinstance(weights, dict):
            raise TypeError(f"policy.pth holds a {type(weights).__name__}, not weights")
        missing = set(policy.state_dict()) - set(weights)
        # an actor-only file (a shipped partner) leaves out the value side, and only that
        actor_only = bool(missing) and all(k.startswith(VALUE_KEYS) for k in missing)
        policy.load_state_dict(weights, strict=not actor_only)
        if actor_only and set(weights) - set(policy.state_dict()):
            raise RuntimeError(f"unexpected keys {sorted(set(weights) - set(policy.state_dict()))}")
    except (RuntimeError, TypeError, AttributeError) as exc:
        raise CheckpointError(f"checkpoint {path}: the weights do not fit the recorded "
                              f"architecture ({str(exc)[:300]})") from None  # fmt: skip
    policy.set_training_mode(False)
    return SafeModel(policy, obs_space, act_space, meta if isinstance(meta, dict) else {})


def gym_dict_type() -> type:
    """``gymnasium.spaces.Dict``."""
    import gymnasium as gym

    return gym.spaces.Dict


def checkpoint_meta(
    spec: Any, env_kwargs: dict[str, Any], observation_shape: Any
) -> dict[str, Any]:
    """What a saved model records about its environment (checked by :func:`check_env_match`)."""
    try:
        from tom_envs.identity import resolved_env_kwargs

        resolved = resolved_env_kwargs(spec, env_kwargs)
    except ImportError:  # pragma: no cover - older trees
        resolved = {**spec.kwargs, **env_kwargs}
    return {"env_id": spec.id, "env_kwargs": resolved,
            "observation_shape": list(observation_shape) if observation_shape is not None else None}  # fmt: skip


def check_env_match(meta: dict[str, Any], info: EpisodeInfo, what: str) -> None:
    """Raise ``ValueError`` naming both sides when a checkpoint's environment differs from the
    episode's: env id, observation shape, and every game argument both sides record."""
    if not meta:
        return
    trained = meta.get("env_id")
    if trained and info.env_id and trained != info.env_id:
        raise ValueError(f"{what} was trained on {trained}, this episode is {info.env_id}")
    ours, theirs = meta.get("env_kwargs") or {}, getattr(info, "env_kwargs", None) or {}
    differ = [
        f"trained with {key}={ours[key]!r}, this episode has {key}={theirs[key]!r}"
        for key in sorted(set(ours) & set(theirs))
        if _compared(ours[key]) != _compared(theirs[key])
    ]
    shape = meta.get("observation_shape")
    here = getattr(info, "observation_shape", None)
    if shape is not None and here is not None and tuple(shape) != tuple(here):
        why = f": it was {'; '.join(differ)}" if differ else ""
        raise ValueError(f"{what} expects observations of shape {tuple(shape)} "
                         f"({trained}), this episode gives {tuple(here)}{why}")  # fmt: skip
    if differ:
        raise ValueError(f"{what} was {differ[0]}")


def _compared(value: Any) -> Any:
    """A game argument as compared across a checkpoint and an episode (tuples read as lists)."""
    return list(value) if isinstance(value, (list, tuple)) else value


class SB3Agent(BaseAgent):
    """A stable-baselines3 model as an agent for any seat (masked sampling, seeded per episode)."""

    def __init__(self, model: Any, deterministic: bool = False, name: str = "ppo",
                 meta: dict[str, Any] | None = None) -> None:  # fmt: skip
        super().__init__()
        self.model, self.deterministic, self.name = model, deterministic, name
        self.meta = meta if meta is not None else dict(getattr(model, "meta", {}) or {})

    @classmethod
    def load(cls, path: str | Path, deterministic: bool = False, trusted: bool = False) -> SB3Agent:
        """Load a MaskablePPO or PPO ``.zip``: safely (:func:`load_sb3_safely`, the default), or
        with SB3's own loader (``trusted=True``: it unpickles, so only for files you trust)."""
        if trusted is not True:  # only the boolean True opts in to unpickling
            if trusted is not False:
                raise ValueError(f"trusted must be True or False, got {trusted!r}")
            model = load_sb3_safely(path)
            return cls(model, deterministic, name=f"checkpoint:path={path}", meta=model.meta)
        import json
        import zipfile

        from sb3_contrib import MaskablePPO
        from stable_baselines3 import PPO

        try:
            model = MaskablePPO.load(path, device="cpu")
        except (ValueError, KeyError, TypeError, AttributeError):
            model = PPO.load(path, device="cpu")
        with zipfile.ZipFile(path) as zf:
            meta = json.loads(zf.read(META_NAME)) if META_NAME in zf.namelist() else {}
        return cls(model, deterministic, name=f"checkpoint:path={path}", meta=meta)

    def config(self) -> dict[str, Any]:
        """Settings for result keys: the policy's class and network, its spaces, the sampling
        and the environment it was trained on (the file's hash is the checkpoint agent's)."""
        policy = getattr(self.model, "policy", None)
        obs = getattr(self.model, "observation_space", None)
        return {
            "policy": type(policy).__name__ if policy is not None else None,
            "net_arch": jsonable(getattr(policy, "net_arch", None)),
            "observation_shape": list(getattr(obs, "shape", None) or []),
            "num_actions": getattr(getattr(self.model, "action_space", None), "n", None),
            "deterministic": self.deterministic,
            "trained_on": jsonable({k: self.meta.get(k) for k in ("env_id", "env_kwargs")}),
        }

    def reset(self, info: EpisodeInfo) -> None:
        """Seed the sampler from the episode; check the action space and environment match."""
        super().reset(info)
        n = int(self.model.action_space.n)
        if info.num_actions != n:
            raise ValueError(f"{self.name}: model has {n} actions, the game {info.num_actions}")
        check_env_match(self.meta, info, self.name)

    def act(self, turn: Turn) -> int:
        """Sample (or take the most probable) legal action."""
        probs = masked_probs(self.model, turn.observation, turn.action_mask)
        if self.deterministic:
            return int(np.argmax(probs))
        return int(self.rng.choice(len(probs), p=probs))

    def action_probs(self, turn: Turn) -> dict[int, float]:
        """The distribution :meth:`act` draws from on this turn (its argmax alone when
        deterministic): the known policy exact references and prediction scores read. A
        feed-forward policy of the turn's observation: asking it changes nothing."""
        probs = masked_probs(self.model, turn.observation, turn.action_mask)
        if self.deterministic:
            return {int(np.argmax(probs)): 1.0}
        return {int(a): float(p) for a, p in enumerate(probs) if p > 0}


class SelfPlayPartner(SB3Agent):
    """The learner's live network in a partner seat (``model`` is set once PPO is built)."""

    def __init__(self) -> None:
        super().__init__(model=None, name="self")

    def reset(self, info: EpisodeInfo) -> None:
        """Seed only (the model is the learner's)."""
        BaseAgent.reset(self, info)


# ------------------------------------------------------------------------------- training
def make_env(args: Args, rank: int, self_play: list[SelfPlayPartner]) -> Any:
    """One Monitor-wrapped single-agent env; in self-play its partners are the live policy.

    ``--partners`` specs come from the trainer's command line, so they are built as trusted
    ones: any agent ``tom-envs run`` can play (bots, populations, checkpoints, LLM agents, which
    read the text layer of the turns the episode driver gives them)."""
    from stable_baselines3.common.monitor import Monitor

    spec = game_spec(args.game)
    n = spec.load().make_bundle(**spec.kwargs).game.num_players
    seat = rank % n if args.self_play else args.seat
    partners: list[Any] = args.partners * (n - 1) if len(args.partners) == 1 else args.partners
    if args.self_play:
        partners = [SelfPlayPartner() for _ in range(n - 1)]
        self_play.extend(partners)
    env = SingleAgentEnv(args.game, partners=partners, seat=seat, trusted=True,
                         **parse_kv(args.env_kwargs))  # fmt: skip
    from tom_baselines.ppo_batched import event_weights

    weights = event_weights(args)
    if weights:  # Overcooked (choose_engine): the step's events in its info, outside Monitor
        from tom_envs.integrations.sb3 import EventBonus

        return EventBonus(Monitor(env), weights)
    return Monitor(env)


def partner_map(args: Args, num_players: int) -> dict[int, str]:
    """``{seat: spec}`` for the seats the learner does not play (none in self-play)."""
    if args.self_play:
        return {}
    others = [p for p in range(num_players) if p != args.seat]
    specs = args.partners * len(others) if len(args.partners) == 1 else args.partners
    if len(specs) != len(others):
        raise ValueError(f"give one partner spec or {len(others)}, got {args.partners}")
    return dict(zip(others, specs, strict=True))


def make_venv(
    args: Args, spec: Any, self_play: list[SelfPlayPartner]
) -> tuple[Any, Any, int, str, str]:
    """The run's vectorised env: ``(venv, shaping, num_players, engine, engine_detail)``; the
    batched engine's ``BatchedVecEnv`` where it fits (``--engine``), else a ``DummyVecEnv`` of
    single-agent envs; ``shaping`` is the :class:`EventRewards` wrapper of ``--event-rewards``
    (around the ``VecMonitor``: logged returns stay unshaped) or ``None``."""
    from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor

    from tom_baselines.ppo_batched import choose_engine, event_weights, make_batched_venv

    engine = choose_engine(args, spec)
    shaping: Any = None
    if engine == "batched":
        ref = spec.load().raw_env(**{**spec.kwargs, **parse_kv(args.env_kwargs)})
        num_players = ref.game.num_players
        space = ref.observation_space(ref.possible_agents[0])["observation"]
        batched, engine_detail = make_batched_venv(args, spec, space)
        venv: Any = VecMonitor(batched)
        if args.event_rewards:
            from tom_envs.integrations.sb3 import EventRewards

            venv = shaping = EventRewards(venv, batched, args.event_rewards_horizon)
    else:
        venv = DummyVecEnv([lambda r=r: make_env(args, r, self_play) for r in range(args.num_envs)])
        first: Any = venv.envs[0].unwrapped  # a SingleAgentEnv
        num_players = first.bundle.game.num_players
        engine_detail = f"DummyVecEnv of {args.num_envs} SingleAgentEnv copies"
        weights = event_weights(args)
        if weights:  # Overcooked (choose_engine): each env's step events, as the batched engine's
            from tom_envs.integrations.sb3 import EventRewards

            venv = shaping = EventRewards(venv, None, args.event_rewards_horizon)
            when = (f"annealed to 0 over {args.event_rewards_horizon} env steps"
                    if args.event_rewards_horizon else "constant")  # fmt: skip
            engine_detail += f"; event rewards {weights} from the rules' step events, {when}"
    return venv, shaping, num_players, engine, engine_detail


def curve_callback(venv: Any, shaping: Any, curve: LearningCurve, bar: Any, engine: str) -> Any:
    """SB3 callback: the progress bar per step, one learning-curve row per rollout."""
    from stable_baselines3.common.callbacks import BaseCallback

    t0, c0 = time.perf_counter(), time.process_time()

    class Curve(BaseCallback):
        """Progress bar per step; one learning-curve row per rollout."""

        def __init__(self) -> None:
            super().__init__()
            self.episodes: list[tuple[float, float]] = []
            self.count = self.rollouts = 0

        def _on_step(self) -> bool:
            bar.update(venv.num_envs)
            for info in self.locals["infos"]:
                if "episode" in info:
                    self.episodes.append((info["episode"]["r"], info["episode"]["l"]))
            return True

        def _on_rollout_start(self) -> None:
            if shaping is not None:
                shaping.anneal()  # as MAPPO: from the env steps before this rollout

        def _on_rollout_end(self) -> None:
            self.rollouts += 1
            wall = time.perf_counter() - t0
            row: dict[str, Any] = {
                "update": self.rollouts, "global_step": self.num_timesteps,
                "episodes": self.count + len(self.episodes), "wall_s": wall,
                "sps": self.num_timesteps / wall, "cpu_s": time.process_time() - c0,
                "load1": os.getloadavg()[0], "engine": engine,
            }  # fmt: skip
            if shaping is not None:
                row.update(env_steps=shaping.env_steps, shaping_scale=shaping.scale)
            if self.episodes:
                row["return_mean"] = float(np.mean([r for r, _ in self.episodes]))
                row["length_mean"] = float(np.mean([n for _, n in self.episodes]))
                bar.set_postfix_str(f"return {row['return_mean']:.2f}")
            for key, value in self.model.logger.name_to_value.items():  # the previous update's
                if key.startswith("train/"):
                    row[key.removeprefix("train/")] = float(value)
            self.count += len(self.episodes)
            self.episodes = []
            curve.log(row)

    return Curve()


def train(args: Args) -> dict[str, Any]:
    """Train, log the learning curve, save ``model.zip``, evaluate; returns a run summary."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3 import PPO

    from tom_baselines.ppo_batched import event_weights

    torch.set_num_threads(args.threads)
    spec = game_spec(args.game)
    out = Path(args.out or f"runs/train/ppo-{spec.name}-seed{args.seed}")
    self_play: list[SelfPlayPartner] = []
    venv, shaping, num_players, engine, engine_detail = make_venv(args, spec, self_play)
    venv.seed(args.seed)
    partners = partner_map(args, num_players)
    algo = MaskablePPO if args.masked else PPO
    model = algo(
        "MlpPolicy", venv, learning_rate=args.lr, n_steps=args.n_steps,
        batch_size=args.batch_size, n_epochs=args.n_epochs, gamma=args.gamma,
        gae_lambda=args.gae_lambda, clip_range=args.clip_range, ent_coef=args.ent_coef,
        vf_coef=args.vf_coef, policy_kwargs={"net_arch": [args.hidden, args.hidden]},
        seed=args.seed, device="cpu", verbose=0,
    )  # fmt: skip
    for partner in self_play:
        partner.model = model
    who = (
        "self-play" if args.self_play else ", ".join(f"seat {p}: {s}" for p, s in partners.items())
    )
    curve = LearningCurve(out, f"{algo.__name__} on {spec.name} ({who})")
    bar = progress_bar(args.total_steps, f"ppo {spec.name}", args.progress)
    t0, c0 = time.perf_counter(), time.process_time()
    model.learn(total_timesteps=args.total_steps,
                callback=curve_callback(venv, shaping, curve, bar, engine))  # fmt: skip
    bar.close()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    out.mkdir(parents=True, exist_ok=True)
    path = out / "model.zip"
    model.save(path)
    meta = checkpoint_meta(spec, parse_kv(args.env_kwargs), venv.observation_space.shape)
    meta.update(engine=engine, engine_detail=engine_detail)
    if shaping is not None:
        meta.update(event_rewards=event_weights(args),
                    event_rewards_horizon=args.event_rewards_horizon)  # fmt: skip
    with zipfile.ZipFile(path, "a") as zf:  # the env it was trained on, read back at load
        zf.writestr(META_NAME, json.dumps(meta, indent=1))

    def learner() -> Agent:
        return SB3Agent(model, args.eval_deterministic)

    factories = seat_agents(spec.name, learner, partners, num_players)
    learners = [p for p in range(num_players) if p not in partners]
    ev = evaluate(spec.name, factories, args.eval_episodes, 10**6 + args.seed * 10**4,
                  parse_kv(args.env_kwargs), learners)  # fmt: skip
    final = {"global_step": model.num_timesteps, "wall_s": wall, "cpu_s": cpu, "engine": engine,
             **{f"eval/{k}": v for k, v in ev.items()}}  # fmt: skip
    curve.log(final)
    curve.plot()
    (out / "settings.txt").write_text(repr(dataclasses.asdict(args)) + "\n")
    return {
        "checkpoint": str(path), "curve_csv": str(curve.csv_path), "curve_png": str(curve.png_path),
        "global_step": model.num_timesteps, "wall_s": wall, "sps": model.num_timesteps / wall,
        "cpu_s": cpu, "engine": engine, "engine_detail": engine_detail, "eval": ev,
    }  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: ``python -m tom_baselines.ppo_sb3 --game G ...`` (or ``tom-envs train ppo G``)."""
    args = parse_settings(Args, argv, "tom-envs train ppo")
    summary = train(args)
    print(
        f"PPO {args.game}: {summary['global_step']} learner steps in {summary['wall_s']:.1f}s "
        f"({summary['sps']:.0f} steps/s, {summary['cpu_s']:.1f} CPU s, engine "
        f"{summary['engine']}); eval return {summary['eval']['return_mean']:.3f}"
    )
    for key in ("checkpoint", "curve_csv", "curve_png"):
        print(f"{key}: {summary[key]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
