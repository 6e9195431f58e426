"""RLlib adapter: every game as an RLlib ``MultiAgentEnv``, and a PPO config that trains on it.

Install the extra from the checkout (``pip install -e ".[rllib]"``, torch 2.13.0 first), then::

    from tom_envs.integrations.rllib import ppo_config

    algo = ppo_config("Hanabi", num_env_runners=2).build_algo()
    for _ in range(5):
        print(algo.train()["env_runners"]["episode_return_mean"])

No user code is needed:

* **Observations**: each seat sees ``{"observations": <its vector>, "action_mask": <legal
  actions>}`` (both ``float32`` boxes), the layout RLlib's action-masking PPO module reads; the
  game's own ``{"observation", "action_mask"}`` dict is renamed, nothing is flattened by hand.
* **Masking**: :func:`ppo_config` sets that module (RLlib's ``ActionMaskingTorchRLModule``), so
  PPO samples only legal actions in every game.
* **Remote env runners**: :func:`register` registers the creator :func:`env_creator` under the
  name ``"tom_envs"``; it lives in this module, so a runner process imports ``tom_envs`` itself
  (the game ids register on that import).
* **Illegal actions**: the masking module never samples one, but RLlib's env checker steps an
  unmasked sample when a runner starts. An illegal action ends the episode with
  ``illegal_reward`` (default ``-1``) for the seat that chose it and ``info["illegal_action"]``,
  as PettingZoo's ``TerminateIllegalWrapper`` does (``env_config["illegal_action"] = "raise"``
  raises instead); nothing is substituted for it.
* **Turns**: simultaneous games (Overcooked, CoBlock, Capture/Escape, the matrix games, Example)
  run as their Parallel env (every seat observes and acts each step); turn-based games (Hanabi,
  Guandan, bomb defusal) as their AEC env: only the seat to act observes.

**Rewards in turn-based games.** RLlib files a reward that reaches a seat before or together
with its first observation outside that seat's return (``MultiAgentEpisode``'s
``_hanging_rewards_begin``). In Hanabi, player_0's first card lands on the team score at the
moment player_1 first observes, so player_1's returns would come out short of player_0's by that
amount. The adapter pays each seat its reward only with an observation of that seat, and holds
whatever arrives up to and with its first observation until its next one (after its first
action): every seat's RLlib return equals its return in the AEC game (PettingZoo's own
accounting: a seat's reward accumulates until it acts). A seat that never observes (an episode
cut short before its first turn) has no RLlib episode at all, as RLlib treats it.

``ray`` is imported only when a function here is called: importing this module needs no ray.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

import gymnasium
import numpy as np

#: The name :func:`register` gives the env creator in RLlib's registry.
ENV_NAME = "tom_envs"
#: The keys of the env's ``env_config``.
CONFIG_KEYS = ("game", "env_kwargs", "parallel", "max_cycles", "illegal_action", "illegal_reward")


def _ray_missing(exc: ImportError) -> ImportError:
    return ImportError(
        f"the RLlib adapter needs ray[rllib] ({exc}); install the extra from the checkout: "
        '`pip install torch==2.13.0 && pip install -e ".[rllib]"`'
    )


class _MultiAgentEnvBody:
    """What :func:`env_class`'s ``TomMultiAgentEnv`` does (its base, RLlib's ``MultiAgentEnv``, is
    imported only when the class is built)."""

    if TYPE_CHECKING:
        env: Any
        agents: list[str]
        possible_agents: list[str]
        observation_spaces: dict[str, Any]
        action_spaces: dict[str, Any]

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        config = dict(config or {})
        unknown = set(config) - set(CONFIG_KEYS)
        if unknown or "game" not in config:
            raise ValueError(
                f"env_config: needs 'game'; allowed keys: {', '.join(CONFIG_KEYS)}; got "
                f"{sorted(config)}"
            )
        self.illegal_action = config.get("illegal_action", "terminate")
        if self.illegal_action not in ("terminate", "raise"):
            raise ValueError(
                f"env_config: argument 'illegal_action': got {self.illegal_action!r}; "
                "allowed: 'terminate', 'raise'"
            )
        reward = config.get("illegal_reward", -1.0)
        if (
            isinstance(reward, bool)
            or not isinstance(reward, (int, float))
            or not (np.isfinite(reward))
        ):
            raise ValueError(
                f"env_config: argument 'illegal_reward': got {reward!r}; allowed: a finite "
                "number"
            )
        self.illegal_reward = float(reward)
        import tom_envs  # noqa: F401  (a remote runner registers the ids here)
        from tom_envs.core.game import SIMULTANEOUS
        from tom_envs.registration import game_spec

        spec = game_spec(str(config["game"]))
        module = spec.load()
        kwargs = {**spec.kwargs, **dict(config.get("env_kwargs") or {})}
        max_cycles = config.get("max_cycles")
        aec = module.raw_env(max_cycles=max_cycles, **kwargs)
        parallel = config.get("parallel")
        if parallel is None:
            parallel = aec.game.tags.dynamics == SIMULTANEOUS
        if parallel and not spec.parallel:
            raise ValueError(f"{spec.name} is turn-based: it has no Parallel env")
        self.spec_name = spec.name
        self.parallel = bool(parallel)
        self.env = module.parallel_env(max_cycles=max_cycles, **kwargs) if parallel else aec
        self.possible_agents = list(aec.possible_agents)
        self.agents = list(self.possible_agents)
        self.observation_spaces = {}
        self.action_spaces = {}
        for a in self.possible_agents:
            inner = aec.observation_space(a)
            n = inner["action_mask"].shape[0]
            self.observation_spaces[a] = gymnasium.spaces.Dict(
                {
                    "observations": inner["observation"],
                    "action_mask": gymnasium.spaces.Box(0.0, 1.0, (n,), np.float32),
                }
            )
            self.action_spaces[a] = aec.action_space(a)
        self._pending: dict[str, float] = {}
        self._acted: set[str] = set()
        self._seen: set[str] = set()
        self._masks: dict[str, np.ndarray] = {}

    def _obs(self, agent: str, raw: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        self._masks[agent] = np.asarray(raw["action_mask"]).astype(bool)
        return {
            "observations": np.asarray(raw["observation"], dtype=np.float32),
            "action_mask": np.asarray(raw["action_mask"], dtype=np.float32),
        }

    def _illegal(self, actions: dict[str, Any]) -> list[str]:
        """The seats whose action (an int of the action space) is not legal now."""
        out = []
        for a, act in actions.items():
            mask = self._masks.get(a)
            if mask is not None and 0 <= int(act) < mask.shape[0] and not mask[int(act)]:
                out.append(a)
        return out if self.illegal_action == "terminate" else []

    def _end_illegal(self, seats: list[str], offenders: list[str]) -> tuple:
        """The episode ends: every observed seat gets what it was owed, an offender
        ``illegal_reward`` on top; nothing is played."""
        obs = {}
        for a in seats:
            mask = np.zeros_like(self._masks[a], dtype=np.float32)
            obs[a] = {"observations": self._last[a], "action_mask": mask}
        rewards = {
            a: self._pending.get(a, 0.0) + (self.illegal_reward if a in offenders else 0.0)
            for a in seats
        }
        flags = {**dict.fromkeys(seats, True), "__all__": True}
        infos = {a: {"illegal_action": True} for a in offenders}
        return obs, rewards, flags, {**dict.fromkeys(seats, False), "__all__": False}, infos

    def reset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """A new episode; the same seed gives the same episode as the game's own env."""
        self.agents = list(self.possible_agents)
        self._masks, self._last = {}, {}
        self._pending = dict.fromkeys(self.possible_agents, 0.0)
        self._acted, self._seen = set(), set()
        if self.parallel:
            obs, _ = self.env.reset(seed=seed, options=options)
            self._seen = set(obs)
            return self._out(obs), {a: {} for a in obs}
        self.env.reset(seed=seed, options=options)
        first = self.env.agent_selection
        self._seen.add(first)
        return self._out({first: self.env.observe(first)}), {first: {}}

    def _out(self, raw: dict[str, Any]) -> dict[str, Any]:
        out = {a: self._obs(a, o) for a, o in raw.items()}
        self._last.update({a: o["observations"] for a, o in out.items()})
        return out

    def step(self, action_dict: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        """The acting seats' actions in; observations, rewards and flags out."""
        if self.parallel:
            actions = {a: int(action_dict[a]) for a in self.env.agents}
            offenders = self._illegal(actions)
            if offenders:
                return self._end_illegal(sorted(self._seen), offenders)
            obs, rew, term, trunc, _ = self.env.step(actions)
            out = self._out(obs)
            terms = {a: bool(term.get(a, False)) for a in out}
            truncs = {a: bool(trunc.get(a, False)) for a in out}
            done = not self.env.agents
            terms["__all__"] = done and any(term.values())
            truncs["__all__"] = done and not terms["__all__"]
            return out, {a: float(rew.get(a, 0.0)) for a in out}, terms, truncs, {}
        agent = self.env.agent_selection
        if self._illegal({agent: action_dict[agent]}):
            return self._end_illegal(sorted(self._seen), [agent])
        self.env.step(int(action_dict[agent]))
        self._acted.add(agent)
        for a, r in self.env.rewards.items():
            self._pending[a] += float(r)
        term_any = any(self.env.terminations.values())
        if term_any or any(self.env.truncations.values()):
            seen = sorted(self._seen)
            obs = self._out({a: self.env.observe(a) for a in seen})
            rewards = {a: self._pending[a] for a in seen}
            terms = {**dict.fromkeys(seen, term_any), "__all__": term_any}
            truncs = {**dict.fromkeys(seen, not term_any), "__all__": not term_any}
            return obs, rewards, terms, truncs, {}
        nxt = self.env.agent_selection
        self._seen.add(nxt)
        reward = 0.0
        if nxt in self._acted:  # before its first action a seat's reward is held
            reward, self._pending[nxt] = self._pending[nxt], 0.0
        flags = {nxt: False, "__all__": False}
        return self._out({nxt: self.env.observe(nxt)}), {nxt: reward}, flags, dict(flags), {}

    def render(self) -> Any:
        """The game's ``ansi`` text of the whole state."""
        from tom_envs.core.render import render

        inner = self.env.unwrapped if hasattr(self.env, "unwrapped") else self.env
        return render(inner.bundle, inner.game_state, "ansi")


@cache
def env_class() -> type:
    """The ``MultiAgentEnv`` class (built on first use, so that ray is imported only then)."""
    try:
        from ray.rllib.env.multi_agent_env import MultiAgentEnv
    except ImportError as exc:
        raise _ray_missing(exc) from exc

    class TomMultiAgentEnv(_MultiAgentEnvBody, MultiAgentEnv):
        """A registered game as an RLlib multi-agent env (see the module docstring).

        ``config`` (RLlib's ``env_config``): ``game`` (a registered name or id), ``env_kwargs``
        (game arguments, checked by the game), ``parallel`` (``None``: the Parallel env for
        simultaneous games, the AEC env otherwise), ``max_cycles``, ``illegal_action``
        (``"terminate"`` or ``"raise"``) and ``illegal_reward`` (see the module docstring).
        """

    return TomMultiAgentEnv


def env_creator(config: dict[str, Any] | None = None) -> Any:
    """RLlib's env creator: ``config`` is the ``env_config`` (``game``, ``env_kwargs``, ...)."""
    return env_class()(dict(config or {}))


def register(name: str = ENV_NAME) -> str:
    """Register :func:`env_creator` with RLlib (``tune.register_env``); returns the name."""
    try:
        from ray.tune.registry import register_env
    except ImportError as exc:
        raise _ray_missing(exc) from exc
    register_env(name, env_creator)
    return name


def shared_policy(agent_id: Any, episode: Any = None, **kwargs: Any) -> str:
    """Policy mapping: every seat plays the one shared module ``"shared"`` (self-play)."""
    return "shared"


def per_seat_policy(agent_id: Any, episode: Any = None, **kwargs: Any) -> str:
    """Policy mapping: each seat learns its own module, named after the seat."""
    return str(agent_id)


def ppo_config(
    game: str,
    *,
    env_kwargs: dict[str, Any] | None = None,
    max_cycles: int | None = None,
    shared: bool = True,
    num_env_runners: int = 1,
    hidden: tuple[int, ...] = (128, 128),
    seed: int = 0,
) -> Any:
    """A ``PPOConfig`` that trains PPO with action masking on ``game`` (no further setup).

    Args:
        game: a registered game name or id (``"Hanabi"``, ``"tom_envs/Overcooked-v0"``).
        env_kwargs: game arguments (checked by the game's declared parameters).
        max_cycles: truncate episodes after this many cycles (``None``: the rules' limit).
        shared: one module for every seat (self-play); ``False``: one module per seat.
        num_env_runners: remote env-runner processes (``0``: sample in the driver).
        hidden: the MLP's hidden layer sizes.
        seed: RLlib's seed (env runners, modules).

    Returns:
        A ``ray.rllib.algorithms.ppo.PPOConfig``; adjust it with its usual methods
        (``.training(lr=...)``) and call ``.build_algo()``.
    """
    try:
        from ray.rllib.algorithms.ppo import PPOConfig
        from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
        from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
        from ray.rllib.core.rl_module.rl_module import RLModuleSpec
        from ray.rllib.examples.rl_modules.classes.action_masking_rlm import (
            ActionMaskingTorchRLModule,
        )
    except ImportError as exc:
        raise _ray_missing(exc) from exc
    env_config = {"game": game, "env_kwargs": dict(env_kwargs or {}), "max_cycles": max_cycles}
    probe = env_creator(env_config)  # checks the game and its arguments here, not in a runner
    ids = ["shared"] if shared else [str(a) for a in probe.possible_agents]
    model = DefaultModelConfig(fcnet_hiddens=list(hidden), head_fcnet_hiddens=[])
    modules = {
        pid: RLModuleSpec(module_class=ActionMaskingTorchRLModule, model_config=model)
        for pid in ids
    }
    return (
        PPOConfig()
        .environment(register(), env_config=env_config)
        .multi_agent(
            policies=set(ids), policy_mapping_fn=shared_policy if shared else per_seat_policy
        )
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=modules))
        .env_runners(num_env_runners=num_env_runners)
        .debugging(seed=seed)
    )


__all__ = [
    "ENV_NAME",
    "env_class",
    "env_creator",
    "per_seat_policy",
    "ppo_config",
    "register",
    "shared_policy",
]
