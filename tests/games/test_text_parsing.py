"""Parsing never raises, costs linear time, and one rule for numbers, letters and the answer's
place holds in every game.

A property test over every registered game (and Guandan's Chinese text): each game's
``parse_action`` gets random Unicode strings (drawn by ``numpy`` Generators with the listed
seeds), huge inputs (digit strings of 5,000+ characters, alone and after ``Action:``, ``play``,
``room`` ...), hostile inputs ("²", "Action: ³", "--5", NUL, RTL marks, emoji, empty, whitespace)
and every legal action's own text. Whatever the input, the answer is a :class:`ParseResult` whose
action is legal or ``None`` with feedback; nothing raises.

The rule (docs/quickstart.md, "The text layer"): a bare number N (ASCII digits only, alone or
after ``Action:``) is the N-th listed legal action; a letter is an option label only in the games
that list lettered options (CollabCapture, CollabEscape, Hanabi); a room, card or position number
is written with its noun ("room 5", "play card 2").

The answer's place (:func:`tom_envs.core.text.answer_segment`, every game's parser): the last
``<action>`` tag, else the line after the last answer label (``Action:``, ``Answer:``...), else the
whole reply, without quotes, backticks, emphasis or code fences.

Cost: every parser gets long adversarial replies (repeated units that defeat backtracking regular
expressions and recursion: ``"A: " * n``, ``"move " * n``, ``"<action>" * n`` ...) at two sizes,
``n`` and ten times ``n``; the larger may cost at most :data:`MAX_GROWTH` times the smaller (the
fastest of :data:`REPEATS` interleaved timings each, measured again four times longer before a
failure is reported: a ratio on one machine in one sitting, never an absolute time). A quadratic
parser grows a hundredfold.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from conformance_helpers import GAME_SPECS, bundle_of, rules_episode

from tom_envs.core.game import ParseResult
from tom_envs.core.text import letter
from tom_envs.registration import game_spec

#: Seeds of the random-Unicode draws (fixed: every machine checks the same strings).
UNICODE_SEEDS = (0, 1, 2, 3, 4, 5, 6, 7)
#: Random strings per seed and view.
STRINGS_PER_SEED = 4
#: Episodes (by seed) whose views are parsed, and views kept per game.
EPISODE_SEEDS = (0, 1)
VIEWS_PER_GAME = 6
#: Games whose observations list lettered options ("A. Move to room 2.").
LETTERED = {"CollabCapture", "CollabEscape", "Hanabi"}

DIGITS = "9" * 5_000
HOSTILE = (
    "",
    " ",
    "\n\t\r ",
    "²",
    "Action: ³",
    "①",
    "٣",
    "Action: ٣",
    "--5",
    "-5",
    "+3",
    "0",
    "-0",
    "3.5",
    "1e9",
    "\x00",
    "\x00Action: 1",
    "\u202e1 noitcA",
    "\u200f\u200e\u202a",
    "🙂",
    "💣 Apply 🟥 Tool",
    "play ²",
    "room ²",
    "Move to Room ³",
    "Action: A",
    "Action: AA",
    "Action:",
    "<action></action>",
    "<action>" * 50,
    DIGITS,
    "1" + "0" * 5_000,
    f"Action: {DIGITS}",
    f"play {DIGITS}",
    f"play card {DIGITS}",
    f"discard {DIGITS}",
    f"room {DIGITS}",
    f"Move to Room {DIGITS}",
    f"reveal rank {DIGITS}",
    f"place_block(block_type=red, pos=({DIGITS}, 0, 0))",
    f"<action>{DIGITS}</action>",
    "Action: 1 2",
    "A: B: C: D:",
    "A: " * 1_000,  # once a RecursionError in Hanabi's letter-label reader
    "Action: " * 2_000,
    "move " * 4_000,  # once quadratic in bomb defusal's move reader
    "%$#@!" * 2_000,
)
#: Units repeated into long adversarial replies for the cost test (a fixed list).
REPEATED_UNITS = (
    "A: ",
    "<action>",
    "</action><action>x",
    "<action>Action: ",
    "Action: ",
    "move ",
    "move to the room ",
    "go to node ",
    "apply use ",
    "Message to Team: ",
    "What's ",
    "Option ",
    "play reveal hint ",
    "reveal Bob rank ",
    "place break ",
    "place a red block at (",
    'send_message(message=" ',
    "(1, 2, ",
    "( ",
    "say: ",
    "\n",
    "1",
    "*",
    '"',
    "```",
)
#: Random units (seeded draws of printable text) repeated the same way.
RANDOM_UNIT_SEEDS = (0, 1)
#: Base length of an adversarial reply (characters), the larger size's factor, the growth allowed
#: and the timings whose minimum is kept.
BASE_CHARS = 2_000
SCALE = 10
MAX_GROWTH = 30
REPEATS = 3


def _variants() -> list[tuple[str, object]]:
    """Every registered game, plus Guandan's Chinese text (paper 001's main setting)."""
    out: list[tuple[str, object]] = [(s.name, bundle_of(s)) for s in GAME_SPECS]
    g = game_spec("Guandan")
    out.append(("Guandan-zh", g.load().make_bundle(**{**g.kwargs, "language": "zh"})))
    return out


VARIANTS = _variants()


def _views(bundle) -> list:
    """Views with legal actions from seeded random play (spread over the episodes), and one
    view without (after the end or off turn)."""
    game = bundle.game
    live, idle = [], []
    for seed in EPISODE_SEEDS:
        for st in rules_episode(bundle, seed, np.random.default_rng(seed)):
            for p in range(game.num_players):
                v = game.observe(st.state, p)
                (live if v.legal_actions else idle).append(v)
    assert live, "random play produced no view with a legal action"
    step = max(1, len(live) // VIEWS_PER_GAME)
    return live[::step][:VIEWS_PER_GAME] + idle[:1]


def random_unicode(rng: np.random.Generator) -> str:
    """A string of random code points (any plane but surrogates), sometimes after ``Action:``,
    sometimes with ASCII digits and letters mixed in."""
    n = int(rng.integers(0, 120))
    points = rng.integers(0, 0x110000, size=n)
    chars = [chr(int(c)) for c in points if not 0xD800 <= c <= 0xDFFF]
    kind = int(rng.integers(4))
    if kind == 1:
        chars = [chr(int(c)) for c in rng.integers(0x20, 0x7F, size=n)]
    s = "".join(chars)
    if kind == 2:
        s = "Action: " + s
    if kind == 3:
        s = str(int(rng.integers(0, 40))) + s[:3]
    return s


def check(result: object, legal: tuple[int, ...], said: object) -> ParseResult:
    assert isinstance(result, ParseResult), f"parse({str(said)[:40]!r}) returned {result!r}"
    assert result.action is None or result.action in legal, f"parse({str(said)[:40]!r}) illegal"
    assert isinstance(result.feedback, str)
    if result.action is None:
        assert result.feedback.strip(), f"no feedback for {str(said)[:40]!r}"
    return result


@pytest.mark.parametrize(("name", "bundle"), VARIANTS, ids=[n for n, _ in VARIANTS])
def test_parse_action_never_raises(name: str, bundle) -> None:
    text = bundle.text
    for vi, view in enumerate(_views(bundle)):
        legal = tuple(view.legal_actions)
        for said in HOSTILE:
            check(text.parse_action(view, said), legal, said)
        for seed in UNICODE_SEEDS:
            rng = np.random.default_rng([seed, vi])
            for _ in range(STRINGS_PER_SEED):
                said = random_unicode(rng)
                check(text.parse_action(view, said), legal, said)
        for said in ("²", "Action: ³", "--5", DIGITS, f"play {DIGITS}", f"Action: {DIGITS}"):
            assert text.parse_action(view, said).action is None, f"{said[:20]!r} parsed"


@pytest.mark.parametrize(("name", "bundle"), VARIANTS, ids=[n for n, _ in VARIANTS])
def test_every_legal_action_text_and_number_follow_the_rule(name: str, bundle) -> None:
    text = bundle.text
    for view in _views(bundle):
        options = text.legal_actions_text(view)
        legal = tuple(view.legal_actions)
        if not options:
            check(text.parse_action(view, "1"), legal, "1")
            assert text.parse_action(view, "1").action is None
            continue
        listed = list(options)
        for i, (a, said) in enumerate(options.items()):
            assert check(text.parse_action(view, said), legal, said).action == a, said
            for number in (str(i + 1), f"Action: {i + 1}", f"<action>{i + 1}</action>"):
                got = check(text.parse_action(view, number), legal, number).action
                assert got == a, f"{name}: {number!r} -> {got}, expected the {i + 1}-th listed {a}"
        for beyond in ("0", str(len(listed) + 1), "-1", "--1", "1" * 7):
            result = check(text.parse_action(view, beyond), legal, beyond)
            assert result.action is None, f"{name}: {beyond!r} parsed as {result.action}"
            # the range, in the game's language (Guandan-zh speaks Chinese)
            assert "choose 1-" in result.feedback or "请在 1-" in result.feedback, result.feedback
        observation = text.observation_text(view)
        first = next(iter(options.values()))
        lettered = f"A. {first}" in observation or first.startswith("A. ")
        assert lettered == (name in LETTERED), f"{name}: lettered options {lettered}"
        if lettered:
            for i, a in enumerate(listed):
                for said in (letter(i), f"({letter(i)})", f"Action: {letter(i)}"):
                    got = check(text.parse_action(view, said), legal, said).action
                    assert got == a, f"{name}: {said!r} -> {got}, expected {a}"


@pytest.mark.parametrize("name", ["CollabCapture", "CollabEscape"])
def test_a_room_is_written_with_its_noun(name: str) -> None:
    """A bare number is the N-th option, never a room: "room R" and "move to R" are rooms."""
    bundle = bundle_of(game_spec(name))
    text = bundle.text
    checked = 0
    for view in _views(bundle):
        options = text.legal_actions_text(view)
        for a, said in options.items():
            if not said.startswith("Move to room "):
                continue
            room = said.rsplit(" ", 1)[1]
            assert text.parse_action(view, f"room {room}").action == a
            assert text.parse_action(view, f"Action: move to {room}").action == a
            got = text.parse_action(view, room).action
            index = int(room) - 1
            expected = list(options)[index] if index < len(options) else None
            assert got == expected, f"bare {room!r} must be option {room}, not room {room}"
            checked += 1
    assert checked


def test_overcooked_mid_level_parser_never_raises() -> None:
    from tom_envs.games.overcooked.midlevel import kitchen, mid_level_actions, parse_mid_level

    bundle = bundle_of(game_spec("Overcooked"))
    config = bundle.game.config
    state = bundle.game.initial_state(np.random.default_rng(0))
    options = tuple(mid_level_actions(kitchen(config.kitchen), state, 0, config.cooking))
    legal = tuple(range(len(options)))
    for said in HOSTILE:
        check(parse_mid_level(options, said), legal, said)
    for i, option in enumerate(options):
        assert parse_mid_level(options, option.text).action == i
        assert parse_mid_level(options, str(i + 1)).action == i


def _growth(parse, view, small: str, large: str, repeats: int) -> float:
    """How many times the large reply costs the small one (the fastest of ``repeats`` timings
    of each, interleaved so that a slow spell of the machine hits both)."""
    best = [float("inf"), float("inf")]
    for _ in range(repeats):
        for i, said in enumerate((small, large)):
            t0 = time.perf_counter()
            parse(view, said)
            best[i] = min(best[i], time.perf_counter() - t0)
    return best[1] / max(best[0], 1e-9)


@pytest.mark.parametrize(("name", "bundle"), VARIANTS, ids=[n for n, _ in VARIANTS])
def test_parse_cost_grows_linearly_with_the_reply(name: str, bundle) -> None:
    text = bundle.text
    view = _views(bundle)[0]
    legal = tuple(view.legal_actions)
    units = list(REPEATED_UNITS)
    for seed in RANDOM_UNIT_SEEDS:
        rng = np.random.default_rng(seed)
        units.append("".join(chr(int(c)) for c in rng.integers(0x20, 0x7F, size=12)))
    for unit in units:
        n = max(1, BASE_CHARS // len(unit))
        small, large = unit * n, unit * (SCALE * n)
        check(text.parse_action(view, small), legal, small)
        check(text.parse_action(view, large), legal, large)
        growth = _growth(text.parse_action, view, small, large, REPEATS)
        if growth > MAX_GROWTH:  # a busy machine's pause: measure again, longer, before judging
            growth = _growth(text.parse_action, view, small, large, 4 * REPEATS)
        assert growth <= MAX_GROWTH, (
            f"{name}: {SCALE}x the reply {unit!r} * n costs {growth:.0f}x (at most {MAX_GROWTH}x)"
        )


@pytest.mark.parametrize(
    ("reply", "segment"),
    [
        ("B", "B"),
        ("Action: B", "B"),
        ("answer: B", "B"),
        ("Final answer: **B**", "B"),
        ("**Action:** B", "B"),
        ("Reasoning: I like it.\nAction:\n  B\nbecause", "B"),
        ("Action: A\nOn second thought. Action: C", "C"),  # the last label wins
        ("<action>B</action> and later <action>C</action>", "C"),  # the last tag wins
        ("<action>B</action>\nAction: C", "B"),  # a tag beats a label
        ("<action>Answer: D</action>", "D"),  # a label inside the tag is read
        ("<ACTION>e</Action>", "e"),
        ("my answer is <action>F", "F"),  # cut off by the budget
        ("<action>B <action>C", "C"),  # no complete tag: the text after the last opening
        ("<action>B</action> then <action>C", "B"),  # a complete tag beats a cut-off one
        ("<action>A <action>B</action>", "B"),  # a closing tag ends the opening nearest it
        ("</action> <action>C", "C"),  # a stray closing tag opens nothing
        ("Action: A <action>B</action> Action: C", "B"),  # a tag beats labels on either side
        ('Action: "Option J"', "Option J"),
        ("Action: `move up`", "move up"),
        ("Action: “B”", "B"),
        ("```\nB\n```", "B"),
        ("Action:\n```python\nwait()\n```", "wait()"),
        ("推理：……\n动作：3", "3"),
        ("Action selection: Inspect Bomb", "Inspect Bomb"),
        ("reaction: B", "reaction: B"),  # not a label: a word ending in "action"
        ("Action:", ""),
    ],
)
def test_one_answer_extractor(reply: str, segment: str) -> None:
    from tom_envs.core.text import answer_segment

    assert answer_segment(reply) == segment


def test_every_game_reads_answer_and_action_labels_alike() -> None:
    """Overcooked reads "Answer: north" as a move, as other games read "Answer: B"."""
    bundle = bundle_of(game_spec("Overcooked"))
    view = next(v for v in _views(bundle) if v.legal_actions)
    options = bundle.text.legal_actions_text(view)
    for said in ("Answer: north", "Action: up", "<action>go up</action>", "Final answer: `up`"):
        got = bundle.text.parse_action(view, said).action
        assert got == bundle.text.parse_action(view, "move up").action is not None, said
    for name in ("CollabEscape", "Hanabi", "RockPaperScissors", "CoBlock", "Guandan"):
        bundle = bundle_of(game_spec(name))
        view = next(v for v in _views(bundle) if v.legal_actions)
        options = bundle.text.legal_actions_text(view)
        first = next(iter(options))
        for said in ("Answer: 1", "Action: 1", "<action>1</action>", "Final answer: **1**"):
            assert bundle.text.parse_action(view, said).action == first, (name, said)


@pytest.mark.parametrize("names", ["rps", "letters"])
def test_matrix_parser_never_reads_a_contraction_or_a_word_part_as_an_option(names: str) -> None:
    g = game_spec("RockPaperScissors")
    bundle = g.load().make_bundle(**{**g.kwargs, "action_names": names})
    view = next(v for v in _views(bundle) if v.legal_actions)
    parse = bundle.text.parse_action
    r, p, s = (bundle.text.option(a) for a in range(3))
    for said in (
        "What's the best move? Let's see what the player's last one was.",
        "It's hard to say; that's the question, isn't it",
        "Rocky road",
        "I'd say P-values matter",
        "p.s. nothing",
    ):
        assert parse(view, said).action is None, said
    letter_s = s.split()[-1]
    assert parse(view, f"I choose {letter_s}").action == 2
    assert parse(view, f"'{letter_s}'").action == 2
    assert parse(view, f"Let's play {letter_s}.").action == 2  # the contraction is skipped
    assert parse(view, f"Action: {p}").action == 1
    assert parse(view, r.lower()).action == 0
