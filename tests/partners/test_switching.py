"""The switching partner (:mod:`tom_envs.partners.switching`): invisible to the other seats,
B's memory current at the switch, the switch point determined by the seed and the key, recorded
for the scorer."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from tom_envs.agents import make_agent
from tom_envs.core.agents import RandomAgent
from tom_envs.core.trust import NotAllowed
from tom_envs.driver import EpisodeDriver
from tom_envs.partners.switching import SwitchingAgent, parse_at, switch_point
from tom_envs.records import Episode
from tom_envs.registration import game_spec

#: per game: (A, B, at) with the switch reached in a short episode
PAIRS = {
    "PrisonersDilemma": ("tit_for_tat", "always_1", "5-9"),
    "RockPaperScissors": ("alternating", "win_stay_lose_shift", "3-6"),
    "BattleOfSexes": ("always_0", "tit_for_tat", "4-8"),
    "BombDefusal": ("heuristic", "random", "3-6"),
    "CollabCapture": ("greedy", "optimal", "1-2"),
    "CollabEscape": ("greedy", "optimal", "1-2"),
    "Hanabi": ("simple", "convention", "3-6"),
    "Guandan": ("bestp_lowv", "heuristic", "2-4"),
    "CoBlock": ("cooperative", "egoist", "2-4"),
    "Overcooked": ("greedy", "role_onions", "20-40"),
    "Example": ("copycat", "stubborn", "1-2"),
}
KWARGS = {"Overcooked": {"horizon": 80}}
SEEDS = (0, 1, 2)


class Recorder(RandomAgent):
    """A random focal that records everything it is shown."""

    def reset(self, info) -> None:
        super().reset(info)
        self.seen_info = info
        self.turns: list[tuple] = []

    def act(self, turn):
        self.turns.append((turn.view, turn.observation.tobytes(), turn.action_mask.tobytes(),
                           turn.text().observation, tuple(turn.text().legal_actions.items())))  # fmt: skip
        return super().act(turn)


def _play(game: str, partner: str, seed: int) -> tuple[Episode, Recorder, list]:
    spec = game_spec(game)
    n = len(spec.load().raw_env(**spec.kwargs).possible_agents)
    focal = Recorder()
    a = PAIRS[game][0]
    seats = [focal, make_agent(partner, spec)] + [make_agent(a, spec) for _ in range(n - 2)]
    ep = EpisodeDriver(spec, seats, seed, KWARGS.get(game)).run()
    return ep, focal, seats


@pytest.mark.parametrize("game", sorted(PAIRS))
def test_switch_is_invisible_to_the_focal(game: str) -> None:
    a, b, at = PAIRS[game]
    spec = f"switch:a={a}:b={b}:at={at}:key=1"
    for seed in SEEDS:
        plain, f_plain, _ = _play(game, a, seed)
        switched, f_sw, seats = _play(game, spec, seed)
        sw = seats[1]
        assert isinstance(sw, SwitchingAgent)
        info = switched.switch["player_1"]
        lo, hi = parse_at(at)
        assert lo <= info["at_decision"] <= hi and info["from"] == a and info["to"] == b
        assert info["decisions"] > info["at_decision"], "the switch was not reached"
        assert f_plain.seen_info == f_sw.seen_info
        # every focal decision made before B's first move was applied sees exactly the same
        first_b = [s for s in switched.steps if s["agent"] == "player_1"][info["at_decision"]]
        assert first_b["joint_step"] == info["at_joint_step"]
        before = sum(1 for s in switched.steps[: first_b["index"] + 1] if s["agent"] == "player_0")
        assert before >= 1
        for k in range(before):
            assert f_plain.turns[k][0] == f_sw.turns[k][0], f"{game} seed {seed}: view {k}"
            assert f_plain.turns[k][1:] == f_sw.turns[k][1:], f"{game} seed {seed}: turn {k}"
        # the partner's record carries nothing that tells the switch (same keys as A's)
        plain_keys = {k for s in plain.steps if s["agent"] == "player_1" for k in s}
        sw_keys = {k for s in switched.steps if s["agent"] == "player_1" for k in s}
        assert sw_keys <= plain_keys | {"message"}
        assert not plain.switch


@pytest.mark.parametrize("game", sorted(PAIRS))
def test_shadow_b_acts_as_a_b_fed_the_same_turns(game: str) -> None:
    """After the switch, B plays exactly what a fresh B shown the same turns from the start
    plays: its memory was kept current in shadow."""
    a, b, at = PAIRS[game]
    spec = game_spec(game)
    for seed in SEEDS[:2]:
        sw = make_agent(f"switch:a={a}:b={b}:at={at}:key=2", spec)
        turns = []
        act = sw.act
        sw.act = lambda t, act=act, turns=turns: (turns.append(t), act(t))[1]  # type: ignore[method-assign]
        n = len(spec.load().raw_env(**spec.kwargs).possible_agents)
        seats = [RandomAgent(), sw] + [make_agent(a, spec) for _ in range(n - 2)]
        ep = EpisodeDriver(spec, seats, seed, KWARGS.get(game)).run()
        played = [s["action"] for s in ep.steps if s["agent"] == "player_1"]
        fresh = make_agent(b, spec)
        fresh.reset(sw.info)
        from tom_envs.core.agents import as_agent_action

        replayed = [as_agent_action(fresh.act(t)).action for t in turns]
        at_d = sw.at_decision
        assert played[at_d:] == replayed[at_d:], f"{game} seed {seed}"
        assert played[at_d:], "no decision after the switch"


def test_matrix_shadow_state_equals_b_played_along() -> None:
    spec = game_spec("RockPaperScissors")
    sw = make_agent("switch:a=alternating:b=fictitious_play:at=10-20:key=0", spec)
    turns = []
    act = sw.act
    sw.act = lambda t: (turns.append(t), act(t))[1]  # type: ignore[method-assign]
    ep = EpisodeDriver(spec, [RandomAgent(), sw], 4).run()
    at = ep.switch["player_1"]["at_decision"]
    fresh = make_agent("fictitious_play", spec)
    fresh.reset(sw.info)
    for t in turns[:at]:
        fresh.act(t)
    # the shadow's state after the same number of turns (rebuilt: replay into a second shadow)
    shadow = make_agent("switch:a=alternating:b=fictitious_play:at=10-20:key=0", spec)
    shadow.reset(sw.info)
    for t in turns[:at]:
        shadow.act(t)
    assert shadow.phase == "B" and shadow.b.state == fresh.state
    assert shadow.b.rounds_seen == fresh.rounds_seen == at - 1


def test_switch_point_is_determined_by_seed_and_key() -> None:
    points = [switch_point(s, 1, 30, 60) for s in range(2000)]
    assert points == [switch_point(s, 1, 30, 60) for s in range(2000)]
    assert min(points) == 30 and max(points) == 60
    counts = Counter(points)
    assert len(counts) == 31 and max(counts.values()) < 2 * 2000 / 31  # roughly uniform
    other = [switch_point(s, 2, 30, 60) for s in range(2000)]
    assert np.mean(np.asarray(points) == np.asarray(other)) < 0.1
    assert switch_point(7, 0, 45, 45) == 45
    spec = game_spec("PrisonersDilemma")
    eps = [
        EpisodeDriver(spec, [RandomAgent(), make_agent(
            "switch:a=tit_for_tat:b=always_0:at=30-60:key=1", spec)], 9).run()
        for _ in range(2)
    ]  # fmt: skip
    assert eps[0].switch == eps[1].switch
    assert [s["action"] for s in eps[0].steps] == [s["action"] for s in eps[1].steps]
    assert eps[0].switch["player_1"]["at_decision"] == switch_point(9, 1, 30, 60)


def test_switch_round_trips_through_the_trajectory(tmp_path) -> None:
    spec = game_spec("PrisonersDilemma")
    ep = EpisodeDriver(spec, [RandomAgent(), make_agent(
        "switch:a=tit_for_tat:b=always_0:at=5:key=0", spec)], 1).run()  # fmt: skip
    path = ep.write(tmp_path / "ep.jsonl")
    back = Episode.read(path)
    assert back.switch == ep.switch and back.digest_ok
    assert back.switch["player_1"]["at_decision"] == 5


@pytest.mark.parametrize(
    ("spec", "error"),
    [
        ("switch:a=tit_for_tat:b=always_0:key=1", "missing"),
        ("switch:a=tit_for_tat:b=always_0:at=60-30:key=1", "LO <= HI"),
        ("switch:a=tit_for_tat:b=always_0:at=x:key=1", "N or LO-HI"),
        ("switch:a=tit_for_tat:b=always_0:at=3:key=-1", "key"),
        ("switch:a=tit_for_tat:b=always_0:at=3:key=1:speed=2", "unknown options"),
        ("switch:a=tit_for_tat:b=nobody:at=3:key=1", "unknown agent"),
    ],
)
def test_bad_switch_specs_name_the_problem(spec: str, error: str) -> None:
    with pytest.raises((ValueError, KeyError), match=error):
        make_agent(spec, game_spec("PrisonersDilemma"))


def test_untrusted_switch_cannot_name_code() -> None:
    with pytest.raises((NotAllowed, KeyError, ValueError)):
        make_agent("switch:a=os.path:b=always_0:at=3:key=1", game_spec("PrisonersDilemma"))


def test_shadow_bomb_heuristic_forgets_the_messages_it_never_sent() -> None:
    """B's dropped messages are forgotten (``on_shadow_message_dropped``): at the switch it
    believes it has told the team nothing, so it reports once it plays; A's, sent, stay said."""
    spec = game_spec("BombDefusal")
    sw = make_agent("switch:a=heuristic:b=heuristic:at=4:key=0", spec)
    turns = []
    act = sw.act
    sw.act = lambda t: (turns.append(t), act(t))[1]  # type: ignore[method-assign]
    ep = EpisodeDriver(spec, [RandomAgent(), sw, make_agent("heuristic", spec)], 0).run()
    mine = [s for s in ep.steps if s["agent"] == "player_1"]
    assert mine[0].get("message") and mine[4].get("message")
    again = make_agent("switch:a=heuristic:b=heuristic:at=4:key=0", spec)
    again.reset(sw.info)
    for t in turns[:4]:
        again.act(t)
    assert again.phase == "B" and again.b.said == set() and again.a.said
