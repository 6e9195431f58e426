"""# Iterated matrix games: Rock-Paper-Scissors, Battle of the Sexes, Prisoner's Dilemma

| | |
|---|---|
| Creation | `pettingzoo.make("aec", "tom_envs/RockPaperScissors-v0")` (also `BattleOfSexes-v0`, `PrisonersDilemma-v0`; `"parallel"` too) |
| Agents | `player_0`, `player_1` |
| Action space | `Discrete(3)` for RPS, `Discrete(2)` for IBS and IPD |
| Observation | `Box(0, 1, (1 + W*2*n,), float32)` + `action_mask` `(n,)` int8 |
| State | same layout as the observation, from player_0's side |
| Parallel API | yes |
| Tags | simultaneous, deterministic, perfect information; RPS zero-sum, IBS/IPD general-sum |
| Source | paper 004 (Theory of Mind Benchmarks are Broken for LLMs), Tables 5-7, App. C |

## Description
Two players choose an action at the same time, for T rounds (T = 100 by default, the paper's
horizon), and each round pays both from a fixed table. These are the games the paper uses to
separate *literal* Theory of Mind (predicting the partner's next action) from *functional* Theory of
Mind (adapting one's own play to the partner, measured as regret against the exact optimal
T-step response to the partner's policy).

Payoffs, as (player_0, player_1), rows player_0's action, columns player_1's:

| RPS | a0 | a1 | a2 |
|---|---|---|---|
| a0 | (0, 0) | (-1, +1) | (+1, -1) |
| a1 | (+1, -1) | (0, 0) | (-1, +1) |
| a2 | (-1, +1) | (+1, -1) | (0, 0) |

| IBS | a0 | a1 |   | IPD | a0 (C) | a1 (D) |
|---|---|---|---|---|---|---|
| a0 | (10, 7) | (0, 0) |   | a0 (C) | (8, 8) | (0, 10) |
| a1 | (0, 0) | (7, 10) |   | a1 (D) | (10, 0) | (5, 5) |

## Observation
Egocentric: each past round is (my action, partner's action). The vector is `[t/T]` (if
`include_round`) followed by one-hot pairs for the last W rounds, most recent first; W is `window`
(`None` = the whole horizon, as the paper's prompts show the whole history). With `window=1,
include_round=False` the vector is exactly the last joint action, the state of the paper's RMax.

The text (`env.text_observation(agent)`) follows the paper's repeated-game prompts: the rules with
payoffs in words ("If you choose Option J and the other player chooses Option F, then you win 0
points and the other player wins 0 points."; RPS says "receive a score of +1"), then every round
seen ("In round 3, you chose Option J and the other player chose Option F. Thus, ..."), the
totals, and "Q: Which Option do you choose, Option J or Option F?".

## Actions
Action `k` is "Option <name k>". Name sets (`action_names`), from the paper's App. C:
`letters` (J, F, B; the default), `repeated` (JJJJJJJJJJJJJJJJJJJJJ, ...), `canonical`
(Rock/Paper/Scissors, Fight/Ballet, Cooperate/Defect), `nonsense` (Pasta, Rice, Bread); and
`rps` (R, P, S: the names of the paper's Tables 1-2, Rock, Paper, Scissors only).
The parser accepts "Option J", "J", "I choose Option J", `<action>J</action>` or the list number;
anything else gets feedback naming the legal options.

## Rewards
Each round, each player receives its entry of the payoff table.

## Episode End
Termination after T rounds. `max_cycles` truncates earlier.

## Arguments
`game` (`"rps"`, `"ibs"`, `"ipd"`; set by each registered id), `horizon=100`, `window=None`,
`include_round=True`, `action_names="letters"`, `render_mode=None|"ansi"`, `max_cycles=None`.

## Partner bots
`always_0 … always_{n-1}` (single-action), `tit_for_tat` (the paper's style, Sec. C.3: RPS plays
the best response to the other's last action, IBS copies it, IPD is tit-for-tat; opens with action
0), `random`, `win_stay_lose_shift`, `alternating`, `fictitious_play`. Every partner is a
finite-state policy (`tom_envs.games.matrix.bots`), so the optimal response to it is computed
exactly by dynamic programming (`tom_envs.games.matrix.planner`). Populations: `single_action`
(one always_k drawn per episode, the paper's "single action" partner), `tit_for_tat`, `all`.

## Metrics
Per episode with a finite-state partner: `functional_regret` (ΔFunctional/T), `tom_regret`
(ΔToM/T, when the agent predicts the partner's actions) and `tom_accuracy` (ToM %). See
`tom_envs.games.matrix.planner` for their exact definitions.

## Version History
* v0: initial release.
"""

from __future__ import annotations

from typing import Any

from tom_envs.core.contract import configured_hook, env_functions, lazy_hook
from tom_envs.core.game import GameBundle
from tom_envs.core.params import Param, validate_kwargs
from tom_envs.core.skin import skinnable
from tom_envs.games.matrix.bots import bot_table
from tom_envs.games.matrix.encode import MatrixEncoder
from tom_envs.games.matrix.rules import ACTION_NAME_SETS, PRESETS, MatrixConfig, MatrixGame
from tom_envs.games.matrix.text import MatrixText

#: PettingZoo metadata name of the default configuration (each id's is ``matrix_<game>_v0``).
NAME = "matrix_rps_v0"

#: The game's keyword arguments, their types and bounds (checked by :func:`make_bundle`).
PARAMS = (
    Param("game", "choice", "rps", "which payoff table (set by each registered id)",
          choices=tuple(PRESETS), error="unknown matrix game"),
    Param("horizon", "int", 100, "rounds T", low=1, high=10_000),
    Param("window", "int", None, "past rounds a player sees (none: all)", low=1, high=10_000,
          optional=True),
    Param("include_round", "bool", True, "the vector holds t / T"),
    Param("action_names", "choice", "letters", "the paper's action name sets",
          choices=ACTION_NAME_SETS),
)  # fmt: skip


@skinnable
def make_bundle(**config: Any) -> GameBundle:
    """The configured game with its encoder and text (keyword arguments of :class:`MatrixConfig`)."""
    cfg = MatrixConfig(**validate_kwargs(PARAMS, config))
    return GameBundle(MatrixGame(cfg), MatrixEncoder(cfg), MatrixText(cfg))


raw_env, env, parallel_env = env_functions("matrix_{game}_v0", make_bundle, PARAMS)


#: The metrics function the runner calls after each episode.
episode_metrics_hook = lazy_hook("tom_envs.games.matrix.metrics:trajectory_metrics")


functional_objective = configured_hook(
    make_bundle, f"{__package__}.metrics", "functional_objective"
)


__all__ = ["NAME", "PARAMS", "bot_table", "env", "episode_metrics_hook", "functional_objective",
           "make_bundle", "parallel_env", "raw_env"]  # fmt: skip
