"""The zoo's work-split members (issue #35): ``split_even`` / ``split_odd`` (role splits),
``heuristic_silent`` and ``passive``: their rules, a seeded golden, the best responses that differ
on selection seeds, and the functional-ToM plan that declares them."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from bomb_helpers import ROOM, B, G, R, new_game, start
from gymnasium.utils import seeding

import tom_envs  # noqa: F401
from tom_envs.agents import make_agent
from tom_envs.core.agents import EpisodeInfo, Turn
from tom_envs.games.bomb_defusal.bots import ALPHA, PassiveAgent, SplitAgent
from tom_envs.games.bomb_defusal.rules import ActionKind, BombGame, decode_action
from tom_envs.registration import game_spec
from tom_envs.runner import play_episode

SPEC = game_spec("BombDefusal")
KW = {"probes": "none", "shaping": True}  # the functional-ToM page's arguments
GAME = BombGame(SPEC.load().make_bundle(**KW).game.config)  # type: ignore[attr-defined]
NEW = ("split_even", "split_odd", "heuristic_silent", "passive")


def _play(focal: str, partner: str, seed: int):
    bundle = SPEC.load().make_bundle(**KW)
    agents = [make_agent(focal if s == 0 else partner, SPEC, bundle) for s in range(3)]
    return play_episode(SPEC, agents, seed, KW)


def _final(ep, seed: int):
    """The episode's last state, replayed from its seed and actions (the rules are deterministic
    after the draw)."""
    game = GAME
    state = game.initial_state(seeding.np_random(seed)[0])
    rng = np.random.default_rng(0)
    for s in ep.steps:
        state = game.step(state, {state.turn: int(s["action"])}, rng).state
    return state


def _info(player: int) -> EpisodeInfo:
    return EpisodeInfo(
        env_id=SPEC.id,
        agent=f"player_{player}",
        player=player,
        num_players=3,
        num_actions=9,
        seed=None,
        reward_range=(0.0, 11.0),
        max_steps=90,
    )


def _decide(agent, game, state, player: int):
    """``agent``'s decision in ``player``'s view of ``state``: (kind, target), message."""
    view = game.observe(state, player)
    out = agent.act(
        Turn(f"player_{player}", player, view, np.zeros(1), np.zeros(1, np.int8), 0.0, 0)
    )
    action = out.action if hasattr(out, "action") else out
    return decode_action(game.config, action).base, getattr(out, "message", None)


# ------------------------------------------------------------------------------ the rules
def test_split_ownership_follows_the_convention() -> None:
    game = new_game()
    state = start(game, [(0, (R,)), (3, (G,)), (5, (B,)), (6, (R, G)), (8, (R, G, B))])
    view = game.observe(state, 0)
    even, odd = SplitAgent(game.config, 0), SplitAgent(game.config, 1)
    for room in range(5):
        mine = room % 2 == 0
        # alpha's own colours: alpha cuts them in its rooms, the others everywhere else
        assert even._may_cut(view, ALPHA, room, R) is mine
        assert even._may_cut(view, 2, room, R) is not mine  # charlie holds red
        assert even._may_cut(view, 1, room, G) is not mine  # bravo holds green
        assert odd._may_cut(view, ALPHA, room, G) is not mine
        # blue: alpha lacks it, the holders cut it anywhere, under either convention
        assert even._may_cut(view, 1, room, B) and odd._may_cut(view, 2, room, B)
        assert not even._may_cut(view, ALPHA, room, B)
        assert not even._may_cut(view, 1, room, R)  # nobody cuts with a tool it lacks
        # alpha inspects only its rooms; the others everywhere
        assert even._may_inspect(view, ALPHA, room) is mine
        assert odd._may_inspect(view, ALPHA, room) is not mine
        assert even._may_inspect(view, 2, room)


def test_split_parity_is_checked() -> None:
    with pytest.raises(ValueError, match="parity"):
        SplitAgent(new_game().config, 2)


@pytest.mark.parametrize(("name", "acts"), [("split_even", True), ("split_odd", False)])
def test_alpha_cuts_its_colour_only_in_its_rooms(name: str, acts: bool) -> None:
    """All start in room 0 (index 0: even) with a known red bomb; alpha holds red."""
    game = new_game()
    state = start(game, [(0, (R,)), (3, (G,)), (5, (G,)), (6, (G, R)), (8, (R, G, B))])
    state = game.step(state, {0: 0}, np.random.default_rng(0)).state  # alpha inspects
    state = game.step(state, {1: 0}, np.random.default_rng(0)).state
    state = game.step(state, {2: 0}, np.random.default_rng(0)).state
    agent = SplitAgent(game.config, name == "split_odd")
    agent.reset(_info(0))
    (kind, target), _ = _decide(agent, game, state, 0)
    assert (kind == ActionKind.USE and target == R) is acts
    if not acts:  # split_odd's alpha leaves it to charlie (red) and goes to its own rooms
        assert kind == ActionKind.GO_TO and target % 2 == 1


def test_charlie_leaves_alphas_phase_under_split_even() -> None:
    """Charlie (red) stands at a red bomb in an even room under ``split_even``: alpha's phase, so
    charlie does not cut it; under ``split_odd`` it does."""
    game = new_game()
    state = start(game, [(0, (R,)), (3, (G,)), (5, (G,)), (6, (G, R)), (8, (R, G, B))])
    rng = np.random.default_rng(0)
    state = game.step(state, {0: 0}, rng).state
    state = game.step(state, {1: 0}, rng).state  # bravo inspects too (the sequence is known)
    for name, cuts in (("split_even", False), ("split_odd", True)):
        agent = SplitAgent(game.config, name == "split_odd")
        agent.reset(_info(2))
        agent._learn_bomb(0, (R,), ROOM[0])  # told by alpha's report
        (kind, target), _ = _decide(agent, game, state, 2)
        assert (kind == ActionKind.USE and target == R) is cuts, name


def test_passive_never_moves_cuts_or_talks() -> None:
    eps = [_play("heuristic", "passive", s) for s in range(3)]
    for ep in eps:
        partner_steps = [s for s in ep.steps if s["agent"] != "player_0"]
        assert partner_steps and all(not s.get("message") for s in partner_steps)
        kinds = {decode_action(GAME.config, int(s["action"])).kind for s in partner_steps}
        assert ActionKind.GO_TO not in kinds
    for seed, ep in zip(range(3), eps, strict=True):
        final = _final(ep, seed)
        start_room = final.mission.start_room
        assert final.locations[1] == final.locations[2] == start_room
        # only alpha cut: every phase cut is red or green (blue needs a partner)
        for seq, done in zip(final.mission.sequences, final.progress, strict=True):
            assert B not in seq[:done]


def test_heuristic_silent_plays_like_heuristic_without_messages() -> None:
    ep = _play("heuristic_silent", "heuristic_silent", 10_000)
    assert ep.metrics["messages"] == 0 and ep.metrics["team_score"] == 90


# ------------------------------------------------------------------------- seeded golden
def test_split_teams_complete_and_mismatch_leaves_exactly_alphas_phases() -> None:
    """Self-play completes; ``split_even`` as focal with ``split_odd`` partners leaves undone
    exactly phases of alpha's colours in odd rooms (each side thinks they are the other's)."""
    for name in ("split_even", "split_odd"):
        assert [_play(name, name, s).metrics["team_score"] for s in range(4)] == [90.0] * 4
    for seed in range(4):
        ep = _play("split_even", "split_odd", seed)
        final = _final(ep, seed)
        rooms, seqs = final.mission.bomb_rooms, final.mission.sequences
        left = [(rooms[b], seqs[b][d]) for b, d in enumerate(final.progress) if d < len(seqs[b])]
        assert left, seed
        assert all(room % 2 == 1 and colour in (R, G) for room, colour in left), (seed, left)


def test_seeded_golden_of_a_mismatched_team() -> None:
    """Seed 3: ``split_even`` focal with ``split_odd`` partners, action by action."""
    ep = _play("split_even", "split_odd", 3)
    actions = [int(s["action"]) for s in ep.steps]
    assert (ep.metrics["team_score"], ep.metrics["rounds"], ep.metrics["bombs_defused"]) == (
        50.0,
        30.0,
        3.0,
    )
    assert [s["action_text"] for s in ep.steps[:12]] == GOLDEN_HEAD
    assert len(actions) == 90
    assert hashlib.sha256(repr(actions).encode()).hexdigest()[:16] == GOLDEN_HASH


#: alpha, bravo, charlie in turn: alpha heads for its (even) room 0, the partners inspect and cut
#: blue and their own share
GOLDEN_HEAD = [
    "Move to Room 0",
    "Inspect Bomb",
    "Move to Room 5",
    "Inspect Bomb",
    "Apply Blue Tool",
    "Inspect Bomb",
    "Apply Green Tool",
    "Move to Room 0",
    "Apply Blue Tool",
    "Move to Room 8",
    "Apply Blue Tool",
    "Move to Room 0",
]
#: every one of the 90 actions (regenerate only for an intended change of the bots or rules)
GOLDEN_HASH = "652f4f760011b9fc"


# ---------------------------------------------------------- best responses that differ
@pytest.mark.parametrize("seed", [10_000, 10_001])
def test_each_split_is_its_own_best_response_on_selection_seeds(seed: int) -> None:
    """On selection seeds (the references' own), the convention's complement wins against it and
    the mirror loses whole phases: the best responses of the two splits differ."""
    pairs = [(f, p) for f in ("split_even", "split_odd") for p in ("split_even", "split_odd")]
    u = {(f, p): _play(f, p, seed) for f, p in pairs}
    score = {k: ep.metrics["team_score"] for k, ep in u.items()}
    assert score[("split_even", "split_even")] == score[("split_odd", "split_odd")] == 90
    assert score[("split_odd", "split_even")] <= 80 and score[("split_even", "split_odd")] <= 80


def test_bracket_candidates_include_the_conventions() -> None:
    from tom_envs.references import BOMB_CANDIDATES, reference_for

    assert set(NEW) <= set(BOMB_CANDIDATES) and "random" not in BOMB_CANDIDATES
    ref = reference_for("BombDefusal", "split_odd", 0, (0,), selection_seeds=(10_000, 10_001), **KW)
    assert ref.kind == "bracket" and ref.details["candidate"] == "split_odd"


# ------------------------------------------------------------------------------- the plan
def test_the_functional_tom_plan_declares_them() -> None:
    from tom_envs import zoo
    from tom_envs.known_groups import reference_policy

    ft = pytest.importorskip("tom_experiments.functional_tom")
    plan = ft.PLANS["BombDefusal"]
    assert plan.fixed_member == "split_even" and plan.session_learner == "selector"
    names = [m.name for m in zoo.members("BombDefusal")]
    assert set(NEW) <= set(names)
    assert all(zoo.member(n, "BombDefusal").description for n in NEW)
    assert reference_policy("BombDefusal", "split_even", "split_even") == "split_even"


def test_passive_agent_waits_in_a_room_without_a_bomb() -> None:
    game = new_game()
    state = start(game, [(3, (R,)), (5, (G,)), (6, (B,)), (8, (R, G)), (3, (R, G, B))], at=0)
    agent = PassiveAgent(game.config)
    agent.reset(_info(0))
    (kind, target), message = _decide(agent, game, state, 0)
    assert (
        kind == ActionKind.USE and target in game.config.tool_colors[0]
    )  # no bomb here: no effect
    assert message is None


def test_the_best_response_matrix_marks_each_columns_best_focal() -> None:
    bc = pytest.importorskip("tom_experiments.bomb_conventions")
    members = ["random", "split_even", "split_odd"]
    m = {("split_even", "random"): 1.0, ("split_odd", "random"): 1.0,
         ("split_even", "split_even"): 86.8, ("split_odd", "split_even"): 33.0,
         ("split_even", "split_odd"): 43.0, ("split_odd", "split_odd"): 86.8}  # fmt: skip
    text = bc.render(members, m)
    assert "| split_even | **1.0** | **86.8** | 43.0 |" in text  # ties: the first declared
    assert "| split_odd | 1.0 | 33.0 | **86.8** |" in text
    assert text.endswith("random: split_even, split_even: split_even, split_odd: split_odd")
