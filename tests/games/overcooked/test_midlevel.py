"""Mid-level actions: the vocabulary, grounding by shortest paths, completion and re-asking."""

from __future__ import annotations

import numpy as np
import pytest

from tom_envs.core.agents import BaseAgent, Turn
from tom_envs.games.overcooked.bots import StayAgent
from tom_envs.games.overcooked.kitchen import kitchen, move_away, shortest_path
from tom_envs.games.overcooked.midlevel import (
    MidAction,
    MidLevelAgent,
    MidLevelController,
    is_feasible,
    mid_level_actions,
)
from tom_envs.games.overcooked.rules import Item
from tom_envs.registration import game_spec
from tom_envs.runner import play_episode
from tom_llm_agents.fake import ScriptedClient
from tom_llm_agents.overcooked import MidLevelLLMAgent

from .helpers import game, state

N, S, E, W, STAY, INTERACT = range(6)
FAR = ((3, 2), N, 0)


def texts(g, s, player=0) -> list[str]:
    return [a.text for a in mid_level_actions(kitchen(g.layout), s, player, g.config.cooking)]


@pytest.mark.parametrize(
    ("held", "pots", "expected"),
    [
        (
            0,
            ((0, -1),),
            ["pick up onion from o0", "pick up onion from o1", "pick up plate from p0"],
        ),
        (Item.ONION, ((1, -1),), ["place onion in c0", "place onion on k2"]),
        (Item.ONION, ((3, 4),), ["place onion on k2"]),
        (Item.DISH, ((3, 4),), ["load soup on plate from c0", "place plate on k2"]),
        (Item.DISH, ((2, -1),), ["place plate on k2"]),
        (Item.SOUP_3, ((0, -1),), ["place soup for delivery in d0", "place soup on k2"]),
    ],
)
def test_options_depend_on_what_the_chef_holds(held, pots, expected) -> None:
    g = game()
    s = state(g, (((1, 2), N, held), FAR), pots)
    assert texts(g, s) == [*expected, "wait", "move away"]


def test_counters_and_interact_cooking() -> None:
    g = game(cooking="interact")
    k = g.layout.counters.index((2, 3))
    s = state(g, (((1, 2), N, 0), FAR), ((2, -1),), {k: Item.SOUP_3})
    name = next(p.name for p in kitchen(g.layout).pois.values() if p.pos == (2, 3))
    assert f"pick up soup from {name}" in texts(g, s)
    assert "start cooking c0" in texts(g, s)


def test_partitions_limit_the_options() -> None:
    g = game("forced_coordination")
    s = g.initial_state(np.random.default_rng(0))
    assert texts(g, s, 0) == ["wait", "move away"]  # Alice: no onions or plates on her side
    assert texts(g, s, 1) == [
        "pick up onion from o0", "pick up onion from o1", "pick up plate from p0", "wait",
        "move away",
    ]  # fmt: skip


def run(g, s, ctrl, partner_action=STAY, steps=40):
    """Step ``ctrl``'s chef until it needs a new choice; returns (state, steps taken)."""
    for n in range(steps):
        if ctrl.needs_choice(s):
            return s, n
        s, _, _ = g.transition(s, ctrl.primitive(s), partner_action)
    raise AssertionError("the mid-level action never ended")


def test_grounding_completes_a_pick_up() -> None:
    g = game()
    s = g.initial_state(np.random.default_rng(0))
    ctrl = MidLevelController(g.config, 0, rng=np.random.default_rng(0))
    assert ctrl.needs_choice(s) and ctrl.status == "start"
    ctrl.set(MidAction("pick_up", "onion", "o0"))
    s, n = run(g, s, ctrl)
    assert n == 3 and s.chefs[0].held == Item.ONION  # north, turn west, interact
    assert ctrl.status == "completed: pick up onion from o0"
    ctrl.set(MidAction("put_in_pot", "onion", "c0"))
    s, n = run(g, s, ctrl)
    assert s.pots == ((1, -1),) and ctrl.status.startswith("completed")


def test_load_soup_waits_next_to_the_pot_until_cooked() -> None:
    g = game()
    s = state(g, (((1, 2), N, Item.DISH), FAR), ((3, 10),))
    ctrl = MidLevelController(g.config, 0, rng=np.random.default_rng(0))
    ctrl.set(MidAction("load_soup", "soup", "c0"))
    s, n = run(g, s, ctrl)
    assert s.chefs[0].held == Item.SOUP_3 and n == 11 and s.pots == ((0, -1),)


def test_an_action_becomes_impossible() -> None:
    g = game()
    s = state(g, (((1, 1), N, Item.ONION), FAR), ((2, -1),))
    ctrl = MidLevelController(g.config, 0, rng=np.random.default_rng(0))
    ctrl.set(MidAction("put_in_pot", "onion", "c0"))
    assert not ctrl.needs_choice(s)
    filled = state(g, (((1, 1), N, Item.ONION), FAR), ((3, 1),))  # the partner filled it
    assert not is_feasible(kitchen(g.layout), filled, 0, ctrl.current)
    assert ctrl.needs_choice(filled)
    assert ctrl.status == "impossible: place onion in c0 (no longer possible)"


def test_blocked_by_a_partner_who_never_moves() -> None:
    g = game()
    s = state(g, (((1, 1), N, Item.ONION), ((2, 1), N, 0)))  # partner on the pot's only cell
    ctrl = MidLevelController(g.config, 0, patience=3, rng=np.random.default_rng(0))
    ctrl.set(MidAction("put_in_pot", "onion", "c0"))
    s, _ = run(g, s, ctrl)
    assert ctrl.status == "impossible: place onion in c0 (blocked by the partner)"
    assert s.chefs[0].held == Item.ONION


def test_wait_and_move_away_last_one_step() -> None:
    g = game()
    s = state(g, (((2, 1), N, 0), ((2, 2), N, 0)))
    ctrl = MidLevelController(g.config, 0, rng=np.random.default_rng(0))
    ctrl.set(MidAction("move_away"))
    a = ctrl.primitive(s)
    assert a in (E, W) and move_away(kitchen(g.layout), s, 0) == E  # ties: drawn, or the first
    s, _, _ = g.transition(s, a, STAY)
    assert ctrl.needs_choice(s) and ctrl.status == "completed: move away"
    ctrl.set(MidAction("wait"))
    assert ctrl.primitive(s) == STAY and ctrl.needs_choice(s)


def test_detours_go_around_the_partner() -> None:
    k = kitchen(game("coordination_ring").layout)
    path = shortest_path(k, (2, 1), frozenset({(1, 3)}), blocked=(1, 2))
    assert path == [(3, 1), (3, 2), (3, 3), (2, 3), (1, 3)]
    assert shortest_path(k, (2, 1), frozenset({(1, 3)}), blocked=None) == [(1, 1), (1, 2), (1, 3)]


class FirstOption(BaseAgent):
    """Always the first mid-level option; remembers what it was shown."""

    name = "first"

    def __init__(self) -> None:
        super().__init__()
        self.turns: list[Turn] = []

    def act(self, turn: Turn) -> int:
        self.turns.append(turn)
        assert turn.text().observation.endswith("]")  # "Available Actions: [...]"
        return 0


def test_mid_level_agent_asks_only_when_needed() -> None:
    spec = game_spec("Overcooked")
    inner = FirstOption()
    g = game()
    agent = MidLevelAgent(inner, g.config, name="first")
    ep = play_episode(spec, [agent, StayAgent()], seed=0,
                      env_kwargs={"horizon": 40})  # fmt: skip
    asked = [s for s in ep.steps if s["agent"] == "player_0" and "asked" in s["info"]]
    assert 3 <= len(asked) == len(inner.turns) < 20
    assert asked[0]["info"]["mid_level"] == "pick up onion from o0"
    assert all(s["info"].get("mid_level") for s in ep.steps if s["agent"] == "player_0")
    assert ep.metrics["mid_level_choices/player_0"] == len(asked)
    assert inner.turns[1].view.status == "completed: pick up onion from o0"


def first_available(request) -> str:
    """A scripted LLM that picks the first of the "Available Actions: [...]"."""
    prompt = request.messages[-1]["content"]
    options = prompt.split("Available Actions: [", 1)[1].split("]", 1)[0]
    return f"Explanation: first things first.\nAction: {options.split(', ')[0]}."


def test_llm_chef_plays_through_the_mid_level_prompt() -> None:
    client = ScriptedClient(first_available)
    agent = MidLevelLLMAgent(client=client, constrained=False, strategy="qa")
    spec = game_spec("Overcooked")
    ep = play_episode(spec, [agent, StayAgent()], seed=0,
                      env_kwargs={"horizon": 12})  # fmt: skip
    steps = [s for s in ep.steps if s["agent"] == "player_0"]
    assert all(s["valid"] for s in steps)
    assert steps[0]["info"]["mid_level"] == "pick up onion from o0"
    assert steps[0]["info"]["usage"]["calls"] == 1
    prompt = client.requests[0].messages[-1]["content"]
    assert "Available Actions: [pick up onion from o0" in prompt
    assert ep.metrics["usage/calls/player_0"] == len(client.requests) < 12


def test_a_person_can_play_with_mid_level_actions() -> None:
    from tom_envs.games.overcooked.midlevel import HumanChooser

    replies = iter(["fly to the moon", "2", "1"] * 50)
    shown: list[str] = []
    g = game()
    agent = MidLevelAgent(HumanChooser(read=lambda _: next(replies), write=shown.append), g.config)
    ep = play_episode(game_spec("Overcooked"), [agent, StayAgent()], seed=0,
                      env_kwargs={"horizon": 6})  # fmt: skip
    assert ep.steps[0]["info"]["mid_level"] == "pick up onion from o1"
    assert any("could not match" in line for line in shown)
    assert any(line.startswith("<Inventory>") or "<Inventory>" in line for line in shown)
