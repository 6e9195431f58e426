"""The pieces a strategy is made of, and the context they share for one decision.

A strategy is one :class:`Decider` (how the action is finally produced: QA, CoT or LM scoring) and
any number of :class:`Piece` objects, each adding one idea from a paper. For every decision the
agent builds a :class:`DecisionContext` from the turn's text layer and runs the pieces' hooks in
order of :attr:`Piece.priority`:

1. :meth:`Piece.outcome`: learn from the previous decision's outcome (Reflexion's reflection);
2. :meth:`Piece.prepare`: enrich the context (a belief state replaces the observation, a ToM
   analysis adds a section, S2A rewrites rules and history, Social adds a prediction, ToM planning
   restricts the candidates to a recommender's top-k, Plans+Insights asks for extra fields);
3. the decider produces an action (the agent's invalid-output policy re-prompts on bad output);
4. :meth:`Piece.verify` may veto it (self-verification); a vetoed action is removed from the
   candidates and the decider runs again;
5. :meth:`Piece.finish` sees the final action (literal ToM prediction after acting, storing plans).

Everything a piece adds is visible to later pieces and to the decider, so pieces compose: a
Reflexion agent's literal-ToM prediction sees its reflections (004 Fig. 12).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from llm_agents.client import LLMRequest, LLMResponse
from llm_agents.prompting import templates as T
from tom_envs.core.agents import EpisodeInfo, Turn
from tom_envs.core.game import TextObservation

if TYPE_CHECKING:
    from llm_agents.agent import LLMAgent


@dataclass
class Decision:
    """What a decider returns.

    Attributes:
        action: the chosen legal action, or ``None`` when the output stayed invalid.
        fields: the free-text fields of the final reply (reasoning, plans...).
        message: chat text for teammates, if any.
        feedback: the game's feedback on the last reply.
        text: the last raw reply.
        reprompts: how many times the model was asked again after an invalid answer.
    """

    action: int | None
    fields: dict[str, str] = field(default_factory=dict)
    message: str | None = None
    feedback: str = ""
    text: str = ""
    reprompts: int = 0


@dataclass
class MemoryEntry:
    """One past decision in the agent's episodic memory."""

    decision: int
    action_text: str
    valid: bool
    feedback: str = ""
    reward: float | None = None
    message: str | None = None

    def line(self) -> str:
        """One line for the prompt."""
        out = f"- decision {self.decision + 1}: {self.action_text}"
        if self.message:
            out += f' (said: "{self.message}")'
        if not self.valid:
            out += " (your answer was invalid; this action was played for you)"
        if self.reward is not None:
            out += f"; reward received after it: {self.reward:g}"
        return out


@dataclass
class DecisionContext:
    """Everything pieces and deciders read and write for one decision.

    Attributes:
        agent: the :class:`~llm_agents.agent.LLMAgent` deciding.
        turn: the runner's turn.
        text: the turn's text layer (rules, observation, legal actions).
        rules: the rules shown in the system prompt (S2A may replace them).
        observation: the observation shown (a belief state or S2A may replace it).
        candidates: actions the model may choose now (top-k or verification may shrink it).
        sections: ``(title, body)`` blocks added after the observation, in order.
        fields: extra answer fields requested before the action (``name -> description``).
        question: the final question (a piece may replace it, e.g. the belief prompt's).
        prediction: probe answers for the runner, e.g. ``{"partner_action": 1}``.
        notes: what each piece produced, recorded in the trajectory.
        calls: every model call of this decision (step, text, tokens, latency, cached).
    """

    agent: LLMAgent
    turn: Turn
    text: TextObservation
    rules: str
    observation: str
    candidates: dict[int, str]
    sections: list[tuple[str, str]] = field(default_factory=list)
    fields: dict[str, str] = field(default_factory=dict)
    question: str | None = None
    prediction: dict[str, Any] = field(default_factory=dict)
    notes: dict[str, Any] = field(default_factory=dict)
    calls: list[dict[str, Any]] = field(default_factory=list)

    # ------------------------------------------------------------------ prompt pieces
    @property
    def me(self) -> str:
        """This agent's name (``player_k``)."""
        return self.turn.agent

    def others(self) -> str:
        """The other players, for prompts."""
        info = self.agent.info
        n = info.num_players if info is not None else 2
        names = [f"player_{i}" for i in range(n) if i != self.turn.player]
        return ", ".join(names) if names else "nobody"

    def system_prompt(self, role: bool = True) -> str:
        """Rules, then the agent's role (002 App. C.1)."""
        parts = [self.rules.strip()] if self.rules.strip() else []
        if role:
            parts.append(T.AGENT_ROLE.format(me=self.me, others=self.others()))
        return "\n\n".join(parts)

    def context_text(
        self, legal: bool = True, sections: bool = True, strip_question: bool = False
    ) -> str:
        """Memory, observation, sections and the candidate actions, as one user message body.

        ``strip_question`` drops a final ``Q: …`` line of the observation (when another question,
        such as a prediction, is asked instead).
        """
        parts = []
        memory = self.agent.memory_lines()
        if memory:
            parts.append(T.MEMORY_HEADER + "\n" + "\n".join(memory))
        observation = self.observation.strip()
        if strip_question:
            lines = observation.splitlines()
            if lines and lines[-1].lstrip().startswith("Q:"):
                observation = "\n".join(lines[:-1]).rstrip()
        parts.append(observation)
        if sections:
            for title, body in self.sections:
                parts.append(f"{title}\n{body}".strip() if title else body.strip())
        if legal:
            parts.append(self.legal_block())
        return "\n\n".join(p for p in parts if p)

    def legal_block(self) -> str:
        """``Legal actions:`` and the candidates, one per line."""
        header = self.notes.get("candidates_header") or "Legal actions:"
        return header + "\n" + "\n".join(f"- {t}" for t in self.candidates.values())

    def observation_question(self) -> str | None:
        """The observation's own closing question (a last line starting ``Q:``), if any."""
        lines = [ln for ln in self.observation.strip().splitlines() if ln.strip()]
        if lines and lines[-1].lstrip().startswith("Q:"):
            return lines[-1].strip()
        return None

    def final_question(self) -> str:
        """The question that ends the action prompt: a piece's, the observation's own, or
        :data:`~llm_agents.prompting.templates.QA_QUESTION`."""
        if self.question is not None:
            return self.question
        return self.observation_question() or T.QA_QUESTION

    # ------------------------------------------------------------------ model calls
    def request(
        self,
        messages: Sequence[dict[str, str]] | None = None,
        *,
        prompt: str | None = None,
        schema: dict[str, Any] | None = None,
        max_tokens: int = 128,
        top_logprobs: int = 0,
        temperature: float | None = None,
        sample: int = 0,
    ) -> LLMRequest:
        """An :class:`LLMRequest` with the agent's sampling settings."""
        temp = self.agent.temperature if temperature is None else temperature
        seed = None
        if temp > 0 and self.agent.info is not None and self.agent.info.seed is not None:
            seed = int(self.agent.info.seed) * 1009 + self.turn.player
        return LLMRequest(
            messages=[dict(m) for m in messages or []],
            prompt=prompt,
            max_tokens=max_tokens,
            temperature=temp,
            seed=seed,
            schema=schema,
            top_logprobs=top_logprobs,
            sample=sample,
        )

    def ask(self, step: str, request: LLMRequest) -> LLMResponse:
        """Send one request, recording it under ``step``."""
        return self.ask_many(step, [request])[0]

    def ask_many(self, step: str, requests: Sequence[LLMRequest]) -> list[LLMResponse]:
        """Send requests concurrently, recording each under ``step``."""
        responses = self.agent.client.complete_many(list(requests))
        for r in responses:
            self.record(step, r)
        return responses

    def record(self, step: str, response: LLMResponse) -> None:
        """Keep a response's text and usage for the trajectory and the episode's totals."""
        self.calls.append(
            {
                "step": step,
                "text": response.text,
                "tokens_in": response.tokens_in,
                "tokens_out": response.tokens_out,
                "latency_s": round(response.latency_s, 4),
                "cached": response.cached,
                "constrained": response.constrained,
            }
        )
        self.agent.usage_add(response)


class Piece:
    """One prompting idea. Override the hooks you need; all default to doing nothing."""

    #: Registry name (``"belief"``, ``"social"``...).
    name = "piece"
    #: Order among pieces (lower runs first).
    priority = 50

    def reset(self, agent: LLMAgent, info: EpisodeInfo) -> None:
        """Start of an episode."""

    def outcome(self, ctx: DecisionContext) -> None:
        """Before preparing: the previous decision's outcome is in ``agent.memory[-1]``."""

    def prepare(self, ctx: DecisionContext) -> None:
        """Enrich the context before the decider runs."""

    def verify(self, ctx: DecisionContext, action: int) -> bool:
        """``False`` vetoes ``action`` (it is removed from the candidates; the decider reruns)."""
        return True

    def finish(self, ctx: DecisionContext, action: int, decision: Decision) -> None:
        """After the final action is known."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class Decider:
    """Produces the action. Generating deciders only describe their prompt; the agent runs the
    generation with its invalid-output policy (:meth:`LLMAgent.generate`)."""

    name = "decider"
    #: Extra answer fields before the action (``name -> description``).
    fields: dict[str, str] = {}  # noqa: RUF012 - read-only class default
    #: An instruction added before the answer format.
    instruction: str = ""
    #: Generation budget for the answer.
    max_tokens: int = 48

    def decide(self, ctx: DecisionContext) -> Decision:
        """Choose among ``ctx.candidates``."""
        return ctx.agent.generate(ctx, self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
