"""OpenSpiel (pyspiel) throughput, run in the peers' venv; prints one JSON line.

Case dict: {"game": "<pyspiel game string>", "obs": false | true | "all" | "buffer", "label": "..."};
e.g. {"game": "repeated_game(stage_game=matrix_pd(),num_repetitions=100)", "obs": true}.
Per decision node: legal_actions(p) for every acting player, one uniform pick each (benchlib
Sampler), apply_actions (simultaneous node: 1 joint step = n moves) or apply_action (sequential:
1 joint step = 1 move). Chance nodes are sampled (inverse CDF over ``chance_outcomes()`` with a
uniform from a pre-drawn block, as the Sampler draws the moves) and not counted.

Observations, like for like with our loops (``benchmarks/ours.py``):

* ``obs: true``: the observation tensors the players who act need, as our AEC ``last()`` gives
  them: at a sequential node the acting player's ``observation_tensor`` before the move, and every
  player's once at the end (our AEC loop's final ``last()`` of each agent); at a simultaneous node
  every player's after the joint step (every player acts at every node);
* ``obs: "all"``: every player's ``observation_tensor`` after every move (what OpenSpiel's
  ``rl_environment`` computes; N tensors a move in a sequential game, where our AEC computes one);
* ``obs: "buffer"``: as ``true`` through ``open_spiel.python.observation.make_observation`` and
  ``set_from`` (written in place into one numpy buffer, no Python list);
* ``obs: false``: no observation (vs our bare rules engine).

Usage: venv/bin/python bench_pyspiel.py --seconds 3 --cases '[{"game": "matrix_pd", "obs": false}]'
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import numpy as np
import pyspiel
from benchlib import run_cases

OBS_MODES = (False, True, "all", "buffer")


def episode_fn(game, obs, sampler, seed=0):
    if obs not in OBS_MODES:
        raise SystemExit(f"obs must be one of {OBS_MODES}, got {obs!r}")
    n = game.num_players()
    if not game.get_type().provides_observation_tensor:
        obs = False
    index, choice = sampler.index, sampler.choice
    players = list(range(n))
    # chance draws: pre-drawn uniforms (the Sampler's way), from their own stream
    uniforms = np.random.default_rng([seed, 1]).random(1 << 16).tolist()
    k = 0
    if obs == "buffer":
        from open_spiel.python.observation import make_observation

        observation = make_observation(game)
        tensor = observation.set_from
    elif obs:

        def tensor(state, player):
            state.observation_tensor(player)

    every_move = obs == "all"
    sequential = game.get_type().dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
    acting = obs is True or obs == "buffer"

    def episode(seed):
        nonlocal k
        s = game.new_initial_state()
        moves = joint = 0
        while not s.is_terminal():
            if s.is_chance_node():
                outcomes = s.chance_outcomes()
                r, acc, pick = uniforms[k & 0xFFFF], 0.0, outcomes[-1][0]
                k += 1
                for a, p in outcomes:
                    acc += p
                    if r < acc:
                        pick = a
                        break
                s.apply_action(pick)
                continue
            if s.is_simultaneous_node():
                s.apply_actions([choice(s.legal_actions(p)) for p in players])
                moves += n
                if obs:
                    for p in players:
                        tensor(s, p)
            else:
                if acting:
                    tensor(s, s.current_player())
                legal = s.legal_actions()
                s.apply_action(legal[index(len(legal))])
                moves += 1
                if every_move:
                    for p in players:
                        tensor(s, p)
            joint += 1
        if acting and sequential:  # a sequential game's end: every player's last observation
            for p in players:
                tensor(s, p)
        s.returns()
        return moves, joint, 0

    return episode


def main():
    def build(case, sampler, seed):
        fn = episode_fn(pyspiel.load_game(case["game"]), case.get("obs", False), sampler, seed)
        return case.get("label", case["game"]), fn

    run_cases("pyspiel", lambda: {"open_spiel": getattr(pyspiel, "__version__", "?")}, build)


if __name__ == "__main__":
    main()
