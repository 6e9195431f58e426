"""CoordinationQA is valid by construction (issue #32): every item has one key and is shown in
its own seeded order, contrast sets are complete, the known-groups answerers come out where
they must, and the keys of the contrast items mean what they say (checked per game against the
engine, independently of the generator's code path where possible).

The learned adversary's gate runs in ``tom-envs qa verify`` (minutes); its module is tested in
``tests/test_validity.py``.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict

import numpy as np
import pytest

from tom_envs.qa import generate as qg
from tom_envs.qa.items import QAItem, canonical, item_order, read_suite, replay

QA_GAMES = qg.qa_games()
SUITES = {g: read_suite(qg.default_suite_path(g))[1] for g in QA_GAMES}
ALL = [i for g in QA_GAMES for i in SUITES[g]]


def _sets(items: list[QAItem]) -> dict[str, list[QAItem]]:
    out: dict[str, list[QAItem]] = defaultdict(list)
    for it in items:
        if it.contrast:
            out[it.contrast].append(it)
    return out


def _sample_sets(game: str, kind: str | None = None, n: int = 4) -> list[list[QAItem]]:
    sets = [s for s in _sets(SUITES[game]).values() if kind is None or s[0].kind == kind]
    return sets[:: max(1, len(sets) // n)][:n]


def test_every_item_has_one_key_and_its_own_seeded_order() -> None:
    for it in ALL:
        assert len(it.answers) == 1, it.id
        assert it.details["order"] == item_order(it), it.id


def test_cells_have_at_least_50_items() -> None:
    cells = Counter((i.game, i.type) for i in ALL)
    for game in QA_GAMES:
        for ability in qg.abilities(game):
            assert cells[(game, ability)] >= 50, (game, ability, cells[(game, ability)])


def test_contrast_sets_are_complete_and_every_tom_item_is_in_a_partner_set() -> None:
    for cid, twins in _sets(ALL).items():
        options = {frozenset(t.options) for t in twins}
        assert len(options) == 1, cid  # the same options
        assert len({t.question for t in twins}) == 1, cid  # the same question
        keys = [t.options[t.answer] for t in twins]
        assert sorted(keys) == sorted(twins[0].options), cid  # each option the key of one twin
        assert len({t.details["varies"] for t in twins}) == 1
    for it in ALL:
        if it.type == "ToM":
            assert it.contrast and it.details["varies"] == "partner", it.id


def test_key_positions_are_uniform() -> None:
    """The shuffle never looks at the key: for every option count with 200+ items, the key's
    letter is within 5 binomial standard errors of 1/k at every position."""
    by_k: dict[int, list[int]] = defaultdict(list)
    for it in ALL:
        by_k[len(it.options)].append(it.answer)
    checked = 0
    for k, answers in by_k.items():
        n = len(answers)
        if n < 200:
            continue
        counts = Counter(answers)
        se = math.sqrt(n * (1 / k) * (1 - 1 / k))
        for pos in range(k):
            assert abs(counts[pos] - n / k) < 5 * se, (k, pos, counts)
        checked += 1
    assert checked >= 2


def test_known_groups_on_partner_sets() -> None:
    """The partner-blind reasoner is right on exactly one twin of each sampled set (chance, by
    construction); the exact partner model (the engine) on every twin."""
    from tom_envs.qa.adversary import known_groups

    sample = []
    for g in QA_GAMES:
        sets = [s for s in _sets(SUITES[g]).values() if s[0].details["varies"] == "partner"]
        sample += [t for s in sets[:: max(1, len(sets) // 3)][:3] for t in s]
    kg = known_groups(sample)
    assert kg.passed, kg.failures
    assert kg.sets >= 20
    blind, exact = kg.reports
    (pb,) = blind.pooled(None)
    (pe,) = exact.pooled(None)
    assert pb.accuracy == pytest.approx(pb.chance) and pe.accuracy == 100.0


# ------------------------------------------------------------------ the keys, per game
@pytest.mark.parametrize("game", ["PrisonersDilemma", "BattleOfSexes", "RockPaperScissors"])
def test_matrix_twins_replay_the_same_moves_against_the_named_rule(game: str) -> None:
    from tom_envs.games.matrix.bots import make_partner

    for twins in _sample_sets(game, "partner_next_action") + _sample_sets(game, "best_action"):
        mine = {tuple(a[0] for a in t.scenario.actions) for t in twins}
        assert len(mine) == 1  # your moves are the shared situation
        for t in twins:
            bundle, state = replay(t.scenario)
            policy = make_partner(t.scenario.variant, bundle.game.config, 1)
            s = policy.initial_state()
            for m, theirs in state.history:
                assert policy.action_probs(s)[theirs] == 1.0  # its moves are the rule's
                s = policy.next_state(s, theirs, m)
            if t.kind == "partner_next_action":
                nxt = int(np.argmax(policy.action_probs(s)))
                view = bundle.game.observe(state, 0)
                assert t.options[t.answer] == bundle.text.action_text(view, nxt)
        if twins[0].kind == "partner_next_action":  # the same surface of its play
            counts = set()
            for t in twins:
                _, state = replay(t.scenario)
                theirs = [b for _, b in state.history]
                counts.add((tuple(sorted(Counter(theirs).items())), theirs[-1]))
            assert len(counts) == 1


def test_hanabi_counterfactual_knowledge_is_the_engines_reveal() -> None:
    """The twins' changed knowledge (``reveal_knowledge``) is exactly what the engine computes
    when that reveal is given."""
    from tom_envs.games.hanabi.qa import reveal_knowledge
    from tom_envs.games.hanabi.state import REVEAL_COLOR, REVEAL_RANK

    checked = 0
    for it in SUITES["Hanabi"][::20]:
        bundle, state = replay(it.scenario)
        game = bundle.game
        player = state.current
        for a in game.legal_actions(state, player):
            spec = game.moves[a]
            if spec.kind not in (REVEAL_COLOR, REVEAL_RANK):
                continue
            target = (player + spec.target_offset) % game.config.players
            value = spec.color if spec.kind == REVEAL_COLOR else spec.rank
            after = game.step(state, {player: a}, np.random.default_rng(0)).state
            mine = reveal_knowledge(game, state, target, spec.kind, value)
            assert game.card_knowledge(mine, target) == game.card_knowledge(after, target)
            checked += 1
    assert checked >= 20


def _hanabi_twin_state(item: QAItem):
    from tom_envs.games.hanabi.qa import variant_state

    bundle, state = replay(item.scenario)
    return bundle, variant_state(bundle.game, state, item.scenario.variant)


def test_hanabi_tom_keys_are_the_one_reveal_that_tells_the_partner() -> None:
    from tom_envs.games.hanabi.probes import knows_playable

    for twins in _sample_sets("Hanabi", "reveal_makes_playable", 6):
        for t in twins:
            bundle, state = _hanabi_twin_state(t)
            game, text = bundle.game, bundle.text
            player = state.current
            partner = (player + 1) % game.config.players
            view = game.observe(state, player)
            by_text = {text.bare_action_text(view, a): a for a in game.legal_actions(state, player)}
            fw = state.fireworks
            before = game.card_knowledge(state, partner)
            works = []
            for option in t.options:
                after_state = game.step(state, {player: by_text[option]}, np.random.default_rng(0))
                after = game.card_knowledge(after_state.state, partner)
                works.append(any(knows_playable(a, fw) and not knows_playable(b, fw)
                                 for a, b in zip(after, before, strict=True)))  # fmt: skip
            assert works == [i == t.answer for i in range(len(t.options))], t.id
            assert t.context == qg.context_text(bundle, state, player)  # the twin's knowledge


def test_maze_partner_keys_follow_the_named_rule() -> None:
    from tom_envs.games.collab_capture import qa as capture
    from tom_envs.games.collab_escape import qa as escape

    for game, module, next_room in (
        ("CollabCapture", capture, capture.next_room),
        ("CollabEscape", escape, escape.next_room),
    ):
        for twins in _sample_sets(game, "partner_next_room"):
            for t in twins:
                bundle, state = replay(t.scenario)
                partner = 1 - t.scenario.player
                action = module.RULES[t.scenario.variant](bundle.game, state, partner)
                assert t.options[t.answer] == f"Room {next_room(action, state.rooms[partner])}"
                assert "An earlier game in this maze" in t.context
                assert "Turns played so far" not in t.context  # no current history: no rival cue


def test_overcooked_walks_head_for_the_key_and_no_other_option() -> None:
    from tom_envs.games.overcooked.kitchen import kitchen
    from tom_envs.games.overcooked.midlevel import mid_level_actions

    cell = re.compile(r"from \((\d+), (\d+)\) to \((\d+), (\d+)\)")
    for twins in _sample_sets("Overcooked", "partner_heading", 6):
        for t in twins:
            bundle, state = replay(t.scenario)
            cfg = bundle.game.config
            k = kitchen(cfg.kitchen)
            partner = 1 - t.scenario.player
            moves = [((int(a), int(b)), (int(c), int(d))) for a, b, c, d in cell.findall(t.context)]
            assert moves and moves[-1][1] == state.chefs[partner].pos
            tasks = {a.text: a for a in mid_level_actions(k, state, partner, cfg.cooking)}
            for i, option in enumerate(t.options):
                goal = k.goal[tasks[option].target]
                nearer = all(goal[b] == goal[a] - 1 for a, b in moves)
                assert nearer == (i == t.answer), (t.id, option)


def test_bomb_teammate_learned_exactly_the_key_bomb() -> None:
    from tom_envs.games.bomb_defusal.qa import learned

    for twins in _sample_sets("BombDefusal", "teammate_learned", 6):
        for t in twins:
            _, state = replay(t.scenario)
            mate = t.details["teammate"]
            pair = t.details["bombs"]
            got = [b for b in pair if learned(state, mate, b)]
            assert [f"Bomb {b + 1}" for b in got] == [t.options[t.answer]], t.id


def test_coblock_partner_goal_keys_read_the_stated_goal() -> None:
    for twins in _sample_sets("CoBlock", "partner_goal", 6):
        for t in twins:
            bundle, _ = replay(t.scenario)
            q = 1 - t.scenario.player
            k = int(t.scenario.variant[len("goal"):])
            goal = bundle.game.draw_task(np.random.default_rng([t.scenario.seed, 72, k])).goals[q]
            said = [m[q] for m in t.scenario.messages if q in m]
            assert len(said) == 1 and all(
                f"({x}, {y}, {z})" in said[0] for x, y, z, _ in goal.blocks
            )
            has = t.details["structure"] in {c.kind for c in goal.components}
            assert t.options[t.answer] == ("yes" if has else "no"), t.id


def test_situation_twins_differ_in_their_key_and_recompute() -> None:
    """Situation contrast sets (EC, JP): recomputed twin by twin, canonical keys distinct."""
    for game in ("CollabCapture", "CollabEscape", "Overcooked", "Hanabi", "Guandan", "CoBlock",
                 "BombDefusal"):  # fmt: skip
        for twins in [s for s in _sample_sets(game, n=8) if s[0].details["varies"] == "situation"]:
            keys = [canonical(t).options[canonical(t).answer] for t in twins]
            assert len(set(keys)) == len(keys)
            for t in twins:
                assert qg.verify(t), t.id
