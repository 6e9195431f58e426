"""A tiny turn-based cooperative game for the RL baseline tests (not registered in GAMES).

Each round player_0 names a number in {0, 1, 2}, then player_1 names one. When player_1 has moved,
both players receive ``[a == 0] + [b == a]``: player_0's reward arrives only after its partner's
move, which exercises reward accumulation between a seat's decisions. Best return: 2 per round;
uniformly random play: 2/3 per round.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tom_envs.core.contract import BotTable, env_functions
from tom_envs.core.game import (
    SEQUENTIAL,
    Encoder,
    Game,
    GameBundle,
    GameTags,
    StepResult,
    TextInterface,
)
from tom_envs.registration import GameSpec

ROUNDS = 4
NAME = "turns_v0"
PARAMS = ()


@dataclass(frozen=True)
class State:
    round: int = 0
    said: int | None = None  # player_0's number this round, once said


@dataclass(frozen=True)
class View:
    player: int
    round: int
    said: int | None
    legal_actions: tuple[int, ...]


class TurnGame(Game[State, View]):
    name = "turns"
    num_players = 2
    num_actions = 3
    tags = GameTags(SEQUENTIAL, "deterministic", "perfect", "identical")
    max_steps = 2 * ROUNDS

    def initial_state(self, rng: np.random.Generator) -> State:
        return State()

    def current_players(self, state: State) -> tuple[int, ...]:
        return () if self.is_terminal(state) else ((0,) if state.said is None else (1,))

    def legal_actions(self, state: State, player: int) -> tuple[int, ...]:
        return (0, 1, 2) if player in self.current_players(state) else ()

    def apply(self, state, actions, rng, messages=None) -> StepResult[State]:
        if state.said is None:
            return StepResult(State(state.round, actions[0]), (0.0, 0.0))
        r = float(state.said == 0) + float(actions[1] == state.said)
        return StepResult(State(state.round + 1, None), (r, r))

    def is_terminal(self, state: State) -> bool:
        return state.round >= ROUNDS

    def observe(self, state: State, player: int) -> View:
        return View(player, state.round, state.said, self.legal_actions(state, player))


class TurnEncoder(Encoder[View, State]):
    observation_shape = (5,)
    state_shape = (5,)

    def encode(self, view: View) -> np.ndarray:
        out = np.zeros(5, np.float32)
        out[0] = view.player
        if view.said is not None:
            out[1 + view.said] = 1.0
        out[4] = view.round / ROUNDS
        return out

    def encode_state(self, state: State) -> np.ndarray:
        return self.encode(View(int(state.said is not None), state.round, state.said, ()))


class TurnText(TextInterface[View]):
    def rules_prompt(self, view: View) -> str:
        return "Say 0, then match."

    def observation_text(self, view: View) -> str:
        return f"round {view.round}, said {view.said}"

    def action_text(self, view: View, action: int) -> str:
        return str(action)


def make_bundle(**_: object) -> GameBundle:
    return GameBundle(TurnGame(), TurnEncoder(), TurnText())


raw_env, env, parallel_env = env_functions(NAME, make_bundle)


def bot_table(**_: object) -> BotTable:
    return BotTable((), game="Turns")


SPEC = GameSpec(name="Turns", module=__name__)
