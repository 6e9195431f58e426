"""MAPPO (Yu et al., 2022, "The Surprising Effectiveness of PPO in Cooperative Multi-Agent Games").

One file, read top to bottom: settings, networks, rollouts over N copies of the env, GAE, the
clipped PPO update, checkpoints, and the training loop. It trains on every registered game through
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
* Seats can be filled by fixed agents (``--partners 1=tit_for_tat``): partner bots, populations,
  RMax or another checkpoint; they act through the same ``Turn`` API and the same decision
  primitive as in ``tom-envs run`` (:func:`tom_envs.driver.decide`, with the ``raise``
  failure policy: a partner that fails stops training loudly instead of being replaced).
* ``global_step`` counts **env steps** = rules steps: one per move in a turn-based game, one per
  joint action in a simultaneous game (``decisions`` counts seat decisions).

A checkpoint (``.pt``) loads as an agent (:class:`MappoAgent`) that plays any seat through the
Turn API: ``tom-envs run GAME --agents checkpoint:path=runs/x/checkpoint.pt tit_for_tat``. It
records the environment it was trained on (``meta["resolved_env_kwargs"]``: every game argument,
defaults resolved; ``meta["observation_shape"]``); :meth:`MappoAgent.reset` refuses an episode of
another game, observation shape or game arguments, naming both sides. Older checkpoints without these fields are checked on the observation size and the
arguments they recorded.

Run::

    tom-envs train mappo RockPaperScissors --partners 1=tit_for_tat --total-steps 200000
    python -m tom_baselines.mappo --game RockPaperScissors --recurrent --help
"""

from __future__ import annotations

import dataclasses
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
from tom_envs.agents import make_agent
from tom_envs.core.agents import Agent, BaseAgent, EpisodeInfo, Turn
from tom_envs.core.game import agent_index
from tom_envs.driver import (
    FailurePolicy,
    decide,
    draw_episode_seed,
    episode_info,
    fallback_rng,
    resolved_env_kwargs,
)
from tom_envs.registration import GameSpec, game_spec

CHECKPOINT_FORMAT = "tom_envs.mappo/1"


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
    "NAME"), given to every learning seat; training signal only: logged returns stay the game's"""
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
    progress: bool = True
    """show a progress bar"""


# ------------------------------------------------------------------------------ networks
def layer(n_in: int, n_out: int, std: float = float(np.sqrt(2))) -> nn.Linear:
    """Linear layer with orthogonal weights and zero bias (CleanRL's ``layer_init``)."""
    lin = nn.Linear(n_in, n_out)
    nn.init.orthogonal_(lin.weight, std)
    nn.init.zeros_(lin.bias)
    return lin


class Net(nn.Module):
    """Two tanh layers, an optional GRU cell, a linear head. ``forward`` is one time step."""

    def __init__(
        self, n_in: int, n_out: int, hidden: int, recurrent: bool, head_std: float
    ) -> None:
        super().__init__()
        self.body = nn.Sequential(layer(n_in, hidden), nn.Tanh(), layer(hidden, hidden), nn.Tanh())
        self.gru = nn.GRUCell(hidden, hidden) if recurrent else None
        self.head = layer(hidden, n_out, head_std)
        self.hidden_size = hidden if recurrent else 0

    def forward(
        self, x: torch.Tensor, h: torch.Tensor, start: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Output and next hidden state; ``start`` (1 at an episode's first decision) zeroes ``h``."""
        z = self.body(x)
        if self.gru is not None:
            h = self.gru(z, h * (1.0 - start).unsqueeze(-1))
            z = h
        return self.head(z), h


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Illegal actions get a logit of -1e9 (probability 0, finite entropy)."""
    return logits.masked_fill(~mask, -1e9)


class ValueNorm:
    """Running mean and variance of the value targets; the critic predicts normalised values."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled, self.mean, self.var, self.count = enabled, 0.0, 1.0, 1e-4

    def update(self, x: np.ndarray) -> None:
        """Merge a batch's statistics (parallel variance formula)."""
        if not self.enabled or x.size == 0:
            return
        m, v, n = float(x.mean()), float(x.var()), x.size
        delta, total = m - self.mean, self.count + n
        self.mean += delta * n / total
        self.var = (self.var * self.count + v * n + delta**2 * self.count * n / total) / total
        self.count = total

    def normalize(self, x: Any) -> Any:
        """Targets into the critic's scale."""
        return (x - self.mean) / np.sqrt(self.var + 1e-8) if self.enabled else x

    def denormalize(self, x: Any) -> Any:
        """Critic outputs back into returns."""
        return x * np.sqrt(self.var + 1e-8) + self.mean if self.enabled else x


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
            {p: make_agent(s, spec, env.bundle) for p, s in partners.items()} for env in self.envs
        ]
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
        self.messages: list[dict[int, str]] = [{} for _ in self.envs]
        self.event_rewards = {
            k: float(v) for k, v in parse_kv(args.event_rewards).items()
        }  # name -> shaping reward
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

    def partner_action(self, c: int, p: int) -> int:
        """A fixed agent's decision through the Turn API (as in ``tom-envs run``)."""
        env, agent = self.envs[c], f"player_{p}"
        turn = Turn(
            agent, p, env.view(agent), env.observe(agent)["observation"],
            self.game.legal_mask(env.game_state, p), float(self.partner_reward[c, p]),
            int(self.decisions[c, p]),
        )  # fmt: skip
        d = decide(self.partners[c][p], turn, self.fallback, self.policy)  # raises on failure
        if d.choice.message is not None and self.game.tags.communication:
            self.messages[c][p] = d.choice.message  # sent with its action (games with chat)
        self.partner_reward[c, p] = 0.0
        return d.action

    @torch.no_grad()
    def collect(
        self, actor: Net, critic: Net, value_norm: ValueNorm
    ) -> tuple[dict[str, np.ndarray], int]:
        """Run ``num_steps`` ticks in every copy; returns the closed transitions and env steps."""
        buf, args, game = self.buffer, self.args, self.game
        env_steps = 0
        for _ in range(args.num_steps):
            # 1. who acts now, in every copy; partners decide at once
            rows: list[tuple[int, int]] = []
            joint: list[dict[int, int]] = []
            for c, env in enumerate(self.envs):
                acts = {}
                for p in game.current_players(env.game_state):
                    if p in self.partners[c]:
                        acts[p] = self.partner_action(c, p)
                    else:
                        rows.append((c, p))
                joint.append(acts)
            # 2. one forward pass for the learning seats of all copies
            if rows:
                cs = np.array([c for c, _ in rows])
                ps = np.array([p for _, p in rows])
                seen = [self.envs[c].observe(f"player_{p}") for c, p in rows]
                obs = np.stack([o["observation"] for o in seen])
                mask = np.stack(  # the AEC mask is the selected seat's; others ask the rules
                    [
                        o["action_mask"]
                        if self.envs[c].agent_selection == f"player_{p}"
                        else game.legal_mask(self.envs[c].game_state, p)
                        for o, (c, p) in zip(seen, rows, strict=True)
                    ]
                )
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
                # 3. the seats' previous transitions close with this decision's value
                for k, (c, p) in enumerate(rows):
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
                for k, (c, p) in enumerate(rows):
                    joint[c][p] = int(action[k])
            # 4. step every copy seat by seat; rewards go to each seat's open transition
            for c, env in enumerate(self.envs):
                for _ in range(len(joint[c])):
                    p = agent_index(env.agent_selection)
                    if p in self.partners[c]:
                        self.decisions[c, p] += 1
                        if p in self.messages[c]:
                            env.send_message(f"player_{p}", self.messages[c].pop(p))
                    before = env.game_state
                    env.step(joint[c][p])
                    for agent, r in env.rewards.items():
                        if r:
                            self.add_reward(c, agent_index(agent), float(r))
                    if self.event_rewards and env.game_state is not before:
                        self.shape(c, env.last_events)
                env_steps += 1
                self.steps[c] += 1
                if any(env.terminations.values()) or any(env.truncations.values()):
                    self.end_episode(c, critic, value_norm)
        data, self.buffer, moved = buf.split()
        for (c, p), row in np.ndenumerate(self.open_row):
            if row >= 0:
                self.open_row[c, p] = moved[int(row)]
        return data, env_steps

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


# ---------------------------------------------------------------------------- checkpoints
def save_checkpoint(
    path: str | Path, actor: Net, critic: Net, value_norm: ValueNorm, meta: Mapping[str, Any]
) -> Path:
    """Write actor, critic, value statistics and everything needed to rebuild them."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    blob = {
        "format": CHECKPOINT_FORMAT,
        "meta": dict(meta),
        "actor": actor.state_dict(),
        "critic": critic.state_dict(),
        "value_norm": [value_norm.enabled, value_norm.mean, value_norm.var, value_norm.count],
    }
    tmp = path.with_suffix(".tmp")
    torch.save(blob, tmp)
    tmp.replace(path)
    return path


def load_checkpoint(path: str | Path) -> tuple[Net, Net, ValueNorm, dict[str, Any]]:
    """Rebuild actor, critic and value statistics from :func:`save_checkpoint`'s file."""
    blob = torch.load(path, map_location="cpu", weights_only=True)
    if blob.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{path} is not a MAPPO checkpoint ({blob.get('format')!r})")
    meta = blob["meta"]
    actor, critic = build_nets(meta)
    actor.load_state_dict(blob["actor"])
    critic.load_state_dict(blob["critic"])
    vn = ValueNorm(bool(blob["value_norm"][0]))
    vn.mean, vn.var, vn.count = (float(x) for x in blob["value_norm"][1:])
    return actor, critic, vn, meta


def _sha256(path: str | Path) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def build_nets(meta: Mapping[str, Any]) -> tuple[Net, Net]:
    """Actor and critic for the dimensions recorded in ``meta``."""
    n_players, hidden, rec = meta["num_players"], meta["hidden"], meta["recurrent"]
    actor_in = meta["obs_dim"] + (n_players if meta["actor_agent_id"] else 0)
    actor = Net(actor_in, meta["num_actions"], hidden, rec, head_std=0.01)
    critic = Net(meta["state_dim"] + n_players, 1, hidden, rec, head_std=1.0)
    return actor, critic


class CheckpointMismatchError(ValueError):
    """A checkpoint used in an environment other than the one it was trained on."""


def check_environment(meta: Mapping[str, Any], info: EpisodeInfo, name: str = "checkpoint") -> None:
    """Raise :class:`CheckpointMismatchError` naming both sides when ``info``'s environment is not
    the one ``meta`` was trained on (game, actions, observation shape, game arguments)."""
    game = str(meta.get("game", ""))
    env_game = info.env_id.split("/")[-1].rsplit("-v", 1)[0]
    if game and env_game and game != env_game:
        raise CheckpointMismatchError(f"{name} was trained on {game}, this episode is {env_game}")
    if info.num_actions != meta["num_actions"]:
        raise CheckpointMismatchError(
            f"{name} has {meta['num_actions']} actions, {env_game} has {info.num_actions}"
        )
    trained = meta.get("resolved_env_kwargs")
    if trained is None:  # an older checkpoint: the arguments it was given on top of the defaults
        trained = meta.get("env_kwargs") or {}
    diffs = []
    if info.env_kwargs is not None:
        for key, value in trained.items():
            if key not in info.env_kwargs:
                continue
            if info.env_kwargs[key] != value:
                diffs.append(
                    f"{key}={value!r} (checkpoint) vs {key}={info.env_kwargs[key]!r} (env)"
                )
    shape = meta.get("observation_shape")
    if info.observation_shape is not None:
        env_shape = tuple(info.observation_shape)
        if shape is not None and tuple(shape) != env_shape:
            diffs.append(f"observation shape {tuple(shape)} (checkpoint) vs {env_shape} (env)")
        elif shape is None and int(np.prod(env_shape)) != int(meta["obs_dim"]):
            diffs.append(f"observation size {meta['obs_dim']} (checkpoint) vs "
                         f"{int(np.prod(env_shape))} {env_shape} (env)")  # fmt: skip
    if diffs:
        raise CheckpointMismatchError(
            f"{name} was trained on another {game or 'game'} environment: " + "; ".join(diffs)
        )


class MappoAgent(BaseAgent):
    """A trained MAPPO actor as an agent: plays any seat through the Turn API.

    Args:
        actor: the actor network.
        meta: the checkpoint's ``meta`` (dimensions, game, settings).
        deterministic: play the most probable legal action instead of sampling.
        name: how trajectories name this agent.
    """

    def __init__(
        self, actor: Net, meta: Mapping[str, Any], deterministic: bool = False, name: str = "mappo"
    ) -> None:
        super().__init__()
        self.actor, self.meta, self.deterministic, self.name = actor, meta, deterministic, name
        self.h = torch.zeros(1, actor.hidden_size)
        self.start = torch.ones(1)

    @classmethod
    def load(cls, path: str | Path, deterministic: bool = False) -> MappoAgent:
        """The agent of a checkpoint file."""
        actor, _, _, meta = load_checkpoint(path)
        agent = cls(actor, meta, deterministic, name=f"checkpoint:path={path}")
        agent.file_sha256 = _sha256(path)
        return agent

    def config(self) -> dict[str, Any]:
        """Settings for result keys: the checkpoint's content hash, dimensions and sampling."""
        keys = ("game", "num_players", "num_actions", "obs_dim", "hidden", "recurrent",
                "actor_agent_id", "global_step")  # fmt: skip
        return {
            "kind": "mappo",
            "file_sha256": getattr(self, "file_sha256", None),
            "deterministic": self.deterministic,
            **{k: self.meta.get(k) for k in keys},
        }

    def reset(self, info: EpisodeInfo) -> None:
        """New episode: empty memory, generator seeded from the episode (same seed, same play).

        Raises :class:`CheckpointMismatchError` when the episode's game, action count,
        observation shape or game arguments differ from the training environment's.
        """
        super().reset(info)
        check_environment(self.meta, info, self.name)
        self.h = torch.zeros(1, self.actor.hidden_size)
        self.start = torch.ones(1)

    @torch.no_grad()
    def act(self, turn: Turn) -> int:
        """Sample (or take the argmax of) the masked policy on the turn's observation."""
        x = np.asarray(turn.observation, np.float32)
        if self.meta["actor_agent_id"]:
            x = np.concatenate([x, np.eye(self.meta["num_players"], dtype=np.float32)[turn.player]])
        logits, self.h = self.actor(torch.as_tensor(x[None]), self.h, self.start)
        self.start = torch.zeros(1)
        mask = torch.as_tensor(np.asarray(turn.action_mask, bool)[None])
        probs = torch.softmax(masked_logits(logits, mask), -1)[0].double().numpy()
        if self.deterministic:
            return int(np.argmax(probs))
        return int(self.rng.choice(len(probs), p=probs / probs.sum()))


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
    collector = Collector(args, spec, kwargs, partners)
    env, game = collector.envs[0], collector.game
    meta = {
        "game": spec.name, "env_id": spec.id, "env_kwargs": parse_kv(args.env_kwargs),
        "resolved_env_kwargs": collector.resolved, "observation_shape": list(collector.obs_shape),
        "num_players": game.num_players,
        "num_actions": game.num_actions, "obs_dim": int(np.prod(env.bundle.encoder.observation_shape)),
        "state_dim": int(np.prod(env.state_space.shape)), "hidden": args.hidden,
        "recurrent": args.recurrent, "actor_agent_id": args.actor_agent_id,
        "args": dataclasses.asdict(args),
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
    t0 = time.perf_counter()
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
            "rollout_s": t_gae - t_roll, "gae_s": t_upd - t_gae, "update_s": t_end - t_upd,
            "shaping_scale": collector.shaping_scale,
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
        "wall_s": wall, "sps": global_step / wall, "final": curve.rows[-1],
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
