"""The golden seeded playthrough of the bomb-defusal mission (OpenSpiel-style).

The heuristic team plays seed 0 of the default mission through the AEC env; every decision is
written out: the acting player's observation text, the action's text, its message, the rewards and
the ToM probes asked right after the action (the paper's timing) with their computed answers and
the no-ToM answer. ``test_bomb_golden.py`` diffs this against
``playthrough_seed0.txt``; after an intended change, regenerate with::

    .venv/bin/python tests/games/bomb_defusal/bomb_golden.py
"""

from __future__ import annotations

from pathlib import Path

from tom_envs.core.agents import EpisodeInfo, Turn, as_agent_action
from tom_envs.games.bomb_defusal.bots import HeuristicAgent
from tom_envs.games.bomb_defusal.env import raw_env

GOLDEN = Path(__file__).with_name("playthrough_seed0.txt")


def render_playthrough(seed: int = 0) -> str:
    """The playthrough text of ``seed``."""
    env = raw_env()
    env.reset(seed=seed)
    game = env.game
    agents = [HeuristicAgent(game.config) for _ in env.possible_agents]
    for i, a in enumerate(agents):
        a.reset(EpisodeInfo("tom_envs/BombDefusal-v0", f"player_{i}", i, 3, 9, seed, (0, 30), 90))
    lines = [f"# seed {seed}", env.bundle.text.render_state(env.game_state), ""]
    decisions = dict.fromkeys(env.possible_agents, 0)
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        i = int(agent.rsplit("_", 1)[1])
        view = env.view(agent)
        turn = Turn(agent, i, view, obs["observation"], obs["action_mask"], 0.0, decisions[agent])
        choice = as_agent_action(agents[i].act(turn))
        decisions[agent] += 1
        lines.append(f"## round {view.round}, {game.config.agents[i]}")
        lines.append(env.text_observation(agent).observation)
        lines.append(f"> {env.bundle.text.action_text(view, choice.action)}")
        if choice.message:
            lines.append(f'> Message to Team: "{choice.message}"')
            env.send_message(agent, choice.message)
        env.step(choice.action)
        lines.append(f"  rewards {[env.rewards[a] for a in env.possible_agents]}")
        for p in env.probes(agent):  # right after the action, as the paper asked
            lines.append(f"  probe {p.id} = {p.answer} (no-ToM {p.no_tom}): {p.question}")
    lines += ["", env.bundle.text.render_state(env.game_state)]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    GOLDEN.write_text(render_playthrough(0))
    print(f"written: {GOLDEN}")
