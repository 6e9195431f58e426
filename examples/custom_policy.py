"""Plug your own policy into the suite: a best-responder to the partner's last move.

It reads the structured player view (``turn.view.last_actions``), predicts that the partner
repeats itself (a literal-ToM probe the runner records), and best-responds to that prediction.
The matrix game's metrics then score it exactly against each partner: a good literal ToM does not
make a good functional ToM against every partner.

    python examples/custom_policy.py
"""

from tom_envs import AgentAction, BaseAgent, Turn
from tom_envs.agents import make_agent
from tom_envs.games.matrix.rules import MatrixConfig, payoff_matrix
from tom_envs.registration import game_spec
from tom_envs.runner import run, summarize


class RepeatBestResponder(BaseAgent):
    """Predicts the partner repeats its last action and plays the best reply to it."""

    name = "repeat_best_responder"

    def __init__(self, config: MatrixConfig) -> None:
        super().__init__()
        self.config = config

    def act(self, turn: Turn) -> AgentAction:
        last = turn.view.last_actions
        predicted = 0 if last is None else last[1]
        table = payoff_matrix(self.config, turn.player)  # table[mine, partner's]
        action = int(table[:, predicted].argmax())
        return AgentAction(action, prediction={"partner_action": predicted})


def main() -> None:
    spec = game_spec("RockPaperScissors")
    config = spec.load().make_bundle(**spec.kwargs).game.config
    for partner in ["always_1", "tit_for_tat", "alternating"]:
        agents = [lambda: RepeatBestResponder(config), lambda p=partner: make_agent(p, spec)]
        s = summarize(run(spec, agents, episodes=20))
        print(
            f"vs {partner:<12} return {s['return/player_0'][0]:7.2f}  "
            f"ΔFunctional/T {s['functional_regret'][0]:.3f}  ToM % {s['tom_accuracy'][0]:.1f}"
        )


if __name__ == "__main__":
    main()
