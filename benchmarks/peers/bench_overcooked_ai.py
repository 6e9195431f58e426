"""overcooked-ai 1.1.0 throughput, run in its own venv (~/peers/venv-overcooked); one JSON line.

Case dict: {"layout": "<overcooked-ai layout>", "obs": false | true | "featurized", "horizon": 400}.
Each step applies a uniformly random joint action (benchlib Sampler) with ``OvercookedEnv.step``;
with obs=true it also computes ``env.lossless_state_encoding_mdp(state)``, the lossless encoding of
both players (the standard CNN observation); with obs="featurized" it computes
``env.featurize_state_mdp(state)``, both players' 96-feature vectors (the MLP observation of its
PPO agents). The motion planner and the medium-level action manager that overcooked-ai builds on
first use are computed in the untimed warm-up episode.
Usage: venv-overcooked/bin/python bench_overcooked_ai.py --seconds 3 --cases '[{"layout": "cramped_room", "obs": true}]'
"""

import os
import sys
import warnings

warnings.filterwarnings("ignore")
OUT = sys.stdout
sys.stdout = sys.stderr  # gym and overcooked-ai print banners on stdout
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchlib import run_cases  # noqa: E402
from overcooked_ai_py.mdp.actions import Action  # noqa: E402
from overcooked_ai_py.mdp.overcooked_env import OvercookedEnv  # noqa: E402
from overcooked_ai_py.mdp.overcooked_mdp import OvercookedGridworld  # noqa: E402


def episode_fn(layout, obs, horizon, sampler):
    mdp = OvercookedGridworld.from_layout_name(layout)
    env = OvercookedEnv.from_mdp(mdp, horizon=horizon, info_level=0)
    acts = Action.ALL_ACTIONS
    index = sampler.index

    def episode(seed):
        env.reset()
        steps = 0
        done = False
        while not done:
            state, _, done, _ = env.step((acts[index(6)], acts[index(6)]))
            if obs == "featurized":
                env.featurize_state_mdp(state)
            elif obs:
                env.lossless_state_encoding_mdp(state)
            steps += 1
        return 2 * steps, steps, 0

    return episode


def main():
    def build(case, sampler, _seed):
        layout, obs = case["layout"], case.get("obs", False)
        obs = obs if obs == "featurized" else bool(obs)
        fn = episode_fn(layout, obs, int(case.get("horizon", 400)), sampler)
        kind = "featurized" if obs == "featurized" else "obs" if obs else "raw"
        return case.get("label", f"overcooked_ai:{layout}:{kind}"), fn

    run_cases("overcooked_ai", lambda: {"overcooked_ai": "1.1.0"}, build, out=OUT)


if __name__ == "__main__":
    main()
