"""A study is a file: its TOML format, read into frozen values and checked in full.

A study file is untrusted (:mod:`tom_envs.core.trust`): it names games and their arguments (checked
as a file's: :func:`tom_envs.core.params.validate_kwargs` with ``source="file"``), partners from the
allow-list (a game's bots by name, ``population:NAME``, ``random``, installed agent plugins with the
options a file may set), and, for anything that reaches a host, reads a checkpoint outside the
folder or names code, the *name* of an operator preset given on the command line
(``tom-envs study serve FILE --partner gpt=llm:model=M:base_url=URL``). It never names code, a
host or a file outside the working folder. Texts (consent, instructions, survey items) are shown
as text, never as HTML. Every problem is a :class:`StudyError` naming the key and what is allowed.

The format (every table but ``[study]``, ``[[games]]`` and ``[[conditions]]`` is optional)::

    [study]         name, version, title, description
    [consent]       text, agree, decline
    [instructions]  text
    [assignment]    design = "within" | "between", order = "counterbalanced" | "blocked" |
                    "random", seed, episodes_per_condition
    [matching]      wait_seconds, leave_grace_seconds, idle_seconds
    [[games]]       name, game, kwargs, seat, seed, instructions, seconds_per_decision,
                    [games.practice] episodes, partner, kwargs, seed
    [[conditions]]  name, partner ("human", a bot, "preset:NAME", {llm = PRESET, endpoint = NAME},
                    "zoo:NAME": a member of the game's partner zoo), and for "human": people, others,
                    wait_seconds, fallback, on_leave
    [[survey.episode]], [[survey.end]]   id, kind = "likert" | "choice" | "text", text, scale /
                    options, required, max_chars
    [[attention]]   id, kind, text, options / scale, answer, after_episode | at = "end"
    [screening]     max_attention_failures, on_fail = "continue" | "end", message
    [completion]    code ("unique": one per participant), message

``docs/study.md`` is the reference with a complete example.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "Attention",
    "Condition",
    "GameEntry",
    "Item",
    "Partner",
    "Practice",
    "Study",
    "StudyError",
    "load_study",
    "parse_study",
]

TEXT_MAX = 20_000
SEED_MAX = 2**32 - 1
DESIGNS = ("within", "between")
ORDERS = ("counterbalanced", "blocked", "random")
KINDS = ("likert", "choice", "text")
_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")
_ID = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,39}")
_CODE = re.compile(r"[A-Za-z0-9_-]{4,40}")


class StudyError(ValueError):
    """A study file that cannot be run: the message names the key and what is allowed."""


@dataclass(frozen=True)
class Partner:
    """Who fills the other seats of a condition.

    ``kind`` is ``"human"`` (other people, matched in a waiting room), ``"agent"`` (an allow-listed
    spec from the file: ``spec``), ``"preset"`` (the operator's preset ``name``), ``"llm"`` (the
    LLM protocol preset ``llm`` on the operator's endpoint preset ``name``) or ``"zoo"`` (a
    member of the game's partner zoo, :mod:`tom_envs.zoo`: ``name``).
    """

    kind: str
    spec: str = ""
    name: str = ""
    llm: str = ""

    def describe(self) -> str:
        """In words, for the plan and the dataset card."""
        return {"human": "another person", "agent": f"the agent {self.spec}",
                "preset": f"the operator's partner {self.name!r}",
                "llm": f"an LLM with the {self.llm} protocol on the operator's endpoint "
                       f"{self.name!r}", "zoo": f"the zoo partner {self.name}"}[self.kind]  # fmt: skip


@dataclass(frozen=True)
class Practice:
    """Practice rounds before a game's episodes (recorded, flagged as practice)."""

    episodes: int
    partner: Partner
    kwargs: Mapping[str, Any]
    seed: int


@dataclass(frozen=True)
class GameEntry:
    """One game of the study: its registered game, arguments, the person's seat and seeds."""

    name: str
    game: str
    kwargs: Mapping[str, Any]
    seat: int
    seed: int
    instructions: str
    seconds_per_decision: float
    practice: Practice | None


@dataclass(frozen=True)
class Condition:
    """One partner condition. For people (``partner.kind == "human"``): how many people share an
    episode, who fills the remaining seats, the waiting room's limit and its fallback condition,
    and what happens when a person leaves mid-game (``"end"`` or an agent spec takes the seat)."""

    name: str
    partner: Partner
    people: int = 1
    others: str = ""
    wait_seconds: float = 120.0
    fallback: str | None = None
    on_leave: str = "end"


@dataclass(frozen=True)
class Item:
    """A survey item: a Likert scale (its labels, left to right), a choice, or free text."""

    id: str
    kind: str
    text: str
    options: tuple[str, ...] = ()
    required: bool = True
    max_chars: int = 2000


@dataclass(frozen=True)
class Attention:
    """An attention check: an item with a correct ``answer``, asked after the participant's
    ``after_episode``-th episode (1-based) or at the end (``after_episode = 0``)."""

    item: Item
    answer: str
    after_episode: int


@dataclass(frozen=True)
class Study:
    """A whole study (see the module docstring for the file format)."""

    name: str
    version: int
    title: str
    description: str
    consent: str
    agree: str
    decline: str
    instructions: str
    design: str
    order: str
    seed: int
    episodes_per_condition: int
    wait_seconds: float
    leave_grace_seconds: float
    idle_seconds: float
    games: tuple[GameEntry, ...]
    conditions: tuple[Condition, ...]
    survey_episode: tuple[Item, ...]
    survey_end: tuple[Item, ...]
    attention: tuple[Attention, ...]
    max_attention_failures: int
    on_attention_fail: str
    screen_message: str
    completion_code: str
    completion_message: str
    source: str = field(default="", compare=False)

    def condition(self, name: str) -> Condition:
        """The condition called ``name``."""
        for c in self.conditions:
            if c.name == name:
                return c
        raise KeyError(name)

    def game(self, name: str) -> GameEntry:
        """The game entry called ``name``."""
        for g in self.games:
            if g.name == name:
                return g
        raise KeyError(name)


# ------------------------------------------------------------------ reading
def load_study(path: str | Path) -> Study:
    """Read and check the structure of a study file (:func:`parse_study`); the partners and game
    arguments are checked against the operator's presets by
    :func:`tom_envs.serve.study.check.check_study`."""
    p = Path(path)
    try:
        raw = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise StudyError(f"{p}: cannot read the study file ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise StudyError(f"{p}: not UTF-8 text") from None
    return parse_study(raw, str(p))


def parse_study(text: str, where: str = "study") -> Study:
    """A :class:`Study` from TOML text; :class:`StudyError` names the first problem."""
    if len(text) > 1_000_000:
        raise StudyError(f"{where}: {len(text):,} characters; a study file holds at most 1,000,000")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise StudyError(f"{where}: malformed TOML: {exc}") from None
    r = _Reader(where)
    r.keys(data, "", {"study", "consent", "instructions", "assignment", "matching", "games",
                      "conditions", "survey", "attention", "screening", "completion"},
           {"study", "games", "conditions"})  # fmt: skip
    head = r.table(data, "study", {"name", "version", "title", "description"}, {"name"})
    consent = r.table(data, "consent", {"text", "agree", "decline"}, set())
    assign = r.table(data, "assignment", {"design", "order", "seed", "episodes_per_condition"}, set())
    match = r.table(data, "matching", {"wait_seconds", "leave_grace_seconds", "idle_seconds"}, set())
    screen = r.table(data, "screening", {"max_attention_failures", "on_fail", "message"}, set())
    done = r.table(data, "completion", {"code", "message"}, set())
    wait = r.number(match, "matching.wait_seconds", 120.0, 1, 3600)
    games = tuple(r.game(g, f"games[{i}]") for i, g in enumerate(r.array(data, "games", 1, 20)))
    conditions = tuple(r.condition(c, f"conditions[{i}]", wait)
                       for i, c in enumerate(r.array(data, "conditions", 1, 20)))  # fmt: skip
    survey = r.table(data, "survey", {"episode", "end"}, set())
    study = Study(
        name=r.name(head.get("name"), "study.name"),
        version=r.integer(head, "study.version", 1, 1, 1_000_000),
        title=r.text(head.get("title", ""), "study.title", 200),
        description=r.text(head.get("description", ""), "study.description"),
        consent=r.text(consent.get("text", ""), "consent.text"),
        agree=r.text(consent.get("agree", "I agree to take part"), "consent.agree", 200),
        decline=r.text(consent.get("decline", "I do not agree"), "consent.decline", 200),
        instructions=r.text(r.table(data, "instructions", {"text"}, set()).get("text", ""),
                            "instructions.text"),
        design=r.choice(assign, "assignment.design", DESIGNS, "within"),
        order=r.choice(assign, "assignment.order", ORDERS, "counterbalanced"),
        seed=r.integer(assign, "assignment.seed", 0, 0, SEED_MAX),
        episodes_per_condition=r.integer(assign, "assignment.episodes_per_condition", 1, 1, 100),
        wait_seconds=wait,
        leave_grace_seconds=r.number(match, "matching.leave_grace_seconds", 60.0, 1, 3600),
        idle_seconds=r.number(match, "matching.idle_seconds", 600.0, 10, 86400),
        games=games,
        conditions=conditions,
        survey_episode=tuple(r.item(x, f"survey.episode[{i}]")
                             for i, x in enumerate(r.array(survey, "episode", 0, 50, "survey."))),
        survey_end=tuple(r.item(x, f"survey.end[{i}]")
                         for i, x in enumerate(r.array(survey, "end", 0, 50, "survey."))),
        attention=tuple(r.attention(x, f"attention[{i}]")
                        for i, x in enumerate(r.array(data, "attention", 0, 20))),
        max_attention_failures=r.integer(screen, "screening.max_attention_failures", 0, 0, 20),
        on_attention_fail=r.choice(screen, "screening.on_fail", ("continue", "end"), "continue"),
        screen_message=r.text(screen.get("message", "Thank you for your time. This study has "
                                         "ended for you."), "screening.message"),
        completion_code=r.code(done.get("code", "unique"), "completion.code"),
        completion_message=r.text(done.get("message", "Thank you! Your completion code is "
                                           "below."), "completion.message"),
        source=text,
    )
    _cross_checks(study, where)
    return study


def _cross_checks(study: Study, where: str) -> None:
    """Names unique, fallbacks point at conditions played by agents, ids unique."""
    for what, names in (("games", [g.name for g in study.games]),
                        ("conditions", [c.name for c in study.conditions])):  # fmt: skip
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise StudyError(f"{where}: {what} names must be unique, {dup} repeat")
    by_name = {c.name: c for c in study.conditions}
    for c in study.conditions:
        if c.fallback is None:
            continue
        target = by_name.get(c.fallback)
        if target is None:
            raise StudyError(f"{where}: conditions {c.name!r}: fallback {c.fallback!r} is not a "
                             f"condition; conditions: {sorted(by_name)}")  # fmt: skip
        if target.partner.kind == "human":
            raise StudyError(f"{where}: conditions {c.name!r}: fallback {c.fallback!r} must be "
                             "played with agents (it starts at once when nobody comes)")  # fmt: skip
    items = [i.id for i in (*study.survey_episode, *study.survey_end)]
    items += [a.item.id for a in study.attention]
    dup = sorted({i for i in items if items.count(i) > 1})
    if dup:
        raise StudyError(f"{where}: survey and attention item ids must be unique, {dup} repeat")
    episodes = study.episodes_per_condition * len(study.games)
    episodes *= 1 if study.design == "between" else len(study.conditions)
    for a in study.attention:
        if a.after_episode > episodes:
            raise StudyError(f"{where}: attention {a.item.id!r}: after_episode {a.after_episode} "
                             f"but a participant plays {episodes} episodes")  # fmt: skip


class _Reader:
    """Typed access to parsed TOML, every error naming the key (``games[0].kwargs``)."""

    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, key: str, msg: str) -> StudyError:
        return StudyError(f"{self.where}: {key}: {msg}")

    def keys(self, data: Mapping[str, Any], key: str, allowed: set[str], required: set[str]) -> None:
        unknown = sorted(set(data) - allowed)
        missing = sorted(required - set(data))
        if unknown or missing:
            raise self.fail(key or "(top level)", f"unknown keys {unknown}, missing {missing}; "
                            f"allowed: {sorted(allowed)}")  # fmt: skip

    def table(self, data: Mapping[str, Any], key: str, allowed: set[str],
              required: set[str]) -> dict[str, Any]:  # fmt: skip
        value = data.get(key, {})
        if not isinstance(value, dict):
            raise self.fail(key, "expected a table")
        self.keys(value, key, allowed, required)
        return value

    def array(self, data: Mapping[str, Any], key: str, lo: int, hi: int,
              prefix: str = "") -> list[dict[str, Any]]:  # fmt: skip
        value = data.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            raise self.fail(prefix + key, f"expected [[{prefix}{key}]] tables")
        if not lo <= len(value) <= hi:
            raise self.fail(prefix + key, f"{len(value)} entries; allowed {lo} to {hi}")
        return value

    def text(self, value: object, key: str, limit: int = TEXT_MAX) -> str:
        if not isinstance(value, str):
            raise self.fail(key, f"expected text, got {type(value).__name__}")
        if len(value) > limit or "\x00" in value:
            raise self.fail(key, f"text of at most {limit:,} characters without NUL")
        return value

    def name(self, value: object, key: str) -> str:
        if not isinstance(value, str) or not _NAME.fullmatch(value):
            raise self.fail(key, f"{str(value)[:60]!r} is not a name: use lowercase letters, "
                            "digits, '_' and '-' (at most 40)")  # fmt: skip
        return value

    def integer(self, data: Mapping[str, Any], key: str, default: int, lo: int, hi: int) -> int:
        value = data.get(key.rsplit(".", 1)[-1], default)
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise self.fail(key, f"expected a whole number in [{lo:,}, {hi:,}], got {value!r}")
        return value

    def number(self, data: Mapping[str, Any], key: str, default: float, lo: float,
               hi: float) -> float:  # fmt: skip
        value = data.get(key.rsplit(".", 1)[-1], default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not lo <= value <= hi:
            raise self.fail(key, f"expected a number in [{lo:g}, {hi:g}], got {value!r}")
        return float(value)

    def choice(self, data: Mapping[str, Any], key: str, allowed: Sequence[str], default: str) -> str:
        value = data.get(key.rsplit(".", 1)[-1], default)
        if value not in allowed:
            raise self.fail(key, f"{str(value)[:60]!r}; allowed: {', '.join(allowed)}")
        return str(value)

    def code(self, value: object, key: str) -> str:
        if not isinstance(value, str) or not (value == "unique" or _CODE.fullmatch(value)):
            raise self.fail(key, "\"unique\" (one code per participant) or 4 to 40 letters, "
                            "digits, '_' or '-'")  # fmt: skip
        return value

    def kwargs(self, value: object, key: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(key, "expected a table of game arguments")
        return dict(value)

    def partner(self, value: object, key: str, human_ok: bool) -> Partner:
        if isinstance(value, dict):
            self.keys(value, key, {"llm", "endpoint"}, {"llm", "endpoint"})
            llm, endpoint = value["llm"], value["endpoint"]
            if not all(isinstance(v, str) and _ID.fullmatch(v.replace("-", "_")) for v in
                       (llm, endpoint)):  # fmt: skip
                raise self.fail(key, "llm and endpoint are names (a protocol preset and one of the "
                                "operator's --partner presets)")  # fmt: skip
            return Partner("llm", name=endpoint, llm=llm)
        if not isinstance(value, str) or not value or len(value) > 300:
            raise self.fail(key, "expected \"human\", an agent name, \"preset:NAME\" or "
                            "{llm = PRESET, endpoint = NAME}")  # fmt: skip
        if value == "human":
            if not human_ok:
                raise self.fail(key, "practice rounds are played with agents, not \"human\"")
            return Partner("human")
        for prefix, kind in (("preset:", "preset"), ("zoo:", "zoo")):
            if value.startswith(prefix):
                return Partner(kind, name=value[len(prefix):])
        return Partner("agent", spec=value)

    def game(self, g: dict[str, Any], key: str) -> GameEntry:
        self.keys(g, key, {"name", "game", "kwargs", "seat", "seed", "instructions",
                           "seconds_per_decision", "practice"}, {"name", "game"})  # fmt: skip
        practice = None
        if "practice" in g:
            p = self.table(g, "practice", {"episodes", "partner", "kwargs", "seed"}, {"partner"})
            practice = Practice(self.integer(p, f"{key}.practice.episodes", 1, 1, 10),
                                self.partner(p["partner"], f"{key}.practice.partner", False),
                                self.kwargs(p.get("kwargs", g.get("kwargs", {})),
                                            f"{key}.practice.kwargs"),
                                self.integer(p, f"{key}.practice.seed", 10_000, 0, SEED_MAX))  # fmt: skip
        if not isinstance(g["game"], str) or len(g["game"]) > 100:
            raise self.fail(f"{key}.game", "expected a registered game's name")
        return GameEntry(self.name(g["name"], f"{key}.name"), g["game"],
                         self.kwargs(g.get("kwargs", {}), f"{key}.kwargs"),
                         self.integer(g, f"{key}.seat", 0, 0, 15),
                         self.integer(g, f"{key}.seed", 0, 0, SEED_MAX - 100),
                         self.text(g.get("instructions", ""), f"{key}.instructions"),
                         self.number(g, f"{key}.seconds_per_decision", 5.0, 0.5, 600), practice)  # fmt: skip

    def condition(self, c: dict[str, Any], key: str, wait: float) -> Condition:
        self.keys(c, key, {"name", "partner", "people", "others", "wait_seconds", "fallback",
                           "on_leave"}, {"name", "partner"})  # fmt: skip
        partner = self.partner(c["partner"], f"{key}.partner", True)
        human_only = sorted(k for k in ("people", "others", "wait_seconds", "fallback", "on_leave")
                            if k in c)  # fmt: skip
        if partner.kind != "human" and human_only:
            raise self.fail(key, f"{human_only} apply only to partner = \"human\"")
        fallback = c.get("fallback")
        if fallback is not None and not isinstance(fallback, str):
            raise self.fail(f"{key}.fallback", "expected a condition's name")
        for k in ("others", "on_leave"):
            if k in c and (not isinstance(c[k], str) or not c[k] or len(c[k]) > 300):
                raise self.fail(f"{key}.{k}", "expected an agent name" +
                                (" or \"end\"" if k == "on_leave" else ""))  # fmt: skip
        return Condition(self.name(c["name"], f"{key}.name"), partner,
                         self.integer(c, f"{key}.people", 0, 0, 16) if "people" in c else 0,
                         c.get("others", ""), self.number(c, f"{key}.wait_seconds", wait, 1, 3600),
                         fallback, c.get("on_leave", "end"))  # fmt: skip

    def item(self, x: dict[str, Any], key: str, extra: set[str] = frozenset()) -> Item:  # type: ignore[assignment]
        self.keys(x, key, {"id", "kind", "text", "scale", "options", "required", "max_chars",
                           *extra}, {"id", "kind", "text"})  # fmt: skip
        if not isinstance(x["id"], str) or not _ID.fullmatch(x["id"]):
            raise self.fail(f"{key}.id", "a letter, then letters, digits or '_' (at most 40)")
        kind = self.choice(x, f"{key}.kind", KINDS, "text")
        options = x.get("scale" if kind == "likert" else "options", [])
        if kind != "text":
            lo = 2
            if (not isinstance(options, list) or not lo <= len(options) <= 11
                    or not all(isinstance(o, str) and 0 < len(o) <= 200 for o in options)
                    or len(set(options)) != len(options)):  # fmt: skip
                what = "scale" if kind == "likert" else "options"
                raise self.fail(f"{key}.{what}", "2 to 11 distinct labels of at most 200 characters")
        required = x.get("required", True)
        if not isinstance(required, bool):
            raise self.fail(f"{key}.required", "true or false")
        return Item(x["id"], kind, self.text(x["text"], f"{key}.text", 2000), tuple(options),
                    required, self.integer(x, f"{key}.max_chars", 2000, 1, 20_000))  # fmt: skip

    def attention(self, x: dict[str, Any], key: str) -> Attention:
        item = self.item({k: v for k, v in x.items() if k not in ("answer", "after_episode", "at")},
                         key)  # fmt: skip
        self.keys(x, key, {"id", "kind", "text", "scale", "options", "required", "max_chars",
                           "answer", "after_episode", "at"}, {"id", "kind", "text", "answer"})  # fmt: skip
        if item.kind == "text" or x["answer"] not in item.options:
            raise self.fail(f"{key}.answer", "an attention check is a likert or choice item whose "
                            "answer is one of its labels")  # fmt: skip
        if ("at" in x) == ("after_episode" in x) or x.get("at", "end") != "end":
            raise self.fail(key, "give either after_episode = N or at = \"end\"")
        after = self.integer(x, f"{key}.after_episode", 0, 1, 10_000) if "after_episode" in x else 0
        return Attention(Item(item.id, item.kind, item.text, item.options, True), x["answer"], after)
