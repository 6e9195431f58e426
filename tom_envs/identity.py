"""What a result belongs to: the full configuration of one episode, its hash, and what changed.

:func:`resolved_env_kwargs` gives every game argument with its default resolved (the game's config
dataclass); :func:`episode_config` is the full configuration of one episode (game id and version,
resolved arguments, every agent's spec, class and settings, seed, what is recorded, suite version,
the code that plays it, record schema) and :func:`config_hash` its hash; :func:`config_diff` says
what changed between two. Trajectories record both (:mod:`tom_envs.records`); a resumed run reuses
only an equal configuration.

**The code.** ``config["code"]`` (:func:`code_identity`) holds, per package of the suite
(``tom_envs``, ``tom_baselines``, ``tom_llm_agents``, ``tom_experiments``: a results table's cells
may seat its agents), a SHA-256 over every ``.py`` file and every
package data file of a game (Overcooked layouts, CoBlock task sets) under the installed package's
folder, by relative path and content, in sorted order (``__pycache__`` and other files excluded;
``"absent"`` for a package that is not installed). It is computed once per process (about 10 ms);
so a changed game, bot, agent, prompt or driver changes every result key, while documentation,
tests and benchmarks do not. The Python, NumPy and PyTorch versions are not part of the key.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from tom_envs.core.agents import agent_config, jsonable

#: Version of the trajectory record format (bumped when the JSONL schema changes).
SCHEMA_VERSION = 3

#: The suite's packages whose sources key every result (:func:`code_identity`).
CODE_PACKAGES = ("tom_envs", "tom_baselines", "tom_llm_agents", "tom_experiments")
#: Data files that are part of a game (besides ``.py``): they change what is played.
_DATA_SUFFIXES = (".txt", ".json")

__all__ = [
    "CODE_PACKAGES",
    "SCHEMA_VERSION",
    "code_identity",
    "config_diff",
    "config_hash",
    "episode_config",
    "resolved_env_kwargs",
]

_CODE: dict[str, str] | None = None


def _package_digest(name: str) -> str:
    """SHA-256 (16 hex digits) of a package's sources: see the module docstring."""
    import importlib.util
    from pathlib import Path

    try:
        found = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        found = None
    roots = list(found.submodule_search_locations or []) if found is not None else []
    if not roots:
        return "absent"
    h = hashlib.sha256()
    for root in map(Path, roots):
        files = sorted(
            p
            for p in root.rglob("*")
            if p.is_file()
            and "__pycache__" not in p.parts
            and (p.suffix == ".py" or (p.suffix in _DATA_SUFFIXES and "games" in p.parts))
        )
        for p in files:
            h.update(p.relative_to(root).as_posix().encode() + b"\0")
            h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()[:16]


def code_identity() -> dict[str, str]:
    """``{package: source digest}`` of the suite's packages (computed once per process)."""
    global _CODE
    if _CODE is None:
        _CODE = {name: _package_digest(name) for name in CODE_PACKAGES}
    return dict(_CODE)


def resolved_env_kwargs(spec: Any, kwargs: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Every argument of the game, defaults resolved: the fields of its config dataclass.

    ``spec`` is a :class:`~tom_envs.registration.GameSpec`; ``kwargs`` override its defaults.
    Environment-level arguments that are not rules (``max_cycles``) are kept as given, and so is
    a ``skin`` other than the canonical one (the canonical text adds nothing: earlier results keep
    their hashes). Derived
    fields (a matrix preset, a kitchen layout read from a file) are included: they are what the
    episode was played with.
    """
    given = {**spec.kwargs, **(kwargs or {})}
    env_level = {k: given.pop(k) for k in ("max_cycles",) if k in given}
    given.pop("render_mode", None)
    bundle = spec.load().make_bundle(**given)
    cfg = getattr(bundle.game, "config", None)
    if dataclasses.is_dataclass(cfg) and not isinstance(cfg, type):
        out = {f.name: jsonable(getattr(cfg, f.name)) for f in dataclasses.fields(cfg)}
    else:  # a game without a config dataclass: the arguments as given
        out = {k: jsonable(v) for k, v in given.items()}
    out.update({k: jsonable(v) for k, v in env_level.items()})
    from tom_envs.core.skin import CANONICAL, skin_of

    if skin_of(bundle) != CANONICAL:  # a disguise is part of what was played (never mixed)
        out["skin"] = skin_of(bundle)
    return out


def episode_config(
    spec: Any,
    env_kwargs: Mapping[str, Any] | None,
    agents: Sequence[Any],
    seed: int | None,
    record: Mapping[str, bool | str] | None = None,
    resolved: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The full configuration one episode's result belongs to (see the module docstring)."""
    import tom_envs

    return {
        "env_id": spec.id,
        "game_version": int(spec.version),
        "env_kwargs": dict(resolved)
        if resolved is not None
        else resolved_env_kwargs(spec, env_kwargs),
        "agents": {f"player_{i}": agent_config(a) for i, a in enumerate(agents)},
        "seed": seed,
        "record": {  # flags; a prediction period ("every:K") is kept as written
            k: v if isinstance(v, str) else bool(v) for k, v in sorted((record or {}).items())
        },
        "suite_version": tom_envs.__version__,
        "code": code_identity(),
        "schema": SCHEMA_VERSION,
    }


def config_hash(config: Mapping[str, Any]) -> str:
    """A 16-hex-digit hash of a configuration (canonical JSON)."""
    blob = json.dumps(config, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def config_diff(old: Any, new: Any, path: str = "", limit: int = 20) -> list[str]:
    """What changed from ``old`` to ``new``: one ``"path: old -> new"`` line per difference."""
    out: list[str] = []
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        for k in sorted(set(old) | set(new), key=str):
            p = f"{path}.{k}" if path else str(k)
            if k not in old:
                out.append(f"{p}: (absent) -> {_short(new[k])}")
            elif k not in new:
                out.append(f"{p}: {_short(old[k])} -> (absent)")
            else:
                out += config_diff(old[k], new[k], p, limit)
            if len(out) >= limit:
                break
    elif old != new:
        out.append(f"{path or '(config)'}: {_short(old)} -> {_short(new)}")
    return out[:limit]


def _short(v: Any) -> str:
    text = json.dumps(v, default=str, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "..."
