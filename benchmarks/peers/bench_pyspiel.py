"""OpenSpiel (pyspiel) throughput, run in the peers' venv; prints one JSON line.

Case dict: {"game": "<pyspiel game string>", "obs": bool, "label": "..."}; e.g.
  {"game": "repeated_game(stage_game=matrix_pd(),num_repetitions=100)", "obs": true}
Per decision node: legal_actions(p) for every acting player, one uniform pick each (benchlib
Sampler), apply_actions (simultaneous node: 1 joint step = n moves) or apply_action (sequential:
1 joint step = 1 move). Chance nodes are sampled and not counted. With obs=true,
observation_tensor(p) is computed for every player after every step (what an RL wrapper does).
Usage: venv/bin/python bench_pyspiel.py --seconds 3 --cases '[{"game": "matrix_pd", "obs": false}]'
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import pyspiel
from benchlib import Sampler, emit, measure, parse_common


def episode_fn(game, obs, sampler):
    n = game.num_players()
    want_obs = obs and game.get_type().provides_observation_tensor
    index, choice = sampler.index, sampler.choice
    players = list(range(n))

    def episode(seed):
        s = game.new_initial_state()
        moves = joint = 0
        while not s.is_terminal():
            if s.is_chance_node():
                outcomes = s.chance_outcomes()
                r, acc, pick = sampler.rng.random(), 0.0, outcomes[-1][0]
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
            else:
                legal = s.legal_actions()
                s.apply_action(legal[index(len(legal))])
                moves += 1
            joint += 1
            if want_obs:
                for p in players:
                    s.observation_tensor(p)
        s.returns()
        return moves, joint, 0

    return episode


def main():
    args = parse_common()
    results = []
    for case in args.cases:
        game = pyspiel.load_game(case["game"])
        fn = episode_fn(game, case.get("obs", False), Sampler(args.seed))
        results.append(measure(case.get("label", case["game"]), fn, args.seconds, params=case))
    emit("pyspiel", {"open_spiel": getattr(pyspiel, "__version__", "?")}, results)


if __name__ == "__main__":
    main()
