"""The package layering, enforced on the source: who may import whom.

Layers, lowest first; a module imports only from its own layer or below (the imports inside
functions count too, and so do ``importlib.import_module("...")`` literals):

0. ``tom_envs.core``: the contract every game implements (game, view, text, agents, params).
1. ``tom_envs.games``: the rules engines, views, encoders, bots and the ground-truth solvers the
   probes, QA and metrics read (Capture/Escape joint planner, bomb-defusal CBS and exhaustive
   optimum, matrix dynamic programming, CoBlock and Overcooked planners).
2. the suite: registration, plugins, agents, driver, runner, evaluation, experiments, docs, serve,
   the CLI, and CoordinationQA (``tom_envs.qa`` plus each game's ``qa.py``/``qa_*.py`` generator,
   which ``tom_envs.qa`` loads by name and nothing in its game folder imports).
3. the agent packages: ``tom_baselines`` (folder ``baselines/``) and ``tom_llm_agents`` (folder
   ``llm_agents/``). ``tom_envs`` reaches them only through entry points (``tom_envs.plugins``).
4. the paper reproduction: ``tom_experiments`` (folder ``experiments/``: the results tables and
   the shipped eval configs). It may import every layer below; nothing imports it, and
   ``tom_envs`` reaches it only through entry points (``tom_envs.tables``, ``tom_envs.configs``).

The agent packages install under names of their own, so a ``baselines`` package installed beside
(OpenAI's) changes nothing: the last test puts such a package first on the path and uses ours.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tom_envs import plugins

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"tom_envs": "tom_envs", "baselines": "tom_baselines", "llm_agents": "tom_llm_agents",
           "experiments": "tom_experiments"}  # fmt: skip
AGENT_PACKAGES = ("tom_baselines", "tom_llm_agents", "baselines", "llm_agents")
#: The packages tom_envs never names: the agent packages and the paper reproduction above them.
ABOVE_TOM_ENVS = (*AGENT_PACKAGES, "tom_experiments", "experiments")


def _modules() -> dict[str, Path]:
    out = {}
    for folder, name in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = [name, *path.relative_to(ROOT / folder).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


def _is_game_qa(module: str) -> bool:
    parts = module.split(".")
    return module.startswith("tom_envs.games.") and (parts[-1] == "qa" or parts[-1].startswith("qa_"))


def layer(module: str) -> int:
    """The layer of a module of ours (see the module docstring); -1 for anything else."""
    if module.split(".")[0] in ("tom_experiments", "experiments"):
        return 4
    if module.split(".")[0] in AGENT_PACKAGES:
        return 3
    if module == "tom_envs.core" or module.startswith("tom_envs.core."):
        return 0
    if module.startswith("tom_envs.games"):
        return 2 if _is_game_qa(module) else 1
    if module == "tom_envs" or module.startswith("tom_envs."):
        return 2
    return -1


def imports(path: Path) -> list[tuple[int, str]]:
    """Every module ``path`` imports, with line numbers, including ``importlib`` literals."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.lineno, node.module))
            # ``from tom_envs import plugins`` imports the submodule tom_envs.plugins
            out += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            out.append((node.lineno, node.args[0].value))
    return out


def _target_layer(target: str, modules: dict[str, Path]) -> int:
    # "from tom_envs.games.x import name": the module is the longest known prefix
    parts = target.split(".")
    for k in range(len(parts), 0, -1):
        if ".".join(parts[:k]) in modules:
            return layer(".".join(parts[:k]))
    return layer(target)


def test_no_module_imports_a_higher_layer() -> None:
    modules = _modules()
    bad = []
    for module, path in modules.items():
        own = layer(module)
        for line, target in imports(path):
            tl = _target_layer(target, modules)
            if tl > own:
                bad.append(f"{path.relative_to(ROOT)}:{line} (layer {own}) imports {target} (layer {tl})")
    assert not bad, "\n".join(bad)


def test_tom_envs_names_no_agent_package_even_in_strings() -> None:
    """Not even as a ``"module:Class"`` string: the agent packages and the paper reproduction are
    entry points."""
    bad = []
    for module, path in _modules().items():
        if layer(module) >= 3:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                head = node.value.split(":")[0].split(".")[0]
                if head in ABOVE_TOM_ENVS and ("." in node.value or ":" in node.value):
                    bad.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
    assert not bad, "\n".join(bad)


def test_layer_checker_catches_a_violation(tmp_path: Path) -> None:
    """The checker itself: an upward import, one inside a function and an importlib literal."""
    src = tmp_path / "m.py"
    src.write_text(
        textwrap.dedent(
            """
            from tom_envs.registration import GAMES
            def f():
                from tom_baselines.rmax import RMaxAgent
                import importlib
                return importlib.import_module("tom_llm_agents.agent")
            """
        )
    )
    found = {t for _, t in imports(src)}
    assert {"tom_envs.registration", "tom_baselines.rmax", "tom_llm_agents.agent"} <= found
    modules = _modules()
    assert _target_layer("tom_envs.registration", modules) == 2 > layer("tom_envs.games.hanabi.rules")
    assert layer("tom_envs.games.hanabi.qa") == 2 and layer("tom_envs.core.game") == 0
    assert _target_layer("tom_experiments.paper004", modules) == 4 > layer("tom_baselines.rmax")


def _unit(module: str) -> str:
    """The top-level unit of a module: ``tom_envs.X`` (a module, or a subpackage with everything
    beneath it) or the module of another package of ours."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "tom_envs" else module


def import_graph(package: str = "tom_envs") -> dict[str, set[str]]:
    """Static import graph of ``package``'s top-level units, from every import the AST holds:
    module level, inside functions, under ``TYPE_CHECKING`` and ``importlib`` literals (a lazy
    import hides a cycle from the interpreter, not from a reader)."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        if module.split(".")[0] != package:
            continue
        src = _unit(module)
        graph.setdefault(src, set())
        for _, target in imports(path):
            parts = target.split(".")
            known = next((".".join(parts[:k]) for k in range(len(parts), 0, -1)
                          if ".".join(parts[:k]) in modules), None)  # fmt: skip
            if known is None or known.split(".")[0] != package:
                continue
            dst = _unit(known)
            if dst != src and dst != package:  # the package's own __init__ is not a unit
                graph[src].add(dst)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (its nodes, the first repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


@pytest.mark.parametrize("package", ["tom_envs", "tom_experiments"])
def test_no_import_cycle_among_top_level_modules(package: str) -> None:
    """``driver`` builds the records that ``runner`` writes; neither imports the other back."""
    graph = import_graph(package)
    assert len(graph) > 5
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_cycle_finder_catches_a_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
    graph = import_graph("tom_envs")
    assert "tom_envs.records" in graph["tom_envs.driver"]
    assert "tom_envs.driver" in graph["tom_envs.runner"]
    assert "tom_envs.runner" not in graph["tom_envs.driver"]


def test_pyproject_installs_every_package_folder_under_its_safe_name() -> None:
    import tomllib

    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(cfg["packages"])
    found = {m for m, p in _modules().items() if p.name == "__init__.py"}
    assert listed == found
    assert cfg["package-dir"] == {"tom_baselines": "baselines", "tom_llm_agents": "llm_agents",
                                  "tom_experiments": "experiments"}  # fmt: skip
    assert not {p.split(".")[0] for p in listed} & {"baselines", "llm_agents", "experiments"}


def test_the_suites_plugins_are_registered() -> None:
    assert {"rmax", "llm", "checkpoint"} <= set(plugins.names("tom_envs.agents"))
    assert {"mappo", "ppo"} <= set(plugins.names("tom_envs.trainers"))
    assert "llm" in plugins.names("tom_envs.qa_answerers")
    papers = {"paper000", "paper001", "paper002", "paper003", "paper004"}
    assert papers | {"hanabi", "overcooked"} <= set(plugins.names("tom_envs.tables"))
    assert papers | {"quick", "crossplay", "functional_tom", "llm_presets"} <= set(
        plugins.names("tom_envs.configs")
    )
    with pytest.raises(plugins.PluginError, match="pip install -e"):
        plugins.load("tom_envs.agents", "no_such_agent")


def test_an_installed_openai_baselines_changes_nothing(tmp_path: Path) -> None:
    """A ``baselines`` package (as OpenAI's installs: ``baselines.common`` and more) first on the
    path: our agents, trainers and checkpoint loader still import and run."""
    fake = tmp_path / "baselines"
    (fake / "common").mkdir(parents=True)
    (fake / "__init__.py").write_text("OPENAI = True\n")
    (fake / "common" / "__init__.py").write_text("raise ImportError('openai baselines.common')\n")
    for name in ("rmax", "checkpoint", "mappo", "ppo_sb3", "cbs", "joint_planner"):
        (fake / f"{name}.py").write_text(f"raise ImportError('openai baselines.{name}')\n")
    script = textwrap.dedent(
        """
        import baselines, sys
        assert baselines.OPENAI
        import tom_baselines.common, tom_baselines.rmax, tom_baselines.checkpoint
        import tom_baselines.mappo, tom_baselines.ppo_sb3
        import tom_llm_agents.agent
        from tom_envs.cli import main
        assert main(["run", "PrisonersDilemma", "--agents", "rmax", "tit_for_tat",
                     "--episodes", "1"]) == 0
        assert main(["run", "CollabCapture", "--agents", "optimal", "optimal",
                     "--episodes", "1"]) == 0
        assert sys.modules["baselines"].OPENAI
        print("ok")
        """
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, cwd=tmp_path, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().endswith("ok")
