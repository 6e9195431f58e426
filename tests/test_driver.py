"""The one episode driver: single-agent returns, failure policy, external seats, identity helpers."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

import tom_envs  # noqa: F401  (registers the ids)
from tom_envs.agents import make_agent
from tom_envs.core.agents import AgentAction, AgentFailure, BaseAgent, Turn, agent_config
from tom_envs.core.game import IllegalActionError
from tom_envs.driver import (
    FALLBACK_SALT,
    EpisodeDriver,
    FailurePolicy,
    classify_exception,
    decide,
    episode_info,
    fallback_rng,
)
from tom_envs.identity import config_diff, config_hash, resolved_env_kwargs
from tom_envs.registration import game_spec, single_agent_specs

SEEDS = (0, 1)


def _replay_return(spec, kwargs, seed: int, actions: list, seat: int) -> tuple[float, int]:
    """The seat's return in a fresh AEC env fed the same moves: summed after every rules step."""
    env = spec.load().raw_env(**{**spec.kwargs, **kwargs})
    env.reset(seed=seed)
    total, steps = 0.0, 0
    for a in actions:
        before = env.game_state
        env.step(a)
        if a is not None and env.game_state is not before:
            total += float(env.rewards[f"player_{seat}"])
            steps += 1
    return total, steps


@pytest.mark.parametrize("sa", single_agent_specs(), ids=lambda s: s.id.split("/")[1])
def test_single_agent_return_equals_the_seats_aec_return(sa) -> None:
    """Every registered single-agent view: the episode's rewards sum to the seat's AEC return."""
    for seed in SEEDS:
        env = gymnasium.make(sa.id)
        base = env.unwrapped
        moves: list = []
        real_step = base.aec.step

        def recording(action, _real=real_step, _moves=moves):
            _moves.append(None if action is None else int(action))
            return _real(action)

        base.aec.step = recording  # every move of the episode, in order (driver and learner)
        rng = np.random.default_rng([seed, 99])
        _, info = env.reset(seed=seed)  # partners may move before the learner's first turn
        total, done, n = 0.0, False, 0
        while not done:
            legal = np.flatnonzero(info["action_mask"])
            _, r, term, trunc, info = env.step(int(rng.choice(legal)))
            total += r
            done = term or trunc
            n += 1
        want, _ = _replay_return(base.spec_, base.env_kwargs, base.episode_seed, moves, base.seat)
        assert total == pytest.approx(want), (sa.id, seed)
        assert total == pytest.approx(base.driver.returns[base.agent])
        assert n == base.driver.decisions[base.agent]
        env.close()


def _episode_return(env_id: str, seed: int) -> tuple[float, float]:
    env = gymnasium.make(env_id)
    base = env.unwrapped
    moves: list = []
    real_step = base.aec.step
    base.aec.step = lambda a: (moves.append(None if a is None else int(a)), real_step(a))[1]
    rng = np.random.default_rng([seed, 99])
    _, info = env.reset(seed=seed)
    total, done = 0.0, False
    while not done:
        _, r, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        total, done = total + r, term or trunc
    want, _ = _replay_return(base.spec_, base.env_kwargs, base.episode_seed, moves, base.seat)
    return total, want


def test_the_pin_catches_last_step_reward_accounting(monkeypatch: pytest.MonkeyPatch) -> None:
    """The adversary: a view that reports only the last joint step's reward. On Hanabi the
    partner's plays score too, so the learner's returns fall below the team's: the pin fails."""
    real = EpisodeDriver._step

    def last_only(self, agent, action, record, message):
        before = dict(self.reward_since)
        real(self, agent, action, record, message)
        for a in self.reward_since:  # keep only this joint step's reward
            self.reward_since[a] = (
                self.reward_since[a] - before.get(a, 0.0) if a != agent else self.reward_since[a]
            )

    monkeypatch.setattr(EpisodeDriver, "_step", last_only)
    gaps = [abs(got - want) for got, want in (_episode_return("tom_envs/HanabiVsSimple-v0", s)
                                              for s in SEEDS)]  # fmt: skip
    assert max(gaps) > 0


# --------------------------------------------------------------------------- failure policy
class Boom(BaseAgent):
    def act(self, turn: Turn) -> int:
        raise RuntimeError("mat1 and mat2 shapes cannot be multiplied (1x10 and 12x64)")


class Overflow(BaseAgent):
    def act(self, turn: Turn) -> int:
        raise AgentFailure("context_overflow", "prompt of 9000 tokens > context 8192")


class OwnFallback(BaseAgent):
    def act(self, turn: Turn) -> AgentAction:
        return AgentAction(
            action=turn.legal_actions[0],
            valid=False,
            info={"failure": {"kind": "unparseable", "message": "no option named"}},
        )


def _turn(spec_name: str = "PrisonersDilemma"):
    spec = game_spec(spec_name)
    d = EpisodeDriver(spec, [make_agent("random", spec)] * 2, 0, {"horizon": 3})
    d.start()
    return d.turn("player_0")


def test_decide_classifies_failures_and_never_passes_off_a_fallback() -> None:
    turn = _turn()
    rng = fallback_rng(0)
    d = decide(Boom(), turn, rng)
    assert d.fallback and d.failure["kind"] == "exception"
    assert "shapes cannot be multiplied" in d.failure["message"]
    assert d.action in turn.legal_actions and d.traceback
    d = decide(Overflow(), turn, rng)
    assert d.failure == {
        "kind": "context_overflow",
        "message": "prompt of 9000 tokens > context 8192",
    }
    d = decide(OwnFallback(), turn, rng)
    assert d.fallback and d.failure["kind"] == "unparseable" and d.action == turn.legal_actions[0]
    spec = game_spec("PrisonersDilemma")
    bot = make_agent("always_1", spec)
    bot.reset(episode_info(spec, spec.load().make_bundle(**spec.kwargs).game, 0, 0))
    d = decide(bot, turn, rng)
    assert not d.fallback and d.failure is None and d.action == 1
    with pytest.raises(AgentFailure, match="shapes") as err:
        decide(Boom(), turn, rng, FailurePolicy(on_failure="raise"))
    assert err.value.kind == "exception"


def test_exception_kinds() -> None:
    assert (
        classify_exception(ConnectionRefusedError("[Errno 111] Connection refused")) == "endpoint"
    )
    assert classify_exception(RuntimeError("maximum context length is 2048")) == "context_overflow"
    assert classify_exception(ValueError("x")) == "exception"
    with pytest.raises(ValueError, match="failure kind"):
        AgentFailure("oops", "x")


def test_fallback_generator_has_one_salt() -> None:
    a = fallback_rng(5).integers(1000, size=5)
    b = np.random.default_rng([5, FALLBACK_SALT]).integers(1000, size=5)
    assert a.tolist() == b.tolist()


def test_fallback_share_bound_fails_the_episode() -> None:
    spec = game_spec("PrisonersDilemma")

    class EveryThird(BaseAgent):
        def act(self, turn: Turn) -> int:
            if turn.decision % 3 == 0:
                raise RuntimeError("flaky")
            return 0

    def play(share: float):
        agents = [EveryThird(), make_agent("tit_for_tat", spec)]
        return EpisodeDriver(spec, agents, 0, {"horizon": 9},
                             policy=FailurePolicy(max_fallback_share=share)).run()  # fmt: skip

    ok, failed = play(0.34), play(0.33)  # 3 of 9 = 33.3%
    assert ok.status == "ok" and ok.failure is None
    assert failed.status == "failed"
    assert "player_0" in failed.failure and "3 of 9" in failed.failure and "flaky" in failed.failure
    assert ok.fallbacks == failed.fallbacks == {"player_0": 3, "player_1": 0}
    assert ok.failures == {"player_0": {"exception": 3}}
    fb = [s for s in ok.steps if s.get("fallback")]
    assert len(fb) == 3 and all(
        s["valid"] is False and s["failure"]["kind"] == "exception" for s in fb
    )
    assert all("fallback" not in s for s in ok.steps if s not in fb)


def test_external_seat_stops_the_driver_and_validates_moves() -> None:
    spec = game_spec("PrisonersDilemma")
    d = EpisodeDriver(spec, [None, make_agent("tit_for_tat", spec)], 4, {"horizon": 2})
    d.start()
    assert d.advance() == "player_0"
    with pytest.raises(IllegalActionError):
        d.play("player_0", 5)
    with pytest.raises(IllegalActionError, match="no chat"):
        d.play("player_0", 0, message="hi")
    assert d.steps == []  # nothing applied
    rec = d.play("player_0", 1, record={"human": True})
    assert rec["human"] is True and rec["action"] == 1
    assert d.advance() == "player_0"
    d.play("player_0", 0)
    assert d.advance() is None
    ep = d.finish()
    assert ep.length == 2 and [s["action"] for s in ep.steps] == [1, 0, 0, 1]
    assert ep.agents["player_0"] == "external"


# ------------------------------------------------------------------------------ identity
def test_resolved_env_kwargs_fills_every_default() -> None:
    spec = game_spec("PrisonersDilemma")
    r = resolved_env_kwargs(spec, {"horizon": 7})
    assert r["horizon"] == 7 and r["game"] == "ipd" and r["window"] is None
    assert r["preset"]["payoffs"] == [[[8, 8], [0, 10]], [[10, 0], [5, 5]]]
    assert resolved_env_kwargs(spec, {}) == resolved_env_kwargs(spec, {"horizon": 100})


def test_agent_config_from_constructor_arguments() -> None:
    class Tuned(BaseAgent):
        def __init__(self, temperature: float = 0.7, model: str = "m") -> None:
            super().__init__()

        def act(self, turn: Turn) -> int:
            return 0

    assert Tuned().config() == {"temperature": 0.7, "model": "m"}
    cfg = agent_config(Tuned(temperature=0.1))
    assert cfg["settings"] == {"temperature": 0.1, "model": "m"}
    assert cfg["class"].endswith("Tuned")
    spec = game_spec("PrisonersDilemma")
    rmax = agent_config(make_agent("rmax:gamma=0.9", spec))
    assert rmax["spec"] == "rmax:gamma=0.9" and rmax["settings"]["gamma"] == 0.9
    assert rmax["settings"]["known_threshold"] == 1  # a default, resolved


def test_config_diff_names_every_change() -> None:
    a = {"env_kwargs": {"horizon": 5}, "agents": {"player_0": {"settings": {"model": "a"}}}}
    b = {"env_kwargs": {"horizon": 50}, "agents": {"player_0": {"settings": {"model": "b"}}}}
    assert config_diff(a, b) == [
        'agents.player_0.settings.model: "a" -> "b"',
        "env_kwargs.horizon: 5 -> 50",
    ]
    assert config_hash(a) != config_hash(b) and config_hash(a) == config_hash(dict(a))
