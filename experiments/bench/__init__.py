"""The benchmark (issue #36): ``tom-envs bench AGENT`` scores any agent on a fixed, versioned suite
and writes one row; ``tom-envs leaderboard ROWS`` renders rows as a table and a static page.

* :mod:`~tom_experiments.bench.suite`: the suite files (``suites/<name>-v<version>.toml``), their
  anchors and zoo versions;
* :mod:`~tom_experiments.bench.run`: the protocol axes, the jobs (the evaluation machinery:
  resumable, keyed by configuration, cost estimate and budget), CoordinationQA, the manifest and
  the row;
* :mod:`~tom_experiments.bench.row`: the row format and its intervals;
* :mod:`~tom_experiments.bench.skin`: the skinned run (``--skin s<k>`` or the suite's ``skin``)
  and the skin gap with its paired interval;
* :mod:`~tom_experiments.bench.forfeit`: the ``--on-invalid forfeit`` protocol (the turn or the
  episode lost, per game);
* :mod:`~tom_experiments.bench.reproduce`: ``--reproduce ROW``, cell by cell;
* :mod:`~tom_experiments.bench.leaderboard`: markdown and one self-contained HTML file;
* :mod:`~tom_experiments.bench.cli`: the two subcommands (``tom_envs.commands`` entry points).

See ``docs/bench.md``.
"""
