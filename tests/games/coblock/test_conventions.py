"""CoBlock's two conventions (A and its mirror B): the message formats, the split of the mutual
blocks, the mirror personas' behaviour, a seeded golden, the best responses that differ, and the
functional page's plan that declares them (issue #35's known groups)."""

from __future__ import annotations

import pytest

from tom_envs import zoo
from tom_envs.agents import make_agent
from tom_envs.games.coblock.bots import (
    CONVENTIONS,
    PERSONAS,
    bot_table,
    disclosure_text,
    mirror_disclosure_text,
    mirror_request_text,
    parse_disclosure,
    parse_mirror_disclosure,
    parse_mirror_request,
    parse_request,
    request_text,
)
from tom_envs.games.coblock.planner import optimal_assignment, optimal_counts, target_blocks
from tom_envs.games.coblock.structures import pos_of
from tom_envs.games.coblock.tasks import TASK_TYPES, builtin_tasks
from tom_envs.registration import game_spec
from tom_envs.runner import play_episode

from .conftest import bot_episode, placements

SPEC = game_spec("CoBlock")
MIRRORS = ("mirror", "mirror_helper", "mirror_egoist", "mirror_passive", "mirror_error_prone")
GOAL = ((1, 0, 1, 0), (1, 1, 1, 2))
INV = (7, 0, 5, 0, 0, 0)


# ------------------------------------------------------------------------------ protocol
def test_mirror_protocol_round_trips_and_edge_cases() -> None:
    text = mirror_disclosure_text(GOAL, INV)
    assert text == "Building: (1, 0, 1) red, (1, 1, 1) yellow. Holding: 7 red, 5 yellow."
    assert parse_mirror_disclosure(text) == (GOAL, INV)
    assert parse_mirror_disclosure(mirror_disclosure_text((), (0,) * 6)) == ((), (0,) * 6)
    assert parse_mirror_disclosure("hello") is None
    assert mirror_request_text(GOAL) == "Your blocks: (1, 0, 1) red, (1, 1, 1) yellow."
    assert parse_mirror_request(mirror_request_text(GOAL)) == GOAL
    assert parse_mirror_request("ok. YOUR BLOCKS: (2,0,3)  Blue") == ((2, 0, 3, 1),)
    assert parse_mirror_request("Building: (1, 0, 1) red. Holding: 7 red.") == ()


def test_each_convention_reads_only_its_own_messages() -> None:
    """The two formats never parse as each other: the conventions cannot talk."""
    a_text, a_req = disclosure_text(GOAL, INV), request_text(GOAL)
    b_text, b_req = mirror_disclosure_text(GOAL, INV), mirror_request_text(GOAL)
    assert parse_mirror_disclosure(a_text) is None and parse_mirror_request(a_req) == ()
    assert parse_disclosure(b_text) is None and parse_request(b_req) == ()
    for conv, own, other in (("A", (a_text, a_req), (b_text, b_req)),
                             ("B", (b_text, b_req), (a_text, a_req))):  # fmt: skip
        c = CONVENTIONS[conv]
        assert c.read_disclosure(own[0]) == (GOAL, INV) and c.read_request(own[1]) == GOAL
        assert c.read_disclosure(other[0]) is None and c.read_request(other[1]) == ()


# ------------------------------------------------------------------------- the split
def test_mirror_split_takes_the_partners_goal_first() -> None:
    """Independent task 1: yellow is mutual and only goal 0 holds yellow; Alg. 1 gives player_1
    one of its blocks. Convention A hands over goal 0's last yellow block (player_0 keeps its own
    goal's lowest blocks); the mirror hands over its first (player_0 takes the partner's goal
    first, which has none, so player_1 takes goal 0's lowest)."""
    task = builtin_tasks("independent")[1]
    goals = [g.blocks for g in task.goals]
    own = optimal_assignment(goals, task.inventories)
    mirror = optimal_assignment(goals, task.inventories, first="partner")
    assert own is not None and mirror is not None
    assert set(own[1]) - set(goals[1]) == {(3, 1, 1, 2)}
    assert set(mirror[1]) - set(goals[1]) == {(0, 0, 1, 2)}
    assert (len(own[0]), len(own[1])) == (len(mirror[0]), len(mirror[1])) == (7, 6)


def test_both_splits_cover_the_target_with_alg1_counts() -> None:
    """On every built-in task both conventions assign every target block once, with Alg. 1's
    counts (so γ's N* is the same); they differ on many tasks."""
    differ = 0
    for tt in TASK_TYPES:
        for task in builtin_tasks(tt):
            goals = [g.blocks for g in task.goals]
            target = set(target_blocks(goals))
            counts = optimal_counts(goals, task.inventories)
            splits = [optimal_assignment(goals, task.inventories, first=f) for f in ("own", "partner")]
            for s in splits:
                assert s is not None and set(s[0]) | set(s[1]) == target
                assert not set(s[0]) & set(s[1]) and (len(s[0]), len(s[1])) == counts
            differ += splits[0] != splits[1]
    assert differ == 34  # of 72


def test_first_is_checked() -> None:
    with pytest.raises(ValueError, match="first must be one of"):
        optimal_assignment([GOAL, ()], [INV, INV], first="mine")


# ----------------------------------------------------------------------- the personas
def test_every_persona_exists_in_both_conventions() -> None:
    a = [p for p in PERSONAS.values() if p.convention == "A"]
    b = [p for p in PERSONAS.values() if p.convention == "B"]
    assert tuple(p.name for p in b) == MIRRORS and len(a) == len(b) == 5
    for pa, pb in zip(a, b, strict=True):
        assert pb.convention == "B" and pb.description.startswith(pa.description)
        same = {k: v for k, v in vars(pa).items() if k not in ("name", "description", "convention")}
        assert same == {k: v for k, v in vars(pb).items() if k in same}
    assert bot_table().populations["mirror"] == MIRRORS


def test_golden_mirror_pair_and_its_split() -> None:
    """Seeded golden: the mirror pair on independent task 1 (seed 0) says its goals in its own
    format and player_1 places goal 0's lowest yellow block (the cooperative pair: its last)."""
    _, state, game = bot_episode("mirror", "mirror", "independent", 1)
    assert state.outcome == "success" and state.round == 8
    assert [t for _, _, t in state.dialogue] == [
        "Building: (0, 0, 1) yellow, (1, 0, 1) yellow, (2, 0, 1) yellow, (3, 0, 1) yellow, "
        "(0, 1, 1) yellow, (1, 1, 1) yellow, (2, 1, 1) yellow, (3, 1, 1) yellow. Holding: 11 yellow.",
        "Building: (3, 0, 4) green, (3, 1, 4) green, (3, 2, 4) green, (2, 2, 4) green, "
        "(4, 2, 4) green. Holding: 11 yellow, 8 green.",
    ]
    assert placements(state, game, 1) == [(0, 0, 1, 2), (3, 0, 4, 3), (3, 1, 4, 3), (3, 2, 4, 3),
                                           (2, 2, 4, 3), (4, 2, 4, 3)]  # fmt: skip
    _, coop, game = bot_episode("cooperative", "cooperative", "independent", 1)
    assert coop.outcome == "success" and coop.round == 8
    assert [b for b in placements(coop, game, 1) if b[3] == 2] == [(3, 1, 1, 2)]


@pytest.mark.parametrize(("focal", "partner"), [("cooperative", "mirror_passive"), ("mirror", "passive")])
def test_a_passive_partner_of_the_other_convention_never_hears_the_focal(focal, partner) -> None:
    """A passive bot answers only a disclosure in its own format: across conventions it never
    speaks or builds, and the skill-dependent task times out."""
    _, state, game = bot_episode(focal, partner, "skill_dependent", 0)
    assert state.outcome == "timeout"
    assert [who for _, who, _ in state.dialogue] == [0] and placements(state, game, 1) == []


def test_across_conventions_the_partners_needs_go_unheard() -> None:
    """cooperative and mirror each build from their own goal and never read the other's
    disclosure: on goal-dependent task 1 (player_1's goal needs yellow it lacks) the yellow blocks of
    player_1's goal are never placed."""
    _, state, game = bot_episode("cooperative", "mirror", "goal_dependent", 1)
    assert state.outcome == "timeout"
    world = {pos_of(b) for b in placements(state, game, 0) + placements(state, game, 1)}
    missing = [b for b in state.task.goals[1].blocks if pos_of(b) not in world]
    assert missing and all(b[3] == 2 for b in missing)


# ------------------------------------------------------------ the best responses differ
def _u(focal: str, partner: str, seed: int) -> float:
    obj = SPEC.load().functional_objective(**SPEC.kwargs)
    ep = play_episode(SPEC, [make_agent(focal, SPEC), make_agent(partner, SPEC)], seed,
                      env_kwargs=dict(SPEC.kwargs))  # fmt: skip
    return float(obj(ep, (0,)))


@pytest.mark.parametrize("seed", [10001, 10002])  # selection seeds (never the check's 20000..)
def test_best_response_differs_by_convention_on_selection_seeds(seed) -> None:
    """M on two selection seeds: against an A member the A candidate beats the B candidate and
    against a B member the reverse (the mismatched pair fails the task: U = -60/61)."""
    fail = -60 / 61
    for partner, own, other in (("cooperative", "cooperative", "mirror"),
                                ("passive", "cooperative", "mirror"),
                                ("mirror", "mirror", "cooperative"),
                                ("mirror_passive", "mirror", "cooperative")):  # fmt: skip
        assert _u(own, partner, seed) > 0.4 > _u(other, partner, seed) == pytest.approx(fail)


# ------------------------------------------------------------------------ the page's plan
def test_functional_page_declares_the_two_conventions() -> None:
    from tom_experiments.functional_tom import PLANS

    members = {m.name: m for m in zoo.members("CoBlock")}
    assert set(MIRRORS) <= set(members)
    assert all("mirror convention B" in members[n].description for n in MIRRORS)
    plan = PLANS["CoBlock"]
    assert plan.fixed_member == "cooperative" and plan.session_learner == "selector"
    assert plan.episode_switch == ("cooperative", "mirror", "3-6")
