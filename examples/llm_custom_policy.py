"""Plug in your own LLM policy: a custom prompting piece on top of QA, in a few lines.

``LLMAgent`` plays any game from its text layer; a strategy is a decider (``qa``, ``cot``, ``lm``)
plus pieces. Here a custom piece predicts that the partner repeats its last move, shows the model
that prediction and records it (``prediction["partner_action"]``), so the game's ToM metrics score
it. It runs offline on the bundled SmolLM2-135M when installed; point ``OpenAIClient`` at any
OpenAI-compatible endpoint to use another model.

    python examples/llm_custom_policy.py
"""

from tom_envs.agents import make_agent
from tom_envs.registration import game_spec
from tom_envs.runner import play_episode
from tom_llm_agents import LLMAgent
from tom_llm_agents.local import INSTALL_HINT, LocalServer, local_model_status
from tom_llm_agents.prompting import QA, DecisionContext, Piece


class PartnerRepeats(Piece):
    """Predict that the partner plays its last action again, and tell the model."""

    name = "partner_repeats"

    def prepare(self, ctx: DecisionContext) -> None:
        last = ctx.turn.view.last_actions  # (mine, partner's) in the matrix games' view
        if last is not None:
            ctx.prediction["partner_action"] = last[1]
            guess = ctx.text.legal_actions[last[1]]
            ctx.sections.append(("", f"The other player will probably choose {guess} again."))


def main() -> None:
    ok, why = local_model_status()
    if not ok:
        print(f"The local model is {why}.")
        print(f"Install it to run this example offline:\n    {INSTALL_HINT}")
        print("Or use any endpoint: LLMAgent(OpenAIClient(model=..., base_url=...), ...)")
        return
    spec = game_spec("RockPaperScissors")
    with LocalServer() as server:
        agent = LLMAgent(server.client(), decider=QA(), pieces=[PartnerRepeats()])
        episode = play_episode(
            spec, [agent, make_agent("always_1", spec)], seed=0, env_kwargs={"horizon": 3}
        )
    m = episode.metrics
    print(f"{agent.name} vs always_1, 3 rounds of {spec.name}")
    print(f"return {episode.returns['player_0']:+.0f}, valid actions {agent.valid_action_pct:.0f}%")
    print(f"ToM % {m['tom_accuracy']:.0f}, ΔFunctional/T {m['functional_regret']:.3f}")
    print(f"tokens in/out {m['usage/tokens_in/player_0']:.0f}/{m['usage/tokens_out/player_0']:.0f}")


if __name__ == "__main__":
    main()
