"""Protocol presets: each paper's LLM protocol, selectable by name (``llm:preset=paper004:model=M``).

A preset fixes everything a paper's protocol decides besides the model: the prompting strategy,
free-text or constrained decoding, sampling, the invalid-output policy (re-prompt with the game's
feedback, resample the same prompt until valid, or let the invalid answer use up the turn), memory
and verbatim history, few-shot examples, ToM probes, the verifier's cap. Any setting given beside
the preset in the spec overrides it, and the agent's :meth:`~tom_llm_agents.agent.LLMAgent.config`
records the resolved values (with the preset's name), so a result is keyed by what actually ran.

Where a paper does not state a setting, the preset says so in :attr:`Preset.unstated` and uses the
suite's choice (temperature 0 for greedy, reproducible runs, unless the paper samples). Every
difference from the paper that the suite cannot remove is listed in :attr:`Preset.differences`.
:func:`preset_table` renders the presets table of ``docs/results/llm_presets.md``.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Preset:
    """One paper's protocol (or one table row's variant of it).

    Attributes:
        name: the spec value (``preset=<name>``).
        paper: ``"000"`` ... ``"004"``.
        game: the registered game it is written for (presets run on any game, but reproduce
            only there).
        reproduces: the table(s) or condition it reproduces.
        settings: the :class:`~tom_llm_agents.agent.LLMAgent` settings it fixes.
        env_kwargs: game arguments the protocol needs on its own ``game`` (Guandan's
            ``language=zh``, 004 Table 2's ``action_names=rps``): the agent requires them
            (:meth:`~tom_llm_agents.agent.LLMAgent.required_env_kwargs`), ``run``, ``eval`` and
            ``reproduce`` apply them, and a run that sets them otherwise is refused (unless the
            agent is given ``game_args=none``).
        unstated: settings the paper does not state, with the suite's choice.
        differences: what still differs from the paper.
    """

    name: str
    paper: str
    game: str
    reproduces: str
    settings: dict[str, Any]
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    unstated: str = ""
    differences: str = ""


#: Paper 000's protocol (§5.1, App. A-C; the authors' code as specs §1.8-1.9 record it).
P000: dict[str, Any] = dict(
    decoding="free",
    invalid="forfeit",
    reprompts=0,
    temperature=0.0,
    memory=0,
    history=2,
    probes=True,
    probe_batch="target",
    menu="none",
    answer_format="game",
    examples="none",
)
#: Paper 000's probes: one teammate per action, App. C's wording (a bomb named by its number).
P000_GAME: dict[str, Any] = {"probes": "one", "probe_subject": "number"}
P000_UNSTATED = "the generation budget of each call (the suite's defaults)"
P000_DIFFERENCES = (
    "an invalid answer uses up the turn, as in the paper, but the suite's bomb defusal has no "
    "'do nothing' move: a recorded fallback move (marked fallback, never the model's) is played, "
    "the game's App. B feedback is shown at the next decision and the ToM questions are asked "
    "about the move played; the game's parser reads more phrasings and any quotes (the "
    "original's substring rules and straight quotes only), so a few replies the original "
    "counted invalid are valid here (and a bare number, which the suite would read as the "
    "n-th legal action, is refused: no list was shown); the system message is App. A.1 "
    "followed by the original's system line 'You are playing a text game with the user.' (the "
    "original sent that line alone as the system message and App. A.1 as a user message); the "
    "belief-update request is the suite's wording of the original instruction; "
    "the ToM questions' target teammate is drawn from the mission and the time (the game's "
    "probes='one', the preset's game argument; the original used numpy's global generator), "
    "and with probes='all' the questions about each teammate go in a call of their own; each "
    "call ends with the suite's answer line ('q1: <answer>' per question) and the answers are "
    "read as yes/no and scored against the game's epistemic tracker at the moment of asking "
    "(the paper's free answers were judged by annotators with a global view)"
)

_P004 = dict(
    decoding="free",
    invalid="resample",
    reprompts=10,
    temperature=0.7,
    memory=0,
    history=0,
    probes=False,
)
_P004_UNSTATED = (
    'the sampling temperature ("stochastic decoding": 0.7 here) and the resampling cap (10 '
    "samples, then a recorded fallback)"
)
_P004_DIFF = (
    "the prompts follow the figures' captions and Akata et al.'s repeated-game wording (the "
    "figures are images, so the exact wording is the suite's); the answer is asked for in the "
    "suite's format ('Action: <option>', the prediction 'Prediction: <option>'); the literal-ToM "
    "prediction is a separate call after the action (Figs. 2, 5, 7)"
)
_P004_LM_DIFF = (
    _P004_DIFF + "; LM prompting scores each action through the completions endpoint's top-20 "
    "token alternatives (a lower bound when a token is not among them, recorded as lm_exact), "
    "where the authors read the probabilities from the model directly"
)
#: What the paper-001 presets still do differently from the paper.
_P001_DIFF = (
    "the action recommender is the suite's hand evaluation (tom_envs.games.guandan.recommender), "
    "standing in for the paper's DanZero-based RL scorer, whose weights are not available; the "
    "game text is rendered by the suite (rules after App. A.2's template, state and recent "
    "plays), where the paper had the model convert low-level states with conversion prompts; "
    "the ToM analysis and the planning/evaluation prompts are the suite's wording of §3.3 (the "
    "paper's App. B prompts are not reproduced in full); 2 calls per decision, as the paper's "
    "merged Planning+Evaluator after the ToM analysis"
)
#: The settings both paper-001 presets share (the strategy is each one's own).
_P001: dict[str, Any] = dict(
    decoding="free",
    invalid="reprompt",
    reprompts=2,
    temperature=0.0,
    memory=0,
    history=0,
    top_k=5,
    language="auto",
    probes=False,
)
#: The settings every paper-003 preset shares (the strategy is each one's own).
_P003: dict[str, Any] = dict(
    decoding="free",
    invalid="reprompt",
    reprompts=2,
    temperature=0.0,
    memory="auto",
    history=0,
    examples="paper003",
    menu="none",
    probes=False,
)
#: What the paper-003 presets still do differently from the paper.
_P003_DIFF = (
    "the eight examples are written for the suite's CoBlock XML and commands from the paper's "
    "description (its own use its XML and action functions and are not all printed); each is "
    "one round (App. B.2's example spans three rounds); the model is asked for labelled steps "
    "('World state:', 'Partner modelling:', 'Reflection:', 'Action:') in the suite's answer "
    "format; no list of candidate commands is shown (the rules give the command syntax, as the "
    "paper's task description does); an unreadable command is re-prompted with the game's feedback (2x), then a "
    "counted fallback (the paper does not say)"
)
#: What every paper-002 preset still does differently from the authors' agents.
_P002_DIFF = (
    "messages: the game description is the system message and the state the user message (the "
    "authors sent it as a first user turn answered 'Got it!', under a one-line system prompt); "
    "grounding: a reply the game's parser cannot read is re-prompted with the game's feedback "
    "(2x), then a counted fallback; the authors matched every 'Action:' reply to the closest "
    "legal action by fuzzy string matching (fuzzywuzzy) and drew a random action when there was "
    "no 'Action:': grounding=fuzzy reproduces theirs (difflib's similarity standing in for "
    "fuzzywuzzy's), recorded per decision; sampling seeds are derived from the episode seed "
    "(the authors' were unseeded)"
)


def _p002(strategy: str, top_p: float, **more: Any) -> dict[str, Any]:
    """The settings of a paper-002 preset: sampled at temperature 0.6 with ``top_p``, re-prompted
    with feedback twice, the game's own memory; ``more`` (the game's extras) before ``probes``."""
    return dict(
        strategy=strategy,
        decoding="free",
        invalid="reprompt",
        reprompts=2,
        temperature=0.6,
        top_p=top_p,
        memory="auto",
        history=0,
        **more,
        probes=False,
    )


#: Tables 1-2 name the RPS actions R, P and S (App. C); Tables 3 and 10 use J, F, B (the
#: matrix games' default ``letters``), as do IBS and IPD everywhere.
_TABLE2_NAMES = {"action_names": "rps"}


def _p000(name: str, reproduces: str, differences: str, **settings: Any) -> Preset:
    """A paper-000 preset: :data:`P000` with ``settings`` over it, App. C's probes on bomb
    defusal (:data:`P000_GAME`)."""
    return Preset(
        name,
        "000",
        "BombDefusal",
        reproduces,
        dict(P000, **settings),
        env_kwargs=P000_GAME,
        unstated=P000_UNSTATED,
        differences=differences,
    )


def _p001(name: str, reproduces: str, strategy: str, unstated: str = "as paper001") -> Preset:
    """A paper-001 preset on Guandan in Chinese: :data:`_P001` with its own ``strategy``."""
    return Preset(
        name,
        "001",
        "Guandan",
        reproduces,
        {"strategy": strategy, **_P001},
        env_kwargs={"language": "zh"},
        unstated=unstated,
        differences=_P001_DIFF,
    )


def _p003(
    name: str,
    reproduces: str,
    strategy: str,
    unstated: str = "as paper003",
    differences: str = _P003_DIFF,
) -> Preset:
    """A paper-003 preset on CoBlock: :data:`_P003` with its own ``strategy``."""
    return Preset(
        name,
        "003",
        "CoBlock",
        reproduces,
        {**_P003, "strategy": strategy},
        unstated=unstated,
        differences=differences,
    )


def _p004(name: str, reproduces: str, strategy: str, table2: bool = False, **more: Any) -> Preset:
    """A paper-004 preset; ``table2``: it reproduces a Table 2 row, whose RPS actions are named
    R/P/S (the preset's game argument; run Table 3's rows with the default letters)."""
    if table2:
        reproduces += (
            "; RPS actions named R/P/S as in Table 2, applied by the preset (Table 3's letters: "
            "game_args=none)"
        )
    lm = any(part in ("lm", "social_lm", "predict_lm") for part in strategy.split("+"))
    return Preset(
        name,
        "004",
        more.pop("game", "RockPaperScissors"),
        reproduces,
        {**_P004, "strategy": strategy, **more},
        env_kwargs=dict(_TABLE2_NAMES) if table2 else {},
        unstated=_P004_UNSTATED,
        differences=_P004_LM_DIFF if lm else _P004_DIFF,
    )


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in [
        _p000(
            "paper000",
            "Tables 1-2, GPT-4 + Belief: belief state (App. A.2 template, rewritten after every "
            "observation), two rounds of verbatim history, no list of legal actions, App. A.1's "
            "reply format; the ToM questions (App. C) asked right after each action inside the "
            "agent's conversation, three per call (the three orders about one teammate)",
            P000_DIFFERENCES,
            strategy="qa+belief",
        ),
        _p000(
            "paper000-nobelief",
            "Tables 1-2, GPT-4 without belief state (the raw observations in the history, also "
            "in the ToM questions' conversation)",
            "as paper000",
            strategy="qa",
        ),
        _p000(
            "paper000-menu",
            "a variant of paper000, not the paper's protocol: the suite's list of legal actions "
            "and its own answer format (Message and Action lines); the list removes exactly the "
            "invalid moves Table 1's valid % counts",
            "as paper000, and the list of legal actions with the agent's answer format",
            strategy="qa+belief",
            menu="auto",
            answer_format="agent",
        ),
        _p001(
            "paper001",
            "second-order ToM planning over the RL recommender's top-5, in Chinese (the "
            "paper's main setting)",
            "cot+tom2",
            unstated="the temperature (0 here), the re-prompt policy (2 re-prompts with feedback)",
        ),
        _p001(
            "paper001-tom1",
            "first-order ToM planning over the recommender's top-5, in Chinese",
            "cot+tom1",
        ),
        Preset(
            "paper002",
            "002",
            "Hanabi",
            "Table 3 (Hanabi): reasoning with ToM-reasoning step and answer verification, "
            'episodic memory of previous actions (the game\'s own "My Action History" line, '
            "the paper's; memory=auto adds no second list)",
            _p002("explain+tom+verify", top_p=1.0, verify_rounds=10),
            unstated=(
                "a cap on the verifier loop (the authors loop until the verifier agrees; here at "
                "most 10 vetoes per decision, recorded in notes['verify'])"
            ),
            differences=_P002_DIFF
            + "; the ToM step and the verifier see the suite's Hanabi text (App. B.2's state "
            "description, plus each partner's last action), not the authors' separate prompt "
            "with the partner's move and 'Think step by step about partners action'; the "
            "verifier's question is 'Selected action: X' after App. C.3's instruction (the "
            "authors': 'State: ... My Solution: X. Think step by step. Think about rules, think "
            "about conventions, and think about safety.'); the lettered legal actions are "
            "listed under the agent's 'Legal actions:' (App. B.2: 'Available Actions:')",
        ),
        Preset(
            "paper002-overcooked",
            "002",
            "Overcooked",
            "Table 1 (Overcooked): mid-level actions grounded by shortest paths, reasoning "
            "without the ToM step (the paper skipped it on Overcooked), App. A.1's prompt with "
            "its conventions line",
            _p002("explain", top_p=0.9, interface="midlevel"),
            differences=_P002_DIFF
            + "; the authors' released Overcooked agent shows its own inventory only "
            "(single_agent_ablation) and asks for no explanation; the suite shows both chefs "
            "and asks for App. A.1's 'Explanation: ... Action: ...'",
        ),
        Preset(
            "paper002-collab",
            "002",
            "CollabEscape",
            "Table 2 (CollabCapture, CollabEscape): reasoning with the ToM-reasoning step",
            _p002("explain+tom", top_p=0.9),
            differences=_P002_DIFF
            + "; the ToM step uses App. C.2's instruction generalised from Hanabi (the authors' "
            "Collab Escape interpreter asks for 'a short explanation about what my partner "
            "intends to do next')",
        ),
        _p003(
            "paper003",
            "the full agent (Figs. 6-7): one generation per decision with the four CoT steps "
            "(world state, partner and self modelling, self-reflection, action) and eight "
            "in-context examples (2 independent, 3 skill-dependent, 3 goal-dependent tasks)",
            "cot_steps+partner+reflect",
            unstated="the temperature (0 here) and the re-prompt policy (2 re-prompts)",
        ),
        _p003(
            "paper003-baseline",
            "the baseline LLM agent: CoT without partner-state modelling (step 2) and "
            "self-reflection (step 3); its examples show the world state and the action only",
            "cot_steps",
        ),
        _p003(
            "paper003-3call",
            "a variant, not the paper's protocol: partner modelling and self-reflection as two "
            "separate calls before the action (3 calls per decision, about 3x the tokens)",
            "cot_steps+partner_call+reflect_call",
            differences="as paper003; and steps 2-3 are separate calls (the paper: one generation)",
        ),
        _p004(
            "paper004",
            "Tables 2-3, QA prompting (+ QA literal ToM, Fig. 5)",
            "qa+predict",
            table2=True,
        ),
        _p004(
            "paper004-lm",
            "Table 2, LM prompting (+ LM literal ToM, agent first, Fig. 2)",
            "lm+predict_lm",
            table2=True,
            temperature=0.0,
            invalid="reprompt",
            reprompts=0,
        ),
        _p004(
            "paper004-cot",
            "Tables 2-3, CoT prompting (+ CoT literal ToM)",
            "cot+predict_cot",
            table2=True,
        ),
        _p004(
            "paper004-cot3shot",
            "Table 3, CoT + 3-Shot (Fig. 13; examples written per game)",
            "cot+predict_cot",
            examples="auto",
        ),
        _p004("paper004-s2a", "Table 3, S2A (Fig. 16) then QA", "qa+s2a+predict"),
        _p004("paper004-s2a-cot", "Table 3, S2A + CoT", "cot+s2a+predict_cot"),
        _p004("paper004-social", "Tables 2-3, Social QA (Fig. 18)", "qa+social", table2=True),
        _p004("paper004-social-lm", "Table 3, Social LM", "qa+social_lm"),
        _p004(
            "paper004-plans",
            "Tables 2-3, Plans + Insights (Fig. 8)",
            "qa+plans+predict",
            table2=True,
        ),
        _p004(
            "paper004-reflexion",
            "Tables 2-3, Reflexion (Figs. 10-12; memory 1, the best for RPS and IBS; IPD: "
            "memories=3)",
            "qa+reflexion+predict",
            table2=True,
            memories=1,
        ),
        _p004(
            "paper004-oracle",
            "Table 3, Oracle (Fig. 14; needs oracle_partner=<the partner bot>)",
            "qa+oracle",
        ),
        _p004(
            "paper004-oracle-max",
            "Table 3, Oracle + Max (Fig. 15; needs oracle_partner=)",
            "qa+oracle_max",
        ),
        _p004(
            "paper004-oracle-max-nohistory",
            "Table 3, Oracle + Max - History (the interaction history removed from the prompt)",
            "qa+oracle_max",
            hide_history=True,
        ),
        _p004(
            "paper004-oracle-max-nopayoffs",
            "Table 3, Oracle + Max - Payoffs (the payoff rules removed from the prompt)",
            "qa+oracle_max",
            hide_payoffs=True,
        ),
        _p004(
            "paper004-r1",
            "Table 4, a reasoning model (DeepSeek-R1-Distill-Qwen-32B): QA with a budget of "
            "thousands of tokens, the reasoning text kept",
            "qa+predict",
            max_tokens=8192,
            temperature=0.6,
        ),
    ]
}


#: The checked-in protocol description of every preset (``protocols/<preset>.toml``): its game
#: and short test episode, the calls of a decision and their messages, decoding and sampling,
#: language, the menu shown, the answer fields, the examples and the invalid-output policy.
#: ``tests/llm_agents/test_protocol_descriptions.py`` plays each preset against a scripted model
#: and checks its real prompts against it.
PROTOCOL_DIR = Path(__file__).parent / "protocols"


def protocol_description(name: str) -> dict[str, Any]:
    """The protocol description of preset ``name`` (``ValueError`` for an unknown preset)."""
    preset(name)
    return tomllib.loads((PROTOCOL_DIR / f"{name}.toml").read_text(encoding="utf-8"))


def preset(name: str) -> Preset:
    """The preset called ``name``; an unknown name raises ``ValueError`` listing the known ones."""
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; choose from {sorted(PRESETS)}")
    return PRESETS[name]


def preset_table() -> str:
    """A markdown table of every preset: game, what it reproduces, its settings and the calls of
    a decision (from its protocol description, :func:`protocol_description`)."""
    rows = [
        "| preset | paper | game | reproduces | strategy | calls per decision | menu | decoding | "
        "invalid output | temperature | memory / history | other |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    main = {"strategy", "decoding", "invalid", "reprompts", "temperature", "memory", "history"}
    for p in PRESETS.values():
        s = p.settings
        d = protocol_description(p.name)
        invalid = {
            "resample": f"resample until valid (cap {s.get('reprompts')})",
            "reprompt": f"re-prompt with feedback ({s.get('reprompts')}x)",
            "forfeit": "uses up the turn",
        }[s["invalid"]]
        other = ", ".join(f"{k}={v}" for k, v in s.items() if k not in main)
        if p.env_kwargs:
            other += (
                ("; " if other else "")
                + "game: "
                + ", ".join(f"{k}={v}" for k, v in p.env_kwargs.items())
            )
        calls = " → ".join(c.replace("+", " (1+)") for c in d["calls"])
        if "first_calls" in d:
            calls += " (first: " + " → ".join(d["first_calls"]) + ")"
        menu = {
            "list": "listed",
            "shortlist": f"top {d.get('shortlist')}",
            "observation": "the game's",
            "none": "none",
        }[d["menu"]]
        rows.append(
            f"| `{p.name}` | {p.paper} | {p.game} | {p.reproduces} | `{s['strategy']}` | {calls} "
            f"| {menu} | {s['decoding']} | {invalid} | {s['temperature']} | "
            f"{s['memory']} / {s['history']} | {other} |"
        )
    return "\n".join(rows)


def departures_list() -> str:
    """A markdown list of every preset's unstated settings and remaining departures from its
    paper (what ``docs/results/llm_presets.md`` shows beside the presets table)."""
    lines = []
    for p in PRESETS.values():
        parts = []
        if p.unstated:
            parts.append(f"unstated (the suite's choice): {p.unstated}")
        if p.differences:
            parts.append(f"differences: {p.differences}")
        lines.append(f"- `{p.name}`: " + ("; ".join(parts) if parts else "none"))
    return "\n".join(lines)
