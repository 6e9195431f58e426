"""Partner bots: exact behaviour on scripted opponent sequences, as policies and as agents."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from tom_envs.agents import make_agent
from tom_envs.core.agents import BaseAgent, EpisodeInfo, Turn
from tom_envs.games.matrix.bots import (
    PartnerAgent,
    PartnerPolicy,
    make_partner,
    partner_names,
)
from tom_envs.games.matrix.env import bot_table, make_bundle
from tom_envs.games.matrix.rules import MatrixConfig
from tom_envs.registration import game_spec
from tom_envs.runner import play_episode

SPEC = {"rps": "RockPaperScissors", "ibs": "BattleOfSexes", "ipd": "PrisonersDilemma"}
DETERMINISTIC = ["tit_for_tat", "win_stay_lose_shift", "alternating", "fictitious_play"]


def drive(policy: PartnerPolicy, others: list[int]) -> list[int]:
    """The partner's actions when its opponent plays ``others`` (deterministic partners only)."""
    state = policy.initial_state()
    out = []
    for other in others:
        probs = policy.action_probs(state)
        assert sorted(probs) == [0.0] * (len(probs) - 1) + [1.0], probs
        own = int(np.argmax(probs))
        out.append(own)
        state = policy.next_state(state, own, other)
    return out


def partner(name: str, g: str, seat: int = 1) -> PartnerPolicy:
    return make_partner(name, MatrixConfig(game=g), seat)


# ------------------------------------------------------------------------ scripted runs
@pytest.mark.parametrize("g", ["rps", "ibs", "ipd"])
@pytest.mark.parametrize("seat", [0, 1])
def test_always_k(g: str, seat: int) -> None:
    n = MatrixConfig(game=g).num_actions
    others = [0, 1, n - 1, 0, 1, 1]
    for k in range(n):
        p = partner(f"always_{k}", g, seat)
        assert p.name == f"always_{k}"
        assert drive(p, others) == [k] * len(others)


@pytest.mark.parametrize("g", ["ibs", "ipd"])
@pytest.mark.parametrize("seat", [0, 1])
def test_tit_for_tat_copies_in_ibs_and_ipd(g: str, seat: int) -> None:
    p = partner("tit_for_tat", g, seat)
    assert p.rule == "copy"
    assert drive(p, [1, 0, 0, 1, 1, 0]) == [0, 1, 0, 0, 1, 1]
    assert drive(p, [1, 1, 1]) == [0, 1, 1]


@pytest.mark.parametrize("seat", [0, 1])
def test_tit_for_tat_best_responds_in_rps(seat: int) -> None:
    p = partner("tit_for_tat", "rps", seat)
    assert p.rule == "best_response"
    # opens with rock; then paper beats rock, scissors beats paper, rock beats scissors
    assert drive(p, [0, 1, 2, 2, 0, 0]) == [0, 1, 2, 0, 0, 1]
    assert [p.best_response(x) for x in range(3)] == [1, 2, 0]


def test_tit_for_tat_rule_override_and_validation() -> None:
    from tom_envs.games.matrix.bots import TitForTat

    copy = TitForTat(MatrixConfig(game="rps"), 1, rule="copy")
    assert drive(copy, [2, 1, 0]) == [0, 2, 1]
    with pytest.raises(ValueError, match="rule"):
        TitForTat(MatrixConfig(game="rps"), 1, rule="mirror")


@pytest.mark.parametrize("seat", [0, 1])
def test_win_stay_lose_shift_is_pavlov_in_ipd(seat: int) -> None:
    """IPD: stays after 8 (mutual C) or 10 (temptation), shifts after 5 (mutual D) or 0 (sucker)."""
    p = partner("win_stay_lose_shift", "ipd", seat)
    #            C vs C=8 stay | C vs D=0 shift | D vs C=10 stay | D vs D=5 shift | C vs D shift | D vs D
    others = [0, 1, 0, 1, 1, 1, 0]
    assert drive(p, others) == [0, 0, 1, 1, 0, 1, 0]
    # the classic Pavlov fact: against itself it cooperates forever; one mutual D restores C
    state = p.initial_state()
    assert p.next_state(state, 0, 0) == 0
    assert p.next_state(state, 0, 1) == 1
    assert p.next_state(state, 1, 0) == 1
    assert p.next_state(state, 1, 1) == 0


def test_win_stay_lose_shift_rps_and_ibs() -> None:
    # RPS (mean payoff 0): a win stays, a tie or a loss moves to the next action
    p = partner("win_stay_lose_shift", "rps")
    assert drive(p, [2, 0, 0, 2, 1, 0]) == [0, 0, 1, 1, 2, 2]
    # IBS from seat 1 (its table: 7 for (J, J), 10 for (F, F)): coordinating is a win either way
    p = partner("win_stay_lose_shift", "ibs", seat=1)
    assert drive(p, [1, 1, 0, 0, 1]) == [0, 1, 1, 0, 0]


@pytest.mark.parametrize("g", ["rps", "ibs", "ipd"])
def test_alternating_ignores_the_opponent(g: str) -> None:
    n = MatrixConfig(game=g).num_actions
    expected = [t % n for t in range(7)]
    assert drive(partner("alternating", g), [0] * 7) == expected
    assert drive(partner("alternating", g, 0), [n - 1, 0, 1, 0, 1, 0, 1]) == expected


def test_fictitious_play() -> None:
    # RPS: counts (1,0,0) -> paper; (1,1,0) -> paper; (1,1,1) -> all tie at 0 -> rock (lowest);
    # (1,1,2) -> values (1,-1,0) -> rock
    p = partner("fictitious_play", "rps")
    assert drive(p, [0, 1, 2, 2, 0]) == [0, 1, 1, 0, 0]
    assert p.action_probs((0, 0, 0)) == (1.0, 0.0, 0.0)  # opens with action 0
    assert p.action_probs((1, 1, 1)) == (1.0, 0.0, 0.0)  # ties go to the lowest action
    assert p.action_probs((0, 1, 1)) == (0.0, 0.0, 1.0)
    # IPD: defection dominates whatever the counts
    assert drive(partner("fictitious_play", "ipd"), [0, 0, 1, 0]) == [0, 1, 1, 1]
    # IBS seat 0 (10 for (J, J), 7 for (F, F)): 7 J vs 10 F is a 70-70 tie -> J; one more F -> F
    p0 = partner("fictitious_play", "ibs", 0)
    assert p0.action_probs((7, 10)) == (1.0, 0.0)
    assert p0.action_probs((7, 11)) == (0.0, 1.0)
    # IBS seat 1 values its own F at 10: follows the counts
    p1 = partner("fictitious_play", "ibs", 1)
    assert drive(p1, [0, 1, 0, 1, 1]) == [0, 0, 1, 0, 1]
    assert p1.initial_state() == (0, 0)
    assert p1.next_state((2, 3), 1, 0) == (3, 3)


def test_random_policy_is_uniform() -> None:
    for g, n in (("rps", 3), ("ibs", 2)):
        p = partner("random", g)
        s = p.initial_state()
        assert p.action_probs(s) == tuple([1.0 / n] * n)
        assert p.next_state(s, 0, 1) == s


# ---------------------------------------------------------------- as agents in the env
class Scripted(BaseAgent):
    """Plays a fixed list of actions (its turn's decision index picks the entry)."""

    name = "scripted"

    def __init__(self, actions: list[int]) -> None:
        super().__init__()
        self.actions = actions

    def act(self, turn: Turn) -> int:
        return self.actions[turn.decision]


def partner_actions(g: str, bot: str, script: list[int], bot_seat: int, seed: int = 0) -> list[int]:
    spec = game_spec(SPEC[g])
    bundle = make_bundle(**spec.kwargs)
    agents = [Scripted(script), bot_table(**spec.kwargs).make(bot, bundle)]
    if bot_seat == 0:
        agents.reverse()
    ep = play_episode(spec, agents, seed, env_kwargs={"horizon": len(script)})
    mine = [s["action"] for s in ep.steps if s["agent"] == f"player_{bot_seat}"]
    theirs = [s["action"] for s in ep.steps if s["agent"] == f"player_{1 - bot_seat}"]
    assert theirs == script
    assert all(s["valid"] for s in ep.steps)
    return mine


@pytest.mark.parametrize("bot_seat", [0, 1])
def test_partner_agent_tracks_its_state_through_the_env(bot_seat: int) -> None:
    script = [1, 0, 0, 1, 1, 0]
    assert partner_actions("ipd", "tit_for_tat", script, bot_seat) == [0, 1, 0, 0, 1, 1]
    assert partner_actions("rps", "tit_for_tat", [0, 1, 2, 2, 0, 0], bot_seat) == [0, 1, 2, 0, 0, 1]
    assert partner_actions("ipd", "win_stay_lose_shift", [0, 1, 0, 1, 1, 1, 0], bot_seat) == [
        0, 0, 1, 1, 0, 1, 0
    ]
    assert partner_actions("rps", "fictitious_play", [0, 1, 2, 2, 0], bot_seat) == [0, 1, 1, 0, 0]
    assert partner_actions("ibs", "alternating", [1, 1, 1, 1, 1], bot_seat) == [0, 1, 0, 1, 0]
    assert partner_actions("ibs", "always_1", [0, 1, 0], bot_seat) == [1, 1, 1]


def test_partner_agent_seat_payoffs_matter() -> None:
    """The same bot name plays its own seat's table: IBS fictitious play from seat 0 vs seat 1."""
    script = [0, 1, 1, 0]  # counts seen before rounds 2..4: (1,0), (1,1), (1,2)
    assert partner_actions("ibs", "fictitious_play", script, bot_seat=0) == [0, 0, 0, 1]
    assert partner_actions("ibs", "fictitious_play", script, bot_seat=1) == [0, 0, 1, 1]


def test_partner_agent_is_reset_between_episodes() -> None:
    spec = game_spec("PrisonersDilemma")
    bot = bot_table(**spec.kwargs).make("tit_for_tat", make_bundle(**spec.kwargs))
    for seed in range(3):
        ep = play_episode(spec, [Scripted([1, 1, 1]), bot], seed, env_kwargs={"horizon": 3})
        assert [s["action"] for s in ep.steps if s["agent"] == "player_1"] == [0, 1, 1]


def test_partner_agent_refuses_to_skip_rounds() -> None:
    cfg = MatrixConfig(game="ipd", horizon=5)
    bundle = make_bundle(game="ipd", horizon=5)
    agent = PartnerAgent("tit_for_tat", cfg)
    agent.reset(EpisodeInfo("x", "player_1", 1, 2, 2, 0, (0.0, 10.0), 5))
    game = bundle.game
    s = game.initial_state(None)
    for a in (1, 1):
        s = game.step(s, {0: a, 1: 0}, None).state
    view = game.observe(s, 1)  # round 2, but the agent never saw round 1
    turn = Turn("player_1", 1, view, bundle.encoder.encode(view), np.ones(2, np.int8), 0.0, 0)
    with pytest.raises(RuntimeError, match="round"):
        agent.act(turn)


def random_partner_actions(seed: int, horizon: int = 600) -> list[int]:
    spec = game_spec("RockPaperScissors")
    bundle = make_bundle(**spec.kwargs)
    ep = play_episode(
        spec, [Scripted([0] * horizon), bot_table().make("random", bundle)], seed,
        env_kwargs={"horizon": horizon},
    )
    return [s["action"] for s in ep.steps if s["agent"] == "player_1"]


def test_random_partner_is_uniform_and_seeded() -> None:
    acts = random_partner_actions(0)
    counts = Counter(acts)
    # 600 draws, 200 expected per action, sd ~11.5: +-50 is more than 4 sd
    assert set(counts) == {0, 1, 2}
    assert all(150 <= c <= 250 for c in counts.values()), counts
    assert random_partner_actions(0) == acts  # deterministic given the seed
    assert random_partner_actions(1) != acts


# --------------------------------------------------------------------------- names
def test_partner_names() -> None:
    rps = MatrixConfig(game="rps")
    ibs = MatrixConfig(game="ibs")
    assert partner_names(rps) == [
        "always_0", "always_1", "always_2", "tit_for_tat", "random", "win_stay_lose_shift",
        "alternating", "fictitious_play",
    ]
    assert partner_names(ibs)[:3] == ["always_0", "always_1", "tit_for_tat"]
    assert bot_table(game="ipd").names() == partner_names(MatrixConfig(game="ipd"))
    assert bot_table(game="ibs").names() == partner_names(ibs)  # always_0, always_1 only
    assert bot_table(game="rps").populations["single_action"] == ("always_0", "always_1", "always_2")
    assert bot_table(game="ibs").populations["single_action"] == ("always_0", "always_1")
    assert bot_table(game="ibs").populations["tit_for_tat"] == ("tit_for_tat",)
    assert list(bot_table(game="ipd").populations["all"]) == partner_names(MatrixConfig(game="ipd"))
    assert bot_table(game="ibs").describe("tit_for_tat").startswith("copies")
    for g in ("rps", "ibs", "ipd"):
        cfg = MatrixConfig(game=g)
        for name in partner_names(cfg):
            p = make_partner(name, cfg)
            assert p.name == name
            assert p.description


@pytest.mark.parametrize("bad", ["nope", "always_", "always_x", "always_3", "always_01", "tit-for-tat",
                                 "Random", ""])
def test_bad_names_raise_key_error_with_the_list(bad: str) -> None:
    cfg = MatrixConfig(game="rps")
    with pytest.raises(KeyError) as err:
        make_partner(bad, cfg)
    msg = str(err.value)
    for name in partner_names(cfg):
        assert name in msg
    with pytest.raises(KeyError):
        PartnerAgent(bad, cfg)
    with pytest.raises(KeyError, match="fictitious_play"):
        bot_table(game="rps").make(bad, make_bundle(game="rps"))


def test_always_beyond_the_game_is_a_bad_name() -> None:
    # IBS has two actions: always_2 is not one of its partners
    with pytest.raises(KeyError, match="always_1"):
        make_partner("always_2", MatrixConfig(game="ibs"))
    with pytest.raises(KeyError):
        make_agent("always_2", game_spec("BattleOfSexes"))
    assert make_partner("always_2", MatrixConfig(game="rps")).name == "always_2"


@pytest.mark.parametrize("name", DETERMINISTIC)
def test_policies_are_finite_state(name: str) -> None:
    """States are hashable values and reachable states stay few (needed by the exact solver)."""
    for g in ("rps", "ibs", "ipd"):
        p = partner(name, g)
        n = p.n
        frontier = {p.initial_state()}
        seen = set(frontier)
        for _ in range(6):
            nxt = set()
            for s in frontier:
                hash(s)
                assert abs(sum(p.action_probs(s)) - 1.0) < 1e-12
                for own in range(n):
                    for other in range(n):
                        nxt.add(p.next_state(s, own, other))
            frontier = nxt - seen
            seen |= nxt
        limit = 200 if name == "fictitious_play" else n
        assert len(seen) <= limit, (name, g, len(seen))
