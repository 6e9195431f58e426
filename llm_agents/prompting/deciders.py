"""How the action is finally produced: QA, CoT (004 Figs. 4, 6; 002 App. C.1) or LM scoring (004
Fig. 1), and the log-probability scorer LM prompting needs."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tom_llm_agents.client import LLMResponse
from tom_llm_agents.failures import LLMError
from tom_llm_agents.prompting import templates as T
from tom_llm_agents.prompting.base import Decider, Decision, DecisionContext

#: Games whose rules show a payoff table (004's iterated matrix games).
PAYOFF_TABLE_GAMES = ("RockPaperScissors", "BattleOfSexes", "PrisonersDilemma")


def cot_instruction(ctx: DecisionContext) -> str:
    """The step-by-step instruction: "consider the rules and payoffs" where the game shows a
    payoff table (and the payoffs are not ablated away, 004 Table 3), else "consider the
    rules"."""
    info = ctx.agent.info
    game = info.env_id.split("/")[-1].split("-v")[0] if info is not None else ""
    if game in PAYOFF_TABLE_GAMES and not ctx.agent.hide_payoffs:
        return ctx.T.COT_INSTRUCTION_PAYOFFS
    return ctx.T.COT_INSTRUCTION


class QA(Decider):
    """Answer with the action directly (004 Fig. 4: QA prompting)."""

    name = "qa"
    max_tokens = 64


class CoT(Decider):
    """Reason step by step, then answer (004 Fig. 6; 002's "Explanation: … Action: …").

    Args:
        examples: optional worked examples placed before the question (004 Fig. 13's CoT 3-shot;
            they must be written for the game at hand).
        max_tokens: generation budget (512 tokens; a reasoning model needs thousands: set the
            agent's ``max_tokens``).
    """

    name = "cot"

    def __init__(self, examples: str = "", max_tokens: int = 512) -> None:
        self.examples = examples.strip()
        self.fields = {"reasoning": T.COT_FIELD}
        self.instruction = (self.examples + "\n\n" if self.examples else "") + T.COT_INSTRUCTION
        self.max_tokens = max_tokens

    def fields_for(self, ctx: DecisionContext) -> dict[str, str]:
        """The reasoning field, described in the prompt's language."""
        return {"reasoning": ctx.T.COT_FIELD}

    def instruction_for(self, ctx: DecisionContext) -> str:
        """Worked examples given as text (if any), then the step-by-step instruction (which
        speaks of payoffs only where the prompt shows a payoff table)."""
        return (self.examples + "\n\n" if self.examples else "") + cot_instruction(ctx)


class Explain(Decider):
    """002 App. A.1/C.1's answer: "Explanation: <brief explanation for selecting the move>" then
    "Action: <selected move>", with no step-by-step instruction (the authors' prompt has none)."""

    name = "explain"
    max_tokens = 256

    def fields_for(self, ctx: DecisionContext) -> dict[str, str]:
        """The explanation field, described in the prompt's language."""
        return {"explanation": ctx.T.EXPLANATION_FIELD}


class StepsCoT(CoT):
    """003 §3's chain of thought in one generation: step 1, the world state in the model's own
    words (this decider's field), then the steps the pieces ask for as answer fields (partner
    and self modelling, self-reflection: ``partner`` and ``reflect``), then the action, as the
    in-context examples show. Without those pieces it is 003's baseline agent (CoT without
    partner modelling and self-reflection)."""

    name = "cot_steps"

    def fields_for(self, ctx: DecisionContext) -> dict[str, str]:
        """Step 1's field, described in the prompt's language."""
        return {"world_state": ctx.T.WORLD_STATE_FIELD}

    def instruction_for(self, ctx: DecisionContext) -> str:
        """The steps of this decision, in order, then the action."""
        names = ["world_state", *(n for n in ctx.fields if n in ctx.T.STEP_NAMES)]
        steps = [ctx.T.STEP_NAMES[n] for n in names if n in ctx.T.STEP_NAMES]
        listed = "; ".join(f"{i + 1}) {s}" for i, s in enumerate(steps))
        return ctx.T.STEPS_INSTRUCTION.format(steps=listed, last=len(steps) + 1)


@dataclass
class Scores:
    """Log-probabilities of continuations and how they were obtained.

    Attributes:
        logprobs: one per continuation, in order (a lower bound where ``exact`` is False).
        exact: per continuation, whether every token was found among the returned alternatives.
        responses: the scoring calls made.
    """

    logprobs: list[float]
    exact: list[bool]
    responses: list[LLMResponse]

    def best(self) -> int:
        """Index of the highest-scoring continuation (the first on ties)."""
        return max(range(len(self.logprobs)), key=lambda i: (self.logprobs[i], -i))


def score_continuations(
    ctx: DecisionContext,
    prompt: str,
    continuations: Sequence[str],
    step: str = "lm",
    top_logprobs: int = 20,
    max_tokens_per_continuation: int = 12,
) -> Scores:
    """Score each continuation of ``prompt`` by its total token log-probability.

    Works through the completions endpoint with ``logprobs``: one 1-token request per distinct
    prefix, walking each continuation token by token through the returned alternatives (the
    longest alternative that continues the text is taken). A continuation whose next piece is
    not among the alternatives gets a lower bound (the smallest returned log-probability) and is
    marked inexact. Shared prefixes (``" Option"``) are asked once.
    """
    dists: dict[str, dict[str, float]] = {}
    responses: list[LLMResponse] = []

    def dist(prefix: str) -> dict[str, float]:
        if prefix not in dists:
            request = ctx.request(
                prompt=prompt + prefix, max_tokens=1, top_logprobs=top_logprobs, temperature=0.0
            )
            response = ctx.ask(step, request)
            responses.append(response)
            alts = response.logprobs[0] if response.logprobs else {}
            if not alts:
                raise LLMError("the server returned no token log-probabilities")
            dists[prefix] = alts
        return dists[prefix]

    logprobs, exact = [], []
    for cont in continuations:
        total, consumed, ok = 0.0, "", True
        for _ in range(max_tokens_per_continuation):
            if consumed == cont:
                break
            alts = dist(consumed)
            rest = cont[len(consumed) :]
            matches = [(tok, lp) for tok, lp in alts.items() if tok and rest.startswith(tok)]
            if not matches:
                total += min(alts.values()) - math.log(2.0)
                ok = False
                break
            tok, lp = max(matches, key=lambda m: len(m[0]))
            total += lp
            consumed += tok
        else:
            ok = consumed == cont
        logprobs.append(total)
        exact.append(ok)
    return Scores(logprobs, exact, responses)


def lm_prompt(ctx: DecisionContext, question: str | None = None) -> str:
    """A plain-text prompt ending in ``A:`` (004 Fig. 1: rules, history, ``Q: … A:``)."""
    parts = [ctx.rules.strip(), ctx.context_text(legal=True, strip_question=True)]
    q = question if question is not None else ctx.final_question()
    body = "\n\n".join(p for p in parts if p)
    return f"{body}\n{q}\nA:"


def choose_by_score(
    ctx: DecisionContext, prompt: str, options: Mapping[int, str], step: str
) -> tuple[int, dict[str, float], bool]:
    """The option whose text (after a space) is the most likely continuation of ``prompt``."""
    keys = list(options)
    scores = score_continuations(ctx, prompt, [" " + options[k] for k in keys], step=step)
    table = {options[k]: round(lp, 4) for k, lp in zip(keys, scores.logprobs, strict=True)}
    return keys[scores.best()], table, all(scores.exact)


class LM(Decider):
    """Score every candidate by its token log-probabilities and take the best (004 Fig. 1).

    Needs a server whose completions endpoint returns log-probabilities (llama.cpp, vLLM, and
    OpenAI's completion models do). Where scoring fails, the decision falls back to QA and the
    trajectory says so (``notes["lm_fallback"]``).
    """

    name = "lm"

    def decide(self, ctx: DecisionContext) -> Decision:
        """Argmax of the candidates' log-probabilities."""
        try:
            action, table, exact = choose_by_score(ctx, lm_prompt(ctx), ctx.candidates, "lm")
        except LLMError as exc:
            ctx.notes["lm_fallback"] = str(exc)
            return ctx.agent.generate(ctx, QA())
        ctx.notes["lm_scores"] = table
        ctx.notes["lm_exact"] = exact
        return Decision(action=action, text=ctx.candidates[action])
