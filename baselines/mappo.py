"""MAPPO (Yu et al., 2022, "The Surprising Effectiveness of PPO in Cooperative Multi-Agent Games").

Settings, the clipped PPO update and the training loop; the networks, checkpoints and the trained
agent are in :mod:`tom_baselines.mappo_policy`, the rollouts over N copies of the env and GAE in
:mod:`tom_baselines.mappo_rollout`. It trains on every registered game through the suite's API and
knows nothing about any particular game:

* **Actor** (parameter-shared by every learning seat): the seat's own observation vector (the
  AEC observation, egocentric), logits masked by the legal actions.
* **Centralised critic**: ``env.state()`` (the global state vector) plus the seat's one-hot id.
* Optional **GRU** in the actor and the critic (``--recurrent``), trained on chunks of
  ``chunk_len`` consecutive decisions of one seat, from the hidden state stored at collection.
* **Rollouts**: ``num_envs`` copies of the AEC env. A *tick* asks, in every copy, every seat the
  rules say must act now (one seat in turn-based games, all seats in simultaneous ones); the
  learning seats of all copies are batched into one forward pass, then each copy is stepped seat
  by seat (the AEC env applies a simultaneous joint action once the last seat has chosen).
* **Rewards in turn-based games**: a seat's transition stays *open* from its decision until its
  next one and collects every reward it receives meanwhile (its own move's, and those caused by
  the others' moves). Its bootstrap value is the critic's value at that next decision, or 0 when
  the game ends (the critic's value of the final state when the episode is cut by ``max_cycles``).
  A transition still open when a rollout ends is carried into the next rollout, so no reward is
  lost and no value is guessed at a state where that seat does not act.
* Seats can be filled by fixed agents (``--partners 1=tit_for_tat``): partner bots, populations,
  RMax or another checkpoint; they act through the same ``Turn`` API and the same decision
  primitive as in ``tom-envs run`` (:func:`tom_envs.driver.decide`, with the ``raise``
  failure policy: a partner that fails stops training loudly instead of being replaced).
* **Batched engines** (``--engine auto``, the default): self-play on a game with a batched numpy
  engine (bomb defusal, Overcooked) collects from it (:mod:`tom_baselines.mappo_batched`, the
  same bookkeeping, one engine call per tick for all copies) instead of stepping AEC copies; the
  engine used is in the checkpoint's ``meta["engine"]`` and the curve's ``engine`` column.
* ``global_step`` counts **env steps** = rules steps: one per move in a turn-based game, one per
  joint action in a simultaneous game (``decisions`` counts seat decisions).

A checkpoint (``.pt``) loads as an agent (:class:`~tom_baselines.mappo_policy.MappoAgent`) that
plays any seat through the Turn API:
``tom-envs run GAME --agents checkpoint:path=runs/x/checkpoint.pt tit_for_tat``. It records the
environment it was trained on (``meta["resolved_env_kwargs"]``: every game argument, defaults
resolved; ``meta["observation_shape"]``); ``MappoAgent.reset`` refuses an episode of another
game, observation shape or game arguments, naming both sides. Older checkpoints without these
fields are checked on the observation size and the arguments they recorded.

Run::

    tom-envs train mappo RockPaperScissors --partners 1=tit_for_tat --total-steps 200000
    python -m tom_baselines.mappo --game RockPaperScissors --recurrent --help
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from tom_baselines.common import (
    LearningCurve,
    eval_seed,
    evaluate,
    parse_kv,
    parse_settings,
    progress_bar,
    seat_agents,
)
from tom_baselines.mappo_batched import make_collector
from tom_baselines.mappo_policy import (
    MappoAgent,
    Net,
    ValueNorm,
    build_nets,
    masked_logits,
    save_checkpoint,
)
from tom_baselines.mappo_rollout import chunks, gae
from tom_envs.core.agents import Agent
from tom_envs.registration import GameSpec, game_spec


@dataclass
class Args:
    """MAPPO settings (every field is a ``--flag`` of ``tom-envs train mappo``)."""

    game: str = "RockPaperScissors"
    """registered game name or id"""
    env_kwargs: list[str] = field(default_factory=list)
    """game keyword arguments as key=value (e.g. horizon=10)"""
    partners: list[str] = field(default_factory=list)
    """fixed agents as SEAT=SPEC (e.g. 1=tit_for_tat); every other seat is a learner"""
    event_rewards: list[str] = field(default_factory=list)
    """reward shaping from the game's step events as NAME=VALUE (an event "player_0:NAME" or
    "NAME"), given to every learning seat; training signal only: logged returns stay the game's;
    overcooked-ai's shaping in Overcooked: potting_onion=3 useful_plate=3 soup_from_pot=5"""
    event_rewards_horizon: int = 0
    """anneal the event rewards linearly to 0 over this many env steps (0: keep them constant)"""
    total_steps: int = 200_000
    """env steps to train for (rules steps: moves, or joint actions in simultaneous games)"""
    num_envs: int = 16
    """copies of the env stepped together (their acting seats share one forward pass)"""
    num_steps: int = 128
    """ticks per copy per rollout (a tick asks every seat that must act now)"""
    seed: int = 0
    """seed of torch, of the env episodes and of the partners"""
    lr: float = 5e-4
    """Adam learning rate of actor and critic"""
    anneal_lr: bool = True
    """decay the learning rate linearly to 0 over training"""
    gamma: float = 0.99
    """discount per decision of a seat"""
    gae_lambda: float = 0.95
    """GAE lambda"""
    update_epochs: int = 5
    """PPO epochs per rollout"""
    num_minibatches: int = 4
    """minibatches per epoch (of chunks when recurrent)"""
    clip_coef: float = 0.2
    """PPO ratio clip (also clips the value update)"""
    ent_coef: float = 0.01
    """entropy bonus"""
    vf_coef: float = 0.5
    """value loss weight"""
    max_grad_norm: float = 1.0
    """gradient norm clip"""
    hidden: int = 128
    """width of the two hidden layers (and of the GRU)"""
    recurrent: bool = False
    """GRU in actor and critic (MAPPO's rMAPPO)"""
    chunk_len: int = 16
    """decisions per recurrent training chunk (backpropagation through time)"""
    actor_agent_id: bool = False
    """also give the actor its seat one-hot (default off: egocentric obs, any seat)"""
    value_norm: bool = True
    """normalise value targets with running statistics (MAPPO's ValueNorm)"""
    eval_every: int = 10
    """evaluate (and save a checkpoint) every this many updates; 0 = only at the end"""
    eval_episodes: int = 20
    """episodes per evaluation, played by the suite's runner (game metrics included)"""
    eval_deterministic: bool = False
    """evaluate the greedy policy instead of sampling"""
    out: str | None = None
    """output directory (default runs/train/mappo-GAME-seedS)"""
    threads: int = 1
    """torch CPU threads"""
    engine: str = "auto"
    """rollouts: "auto" (the game's batched numpy engine where it has one and the run allows it,
    else per-env AEC copies), "envs" (always AEC copies), "batched" (fail if impossible),
    "batched-seeded" (bomb defusal: episodes drawn exactly as the per-env collector draws them)"""
    progress: bool = True
    """show a progress bar"""


# ------------------------------------------------------------------------------ PPO update
def ppo_update(
    data: Mapping[str, np.ndarray],
    advantages: np.ndarray,
    actor: Net,
    critic: Net,
    optimizer: torch.optim.Optimizer,
    value_norm: ValueNorm,
    args: Args,
) -> dict[str, float]:
    """Clipped PPO on actor and critic over ``update_epochs`` epochs of chunk minibatches."""
    returns = advantages + data["value"]
    value_norm.update(returns)
    adv = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    t = {k: torch.as_tensor(v) for k, v in data.items()}
    t["adv"] = torch.as_tensor(adv, dtype=torch.float32)
    t["target"] = torch.as_tensor(value_norm.normalize(returns), dtype=torch.float32)
    t["old_v"] = torch.as_tensor(value_norm.normalize(data["value"]), dtype=torch.float32)
    idx = chunks(data["stream"], args.chunk_len if args.recurrent else 1)
    stats: dict[str, list[float]] = {k: [] for k in ("pg", "v", "ent", "kl", "clip")}
    for _ in range(args.update_epochs):
        perm = np.random.permutation(len(idx))
        for mb in np.array_split(perm, min(args.num_minibatches, len(idx))):
            rows = torch.as_tensor(idx[mb])  # [M, L]
            valid = (rows >= 0).float()
            r = rows.clamp(min=0)
            ha, hc = t["h_actor"][r[:, 0]], t["h_critic"][r[:, 0]]
            logps, ents, values = [], [], []
            for step in range(rows.shape[1]):  # one step per chunk position (L = 1 without GRU)
                i = r[:, step]
                logits, ha = actor(t["obs"][i], ha, t["start"][i])
                dist = torch.distributions.Categorical(logits=masked_logits(logits, t["mask"][i]))
                logps.append(dist.log_prob(t["action"][i]))
                ents.append(dist.entropy())
                v, hc = critic(t["critic_in"][i], hc, t["start"][i])
                values.append(v.squeeze(-1))
            logp, ent, v = torch.stack(logps, 1), torch.stack(ents, 1), torch.stack(values, 1)
            n = valid.sum()
            log_ratio = logp - t["logp"][r]
            ratio = log_ratio.exp()
            a = t["adv"][r]
            pg = (torch.max(-a * ratio, -a * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef))
                  * valid).sum() / n  # fmt: skip
            old_v, target = t["old_v"][r], t["target"][r]
            v_clip = old_v + (v - old_v).clamp(-args.clip_coef, args.clip_coef)
            v_loss = 0.5 * (torch.max((v - target) ** 2, (v_clip - target) ** 2) * valid).sum() / n
            entropy = (ent * valid).sum() / n
            loss = pg - args.ent_coef * entropy + args.vf_coef * v_loss
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(
                [*actor.parameters(), *critic.parameters()], args.max_grad_norm
            )
            optimizer.step()
            with torch.no_grad():
                stats["pg"].append(pg.item())
                stats["v"].append(v_loss.item())
                stats["ent"].append(entropy.item())
                stats["kl"].append((((ratio - 1) - log_ratio) * valid).sum().item() / n.item())
                stats["clip"].append(
                    (((ratio - 1).abs() > args.clip_coef).float() * valid).sum().item() / n.item()
                )
    var = float(np.var(returns))
    explained = float("nan") if var == 0 else 1 - float(np.var(returns - data["value"])) / var
    return {
        "policy_loss": float(np.mean(stats["pg"])),
        "value_loss": float(np.mean(stats["v"])),
        "entropy": float(np.mean(stats["ent"])),
        "approx_kl": float(np.mean(stats["kl"])),
        "clipfrac": float(np.mean(stats["clip"])),
        "explained_variance": explained,
    }


# ------------------------------------------------------------------------------- training
def parse_partners(items: Sequence[str]) -> dict[int, str]:
    """``["1=tit_for_tat"]`` -> ``{1: "tit_for_tat"}``."""
    out = {}
    for item in items:
        seat, eq, spec = item.partition("=")
        if not eq or not seat.isdigit() or not spec:
            raise ValueError(f"partners are SEAT=SPEC (e.g. 1=tit_for_tat), got {item!r}")
        out[int(seat)] = spec
    return out


def train(args: Args, spec: GameSpec | None = None) -> dict[str, Any]:
    """Train, log the learning curve, save checkpoints; returns a summary of the run.

    ``spec`` overrides the registry lookup of ``args.game`` (for games built outside ``GAMES``).
    """
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)  # minibatch order only
    torch.set_num_threads(args.threads)
    spec = spec or game_spec(args.game)
    kwargs = {**spec.kwargs, **parse_kv(args.env_kwargs)}
    partners = parse_partners(args.partners)
    collector = make_collector(args, spec, kwargs, partners)
    engine = getattr(collector, "engine_name", "envs")
    env, game = collector.envs[0], collector.game
    meta = {
        "game": spec.name, "env_id": spec.id, "env_kwargs": parse_kv(args.env_kwargs),
        "resolved_env_kwargs": collector.resolved, "observation_shape": list(collector.obs_shape),
        "num_players": game.num_players,
        "num_actions": game.num_actions, "obs_dim": int(np.prod(env.bundle.encoder.observation_shape)),
        "state_dim": int(np.prod(env.state_space.shape)), "hidden": args.hidden,
        "recurrent": args.recurrent, "actor_agent_id": args.actor_agent_id,
        "engine": engine, "args": dataclasses.asdict(args),
    }  # fmt: skip
    actor, critic = build_nets(meta)
    params = [*actor.parameters(), *critic.parameters()]
    optimizer = torch.optim.Adam(params, lr=args.lr, eps=1e-5)
    value_norm = ValueNorm(args.value_norm)
    out = Path(args.out or f"runs/train/mappo-{spec.name}-seed{args.seed}")
    who = ", ".join(f"seat {p}: {s}" for p, s in partners.items()) or "self-play"
    curve = LearningCurve(out, f"MAPPO on {spec.name} ({who})")
    ckpt = out / "checkpoint.pt"
    bar = progress_bar(args.total_steps, f"mappo {spec.name}", args.progress)

    def policy() -> Agent:
        return MappoAgent(actor, meta, args.eval_deterministic, name="mappo")

    global_step = decisions = update = episodes = 0
    t0, cpu0 = time.perf_counter(), time.process_time()
    while global_step < args.total_steps:
        update += 1
        if args.anneal_lr:
            optimizer.param_groups[0]["lr"] = args.lr * (1 - global_step / args.total_steps)
        if args.event_rewards_horizon > 0:
            collector.shaping_scale = max(0.0, 1 - global_step / args.event_rewards_horizon)
        t_roll = time.perf_counter()
        data, steps = collector.collect(actor, critic, value_norm)
        t_gae = time.perf_counter()
        advantages = gae(data, args.gamma, args.gae_lambda)
        t_upd = time.perf_counter()
        stats = ppo_update(data, advantages, actor, critic, optimizer, value_norm, args)
        t_end = time.perf_counter()
        global_step += steps
        decisions += len(data["stream"])
        finished = collector.pop_finished()
        episodes += len(finished)
        row: dict[str, Any] = {
            "update": update, "global_step": global_step, "decisions": decisions,
            "episodes": episodes, "wall_s": t_end - t0, "sps": global_step / (t_end - t0),
            "cpu_s": time.process_time() - cpu0, "load1": os.getloadavg()[0],
            "rollout_s": t_gae - t_roll, "gae_s": t_upd - t_gae, "update_s": t_end - t_upd,
            "shaping_scale": collector.shaping_scale, "engine": engine,
        }  # fmt: skip
        if finished:
            for key in ("return", "length", "rounds"):
                row[f"{key}_mean"] = float(np.mean([e[key] for e in finished]))
        row.update(stats)
        last = global_step >= args.total_steps
        if last or (args.eval_every and update % args.eval_every == 0):
            t_eval = time.perf_counter()
            factories = seat_agents(spec, policy, partners, game.num_players)
            ev = evaluate(spec, factories, args.eval_episodes, eval_seed(args.seed),
                          meta["env_kwargs"], collector.learners)  # fmt: skip
            row.update({f"eval/{k}": v for k, v in ev.items()})
            row["eval_s"] = time.perf_counter() - t_eval
            save_checkpoint(ckpt, actor, critic, value_norm, {**meta, "global_step": global_step})
            curve.plot()
        curve.log(row)
        bar.update(steps)
        bar.set_postfix_str(
            f"return {row.get('return_mean', float('nan')):.2f} ent {stats['entropy']:.2f}"
        )
    bar.close()
    wall = time.perf_counter() - t0
    curve.plot()
    return {
        "checkpoint": str(ckpt), "curve_csv": str(curve.csv_path), "curve_png": str(curve.png_path),
        "global_step": global_step, "decisions": decisions, "episodes": episodes,
        "wall_s": wall, "sps": global_step / wall, "final": curve.rows[-1], "engine": engine,
    }  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: ``python -m tom_baselines.mappo --game G ...`` (or ``tom-envs train mappo G``)."""
    args = parse_settings(Args, argv, "tom-envs train mappo")
    summary = train(args)
    final = summary["final"]
    print(
        f"MAPPO {args.game}: {summary['global_step']} env steps, {summary['episodes']} episodes, "
        f"{summary['wall_s']:.1f}s ({summary['sps']:.0f} steps/s); eval return "
        f"{final.get('eval/return_mean', float('nan')):.3f}"
    )
    for key in ("checkpoint", "curve_csv", "curve_png"):
        print(f"{key}: {summary[key]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
