"""No library function is longer than 80 lines (its ``def`` line to its last line, docstring
included): a longer one is split into named steps that read top to bottom.

``OWNED_ELSEWHERE`` lists the functions still over the limit in files that another branch is
rewriting, each with the branch and issue that owns it; it only shrinks, and an entry whose
function is no longer over the limit (or gone) fails the test until it is removed.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).parent.parent
LIBRARY = ("tom_envs", "baselines", "llm_agents", "experiments")
LIMIT = 80

OWNED_ELSEWHERE: dict[tuple[str, str], str] = {}


def long_functions(root: Path = ROOT, limit: int = LIMIT) -> dict[tuple[str, str], int]:
    """``{(file, function): lines}`` for every function of the library over ``limit`` lines."""
    out: dict[tuple[str, str], int] = {}
    for folder in LIBRARY:
        for path in sorted((root / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(), str(path))
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    lines = (node.end_lineno or node.lineno) - node.lineno + 1
                    if lines > limit:
                        out[path.relative_to(root).as_posix(), node.name] = lines
    return out


def test_no_library_function_is_over_80_lines() -> None:
    found = long_functions()
    new = {k: n for k, n in found.items() if k not in OWNED_ELSEWHERE}
    assert not new, (
        f"functions over {LIMIT} lines (split each into named steps): "
        + ", ".join(f"{f} {name} ({n} lines)" for (f, name), n in sorted(new.items()))
    )
    stale = sorted(set(OWNED_ELSEWHERE) - set(found))
    assert not stale, f"no longer over {LIMIT} lines: remove {stale} from OWNED_ELSEWHERE"


def test_the_length_check_sees_a_long_function(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(80))
    (tmp_path / "tom_envs").mkdir()
    (tmp_path / "tom_envs" / "m.py").write_text(f"def short():\n    pass\n\n\ndef long():\n{body}\n")
    assert long_functions(tmp_path) == {("tom_envs/m.py", "long"): 81}
