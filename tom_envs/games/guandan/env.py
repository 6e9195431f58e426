"""# Guandan (掼蛋): four players, two teams, two decks, wild cards

| | |
|---|---|
| Creation | `pettingzoo.make("aec", "tom_envs/Guandan-v0")` (`match=True` for a whole match, `language="zh"` for Chinese text) |
| Agents | `player_0` … `player_3`; teams `player_0`+`player_2` and `player_1`+`player_3` |
| Action space | `Discrete(280)`: pass, 54 give-card actions, 225 play shapes (type + key) |
| Observation | `Box(0, 2, (526,), float32)` + `action_mask` `(280,)` int8 |
| State | `Box(0, 2, (525,), float32)`: every hand and the table |
| Parallel API | no (sequential) |
| Tags | sequential, stochastic, imperfect information, zero-sum between teams |
| Source | paper 001 (Yim et al., Guandan with LLM agents); rules as in competition code (specs §4) |

## Description
Guandan is the four-player climbing card game of the paper "Evaluating and enhancing LLMs agent
based on Theory of Mind in Guandan". Teammates sit opposite each other; two 54-card decks are dealt
27 cards each. The leader of a trick plays any combination (single, pair, trips, full house,
straight, tube = three consecutive pairs, plate = two consecutive trips); the others beat it with a
higher combination of the same type or a bomb (4-10 of a kind, straight flush, joker bomb), or
pass; when everyone else has passed the last player leads again, and if that player has gone out
its teammate leads (wind-follow). Each team has a level (2..A): a deal is played at the winners'
level, whose rank ranks above A, and whose two hearts are wild cards that stand for any non-joker
card. From the second deal the losers pay tribute (their highest card; none if they hold both big
jokers) and receive a card of rank 10 or lower back. The team of the first player out wins the
deal and goes up +3 / +2 / +1 levels as the teammate finished 2nd / 3rd / 4th; a team at A passes
A (wins the match) by winning a deal at its own A with 1st+2nd or 1st+3rd. Rule variants where
implementations differ are arguments (below); `tom_envs/games/guandan/combos.py` lists every
semantic choice.

## Observation
Egocentric (relative seats: me, next, partner, previous). The vector is DanZero's 513-entry state
(own hand, 12 wild-card flags, unseen cards, the play to beat, the partner's last play, the cards
played by each other player, one-hot card counts left, the three levels) plus 13 context entries
(phase, leading, level team, who is out, who owns the table): see `encode.py`. The text
(`env.text_observation(agent)`) has the paper's rule template (general rules; card types that cannot
/ can beat other types, with examples; single and whole win/loss rules) in English or Chinese, then
the levels and wild cards, the hand, the cards left, tribute, the recent moves
(`history_window`), the play to beat and the numbered legal actions. Other hands are never shown;
plays, passes, tribute and returned cards are public.

## Actions
A fixed catalogue (`combos.py`): 0 = pass; 1..54 = give card kind `k - 1` (tribute and return);
55..279 = play a *shape*, a combination named by its type and key: singles, pairs, trips, full
houses (by the trips), straights, tubes, plates (by the top card), straight flushes (suit and top
card), bombs (rank and 4..10 cards), the joker bomb, plus the lone wild card and the wild pair. The
engine chooses the cards: natural cards before wild cards, the suits that keep straight-flush
chances, the full house's pair by a fixed preference (all documented in `combos.py`). A shape is
legal exactly when some play of it is, wild-card substitutions included, so the mask is exact;
the generator is cross-checked against an independent brute-force enumerator (`bruteforce.py`;
`python benchmarks/guandan.py legal`: 10,000 positions, and its generation rate). Legal
actions are listed in catalogue order. Text actions look like `Straight 3-7: ♠3 ♦4 ♣6 ♦7 ♥2*`
(the cards the engine would play, wild cards starred); the parser accepts the text, the number in
the list, `pass`/`过`/`不出`, or the cards (`♠3 ♦4 ♥2 ♣6 ♦7`, `S3 D4 H2 C6 D7`, `黑桃3 ...`).
Design note: a candidate list would let a player pick every suit and wild placement but has no
fixed size (up to ~1,000 plays in a 27-card hand with two wilds); a catalogue of every
wild/suit variant has 2,000+ entries. Type + key keeps PettingZoo's `Discrete` + `action_mask`
contract with 280 actions and short action lists for LLMs (the paper's concern, §4.1).

## Rewards
At the end of a deal the winners get +3 / +2 / +1 and the losers as much negative (DanZero's
table). In a match with `match_reward="win"`, deals pay 0 and the match end pays ±1 (0 for a draw).

## Episode End
One deal by default: it ends when both players of a team, or three players, are out. With
`match=True`, deals continue (tribute included) until a team passes A or `max_deals` deals are
played (a draw).

## Arguments
`match=False`, `start_levels=(0, 0)` (rank indices, 0 = "2", 12 = "A"), `level_team=0`,
`previous_order=None` (a previous finishing order: the first deal then starts with tribute),
`tribute=True`, `anti_tribute=True`, `single_down_payer="losing_team_last"|"last_place"`,
`pass_a="first_second_or_third"|"first_second"`, `a_fail_limit=None`, `max_deals=100`,
`match_reward="deal"|"win"`, `language="en"|"zh"`, `history_window=16`, `render_mode=None|"ansi"`,
`max_cycles=None`.

## Partner bots
`random` (the paper's random strategy), `bestp_lowv` (the paper's 'bestP_lowV': best pattern
priority, then fewest wilds, then lowest value), `heuristic` (a stronger rule-based player after
the competition agents: hand decomposition, low singles first, no overtaking the teammate, bombs
when an opponent is close to going out), `recommender` (plays the top action of the action
recommender). The recommender tool itself is `tom_envs.games.guandan.recommender.recommend(view,
k=5, language="zh")`: every legal action scored, the top k returned with their text, as the paper's
LLM agent uses it; the env module's `action_recommender(view)` hook (scores of every legal action)
is what `llm_agents`' ToM planning (`strategy=tom1|tom2`) shortlists with. The paper scores with
DanZero's Q-network, whose weights are not public; ours is a documented hand evaluation
(`recommender.py`). Two teammate conventions for the functional-ToM zoo (issue #35): `leader`
(the recommender's scores without its teammate terms: it overtakes its teammate's play) and
`supporter` (leads its lowest single and never beats its teammate, so the teammate can go out
first). Measured on selection seeds, `heuristic` stays a best response to both within one deal's
noise (docs/results/guandan_conventions.md). Two signalling conventions and their openers (round
8): `signal_pair` / `signal_single` play like `heuristic` until their teammate's first free lead of
the deal (a play with nothing to beat, recovered from the public history); if it was a pair / a
single they keep cooperating, otherwise they withdraw for the rest of the deal (pass whenever they
may, lead as `heuristic` when they must); `pair_opener` / `single_opener` play like `heuristic`
except that their own first free lead is their weakest pair / a single (the matching signal).
Measured on selection seeds, a mismatched focal loses about 1 level per deal to a signal member
(2.2 for a pair opener with `signal_single`). Populations: `rule_based` (bestp_lowv, heuristic),
`all`.

## Metrics
Per episode: `team0_win` (1 if seats 0/2 won the last deal or the match), `team0_return`.

## Version History
* v0: initial release.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tom_envs.core.action_classes import ActionClasses
from tom_envs.core.agents import Agent
from tom_envs.core.contract import env_functions, noop_hook
from tom_envs.core.functional import FunctionalObjective, focal_return
from tom_envs.core.game import GameBundle
from tom_envs.core.params import Param, validate_kwargs
from tom_envs.core.skin import skinnable
from tom_envs.games.guandan.bots import bot_table
from tom_envs.games.guandan.combos import PASS
from tom_envs.games.guandan.encode import GuandanEncoder
from tom_envs.games.guandan.rules import GuandanConfig, GuandanGame
from tom_envs.games.guandan.text import GuandanText

NAME = "guandan_v0"

#: The game's keyword arguments, their types and bounds (checked by :func:`make_bundle`).
PARAMS = (
    Param("match", "bool", False, "play a match of deals instead of one deal"),
    Param("start_levels", "int_list", (0, 0), "each team's level (rank index, 0 = 2, 12 = A)",
          low=0, high=12, min_len=2, max_len=2),
    Param("level_team", "int", 0, "the team whose level is played first", low=0, high=1),
    Param("previous_order", "int_list", None, "a previous finishing order (tribute first)",
          optional=True, low=0, high=3, min_len=4, max_len=4),
    Param("tribute", "bool", True, "tribute between deals"),
    Param("anti_tribute", "bool", True, "two big jokers refuse the tribute"),
    Param("single_down_payer", "choice", "losing_team_last", "who pays a single-down tribute",
          choices=("losing_team_last", "last_place")),
    Param("pass_a", "choice", "first_second_or_third", "finishes that pass level A",
          choices=("first_second_or_third", "first_second")),
    Param("a_fail_limit", "int", None, "failed attempts at A before a reset (none: no limit)",
          low=1, high=100, optional=True),
    Param("max_deals", "int", 100, "deal limit of a match", low=1, high=1000),
    Param("match_reward", "choice", "deal", "reward per deal or for the match",
          choices=("deal", "win")),
    Param("language", "choice", "en", "text language", choices=("en", "zh")),
    Param("history_window", "int", 16, "past moves in the text", low=0, high=1000),
)  # fmt: skip


@skinnable
def make_bundle(**config: Any) -> GameBundle:
    """The configured game with its encoder and text (keyword arguments of GuandanConfig)."""
    cfg = GuandanConfig(**validate_kwargs(PARAMS, config))
    return GameBundle(GuandanGame(cfg), GuandanEncoder(cfg), GuandanText(cfg))


raw_env, env, parallel_env = env_functions(NAME, make_bundle)

#: The move that loses a turn (an illegal answer under the bench's ``forfeit`` protocol).
noop_action = noop_hook(PASS, "pass: not legal when leading a trick or in the tribute exchange")


def action_recommender(view: Any) -> dict[int, float]:
    """The action recommender as the LLM agents' tool hook: a score for every legal action of
    ``view`` (higher is better); :func:`tom_envs.games.guandan.recommender.recommend` gives the
    top k with their text."""
    from tom_envs.games.guandan.recommender import score_actions

    return score_actions(view)


def trajectory_metrics(
    bundle: GameBundle, episode: Any, agents: Sequence[Agent]
) -> dict[str, float]:
    """Whether team 0 (seats 0 and 2) won, and its return."""
    r = float(episode.returns.get("player_0", 0.0))
    return {"team0_win": float(r > 0), "team0_return": r}


def episode_metrics_hook() -> Callable[..., dict[str, float]]:
    """The metrics function the runner calls after each episode."""
    return trajectory_metrics


def functional_objective(**config: Any) -> FunctionalObjective:
    """The game's functional objective ``U`` (:mod:`tom_envs.core.functional`): the focal team's
    deal reward (+-1..+-3; a match sums its deals), the return; T = ``max_steps``. The focal
    seats must be teammates (one team's return)."""
    game = make_bundle(**config).game
    return FunctionalObjective("the team's deal reward", "levels", _team_return, game.max_steps)


def _team_return(episode: Any, focal: Sequence[int]) -> float:
    if len({seat % 2 for seat in focal}) != 1:
        raise ValueError(f"Guandan focal seats {list(focal)} are not one team (0, 2 or 1, 3)")
    return focal_return(episode, focal)


#: The coarse classes of a Guandan action (next-action questions): pass, a tribute or return
#: card, and each type of play.
GUANDAN_CLASSES = ("pass", "give a card (tribute or return)", "single", "pair", "triple",
                   "full house", "straight", "tube", "plate", "straight flush", "bomb",
                   "joker bomb")  # fmt: skip


def action_classes(**config: Any) -> ActionClasses:
    """The coarse classes of an action (:mod:`tom_envs.core.action_classes`), for next-action
    questions: :data:`GUANDAN_CLASSES` (a play's class is its combination type)."""
    make_bundle(**config)  # validates the configuration
    return ActionClasses(GUANDAN_CLASSES, _action_class, "kind of move")


def _action_class(action: int) -> int:
    from tom_envs.games.guandan.combos import PASS, SHAPE_BASE, shape_of

    if action == PASS:
        return 0
    if action < SHAPE_BASE:
        return 1
    return 2 + int(shape_of(action).type)


__all__ = ["GUANDAN_CLASSES", "NAME", "PARAMS", "action_classes", "action_recommender",
           "bot_table", "env", "episode_metrics_hook", "functional_objective", "make_bundle",
           "noop_action", "parallel_env", "raw_env"]  # fmt: skip
