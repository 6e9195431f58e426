"""Hanabi joint-planning items of the shipped CoordinationQA suite: in every twin (the situation
with the knowledge change its variant names, rebuilt here), the key is the stated convention's
unique good move (a play of a card the asker knows to be playable, or, when it knows none, the
one reveal that lets the partner know a playable card), never a discard, and no other option is
a good move too."""

from __future__ import annotations

import numpy as np

from tom_envs.games.hanabi.probes import knows_playable
from tom_envs.games.hanabi.qa import _playable, variant_state
from tom_envs.games.hanabi.state import DISCARD, PLAY, REVEAL_COLOR, REVEAL_RANK
from tom_envs.qa import read_suite, replay
from tom_envs.qa.generate import default_suite_path


def _tells(game, state, player: int, action: int, partner: int) -> bool:
    """Giving ``action`` (the engine's own reveal) makes a partner card newly known-playable."""
    fw = state.fireworks
    before = game.card_knowledge(state, partner)
    after = game.card_knowledge(game.step(state, {player: action}, np.random.default_rng(0)).state,
                                partner)  # fmt: skip
    return any(knows_playable(a, fw) and not knows_playable(b, fw)
               for a, b in zip(after, before, strict=True))  # fmt: skip


def _good(game, moves, state, player: int, action: int) -> str | None:
    """Why ``action`` follows the convention's first applicable step, or ``None`` (a reveal
    counts only when the asker knows no playable card: playing comes first)."""
    m = moves[action]
    codes = game.card_knowledge(state, player)
    partner = (player + 1) % game.config.players
    if m.kind == PLAY and knows_playable(codes[m.card_index], state.fireworks):
        assert _playable(game.config, state.fireworks, state.hands[player][m.card_index])
        return "play known playable"
    knows_one = any(knows_playable(c, state.fireworks) for c in codes)
    if (
        m.kind in (REVEAL_COLOR, REVEAL_RANK)
        and not knows_one
        and _tells(game, state, player, action, partner)
    ):
        return "reveal makes playable"
    return None


def test_shipped_hanabi_jp_keys_are_unique_good_moves_never_a_fallback() -> None:
    _, items = read_suite(default_suite_path("Hanabi"))
    jp = [i for i in items if i.type == "JP"]
    assert len(jp) >= 50
    for item in jp[::3]:
        bundle, state = replay(item.scenario)
        game, text = bundle.game, bundle.text
        state = variant_state(game, state, item.scenario.variant)
        player = item.scenario.player
        view = game.observe(state, player)
        legal = game.legal_actions(state, player)
        by_text = {text.bare_action_text(view, a): a for a in legal}
        acts = [by_text[o] for o in item.options]  # every option is a legal move
        key = acts[item.answer]
        assert text.moves[key].kind != DISCARD, item.id
        why = _good(game, text.moves, state, player, key)
        assert why is not None, item.id
        codes = game.card_knowledge(state, player)
        known = [
            a for a in legal
            if text.moves[a].kind == PLAY
            and knows_playable(codes[text.moves[a].card_index], state.fireworks)
        ]  # fmt: skip
        if why == "reveal makes playable":  # only when the asker knows no playable card
            assert not known, item.id
        else:
            assert known == [key], item.id
        others = [a for i, a in enumerate(acts) if i != item.answer]
        assert all(_good(game, text.moves, state, player, a) is None for a in others), item.id
    assert all(i.source == "convention_bot" for i in jp)
