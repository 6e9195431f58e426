"""Types are checked: pyright in basic mode over tom_envs, baselines and llm_agents, as configured in
pyproject.toml (``[tool.pyright]``), and its error count only goes down.

The count (with each file's share) is recorded in ``tests/type_errors.json``. More errors than
recorded fail, naming the files whose count rose and their new errors; fewer fail too, asking the
developer to lower the record, so the ratchet stays tight::

    TOM_ENVS_REGEN_TYPES=1 .venv/bin/python -m pytest tests/test_types.py -q

rewrites the record (review its diff: it should only go down). pyright is pinned in the
``[test]`` extra: another version counts differently.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).parent.parent
RECORD = Path(__file__).parent / "type_errors.json"
REGEN = "TOM_ENVS_REGEN_TYPES"
# the agent packages are checked through typecheck/ (their installed names); shown by folder
SHOWN_AS = {"typecheck/tom_baselines/": "baselines/", "typecheck/tom_llm_agents/": "llm_agents/"}


def _shown(path: str) -> str:
    rel = Path(path).relative_to(ROOT).as_posix()
    for checked, shown in SHOWN_AS.items():
        if rel.startswith(checked):
            return shown + rel[len(checked) :]
    return rel


def run_pyright() -> tuple[str, list[dict[str, Any]]]:
    """pyright's version and its errors (each with ``file`` shown relative to the repository)."""
    pyright = shutil.which("pyright") or str(Path(sys.executable).parent / "pyright")
    if not Path(pyright).exists():
        pytest.fail("pyright is not installed: it is part of the [test] extra")
    result = subprocess.run(
        [pyright, "-p", str(ROOT / "pyproject.toml"), "--pythonpath", sys.executable, "--outputjson"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    try:
        report = json.loads(result.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"pyright printed no report:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}")
    errors = [
        {**d, "file": _shown(d["file"])}
        for d in report["generalDiagnostics"]
        if d["severity"] == "error"
    ]
    return str(report["version"]), errors


def _describe(d: dict[str, Any]) -> str:
    line = d["range"]["start"]["line"] + 1
    return f"  {d['file']}:{line}: {d['message'].splitlines()[0]} ({d.get('rule', '')})"


def test_type_errors_only_go_down() -> None:
    version, errors = run_pyright()
    by_file = Counter(d["file"] for d in errors)
    if os.environ.get(REGEN):
        record = {"pyright": version, "errors": len(errors), "by_file": dict(sorted(by_file.items()))}
        RECORD.write_text(json.dumps(record, indent=1) + "\n")
        pytest.fail(  # as the golden files: a run that rewrites its expectation never passes
            f"wrote {RECORD.name} ({len(errors)} errors): review `git diff {RECORD}` and commit"
        )
    record = json.loads(RECORD.read_text())
    assert version == record["pyright"], (
        f"pyright {version} runs, the record was counted with {record['pyright']}: install the "
        "pinned one (the [test] extra), or recount with the new one and record it "
        f"({REGEN}=1)"
    )
    recorded = record["by_file"]
    rose = {f: n for f, n in by_file.items() if n > recorded.get(f, 0)}
    if len(errors) > record["errors"]:
        shown = "\n".join(_describe(d) for d in errors if d["file"] in rose)
        pytest.fail(
            f"pyright finds {len(errors)} errors, {len(errors) - record['errors']} more than the "
            f"{record['errors']} recorded in {RECORD.name}. Files whose count rose: "
            + ", ".join(f"{f} ({recorded.get(f, 0)} -> {n})" for f, n in sorted(rose.items()))
            + f"\n{shown}\nFix them (or annotate what pyright cannot know); the record only goes down."
        )
    assert len(errors) == record["errors"], (
        f"pyright finds {len(errors)} errors, fewer than the {record['errors']} recorded: lower "
        f"the record to {len(errors)} so that it holds the gain ({REGEN}=1 .venv/bin/python -m "
        "pytest tests/test_types.py rewrites tests/type_errors.json)"
    )
