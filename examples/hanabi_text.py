"""Hanabi through the text layer, as an LLM plays it, with a rule-based "model" instead of an API.

The loop is the one an LLM agent runs: ``env.text_observation(agent)`` gives the rules, the
observation and the legal actions as text; the "model" answers in free text; ``env.parse_action``
turns the answer into an action or into feedback to show the model (an unparseable answer is
counted, never guessed). The policy below reads *only the text*: it plays a card its hints prove
playable, else hints a playable card of its partner's, else discards its least-known card.

    python examples/hanabi_text.py
"""

import re

import pettingzoo

import tom_envs  # noqa: F401  (registers the tom_envs/ ids)


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
    env = pettingzoo.make("aec", "tom_envs/Hanabi-v0")
    env.reset(seed=0)
    calls = invalid = 0
    returns = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        _, reward, terminated, truncated, _ = env.last()
        returns[agent] += reward
        if terminated or truncated:
            env.step(None)
            continue
        text = env.text_observation(agent)  # .prompt() is what an LLM would be sent
        reply = text_policy(text.observation, list(text.legal_actions.values()))
        calls += 1
        if calls <= 3:
            print(f"{agent}: {reply!r}")
        parsed = env.parse_action(agent, reply)
        if parsed.action is None:  # the feedback goes back to the model, which answers again
            invalid += 1
            if invalid == 1:
                print(f"{agent}: {reply!r} -> feedback {parsed.feedback[:70]!r}...")
            parsed = env.parse_action(agent, "A")
        env.step(parsed.action)
    print(f"{calls} replies, {invalid} unparseable; team score {returns['player_0']:.0f} of 25")


if __name__ == "__main__":
    main()
