"""Machine instructions per move of one game loop, counted by valgrind (independent of the load).

On a shared machine the wall clock and even the CPU clock of a benchmark move with the other
processes; the number of instructions a loop executes does not. This runs the loop under
``valgrind --tool=cachegrind --cache-sim=no`` twice, with 0 and with N episodes, and prints
``(instructions(N) - instructions(0)) / moves``: imports and setup cancel out. It compares two
versions of the same code (``PYTHONPATH=<other checkout>``); it is not a speed across
implementations (a C++ peer and the Python interpreter retire very different instructions per
nanosecond), and it ignores cache misses.

Loops (random legal actions from a fixed list of uniforms; ``reset(seed=episode)``):

* ``aec``: ``env.last()`` then ``env.step(a)`` (the loop of ``ours.py --modes aec``);
* ``rules``: ``initial_state(default_rng(episode))``, then ``current_players``, ``legal_actions``,
  ``step`` (the loop of ``ours.py --modes rules``).

Usage:  python benchmarks/instructions.py --game Hanabi --mode aec --episodes 200
        python benchmarks/instructions.py --game Hanabi --kwargs '{"players": 4}' --mode rules
Needs ``valgrind`` on the PATH. A count takes about a minute (valgrind runs ~50x slower).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import warnings
from typing import Any


def run_loop(game: str, mode: str, episodes: int, kwargs: dict[str, Any]) -> int:
    """Play ``episodes`` episodes of ``mode``; the number of moves."""
    warnings.filterwarnings("ignore")
    import numpy as np
    import pettingzoo

    import tom_envs  # noqa: F401  (registers every game with pettingzoo)
    from tom_envs.registration import game_spec

    spec = game_spec(game)
    buf = np.random.default_rng(0).random(1 << 16).tolist()
    k = 0
    if mode == "aec":
        env = pettingzoo.make("aec", spec.id, **kwargs)
        env.reset(seed=10**6)
        for ep in range(episodes):
            env.reset(seed=ep)
            for _agent in env.agent_iter():
                obs, _rew, term, trunc, _info = env.last()
                if term or trunc:
                    action = None
                else:
                    legal = obs["action_mask"].nonzero()[0]
                    action = int(legal[int(buf[k & 0xFFFF] * len(legal))])
                    k += 1
                env.step(action)
        return k
    g = spec.load().make_bundle(**{**spec.kwargs, **kwargs}).game
    for ep in range(episodes):
        rng = np.random.default_rng(ep)
        state = g.initial_state(rng)
        while not g.is_terminal(state):
            actions = {}
            for p in g.current_players(state):
                legal = g.legal_actions(state, p)
                actions[p] = legal[int(buf[k & 0xFFFF] * len(legal))]
                k += 1
            state = g.step(state, actions, rng).state
    return k


def count(args: argparse.Namespace, episodes: int) -> tuple[int, int]:
    """(instructions, moves) of one valgrind run of the loop."""
    cmd = [
        "valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
        sys.executable, os.path.abspath(__file__), "--child", "--game", args.game, "--mode",
        args.mode, "--episodes", str(episodes), "--kwargs", args.kwargs,
    ]  # fmt: skip
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    refs = re.search(r"I\s+refs:\s+([\d,]+)", r.stderr)
    moves = re.search(r"^moves (\d+)$", r.stdout, re.M)
    if r.returncode or not refs or not moves:
        raise SystemExit(f"valgrind run failed (exit {r.returncode}): {r.stderr[-500:]}")
    return int(refs.group(1).replace(",", "")), int(moves.group(1))


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--game", required=True, help="name or id of a game in tom_envs.GAMES")
    p.add_argument("--mode", choices=("aec", "rules"), default="aec")
    p.add_argument("--episodes", type=int, default=100)
    p.add_argument("--kwargs", default="{}", help="JSON game arguments")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    kwargs = json.loads(args.kwargs)
    if not isinstance(kwargs, dict):
        p.error("--kwargs must be a JSON object")
    if args.child:  # one counted run (0 episodes: the imports and setup only)
        print(f"moves {run_loop(args.game, args.mode, args.episodes, kwargs)}")
        return
    if args.episodes < 1:
        p.error("--episodes must be >= 1")
    if shutil.which("valgrind") is None:
        p.error("valgrind is not installed")
    base, _ = count(args, 0)
    total, moves = count(args, args.episodes)
    print(
        json.dumps(
            {
                "game": args.game,
                "kwargs": kwargs,
                "mode": args.mode,
                "episodes": args.episodes,
                "moves": moves,
                "instructions_per_move": round((total - base) / max(moves, 1)),
            }
        )
    )


if __name__ == "__main__":
    main()
