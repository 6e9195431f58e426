"""An LLM in a plain PettingZoo loop, with a scripted "model" instead of an API call.

``TextAECEnv`` gives every game text observations and text actions: ``last()`` returns the seat's
prompt (rules, observation, legal actions) and ``step`` takes the seat's answer in free text,
read by the game's parser, so the loop needs no game-specific code. An answer the parser cannot
use is asked again, with its feedback appended to the prompt (``on_invalid="reask"``, the
default; ``"forfeit"`` plays a recorded fallback, ``"terminate"`` ends the episode), and every
answer is recorded (``env.episode_record()``).

    python examples/text_loop.py
"""

import pettingzoo

import tom_envs  # noqa: F401  (registers the tom_envs/ ids)
from tom_envs.wrappers import TextAECEnv

ANSWERS = ["I will choose Option J.", "hmm, not sure", "<action>F</action>", "Option J"]


def main() -> None:
    calls = []

    def my_llm(prompt: str) -> str:
        """Stands in for an LLM: answers in free text, sometimes badly."""
        calls.append(prompt)
        return ANSWERS[len(calls) % len(ANSWERS)]

    env = TextAECEnv(pettingzoo.make("aec", "tom_envs/BattleOfSexes-v0", horizon=3))
    env.reset(seed=0)
    for _agent in env.agent_iter():
        obs, _reward, terminated, truncated, _info = env.last()
        env.step(None if terminated or truncated else my_llm(obs))

    asked_again = next(p for p in calls if "could not be used" in p)
    print("a re-asked prompt ends with:", asked_again.splitlines()[-2])
    print(env.unwrapped.text_observation("player_0").observation)
    record = env.episode_record()
    invalid = sum(c["invalid"] for c in record["counts"].values())
    print(f"model calls: {len(calls)}, invalid answers: {invalid}")
    print(f"policy: {record['invalid_policy']['on_invalid']}, max_reasks "
          f"{record['invalid_policy']['max_reasks']}")  # fmt: skip


if __name__ == "__main__":
    main()
