"""Natural-language rendering of a matrix-game view, after the paper's prompts (App. C).

The wording follows the repeated-game prompts the paper builds on: payoffs in words ("If you choose
Option J and the other player chooses Option F, then you win 0 points and the other player wins 0
points."), then the history round by round, then the current round and the question. For
Rock-Paper-Scissors the paper says "receive a score of +1/0/-1" instead of "win N points", to keep
negative payoffs natural; so do we.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from tom_envs.core.game import ParseResult, SeatRulesText
from tom_envs.core.skin import LETTER_POOL, NONSENSE_POOL, Symbols
from tom_envs.core.text import match_action
from tom_envs.games.matrix.rules import MatrixConfig, MatrixState, action_names, payoff
from tom_envs.games.matrix.view import MatrixView


def _signed(x: float) -> str:
    v = int(x) if float(x).is_integer() else x
    return f"+{v}" if x > 0 else f"{v}"


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


class MatrixText(SeatRulesText[MatrixView]):
    """Text for one player, from its view."""

    def __init__(self, config: MatrixConfig) -> None:
        self.config = config
        self.names = action_names(config)
        self.score_words = config.preset.points_word == "score"
        self._sentence: dict[tuple[int, int, int], str] = {}
        self._rules: dict[int, str] = {}
        #: the order the rules and the question list the actions in (a skin's, else 0, 1, ...)
        self.order: tuple[int, ...] = tuple(range(config.num_actions))

    def option(self, action: int) -> str:
        """``"Option J"`` for action 0 with the letters name set."""
        return f"Option {self.names[action]}"

    def _outcome(self, future: bool, mine: float, theirs: float) -> str:
        if self.score_words:
            verb = ("receive", "receives") if future else ("received", "received")
            return (
                f"you {verb[0]} a score of {_signed(mine)} and the other player {verb[1]} a score "
                f"of {_signed(theirs)}"
            )
        verb = ("win", "wins") if future else ("won", "won")
        return f"you {verb[0]} {_num(mine)} points and the other player {verb[1]} {_num(theirs)} points"

    def _round_sentence(self, p: int, mine: int, other: int) -> str:
        r_me = payoff(self.config, p, mine, other)
        r_other = payoff(self.config, 1 - p, other, mine)
        return (
            f"you chose {self.option(mine)} and the other player chose {self.option(other)}. "
            f"Thus, {self._outcome(False, r_me, r_other)}."
        )

    def _rules_text(self, view: MatrixView) -> str:
        """Game description and payoffs, from ``view.player``'s side."""
        player = view.player
        n = self.config.num_actions
        opts = [self.option(a) for a in self.order]
        choice = ", ".join(opts[:-1]) + f" and {opts[-1]}" if n > 2 else " and ".join(opts)
        lines = [
            "You are playing a game repeatedly with another player. In this game, you can choose "
            f"between {choice}. You will play {self.config.horizon} rounds in total with the same "
            "player. The rules of the game are as follows:"
        ]
        p, q = player, 1 - player
        for a in self.order:
            for b in self.order:
                mine = payoff(self.config, p, a, b)
                theirs = payoff(self.config, q, b, a)
                lines.append(
                    f"If you choose {self.option(a)} and the other player chooses "
                    f"{self.option(b)}, then "
                    f"{self._outcome(True, mine, theirs)}."
                )
        return "\n".join(lines)

    def observation_text(self, view: MatrixView) -> str:
        """History round by round, the totals, then the current round's question."""
        lines = []
        if view.first_round > 1:
            lines.append(f"(Rounds 1 to {view.first_round - 1} are not shown.)")
        p = view.player
        first = view.first_round
        sentence = self._sentence
        for i, (mine, other) in enumerate(view.history):
            key = (p, mine, other)
            tail = sentence.get(key)
            if tail is None:
                tail = sentence[key] = self._round_sentence(p, mine, other)
            lines.append(f"In round {first + i}, {tail}")
        unit = "" if self.score_words else " points"
        lines.append(
            f"Total so far: you {_num(view.my_score)}{unit}, the other player "
            f"{_num(view.partner_score)}{unit}."
        )
        if view.legal_actions:
            legal = set(view.legal_actions)
            opts = [self.option(a) for a in self.order if a in legal]
            lines.append(f"You are currently playing round {view.round + 1}.")
            lines.append(f"Q: Which Option do you choose, {', '.join(opts[:-1])} or {opts[-1]}?")
        else:
            lines.append(f"The game is over after {view.horizon} rounds.")
        return "\n".join(lines)

    def action_text(self, view: MatrixView, action: int) -> str:
        """``"Option J"``."""
        return self.option(action)

    def parse_action(self, view: MatrixView, text: str) -> ParseResult:
        """Accepts "Option J", "J", "I choose Option J", "<action>J</action>", or the list number.

        A bare name is read as a whole word (:func:`~tom_envs.core.text.named_options`): never
        inside another word, nor as a contraction's or possessive's tail ("What's", "Let's",
        "player's" name no Option S), and a one-letter name only in its own case (the "s" of
        prose is not Option S)."""
        full = self.legal_actions_text(view)
        result = match_action(text, full)
        if result.valid or not isinstance(text, str):
            return result
        bare = {a: self.names[a] for a in view.legal_actions}
        letters = all(len(n) == 1 for n in bare.values())
        second = match_action(text, bare, case_sensitive=letters)
        if second.action is not None:
            return ParseResult(second.action, f"understood: {full[second.action]}")
        if second.feedback.startswith("ambiguous") and not result.feedback.startswith("ambiguous"):
            return second  # "J or F" names two actions: say so, not "could not match"
        return result

    def skin_order(self, order: Callable[[Iterable[int]], list[int]]) -> None:
        """List the actions in a skin's order (``skin=``): the rules' list and payoff table and
        the question, as the legal list is."""
        self.order = tuple(order(range(self.config.num_actions)))
        self._rules.clear()

    def skin_symbols(self) -> tuple[Symbols, ...]:
        """What a skin renames (``skin=``, :mod:`tom_envs.core.skin`): the action names, onto
        letters (one-letter names, in their case), letters repeated as often (``"repeated"``) or
        nonsense words (word names)."""
        names = tuple(self.names)
        if all(len(n) == 1 for n in names):
            return (Symbols("action", names, LETTER_POOL, case_sensitive=True),)
        if all(len(set(n)) == 1 for n in names):
            pool = tuple(c * len(names[0]) for c in LETTER_POOL)
            return (Symbols("action", names, pool, case_sensitive=True),)
        return (Symbols("action", names, tuple(w.capitalize() for w in NONSENSE_POOL)),)

    def render_state(self, state: MatrixState) -> str:
        """A spectator's line per round: both choices and rewards."""
        lines = [f"{self.config.preset.title}, round {state.round}/{self.config.horizon}"]
        for i, (a, b) in enumerate(state.history[-10:]):
            r = state.round - min(10, len(state.history)) + i + 1
            lines.append(
                f"  round {r}: player_0 {self.names[a]} ({_num(payoff(self.config, 0, a, b))}), "
                f"player_1 {self.names[b]} ({_num(payoff(self.config, 1, b, a))})"
            )
        lines.append(
            f"  scores: player_0 {_num(state.scores[0])}, player_1 {_num(state.scores[1])}"
        )
        return "\n".join(lines)
