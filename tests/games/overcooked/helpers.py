"""Hand-built states for the Overcooked tests."""

from __future__ import annotations

import numpy as np

from tom_envs.games.overcooked.layout import layout_from_rows
from tom_envs.games.overcooked.rules import (
    Chef,
    OvercookedConfig,
    OvercookedGame,
    OvercookedState,
)

#: A kitchen where both chefs can face the same counter (3, 1) and the same pot (3, 2).
FACE_TO_FACE = ("XXXXXXX", "O 1X2 D", "X  P  X", "XSXXXXX")


def game(layout: str = "cramped_room", **kwargs) -> OvercookedGame:
    """A game on a packaged layout or a layout file."""
    return OvercookedGame(OvercookedConfig(layout=layout, **kwargs))


def face_to_face_game(tmp_path, **kwargs) -> OvercookedGame:
    """A game on :data:`FACE_TO_FACE` (written to a layout file under ``tmp_path``)."""
    path = tmp_path / "face_to_face.txt"
    rows = "\n".join(f"|{r}|" for r in FACE_TO_FACE)
    path.write_text(f"name: face_to_face\ngrid:\n{rows}\n")
    layout_from_rows(FACE_TO_FACE)  # validates
    return game(str(path), **kwargs)


def state(
    g: OvercookedGame,
    chefs: tuple[tuple, tuple],
    pots: tuple[tuple[int, int], ...] | None = None,
    counters: dict[int, int] | None = None,
    timestep: int = 0,
) -> OvercookedState:
    """A state with the given chefs ``((pos, facing, held), ...)``, pots and counter items."""
    base = g.initial_state(np.random.default_rng(0))
    items = list(base.counters)
    for i, item in (counters or {}).items():
        items[i] = item
    return OvercookedState(
        timestep,
        (Chef(*chefs[0]), Chef(*chefs[1])),
        pots if pots is not None else base.pots,
        tuple(items),
    )


def self_play(layout: str, names: tuple[str, str], seed: int = 0, **kwargs) -> tuple[float, list]:
    """Play two bots on the rules engine (fast, no env); returns the score and the joint actions."""
    from tom_envs.core.agents import EpisodeInfo, Turn, as_agent_action
    from tom_envs.games.overcooked.env import bot_table, make_bundle

    bundle = make_bundle(layout=layout, **kwargs)
    g = bundle.game
    bots = [bot_table().make(n, bundle) for n in names]
    for i, b in enumerate(bots):
        b.reset(EpisodeInfo("tom_envs/Overcooked-v0", f"player_{i}", i, 2, 6, seed, (0, 40),
                            g.config.horizon))  # fmt: skip
    s = g.initial_state(np.random.default_rng(seed))
    joint = []
    while not g.is_terminal(s):
        acts = []
        for i, b in enumerate(bots):
            turn = Turn(f"player_{i}", i, g.observe(s, i), None, None, 0.0, s.timestep)  # type: ignore[arg-type]
            acts.append(int(as_agent_action(b.act(turn)).action))
        joint.append(tuple(acts))
        s, _, _ = g.transition(s, *acts)
    return s.score, joint
