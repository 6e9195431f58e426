"""Declared game arguments (tom_envs/core/params.py): strict parsing, bounds, every game's table."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from tom_envs.core.params import Param, params_table, validate_kwargs
from tom_envs.registration import GAMES, game_spec

INT = Param("n", "int", 3, "a count", low=1, high=10)
FLOAT = Param("p", "float", 0.5, "a probability", low=0.0, high=1.0)
BOOL = Param("flag", "bool", False, "a switch")
CHOICE = Param("mode", "choice", "a", "a mode", choices=("a", "b"))
LIST = Param("sizes", "int_list", (1, 2), "sizes", low=1, high=5, min_len=2, max_len=3)
NAMES = Param("names", "str_list", ("x", "y"), "names", min_len=2, max_len=2, item_len=8)
OPT = Param("w", "int", None, "a window", low=0, high=9, optional=True)
ALL = (INT, FLOAT, BOOL, CHOICE, LIST, NAMES, OPT)


@pytest.mark.parametrize(
    ("param", "value", "parsed"),
    [
        (INT, 4, 4), (INT, "7", 7), (INT, " 10 ", 10),
        (FLOAT, 1, 1.0), (FLOAT, "0.25", 0.25),
        (BOOL, True, True), (BOOL, "false", False), (BOOL, "TRUE", True),
        (CHOICE, "b", "b"),
        (LIST, [1, 5], (1, 5)), (LIST, "2,3,4", (2, 3, 4)), (LIST, (1, 1), (1, 1)),
        (NAMES, "Ann,Bo", ("Ann", "Bo")), (NAMES, ["A", "B"], ("A", "B")),  # items: 1+ chars
        (OPT, None, None), (OPT, "none", None), (OPT, 0, 0),
    ],
)  # fmt: skip
def test_good_values_parse(param: Param, value: object, parsed: object) -> None:
    assert validate_kwargs(ALL, {param.name: value}) == {param.name: parsed}
    out = validate_kwargs(ALL, {param.name: value}, source="http")[param.name]
    assert out == parsed and type(out) is type(parsed)


@pytest.mark.parametrize(
    ("param", "value"),
    [
        (INT, 1.5), (INT, 3.0), (INT, "1e9"), (INT, "1.0"), (INT, True), (INT, 0), (INT, 11),
        (INT, 10**30), (INT, "ten"), (INT, None), (INT, [3]),
        (FLOAT, float("nan")), (FLOAT, "inf"), (FLOAT, -0.1), (FLOAT, 1.01), (FLOAT, True),
        (BOOL, 1), (BOOL, 0), (BOOL, "yes"), (BOOL, "1"), (BOOL, "false "[:0]), (BOOL, None),
        (CHOICE, "A"), (CHOICE, "c"), (CHOICE, 1),
        (LIST, [1]), (LIST, [1, 2, 3, 4]), (LIST, [1, 6]), (LIST, [1, 2.5]), (LIST, 3),
        (NAMES, ["x"]), (NAMES, ["x", "y" * 9]), (NAMES, ["x", "a\x00b"]), (NAMES, ["x", 3]),
        (OPT, -1), (OPT, "None "),
    ],
)  # fmt: skip
def test_bad_values_name_the_argument_and_what_is_allowed(param: Param, value: object) -> None:
    with pytest.raises(ValueError, match=f"argument '{param.name}'.*allowed: ") as exc:
        validate_kwargs(ALL, {param.name: value})
    assert "Traceback" not in str(exc.value)


def test_unknown_keys_list_the_allowed_names() -> None:
    with pytest.raises(ValueError, match="unknown game argument 'horizn'; allowed: flag, mode, n"):
        validate_kwargs(ALL, {"horizn": 3})
    obj = Param("task", "object", None, "an injected object", optional=True)
    marker = object()
    assert validate_kwargs((obj,), {"task": marker})["task"] is marker
    with pytest.raises(ValueError, match="unknown game argument 'task'"):
        validate_kwargs((obj,), {"task": {"name": "x"}}, source="http")


def test_params_table_has_one_row_per_argument() -> None:
    table = params_table(ALL).splitlines()
    assert table[0].startswith("| argument | type | default | allowed |")
    assert len(table) == 2 + len(ALL)
    assert "`n` | int | `3` | integer in [1, 10] | a count" in table[2]
    assert "true or false" in table[4] and "or none" in table[-1]


def _config_of(spec):
    return spec.load().make_bundle(**spec.kwargs).game.config


@pytest.mark.parametrize("spec", GAMES, ids=lambda g: g.name)
def test_every_game_declares_exactly_its_config_fields(spec) -> None:
    params = spec.load().PARAMS
    cfg = _config_of(spec)
    fields = {f.name: f for f in dataclasses.fields(cfg) if f.init}
    assert [p.name for p in params] == list(fields)  # the same arguments, in the same order
    for p in params:
        f = fields[p.name]
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        if p.name not in spec.kwargs:
            assert p.default == default, p.name
        # every declared default passes its own declaration
        assert validate_kwargs(params, {p.name: p.default})
        # every number has an upper bound (memory and time stay bounded)
        if p.type in ("int", "float", "int_list"):
            assert p.high is not None, p.name
        if p.type.endswith("_list") or p.type == "str_lists":
            assert p.max_len is not None, p.name
    assert "| argument |" in params_table(params)


# The examples: each must fail at construction naming the argument.
BAD = [
    ("RockPaperScissors", {"horizon": 10**9}, "horizon"),
    ("RockPaperScissors", {"horizon": "1e9"}, "horizon"),
    ("RockPaperScissors", {"horizon": 1.5}, "horizon"),
    ("RockPaperScissors", {"window": "2"}, None),
    ("Guandan", {"match": "yes"}, "match"),
    ("Guandan", {"match": 1}, "match"),
    ("CoBlock", {"max_inventory": 0}, "max_inventory"),
    ("CoBlock", {"max_inventory": -1}, "max_inventory"),
    ("CoBlock", {"grid": [400, 400, 400]}, "grid"),
    ("CoBlock", {"grid": "6,5"}, "grid"),
    ("Hanabi", {"players": 6}, "players"),
    ("Hanabi", {"names": ["A"] * 50}, "names"),
    ("BombDefusal", {"num_rooms": 10**6}, "num_rooms"),
    ("BombDefusal", {"extra_edge_prob": "nan"}, "extra_edge_prob"),
    ("Overcooked", {"horizon": -1}, "horizon"),
    ("Overcooked", {"layuot": "cramped_room"}, "layuot"),
    ("CollabCapture", {"doors_open": [1, 0]}, "doors_open"),
    ("CollabEscape", {"max_turns": 10**7}, "max_turns"),
    # issue #31: arguments that pass their own declaration but not together, and objects
    ("CollabEscape", {"starts": [1, 1, 1]}, "starts"),
    ("BombDefusal", {"num_agents": 1}, "num_agents"),
    ("BombDefusal", {"colors": list("abcdefgh")}, "colors"),  # 3 agents hold 6 colours
    ("CoBlock", {"task": "junk"}, "task"),
    ("CoBlock", {"task": {"target": []}}, "task"),
]


@pytest.mark.parametrize(("game", "kwargs", "name"), BAD, ids=[f"{g}-{k}" for g, k, _ in BAD])
def test_bad_game_arguments_fail_at_construction(game: str, kwargs: dict, name: str | None) -> None:
    make_bundle = game_spec(game).load().make_bundle
    if name is None:  # a decimal string is an integer (the command line may give one)
        assert make_bundle(**kwargs).game.config.window == 2
        return
    with pytest.raises(ValueError, match=f"'{name}'"):
        make_bundle(**kwargs)


def test_guandan_match_false_is_false() -> None:
    """The issue: ``match="false"`` used to play a whole match (any truthy value counted)."""
    make_bundle = game_spec("Guandan").load().make_bundle
    assert make_bundle(match="false").game.config.match is False
    assert make_bundle(match="true").game.config.match is True


def test_overcooked_layout_paths_python_only(tmp_path: Path) -> None:
    module = game_spec("Overcooked").load()
    shipped = Path(module.__file__).parent / "layouts" / "cramped_room.txt"
    copy = tmp_path / "mine.txt"
    copy.write_text(shipped.read_text())
    assert module.make_bundle(layout=str(copy)).game.config.layout == str(copy)  # Python: a path
    with pytest.raises(ValueError, match=r"argument 'layout'.*over HTTP only 'cramped_room'"):
        validate_kwargs(module.PARAMS, {"layout": str(copy)}, source="http")
    assert validate_kwargs(module.PARAMS, {"layout": "counter_circuit"}, source="http")


def _bad_values(p: Param) -> list[object]:
    """Values ``p`` must refuse: wrong types, out of range, None, huge, negative, odd strings."""
    bad: list[object] = [[[1]], {"a": 1}, object()]
    if not p.optional:
        bad.append(None)
    t = p.type
    if t in ("int", "float"):
        bad += ["abc", "", True, [1], 10**30, "1" * 400]
        if p.low is not None:
            bad += [p.low - 1, -(10**9), str(int(p.low) - 1)]
        if p.high is not None:
            bad += [p.high + 1, 10**12, str(int(p.high) + 1)]
        bad += [1.5] if t == "int" else [float("nan"), float("inf"), "nan"]
    elif t == "bool":
        bad += [1, 0, "yes", "1", "0", "", "false!", 2.0, [True]]
    elif t == "choice":
        bad += ["not-a-choice", 3, "", "x" * 10_000, "a\x00b", True]
    elif t == "str":
        bad += [3, True, [1], "x" * 10_000, "a\x00b"]
    elif t in ("int_list", "bool_list", "str_list"):
        bad += [3, True, ["x" * 10_000], [None]]
        if p.max_len is not None:
            bad.append(["1"] * (p.max_len + 1))
        if t == "int_list":
            bad += [[1.5], ["abc"], [10**30], [-(10**9)]]
    elif t == "str_lists":
        bad += [3, [[3]], [["x" * 10_000]], [[]]]
    elif t == "object":  # anything that is not an instance of the declared classes
        bad += ["junk", "", 0, 3, 1.5, True, [1], (1, 2), b"x", {"target": []}]
    return bad


FUZZ = [(spec, p) for spec in GAMES for p in spec.load().PARAMS if p.name not in spec.fixed]


def test_every_object_argument_declares_its_class() -> None:
    """An ``object`` argument names the classes it accepts, so a wrong object is refused at
    construction (CoBlock's ``task="junk"`` used to fail later with an AttributeError)."""
    objects = [(s.name, p.name) for s, p in FUZZ if p.type == "object"]
    assert objects == [("CoBlock", "task")]
    assert all(p.instance_of for _, p in FUZZ if p.type == "object")


@pytest.mark.parametrize(("spec", "param"), FUZZ, ids=[f"{s.name}-{p.name}" for s, p in FUZZ])
def test_every_declared_argument_refuses_bad_values_naming_itself(spec, param: Param) -> None:
    """Every game, every declared argument: each bad value is refused at construction with an
    error naming the argument (never accepted, never a crash deeper in the game)."""
    make_bundle = spec.load().make_bundle
    for value in _bad_values(param):
        with pytest.raises((ValueError, TypeError), match=f"'{param.name}'"):
            make_bundle(**{**spec.kwargs, param.name: value})
        with pytest.raises(ValueError, match=f"'{param.name}'"):  # and the same over HTTP
            validate_kwargs(spec.load().PARAMS, {param.name: value}, source="http")


@pytest.mark.parametrize("spec", GAMES, ids=lambda g: g.name)
def test_max_cycles_is_checked_by_every_game(spec) -> None:
    module = spec.load()
    for bad in (0, -1, 1.5, "x", True, 10**30):
        with pytest.raises(ValueError, match="'max_cycles'"):
            module.raw_env(max_cycles=bad, **spec.kwargs)
        if spec.parallel:
            with pytest.raises(ValueError, match="'max_cycles'"):
                module.parallel_env(max_cycles=bad, **spec.kwargs)
    assert module.raw_env(max_cycles="3", **spec.kwargs).max_cycles == 3  # as --kw gives it


def test_coblock_inventory_bounds() -> None:
    """The issue: max_inventory=0 divided by zero mid-episode and -1 left the observation space."""
    make_bundle = game_spec("CoBlock").load().make_bundle
    for bad in (0, -1, "0"):
        with pytest.raises(ValueError, match=r"argument 'max_inventory'.*allowed: integer in \[1,"):
            make_bundle(max_inventory=bad)


def _edge_values(p: Param) -> list[object]:
    """Each declared bound and choice: values a game must accept and play (or refuse as a
    combination, naming the argument)."""
    if p.type in ("int", "float"):
        cast = int if p.type == "int" else float
        return [cast(b) for b in (p.low, p.high) if b is not None]
    if p.type == "bool":
        return [True, False]
    return list(p.choices) if p.type == "choice" else []


EDGES = [(spec, p) for spec, p in FUZZ if _edge_values(p)]
#: Bounds refused only in combination with other defaults, and what their error names instead:
#: one bomb-defusal agent holds two of the three default colours (give it ``tools=``).
COMBINATIONS = {("BombDefusal", "num_agents"): "no agent holds a ['blue'] tool"}


@pytest.mark.parametrize(("spec", "param"), EDGES, ids=[f"{s.name}-{p.name}" for s, p in EDGES])
def test_every_declared_bound_plays_with_observations_in_the_space(spec, param: Param) -> None:
    """The issue's mid-episode crashes (CoBlock max_inventory=0) and observations outside the
    space (max_inventory=-1): at every accepted extreme a game plays three cycles inside its
    declared spaces, or refuses the combination at construction."""
    module = spec.load()
    for value in _edge_values(param):
        try:
            env = module.raw_env(max_cycles=3, **{**spec.kwargs, param.name: value})
        except ValueError as exc:  # a combination (action_names='rps' in the Prisoner's Dilemma)
            assert COMBINATIONS.get((spec.name, param.name), param.name) in str(exc), exc
            continue
        env.reset(seed=0)
        rng = np.random.default_rng(0)
        for agent in env.agent_iter(10_000):
            obs, _, term, trunc, _ = env.last()
            assert env.observation_space(agent).contains(obs), (param.name, value, agent)
            env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        assert not env.agents, (param.name, value)


@pytest.mark.parametrize(("given", "match"), [("false", False), ("True", True), (False, False)])
def test_gymnasium_make_reads_game_booleans_strictly(given, match) -> None:
    """``gymnasium.make(..., match="false")`` plays one deal; a truthy non-boolean is refused."""
    import gymnasium

    env = gymnasium.make("tom_envs/GuandanVsRandom-v0", match=given)
    assert env.unwrapped.bundle.game.config.match is match
    with pytest.raises(ValueError, match=r"argument 'match'.*true or false"):
        gymnasium.make("tom_envs/GuandanVsRandom-v0", match="yes")
