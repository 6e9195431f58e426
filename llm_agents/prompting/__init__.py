"""Prompting strategies: one decider plus composable pieces, named and combined with ``+``.

``build_strategy("cot+social")`` returns a :class:`~tom_llm_agents.prompting.base.Decider` and the
pieces, sorted by priority. Names:

==================  ===========================================================  ==============
name                what                                                         paper
==================  ===========================================================  ==============
``qa``              answer with the action (the default decider)                 004 Fig. 4
``cot``             reason step by step, then answer                             004 Fig. 6, 002
``explain``         "Explanation: ... Action: ...", no step-by-step instruction  002 App. C.1
``cot_steps``       one generation in steps: world state, the pieces' steps,     003 §3
                    then the action
``lm``              score every action by token log-probabilities                004 Fig. 1
``belief``          textual belief state rewritten after each observation        000 §4.2
``tom``             interpret the partner's last action first                    002 App. C.2
``verify``          self-verification of the chosen action                       002 App. C.3
``partner``         partner-state (and self) modelling, a step of the answer     003 §3
``reflect``         self-reflection on actions and feedback, a step of the       003 §3
                    answer (``partner_call``/``reflect_call``: separate calls)
``tom1``/``tom2``   first/second-order ToM planning over the recommender top-k   001 §3.2-3.3
``plans``           Plans + Insights                                             004 Fig. 8
``reflexion``       Reflexion with 3 memories                                    004 Figs. 10-11
``s2a``             System 2 Attention rewrite of rules and history              004 Fig. 16
``social``          predict the partner (QA), then act; ``social_lm``: LM        004 Fig. 18
``predict``         literal ToM after acting (QA); ``predict_lm``, ``predict_cot``  004 Figs. 2-7
``oracle``          the partner's true action is given (``oracle_max``: + maximise)  004 Figs. 14-15
==================  ===========================================================  ==============

Presets: ``paper000`` = ``qa+belief``, ``paper001`` = ``cot+tom2``, ``paper002`` =
``explain+tom+verify``, ``paper003`` = ``cot_steps+partner+reflect``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tom_llm_agents.prompting.base import Decider, Decision, DecisionContext, MemoryEntry, Piece
from tom_llm_agents.prompting.deciders import (
    LM,
    QA,
    CoT,
    Explain,
    StepsCoT,
    score_continuations,
)
from tom_llm_agents.prompting.pieces import (
    S2A,
    BeliefState,
    Oracle,
    PartnerModelling,
    PlansInsights,
    PredictPartner,
    Reflexion,
    SelfReflection,
    SelfVerification,
    Social,
    ToMPlanning,
    ToMReasoning,
)

DECIDERS: dict[str, Callable[..., Decider]] = {
    "qa": lambda **o: QA(),
    "cot": lambda **o: CoT(examples=o.get("examples", "")),
    "cot_steps": lambda **o: StepsCoT(),
    "explain": lambda **o: Explain(),
    "lm": lambda **o: LM(),
}


def _oracle(maximize: bool) -> Callable[..., Piece]:
    def make(**o: Any) -> Piece:
        if o.get("oracle") is None:
            raise ValueError(
                "the oracle strategy needs the partner's true action: pass oracle=turn->action "
                "(for matrix games, oracle_partner=<bot name>)"
            )
        return Oracle(o["oracle"], maximize=maximize)

    return make


PIECES: dict[str, Callable[..., Piece]] = {
    "belief": lambda **o: BeliefState(),
    "tom": lambda **o: ToMReasoning(),
    "verify": lambda **o: SelfVerification(),
    "partner": lambda **o: PartnerModelling(inline=True),
    "reflect": lambda **o: SelfReflection(inline=True),
    "partner_call": lambda **o: PartnerModelling(inline=False),
    "reflect_call": lambda **o: SelfReflection(inline=False),
    "tom1": lambda **o: ToMPlanning(1, o.get("top_k", 5), o.get("recommender")),
    "tom2": lambda **o: ToMPlanning(2, o.get("top_k", 5), o.get("recommender")),
    "plans": lambda **o: PlansInsights(),
    "reflexion": lambda **o: Reflexion(o.get("memories", 3)),
    "s2a": lambda **o: S2A(),
    "social": lambda **o: Social("qa"),
    "social_lm": lambda **o: Social("lm"),
    "social_cot": lambda **o: Social("cot"),
    "predict": lambda **o: PredictPartner("qa"),
    "predict_lm": lambda **o: PredictPartner("lm"),
    "predict_cot": lambda **o: PredictPartner("cot"),
    "oracle": _oracle(False),
    "oracle_max": _oracle(True),
}

PRESETS: dict[str, str] = {
    "paper000": "qa+belief",
    "paper001": "cot+tom2",
    "paper002": "explain+tom+verify",
    "paper003": "cot_steps+partner+reflect",
}


def strategy_names() -> list[str]:
    """Every name usable in a strategy string."""
    return [*DECIDERS, *PIECES, *PRESETS]


def build_strategy(spec: str = "qa", **options: Any) -> tuple[Decider, list[Piece]]:
    """``"cot+social"`` -> ``(CoT(), [Social("qa")])``.

    At most one decider (default QA); pieces in priority order. ``options``: ``oracle``,
    ``recommender``, ``top_k``, ``memories``, ``examples``.
    """
    names: list[str] = []
    for part in spec.replace(" ", "").split("+"):
        if not part:
            continue
        names.extend(PRESETS[part].split("+") if part in PRESETS else [part])
    deciders = [n for n in names if n in DECIDERS]
    unknown = [n for n in names if n not in DECIDERS and n not in PIECES]
    if unknown:
        raise ValueError(f"unknown strategy part(s) {unknown}; choose from {strategy_names()}")
    if len(set(deciders)) > 1:
        raise ValueError(f"one decider at most (qa, cot or lm), got {deciders}")
    decider = DECIDERS[deciders[0] if deciders else "qa"](**options)
    pieces = [PIECES[n](**options) for n in dict.fromkeys(n for n in names if n in PIECES)]
    pieces.sort(key=lambda p: p.priority)
    return decider, pieces


__all__ = [
    "DECIDERS",
    "LM",
    "PIECES",
    "PRESETS",
    "QA",
    "S2A",
    "BeliefState",
    "CoT",
    "Decider",
    "Decision",
    "DecisionContext",
    "Explain",
    "MemoryEntry",
    "Oracle",
    "PartnerModelling",
    "Piece",
    "PlansInsights",
    "PredictPartner",
    "Reflexion",
    "SelfReflection",
    "SelfVerification",
    "Social",
    "StepsCoT",
    "ToMPlanning",
    "ToMReasoning",
    "build_strategy",
    "score_continuations",
    "strategy_names",
]
