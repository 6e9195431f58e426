"""PettingZoo throughput (AEC or Parallel), run in the peers' venv; prints one JSON line.

Case dict: {"id": "classic/rps-v2", "api": "aec"|"parallel", "kwargs": {...}, "label": "..."}.
Envs come from pettingzoo.make(api, id, **kwargs) (default wrappers). Actions: uniform over
obs["action_mask"] (or info["action_mask"]) when there is one, else over the Discrete space.
AEC: the standard agent_iter loop with env.last() (observation every step); a move is a step()
with a real action; joint steps = moves / num_agents for simultaneous games (case key
"simultaneous": true, as rps-v2 is), = moves otherwise. Parallel: one step() = 1 joint step.
Usage: venv/bin/python bench_pettingzoo.py --cases '[{"id": "classic/rps-v2", "api": "aec"}]'
"""

import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
warnings.filterwarnings("ignore")
import numpy as np  # noqa: E402
import pettingzoo  # noqa: E402
from benchlib import run_cases  # noqa: E402


def _mask(obs, info):
    if isinstance(obs, dict) and "action_mask" in obs:
        return obs["action_mask"]
    if isinstance(info, dict) and "action_mask" in info:
        return info["action_mask"]
    return None


def aec_fn(case, sampler):
    env = pettingzoo.make("aec", case["id"], **case.get("kwargs", {}))
    index = sampler.index
    per_joint = len(env.possible_agents) if case.get("simultaneous") else 1

    def episode(seed):
        env.reset(seed=seed)
        moves = 0
        for agent in env.agent_iter():
            obs, _rew, term, trunc, info = env.last()
            if term or trunc:
                action = None
            else:
                mask = _mask(obs, info)
                if mask is not None:
                    legal = np.flatnonzero(mask)
                    action = int(legal[index(len(legal))])
                else:
                    action = index(env.action_space(agent).n)
                moves += 1
            env.step(action)
        return moves, moves / per_joint, 0

    return episode


def parallel_fn(case, sampler):
    env = pettingzoo.make("parallel", case["id"], **case.get("kwargs", {}))
    index = sampler.index

    def episode(seed):
        obs, infos = env.reset(seed=seed)
        moves = joint = 0
        while env.agents:
            actions = {}
            for a in env.agents:
                mask = _mask(obs.get(a), infos.get(a))
                if mask is not None:
                    legal = np.flatnonzero(mask)
                    actions[a] = int(legal[index(len(legal))])
                else:
                    actions[a] = index(env.action_space(a).n)
            obs, _rew, _term, _trunc, infos = env.step(actions)
            joint += 1
            moves += len(actions)
        return moves, joint, 0

    return episode


def main():
    def build(case, sampler, _seed):
        fn = (parallel_fn if case.get("api") == "parallel" else aec_fn)(case, sampler)
        return case.get("label", f"{case['id']}:{case.get('api', 'aec')}"), fn

    run_cases("pettingzoo", lambda: {"pettingzoo": pettingzoo.__version__}, build)


if __name__ == "__main__":
    main()
