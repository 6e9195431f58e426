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
4. :meth:`Piece.verify` may veto it (self-verification); the verifier's critique goes back to
   the decider in its own conversation, with every candidate but the vetoed one, and the decider
   answers again (002's authors' loop, capped by the agent's ``verify_rounds``);
5. :meth:`Piece.finish` sees the final action (literal ToM prediction after acting, storing plans).

Everything a piece adds is visible to later pieces and to the decider, so pieces compose: a
Reflexion agent's literal-ToM prediction sees its reflections (004 Fig. 12).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any

from tom_envs.core.agents import EpisodeInfo, Turn
from tom_envs.core.game import TextObservation
from tom_envs.core.text import letter, named_options
from tom_llm_agents.client import LLMRequest, LLMResponse
from tom_llm_agents.prompting import templates as T

if TYPE_CHECKING:
    from tom_llm_agents.agent import LLMAgent


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

    def line(self, t: ModuleType = T) -> str:
        """One line for the prompt (in the templates' language ``t``). Rewards are not listed:
        the observation reports them, in the game's own wording (a team's reward as the team's).
        """
        out = t.MEMORY_LINE.format(n=self.decision + 1, action=self.action_text)
        if self.message:
            out += t.MEMORY_SAID.format(message=self.message)
        if not self.valid:
            out += t.MEMORY_INVALID.format(feedback=self.feedback or "-", action=self.action_text)
        return out


@dataclass
class DecisionContext:
    """Everything pieces and deciders read and write for one decision.

    Attributes:
        agent: the :class:`~tom_llm_agents.agent.LLMAgent` deciding.
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
    def T(self) -> ModuleType:
        """The templates in the prompt's language (English, or Chinese for Chinese game text)."""
        return self.agent.templates

    @property
    def me(self) -> str:
        """This agent's id (``player_k``; prompts use the game's own seat names instead)."""
        return self.turn.agent

    def system_prompt(self, role: bool = True) -> str:
        """Rules, the agent's role (002 App. C.1) and any in-context examples."""
        parts = [self.rules.strip()] if self.rules.strip() else []
        if role:
            # the game's own reply format (paper 000): the original's system line, not the
            # suite's role line (which speaks of listed legal actions)
            game = self.agent.answer_format_setting == "game"
            parts.append(self.T.GAME_ROLE if game else self.T.AGENT_ROLE)
        examples = self.agent.examples_block(self)
        if examples:
            parts.append(examples)
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
            parts.append(self.T.MEMORY_HEADER + "\n" + "\n".join(memory))
        observation = self.observation.strip()
        if strip_question:
            lines = observation.splitlines()
            if lines and lines[-1].lstrip().startswith("Q:"):
                observation = "\n".join(lines[:-1]).rstrip()
        parts.append(observation)
        if sections:
            for title, body in self.sections:
                parts.append(f"{title}\n{body}".strip() if title else body.strip())
        if legal and self.shows_menu():
            parts.append(self.legal_block())
        return "\n\n".join(p for p in parts if p)

    def shows_menu(self) -> bool:
        """Whether the agent lists the candidate actions: not with ``menu="none"`` (003: the
        rules give the command syntax, the paper lists no candidates), nor where the
        observation lists them already; a shortlist (001's top-k) is always listed."""
        shortlist = set(self.candidates) != set(self.text.legal_actions)
        if self.agent.menu in ("none", "tool") and not shortlist:
            return False
        return not self.listed_in_observation()

    def listed_in_observation(self) -> bool:
        """Whether the observation already lists every legal action as an option (CollabCapture's
        "A. Move to room 6.", Overcooked's "Available Actions: [...]", a matrix game's closing
        question "Q: Which Option do you choose, Option J, Option F or Option B?") and every one
        is still a candidate: then the agent's own list would show them twice."""
        full = self.text.legal_actions
        if not full or set(self.candidates) != set(full):
            return False
        question = self.observation_question()
        if question is not None and all(
            named_options(question, {a: t}, case_sensitive=True) for a, t in full.items()
        ):  # the game's own question names every option (004: "Q: Which Option do you choose,
            return True  # Option J, Option F or Option B?")
        lines = {ln.strip().rstrip(".") for ln in self.observation.splitlines()}
        inline = re.findall(r"\[([^\[\]]*)\]", self.observation)
        items = {item.strip() for group in inline for item in group.split(",")}
        for i, t in enumerate(full.values()):
            if t in items:
                continue
            if not any(ln in lines for ln in (f"{letter(i)}. {t}", f"- {t}", f"{i + 1}. {t}")):
                return False
        return True

    def legal_block(self) -> str:
        """``Legal actions:`` and the candidates, one per line."""
        header = self.notes.get("candidates_header") or self.T.LEGAL_HEADER
        return header + "\n" + "\n".join(f"- {t}" for t in self.candidates.values())

    def observation_question(self) -> str | None:
        """The observation's own closing question (a last line starting ``Q:``), if any."""
        lines = [ln for ln in self.observation.strip().splitlines() if ln.strip()]
        if lines and lines[-1].lstrip().startswith("Q:"):
            return lines[-1].strip()
        return None

    def final_question(self) -> str:
        """The question that ends the action prompt: a piece's, the observation's own, or
        :data:`~tom_llm_agents.prompting.templates.QA_QUESTION`."""
        if self.question is not None:
            return self.question
        return self.observation_question() or self.T.QA_QUESTION

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
        """An :class:`LLMRequest` with the agent's sampling settings (temperature, top_p, extra
        request fields). Sampled requests carry a seed drawn from the episode seed, the seat, the
        decision and the sample index, so resampling draws a new answer and a re-run the same."""
        agent = self.agent
        temp = agent.temperature if temperature is None else temperature
        seed = None
        if temp > 0 and agent.info is not None and agent.info.seed is not None:
            seed = (
                (int(agent.info.seed) * 1009 + self.turn.player) * 100_003
                + self.turn.decision * 101
                + sample
            ) % (2**31)
        return LLMRequest(
            messages=[dict(m) for m in messages or []],
            prompt=prompt,
            max_tokens=max_tokens,
            temperature=temp,
            top_p=agent.top_p if temp > 0 else None,
            seed=seed,
            schema=schema,
            top_logprobs=top_logprobs,
            sample=sample,
            extra=dict(agent.extra),
        )

    def ask(self, step: str, request: LLMRequest) -> LLMResponse:
        """Send one request, recording it under ``step``."""
        return self.ask_many(step, [request])[0]

    def ask_many(self, step: str, requests: Sequence[LLMRequest]) -> list[LLMResponse]:
        """Send requests concurrently, recording each under ``step``."""
        requests = list(requests)
        responses = self.agent.client.complete_many(requests)
        for q, r in zip(requests, responses, strict=True):
            self.record(step, q, r)
        return responses

    def record(self, step: str, request: LLMRequest, response: LLMResponse) -> None:
        """Keep the call (messages sent, reply, reasoning, usage, latency, cache hit, decoding)
        for the trajectory (``info["llm_calls"]``) and count it in the episode's totals."""
        if request.prompt is not None:
            messages = [{"role": "prompt", "content": request.prompt}]
            decoding = "logprobs" if request.top_logprobs else "completion"
        else:
            messages = [dict(m) for m in request.messages]
            decoding = "json" if response.constrained else "free"
        usage: dict[str, Any] = {
            "tokens_in": response.tokens_in,
            "tokens_out": response.tokens_out,
        }
        if response.reasoning_tokens:
            usage["reasoning_tokens"] = response.reasoning_tokens
        if response.cost_usd is not None:
            usage["cost_usd"] = response.cost_usd
        call: dict[str, Any] = {
            "step": step,
            "messages": messages,
            "reply": response.text,
            "usage": usage,
            "latency_s": round(response.latency_s, 4),
            "cache_hit": response.cached,
            "decoding": decoding,
            "model": response.model,
            "finish_reason": response.finish_reason,
            "sample": request.sample,
        }
        if response.reasoning:
            call["reasoning"] = response.reasoning
        if request.temperature:
            call["temperature"] = request.temperature
        self.calls.append(call)
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
        """``False`` vetoes ``action`` (the decider answers again without it; a verifier may leave
        its critique in ``ctx.notes["_critique"]`` for the decider's conversation)."""
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
    max_tokens: int = 64

    def fields_for(self, ctx: DecisionContext) -> dict[str, str]:
        """The extra answer fields, in the prompt's language (default: :attr:`fields`)."""
        return dict(self.fields)

    def instruction_for(self, ctx: DecisionContext) -> str:
        """The instruction, in the prompt's language (default: :attr:`instruction`)."""
        return self.instruction

    def decide(self, ctx: DecisionContext) -> Decision:
        """Choose among ``ctx.candidates``."""
        return ctx.agent.generate(ctx, self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
