"""SB3 PPO's rollouts on a game's batched numpy engine (``tom-envs train ppo --engine ...``).

``--engine auto`` (the default) trains on the game's batched engine
(:class:`tom_envs.integrations.sb3.BatchedVecEnv` over ``tom_envs/games/<game>/vector.py``) where
the game has one and the run's settings fit it, and on the per-env path (a ``DummyVecEnv`` of
``SingleAgentEnv`` copies) otherwise; ``--engine batched`` fails naming the reason instead of
falling back; ``--engine envs`` always takes the per-env path. The engine used is in the saved
model's ``tom_envs.json`` (``engine``, ``engine_detail``) and in every curve row (``engine``).

How the seats are played on the batched engine:

* **Simultaneous games** (RPS / Battle of the Sexes / Prisoner's Dilemma, CollabCapture,
  CollabEscape, Overcooked) with ``--partners P``: ``--num-envs`` engine copies, one SB3 slot
  each; the learner plays ``--seat``, the vectorised version of partner ``P`` the other seat
  (``vector_partners``: every matrix bot, ``greedy`` in Capture and Escape, ``random``
  everywhere), each checked action by action against its bot in ``tests/games/*/test_vector.py``;
  and any learned zoo member ``zoo/<name>`` of the game (its checkpoint's actor on the batched
  observations: :class:`~tom_baselines.vector_partner.CheckpointVectorPartner`, refused unless
  its file has the SHA-256 its manifest declares and it was trained on these game arguments).
  The same transitions as the per-env path: against a deterministic partner and the same actions
  they are equal step for step (``tests/baselines/test_ppo_batched.py``).
* **Simultaneous games, ``--self-play``**: every (copy, seat) is an SB3 slot (SuperSuit's
  ``pettingzoo_env_to_vec_env`` layout), so ``--num-envs`` copies give ``num_envs * n`` slots and
  every seat's decisions are trained on. (The per-env ``--self-play`` trains only the learner
  seat of each copy; the other seats are played by the live network and not trained on.)
* **Turn-based games** (Hanabi, bomb defusal), ``--self-play`` only: one slot per copy, whose
  decision each step is the acting seat's (its observation and mask); waiting seats send the
  engine's no-op and make no transition; the reward is the team's (both games are cooperative,
  the adapter checks it every step). So each slot is the team's sequence of moves, discounted per
  move. A fixed partner in a turn-based game has no batched path (SB3 needs one decision per slot
  per step and the learner's turns fall on different engine steps in different copies): ``auto``
  uses the per-env path, ``batched`` refuses.

Event-reward shaping (``--event-rewards NAME=W ... --event-rewards-horizon N``, as ``tom-envs
train mappo``): Overcooked only, on either path. On the batched path, in either mode above, the engine is
``baselines/mappo_batched.py``'s :class:`~tom_baselines.mappo_batched.EventCountingOvercooked`
(the rules' event definitions; names from its ``OVERCOOKED_EVENTS``, anything else is refused),
and :class:`tom_envs.integrations.sb3.EventRewards` adds ``scale x`` the env's weighted events to
each of its slots, ``scale`` falling linearly from 1 to 0 over ``N`` env steps (engine steps x
copies: joint steps, as MAPPO counts them; set before each rollout). Training signal only: it
wraps the ``VecMonitor``, so logged returns and evaluations are the game's score. On the per-env
path (``--engine envs``, or ``auto`` for a partner with no vectorised version: Overcooked's rule
bots) each env's :class:`~tom_envs.integrations.sb3.EventBonus` puts the rules' weighted events of
its joint step (``OvercookedGame.transition``'s, which the batched engine's count equals,
``tests/baselines/test_mappo_batched.py``) in the step info, and ``EventRewards`` adds them the
same way, outside each env's ``Monitor``. Any other game with ``--event-rewards`` fails instead
of training unshaped.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from tom_baselines.common import parse_kv
from tom_envs.registration import GAMES, GameSpec

if TYPE_CHECKING:
    from tom_baselines.ppo_sb3 import Args

ENGINE_CHOICES = ("auto", "envs", "batched")
MATRIX_GAMES = ("RockPaperScissors", "BattleOfSexes", "PrisonersDilemma")
#: Partner specs with a vectorised version, per game; in the matrix games every bot of
#: :func:`tom_envs.games.matrix.bots.partner_names` (``MatrixPartner`` plays them all).
VECTOR_PARTNERS: dict[str, tuple[str, ...]] = {
    "CollabCapture": ("greedy", "random"), "CollabEscape": ("greedy", "random"),
    "Overcooked": ("random",),
}  # fmt: skip


def vector_partners(spec: GameSpec) -> tuple[str, ...]:
    """The partner names with a vectorised version in ``spec``'s game."""
    if spec.name in MATRIX_GAMES:
        from tom_envs.games.matrix.bots import partner_names

        return tuple(partner_names(spec.load().make_bundle(**spec.kwargs).game.config))
    return VECTOR_PARTNERS[spec.name]


def _engine_kwargs(spec: GameSpec, args: Args) -> dict[str, Any]:
    kwargs = {**spec.kwargs, **parse_kv(args.env_kwargs)}
    kwargs.pop("render_mode", None)
    return kwargs


def _partner_name(spec: GameSpec, args: Args) -> str | None:
    """The one partner spec of a 2-seat game, or ``None`` if the run gives several."""
    return args.partners[0] if len(set(args.partners)) == 1 else None


def event_weights(args: Args) -> dict[str, float]:
    """``--event-rewards`` as ``{event: weight}``, checked (names, finite numbers, horizon)."""
    from tom_baselines.mappo_batched import OVERCOOKED_EVENTS

    if args.event_rewards_horizon < 0:
        raise ValueError(f"--event-rewards-horizon must be >= 0 env steps, "
                         f"got {args.event_rewards_horizon}")  # fmt: skip
    weights: dict[str, float] = {}
    for name, value in parse_kv(args.event_rewards).items():
        if name not in OVERCOOKED_EVENTS:
            raise ValueError(f"--event-rewards: {name!r} is not an event the batched Overcooked "
                             f"engine counts (allowed: {', '.join(OVERCOOKED_EVENTS)})")  # fmt: skip
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not ok or not math.isfinite(value):
            raise ValueError(f"--event-rewards: {name}={value!r} is not a finite number")
        weights[name] = float(value)
    return weights


def batched_problem(args: Args, spec: GameSpec) -> str | None:
    """Why this run cannot train on a batched engine (``None``: it can)."""
    if not spec.vector:
        have = sorted(s.name for s in GAMES if s.vector)
        return f"{spec.name} has no batched engine (these have one: {have})"
    if args.event_rewards and spec.name != "Overcooked":
        return (f"--event-rewards: only the batched Overcooked engine counts step events, "
                f"not {spec.name}'s")  # fmt: skip
    turn_based = spec.load_vector().turn_based
    if turn_based and not args.self_play:
        return (f"{spec.name} is turn-based: the batched path is --self-play only (a fixed "
                "partner's turns would leave the learner's slots without a decision)")  # fmt: skip
    if not args.self_play:
        name = _partner_name(spec, args)
        allowed = list(vector_partners(spec))
        if name is not None and _learned_member(spec, name):
            return None
        if name is None or name not in allowed:
            return (f"partner {args.partners} has no vectorised version in {spec.name} "
                    f"(vectorised: {allowed})")  # fmt: skip
    return None


def _build_engine(spec: GameSpec, args: Args, num_envs: int) -> Any:
    engine_cls = spec.load_vector()  # the registry's engine (GameSpec.vector)
    options: dict[str, Any] = {"keep_final_obs": True}
    if spec.name == "BombDefusal":
        options["observations"] = False  # the acting seat's observation only (engine.observe())
    weights = event_weights(args)
    if weights:  # Overcooked (batched_problem): the engine that also counts the rules' events
        from tom_baselines.mappo_batched import EventCountingOvercooked

        return EventCountingOvercooked(num_envs, weights, **options, **_engine_kwargs(spec, args))
    return engine_cls(num_envs, **options, **_engine_kwargs(spec, args))


def _learned_member(spec: GameSpec, name: str) -> bool:
    """Whether ``name`` is a learned (checkpoint) member of ``spec``'s zoo (``zoo/<name>``)."""
    if not name.startswith("zoo/"):
        return False
    from tom_envs import zoo

    try:
        return zoo.member(name, spec.name).kind == "checkpoint"
    except KeyError:
        return False


def _vector_partner(spec: GameSpec, engine: Any, name: str, seat: int, seed: int,
                    kwargs: dict[str, Any] | None = None) -> Any:  # fmt: skip
    from tom_envs.core.vector import RandomPartner

    other = (1 - seat,)
    if _learned_member(spec, name):
        from tom_baselines.vector_partner import zoo_partner

        return zoo_partner(spec, name, kwargs or dict(spec.kwargs), other, seed)
    if spec.name in MATRIX_GAMES:
        from tom_envs.games.matrix.vector import MatrixPartner

        return MatrixPartner(engine, name, seats=other, seed=seed)
    if name == "random":
        return RandomPartner(seed)
    if spec.name == "CollabCapture":
        from tom_envs.games.collab_capture.vector import CapturePartner

        return CapturePartner(engine, name, seats=other)
    from tom_envs.games.collab_escape.vector import EscapePartner

    return EscapePartner(engine, name, seats=other)


def make_batched_venv(args: Args, spec: GameSpec, observation_space: Any) -> tuple[Any, str]:
    """The run's :class:`~tom_envs.integrations.sb3.BatchedVecEnv` and a one-line description.

    Raises ``ValueError`` naming the reason when the run does not fit a batched engine."""
    problem = batched_problem(args, spec)
    if problem is not None:
        raise ValueError(problem)
    from tom_envs.integrations.sb3 import BatchedVecEnv

    try:
        engine = _build_engine(spec, args, args.num_envs)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"the batched {spec.name} engine refuses these game arguments: {exc}"
        ) from None
    turn_based = spec.load_vector().turn_based
    if turn_based:
        venv = BatchedVecEnv(engine, "turns", observation_space=observation_space)
        detail = f"{type(engine).__name__} x{args.num_envs}, self-play: the acting seat per slot"
    elif args.self_play:
        venv = BatchedVecEnv(engine, "seats", observation_space=observation_space)
        detail = f"{type(engine).__name__} x{args.num_envs}, self-play: one slot per (copy, seat)"
    else:
        name = _partner_name(spec, args)
        assert name is not None
        partner = _vector_partner(spec, engine, name, args.seat, args.seed + 1,
                                  _engine_kwargs(spec, args))  # fmt: skip
        venv = BatchedVecEnv(engine, "partner", seat=args.seat, partner=partner,
                             observation_space=observation_space)  # fmt: skip
        detail = f"{type(engine).__name__} x{args.num_envs}, seat {args.seat} vs vectorised {name}"
    weights = event_weights(args)
    if weights:
        detail += (f"; event rewards {weights}, annealed to 0 over "
                   f"{args.event_rewards_horizon} env steps" if args.event_rewards_horizon
                   else f"; event rewards {weights}, constant")  # fmt: skip
    return venv, detail


def choose_engine(args: Args, spec: GameSpec) -> str:
    """``"batched"`` or ``"envs"`` for this run (``--engine batched`` refuses a misfit)."""
    if args.engine not in ENGINE_CHOICES:
        raise ValueError(f"engine must be one of {ENGINE_CHOICES}, got {args.engine!r}")
    shaped = bool(event_weights(args))
    # the per-env path shapes from the rules' step events in Overcooked only (EventBonus)
    envs_shaped = spec.name == "Overcooked"
    if args.engine == "envs":
        if shaped and not envs_shaped:
            raise ValueError(f"--event-rewards: only Overcooked's step events are counted "
                             f"(either path), not {spec.name}'s")  # fmt: skip
        return "envs"
    problem = batched_problem(args, spec)
    if problem is None:
        return "batched"
    if args.engine == "auto" and (not shaped or envs_shaped):  # never silently unshaped
        return "envs"
    raise ValueError(f"--engine batched: {problem}")
