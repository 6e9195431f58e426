"""# Overcooked: two chefs cook and deliver onion soup

| | |
|---|---|
| Creation | `pettingzoo.make("aec", "tom_envs/Overcooked-v0", layout="cramped_room")` (`"parallel"` too) |
| Agents | `player_0` (Alice), `player_1` (Bob) |
| Action space | `Discrete(6)`: north, south, east, west, stay, interact |
| Observation | `Box(0, 20, (W*H*26 + 39 + 6P,), float32)` + `action_mask` `(6,)` int8 (lossless planes + compact features; W, H the grid, P the pots) |
| State | player_0's observation (the game is fully observable) |
| Parallel API | yes |
| Tags | simultaneous, deterministic, perfect information, identical interest |
| Source | paper 002 (LLM-Coordination), App. A, Tables 1 and 4; overcooked-ai 1.1.0 |

## Description
Overcooked-AI (Carroll et al., 2019) as the paper plays it: two chefs share a kitchen and score
together by cooking onion soup. A soup needs three onions from an onion dispenser put into a pot
(the paper's "cooker"); with the paper's dynamics (`cooking="auto"`) the pot starts cooking by
itself when the third onion goes in and the soup is ready 20 steps later. A chef holding a plate
(from a plate dispenser) loads the soup from the pot and places it at a delivery window: 20 points
for both chefs. Episodes last 400 steps. Both chefs act at the same time; interactions are
resolved first (player_0 before player_1), then movement (two chefs who would end on the same
cell, or swap cells, both stay put), then cooking.

The five layouts of the paper are packaged with overcooked-ai 1.1.0's exact grids, as readable
ASCII files (`tom_envs/games/overcooked/layouts/*.txt`): `cramped_room`, `asymmetric_advantages`,
`coordination_ring`, `forced_coordination`, `counter_circuit` (overcooked-ai's
`counter_circuit_o_1order`, the one-order version the paper uses). Any other kitchen loads from a
file of the same format: `layout="path/to/kitchen.txt"`. The rules are step for step those of
overcooked-ai, checked by replaying the same joint actions in overcooked-ai 1.1.0
(`tests/games/overcooked/test_parity.py`, `docs/results/overcooked.md`).

`cooking="interact"` switches to overcooked-ai 1.1.0's own rule: an empty-handed chef must
interact with a pot to start it, and a soup of fewer than three onions is worth nothing.

## Observation
The vector (`observation="both"`, the default) is two named pieces (`bundle.encoder.split(obs)`):

* `planes`: overcooked-ai's `lossless_state_encoding` for the observing chef, value for value,
  flattened from its `(W, H, 26)` array (my cell, partner's cell, both facings, terrain, onions
  in pots and soups, cook time remaining, soup done, plates, onions, urgency). A CNN trained on
  overcooked-ai's encoding reads it unchanged.
* `features`: a compact egocentric vector in [0, 1]: each chef's cell, facing, held item, walking
  distances to the nearest dispensers, window, every pot and items on counters; every pot's
  onions, cooking, ready and time left; the partner's offset; counter totals; time. See
  `tom_envs.games.overcooked.encode`.

`observation="lossless"` or `"features"` keeps one piece. `state()` is player_0's vector.

The text (`env.text_observation(agent)`) follows the paper's App. A: the game description and the
layout (its shape, places and, in forced coordination, which partition each chef is in and what it
can reach); the inventories of both chefs; for each chef the distance in steps to every onion
dispenser (o0...), plate dispenser (p0...), cooker (c0...), delivery window (d0...) and shared
counter (s0...) and to the closest empty kitchen counter, with "blocked by Bob" / "inaccessible";
every cooker ("c0 contains 2 out of 3 onions. c0 is off. Soup in c0 is not started."); the
counters; the time and score; and both chefs' cells and facing.

## Actions
Primitive actions, overcooked-ai's order: 0 north ("move up"), 1 south ("move down"), 2 east
("move right"), 3 west ("move left"), 4 stay, 5 interact. Moving towards a non-floor cell only
turns the chef. Every action is always legal. The text parser also accepts "up", "north", "go up",
"wait", the list number and `<action>...</action>`.

**Mid-level actions** (the paper's agent interface) are a wrapper anyone can use:
`tom_envs.games.overcooked.midlevel` lists the actions available now ("pick up onion from o0",
"place onion in c0", "pick up plate from p0", "load soup on plate from c0", "place soup for
delivery in d0", "place onion on s1", "place onion on k12", "pick up onion from s0", "wait",
"move away", and "start cooking c0" with `cooking="interact"`), grounds the chosen one into moves
by shortest paths, and asks again when it completes or becomes impossible. `MidLevelAgent(inner,
config)` turns any chooser into an agent of this env: a scripted bot, a planner, an LLM
(`tom_llm_agents.overcooked:MidLevelLLMAgent`, the paper's setup: its prompt is the App.
A text ending in "Available Actions: [...]"), or a person at the terminal
(`tom_envs.games.overcooked.midlevel:MidLevelHumanAgent`).

## Rewards
Each delivered three-onion soup gives `delivery_reward` (20) to both chefs at the step it is
delivered; nothing else is rewarded.

## Episode End
Termination after `horizon` (400) steps. `max_cycles` truncates earlier.

## Arguments
`layout="cramped_room"` (or a layout file path), `horizon=400`, `cook_time=20`,
`delivery_reward=20`, `cooking="auto"|"interact"`, `random_start=False` (start cells drawn from the
reset seed), `observation="both"|"lossless"|"features"`, `names=("Alice", "Bob")`,
`render_mode=None|"ansi"`, `max_cycles=None`.

## Partner bots
All bots decide with mid-level actions through the same grounding as LLM agents.
`greedy` (nearest useful subtask, aware of what the partner holds), `role_onions` and
`role_dishes` (a role-based pair: one fetches onions and fills pots, the other handles plates and
soups; each takes over the other's part only where the partner cannot reach it, as in forced
coordination), `planner` (a model-based planner: 20-step rollouts of every mid-level option with
the exact rules, both chefs continuing greedily, a partner seen idle modelled as idle), `stay`
(never moves). Populations: `scripted` (greedy,
role_onions, role_dishes, planner), `roles`. Self-play scores per layout, beside the paper's
Table 1, are in `docs/results/overcooked.md`.

## Metrics
`score` (points delivered), `soups`, and `mid_level_choices/<agent>` (how often a mid-level agent
chose an action: the LLM calls of an LLM chef).

## Version History
* v0: initial release (overcooked-ai 1.1.0 rules; paper 002 text and mid-level actions).
"""

from __future__ import annotations

from typing import Any

from tom_envs.core.contract import env_functions, metrics_hooks, noop_hook
from tom_envs.core.game import GameBundle
from tom_envs.core.params import Param, validate_kwargs
from tom_envs.core.skin import skinnable
from tom_envs.games.overcooked.bots import bot_table
from tom_envs.games.overcooked.encode import OvercookedEncoder
from tom_envs.games.overcooked.layout import LAYOUT_NAMES
from tom_envs.games.overcooked.rules import COOKING_RULES, Action, OvercookedConfig, OvercookedGame
from tom_envs.games.overcooked.text import OvercookedText

NAME = "overcooked_v0"


#: The game's keyword arguments, their types and bounds (checked by :func:`make_bundle`). Over
#: HTTP (``tom-envs serve``) a layout is accepted by name only; Python and the CLI may give a path.
PARAMS = (
    Param("layout", "str", "cramped_room", "a shipped layout name, or a layout .txt path",
          max_len=500, http_choices=LAYOUT_NAMES),
    Param("horizon", "int", 400, "timesteps per episode", low=1, high=10_000),
    Param("cook_time", "int", 20, "timesteps a full pot cooks", low=1, high=1000),
    Param("delivery_reward", "float", 20.0, "reward per delivered soup", low=-1000, high=1000),
    Param("cooking", "choice", "auto", "how a full pot starts cooking", choices=COOKING_RULES),
    Param("random_start", "bool", False, "start cells drawn from the reset seed"),
    Param("observation", "choice", "both", "vector observation kind",
          choices=("both", "lossless", "features")),
    Param("names", "str_list", ("Alice", "Bob"), "the two chefs' names", min_len=2, max_len=2,
          item_len=24),
)  # fmt: skip


@skinnable
def make_bundle(**config: Any) -> GameBundle:
    """The configured game with its encoder and text (keyword arguments of
    :class:`~tom_envs.games.overcooked.rules.OvercookedConfig`)."""
    cfg = OvercookedConfig(**validate_kwargs(PARAMS, config))
    return GameBundle(OvercookedGame(cfg), OvercookedEncoder(cfg), OvercookedText(cfg))


raw_env, env, parallel_env = env_functions(NAME, make_bundle)

#: The move that loses a turn (an illegal answer under the bench's ``forfeit`` protocol).
noop_action = noop_hook(int(Action.STAY), "stay")


#: The metrics function the runner calls after each episode, and the functional objective.
episode_metrics_hook, functional_objective = metrics_hooks(make_bundle)


__all__ = ["NAME", "PARAMS", "bot_table", "env", "episode_metrics_hook", "functional_objective",
           "make_bundle", "noop_action", "parallel_env", "raw_env"]  # fmt: skip
