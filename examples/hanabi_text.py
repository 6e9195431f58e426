"""Hanabi through the text wrapper, as an LLM plays it, with a rule-based "model" instead of an API.

The loop is a plain PettingZoo loop over ``TextAECEnv``: ``last()`` gives the seat's prompt (rules,
observation, legal actions) and ``info["text_observation"]`` the same text in parts; the "model"
answers in free text; ``step(reply)`` reads it with the game's parser. An unparseable reply is
asked again with the parser's feedback (counted, never guessed). The policy below reads *only the
text*: it plays a card its hints prove playable, else hints a playable card of its partner's, else
discards its least-known card.

    python examples/hanabi_text.py
"""

import re

import pettingzoo

import tom_envs  # noqa: F401  (registers the tom_envs/ ids)
from tom_envs.wrappers import TextAECEnv


def _sets(colours: str, ranks: str) -> tuple[set[str], set[str]]:
    return {c.strip() for c in colours.split(",")}, {r.strip() for r in ranks.split(",")}


def knowledge(observation: str, prefix: str = "") -> list[tuple[set[str], set[str]]]:
    """Possible colours and ranks per card: mine ("Card i could be: [..] [..]") or, with
    ``prefix=PARTNER``, what my partner knows of theirs ("Bob believes his Card i could be: ...")."""
    pattern = rf"^{prefix}Card \d+ could be: \[([^\]]*)\] \[([^\]]*)\]"
    return [_sets(c, r) for c, r in re.findall(pattern, observation, re.M)]


PARTNER = r"\w+ believes (?:his|her|their) "


def text_policy(observation: str, legal: list[str]) -> str:
    """A reply in words, chosen from what the text says."""
    playable = set(re.findall(r"Only (\w+ \d) can be played", observation))  # e.g. "Red 1"
    mine = knowledge(observation)
    for i, (colours, ranks) in enumerate(mine):
        if {f"{c} {r}" for c in colours for r in ranks} <= playable:
            return f"My hints prove card {i} is playable, so I play my Card {i}."
    partner = re.findall(r"^\[Card \d+: (\w+) (\d)\]", observation, re.M)
    beliefs = knowledge(observation, PARTNER)
    for (colour, rank), (colours, ranks) in zip(partner, beliefs, strict=False):
        if f"{colour} {rank}" not in playable:
            continue
        if {f"{c} {r}" for c in colours for r in ranks} <= playable:
            continue  # my partner already knows it can play it
        want = f"rank {rank} cards" if len(ranks) > 1 else f"{colour} color cards"
        hint = next((a for a in legal if want in a), None)
        if hint is not None:
            return f"I will {hint.split('. ', 1)[1].lower()}."
    if any("Discard my Card" in a for a in legal):
        unknown = [len(c) * len(r) for c, r in mine]
        card = max(range(len(unknown)), key=lambda i: unknown[i])
        return f"Discard my Card {card}."
    for (colour, rank), (colours, ranks) in zip(partner, beliefs, strict=False):  # a new fact
        want = f"rank {rank} cards" if len(ranks) > 1 else f"{colour} color cards"
        hint = next((a for a in legal if want in a), None)
        if (len(ranks) > 1 or len(colours) > 1) and hint is not None:
            return f"I tell my partner: {hint.split('. ', 1)[1]}."
    return f"Nothing new to say, so: {legal[0].split('. ', 1)[1]}."  # tokens full, all known


def main() -> None:
    env = TextAECEnv(pettingzoo.make("aec", "tom_envs/Hanabi-v0"))
    env.reset(seed=0)
    calls = 0
    returns = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        _prompt, reward, terminated, truncated, info = env.last()  # the prompt an LLM is sent
        returns[agent] += reward
        if terminated or truncated:
            env.step(None)
            continue
        text = info["text_observation"]
        reply = text_policy(text.observation, list(text.legal_actions.values()))
        calls += 1
        if calls <= 3:
            print(f"{agent}: {reply!r}")
        env.step(reply)
    invalid = sum(c["invalid"] for c in env.episode_record()["counts"].values())
    print(f"{calls} replies, {invalid} unparseable; team score {returns['player_0']:.0f} of 25")


if __name__ == "__main__":
    main()
