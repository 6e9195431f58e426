"""The command line's game-argument parsing and its discovery commands (``list``, ``info``).

``--kw key=value ...`` is the one flag for game arguments on every command (``--env-kwargs`` is
the older spelling, still read); ``max_cycles`` is the env-level argument every game takes
besides its declared ``PARAMS``. Agent classes named on the command line (``mypkg.agents:Cls``,
``myagent:Cls``) are found from the current folder: only the command line names code
(:mod:`tom_envs.core.trust`).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from tom_envs.agents import agent_names, parse_spec
from tom_envs.registration import GAMES, game_spec, single_agent_specs


def parse_kw(items: Sequence[str]) -> dict[str, Any]:
    out = {}
    for item in items:
        if "=" not in item or item.startswith("="):
            raise ValueError(f"--kw: expected key=value, got {item!r}")
        _, kwargs = parse_spec(f"x:{item}")
        out.update(kwargs)
    return out


def check_agent_endpoints(specs: Sequence[str], trusted: bool = True) -> None:
    """Reach every LLM endpoint the agent specs name, before any call is spent (ValueError if not).

    ``trusted``: the specs come from the command line (they may name code; see
    :mod:`tom_envs.core.trust`)."""
    from tom_envs.evaluation.config import check_endpoint, endpoint_of

    seen: set[str | None] = set()
    for s in specs:
        ep = endpoint_of(s, trusted=trusted)
        if ep is not None and ep[1] not in seen:
            seen.add(ep[1])
            check_endpoint(ep[1])


def _whole(text: str, lo: int, hi: int) -> int:
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or not lo <= value <= hi:
        raise argparse.ArgumentTypeError(f"expected a whole number in [{lo:,}, {hi:,}], got {text!r}")
    return value


def positive_int(text: str) -> int:
    """A count of episodes (or items): a whole number in [1, EPISODES_MAX]."""
    from tom_envs.runner import EPISODES_MAX

    return _whole(text, 1, EPISODES_MAX)


def workers_int(text: str) -> int:
    """A number of parallel workers: a whole number in [1, 1024]."""
    return _whole(text, 1, 1024)


def port_int(text: str) -> int:
    """A TCP port: a whole number in [0, 65535] (0: any free port)."""
    return _whole(text, 0, 65535)


def skin_arg(text: str) -> str:
    """A skin: ``canonical`` or ``s<k>`` (:func:`tom_envs.core.skin.parse_skin`)."""
    import argparse

    from tom_envs.core.skin import parse_skin

    try:
        return parse_skin(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def seed_int(text: str) -> int:
    """A seed: a whole number in [0, SEED_MAX]."""
    from tom_envs.runner import SEED_MAX

    return _whole(text, 0, SEED_MAX)


def version_text() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"tom-envs {version('tom-envs')}"
    except PackageNotFoundError:  # a checkout that was not installed
        return "tom-envs (not installed)"


#: The game-level arguments every game takes besides its own (``tom-envs info`` lists them).
ENV_LEVEL = ("max_cycles",)


def split_env_level(kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(game arguments, env-level arguments)`` of ``--kw`` (``max_cycles`` goes to the env)."""
    game = {k: v for k, v in kwargs.items() if k not in ENV_LEVEL}
    return game, {k: v for k, v in kwargs.items() if k in ENV_LEVEL}


def names_code(specs: Sequence[str]) -> bool:
    """Whether a command-line agent spec names a class to import (``module:Class``)."""
    for s in specs:
        try:
            head = parse_spec(s, trusted=True)[0]
        except ValueError:  # a malformed spec: reported where it is built
            continue
        if head.count(":") == 1 and not s.startswith("population:"):
            return True
    return False


def find_local_modules(specs: Sequence[str]) -> None:
    """Agent classes named on the command line (``mypkg.agents:Cls``, ``myagent:Cls``) are found
    from the current folder, as ``python -m`` would find them. Only the command line does this:
    the browser server, study files and eval configs never import code a request or file names
    (:mod:`tom_envs.core.trust`)."""
    if names_code(specs) and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())


def cmd_list(args: argparse.Namespace) -> int:
    """Print every game (or those matching TEXT) with its ids, agents and single-agent views;
    ``--ids`` prints only ids, ``--bots`` only agents."""
    query = (args.query or "").lower()
    games = [s for s in GAMES if not query or query in f"{s.id} {s.summary}".lower()]
    if not games:
        print(f"error: no game matches {args.query!r}; games: {', '.join(s.name for s in GAMES)}",
              file=sys.stderr)  # fmt: skip
        return 2
    for spec in games:
        views = [i for sa in single_agent_specs() if sa.game is spec for i in (sa.id, sa.text_id)]
        if args.ids:
            print("\n".join([spec.id, *views]))
            continue
        if not args.bots:
            print(f"{spec.id}  ({'AEC + Parallel' if spec.parallel else 'AEC'})  {spec.summary}")
        for name, desc in agent_names(spec).items():
            print(
                f"    agent  {name:<28} {desc}"
                if not args.bots
                else f"{spec.name}  {name:<28} {desc}"
            )
        if not args.bots:
            for view in views:
                print(f"    gym    {view}")
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    """One game: its arguments (type, default, allowed values and bounds), seats, agents,
    populations and ids (OpenSpiel's game parameters, for this suite)."""
    from tom_envs.core.contract import MAX_CYCLES
    from tom_envs.core.params import params_table
    from tom_envs.core.skin import SKIN

    spec = game_spec(args.game)
    module = spec.load()
    bundle = module.make_bundle(**spec.kwargs)
    table = module.bot_table(**spec.kwargs)
    game = bundle.game
    print(f"{spec.id}  ({'AEC + Parallel' if spec.parallel else 'AEC'})  {spec.summary}")
    print(f"seats: {', '.join(bundle.agents)}; actions: {game.num_actions}; "
          f"dynamics: {game.tags.dynamics}")  # fmt: skip
    print("\narguments (--kw key=value; Python: keyword arguments)"
          + (f"; this id sets {spec.kwargs}" if spec.kwargs else "") + ":\n")  # fmt: skip
    print(params_table((*module.PARAMS, MAX_CYCLES, SKIN)))
    print("\nagents (--agents):")
    for name, desc in agent_names(spec).items():
        print(f"    {name:<28} {desc}")
    if table.populations:
        print("\npopulations:")
        for pop, members in table.populations.items():
            print(f"    population:{pop:<17} {', '.join(members)}")
    print("\nids:")
    print(f"    pettingzoo.make('aec', '{spec.id}')")
    if spec.parallel:
        print(f"    pettingzoo.make('parallel', '{spec.id}')")
    for sa in single_agent_specs():
        if sa.game is spec:
            print(f"    gymnasium.make('{sa.id}')")
            print(f"    gymnasium.make('{sa.text_id}')   # text in, text out")
    return 0


def kw_items(args: argparse.Namespace) -> list[str]:
    """``--kw`` items, and those of the deprecated spelling ``--env-kwargs``."""
    old = list(getattr(args, "env_kwargs", None) or [])
    if old:
        print("note: --env-kwargs is now --kw", file=sys.stderr)
    return [*args.kw, *old]


__all__ = [
    "ENV_LEVEL",
    "cmd_info",
    "cmd_list",
    "find_local_modules",
    "kw_items",
    "names_code",
    "parse_kw",
    "port_int",
    "positive_int",
    "seed_int",
    "split_env_level",
    "version_text",
    "workers_int",
]
