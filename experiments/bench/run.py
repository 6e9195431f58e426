"""Play a suite with one agent through the evaluation machinery and build its row.

Every (game, partner) cell's seeded episodes are :class:`tom_envs.evaluation.Job` objects: each
is written atomically to ``<run dir>/<game>/<partner>/episode_<seed>.jsonl`` and never replayed
once finished (:func:`tom_envs.evaluation.backends.pending`: a file of another configuration
stops the run with what changed), so an interrupted bench resumes. The run directory is named
by the suite's SHA-256, the agent spec and the protocol. Before the first model call the cost
estimate is printed (:class:`tom_envs.cli_cost.CostGuard`: ``--max-calls``/``--max-cost``,
answers cached in ``<run dir>/llm_cache``, nothing paid twice).

The protocol axes (:data:`LEGAL_ACTIONS`, :data:`ON_INVALID`) apply to agents that read text
(``llm``); they become the agent's settings (``menu=``, ``invalid=``, ``reprompts=``), so they
are part of every episode's configuration key, and are recorded in the row's ``protocol``.
Agents that act on action indices have no such axes (``"n/a"``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import platform
import sys
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tom_experiments.bench import tom
from tom_experiments.bench.forfeit import forfeits_of, scored
from tom_experiments.bench.row import (
    RULE_FAILURES,
    SCHEMA,
    ci_mean,
    episode_numbers,
    interval,
    models_reported,
    stratified_mean,
    summarise,
)
from tom_experiments.bench.suite import Anchor, Suite, SuiteError, SuiteGame

#: Whether legal actions are listed in the prompt (``listed``), left out (``hidden``), or given
#: only when the model asks (``tool``: the prompt offers them; a reply ``LIST`` gets them in a
#: follow-up message, a counted call).
LEGAL_ACTIONS = ("listed", "hidden", "tool")
#: What an illegal answer costs: re-asked with the parser's feedback (``reprompt``, 2 re-asks, then
#: a recorded random fallback), a recorded random legal move at once (``fallback``), or the turn
#: lost (``forfeit``: the game's no-op; where it has none, the episode is lost and scored at the
#: low anchor: :mod:`tom_experiments.bench.forfeit`).
ON_INVALID = ("reprompt", "fallback", "forfeit")
#: The agent settings of each axis value (the ``llm`` agent's options).
_LEGAL_SETTINGS = {"listed": {"menu": "auto"}, "hidden": {"menu": "none"}, "tool": {"menu": "tool"}}
_INVALID_SETTINGS = {
    "reprompt": {"invalid": "reprompt", "reprompts": 2, "fallback": "random"},
    "fallback": {"invalid": "forfeit", "reprompts": 0, "fallback": "random"},
    "forfeit": {"invalid": "forfeit", "reprompts": 0, "fallback": "forfeit"},
}
#: Settings an ``llm`` spec gets unless it names a preset or the setting itself: one call per
#: decision, greedy, a short answer, no probes, no few-shot examples (rows differ by model only).
LLM_BENCH_DEFAULTS = {"strategy": "qa", "temperature": 0, "max_tokens": 64, "probes": "false"}
HIDDEN_NOTE = (
    "hidden: the agent adds no list of legal actions; observations that name their options "
    "themselves (the matrix games' closing question, CollabCapture's lettered moves, "
    "Overcooked's available actions) still show them"
)
#: Fallbacks of these kinds are the agent's rule adherence; any other kind (endpoint, exception,
#: context overflow) is a failure of the run.
RULE_KINDS = RULE_FAILURES


class ProtocolError(ValueError):
    """A protocol axis value this suite version cannot run (the message says why)."""


@dataclasses.dataclass(frozen=True)
class Protocol:
    """The protocol axes of a bench run."""

    legal_actions: str = "listed"
    on_invalid: str = "reprompt"

    def check(self) -> None:
        """Refuse values that are unknown or not implemented (never silently ignored)."""
        if self.legal_actions not in LEGAL_ACTIONS:
            raise ProtocolError(
                f"--legal-actions {self.legal_actions!r}: choose from {LEGAL_ACTIONS}"
            )
        if self.on_invalid not in ON_INVALID:
            raise ProtocolError(f"--on-invalid {self.on_invalid!r}: choose from {ON_INVALID}")

    def settings(self) -> dict[str, Any]:
        """The agent options this protocol sets."""
        return {**_LEGAL_SETTINGS[self.legal_actions], **_INVALID_SETTINGS[self.on_invalid]}

    def record(self, text_agent: bool) -> dict[str, Any]:
        """The row's ``protocol`` block."""
        if not text_agent:
            return {
                "legal_actions": "n/a (acts on action indices)",
                "on_invalid": "n/a (acts on action indices)",
            }
        out: dict[str, Any] = {
            "legal_actions": self.legal_actions,
            "on_invalid": self.on_invalid,
            "agent_settings": self.settings(),
        }
        if self.legal_actions in ("hidden", "tool"):
            out["note"] = HIDDEN_NOTE.replace("hidden:", f"{self.legal_actions}:")
        return out


def spec_head(spec: str) -> tuple[str, dict[str, Any]]:
    """The agent kind and options of a spec (read only: nothing is imported)."""
    from tom_envs.agents import parse_spec

    return parse_spec(spec, trusted=True)


def is_text_agent(spec: str) -> bool:
    """Whether the spec seats an agent that reads text (the ``llm`` kind)."""
    try:
        return spec_head(spec)[0] == "llm"
    except ValueError:
        return False


def bench_spec(spec: str, protocol: Protocol) -> str:
    """The spec that plays: the protocol's settings (and, without a preset, the bench defaults)
    added to an ``llm`` spec; a spec that sets a protocol option itself is refused."""
    protocol.check()
    if not is_text_agent(spec):
        if protocol != Protocol():
            raise ProtocolError(
                f"the protocol axes apply to agents that read text (llm:...); {spec!r} acts on "
                "action indices: leave --legal-actions and --on-invalid at their defaults"
            )
        return spec
    _, given = spec_head(spec)
    clash = sorted(set(given) & {"menu", "invalid", "reprompts", "fallback"})
    if clash:
        raise ProtocolError(
            f"agent spec sets {clash} itself: the bench sets them from --legal-actions and "
            "--on-invalid, so that the protocol is a recorded column"
        )
    extra = dict(protocol.settings())
    if "preset" not in given:
        extra.update({k: v for k, v in LLM_BENCH_DEFAULTS.items() if k not in given})
    return spec + "".join(f":{k}={v}" for k, v in extra.items())


# --------------------------------------------------------------------------- jobs
def _players(game: str, kwargs: Mapping[str, Any]) -> int:
    from tom_envs.registration import game_spec

    base = game_spec(game)
    bundle = base.load().make_bundle(**{**base.kwargs, **kwargs})
    return int(bundle.game.num_players)


def cell_id(game: str, partner: str) -> str:
    """``Game/partner`` (a path inside the run directory)."""
    return f"{game}/{partner}"


def suite_jobs(
    suite: Suite,
    spec: str | Mapping[str, str],
    out: Path,
    trusted: bool,
    games: Sequence[SuiteGame] | None = None,
) -> list[Any]:
    """One job per cell and seed: ``spec`` (or, from a map, the game's spec) at the focal seats,
    the zoo member at the partner seats (every episode may fall back: rule adherence is
    measured, not failed)."""
    from tom_envs import zoo
    from tom_envs.evaluation import Job

    jobs = []
    for g in games if games is not None else suite.games:
        n = _players(g.game, g.kwargs)
        for partner in g.partners:
            focal = spec if isinstance(spec, str) else spec[g.game]
            seats = g.seating(focal, zoo.agent_spec(partner, g.game), n)
            labels = tuple(
                "agent" if i in g.focal_seats else "partner" if i in g.partner_seats else "other"
                for i in range(n)
            )
            trust = tuple(trusted and i in g.focal_seats for i in range(n))
            for seed in g.seeds:
                jobs.append(
                    Job(
                        cell_id(g.game, partner),
                        g.game,
                        dict(g.kwargs),
                        seats,
                        labels,
                        seed,
                        str(out),
                        (),
                        1.0,
                        trust,
                        predict=suite.predict,
                    )
                )
    return jobs


def run_dir(
    suite: Suite, spec: str | Mapping[str, str], protocol: Protocol, root: Path = Path("runs/bench")
) -> Path:
    """``runs/bench/<suite>-<hash of (suite sha256, spec, protocol, code identity)>``: changed code
    starts a fresh directory (its episodes would be of another configuration)."""
    from tom_envs.identity import code_identity

    key = json.dumps(
        [suite.sha256, spec, dataclasses.asdict(protocol), code_identity()], sort_keys=True
    )
    return root / f"{suite.key}-{hashlib.sha256(key.encode()).hexdigest()[:10]}"


def play(jobs: list[Any], guard: Any, workers: int | None) -> tuple[list[Any], int, int]:
    """Run the jobs not already on disk (the estimate first); ``(outcomes, resumed, played)``."""
    from tom_envs.evaluation.backends import pending, run_jobs
    from tom_envs.evaluation.cost import estimate_jobs

    done, todo = pending(jobs)
    if todo:
        est = estimate_jobs(todo)
        if est.agents:
            guard.use_cache(Path(jobs[0].out) / "llm_cache")
        guard.announce(est)
    played = run_jobs(todo, "local", workers) if todo else []
    return done + played, len(done), len(played)


# --------------------------------------------------------------------------- QA
def qa_items(suite: Suite) -> list[Any]:
    """The suite's fixed CoordinationQA subset: the first ``items_per_game`` items of each
    shipped suite file, in file order (chosen by position, never by answer)."""
    from importlib import resources

    from tom_envs.qa import read_suite

    folder = resources.files("tom_envs.qa") / "suites"
    items: list[Any] = []
    for g in suite.games:
        path = Path(str(folder / f"{g.game}.jsonl"))
        if path.is_file() and suite.qa_items_per_game:
            items.extend(read_suite(path)[1][: suite.qa_items_per_game])
    return items


def run_qa(
    suite: Suite, spec: str, trusted: bool, out: Path, skin: str | None = None
) -> dict[str, Any]:
    """CoordinationQA accuracy of a text agent on the suite's subset (one greedy answer per item,
    kept in ``<out>/qa.json`` keyed by the agent's configuration; a rerun asks nothing again);
    with ``skin``, the same items shown in that disguise (``<out>/qa-<skin>.json``)."""
    from tom_envs.agents import make_agent
    from tom_envs.core.agents import agent_config
    from tom_envs.identity import config_hash
    from tom_envs.qa.evaluate import run_answerer
    from tom_envs.registration import game_spec
    from tom_llm_agents.qa import llm_answerer

    items = qa_items(suite)
    if skin:
        from tom_envs.qa.generate import skin_item

        items = [skin_item(it, skin) for it in items]
    agent = make_agent(spec, game_spec(suite.games[0].game), trusted=trusted)
    ident = {"agent": agent_config(agent), "items": [it.id for it in items]}
    key = config_hash({**ident, "skin": skin} if skin else ident)
    path = out / (f"qa-{skin}.json" if skin else "qa.json")
    if path.is_file():
        saved = json.loads(path.read_text())
        if saved.get("key") == key:
            return saved["qa"]
    client = getattr(agent, "client", None)
    if client is None:
        raise ProtocolError(f"{spec}: the agent has no model client to answer CoordinationQA")
    res = run_answerer(items, llm_answerer(client, temperature=0.0, max_tokens=64), spec, trials=1)
    correct = [float(c) for c in res.correct[0]]
    qa = {
        "accuracy_pct": {
            k: (v * 100 if isinstance(v, float) else v)
            for k, v in ci_mean(correct, suite.bootstrap_seed, suite.bootstrap_resamples).items()
        },
        "items": len(items),
        "correct": correct,
        "invalid": res.invalid_count(),
        "item_ids": [it.id for it in items],
        "random_baseline_pct": _random_baseline(items),
    }
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"key": key, "qa": qa}))
    return qa


def _random_baseline(items: Sequence[Any]) -> float | None:
    from tom_envs.qa.generate import random_baseline

    return round(100.0 * random_baseline(list(items)), 3) if items else None


# --------------------------------------------------------------------------- manifest
def git_commit(start: Path | None = None) -> str | None:
    """The checkout's commit, read from ``.git`` (never by running git); None outside one."""
    here = (start or Path(__file__)).resolve()
    for folder in (here, *here.parents):
        dot = folder / ".git"
        if dot.is_file():  # a worktree: "gitdir: <path>"
            text = dot.read_text().strip()
            if not text.startswith("gitdir:"):
                return None
            dot = Path(text.split(":", 1)[1].strip())
        if dot.is_dir():
            head = (dot / "HEAD").read_text().strip()
            if not head.startswith("ref:"):
                return head
            ref = head.split(":", 1)[1].strip()
            for base in (dot, _common_dir(dot)):
                if (base / ref).is_file():
                    return (base / ref).read_text().strip()
                packed = base / "packed-refs"
                if packed.is_file():
                    for line in packed.read_text().splitlines():
                        if line.endswith(" " + ref):
                            return line.split()[0]
            return None
    return None


def _common_dir(gitdir: Path) -> Path:
    common = gitdir / "commondir"
    return (gitdir / common.read_text().strip()).resolve() if common.is_file() else gitdir


def prompt_hashes() -> dict[str, str]:
    """SHA-256 (16 hex) of every prompt template: each text constant of the prompting modules,
    and each prompting module's source."""
    import importlib
    import inspect

    out: dict[str, str] = {}
    for mod_name in ("templates", "templates_zh", "pieces", "base", "deciders", "oracles"):
        try:
            mod = importlib.import_module(f"tom_llm_agents.prompting.{mod_name}")
        except ImportError:
            continue
        src = inspect.getsource(mod)
        out[f"tom_llm_agents.prompting.{mod_name} (source)"] = _h(src)
        for name, value in sorted(vars(mod).items()):
            if name.isupper() and isinstance(value, str):
                out[f"tom_llm_agents.prompting.{mod_name}.{name}"] = _h(value)
    return out


def _h(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def code_record(commit: str | None = None) -> dict[str, Any]:
    """Package version, commit (as read when the run started, else now), the packages' source
    digests (computed once per process, when the first episode's configuration is built) and
    the interpreter's versions."""
    import numpy

    import tom_envs
    from tom_envs.identity import code_identity

    try:
        import torch

        torch_version: str | None = torch.__version__
    except ImportError:
        torch_version = None
    return {
        "tom_envs": tom_envs.__version__,
        "commit": commit or git_commit(),
        "packages": code_identity(),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "torch": torch_version,
    }


def suite_record(suite: Suite) -> dict[str, Any]:
    """The suite's identity, its zoo versions and every partner's kind, spec and file hash."""
    from tom_envs import zoo

    partners = {}
    for g in suite.games:
        partners[g.game] = {}
        for name in g.partners:
            m = zoo.member(name, g.game)
            partners[g.game][name] = {"kind": m.kind, "spec": m.spec, "sha256": m.sha256}
    frozen = {g.game: (suite.anchors[g.game].zoo if g.game in suite.anchors
                       else zoo.version(g.game)) for g in suite.games}  # fmt: skip
    return {
        "name": suite.name,
        "version": suite.version,
        "sha256": suite.sha256,
        "file": suite.path.name if suite.path else None,
        "anchors_command": suite.anchors_command,
        # the zoo the anchors froze (its members the suite plays are checked to be unchanged)
        "zoo": frozen,
        "partners": partners,
    }


def agent_record(
    spec: str, played: str | Mapping[str, str], episodes: Sequence[Any], focal: Sequence[int]
) -> dict[str, Any]:
    """The agent: spec as given and as played, its class and settings per game, the model (as
    requested and as the endpoint reported), the preset, decoding and the prompt hashes."""
    per_game: dict[str, Any] = {}
    for ep in episodes:
        if ep.config and ep.env_id not in per_game:
            per_game[ep.env_id] = dict(ep.config["agents"].get(f"player_{focal[0]}", {}))
    text = is_text_agent(spec)
    out: dict[str, Any] = {
        "spec": spec,
        "played_spec": played if isinstance(played, str) else None,
        "per_game": None if isinstance(played, str) else dict(played),
        "text": text,
        "classes": sorted({str(c.get("class")) for c in per_game.values()}),
        "settings": per_game,
    }
    first: dict[str, Any] = next(iter(per_game.values()), {})
    nested = first.get("settings")
    inner: dict[str, Any] = nested if isinstance(nested, dict) else first
    if text:
        out["model"] = {
            "requested": inner.get("model"),
            "reported": models_reported(episodes, focal),
            "endpoint": inner.get("endpoint"),
        }
        out["preset"] = inner.get("preset")
        out["decoding"] = {
            k: inner.get(k) for k in ("decoding", "temperature", "top_p", "max_tokens", "strategy")
        }
        out["prompts"] = prompt_hashes()
    hashes = {
        g: c.get("settings", {}).get("file_sha256")
        for g, c in per_game.items()
        if isinstance(c.get("settings"), dict) and c["settings"].get("file_sha256")
    }
    if hashes:
        out["checkpoint_sha256"] = hashes
    return out


# --------------------------------------------------------------------------- the row
def _cell(
    g: SuiteGame, partner: str, eps: Sequence[Any], nums: Sequence[Any], seed: int, B: int
) -> dict[str, Any]:
    """One (game, partner) cell of the row."""
    return {
        "id": cell_id(g.game, partner),
        "game": g.game,
        "partner": partner,
        "seeds": [ep.seed for ep in eps],
        "episodes": len(eps),
        "env_kwargs": eps[0].config["env_kwargs"] if eps[0].config else g.kwargs,
        "config_hashes": sorted({str(ep.config_hash) for ep in eps}),
        **summarise(nums, seed, B),
    }


def cell_numbers(suite: Suite, g: SuiteGame, eps: Sequence[Any]) -> list[dict[str, float]]:
    """What a cell's episodes contribute to the row (the canonical and the skinned cells alike):
    :func:`~tom_experiments.bench.row.episode_numbers`, scored on the game's ``U`` in a v2 suite
    (:func:`~tom_experiments.bench.tom.score_u`), then a forfeited episode's score set to the
    game's low anchor (:func:`~tom_experiments.bench.forfeit.scored`), last."""
    nums = [episode_numbers(ep, g.focal_seats) for ep in eps]
    tom.score_u(suite, g, eps, nums)  # v2: each game is scored on its U
    anchor = suite.anchors.get(g.game)
    return [scored(n, anchor) for n in nums]


def _game(anchor: Anchor, nums: Sequence[Any], seed: int, B: int) -> dict[str, Any]:
    """One game of the row: its return, normalised between its anchors, rules and cost."""
    s = summarise(nums, seed, B)
    ret = s["return"]
    norm = {}
    for k in ("mean", "lo", "hi"):
        v = anchor.normalise(ret[k]) if isinstance(ret[k], float) else None
        norm[k] = round(v, 6) if v is not None and math.isfinite(v) else None
    return {
        "return": ret,
        "normalised": {**norm, "n": ret["n"]},
        "anchors": dataclasses.asdict(anchor),
        "headroom": anchor.headroom,
        "rules": s["rules"],
        "cost": s["cost"],
    }


def _split(outcomes: Sequence[Any]) -> tuple[dict[str, list[Any]], dict[str, str]]:
    by_cell: dict[str, list[Any]] = {}
    unplayable: dict[str, str] = {}
    for o in outcomes:
        if o.ok:
            by_cell.setdefault(o.job.cell_id, []).append(o.episode)
        else:
            unplayable.setdefault(o.job.cell_id, str(o.error)[:300])
    return by_cell, unplayable


def _aggregate(
    groups: list[list[float]],
    transforms: list[Any],
    games: Mapping[str, Any],
    complete: bool,
    seed: int,
    B: int,
) -> dict[str, Any]:
    """The mean of the games' normalised scores (games without headroom left out, listed)."""
    empty = {"mean": None, "lo": None, "hi": None, "n": 0}
    agg = stratified_mean(groups, transforms, seed, B) if complete else empty
    agg["games"] = len(groups)
    agg["excluded_no_headroom"] = sorted(n for n, v in games.items() if not v["headroom"])
    if not complete:
        agg["note"] = "incomplete: some cells could not be played (see unplayable)"
    return agg


def build_row(
    suite: Suite,
    spec: str,
    played: str | Mapping[str, str],
    protocol: Protocol,
    outcomes: Sequence[Any],
    qa: dict[str, Any] | None,
    wall_s: float,
    run: Mapping[str, Any],
) -> dict[str, Any]:
    """The row of a finished run (see :mod:`tom_experiments.bench.row`)."""
    seed, B = suite.bootstrap_seed, suite.bootstrap_resamples
    by_cell, unplayable = _split(outcomes)
    cells, games, all_nums, every_episode = [], {}, [], []
    groups: list[list[float]] = []
    transforms: list[Any] = []
    for g in suite.games:
        game_nums = []
        for partner in g.partners:
            eps = sorted(by_cell.get(cell_id(g.game, partner), []), key=lambda e: e.seed)
            if eps:
                every_episode.extend(eps)
                nums = cell_numbers(suite, g, eps)
                game_nums.extend(nums)
                cells.append(_cell(g, partner, eps, nums, seed, B))
        anchor = suite.anchors.get(g.game)
        if (
            not game_nums
            or anchor is None
            or any(cell_id(g.game, p) in unplayable for p in g.partners)
        ):
            continue
        games[g.game] = _game(anchor, game_nums, seed, B)
        if suite.objective == "U":
            games[g.game]["scored"] = tom.scored(suite, g)
        if anchor.headroom:
            groups.append([n["return"] for n in game_nums])
            transforms.append(anchor.normalise)
        all_nums.extend(game_nums)
    complete = not unplayable and len(games) == len(suite.games)
    overall = summarise(all_nums, seed, B) if all_nums else None
    return {
        "schema": SCHEMA,
        "created": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "suite": suite_record(suite),
        "agent": agent_record(spec, played, every_episode, suite.games[0].focal_seats),
        "protocol": protocol.record(is_text_agent(spec)),
        "code": code_record(run.get("commit")),
        "cells": cells,
        "games": games,
        "aggregate": _aggregate(groups, transforms, games, complete, seed, B),
        "qa": qa if qa is not None else {"note": "n/a: the agent does not answer text questions"},
        "rules": overall["rules"] if overall else None,
        "cost": {**(overall["cost"] if overall else {}), "command_wall_s": round(wall_s, 3)},
        "tom": tom.tom_block(suite, by_cell, games),
        "unplayable": unplayable,
        "run": dict(run),
    }


def check_failures(outcomes: Sequence[Any], focal_label: str = "agent") -> str | None:
    """Why the run must fail loudly, or None: the agent fell back on every decision, or its
    fallbacks were mostly not rule violations (an endpoint down, exceptions)."""
    if outcomes and not any(o.ok for o in outcomes):
        return f"no episode could be played; first error: {outcomes[0].error}"
    decisions = fallbacks = other = 0
    for o in outcomes:
        if not o.ok:
            continue
        ep = o.episode
        for i, lab in enumerate(o.job.labels):
            a = f"player_{i}"
            if lab != focal_label:
                continue
            decisions += ep.decisions.get(a, 0)
            fallbacks += ep.fallbacks.get(a, 0) + forfeits_of(ep, a)
            other += sum(v for k, v in (ep.failures.get(a) or {}).items() if k not in RULE_KINDS)
    if decisions and fallbacks == decisions:
        return (
            f"the agent fell back or forfeited on all {decisions} of its decisions: it has "
            "played nothing"
        )
    if decisions and other > 0.2 * decisions:
        return (
            f"{other} of the agent's {decisions} decisions failed for reasons other than an "
            "illegal answer (endpoint, exception, context overflow): not a result"
        )
    return None


# --------------------------------------------------------------------------- anchors
def build_anchors(suite: Suite, out: Path, workers: int | None, command: str) -> dict[str, Anchor]:
    """Each game's anchors on the suite's cells: ``low`` = random focal with random partners,
    ``high`` = the best mean return of the declared reference agents against the suite's
    partners (a lower bound of the best response, labelled so)."""
    from tom_envs import zoo
    from tom_envs.records import bootstrap_ci

    out_anchors = {}
    for g in suite.games:
        g = dataclasses.replace(g, seeds=g.anchor_seeds or g.seeds)
        low_game = dataclasses.replace(g, partners=("random",))
        low = [o for o in _play_plain(suite, "random", low_game, out) if o.ok]
        lows = [episode_numbers(o.episode, g.focal_seats)["return"] for o in low]
        best: tuple[float, str, list[float]] | None = None
        for ref in g.references:
            eps = [o for o in _play_plain(suite, ref, g, out) if o.ok]
            vals = [episode_numbers(o.episode, g.focal_seats)["return"] for o in eps]
            if vals and (best is None or sum(vals) / len(vals) > best[0]):
                best = (sum(vals) / len(vals), ref, vals)
        if best is None or not lows:
            raise SuiteError(f"{g.game}: no anchor episode could be played")
        lo_m, lo_l, lo_h = bootstrap_ci(
            lows, suite.bootstrap_seed, resamples=suite.bootstrap_resamples
        )
        hi_m, hi_l, hi_h = bootstrap_ci(
            best[2], suite.bootstrap_seed, resamples=suite.bootstrap_resamples
        )
        out_anchors[g.game] = Anchor(
            round(lo_m, 6),
            round(hi_m, 6),
            best[1],
            (round(lo_l, 6), round(lo_h, 6)),
            (round(hi_l, 6), round(hi_h, 6)),
            zoo.version(g.game),
            len(lows) + len(best[2]),
        )
        print(
            f"{g.game}: low {lo_m:.4g} (random pair), high {hi_m:.4g} ({best[1]})", file=sys.stderr
        )
    return out_anchors


def _play_plain(suite: Suite, spec: str, g: SuiteGame, out: Path) -> list[Any]:
    from tom_envs.evaluation.backends import pending, run_jobs

    jobs = suite_jobs(suite, spec, out / _safe(spec), trusted=False, games=[g])
    done, todo = pending(jobs)
    return done + (run_jobs(todo, "local", None) if todo else [])


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)


def timed() -> float:
    """A wall clock for the command."""
    return time.perf_counter()


__all__ = [
    "LEGAL_ACTIONS",
    "LLM_BENCH_DEFAULTS",
    "ON_INVALID",
    "Protocol",
    "ProtocolError",
    "bench_spec",
    "build_anchors",
    "build_row",
    "check_failures",
    "code_record",
    "git_commit",
    "interval",
    "is_text_agent",
    "play",
    "prompt_hashes",
    "qa_items",
    "run_dir",
    "run_qa",
    "suite_jobs",
    "suite_record",
]
