"""MAPPO's rollouts: ``num_envs`` copies of the AEC env stepped together, and GAE.

:class:`Collector` asks, tick by tick, every seat that must act now (fixed partners through the Turn
API, the learning seats of all copies in one forward pass) and keeps each seat's transition open
until its next decision (:class:`Rollout`; see "Rewards in turn-based games" in
:mod:`tom_baselines.mappo`). :func:`gae` computes advantages per seat stream and :func:`chunks`
cuts the streams into the recurrent training chunks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from tom_baselines.common import parse_kv
from tom_baselines.mappo_policy import Net, ValueNorm, masked_logits
from tom_envs.agents import make_agent
from tom_envs.core.agents import Turn
from tom_envs.core.game import agent_index
from tom_envs.driver import (
    FailurePolicy,
    decide,
    draw_episode_seed,
    episode_info,
    fallback_rng,
)
from tom_envs.identity import resolved_env_kwargs
from tom_envs.registration import GameSpec

if TYPE_CHECKING:
    from tom_baselines.mappo import Args


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
