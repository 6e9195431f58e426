"""TextArena throughput with scripted random valid text actions (no LLM), peers' venv; one JSON line.

Case dict: {"id": "IteratedRockPaperScissors-v0", "policy": "rps"|"ipd", "kwargs": {...}}.
A FRESH ta.make() every episode, timed (reusing one env across reset() makes the observation
wrappers' history grow across episodes: shared/specs/peers.md caveat 2). Loop per episode:
env.reset(num_players=2, seed); until done: pid, obs = env.get_observation(); env.step(text).
A move is one env.step() (one player's text turn, IPD chat turns included); the observation is
the full prompt string, its length is reported as obs_chars_per_move. "joint" = moves / 2
(a pair of player turns), NOT game rounds: an IPD round is 4 turns (2 chat, 2 decisions).
Usage: venv/bin/python bench_textarena.py --cases '[{"id": "IteratedRockPaperScissors-v0", "policy": "rps"}]'
"""

import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
warnings.filterwarnings("ignore")
import textarena as ta  # noqa: E402
from benchlib import run_cases  # noqa: E402


def _base(env):
    while hasattr(env, "env"):
        env = env.env
    return env


def rps_policy(env, sampler):
    return sampler.choice(("[rock]", "[paper]", "[scissors]"))


def ipd_policy(env, sampler):
    if _base(env).state.game_state["phase"] == "conversation":
        return "hello"
    return sampler.choice(("[Cooperate]", "[Defect]"))


POLICIES = {"rps": rps_policy, "ipd": ipd_policy}


def episode_fn(case, sampler):
    env_id, kwargs, policy = case["id"], case.get("kwargs", {}), POLICIES[case["policy"]]

    def episode(seed):
        env = ta.make(env_id, **kwargs)
        env.reset(num_players=2, seed=seed)
        moves = chars = 0
        done = False
        while not done:
            _pid, obs = env.get_observation()
            chars += len(obs) if isinstance(obs, str) else 0
            done, _info = env.step(policy(env, sampler))
            moves += 1
        env.close()
        return moves, moves / 2, chars

    return episode


def main():
    def build(case, sampler, _seed):
        return case.get("label", case["id"]), episode_fn(case, sampler)

    run_cases("textarena", lambda: {"textarena": _version()}, build)


def _version():
    version = getattr(ta, "__version__", None)
    if version is None:
        from importlib.metadata import version as _v

        version = _v("textarena")
    return version


if __name__ == "__main__":
    main()
