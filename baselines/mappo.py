"""MAPPO (Yu et al., 2022, "The Surprising Effectiveness of PPO in Cooperative Multi-Agent Games").

The whole per-env algorithm in one file, top to bottom (CleanRL style): the settings
(:class:`Args`), the rollout buffer and the collector over N copies of the AEC env, GAE, the clipped
PPO update, evaluation and checkpointing in the training loop, the command line. The network, the
value normaliser and the checkpoint format (which ``checkpoint:path=...pt`` agents load) are in
:mod:`tom_baselines.mappo_policy`; the batched path (one numpy engine call per tick) is
:mod:`tom_baselines.mappo_batched`, beside this file. It trains on every registered game through
the suite's API and knows nothing about any particular game:

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
* Seats can be filled by fixed agents (``--partners 1=tit_for_tat``): any agent ``tom-envs run``
  can play (partner bots, populations, RMax, another checkpoint, an LLM agent reading the text);
  each is asked when its seat is selected, with the turn the episode driver would give it
  (:func:`tom_envs.core.agents.env_turn`: view, vector, mask and text layer) and the same decision
  primitive (:func:`tom_envs.driver.decide`, with the ``raise`` failure policy: a partner that
  fails stops training loudly instead of being replaced).
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
from tom_baselines.mappo_policy import (
    MappoAgent,
    Net,
    ValueNorm,
    build_nets,
    masked_logits,
    save_checkpoint,
)
from tom_envs.agents import make_agent
from tom_envs.core.agents import Agent, env_turn
from tom_envs.core.game import agent_index
from tom_envs.driver import FailurePolicy, decide, draw_episode_seed, episode_info, fallback_rng
from tom_envs.identity import resolved_env_kwargs
from tom_envs.registration import GameSpec, game_spec

#: ``--engine``: see :attr:`Args.engine`.
ENGINE_CHOICES = ("auto", "envs", "batched", "batched-seeded")


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


# ------------------------------------------------------------------------------- rollouts
class Rollout:
    """Transitions in collection order. A row stays *open* until its seat's next decision."""

    KEYS = ("stream", "obs", "critic_in", "mask", "action", "logp", "value", "h_actor", "h_critic",
            "start")  # fmt: skip

    def __init__(self) -> None:
        self.parts: dict[str, list[np.ndarray]] = {k: [] for k in self.KEYS}
        self.size = 0
        self.reward: list[float] = []
        self.next_value: list[float] = []
        self.done: list[bool] = []
        self.closed: list[bool] = []

    def add(self, **batch: np.ndarray) -> np.ndarray:
        """Append a batch of rows; returns their indices."""
        n = len(batch["stream"])
        for k in self.KEYS:
            self.parts[k].append(batch[k])
        self.reward += [0.0] * n
        self.next_value += [0.0] * n
        self.done += [False] * n
        self.closed += [False] * n
        self.size += n
        return np.arange(self.size - n, self.size)

    def close(self, row: int, next_value: float, done: bool) -> None:
        """The seat decided again (``next_value`` is that decision's value) or the episode ended."""
        self.next_value[row], self.done[row], self.closed[row] = next_value, done, True

    def split(self) -> tuple[dict[str, np.ndarray], Rollout, dict[int, int]]:
        """Closed rows as arrays, a new rollout holding the open rows, and old -> new row ids."""
        data = {k: np.concatenate(v) for k, v in self.parts.items()}
        data["reward"] = np.asarray(self.reward, np.float32)
        data["next_value"] = np.asarray(self.next_value, np.float32)
        data["done"] = np.asarray(self.done, bool)
        closed = np.asarray(self.closed, bool)
        carry = Rollout()
        open_rows = np.flatnonzero(~closed)
        moved = {}
        if open_rows.size:
            new = carry.add(**{k: data[k][open_rows] for k in self.KEYS})
            for old, nw in zip(open_rows, new, strict=True):
                carry.reward[nw] = self.reward[old]
                moved[int(old)] = int(nw)
        return {k: v[closed] for k, v in data.items()}, carry, moved


class Collector:
    """``num_envs`` copies of the AEC env with fixed partners and per-seat rollout bookkeeping."""

    def __init__(
        self, args: Args, spec: GameSpec, kwargs: Mapping[str, Any], partners: Mapping[int, str]
    ) -> None:
        self.args, self.spec, self.kwargs = args, spec, dict(kwargs)
        self.envs = [spec.load().raw_env(**self.kwargs) for _ in range(args.num_envs)]
        self.game = self.envs[0].game
        n = self.n = self.game.num_players
        self.learners = [p for p in range(n) if p not in partners]
        if not self.learners:
            raise ValueError("every seat is a partner: at least one seat must learn")
        self.partners = [
            {p: make_agent(s, spec, env.bundle, trusted=True)  # the trainer's command line
             for p, s in partners.items()} for env in self.envs
        ]  # fmt: skip
        self.rng = np.random.default_rng(args.seed)
        self.policy = FailurePolicy(on_failure="raise")
        self.fallback = fallback_rng(args.seed)  # unused under "raise"; decide() takes one
        self.resolved = resolved_env_kwargs(spec, self.kwargs)
        self.obs_shape = tuple(int(x) for x in self.envs[0].bundle.encoder.observation_shape)
        shape = (args.num_envs, n)
        ha = args.hidden if args.recurrent else 0
        self.h_actor = np.zeros((*shape, ha), np.float32)
        self.h_critic = np.zeros((*shape, ha), np.float32)
        self.open_row = np.full(shape, -1)
        self.start = np.ones(shape, np.float32)
        self.returns = np.zeros(shape)
        self.decisions = np.zeros(shape, int)
        self.partner_reward = np.zeros(shape)
        self.steps = np.zeros(args.num_envs, int)
        self.eye = np.eye(n, dtype=np.float32)
        self.buffer = Rollout()
        self.event_rewards = {k: float(v) for k, v in parse_kv(args.event_rewards).items()}
        self.shaping_scale = 1.0
        self.finished: list[dict[str, float]] = []
        for c in range(args.num_envs):
            self.reset(c)

    def reset(self, c: int) -> None:
        """New seeded episode in copy ``c``; partners are told the same seed."""
        seed = draw_episode_seed(self.rng)
        env = self.envs[c]
        env.reset(seed=seed)
        for p, agent in self.partners[c].items():
            agent.reset(episode_info(self.spec, self.game, p, seed, self.resolved, self.obs_shape))
        self.h_actor[c] = self.h_critic[c] = 0.0
        self.open_row[c] = -1
        self.start[c] = 1.0
        self.returns[c] = self.decisions[c] = self.partner_reward[c] = self.steps[c] = 0

    def partner_move(self, c: int, p: int) -> tuple[int, str | None]:
        """A fixed agent's decision, asked when its seat is selected, through the turn the episode
        driver gives it (:func:`~tom_envs.core.agents.env_turn`: text layer included); its action
        and the chat message it sends with it (games with chat)."""
        env, agent = self.envs[c], f"player_{p}"
        reward, decision = float(self.partner_reward[c, p]), int(self.decisions[c, p])
        turn = env_turn(env, agent, reward=reward, decision=decision)
        d = decide(self.partners[c][p], turn, self.fallback, self.policy)  # raises on failure
        self.partner_reward[c, p] = 0.0
        message = d.choice.message if self.game.tags.communication else None
        return d.action, message

    @torch.no_grad()
    def collect(
        self, actor: Net, critic: Net, value_norm: ValueNorm
    ) -> tuple[dict[str, np.ndarray], int]:
        """Run ``num_steps`` ticks in every copy; returns the closed transitions and env steps."""
        env_steps = 0
        for _ in range(self.args.num_steps):
            # 1. who acts now, in every copy: the learning seats of all copies decide together
            acting = [list(self.game.current_players(env.game_state)) for env in self.envs]
            rows = [(c, p) for c, seats in enumerate(acting) for p in seats
                    if p not in self.partners[c]]  # fmt: skip
            chosen = self.decide_learners(rows, actor, critic, value_norm) if rows else {}
            # 2. every copy steps seat by seat; partners decide when their seat is selected
            for c in range(len(self.envs)):
                self.step_copy(c, len(acting[c]), chosen, critic, value_norm)
                env_steps += 1
        data, self.buffer, moved = self.buffer.split()
        for (c, p), row in np.ndenumerate(self.open_row):
            if row >= 0:
                self.open_row[c, p] = moved[int(row)]
        return data, env_steps

    def decide_learners(
        self, rows: list[tuple[int, int]], actor: Net, critic: Net, value_norm: ValueNorm
    ) -> dict[tuple[int, int], int]:
        """One forward pass for the learning seats ``rows`` (copy, seat): sample their actions,
        close their previous transitions with this decision's value, open new ones."""
        args, buf = self.args, self.buffer
        cs, ps = np.array([c for c, _ in rows]), np.array([p for _, p in rows])
        seen = [self.envs[c].observe(f"player_{p}") for c, p in rows]
        obs = np.stack([o["observation"] for o in seen])
        mask = np.stack(  # the AEC mask is the selected seat's; the others ask the rules
            [o["action_mask"] if self.envs[c].agent_selection == f"player_{p}"
             else self.game.legal_mask(self.envs[c].game_state, p)
             for o, (c, p) in zip(seen, rows, strict=True)]
        )  # fmt: skip
        states = {c: self.envs[c].state() for c in set(cs.tolist())}
        critic_in = np.stack([np.concatenate([states[c], self.eye[p]]) for c, p in rows])
        actor_in = np.concatenate([obs, self.eye[ps]], 1) if args.actor_agent_id else obs
        start = self.start[cs, ps]
        ha, hc = self.h_actor[cs, ps], self.h_critic[cs, ps]
        logits, ha_next = actor(torch.as_tensor(actor_in), torch.as_tensor(ha),
                                torch.as_tensor(start))  # fmt: skip
        logits = masked_logits(logits, torch.as_tensor(mask, dtype=torch.bool))
        dist = torch.distributions.Categorical(logits=logits)
        action = dist.sample()
        logp = dist.log_prob(action).numpy()
        v, hc_next = critic(torch.as_tensor(critic_in), torch.as_tensor(hc),
                            torch.as_tensor(start))  # fmt: skip
        value = value_norm.denormalize(v.squeeze(-1).numpy())
        for k, (c, p) in enumerate(rows):  # the seats' previous transitions close here
            if self.open_row[c, p] >= 0:
                buf.close(self.open_row[c, p], float(value[k]), done=False)
        new = buf.add(
            stream=cs * self.n + ps, obs=actor_in.astype(np.float32),
            critic_in=critic_in.astype(np.float32), mask=mask.astype(bool),
            action=action.numpy(), logp=logp, value=value.astype(np.float32),
            h_actor=ha, h_critic=hc, start=start,
        )  # fmt: skip
        self.open_row[cs, ps] = new
        self.h_actor[cs, ps], self.h_critic[cs, ps] = ha_next.numpy(), hc_next.numpy()
        self.start[cs, ps] = 0.0
        self.decisions[cs, ps] += 1
        return {row: int(action[k]) for k, row in enumerate(rows)}

    def step_copy(
        self, c: int, moves: int, chosen: Mapping[tuple[int, int], int], critic: Net,
        value_norm: ValueNorm,
    ) -> None:  # fmt: skip
        """Copy ``c``'s ``moves`` acting seats step in the AEC order; every reward goes to its
        seat's open transition; a finished episode is closed and a new one started."""
        env = self.envs[c]
        for _ in range(moves):
            p = agent_index(env.agent_selection)
            if p in self.partners[c]:
                action, message = self.partner_move(c, p)
                self.decisions[c, p] += 1
                if message is not None:
                    env.send_message(f"player_{p}", message)  # sent with its action
            else:
                action = chosen[(c, p)]
            before = env.game_state
            env.step(action)
            for agent, r in env.rewards.items():
                if r:
                    self.add_reward(c, agent_index(agent), float(r))
            if self.event_rewards and env.game_state is not before:
                self.shape(c, env.last_events)
        self.steps[c] += 1
        if any(env.terminations.values()) or any(env.truncations.values()):
            self.end_episode(c, critic, value_norm)

    def shape(self, c: int, events: Sequence[str]) -> None:
        """Add the (annealed) event rewards of one joint step to every learner's transition."""
        bonus = sum(self.event_rewards.get(e.rpartition(":")[2], 0.0) for e in events)
        if bonus:
            for p in self.learners:
                if self.open_row[c, p] >= 0:
                    self.buffer.reward[self.open_row[c, p]] += self.shaping_scale * bonus

    def add_reward(self, c: int, p: int, r: float) -> None:
        """Credit a reward to seat ``p`` of copy ``c``."""
        self.returns[c, p] += r
        if p in self.partners[c]:
            self.partner_reward[c, p] += r
        elif self.open_row[c, p] >= 0:
            self.buffer.reward[self.open_row[c, p]] += r

    def end_episode(self, c: int, critic: Net, value_norm: ValueNorm) -> None:
        """Close every open transition of copy ``c``, record the episode, start a new one."""
        env = self.envs[c]
        terminal = self.game.is_terminal(env.game_state)
        for p in self.learners:
            row = self.open_row[c, p]
            if row < 0:
                continue
            bootstrap = 0.0
            if not terminal:  # cut by max_cycles: the rest of the return is the critic's guess
                x = np.concatenate([env.state(), self.eye[p]])[None].astype(np.float32)
                h = torch.as_tensor(self.h_critic[c, p][None])
                v, _ = critic(torch.as_tensor(x), h, torch.zeros(1))
                bootstrap = float(value_norm.denormalize(v.item()))
            self.buffer.close(row, bootstrap, done=True)
        self.finished.append(
            {
                "return": float(self.returns[c, self.learners].mean()),
                "length": float(self.steps[c]),
                "rounds": float(self.decisions[c].max()),
            }
        )
        self.reset(c)

    def pop_finished(self) -> list[dict[str, float]]:
        """Episodes finished since the last call."""
        out, self.finished = self.finished, []
        return out


# ------------------------------------------------------------------------------------ GAE
def gae(data: Mapping[str, np.ndarray], gamma: float, lam: float) -> np.ndarray:
    """Generalised advantage estimates, per seat stream (rows of one stream are consecutive).

    ``δ_t = r_t + γ V(next decision) − V_t`` (``V(next)`` = 0 at game end); the recursion
    ``A_t = δ_t + γλ A_{t+1}`` runs while the next row is the same seat's next decision in this
    batch (not across an episode end, nor past the last closed row of the stream).
    """
    order = np.lexsort((np.arange(len(data["stream"])), data["stream"]))
    stream, done = data["stream"][order], data["done"][order]
    delta = data["reward"][order] + gamma * data["next_value"][order] - data["value"][order]
    follows = np.zeros(len(order), bool)
    follows[:-1] = (stream[1:] == stream[:-1]) & ~done[:-1]
    adv = np.zeros(len(order), np.float32)
    last = 0.0
    for i in range(len(order) - 1, -1, -1):
        last = delta[i] + gamma * lam * (last if follows[i] else 0.0)
        adv[i] = last
    out = np.empty_like(adv)
    out[order] = adv
    return out


def chunks(stream: np.ndarray, length: int) -> np.ndarray:
    """Row indices ``[num_chunks, length]`` (-1 = padding): consecutive decisions of one seat."""
    order = np.lexsort((np.arange(len(stream)), stream))
    s = stream[order]
    first = np.r_[True, s[1:] != s[:-1]]
    pos = np.arange(len(s)) - np.maximum.accumulate(np.where(first, np.arange(len(s)), 0))
    chunk_id = np.cumsum(first | (pos % length == 0)) - 1
    idx = np.full((chunk_id[-1] + 1, length), -1)
    idx[chunk_id, pos % length] = order
    return idx


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


def make_collector(
    args: Args, spec: GameSpec, kwargs: Mapping[str, Any], partners: Mapping[int, str]
) -> Any:
    """The run's collector: the per-env :class:`Collector`, or, where ``args.engine`` asks for it
    and the run fits, the batched one of :mod:`tom_baselines.mappo_batched` (imported only then;
    ``--engine batched`` fails naming why a run does not fit)."""
    if args.engine not in ENGINE_CHOICES:
        raise ValueError(f"engine must be one of {ENGINE_CHOICES}, got {args.engine!r}")
    if args.engine != "envs":
        from tom_baselines.mappo_batched import batched_collector

        collector = batched_collector(args, spec, kwargs, partners)
        if collector is not None:
            return collector
    return Collector(args, spec, kwargs, partners)


def run_meta(args: Args, spec: GameSpec, collector: Any) -> dict[str, Any]:
    """What the checkpoint records: the environment (game, resolved arguments, shapes), the
    networks' sizes, the collector used and every setting."""
    env, game = collector.envs[0], collector.game
    return {
        "game": spec.name, "env_id": spec.id, "env_kwargs": parse_kv(args.env_kwargs),
        "resolved_env_kwargs": collector.resolved, "observation_shape": list(collector.obs_shape),
        "num_players": game.num_players, "num_actions": game.num_actions,
        "obs_dim": int(np.prod(env.bundle.encoder.observation_shape)),
        "state_dim": int(np.prod(env.state_space.shape)), "hidden": args.hidden,
        "recurrent": args.recurrent, "actor_agent_id": args.actor_agent_id,
        "engine": getattr(collector, "engine_name", "envs"), "args": dataclasses.asdict(args),
    }  # fmt: skip


def train(args: Args, spec: GameSpec | None = None) -> dict[str, Any]:
    """Train, log the learning curve, save checkpoints; returns a summary of the run.

    ``spec`` overrides the registry lookup of ``args.game`` (for games built outside ``GAMES``).
    """
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)  # minibatch order only
    torch.set_num_threads(args.threads)
    spec = spec or game_spec(args.game)
    partners = parse_partners(args.partners)
    collector = make_collector(args, spec, {**spec.kwargs, **parse_kv(args.env_kwargs)}, partners)
    meta = run_meta(args, spec, collector)
    actor, critic = build_nets(meta)
    optimizer = torch.optim.Adam([*actor.parameters(), *critic.parameters()], lr=args.lr, eps=1e-5)
    value_norm = ValueNorm(args.value_norm)
    out = Path(args.out or f"runs/train/mappo-{spec.name}-seed{args.seed}")
    who = ", ".join(f"seat {p}: {s}" for p, s in partners.items()) or "self-play"
    curve = LearningCurve(out, f"MAPPO on {spec.name} ({who})")
    bar = progress_bar(args.total_steps, f"mappo {spec.name}", args.progress)
    clock = {"t0": time.perf_counter(), "cpu0": time.process_time()}
    counts = {"global_step": 0, "decisions": 0, "update": 0, "episodes": 0}
    while counts["global_step"] < args.total_steps:
        row, steps = train_update(args, collector, actor, critic, optimizer, value_norm, counts,
                                  clock)  # fmt: skip
        last = counts["global_step"] >= args.total_steps
        if last or (args.eval_every and counts["update"] % args.eval_every == 0):
            row.update(evaluate_and_save(args, spec, collector, actor, critic, value_norm, meta,
                                         counts["global_step"], out / "checkpoint.pt"))  # fmt: skip
            curve.plot()
        curve.log(row)
        bar.update(steps)
        bar.set_postfix_str(
            f"return {row.get('return_mean', float('nan')):.2f} ent {row['entropy']:.2f}"
        )
    bar.close()
    wall = time.perf_counter() - clock["t0"]
    curve.plot()
    return {
        "checkpoint": str(out / "checkpoint.pt"), "curve_csv": str(curve.csv_path),
        "curve_png": str(curve.png_path), "global_step": counts["global_step"],
        "decisions": counts["decisions"], "episodes": counts["episodes"], "wall_s": wall,
        "sps": counts["global_step"] / wall, "final": curve.rows[-1], "engine": meta["engine"],
    }  # fmt: skip


def train_update(
    args: Args, collector: Any, actor: Net, critic: Net, optimizer: torch.optim.Optimizer,
    value_norm: ValueNorm, counts: dict[str, int], clock: Mapping[str, float],
) -> tuple[dict[str, Any], int]:  # fmt: skip
    """One update: anneal, collect a rollout, GAE, PPO; returns the curve's row and the env steps
    collected (``counts`` are advanced in place)."""
    counts["update"] += 1
    done_frac = counts["global_step"] / args.total_steps
    if args.anneal_lr:
        optimizer.param_groups[0]["lr"] = args.lr * (1 - done_frac)
    if args.event_rewards_horizon > 0:
        collector.shaping_scale = max(0.0, 1 - counts["global_step"] / args.event_rewards_horizon)
    t_roll = time.perf_counter()
    data, steps = collector.collect(actor, critic, value_norm)
    t_gae = time.perf_counter()
    advantages = gae(data, args.gamma, args.gae_lambda)
    t_upd = time.perf_counter()
    stats = ppo_update(data, advantages, actor, critic, optimizer, value_norm, args)
    t_end = time.perf_counter()
    counts["global_step"] += steps
    counts["decisions"] += len(data["stream"])
    finished = collector.pop_finished()
    counts["episodes"] += len(finished)
    wall = t_end - clock["t0"]
    row: dict[str, Any] = {
        "update": counts["update"], "global_step": counts["global_step"],
        "decisions": counts["decisions"], "episodes": counts["episodes"], "wall_s": wall,
        "sps": counts["global_step"] / wall, "cpu_s": time.process_time() - clock["cpu0"],
        "load1": os.getloadavg()[0], "rollout_s": t_gae - t_roll, "gae_s": t_upd - t_gae,
        "update_s": t_end - t_upd, "shaping_scale": collector.shaping_scale,
        "engine": getattr(collector, "engine_name", "envs"),
    }  # fmt: skip
    if finished:
        for key in ("return", "length", "rounds"):
            row[f"{key}_mean"] = float(np.mean([e[key] for e in finished]))
    row.update(stats)
    return row, steps


def evaluate_and_save(
    args: Args, spec: GameSpec, collector: Any, actor: Net, critic: Net, value_norm: ValueNorm,
    meta: Mapping[str, Any], global_step: int, ckpt: Path,
) -> dict[str, Any]:  # fmt: skip
    """Play ``eval_episodes`` with the suite's runner (the learner's policy in the learning seats,
    the partners in theirs), save the checkpoint; the curve's ``eval/`` columns."""
    t_eval = time.perf_counter()

    def policy() -> Agent:
        return MappoAgent(actor, meta, args.eval_deterministic, name="mappo")

    partners = parse_partners(args.partners)
    factories = seat_agents(spec, policy, partners, collector.game.num_players)
    ev = evaluate(spec, factories, args.eval_episodes, eval_seed(args.seed), meta["env_kwargs"],
                  collector.learners)  # fmt: skip
    out: dict[str, Any] = {f"eval/{k}": v for k, v in ev.items()}
    out["eval_s"] = time.perf_counter() - t_eval
    save_checkpoint(ckpt, actor, critic, value_norm, {**meta, "global_step": global_step})
    return out


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
