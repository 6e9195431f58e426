"""Play any agents on any registered game and keep everything: the episode runner.

:func:`play_episode` plays one seeded episode through the one episode driver
(:class:`tom_envs.driver.EpisodeDriver`): each agent gets a :class:`~tom_envs.core.agents.Turn`,
every decision is recorded (action, its text, validity, probe answers, rewards, latency, optional
text observation). An agent that raises or answers with an illegal action does not stop the
episode: the decision is a counted *fallback* (a seeded random legal action, recorded
``"fallback": true`` with the failure's kind and message, never as the agent's own). An episode in
which a seat's fallback share exceeds ``max_fallback_share`` (default 20%) has status ``"failed"``.

:func:`run` plays many seeded episodes, writes one JSONL trajectory per episode atomically, and
returns them (:func:`iter_run`: one at a time, nothing kept). That is all it does: play and
resume. The episode itself (:class:`~tom_envs.records.Episode`), its JSONL format and digest, and
the statistics over episodes (:func:`~tom_envs.records.summarize`,
:func:`~tom_envs.records.mean_ci95`) live in :mod:`tom_envs.records`; their names stay importable
from here.

**Identity and resume.** Every episode carries its full configuration
(:func:`tom_envs.identity.episode_config`: game id and version, every game argument with its
default resolved, every agent's spec, class and settings, the seed, what is recorded, the suite
version and this schema) and its hash. :func:`run` reuses a trajectory on disk only when its
configuration hash equals the one it would play; a trajectory of a *different* configuration in
the output directory stops the run before anything is played, with a message listing exactly what
changed (:class:`ConfigMismatchError`): results are never mixed or overwritten. Default output
directories include a short hash of the configuration, so a changed configuration goes to a new
directory. A failed episode is written to ``<out>/failed/`` and never reused: the next run plays
it again. Every file ends with the SHA-256 of its own content (``digest``); a finished file whose
content no longer matches it (edited after it was written) stops the run the same way
(:class:`TrajectoryDigestError`) and is never reused.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import numpy as np

from tom_envs.core.agents import Agent, with_required_env_kwargs
from tom_envs.driver import EpisodeDriver, FailurePolicy
from tom_envs.identity import (
    SCHEMA_VERSION,
    config_diff,
    config_hash,
    episode_config,
    resolved_env_kwargs,
)

# The records' names, importable from here as before (their one home is tom_envs.records).
from tom_envs.records import Episode as Episode
from tom_envs.records import RunningSummary as RunningSummary
from tom_envs.records import content_digest as content_digest
from tom_envs.records import format_table as format_table
from tom_envs.records import mean_ci95 as mean_ci95
from tom_envs.records import probe_accuracy as probe_accuracy
from tom_envs.records import summarize as summarize
from tom_envs.records import usage_totals as usage_totals
from tom_envs.registration import GameSpec, game_spec

_P = ParamSpec("_P")
_T = TypeVar("_T")

__all__ = [
    "EPISODES_MAX",
    "SCHEMA_VERSION",
    "SEED_MAX",
    "ConfigMismatchError",
    "OutputWriteError",
    "TrajectoryDigestError",
    "check_seeds",
    "failed_path",
    "iter_run",
    "play_episode",
    "reusable",
    "run",
    "run_config",
]


#: Episode seeds are whole numbers in [0, SEED_MAX] (what ``reset(seed)`` and the browser take).
SEED_MAX = 2**32 - 1
#: The most episodes one command plays per cell (and, in ``eval``, in all).
EPISODES_MAX = 1_000_000


def check_seeds(seed: object, episodes: object, what: str = "") -> None:
    """ValueError naming the allowed ranges unless ``episodes`` seeds from ``seed`` are possible:
    ``episodes`` a whole number in [1, EPISODES_MAX], every seed in [0, SEED_MAX]."""
    lead = f"{what}: " if what else ""
    for name, value, lo, hi in (("episodes", episodes, 1, EPISODES_MAX),
                                ("seed", seed, 0, SEED_MAX)):  # fmt: skip
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not (
            lo <= int(value) <= hi
        ):
            raise ValueError(f"{lead}{name} must be a whole number in [{lo:,}, {hi:,}], got "
                             f"{value!r}")  # fmt: skip
    last = int(seed) + int(episodes) - 1  # type: ignore[call-overload]
    if last > SEED_MAX:
        raise ValueError(f"{lead}seeds {seed}..{last} pass {SEED_MAX:,}: the last seed must be "
                         f"at most {SEED_MAX:,}")  # fmt: skip


class ConfigMismatchError(ValueError):
    """A trajectory on disk belongs to a different configuration than the one asked for."""


class TrajectoryDigestError(ConfigMismatchError):
    """A finished trajectory on disk whose content no longer matches the digest written with it
    (edited after it was written): it is never reused."""


def play_episode(
    game: GameSpec | str,
    agents: Sequence[Agent],
    seed: int,
    env_kwargs: Mapping[str, Any] | None = None,
    record_text: bool = False,
    record_observations: bool = False,
    env: Any = None,
    policy: FailurePolicy | None = None,
    config: Mapping[str, Any] | None = None,
    predict: str = "off",
) -> Episode:
    """Play one seeded episode with one agent per seat, recording every decision.

    Args:
        game: a :class:`GameSpec` or a game name/id.
        agents: one agent per seat, in seat order.
        seed: the episode seed (the env's ``reset(seed)`` and every agent's generator).
        env_kwargs: overrides of the game's keyword arguments (with the arguments the agents
            require added: :func:`~tom_envs.core.agents.with_required_env_kwargs`).
        record_text: also record the text observation each agent was shown.
        record_observations: also record the vector observation.
        env: an AEC env to reuse (made from ``game`` when omitted).
        policy: the failure policy (default: fall back, fail the episode above 20% fallbacks).
        config: the episode's configuration (computed with :func:`episode_config` when omitted).
        predict: ``"all"`` asks agents that answer next-action questions after each of their
            decisions (:mod:`tom_envs.partners.prediction`); part of the configuration.
    """
    spec = game if isinstance(game, GameSpec) else game_spec(game)
    env_kwargs = with_required_env_kwargs(spec, agents, env_kwargs)  # the agents' protocol
    driver = EpisodeDriver(
        spec,
        agents,
        seed,
        env_kwargs,
        env=env,
        policy=policy,
        record_text=record_text,
        record_observations=record_observations,
        predict=predict,
    )
    episode = driver.run()
    if config is None:
        record: dict[str, bool | str] = {"text": record_text, "observations": record_observations}
        if predict != "off":  # recorded only when on: every earlier result keeps its hash
            record["predict"] = True if predict == "all" else predict
        config = episode_config(spec, env_kwargs, agents, seed, record, driver.resolved_kwargs)
    episode.config = dict(config)
    episode.config_hash = config_hash(config)
    return episode



def run_config(
    spec: GameSpec,
    agents: Sequence[Agent],
    env_kwargs: Mapping[str, Any] | None = None,
    record: Mapping[str, bool] | None = None,
) -> dict[str, Any]:
    """The configuration of a run without its seed (what default output directories hash)."""
    cfg = episode_config(spec, env_kwargs, agents, None, record)
    cfg.pop("seed")
    return cfg


def reusable(path: Path, expected: Mapping[str, Any], policy: FailurePolicy) -> Episode | None:
    """The episode at ``path`` if it is a finished result of exactly ``expected``, else ``None``.

    Raises :class:`ConfigMismatchError` naming every difference when the file is a complete
    trajectory of another configuration.
    """
    if not path.exists():
        return None
    try:
        ep = Episode.read(path)
    except (ValueError, KeyError, IndexError, TypeError, json.JSONDecodeError):
        return None  # half-written or damaged: played again
    if ep.digest_ok is False:
        raise _digest_error(path, "was edited after it was written (its content no longer "
                            "matches the digest written with it)")  # fmt: skip
    want = config_hash(expected)
    if ep.config_hash != want:
        if ep.config is None:
            changes = [f"the file has no configuration (schema {_schema_of(path)})"]
        else:
            changes = config_diff(ep.config, expected) or ["configuration hash differs"]
        raise ConfigMismatchError(
            f"{path} holds a result of another configuration; changed: "
            + "; ".join(changes)
            + ". Use another output directory (the default one includes the configuration's hash)"
            " or remove the old results"
        )
    if ep.digest_ok is None:
        raise _digest_error(path, f"has no content digest (schema {_schema_of(path)})")
    if not ep.ok or any(v > policy.max_fallback_share for v in ep.fallback_share().values()):
        return None  # not a result under this policy: played again
    return ep


def _digest_error(path: Path, why: str) -> TrajectoryDigestError:
    return TrajectoryDigestError(
        f"{path} {why}: it is not reused as a result. Remove it (it is played again) or use "
        "another output directory"
    )


def _schema_of(path: Path) -> Any:
    try:
        return json.loads(path.read_text().splitlines()[0]).get("version", 1)
    except (ValueError, IndexError, OSError):
        return "unknown"


def failed_path(path: Path) -> Path:
    """Where a failed episode of ``path`` goes (``<dir>/failed/<name>``)."""
    return path.parent / "failed" / path.name


class OutputWriteError(RuntimeError):
    """A trajectory could not be written (disk full, read-only folder, ...). Every episode
    finished before it is on disk; the same command resumes once the cause is fixed."""

    def __init__(self, path: Path, error: OSError, kept: int) -> None:
        import errno

        code = errno.errorcode.get(error.errno or 0, "")
        why = f"{error.strerror or error}" + (f" ({code})" if code else "")
        super().__init__(
            f"cannot write {path}: {why}. The {kept} episode(s) finished before it are kept in "
            f"{path.parent}/; free space (or fix the folder) and run the same command again to "
            "resume"
        )
        self.path, self.error, self.kept = path, error, kept


def iter_run(
    game: GameSpec | str,
    agent_factories: Sequence[Callable[[], Agent]],
    episodes: int,
    seed: int = 0,
    out_dir: str | Path | None = None,
    env_kwargs: Mapping[str, Any] | None = None,
    record_text: bool = False,
    progress: Callable[[int, Episode], None] | None = None,
    policy: FailurePolicy | None = None,
) -> Iterator[Episode]:
    """:func:`run` one episode at a time: each is written to disk as it finishes, then yielded,
    and nothing is kept, so memory stays bounded for any number of episodes (the command line
    sums them with :class:`RunningSummary`). Every file in ``out_dir`` is checked (and let go)
    before the first episode is played. A trajectory that cannot be written raises
    :class:`OutputWriteError`; the episodes before it stay on disk."""
    spec = game if isinstance(game, GameSpec) else game_spec(game)
    policy = policy or FailurePolicy()
    agents = [f() for f in agent_factories]
    env_kwargs = with_required_env_kwargs(spec, agents, env_kwargs)  # the agents' protocol
    env = spec.load().raw_env(**{**spec.kwargs, **(env_kwargs or {})})
    resolved = resolved_env_kwargs(spec, env_kwargs)
    record = {"text": record_text, "observations": False}
    base = episode_config(spec, env_kwargs, agents, None, record, resolved)

    def config(i: int) -> dict[str, Any]:
        return {**base, "seed": seed + i}

    def path_of(i: int) -> Path | None:
        return Path(out_dir) / f"episode_{seed + i:06d}.jsonl" if out_dir is not None else None

    reuse = set()
    if out_dir is not None and Path(out_dir).is_dir():  # every file checked before anything plays
        for i in range(episodes):
            path = path_of(i)
            if path is not None and path.exists() and reusable(path, config(i), policy):
                reuse.add(i)
    for i in range(episodes):
        path = path_of(i)
        ep = reusable(path, config(i), policy) if i in reuse and path is not None else None
        if ep is None:
            ep = play_episode(spec, agents, seed + i, env_kwargs, record_text=record_text,
                              env=env, policy=policy, config=config(i))  # fmt: skip
            if path is not None:
                target = path if ep.ok else failed_path(path)
                try:
                    ep.write(target)
                    (failed_path(path) if ep.ok else path).unlink(missing_ok=True)
                except OSError as exc:
                    raise OutputWriteError(target, exc, i) from None
        if progress is not None:
            progress(i, ep)
        yield ep


def _collecting(stream: Callable[_P, Iterator[_T]], name: str, doc: str) -> Callable[_P, list[_T]]:
    """``stream``'s items as a list, under ``name`` and ``doc`` (its parameters, one signature)."""

    def collect(*args: _P.args, **kwargs: _P.kwargs) -> list[_T]:
        return list(stream(*args, **kwargs))

    collect.__name__ = collect.__qualname__ = name
    collect.__doc__ = doc
    signature = inspect.signature(stream).replace(return_annotation=list)
    collect.__signature__ = signature  # type: ignore[attr-defined]  # what help() shows
    return collect


run = _collecting(
    iter_run,
    "run",
    """Play ``episodes`` episodes (seeds ``seed, seed+1, …``), writing each trajectory if asked.

    A trajectory already in ``out_dir`` is reused only when it is a finished result of exactly
    this configuration (see the module docstring); every file is checked before the first episode
    is played, and one of another configuration raises :class:`ConfigMismatchError`. Failed
    episodes are returned too (``status == "failed"``) and written under ``out_dir/failed/``.
    Every episode is kept in the returned list: :func:`iter_run` keeps none (bounded memory).
    """,
)
