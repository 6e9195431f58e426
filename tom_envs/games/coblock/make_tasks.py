"""Regenerate or check CoBlock's built-in task sets (``data/*.json``).

    python -m tom_envs.games.coblock.make_tasks --write    # rewrite the data files
    python -m tom_envs.games.coblock.make_tasks --check    # exit 1 if they differ from the code

The sets are the hand-made tasks of :func:`~tom_envs.games.coblock.tasks.manual_tasks` followed
by generated ones (fixed seeds), 24 per type; every task passes
:func:`~tom_envs.games.coblock.tasks.validate` (including the planner's solvability check).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from tom_envs.games.coblock.tasks import (
    TASK_TYPES,
    build_builtin_sets,
    builtin_tasks,
    write_builtin_sets,
)


def stale_sets() -> list[str]:
    """Task types whose data file differs from what the code generates."""
    fresh = build_builtin_sets()
    return [
        t
        for t in TASK_TYPES
        if [x.to_dict() for x in fresh[t]] != [x.to_dict() for x in builtin_tasks(t)]
    ]


def main(argv: Sequence[str] | None = None) -> int:
    """``--write``: regenerate the data files; ``--check``: fail when they are stale."""
    ap = argparse.ArgumentParser(description="CoBlock built-in task sets")
    ap.add_argument("--write", action="store_true", help="regenerate data/*.json")
    ap.add_argument("--check", action="store_true", help="exit 1 if data/*.json are stale")
    args = ap.parse_args(argv)
    if args.write:
        for path in write_builtin_sets():
            print(f"wrote {path}")
        return 0
    stale = stale_sets()
    for t in TASK_TYPES:
        print(f"{t}: {len(builtin_tasks(t))} tasks" + (" (stale)" if t in stale else ""))
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
