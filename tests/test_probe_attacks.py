"""Attacks that must fail: an agent that inspects everything it is handed cannot find a probe's
answer (issue #32: "agents receive questions, never answers").

For every game with probes, a snooping agent plays seat 0 through the episode driver. When asked,
it walks every object reachable from what it was handed (the turn and the questions: attributes,
slots, items, closures, default arguments, bound methods; module globals excepted, from which all
of a Python process is reachable) and looks for anything that carries an answer: a ``Probe``, an
``answer``/``truth``/``no_tom`` attribute or key, a game state, the env, the driver or the
tracker. It must find none, and its answers (an option named by anything it found, else the first
option) must then be no better than always answering the first option. The same walk over the
objects agents were handed before (the ``Probe`` list) finds every answer: the walk is not blind.
"""

from __future__ import annotations

import contextlib
import functools
import types
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import pytest

from tom_envs.agents import make_agent
from tom_envs.core.agents import AgentAction, BaseAgent, Turn
from tom_envs.core.probes import Probe, Question
from tom_envs.driver import EpisodeDriver
from tom_envs.registration import GAMES, game_spec

#: Attribute or key names that would carry an answer.
ANSWER_NAMES = ("answer", "truth", "no_tom", "answers")
#: Type names whose instances lead to the whole game (and so to every answer).
FORBIDDEN = ("Probe", "Minds", "PendingMinds", "EpisodeDriver", "TomAECEnv", "GameBundle")


def reachable(*roots: Any, limit: int = 500_000) -> Iterator[Any]:
    """Every object reachable from ``roots`` (see the module docstring), each once."""
    seen: set[int] = set()
    stack = list(roots)
    while stack:
        o = stack.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        if len(seen) > limit:
            raise AssertionError("the walk found too many objects: something leads everywhere")
        yield o
        if isinstance(o, (str, bytes, int, float, complex, bool, type(None), np.ndarray)):
            continue
        if isinstance(o, (types.ModuleType, type)):
            continue  # module globals and classes: code, and a path to the whole process
        if isinstance(o, Mapping):
            stack += [*o.keys(), *o.values()]
        elif isinstance(o, (list, tuple, set, frozenset)):
            stack += list(o)
        if isinstance(o, types.FunctionType):
            for cell in o.__closure__ or ():
                with contextlib.suppress(ValueError):  # an empty cell
                    stack.append(cell.cell_contents)
            stack += list(o.__defaults__ or ()) + list((o.__kwdefaults__ or {}).values())
        elif isinstance(o, types.MethodType):
            stack += [o.__self__, o.__func__]
        elif isinstance(o, functools.partial):
            stack += [o.func, *o.args, *o.keywords.values()]
        d = getattr(o, "__dict__", None)
        if isinstance(d, dict):
            stack += list(d.values())
        for cls in type(o).__mro__:
            for slot in getattr(cls, "__slots__", ()):
                if isinstance(slot, str) and hasattr(o, slot):
                    stack.append(getattr(o, slot))


def leaks(*roots: Any) -> list[str]:
    """What in the objects reachable from ``roots`` carries an answer."""
    out = []
    for o in reachable(*roots):
        name = type(o).__name__
        if name in FORBIDDEN or (
            name.endswith("State") and type(o).__module__.startswith("tom_envs.games")
        ):
            out.append(f"a {name}")
        if isinstance(o, Mapping):
            out += [f"key {k!r}" for k in ANSWER_NAMES if k in o]
        elif not isinstance(o, (type, types.ModuleType)):
            out += [f"{name}.{a}" for a in ANSWER_NAMES if hasattr(o, a)]
    return out


class Snoop(BaseAgent):
    """Plays the first legal action; answers probes from anything it can find."""

    name = "snoop"

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self.asked = 0

    def act(self, turn: Turn) -> AgentAction:
        return AgentAction(int(turn.legal_actions[int(self.rng.integers(len(turn.legal_actions)))]))

    def answer_probes(self, turn: Turn, questions: list[Question]) -> dict[str, str]:
        assert all(type(q) is Question for q in questions)
        self.asked += len(questions)
        self.found += leaks(turn, questions)
        out = {}
        for q in questions:
            named = [getattr(q, a, None) for a in ANSWER_NAMES]
            hit = next((x for x in named if x in q.options), None)
            out[q.id] = hit if hit is not None else q.options[0]
        return out


def _games_with_probes() -> list[str]:
    return [s.name for s in GAMES if s.load().make_bundle(**s.kwargs).probes is not None]


@pytest.mark.parametrize("game", _games_with_probes())
def test_nothing_an_agent_is_handed_carries_an_answer(game: str) -> None:
    spec = game_spec(game)
    n = spec.load().make_bundle(**spec.kwargs).game.num_players
    snoop = Snoop()
    partners = [make_agent("random", spec) for _ in range(n - 1)]
    ep = EpisodeDriver(spec, [snoop, *partners], seed=0, env_kwargs={"max_cycles": 6 * n}).run()
    assert snoop.asked > 0, f"{game}: no probe was asked"
    assert snoop.found == [], f"{game}: {sorted(set(snoop.found))}"
    records = [p for s in ep.steps for p in s.get("probes", ())]
    first = sum(p["truth"] == p["options"][0] for p in records)
    assert sum(p["correct"] for p in records) == first  # no better than the first option


def test_the_walk_finds_the_answers_in_what_agents_were_handed_before() -> None:
    """The control: handed the probes themselves, the same walk finds every answer."""
    spec = game_spec("BombDefusal")
    env = spec.load().raw_env()
    env.reset(seed=0)
    env.step(int(env.observe("player_0")["action_mask"].nonzero()[0][0]))
    probes = env.probes("player_0")
    assert probes and all(isinstance(p, Probe) for p in probes)
    found = leaks(probes)
    assert "a Probe" in found and "Probe.answer" in found and "Probe.no_tom" in found
    # and the game state, had a turn led back to the env (as the decision turn's parser does)
    assert any(x.endswith("State") for x in leaks(lambda: env.text_observation("player_0")))
