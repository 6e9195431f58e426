"""Paper reproduction (``tom_experiments``, the checkout's ``experiments/`` folder): the results
tables and the shipped eval configs, above the environments and the agent packages.

Layering: ``tom_experiments`` may import ``tom_envs``, ``tom_baselines`` and ``tom_llm_agents``;
none of them imports it (``tests/test_layering.py``). It registers what it adds through the suite's
entry points (:mod:`tom_envs.plugins`, declared in ``pyproject.toml``):

* ``tom_envs.tables``: each module here defines one ``TABLE``
  (:class:`tom_envs.evaluation.tables.PaperTable`) that an eval config names and
  ``tom-envs reproduce NAME`` writes as a docs/results page: the papers' tables (``paper000``
  ``paper000.py``, ``paper001`` ``guandan.py``, ``paper002`` ``paper002.py``, ``paper003``
  ``coblock.py``, ``paper004`` ``paper004.py`` with its page ``paper004_page.py``) and the games'
  bot tables (``hanabi``, ``overcooked``);
* ``tom_envs.configs``: ``configs/NAME.toml``, the shipped eval configs ``tom-envs eval NAME`` and
  ``tom-envs reproduce NAME`` run (the papers', the games' tables, ``crossplay``,
  ``functional_tom``, ``quick``, ``llm_presets``): they seat plugin agents (``rmax``, ``llm``).

Without this package the environments, ``run``, ``eval`` of a config file, ``qa`` and the
conformance tests work as before; ``reproduce NAME`` says which package is missing. Parity and
speed against peer engines are ``benchmarks/<game>.py``.
"""
