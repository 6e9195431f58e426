"""A raw PettingZoo loop over a tom-envs game: AEC first, then the Parallel API.

python examples/pettingzoo_loop.py
"""

import numpy as np
import pettingzoo

import tom_envs  # noqa: F401  (registers the tom_envs/ ids)


def main() -> None:
    rng = np.random.default_rng(0)
    env = pettingzoo.make("aec", "tom_envs/PrisonersDilemma-v0", horizon=10)
    env.reset(seed=42)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        totals[agent] += reward
        if terminated or truncated:
            action = None
        else:
            action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        env.step(action)
    print("AEC returns:", totals)

    par = pettingzoo.make("parallel", "tom_envs/PrisonersDilemma-v0", horizon=10)
    observations, _ = par.reset(seed=42)
    totals = dict.fromkeys(par.possible_agents, 0.0)
    while par.agents:
        actions = {
            a: int(rng.choice(np.flatnonzero(observations[a]["action_mask"]))) for a in par.agents
        }
        observations, rewards, _, _, _ = par.step(actions)
        for a, r in rewards.items():
            totals[a] += r
    print("Parallel returns:", totals)
    print("state() shape:", par.state().shape)


if __name__ == "__main__":
    main()
