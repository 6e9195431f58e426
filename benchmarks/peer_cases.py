"""The peer cases of ``benchmarks/run.py``: which peer library measures what, beside which of our
modes. A new peer comparison is one entry of :data:`PEERS`; another configuration of a game is one
entry of :data:`VARIANTS`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Suite:
    """A peer library: its bench script (relative to benchmarks/) and the module that proves it is
    installed in the peers' venv."""

    script: str
    module: str
    title: str


SUITES: dict[str, Suite] = {
    "pyspiel": Suite("peers/bench_pyspiel.py", "pyspiel", "OpenSpiel"),
    "pettingzoo": Suite("peers/bench_pettingzoo.py", "pettingzoo", "PettingZoo"),
    "textarena": Suite("peers/bench_textarena.py", "textarena", "TextArena"),
    "hle": Suite("peers/bench_hanabi_hle.py", "hanabi_learning_environment", "HLE"),
}


@dataclass(frozen=True)
class PeerCase:
    """One peer measurement and which of our modes it is compared with.

    Attributes:
        key: unique id (also the case label in the JSON).
        label: the table's text.
        suite: a key of :data:`SUITES`.
        case: the dict handed to the suite's script (see its docstring).
        ours: our modes (keys of ``ours.MODE_FNS``) to put beside it, one table row each.
    """

    key: str
    label: str
    suite: str
    case: dict[str, Any] = field(hash=False)
    ours: tuple[str, ...]


def openspiel_repeated(stage: str, reps: int = 100) -> tuple[PeerCase, ...]:
    """OpenSpiel ``repeated_game(stage_game=<stage>(), num_repetitions=reps)``, with
    ``observation_tensor`` for both players every step (vs our AEC and Parallel APIs) and without
    any observation (vs our bare rules engine)."""
    game = f"repeated_game(stage_game={stage}(),num_repetitions={reps})"
    return (
        PeerCase(
            f"pyspiel:{stage}x{reps}:obs",
            f"OpenSpiel repeated {stage} x{reps} + obs tensors",
            "pyspiel",
            {"game": game, "obs": True},
            ("aec", "parallel"),
        ),
        PeerCase(
            f"pyspiel:{stage}x{reps}:noobs",
            f"OpenSpiel repeated {stage} x{reps}, no obs",
            "pyspiel",
            {"game": game, "obs": False},
            ("rules",),
        ),
    )


def pettingzoo_env(env_id: str, simultaneous: bool, **kwargs: Any) -> tuple[PeerCase, ...]:
    """A PettingZoo env through ``pettingzoo.make``: AEC (vs our AEC), Parallel (vs our Parallel)."""
    kw = ", ".join(f"{k}={v}" for k, v in kwargs.items())
    tag = f"{env_id}({kw})" if kw else env_id
    base = {"id": env_id, "kwargs": kwargs, "simultaneous": simultaneous}
    return (
        PeerCase(
            f"pettingzoo:{tag}:aec",
            f"PettingZoo {tag} AEC",
            "pettingzoo",
            {**base, "api": "aec"},
            ("aec",),
        ),
        PeerCase(
            f"pettingzoo:{tag}:parallel",
            f"PettingZoo {tag} Parallel",
            "pettingzoo",
            {**base, "api": "parallel"},
            ("parallel",),
        ),
    )


def textarena_env(env_id: str, policy: str, **kwargs: Any) -> tuple[PeerCase, ...]:
    """A TextArena env (fresh ``ta.make`` per episode) vs our text observation and LLM loop.
    ``kwargs`` go to ``ta.make`` (e.g. ``num_rounds=100`` to match our horizon)."""
    kw = ", ".join(f"{k}={v}" for k, v in kwargs.items())
    tag = f"{env_id}({kw})" if kw else env_id
    return (
        PeerCase(
            f"textarena:{tag}",
            f"TextArena {tag}",
            "textarena",
            {"id": env_id, "policy": policy, "kwargs": kwargs},
            ("text", "llm"),
        ),
    )


#: tom_envs game name -> its closest peers. A game without an entry is measured alone.
PEERS: dict[str, tuple[PeerCase, ...]] = {
    "RockPaperScissors": (
        *pettingzoo_env("classic/rps-v2", simultaneous=True, max_cycles=100),
        *openspiel_repeated("matrix_rps"),
        *textarena_env("IteratedRockPaperScissors-v0", "rps"),  # its default: 9 rounds
        *textarena_env("IteratedRockPaperScissors-v0", "rps", num_rounds=100),  # our horizon
    ),
    "PrisonersDilemma": (
        *openspiel_repeated("matrix_pd"),
        *textarena_env("IteratedPrisonersDilemma-v0", "ipd"),  # its default: 10 rounds
        *textarena_env("IteratedPrisonersDilemma-v0", "ipd", num_rounds=100),  # our horizon
    ),
    "BattleOfSexes": (*openspiel_repeated("matrix_bos"),),
    "Hanabi": (
        PeerCase("hle:rl_env", "HLE rl_env Hanabi-Full (obs of every player)", "hle",
                 {"mode": "rl_env"}, ("aec",)),
        PeerCase("pyspiel:hanabi:obs", "OpenSpiel hanabi + obs tensors", "pyspiel",
                 {"game": "hanabi", "obs": True}, ("aec",)),
        PeerCase("pyspiel:hanabi:noobs", "OpenSpiel hanabi, no obs", "pyspiel",
                 {"game": "hanabi", "obs": False}, ("rules",)),
        PeerCase("hle:core", "HLE pyhanabi state, no obs", "hle", {"mode": "core"}, ("rules",)),
    ),
}



#: Configurations benchmarked beside the registered ones: name -> (game, game arguments).
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "Hanabi4p": ("Hanabi", {"players": 4}),
}
PEERS["Hanabi4p"] = (
    PeerCase("hle:rl_env:4p", "HLE rl_env Hanabi-Full, 4 players (obs of every player)", "hle",
             {"mode": "rl_env", "players": 4}, ("aec",)),
    PeerCase("pyspiel:hanabi4:obs", "OpenSpiel hanabi(players=4) + obs tensors", "pyspiel",
             {"game": "hanabi(players=4)", "obs": True}, ("aec",)),
    PeerCase("pyspiel:hanabi4:noobs", "OpenSpiel hanabi(players=4), no obs", "pyspiel",
             {"game": "hanabi(players=4)", "obs": False}, ("rules",)),
    PeerCase("hle:core:4p", "HLE pyhanabi state, 4 players, no obs", "hle",
             {"mode": "core", "players": 4}, ("rules",)),
)  # fmt: skip
