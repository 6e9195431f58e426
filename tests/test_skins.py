"""Disguised variants (``skin=``, :mod:`tom_envs.core.skin`), on every registered game.

A skin renames surface symbols and permutes the legal list's order in the text only, so:

1. *rule identity*: a seeded policy picks a canonical legal action; the skinned game is told the
   same action through its own text (the skinned option, parsed back); rewards, terminations,
   truncations, vector observations, legal-action counts and the final state are identical;
2. *parse round trip*: every legal action's skinned text, and its shown number, parse to it;
3. *no leak*: no canonical name of a renamed category occurs in any skinned text (the rules, the
   observations, the options, the feedback), checked by the category's own matcher and by a
   list of each game's canonical words written here;
4. *canonical identity*: ``skin="canonical"`` is today's text byte for byte (and not wrapped);
5. *tables*: deterministic bijections onto names disjoint from the canonical ones.
"""

from __future__ import annotations

import random
import re
from typing import Any

import numpy as np
import pytest

from tom_envs.core.skin import (
    BLOCKED,
    SKIN,
    Skin,
    SkinnedText,
    apply_skin,
    parse_skin,
    skin_of,
    skin_phrases,
    skin_symbols,
)
from tom_envs.registration import GAMES, game_spec

SKINS = ("s1", "s7")
SEEDS = (0, 1)
#: Agent turns played per episode (enough to cross rounds, deals and messages; kept short).
STEPS = 36
#: Each game's canonical words that must never show in a skinned text (whole words; any case
#: unless the entry says otherwise), written out here rather than read from the declarations.
CANONICAL_WORDS: dict[str, tuple[str, ...]] = {
    "Example": ("red", "green", "blue"),
    "RockPaperScissors": ("Option J", "Option F", "Option B"),
    "BattleOfSexes": ("Option J", "Option F"),
    "PrisonersDilemma": ("Option J", "Option F"),
    "BombDefusal": ("red", "green", "blue", "alpha", "bravo", "charlie", "Room 0", "Room 3",
                    "Room 5", "Room 6", "Room 8", "Bomb 1", "Bomb 2"),
    "CollabCapture": ("Alice", "Bob", "room 1", "room 2", "room 6", "room 9"),
    "CollabEscape": ("Alice", "Bob", "room 1", "room 6", "room 7", "room 10"),
    "Hanabi": ("Red", "Yellow", "Green", "White", "Blue", "Alice", "Bob", "Alices", "Bobs",
               "R1", "Y1", "G1", "W1", "B1"),
    "Guandan": ("hearts", "spades", "clubs", "diamonds"),
    "CoBlock": ("red", "blue", "yellow", "green", "black", "purple", "player_0", "player_1"),
    "Overcooked": ("Alice", "Bob", "onion", "onions"),
}  # fmt: skip
#: Canonical symbols glued to ranks or written without spaces (Guandan's suits, in English and
#: Chinese): never anywhere in a skinned text.
CANONICAL_GLYPHS: dict[str, tuple[str, ...]] = {
    "Guandan": ("♥", "♠", "♣", "♦", "红桃", "黑桃", "梅花", "方块")
}
CASES = [(spec, skin, seed) for spec in GAMES for skin in SKINS for seed in SEEDS]
IDS = [f"{s.name}-{k}-{seed}" for s, k, seed in CASES]


def _env(spec: Any, skin: str | None, **kwargs: Any) -> Any:
    extra = {} if skin is None else {"skin": skin}
    return spec.load().raw_env(**{**spec.kwargs, **kwargs}, **extra)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray):
        return bool(np.array_equal(a, b))
    return bool(a == b)


def _texts(obs: Any) -> list[str]:
    return [obs.rules, obs.observation, obs.answer_format, *obs.legal_actions.values()]


def _leaks(spec: Any, skin: Skin, texts: list[str]) -> list[str]:
    """Canonical symbols found in ``texts``: by each category's matcher, by the word list."""
    found = []
    for text in texts:
        for table in skin._forward:
            m = table.pattern.search(text)
            if m:
                found.append(f"{table.sym.category}: {m.group(0)!r} in ...{text[:80]!r}")
        for word in CANONICAL_WORDS.get(spec.name, ()):
            if re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text, re.IGNORECASE):
                found.append(f"word {word!r} in {text[:120]!r}")
        for glyph in CANONICAL_GLYPHS.get(spec.name, ()):
            if glyph in text:
                found.append(f"glyph {glyph!r} in {text[:120]!r}")
    return found


@pytest.mark.parametrize(("spec", "skin", "seed"), CASES, ids=IDS)
def test_skinned_game_is_the_same_game(spec: Any, skin: str, seed: int) -> None:
    """(1) rule identity, (2) parse round trip, (3) no leak, on one seeded playthrough."""
    _same_game(spec, skin, seed)


#: Configurations whose names or numbers differ from the defaults'.
VARIANTS = [
    ("Hanabi", {"players": 4}),
    ("BombDefusal", {"map": "random", "num_rooms": 9, "num_agents": 4}),
    ("BombDefusal", {"colors": ("teal", "red", "gold"), "symbolic_messages": True}),
    ("CollabEscape", {"scenario": "split"}),
    ("Overcooked", {"layout": "counter_circuit", "names": ("Ann", "Ben")}),
    ("RockPaperScissors", {"action_names": "canonical"}),
    ("PrisonersDilemma", {"action_names": "repeated"}),
    ("BattleOfSexes", {"action_names": "nonsense"}),
    ("CoBlock", {"task_type": "goal_dependent"}),
    ("Guandan", {"language": "zh"}),
]


@pytest.mark.parametrize(("name", "kwargs"), VARIANTS, ids=[f"{g}-{k}" for g, k in VARIANTS])
def test_variants_are_the_same_game(name: str, kwargs: dict[str, Any]) -> None:
    """The same checks on configurations with other names, maps, seats and action names (in
    skin s5, which also mirrors CoBlock's x axis)."""
    _same_game(game_spec(name), "s5", 0, **kwargs)


def test_a_mirroring_skin_reflects_every_position_and_reads_answers_back() -> None:
    """CoBlock's x axis under a skin whose coin says mirror: every ``(x, y, z)`` in the text
    becomes ``(X-1-x, y, z)``; an answer's position is reflected back before the game reads it."""
    spec = game_spec("CoBlock")
    bundle = spec.load().make_bundle(skin="s5")
    skin = bundle.text.skin
    assert skin.mirrored("x") and not Skin("s1").mirrored("x")
    width = bundle.game.config.grid[0]
    assert (
        skin.render("pos=(0, 0, 1) and (4, 2, 3)")
        == f"pos=({width - 1}, 0, 1) and ({width - 5}, 2, 3)"
    )
    assert skin.read(f"break_block(pos=( {width - 1},0,1 ))") == "break_block(pos=( 0,0,1 ))"
    env = spec.load().raw_env(skin="s5")
    env.reset(seed=0)
    agent = env.agent_selection
    text = env.text_observation(agent)
    assert f"x from 0 to {width - 1}" in text.rules  # the axis' range reads the same


def _same_game(spec: Any, skin: str, seed: int, **kwargs: Any) -> None:
    canon, skinned = _env(spec, None, **kwargs), _env(spec, skin, **kwargs)
    canon.reset(seed=seed)
    skinned.reset(seed=seed)
    the_skin = skinned.bundle.text.skin
    rng = random.Random(seed)
    seen: list[str] = []
    for _ in range(STEPS):
        if not canon.agents:
            break
        agent = canon.agent_selection
        assert skinned.agent_selection == agent
        c_last, s_last = canon.last(), skinned.last()
        assert _same(c_last[0], s_last[0]), f"{agent}: vector observations differ"
        assert c_last[1:4] == s_last[1:4], f"{agent}: reward/termination/truncation differ"
        if c_last[2] or c_last[3]:
            canon.step(None)
            skinned.step(None)
            continue
        c_obs, s_obs = canon.text_observation(agent), skinned.text_observation(agent)
        assert set(c_obs.legal_actions) == set(s_obs.legal_actions)
        seen += _texts(s_obs)
        shown = list(s_obs.legal_actions)
        for i, (a, text) in enumerate(s_obs.legal_actions.items()):  # (2) every legal action
            assert skinned.parse_action(agent, text).action == a, (text, a)
            assert skinned.parse_action(agent, str(i + 1)).action == shown[i], (i, a)
        action = list(c_obs.legal_actions)[rng.randrange(len(c_obs.legal_actions))]
        said = s_obs.legal_actions[action]
        assert skinned.parse_action(agent, said).action == action
        # a labelled answer reads as the canonical game reads the canonical one
        result = skinned.parse_action(agent, f"Action: {said}")
        known = canon.parse_action(agent, f"Action: {c_obs.legal_actions[action]}")
        assert result.action == known.action, (said, result.feedback)
        seen.append(result.feedback)
        canon.step(action)
        skinned.step(action)
    assert canon.game_state == skinned.game_state
    assert _same(canon.state(), skinned.state())
    assert canon.rewards == skinned.rewards and canon.terminations == skinned.terminations
    leaks = _leaks(spec, the_skin, seen)  # (3)
    assert not leaks, leaks[:5]


@pytest.mark.parametrize("spec", GAMES, ids=lambda s: s.name)
def test_canonical_skin_is_todays_text(spec: Any) -> None:
    """(4) ``skin="canonical"`` wraps nothing and renders the same bytes at every step."""
    plain, canon = _env(spec, None), _env(spec, "canonical")
    assert not isinstance(canon.bundle.text, SkinnedText)
    assert type(canon.bundle.text) is type(plain.bundle.text)
    plain.reset(seed=3)
    canon.reset(seed=3)
    rng = random.Random(3)
    for _ in range(12):
        if not plain.agents:
            break
        agent = plain.agent_selection
        if plain.terminations[agent] or plain.truncations[agent]:
            plain.step(None)
            canon.step(None)
            continue
        a, b = plain.text_observation(agent), canon.text_observation(agent)
        assert a == b
        assert list(a.legal_actions) == list(b.legal_actions)
        action = rng.choice(list(a.legal_actions))
        plain.step(action)
        canon.step(action)


@pytest.mark.parametrize("spec", GAMES, ids=lambda s: s.name)
def test_tables_are_seeded_bijections(spec: Any) -> None:
    """(5) the same key gives the same tables and order; each table is one-to-one onto names
    that are no canonical name; a name reads back to itself, a canonical one to nothing."""
    bundle = spec.load().make_bundle(**spec.kwargs)
    symbols = skin_symbols(bundle.text)
    for key in SKINS:
        one, two = Skin(key, symbols), Skin(key, symbols)
        assert one.tables == two.tables
        assert one.order(range(50)) == two.order(range(50))
        assert sorted(one.order(range(50))) == list(range(50))
        for sym in symbols:
            table = one.tables[sym.category]
            fold = (lambda s: s) if sym.case_sensitive else str.lower
            assert list(table) == list(sym.names)
            assert len({fold(v) for v in table.values()}) == len(table)  # one-to-one
            assert not {fold(v) for v in table.values()} & {fold(n) for n in sym.names}
            assert set(table.values()) <= set(sym.pool)
    a, b = Skin("s1", symbols), Skin("s7", symbols)
    if symbols:
        assert a.tables != b.tables
    assert a.order(range(20)) != b.order(range(20))
    phrases = skin_phrases(bundle.text)
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in phrases.items())


def test_render_and_read_are_inverse_on_names() -> None:
    """A skinned name reads as its canonical one; a canonical name reads as nothing; the case
    of what is replaced is kept; numbers are renamed only in their context, lists included."""
    spec = game_spec("BombDefusal")
    bundle = apply_skin(spec.load().make_bundle(), "s1")
    skin = bundle.text.skin
    colour = skin.tables["colour"]["red"]
    room = skin.tables["room"]
    assert skin.render("Apply Red Tool") == f"Apply {colour.capitalize()} Tool"
    assert skin.read(f"Apply {colour.upper()} Tool") == "Apply RED Tool"
    assert skin.read("Apply Red Tool") == f"Apply {BLOCKED} Tool"
    assert skin.render("Round: 3. Room 3 and rooms 0, 5 and 8.") == (
        f"Round: 3. Room {room['3']} and rooms {room['0']}, {room['5']} and {room['8']}."
    )
    assert skin.read(f"go to room {room['6']}") == "go to room 6"


def test_skin_argument_is_checked() -> None:
    """Bad skins fail at construction naming the argument; the skin is recorded with the game's
    resolved arguments (and the canonical one adds nothing, so earlier hashes hold)."""
    from tom_envs.identity import resolved_env_kwargs

    spec = game_spec("Example")
    for bad in ("s0", "s1000001", "S1", "skin", "", 3, None, "s01"):
        with pytest.raises(ValueError, match="'skin'"):
            spec.load().make_bundle(skin=bad)
        with pytest.raises(ValueError, match="'skin'"):
            spec.load().raw_env(skin=bad)
    assert parse_skin("s1000000") == "s1000000" and parse_skin("canonical") == "canonical"
    assert SKIN.default == "canonical"
    assert resolved_env_kwargs(spec, {"skin": "s3"})["skin"] == "s3"
    assert "skin" not in resolved_env_kwargs(spec, {"skin": "canonical"})
    assert resolved_env_kwargs(spec, {"skin": "canonical"}) == resolved_env_kwargs(spec)
    assert skin_of(spec.load().make_bundle(skin="s2")) == "s2"


def test_a_message_keeps_the_writers_words_in_canonical_names() -> None:
    """Bomb defusal's chat: a message written in the skin is stored in canonical names, so that a
    teammate (a bot, or an agent in another skin) reads it in its own names."""
    spec = game_spec("BombDefusal")
    env = spec.load().raw_env(skin="s1")
    env.reset(seed=0)
    agent = env.agent_selection
    skin = env.bundle.text.skin
    options = env.text_observation(agent).legal_actions
    action, text = next(iter(options.items()))
    room = skin.tables["room"]["8"]
    reply = f'Action selection: {text}. Message to Team: "Meet me in Room {room}, Red is wrong"'
    result = env.parse_action(agent, reply)
    assert result.action == action
    assert result.message is not None and "Room 8" in result.message
    assert "Red" in result.message  # a canonical word the writer used stays theirs


QA_GAMES = [g.name for g in GAMES if not g.example]


@pytest.mark.parametrize("game", QA_GAMES)
def test_qa_items_in_a_skin_are_the_canonical_items_renamed(game: str) -> None:
    """(6) CoordinationQA generated in a skin: the same items (ids, scenarios, keys, option
    positions, contrast sets) as the canonical suite of the same seed; only the text differs,
    without the canonical words; the stored skin lets ``verify`` recompute the item."""
    from tom_envs.qa import generate as qg

    if game not in qg.qa_games():
        pytest.skip(f"{game} has no CoordinationQA generator")
    seed = [5, qg.stable_hash(game)]
    canon = qg.generate(game, np.random.default_rng(seed), 4)
    skinned = qg.generate(game, np.random.default_rng(seed), 4, skin="s1")
    assert [i.id for i in canon] == [i.id for i in skinned] and canon
    for c, s in zip(canon, skinned, strict=True):
        assert (c.answers, c.contrast, c.scenario, c.type, c.kind) == (
            s.answers, s.contrast, s.scenario, s.type, s.kind)  # fmt: skip
        assert c.details.get("order") == s.details.get("order")
        assert len(c.options) == len(s.options) == len(set(s.options))
        assert s.details["skin"] == "s1" and "skin" not in c.details
        texts = [s.context, s.question, *s.options]
        leaks = _leaks(game_spec(game), qg._skin_of(game, dict(s.scenario.env_kwargs), "s1"), texts)
        assert not leaks, leaks[:3]
    assert any(c.context != s.context for c, s in zip(canon, skinned, strict=True))
    assert qg.verify(skinned[0])


#: Replies built to make a renaming pass work hard: long lists after a context word, names run
#: together, glued letters, half-open parentheses, numbers with no room to go to.
ADVERSARIAL = ("room 1, " * 3000, "Red-" * 4000, "(R" * 5000, "R1R1 " * 3000, "Bobs " * 3000,
               "♥" * 8000, "红桃" * 4000, "Room " * 4000, "rooms 0, 3, and " * 1500,
               "Option J " * 3000, "\x00\ud7ff" * 3000)  # fmt: skip


@pytest.mark.parametrize("spec", GAMES, ids=lambda s: s.name)
def test_skinned_parser_never_raises_on_hostile_replies(spec: Any) -> None:
    """A skinned parser is a parser: on any reply it returns a legal action or ``None`` with
    feedback, and a long adversarial reply costs about as much as the canonical parser's."""
    import time

    env = _env(spec, "s5")
    env.reset(seed=0)
    agent = env.agent_selection
    legal = set(env.text_observation(agent).legal_actions)
    rng = np.random.default_rng(0)
    junk = ["".join(chr(int(c)) for c in rng.integers(0x20, 0x3000, size=60)) for _ in range(40)]
    for said in (*ADVERSARIAL, *junk, "", "Action:", "<action>", 7, None):
        result = env.parse_action(agent, said)
        assert result.action is None or result.action in legal
        assert result.action is not None or result.feedback.strip()
    plain = _env(spec, None)
    plain.reset(seed=0)
    for said in ADVERSARIAL[:4]:  # the skin adds a few linear passes, never a blow-up
        costs = []
        for e in (plain, env):
            t0 = time.perf_counter()
            e.parse_action(agent, said * 4)
            costs.append(time.perf_counter() - t0)
        assert costs[1] <= 20 * costs[0] + 0.5, (said[:12], costs)


def test_a_mirroring_skin_reflects_the_kitchen_and_its_directions() -> None:
    """Overcooked under a mirroring skin (s5): cells ``(x, y)`` -> ``(W-1-x, y)``, left/right and
    east/west change places in the actions' names, the prose and the drawn kitchen, the time left
    keeps its word, and an answer is read back through the same reflection."""
    spec = game_spec("Overcooked")
    bundle = spec.load().make_bundle(skin="s5")
    skin = bundle.text.skin
    assert skin.mirrored("x") and not Skin("s1").mirrored("x")
    width = bundle.text.layout.width
    assert skin.render("at cell (1, 2) facing east; move left; cooking (3 steps left)") == (
        f"at cell ({width - 2}, 2) facing west; move right; cooking (3 steps left)"
    )
    assert skin.render("o0 on the Left wall, o1 on the right wall") == (
        "o0 on the Right wall, o1 on the left wall"
    )
    env = spec.load().raw_env(skin="s5")
    env.reset(seed=0)
    agent = env.agents[0]
    legal = env.text_observation(agent).legal_actions
    # the canonical east (2) is shown as a move to the left, the canonical west (3) to the right
    assert legal[2] == "move left" and legal[3] == "move right"
    view = env.view(agent)
    assert env.bundle.text.parse_action(view, "move left").action == 2
    assert env.bundle.text.parse_action(view, "Action: west").action == 2
    # the drawn kitchen reads mirrored: each row of the grid backwards
    canon = spec.load().make_bundle().text.render_state(env.game_state)
    drawn = env.bundle.text.render_state(env.game_state)
    rows = canon.splitlines()[1:1 + len(bundle.text.layout.grid)]
    assert drawn.splitlines()[1:1 + len(rows)] == [r[::-1] for r in rows]


@pytest.mark.parametrize(("name", "word"), [("CollabCapture", "thief"), ("CollabEscape", "killer")])
def test_room_games_rename_the_adversarys_role(name: str, word: str) -> None:
    """The thief and the killer are renamed like the players: no text of the skinned game names
    the canonical role, and the new word is the skin's table entry, everywhere the role appears."""
    env = game_spec(name).load().raw_env(skin="s1")
    env.reset(seed=0)
    text = env.text_observation(env.agents[0])
    new = env.bundle.text.skin.tables["role"][word]
    blob = f"{text.rules}\n{text.observation}"
    assert word not in blob.lower() and new in blob.lower()
    canon = game_spec(name).load().raw_env()
    canon.reset(seed=0)
    c_text = canon.text_observation(canon.agents[0])
    assert f"{c_text.rules}\n{c_text.observation}".lower().count(word) == blob.lower().count(new)


def test_hanabi_card_slots_are_renamed_and_a_canonical_slot_reads_as_nothing() -> None:
    """Hanabi's card slots under a skin: ``Card 0`` becomes ``Card <word>`` everywhere (the
    listing keeps the hand's order), a skinned slot name plays that slot, and the canonical
    ``play 2`` is refused (the disguise cannot be bypassed by the memorised numbering)."""
    env = game_spec("Hanabi").load().raw_env(skin="s1")
    env.reset(seed=0)
    agent = env.agent_selection
    text = env.text_observation(agent)
    slots = env.bundle.text.skin.tables["slot"]
    hand = env.bundle.game.config.cards_per_hand
    assert "Card 0" not in text.observation and f"Card {slots['0']} could be" in text.observation
    mine = [line for line in text.observation.splitlines() if line.startswith("Card ")]
    assert mine == [line for line in mine if line.split()[1] in slots.values()]
    assert [line.split()[1] for line in mine] == [slots[str(i)] for i in range(hand)]
    view = env.view(agent)
    parse = env.bundle.text.parse_action
    assert parse(view, f"Play my Card {slots['2']}").action == hand + 2
    assert not parse(view, "play 2").valid
