"""What each participant does: the assignment of conditions, the sequence of steps, and how long
it takes.

**Assignment** (``[assignment]``; ``k`` is the participant's enrolment index, from 0, and every draw
comes from ``numpy.random.default_rng([seed, ...])``, so a participant's plan depends only on the
study file and ``k``):

* ``design = "within"``: every participant plays every condition, ``episodes_per_condition``
  episodes each, in every game.

  - ``order = "counterbalanced"``: condition blocks in the order of row ``k`` (mod the rows) of a
    balanced Latin square (Williams design: each condition precedes every other equally often;
    ``n`` rows for an even number of conditions, ``2n`` for an odd one);
  - ``"blocked"``: condition blocks in file order for everyone;
  - ``"random"``: every episode of every condition shuffled (``default_rng([seed, k])``), so
    conditions are interleaved.

* ``design = "between"``: each participant plays one condition.

  - ``"counterbalanced"``: condition ``k mod n`` (round robin);
  - ``"blocked"``: permuted-block randomisation: in each block of ``n`` participants every
    condition once, in the order ``default_rng([seed, k // n]).permutation(n)``;
  - ``"random"``: ``default_rng([seed, k]).integers(n)``.

**Steps**: consent, instructions, then for each game in file order: its introduction, its
practice rounds, and its episodes (each followed by the per-episode survey and any attention check
due after that episode), then the end survey (with the end attention checks) and the completion
code. Episode ``i`` of a condition in a game plays seed ``games.seed + i`` in every condition (the
conditions are compared on the same deals); practice rounds play ``practice.seed + i``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from tom_envs.serve.study.check import PRACTICE, Seating
from tom_envs.serve.study.spec import Study

__all__ = ["Step", "condition_order", "describe", "estimate", "plan", "williams"]

#: Reading speed for consent and instructions, and seconds per survey answer (the estimate's).
WORDS_PER_MINUTE = 200
SECONDS_PER_CHOICE, SECONDS_PER_TEXT = 6.0, 40.0
#: Seconds an LLM partner takes per decision in the estimate (bots: none).
SECONDS_PER_LLM_DECISION = 4.0


@dataclass(frozen=True)
class Step:
    """One step of a participant's plan; ``id`` is stable (the journal refers to it)."""

    id: str
    kind: str  # consent, instructions, intro, episode, survey, done
    game: str = ""
    condition: str = ""
    index: int = 0  # the episode's index in its (game, condition): seed offset
    number: int = 0  # the participant's n-th episode (practice not counted)
    items: tuple[str, ...] = ()

    @property
    def practice(self) -> bool:
        """A practice round."""
        return self.condition == PRACTICE


def williams(n: int) -> list[list[int]]:
    """A balanced Latin square (Williams design) over ``n`` conditions: its rows are orders in
    which each condition follows every other equally often (``2n`` rows for odd ``n``)."""
    first, lo, hi = [0], 1, n - 1
    while len(first) < n:
        first.append(lo)
        lo += 1
        if len(first) < n:
            first.append(hi)
            hi -= 1
    rows = [[(c + r) % n for c in first] for r in range(n)]
    if n % 2:
        rows += [list(reversed(row)) for row in rows]
    return rows


def condition_order(study: Study, k: int) -> list[tuple[int, int]]:
    """Participant ``k``'s episodes as ``(condition index, episode index)`` in play order."""
    n, e, seed = len(study.conditions), study.episodes_per_condition, study.seed
    if study.design == "between":
        if study.order == "counterbalanced":
            c = k % n
        elif study.order == "blocked":
            c = int(np.random.default_rng([seed, k // n]).permutation(n)[k % n])
        else:
            c = int(np.random.default_rng([seed, k]).integers(n))
        return [(c, i) for i in range(e)]
    if study.order == "random":
        trials = [(c, i) for c in range(n) for i in range(e)]
        perm = np.random.default_rng([seed, k]).permutation(len(trials))
        return [trials[int(j)] for j in perm]
    rows = williams(n) if study.order == "counterbalanced" else [list(range(n))]
    return [(c, i) for c in rows[k % len(rows)] for i in range(e)]


def plan(study: Study, k: int) -> tuple[Step, ...]:
    """Participant ``k``'s steps (see the module docstring)."""
    steps = [Step("consent", "consent"), Step("instructions", "instructions")]
    after: dict[int, list[str]] = {}
    for a in study.attention:
        after.setdefault(a.after_episode, []).append(a.item.id)
    per_episode = tuple(i.id for i in study.survey_episode)
    order = condition_order(study, k)
    number = 0
    for g in study.games:
        steps.append(Step(f"intro:{g.name}", "intro", g.name))
        for i in range(g.practice.episodes if g.practice else 0):
            steps.append(Step(f"episode:{g.name}:{PRACTICE}:{i}", "episode", g.name, PRACTICE, i))
        for c, i in order:
            number += 1
            cond = study.conditions[c].name
            steps.append(Step(f"episode:{g.name}:{cond}:{i}", "episode", g.name, cond, i, number))
            items = per_episode + tuple(after.get(number, ()))
            if items:
                steps.append(Step(f"survey:{g.name}:{cond}:{i}", "survey", g.name, cond, i, number,
                                  items))  # fmt: skip
    end = tuple(i.id for i in study.survey_end) + tuple(after.get(0, ()))
    if end:
        steps.append(Step("survey:end", "survey", items=end))
    steps.append(Step("done", "done"))
    return tuple(steps)


# ------------------------------------------------------------------ timing
def _read_seconds(text: str) -> float:
    return 60.0 * len(text.split()) / WORDS_PER_MINUTE


def decisions(seating: Seating, seeds: Sequence[int]) -> tuple[float, float]:
    """Mean decisions per episode of the first person's seat and of the partner seats, from
    random play of ``seeds`` (an estimate: people play differently)."""
    from tom_envs.agents import make_agent
    from tom_envs.registration import game_spec
    from tom_envs.runner import play_episode

    base = game_spec(seating.game)
    spec = dataclasses.replace(base, kwargs={**base.kwargs, **seating.kwargs})
    bundle = spec.load().make_bundle(**spec.kwargs)
    agents = [make_agent("random", spec, bundle) for _ in range(seating.seats)]
    mine = theirs = 0
    person = f"player_{seating.people[0]}"
    for seed in seeds:
        ep = play_episode(spec, agents, int(seed), seating.kwargs)
        mine += ep.decisions.get(person, 0)
        theirs += sum(n for a, n in ep.decisions.items() if a != person)
    return mine / len(seeds), theirs / len(seeds)


def _simultaneous(game: str) -> bool:
    from tom_envs.registration import game_spec

    return game_spec(game).parallel


def estimate(study: Study, seatings: Mapping[tuple[str, str], Seating]) -> dict[str, float]:
    """Seconds a participant spends (participant 0's plan), by part, and ``"total"`` and
    ``"waiting_max"`` (every waiting room at its limit)."""
    out: dict[str, float] = {"reading": _read_seconds(study.consent + " " + study.instructions)}
    cache: dict[tuple[str, str], tuple[float, float]] = {}
    items = {i.id: i for i in (*study.survey_episode, *study.survey_end)}
    items.update({a.item.id: a.item for a in study.attention})
    wait = 0.0
    for step in plan(study, 0):
        if step.kind == "intro":
            out["reading"] += _read_seconds(study.game(step.game).instructions) + 20
        elif step.kind == "survey":
            out["surveys"] = out.get("surveys", 0.0) + sum(
                SECONDS_PER_TEXT if items[i].kind == "text" else SECONDS_PER_CHOICE
                for i in step.items)  # fmt: skip
        elif step.kind == "episode":
            entry, s = study.game(step.game), seatings[(step.game, step.condition)]
            key = (step.game, step.condition)
            if key not in cache:
                seed = entry.practice.seed if step.practice and entry.practice else entry.seed
                cache[key] = decisions(s, [seed + i for i in range(3)])
            mine, theirs = cache[key]
            part = "practice" if step.practice else "episodes"
            llm = sum(1 for p in s.partners if p.startswith("llm")) / max(1, len(s.partners))
            people = len(s.people) > 1
            other = theirs * (entry.seconds_per_decision if people else SECONDS_PER_LLM_DECISION * llm)
            if people and _simultaneous(s.game):  # people choose at the same time
                other = 0.0
            out[part] = out.get(part, 0.0) + mine * entry.seconds_per_decision + other
            if not step.practice and study.condition(step.condition).partner.kind == "human":
                wait += study.condition(step.condition).wait_seconds
    out["total"] = sum(v for k, v in out.items() if k != "total")
    out["waiting_max"] = wait
    return out


def describe(study: Study, seatings: Mapping[tuple[str, str], Seating], show: int = 4) -> str:
    """What a participant will do and how long it takes, in words (``tom-envs study validate``)."""
    lines = [f"Study {study.name!r} (version {study.version}): {len(study.games)} game(s), "
             f"{len(study.conditions)} condition(s), design {study.design}, order {study.order}, "
             f"seed {study.seed}, {study.episodes_per_condition} episode(s) per condition.", ""]  # fmt: skip
    lines.append("Conditions:")
    for c in study.conditions:
        extra = ""
        if c.partner.kind == "human":
            extra = (f"; waiting room up to {c.wait_seconds:g} s, then "
                     + (f"condition {c.fallback!r}" if c.fallback else "the episode is skipped")
                     + f"; a person who leaves: {'the episode ends' if c.on_leave == 'end' else c.on_leave + ' takes the seat'}")  # fmt: skip
        lines.append(f"  {c.name}: {c.partner.describe()}{extra}")
    lines.append("")
    lines.append("Games:")
    for g in study.games:
        cells = [seatings[(g.name, c.name)] for c in study.conditions]
        lines.append(f"  {g.name}: {cells[0].game} {dict(cells[0].kwargs)}; the person plays seat "
                     f"{g.seat}; episode i plays seed {g.seed}+i"
                     + (f"; {g.practice.episodes} practice round(s) with {g.practice.partner.describe()}"
                        if g.practice else ""))  # fmt: skip
        for s in cells:
            lines.append(f"    {s.condition}: people in seats {list(s.people)}, agents "
                         f"{list(s.partners) or 'none'}")  # fmt: skip
    lines += ["", "Orders of the first participants:"]
    for k in range(show):
        names = [study.conditions[c].name for c, _ in condition_order(study, k)]
        lines.append(f"  participant {k + 1}: {' -> '.join(names)}")
    lines += ["", "Participant 1 will:"]
    for n, step in enumerate(plan(study, 0), 1):
        lines.append(f"  {n:>2}. {_step_words(study, step)}")
    t = estimate(study, seatings)
    parts = ", ".join(f"{k} {v / 60:.1f}" for k, v in t.items() if k not in ("total", "waiting_max"))
    lines += ["", f"Estimated time: about {t['total'] / 60:.0f} minutes ({parts} minutes)"
              + (f", plus up to {t['waiting_max'] / 60:.1f} minutes in waiting rooms"
                 if t["waiting_max"] else "")
              + ". Decisions per episode are estimated from random play of the study's seeds; "
              "seconds per decision are the study's (games.seconds_per_decision)."]  # fmt: skip
    return "\n".join(lines)


def _step_words(study: Study, step: Step) -> str:
    if step.kind == "consent":
        return "read the consent text and agree (or decline and leave)"
    if step.kind == "instructions":
        return "read the instructions"
    if step.kind == "intro":
        return f"read how to play {step.game}"
    if step.kind == "episode":
        if step.practice:
            return f"practice round {step.index + 1} of {step.game}"
        c = study.condition(step.condition)
        return f"episode {step.number}: {step.game} with {c.partner.describe()} (seed offset {step.index})"
    if step.kind == "survey":
        return f"answer {len(step.items)} question(s)" + (" at the end" if step.id == "survey:end"
                                                          else f" about episode {step.number}")  # fmt: skip
    return "get the completion code" if study.completion_code else "finish"
