"""PPO from stable-baselines3 (MaskablePPO from sb3-contrib) on the Gymnasium single-agent views.

The learner plays one seat of any registered game (:class:`~tom_envs.core.single_agent.
SingleAgentEnv`); named partner agents fill the other seats, exactly as in ``tom-envs run``. With
``--masked`` (the default) it is sb3-contrib's MaskablePPO reading the env's ``action_masks()``;
``--no-masked`` is plain PPO (an illegal sampled action is then an error, so use it only in games
where every action is always legal, such as the matrix games).

Parameter-shared self-play (``--self-play``): every other seat is played by the learner's own
current network (sampled with the legal mask), and the env copies cycle the learner's seat, so one
set of parameters learns to play every seat. Only the learner seat's decisions are trained on
(``baselines/mappo.py`` trains on every seat's decisions with a centralised critic).

Outputs in ``--out``: ``model.zip`` (loads as an agent: ``checkpoint:path=.../model.zip``),
``curve.csv`` and ``curve.png``; the final evaluation runs through the suite's runner, so game
metrics (ΔFunctional/T in the matrix games) are reported.

Run::

    tom-envs train ppo RockPaperScissors --partners tit_for_tat --total-steps 200000
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from baselines.common import (
    LearningCurve,
    evaluate,
    parse_kv,
    parse_settings,
    progress_bar,
    seat_agents,
)
from tom_envs.core.agents import Agent, BaseAgent, EpisodeInfo, Turn
from tom_envs.core.single_agent import SingleAgentEnv
from tom_envs.registration import game_spec


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


class SB3Agent(BaseAgent):
    """A stable-baselines3 model as an agent for any seat (masked sampling, seeded per episode)."""

    def __init__(self, model: Any, deterministic: bool = False, name: str = "ppo") -> None:
        super().__init__()
        self.model, self.deterministic, self.name = model, deterministic, name

    @classmethod
    def load(cls, path: str | Path, deterministic: bool = False) -> SB3Agent:
        """Load a MaskablePPO or PPO ``.zip``."""
        from sb3_contrib import MaskablePPO
        from stable_baselines3 import PPO

        try:
            model = MaskablePPO.load(path, device="cpu")
        except (ValueError, KeyError, TypeError, AttributeError):
            model = PPO.load(path, device="cpu")
        return cls(model, deterministic, name=f"checkpoint:path={path}")

    def reset(self, info: EpisodeInfo) -> None:
        """Seed the sampler from the episode; check the action space matches."""
        super().reset(info)
        n = int(self.model.action_space.n)
        if info.num_actions != n:
            raise ValueError(f"model has {n} actions, the game {info.num_actions}")

    def act(self, turn: Turn) -> int:
        """Sample (or take the most probable) legal action."""
        probs = masked_probs(self.model, turn.observation, turn.action_mask)
        if self.deterministic:
            return int(np.argmax(probs))
        return int(self.rng.choice(len(probs), p=probs))


class SelfPlayPartner(SB3Agent):
    """The learner's live network in a partner seat (``model`` is set once PPO is built)."""

    def __init__(self) -> None:
        super().__init__(model=None, name="self")

    def reset(self, info: EpisodeInfo) -> None:
        """Seed only (the model is the learner's)."""
        BaseAgent.reset(self, info)


# ------------------------------------------------------------------------------- training
def make_env(args: Args, rank: int, self_play: list[SelfPlayPartner]) -> Any:
    """One Monitor-wrapped single-agent env; in self-play its partners are the live policy."""
    from stable_baselines3.common.monitor import Monitor

    spec = game_spec(args.game)
    n = spec.load().make_bundle(**spec.kwargs).game.num_players
    seat = rank % n if args.self_play else args.seat
    partners = ["random"] * (n - 1) if args.self_play else args.partners
    env = SingleAgentEnv(args.game, partners=partners, seat=seat, **parse_kv(args.env_kwargs))
    if args.self_play:
        for p in env.partners:
            env.partners[p] = partner = SelfPlayPartner()
            self_play.append(partner)
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


def train(args: Args) -> dict[str, Any]:
    """Train, log the learning curve, save ``model.zip``, evaluate; returns a run summary."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import DummyVecEnv

    torch.set_num_threads(args.threads)
    spec = game_spec(args.game)
    out = Path(args.out or f"runs/train/ppo-{spec.name}-seed{args.seed}")
    self_play: list[SelfPlayPartner] = []
    venv = DummyVecEnv([lambda r=r: make_env(args, r, self_play) for r in range(args.num_envs)])
    venv.seed(args.seed)
    num_players = venv.envs[0].unwrapped.bundle.game.num_players
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
    t0 = time.perf_counter()

    class Curve(BaseCallback):
        """Progress bar per step; one learning-curve row per rollout."""

        def __init__(self) -> None:
            super().__init__()
            self.episodes: list[tuple[float, float]] = []
            self.count = self.rollouts = 0

        def _on_step(self) -> bool:
            bar.update(args.num_envs)
            for info in self.locals["infos"]:
                if "episode" in info:
                    self.episodes.append((info["episode"]["r"], info["episode"]["l"]))
            return True

        def _on_rollout_end(self) -> None:
            self.rollouts += 1
            wall = time.perf_counter() - t0
            row: dict[str, Any] = {
                "update": self.rollouts, "global_step": self.num_timesteps,
                "episodes": self.count + len(self.episodes), "wall_s": wall,
                "sps": self.num_timesteps / wall,
            }  # fmt: skip
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

    model.learn(total_timesteps=args.total_steps, callback=Curve())
    bar.close()
    wall = time.perf_counter() - t0
    out.mkdir(parents=True, exist_ok=True)
    path = out / "model.zip"
    model.save(path)

    def learner() -> Agent:
        return SB3Agent(model, args.eval_deterministic)

    factories = seat_agents(spec.name, learner, partners, num_players)
    learners = [p for p in range(num_players) if p not in partners]
    ev = evaluate(spec.name, factories, args.eval_episodes, 10**6 + args.seed * 10**4,
                  parse_kv(args.env_kwargs), learners)  # fmt: skip
    final = {
        "global_step": model.num_timesteps,
        "wall_s": wall,
        **{f"eval/{k}": v for k, v in ev.items()},
    }
    curve.log(final)
    curve.plot()
    (out / "settings.txt").write_text(repr(dataclasses.asdict(args)) + "\n")
    return {
        "checkpoint": str(path), "curve_csv": str(curve.csv_path), "curve_png": str(curve.png_path),
        "global_step": model.num_timesteps, "wall_s": wall, "sps": model.num_timesteps / wall,
        "eval": ev,
    }  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: ``python -m baselines.ppo_sb3 --game G ...`` (or ``tom-envs train ppo G``)."""
    args = parse_settings(Args, argv, "tom-envs train ppo")
    summary = train(args)
    print(
        f"PPO {args.game}: {summary['global_step']} learner steps in {summary['wall_s']:.1f}s "
        f"({summary['sps']:.0f} steps/s); eval return {summary['eval']['return_mean']:.3f}"
    )
    for key in ("checkpoint", "curve_csv", "curve_png"):
        print(f"{key}: {summary[key]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
