"""# Hanabi (2-5 players), with exact card knowledge and ToM probes

| | |
|---|---|
| Creation | `pettingzoo.make("aec", "tom_envs/Hanabi-v0")` (`players=3` etc. as kwargs) |
| Agents | `player_0` … `player_{N-1}` (2-5) |
| Action space | `Discrete(2H + (N-1)*10)`: `Discrete(20)` for two players (HLE's move ids) |
| Observation | `Box(0, 1, (658,), float32)` for two players (HLE's canonical encoding) + `action_mask` |
| State | player 0's observation + player 0's own hand + the seat to act (`(785,)` for two players) |
| Parallel API | no (players move in turn) |
| Tags | sequential, stochastic (the shuffle), imperfect information, fully cooperative |
| Source | paper 002 (LLM-Coordination), App. B, C.1-C.4, Tables 3 and 5; DeepMind's Hanabi Learning Environment |

## Description
Hanabi is a cooperative card game: the players build five colour stacks from 1 to 5 while seeing
every hand but their own. On a turn a player plays a card (it scores if it continues its stack; if
not, a life is lost), discards a card (regaining a reveal token; not allowed while all 8 are
available), or spends a token to reveal to another player all their cards of one colour or one rank.
The deck has 50 cards (per colour three 1s, two 2s, two 3s, two 4s, one 5); hands hold 5 cards with
2-3 players and 4 with 4-5; there are 8 reveal tokens and 3 lives; completing a stack regains a
token. The rules are exactly those of DeepMind's Hanabi Learning Environment (HLE), which is what the
paper ran, and games replay move for move there and in OpenSpiel (`benchmarks/peers/hanabi_peer.py`
and `tests/games/hanabi/test_parity.py`).

**Card knowledge** is tracked exactly as HLE does: for every card of every hand, the colours and ranks
still plausible after the reveals (positive and negative), and whether its colour / rank was revealed.
It is public, so a player's view holds everyone's, and the **ToM probes** ask the player to act
about it: *literal* ToM is knowing what each partner knows about each of their cards
("Does Bob know the rank of his Card 2?", "... that his Card 2 can be played now?"), with ground truth
from the tracking (`env.probes(agent)`, `probes="partner"|"all"|"none"`); *functional* ToM is the
score reached with that partner (the cross-play table).

**These probes are not a validated ToM measure.** The learned no-reasoning adversary of
`tom-envs probes verify --game Hanabi` beats chance on them from the question's surface alone (the
card's slot and how many questions were asked: older cards have had more reveals): partner colour
up to 64% and partner rank up to 63% balanced accuracy against chance 50%, so the gate fails
([docs/results/hanabi_probes.md](../results/hanabi_probes.md)). Report Hanabi probe accuracy only
beside that adversary's score; the bomb-defusal probes pass the same gate.

## Observation
The vector is HLE's canonical encoding, bit for bit (658 floats for two players): the other players'
hands, the board (deck size, stacks, tokens, lives), the discard pile, the last move, and the card
knowledge of every hand, egocentric (me first, then the next players). `tom_envs.games.hanabi.encode`
documents each section (`pieces(config)`).

The text (`env.text_observation(agent)`) is the paper's App. B: the rules of B.1 (word for word for
the full game) followed by "I am Alice, playing the card game Hanabi with my partner Bob.", and the
state description of B.2:

```
It is currently My (Alice) turn.
Current Stacks:
Red - Red 0, Yellow - Yellow 0, Green - Green 0, White - White 0, Blue - Blue 0
My cards based on my knowledge:
Card 0 could be: [Red, Yellow, Green, White, Blue] [1, 2, 3, 4, 5]
...
I can see Bobs Cards are:
[Card 0: Red 3]
...
Bobs Knowledge about his cards:
Bob believes his Card 0 could be: [Red, Yellow, Green, White, Blue] [1, 2, 3, 4, 5]
...
Remaining Reveal Tokens: 8
Remaining Lives: 3
Deck Size: 40
The discard pile is: []
My Action History: []
The next playable cards for each stack are:
Only Red 1 can be played on Red Stack
...
```

Added to B.2: each partner's last action with its outcome ("Bobs Last Action: Reveal Alices Rank 1
Cards (touching my Card 0 and Card 3)"), which the paper's ToM step is given, and the turns left once
the deck is empty. Seats are named Alice, Bob, Cathy, Donald, Emily (`names=`).

## Actions
Action ids are HLE's and OpenSpiel's: `0..H-1` discard card i, `H..2H-1` play card i, then reveal
colour c to the player at offset o (`2H + (o-1)*5 + c`), then reveal rank r to offset o. Card 0 is the
oldest card; a drawn card goes to the end. As text, the legal actions are lettered in the paper's
order (colour reveals, rank reveals, plays, discards): `A. Reveal Bobs Yellow color cards`,
`F. Reveal Bobs rank 4 cards`, `G. Play my Card 0`, `L. Discard my Card 0`. The parser accepts the
full text, the letter (`G`, `G.`, `(G)`, `Action: G`), the text without the letter, the list number
and free forms (`play card 0`, `discard my first card`, `hint Bob red`, `tell Bob about his 1s`); an
illegal request gets the reason ("no reveal tokens left", "Bob has no Red cards").

## Rewards
Every player receives the change of the score after each move: +1 for a card added to a stack; on
losing the last life, minus the score so far (the paper's rule: "0 points no matter how many cards
have been placed"). With `bomb_score="stacks"` the stacks reached count instead. An episode's return
is its final score, 0 to 25.

## Episode End
Termination when the last life is lost, when all five stacks are complete (25), or after every
player has had one more turn once the last card was drawn. No truncation by default (`max_cycles`).

## Arguments
`players=2` (2-5), `colors=5`, `ranks=5`, `hand_size=None` (5, or 4 with 4-5 players),
`max_information_tokens=8`, `max_life_tokens=3`, `bomb_score="zero"|"stacks"`,
`names=("Alice", "Bob", "Cathy", "Donald", "Emily")`, `probes="partner"|"all"|"none"`,
`render_mode=None|"ansi"`, `max_cycles=None`.

## Partner bots
`random` (uniformly random legal moves); `simple` (plays a card its reveals prove playable, else
reveals a playable card a partner does not know about, else discards its oldest unrevealed card);
`convention` (Arthur O'Dwyer's SmartBot conventions, re-implemented over the view: play clues on the
newest touched card, warnings on the next player's next discard, discard finesse). Two-player
self-play over 1,000 seeds: `convention` 23.0 (28% perfect games, no bomb-out), `simple` 17.5,
`random` 0. Score distributions, 3-5 players and the cross-play table are in
`docs/results/hanabi.md` (`tom-envs reproduce hanabi`). Populations: `all`,
`scripted` (`simple`, `convention`).

## Metrics
Per episode (replayed from the seed): `score`, `stacks`, `bombed`, `lives_lost`, `perfect`, `plays`,
`misplays`, `discards`, `reveals`, `moves`; probe accuracy per kind and order when the agent answers
probes.

## Version History
* v0: initial release.
"""

from __future__ import annotations

from typing import Any

from tom_envs.core.contract import configured_hook, env_functions, lazy_hook
from tom_envs.core.game import GameBundle
from tom_envs.core.params import Param, validate_kwargs
from tom_envs.core.skin import skinnable
from tom_envs.games.hanabi.bots import bot_table
from tom_envs.games.hanabi.encode import HanabiEncoder
from tom_envs.games.hanabi.probes import HanabiProbes
from tom_envs.games.hanabi.rules import HanabiConfig, HanabiGame
from tom_envs.games.hanabi.state import BOMB_SCORES
from tom_envs.games.hanabi.text import HanabiText

#: PettingZoo metadata name of the default configuration (``hanabi_<players>p_v0``).
NAME = "hanabi_2p_v0"

#: The game's keyword arguments, their types and bounds (checked by :func:`make_bundle`).
PARAMS = (
    Param("players", "int", 2, "players", low=2, high=5),
    Param("colors", "int", 5, "colours (suits)", low=1, high=5),
    Param("ranks", "int", 5, "ranks per colour", low=1, high=5),
    Param("hand_size", "int", None, "cards per hand (none: 5, or 4 with 4-5 players)", low=1,
          high=8, optional=True),
    Param("max_information_tokens", "int", 8, "information (clue) tokens", low=1, high=64),
    Param("max_life_tokens", "int", 3, "life tokens", low=1, high=64),
    Param("bomb_score", "choice", "zero", "the score when the last life is lost",
          choices=BOMB_SCORES),
    Param("names", "str_list", ("Alice", "Bob", "Cathy", "Donald", "Emily"),
          "player names in the text, in seat order", min_len=2, max_len=5, item_len=24),
    Param("probes", "choice", "partner", "card-knowledge probes",
          choices=("partner", "all", "none"), optional=True),
)  # fmt: skip


@skinnable
def make_bundle(**config: Any) -> GameBundle:
    """The configured game with its encoder, text and probes (kwargs of :class:`HanabiConfig`)."""
    cfg = HanabiConfig(**validate_kwargs(PARAMS, config))
    game = HanabiGame(cfg)
    text = HanabiText(cfg)
    return GameBundle(game, HanabiEncoder(cfg, game), text, probes=HanabiProbes(game, text))


raw_env, env, parallel_env = env_functions("hanabi_{players}p_v0", make_bundle, PARAMS)


#: The metrics function the runner calls after each episode.
episode_metrics_hook = lazy_hook("tom_envs.games.hanabi.metrics:trajectory_metrics")


functional_objective = configured_hook(
    make_bundle, f"{__package__}.metrics", "functional_objective"
)
action_classes = configured_hook(make_bundle, f"{__package__}.metrics", "action_classes")


__all__ = ["NAME", "PARAMS", "action_classes", "bot_table", "env", "episode_metrics_hook",
           "functional_objective", "make_bundle", "parallel_env", "raw_env"]  # fmt: skip
