"""Hanabi games played by a reference engine, recorded for the parity check (run in the peers' venv).

    ~/peers/venv/bin/python benchmarks/peers/hanabi_peer.py --peer openspiel --games 1000
    ~/peers/venv/bin/python benchmarks/peers/hanabi_peer.py --peer hle --games 1000 --players 3

Peers: ``openspiel`` (``pyspiel.load_game("hanabi")``: HLE's C++ engine inside OpenSpiel; chance
nodes dealt from a deck shuffled here) and ``hle`` (DeepMind's ``hanabi_learning_environment``
``pyhanabi``; it deals from its own seeded generator and the dealt cards are read back).

Each game is one JSON line::

    {"peer", "players", "seed", "policy", "deck": [card ints, dealing order first],
     "steps": [{"player", "legal": [move ids], "obs": [hex of the canonical vector, per player],
                "action", "reward", "score"}, ...],
     "final": {"score", "terminal", "obs": [...]}}

A card int is ``color * 5 + rank``; ``obs[p]`` is ``hex(sum(bit_i << i))`` of player p's
``observation_tensor`` / canonical encoding (card knowledge of every hand included). The deck lists
the dealt cards in dealing order, then the undealt cards in a fixed order.

Policies (cycled over games, seeded): ``random`` (uniform legal moves: games end by bombing after
about 13 moves), ``careful`` (plays a card only if it really is playable, else a uniform reveal or
discard: long games that empty the deck, complete stacks and reach the final round) and ``mixed``
(careful, with a 5% chance of a blind play: lives lost late in long games).

This script imports only the peer: the comparison with tom_envs runs in the tom_envs venv
(``tests/games/hanabi/test_parity.py``, ``python benchmarks/hanabi.py parity``).
"""

from __future__ import annotations

import argparse
import json
import random
import sys

POLICIES = ("random", "careful", "mixed")
COLORS, RANKS = 5, 5


def counts(rank: int) -> int:
    return 3 if rank == 0 else (1 if rank == RANKS - 1 else 2)


def full_deck() -> list[int]:
    return [c * RANKS + r for c in range(COLORS) for r in range(RANKS) for _ in range(counts(r))]


def bits_hex(vector) -> str:
    v = 0
    for i, x in enumerate(vector):
        if x:
            v |= 1 << i
    return hex(v)


def choose(
    rng: random.Random,
    policy: str,
    legal: list[int],
    hand: list[int],
    fireworks: list[int],
    hand_size: int,
) -> int:
    """A move id by ``policy``; ``hand`` is the mover's true cards (the peer sees everything)."""
    if policy == "random":
        return rng.choice(legal)
    if policy == "mixed" and rng.random() < 0.05:
        return rng.choice(legal)
    playable = [
        hand_size + i
        for i, card in enumerate(hand)
        if fireworks[card // RANKS] == card % RANKS and hand_size + i in legal
    ]
    if playable and rng.random() < 0.8:
        return rng.choice(playable)
    others = [a for a in legal if not hand_size <= a < 2 * hand_size]
    return rng.choice(others or legal)


def play_openspiel(seed: int, players: int, policy: str) -> dict:
    import pyspiel

    game = pyspiel.load_game("hanabi", {"players": players})
    hand_size = 5 if players <= 3 else 4
    rng = random.Random(seed)
    deck = full_deck()
    rng.shuffle(deck)
    state = game.new_initial_state()
    hands: list[list[int]] = [[] for _ in range(players)]
    fireworks = [0] * COLORS
    drawn = 0
    steps = []
    last_player = -1
    while not state.is_terminal():
        if state.is_chance_node():
            card = deck[drawn]
            drawn += 1
            assert card in {a for a, _ in state.chance_outcomes()}
            state.apply_action(card)
            target = last_player if drawn > players * hand_size else (drawn - 1) // hand_size
            hands[target].append(card)
            continue
        p = state.current_player()
        legal = list(state.legal_actions())
        obs = [bits_hex(state.observation_tensor(q)) for q in range(players)]
        action = choose(rng, policy, legal, hands[p], fireworks, hand_size)
        if action < 2 * hand_size:
            card = hands[p].pop(action % hand_size)
            if action >= hand_size and fireworks[card // RANKS] == card % RANKS:
                fireworks[card // RANKS] += 1
        state.apply_action(action)
        last_player = p
        steps.append(
            {
                "player": p,
                "legal": legal,
                "obs": obs,
                "action": action,
                "reward": state.rewards()[0],
                "score": state.returns()[0],
            }
        )
    final = {
        "score": state.returns()[0],
        "terminal": True,
        "obs": [bits_hex(state.observation_tensor(q)) for q in range(players)],
    }
    dealt = deck[:drawn]
    rest = sorted(deck[drawn:])
    return {
        "peer": "openspiel",
        "players": players,
        "seed": seed,
        "policy": policy,
        "deck": dealt + rest,
        "steps": steps,
        "final": final,
    }


def play_hle(seed: int, players: int, policy: str) -> dict:
    from hanabi_learning_environment import pyhanabi

    game = pyhanabi.HanabiGame({"players": players, "random_start_player": False, "seed": seed})
    encoder = pyhanabi.ObservationEncoder(game)
    hand_size = game.hand_size()
    rng = random.Random(seed)
    state = game.new_initial_state()
    dealt: list[int] = []
    steps = []

    def deal() -> None:
        while state.cur_player() == pyhanabi.CHANCE_PLAYER_ID:
            state.deal_random_card()
            mv = state.move_history()[-1].move()
            dealt.append(mv.color() * RANKS + mv.rank())

    deal()
    while not state.is_terminal():
        p = state.cur_player()
        moves = state.legal_moves()
        legal = sorted(game.get_move_uid(m) for m in moves)
        obs = [bits_hex(encoder.encode(state.observation(q))) for q in range(players)]
        hand = [c.color() * RANKS + c.rank() for c in state.player_hands()[p]]
        fireworks = list(state.fireworks())
        action = choose(rng, policy, legal, hand, fireworks, hand_size)
        before = state.score()
        state.apply_move(game.get_move(action))
        deal()
        steps.append(
            {
                "player": p,
                "legal": legal,
                "obs": obs,
                "action": action,
                "reward": state.score() - before,
                "score": state.score(),
            }
        )
    final = {
        "score": state.score(),
        "terminal": True,
        "obs": [bits_hex(encoder.encode(state.observation(q))) for q in range(players)],
    }
    rest = full_deck()
    for card in dealt:
        rest.remove(card)
    return {
        "peer": "hle",
        "players": players,
        "seed": seed,
        "policy": policy,
        "deck": dealt + sorted(rest),
        "steps": steps,
        "final": final,
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--peer", choices=("openspiel", "hle"), default="openspiel")
    ap.add_argument("--games", type=int, default=1000)
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    play = play_openspiel if args.peer == "openspiel" else play_hle
    out = sys.stdout
    for i in range(args.games):
        rec = play(args.seed + i, args.players, POLICIES[i % len(POLICIES)])
        out.write(json.dumps(rec) + "\n")
    out.flush()


if __name__ == "__main__":
    main()
