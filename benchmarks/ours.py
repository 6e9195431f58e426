"""Throughput of one tom_envs game (run in the tom_envs venv; prints one JSON line).

Modes (each plays uniformly random legal actions from a seeded numpy Generator, whole episodes,
made through the public ``pettingzoo.make`` ids of ``tom_envs.GAMES``). The ``aec`` and ``rules``
loops seed once, on their first episode (``reset(seed=...)``, ``default_rng(seed)``), and later
episodes continue that stream (``reset()``, the same Generator), as the peers' loops draw every
chance event from one running stream: a new Generator per episode costs about 70,000
instructions (a ``PCG64`` seeding), which no peer loop pays. The other modes reset with
``reset(seed=episode)``.

* ``aec``      AEC loop; ``env.last()`` every step, so the acting agent's observation (vector and
               action mask) is computed every step; the action is sampled from the mask.
* ``parallel`` Parallel loop (simultaneous games only): each ``step()`` returns every agent's
               observation; actions are sampled from each agent's mask.
* ``text``     AEC loop with ``env.last(observe=False)`` and ``env.text_observation(agent)`` every
               step; the action is sampled from the text observation's legal actions.
* ``llm``      what an LLM loop does, minus the LLM: ``text_observation(agent).prompt()``, the text
               of a random legal action, ``env.parse_action(agent, text)``, ``step(parsed)``.
* ``textenv``  the natural-language wrapper's loop (``tom_envs.wrappers.TextAECEnv``), what an LLM
               loop over it does, minus the LLM: ``obs, ... = env.last()`` (the seat's prompt), the
               text of a random legal action (``info["text_observation"].legal_actions``),
               ``env.step(text)``: the ``llm`` loop's work plus the wrapper's.
* ``rules``    the pure rules engine of the game's bundle (``make_bundle(**kwargs).game``):
               ``current_players``, ``legal_actions``, ``step``; no observation at all.

Legal actions are read from the mask with ``mask.nonzero()[0]`` (what ``np.flatnonzero`` does for
a 1-D mask, without its Python wrapper: the harness's own cost is kept small, as in the peers').

Usage:  python benchmarks/ours.py --game RockPaperScissors [--modes aec,parallel] [--seconds 3]
        python benchmarks/ours.py --game Hanabi --kwargs '{"players": 4}' --label Hanabi4p
        python benchmarks/ours.py --game RockPaperScissors --modes aec --profile   (cProfile top 25)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
warnings.filterwarnings("ignore")

import numpy as np  # noqa: E402
import pettingzoo  # noqa: E402
from benchlib import EpisodeStats, Sampler, emit, measure  # noqa: E402

import tom_envs  # noqa: E402  (registers every game with pettingzoo)
from tom_envs.core.game import SIMULTANEOUS  # noqa: E402
from tom_envs.registration import GameSpec, game_spec  # noqa: E402
from tom_envs.wrappers import TextAECEnv  # noqa: E402

ALL_MODES = ("aec", "parallel", "text", "llm", "textenv", "rules")


def _per_joint(env: Any) -> int:
    """AEC moves per joint step: every seat in a simultaneous game, one otherwise."""
    game = env.unwrapped.game
    return game.num_players if game.tags.dynamics == SIMULTANEOUS else 1


def aec_episode_fn(
    spec: GameSpec, sampler: Sampler, kwargs: dict[str, Any]
) -> Callable[[int], EpisodeStats]:
    env = pettingzoo.make("aec", spec.id, **kwargs)
    per_joint = _per_joint(env)
    index = sampler.index

    seeded = False

    def episode(seed: int) -> EpisodeStats:
        nonlocal seeded
        if seeded:
            env.reset()  # the stream of the first episode's seed continues (module docstring)
        else:
            env.reset(seed=seed)
            seeded = True
        moves = 0
        for _agent in env.agent_iter():
            obs, _rew, term, trunc, _info = env.last()
            if term or trunc:
                action = None
            else:
                legal = obs["action_mask"].nonzero()[0]
                action = int(legal[index(len(legal))])
                moves += 1
            env.step(action)
        return moves, moves / per_joint, 0

    return episode


def parallel_episode_fn(
    spec: GameSpec, sampler: Sampler, kwargs: dict[str, Any]
) -> Callable[[int], EpisodeStats]:
    env = pettingzoo.make("parallel", spec.id, **kwargs)
    index = sampler.index

    def episode(seed: int) -> EpisodeStats:
        obs, _infos = env.reset(seed=seed)
        moves = joint = 0
        while env.agents:
            actions = {}
            for a in env.agents:
                legal = obs[a]["action_mask"].nonzero()[0]
                actions[a] = int(legal[index(len(legal))])
            obs, _rew, _term, _trunc, _infos = env.step(actions)
            joint += 1
            moves += len(actions)
        return moves, joint, 0

    return episode


def _text_episodes(
    env: Any, observe: bool, pick: Callable[[str, Any, Any], tuple[Any, int]]
) -> Callable[[int], EpisodeStats]:
    """Episodes of the AEC loop of the text modes (``reset(seed=episode)``,
    ``env.last(observe=observe)``): each move is ``pick(agent, obs, info)``, the action and the
    characters of text it read."""
    per_joint = _per_joint(env)

    def episode(seed: int) -> EpisodeStats:
        env.reset(seed=seed)
        moves = chars = 0
        for agent in env.agent_iter():
            obs, _rew, term, trunc, info = env.last(observe=observe)
            if term or trunc:
                action = None
            else:
                action, read = pick(agent, obs, info)
                chars += read
                moves += 1
            env.step(action)
        return moves, moves / per_joint, chars

    return episode


def text_episode_fn(
    spec: GameSpec, sampler: Sampler, kwargs: dict[str, Any]
) -> Callable[[int], EpisodeStats]:
    env = pettingzoo.make("aec", spec.id, **kwargs)
    index = sampler.index

    def pick(agent: str, _obs: Any, _info: Any) -> tuple[Any, int]:
        tobs = env.text_observation(agent)
        legal = list(tobs.legal_actions)
        return legal[index(len(legal))], len(tobs.rules) + len(tobs.observation)

    return _text_episodes(env, False, pick)


def llm_episode_fn(
    spec: GameSpec, sampler: Sampler, kwargs: dict[str, Any]
) -> Callable[[int], EpisodeStats]:
    env = pettingzoo.make("aec", spec.id, **kwargs)
    index = sampler.index

    def pick(agent: str, _obs: Any, _info: Any) -> tuple[Any, int]:
        tobs = env.text_observation(agent)
        read = len(tobs.prompt())
        texts = list(tobs.legal_actions.values())
        return env.parse_action(agent, texts[index(len(texts))]).action, read

    return _text_episodes(env, False, pick)


def textenv_episode_fn(
    spec: GameSpec, sampler: Sampler, kwargs: dict[str, Any]
) -> Callable[[int], EpisodeStats]:
    env = TextAECEnv(pettingzoo.make("aec", spec.id, **kwargs))
    index = sampler.index

    def pick(_agent: str, obs: Any, info: Any) -> tuple[Any, int]:
        texts = list(info["text_observation"].legal_actions.values())
        return texts[index(len(texts))], len(obs)

    return _text_episodes(env, True, pick)


def rules_episode_fn(
    spec: GameSpec, sampler: Sampler, kwargs: dict[str, Any]
) -> Callable[[int], EpisodeStats]:
    game = spec.load().make_bundle(**{**spec.kwargs, **kwargs}).game
    index = sampler.index

    rngs: list[np.random.Generator] = []

    def episode(seed: int) -> EpisodeStats:
        if not rngs:  # one stream, seeded by the first episode (module docstring)
            rngs.append(np.random.default_rng(seed))
        rng = rngs[0]
        state = game.initial_state(rng)
        moves = joint = 0
        while not game.is_terminal(state):
            actions = {}
            for p in game.current_players(state):
                legal = game.legal_actions(state, p)
                actions[p] = legal[index(len(legal))]
            state = game.step(state, actions, rng).state
            joint += 1
            moves += len(actions)
        return moves, joint, 0

    return episode


MODE_FNS: dict[
    str, Callable[[GameSpec, Sampler, dict[str, Any]], Callable[[int], EpisodeStats]]
] = {
    "aec": aec_episode_fn,
    "parallel": parallel_episode_fn,
    "text": text_episode_fn,
    "llm": llm_episode_fn,
    "textenv": textenv_episode_fn,
    "rules": rules_episode_fn,
}


def modes_for(spec: GameSpec, wanted: list[str]) -> list[str]:
    """The wanted modes this game supports (``parallel`` needs a Parallel version)."""
    return [m for m in wanted if m != "parallel" or spec.parallel]


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--game", required=True, help="name or id of a game in tom_envs.GAMES")
    p.add_argument("--modes", default=",".join(ALL_MODES))
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--profile", action="store_true", help="cProfile the modes, print top 25")
    p.add_argument(
        "--kwargs", default="{}", help='JSON game arguments, e.g. \'{"players": 4}\' (default none)'
    )
    p.add_argument("--label", default=None, help="name in the results (default: the game's)")
    args = p.parse_args(argv)
    spec = game_spec(args.game)
    kwargs = json.loads(args.kwargs)
    if not isinstance(kwargs, dict):
        p.error("--kwargs must be a JSON object")
    label = args.label or spec.name
    wanted = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = set(wanted) - set(ALL_MODES)
    if unknown:
        p.error(f"unknown modes {sorted(unknown)}; choose from {ALL_MODES}")
    results = []
    for mode in modes_for(spec, wanted):
        sampler = Sampler(args.seed)
        fn = MODE_FNS[mode](spec, sampler, kwargs)
        params = {"game": spec.name, "id": spec.id, "mode": mode, "kwargs": {**spec.kwargs, **kwargs}}
        if args.profile:
            import cProfile
            import pstats

            prof = cProfile.Profile()
            prof.enable()
            res = measure(f"{label}:{mode}", fn, args.seconds, params=params)
            prof.disable()
            print(
                f"# {label} {mode}: {res['moves_per_s']:,.0f} moves/s under cProfile",
                file=sys.stderr,
            )
            pstats.Stats(prof, stream=sys.stderr).sort_stats("tottime").print_stats(25)
        else:
            res = measure(f"{label}:{mode}", fn, args.seconds, params=params)
        results.append(res)
    emit(
        "tom_envs",
        {"tom_envs": tom_envs.__version__, "pettingzoo": pettingzoo.__version__},
        results,
    )


if __name__ == "__main__":
    main()
