"""An LLM agent for every registered game, built on the text layer alone.

:class:`LLMAgent` reads ``turn.text()`` (rules, observation, legal actions), asks the model through
a client (:mod:`llm_agents.client`), and maps the answer back with ``turn.parse`` (the game's own
parser), so it needs no per-game code. It keeps an episodic memory (its previous actions, their
validity and rewards; optionally the last exchanges verbatim, 000's two-round chat window), and
its prompting strategy is composed from the papers' pieces (:mod:`llm_agents.prompting`).

Invalid-output policy (STYLE §12): when a reply does not name a legal action, the agent is
re-prompted with the game's feedback up to ``reprompts`` times; after that a fallback action
(seeded random, or the first legal action) is played and counted (``AgentAction.valid=False``, so
the runner's valid-action % counts it). Every step's ``info`` records::

    {"usage": {"calls", "tokens_in", "tokens_out", "latency_s", "cache_hits", "reprompts",
               "fallbacks", ["cost_usd"]},               # numbers; the runner sums them per episode
     "llm": {"model", "strategy", "calls": [{"step", "text", "tokens_in", ...}], "notes": {...},
             "feedback", ["error"]}}

API keys never reach a trajectory: the agent's ``name``/``spec`` carry the model and strategy only,
and an agent spec with ``api_key=`` is refused (use ``$OPENAI_API_KEY`` or ``api_key_env=``).

As a spec for ``tom-envs run`` (``tom_envs.agents.GENERIC_AGENTS["llm"]``)::

    llm:model=gpt-4o-mini                        # $OPENAI_API_KEY, OpenAI's endpoint
    llm:model=qwen:base_url=http://127.0.0.1:8000/v1:strategy=cot+social
    llm:local=true:strategy=qa+predict           # the bundled SmolLM2 on a local llama.cpp server
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from llm_agents.client import BaseLLMClient, LLMError, LLMResponse, OpenAIClient, RetryPolicy
from llm_agents.parsing import (
    Reply,
    answer_schema,
    format_lines,
    json_keys,
    json_object,
    read_reply,
)
from llm_agents.prompting import build_strategy
from llm_agents.prompting import templates as T
from llm_agents.prompting.base import Decider, Decision, DecisionContext, MemoryEntry, Piece
from tom_envs.core.agents import AgentAction, BaseAgent, EpisodeInfo, Turn
from tom_envs.core.probes import Probe, normalise_answer

USAGE_KEYS = (
    "calls",
    "tokens_in",
    "tokens_out",
    "latency_s",
    "cache_hits",
    "reprompts",
    "fallbacks",
)


class LLMAgent(BaseAgent):
    """An LLM plays any game through the text layer.

    Args:
        client: an LLM client; built from ``model``/``base_url`` (or ``local``) when omitted.
        strategy: a strategy string (``"qa"``, ``"cot+social"``, ``"paper002"``...; see
            :mod:`llm_agents.prompting`), ignored when ``decider``/``pieces`` are given.
        model: model name for the built client.
        base_url: OpenAI-compatible endpoint for the built client.
        api_key_env: environment variable holding the key for the built client.
        local: use the bundled SmolLM2-135M on an in-process llama.cpp server (one per process).
        cache_dir: disk cache for the built client.
        temperature: sampling temperature (0: greedy and reproducible).
        reprompts: re-prompts after an invalid answer before the fallback.
        fallback: ``"random"`` (seeded by the episode) or ``"first"`` legal action.
        memory: previous decisions listed in the prompt (episodic memory).
        history: previous exchanges kept verbatim as chat turns (000 keeps two rounds).
        constrained: ask for JSON-schema constrained answers (``enum`` of legal actions) where the
            server supports it; plain-text parsing otherwise.
        verify_rounds: at most this many actions vetoed by self-verification per decision.
        decider: a decider object (overrides ``strategy``).
        pieces: piece objects (overrides ``strategy``).
        oracle: ``turn -> partner's action`` for the oracle strategies.
        oracle_partner: a matrix partner bot's name, to build ``oracle`` from (matrix games).
        recommender: ``view -> {action: score}`` for ToM planning's top-k (001).
        top_k: shortlist size for ToM planning.
        memories: reflections Reflexion keeps (004 used 1-3).
        examples: worked examples for CoT (004 Fig. 13's CoT 3-shot, written for the game).
        partner_options: ``turn -> {action: text}``, the partner's actions for predictions
            (default: one's own actions in two-player games).
        step_tokens: cap on the generation budget of the free-text intermediate steps (belief,
            ToM analyses, reflections, S2A), for small models and quick runs.
        field_chars: longest free-text field (reasoning, plans...) in a constrained answer.
        probe_batch: answer a step's ToM probes in one request (else one request each).
        label: a display name (default ``llm:<model>:<strategy>``).
        max_concurrency: requests in flight at once (probes, scoring) for the built client.
        max_retries: retries of a failed request (rate limit, timeout, connection, 5xx) before
            the decision falls back and the error is recorded (built client only).
        retry_delay_s: the first backoff of those retries; later ones double.
    """

    name = "llm"

    def __init__(
        self,
        client: BaseLLMClient | None = None,
        strategy: str = "qa",
        *,
        model: str | None = None,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        local: bool = False,
        cache_dir: str | None = None,
        temperature: float = 0.0,
        reprompts: int = 2,
        fallback: str = "random",
        memory: int = 5,
        history: int = 0,
        constrained: bool = True,
        verify_rounds: int = 2,
        decider: Decider | None = None,
        pieces: Sequence[Piece] | None = None,
        oracle: Callable[[Turn], int] | None = None,
        oracle_partner: str | None = None,
        recommender: Callable[[Any], Mapping[int, float]] | None = None,
        top_k: int = 5,
        memories: int = 3,
        examples: str = "",
        partner_options: Callable[[Turn], Mapping[int, str]] | None = None,
        step_tokens: int | None = None,
        field_chars: int = 400,
        probe_batch: bool = True,
        label: str | None = None,
        max_concurrency: int = 4,
        max_retries: int = 5,
        retry_delay_s: float = 1.0,
        **unexpected: Any,
    ) -> None:
        super().__init__()
        if "api_key" in unexpected:
            raise ValueError(
                "do not put an API key in an agent spec (it would be written to run names): set "
                "$OPENAI_API_KEY, or name another variable with api_key_env=VAR"
            )
        if unexpected:
            raise TypeError(f"LLMAgent got unexpected arguments {sorted(unexpected)}")
        if fallback not in ("random", "first"):
            raise ValueError(f"fallback must be 'random' or 'first', got {fallback!r}")
        if client is None:
            if local:
                from llm_agents.local import shared_client

                client = shared_client(cache_dir=cache_dir)
            else:
                client = OpenAIClient(
                    model,
                    base_url,
                    api_key_env=api_key_env,
                    cache_dir=cache_dir,
                    max_concurrency=max_concurrency,
                    json_schema=None if constrained else False,
                    retry=RetryPolicy(max_retries=max_retries, base_delay_s=retry_delay_s),
                )
        self.client = client
        self.oracle_partner = oracle_partner
        self._oracle = oracle
        options: dict[str, Any] = {
            "oracle": oracle,
            "recommender": recommender,
            "top_k": top_k,
            "memories": memories,
            "examples": examples,
        }
        if oracle is None and oracle_partner is not None:
            options["oracle"] = self._matrix_oracle
        self.strategy = strategy if decider is None and pieces is None else "custom"
        built_decider, built_pieces = build_strategy(strategy, **options)
        self.decider: Decider = decider if decider is not None else built_decider
        self.pieces: list[Piece] = sorted(
            pieces if pieces is not None else built_pieces, key=lambda p: p.priority
        )
        self.temperature = float(temperature)
        self.reprompts = int(reprompts)
        self.fallback = fallback
        self.memory_size = int(memory)
        self.history_size = int(history)
        self.constrained = bool(constrained)
        self.verify_rounds = int(verify_rounds)
        self.partner_options = partner_options
        self.step_tokens = step_tokens
        self.field_chars = int(field_chars)
        self.probe_batch = bool(probe_batch)
        self.name = label or f"llm:{client.model}:{self.strategy}"
        self.spec = self.name
        self.memory: list[MemoryEntry] = []
        self.history: list[tuple[str, str]] = []
        self.episode_stats: dict[str, float] = {}
        self._step_usage: dict[str, float] = {}
        self._last_calls: list[dict[str, Any]] = []
        self._chat = False

    # ------------------------------------------------------------------ episode
    def reset(self, info: EpisodeInfo) -> None:
        """Start an episode: clear memory, counters and every piece's state."""
        super().reset(info)
        self.memory = []
        self.history = []
        self.episode_stats = {
            "decisions": 0,
            "valid": 0,
            "first_try_valid": 0,
            **dict.fromkeys(USAGE_KEYS, 0),
        }
        self._chat = bool(getattr(info.tags, "communication", False))
        for piece in self.pieces:
            piece.reset(self, info)

    def _matrix_oracle(self, turn: Turn) -> int:
        from llm_agents.prompting.oracles import matrix_partner_oracle
        from tom_envs.registration import game_spec

        if self._oracle is None:
            assert self.info is not None and self.oracle_partner is not None
            spec = game_spec(self.info.env_id)
            config = spec.load().make_bundle(**spec.kwargs).game.config
            self._oracle = matrix_partner_oracle(self.oracle_partner, config)
        return self._oracle(turn)

    # ------------------------------------------------------------------ accounting
    def usage_add(self, response: LLMResponse) -> None:
        """Count one model call in this step's and this episode's usage."""
        counts = {
            "calls": 1,
            "tokens_in": response.tokens_in,
            "tokens_out": response.tokens_out,
            "latency_s": 0.0 if response.cached else response.latency_s,
            "cache_hits": int(response.cached),
        }
        if response.cost_usd is not None:
            counts["cost_usd"] = response.cost_usd
        for k, v in counts.items():
            self._step_usage[k] = self._step_usage.get(k, 0) + v
            self.episode_stats[k] = self.episode_stats.get(k, 0) + v

    def step_budget(self, max_tokens: int) -> int:
        """A free-text step's generation budget under ``step_tokens``."""
        return min(max_tokens, self.step_tokens) if self.step_tokens else max_tokens

    @property
    def valid_action_pct(self) -> float:
        """Share of this episode's decisions whose action came from the model (percent)."""
        n = self.episode_stats.get("decisions", 0)
        return 100.0 * self.episode_stats.get("valid", 0) / n if n else float("nan")

    def memory_lines(self) -> list[str]:
        """The episodic memory shown in prompts (most recent last)."""
        if self.memory_size <= 0:
            return []
        return [e.line() for e in self.memory[-self.memory_size :]]

    # ------------------------------------------------------------------ acting
    def act(self, turn: Turn) -> AgentAction:
        """Decide through the strategy, with the invalid-output policy."""
        if self.info is None:
            raise RuntimeError("reset(info) must be called before act()")
        text = turn.text()
        if self.memory and self.memory[-1].reward is None:
            self.memory[-1].reward = float(turn.reward)
        self._step_usage = dict.fromkeys(USAGE_KEYS, 0)
        ctx = DecisionContext(
            agent=self,
            turn=turn,
            text=text,
            rules=text.rules,
            observation=text.observation,
            candidates=dict(text.legal_actions),
        )
        self._last_calls = ctx.calls
        error = None
        try:
            for piece in self.pieces:
                piece.outcome(ctx)
            for piece in self.pieces:
                piece.prepare(ctx)
            decision = self._decide(ctx)
        except LLMError as exc:
            error = str(exc)
            decision = Decision(None, feedback=f"model error: {exc}")
        valid = decision.action is not None
        action = decision.action if decision.action is not None else self._fallback_action(turn)
        try:
            for piece in self.pieces:
                piece.finish(ctx, action, decision)
        except LLMError as exc:
            error = error or str(exc)
        action_text = text.legal_actions.get(action, str(action))
        self.memory.append(
            MemoryEntry(
                turn.decision, action_text, valid, decision.feedback, None, decision.message
            )
        )
        exchange = ctx.notes.pop("_exchange", None)
        if exchange is not None:
            self.history.append(exchange)
        stats = self.episode_stats
        stats["decisions"] += 1
        stats["valid"] += int(valid)
        stats["first_try_valid"] += int(valid and decision.reprompts == 0)
        stats["reprompts"] += decision.reprompts
        stats["fallbacks"] += int(not valid)
        self._step_usage["reprompts"] = decision.reprompts
        self._step_usage["fallbacks"] = int(not valid)
        llm: dict[str, Any] = {
            "model": self.client.model,
            "strategy": self.strategy,
            "calls": ctx.calls,
            "feedback": decision.feedback,
        }
        notes = {k: v for k, v in ctx.notes.items() if not k.startswith("_")}
        if notes:
            llm["notes"] = notes
        if decision.fields:
            llm["fields"] = decision.fields
        if error is not None:
            llm["error"] = error
        return AgentAction(
            action=action,
            prediction=dict(ctx.prediction) or None,
            valid=valid,
            message=decision.message if self._chat else None,
            info={"usage": self._step_usage, "llm": llm},
        )

    def _fallback_action(self, turn: Turn) -> int:
        legal = turn.legal_actions
        if self.fallback == "first":
            return int(legal[0])
        return int(legal[int(self.rng.integers(len(legal)))])

    def _decide(self, ctx: DecisionContext) -> Decision:
        """The decider, then self-verification (a vetoed action leaves the candidates)."""
        verifiers = [p for p in self.pieces if type(p).verify is not Piece.verify]
        vetoes = 0
        while True:
            decision = self.decider.decide(ctx)
            if decision.action is None or not verifiers or len(ctx.candidates) <= 1:
                return decision
            if vetoes >= self.verify_rounds:
                return decision
            if all(p.verify(ctx, decision.action) for p in verifiers):
                return decision
            vetoes += 1
            ctx.notes.setdefault("vetoed", []).append(ctx.candidates.pop(decision.action))

    def generate(self, ctx: DecisionContext, decider: Decider) -> Decision:
        """Ask for an action in the answer format, re-prompting with the game's feedback."""
        descriptions = {**decider.fields, **ctx.fields}
        names = list(descriptions)
        options = list(ctx.candidates.values())
        schema = None
        if self.constrained:
            schema = answer_schema(
                descriptions, options, message=self._chat, field_chars=self.field_chars
            )
        use_json = schema is not None and self.client.capabilities.get("json_schema") is not False
        if use_json:
            keys = [*names, *(["message"] if self._chat else []), "action"]
            fmt = T.JSON_FORMAT.format(keys=json_keys(keys))
            fmt += "".join(f'\n"{n}": {d}' for n, d in descriptions.items())
        else:
            fmt = T.TEXT_FORMAT.format(lines=format_lines(names, self._chat))
            fmt += "".join(
                f"\n{n.replace('_', ' ').capitalize()}: {d}" for n, d in descriptions.items()
            )
        blocks = [ctx.context_text(legal=True, strip_question=True)]
        if decider.instruction:
            blocks.append(decider.instruction)
        blocks += [ctx.final_question(), fmt]
        user = "\n\n".join(blocks)
        messages: list[dict[str, str]] = [{"role": "system", "content": ctx.system_prompt()}]
        for past_user, past_reply in (
            self.history[-self.history_size :] if self.history_size else []
        ):
            messages += [
                {"role": "user", "content": past_user},
                {"role": "assistant", "content": past_reply},
            ]
        messages.append({"role": "user", "content": user})
        budget = decider.max_tokens + self.field_chars // 4 * len(ctx.fields) + 64 * self._chat
        reprompts = 0
        feedback, text = "", ""
        reply = read_reply("", names)
        for attempt in range(self.reprompts + 1):
            request = ctx.request(messages, schema=schema, max_tokens=budget, sample=attempt)
            text = ctx.ask("action" if attempt == 0 else "reprompt", request).text
            reply = read_reply(text, names)
            action, feedback, parsed_message = self._interpret(ctx, reply, text)
            if action is not None:
                ctx.notes["_exchange"] = (user, text)
                return Decision(
                    action=action,
                    fields=reply.fields,
                    message=reply.message or parsed_message,
                    feedback=feedback,
                    text=text,
                    reprompts=reprompts,
                )
            if attempt == self.reprompts:
                break
            reprompts += 1
            messages = [
                *messages,
                {"role": "assistant", "content": text},
                {
                    "role": "user",
                    "content": T.REPROMPT.format(feedback=feedback, actions="; ".join(options)),
                },
            ]
        return Decision(None, reply.fields, reply.message, feedback, text, reprompts)

    def _interpret(
        self, ctx: DecisionContext, reply: Reply, raw: str
    ) -> tuple[int | None, str, str | None]:
        """The game's parser on the named action (for plain text, then on the whole reply)."""
        feedback = "the answer names no action"
        tries = [reply.action_text] if reply.structured else [reply.action_text, raw]
        for candidate in tries:
            if candidate is None:
                continue
            result = ctx.turn.parse(candidate)
            if result.valid and result.action is not None:
                if result.action in ctx.candidates:
                    return result.action, result.feedback, result.message
                named = ctx.text.legal_actions.get(result.action, str(result.action))
                return None, f"{named} is not among the candidate actions now", None
            feedback = result.feedback or feedback
        return None, feedback, None

    # ------------------------------------------------------------------ probes
    def answer_probes(self, turn: Turn, probes: Sequence[Probe]) -> dict[str, str]:
        """Answer the game's ToM probes through the model, constrained to each probe's options;
        the runner scores the answers against the truth (literal ToM).

        With ``probe_batch`` (default) all of a step's questions go in one request (one prompt
        evaluation); otherwise one request per question, sent concurrently.
        """
        if not probes:
            return {}
        text = turn.text()
        ctx = DecisionContext(
            agent=self,
            turn=turn,
            text=text,
            rules=text.rules,
            observation=text.observation,
            candidates=dict(text.legal_actions),
        )
        context = ctx.context_text(legal=False, strip_question=True)
        system = {"role": "system", "content": ctx.system_prompt()}
        groups = [list(probes)] if self.probe_batch else [[p] for p in probes]
        requests = []
        for group in groups:
            keys = [f"q{i + 1}" for i in range(len(group))]
            lines = "\n".join(
                f"{k}: {p.question} ({' or '.join(p.options)})"
                for k, p in zip(keys, group, strict=True)
            )
            schema = None
            if self.constrained:
                props = {
                    k: {"type": "string", "enum": list(p.options)}
                    for k, p in zip(keys, group, strict=True)
                }
                schema = {
                    "type": "object",
                    "properties": props,
                    "required": keys,
                    "additionalProperties": False,
                }
                fmt = f"Reply with a JSON object with {json_keys(keys)}."
            else:
                fmt = (
                    "Answer each question on its own line, as "
                    + ", ".join(f"{k}: <answer>" for k in keys)
                    + "."
                )
            user = f"{context}\n\n{T.PROBE_QUESTIONS}\n{lines}\n{fmt}"
            requests.append(
                ctx.request(
                    [system, {"role": "user", "content": user}],
                    schema=schema,
                    max_tokens=16 + 12 * len(group),
                )
            )
        responses = ctx.ask_many("probe", requests)
        self._last_calls.extend(ctx.calls)  # the step's record (the runner keeps the same list)
        answers: dict[str, str] = {}
        for group, response in zip(groups, responses, strict=True):
            found = _probe_replies(response.text, len(group))
            for i, probe in enumerate(group):
                raw = found.get(i, "")
                answers[probe.id] = normalise_answer(raw, probe.options) or raw.strip()
        return answers


def _probe_replies(text: str, n: int) -> dict[int, str]:
    """``{question index: reply}`` from a JSON object (``q1``…) or ``q1: …`` lines."""
    obj = json_object(text)
    if obj is not None:
        return {i: str(obj[f"q{i + 1}"]) for i in range(n) if f"q{i + 1}" in obj}
    out = {}
    for m in re.finditer(r"(?im)^\s*q(\d+)\s*[:=.)]\s*(.+?)\s*$", text):
        i = int(m.group(1)) - 1
        if 0 <= i < n:
            out.setdefault(i, m.group(2))
    if not out and n == 1 and text.strip():
        out[0] = text.strip()
    return out


def make_llm_agent(**kwargs: Any) -> LLMAgent:
    """Build an :class:`LLMAgent` from spec keyword arguments (``tom-envs run --agents llm:…``)."""
    return LLMAgent(**kwargs)
