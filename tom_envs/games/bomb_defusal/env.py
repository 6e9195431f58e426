"""# Bomb defusal: search & rescue with chat and Theory-of-Mind probes

| | |
|---|---|
| Creation | `pettingzoo.make("aec", "tom_envs/BombDefusal-v0")` |
| Agents | `player_0`, `player_1`, `player_2` (alpha, bravo, charlie in text) |
| Action space | `Discrete(9)` = n + m + 1 (`Discrete(54)` with `symbolic_messages=True`) |
| Observation | `Box(0, 1, (348,), float32)` + `action_mask` int8 |
| State | `Box(0, 1, (130,), float32)` (the whole mission, for centralised critics) |
| Parallel API | no (sequential turns) |
| Tags | sequential, stochastic, imperfect information, identical interest, chat |
| Source | paper 000 (Theory of Mind for Multi-Agent Collaboration via LLMs), App. A-C, Tables 1-2; specs §1 |

## Description
Three specialists (alpha, bravo, charlie) search a building for colour-coded bombs and defuse
them. Rooms are nodes of a connected graph; each bomb has a sequence of coloured phases and is
defused by applying wire cutters of those colours in order. Each player holds two colours (alpha
red + green, bravo green + blue, charlie blue + red), so most bombs need teamwork. Every round the
players act in turn, alpha → bravo → charlie, and each action takes effect at once. A player sees
only its own room, so the team must explore, tell each other what they found and meet at the
right bombs. The team scores 10 × phases for every defused bomb (90 in all).

The default is the paper's mission, as the original code plays it (specs §1.1-1.4): rooms 0, 3, 5,
6, 8 with hallways 0-3, 0-5, 0-6, 0-8, 3-8, 5-6, 6-8; five bombs, one per room (the rooms are
randomly permuted and given to bombs 1..5); bombs 1-2 have one phase, 3-4 two distinct colours,
bomb 5 all three colours in random order; all players start in the same random room. All chance
comes from `reset(seed)`. Every size can be changed (rooms, random connected maps, bombs, phases,
colours, players, tools), as the paper's limitations ask.

Every player may send a message with each action; teammates read it at their next turn. LLM agents
send free text (`AgentAction.message`, or `env.send_message(agent, text)` before `env.step`); RL
agents use symbolic messages (see Actions). Both are rendered as text and carry *facts* (see
Theory-of-Mind probes), so one env serves mixed teams.

## Observation
Decided by `view.py` alone; the vector (`encode.py`) and the text (`text.py`) are renderings of that
view, so they hold the same information. A player sees: the round, the team score; its room (which
teammates and which active bombs are there; a bomb's sequence is not visible); every teammate's
room (`teammate_locations=True`; with `False` only those in its room, as the original text
observation); the result of its own last action (never teammates' actions); the messages teammates
sent since its previous turn; its first-hand intel (each bomb it inspected or cut: room and
remaining sequence, possibly stale); the map and everyone's tools (public, as in the prompt).

Vector (348 floats, egocentric, teammates by seat offset): my room, round/30, score/90, teammates'
rooms, bombs in my room, teammates in my room, tools, intel per bomb (known, gone, room, remaining
phases one-hot), last result kind, each teammate's latest message (present, symbolic, and the facts
it carries: location, room contents, bomb sequences, tool requests), map adjacency. The layout is
in `tom_envs.games.bomb_defusal.encode`. `env.state()` gives the whole mission (every player, every
bomb's room, remaining sequence and status) for a centralised critic such as MAPPO's.

Text (`env.text_observation(agent)`) follows the original game (App. A-B, specs §1.8): the
task-context prompt of App. A.1, then `Your observation is: Round: 3. Total team score: 20.
Results: You inspected Bomb 4. This bomb is a 2-stage bomb and its remaining sequence is Red-Blue.
Room contents: You are currently in Room 6. Contents of this room include Player bravo, Bomb 4.
Teammate Locations: Player alpha is in Room 6; Player bravo is in Room 6; Player charlie is in Room
0. Communication messages sent by your teammates: Player charlie: "Room 0 has no bomb."`

## Actions
`0` inspect the bomb in my room (legal iff a bomb is here); `1 + i` move to room index `i` (the
`i`-th smallest room id; legal iff adjacent); `1 + n + c` apply colour `c` (legal iff I hold it).
A wrong colour is legal (the sequence is hidden) and is rejected with the original feedback,
changing nothing; so is a tool used where no bomb is. When several bombs share a room, inspect and
tools act on the lowest-numbered active one.

With `symbolic_messages=True` the space is the flattened product (base action × message option):
`action = base * (3 + m) + option`, options `0` no message, `1` share my room (where I am, its
bombs and the intel I have on them), `2` share all my bomb intel, `3 + c` ask for colour `c` in my
room. The message is rendered from the sender's knowledge after its action resolves (so "move +
share my room" reports the room just entered), e.g. `"I am in Room 5. Room 5 contains Bomb 3. Bomb 3
is in Room 5 and its remaining sequence is Red-Green."`. Free text may be sent as well. Every
message option is always legal.

The text parser (`env.parse_action(agent, text)`) reads the paper's reply format `Action selection:
Move to Room 5. Message to Team: "..."` in any case, with any quotes (curly, single, guillemets) or
none, in either order; also the exact action text, `<action>…</action>` or the legal action's list
number. It returns `ParseResult(action, feedback, message)`. An action the rules do not allow now
gets the paper's error feedback (App. B), e.g. `You can not directly move to Room 3 because it is
not adjacent to your current location, Room 5. Consider taking a detour to another room first and
then move to your destination.` The paper consumed the turn with that feedback; here the action is
refused and the LLM layer's invalid-output policy applies (re-ask, or the runner's counted random
fallback). Valid-action % is reported per episode.

## Rewards
Team reward, the same for every player: `10 × phases` when a bomb is defused (the paper's team
reward). Options: `shaping=True` adds the paper's MAPPO shaping (+1 to everyone for each correct
cut, −1 when a bomb explodes); `wrong_tool="explode"` makes a wrong colour destroy the bomb (no
points).

## Episode End
Termination when every bomb is defused (or exploded), or after `max_rounds` rounds (30). The
metrics hook reports `team_score`, `rounds` (the round of the last defusal, or 30), `completed`,
`bombs_defused`, `valid_action_pct` and `messages`; the runner adds probe accuracy per order.

## Arguments
`map="paper"|"random"`, `num_rooms=5`, `extra_edge_prob=0.3`, `map_seed=None` (random maps: fixed
map, or a new map per episode), `bomb_phases=(1, 1, 2, 2, 3)`, `colors=("red", "green", "blue")`,
`agents=("alpha", "bravo", "charlie")`, `num_agents=None`, `tools=None` (player i holds colours i and
i+1), `points_per_phase=10`, `max_rounds=30`, `start_room=None`, `layout="random"|"mturk"` (the
original fixed mission), `wrong_tool="reject"|"explode"`, `shaping=False`, `symbolic_messages=False`,
`teammate_locations=True`, `probes="all"|"one"|"none"`, `intel_in_text=False`,
`probe_timing="action"|"turn"`, `probe_subject="action"|"number"`,
`render_mode=None|"ansi"`, `max_cycles=None`. Lists may be given as comma-separated strings on the
command line (`tools="red+green,green+blue,blue+red"`).

## Theory-of-Mind probes
`env.probes(agent)` returns the paper's questions (App. C) about the player's own last action, with
their truths at this moment. At the paper's timing (`probe_timing="action"`, the default) they
exist only in the state the action left, right after it and before any teammate has had a turn;
the episode driver asks the actor then, and the actor answers from its observation of that same
moment (the result of the action it just took). `probe_timing="turn"` asks at the actor's next
decision instead, with the truths of that later moment (its teammates have read its message and
seen where it went). Ground truth comes from an epistemic tracker (`tom.py`) that records who
observed what, who was told what and who saw whom; it is brought up to date when it is read
(`env.probes`, the ground truth, the QA) from the rules' record of each action, so a training loop
that never asks for probes does not pay for them. `probes="none"` turns the tracker off.

What is asked. After a move: "Do you know the current contents of the room you just moved to?"
(introspection), "Does player bravo know the current contents of the room you just moved to?"
(first order) and "Based on the observation and previous history, is player bravo aware of the fact
that you know the current contents of the room you just moved to?" (second order); after an
inspection (or a wrong tool, which reveals the sequence): "... the sequence of the bomb you just
acted on?"; after a cut that leaves phases: "... the state and remaining sequence of the bomb you
just acted on has been changed?"; after a defusal: "... a bomb phase has just been defused?". The room or bomb is named by the action (`probe_subject=
"action"`, the default), not by its number: a number is a cue a no-reasoning answerer learns
across missions (in the paper's missions a bomb's number fixes its phases, bombs 1-2 one, 3-4 two,
5 three, and the map's room 0 is a hub everyone crosses), and so would be naming the action
(after a wrong tool, applied to a bomb whose sequence a teammate told, teammates know it far more
often than after an inspection); `probe_subject="number"` asks App. C's
wording ("... of room 5?", "... of bomb 3?"), as the paper000 presets do. Each subject gets its
introspection question and both orders about every teammate (`probes="all"`, 5 questions per
action with three players) or about one teammate drawn from the mission and the time
(`probes="one"`, the paper's: 3 per action). If the actor's message announced a room it is not in
(a move it failed to make), the same three questions about the announced room, named by its number,
are asked too (kind `announced_room`: the paper's false-belief case). A message tells a fact when
it carries it: symbolic messages exactly, free text through the documented extractor
`tom.extract_facts`. The exact semantics are in the `tom` module docstring.

What an agent receives. The driver shuffles a step's questions from the episode seed and hands an
agent with `answer_probes(turn, questions)` the question text, the options (`yes`, `no`) and the
subject (`{"target": "bravo"}`, and the room or bomb when the question names its number), never
the truth; `about` (the actor, the action, the
teammate's belief tag, the evidence behind a second-order answer) stays with the truth for
analysis. Nothing is chosen by its answer: every question of a subject is asked.

What the probes measure. Right after a cut or a defusal no teammate has perceived it, so those
first- and second-order questions are always "no": one-sided, they measure nothing at this timing;
introspection needs no partner. Every probe report (`tom_envs.core.probes.probe_table`) prints,
beside raw accuracy, balanced accuracy and Cohen's kappa and two known groups: the partner-blind
answerer (reasons perfectly about the environment and its own knowledge, answers "does bravo know
...?" with "do I know ...?") and the exact model (the tracker); a question type is a ToM measure
only when the first is at chance and the second is not. `tom-envs probes verify` adds a learned
no-reasoning adversary on every team's probes (held-out missions, a fresh seed) and issue #32's
gate; the figures are on `docs/results/paper000_probes.md`.

## Partner bots
`random` (uniform legal actions), `heuristic` (a decentralised team member that explores, shares
its findings in canonical sentences and defuses; a realistic partner for LLM agents), `cbs`
(**privileged**: plays its part of the centralised Conflict-Based Search plan of `tom_envs/games/bomb_defusal/planner.py`,
rebuilt from the episode seed; optimal rounds; it falls back to `heuristic` if partners leave the
plan). Populations: `heuristic`, `all`. `tom_envs.games.bomb_defusal.planner.exhaustive_optimum` gives the fewest rounds
any plan can achieve (breadth-first search over the joint state). Zoo members with other work
splits (issue #35; `bots.py` says why each one's best response differs): `split_even` and
`split_odd` (role splits: alpha cuts its colours only in the even- or odd-index rooms, the others
everything else and never alpha's phases), `heuristic_silent` (`heuristic` without chat) and
`passive` (waits where it starts).

## Version History
* v0: initial release.
"""

from __future__ import annotations

from typing import Any

from tom_envs.core.contract import env_functions, metrics_hooks
from tom_envs.core.game import GameBundle
from tom_envs.core.params import Param, validate_kwargs
from tom_envs.core.skin import skinnable
from tom_envs.games.bomb_defusal.bots import bot_table
from tom_envs.games.bomb_defusal.encode import BombEncoder
from tom_envs.games.bomb_defusal.rules import BombConfig, BombGame
from tom_envs.games.bomb_defusal.text import BombText
from tom_envs.games.bomb_defusal.tom import BombProbes

NAME = "bomb_defusal_v0"


#: The game's keyword arguments, their types and bounds (checked by :func:`make_bundle`).
PARAMS = (
    Param("map", "choice", "paper", "the paper's map or a random connected one",
          choices=("paper", "random")),
    Param("num_rooms", "int", 5, "rooms of a random map", low=2, high=20),
    Param("extra_edge_prob", "float", 0.3, "random maps: chance of each extra hallway",
          low=0.0, high=1.0),
    Param("map_seed", "int", None, "random maps: one fixed map from this seed (none: new per episode)",
          low=0, high=2**32 - 1, optional=True),
    Param("bomb_phases", "int_list", (1, 1, 2, 2, 3), "phases of each bomb", low=1, high=8,
          min_len=1, max_len=12),
    Param("colors", "str_list", ("red", "green", "blue"), "colour names (the tools)", min_len=1,
          max_len=8, item_len=16),
    Param("agents", "str_list", ("alpha", "bravo", "charlie"), "player names, in turn order",
          min_len=1, max_len=16, item_len=16),
    Param("num_agents", "int", None, "team size, NATO names (overrides agents)", low=1, high=16,
          optional=True),
    Param("tools", "str_lists", None, "each player's colours (none: i and i+1)", optional=True,
          max_len=16, item_len=16),
    Param("points_per_phase", "int", 10, "points per phase of a defused bomb", low=1, high=1000),
    Param("max_rounds", "int", 30, "round limit", low=1, high=500),
    Param("start_room", "int", None, "common start room (none: drawn)", low=0, high=1000,
          optional=True),
    Param("layout", "choice", "random", "random missions or the original fixed one",
          choices=("random", "mturk")),
    Param("wrong_tool", "choice", "reject", "what a wrong colour does",
          choices=("reject", "explode")),
    Param("shaping", "bool", False, "the paper's MAPPO reward shaping"),
    Param("symbolic_messages", "bool", False, "pair every action with a symbolic message"),
    Param("teammate_locations", "bool", True, "players see every teammate's room"),
    Param("probes", "choice", "all", "Theory-of-Mind probes after each action",
          choices=("all", "one", "none"), optional=True),
    Param("intel_in_text", "bool", False, "print first-hand bomb intel in the text"),
    Param("probe_timing", "choice", "action", "when probes are asked: right after the action "
          "(the paper's) or at the actor's next turn", choices=("action", "turn")),
    Param("probe_subject", "choice", "action", "how a probe names its room or bomb: by the "
          "action (numbers are cues a no-reasoning answerer learns) or by number (App. C)",
          choices=("action", "number")),
)  # fmt: skip


@skinnable
def make_bundle(**config: Any) -> GameBundle:
    """The configured game, its encoder, text and probes (keyword arguments of :class:`BombConfig`)."""
    cfg = BombConfig(**validate_kwargs(PARAMS, config))
    game = BombGame(cfg)
    probes = None if cfg.probes == "none" else BombProbes(game)
    return GameBundle(game, BombEncoder(cfg), BombText(cfg), probes)


raw_env, env, parallel_env = env_functions(NAME, make_bundle)


#: The metrics function the runner calls after each episode, and the functional objective.
episode_metrics_hook, functional_objective = metrics_hooks(
    make_bundle, episode_metrics="episode_metrics"
)


__all__ = ["NAME", "PARAMS", "bot_table", "env", "episode_metrics_hook", "functional_objective",
           "make_bundle", "parallel_env", "raw_env"]  # fmt: skip
