"""Small helpers the RL baselines share: settings from a dataclass, learning curves, evaluation.

* :func:`parse_settings` builds a command line from a settings dataclass: one ``--flag`` per field,
  its help text read from the docstring under the field (CleanRL/tyro style, no extra dependency).
* :class:`LearningCurve` keeps one row per update, rewrites ``curve.csv`` and plots ``curve.png``.
* :func:`evaluate` plays trained agents with the suite's runner, so every game's own episode
  metrics (e.g. ΔFunctional/T in the matrix games) come out exactly as for any other agent.
* :func:`progress_bar` is tqdm when installed (it is in the ``rl`` extra).
"""

from __future__ import annotations

import argparse
import ast
import csv
import dataclasses
import inspect
import itertools
import math
import sys
import textwrap
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tom_baselines.curves import curve_arguments
from tom_envs.agents import make_agent, parse_spec
from tom_envs.core.agents import Agent
from tom_envs.registration import GameSpec, game_spec
from tom_envs.runner import run, summarize

T = typing.TypeVar("T")


# --------------------------------------------------------------------------- settings
def field_docs(cls: type) -> dict[str, str]:
    """The docstring written under each field of a dataclass (``x: int = 1`` then ``\"\"\"...\"\"\"``)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError):  # no source (e.g. run under a profiler as __main__)
        return {}
    body = tree.body[0].body  # type: ignore[attr-defined]
    docs = {}
    for prev, node in itertools.pairwise(body):
        if (
            isinstance(prev, ast.AnnAssign)
            and isinstance(prev.target, ast.Name)
            and isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            docs[prev.target.id] = " ".join(node.value.value.split())
    return docs


def parse_kv(items: Iterable[str]) -> dict[str, Any]:
    """``["horizon=10", "probes='none'"]`` -> ``{"horizon": 10, "probes": "none"}``.

    Values follow the agent-spec rules (ints, floats, bools, ``none`` is None); a value in quotes
    stays a string.
    """
    out: dict[str, Any] = {}
    for item in items:
        key, _, val = item.partition("=")
        if len(val) >= 2 and val[0] == val[-1] and val[0] in "'\"":
            out[key] = val[1:-1]
        else:
            out.update(parse_spec(f"x:{item}")[1])
    return out


def parse_settings(cls: type[T], argv: Sequence[str] | None, prog: str) -> T:
    """Parse ``argv`` into an instance of the settings dataclass ``cls``.

    Every field becomes ``--field-name``; booleans get ``--x/--no-x``; ``list[str]`` fields take
    one or more values; the help text is the field's docstring.
    """
    docs = field_docs(cls)
    hints = typing.get_type_hints(cls)
    parser = argparse.ArgumentParser(prog=prog, description=(cls.__doc__ or "").split("\n")[0])
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        kind = hints[f.name]
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[misc]
        flag = "--" + f.name.replace("_", "-")
        help_ = f"{docs.get(f.name, '')} (default: {default!r})"
        if kind is bool:
            parser.add_argument(
                flag, action=argparse.BooleanOptionalAction, default=default, help=help_
            )
        elif typing.get_origin(kind) is list:
            parser.add_argument(flag, nargs="*", default=default, help=help_)
        else:
            base = [t for t in typing.get_args(kind) if t is not type(None)] or [kind]
            convert = base[0] if base[0] in (int, float, str) else str
            parser.add_argument(flag, type=_optional(convert), default=default, help=help_)
    ns = parser.parse_args(list(argv) if argv is not None else None)
    return cls(**vars(ns))


def _optional(convert: Callable[[str], Any]) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        return None if text.lower() == "none" else convert(text)

    parse.__name__ = getattr(convert, "__name__", "value")
    return parse


# ----------------------------------------------------------------------- learning curve
class LearningCurve:
    """One row per update; ``curve.csv`` is rewritten on every :meth:`log` (rows may add columns)."""

    def __init__(self, out_dir: str | Path, title: str = "") -> None:
        self.dir = Path(out_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.title = title
        self.rows: list[dict[str, Any]] = []

    @property
    def csv_path(self) -> Path:
        """``<out>/curve.csv``."""
        return self.dir / "curve.csv"

    @property
    def png_path(self) -> Path:
        """``<out>/curve.png``."""
        return self.dir / "curve.png"

    def log(self, row: Mapping[str, Any]) -> None:
        """Add a row and rewrite the CSV."""
        self.rows.append(dict(row))
        columns: list[str] = []
        for r in self.rows:
            columns += [k for k in r if k not in columns]
        with self.csv_path.open("w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=columns)
            writer.writeheader()
            for r in self.rows:
                writer.writerow({k: _fmt(r.get(k)) for k in columns})

    @classmethod
    def read(cls, csv_path: str | Path, title: str = "") -> LearningCurve:
        """A curve from its CSV (numbers parsed), e.g. to plot other columns."""
        curve = cls(Path(csv_path).parent, title)
        with open(csv_path, newline="") as fh:
            for row in csv.DictReader(fh):
                curve.rows.append({k: _number(v) for k, v in row.items()})
        return curve

    def plot(
        self,
        series: Sequence[str] = ("return_mean", "eval/return_mean"),
        png: str | Path | None = None,
        ylabel: str = "episode return",
    ) -> Path | None:
        """Plot ``series`` against ``global_step`` into ``png`` (default ``curve.png``)."""
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:  # the curve is still in the CSV
            return None
        fig, ax = plt.subplots(figsize=(6.4, 4.0))
        for key in series:
            pts = [
                (r["global_step"], r[key])
                for r in self.rows
                if isinstance(r.get(key), (int, float)) and not math.isnan(r[key])
            ]
            if pts:
                xs, ys = zip(*pts, strict=True)
                ax.plot(xs, ys, marker="." if len(pts) < 40 else None, label=key)
        ax.set_xlabel("env steps")
        ax.set_ylabel(ylabel)
        ax.set_title(self.title, fontsize=9)
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend()
        fig.tight_layout()
        path = Path(png) if png is not None else self.png_path
        fig.savefig(path, dpi=110)
        plt.close(fig)
        return path


def _number(text: str) -> Any:
    try:
        return float(text) if text != "" else None
    except ValueError:
        return text


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tom_baselines.common CSV --series A B --out PNG``: plot columns of a curve."""
    a = curve_arguments("plot columns of a learning-curve CSV").parse_args(argv)
    LearningCurve.read(a.csv, a.title).plot(a.series, a.out, a.ylabel)
    print(a.out)
    return 0


def _fmt(v: Any) -> Any:
    if isinstance(v, float):
        return f"{v:.6g}"
    return "" if v is None else v


# ---------------------------------------------------------------------------- evaluation
def seat_agents(
    game: str | GameSpec,
    learner: Callable[[], Agent],
    partners: Mapping[int, str],
    num_players: int,
) -> list[Callable[[], Agent]]:
    """One agent factory per seat: ``partners[seat]`` specs where given, the learner elsewhere."""
    spec = game if isinstance(game, GameSpec) else game_spec(game)
    return [
        (lambda s=partners[i]: make_agent(s, spec, trusted=True))  # the trainer's flags
        if i in partners else learner
        for i in range(num_players)
    ]


#: Evaluation episodes of a training run use seeds from here on, far from any training seed.
EVAL_SEED_BASE = 10**6


def eval_seed(train_seed: int) -> int:
    """The first evaluation seed of a training run with ``train_seed`` (every baseline uses it)."""
    return EVAL_SEED_BASE + train_seed * 10**4


def evaluate(
    game: str | GameSpec,
    factories: Sequence[Callable[[], Agent]],
    episodes: int,
    seed: int,
    env_kwargs: Mapping[str, Any] | None = None,
    learners: Sequence[int] | None = None,
) -> dict[str, float]:
    """Play ``episodes`` seeded episodes with the suite's runner; mean of every summary metric.

    ``return_mean`` is the mean return of the ``learners`` seats (default: every seat).
    """
    eps = run(game, factories, episodes, seed=seed, env_kwargs=env_kwargs)
    out = {k: m for k, (m, _) in summarize(eps).items()}
    seats = range(len(factories)) if learners is None else learners
    out["return_mean"] = float(sum(out[f"return/player_{p}"] for p in seats) / len(seats))
    return out


def progress_bar(total: int, desc: str, enabled: bool = True) -> Any:
    """A tqdm progress bar over env steps (a no-op object when tqdm is missing or disabled)."""
    try:
        from tqdm import tqdm
    except ImportError:
        enabled = False
    if not enabled:
        return _NoBar()
    return tqdm(total=total, desc=desc, unit="step", mininterval=2.0, file=sys.stderr)


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def set_postfix_str(self, s: str) -> None:
        pass

    def close(self) -> None:
        pass


if __name__ == "__main__":
    raise SystemExit(main())
