"""Text/vector parity: both renderings are functions of the player view, and text round-trips.

An RL agent (vector) and an LLM agent (text) must get the same information: both renderings are
computed from ``game.observe(state, player)`` and from nothing else. Checked here over random
states of every registered game: equal views give equal vectors and equal texts; the env's
observations are exactly the renderings of ``env.view(agent)``; every legal action's text parses
back to that action; garbage never parses and never raises. Through the natural-language wrappers
(``tom_envs.wrappers``: AEC, Parallel and the Gymnasium ``-text`` ids) a seat receives exactly its
own prompt (and the parser's feedback on its own answers) and infos rendered from its own view.
"""

from __future__ import annotations

import copy

import gymnasium
import numpy as np
from conformance_helpers import (
    all_games,
    assert_same,
    bundle_of,
    default_max_cycles,
    freeze,
    legal_choice,
    make_aec,
    make_parallel,
    parallel_games,
    rules_episode,
    seeds,
)

from tom_envs.core.game import ParseResult, TextObservation, agent_index
from tom_envs.registration import single_agent_specs
from tom_envs.wrappers import TextAECEnv, TextParallelEnv, TextSingleAgentEnv

GARBAGE = (
    "",
    "   ",
    "???",
    "\n\t\r",
    "\x00\x01\x02",
    "🙂" * 50,
    123,
    4.5,
    None,
    b"bytes",
    ["a list"],
    {"a": "dict"},
)
#: Very long answers (checked on a few views only: they are slow to scan).
LONG_GARBAGE = ("%$#@!" * 5000, "?" * 100_000)
#: Random rules-level episodes per game whose every state and seat is checked (fixed seeds).
PARITY_EPISODES = 8
MAX_VIEWS_PARSED = 300


def random_views(spec, episodes=PARITY_EPISODES):
    """``(state, player, view)`` over random rules-level episodes (every state, every seat)."""
    bundle = bundle_of(spec)
    game = bundle.game
    rng = np.random.default_rng(7)
    for seed in seeds(episodes):
        for st in rules_episode(bundle, seed, rng):
            for p in range(game.num_players):
                yield st.state, p, game.observe(st.state, p)


def sample(items, k, seed=0):
    items = list(items)
    if len(items) <= k:
        return items
    idx = np.random.default_rng(seed).choice(len(items), size=k, replace=False)
    return [items[i] for i in sorted(idx)]


def check_parse_result(result, legal, what):
    assert isinstance(result, ParseResult), f"{what}: parse_action returned {result!r}"
    assert result.action is None or result.action in legal, f"{what}: illegal {result.action}"
    assert isinstance(result.feedback, str)


# ------------------------------------------------------------------ functions of the view
@all_games
def test_renderings_are_functions_of_the_view(spec) -> None:
    bundle = bundle_of(spec)
    enc, text = bundle.encoder, bundle.text
    seen: dict = {}
    repeats = 0
    for i, (state, _, view) in enumerate(random_views(spec)):
        vec = enc.encode(view)
        assert isinstance(vec, np.ndarray) and vec.dtype == np.float32
        assert vec.shape == tuple(enc.observation_shape)
        assert np.all(vec >= enc.low) and np.all(vec <= enc.high), "vector outside [low, high]"
        tobs = text.text_observation(view)
        assert isinstance(tobs, TextObservation)
        assert isinstance(tobs.rules, str) and tobs.rules.strip()
        assert isinstance(tobs.observation, str) and tobs.observation.strip()
        assert set(tobs.legal_actions) == set(view.legal_actions)
        texts = list(tobs.legal_actions.values())
        assert all(isinstance(t, str) and t.strip() for t in texts)
        assert len(set(texts)) == len(texts), f"two legal actions share a text: {texts}"
        assert isinstance(tobs.prompt(), str)
        key = freeze(view)
        value = (freeze(vec), freeze(tobs))
        if key in seen:
            repeats += 1
            assert seen[key] == value, (
                "equal views rendered differently (a rendering reads more than the view)"
            )
        else:
            seen[key] = value
        if i % 25 == 0:  # pure: a copy of the view renders the same, twice
            twin = copy.deepcopy(view)
            assert_same(enc.encode(twin), vec, "encode(copy of view)")
            assert_same(text.text_observation(twin), tobs, "text_observation(copy of view)")
            assert_same(freeze(view), key, "rendering mutated the view")
            s = enc.encode_state(state)
            assert isinstance(s, np.ndarray) and s.dtype == np.float32
            assert s.shape == tuple(enc.state_shape)
            assert np.all(s >= enc.low) and np.all(s <= enc.high), "state() outside [low, high]"
    assert seen


@all_games
def test_aec_observations_are_renderings_of_the_view(spec) -> None:
    env = make_aec(spec)
    u = env.unwrapped
    bundle = u.bundle
    game, enc, text = bundle.game, bundle.encoder, bundle.text
    rng = np.random.default_rng(8)

    def check(agent, with_text):
        view = u.view(agent)
        assert_same(view, game.observe(u.game_state, agent_index(agent)), f"view of {agent}")
        ob = u.observe(agent)
        assert_same(ob["observation"], enc.encode(view), f"vector of {agent}")
        if with_text:
            assert_same(u.text_observation(agent), text.text_observation(view), f"text of {agent}")
        if agent == u.agent_selection and not (u.terminations[agent] or u.truncations[agent]):
            assert sorted(np.flatnonzero(ob["action_mask"]).tolist()) == sorted(view.legal_actions)

    for seed in (0, 1):
        env.reset(seed=seed)
        for a in env.agents:
            check(a, True)
        for agent in env.agent_iter():
            _, _, term, trunc, _ = env.last()
            for a in env.agents:
                check(a, a == agent)  # every agent's text is checked in its own turns
            if term or trunc:
                for a in env.agents:
                    check(a, True)
                env.step(None)
            else:
                env.step(legal_choice(rng, env.observe(agent)["action_mask"]))


@parallel_games
def test_parallel_observations_are_renderings_of_the_view(spec) -> None:
    env = make_parallel(spec)
    bundle = env.unwrapped.bundle
    enc, text = bundle.encoder, bundle.text
    rng = np.random.default_rng(9)
    for seed in (0, 1):
        obs, _ = env.reset(seed=seed)
        while True:
            for a, ob in obs.items():
                view = env.view(a)
                assert_same(ob["observation"], enc.encode(view), f"vector of {a}")
                assert_same(env.text_observation(a), text.text_observation(view), f"text of {a}")
                if a in env.agents:
                    assert sorted(np.flatnonzero(ob["action_mask"]).tolist()) == sorted(
                        view.legal_actions
                    )
            if not env.agents:
                break
            obs = env.step({a: legal_choice(rng, obs[a]["action_mask"]) for a in env.agents})[0]


# ------------------------------------------------------------------------------ parsing
@all_games
def test_every_legal_action_text_parses_back(spec) -> None:
    text = bundle_of(spec).text
    views = [v for _, _, v in random_views(spec, episodes=4) if v.legal_actions]
    assert views, "random play produced no state with a legal action"
    for view in sample(views, MAX_VIEWS_PARSED):
        for a in view.legal_actions:
            said = text.action_text(view, a)
            result = text.parse_action(view, said)
            check_parse_result(result, view.legal_actions, f"parse({said!r})")
            assert result.action == a, f"{said!r} parsed as {result.action}, expected {a}"
            assert result.feedback.strip()


@all_games
def test_garbage_never_parses_and_never_raises(spec) -> None:
    text = bundle_of(spec).text
    views = [v for _, _, v in random_views(spec, episodes=3)]
    terminal = [v for v in views if not v.legal_actions]
    for i, view in enumerate(sample(views, 8) + terminal[:2]):
        for junk in GARBAGE + (LONG_GARBAGE if i < 2 else ()):
            result = text.parse_action(view, junk)
            check_parse_result(result, view.legal_actions, f"parse({str(junk)[:40]!r})")
            assert result.action is None, f"garbage {str(junk)[:40]!r} parsed as {result.action}"
            assert result.feedback.strip(), f"no feedback for garbage {str(junk)[:40]!r}"
        # Tricky but harmless inputs: whatever comes back must be a legal action or None.
        said = [text.action_text(view, a) for a in view.legal_actions]
        for tricky in (
            " or ".join(said),
            " ".join(reversed(said)),
            *(s.upper() for s in said),
            *(f"<action>{s}</action>" for s in said),
            "<action></action>",
            "Action:",
            "1",
            "0",
            "-1",
            "99999999999999999999",
            "x" * 5_000 + (said[0] if said else ""),
        ):
            check_parse_result(text.parse_action(view, tricky), view.legal_actions, repr(tricky[:60]))
    for view in terminal[:2]:
        result = text.parse_action(view, "1")
        assert result.action is None and result.feedback.strip(), "parsed an action after the end"


@all_games
def test_env_parse_action_only_for_the_agent_to_act(spec) -> None:
    env = make_aec(spec)
    u = env.unwrapped
    text = u.bundle.text
    rng = np.random.default_rng(10)
    env.reset(seed=0)
    for n, agent in enumerate(env.agent_iter()):
        _, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        view = u.view(agent)
        said = {a: text.action_text(view, a) for a in view.legal_actions}
        if n < 20 or n % 25 == 0:
            for a, s in said.items():
                assert u.parse_action(agent, s).action == a
            for other in env.agents:
                if other == agent:
                    continue
                for s in [*said.values(), "1"]:
                    result = u.parse_action(other, s)
                    assert isinstance(result, ParseResult)
                    assert result.action is None and result.feedback.strip(), (
                        f"{other} parsed {s!r} while it is {agent}'s turn"
                    )
        env.step(legal_choice(rng, env.observe(agent)["action_mask"]))
        if all(u.terminations.get(a) or u.truncations.get(a) for a in env.agents):
            # The episode is over: nobody may act, before and after the dead steps.
            for other in env.possible_agents:
                result = u.parse_action(other, "1")
                assert result.action is None and result.feedback.strip()
    for other in env.possible_agents:
        result = u.parse_action(other, "1")
        assert result.action is None and result.feedback.strip()


@parallel_games
def test_parallel_parse_action(spec) -> None:
    env = make_parallel(spec)
    text = env.unwrapped.bundle.text
    rng = np.random.default_rng(11)
    obs, _ = env.reset(seed=0)
    steps = 0
    while env.agents:
        if steps < 10 or steps % 25 == 0:
            for a in env.agents:
                view = env.view(a)
                for act in view.legal_actions:
                    assert env.parse_action(a, text.action_text(view, act)).action == act
                result = env.parse_action(a, None)
                assert result.action is None and result.feedback.strip()
        obs = env.step({a: legal_choice(rng, obs[a]["action_mask"]) for a in env.agents})[0]
        steps += 1
    for a in env.possible_agents:
        result = env.parse_action(a, "1")
        assert result.action is None and result.feedback.strip(), "parsed an action after the end"


# ------------------------------------------------------------------ the text wrappers
#: What a text wrapper puts in a seat's info (tom_envs.wrappers).
WRAPPER_INFO_KEYS = {"action_mask", "text_observation", "answer", "invalid_policy"}
#: Every how many decisions a seat first answers with garbage (re-asked with the feedback).
GARBAGE_EVERY = 4


def _wrapper_view_checks(info, view, text, agent, asked: bool) -> None:
    """A seat's info holds renderings of its own view and records of its own answers only."""
    assert WRAPPER_INFO_KEYS - {"answer"} <= set(info) <= WRAPPER_INFO_KEYS, sorted(info)
    mask = info["action_mask"]
    if asked:
        assert_same(info["text_observation"], text.text_observation(view), f"text of {agent}")
        assert sorted(np.flatnonzero(mask).tolist()) == sorted(view.legal_actions)
    else:
        assert info["text_observation"] is None and not mask.any()
    answer = info.get("answer")
    assert answer is None or answer["agent"] == agent, f"{agent}'s info holds another's answer"


def _expected_prompt(text, view, feedback, template) -> str:
    prompt = text.text_observation(view).prompt()
    return prompt if feedback is None else f"{prompt}\n\n{template.format(feedback=feedback)}"


@all_games
def test_the_aec_text_wrapper_shows_each_seat_only_its_view(spec) -> None:
    """Through ``TextAECEnv`` a seat's observation is exactly its prompt (plus, when re-asked,
    the parser's feedback on its own answer read against its own view), and every seat's info
    holds only renderings of its own view; nothing else reaches a seat."""
    env = TextAECEnv(make_aec(spec))
    u = env.unwrapped
    text, template = u.bundle.text, env.policy.feedback_template
    rng = np.random.default_rng(12)
    env.reset(seed=0)
    feedback: str | None = None
    for n, agent in enumerate(env.agent_iter()):
        obs, _, term, trunc, info = env.last()
        live = not (term or trunc)
        view = u.view(agent)
        assert obs == _expected_prompt(text, view, feedback, template), f"{agent}'s observation"
        _wrapper_view_checks(info, view, text, agent, live)
        if n < 40 or n % 10 == 0:
            for other in env.agents:
                if other != agent:
                    other_view = u.view(other)
                    assert env.observe(other) == _expected_prompt(text, other_view, None, template)
                    _wrapper_view_checks(env.infos[other], other_view, text, other, False)
        if not live:
            env.step(None)
            continue
        if feedback is None and n % GARBAGE_EVERY == 0:
            said = "%% not an action %%"
            feedback = text.parse_action(view, said).feedback
            env.step(said)
            continue
        feedback = None
        env.step(info["text_observation"].legal_actions[legal_choice(rng, info["action_mask"])])


@parallel_games
def test_the_parallel_text_wrapper_shows_each_seat_only_its_view(spec) -> None:
    """The same for ``TextParallelEnv``: prompts of each seat's own view (feedback only on its own
    re-asked answer), infos of its own view."""
    env = TextParallelEnv(make_parallel(spec))
    u = env.unwrapped
    text, template = u.bundle.text, env.policy.feedback_template
    rng = np.random.default_rng(13)
    obs, infos = env.reset(seed=0)
    feedback: dict[str, str] = {}
    steps = 0
    while True:
        for a, ob in obs.items():
            view = u.view(a)
            assert ob == _expected_prompt(text, view, feedback.get(a), template), f"{a}'s prompt"
            _wrapper_view_checks(infos[a], view, text, a, a in env.awaiting)
        if not env.agents:
            break
        answers, feedback = {}, {}
        for a in env.awaiting:
            if steps % GARBAGE_EVERY == 0 and a == env.awaiting[-1]:
                answers[a] = "%% not an action %%"
                feedback[a] = text.parse_action(u.view(a), answers[a]).feedback
            else:
                legal = infos[a]["text_observation"].legal_actions
                answers[a] = legal[legal_choice(rng, infos[a]["action_mask"])]
        obs, _, _, _, infos = env.step(answers)
        steps += 1


@all_games
def test_the_gymnasium_text_view_shows_the_learner_only_its_view(spec) -> None:
    """A registered ``-text`` id: the learner's observation is its prompt, its info renders its
    own view (the partners' text never reaches it)."""
    sa = next(s for s in single_agent_specs() if s.game is spec)
    env = gymnasium.make(sa.text_id, max_cycles=default_max_cycles(spec))
    inner = env.unwrapped
    assert isinstance(inner, TextSingleAgentEnv)
    aec, agent = inner.view.aec, inner.view.agent
    text, template = aec.bundle.text, inner.policy.feedback_template
    rng = np.random.default_rng(14)
    obs, info = env.reset(seed=0)
    feedback, n = None, 0
    while True:
        view = aec.view(agent)
        assert obs == _expected_prompt(text, view, feedback, template)
        done = not info["action_mask"].any()
        _wrapper_view_checks(info, view, text, agent, not done)
        if done:
            break
        if feedback is None and n % GARBAGE_EVERY == 0:
            said = "%% not an action %%"
            feedback = text.parse_action(view, said).feedback
        else:
            legal = info["text_observation"].legal_actions
            said, feedback = legal[legal_choice(rng, info["action_mask"])], None
        obs, _, term, trunc, info = env.step(said)
        n += 1
        if term or trunc:
            _wrapper_view_checks(info, aec.view(agent), text, agent, False)
            break
