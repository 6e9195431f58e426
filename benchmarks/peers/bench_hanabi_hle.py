"""DeepMind hanabi-learning-environment throughput, run in the peers' venv; prints one JSON line.

Case dict: {"mode": "rl_env" | "core", "players": 2, "label": "..."}.

* ``rl_env``: ``rl_env.make("Hanabi-Full", num_players=N)``; ``step(int)`` with a uniform pick from
  the acting player's ``legal_moves_as_int``. Every step builds the observation dicts and the
  canonical vector (658 floats for two players) of every player: what HLE's RL loop costs.
* ``core``: ``pyhanabi.HanabiState`` with ``apply_move`` and ``deal_random_card``; no observation
  (vs our bare rules engine).

Usage: venv/bin/python bench_hanabi_hle.py --seconds 3 --cases '[{"mode": "rl_env"}]'
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchlib import run_cases
from hanabi_learning_environment import pyhanabi, rl_env


def rl_env_episode_fn(players, sampler):
    env = rl_env.make("Hanabi-Full", num_players=players)
    index = sampler.index

    def episode(seed):
        obs = env.reset()
        moves = 0
        done = False
        while not done:
            cp = obs["current_player"]
            legal = obs["player_observations"][cp]["legal_moves_as_int"]
            obs, _reward, done, _info = env.step(int(legal[index(len(legal))]))
            moves += 1
        return moves, moves, 0

    return episode


def core_episode_fn(players, sampler):
    game = pyhanabi.HanabiGame({"players": players, "random_start_player": False, "seed": 0})
    index = sampler.index
    chance = pyhanabi.CHANCE_PLAYER_ID

    def episode(seed):
        st = game.new_initial_state()
        moves = 0
        while not st.is_terminal():
            if st.cur_player() == chance:
                st.deal_random_card()
                continue
            legal = st.legal_moves()
            st.apply_move(legal[index(len(legal))])
            moves += 1
        return moves, moves, 0

    return episode


def main():
    def build(case, sampler, _seed):
        players = int(case.get("players", 2))
        fn = rl_env_episode_fn if case["mode"] == "rl_env" else core_episode_fn
        return case.get("label", f"hle:{case['mode']}:{players}p"), fn(players, sampler)

    run_cases("hle", lambda: {"hanabi_learning_environment": _version()}, build)


def _version():
    from importlib.metadata import version

    try:
        return version("hanabi-learning-environment")
    except Exception:
        return "?"


if __name__ == "__main__":
    main()
