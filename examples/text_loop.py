"""The text layer an LLM loop uses, with a scripted "model" instead of an API call.

Every game offers the same three calls, so a loop like this needs no game-specific code:
``env.text_observation(agent)`` (rules, observation, legal actions), and
``env.parse_action(agent, text)`` (free text -> action, or feedback to show the model).

    python examples/text_loop.py
"""

import pettingzoo

import tom_envs  # noqa: F401


def scripted_model(prompt: str, turn: int) -> str:
    """Stands in for an LLM: answers in free text, sometimes badly."""
    answers = ["I will choose Option J.", "hmm, not sure", "<action>F</action>", "Option J"]
    return answers[turn % len(answers)]


def main() -> None:
    env = pettingzoo.make("aec", "tom_envs/BattleOfSexes-v0", horizon=3)
    env.reset(seed=0)
    calls = invalid = 0
    for agent in env.agent_iter():
        _, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        prompt = env.text_observation(agent).prompt()
        result = env.parse_action(agent, scripted_model(prompt, calls))
        calls += 1
        while not result.valid:  # show the feedback and ask again
            invalid += 1
            print(f"{agent}: invalid ({result.feedback}); asking again")
            result = env.parse_action(agent, scripted_model(prompt + "\n" + result.feedback, calls))
            calls += 1
        env.step(result.action)
    print(env.unwrapped.text_observation("player_0").observation)
    print(f"model calls: {calls}, invalid answers: {invalid}")


if __name__ == "__main__":
    main()
