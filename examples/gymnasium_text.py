"""A Gymnasium text environment, stepped the way LLM-RL libraries step one: a string in, a string
(and a reward) out.

Every single-agent view has a text id, ``tom_envs/<Game>Vs<Bot>-text-v<N>``: the observation is
the learner's prompt (rules, observation, legal actions), the action is its answer in free text,
read by the game's parser. The "model" here reads only the prompt. An unusable answer is asked
again with the parser's feedback (the default), or, with ``on_invalid="terminate"``, ends the
episode with reward -1: a format penalty a trainer can learn from.

    python examples/gymnasium_text.py
"""

import re

import gymnasium

import tom_envs  # noqa: F401  (registers the tom_envs/ ids)

ENV_ID = "tom_envs/PrisonersDilemmaVsTitForTat-text-v0"


def policy(prompt: str) -> str:
    """Cooperate, and defect on the last round (optimal against tit-for-tat), from the text."""
    rounds = re.search(r"You will play (\d+) rounds", prompt)
    now = re.search(r"You are currently playing round (\d+)", prompt)
    last = rounds and now and rounds.group(1) == now.group(1)
    return "I defect: Option F" if last else "Option J"


def rollout(env: gymnasium.Env, seed: int, act) -> list[dict]:
    """One episode as a list of turns (prompt, answer, reward), as an LLM-RL trainer collects it."""
    obs, info = env.reset(seed=seed)
    turns, done = [], False
    while not done:
        answer = act(obs)
        next_obs, reward, terminated, truncated, info = env.step(answer)
        turns.append({"prompt": obs, "answer": answer, "reward": reward,
                      "outcome": info["answer"]["outcome"]})  # fmt: skip
        obs, done = next_obs, terminated or truncated
    return turns


def main() -> None:
    env = gymnasium.make(ENV_ID, horizon=5)
    turns = rollout(env, 0, policy)
    print(f"{ENV_ID}: {len(turns)} turns, return {sum(t['reward'] for t in turns)} "
          f"(optimal against tit-for-tat over 5 rounds: {8 * 4 + 10})")  # fmt: skip
    question = next(x for x in turns[0]["prompt"].splitlines() if x.startswith("Q:"))
    print(f"first prompt asks {question!r}; answered {turns[0]['answer']!r}")

    def sloppy(prompt: str) -> str:  # a model that first rambles, then answers
        return policy(prompt) if "could not be used" in prompt else "maybe K?"

    turns = rollout(env, 0, sloppy)
    reasks = sum(t["outcome"] == "reask" for t in turns)
    print(f"sloppy model: {len(turns)} turns ({reasks} re-asked), return "
          f"{sum(t['reward'] for t in turns)}")  # fmt: skip
    strict = gymnasium.make(ENV_ID, horizon=5, on_invalid="terminate")
    turns = rollout(strict, 0, sloppy)
    print(f"on_invalid='terminate': {len(turns)} turn, reward {turns[-1]['reward']}, "
          f"recorded {strict.unwrapped.episode_record()['terminated_by']}")  # fmt: skip


if __name__ == "__main__":
    main()
