"""Parity with the reference engines: replay games recorded in HLE or OpenSpiel on our rules.

A peer script (``benchmarks/peers/hanabi_peer.py``, run in the peers' venv: ``$PEERS_DIR`` or
``~/peers``, made by ``benchmarks/setup_peers.sh``) plays games in HLE or OpenSpiel and records, at
every step, the legal moves, every player's canonical observation vector (which holds every card's
knowledge), the reward and the score. :func:`compare_record` deals the same deck, replays the same
moves and compares all of them, step by step; :func:`parity` summarises many records.

Used by ``tests/games/hanabi/test_parity.py`` (live peers), ``test_encode.py`` (games recorded from
OpenSpiel, no peer needed) and ``benchmarks/hanabi.py parity`` (1,000 games per peer).
"""

from __future__ import annotations

import gzip
import json
import os
import statistics
import subprocess
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, cast

import numpy as np

from tom_envs.games.hanabi.encode import HanabiEncoder
from tom_envs.games.hanabi.env import make_bundle
from tom_envs.games.hanabi.rules import HanabiGame, HanabiState, make_state

PEER_SCRIPT = Path(__file__).resolve().parents[3] / "benchmarks" / "peers" / "hanabi_peer.py"


def peer_python(peers_dir: str | None = None) -> Path:
    """The peers' venv interpreter (``$PEERS_DIR`` or ``~/peers``)."""
    base = Path(peers_dir or os.environ.get("PEERS_DIR", Path.home() / "peers"))
    return base / "venv" / "bin" / "python"


def peer_available(peer: str, python: Path | None = None) -> str:
    """``""`` if the peer's package imports in the peers' venv, else why not."""
    py = python or peer_python()
    if not py.exists():
        return f"no peers' venv at {py} (bash benchmarks/setup_peers.sh)"
    module = "pyspiel" if peer == "openspiel" else "hanabi_learning_environment.pyhanabi"
    r = subprocess.run([str(py), "-c", f"import {module}"], capture_output=True, text=True)
    if r.returncode:
        return f"{module} does not import in {py}: {(r.stderr.strip().splitlines() or ['?'])[-1]}"
    return ""


def peer_records(
    peer: str, games: int, players: int = 2, seed: int = 0, python: Path | None = None
) -> Iterator[dict[str, Any]]:
    """Run the peer script and yield its game records."""
    py = python or peer_python()
    cmd = [
        str(py),
        str(PEER_SCRIPT),
        "--peer",
        peer,
        "--games",
        str(games),
        "--players",
        str(players),
        "--seed",
        str(seed),
    ]
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.strip():
            yield json.loads(line)
    if proc.wait():
        raise RuntimeError(f"{' '.join(cmd)} failed with exit code {proc.returncode}")


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """Records saved as JSON lines (gzip if the name ends in ``.gz``)."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as fh:  # type: ignore[operator]
        return [json.loads(line) for line in fh if line.strip()]


def without_last_draw(game: HanabiGame, state: HanabiState) -> HanabiState:
    """OpenSpiel stops at a terminal state before dealing the replacement card of the last move;
    HLE and we draw it as part of the move. This is the state OpenSpiel shows at the end."""
    last = state.history[-1]
    if not last.drew:
        return state
    p = last.player
    hands = list(state.hands)
    knowledge = list(state.knowledge)
    n_cards = len(hands[p])
    hands[p] = hands[p][:-1]
    knowledge[p] &= (1 << ((n_cards - 1) * game.layout.width)) - 1
    return make_state(
        state.deck,
        state.deck_pos - 1,
        tuple(hands),
        tuple(knowledge),
        state.fireworks,
        state.information_tokens,
        state.life_tokens,
        state.discards,
        state.discard_bits,
        state.current,
        state.turns_to_play,
        state.history,
        state.legal,
    )


def _engine(players: int) -> tuple[HanabiGame, HanabiEncoder]:
    """The registered game's engine and encoder for ``players`` seats."""
    bundle = make_bundle(players=players)
    return cast(HanabiGame, bundle.game), cast(HanabiEncoder, bundle.encoder)


def compare_record(record: dict[str, Any], game: HanabiGame | None = None) -> list[str]:
    """Replay a peer's game on our engine; return every difference (empty: identical).

    Compared at every step: the player to act, the legal move ids, every player's observation
    vector (hands, board, discards, last move and the card knowledge of every card in every hand),
    the reward and the score; at the end, that the game is over, the final score and vectors.
    """
    own, enc = _engine(record["players"])
    game = own if game is None else game
    state = game.state_from_deck(record["deck"])
    rng = np.random.default_rng(0)
    where = f"{record['peer']} seed {record['seed']} ({record['policy']})"
    for k, st in enumerate(record["steps"]):
        if game.is_terminal(state):
            return [f"{where}, step {k}: our game is over, the peer's is not"]
        errors = []
        if state.current != st["player"]:
            errors.append(f"player to act {state.current} != {st['player']}")
        legal = list(game.legal_actions(state, state.current))
        if legal != st["legal"]:
            errors.append(f"legal moves {legal} != {st['legal']}")
        for q in range(game.n):
            ours = enc.view_bits(game.observe(state, q))
            theirs = int(st["obs"][q], 16)
            if ours != theirs:
                diff = [i for i in range(enc.size) if (ours ^ theirs) >> i & 1]
                errors.append(f"observation of player {q} differs at entries {diff[:12]}")
        if errors:
            return [f"{where}, step {k}: {e}" for e in errors]
        result = game.step(state, {state.current: st["action"]}, rng)
        state = result.state
        if result.rewards[0] != st["reward"]:
            errors.append(f"reward {result.rewards[0]} != {st['reward']}")
        if game.score(state) != st["score"]:
            errors.append(f"score {game.score(state)} != {st['score']}")
        if errors:
            return [f"{where}, after step {k}: {e}" for e in errors]
    if not game.is_terminal(state):
        return [f"{where}: the peer's game is over, ours is not"]
    final = without_last_draw(game, state) if record["peer"] == "openspiel" else state
    errors = []
    if game.score(state) != record["final"]["score"]:
        errors.append(f"final score {game.score(state)} != {record['final']['score']}")
    for q in range(game.n):
        if enc.view_bits(game.observe(final, q)) != int(record["final"]["obs"][q], 16):
            errors.append(f"final observation of player {q} differs")
    return [f"{where}: {e}" for e in errors]


def parity(records: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Compare every record; a summary with the number of games, steps and differences."""
    games = steps = 0
    scores: list[float] = []
    lengths: list[int] = []
    policies: dict[str, int] = {}
    ends: dict[str, int] = {}
    failures: list[str] = []
    bad = 0
    game_cache: dict[int, HanabiGame] = {}
    for rec in records:
        n = rec["players"]
        game = game_cache.setdefault(n, _engine(n)[0])
        errs = compare_record(rec, game)
        games += 1
        steps += len(rec["steps"])
        lengths.append(len(rec["steps"]))
        scores.append(rec["final"]["score"])
        policies[rec["policy"]] = policies.get(rec["policy"], 0) + 1
        if errs:
            bad += 1
            failures.extend(errs[:3])
        else:
            end = end_kind(game, rec)
            ends[end] = ends.get(end, 0) + 1
    return {
        "games": games,
        "steps": steps,
        "games_with_differences": bad,
        "failures": failures[:20],
        "policies": policies,
        "endings": ends,
        "mean_length": statistics.fmean(lengths) if lengths else 0.0,
        "mean_score": statistics.fmean(scores) if scores else 0.0,
        "max_score": max(scores) if scores else 0.0,
    }


def end_kind(game: HanabiGame, rec: dict[str, Any]) -> str:
    state = game.state_from_deck(rec["deck"])
    rng = np.random.default_rng(0)
    for st in rec["steps"]:
        state = game.step(state, {state.current: st["action"]}, rng).state
    if state.life_tokens <= 0:
        return "lives lost"
    if state.stacks == game.max_score:
        return "all stacks complete"
    return "deck exhausted, final round played"
