"""The one golden-playthrough generator and format, for every registered game.

:func:`generate` plays one seeded episode with named agents (a game's bots, ``random``, ...)
through the project's episode driver (:class:`tom_envs.driver.EpisodeDriver`, the loop behind
:func:`tom_envs.runner.play_episode` and ``tom-envs run``) and writes it as text. It stops before
every seated decision (:meth:`EpisodeDriver.advance_until`) only to read what the acting seat is
shown; the moves, rewards, probes and metrics are the driver's own records.
``tests/test_golden.py`` compares the text with ``tests/golden/<GameName>.txt`` and
:func:`parse` reads a golden file back (the per-game fact tests check golden files by the rules).

Format (UTF-8, ``\\n`` line ends; it depends only on the game, its arguments, the agents and the
seed: no times, paths, hashes or versions)::

    # tom-envs golden playthrough (tests/golden.py)
    env: tom_envs/<Name>-v<N>
    kwargs: {...}                 the game's arguments as given: registered + the case's (JSON,
                                  sorted keys); a shortened episode shows it here (horizon, ...)
    seed: 0
    agents: player_0=<spec> player_1=<spec> ...
    note: <why these arguments>   only when the case gives one

    state at the start:           the whole state as spectator text (the game's render_state),
      | <line>                    each line marked "  |" (+ " " and the line when not empty)

    == <i> player_k (joint step <t>) ==     one block per decision, in play order
    rules: ...                    the rules prompt                       (a text block, below)
    observation: ...              the text observation an LLM agent is shown       (a text block)
    legal (<n>): ...              the n legal actions, "<id>: <action text>"       (a text block)
    probes: ...                   the ToM probes put to the seat now, one a line:  (a text block)
                                  "<id> = <truth>" [" (no-ToM <answer>)"] [", answered <reply>
                                  (correct|wrong)"] ": <question>" [" [options: a|b|c]"]
                                  (games whose probes are asked at the decision)
    action: <id> <action text>
    message: "<chat>"             when the agent sent one (JSON string)   (+ message_error: ...)
    prediction: {...}             when the agent made one (JSON, sorted keys)
    info: {...}                   when the agent recorded any (JSON, sorted keys)
    fallback: <kind>: <message>   when the move played is a fallback, not the agent's own
    rewards: player_0=+1 ...      when the move completed a joint action (every seat's reward)
    probes after the action: ...  the ToM probes put to the seat right after its move, with the
                                  truths of that moment (games whose probes are asked then, e.g.
                                  bomb defusal; a text block, lines as for probes)

    state at joint step <t>:      before the first decision of every render_every-th joint step,
      | <line>                    when the case asks (a blank line before it)

    == end ==
    state at the end:
      | <line>
    probes after the end, player_k:   what the seat would be asked now, when there are any
      | <probe line>                   (games whose probes are asked at the decision)
    returns: player_0=+1 ...
    length: <joint steps>
    status: ok | failed           (+ failure: <reason>)
    decisions: player_0=<n> ...
    fallbacks: player_0=<n> ...
    members: player_0=<bot> ...   the members population seats drew, when any
    metrics:                      every metric of the episode, sorted: "  <key>: <value>"

Text blocks are per seat. A seat's first ``rules``, ``observation``, ``legal`` and ``probes`` are
written in full (``<label>:`` and ``  |`` lines; ``rules: as player_j's`` when the same rules were
written in full for player_j first). After that each is written as what changed since the same
seat's previous one: ``<label> changed:`` and hunks ``  @@ -<a>,<n> +<b>,<m> @@`` (the ``n``
previous lines from line ``a`` are replaced by the ``m`` lines marked ``  +`` that follow, lines
``b``.. of the new text; 1-based), or ``<label>: unchanged``; unchanged rules are not mentioned.
:func:`parse` rebuilds every text. Numbers have up to 6 significant digits (rewards and returns
signed); ``-0`` is written ``0``.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tom_envs.agents import make_agent
from tom_envs.core.agents import Agent
from tom_envs.core.probes import probe_moment
from tom_envs.core.render import spectator_text
from tom_envs.driver import EpisodeDriver
from tom_envs.registration import GAMES, GameSpec, game_spec
from tom_envs.runner import Episode

#: Where the golden files live: ``tests/golden/<GameName>.txt``.
GOLDEN_DIR = Path(__file__).with_name("golden")
#: Set to ``1`` to (re)write the golden files; the test run then fails, naming what it wrote.
REGEN_ENV = "TOM_ENVS_REGEN_GOLDEN"
#: Arguments of the env, not of the rules (not passed to ``make_bundle``).
_ENV_LEVEL = ("max_cycles", "render_mode")
HEADER = "# tom-envs golden playthrough (tests/golden.py)"
#: The per-seat text blocks of a decision (written in full once, then as changes).
TEXT_BLOCKS = ("rules", "observation", "legal", "probes", "probes after the action")


@dataclass(frozen=True)
class GoldenCase:
    """One golden playthrough: a registered game, its agents, seed and arguments.

    Attributes:
        game: the registered game's name (``GameSpec.name``).
        agents: one agent spec per seat (``tom_envs.agents.make_agent``).
        seed: the episode seed.
        kwargs: overrides of the game's registered keyword arguments.
        render_every: also write the whole state every this many joint steps (0: start and end
            only).
        note: why the arguments differ from the registered ones (written in the header).
    """

    game: str
    agents: tuple[str, ...]
    seed: int = 0
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    render_every: int = 0
    note: str = ""

    @property
    def spec(self) -> GameSpec:
        """The registered game."""
        return game_spec(self.game)

    @property
    def path(self) -> Path:
        """``tests/golden/<GameName>.txt``."""
        return GOLDEN_DIR / f"{self.spec.name}.txt"


def default_case(spec: GameSpec) -> GoldenCase:
    """The case of a game the table does not list: seed 0, its demo agents (repeated to fill the
    seats, ``random`` without any), its registered arguments."""
    n = spec.load().make_bundle(**spec.kwargs).game.num_players
    names = list(spec.demo_agents) or ["random"]
    return GoldenCase(spec.name, tuple((names * n)[:n]))


def registered_names() -> list[str]:
    """Every registered game name, in registry order."""
    return [s.name for s in GAMES]


# ------------------------------------------------------------------------------- playing
@dataclass
class Decision:
    """What one seated decision showed (read before the move) and did (the driver's record)."""

    agent: str
    joint_step: int
    observation: str
    rules: str
    legal: dict[int, str]
    probes: list[dict[str, Any]]  # score_answers records (reply None: not asked)
    state_before: str | None = None  # the whole state, when rendered before this decision
    record: dict[str, Any] = field(default_factory=dict)  # the driver's step record
    probes_after: list[dict[str, Any]] = field(default_factory=list)  # asked right after the move


@dataclass
class Playthrough:
    """One played case: its decisions, the driver's episode, and the end."""

    case: GoldenCase
    env_kwargs: dict[str, Any]
    decisions: list[Decision]
    episode: Episode
    start_state: str
    end_state: str
    end_probes: dict[str, list[dict[str, Any]]]


def _probe_records(probes: Sequence[Any]) -> list[dict[str, Any]]:
    from tom_envs.core.probes import score_answers

    return [r | {"reply": None, "correct": None} for r in score_answers(probes, {})]


def make_agents(case: GoldenCase) -> list[Agent]:
    """The case's agents, built for the configured game (as ``tom-envs run`` builds them)."""
    spec = case.spec
    given = {**spec.kwargs, **case.kwargs}
    bundle = spec.load().make_bundle(**{k: v for k, v in given.items() if k not in _ENV_LEVEL})
    return [make_agent(a, spec, bundle) for a in case.agents]


def play(case: GoldenCase) -> Playthrough:
    """Play ``case`` through the episode driver, keeping what every decision showed."""
    spec = case.spec
    given = {**spec.kwargs, **case.kwargs}
    agents = make_agents(case)
    driver = EpisodeDriver(spec, agents, case.seed, dict(case.kwargs), record_text=True)
    env = driver.env
    peeked: list[tuple[str, int] | None] = [None]

    def stop(agent: str) -> bool:  # stop once before each seated decision, then let it play
        key = (agent, len(driver.steps))
        if peeked[0] == key:
            return False
        peeked[0] = key
        return True

    driver.start()
    start_state = spectator_text(env.bundle, env.game_state)
    decisions: list[Decision] = []
    after_action = probe_moment(env.bundle.probes) == "action"
    while True:
        agent = driver.advance_until(stop)
        if after_action and decisions:  # the state the previous move left, nothing since
            decisions[-1].probes_after = _probe_records(env.probes(decisions[-1].agent))
        if agent is None:
            break
        turn = driver.turn(agent)
        text = env.text_observation(agent)
        if sorted(text.legal_actions) != sorted(turn.legal_actions):
            raise AssertionError(f"{agent}: the legal action texts are not the view's legal set")
        t = driver.joint_steps
        first_of_step = not decisions or decisions[-1].joint_step != t
        state = None
        if case.render_every and t and t % case.render_every == 0 and first_of_step:
            state = spectator_text(env.bundle, env.game_state)
        probes = [] if after_action else _probe_records(env.probes(agent))
        decisions.append(
            Decision(
                agent, t, text.observation, text.rules, dict(text.legal_actions), probes, state
            )
        )
    episode = driver.finish()
    if len(episode.steps) != len(decisions):
        raise AssertionError("the driver recorded another number of decisions than it was asked")
    for d, rec in zip(decisions, episode.steps, strict=True):
        if (rec["agent"], rec["joint_step"], rec["observation_text"]) != (
            d.agent,
            d.joint_step,
            d.observation,
        ):
            raise AssertionError(f"decision {rec['index']}: the record is not what was shown")
        d.record = rec
        if rec.get("probes"):  # the agent answered: the driver's records carry its replies
            if after_action:
                d.probes_after = list(rec["probes"])
            else:
                d.probes = list(rec["probes"])
    end_probes = {} if after_action else {
        a: _probe_records(env.probes(a)) for a in env.possible_agents
    }
    return Playthrough(
        case,
        given,
        decisions,
        episode,
        start_state,
        spectator_text(env.bundle, env.game_state),
        {a: p for a, p in end_probes.items() if p},
    )


# ------------------------------------------------------------------------------ writing
def num(x: float) -> str:
    """A number with up to 6 significant digits (``-0`` written ``0``)."""
    return format(float(x) + 0.0, ".6g")


def signed(x: float) -> str:
    """A reward or return: ``+1``, ``-0.5``, ``+0``."""
    return format(float(x) + 0.0, "+.6g")


def _jdump(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _oneline(text: Any) -> str:
    """Free text on one line: as it is, or as a JSON string when it holds a line break."""
    text = str(text)
    return _jdump(text) if "\n" in text or "\r" in text else text


def _mark(marker: str, line: str) -> str:
    return f"  {marker}" + (f" {line}" if line else "")


def _unmark(line: str, marker: str) -> str:
    prefix = f"  {marker}"
    if not line.startswith(prefix):
        raise ValueError(f"expected a {prefix!r} line, got {line!r}")
    rest = line[len(prefix) :]
    if rest and not rest.startswith(" "):
        raise ValueError(f"malformed line {line!r}")
    return rest[1:]


def full(lines: Sequence[str]) -> list[str]:
    """Every line, marked ``  |``."""
    return [_mark("|", x) for x in lines]


def hunks(old: Sequence[str], new: Sequence[str]) -> list[str]:
    """The changes from ``old`` to ``new``: per changed run, ``@@ -a,n +b,m @@`` (``n`` lines of
    ``old`` from line ``a`` are replaced by the ``m`` lines that follow, from line ``b`` of
    ``new``; 1-based) and the new lines marked ``  +`` (the old ones are above in the file)."""
    out: list[str] = []
    matcher = difflib.SequenceMatcher(None, list(old), list(new), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        out.append(f"  @@ -{i1 + 1},{i2 - i1} +{j1 + 1},{j2 - j1} @@")
        out += [_mark("+", x) for x in new[j1:j2]]
    return out


def apply_hunks(old: Sequence[str], body: Sequence[str]) -> list[str]:
    """Rebuild the new text from the old one and :func:`hunks`' lines."""
    out: list[str] = []
    pos = 0
    k = 0
    while k < len(body):
        head = body[k].strip()
        if not (head.startswith("@@ -") and head.endswith(" @@")):
            raise ValueError(f"expected a hunk header, got {body[k]!r}")
        minus, plus = head[3:-3].split(" ")
        start, count = (int(x) for x in minus[1:].split(","))
        new_start, n_add = (int(x) for x in plus[1:].split(","))
        if start - 1 < pos or start - 1 + count > len(old):
            raise ValueError(f"hunk {head} does not apply")
        out += old[pos : start - 1]
        if len(out) != new_start - 1:
            raise ValueError(f"hunk {head} does not apply")
        pos = start - 1 + count
        out += [_unmark(x, "+") for x in body[k + 1 : k + 1 + n_add]]
        k += 1 + n_add
    return out + list(old[pos:])


class _Blocks:
    """Each seat's previous text blocks (rules, observation, legal, probes)."""

    def __init__(self) -> None:
        self.previous: dict[tuple[str, str], list[str]] = {}
        self.first_rules: dict[str, str] = {}  # rules text -> the seat that showed it first

    def write(
        self, label: str, agent: str, text_lines: list[str], quiet: bool = False, key: str = ""
    ) -> list[str]:
        """The block's lines: in full the first time, then the changes (see the module doc)."""
        old = self.previous.get((key or label, agent))
        self.previous[(key or label, agent)] = text_lines
        if old is None:
            if label == "rules":
                text = "\n".join(text_lines)
                if text in self.first_rules:
                    return [f"rules: as {self.first_rules[text]}'s"]
                self.first_rules[text] = agent
            return [f"{label}:", *full(text_lines)]
        if old == text_lines:
            return [] if quiet else [f"{label}: unchanged"]
        return [f"{label} changed:", *hunks(old, text_lines)]


def _probe_line(p: Mapping[str, Any]) -> str:
    line = f"{p['id']} = {p['truth']}"
    if p.get("no_tom") is not None:
        line += f" (no-ToM {p['no_tom']})"
    if p.get("reply") is not None or p.get("correct") is not None:
        verdict = "correct" if p.get("correct") else "wrong"
        line += f", answered {p.get('reply')!r} ({verdict})"
    line += f": {_oneline(p['question'])}"
    options = list(p.get("options") or ())
    if options != ["yes", "no"]:
        line += f" [options: {'|'.join(str(o) for o in options)}]"
    return line


def _per_seat(values: Mapping[str, Any], fmt: Callable[[Any], str]) -> str:
    return " ".join(f"{a}={fmt(v)}" for a, v in values.items())


def render(p: Playthrough) -> str:
    """The golden text of a playthrough (see the module docstring)."""
    case, ep = p.case, p.episode
    out = [
        HEADER,
        f"env: {case.spec.id}",
        f"kwargs: {_jdump(p.env_kwargs)}",
        f"seed: {case.seed}",
        "agents: " + " ".join(f"player_{i}={a}" for i, a in enumerate(case.agents)),
    ]
    if case.note:
        out.append(f"note: {case.note}")
    out += ["", "state at the start:", *full(p.start_state.split("\n"))]
    blocks = _Blocks()
    for d in p.decisions:
        r = d.record
        agent = r["agent"]
        if d.state_before is not None:
            out += [
                "",
                f"state at joint step {r['joint_step']}:",
                *full(d.state_before.split("\n")),
            ]
        out += ["", f"== {r['index']} {agent} (joint step {r['joint_step']}) =="]
        out += blocks.write("rules", agent, d.rules.split("\n"), quiet=True)
        out += blocks.write("observation", agent, r["observation_text"].split("\n"))
        legal = [f"{a}: {_oneline(t)}" for a, t in sorted(d.legal.items())]
        out += blocks.write(f"legal ({len(legal)})", agent, legal, key="legal")
        if d.probes or ("probes", agent) in blocks.previous:
            out += blocks.write("probes", agent, [_probe_line(x) for x in d.probes])
        out.append(f"action: {r['action']} {_oneline(r['action_text'])}")
        if r.get("message") is not None:
            out.append(f"message: {_jdump(r['message'])}")
        if r.get("message_error"):
            out.append(f"message_error: {_oneline(r['message_error'])}")
        if r.get("prediction") is not None:
            out.append(f"prediction: {_jdump(r['prediction'])}")
        if r.get("info"):
            out.append(f"info: {_jdump(r['info'])}")
        if r.get("fallback"):
            failure = r.get("failure") or {}
            out.append(f"fallback: {failure.get('kind')}: {_oneline(failure.get('message'))}")
        if r.get("probe_error"):
            out.append(f"probe_error: {_oneline(r['probe_error'])}")
        if r.get("rewards") is not None:
            out.append(f"rewards: {_per_seat(r['rewards'], signed)}")
        if d.probes_after or ("probes after the action", agent) in blocks.previous:
            lines = [_probe_line(x) for x in d.probes_after]
            out += blocks.write("probes after the action", agent, lines)
    out += ["", "== end ==", "state at the end:", *full(p.end_state.split("\n"))]
    for agent, probes in p.end_probes.items():
        out += [f"probes after the end, {agent}:", *full([_probe_line(x) for x in probes])]
    out.append(f"returns: {_per_seat(ep.returns, signed)}")
    out.append(f"length: {ep.length}")
    out.append(f"status: {ep.status}")
    if ep.failure:
        out.append(f"failure: {_oneline(ep.failure)}")
    out.append(f"decisions: {_per_seat(ep.decisions, str)}")
    out.append(f"fallbacks: {_per_seat(ep.fallbacks, str)}")
    members = getattr(ep, "members", None)
    if members:
        out.append(f"members: {_per_seat(members, str)}")
    out.append("metrics:")
    for key in sorted(ep.metrics):
        value = ep.metrics[key]
        shown = num(value) if isinstance(value, (int, float)) else _oneline(value)
        out.append(f"  {key}: {shown}")
    return "\n".join(out) + "\n"


def generate(case: GoldenCase) -> str:
    """Play ``case`` and write its golden text."""
    return render(play(case))


# ------------------------------------------------------------------------------ reading
@dataclass
class GoldenDecision:
    """One decision read back from a golden file (texts rebuilt in full)."""

    index: int
    agent: str
    joint_step: int
    rules: str
    observation: str
    legal: dict[int, str]
    probes: list[str]
    action: int
    action_text: str
    fields: dict[str, str]  # message, prediction, info, fallback, rewards, ... as written
    rewards: dict[str, float] | None


@dataclass
class GoldenFile:
    """A golden file read back."""

    header: dict[str, str]
    decisions: list[GoldenDecision]
    end: dict[str, str]
    metrics: dict[str, str]

    @property
    def returns(self) -> dict[str, float]:
        """The final returns."""
        return _seat_values(self.end["returns"])


def _seat_values(text: str) -> dict[str, float]:
    return {a: float(v) for a, v in (x.split("=", 1) for x in text.split())}


def _blocks_of(lines: list[str]) -> list[tuple[str, list[str]]]:
    """``(head, body)`` pairs: each unindented line with the indented lines under it."""
    out: list[tuple[str, list[str]]] = []
    for line in lines:
        if line.startswith("  ") and out:
            out[-1][1].append(line)
        elif line:
            out.append((line, []))
    return out


def _block_label(head: str) -> tuple[str, str, bool]:
    """``(label, value, changed)`` of a decision line (``"legal (3) changed:"`` -> legal)."""
    label, _, value = head.partition(":")
    changed = label.endswith(" changed")
    label = label.removesuffix(" changed")
    if label.startswith("legal ("):
        label = "legal"
    return label, value.strip(), changed


def parse(text: str) -> GoldenFile:
    """Read a golden file written by :func:`render`, rebuilding every seat's texts."""
    chunks = text.split("\n\n== ")
    header = {}
    for head, _ in _blocks_of(chunks[0].split("\n")):
        if ": " in head and not head.startswith("#"):
            k, v = head.split(": ", 1)
            header[k] = v
    previous: dict[tuple[str, str], list[str]] = {}
    first_rules: dict[str, list[str]] = {}
    decisions: list[GoldenDecision] = []
    end: dict[str, str] = {}
    metrics: dict[str, str] = {}
    for chunk in chunks[1:]:
        title, _, rest = chunk.partition("\n")
        if title == "end ==":
            for head, body in _blocks_of(rest.split("\n")):
                if head == "metrics:":
                    metrics = dict(x.strip().split(": ", 1) for x in body)
                elif ": " in head:
                    k, v = head.split(": ", 1)
                    end[k] = v
            continue
        m = re.fullmatch(r"(\d+) (\S+) \(joint step (\d+)\) ==", title)
        if m is None:
            raise ValueError(f"malformed decision title {title!r}")
        index, agent, step = m.groups()
        texts: dict[str, list[str]] = {}
        fields: dict[str, str] = {}
        for head, body in _blocks_of(rest.split("\n")):
            label, value, changed = _block_label(head)
            if head.startswith("state at joint step "):
                continue  # the state the next decision starts from
            if label not in TEXT_BLOCKS:
                fields[label] = value
            elif changed:
                texts[label] = apply_hunks(previous[(label, agent)], body)
            elif value == "unchanged":
                texts[label] = previous[(label, agent)]
            elif value.startswith("as "):
                texts[label] = first_rules[value[3:].removesuffix("'s")]
            else:
                texts[label] = [_unmark(x, "|") for x in body]
        for label in TEXT_BLOCKS:
            if label not in texts and (label, agent) in previous:
                texts[label] = previous[(label, agent)]  # an unchanged block is not written
            if label in texts:
                previous[(label, agent)] = texts[label]
        if "rules" in texts and agent not in first_rules:
            first_rules[agent] = texts["rules"]
        action, _, action_text = fields.pop("action").partition(" ")
        legal = dict(x.split(": ", 1) for x in texts.get("legal", []))
        decisions.append(
            GoldenDecision(
                index=int(index),
                agent=agent,
                joint_step=int(step),
                rules="\n".join(texts.get("rules", [])),
                observation="\n".join(texts.get("observation", [])),
                legal={int(k): v for k, v in legal.items()},
                probes=texts.get("probes", []) or texts.get("probes after the action", []),
                action=int(action),
                action_text=action_text,
                fields=fields,
                rewards=_seat_values(fields["rewards"]) if "rewards" in fields else None,
            )
        )
    return GoldenFile(header, decisions, end, metrics)


def read(path: Path) -> GoldenFile:
    """Parse the golden file at ``path``."""
    return parse(path.read_bytes().decode("utf-8"))


def write(path: Path, text: str) -> None:
    """Write a golden file (UTF-8, ``\\n`` line ends)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


def regenerating() -> bool:
    """True when ``TOM_ENVS_REGEN_GOLDEN=1``."""
    return os.environ.get(REGEN_ENV) == "1"
