"""# CollabCapture ("Catch the Thief"): two pursuers, two doors, one greedy thief

| | |
|---|---|
| Creation | `pettingzoo.make("aec", "tom_envs/CollabCapture-v0", scenario="door12_closed")` (`"parallel"` too) |
| Agents | `player_0` (Alice), `player_1` (Bob) |
| Action space | `Discrete(11)`: 0 stay, 1-9 move to room r, 10 press the button here |
| Observation | `Box(0, 1, (31,), float32)` + `action_mask` `(11,)` int8 |
| State | same layout as the observation, from Alice's side |
| Parallel API | yes |
| Tags | simultaneous, deterministic, perfect information, identical payoff |
| Source | paper 002 (LLM-Coordination, Agashe et al.), §3.1, App. D-E, Table 2; the authors' code (specs §2.1) |

## Description
Alice and Bob chase a thief through nine rooms. Two passages have doors: the door between rooms 1
and 2 is toggled by a button in room 9, the door between rooms 3 and 4 by a button in room 8; a
closed door blocks its passage both ways. Both agents choose at the same time; the thief, who sees
where they are about to go, then flees greedily. The team wants the capture in as few turns as
possible (30 at most).

```
 1 --door-- 2 --- 3 --door-- 4        buttons: room 9 toggles door 1-2,
 |                           |                 room 8 toggles door 3-4
 6 ------------------------- 5 --- 7 --- 8
 |
 9
```

Rules as coded by the authors (facts in `../shared/specs/games.md` §2.1):

* Passages, in listed order (the order of the options and of the thief's tie-breaking):
  1:[2,6] 2:[1,3] 3:[2,4] 4:[3,5] 5:[4,6,7] 6:[5,9,1] 7:[5,8] 8:[7] 9:[6].
* Turn order: both agents choose from the same state; the thief plans from the agents' *planned*
  next rooms and the doors at the start of the turn; then button presses toggle doors, and Alice,
  Bob and the thief move. Every move was checked against the doors at the start of the turn: a door
  closed this turn blocks from the next turn on. Two presses of one button in a turn cancel.
* The thief always moves (he stays only if no door out of his room is open) to the open neighbour
  maximising min(|room - Alice's next room|, |room - Bob's next room|) (room-number difference, as
  coded; `thief_distance="graph"` uses shortest paths instead), the first in listed order on ties.
* Capture: after the moves the thief shares a room with an agent, or an agent and the thief swapped
  rooms across a passage (`swap_capture=False` keeps same-room capture only, as the authors'
  greedy-agent loop did).

Scenarios (`scenario=`). App. E.1 builds four scenarios from the door states of one layout and
names three challenges: pincer the thief, enable a teammate by opening a door instead of chasing,
disable the thief by closing a door. At the coded starts (Alice 1, Bob 6, thief 2) the four door
states do not realise them all: two are solved in one turn by a swap and none needs a door
closed. So the four door states keep the coded starts, and three challenge scenarios (ours) start
where the challenge is required (`starts=` and `doors_open=` override any of them):

| scenario | door 1-2 | door 3-4 | Alice, Bob, thief | what it asks of the team | optimal turns | no press | opening only | closing only | Alice frozen | Bob frozen |
|---|---|---|---|---|---|---|---|---|---|---|
| `both_open` | open | open | 1, 6, 2 | nothing: Alice swaps with the thief | 1 | 1 | 1 | 1 | 3 | 1 |
| `door12_closed` (default) | closed | open | 1, 6, 2 | the authors' LLM benchmark: Bob chases through 5, 4, 3 while Alice holds room 1; no button | 3 | 3 | 3 | 3 | 3 | 5 |
| `door34_closed` | open | closed | 1, 6, 2 | the authors' greedy-agent run: Alice swaps with the thief | 1 | 1 | 1 | 1 | 2 | 1 |
| `both_closed` | closed | closed | 1, 6, 2 | enable at the coded starts: Bob opens door 1-2 (button in room 9) for Alice | 3 | - | 3 | - | 6 | 6 |
| `pincer` | open | open | 5, 7, 4 | pincer: both close in on the corridor 1-2-3 from its two ends | 3 | 3 | 3 | 3 | 5 | 4 |
| `enable` | closed | open | 1, 9, 2 | enable: Bob presses in room 9 to open door 1-2 for Alice instead of chasing | 3 | 5 | 3 | 5 | 5 | 5 |
| `disable` | closed | open | 6, 8, 3 | disable: Bob closes door 3-4 (button in room 8) behind the thief | 3 | 4 | 4 | 3 | 4 | 4 |

The turn columns are the exact joint planner's (`tom_envs/games/joint_planner.py`) fewest turns to
the capture, with every move, then without a mechanism: no button press, only presses that open a
door, only presses that close one, Alice or Bob frozen in place ("-": no capture is possible).
Each challenge is strictly worse without its mechanism and without either agent
(`tests/games/collab_capture/test_scenarios.py`). The starts of `pincer`, `enable` and `disable`
are ours, found by searching every start with the planner; the released code has only the coded
starts.

## Observation
Fully observable, as in the paper. The vector (egocentric): one-hot my room, my partner's room, the
thief's room (9 each), the two door flags, turn / max_turns, and a captured flag.

The text (`env.text_observation(agent)`) follows the authors' prompt: the rules (capture, full
visibility, simultaneous moves, greedy thief, doors and buttons, equal-length paths, the turn
limit), the layout ("Room 1 directly connects to Room 2 and Room 6."), the doors, the answer format
("Analysis: ... Action: ..."); then the state: "I Alice am in room 1. Bob is in room 6. Thief is in
room 2. Door between room 1 and room 2 is closed. Door between room 3 and room 4 is open." and the
lettered options ("A. Stay in current room.", "B. Move to room 6.").

## Actions
Action 0 "Stay in current room", action r (1-9) "Move to room r" (open neighbours only), action 10
"Press button in room r" (rooms 8 and 9 only). The parser accepts the option letter ("B", "B. Move
to room 6."), the option text, or short forms ("room 6", "6", "move to 6", "stay", "press"), after
an `Action:` marker or inside `<action>...</action>`; anything else gets feedback listing the
options.

## Rewards
1 to both agents on the capture, 0 otherwise.

## Episode End
Termination at the capture or after `max_turns` turns (30). `max_cycles` truncates earlier.

## Arguments
`scenario="door12_closed"`, `doors_open=None`, `starts=None`, `max_turns=30`, `swap_capture=True`,
`thief_distance="room_number"`, `render_mode=None|"ansi"`, `max_cycles=None`.

## Partner bots
`greedy` (the paper's greedy baseline as we read it: a shortest-path step toward the thief, never a
button; the authors' greedy class is not in the released code), `optimal` (its part of the optimal
joint action; predicts its partner's), and three conventions that split the work differently
(issue #35; exact references through the planner): `lazy` (always stays: the focal must catch the
thief alone), `guard` (walks to the hub, room 5, and holds it), `opener` (opens the first closed
door by its button, then chases like `greedy`). Populations: `all`, `conventions`.

## Theory-of-Mind probes and metrics
Probes (`env.probes(agent)`, answered by agents with `answer_probes`): "What action does my partner
Bob intend to take this turn?" with the partner's options; the truth is the partner's part of the
optimal joint plan, asked only when that part is unique. Episode metrics (against the exact
planner): `captured`, `turns`, `optimal_turns`, `turn_regret`, `functional_regret`, and per seat
`br_regret/player_i`, `tom_accuracy/player_i`, `tom_regret/player_i` (when the agent predicts its
partner's moves). See `tom_envs/games/collab_capture/metrics.py`.

## Version History
* v0: initial release.
"""

from __future__ import annotations

from typing import Any

from tom_envs.core.contract import env_functions, metrics_hooks, noop_hook
from tom_envs.core.game import GameBundle
from tom_envs.core.params import Param, validate_kwargs
from tom_envs.core.skin import skinnable
from tom_envs.games.collab_capture.bots import bot_table
from tom_envs.games.collab_capture.encode import CaptureEncoder
from tom_envs.games.collab_capture.rules import (
    DOORS,
    ROOMS,
    SCENARIOS,
    Action,
    CaptureConfig,
    CaptureGame,
)
from tom_envs.games.collab_capture.text import CaptureText
from tom_envs.games.joint_planner import next_action_probes

NAME = "collab_capture_v0"


#: The game's keyword arguments, their types and bounds (checked by :func:`make_bundle`).
PARAMS = (
    Param("scenario", "choice", "door12_closed", "the paper's scenario", choices=tuple(SCENARIOS)),
    Param("doors_open", "bool_list", None, "override the scenario's doors", optional=True,
          min_len=len(DOORS), max_len=len(DOORS)),
    Param("starts", "int_list", None, "override the start rooms (player 0, player 1, thief)",
          optional=True, low=min(ROOMS), high=max(ROOMS), min_len=3, max_len=3),
    Param("max_turns", "int", 30, "turn limit", low=1, high=200),
    Param("swap_capture", "bool", True, "a swap of rooms with the thief captures it"),
    Param("thief_distance", "choice", "room_number", "how the thief measures distance",
          choices=("room_number", "graph")),
)  # fmt: skip


@skinnable
def make_bundle(**config: Any) -> GameBundle:
    """The configured game with its encoder, text and ToM probes (kwargs of :class:`CaptureConfig`)."""

    game = CaptureGame(CaptureConfig(**validate_kwargs(PARAMS, config)))
    text = CaptureText(game.config)
    return GameBundle(game, CaptureEncoder(game), text, next_action_probes(game, text))


raw_env, env, parallel_env = env_functions(NAME, make_bundle)

#: The move that loses a turn (an illegal answer under the bench's ``forfeit`` protocol).
noop_action = noop_hook(int(Action.STAY), "stay in my room")


#: The metrics function the runner calls after each episode, and the functional objective.
episode_metrics_hook, functional_objective = metrics_hooks(make_bundle)


__all__ = ["NAME", "PARAMS", "bot_table", "env", "episode_metrics_hook", "functional_objective",
           "make_bundle", "noop_action", "parallel_env", "raw_env"]  # fmt: skip
