"""Replay joint action sequences in overcooked-ai 1.1.0 and dump states and rewards as JSON.

Runs in the peer's own venv (overcooked-ai 1.1.0 needs scipy and numpy<2; see
shared/specs/peers.md): ``~/peers/venv-overcooked/bin/python overcooked_ai_replay.py < requests``.
It imports nothing from tom_envs: the tom_envs side (tom_envs/games/overcooked/parity.py) writes the
requests, reads the answers and compares them with its own rules.

Protocol: one JSON request per input line, answered by JSON lines on stdout::

    request  {"layout": "<overcooked-ai layout name>", "cooking": "auto" | "interact",
              "horizon": 400, "obs": false,
              "episodes": [{"actions": [[a0, a1], ...], "start": [[x, y], [x, y]] | null,
                            "trace": false}, ...]}
    answer   {"layout": ..., "terrain": [rows], "starts": [[x, y], [x, y]]}       (once)
             {"rewards": [r_1, ...], "digest": sha1, "obs_digest": sha1 | null,
              "states": [canonical state, ...] (only with "trace": true)}         (per episode)

Actions are overcooked-ai indices (``Action.INDEX_TO_ACTION``: 0 north, 1 south, 2 east, 3 west,
4 stay, 5 interact). ``cooking="interact"`` is overcooked-ai 1.1.0 unchanged (an empty-handed
interact starts a pot); ``"auto"`` is the original dynamics the paper used, in which a pot starts
cooking by itself when its third onion goes in. 1.1.0 has no switch for that, so this script adds
the few lines that later overcooked-ai releases ship as ``old_dynamics=True``
(:class:`OldDynamicsGridworld`).

The canonical state (shared with tom_envs) is
``[timestep, [[x, y, facing, held], [x, y, facing, held]], [[x, y, object], ...]]`` with objects
sorted by cell, ``held``/``object`` one of ``null``, ``"onion"``, ``"dish"``,
``["soup", onions, cooking_tick]``. ``digest`` is the SHA-1 of the JSON of every canonical state
after every step (the start state first); ``obs_digest`` the SHA-1 of the lossless encodings of
both players at every step, as int16 bytes.
"""

import hashlib
import json
import sys
import warnings

warnings.filterwarnings("ignore")
# overcooked-ai and gym print banners and planner messages on stdout: answers go to the real
# stdout, everything else to stderr.
OUT = sys.stdout
sys.stdout = sys.stderr

import numpy as np  # noqa: E402
from overcooked_ai_py.mdp.actions import Action, Direction  # noqa: E402
from overcooked_ai_py.mdp.overcooked_env import OvercookedEnv  # noqa: E402
from overcooked_ai_py.mdp.overcooked_mdp import (  # noqa: E402
    OvercookedGridworld,
    OvercookedState,
)


class OldDynamicsGridworld(OvercookedGridworld):
    """overcooked-ai 1.1.0 with its later ``old_dynamics=True`` behaviour: a pot with three
    ingredients starts cooking by itself, and interacting with a pot never starts it."""

    def soup_to_be_cooked_at_location(self, state, pos):
        return False

    def step_environment_effects(self, state):
        state.timestep += 1
        for obj in state.objects.values():
            if obj.name == "soup":
                if not obj.is_cooking and not obj.is_ready and len(obj.ingredients) == 3:
                    obj.begin_cooking()
                if obj.is_cooking:
                    obj.cook()


def make_mdp(layout, cooking):
    mdp = OvercookedGridworld.from_layout_name(layout)
    if cooking == "auto":
        mdp.__class__ = OldDynamicsGridworld
    elif cooking != "interact":
        raise ValueError(f"cooking must be 'auto' or 'interact', got {cooking!r}")
    return mdp


def canonical_object(obj):
    if obj is None:
        return None
    if obj.name == "soup":
        return ["soup", len(obj.ingredients), obj._cooking_tick]
    return obj.name


def canonical_state(state):
    players = [
        [
            p.position[0],
            p.position[1],
            Direction.DIRECTION_TO_INDEX[p.orientation],
            canonical_object(p.held_object),
        ]
        for p in state.players
    ]
    objects = sorted(
        [[pos[0], pos[1], canonical_object(obj)] for pos, obj in state.objects.items()]
    )
    return [state.timestep, players, objects]


def run_episode(env, mdp, episode, horizon, want_obs):
    start = episode.get("start")
    if start:
        env.start_state_fn = lambda: OvercookedState.from_player_positions(
            [tuple(p) for p in start],
            bonus_orders=mdp.start_bonus_orders,
            all_orders=mdp.start_all_orders,
        )
    else:
        env.start_state_fn = None
    env.reset(regen_mdp=False)
    digest = hashlib.sha1()
    obs_digest = hashlib.sha1() if want_obs else None
    trace = [] if episode.get("trace") else None
    rewards = []

    def record(state):
        c = canonical_state(state)
        digest.update(json.dumps(c, separators=(",", ":")).encode())
        if trace is not None:
            trace.append(c)
        if obs_digest is not None:
            for ob in mdp.lossless_state_encoding(state, horizon):
                obs_digest.update(np.asarray(ob, dtype=np.int16).tobytes())

    record(env.state)
    for a0, a1 in episode["actions"]:
        joint = (Action.INDEX_TO_ACTION[a0], Action.INDEX_TO_ACTION[a1])
        state, reward, done, _ = env.step(joint)
        rewards.append(reward)
        record(state)
        if done:
            break
    out = {
        "rewards": rewards,
        "digest": digest.hexdigest(),
        "obs_digest": None if obs_digest is None else obs_digest.hexdigest(),
    }
    if trace is not None:
        out["states"] = trace
    return out


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        horizon = int(req.get("horizon", 400))
        mdp = make_mdp(req["layout"], req.get("cooking", "auto"))
        env = OvercookedEnv.from_mdp(mdp, horizon=horizon, info_level=0)
        header = {
            "layout": req["layout"],
            "terrain": ["".join(row) for row in mdp.terrain_mtx],
            "starts": [list(p) for p in mdp.start_player_positions],
        }
        print(json.dumps(header), file=OUT, flush=True)
        for episode in req["episodes"]:
            answer = run_episode(env, mdp, episode, horizon, req.get("obs", False))
            print(json.dumps(answer), file=OUT, flush=True)


if __name__ == "__main__":
    main()
