"""Parity with the reference engines, when they are installed in the peers' venv.

The peer script (``benchmarks/peers/hanabi_peer.py``) plays games in OpenSpiel's ``hanabi`` (HLE's
C++ engine) or in DeepMind's ``hanabi_learning_environment`` and records, at every step, the legal
moves, every player's canonical observation vector (hands, board, discards, last move and the card
knowledge of every card of every hand), the reward and the score. We deal the same deck, replay
the same moves and require every one of them to be identical (``compare_record``).

Skipped, with the reason, when the peers' venv (``$PEERS_DIR`` or ``~/peers``, made by
``benchmarks/setup_peers.sh``) lacks the peer. Offline, ``test_encode.py`` replays games recorded
from OpenSpiel. The full report (1,000 games per peer) is ``python benchmarks/hanabi.py
parity``.
"""

from __future__ import annotations

import pytest

from tom_envs.games.hanabi.parity import compare_record, peer_available, peer_records


def check(peer: str, games: int, players: int, seed: int) -> None:
    why = peer_available(peer)
    if why:
        pytest.skip(f"{peer} not installed: {why}")
    n = steps = 0
    policies = set()
    for rec in peer_records(peer, games, players, seed):
        errors = compare_record(rec)
        assert errors == [], errors[:5]
        n += 1
        steps += len(rec["steps"])
        policies.add(rec["policy"])
    assert n == games and policies == {"random", "careful", "mixed"}
    assert steps > 20 * games  # long games too, not only random bomb-outs


def test_openspiel_1000_games_two_players() -> None:
    check("openspiel", 1000, 2, seed=0)


@pytest.mark.parametrize("players", [3, 4, 5])
def test_openspiel_more_players(players: int) -> None:
    check("openspiel", 30, players, seed=5000)


def test_hle_games() -> None:
    check("hle", 60, 2, seed=9000)
