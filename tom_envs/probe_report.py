"""Is a game's probe set a valid ToM measure? The report of ``tom-envs probes verify``.

For every team the suite ships (bomb defusal: the heuristic, random and CBS bots and an LLM-like
text agent, :class:`TextChatter`), it plays three disjoint sets of missions (seeds ``seed ..
seed+N-1`` to train on, ``seed+N .. seed+2N-1`` held out, and ``fresh_seed ..`` a fresh set), asks
every seat the game's probes at their moment through the episode driver, and records each truth
with what an answerer could see without reasoning. Then, per team:

* **baselines and known groups** (:func:`tom_envs.core.probes.probe_table`): per order and per
  question type, the share of true "yes", the majority answer per type, the partner-blind answerer
  (reasons perfectly about the environment and its own knowledge, ignores the partner:
  ``Probe.no_tom``) and the exact model (models every player: the truth), with balanced accuracy
  and Cohen's kappa, and whether the type separates them (a ToM measure) or not, and why;
* **a learned no-reasoning adversary** (:mod:`tom_envs.validity`: gradient boosting and logistic
  regression) fitted on the training missions' probes and scored on the held-out missions and on
  the fresh ones. It reads only surface features: the question (its type, its words, the subject
  it names: target, room, bomb, card...), its position in the list asked, how many questions were
  asked with it and of which types (the siblings, and those about the same fact), each also
  crossed with the option. Each cell (team, question type) is scored by **balanced accuracy**
  (the mean over the true answers of the share picked right): the probes' truths are skewed, a
  constant answer scores exactly chance (``100 / k``) on it, and a shift of the answer shares
  between mission sets does not move it. Raw accuracy is printed beside it, with the accuracy of
  the type prior fitted on the same training missions. One-sided cells (every truth the same) are
  left out and named; the known groups already say they measure nothing.

**The gate** (:func:`balanced_gate`: issue #32's rule, as :func:`tom_envs.validity.gate`, on
balanced accuracy): no cell's 95% interval lies wholly at or above chance + 5 points, and every
pool (team and order) is within 3 points of chance (held to its point estimate when the pool is
large enough to resolve 3 points, to its interval otherwise). The command exits 1 when the gate fails. A
question type is reported as a ToM measure when it separates the known groups and no adversary
beats chance on it for any team.

Run: ``tom-envs probes verify`` (bomb defusal, 100 missions per set; ``--game``, ``--teams``,
``--episodes``, ``--kw``). The report says which question types are ToM measures; results pages
quote it with the command beside the figures.
"""

from __future__ import annotations

import math
import re
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tom_envs.core.agents import AgentAction, BaseAgent, EpisodeInfo, Turn
from tom_envs.core.probes import (
    ORDERS,
    Z95,
    Question,
    known_groups,
    probe_table,
    question_type,
)
from tom_envs.registration import GameSpec, game_spec

#: The teams of each game the report plays by default (each name seats every player).
DEFAULT_TEAMS: dict[str, tuple[str, ...]] = {
    "BombDefusal": ("heuristic", "random", "cbs", "text"),
    "Hanabi": ("simple", "random", "text"),
    "CoBlock": ("cooperative", "random", "text"),
    "CollabCapture": ("greedy", "random", "text"),
    "CollabEscape": ("greedy", "random", "text"),
}
#: The LLM-like text agent's name in ``--teams``.
TEXT_TEAM = "text"
#: The fresh missions' first seed.
FRESH_SEED = 1_000_000
#: The schemes the adversary is scored under.
SCHEMES = ("held-out missions", "fresh seed")


# ------------------------------------------------------------------ the LLM-like text agent
_PHRASINGS: tuple[tuple[str, Sequence[str]], ...] = (
    (r"Room (\d+) contains (Bomb \d+(?: and Bomb \d+)*)\.",
     ("found {b} in room {r}.", "room {r} has {b}.", "Room {r} contains {B}.")),
    (r"Room (\d+) has no bomb\.", ("room {r} is empty.", "no bombs in room {r}.",
                                    "Room {r} has no bomb.")),
    (r"I am in Room (\d+)\.", ("I'm in room {r}.", "I am in Room {r}.", "")),
    (r"Bomb (\d+) is defused\.", ("I defused bomb {r}!", "Bomb {r} is defused.")),
)  # fmt: skip


class TextChatter(BaseAgent):
    """An LLM-like text agent: plays through the text layer as a model would, without a model.

    Each decision it takes the move of an inner bot (the game's competent bot, or ``random``),
    writes it as a model's reply (``Action selection: Move to Room 5. Message to Team: "..."``)
    and reads it back through the game's parser (``Turn.parse``). Like a small model it sometimes
    names an action the rules refuse (``invalid`` of its replies: the driver plays its counted
    fallback, the message still goes out), rephrases its bot's canonical sentences in the free
    phrasings an LLM uses, leaves a message out, or announces a room it is not heading to (a
    false claim). Everything is drawn from the episode's generator.
    """

    name = TEXT_TEAM

    def __init__(self, inner: Any, invalid: float = 0.1, false_claims: float = 0.1) -> None:
        super().__init__()
        self.inner = inner
        self.invalid = invalid
        self.false_claims = false_claims

    def reset(self, info: EpisodeInfo) -> None:
        """Start an episode (and the inner bot's)."""
        super().reset(info)
        self.inner.reset(info)

    def act(self, turn: Turn) -> AgentAction:
        """The inner bot's move, as a model's reply read back by the game's parser."""
        choice = self.inner.act(turn)
        chosen = choice.action if isinstance(choice, AgentAction) else int(choice)
        message = choice.message if isinstance(choice, AgentAction) else None
        text = turn.text()
        rng = self.rng
        if rng.random() < self.invalid:
            action = rng.choice(["Move to Room 42", "Apply Purple Tool", "I will wait here."])
        else:
            action = text.legal_actions.get(int(chosen), str(chosen))  # type: ignore[arg-type]
        said = self._rephrase(message) if message else None
        if said is not None and rng.random() < self.false_claims:
            rooms = [int(x) for x in re.findall(r"Room (\d+)", text.observation)] or [0]
            said = f"{said} I'm heading to room {int(rng.choice(rooms)) + 3}.".strip()
        reply = f"Action selection: {action}."
        if said:
            reply += f' Message to Team: "{said}"'
        parsed = turn.parse(reply)
        if parsed.action is None:
            return AgentAction(None, valid=False, message=parsed.message or said,
                               info={"reply": reply, "feedback": parsed.feedback})  # fmt: skip
        return AgentAction(int(parsed.action), message=parsed.message, info={"reply": reply})

    def _rephrase(self, message: str) -> str | None:
        rng = self.rng
        if rng.random() < 0.2:
            return None
        out = message
        for pattern, forms in _PHRASINGS:
            def sub(m: re.Match[str], forms: Sequence[str] = forms) -> str:
                form = str(rng.choice(list(forms)))
                bombs = m.group(2).lower() if m.re.groups > 1 else ""
                return form.format(r=m.group(1), b=bombs, B=m.group(2) if m.re.groups > 1 else "")

            out = re.sub(pattern, sub, out)
        return re.sub(r"\s+", " ", out).strip() or None


class FixedProbeAnswers:
    """Seats an agent (its moves) and answers every probe by a fixed rule, :meth:`answer` (here
    the first option), so the driver asks and records the probes: their truths are what is read,
    the answers are not the agent's."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = getattr(inner, "name", "agent")

    def reset(self, info: EpisodeInfo) -> None:
        """Forward."""
        self.inner.reset(info)

    def act(self, turn: Turn) -> Any:
        """Forward."""
        return self.inner.act(turn)

    def answer(self, question: Question) -> str:
        """The answer to every probe: its first option."""
        return question.options[0]

    def answer_probes(self, turn: Turn, questions: Sequence[Question]) -> dict[str, str]:
        """:meth:`answer` for each question."""
        return {q.id: self.answer(q) for q in questions}


def team_agents(spec: GameSpec, team: str, env_kwargs: Mapping[str, Any]) -> list[Any]:
    """One agent per seat for ``team`` (a bot name, or ``"text"``: :class:`TextChatter` over the
    game's first competent bot)."""
    from tom_envs.agents import make_agent

    bundle = spec.load().make_bundle(**{**spec.kwargs, **env_kwargs})
    n = bundle.game.num_players
    if team == TEXT_TEAM:
        inner = next((t for t in DEFAULT_TEAMS.get(spec.name, ()) if t != TEXT_TEAM), "random")
        return [TextChatter(make_agent(inner, spec, bundle)) for _ in range(n)]
    return [make_agent(team, spec, bundle) for _ in range(n)]


# ------------------------------------------------------------------ records and features
@dataclass
class TeamProbes:
    """The probes a team was asked on one set of missions, one list per step (in asked order),
    with each step's mission seed."""

    team: str
    steps: list[tuple[int, list[dict[str, Any]]]] = field(default_factory=list)
    episodes: int = 0
    seconds: float = 0.0

    @property
    def records(self) -> list[dict[str, Any]]:
        """Every probe record."""
        return [r for _, rs in self.steps for r in rs]


def play_team(spec: GameSpec, team: str, seeds: Sequence[int], env_kwargs: Mapping[str, Any],
              progress: Callable[[str], None] | None = None) -> TeamProbes:  # fmt: skip
    """Play ``team`` on the missions ``seeds``; every step's probes as asked."""
    from tom_envs.driver import EpisodeDriver, FailurePolicy

    out = TeamProbes(team)
    t0 = time.perf_counter()
    policy = FailurePolicy(max_fallback_share=1.0)  # the text agent's refusals are its point
    for seed in seeds:
        agents = [FixedProbeAnswers(a) for a in team_agents(spec, team, env_kwargs)]
        ep = EpisodeDriver(spec, agents, int(seed), dict(env_kwargs), policy=policy).run()
        out.steps += [(int(seed), list(s["probes"])) for s in ep.steps if s.get("probes")]
        out.episodes += 1
    out.seconds = time.perf_counter() - t0
    if progress is not None:
        progress(f"{team}: {len(seeds)} missions, {len(out.records)} probes")
    return out


def _fact(r: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, str(v)) for k, v in (r.get("subject") or {}).items() if k != "target"))


def surface_features(step: Sequence[Mapping[str, Any]], i: int) -> dict[str, float]:
    """What a no-reasoning answerer sees of probe ``i`` of a step besides its text: its type,
    its position, the list's length, the types of its siblings (all, and those about the same
    fact), how many facts the step asks about, and the subject named (each field's value).
    :func:`examples` also crosses each with every option, so that a linear adversary can use
    it."""
    r = step[i]
    n = len(step)
    f: dict[str, float] = {
        "position": float(i),
        "position_share": i / max(n - 1, 1),
        "first": float(i == 0),
        "last": float(i == n - 1),
        "asked": float(n),
        "facts": float(len({_fact(x) for x in step})),
        "order": float(r["order"]),
        f"type={question_type(r['kind'], r['order'])}": 1.0,
    }
    fact = _fact(r)
    same = 0
    for j, other in enumerate(step):
        if j == i:
            continue
        qt = question_type(other["kind"], other["order"])
        f[f"sib={qt}"] = f.get(f"sib={qt}", 0.0) + 1.0
        if _fact(other) == fact:
            same += 1
            f[f"same_fact_sib={qt}"] = f.get(f"same_fact_sib={qt}", 0.0) + 1.0
    f["same_fact"] = float(same)
    for k, v in (r.get("subject") or {}).items():
        f[f"subject_{k}={v}"] = 1.0
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            f[f"subject_{k}"] = float(v)
    return f


def examples(probes: TeamProbes, chance: Mapping[str, float] | None = None) -> list[Any]:
    """The probes as :class:`tom_envs.validity.Example` (group: team, question type and the
    pool ``team/order``; unit: the mission). With ``chance`` (per question type), each example
    is scored against it and types absent from it are left out."""
    from tom_envs.validity import Example

    out = []
    for seed, step in probes.steps:
        for i, r in enumerate(step):
            qt = question_type(r["kind"], r["order"])
            if chance is not None and qt not in chance:
                continue
            options = tuple(str(o) for o in r["options"])
            feats = surface_features(step, i)
            out.append(
                Example(
                    group={"team": probes.team, "probe": qt,
                           "pool": f"{probes.team}/{ORDERS.get(r['order'], r['order'])}"},
                    candidates=options,
                    answer=options.index(str(r["truth"])),
                    question=str(r["question"]),
                    chance=None if chance is None else chance[qt],
                    unit=f"{probes.team}:{seed}",
                    features=feats,
                    # each feature crossed with the option too: a linear adversary scores the
                    # options one by one, so a feature shared by both could not move its pick
                    candidate_features=tuple({f"{k}|{o}": v for k, v in feats.items()}
                                             for o in options),
                    id=f"{probes.team}:{seed}:{r['id']}",
                )
            )  # fmt: skip
    return out


def prior_chance(train: TeamProbes, scored: TeamProbes) -> tuple[dict[str, float], list[str]]:
    """Per question type, the accuracy on ``scored`` of the type prior fitted on ``train`` (its
    commonest truth there; the scored set's own when the type never occurred in training): the
    chance an adversary is judged against. Also the types that are one-sided in ``scored`` (every
    truth the same: nothing to judge)."""
    def counts(probes: TeamProbes) -> dict[str, Counter[str]]:
        out: dict[str, Counter[str]] = defaultdict(Counter)
        for r in probes.records:
            out[question_type(r["kind"], r["order"])][str(r["truth"])] += 1
        return out

    fitted = {qt: c.most_common(1)[0][0] for qt, c in counts(train).items()}
    chance, one_sided = {}, []
    for qt, c in sorted(counts(scored).items()):
        if len(c) < 2:
            one_sided.append(qt)
            continue
        prior = fitted.get(qt, c.most_common(1)[0][0])
        chance[qt] = min(max(c[prior] / sum(c.values()), 0.001), 0.999)
    return chance, one_sided


# ------------------------------------------------------------------ the report
@dataclass
class ProbeReport:
    """What :func:`verify` found: the markdown report, the gate's verdict and the ToM measures."""

    text: str
    passed: bool
    failures: tuple[str, ...]
    measures: dict[str, list[str]]  # team -> its ToM measures (separate, not beaten)


@dataclass(frozen=True)
class BalancedCell:
    """The adversary's balanced accuracy on one cell (or pool), in percent.

    Attributes:
        key: the cell (team, question type) or pool (``team/order``).
        n: questions scored.
        accuracy: its raw accuracy; ``prior``: the fitted type prior's (the examples' chance).
        balanced: the mean over the true answers of the share of each picked right.
        low, high: its 95% interval (normal approximation; each recall's variance from
            ``(right + 1) / (n + 2)``; a pool's from its cells', as independent).
        chance: ``100 / k`` for ``k`` options: what any constant answer scores.
    """

    key: tuple[str, ...]
    n: int
    accuracy: float
    prior: float
    balanced: float
    low: float
    high: float
    chance: float


def balanced_cells(rep: Any, pool: bool = False) -> list[BalancedCell]:
    """Per cell of a :class:`tom_envs.validity.Report` (or per pool, ``team/order``, with
    ``pool``), the adversary's balanced accuracy with its interval."""
    by: dict[tuple[str, ...], list[int]] = defaultdict(list)
    for k, ex in enumerate(rep.examples):
        by[(str(ex.group["pool"]),) if pool else ex.cell[:2]].append(k)
    out = []
    for key, idx in sorted(by.items()):
        cells: dict[tuple[str, ...], list[int]] = defaultdict(list)
        for k in idx:  # a pool averages its question types' balanced accuracies, by size
            cells[rep.examples[k].cell].append(k)
        parts = []
        for cidx in cells.values():
            recalls, var = [], 0.0
            for c in sorted({rep.examples[k].answer for k in cidx}):
                hits = [float(rep.correct[k]) for k in cidx if rep.examples[k].answer == c]
                recalls.append(float(np.mean(hits)))
                smooth = (sum(hits) + 1) / (len(hits) + 2)
                var += smooth * (1 - smooth) / len(hits)
            parts.append((len(cidx), float(np.mean(recalls)), var / len(recalls) ** 2))
        n = sum(m for m, _, _ in parts)
        balanced = 100.0 * sum(m * b for m, b, _ in parts) / n
        half = 100.0 * Z95 * math.sqrt(sum((m / n) ** 2 * v for m, _, v in parts))
        k_opts = float(np.mean([len(rep.examples[k].candidates) for k in idx]))
        out.append(
            BalancedCell(
                key,
                n,
                100.0 * float(np.mean([float(rep.correct[k]) for k in idx])),
                100.0 * float(np.mean([rep.examples[k].base_rate for k in idx])),
                balanced,
                max(0.0, balanced - half),
                min(100.0, balanced + half),
                100.0 / k_opts,
            )
        )
    return out


def balanced_gate(reports: Sequence[Any], cell_margin: float = 5.0,
                  pooled_margin: float = 3.0) -> Any:  # fmt: skip
    """Issue #32's rule (as :func:`tom_envs.validity.gate`) on balanced accuracy, where chance
    is ``100 / k`` whatever the skew of the answers: no cell whose 95% interval lies wholly at
    or above chance + ``cell_margin``, every pool (team and order) within ``pooled_margin``
    points of chance. Balanced accuracy is the measure of a skewed probe set (a constant answer
    scores chance on it, and the shift of the answer shares between mission sets, which moves a
    type prior's raw accuracy, does not move it).

    A pool's point estimate is held to the bound when the pool can resolve it (its 95% interval
    is at most ``pooled_margin`` points either side); a smaller pool (bomb defusal's
    announced-room questions: ~160 a set, about 4 points of standard error) fails only when its
    whole interval lies outside chance ± ``pooled_margin``, as a cell does beyond its margin."""
    from tom_envs.validity import GateDecision

    failures = []
    checks = 0
    for rep in reports:
        for c in balanced_cells(rep):
            checks += 1
            if c.low >= c.chance + cell_margin:
                failures.append(
                    f"{rep.answerer} {rep.scheme} {'/'.join(c.key)}: balanced accuracy "
                    f"{c.balanced:.1f}% [{c.low:.1f}, {c.high:.1f}] beats chance {c.chance:.0f}% "
                    f"by more than {cell_margin:g} points (n={c.n})"
                )
        for c in balanced_cells(rep, pool=True):
            checks += 1
            resolved = (c.high - c.low) / 2 <= pooled_margin
            outside = c.low > c.chance + pooled_margin or c.high < c.chance - pooled_margin
            if abs(c.balanced - c.chance) > pooled_margin and (resolved or outside):
                failures.append(
                    f"{rep.answerer} {rep.scheme} pooled {c.key[0]}: balanced accuracy "
                    f"{c.balanced:.1f}% vs chance {c.chance:.0f}% "
                    f"({c.balanced - c.chance:+.1f} points, bound {pooled_margin:g}; n={c.n})"
                )
    return GateDecision(not failures, tuple(failures), checks)


def adversary_table(reports: Sequence[Any]) -> str:
    """Markdown: per adversary, scheme and cell, the held-out balanced accuracy with its 95%
    interval beside chance (``100 / k``), then the raw accuracy beside the fitted type prior's;
    then each pool (team and order)."""
    lines = [
        "| adversary | scheme | team | question type | n | balanced acc. % | 95% CI | chance % | "
        "excess | accuracy % | type prior % |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for rep in reports:
        rows = [(c, False) for c in balanced_cells(rep)]
        rows += [(c, True) for c in balanced_cells(rep, pool=True)]
        for c, pooled in rows:
            if pooled:
                team, order = c.key[0].split("/", 1)
                team, what = f"**{team}**", f"**{order} (pooled)**"
            else:
                team, what = c.key
            lines.append(
                f"| {rep.answerer} | {rep.scheme} | {team} | {what} | {c.n} | {c.balanced:.1f} | "
                f"[{c.low:.1f}, {c.high:.1f}] | {c.chance:.0f} | {c.balanced - c.chance:+.1f} | "
                f"{c.accuracy:.1f} | {c.prior:.1f} |"
            )
    return "\n".join(lines)


def _team_section(
    spec: Any,
    team: str,
    sets: Mapping[str, list[int]],
    kwargs: Mapping[str, Any],
    adversaries: Sequence[str],
    seed: int,
    progress: Callable[[str], None] | None,
) -> tuple[list[str], list[Any], list[str]]:
    """One team's section of the report: its probes' baselines and known groups, the learned
    adversary's table and gate; with the adversary's reports and the team's ToM measures."""
    played = {name: play_team(spec, team, s, kwargs, progress) for name, s in sets.items()}
    every = [r for p in played.values() for r in p.records]
    kg = known_groups(every)
    n_eps = sum(p.episodes for p in played.values())
    lines = [
        "",
        f"## Team: {team}",
        "",
        f"{len(every)} probes on {n_eps} missions ({len(every) / max(n_eps, 1):.1f} per "
        f"mission; play took {sum(p.seconds for p in played.values()):.0f} s).",
        "",
        "Baselines and known groups, per order:",
        "",
        probe_table(every, by="order"),
        "",
        "Per question type (a ToM measure only if the partner-blind answerer is at chance and "
        "the exact model is not):",
        "",
        probe_table(every, by="type"),
    ]
    reports, skipped = _fit_adversaries(played, adversaries, seed)
    decision = balanced_gate(reports)
    lines += [
        "",
        "Learned no-reasoning adversary (fitted on the training missions, scored on the "
        "held-out and the fresh ones; balanced accuracy against chance, raw accuracy beside "
        "the type prior fitted on the same missions):",
        "",
        adversary_table(reports),
        "",
        "One-sided types, not scored (every truth the same in a scored set): "
        + (", ".join(sorted(skipped)) or "none") + ".",
        "",
        f"Gate for {team}: " + ("passed" if decision.passed else "FAILED")
        + f" ({decision.checks} checks).",
    ]
    lines += [f"* {f}" for f in decision.failures]
    leaky = {c.key[1] for rep in reports for c in balanced_cells(rep)
             if c.low >= c.chance + 5.0}  # fmt: skip
    separate = [qt for qt, v in sorted(kg.items()) if v.measure]
    measures = [qt for qt in separate if qt not in leaky]
    lines += [
        "",
        "ToM measures for this team (separate the known groups, no adversary beats chance): "
        + (", ".join(measures) or "none")
        + (f"; separating but beaten by an adversary: {', '.join(sorted(set(separate) & leaky))}"
           if set(separate) & leaky else "") + ".",
    ]  # fmt: skip
    return lines, reports, measures


def _fit_adversaries(
    played: Mapping[str, Any], adversaries: Sequence[str], seed: int
) -> tuple[list[Any], set[str]]:
    """Each adversary fitted once on the training missions and scored on the held-out and the
    fresh ones (reports in ``SCHEMES`` order), and the one-sided types left unscored."""
    from tom_envs.validity import Report, transfer

    train = examples(played["train"])
    scored: dict[str, list[Any]] = {}
    skipped: set[str] = set()
    for scheme in SCHEMES:
        chance, one_sided = prior_chance(played["train"], played[scheme])
        skipped |= set(one_sided)
        scored[scheme] = examples(played[scheme], chance)
    reports = []
    for adv in adversaries:  # one fit per adversary, scored on both sets
        both = transfer(train, [x for s in SCHEMES for x in scored[s]], adv, seed=seed)
        start = 0
        for scheme in SCHEMES:
            end = start + len(scored[scheme])
            reports.append(Report(adv, scheme, both.fields, both.examples[start:end],
                                  both.correct[start:end]))  # fmt: skip
            start = end
    reports.sort(key=lambda r: SCHEMES.index(r.scheme))
    return reports, skipped


def verify(
    game: str = "BombDefusal",
    teams: Sequence[str] | None = None,
    episodes: int = 100,
    seed: int = 0,
    fresh_seed: int = FRESH_SEED,
    env_kwargs: Mapping[str, Any] | None = None,
    adversaries: Sequence[str] = ("boosting", "logistic"),
    progress: Callable[[str], None] | None = None,
) -> ProbeReport:
    """Play every team on three mission sets and judge its probe set (see the module docstring)."""
    if episodes < 1:
        raise ValueError(f"episodes must be at least 1, got {episodes}")
    spec = game_spec(game)
    kwargs = dict(env_kwargs or {})
    if spec.load().make_bundle(**{**spec.kwargs, **kwargs}).probes is None:
        raise ValueError(f"{spec.name} asks no probes (with these arguments)")
    teams = list(teams or DEFAULT_TEAMS.get(spec.name, ("random", TEXT_TEAM)))
    t0 = time.perf_counter()
    sets = {
        "train": list(range(seed, seed + episodes)),
        SCHEMES[0]: list(range(seed + episodes, seed + 2 * episodes)),
        SCHEMES[1]: list(range(fresh_seed, fresh_seed + episodes)),
    }
    lines = [
        f"# Probe report: {spec.name}",
        "",
        f"Teams: {', '.join(teams)}. Missions: {episodes} to fit the adversary on (seeds "
        f"{seed}..{seed + episodes - 1}), {episodes} held out (seeds {seed + episodes}.."
        f"{seed + 2 * episodes - 1}) and {episodes} fresh (seeds {fresh_seed}.."
        f"{fresh_seed + episodes - 1}). Game arguments: {kwargs or 'the defaults'}.",
        "",
        f"Command: `tom-envs probes verify --game {spec.name} --teams {' '.join(teams)} "
        f"--episodes {episodes} --seed {seed} --fresh-seed {fresh_seed}"
        + (" --kw " + " ".join(f"{k}={v}" for k, v in kwargs.items()) if kwargs else "")
        + "` (add `--out FILE` to write this page).",
    ]
    all_reports = []
    measures: dict[str, list[str]] = {}
    for team in teams:
        team_lines, reports, measures[team] = _team_section(
            spec, team, sets, kwargs, adversaries, seed, progress
        )
        lines += team_lines
        all_reports += reports
    decision = balanced_gate(all_reports)
    every_team = sorted(set.intersection(*(set(m) for m in measures.values()))) if measures else []
    some = sorted(set().union(*measures.values()) - set(every_team)) if measures else []
    lines += [
        "",
        "## Verdict",
        "",
        "The gate (issue #32 on balanced accuracy: no cell's 95% interval wholly at or above "
        "chance + 5 points, every pool within 3 points of chance): "
        + ("**passed**" if decision.passed else "**FAILED**")
        + f" on {decision.checks} checks over {len(teams)} teams.",
        "",
        "ToM measures for every team: " + (", ".join(every_team) or "none")
        + ("; for some teams only: " + ", ".join(some) if some else "") + ".",
        "",
        f"Wall time: {time.perf_counter() - t0:.0f} s.",
    ]
    return ProbeReport("\n".join(lines) + "\n", decision.passed, decision.failures, measures)


__all__ = [
    "DEFAULT_TEAMS",
    "FRESH_SEED",
    "BalancedCell",
    "ProbeReport",
    "TeamProbes",
    "TextChatter",
    "adversary_table",
    "balanced_cells",
    "balanced_gate",
    "examples",
    "play_team",
    "prior_chance",
    "surface_features",
    "team_agents",
    "verify",
]
