"""A study's data as one versioned dataset a paper can release (``tom-envs study export``), and the
check that every trajectory in it is still what the current engine plays (``tom-envs study
verify``).

The dataset (a folder; every file is written from the journal alone, so the same journal gives the
same bytes)::

    README.md            the dataset card: what was collected, under which rules and code, how
                         many participants completed, exclusions, the consent text shown
    manifest.json        dataset format version, the study (name, version, file digest), the suite
                         version and code digests, per-game rules versions, counts, and the
                         SHA-256 of every file
    study.toml           the study file as run
    participants.csv     anonymous id (P0001 ...), enrolment index, status, condition order,
                         attention checks failed, episodes completed
    episodes.csv         one row per episode and person: game, condition intended and played,
                         practice, seed, seat, status, return, decisions, response times,
                         resumes, takeovers, trajectory file
    surveys.csv          one row per answer: participant, step, item, answer, seconds on the page
    trajectories/*.jsonl the suite's standard trajectories (:mod:`tom_envs.runner`: schema 3, each
                         header's ``config`` holds the game's rules version ``game_version``, the
                         ``suite_version`` and the ``code`` digests); people's seats are
                         ``"human"``, each of their decisions carries its anonymous ``participant``

Never exported: participant links and keys, the secret key, platform ids (``external``), and, with
``omit_text=True``, free-text answers and chat messages (replaced by ``[omitted]``).
:func:`verify` replays every trajectory through the current engine: the same seed and moves must
give the same rewards, observations of people and end, under the same rules version; it names
every trajectory and decision where they differ.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tom_envs.runner import Episode
from tom_envs.serve.study.design import condition_order
from tom_envs.serve.study.journal import read_journal
from tom_envs.serve.study.spec import Study, parse_study

__all__ = ["DATASET_VERSION", "export", "verify"]

#: Version of the dataset's layout (bumped when a file or column changes meaning).
DATASET_VERSION = 1
OMITTED = "[omitted]"


@dataclasses.dataclass
class _Data:
    """What the journal holds, grouped."""

    study: Study
    events: list[dict[str, Any]]
    anon: dict[str, str]
    started: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    moves: dict[str, list[dict[str, Any]]] = dataclasses.field(default_factory=dict)
    ended: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    left: dict[str, dict[str, str]] = dataclasses.field(default_factory=dict)


def _load(folder: Path, study: Study | None) -> _Data:
    events = read_journal(folder / "journal.jsonl")
    if study is None:
        study = parse_study((folder / "study.toml").read_text(encoding="utf-8"), str(folder))
    digest = hashlib.sha256(study.source.encode()).hexdigest()
    head = next((e for e in events if e["ev"] == "study"), None)
    if head is None or head["digest"] != digest:
        raise ValueError(f"{folder}: the journal was written by another study file than the one "
                         "given (digests differ)")  # fmt: skip
    enrolled = [e for e in events if e["ev"] == "enrolled"]
    anon = {e["pid"]: f"P{k + 1:04d}" for k, e in enumerate(sorted(enrolled, key=lambda e: e["index"]))}
    data = _Data(study, events, anon)
    for e in events:
        kind = e["ev"]
        if kind == "started":
            data.started[e["sid"]] = e
            data.moves[e["sid"]] = []
        elif kind == "move":
            data.moves[e["sid"]].append(e["rec"])
        elif kind == "ended":
            data.ended[e["sid"]] = e
        elif kind == "left":
            data.left.setdefault(e["sid"], {})[e["pid"]] = e["why"]
    return data


def _episode(data: _Data, sid: str, omit_text: bool) -> Episode:
    """The standard trajectory of an episode, anonymised."""
    st, end = data.started[sid], data.ended.get(sid)
    summary: Mapping[str, Any] = (end or {}).get("summary") or {}
    s = st["seating"]
    steps = []
    for rec in data.moves[sid]:
        rec = dict(rec)
        if "participant" in rec:
            rec["participant"] = data.anon.get(rec["participant"], "unknown")
        if omit_text and rec.get("message"):
            rec["message"] = OMITTED
        steps.append(rec)
    agents = summary.get("agents") or {}
    ep = Episode(summary.get("config", {}).get("env_id") or _env_id(s["game"]), st["seed"],
                 dict(agents), dict(s["kwargs"]))  # fmt: skip
    ep.steps = steps
    for key in ("returns", "length", "invalid", "decisions", "fallbacks", "failures",
                "wall_time_s", "members"):  # fmt: skip
        if key in summary:
            setattr(ep, key, summary[key])
    ep.metrics = {k: v for k, v in (summary.get("metrics") or {}).items() if k != "participant"}
    who = sorted(st["members"].items(), key=lambda kv: kv[1])
    ep.metrics["participant"] = ",".join(data.anon[p] for p, _ in who)  # type: ignore[assignment]
    ep.metrics["task"] = sid  # type: ignore[assignment]
    ep.status = (end or {}).get("status", "unfinished") if summary.get("status") in (None, "ok") \
        else summary["status"]  # fmt: skip
    if ep.status == "done":
        ep.status = "ok"
    ep.failure = summary.get("failure")
    config = dict(summary.get("config") or {})
    if config:
        config["seed"] = st["seed"]
        from tom_envs.identity import config_hash

        ep.config, ep.config_hash = config, config_hash(config)
    return ep


def _env_id(game: str) -> str:
    from tom_envs.registration import game_spec

    return game_spec(game).id


def _csv(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    out = io.StringIO()
    w = csv.DictWriter(out, columns, lineterminator="\n", extrasaction="ignore")
    w.writeheader()
    for r in rows:
        w.writerow({k: _cell(r.get(k)) for k in columns})
    return out.getvalue()


def _cell(v: Any) -> Any:
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, (list, tuple, dict)):
        return json.dumps(v, sort_keys=True, ensure_ascii=False)
    return "" if v is None else v


def _participants(data: _Data) -> list[dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for e in data.events:
        kind, pid = e["ev"], str(e.get("pid", ""))
        if kind == "enrolled":
            order = [data.study.conditions[c].name for c, _ in condition_order(data.study, e["index"])]
            rows[pid] = {"participant": data.anon[pid], "index": e["index"], "status": "active",
                         "consent": "", "condition_order": " > ".join(dict.fromkeys(order)),
                         "attention_failed": 0, "episodes_completed": 0}  # fmt: skip
        elif pid in rows:
            _participant_event(rows[pid], kind, e)
    for sid, st in data.started.items():
        end = data.ended.get(sid)
        done = end is not None and end["status"] == "done" and not st["practice"]
        for pid in st["members"]:
            if done and pid not in data.left.get(sid, {}):
                rows[pid]["episodes_completed"] += 1
    return sorted(rows.values(), key=lambda r: r["index"])


def _participant_event(row: dict[str, Any], kind: str, e: Mapping[str, Any]) -> None:
    if kind == "consent":
        row["consent"] = "yes" if e["agreed"] else "no"
        if not e["agreed"]:
            row["status"] = "declined"
    elif kind == "answers":
        row["attention_failed"] += sum(1 for ok in (e.get("attention") or {}).values() if not ok)
    elif kind == "screened":
        row["status"] = "screened_out"
    elif kind == "completed":
        row["status"] = "completed"


EPISODE_COLUMNS = ("participant", "episode", "game", "registered_game", "rules_version",
                   "condition_intended", "condition", "practice", "seed", "seat", "partners",
                   "status", "person_status", "return", "decisions", "median_response_s",
                   "resumed", "takeovers", "trajectory")  # fmt: skip


def _episode_rows(data: _Data, files: Mapping[str, str]) -> list[dict[str, Any]]:
    from tom_envs.registration import game_spec

    rows = []
    for sid, st in data.started.items():
        end = data.ended.get(sid) or {}
        summary = end.get("summary") or {}
        for pid, seat in sorted(st["members"].items(), key=lambda kv: kv[1]):
            mine = [r for r in data.moves[sid] if r.get("agent") == f"player_{seat}" and r.get("human")]
            times = sorted(r.get("latency_s", 0.0) for r in mine)
            rows.append({
                "participant": data.anon[pid], "episode": sid, "game": st["game"],
                "registered_game": game_spec(st["seating"]["game"]).id,
                "rules_version": (summary.get("config") or {}).get("game_version", ""),
                "condition_intended": st["intended"], "condition": st["condition"],
                "practice": st["practice"], "seed": st["seed"], "seat": seat,
                "partners": list(st["seating"]["partners"]),
                "status": end.get("status", "unfinished"),
                "person_status": (data.left.get(sid, {}).get(pid) and "left") or end.get("status", "unfinished"),
                "return": (summary.get("returns") or {}).get(f"player_{seat}"),
                "decisions": len(mine), "median_response_s": times[len(times) // 2] if times else None,
                "resumed": (summary.get("metrics") or {}).get("resumed", 0),
                "takeovers": len(st.get("takeovers", [])) + sum(1 for e in data.events
                                                                 if e["ev"] == "takeover" and e["sid"] == sid),
                "trajectory": files.get(sid, ""),
            })  # fmt: skip
    return rows


def _survey_rows(data: _Data, omit_text: bool) -> list[dict[str, Any]]:
    items = {i.id: i for i in (*data.study.survey_episode, *data.study.survey_end)}
    items.update({a.item.id: a.item for a in data.study.attention})
    checks = {a.item.id: a.answer for a in data.study.attention}
    rows = []
    for e in data.events:
        if e["ev"] != "answers":
            continue
        for item_id, answer in e["answers"].items():
            item = items[item_id]
            value = OMITTED if omit_text and item.kind == "text" else answer
            rows.append({"participant": data.anon[e["pid"]], "step": e["step"], "item": item_id,
                         "kind": item.kind, "answer": value,
                         "attention_passed": "" if item_id not in checks else answer == checks[item_id],
                         "seconds_on_page": e.get("seconds")})  # fmt: skip
    return rows


def export(folder: str | Path, out: str | Path, study: Study | None = None,
           omit_text: bool = False) -> dict[str, Any]:  # fmt: skip
    """Write the dataset of the study in ``folder`` to ``out`` (see the module docstring);
    returns the manifest."""
    folder, out = Path(folder), Path(out)
    data = _load(folder, study)
    out.mkdir(parents=True, exist_ok=True)
    (out / "trajectories").mkdir(exist_ok=True)
    files: dict[str, str] = {}
    written: dict[str, bytes] = {}
    for sid in data.started:
        ep = _episode(data, sid, omit_text)
        name = f"trajectories/{sid}.jsonl"
        ep.write(out / name)
        files[sid] = name
        written[name] = (out / name).read_bytes()
    tables = {
        "study.toml": data.study.source,
        "participants.csv": _csv(_participants(data), ("participant", "index", "status", "consent",
                                                        "condition_order", "attention_failed",
                                                        "episodes_completed")),
        "episodes.csv": _csv(_episode_rows(data, files), EPISODE_COLUMNS),
        "surveys.csv": _csv(_survey_rows(data, omit_text), ("participant", "step", "item", "kind",
                                                             "answer", "attention_passed",
                                                             "seconds_on_page")),
    }  # fmt: skip
    for name, text in tables.items():
        (out / name).write_text(text, encoding="utf-8")
        written[name] = text.encode("utf-8")
    manifest = _manifest(data, written, omit_text)
    card = _card(data, manifest)
    (out / "README.md").write_text(card, encoding="utf-8")
    manifest["files"]["README.md"] = hashlib.sha256(card.encode()).hexdigest()
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return manifest


def _manifest(data: _Data, written: Mapping[str, bytes], omit_text: bool) -> dict[str, Any]:
    import tom_envs
    from tom_envs.identity import code_identity
    from tom_envs.registration import game_spec

    configs = [(data.ended.get(sid) or {}).get("summary", {}).get("config") or {} for sid in data.started]
    codes = sorted({json.dumps(c.get("code"), sort_keys=True) for c in configs if c.get("code")})
    suites = sorted({str(c.get("suite_version")) for c in configs if c.get("suite_version")})
    games = sorted({st["seating"]["game"] for st in data.started.values()})
    people = _participants(data)
    return {
        "dataset_version": DATASET_VERSION,
        "study": {"name": data.study.name, "version": data.study.version,
                  "digest": hashlib.sha256(data.study.source.encode()).hexdigest()},
        "recorded_with": {"suite_versions": suites, "code": [json.loads(c) for c in codes]},
        "exported_with": {"suite_version": tom_envs.__version__, "code": code_identity()},
        "games": {g: {"id": game_spec(g).id, "rules_version": game_spec(g).version} for g in games},
        "counts": {"participants": len(people),
                   "completed": sum(r["status"] == "completed" for r in people),
                   "declined": sum(r["status"] == "declined" for r in people),
                   "screened_out": sum(r["status"] == "screened_out" for r in people),
                   "episodes": len(data.started),
                   "episodes_ended": sum(1 for sid in data.started if sid in data.ended),
                   "episodes_with_people": sum(1 for st in data.started.values()
                                               if len(st["members"]) > 1),
                   "fallbacks": sum(1 for st in data.started.values()
                                    if st["intended"] != st["condition"])},
        "free_text_omitted": omit_text,
        "files": {n: hashlib.sha256(b).hexdigest() for n, b in sorted(written.items())},
    }  # fmt: skip


def _card(data: _Data, m: Mapping[str, Any]) -> str:
    s, c = data.study, m["counts"]
    conds = "\n".join(f"| {x.name} | {x.partner.describe()} |" for x in s.conditions)
    games = "\n".join(f"| {g} | {v['id']} | {v['rules_version']} |" for g, v in m["games"].items())
    status = {}
    for e in data.ended.values():
        status[e["status"]] = status.get(e["status"], 0) + 1
    ended = ", ".join(f"{k} {v}" for k, v in sorted(status.items())) or "none"
    return f"""# {s.title or s.name}: dataset (study {s.name} v{s.version})

{s.description.strip()}

Exported by `tom-envs study export` (dataset format {m["dataset_version"]}). Everything here was
recorded as it happened (an append-only, fsync'd journal) and is written from that journal alone.

## What was collected

- {c["participants"]} participants enrolled: {c["completed"]} completed, {c["declined"]} declined
  consent, {c["screened_out"]} were screened out by attention checks (`participants.csv`).
- {c["episodes"]} episodes ({c["episodes_ended"]} ended: {ended}); {c["episodes_with_people"]} with
  more than one person; {c["fallbacks"]} played a fallback condition because nobody else came in
  time (`episodes.csv`: `condition_intended` vs `condition`).
- Every decision of every seat, with each person's response time in seconds (`latency_s`: from the
  moment the decision was shown to the moment it reached the server), in the suite's standard
  trajectories (`trajectories/`); the partners' decisions as the suite's runner records them.
- Survey answers and attention checks (`surveys.csv`){"; free text and chat omitted" if m["free_text_omitted"] else ""}.

## Design

Design `{s.design}`, order `{s.order}`, seed {s.seed}, {s.episodes_per_condition} episode(s) per
condition; episode *i* of a condition plays the game's seed + *i* in every condition.

| condition | partner |
|---|---|
{conds}

## Rules and code

Each trajectory's header records the game id, its rules version (`game_version`), every argument,
the suite version and a digest of the suite's code that played it. `tom-envs study verify DIR`
replays every trajectory through the engine installed and fails, naming the file and decision,
where the rules no longer give the same game.

| game | id | rules version |
|---|---|---|
{games}

Recorded with suite version(s) {", ".join(m["recorded_with"]["suite_versions"]) or "-"}.

## Privacy

Participants are `P0001`, `P0002`, ... in the order they enrolled. No link, key or platform id is
in this dataset. Free-text answers and chat are released as written: review them before release.

## Consent text shown

{s.consent.strip() or "(none)"}
"""


def verify(dataset: str | Path) -> list[str]:
    """Replay every trajectory of a dataset through the current engine; the problems found
    (empty when every trajectory is reproduced)."""
    from tom_envs.registration import game_spec

    problems = []
    for path in sorted(Path(dataset).glob("trajectories/*.jsonl")):
        ep = Episode.read(path)
        if ep.digest_ok is False:
            problems.append(f"{path.name}: edited after it was written (digest mismatch)")
            continue
        config = ep.config or {}
        name = ep.env_id.split("/")[-1].rsplit("-v", 1)[0]
        spec = game_spec(name)
        recorded = config.get("game_version")
        if recorded is not None and recorded != spec.version:
            problems.append(f"{path.name}: recorded under {ep.env_id} rules version {recorded}, the "
                            f"engine has version {spec.version}")  # fmt: skip
        problems += [f"{path.name}: {p}" for p in replay(ep)]
    return problems


def replay(ep: Episode) -> list[str]:
    """Play ``ep``'s moves again from its seed; where rewards, people's observations, the length
    or the returns differ from the record (at most the first few problems)."""
    from tom_envs.registration import game_spec

    name = ep.env_id.split("/")[-1].rsplit("-v", 1)[0]
    spec = game_spec(name)
    kwargs = dict(ep.env_kwargs)
    env = spec.load().raw_env(**{**spec.kwargs, **kwargs})
    env.reset(seed=ep.seed)
    problems: list[str] = []
    returns = dict.fromkeys(env.possible_agents, 0.0)
    for rec in ep.steps:
        while env.agents and (env.terminations[env.agent_selection] or env.truncations[env.agent_selection]):
            env.step(None)
        if not env.agents or env.agent_selection != rec["agent"]:
            problems.append(f"decision {rec['index']}: the engine asks {env.agent_selection if env.agents else 'nobody'}"
                            f", the record has {rec['agent']}")  # fmt: skip
            break
        if rec.get("human") and "observation_text" in rec:
            shown = env.text_observation(rec["agent"]).observation
            if shown != rec["observation_text"]:
                problems.append(f"decision {rec['index']}: {rec['agent']} would now be shown "
                                "another observation than the one recorded")  # fmt: skip
        try:
            if rec.get("message") and rec["message"] != OMITTED and not rec.get("message_error"):
                env.send_message(rec["agent"], rec["message"])
            env.step(int(rec["action"]))
        except Exception as exc:
            problems.append(f"decision {rec['index']}: {type(exc).__name__}: {exc}")
            break
        if rec.get("rewards") is not None:
            now = {a: float(env.rewards.get(a, 0.0)) for a in env.possible_agents}
            if any(abs(now[a] - float(rec["rewards"].get(a, 0.0))) > 1e-9 for a in now):
                problems.append(f"decision {rec['index']}: rewards {now}, recorded {rec['rewards']}")
            for a in now:
                returns[a] += now[a]
        if len(problems) >= 5:
            break
    if not problems and ep.status == "ok":
        for a, r in (ep.returns or {}).items():
            if abs(returns.get(a, 0.0) - float(r)) > 1e-6:
                problems.append(f"return of {a}: {returns.get(a)} now, {r} recorded")
    return problems
