"""Plugins: what other packages add to the suite, found through Python entry points.

``tom_envs`` (rules, views, registration, runner, evaluation) never imports the packages above it.
The agent packages that ship with it, ``tom_baselines`` (the ``baselines/`` folder: RMax, MAPPO,
SB3 PPO, checkpoints) and ``tom_llm_agents`` (the ``llm_agents/`` folder), and the paper
reproduction above them, ``tom_experiments`` (the ``experiments/`` folder), declare what they add in
``pyproject.toml``, and any other installed package can add to the same groups::

    [project.entry-points."tom_envs.agents"]        # agent kinds usable in every agent spec
    rmax = "tom_baselines.rmax:RMaxAgent"           #   a class with a one-line ``description``
    [project.entry-points."tom_envs.trainers"]      # tom-envs train --algo NAME
    mappo = "tom_baselines.mappo:main"              #   main(argv) -> exit code
    [project.entry-points."tom_envs.qa_answerers"]  # tom-envs qa eval --answerer NAME
    llm = "tom_llm_agents.qa:make_answerer"         #   make_answerer(args) -> (answer, name)
    [project.entry-points."tom_envs.demos"]         # a further section of tom-envs demo
    llm = "tom_llm_agents.demo:demo_section"        #   demo_section(seed) -> str
    [project.entry-points."tom_envs.tables"]        # a results table eval/reproduce render
    hanabi = "tom_experiments.hanabi:TABLE"         #   a PaperTable of that name
    [project.entry-points."tom_envs.configs"]       # tom-envs eval NAME / reproduce NAME
    paper004 = "tom_experiments"                    #   the package holding configs/NAME.toml
    [project.entry-points."tom_envs.commands"]      # a further subcommand: tom-envs NAME ...
    bench = "my_package.cli:command"                #   command(parser) -> run(args) -> exit code
    [project.entry-points."tom_envs.zoo"]           # learned partners of the partner zoo
    suite = "tom_experiments.zoo:members"           #   members(game) -> list[tom_envs.zoo.Member]
    [project.entry-points."tom_envs.best_responses"]  # trained best responses to zoo partners
    suite = "tom_experiments.zoo.br:best_responses"  #   (game) -> list[TrainedBestResponse]

A name is loaded only when it is used, so ``import tom_envs`` stays light (a command is loaded
when the ``tom-envs`` parser is built: keep its module's imports inside ``run``). Entry points come
from the installed package's metadata: after adding one, reinstall (``pip install -e .``).
"""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points
from typing import Any

GROUPS = (
    "tom_envs.agents",
    "tom_envs.trainers",
    "tom_envs.qa_answerers",
    "tom_envs.demos",
    "tom_envs.tables",
    "tom_envs.configs",
    "tom_envs.commands",
    "tom_envs.zoo",
    "tom_envs.best_responses",
)


class PluginError(LookupError):
    """A plugin name no installed package provides, or one that fails to import."""


def _entries(group: str) -> dict[str, EntryPoint]:
    if group not in GROUPS:
        raise ValueError(f"plugin group {group!r}: expected one of {', '.join(GROUPS)}")
    return {ep.name: ep for ep in entry_points(group=group)}


def names(group: str) -> list[str]:
    """The names installed packages provide in ``group``, sorted."""
    return sorted(_entries(group))


def load(group: str, name: str) -> Any:
    """The object ``name`` of ``group``; :class:`PluginError` naming what exists, or the missing
    dependency, when it cannot be had."""
    entries = _entries(group)
    if name not in entries:
        have = ", ".join(sorted(entries)) or "none"
        raise PluginError(
            f"no {group!r} plugin named {name!r} (installed: {have}). The suite's own plugins "
            "are declared in its pyproject.toml: install it from the checkout with "
            "`pip install -e .` (add `.[rl]` or `.[llm]` for their extras)."
        )
    entry = entries[name]
    try:
        return entry.load()
    except ImportError as exc:
        package = entry.value.split(":")[0].split(".")[0]
        if exc.name is not None and exc.name.split(".")[0] == package:  # the plugin's own package
            raise PluginError(
                f"{group} plugin {name!r} ({entry.value}) needs the package {package!r}, which "
                f"cannot be imported ({exc}): it is not installed here. From the checkout, "
                "`pip install -e .` installs the suite's packages."
            ) from exc
        raise PluginError(
            f"{group} plugin {name!r} ({entry.value}) cannot be imported: {exc}. "
            "Install the extra it needs from the checkout, e.g. `pip install -e \".[rl]\"` "
            "(torch==2.13.0 first) or `pip install -e \".[llm]\"`."
        ) from exc


__all__ = ["GROUPS", "PluginError", "load", "names"]
