"""PettingZoo's own test functions on the main variants of every game (the registered defaults
are covered in tests/test_registry_api.py and tests/test_render_conversions.py).

Variants: every choice of each game's scenario-like argument (Capture/Escape scenarios and maps,
CoBlock task types, bomb-defusal maps and layouts, Guandan's language), Hanabi with 3 to 5 players,
a Guandan match, every shipped Overcooked kitchen. Episodes are cut short (``num_cycles``,
``max_cycles``) to keep the time bounded.

PettingZoo's ``max_cycles_test`` runs on the game modules where it applies: it needs a Parallel
env (sequential games have none), steps unmasked samples (games with masks refuse illegal ones:
``IllegalActionError``) and asserts the episode lasts exactly 4 cycles (a capture, an escape or a
finished CoBlock structure may end it sooner). That leaves the matrix games, Overcooked and the
Example, whose every action is always legal; tests/test_registry_api.py checks ``max_cycles``
with legal moves on every game.
"""

from __future__ import annotations

import functools
import warnings

import pettingzoo
import pytest
from pettingzoo.test import (
    api_test,
    max_cycles_test,
    parallel_api_test,
    parallel_seed_test,
    render_test,
    seed_test,
    state_test,
)

import tom_envs  # noqa: F401  (registers the ids)
from tom_envs.registration import game_spec

SCENARIO_ARGS = ("scenario", "task_type", "map", "layout", "language")


def _variants() -> list[tuple[str, dict]]:
    out: list[tuple[str, dict]] = []
    for name in ("CollabCapture", "CollabEscape", "CoBlock", "BombDefusal", "Guandan"):
        spec = game_spec(name)
        for p in spec.load().PARAMS:
            if p.name in SCENARIO_ARGS and p.type == "choice":
                out += [(name, {p.name: c}) for c in p.choices if c != p.default]
    out += [("Hanabi", {"players": n}) for n in (3, 4, 5)]
    out.append(("Guandan", {"match": True}))
    layouts = next(p for p in game_spec("Overcooked").load().PARAMS if p.name == "layout")
    out += [
        ("Overcooked", {"layout": lay}) for lay in layouts.http_choices if lay != "cramped_room"
    ]
    return out


VARIANTS = _variants()
IDS = [f"{g}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for g, kw in VARIANTS]


def _aec(game: str, kw: dict, **extra):
    return pettingzoo.make("aec", game_spec(game).id, **kw, **extra)


@pytest.mark.parametrize(("game", "kw"), VARIANTS, ids=IDS)
def test_pettingzoo_tests_on_a_variant(game: str, kw: dict, capsys) -> None:
    spec = game_spec(game)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PettingZoo's advice (Dict spaces, ...) is not a finding
        api_test(_aec(game, kw), num_cycles=60)
        seed_test(functools.partial(_aec, game, kw), num_cycles=60)
        render_test(
            lambda render_mode=None: _aec(game, kw, render_mode=render_mode, max_cycles=2),
            custom_tests={"ansi": lambda res: isinstance(res, str) and bool(res)},
        )
        if spec.parallel:
            par = functools.partial(pettingzoo.make, "parallel", spec.id, **kw)
            parallel_api_test(par(), num_cycles=60)
            parallel_seed_test(par, num_cycles=60)
            state_test(_aec(game, kw), par(), num_cycles=30)
    capsys.readouterr()  # "human" prints boards where there is no display


def test_the_variants_cover_every_game_with_options() -> None:
    assert {g for g, _ in VARIANTS} == {
        "CollabCapture", "CollabEscape", "CoBlock", "BombDefusal", "Guandan", "Hanabi", "Overcooked"
    }  # fmt: skip
    assert len(VARIANTS) >= 15


@pytest.mark.parametrize("game", ["PrisonersDilemma", "Overcooked", "Example"])
def test_pettingzoo_max_cycles_test(game: str) -> None:
    module = game_spec(game).load()  # the matrix module serves all three matrix games
    env = module.parallel_env()
    observations, _ = env.reset(seed=0)
    assert all(o["action_mask"].all() for o in observations.values())  # every action legal
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        max_cycles_test(module)
