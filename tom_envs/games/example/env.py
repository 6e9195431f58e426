"""# Example: name the same colour

| | |
|---|---|
| Creation | `pettingzoo.make("aec", "tom_envs/Example-v0")` (`"parallel"` too) |
| Agents | `player_0`, `player_1` |
| Action space | `Discrete(3)`: red, green, blue |
| Observation | `Box(0, 1, (7,), float32)` + `action_mask` `(3,)` int8 |
| State | player_0's observation (nothing is hidden) |
| Parallel API | yes |
| Tags | simultaneous, deterministic, perfect information, identical rewards |
| Source | the teaching example of docs/quickstart.md ("Adding a game") |

## Description
The smallest complete game of the suite, written to be read: `tom_envs/games/example/` has the
standard files and nothing else. Each round both players name a colour at the same time; both score
1 when they name the same one. Nothing forces a colour, so scoring means predicting the partner.

## Observation
`[round / rounds, one-hot(my last colour), one-hot(partner's last colour)]` (zeros before the first
round). The text: "Round 2 of 5. Last round you named red and your partner named blue. Matches so
far: 0."

## Actions
Action `k` names colour `k` (`red`, `green`, `blue`); the text parser takes the colour's name.

## Rewards
1 to both players in a round where the colours match, else 0.

## Episode End
Termination after `rounds` rounds. `max_cycles` truncates earlier.

## Arguments
`rounds=5`, `render_mode=None|"ansi"|"rgb_array"|"human"`, `max_cycles=None`.

## Partner bots
`copycat` (names the partner's last colour, red first) and `stubborn` (always red); population
`all`.

## Version History
* v0: initial release.
"""

from __future__ import annotations

from typing import Any

from tom_envs.core.contract import env_functions
from tom_envs.core.game import GameBundle
from tom_envs.core.params import Param, validate_kwargs
from tom_envs.core.skin import skinnable
from tom_envs.games.example.bots import bot_table
from tom_envs.games.example.encode import ExampleEncoder
from tom_envs.games.example.rules import ExampleConfig, ExampleGame
from tom_envs.games.example.text import ExampleText

#: PettingZoo metadata name.
NAME = "example_v0"

#: The game's keyword arguments (the fields of :class:`ExampleConfig`, in order), checked.
PARAMS = (Param("rounds", "int", 5, "rounds per episode", low=1, high=100),)


@skinnable
def make_bundle(**config: Any) -> GameBundle:
    """The configured game with its encoder and text."""
    game = ExampleGame(ExampleConfig(**validate_kwargs(PARAMS, config)))
    return GameBundle(game, ExampleEncoder(game), ExampleText())


raw_env, env, parallel_env = env_functions(NAME, make_bundle)

__all__ = ["NAME", "PARAMS", "bot_table", "env", "make_bundle", "parallel_env", "raw_env"]
