"""Trained best responses to fixed zoo partners (``tom-envs zoo br GAME PARTNER``), issue #35.

Where no solver gives the exact best response to a partner, the focal seat is trained against
that fixed partner with the suite's own trainer on the batched engine (SB3 PPO,
``tom-envs train ppo --partners P --engine batched``; learned partners run there through
:class:`~tom_baselines.vector_partner.CheckpointVectorPartner`). The result is a **lower bound**
on the true best response (:data:`tom_envs.best_responses.LABEL`), never called exact.

``tom-envs zoo br GAME PARTNER [--steps N --seed S --seat K]`` trains (unless the run exists),
then writes ``data/<Game>/br.json`` (one manifest per game, entries keyed by partner, seat, seed
and budget) beside the BR's actor-only ``.zip`` and its curve (at most 200 rows)::

    {"game": "Overcooked", "format": 1,
     "best_responses": [{"name": "br_zoo-mappo_s0_seat0_s0", "partner": "zoo/mappo_s0",
        "partner_id": "sha256:...", "seat": 0, "env_kwargs": {...resolved...},
        "file": "br_zoo-mappo_s0_seat0_s0.zip", "sha256": "...", "bytes": 123,
        "train": {"command": "tom-envs train ppo ...", "algo": "SB3 PPO", "seed": 0,
                  "steps": 1000000, "wall_s": ..., "cpu_s": ..., "curve": "..._curve.csv",
                  "final_eval": {...}},
        "evaluation": {"seeds": [700000, 700019], "U_mean": ..., "ci95": [..., ...],
                       "exact": null or the solver's value, "gap": exact - U_mean}}]}

:func:`best_responses` is the entry point of the group ``tom_envs.best_responses``: a BR is used
(by :func:`tom_envs.references.reference_for` and the ``br/<partner>`` agent) only for the
configuration it was trained on, and only if its file has the declared SHA-256.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from tom_envs.best_responses import TrainedBestResponse
from tom_experiments.zoo import DATA, FORMAT, ZooDataError, read_manifest
from tom_experiments.zoo.build import RUNS, Job, file_sha256, run_record, strip_sb3, thin_curve

#: The manifest's name inside ``data/<Game>/``.
BR_MANIFEST = "br.json"
#: Seeds every BR is evaluated on (never a training, selection or cross-play seed); the room
#: games' episodes are cheap, so they get ten times as many (the gap check's interval).
BR_EVAL_SEEDS = tuple(range(700_000, 700_020))
ROOM_EVAL_SEEDS = tuple(range(700_000, 700_200))


def eval_seeds(game: str) -> tuple[int, ...]:
    """The evaluation seeds of ``game``'s BRs."""
    return ROOM_EVAL_SEEDS if game in ("CollabCapture", "CollabEscape") else BR_EVAL_SEEDS
#: Selection seeds of the trained-versus-candidates choice (as ``functional_tom``'s).
SELECTION_SEEDS = tuple(range(10_000, 10_005))
_ROOMS = ("--num-envs 16 --n-steps 128 --batch-size 512 --n-epochs 5 --hidden 64 --lr 5e-4 "
          "--eval-episodes 100 --engine batched --no-progress")  # fmt: skip
#: Overcooked's rule bots (no vectorised version) train with the same recipe on the per-env path
#: (``--engine envs``, the rules' step events as the shaping: ``EventBonus``).
_OC = ("--kw layout=cramped_room observation=features --event-rewards potting_onion=3 "
       "useful_plate=3 soup_from_pot=5 --event-rewards-horizon {steps} --engine batched "
       "--num-envs 16 --n-steps 400 --batch-size 1600 --n-epochs 8 --lr 1e-3 --gae-lambda 0.98 "
       "--clip-range 0.05 --ent-coef 0.05 --hidden 128 --eval-episodes 10 --no-progress")  # fmt: skip
#: Hanabi is turn-based: SB3 has no batched path with a fixed partner (the learner's turns fall on
#: different engine steps in different copies), so its BRs train on the per-env path.
_HANABI = ("--engine envs --num-envs 8 --n-steps 256 --batch-size 1024 --n-epochs 5 --hidden 128 "
           "--lr 5e-4 --eval-episodes 100 --no-progress")  # fmt: skip
#: BombDefusal is turn-based too (the batched path is self-play only), so its BRs train on the
#: per-env path with Hanabi's settings; ``shaping`` and ``probes`` are the page's game arguments
#: (and the zoo members'), so the BR's configuration is the one the page evaluates.
_BOMB = ("--kw shaping=true \"probes='none'\" " + _HANABI).replace("--eval-episodes 100",
                                                                  "--eval-episodes 200")
#: CoBlock has no batched engine, so its BRs train on the per-env path with Hanabi's settings
#: (769 learner steps/s on an 8,192-step probe against ``cooperative``) but an MLP of 32: its
#: 2,179 observation features and 1,263 actions make a 128-wide actor 1.8 MB, over the shipped
#: files' 600 kB; the page's CoBlock arguments are the game's defaults (sparse reward), so the
#: BR's configuration is the page's.
_COBLOCK = _HANABI.replace("--eval-episodes 100", "--eval-episodes 50")
#: Guandan (four seats, no batched engine): the per-env path with Hanabi's settings (605 learner
#: steps/s on a 4,096-step probe), the focal at seat 0 with the partner at seat 2 and
#: ``heuristic`` opponents at seats 1 and 3 (:data:`LAYOUTS`), the page's default arguments.
_GUANDAN = _COBLOCK
_COBLOCK = _COBLOCK.replace("--hidden 128", "--hidden 32")
#: Per game: the recipe (flags after ``--partners P --seat K``), default steps, game arguments.
RECIPES: dict[str, tuple[str, int, dict[str, Any]]] = {
    "CollabCapture": (_ROOMS, 300_000, {}),
    "CollabEscape": (_ROOMS, 300_000, {}),
    "Overcooked": (_OC, 1_000_000, {"layout": "cramped_room", "observation": "features"}),
    "Hanabi": (_HANABI, 200_000, {}),
    "BombDefusal": (_BOMB, 200_000, {"shaping": True, "probes": "none"}),
    "CoBlock": (_COBLOCK, 100_000, {}),
    "Guandan": (_GUANDAN, 100_000, {}),
}  # fmt: skip
#: Games whose partner does not fill every other seat: (the partner's seats, the agent of the
#: remaining ones), as the page's ``GamePlan`` has them (Guandan: the teammate at seat 2, the
#: opponents ``heuristic``; the focal plays seat 0). Elsewhere the partner plays every other seat.
LAYOUTS: dict[str, tuple[tuple[int, ...], str]] = {"Guandan": ((2,), "heuristic")}


def seat_specs(game: str, partner: str, seat: int = 0) -> dict[int, str]:
    """``{seat: spec}`` of every seat but the focal ``seat``: ``partner`` in its seats, the
    layout's other agent in the rest (:data:`LAYOUTS`)."""
    from tom_envs.registration import game_spec

    spec = game_spec(game)
    n = spec.load().make_bundle(**spec.kwargs).game.num_players
    if not 0 <= seat < n:
        raise ValueError(f"--seat must be in 0..{n - 1} for {game}, got {seat}")
    partner_seats, other = LAYOUTS.get(spec.name, ((), ""))
    if seat in partner_seats:
        raise ValueError(f"--seat {seat} is the partner's seat in {game} (its seats: "
                         f"{partner_seats}); the focal seat must be another")  # fmt: skip
    return {s: (partner if not partner_seats or s in partner_seats else other)
            for s in range(n) if s != seat}  # fmt: skip


def others_of(game: str, partner: str, seat: int = 0) -> dict[int, str]:
    """The seats neither the focal nor the partner plays, with their agents (none: ``{}``)."""
    if game not in LAYOUTS:
        return {}
    partner_seats = LAYOUTS[game][0]
    return {s: a for s, a in seat_specs(game, partner, seat).items() if s not in partner_seats}


def partners_arg(game: str, partner: str, seat: int = 0) -> str:
    """``--partners`` of the training command: the partner (it plays every other seat), or with a
    layout one agent per other seat in seat order (``heuristic supporter heuristic``)."""
    specs = seat_specs(game, partner, seat)  # checks the seat
    return " ".join(specs.values()) if game in LAYOUTS else partner


def _vectorised(game: str, partner: str) -> bool:
    """Whether ``partner`` runs on ``game``'s batched engine (a vectorised bot or a learned
    member); Overcooked's rule bots do not, so their BRs train on the per-env path, shaped by the
    same events there."""
    from tom_baselines.ppo_batched import vector_partners
    from tom_envs.registration import game_spec

    return partner.startswith("zoo/") or partner in vector_partners(game_spec(game))


def br_name(partner: str, seat: int, seed: int, steps: int) -> str:
    """``br_<partner>_seat<k>_s<seed>_<steps>`` (``/`` in the partner becomes ``-``)."""
    return f"br_{partner.replace('/', '-')}_seat{seat}_s{seed}_{steps}"


def job(game: str, partner: str, steps: int | None = None, seed: int = 0, seat: int = 0) -> Job:
    """The training run of one BR (the suite's ``tom-envs train ppo``)."""
    if game not in RECIPES:
        raise ValueError(f"no best-response recipe for {game}; recipes: {sorted(RECIPES)}")
    flags, default, kwargs = RECIPES[game]
    if game == "Overcooked" and not _vectorised(game, partner):
        flags = flags.replace("--engine batched", "--engine envs")  # shaped there (EventBonus)
    n = int(default if steps is None else steps)
    if n <= 0:
        raise ValueError(f"--steps must be positive, got {n}")
    base = (f"tom-envs train ppo {game} --partners {partners_arg(game, partner, seat)} "
            f"--seat {seat} --total-steps {n} "
            + flags.format(steps=n))  # fmt: skip
    return Job(game, br_name(partner, seat, seed, n), "ppo", seed, n, base, tuple(kwargs.items()))


def train(j: Job, runs: Path = RUNS) -> Path:
    """Run ``j`` (timed by ``/usr/bin/time``) unless its run folder holds ``DONE``."""
    run = runs / j.run_id
    if (run / "DONE").exists():
        return run
    run.mkdir(parents=True, exist_ok=True)
    cmd = shlex.split(j.command)
    here = Path(sys.executable).parent / cmd[0]  # this environment's tom-envs, if not on PATH
    if here.is_file():
        cmd[0] = str(here)
    argv = ["/usr/bin/time", "-f", "wall_s=%e user_s=%U sys_s=%S maxrss_kb=%M", "-o",
            str(run / "time.txt"), *cmd]  # fmt: skip
    print(f"training {j.run_id}: {j.command}", flush=True)
    subprocess.run(argv, check=True)
    (run / "DONE").touch()
    return run


def manifest_path(game: str) -> Path:
    """``data/<Game>/br.json``."""
    return DATA / game / BR_MANIFEST


def load_manifest(game: str) -> dict[str, Any] | None:
    """The BR manifest of ``game`` (``None``: none shipped)."""
    return read_manifest(manifest_path(game), game, "best-response manifest")


def best_responses(game: str) -> list[TrainedBestResponse]:
    """The shipped trained BRs of ``game`` (the ``tom_envs.best_responses`` entry point)."""
    from tom_envs import best_responses as brs
    from tom_envs.registration import game_spec

    name = game_spec(game).name
    data = load_manifest(name)
    out = []
    for e in (data or {}).get("best_responses", []):
        file = DATA / name / str(e["file"])
        if file.parent != DATA / name or not file.is_file():
            raise ZooDataError(f"trained BR {e['name']!r} of {name}: no file {file}")
        out.append(TrainedBestResponse(
            name, str(e["name"]), str(e["partner"]), str(e["partner_id"]), int(e["seat"]),
            dict(e["env_kwargs"]), f"checkpoint:path={file}", str(e["sha256"]),
            {**e.get("train", {}), "evaluation": e.get("evaluation", {})},
            brs.seat_layout({int(k): v for k, v in e.get("others", {}).items()})))  # fmt: skip
    return out


def _write(game: str, entries: list[dict[str, Any]]) -> None:
    manifest = {"game": game, "format": FORMAT, "best_responses": entries}
    manifest_path(game).write_text(json.dumps(manifest, indent=1) + "\n")


def _exact(game: str, partner: str, seat: int, kwargs: dict[str, Any]) -> float | None:
    from tom_envs.references import NoReference, reference_for

    try:
        ref = reference_for(game, partner, seat, BR_EVAL_SEEDS[:1], trained=False, **kwargs)
    except (NoReference, KeyError, ValueError):
        return None
    return ref.mean if ref.kind == "exact" else None


def evaluate(game: str, partner: str, seat: int, kwargs: dict[str, Any],
             seeds: tuple[int, ...] | None = None, sha256: str | None = None) -> dict[str, Any]:  # fmt: skip
    """The cached BR's ``U`` on ``seeds`` (mean, bootstrap 95% interval), the exact value where a
    solver gives one, and ``exact - mean``."""
    from tom_envs import best_responses as brs
    from tom_envs.agents import make_agent
    from tom_envs.records import bootstrap_ci
    from tom_envs.registration import game_spec

    spec = game_spec(game)
    seeds = eval_seeds(spec.name) if seeds is None else seeds
    br = brs.find(spec, partner, seat, kwargs, sha256, others_of(spec.name, partner, seat))
    if br is None:
        have = [(b.name, b.partner_id[:20], b.seat) for b in brs.best_responses(game)]
        raise ZooDataError(f"{game}: no cached BR to {partner} ({brs.partner_id(game, partner)[:20]}) "
                           f"in seat {seat} for {kwargs}; cached: {have}")  # fmt: skip
    t0 = time.process_time()
    values = brs.trained_values(spec, br, partner, seeds, kwargs, make_agent)
    mean, lo, hi = bootstrap_ci(list(values.values()), 0, resamples=2000)
    exact = _exact(game, partner, seat, kwargs)
    return {"seeds": [min(seeds), max(seeds)], "episodes": len(seeds), "U_mean": round(mean, 6),
            "ci95": [round(lo, 6), round(hi, 6)],
            "exact": None if exact is None else round(exact, 6),
            "gap": None if exact is None else round(exact - mean, 6),
            "versus_candidates": versus_candidates(spec, br, partner, seeds, kwargs, values),
            "cpu_s": round(time.process_time() - t0, 2)}  # fmt: skip


def versus_candidates(spec: Any, br: Any, partner: str, seeds: tuple[int, ...],
                      kwargs: dict[str, Any], trained: dict[int, float]) -> dict[str, Any]:  # fmt: skip
    """The evaluation layer's choice between the trained BR and the best declared candidate (the
    game's zoo members as focal, as ``functional_tom`` declares them), on
    :data:`SELECTION_SEEDS`, then its mean ``U`` on ``seeds``: which reference a page gets."""
    from tom_envs import zoo
    from tom_envs.agents import make_agent
    from tom_envs.best_responses import BestResponseAgent
    from tom_envs.evaluation.references import candidate_reference
    from tom_envs.runner import play_episode

    objective = spec.load().functional_objective(**{**spec.kwargs, **kwargs})
    n = spec.load().make_bundle(**{**spec.kwargs, **kwargs}).game.num_players

    def play(who: str, on: Any) -> dict[int, float]:
        if who == br.agent_spec and tuple(on) == tuple(seeds):
            return dict(trained)  # already played
        out = {}
        others = dict(br.others)
        for s in on:
            agents = [make_agent(others.get(i, partner), spec) for i in range(n)]
            agents[br.seat] = (BestResponseAgent(partner, make_agent, br.sha256, others)  # this BR
                               if who == br.agent_spec else make_agent(who, spec))  # fmt: skip
            out[int(s)] = float(objective(play_episode(spec, agents, int(s), kwargs), (br.seat,)))
        return out

    names = [m.agent_spec for m in zoo.members(spec.name)]
    ref = candidate_reference(play, names, SELECTION_SEEDS, seeds, trained=br.agent_spec)
    return {"kind": ref.kind, "U_mean": round(ref.mean, 6), "source": ref.source,
            "candidates": names}  # fmt: skip


def build(game: str, partner: str, steps: int | None = None, seed: int = 0, seat: int = 0,
          runs: Path = RUNS, do_train: bool = True) -> dict[str, Any]:  # fmt: skip
    """Train (if asked and missing) and ship one BR; returns its manifest entry."""
    from tom_envs.best_responses import partner_id
    from tom_envs.identity import resolved_env_kwargs
    from tom_envs.registration import game_spec

    spec = game_spec(game)
    j = job(spec.name, partner, steps, seed, seat)
    run = train(j, runs) if do_train else runs / j.run_id
    if not (run / "model.zip").is_file():
        raise ZooDataError(f"{j.run_id} is not trained (run: {j.command})")
    folder = DATA / spec.name
    folder.mkdir(parents=True, exist_ok=True)
    dst = folder / f"{j.name}.zip"
    strip_sb3(run / "model.zip", dst)
    curve = folder / f"{j.name}_curve.csv"
    thin_curve(run / "curve.csv", curve)
    kwargs = dict(j.env_kwargs)
    resolved = json.loads(json.dumps(resolved_env_kwargs(spec, kwargs), default=str))
    entry: dict[str, Any] = {
        "name": j.name, "partner": partner, "partner_id": partner_id(spec.name, partner),
        "seat": seat, "env_kwargs": resolved, "file": dst.name, "sha256": file_sha256(dst),
        "bytes": dst.stat().st_size,
        **({"others": {str(k): a for k, a in others_of(spec.name, partner, seat).items()}}
           if spec.name in LAYOUTS else {}),
        "train": {**run_record(j, run), "curve": curve.name,
                  "algo": "SB3 PPO (MaskablePPO), " + ("per-env path" if "--engine envs" in
                                                      j.command else "batched engine")}}  # fmt: skip
    data = load_manifest(spec.name) or {"best_responses": []}
    others = [e for e in data["best_responses"] if e["name"] != j.name]
    _write(spec.name, [*others, entry])
    entry["evaluation"] = evaluate(spec.name, partner, seat, kwargs, sha256=entry["sha256"])
    _write(spec.name, [*others, entry])
    return entry


def _fmt(x: Any, digits: int = 3) -> str:
    return "-" if x is None else f"{float(x):.{digits}f}"


def table(games: list[str] | None = None) -> str:
    """The page's rows: per shipped BR its kind, value on the evaluation seeds, budget, seed,
    clocks, the exact value and the gap where a solver gives one."""
    rows = ["| game | partner | seat | kind | U of the trained BR [95%] (episodes) | exact | exact − "
            "trained | the reference: max(trained, best declared candidate) | budget (steps) | "
            "seed | wall / CPU s | curve (first → last train return) |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for game in games or sorted(p.name for p in DATA.iterdir() if (p / BR_MANIFEST).is_file()):
        for e in (load_manifest(game) or {}).get("best_responses", []):
            t, ev = e["train"], e.get("evaluation", {})
            rows.append(
                f"| {game} | `{e['partner']}` | {_seat(e)} | trained lower bound | "
                f"{_fmt(ev.get('U_mean'))} [{_fmt((ev.get('ci95') or [None])[0])}, "
                f"{_fmt((ev.get('ci95') or [None, None])[1])}] ({ev.get('episodes', '?')}) | "
                f"{_fmt(ev.get('exact'), 4)} | {_fmt(ev.get('gap'))} | {_versus(ev)} | "
                f"{t['steps']:,} | "
                f"{t['seed']} | {t.get('wall_s')} / {t.get('cpu_s')} | {_curve(game, t)} |")  # fmt: skip
    return "\n".join(rows) + "\n"


def _seat(entry: dict[str, Any]) -> str:
    """The focal seat, and the other seats' agents where the partner does not fill them."""
    others = entry.get("others") or {}
    if not others:
        return str(entry["seat"])
    return f"{entry['seat']} ({', '.join(f'seat {k}: `{a}`' for k, a in others.items())})"


def _versus(ev: dict[str, Any]) -> str:
    v = ev.get("versus_candidates")
    if not v:
        return "-"
    who = "trained BR" if v["kind"] == "trained lower bound" else v["source"].split(" won")[0]
    return f"{who}: {_fmt(v['U_mean'])} ({v['kind']})"


def _curve(game: str, train_record: dict[str, Any]) -> str:
    import csv

    path = DATA / game / str(train_record["curve"])
    with path.open(newline="") as fh:
        vals = [float(r["return_mean"]) for r in csv.DictReader(fh) if r.get("return_mean")]
    if not vals:
        return f"`{path.name}`"
    return f"`{path.name}` ({vals[0]:.2f} → {vals[-1]:.2f}, max {np.max(vals):.2f})"


__all__ = ["BR_EVAL_SEEDS", "BR_MANIFEST", "LAYOUTS", "RECIPES", "ROOM_EVAL_SEEDS",
           "best_responses", "br_name", "build", "eval_seeds", "evaluate", "job", "load_manifest",
           "manifest_path", "others_of", "partners_arg", "seat_specs", "table", "train"]
