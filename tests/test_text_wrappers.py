"""The natural-language wrappers (tom_envs.wrappers) under the standard checkers, and their rules.

Registry-derived (every game, every Parallel game, every Gymnasium text id):

* PettingZoo's ``api_test`` and ``seed_test`` on :class:`TextAECEnv`, ``parallel_api_test`` and
  ``parallel_seed_test`` on :class:`TextParallelEnv`, Gymnasium's stock ``check_env`` on every
  registered ``-text`` id; episodes cut short (``max_cycles``);
* text and vector play the same seeded episode: answering each decision with the chosen action's
  own text gives the same actions, rewards and final state (AEC, Parallel, one Gymnasium view
  per game), and a re-asked garbage answer before it changes nothing.

Then the invalid-answer policy, played out: re-ask (same seat, feedback, nothing applied, at most
``max_reasks``, then a recorded seeded fallback), forfeit, terminate (PettingZoo's
``TerminateIllegalWrapper`` semantics), the penalty, refused over-long and non-text answers, the
Parallel re-ask round, chat messages, the spaces, argument checks and the episode record.
What a seat sees through the wrappers is checked in tests/test_information_parity.py.
"""

from __future__ import annotations

import copy
import json
import pickle
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pettingzoo
import pytest
from conformance_helpers import (
    GAME_SPECS,
    all_games,
    assert_same,
    legal_choice,
    make_aec,
    make_parallel,
    parallel_games,
    single_agents,
)
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test

from tom_envs.core.game import IllegalActionError
from tom_envs.docs import render_pages
from tom_envs.driver import fallback_rng
from tom_envs.registration import single_agent_specs
from tom_envs.single_agent import SingleAgentEnv
from tom_envs.wrappers import (
    FEEDBACK_TEMPLATE,
    AnswerSpace,
    InvalidAnswerPolicy,
    TextAECEnv,
    TextObs,
    TextParallelEnv,
    TextSingleAgentEnv,
    TextSpace,
)

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

#: Episodes are cut to this many cycles (the checkers play whole episodes).
CYCLES = 8
GARBAGE = "?? no idea ??"


def text_aec(spec, cycles: int = CYCLES, **policy) -> TextAECEnv:
    return TextAECEnv(make_aec(spec, max_cycles=cycles), **policy)


def text_parallel(spec, cycles: int = CYCLES, **policy) -> TextParallelEnv:
    return TextParallelEnv(make_parallel(spec, max_cycles=cycles), **policy)


def feedback_line(feedback: str) -> str:
    return "\n\n" + FEEDBACK_TEMPLATE.format(feedback=feedback)


# ------------------------------------------------------------------- the standard checkers
@all_games
def test_pettingzoo_api_and_seed_tests_on_the_aec_text_wrapper(spec) -> None:
    api_test(text_aec(spec), num_cycles=4 * CYCLES)
    seed_test(lambda: text_aec(spec), num_cycles=2 * CYCLES)


@parallel_games
def test_pettingzoo_parallel_tests_on_the_parallel_text_wrapper(spec) -> None:
    parallel_api_test(text_parallel(spec), num_cycles=CYCLES)  # it sets max_cycles itself
    parallel_seed_test(lambda: text_parallel(spec), num_cycles=CYCLES)


@single_agents
def test_check_env_on_every_text_id(sa, capsys: pytest.CaptureFixture[str]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # check_env's advice is not a finding
        check_env(gymnasium.make(sa.text_id).unwrapped)
    capsys.readouterr()  # "human" prints the board where there is no display


def test_every_single_agent_view_has_a_text_id() -> None:
    views = single_agent_specs()
    text_ids = [sa.text_id for sa in views]
    assert len(set(text_ids)) == len(views)
    assert not set(text_ids) & {sa.id for sa in views}
    for sa in views:
        assert sa.text_id == sa.id.replace(f"-v{sa.game.version}", f"-text-v{sa.game.version}")
        assert sa.text_id in gymnasium.registry
        assert gymnasium.registry[sa.text_id].kwargs == {
            "game": sa.game.name, "partners": sa.bot, "seat": sa.seat
        }  # fmt: skip


# ------------------------------------------------------------- text and vector: one episode
def live_turns(env, returns: dict) -> Iterator[tuple[str, Any, dict]]:
    """PettingZoo's AEC loop: each reward is added to ``returns``, a finished seat is stepped with
    ``None``; yields ``(agent, observation, info)`` of each seat that must act (the caller steps)."""
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        returns[agent] += reward
        if term or trunc:
            env.step(None)
            continue
        yield agent, obs, info


def vector_episode(spec, seed: int) -> tuple[list, dict, object]:
    """Random legal play on the vector AEC env: [(agent, action, mask)], returns, final state."""
    env = make_aec(spec, max_cycles=CYCLES)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    moves, returns = [], dict.fromkeys(env.possible_agents, 0.0)
    for agent, obs, _ in live_turns(env, returns):
        action = legal_choice(rng, obs["action_mask"])
        moves.append((agent, action, obs["action_mask"]))
        env.step(action)
    return moves, returns, env.unwrapped.game_state


@all_games
def test_text_and_vector_aec_play_the_same_episode(spec) -> None:
    seed = 5
    moves, returns, final = vector_episode(spec, seed)
    env = text_aec(spec, max_reasks=1)
    env.reset(seed=seed)
    got = dict.fromkeys(env.possible_agents, 0.0)
    played, reasked = [], 0
    for agent, _, info in live_turns(env, got):
        want_agent, action, mask = moves[len(played)]
        assert agent == want_agent and np.array_equal(info["action_mask"], mask)
        answer = info.get("answer")
        if len(played) % 3 == 0 and not (answer and answer["outcome"] == "reask"):
            state = env.unwrapped.game_state
            env.step("")  # an empty answer is re-asked and changes nothing
            assert env.unwrapped.game_state is state and env.agent_selection == agent
            assert env.infos[agent]["answer"]["outcome"] == "reask"
            reasked += 1
            continue
        env.step(info["text_observation"].legal_actions[action])
        record = env.infos[agent]["answer"] if agent in env.infos else None
        assert record is None or (record["valid"], record["played"]) == (True, action)
        played.append(action)
    assert played == [a for _, a, _ in moves]
    assert got == returns
    assert_same(env.unwrapped.game_state, final, "final state")
    counts = env.episode_record()["counts"]
    assert sum(c["reasks"] for c in counts.values()) == reasked > 0
    assert sum(c["fallbacks"] for c in counts.values()) == 0


@parallel_games
def test_text_and_vector_parallel_play_the_same_episode(spec) -> None:
    seed = 6
    vec, text = make_parallel(spec, max_cycles=CYCLES), text_parallel(spec)
    rng = np.random.default_rng(seed)
    obs, _ = vec.reset(seed=seed)
    _, tinfos = text.reset(seed=seed)
    while vec.agents:
        joint = {a: legal_choice(rng, obs[a]["action_mask"]) for a in vec.agents}
        answers = {}
        for a, action in joint.items():
            assert np.array_equal(tinfos[a]["action_mask"], obs[a]["action_mask"])
            answers[a] = tinfos[a]["text_observation"].legal_actions[action]
        obs, rewards, terms, truncs, _ = vec.step(joint)
        _, trewards, tterms, ttruncs, tinfos = text.step(answers)
        assert (trewards, tterms, ttruncs) == (rewards, terms, truncs)
        assert {a: i["answer"]["played"] for a, i in tinfos.items()} == joint
        assert text.agents == vec.agents
    assert_same(text.unwrapped.game_state, vec.unwrapped.game_state, "final state")


@pytest.mark.parametrize(
    "sa",
    [next(sa for sa in single_agent_specs() if sa.game is spec) for spec in GAME_SPECS],
    ids=lambda sa: sa.text_id,
)
def test_text_and_vector_single_agent_views_play_the_same_episode(sa) -> None:
    seed = 7
    vec = gymnasium.make(sa.id, max_cycles=CYCLES)
    text = gymnasium.make(sa.text_id, max_cycles=CYCLES)
    rng = np.random.default_rng(seed)
    _, info = vec.reset(seed=seed)
    _, tinfo = text.reset(seed=seed)
    while True:
        assert np.array_equal(tinfo["action_mask"], info["action_mask"])
        action = legal_choice(rng, info["action_mask"])
        step = vec.step(action)
        tstep = text.step(tinfo["text_observation"].legal_actions[action])
        info, tinfo = step[4], tstep[4]
        assert tstep[1:4] == step[1:4]
        assert tinfo["answer"]["played"] == action
        if step[2] or step[3]:
            break
    inner, vec_inner = text.unwrapped, vec.unwrapped
    assert isinstance(inner, TextSingleAgentEnv) and isinstance(vec_inner, SingleAgentEnv)
    assert_same(inner.view.aec.game_state, vec_inner.aec.game_state, "final state")


# ----------------------------------------------------------------------- the invalid answer
@pytest.fixture
def hanabi() -> TextAECEnv:
    return TextAECEnv(pettingzoo.make("aec", "tom_envs/Hanabi-v0"))


def test_reask_asks_the_same_seat_with_feedback_then_falls_back(hanabi: TextAECEnv) -> None:
    env, raw = hanabi, hanabi.unwrapped
    env.reset(seed=3)
    agent = env.agent_selection
    prompt, _, _, _, info = env.last()
    state, mask = raw.game_state, info["action_mask"]
    feedback = raw.parse_action(agent, GARBAGE).feedback
    for attempt in (1, 2):
        env.step(GARBAGE)
        obs, reward, term, trunc, info = env.last()
        assert env.agent_selection == agent and raw.game_state is state
        assert obs == prompt + feedback_line(feedback)
        assert (reward, term, trunc) == (0.0, False, False) and not any(raw.rewards.values())
        assert np.array_equal(info["action_mask"], mask)
        assert info["answer"] == {
            "agent": agent, "answer": GARBAGE, "valid": False, "feedback": feedback,
            "action": -1, "attempt": attempt, "outcome": "reask", "played": -1,
            "played_text": "", "fallback": False, "failure": "", "message": "",
            "message_error": "",
        }  # fmt: skip
    env.step(GARBAGE)  # the third invalid answer of the decision forfeits
    legal = list(raw.bundle.game.observe(state, 0).legal_actions)
    expected = legal[int(fallback_rng(3).integers(len(legal)))]  # the suite's seeded fallback
    record = env.infos[agent]["answer"]
    assert (record["outcome"], record["played"], record["fallback"]) == ("fallback", expected, True)
    assert (record["failure"], record["action"]) == ("unparseable", -1)
    assert record["feedback"] == feedback
    assert raw.game_state is not state and env.agent_selection != agent
    assert env.episode_record()["counts"][agent] == {
        "answers": 3, "invalid": 3, "reasks": 2, "fallbacks": 1, "unread": 0
    }  # fmt: skip


def test_a_valid_answer_after_a_reask_plays_and_clears_the_feedback(hanabi: TextAECEnv) -> None:
    hanabi.reset(seed=0)
    agent = hanabi.agent_selection
    prompt, *_ = hanabi.last()
    hanabi.step(GARBAGE)
    assert hanabi.last()[0] != prompt
    legal = hanabi.infos[agent]["text_observation"].legal_actions
    hanabi.step(next(iter(legal.values())))
    record = hanabi.infos[agent]["answer"]
    assert (record["outcome"], record["attempt"]) == ("played", 2)
    assert hanabi.agent_selection != agent and FEEDBACK_TEMPLATE[:20] not in hanabi.last()[0]


@pytest.mark.parametrize("fallback", ["random", "first"])
def test_forfeit_plays_a_recorded_seeded_fallback(fallback: str) -> None:
    def played(seed: int) -> list[int]:
        env = TextAECEnv(pettingzoo.make("aec", "tom_envs/Hanabi-v0"), on_invalid="forfeit",
                         fallback=fallback)  # fmt: skip
        env.reset(seed=seed)
        out = []
        for agent in env.agent_iter(12):
            _, _, term, trunc, info = env.last()
            if term or trunc:
                break
            legal = list(env.unwrapped.view(agent).legal_actions)
            env.step(GARBAGE)
            record = env.infos[agent]["answer"]
            assert record["fallback"] and record["outcome"] == "fallback"
            assert record["played"] in legal
            assert record["played_text"] == info["text_observation"].legal_actions[record["played"]]
            if fallback == "first":
                assert record["played"] == legal[0]
            out.append(record["played"])
        return out

    assert played(4) == played(4)
    if fallback == "random":
        assert played(4) != played(5)


def test_terminate_ends_the_episode_as_terminate_illegal_does() -> None:
    env = TextAECEnv(pettingzoo.make("aec", "tom_envs/Hanabi-v0"), on_invalid="terminate")
    env.reset(seed=1)
    first = env.agent_selection
    env.step(next(iter(env.infos[first]["text_observation"].legal_actions.values())))
    offender = env.agent_selection
    env.step(GARBAGE)
    assert all(env.terminations.values()) and not any(env.truncations.values())
    seen = {}
    for agent in env.agent_iter():
        _, reward, term, _, info = env.last()
        assert term and not info["action_mask"].any()
        seen[agent] = reward
        env.step(None)
    assert seen == {first: 0.0, offender: -1.0} and not env.agents
    record = env.episode_record()
    assert record["terminated_by"] == offender
    assert record["invalid_policy"]["on_invalid"] == "terminate"
    assert record["invalid_policy"]["invalid_reward"] == -1.0
    json.dumps(record)  # plain data


def test_invalid_reward_is_paid_for_each_invalid_answer() -> None:
    env = TextAECEnv(pettingzoo.make("aec", "tom_envs/PrisonersDilemma-v0", horizon=2),
                     invalid_reward=-0.5)  # fmt: skip
    env.reset(seed=0)
    env.step(GARBAGE)  # player_0, re-asked: its reward is the penalty
    assert env.last()[1] == -0.5 and env.rewards == {"player_0": -0.5, "player_1": 0.0}
    env.step("Option J")
    env.step("Option J")  # the round pays 8 each
    assert env.last()[1] == 8.0
    env.step(GARBAGE)
    env.step(GARBAGE)
    env.step(GARBAGE)  # forfeits: the fallback's round pay and the penalty
    assert env.rewards["player_0"] == -0.5 and env.agent_selection == "player_1"


def test_answers_that_are_not_text_or_too_long_are_invalid_and_unread() -> None:
    env = TextAECEnv(pettingzoo.make("aec", "tom_envs/PrisonersDilemma-v0"), max_answer_chars=10)
    env.reset(seed=0)
    for answer in (None, 1, ["Option J"]):
        env.step(answer)
        record = env.infos["player_0"]["answer"]
        assert record["outcome"] == "reask" and record["answer"] == ""
        assert type(answer).__name__ in record["feedback"]
        env.reset(seed=0)

    def unread(*_):
        raise AssertionError("an over-long answer was parsed")

    env.unwrapped.parse_action = unread  # type: ignore[method-assign]
    env.step("Option J" * 2)
    record = env.infos["player_0"]["answer"]
    assert (
        record["outcome"] == "reask"
        and "16 characters, more than the 10 read" in record["feedback"]
    )


def test_a_done_seat_steps_with_none_only() -> None:
    env = TextAECEnv(pettingzoo.make("aec", "tom_envs/PrisonersDilemma-v0", horizon=1))
    env.reset(seed=0)
    env.step("Option J")
    env.step("Option F")
    assert env.terminations["player_0"]
    with pytest.raises(ValueError, match="only valid action is None"):
        env.step("Option J")
    env.step(None)
    env.step(None)
    assert not env.agents


def test_chat_messages_in_an_answer_are_delivered() -> None:
    env = TextAECEnv(pettingzoo.make("aec", "tom_envs/BombDefusal-v0"))
    env.reset(seed=0)
    agent = env.agent_selection
    legal = env.infos[agent]["text_observation"].legal_actions
    action, said = next((a, t) for a, t in legal.items() if "Message" not in t)
    env.step(f"Action selection: {said}. Message to Team: meet me in the hall")
    record = env.infos[agent]["answer"]
    assert record["played"] == action and record["message"] == "meet me in the hall"
    assert "meet me in the hall" in env.observe(env.agent_selection)


def test_a_refused_chat_message_is_recorded_and_the_action_played() -> None:
    env = TextAECEnv(pettingzoo.make("aec", "tom_envs/BombDefusal-v0"))
    env.reset(seed=0)
    agent = env.agent_selection
    said = next(t for t in env.infos[agent]["text_observation"].legal_actions.values()
                if "Message" not in t)  # fmt: skip
    env.step(f"Action selection: {said}. Message to Team: " + "x" * 3000)
    record = env.infos[agent]["answer"]
    assert record["outcome"] == "played" and "exceeds the limit" in record["message_error"]


# ------------------------------------------------------------------------------ Parallel
def test_parallel_reask_holds_the_valid_answers_and_waits_for_the_others() -> None:
    env = TextParallelEnv(pettingzoo.make("parallel", "tom_envs/PrisonersDilemma-v0", horizon=3))
    obs, _ = env.reset(seed=0)
    state = env.unwrapped.game_state
    obs2, rewards, terms, _, infos = env.step({"player_0": "Option J", "player_1": GARBAGE})
    assert env.unwrapped.game_state is state and env.awaiting == ["player_1"]
    assert obs2["player_0"] == obs["player_0"]
    feedback = env.unwrapped.parse_action("player_1", GARBAGE).feedback
    assert obs2["player_1"] == obs["player_1"] + feedback_line(feedback)
    assert rewards == {"player_0": 0.0, "player_1": 0.0} and not any(terms.values())
    assert (
        not infos["player_0"]["action_mask"].any() and infos["player_0"]["text_observation"] is None
    )
    assert (
        infos["player_1"]["action_mask"].all() and infos["player_1"]["answer"]["outcome"] == "reask"
    )
    with pytest.raises(IllegalActionError, match=r"needed from \['player_1'\]"):
        env.step({"player_0": "Option J"})
    # player_0's held answer stands: a new one from it is not read
    _, rewards, *_ = env.step({"player_0": "Option F", "player_1": "Option F"})
    assert rewards == {"player_0": 0.0, "player_1": 10.0}  # (J, F)
    assert env.awaiting == env.agents == ["player_0", "player_1"]
    counts = env.episode_record()["counts"]
    assert counts["player_0"] == {
        "answers": 1,
        "invalid": 0,
        "reasks": 0,
        "fallbacks": 0,
        "unread": 1,
    }
    assert counts["player_1"]["answers"] == 2 and counts["player_1"]["reasks"] == 1


def test_parallel_terminate_and_forfeit() -> None:
    env = TextParallelEnv(pettingzoo.make("parallel", "tom_envs/PrisonersDilemma-v0"),
                          on_invalid="terminate", invalid_reward=-2)  # fmt: skip
    env.reset(seed=0)
    _, rewards, terms, truncs, infos = env.step({"player_0": GARBAGE, "player_1": "Option J"})
    assert rewards == {"player_0": -2.0, "player_1": 0.0} and all(terms.values())
    assert not any(truncs.values()) and env.agents == []
    with pytest.raises(IllegalActionError, match="call reset"):
        env.step({})
    env = TextParallelEnv(pettingzoo.make("parallel", "tom_envs/PrisonersDilemma-v0"),
                          on_invalid="forfeit", fallback="first")  # fmt: skip
    env.reset(seed=0)
    _, rewards, *_, infos = env.step({"player_0": GARBAGE, "player_1": "Option F"})
    assert rewards == {"player_0": 0.0, "player_1": 10.0}  # player_0 forfeits to Option J
    assert infos["player_0"]["answer"]["fallback"] is True


# ----------------------------------------------------------------------------- Gymnasium
def test_gymnasium_text_view_reask_terminate_and_reset() -> None:
    env = gymnasium.make("tom_envs/PrisonersDilemmaVsTitForTat-text-v0", horizon=3)
    obs, info = env.reset(seed=0)
    assert isinstance(obs, str) and info["action_mask"].all()
    again, reward, term, trunc, info = env.step(GARBAGE)
    assert again.startswith(obs) and again != obs and (reward, term, trunc) == (0.0, False, False)
    assert info["answer"]["outcome"] == "reask"
    _, reward, *_ = env.step("Option J")  # tit-for-tat opens with J
    assert reward == 8.0
    env = gymnasium.make("tom_envs/PrisonersDilemmaVsTitForTat-text-v0", on_invalid="terminate")
    env.reset(seed=0)
    _, reward, term, trunc, info = env.step(GARBAGE)
    assert (reward, term, trunc) == (-1.0, True, False) and not info["action_mask"].any()
    with pytest.raises(IllegalActionError, match="call reset"):
        env.step("Option J")
    env.reset(seed=0)
    assert env.step("Option J")[1] == 8.0
    inner = env.unwrapped
    assert isinstance(inner, TextSingleAgentEnv)
    record = inner.episode_record()
    assert record["env"] == "tom_envs/PrisonersDilemma-v0" and record["partners"] == ["tit_for_tat"]
    json.dumps(record)


def test_the_text_view_wraps_any_single_agent_view() -> None:
    env = TextSingleAgentEnv(SingleAgentEnv("Hanabi", ["simple", "simple"], seat=1, players=3))
    obs, info = env.reset(seed=2)
    assert info["text_observation"].prompt() == obs and env.view.agent == "player_1"
    action = int(np.flatnonzero(info["action_mask"])[0])
    _, _, _, _, info = env.step(info["text_observation"].legal_actions[action])
    assert info["answer"]["played"] == action
    assert np.array_equal(env.action_masks(), info["action_mask"].astype(bool))


# ------------------------------------------------------------------- spaces and arguments
def test_the_spaces_hold_any_text_and_sample_legal_answers() -> None:
    space = TextSpace()
    for text in ("a", "Bob hints Red.\n- Play card 1", "掼蛋 出牌 ♠A", "🙂" * 100):
        assert space.contains(text)
    assert not space.contains("") and not space.contains(3)
    assert all(len(space.sample()) <= 64 for _ in range(20))
    answers = AnswerSpace(10, lambda: {2: "Option J", 5: "Option F"})
    assert answers.contains("") and answers.contains("Option J") and not answers.contains("x" * 11)
    answers.seed(0)
    assert {answers.sample() for _ in range(40)} == {"Option J", "Option F"}
    mask = np.zeros(6, dtype=np.int8)
    mask[5] = 1
    assert {answers.sample(mask) for _ in range(10)} == {"Option F"}
    assert answers.sample(np.zeros(6, dtype=np.int8)) not in ("Option J", "Option F")
    for copied in (pickle.loads(pickle.dumps(answers)), copy.deepcopy(answers)):
        assert copied._legal_texts is None and copied == answers
    obs = TextObs("hello")
    assert obs == "hello" and isinstance(obs, str) and obs.dtype == space.dtype


def test_policy_arguments_are_checked_and_recorded() -> None:
    raw: Any = pettingzoo.make("aec", "tom_envs/PrisonersDilemma-v0")
    cases: tuple[tuple[dict[str, Any], str], ...] = (
        ({"on_invalid": "ignore"}, r"argument 'on_invalid': got 'ignore'; allowed: 'reask', 'forfeit', 'terminate'"),
        ({"fallback": "best"}, "argument 'fallback'"),
        ({"max_reasks": -1}, r"argument 'max_reasks'.*\[0, 100\]"),
        ({"max_reasks": True}, "argument 'max_reasks'"),
        ({"invalid_reward": float("nan")}, "argument 'invalid_reward'"),
        ({"max_answer_chars": 0}, "argument 'max_answer_chars'"),
        ({"feedback_template": "Try again."}, "argument 'feedback_template'"),
        ({"feedback_template": "{feedback} {oops}"}, "argument 'feedback_template'"),
    )  # fmt: skip
    for kwargs, message in cases:
        with pytest.raises(ValueError, match=message):
            TextAECEnv(raw, **kwargs)
    par: Any = pettingzoo.make("parallel", "tom_envs/PrisonersDilemma-v0")
    for wrapper, given in ((TextAECEnv, par), (TextParallelEnv, raw), (TextSingleAgentEnv, raw)):
        with pytest.raises(TypeError, match="argument 'env'"):
            wrapper(given)
    with pytest.raises(TypeError, match=r"unknown argument\(s\) \['max_retries'\]"):
        TextAECEnv(raw, max_retries=3)
    policy = InvalidAnswerPolicy("forfeit", fallback="first")
    with pytest.raises(ValueError, match="a whole InvalidAnswerPolicy was given"):
        TextAECEnv(raw, on_invalid=policy, max_reasks=1)
    view = gymnasium.make("tom_envs/HanabiVsSimple-text-v0", max_reasks=0, players=3).unwrapped
    assert isinstance(view, TextSingleAgentEnv)
    assert view.policy.max_reasks == 0 and view.view.env_kwargs == {"players": 3}
    env = TextAECEnv(raw, on_invalid=policy)
    env.reset(seed=0)
    assert env.last()[4]["invalid_policy"] is policy
    assert policy.as_dict()["invalid_reward"] == 0.0
    assert env.episode_record()["invalid_policy"] == policy.as_dict()


def test_nothing_is_read_before_reset() -> None:
    env = TextAECEnv(pettingzoo.make("aec", "tom_envs/PrisonersDilemma-v0"))
    with pytest.raises(AttributeError, match="before reset"):
        _ = env.infos
    with pytest.raises(AttributeError, match="before reset"):
        env.last()
    with pytest.raises(AttributeError, match="before reset"):
        env.agent_iter()


# ---------------------------------------------------------------------------------- docs
ROOT = Path(__file__).resolve().parents[1]


def test_every_game_page_documents_its_text_wrappers_and_ids() -> None:
    pages = render_pages()
    for spec in GAME_SPECS:
        page = next(p for p in pages.values() if f"`{spec.id}`" in p)
        assert "## Text in, text out: the natural-language wrappers" in page
        assert f'TextAECEnv(pettingzoo.make("aec", "{spec.id}"))' in page
        assert (
            f'TextParallelEnv(pettingzoo.make("parallel", "{spec.id}"))' in page
        ) is spec.parallel
        for sa in single_agent_specs():
            if sa.game is spec:
                assert f"`{sa.text_id}`" in page


def test_the_quickstart_text_loop_runs_as_written() -> None:
    """The quickstart's LLM loop, with a "model" that always answers "1" (the first listed legal
    action, by the suite's number rule): a whole Hanabi game, no invalid answer."""
    text = (ROOT / "docs" / "quickstart.md").read_text()
    section = text.split("## Text in, text out", 1)[1]
    block = section.split("```python\n", 1)[1].split("```", 1)[0]
    assert "env.step(None if terminated or truncated else my_llm(obs))" in block
    namespace: dict = {"my_llm": lambda prompt: "1"}
    exec(compile(block, "quickstart.md", "exec"), namespace)
    env = namespace["env"]
    assert not env.agents
    record = env.episode_record()
    assert sum(c["answers"] for c in record["counts"].values()) > 10
    assert not any(c["invalid"] for c in record["counts"].values())


def test_gymnasium_vector_envs_batch_the_text_ids() -> None:
    """``gymnasium.make_vec`` on a ``-text`` id: string answers in, a tuple of prompts and batched
    infos out (the answer record's keys and types never change), with an invalid answer in one
    env and a valid one in the other."""
    envs = gymnasium.make_vec("tom_envs/PrisonersDilemmaVsTitForTat-text-v0", num_envs=2,
                              vectorization_mode="sync", horizon=2)  # fmt: skip
    try:
        obs, _ = envs.reset(seed=0)
        assert isinstance(obs, tuple) and all(isinstance(o, str) for o in obs)
        obs, rewards, term, trunc, info = envs.step((GARBAGE, "Option J"))
        assert list(rewards) == [0.0, 8.0] and not term.any() and not trunc.any()
        assert list(info["answer"]["outcome"]) == ["reask", "played"]
        assert list(info["answer"]["played"]) == [-1, 0]
        assert "could not be used" in obs[0] and "could not be used" not in obs[1]
    finally:
        envs.close()
