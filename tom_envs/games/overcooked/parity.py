"""Exact parity with overcooked-ai 1.1.0: canonical states, action sequences and the peer replay.

overcooked-ai needs its own venv (scipy, numpy<2; ``shared/specs/peers.md``), so it never runs in
this process: :func:`replay_in_peer` sends joint action sequences to
``benchmarks/peers/overcooked_ai_replay.py`` running in the peer's Python, which answers with a
digest of every state (and optionally of every lossless observation) and the rewards. Our rules
replay the same sequences and must give the same digests and rewards, step for step.

The canonical state shared by both sides is
``[timestep, [[x, y, facing, held], [x, y, facing, held]], [[x, y, object], ...]]`` (objects on
counters and in pots, sorted by cell; ``held``/``object`` is ``None``, ``"onion"``, ``"dish"`` or
``["soup", onions, cooking_tick]``; a soup out of its pot has ``cooking_tick == cook_time``).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tom_envs.games.overcooked.encode import OvercookedEncoder
from tom_envs.games.overcooked.rules import (
    Item,
    OvercookedConfig,
    OvercookedGame,
    OvercookedState,
    soup_onions,
)

PEER_SCRIPT = (
    Path(__file__).resolve().parents[3] / "benchmarks" / "peers" / "overcooked_ai_replay.py"
)
JointActions = list[tuple[int, int]]


def peer_python() -> Path | None:
    """The overcooked-ai venv's Python (``$PEERS_DIR`` or ``~/peers``), if it exists."""
    root = Path(os.environ.get("PEERS_DIR", Path.home() / "peers"))
    exe = root / "venv-overcooked" / "bin" / "python"
    return exe if exe.exists() else None


def peer_available() -> tuple[bool, str]:
    """Whether the peer can run here, with the reason when it cannot."""
    exe = peer_python()
    if exe is None:
        return False, (
            "overcooked-ai 1.1.0 peer venv not found (expected $PEERS_DIR/venv-overcooked or "
            "~/peers/venv-overcooked; build it with: python3 -m venv venv-overcooked && "
            "venv-overcooked/bin/pip install overcooked-ai==1.1.0 scipy 'numpy<2')"
        )
    if not PEER_SCRIPT.exists():
        return False, f"peer driver {PEER_SCRIPT} is missing (benchmarks/ not in this checkout)"
    probe = subprocess.run(
        [str(exe), "-c", "import overcooked_ai_py.mdp.overcooked_mdp"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if probe.returncode != 0:
        return False, f"overcooked-ai does not import in {exe}: {probe.stderr.strip()[-300:]}"
    return True, ""


# ---------------------------------------------------------------------------- canonical
def _object(item: int, cook_time: int) -> Any:
    if item == Item.ONION:
        return "onion"
    if item == Item.DISH:
        return "dish"
    if item:
        return ["soup", soup_onions(item), cook_time]
    return None


def canonical_state(game: OvercookedGame, state: OvercookedState) -> list[Any]:
    """The shared canonical form of a state (see the module docstring)."""
    ct = game.config.cook_time
    players = [[c.pos[0], c.pos[1], c.facing, _object(c.held, ct)] for c in state.chefs]
    objects = []
    for pos, (n, tick) in zip(game.layout.pots, state.pots, strict=True):
        if n or tick >= 0:
            objects.append([pos[0], pos[1], ["soup", n, tick]])
    for pos, item in zip(game.layout.counters, state.counters, strict=True):
        if item:
            objects.append([pos[0], pos[1], _object(item, ct)])
    objects.sort()
    return [state.timestep, players, objects]


@dataclass
class Replay:
    """One episode replayed by one side: rewards, state digest, observation digest, states."""

    rewards: list[float]
    digest: str
    obs_digest: str | None = None
    states: list[Any] | None = None


def replay_ours(
    config: OvercookedConfig,
    actions: Sequence[tuple[int, int]],
    start: Sequence[tuple[int, int]] | None = None,
    obs: bool = False,
    trace: bool = False,
) -> Replay:
    """Replay a joint action sequence with our rules (the same digests as the peer's)."""
    game = OvercookedGame(config)
    encoder = OvercookedEncoder(OvercookedConfig(**{**_kwargs(config), "observation": "lossless"}))
    state = game.initial_state(np.random.default_rng(0))
    if start is not None:
        state = _with_start(state, start)
    digest = hashlib.sha1()
    obs_digest = hashlib.sha1() if obs else None
    states: list[Any] | None = [] if trace else None
    W, H = game.layout.width, game.layout.height

    def record(s: OvercookedState) -> None:
        c = canonical_state(game, s)
        digest.update(json.dumps(c, separators=(",", ":")).encode())
        if states is not None:
            states.append(c)
        if obs_digest is not None:
            for p in (0, 1):
                planes = encoder.encode(game.observe(s, p)).reshape(W, H, 26)
                obs_digest.update(planes.astype(np.int16).tobytes())

    record(state)
    rewards = []
    for a0, a1 in actions:
        state, r, _ = game.transition(state, int(a0), int(a1))
        rewards.append(r)
        record(state)
        if game.is_terminal(state):
            break
    return Replay(
        rewards, digest.hexdigest(), None if obs_digest is None else obs_digest.hexdigest(), states
    )


def _kwargs(config: OvercookedConfig) -> dict[str, Any]:
    return {
        "layout": config.layout,
        "horizon": config.horizon,
        "cook_time": config.cook_time,
        "delivery_reward": config.delivery_reward,
        "cooking": config.cooking,
        "names": config.names,
    }


def _with_start(state: OvercookedState, start: Sequence[tuple[int, int]]) -> OvercookedState:
    from tom_envs.games.overcooked.rules import Chef

    (x0, y0), (x1, y1) = start[0], start[1]
    chefs = (Chef((x0, y0), 0, 0), Chef((x1, y1), 0, 0))
    return OvercookedState(state.timestep, chefs, state.pots, state.counters, state.score)


def replay_in_peer(
    config: OvercookedConfig,
    episodes: Iterable[dict[str, Any]],
    obs: bool = False,
    timeout: float = 3600.0,
) -> tuple[dict[str, Any], list[Replay]]:
    """Replay episodes (``{"actions", "start", "trace"}`` dicts) in overcooked-ai 1.1.0.

    Returns the peer's header (its terrain and start cells) and one :class:`Replay` per episode.
    """
    return replay_many_in_peer([(config, list(episodes))], obs, timeout)[0]


def replay_many_in_peer(
    batches: Sequence[tuple[OvercookedConfig, Sequence[dict[str, Any]]]],
    obs: bool = False,
    timeout: float = 3600.0,
) -> list[tuple[dict[str, Any], list[Replay]]]:
    """:func:`replay_in_peer` for several configurations in one peer process (one request each)."""
    exe = peer_python()
    if exe is None:
        raise RuntimeError(peer_available()[1])
    lines = []
    for config, episodes in batches:
        layout = config.kitchen
        request = {
            "layout": layout.source or layout.name,
            "cooking": config.cooking,
            "horizon": config.horizon,
            "obs": obs,
            "episodes": [
                {
                    "actions": [[int(a), int(b)] for a, b in ep["actions"]],
                    "start": None if ep.get("start") is None else [list(p) for p in ep["start"]],
                    "trace": bool(ep.get("trace", False)),
                }
                for ep in episodes
            ],
        }
        lines.append(json.dumps(request))
    proc = subprocess.run(
        [str(exe), str(PEER_SCRIPT)],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"overcooked-ai replay failed: {proc.stderr.strip()[-2000:]}")
    answers = [json.loads(x) for x in proc.stdout.splitlines() if x.strip()]
    out = []
    at = 0
    for _, episodes in batches:
        header = answers[at]
        replays = [
            Replay(
                [float(r) for r in a["rewards"]], a["digest"], a.get("obs_digest"), a.get("states")
            )
            for a in answers[at + 1 : at + 1 + len(episodes)]
        ]
        out.append((header, replays))
        at += 1 + len(episodes)
    return out


# ---------------------------------------------------------------------------- sequences
Policy = Callable[[OvercookedGame, OvercookedState, np.random.Generator], tuple[int, int]]


def uniform_policy(
    game: OvercookedGame, state: OvercookedState, rng: np.random.Generator
) -> tuple[int, int]:
    """Uniformly random primitive actions for both chefs."""
    a = rng.integers(6, size=2)
    return int(a[0]), int(a[1])


def record_episode(
    config: OvercookedConfig, policy: Policy, seed: int, horizon: int | None = None
) -> tuple[JointActions, tuple[tuple[int, int], tuple[int, int]] | None]:
    """Play ``policy`` through our rules and return the joint actions (and the start cells)."""
    game = OvercookedGame(config)
    rng = np.random.default_rng(seed)
    state = game.initial_state(rng)
    start = None
    if config.random_start:
        start = (state.chefs[0].pos, state.chefs[1].pos)
    actions: JointActions = []
    steps = horizon or config.horizon
    while not game.is_terminal(state) and len(actions) < steps:
        joint = policy(game, state, rng)
        actions.append(joint)
        state, _, _ = game.transition(state, *joint)
    return actions, start


def first_difference(ours: Replay, theirs: Replay) -> str | None:
    """Where two traced replays first differ (``None`` if they agree)."""
    if ours.states is not None and theirs.states is not None:
        for t, (a, b) in enumerate(zip(ours.states, theirs.states, strict=False)):
            if a != b:
                return f"state after step {t}: ours {a} != overcooked-ai {b}"
        if len(ours.states) != len(theirs.states):
            return f"lengths differ: {len(ours.states)} vs {len(theirs.states)} states"
    for t, (a, b) in enumerate(zip(ours.rewards, theirs.rewards, strict=False)):
        if a != b:
            return f"reward of step {t + 1}: ours {a} != overcooked-ai {b}"
    if ours.digest != theirs.digest:
        return "state digests differ (replay with trace=True to locate)"
    if ours.obs_digest != theirs.obs_digest:
        return "lossless observation digests differ"
    return None


def greedy_policy(config: OvercookedConfig, epsilon: float = 0.1) -> Policy:
    """Both chefs follow the greedy bot's rules (through the mid-level controllers), and each
    primitive action is replaced by a uniformly random one with probability ``epsilon``: action
    sequences that cook and deliver soups, collide, drop items on counters and start pots in
    every order, for the parity check. A fresh policy must be made for every episode."""
    from tom_envs.games.overcooked.bots import choose
    from tom_envs.games.overcooked.kitchen import kitchen
    from tom_envs.games.overcooked.midlevel import MidLevelController, mid_level_actions

    k = kitchen(config.kitchen)
    ctrls: list[MidLevelController] = []

    def policy(
        game: OvercookedGame, state: OvercookedState, rng: np.random.Generator
    ) -> tuple[int, int]:
        if not ctrls:
            ctrls.extend(MidLevelController(config, p, rng=rng) for p in (0, 1))
        out = []
        for p, ctrl in enumerate(ctrls):
            if ctrl.needs_choice(state):
                opts = mid_level_actions(k, state, p, config.cooking)
                ctrl.set(choose(k, config, state, p, opts, "any", ctrl.status, rng))
            a = ctrl.primitive(state)
            if rng.random() < epsilon:
                a = int(rng.integers(6))
            out.append(a)
        return out[0], out[1]

    return policy


# ---------------------------------------------------------------------------- recorded answers
#: Format tag of :func:`record_peer_answers` files.
RECORD_FORMAT = "tom-envs/overcooked-ai-1.1.0-replays/1"


def parity_cases(
    layouts: Sequence[str], episodes: int
) -> list[tuple[OvercookedConfig, list[tuple[OvercookedConfig, dict[str, Any]]]]]:
    """The parity episodes: per layout and cooking rule, uniform and noisy-greedy joint actions.

    Returns ``[(config, [(episode_config, {"actions", "start"}), ...]), ...]``; the seeds are
    fixed, so the same call gives the same action sequences on every machine.
    """
    out = []
    for layout in layouts:
        for cooking in ("auto", "interact"):
            eps = []
            for n in range(episodes):
                for kind in ("uniform", "greedy"):
                    cfg = OvercookedConfig(
                        layout=layout, cooking=cooking, random_start=kind == "greedy"
                    )
                    policy = greedy_policy(cfg, 0.1) if kind == "greedy" else uniform_policy
                    actions, start = record_episode(cfg, policy, seed=1000 * n + len(eps))
                    eps.append((cfg, {"actions": actions, "start": start}))
            out.append((OvercookedConfig(layout=layout, cooking=cooking), eps))
    return out


def record_peer_answers(path: str | Path, layouts: Sequence[str], episodes: int) -> Path:
    """Replay :func:`parity_cases` in overcooked-ai and write the inputs with its answers.

    The file (gzipped JSON) lets the parity test run where the peer cannot be installed (CI):
    our rules must reproduce the peer's recorded state digests, observation digests and rewards.
    """
    import gzip

    cases = parity_cases(layouts, episodes)
    answers = replay_many_in_peer(
        [(cfg, [{**e, "trace": False} for _, e in eps]) for cfg, eps in cases], obs=True
    )
    records = []
    for (cfg, eps), (header, replays) in zip(cases, answers, strict=True):
        records.append(
            {
                "layout": cfg.layout,
                "cooking": cfg.cooking,
                "terrain": header["terrain"],
                "starts": header["starts"],
                "episodes": [
                    {
                        "random_start": ecfg.random_start,
                        "actions": [[int(a), int(b)] for a, b in e["actions"]],
                        "start": None if e["start"] is None else [list(p) for p in e["start"]],
                        "rewards": r.rewards,
                        "digest": r.digest,
                        "obs_digest": r.obs_digest,
                    }
                    for (ecfg, e), r in zip(eps, replays, strict=True)
                ],
            }
        )
    path = Path(path)
    blob = json.dumps({"format": RECORD_FORMAT, "cases": records}, separators=(",", ":"))
    path.write_bytes(gzip.compress(blob.encode(), mtime=0))
    return path


def load_peer_answers(path: str | Path) -> list[dict[str, Any]]:
    """The cases of a :func:`record_peer_answers` file."""
    import gzip

    blob = json.loads(gzip.decompress(Path(path).read_bytes()))
    if blob.get("format") != RECORD_FORMAT:
        raise ValueError(f"{path}: not an overcooked-ai replay record ({blob.get('format')!r})")
    return list(blob["cases"])


if __name__ == "__main__":  # python -m tom_envs.games.overcooked.parity OUT.json.gz [EPISODES]
    import sys

    from tom_envs.games.overcooked.layout import LAYOUT_NAMES

    out = record_peer_answers(
        sys.argv[1], LAYOUT_NAMES, int(sys.argv[2]) if len(sys.argv) > 2 else 3
    )
    print(f"wrote {out} ({out.stat().st_size} bytes)")
