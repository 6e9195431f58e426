"""Turn finished self-play training runs into the zoo's shipped members (``tom-envs zoo build``).

:data:`JOBS` holds every learned member's training command, exactly as it was run (the suite's own
``tom-envs train``; each writes to ``runs/zoo/<Game>_<name>``). ``tom-envs zoo build GAME`` reads
the finished runs and writes ``experiments/zoo/data/<Game>/``:

* ``<name>.pt`` / ``<name>.zip``: the **actor only** (MAPPO: the checkpoint without critic and
  value statistics; SB3: the policy weights without the value network and without optimiser,
  loaded by the safe loader), so the files stay small;
* ``<name>_curve.csv``: the run's learning curve, evenly thinned to at most :data:`CURVE_ROWS`
  rows (first and last kept);
* ``zoo.json``: per member its file, SHA-256, generated description, and the training record:
  command, seed, steps, wall and CPU seconds of the command (``/usr/bin/time`` when the run was
  timed so, else the trainer's own clock), the final evaluation's return.

``--train`` first runs the jobs whose output is missing, one after another (the machine's other
core is for the other runs).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import shlex
import subprocess
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tom_experiments.zoo import DATA, FORMAT, MANIFEST

#: Curves are shipped with at most this many rows.
CURVE_ROWS = 200
#: Where the training runs write (relative to the working folder).
RUNS = Path("runs/zoo")

_OC = ("tom-envs train mappo Overcooked --kw layout=cramped_room observation=features "
       "--event-rewards potting_onion=3 useful_plate=3 soup_from_pot=5 "
       "--event-rewards-horizon 2500000 --total-steps 1000000 --num-envs 16 --num-steps 400 "
       "--lr 1e-3 --gae-lambda 0.98 --clip-coef 0.05 --update-epochs 8 --num-minibatches 8 "
       "--ent-coef 0.05 --eval-every 25 --eval-episodes 5 --engine batched --no-progress")  # fmt: skip
_BD = ("tom-envs train ppo BombDefusal --self-play --kw shaping=true \"probes='none'\" "
       "--total-steps 700000 --num-envs 128 --n-steps 32 --batch-size 1024 --n-epochs 5 "
       "--hidden 128 --lr 5e-4 --eval-episodes 200 --engine batched --no-progress")  # fmt: skip
_HANABI = ("tom-envs train ppo Hanabi --self-play --total-steps 1000000 --num-envs 128 "
           "--n-steps 32 --batch-size 1024 --n-epochs 5 --hidden 128 --lr 5e-4 --eval-episodes 100 "
           "--engine batched --no-progress")  # fmt: skip
_ROOMS = ("--self-play --total-steps 300000 --num-envs 16 --n-steps 128 --batch-size 512 "
          "--n-epochs 5 --hidden 64 --lr 5e-4 --eval-episodes 100 --engine batched --no-progress")  # fmt: skip


@dataclass(frozen=True)
class Job:
    """One learned member's training run."""

    game: str
    name: str
    algo: str  # "mappo" or "ppo"
    seed: int
    steps: int
    base: str  # the command without --seed / --out
    env_kwargs: tuple[tuple[str, Any], ...] = ()

    @property
    def run_id(self) -> str:
        """``<Game>_<name>``: the run's folder under :data:`RUNS`."""
        return f"{self.game}_{self.name}"

    @property
    def command(self) -> str:
        """The exact command that trains it."""
        return f"{self.base} --seed {self.seed} --out {RUNS / self.run_id}"


_OC_KW = (("layout", "cramped_room"), ("observation", "features"))
_BD_KW = (("shaping", True), ("probes", "none"))
JOBS: tuple[Job, ...] = (
    *(Job("Overcooked", f"mappo_s{s}", "mappo", s, 1_000_000, _OC, _OC_KW) for s in range(3)),
    *(Job("BombDefusal", f"ppo_s{s}", "ppo", s, 700_000, _BD, _BD_KW) for s in range(3)),
    *(Job("CollabCapture", f"ppo_s{s}", "ppo", s, 300_000,
          f"tom-envs train ppo CollabCapture {_ROOMS}") for s in range(2)),
    *(Job("CollabEscape", f"ppo_s{s}", "ppo", s, 300_000,
          f"tom-envs train ppo CollabEscape {_ROOMS}") for s in range(2)),
    *(Job("Hanabi", f"ppo_s{s}", "ppo", s, 1_000_000, _HANABI) for s in range(3)),
)  # fmt: skip


def jobs(game: str) -> list[Job]:
    """The jobs of ``game``."""
    return [j for j in JOBS if j.game == game]


def file_sha256(path: Path) -> str:
    """SHA-256 hex digest of a file."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


_FIXED_TIME = (2026, 1, 1, 0, 0, 0)  # zip entries' time: the same weights give the same bytes


def strip_mappo(src: Path, dst: Path) -> None:
    """Write ``src``'s MAPPO checkpoint without critic and value statistics."""
    import torch

    blob = torch.load(src, map_location="cpu", weights_only=True)
    out = {"format": blob["format"], "meta": {**blob["meta"], "actor_only": True},
           "actor": blob["actor"]}  # fmt: skip
    dst.parent.mkdir(parents=True, exist_ok=True)
    torch.save(out, dst)


def strip_sb3(src: Path, dst: Path) -> None:
    """Write ``src``'s SB3 ``model.zip`` with the policy's actor weights only (no value network,
    no optimiser state), its ``data`` and the suite's ``tom_envs.json`` unchanged."""
    import torch

    from tom_baselines.ppo_sb3 import VALUE_KEYS

    with zipfile.ZipFile(src) as zf:
        weights = torch.load(io.BytesIO(zf.read("policy.pth")), map_location="cpu",
                             weights_only=True)  # fmt: skip
        keep = {k: v for k, v in weights.items() if not k.startswith(VALUE_KEYS)}
        buf = io.BytesIO()
        torch.save(keep, buf)
        parts = {"data": zf.read("data"), "policy.pth": buf.getvalue(),
                 "tom_envs.json": zf.read("tom_envs.json")}  # fmt: skip
        if "_stable_baselines3_version" in zf.namelist():
            parts["_stable_baselines3_version"] = zf.read("_stable_baselines3_version")
    dst.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as out:
        for name, data in parts.items():
            out.writestr(zipfile.ZipInfo(name, _FIXED_TIME), data, zipfile.ZIP_DEFLATED)


def thin_curve(src: Path, dst: Path, rows: int = CURVE_ROWS) -> int:
    """Copy ``src``'s CSV to ``dst`` keeping at most ``rows`` rows, evenly spaced, first and last
    kept; returns the rows written."""
    with src.open(newline="") as fh:
        reader = csv.DictReader(fh)
        fields, data = list(reader.fieldnames or []), list(reader)
    if len(data) > rows:
        step = (len(data) - 1) / (rows - 1)
        data = [data[round(k * step)] for k in range(rows)]
    with dst.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        writer.writerows(data)
    return len(data)


def _float(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def run_record(job: Job, run: Path) -> dict[str, Any]:
    """What the run itself recorded: steps, clocks, final evaluation (from its curve and the
    ``time.txt`` that ``/usr/bin/time -f "wall_s=%e user_s=%U sys_s=%S ..."`` wrote)."""
    with (run / "curve.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    last = rows[-1]
    evals = [r for r in rows if _float(r.get("eval/return_mean")) is not None]
    trained = [r for r in rows if _float(r.get("return_mean")) is not None]
    record: dict[str, Any] = {
        "command": job.command, "seed": job.seed, "steps": int(float(last["global_step"])),
        "train_cpu_s": _float(max((r.get("cpu_s") for r in rows), key=lambda x: _float(x) or 0)),
        "final_eval_return": _float(evals[-1]["eval/return_mean"]) if evals else None,
        "final_train_return": _float(trained[-1]["return_mean"]) if trained else None,
        "final_eval": {k.removeprefix("eval/"): _float(v) for k, v in evals[-1].items()
                       if k.startswith("eval/") and _float(v) is not None} if evals else {},
    }  # fmt: skip
    timed = run / "time.txt"
    if timed.is_file():
        found = dict(re.findall(r"(\w+)=([\d.]+)", timed.read_text()))
        record["wall_s"] = float(found["wall_s"])
        record["cpu_s"] = round(float(found["user_s"]) + float(found["sys_s"]), 2)
    else:
        record["wall_s"] = _float(last.get("wall_s"))
        record["cpu_s"] = record["train_cpu_s"]
    return record


def build(game: str, runs: Path = RUNS, describe_seeds: Any = None) -> dict[str, Any]:
    """Write ``data/<game>/`` from the finished runs of ``game``'s jobs; returns the manifest."""
    from tom_envs.registration import game_spec
    from tom_experiments.zoo.describe import DESCRIBE_SEEDS, describe

    todo = jobs(game_spec(game).name)
    if not todo:
        raise ValueError(f"no zoo training jobs for {game}; games: "
                         f"{', '.join(sorted({j.game for j in JOBS}))}")  # fmt: skip
    folder = DATA / todo[0].game
    folder.mkdir(parents=True, exist_ok=True)
    entries = []
    kwargs = dict(todo[0].env_kwargs)
    for job in todo:
        run = runs / job.run_id
        if not (run / "DONE").exists() and not (run / "curve.csv").exists():
            print(f"skip {job.run_id}: not trained (run: {job.command})")
            continue
        suffix = ".pt" if job.algo == "mappo" else ".zip"
        dst = folder / f"{job.name}{suffix}"
        if job.algo == "mappo":
            strip_mappo(run / "checkpoint.pt", dst)
        else:
            strip_sb3(run / "model.zip", dst)
        curve = folder / f"{job.name}_curve.csv"
        thin_curve(run / "curve.csv", curve)
        spec = f"checkpoint:path={dst}"
        line = describe(spec, job.game, kwargs, describe_seeds or DESCRIBE_SEEDS, trusted=True)
        entries.append({"name": job.name, "kind": "checkpoint", "file": dst.name,
                        "sha256": file_sha256(dst), "bytes": dst.stat().st_size,
                        "description": f"{job.algo.upper()} self-play seed {job.seed}: {line}",
                        "train": {**run_record(job, run), "curve": curve.name}})  # fmt: skip
        print(f"{job.run_id}: {dst.stat().st_size} bytes; {entries[-1]['description']}")
    manifest = {"game": todo[0].game, "format": FORMAT, "env_kwargs": kwargs,
                "describe_seeds": [min(describe_seeds or DESCRIBE_SEEDS),
                                   max(describe_seeds or DESCRIBE_SEEDS)],
                "members": entries}  # fmt: skip
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def train_missing(game: str, runs: Path = RUNS) -> None:
    """Run, one after another, the jobs of ``game`` whose run folder has no ``DONE``."""
    for job in jobs(game):
        run = runs / job.run_id
        if (run / "DONE").exists():
            continue
        run.mkdir(parents=True, exist_ok=True)
        argv = ["/usr/bin/time", "-f", "wall_s=%e user_s=%U sys_s=%S maxrss_kb=%M", "-o",
                str(run / "time.txt"), *shlex.split(job.command)]  # fmt: skip
        print(f"training {job.run_id}: {job.command}", flush=True)
        subprocess.run(argv, check=True)
        (run / "DONE").touch()


__all__ = ["CURVE_ROWS", "JOBS", "RUNS", "Job", "build", "jobs", "run_record", "strip_mappo",
           "strip_sb3", "thin_curve", "train_missing"]
