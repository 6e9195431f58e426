"""Sessions and across-episode switches (:mod:`tom_envs.sessions`)."""

from __future__ import annotations

import pytest

from tom_envs.agents import make_agent
from tom_envs.core.agents import RandomAgent, SessionInfo
from tom_envs.driver import EpisodeDriver
from tom_envs.partners.switching import switch_point
from tom_envs.records import Episode
from tom_envs.registration import game_spec
from tom_envs.sessions import play_session


class Recorder(RandomAgent):
    def reset(self, info) -> None:
        super().reset(info)
        self.infos = [*getattr(self, "infos", []), info]
        self.turns = [*getattr(self, "turns", [])]

    def act(self, turn):
        self.turns.append((self.info.session.index, turn.view, turn.text().observation))
        return super().act(turn)


SEEDS = [11, 12, 13, 14, 15, 16]


def _session(partner: str):
    spec = game_spec("CollabCapture")
    focal = Recorder()
    eps = play_session(spec, [focal, make_agent(partner, spec)], SEEDS)
    return eps, focal


def test_across_episode_switch_is_invisible_and_recorded(tmp_path) -> None:
    plain, f_plain = _session("greedy")
    switched, f_sw = _session("switch:a=greedy:b=optimal:at_episode=2-4:key=3")
    at = switch_point(SEEDS[0], 3, 2, 4)
    assert [ep.switch["player_1"]["phase"] for ep in switched] == ["A"] * at + ["B"] * (6 - at)
    assert all(ep.switch["player_1"]["at_episode"] == at for ep in switched)
    assert [ep.session["index"] for ep in switched] == list(range(6))
    assert f_plain.infos == f_sw.infos  # session info included: the same for A or the switch
    before = [t for t in f_sw.turns if t[0] < at]
    assert before == [t for t in f_plain.turns if t[0] < at] and before
    # A plays the episodes before the switch exactly as A alone
    for k in range(at):
        assert [s["action"] for s in switched[k].steps] == [s["action"] for s in plain[k].steps]
    path = switched[-1].write(tmp_path / "e.jsonl")
    back = Episode.read(path)
    assert back.session == switched[-1].session and back.switch == switched[-1].switch


def test_session_switch_needs_a_session_and_good_seeds() -> None:
    spec = game_spec("CollabCapture")
    sw = make_agent("switch:a=greedy:b=optimal:at_episode=1:key=0", spec)
    with pytest.raises(ValueError, match="play_session"):
        EpisodeDriver(spec, [RandomAgent(), sw], 0).run()
    with pytest.raises(ValueError, match="must differ"):
        play_session(spec, [RandomAgent(), RandomAgent()], [1, 1])
    with pytest.raises(ValueError, match="not both"):
        make_agent("switch:a=greedy:b=optimal:at=1:at_episode=1:key=0", spec)


def test_agents_keep_their_objects_across_a_session() -> None:
    spec = game_spec("PrisonersDilemma")
    focal = Recorder()
    eps = play_session(spec, [focal, make_agent("tit_for_tat", spec)], [1, 2, 3],
                       {"horizon": 4}, session_id="demo")  # fmt: skip
    assert [i.session for i in focal.infos] == [SessionInfo("demo", k, 3, 1) for k in range(3)]
    assert [ep.seed for ep in eps] == [1, 2, 3] and all(len(ep.steps) == 8 for ep in eps)
