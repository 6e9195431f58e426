"""Learning curves of a training run (MAPPO, PPO) against env steps, wall time and CPU time, in
one PNG.

On a shared machine the wall time of a run moves with the load; the CPU time of the training
process (one torch thread) does not, and on an idle core it is the wall time. So each curve is
drawn three times: against env steps, wall minutes and CPU minutes, with the target as a
horizontal line. CPU time comes from the curve's ``cpu_s`` column or, for runs logged without
it, from a sampler file (``--cpu-log``: lines ``unix_time elapsed_s cpu_s load1 load5 load15``,
as ``ps -o etimes=,times=`` gives them, whole seconds), interpolated linearly at each row's wall
time (from 0 CPU seconds at the start of the process to the first sample).

    python -m tom_baselines.curves runs/x/curve.csv --series eval/rounds rounds_mean \
        --target 11 --ylabel rounds --out docs/results/figures/x.png
"""

from __future__ import annotations

import argparse
import csv
from collections.abc import Sequence

import numpy as np


def load(path: str, cpu_log: str | None = None) -> dict[str, np.ndarray]:
    """The curve's columns as float arrays (missing cells: NaN), ``cpu_s`` filled from the log."""
    with open(path) as fh:
        rows = list(csv.DictReader(fh))
    keys = rows[0].keys() if rows else []
    out: dict[str, np.ndarray] = {}
    for k in keys:
        vals = []
        for r in rows:
            try:
                vals.append(float(r[k]))
            except (TypeError, ValueError):
                vals.append(np.nan)
        out[k] = np.asarray(vals)
    if cpu_log is not None:
        log = np.loadtxt(cpu_log, usecols=(1, 2), ndmin=2)  # elapsed_s, cpu_s of the process
        log = np.vstack([[0.0, 0.0], log])  # the process starts with no CPU time
        out["cpu_s"] = np.interp(out["wall_s"], log[:, 0], log[:, 1])
    return out


def plot(
    cols: dict[str, np.ndarray], series: Sequence[str], out: str, title: str, ylabel: str,
    target: float | None, reference: dict[str, np.ndarray] | None = None,
    reference_label: str = "reference",
) -> None:  # fmt: skip
    """Three panels (env steps, wall minutes, CPU minutes) of ``series``; a ``reference`` run's
    same series in grey where it has the column (e.g. the per-env collector's run)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [("global_step", 1e6, "env steps (millions)"), ("wall_s", 60, "wall time (min)"),
          ("cpu_s", 60, "CPU time of the training process (min)")]  # fmt: skip
    xs = [x for x in xs if x[0] in cols]
    fig, axes = plt.subplots(1, len(xs), figsize=(5 * len(xs), 3.6), sharey=True)
    for ax, (key, scale, label) in zip(np.atleast_1d(axes), xs, strict=True):
        for name in series:
            if name not in cols:
                continue
            y = cols[name]
            ok = ~np.isnan(y)
            ax.plot(cols[key][ok] / scale, y[ok], marker="." if ok.sum() < 60 else None,
                    label=name)  # fmt: skip
        if reference is not None and key in reference:
            for name in series:
                if name in reference:
                    y = reference[name]
                    ok = ~np.isnan(y)
                    ax.plot(reference[key][ok] / scale, y[ok], color="0.6", lw=1,
                            ls=":" if name.startswith("eval/") else "-",
                            label=f"{reference_label}: {name}")  # fmt: skip
        if target is not None:
            ax.axhline(target, color="k", ls="--", lw=1, label=f"target {target:g}")
        ax.set_xlabel(label)
        ax.grid(alpha=0.3)
    np.atleast_1d(axes)[0].set_ylabel(ylabel)
    np.atleast_1d(axes)[0].legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def curve_arguments(description: str) -> argparse.ArgumentParser:
    """A parser with the arguments both curve commands take (this module's and
    ``tom_baselines.common``'s): the CSV, its columns to draw, the image, a title, a y label."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("csv")
    ap.add_argument("--series", nargs="+", default=["return_mean", "eval/return_mean"])
    ap.add_argument("--out", required=True)
    ap.add_argument("--title", default="")
    ap.add_argument("--ylabel", default="value")
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    """Command line (see the module docstring)."""
    ap = curve_arguments("MAPPO learning curves vs steps, wall and CPU time")
    ap.add_argument("--target", type=float, default=None)
    ap.add_argument("--cpu-log", default=None)
    ap.add_argument("--reference", default=None, help="another run's curve.csv, drawn in grey")
    ap.add_argument("--reference-label", default="reference")
    args = ap.parse_args(argv)
    ref = load(args.reference) if args.reference else None
    plot(load(args.csv, args.cpu_log), args.series, args.out, args.title, args.ylabel,
         args.target, ref, args.reference_label)  # fmt: skip
    print(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
