"""# CoBlock: collaborative 3D blocks world with private goals, inventories and chat

| | |
|---|---|
| Creation | `pettingzoo.make("aec", "tom_envs/CoBlock-v0")` (also `"parallel"`) |
| Agents | `player_0`, `player_1` |
| Action space | `Discrete(3 + 7·X·Y·Z)` = `Discrete(1263)` on the default 6×5×6 grid |
| Observation | `Box(0, 1, (2·6·X·Y·Z + 19,), float32)` = `(2179,)` + `action_mask` `(1263,)` int8 |
| State | world, both goals, both inventories, round, ended flags: `(3·6·X·Y·Z + 15,)` = `(3255,)` |
| Parallel API | yes |
| Tags | simultaneous, stochastic (task drawn at reset), imperfect information, identical interest, chat |
| Source | paper 003 (Wu et al., "Your Co-Workers Matter"), §2-4, App. A-B; specs/games.md §3 |

## Description
Two agents build a target structure together in a blocks world (integer 3D grid, `y` up, ground
`y = 0`). Each has a private **goal**, a part of the target, and a private **inventory** of
coloured blocks (six colours); the target is the union of the goals. They must talk to find out who
needs what. A block can be placed in an empty cell when the agent holds that colour and the cell is
on the ground or face-adjacent to a block (the gravity rule of the original code: adjacency, not
support). Every round both agents choose one action at the same time; the actions are applied one
after the other (player_0 first in even rounds, player_1 first in odd rounds) and the round
advances. An action that the partner's earlier action made impossible fails with the original
code's message and changes nothing.

Tasks come in the paper's three types (§2.2): **independent** (each can build its own goal alone),
**skill-dependent** (someone lacks a colour of its own goal: the partner must place those blocks)
and **goal-dependent** (a goal rests on the partner's goal, so the partner must build first; and
someone lacks a colour too). They are composed of the five base structures of App. A.1: symbol
(a letter), bridge, arch, tower and rectangle. The built-in sets hold 24 tasks per type
(`tom_envs/games/coblock/data/*.json`: 4 hand-made after the paper's figures, 20 from the
generator); `generated=True` draws a fresh task from the generator (`tasks.generate_task`: a
depth-first composition of structures, kept only when a joint plan found by the planner completes
it).

## Observation
The view (`view.py`) holds my goal, my inventory, the world, the dialogue, both agents' recent
actions and results, who ended the task and the round. The partner's goal and inventory are never
in it: they are for the agent to infer (the paper's partner-state modelling).

The vector (`encode.py`) is: world one-hot per colour and cell, my goal one-hot per colour and
cell, my inventory (/30), round/max_rounds, my last action's result, the partner's last action
kind and result, whether the partner just sent a message, and the ended flags. Chat text has no
vector form.

The text (`env.text_observation(agent)`) is the paper's XML world state (App. B.1):
`<Motives><VisualMotive>` (description + `<block block_type="red", pos=(0, 0, 2)>` list of my goal),
`<World>`, `<Inventory>`, `<Dialogue>`, `<ActionHistory>`, `<ComparisonResult>` with
`<MissingBlocks>` and `<ExtraBlocks>` (the built structure against my goal: the self-reflection
check of §3) and `<LastActionResponse>`. `text_format="plain"` renders the same facts as
sentences, `"both"` gives both.

## Actions
`0` wait, `1` send_message, `2` end_task, `3 + c·N + cell` place a block of colour `c`,
`3 + 6·N + cell` break the block in `cell` (`N = X·Y·Z`, cell `(x·Y + y)·Z + z`; see
`rules.encode_action` / `decode_action`). Legal: wait, send and end always; placing every held
colour in every free placeable cell; breaking every block. The text commands are the paper's:
`place_block(block_type="red", pos=(0, 0, 1))`, `break_block(pos=(3, 1, 3))`,
`send_message(message="...")`, `wait()`, `end_task()`. The parser takes the first command (in an
`<action>` tag or after `Action:` if present) or plain phrases ("place a red block at (1, 0, 2)",
"say: hi"), and refuses impossible ones with the original messages ("Block exists", "Block with
type red not found in inventory", "Block position (x, y, z) is not either on the ground or
adjacent to any existing block.").

Chat goes through the core message channel: `env.send_message(agent, text)` before stepping
send_message (AEC), `step(actions, messages)` (Parallel), or `AgentAction(1, message=...)` for
agents. send_message without text fails and sends nothing; text sent with another action is not
delivered (one action per round, as in the paper) unless `chat_with_actions=True`.

## Rewards
Identical for both agents. `reward="sparse"` (default): +1 when the target is complete, else 0.
`reward="progress"`: every round, the change in the share of target blocks in place.

## Episode End
Termination when every target block is in place with its colour (extra blocks are not checked,
as in the original code), when an agent calls end_task (`end_rule="either"`, the paper;
`"all"`: once both have, as the original code, an agent that has ended can only wait), or after
`max_rounds` rounds (default 60).

## Arguments
`task_type="all"` (`"independent"`, `"skill_dependent"`, `"goal_dependent"`), `task_index=None`
(fixed task of the set), `generated=False`, `task=None` (inject a `tasks.Task`),
`grid=(6, 5, 6)` (x, y up, z: room for the paper's arches, pillars of 4 and a top, on a small
ground; the paper's figures show about 10×10, but every cell costs 7 actions, so the built-in tasks
are laid out on 6×6), `max_rounds=60`, `end_rule="either"`, `chat_with_actions=False`,
`reward="sparse"`, `text_format="xml"`, `history_window=10`, `dialogue_window=None`,
`max_inventory=30`, `render_mode=None|"ansi"`, `max_cycles=None`.

## Partner bots
Bots talk in a small readable protocol ("Hi! My goal: red (1, 0, 1), .... My inventory: red 7."
and "Please place: yellow (4, 0, 4)."). `cooperative`: discloses its goal and inventory, then
follows the joint plan both partners compute from the two disclosures (the paper's Alg. 1), places
what it is asked for, takes over or asks when the partner stalls and repairs wrong blocks; two of
them complete every built-in task with γ = 0.5. Personas for functional ToM: `helper`
(helper-only: builds the partner's goal, never its own unless asked), `egoist` (builds only its
own goal and asks for what it lacks), `passive` (never starts; answers and does what it is asked)
and `error_prone` (cooperative, 1 placement in 5 wrong, never repairs its own). Every persona
also exists in the *mirror convention* B (`mirror`, `mirror_helper`, `mirror_egoist`,
`mirror_passive`, `mirror_error_prone`): its own message format ("Building: (1, 0, 1) red.
Holding: 7 red." and "Your blocks: (4, 0, 4) yellow.") and the mirrored plan (each takes the
partner's goal first among the shared colours). A bot reads only its own convention's messages,
so across conventions the blocks only one agent can place on the other's goal stay unplaced: the
best response to a B member is a B member (the zoo's two conventions, issue #35). Populations:
`personas` (the four), `mirror` (the five B personas), `all`.

## Probes
Theory-of-Mind probes (`env.probes(agent)`, scored by the runner for agents with
`answer_probes`): the partner's goal (does it include a tower/bridge/... : 5 yes/no), its
inventory (does it still have red/...: 6 yes/no) and its next sub-structure (one of the part
labels, or "nothing"), with ground truth from the state (`probes.py`).

## Metrics
Per episode (`metrics.py`): `success`, `timesteps` (rounds), `actions` (non-wait actions),
`progress`, `gamma` (workload balance γ, Eq. 2-3, with the optimal counts of Alg. 1),
`build_actions/player_k`, `optimal_blocks/player_k`. Report per task type:
`tom-envs reproduce paper003` (docs/results/coblock.md).

## Picture
`tom_envs.games.coblock.picture` draws the world (and, faintly, the blocks still missing) as an
isometric 3D PNG with matplotlib (optional; imported only when called):
`python -m tom_envs.games.coblock.picture --task goal_dependent:0 --out task.png`.

## Version History
* v0: initial release.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from tom_envs.core.contract import env_functions, metrics_hooks, noop_hook
from tom_envs.core.game import GameBundle
from tom_envs.core.params import Param, validate_kwargs
from tom_envs.core.skin import skinnable
from tom_envs.games.coblock.bots import bot_table
from tom_envs.games.coblock.encode import CoBlockEncoder
from tom_envs.games.coblock.probes import make_probes
from tom_envs.games.coblock.rules import (
    END_RULES,
    REWARDS,
    TASK_CHOICES,
    TEXT_FORMATS,
    ActionKind,
    CoBlockConfig,
    CoBlockGame,
)
from tom_envs.games.coblock.tasks import Task
from tom_envs.games.coblock.text import CoBlockText

NAME = "coblock_v0"


#: The game's keyword arguments, their types and bounds (checked by :func:`make_bundle`).
PARAMS = (
    Param("task_type", "choice", "all", "the built-in task set", choices=TASK_CHOICES),
    Param("task_index", "int", None, "play this task of the set (none: drawn)", low=0, high=1000,
          optional=True),
    Param("generated", "bool", False, "a freshly generated task per episode"),
    Param("task", "object", None, "inject a tasks.Task (Python only)", optional=True,
          instance_of=(Task,)),
    Param("grid", "int_list", (6, 5, 6), "(X, Y up, Z) cells", low=1, high=12, min_len=3,
          max_len=3),
    Param("max_rounds", "int", 60, "round limit", low=1, high=500),
    Param("end_rule", "choice", "either", "who ends the episode", choices=END_RULES),
    Param("chat_with_actions", "bool", False, "deliver text sent with any action"),
    Param("reward", "choice", "sparse", "reward scheme", choices=REWARDS),
    Param("text_format", "choice", "xml", "observation text format", choices=TEXT_FORMATS),
    Param("history_window", "int", 10, "past actions in the text (none: all)", low=0, high=1000,
          optional=True),
    Param("dialogue_window", "int", None, "past messages in the text (none: all)", low=0,
          high=1000, optional=True),
    Param("max_inventory", "int", 30, "inventory count where the vector saturates", low=1,
          high=1000),
)  # fmt: skip


@skinnable
def make_bundle(**config: Any) -> GameBundle:
    """The configured game with its encoder, text and probes (keywords of :class:`CoBlockConfig`)."""
    cfg = CoBlockConfig(**validate_kwargs(PARAMS, config))
    game = CoBlockGame(cfg)
    return GameBundle(game, CoBlockEncoder(cfg), CoBlockText(cfg), partial(make_probes, game))


raw_env, env, parallel_env = env_functions(NAME, make_bundle)

#: The move that loses a turn (an illegal answer under the bench's ``forfeit`` protocol).
noop_action = noop_hook(int(ActionKind.WAIT), "wait")


#: The metrics function the runner calls after each episode, and the configured hooks.
episode_metrics_hook, functional_objective, action_classes = metrics_hooks(
    make_bundle, ("functional_objective", "action_classes")
)


__all__ = ["NAME", "PARAMS", "action_classes", "bot_table", "env", "episode_metrics_hook",
           "functional_objective", "make_bundle", "noop_action", "parallel_env", "raw_env"]  # fmt: skip
