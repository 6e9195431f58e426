"""The partner zoo (tom_envs.zoo): members, seating, versions, refusals."""

from __future__ import annotations

import pytest

from tom_envs import zoo
from tom_envs.agents import make_agent
from tom_envs.registration import GAMES, game_spec


@pytest.mark.parametrize("game", [g.name for g in GAMES])
def test_every_game_has_its_bots_and_random(game: str) -> None:
    spec = game_spec(game)
    bots = spec.load().bot_table(**spec.kwargs).names()
    names = [m.name for m in zoo.members(game)]
    assert names[: len(bots)] == list(bots)
    assert "random" in names
    assert len(set(names)) == len(names)
    for m in zoo.members(game):
        assert m.description.strip(), m
        assert zoo.agent_spec(m.name, game) == m.agent_spec
        agent = make_agent(m.agent_spec, spec)  # every member seats
        assert agent is not None


def test_version_names_the_game_and_is_stable() -> None:
    v = zoo.version("Hanabi")
    assert v.startswith("Hanabi/z1-") and v == zoo.version("Hanabi")
    assert zoo.version("RockPaperScissors") != zoo.version("BattleOfSexes")


def test_unknown_members_and_games_are_refused_by_name() -> None:
    with pytest.raises(KeyError, match=r"no member .nope.*convention"):
        zoo.agent_spec("nope", "Hanabi")
    with pytest.raises(KeyError, match="zoo/nope"):
        make_agent("zoo/nope", game_spec("Hanabi"))
    with pytest.raises(ValueError, match="takes no arguments"):
        make_agent("zoo/simple:x=1", game_spec("Hanabi"))
    with pytest.raises(KeyError, match="unknown game"):
        zoo.members("Nope")
