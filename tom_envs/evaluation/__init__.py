"""Evaluation: declarative experiments over any games and agents, resumable, parallel, reported.

``tom-envs eval CONFIG`` reads a TOML experiment (:mod:`tom_envs.evaluation.config`), checks it
in full before any episode runs (games, env arguments, agent specs, LLM endpoints), plays every
seeded episode of every cell on a local process pool or a Ray cluster
(:mod:`tom_envs.evaluation.backends`), keeps one JSONL trajectory per episode (written atomically,
never replayed once finished, so an interrupted run resumes), and writes a report
(:mod:`tom_envs.evaluation.report`): matchup tables, cross-play matrices and heat maps,
functional-vs-literal ToM tables with regret curves, the papers' tables, learning curves, and the
failed episodes.

Shipped configs (``tom-envs eval --list``) reproduce each paper's main table layout with the
agents the suite has, and run cross-play and functional-ToM reports on every game::

    tom-envs eval crossplay --episodes 5
    tom-envs eval paper004 --agent gpt=llm:model=gpt-4o-mini:base_url=https://api.openai.com/v1
    tom-envs eval my_experiment.toml --backend ray --workers 8
"""

from tom_envs.evaluation.backends import Job, Outcome, run_job, run_jobs
from tom_envs.evaluation.config import (
    ConfigError,
    EvalConfig,
    load_config,
    parse_config,
    shipped_configs,
    validate,
)
from tom_envs.evaluation.run import EvalResults, evaluate, write_outputs

__all__ = [
    "ConfigError",
    "EvalConfig",
    "EvalResults",
    "Job",
    "Outcome",
    "evaluate",
    "load_config",
    "parse_config",
    "run_job",
    "run_jobs",
    "shipped_configs",
    "validate",
    "write_outputs",
]
