r"""# CollabEscape: repair two generators and escape a killer

| | |
|---|---|
| Creation | `pettingzoo.make("aec", "tom_envs/CollabEscape-v0", scenario="together")` (`"parallel"` too) |
| Agents | `player_0` (Alice), `player_1` (Bob) |
| Action space | `Discrete(12)`: 0 wait, 1-10 move to room r, 11 fix the generator here |
| Observation | `Box(0, 1, (46,), float32)` + `action_mask` `(12,)` int8 |
| State | same layout as the observation, from Alice's side |
| Parallel API | yes |
| Tags | simultaneous, stochastic (the roaming killer), perfect information, identical payoff |
| Source | paper 002 (LLM-Coordination, Agashe et al.), §3.1, App. D-E, Table 2; the authors' code (specs §2.2) |

## Description
Alice and Bob must repair the generators in rooms 1 and 6, which opens the exit gate in room 7; the
team wins as soon as one of them is in room 7 with the gate open, and loses if the killer catches
either. Both players and the killer move at the same time.

Rules as coded by the authors (facts in `../shared/specs/games.md` §2.2):

* Passages, in listed order (the order of the options), as coded:
  1:[2,10] 2:[1,3] 3:[2,4,8] 4:[3,5] 5:[4,6] 6:[5,7] 7:[3,6] 8:[3,7,9] 9:[8,10] 10:[1,9].
  **Two are one-way in the code**: 7 -> 3 and 8 -> 7 exist, 3 -> 7 and 7 -> 8 do not. The authors'
  prompt described a two-way map instead ("room 7 is connected to room 6 and 8"), with no 7-3
  passage. `map="coded"` (default) plays the code and tells the players exactly that, one-way
  passages included; `map="prompt"` plays the prompt's symmetric map (7:[6,8]).

```
 1 (gen) -- 2 -- 3 -- 4 -- 5
 |               |  ^      |
 10              |   \     |          --> and ^ : one-way in the coded map
 |               |    \    |          (8 -> 7 and 7 -> 3); the prompt's map
 9 ------------- 8 --> 7 -- 6 (gen)    has 7 - 8 two-way and no 7 - 3
                    (gate)
```

* A generator is repaired at 2 fixes. At every turn each unrepaired generator in whose room nobody
  chose "fix" loses its progress, so repairing takes fixes on two consecutive turns (by either
  player: Alice then Bob counts), or both players fixing in the same turn.
* The killer decides at the start of the turn: if a player's room is one step away (along his
  out-passages) he moves to that player's *current* room (both in sight: he keeps his target if he
  saw both last turn, else switches to the one newly in sight, else chases Alice); otherwise he
  moves to a uniformly random neighbour. He never stays.
* After the moves: caught (the killer shares a room with a player; no swap rule) is checked first,
  then escape (gate open and a player in room 7). A player waiting in room 7 escapes the moment the
  second generator is repaired.
* The code has no turn limit; we stop after `max_turns=30` (as CollabCapture) unless
  `max_turns=None`.

Scenarios (`scenario=`), App. E.2's two starts:

| scenario | Alice | Bob | killer | what it asks of the team |
|---|---|---|---|---|
| `together` (default) | 1 | 2 | 6 | the authors' coded start: repair generator 1 together, then get past the killer to generator 6 |
| `split` | 1 | 5 | 6 | Bob starts in the killer's sight: lure him away while Alice repairs. **Ours**: the second start is not in the released code |

## Observation
Fully observable, as in the paper: every room and the killer, with the authors' "intel" on the
killer (where he is, and either "he will certainly move to the room where Bob is" or "he is unaware
of our current location"), and whom he saw when he last decided (it settles whom he chases when
both are in sight). The vector (egocentric): one-hot my room, partner's room, killer's room (10
each), the killer's intent (3) and memory (5), each generator's progress, gate open, my and my
partner's last action was a fix, turn / max_turns, escaped, caught.

The text follows the authors' prompt ("In the game Collab Escape, we must cooperate with each other
to repair generators and escape the map. ...", with the map in use) and state description: "My name
is Alice. I am in room 1. Bob is in room 2. We have information that the killer is currently
located in room 6. We don't know which room the killer will move to next, but we do know that he is
unaware of our current location. Number of fixes still needed by the generator in room 1 is 2. ...
The exit gate is closed." then the lettered options ("A. Move to room 2.").

## Actions
Action r (1-10) "Move to room r" (out-passages of my room), action 11 "Fix generator in room r"
(rooms 1 and 6, while unrepaired; the code also offered it after the repair, when it does nothing),
action 0 "Wait". The parser accepts the option letter, the option text or short forms ("room 3",
"3", "fix", "wait"), after an `Action:` marker or inside `<action>...</action>`.

## Rewards
1 to both players on the escape, 0 otherwise (so expected return = escape probability).

## Episode End
Termination at the escape, at a capture, or after `max_turns` turns (30; `None`: no limit, as coded).
`max_cycles` truncates earlier.

## Arguments
`scenario="together"`, `map="coded"|"prompt"`, `starts=None`, `max_turns=30`, `fixes_needed=2`,
`render_mode=None|"ansi"`, `max_cycles=None`.

## Partner bots
`greedy` (the paper's greedy baseline as we read it: repair the nearest generator, then run for the
gate, ignoring the killer; no greedy agent is in the released code), `optimal` (its part of the
optimal joint action, exact over the killer's random moves; predicts its partner's), and three
conventions that split the work differently (issue #35; exact references through the planner):
`lazy` (always waits: no focal can escape alone), `far_first` (repairs generator 6 before
generator 1), `split` (repairs generator 6 only, then goes to the gate). Populations: `all`,
`conventions`.

## Theory-of-Mind probes and metrics
Probes (`env.probes(agent)`): "What action does my partner Bob intend to take this turn?" with the
partner's options; the truth is the partner's part of the optimal joint plan, asked only when that
part is unique. Episode metrics (against the exact planner): `escaped`, `caught`, `turns`,
`optimal_escape`, `functional_regret` (= optimal escape probability - escaped), and per seat
`br_regret/player_i`, `tom_accuracy/player_i`, `tom_regret/player_i`. See
`tom_envs/games/collab_escape/metrics.py`.

## Version History
* v0: initial release.
"""

from __future__ import annotations

from typing import Any

from tom_envs.core.contract import env_functions, metrics_hooks, noop_hook
from tom_envs.core.game import GameBundle
from tom_envs.core.params import Param, validate_kwargs
from tom_envs.core.skin import skinnable
from tom_envs.games.collab_escape.bots import bot_table
from tom_envs.games.collab_escape.encode import EscapeEncoder
from tom_envs.games.collab_escape.rules import (
    MAPS,
    ROOMS,
    SCENARIOS,
    Action,
    EscapeConfig,
    EscapeGame,
)
from tom_envs.games.collab_escape.text import EscapeText
from tom_envs.games.joint_planner import next_action_probes

NAME = "collab_escape_v0"


#: The game's keyword arguments, their types and bounds (checked by :func:`make_bundle`).
PARAMS = (
    Param("scenario", "choice", "together", "the paper's scenario", choices=tuple(SCENARIOS)),
    Param("map", "choice", "coded", "the released code's maze or the prompt's", choices=tuple(MAPS)),
    Param("starts", "int_list", None, "override the start rooms (player 0, player 1, killer)",
          optional=True, low=min(ROOMS), high=max(ROOMS), min_len=3, max_len=3),
    Param("max_turns", "int", 30, "turn limit (none: no limit)", low=1, high=200, optional=True),
    Param("fixes_needed", "int", 2, "fixes to repair a generator", low=1, high=10),
)  # fmt: skip


@skinnable
def make_bundle(**config: Any) -> GameBundle:
    """The configured game with its encoder, text and ToM probes (kwargs of :class:`EscapeConfig`)."""

    game = EscapeGame(EscapeConfig(**validate_kwargs(PARAMS, config)))
    text = EscapeText(game.config)
    return GameBundle(game, EscapeEncoder(game), text, next_action_probes(game, text))


raw_env, env, parallel_env = env_functions(NAME, make_bundle)

#: The move that loses a turn (an illegal answer under the bench's ``forfeit`` protocol).
noop_action = noop_hook(int(Action.WAIT), "wait in my room")


#: The metrics function the runner calls after each episode, and the functional objective.
episode_metrics_hook, functional_objective = metrics_hooks(make_bundle)


__all__ = ["NAME", "PARAMS", "bot_table", "env", "episode_metrics_hook", "functional_objective",
           "make_bundle", "noop_action", "parallel_env", "raw_env"]  # fmt: skip
