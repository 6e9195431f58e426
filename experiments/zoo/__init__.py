"""The suite's learned partners for the partner zoo (:mod:`tom_envs.zoo`, issue #35).

Self-play policies trained with the suite's own commands on the batched engines, with different
seeds (each seed settles on its own arbitrary conventions), shipped as small actor-only
checkpoints under ``experiments/zoo/data/<Game>/`` beside one manifest per game, ``zoo.json``::

    {"game": "Overcooked", "format": 1,
     "env_kwargs": {"layout": "cramped_room", "observation": "features"},   # the game they play
     "members": [{"name": "mappo_s0", "kind": "checkpoint", "file": "mappo_s0.pt",
                  "sha256": "...", "bytes": 61234,
                  "description": "...",            # generated from its play (describe.py)
                  "train": {"command": "tom-envs train mappo Overcooked ... --seed 0",
                            "seed": 0, "steps": 1000000, "wall_s": ..., "cpu_s": ...,
                            "final_return": ..., "curve": "mappo_s0_curve.csv"}}]}

:func:`members` is the entry point of the group ``tom_envs.zoo`` (``suite`` in pyproject), so
``tom_envs.zoo.members("Overcooked")`` lists these after the game's rule bots, seated as
``zoo/mappo_s0``. A member's file is checked against the manifest's SHA-256 before it plays
(:func:`tom_envs.zoo.make_member`: before loading, and again on the bytes the checkpoint loader
read): an edited or replaced file is refused with an error naming it. A learned member plays only the game
it was trained on (``env_kwargs``; the checkpoint refuses another).

Commands (``tom-envs zoo ...``, or ``python -m tom_experiments.zoo ...``): ``list GAME``,
``describe GAME``, ``crossplay GAME`` (the cross-play matrix with 95% intervals, the evidence
that the members differ), ``build GAME`` (turns finished training runs into the shipped files),
``page GAME --crossplay FILE`` (the game's section of ``docs/results/zoo.md``), ``br GAME PARTNER``
(train and ship a best response to one fixed partner, a lower bound:
:mod:`tom_experiments.zoo.br`, manifests ``data/<Game>/br.json``) and ``br-table``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tom_envs.zoo import Member

#: Where the shipped checkpoints and manifests live (package data).
DATA = Path(__file__).resolve().parent / "data"
#: The manifest's name inside ``data/<Game>/``.
MANIFEST = "zoo.json"
#: Bumped when the manifest's layout changes.
FORMAT = 1


class ZooDataError(ValueError):
    """A manifest that cannot be read, or a member whose file is missing."""


def manifest_path(game: str) -> Path:
    """``data/<Game>/zoo.json`` (``game`` is the registered game name)."""
    return DATA / game / MANIFEST


def read_manifest(path: Path, game: str, what: str = "zoo manifest") -> dict[str, Any] | None:
    """A shipped manifest (``what``: how errors name it) of ``game``, or ``None`` when the file is
    absent; :class:`ZooDataError` when it cannot be read or is not this format's for ``game``."""
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ZooDataError(f"{what} {path} cannot be read: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("game") != game:
        raise ZooDataError(f"{what} {path}: expected format {FORMAT} for game {game!r}")
    return data


def load_manifest(game: str) -> dict[str, Any] | None:
    """The manifest of ``game``, or ``None`` when the suite ships no learned member for it."""
    return read_manifest(manifest_path(game), game)


def env_kwargs(game: str) -> dict[str, Any]:
    """The game arguments the learned members of ``game`` were trained on (``{}`` if none)."""
    data = load_manifest(game)
    return dict(data.get("env_kwargs", {})) if data else {}


def members(game: str) -> list[Member]:
    """The learned members of ``game`` (the ``tom_envs.zoo`` entry point); ``[]`` when none.

    Each is seated by the trusted spec ``checkpoint:path=<its file>``; its SHA-256 comes from the
    manifest and is checked against the bytes loaded before it plays.
    """
    from tom_envs.registration import game_spec

    name = game_spec(game).name
    data = load_manifest(name)
    if data is None:
        return []
    out = []
    for entry in data.get("members", []):
        file = DATA / name / str(entry["file"])
        if file.parent != DATA / name or not file.is_file():
            raise ZooDataError(f"zoo member {entry['name']!r} of {name}: no file {file}")
        origin = {**entry.get("train", {}), "env_kwargs": dict(data.get("env_kwargs", {})),
                  "file": str(entry["file"]), "bytes": entry.get("bytes")}  # fmt: skip
        out.append(Member(str(entry["name"]), name, "checkpoint", str(entry["description"]),
                          spec=f"checkpoint:path={file}", sha256=str(entry["sha256"]),
                          origin=origin))  # fmt: skip
    return out


__all__ = ["DATA", "FORMAT", "MANIFEST", "ZooDataError", "env_kwargs", "load_manifest",
           "manifest_path", "members"]
