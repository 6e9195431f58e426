"""A Gymnasium single-agent view: you play seat 0, a named partner bot plays the other seat.

Any loop that speaks Gymnasium (SB3, RMax-style tabular learners, an LLM loop) can train or play
against a fixed partner this way. The legal-action mask is in ``info["action_mask"]``; the text
layer is on the unwrapped env.

    python examples/gymnasium_vs_partner.py
"""

import gymnasium
import numpy as np

import tom_envs  # noqa: F401  (registers the tom_envs/ ids)


def main() -> None:
    env = gymnasium.make("tom_envs/PrisonersDilemmaVsTitForTat-v0", horizon=5)
    obs, info = env.reset(seed=0)
    print(env.unwrapped.text_observation().prompt())
    # A tiny policy: cooperate, except defect on the last round (optimal against tit-for-tat).
    total, done, t = 0.0, False, 0
    while not done:
        action = 1 if t == 4 else 0
        assert info["action_mask"][action] == 1
        obs, reward, terminated, truncated, info = env.step(action)
        total += reward
        done = terminated or truncated
        t += 1
    print(f"return {total} (optimal against tit-for-tat over 5 rounds: {8 * 4 + 10})")
    # Free text goes through the same parser an LLM agent gets:
    obs, info = env.reset(seed=1)
    for answer in ["Option F", "I'd rather cooperate: Option J", "maybe K?"]:
        result = env.unwrapped.parse_action(answer)
        print(f"{answer!r:35} -> action {result.action}, {result.feedback}")
    print("first observation of an episode (round 0, no history):", np.round(obs, 2))


if __name__ == "__main__":
    main()
