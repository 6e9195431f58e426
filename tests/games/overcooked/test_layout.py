"""Layout files: the packaged grids are overcooked-ai 1.1.0's, the parser is safe and strict."""

from __future__ import annotations

import pytest

from tom_envs.games.overcooked.layout import (
    LAYOUT_NAMES,
    LayoutError,
    builtin_layout,
    layout_from_rows,
    load_layout,
    parse_layout,
)

#: overcooked-ai 1.1.0's grids (data/layouts/<source>.layout, rows stripped as it strips them).
OVERCOOKED_AI_GRIDS = {
    "cramped_room": ("XXPXX", "O  2O", "X1  X", "XDXSX"),
    "asymmetric_advantages": ("XXXXXXXXX", "O XSXOX S", "X   P 1 X", "X2  P   X", "XXXDXDXXX"),
    "coordination_ring": ("XXXPX", "X 1 P", "D2X X", "O   X", "XOSXX"),
    "forced_coordination": ("XXXPX", "O X1P", "O2X X", "D X X", "XXXSX"),
    "counter_circuit_o_1order": ("XXXPPXXX", "X  2   X", "D XXXX S", "X  1   X", "XXXOOXXX"),
}


@pytest.mark.parametrize("name", LAYOUT_NAMES)
def test_packaged_layouts_are_overcooked_ai_grids(name: str) -> None:
    layout = builtin_layout(name)
    rows = OVERCOOKED_AI_GRIDS[layout.source]
    assert layout == layout_from_rows(rows, name, layout.title, layout.description, layout.source)
    assert layout.title and layout.description
    assert layout.width == len(rows[0]) and layout.height == len(rows)


def test_points_of_interest_use_the_papers_names() -> None:
    fc = builtin_layout("forced_coordination").tables
    assert [p.name for p in fc.pois] == [
        "o0", "o1", "p0", "c0", "c1", "d0", "s0", "s1", "s2", "k0", "k1", "k2", "k3",
    ]  # fmt: skip
    assert [fc.poi[f"s{i}"].pos for i in range(3)] == [(2, 1), (2, 2), (2, 3)]
    assert fc.poi["c1"].access == (((3, 1), 2),)  # stand on (3, 1), face east
    assert len(set(fc.region.values())) == 2
    cr = builtin_layout("cramped_room").tables
    assert not [p for p in cr.pois if p.name.startswith("s")]  # one partition: no shared counter
    assert cr.poi["c0"].access == (((2, 1), 0),)


def test_move_and_front_tables() -> None:
    t = builtin_layout("cramped_room").tables
    assert t.move[((1, 2), 0)] == (1, 1)  # north onto floor
    assert t.move[((1, 2), 3)] == (1, 2)  # west into a counter: stays
    kind, index = t.front[((2, 1), 0)]
    assert (kind, index) == (2, 0)  # FACE_POT, pot 0


GOOD = """# a comment
name: tiny
title: Tiny Kitchen
description: A made-up kitchen
  continued on a second line.
grid:
|XPXXX|
|O1 2D|
|XXSXX|
"""


def test_parser_reads_header_and_grid() -> None:
    layout = parse_layout(GOOD, "tiny.txt")
    assert layout.name == "tiny" and layout.title == "Tiny Kitchen"
    assert layout.description == "A made-up kitchen continued on a second line."
    assert layout.grid == ("XPXXX", "O   D", "XXSXX")
    assert layout.starts == ((1, 1), (3, 1))


def test_parser_accepts_rows_without_bars(tmp_path) -> None:
    path = tmp_path / "bare.txt"
    path.write_text("grid:\nXPXXX\nO1 2D\nXXSXX\n")
    layout = load_layout(str(path))
    assert layout.name == "bare" and layout.grid[1] == "O   D"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name: x\n", "no 'grid:'"),
        ("colour: red\ngrid:\n|XPXXX|\n|O1 2D|\n|XXSXX|\n", "unknown keys"),
        ("name: a\nname: b\ngrid:\n|XPX|\n", "duplicate key"),
        ("grid: XPX\n", "starts on the line after"),
        ("this is not a key\n", "expected 'key: value'"),
        ("grid:\n|XPXXX|\n|O1 2D\n|XXSXX|\n", "must end with '|'"),
        ("grid:\n|XPXXX|\n|O1 2D|\n|XXSX|\n", "rows must align"),
        ("grid:\n|XPXXX|\n|O12ZD|\n|XXSXX|\n", "unknown grid character"),
        ("grid:\n|XPXXX|\n|O1 2T|\n|XXSXX|\n", "tomato"),
        ("grid:\n|XPXXX|\n|O1  D|\n|XXSXX|\n", "start cells 1 and 2"),
        ("grid:\n|XPXXX|\n|O1 3D|\n|XXSXX|\n", "only 1 and 2"),
        ("grid:\n|XXXXX|\n|O1 2D|\n|XXSXX|\n", "no pot"),
        ("grid:\n|XPXXX|\n| 1 2D|\n|XXSXX|\n", "closed"),
    ],
)
def test_parser_rejects_bad_files_with_a_reason(text: str, message: str) -> None:
    with pytest.raises(LayoutError, match=message):
        parse_layout(text)


def test_parser_never_evaluates_values() -> None:
    text = GOOD.replace("Tiny Kitchen", "__import__('os').system('false')")
    layout = parse_layout(text)
    assert layout.title == "__import__('os').system('false')"


def test_unknown_layout_names_say_what_exists() -> None:
    with pytest.raises(LayoutError, match="cramped_room"):
        load_layout("no_such_kitchen")
