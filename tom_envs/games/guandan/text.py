"""English and Chinese text for Guandan, after the paper's prompt templates (§3.1, App. A).

The rules prompt follows the paper's game-rule template: general rules; card types that cannot
beat other types (with examples); card types that can beat other types (bombs, with examples);
the single (one deal) win/loss rule; the whole (match) win/loss rule. The observation follows its
observation/history conversion: levels and wild cards, my hand, the cards left, the play to beat,
the recent moves, tribute and finishing order, then the numbered legal actions. No game logic
here: every fact comes from the view (and the catalogue's shapes).
"""

from __future__ import annotations

import re

from tom_envs.core.game import ParseResult, TextInterface
from tom_envs.core.skin import Symbols
from tom_envs.core.text import answer_segment, match_action
from tom_envs.games.guandan.cards import (
    BIG_JOKER,
    HR_CODE,
    RANKS,
    SB_CODE,
    SMALL_JOKER,
    SUIT_NAMES_ZH,
    SUIT_SYMBOLS,
    WILD_CODE,
    card_name,
    cards_of,
    sort_by_value,
    wild_kind,
)
from tom_envs.games.guandan.combos import (
    GIVE_BASE,
    PASS,
    SHAPE_BASE,
    ComboType,
    Shape,
    cards_for,
    position_name,
    shape_of,
)
from tom_envs.games.guandan.state import GuandanConfig, GuandanState
from tom_envs.games.guandan.view import GuandanView, PublicMove

TYPE_NAMES = {
    "en": {
        ComboType.SINGLE: "Single",
        ComboType.PAIR: "Pair",
        ComboType.TRIPS: "Trips",
        ComboType.FULL_HOUSE: "Full house",
        ComboType.STRAIGHT: "Straight",
        ComboType.TUBE: "Tube",
        ComboType.PLATE: "Plate",
        ComboType.STRAIGHT_FLUSH: "Straight flush",
        ComboType.BOMB: "Bomb",
        ComboType.JOKER_BOMB: "Joker bomb",
    },
    "zh": {
        ComboType.SINGLE: "单张",
        ComboType.PAIR: "对子",
        ComboType.TRIPS: "三同张",
        ComboType.FULL_HOUSE: "三带二",
        ComboType.STRAIGHT: "顺子",
        ComboType.TUBE: "三连对",
        ComboType.PLATE: "钢板",
        ComboType.STRAIGHT_FLUSH: "同花顺",
        ComboType.BOMB: "炸弹",
        ComboType.JOKER_BOMB: "天王炸",
    },
}

WORDS = {
    "en": {
        "pass": "pass",
        "tribute": "Tribute",
        "return": "Return",
        "wild_card": "wild card",
        "wild_cards": "wild cards",
        "roles": ("you", "next player", "your teammate", "previous player"),
        "opp": "opponent",
        "player": "player",
    },
    "zh": {
        "pass": "过牌",
        "tribute": "进贡",
        "return": "还贡",
        "wild_card": "逢人配",
        "wild_cards": "两张逢人配",
        "roles": ("你", "下家", "对家", "上家"),
        "opp": "对手",
        "player": "号玩家",
    },
}

PASS_WORDS = ("pass", "过", "不出", "要不起", "不要", "过牌")


def _rank_name(code: int, level: int, language: str) -> str:
    if code == SB_CODE:
        return "小王" if language == "zh" else "SmallJoker"
    if code == HR_CODE:
        return "大王" if language == "zh" else "BigJoker"
    if code == WILD_CODE:
        return RANKS[level]
    return RANKS[code]


def describe_shape(shape: Shape, level: int, language: str = "en") -> str:
    """``"Straight 3-7"``, ``"同花顺 黑桃3-7"``, ``"Bomb 5×9"``, ``"Pair 7 (wild cards)"``."""
    name = TYPE_NAMES[language][shape.type]
    t = shape.type
    if t == ComboType.JOKER_BOMB:
        return name
    if t in (ComboType.STRAIGHT, ComboType.TUBE, ComboType.PLATE):
        return f"{name} {position_name(shape.start)}-{position_name(shape.key)}"
    if t == ComboType.STRAIGHT_FLUSH:
        suit = SUIT_NAMES_ZH[shape.suit] if language == "zh" else SUIT_SYMBOLS[shape.suit]
        return f"{name} {suit}{position_name(shape.start)}-{position_name(shape.key)}"
    if t == ComboType.BOMB:
        times = "张" if language == "zh" else "×"
        return f"{name} {shape.size}{times}{_rank_name(shape.key, level, language)}"
    body = f"{name} {_rank_name(shape.key, level, language)}"
    if shape.wild_only:
        note = WORDS[language]["wild_card"] if shape.size == 1 else WORDS[language]["wild_cards"]
        body += f"（{note}）" if language == "zh" else f" ({note})"
    return body


def cards_text(cards: tuple[int, ...] | list[int], level: int, language: str = "en") -> str:
    """Cards sorted by value, space separated; the wild cards marked with ``*``."""
    wk = wild_kind(level)
    return " ".join(
        card_name(c, language) + ("*" if c == wk else "") for c in sort_by_value(cards, level)
    )


# --------------------------------------------------------------------------- rules prompt
#: The rules' answer-format line, verbatim per language (``TextObservation.answer_format``).
ANSWER_FORMAT = {
    "en": "Answer with one of the numbered legal actions (its number or its text).",
    "zh": "请从编号的合法动作中选择一个（回答编号或动作文字）。",
}


def _rules_en(cfg: GuandanConfig) -> str:
    pass_a = (
        "finishing 1st and 2nd or 1st and 3rd"
        if cfg.pass_a == "first_second_or_third"
        else "finishing 1st and 2nd"
    )
    episode = (
        "This episode is a whole match: deals continue until a team passes A."
        if cfg.match
        else "This episode is one deal."
    )
    return f"""You are playing Guandan (掼蛋), a four-player team card game with imperfect information.

General rules:
- Four players in two teams: players 0 and 2 against players 1 and 3; teammates sit opposite each
  other. Play goes from player k to player k+1 (mod 4): your next player and your previous player
  are opponents.
- Two decks with jokers (108 cards), 27 cards each. Cards are written as suit + rank (♥ hearts,
  ♠ spades, ♣ clubs, ♦ diamonds; ranks 2-10, J, Q, K, A), SmallJoker and BigJoker.
- Each team has a level (2 to A); a deal is played at the level of the team that won the previous
  deal. The level rank ranks above A in singles, pairs, trips, full houses and bombs: 2 < 3 < ... <
  K < A < level rank < SmallJoker < BigJoker. In sequences every card keeps its natural place.
- The two hearts of the level rank are wild cards (marked *): a wild card can stand for any card
  except a joker. A wild card alone, or two wild cards alone, count as level-rank cards.
- The leader plays any combination. Each next player must play a higher combination of the same
  type (same number of cards) or a bomb, or pass. When all others still holding cards have passed,
  the last player to play leads again. If that player has no cards left, the teammate leads
  (wind-follow).
- From the second deal on, the losers pay a tribute: their highest card (never a wild card) goes to
  the winners, who give back a card of rank 10 or lower that is not of the level rank. If the
  losers hold both big jokers there is no tribute.

Card types that cannot beat other types (beat only the same type with a higher rank):
- Single: one card. Example: ♠5.
- Pair: two cards of the same rank (two small or two big jokers also form a pair). Example: ♠7 ♥7.
- Trips: three cards of the same rank. Example: ♣9 ♦9 ♠9.
- Full house: trips plus a pair of another rank, compared by the trips. Example: ♠8 ♥8 ♦8 ♣4 ♦4.
- Straight: exactly five consecutive ranks, not all of one suit; A may be low (A-2-3-4-5) or high
  (10-J-Q-K-A), no wrap-around; compared by the top card. Example: ♠3 ♥4 ♦5 ♣6 ♠7.
- Tube: three consecutive pairs. Example: ♠5 ♥5 ♦6 ♣6 ♠7 ♥7.
- Plate: two consecutive trips. Example: ♠J ♥J ♦J ♣Q ♦Q ♠Q.

Card types that can beat other types (bombs beat every non-bomb):
- Bomb: four or more cards of the same rank (up to 10 with wild cards). More cards beat fewer;
  with as many cards, the higher rank wins. Example: ♠9 ♥9 ♣9 ♦9.
- Straight flush: five consecutive cards of one suit. It beats bombs of 4 or 5 cards and loses to
  bombs of 6 or more. Example: ♥9 ♥10 ♥J ♥Q ♥K.
- Joker bomb: all four jokers, the highest combination. Example: SmallJoker SmallJoker BigJoker
  BigJoker.
Order: joker bomb > 10-, 9-, 8-, 7-, 6-card bombs > straight flush > 5-card > 4-card bombs.

Single win/loss rule (one deal): the deal ends when both players of a team are out of cards, or
three players are. The team of the first player out wins the deal and goes up +3 levels if the
teammate finished 2nd, +2 if 3rd, +1 if 4th; the other team loses as much (reward ±3, ±2, ±1).

Whole win/loss rule (the match): levels go from 2 to A. A team at A wins the match by winning a
deal played at its own level A, {pass_a}. {episode}

Answer with one of the numbered legal actions (its number or its text)."""


def _rules_zh(cfg: GuandanConfig) -> str:
    pass_a = (
        "获得头游和二游或头游和三游" if cfg.pass_a == "first_second_or_third" else "获得头游和二游"
    )
    episode = "本局为完整比赛：一直打到有一方过A。" if cfg.match else "本局只打一副牌。"
    return f"""你正在玩掼蛋，一种四人组队、信息不完全的扑克牌游戏。

总体规则：
- 四名玩家分成两队：0号和2号对1号和3号，队友坐在对面。出牌顺序从k号到k+1号（模4）：你的下家和上家都是对手。
- 使用两副带大小王的牌（共108张），每人27张。牌写作花色加点数（红桃、黑桃、梅花、方块；2-10、J、Q、K、A），小王、大王。
- 每队有一个级数（从2到A）；每副牌打上一副赢家队伍的级数。级牌在单张、对子、三同张、三带二和炸弹中大于A：2 < 3 < … < K < A < 级牌 < 小王 < 大王。在顺子类牌型中每张牌保持原来的位置。
- 两张红桃级牌是逢人配（标*）：可以代替除大小王外的任何牌。单独出一张或两张逢人配时按级牌计算。
- 领出者可以出任意牌型。之后每位玩家必须出同类型（张数相同）更大的牌，或出炸弹，或者过牌。当其他仍有牌的玩家都过牌后，最后出牌的玩家继续领出；若该玩家已出完牌，则由其队友领出（接风）。
- 从第二副牌起，输方要进贡：把最大的一张牌（不能是逢人配）交给赢方，赢方还一张10或以下且不是级牌的牌。若输方持有两张大王则抗贡，不进贡。

不能压制其他牌型的牌型（只能被同类型更大的牌压过）：
- 单张：一张牌。例：黑桃5。
- 对子：两张点数相同的牌（两张小王或两张大王也是对子）。例：黑桃7 红桃7。
- 三同张：三张点数相同的牌。例：梅花9 方块9 黑桃9。
- 三带二：三同张加一对其他点数的对子，比较三同张。例：黑桃8 红桃8 方块8 梅花4 方块4。
- 顺子：正好五张连续点数、且不全是同一花色；A可以作最小（A-2-3-4-5）或最大（10-J-Q-K-A），不能循环；比较最大的牌。例：黑桃3 红桃4 方块5 梅花6 黑桃7。
- 三连对：三个连续的对子。例：黑桃5 红桃5 方块6 梅花6 黑桃7 红桃7。
- 钢板：两个连续的三同张。例：黑桃J 红桃J 方块J 梅花Q 方块Q 黑桃Q。

可以压制其他牌型的牌型（炸弹大于所有非炸弹牌型）：
- 炸弹：四张或以上点数相同的牌（加逢人配最多10张）。张数多的大；张数相同时点数大的大。例：黑桃9 红桃9 梅花9 方块9。
- 同花顺：同一花色的五张连续牌。大于四张和五张的炸弹，小于六张及以上的炸弹。例：红桃9 红桃10 红桃J 红桃Q 红桃K。
- 天王炸：四张王，最大的牌型。例：小王 小王 大王 大王。
大小顺序：天王炸 > 10、9、8、7、6张炸弹 > 同花顺 > 5张炸弹 > 4张炸弹。

单局胜负规则（一副牌）：当一队两名玩家都出完牌，或三名玩家出完牌时，本副牌结束。头游所在的队伍获胜：队友为二游升3级，三游升2级，末游升1级；另一队失去同样的分数（奖励±3、±2、±1）。

整体胜负规则（整场比赛）：级数从2打到A。处于A级的队伍在打自己的A时{pass_a}，即赢得比赛。{episode}

请从编号的合法动作中选择一个（回答编号或动作文字）。"""


_CARD_TOKEN = re.compile(
    r"(?P<sym>[♥♠♣♦])\s*(?P<r1>10|[2-9]|[TJQKAtjqka])"
    r"|(?P<zh>红桃|黑桃|梅花|方块)\s*(?P<r2>10|[2-9]|[JQKAjqka])"
    r"|(?<![A-Za-z])(?P<let>[HSCDhscd])(?P<r3>10|[2-9]|[TJQKAtjqka])(?![A-Za-z0-9])"
    r"|(?P<joker>小王|大王|(?<![A-Za-z])(?:SB|HR)(?![A-Za-z])|small\s?joker|big\s?joker)",
    flags=re.IGNORECASE,
)
_RANK_OF = {name: i for i, name in enumerate(RANKS)} | {"T": 8}


def parse_cards(text: str) -> list[int]:
    """Card kinds named in ``text`` (``♠10``, ``S10``, ``ST``, ``黑桃10``, ``SmallJoker``, ``SB``,
    ``大王``...). ``SJ`` is the jack of spades."""
    out = []
    for m in _CARD_TOKEN.finditer(text):
        if m.group("joker"):
            j = m.group("joker").lower()
            out.append(SMALL_JOKER if j in ("小王", "sb") or j.startswith("small") else BIG_JOKER)
            continue
        if m.group("sym"):
            suit, rank = SUIT_SYMBOLS.index(m.group("sym")), m.group("r1")
        elif m.group("zh"):
            suit, rank = SUIT_NAMES_ZH.index(m.group("zh")), m.group("r2")
        else:
            suit, rank = "HSCD".index(m.group("let").upper()), m.group("r3")
        out.append(_RANK_OF[rank.upper()] * 4 + suit)
    return out


#: A skin's suits: names and symbols, parallel (none is a canonical suit's).
SKIN_SUIT_NAMES = ("stars", "circles", "triangles", "squares", "crosses", "moons")
SKIN_SUIT_SYMBOLS = ("★", "●", "▲", "■", "✚", "☾")
SKIN_SUIT_NAMES_ZH = ("星星", "圆圈", "三角", "方形", "十字", "月亮")


class GuandanText(TextInterface[GuandanView]):
    """Text for one player, from its view, in ``config.language``."""

    def __init__(self, config: GuandanConfig) -> None:
        self.config = config
        self.language = config.language
        self._rules = _rules_zh(config) if self.language == "zh" else _rules_en(config)
        self._legal_cache: dict[int, tuple[GuandanView, dict[int, str]]] = {}
        self._obs_cache: dict[int, tuple[GuandanView, str]] = {}

    # ------------------------------------------------------------------ pieces
    def rules_prompt(self, view: GuandanView) -> str:
        """The paper's rule template in the configured language (the same for every seat)."""
        return self._rules

    def answer_format(self, view: GuandanView) -> str:
        """The rules' last line: answer with a legal action's number or text."""
        return ANSWER_FORMAT[self.language]

    def _who(self, view: GuandanView, rel: int) -> str:
        w = WORDS[self.language]
        seat = (view.player + rel) % 4
        role = w["roles"][rel]
        if rel == 0:
            return role
        if self.language == "zh":
            return f"{role}（{seat}{w['player']}）"
        opp = f"{w['opp']}, " if rel in (1, 3) else ""
        return f"{role} ({opp}{w['player']} {seat})"

    def move_text(self, view: GuandanView, move: PublicMove) -> str:
        """One move of the history: who, then what."""
        w = WORDS[self.language]
        seat, action, cards, phase = move
        who = self._who(view, seat)
        if action == PASS:
            what = w["pass"]
        elif action < SHAPE_BASE:
            what = f"{w[phase]} {cards_text(cards, view.level, self.language)}"
        else:
            shape = describe_shape(shape_of(action), view.level, self.language)
            what = f"{shape}: {cards_text(cards, view.level, self.language)}"
        return f"{who}: {what}"

    def observation_text(self, view: GuandanView) -> str:
        """Levels, hand, cards left, the play to beat, recent moves, tribute, finishing order."""
        cached = self._obs_cache.get(view.player)
        if cached is not None and cached[0] is view:
            return cached[1]
        text = _obs(self, view)
        self._obs_cache[view.player] = (view, text)
        return text

    def action_text(self, view: GuandanView, action: int) -> str:
        """``"pass"``, ``"Tribute ♥A"``, ``"Pair 7: ♠7 ♦7"`` (cards the engine would play)."""
        w = WORDS[self.language]
        if action == PASS:
            return w["pass"]
        if action < SHAPE_BASE:
            word = w["return"] if view.phase == "return" else w["tribute"]
            return f"{word} {card_name(action - GIVE_BASE, self.language)}"
        desc = describe_shape(shape_of(action), view.level, self.language)
        try:
            cards = cards_for(action, view.hand, view.level)
        except ValueError:
            return desc
        return f"{desc}: {cards_text(cards, view.level, self.language)}"

    def legal_actions_text(self, view: GuandanView) -> dict[int, str]:
        """Legal actions in catalogue order, mapped to their text (computed once per view)."""
        cached = self._legal_cache.get(view.player)
        if cached is not None and (cached[0] is view or cached[0] == view):
            return dict(cached[1])
        texts = {a: self.action_text(view, a) for a in view.legal_actions}
        self._legal_cache[view.player] = (view, texts)
        return dict(texts)

    # ------------------------------------------------------------------ parser
    def parse_action(self, view: GuandanView, text: str) -> ParseResult:
        """Accepts the action text, its number, "pass"/"过", or the cards to play.

        Cards may be written ``♠7``, ``S7``, ``黑桃7``, ``SmallJoker``/``小王``; the hearts of the level
        count as wild cards, suits are otherwise ignored (the engine chooses them), except for a
        straight flush. When the cards fit several combinations, the answer is refused with the
        candidates.
        """
        options = self.legal_actions_text(view)
        zh = self.language == "zh"
        result = match_action(text, options, language=self.language)
        if result.valid or not isinstance(text, str) or not options:
            return result
        raw = answer_segment(text)
        cards = parse_cards(raw[:2000])
        if not cards:
            low = raw.strip().lower().strip(" .!\"'`*")
            if low in PASS_WORDS and PASS in options:
                return ParseResult(PASS, result_word(zh, options[PASS]))
            return result
        matches = self._by_cards(view, cards)
        if len(matches) == 1:
            a = matches[0]
            return ParseResult(a, result_word(zh, options[a]))
        if len(matches) > 1:
            named = "; ".join(repr(options[a]) for a in matches[:8])
            if zh:
                return ParseResult(None, f"这些牌有多种出法：{named}；请只回答其中一个")
            return ParseResult(None, f"ambiguous cards: they fit {named}; answer with one of them")
        if zh:
            return ParseResult(
                None, f"这些牌现在不是合法动作；请回答 {len(options)} 个合法动作之一的编号或文字"
            )
        return ParseResult(
            None,
            "those cards are not a legal action now; answer with the number or the text of one "
            f"of the {len(options)} legal actions",
        )

    def _by_cards(self, view: GuandanView, cards: list[int]) -> list[int]:
        """Legal actions these exact cards can be played as (any suits the hand holds)."""
        if view.phase in ("tribute", "return"):
            if len(cards) == 1 and GIVE_BASE + cards[0] in view.legal_actions:
                return [GIVE_BASE + cards[0]]
            return []
        from tom_envs.games.guandan.bruteforce import shapes_of_cards

        if len(cards) > 10:
            return []
        shapes = shapes_of_cards(cards, view.level)
        return [a for a in view.legal_actions if a >= SHAPE_BASE and a - SHAPE_BASE in shapes]

    # --------------------------------------------------------------- spectator
    def skin_symbols(self) -> tuple[Symbols, ...]:
        """What a skin renames (``skin=``, :mod:`tom_envs.core.skin`): the four suits, their
        names (``hearts`` -> ``stars``, the wild cards' suit restated with them) and their
        symbols (``♥7`` -> ``★7``) alike, in English and in Chinese (``红桃7`` -> ``星星7``).
        Ranks and seat numbers keep theirs: the rules state their order (``player k+1``)."""
        return (
            Symbols("suit", ("hearts", "spades", "clubs", "diamonds"), SKIN_SUIT_NAMES),
            Symbols("suit symbol", SUIT_SYMBOLS, SKIN_SUIT_SYMBOLS, case_sensitive=True,
                    glued=r"(?:10|[2-9JQKA])\*?", follows="suit"),
            Symbols("suit zh", SUIT_NAMES_ZH, SKIN_SUIT_NAMES_ZH, case_sensitive=True,
                    boundary=False, follows="suit"),
        )  # fmt: skip

    def render_state(self, state: GuandanState) -> str:
        """Every hand and the table (a spectator's view)."""
        level = state.level
        lines = [
            f"Guandan deal {state.deal + 1}, level {RANKS[level]} (team {state.level_team}), "
            f"levels {RANKS[state.levels[0]]}/{RANKS[state.levels[1]]}, phase {state.phase}"
        ]
        for s in range(4):
            lines.append(
                f"  player_{s} ({sum(state.hands[s])}): "
                f"{cards_text(cards_of(state.hands[s]), level)}"
            )
        if state.lead is not None:
            shape = describe_shape(shape_of(state.lead[1]), level)
            lines.append(f"  to beat: {shape} by player_{state.lead[0]}")
        if state.finished:
            lines.append(f"  finished: {', '.join(f'player_{s}' for s in state.finished)}")
        if state.phase != "over":
            lines.append(f"  to act: player_{state.to_act}")
        return "\n".join(lines)


def result_word(zh: bool, action: str) -> str:
    """The parser's "understood" feedback in the text's language."""
    return f"已理解：{action}" if zh else f"understood: {action}"


def _tribute_lines(t: GuandanText, view: GuandanView) -> list[str]:
    zh = t.language == "zh"
    if not view.tribute_payers:
        return []
    payers = ", ".join(t._who(view, s) for s in view.tribute_payers)
    if view.anti_tribute:
        return [
            f"抗贡：{payers}持有两张大王，不进贡。"
            if zh
            else f"Anti-tribute: {payers} held both big jokers; no tribute."
        ]
    lines = []
    for s, c in view.tribute_paid:
        lines.append(
            f"{t._who(view, s)}进贡{card_name(c, 'zh')}。"
            if zh
            else f"{t._who(view, s)} paid tribute {card_name(c)}."
        )
    for s, c in view.tribute_returned:
        lines.append(
            f"{t._who(view, s)}还贡{card_name(c, 'zh')}。"
            if zh
            else f"{t._who(view, s)} returned {card_name(c)}."
        )
    return lines


#: The observation's sentences in each language (``str.format`` fields named as in :func:`_obs`).
_OBS_WORDS: dict[str, dict[str, str]] = {
    "en": {
        "deal": "Deal {deal}{match}. You are player {player}; your teammate is player {mate}.",
        "match": " of a match",
        "mine": "your team's",
        "theirs": "the opponents'",
        "level": "Level of this deal: {lv} ({whose} level). Your team is at level {my}, the "
        "opponents at {their}. Wild cards: ♥{lv}* (any card but a joker).",
        "hand": "Your hand ({n} cards): {cards}",
        "left": "Cards left: ",
        "left_one": "{who} {n}",
        "sep": ", ",
        "end": ".",
        "moves_cut": "Moves this deal (last {shown} of {total}):",
        "moves_all": "Moves this deal:",
        "finished": "Out of cards, in order: ",
        "results": "Earlier deals: your team won {wins} of {total}.",
        "won": "won",
        "lost": "lost",
        "over": "The deal is over: your team {verb} ({sign}{points}).",
        "waiting": "Waiting for {who}.",
        "tribute": "You must pay tribute: give your highest card (not a wild card).",
        "return": "Return a card to the player who paid you: rank 10 or lower, not the level.",
        "lead": "You lead: play any combination.",
        "beat": "To beat: {move}. Play a higher combination of the same type, a bomb, or pass.",
    },
    "zh": {
        "deal": "第{deal}副牌{match}。你是{player}号玩家，你的队友是{mate}号玩家。",
        "match": "（整场比赛）",
        "mine": "我方",
        "theirs": "对方",
        "level": "本副牌打{lv}（{whose}的级数）。我方级数{my}，对方级数{their}。"
        "逢人配：红桃{lv}*（可代替除大小王外的任何牌）。",
        "hand": "你的手牌（{n}张）：{cards}",
        "left": "剩余牌数：",
        "left_one": "{who}{n}张",
        "sep": "，",
        "end": "。",
        "moves_cut": "本副牌出牌记录（最近{shown}手，共{total}手）：",
        "moves_all": "本副牌出牌记录（最近{shown}手，共{total}手）：",
        "finished": "出完牌的顺序：",
        "results": "之前的牌局：我方赢了{total}副中的{wins}副。",
        "won": "赢",
        "lost": "输",
        "over": "本副牌结束：我方{verb}了（{sign}{points}）。",
        "waiting": "等待{who}出牌。",
        "tribute": "你需要进贡：交出你最大的一张牌（不能是逢人配）。",
        "return": "请还贡给向你进贡的玩家：一张10或以下且不是级牌的牌。",
        "lead": "轮到你领出：可以出任意牌型。",
        "beat": "需要压过：{move}。请出同类型更大的牌、炸弹，或者过牌。",
    },
}


def _obs(t: GuandanText, view: GuandanView) -> str:
    """The observation in the text's language (the sentences of :data:`_OBS_WORDS`)."""
    w = _OBS_WORDS[t.language]
    lv = RANKS[view.level]
    sep, end = w["sep"], w["end"]
    lines = [
        w["deal"].format(deal=view.deal + 1, match=w["match"] if view.match else "",
                         player=view.player, mate=(view.player + 2) % 4),
        w["level"].format(lv=lv, whose=w["mine"] if view.level_is_mine else w["theirs"],
                          my=RANKS[view.my_level], their=RANKS[view.their_level]),
        w["hand"].format(n=sum(view.hand),
                         cards=cards_text(cards_of(view.hand), view.level, t.language)),
        w["left"]
        + sep.join(w["left_one"].format(who=t._who(view, r), n=view.cards_left[r]) for r in range(4))
        + end,
    ]  # fmt: skip
    lines += _tribute_lines(t, view)
    k = t.config.history_window
    moves = [m for m in view.history if m[3] == "play"]
    if moves and k:
        shown = moves[-k:]
        head = w["moves_cut"] if len(moves) > k else w["moves_all"]
        lines.append(head.format(shown=len(shown), total=len(moves)))
        lines += [f"  {t.move_text(view, m)}" for m in shown]
    if view.finished:
        lines.append(w["finished"] + sep.join(t._who(view, r) for r in view.finished) + end)
    if view.results:
        wins = sum(1 for _, mine, _ in view.results if mine)
        lines.append(w["results"].format(wins=wins, total=len(view.results)))
    if view.phase == "over":
        last = view.results[-1] if view.results else None
        if last is not None:
            verb = w["won"] if last[1] else w["lost"]
            lines.append(w["over"].format(verb=verb, sign="+" if last[1] else "-", points=last[2]))
        return "\n".join(lines)
    if view.to_act != 0:
        lines.append(w["waiting"].format(who=t._who(view, view.to_act)))
    elif view.phase in ("tribute", "return"):
        lines.append(w[view.phase])
    elif view.lead is None:
        lines.append(w["lead"])
    else:
        lines.append(w["beat"].format(move=t.move_text(view, view.lead)))
    return "\n".join(lines)


__all__ = ["GuandanText", "cards_text", "describe_shape", "parse_cards"]
