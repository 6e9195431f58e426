"""How the LLM agent asks the model and reads its answers.

:class:`AnsweringMixin` is the model-facing side of :class:`~tom_llm_agents.agent.LLMAgent`: the
services the deciders and pieces of :mod:`tom_llm_agents.prompting` call back (the in-context
examples, the episodic memory lines, usage accounting, the step budget), the one answer format of
a decision and the request loop under the invalid-output policy (:meth:`AnsweringMixin.generate`:
re-prompt with the game's feedback, resample, or forfeit), and the answers to the game's ToM
probes (:meth:`AnsweringMixin.answer_probes`).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from tom_envs.core.agents import Turn
from tom_envs.core.probes import Question, normalise_answer
from tom_envs.core.text import (
    FEEDBACK,
    NUMBER,
    answer_marked,
    answer_segment,
    match_action,
    option_number,
)
from tom_llm_agents.client import LLMResponse
from tom_llm_agents.failures import LLMError
from tom_llm_agents.parsing import Reply, answer_schema, json_keys, json_object, read_reply
from tom_llm_agents.prompting.base import Decider, Decision, DecisionContext
from tom_llm_agents.state import AgentState

if TYPE_CHECKING:
    from tom_llm_agents.agent import LLMAgent


class AnsweringMixin(AgentState):
    """The model-facing side of :class:`~tom_llm_agents.agent.LLMAgent` (see the module
    docstring); it reads the agent's settings, templates, client and episode state."""

    # ------------------------------------------------------------------ prompt parts
    def examples_block(self, ctx: DecisionContext | None = None) -> str:
        """The in-context examples, rendered in the answer format asked for (or ``""``): with
        ``ctx``, exactly the fields this decision's answer has (an example's other steps are
        left out: 003's baseline shows no partner modelling)."""
        if not self.examples:
            return ""
        t = self.templates
        fields = None
        if ctx is not None:
            fields = list({**self.decider.fields_for(ctx), **ctx.fields})
        body = "\n\n".join(
            e.render(
                i + 1,
                self.constrained,
                fields=fields,
                label=lambda n: t.LABELS.get(n, n.replace("_", " ").capitalize()),
                action_label=t.ACTION_LABEL,
            )
            for i, e in enumerate(self.examples)
        )
        return t.EXAMPLES_HEADER + "\n\n" + body

    def memory_lines(self) -> list[str]:
        """The episodic memory shown in prompts (most recent last). Decisions whose answer was
        invalid are always listed (the game's feedback is nowhere else), the others only up to
        ``memory`` entries."""
        recent = self.memory[-self.memory_size :] if self.memory_size > 0 else []
        shown = set(map(id, recent))
        extra = [e for e in self.memory[-3:] if not e.valid and id(e) not in shown]
        entries = sorted([*recent, *extra], key=lambda e: e.decision)
        return [e.line(self.templates) for e in entries]

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
        if response.reasoning_tokens:
            counts["reasoning_tokens"] = response.reasoning_tokens
        if response.cost_usd is not None:
            counts["cost_usd"] = response.cost_usd
        for k, v in counts.items():
            self._step_usage[k] = self._step_usage.get(k, 0) + v
            self.episode_stats[k] = self.episode_stats.get(k, 0) + v

    def decision_context(self, turn: Turn) -> DecisionContext:
        """The context of one decision (or one probe step): the turn's text, split into rules and
        observation, with the legal actions as candidates."""
        text = self._text_for(turn)
        rules, observation = self.prompt_parts(text)
        return DecisionContext(
            agent=cast("LLMAgent", self),  # the mixin is only ever part of an LLMAgent
            turn=turn,
            text=text,
            rules=rules,
            observation=observation,
            candidates=dict(text.legal_actions),
        )

    def step_budget(self, max_tokens: int) -> int:
        """An intermediate step's generation budget (belief, ToM analyses, reflections,
        verification, predictions, probe answers): the step's own default, raised to the agent's
        ``max_tokens`` when that is larger (a reasoning model thinks before every answer, not
        only before the action), then capped by ``step_tokens``."""
        budget = max(max_tokens, self.max_tokens or 0)
        return min(budget, self.step_tokens) if self.step_tokens else budget

    # ------------------------------------------------------------------ answers
    def answer_format(self, ctx: DecisionContext, decider: Decider) -> tuple[str, list[str]]:
        """The one answer format of this decision, and the field names it asks for.

        JSON mode: the keys and a line per key. Free text: ``Label: <...>`` lines for the fields
        and the chat message, then the action line. Either way every field is described, and it
        is the only format in the prompt: the game's own answer-format instruction
        (``TextObservation.answer_format``) was removed from the rules and observation
        (:meth:`~tom_llm_agents.agent.LLMAgent.prompt_parts`); what is parsed is exactly this
        format (:func:`~tom_llm_agents.parsing.read_reply`, then the game's parser on the action).
        With ``answer_format="game"`` the game's own instruction is the one format (kept in the
        rules) and this returns no text.
        """
        t = self.templates
        descriptions = {**decider.fields_for(ctx), **ctx.fields}
        names = list(descriptions)
        if self.answer_format_setting == "game":
            return "", names  # the game's own format, in the rules (paper 000's App. A.1)
        message = self.asks_message(ctx)
        if self.constrained and self.client.capabilities.get("json_schema") is not False:
            keys = [*names, *(["message"] if message else []), "action"]
            fmt = t.JSON_FORMAT.format(keys=json_keys(keys))
            for n, d in descriptions.items():
                fmt += "\n" + t.JSON_FIELD.format(name=n, description=d)
            if message:
                fmt += "\n" + t.JSON_FIELD.format(name="message", description=t.MESSAGE_FIELD)
            return fmt, names
        lines = "".join(
            t.FIELD_LINE.format(label=t.LABELS.get(n, n.replace("_", " ").capitalize()), text=d)
            + "\n"
            for n, d in descriptions.items()
        )
        if message:
            lines += t.MESSAGE_LINE.format(description=t.MESSAGE_FIELD) + "\n"
        fmt = t.TEXT_FORMAT.format(lines=lines)
        if not (ctx.shows_menu() or ctx.listed_in_observation()):
            fmt = fmt.replace(t.ACTION_SLOT, t.ACTION_SLOT_NO_MENU)
        return fmt, names

    def generate(self, ctx: DecisionContext, decider: Decider) -> Decision:
        """Ask for an action in the answer format; on invalid output apply the ``invalid``
        policy (re-prompt with the game's feedback, resample, or forfeit)."""
        fmt, names = self.answer_format(ctx, decider)
        offer = self.menu == "tool" and not (ctx.shows_menu() or ctx.listed_in_observation())
        if offer:
            fmt = f"{fmt}\n{self.templates.TOOL_OFFER}"
        ctx.notes.pop("grounding", None)  # this generation's own
        options = list(ctx.candidates.values())
        schema = None
        if self.constrained:
            descriptions = {**decider.fields_for(ctx), **ctx.fields}
            schema = answer_schema(
                descriptions, options, message=self.asks_message(ctx), field_chars=self.field_chars
            )
        user, messages, first_step = self._generation_messages(ctx, decider, fmt)
        budget = self.max_tokens or (
            decider.max_tokens
            + self.field_chars // 4 * len(ctx.fields)
            + 64 * self.asks_message(ctx)
        )
        attempts = 1 if self.invalid == "forfeit" else self.reprompts + 1
        reprompts = 0
        feedback, text = "", ""
        reply = read_reply("", names)
        for attempt in range(attempts):
            request = ctx.request(messages, schema=schema, max_tokens=budget, sample=attempt)
            step = (
                first_step
                if attempt == 0
                else ("resample" if self.invalid == "resample" else "reprompt")
            )
            text = ctx.ask(step, request).text
            if offer and _asks_for_list(text):  # the list on request, once per decision
                offer = False
                ctx.notes["legal_actions_requested"] = True
                messages = [
                    *messages,
                    {"role": "assistant", "content": text},
                    {"role": "user", "content": ctx.legal_block()},
                ]
                request = ctx.request(messages, schema=schema, max_tokens=budget, sample=attempt)
                text = ctx.ask("legal_actions", request).text
            reply = read_reply(text, names, labels=self.templates)
            action, feedback, parsed_message = self._interpret(ctx, reply, text)
            if action is not None:
                ctx.notes["_exchange"] = (user, text)
                ctx.notes["_conversation"] = [*messages, {"role": "assistant", "content": text}]
                return Decision(
                    action=action,
                    fields=reply.fields,
                    message=reply.message or parsed_message,
                    feedback=feedback,
                    text=text,
                    reprompts=reprompts,
                )
            if attempt == attempts - 1:
                break
            reprompts += 1
            if self.invalid == "reprompt":
                again = (
                    self.templates.REPROMPT.format(
                        feedback=_without_listing(feedback), actions="; ".join(options)
                    )
                    if ctx.shows_menu() or ctx.listed_in_observation()
                    else self.templates.REPROMPT_NO_MENU.format(feedback=feedback)
                )
                messages = [
                    *messages,
                    {"role": "assistant", "content": text},
                    {"role": "user", "content": again},
                ]
        ctx.notes["_exchange"] = (user, text)
        return Decision(None, reply.fields, reply.message, feedback, text, reprompts)

    def _generation_messages(
        self, ctx: DecisionContext, decider: Decider, fmt: str
    ) -> tuple[str, list[dict[str, str]], str]:
        """The generation's user turn, its messages (system, the kept history, the turn; or the
        generator's own conversation with the verifier's critique) and the first step's name."""
        blocks = [ctx.context_text(legal=True, strip_question=True)]
        instruction = decider.instruction_for(ctx)
        if instruction:
            blocks.append(instruction)
        blocks += [ctx.final_question(), fmt]
        user = "\n\n".join(b for b in blocks if b)
        messages: list[dict[str, str]] = [{"role": "system", "content": ctx.system_prompt()}]
        for past_user, past_reply in (
            self.history[-self.history_size :] if self.history_size else []
        ):
            messages += [
                {"role": "user", "content": past_user},
                {"role": "assistant", "content": past_reply},
            ]
        messages.append({"role": "user", "content": user})
        first_step = "action"
        revise = ctx.notes.get("_revise")
        if revise is not None and "_conversation" in ctx.notes:
            # the verifier's critique, in the generator's own conversation (002's authors)
            rejected, critique = revise
            note = self.templates.VERIFY_REJECTED.format(
                action=rejected,
                critique=critique.strip() or "-",
                actions="\n".join(ctx.candidates.values()),
            )
            messages = [*ctx.notes["_conversation"], {"role": "user", "content": note}]
            first_step = "revise"
        return user, messages, first_step

    def _interpret(
        self, ctx: DecisionContext, reply: Reply, raw: str
    ) -> tuple[int | None, str, str | None]:
        """The game's parser on the named action (for plain text, then on the whole reply).
        A parser that raises is treated as feedback, never as a crash of the decision."""
        feedback = "the answer names no action"
        if (
            self.answer_format_setting == "game"
            and not (ctx.shows_menu() or ctx.listed_in_observation())
            and any(
                t is not None and _LEADING_NUMBER.match(t.strip(" *\"'`"))
                for t in (reply.action_text, raw)
            )
        ):  # the game's own format with no list shown: the number rule would count an unseen list
            return None, "no list of actions was shown: a number names no action", None
        tries = [reply.action_text] if reply.structured else [reply.action_text, raw]
        if self.answer_format_setting == "game":
            tries = [raw]  # the game's parser reads its own format whole (action and message)
        shortlist = list(ctx.candidates) != list(ctx.text.legal_actions)
        for candidate in tries:
            if candidate is None:
                continue
            bare = candidate.strip().strip(" .!\"'`*")
            if shortlist and NUMBER.fullmatch(bare):
                # the number rule counts the list shown: here the agent's shortlist (top-k,
                # vetoes removed), not the game's full list
                numbered = option_number(bare, ctx.candidates)
                if numbered.action is None:
                    feedback = numbered.feedback
                    continue
                candidate = ctx.candidates[numbered.action]
            try:
                result = ctx.turn.parse(candidate)
            except Exception as exc:
                feedback = f"the answer could not be read ({type(exc).__name__})"
                continue
            if result.valid and result.action is not None:
                if result.action in ctx.candidates:
                    return result.action, result.feedback, result.message
                named = ctx.text.legal_actions.get(result.action, str(result.action))
                feedback = self.templates.NOT_CANDIDATE.format(action=named)
                continue
            feedback = result.feedback or feedback
            if shortlist:  # the game lists every legal action: say it of the shortlist instead
                feedback = self._shortlist_feedback(ctx, candidate)
        if self.grounding == "fuzzy":
            grounded = fuzzy_ground(raw, ctx.candidates)
            if grounded is not None:
                action, said, score = grounded
                ctx.notes["grounding"] = {
                    "said": said,
                    "action": ctx.candidates[action],
                    "similarity": round(score, 3),
                }
                return action, f"grounded by text similarity: {ctx.candidates[action]}", None
        return None, feedback, None

    def _shortlist_feedback(self, ctx: DecisionContext, said: str) -> str:
        """Feedback on an answer that names none of the shortlisted candidates (001's top-k, the
        actions a verifier left), in the prompt's language, without the game's full list of
        legal actions: the re-prompt lists the candidates."""
        language = self.templates.LANGUAGE
        result = match_action(said, ctx.candidates, language=language, listing=False)
        if result.valid:  # one candidate named, beside actions that are not candidates
            return self.templates.NOT_ONLY_CANDIDATE
        return result.feedback

    # ------------------------------------------------------------------ probes
    def answer_probes(self, turn: Turn, questions: Sequence[Question]) -> dict[str, str]:
        """Answer the game's ToM probes through the model, inside the agent's own conversation;
        the driver scores the answers against the truths of the same moment (literal ToM).

        Each request is the agent's conversation as it has it (the system prompt, the verbatim
        history it keeps, hence its belief states when it writes them) and then the observation
        of this moment with the questions (paper 000 asked them on a side channel, prefixed by
        the current observation; neither questions nor answers enter the history). The agent
        receives :class:`~tom_envs.core.probes.Question` objects: text, options and subject,
        never an answer. ``probe_batch`` groups them: ``True`` / ``"step"`` one request for the
        step, ``False`` / ``"question"`` one each (sent concurrently), ``"target"`` one per
        teammate asked about, its questions in order (introspection, first, second order: the
        three questions of paper 000's call).
        """
        if not questions:
            return {}
        if self._dead is not None:
            raise LLMError(self._dead, "endpoint")
        ctx = self.decision_context(turn)
        context = ctx.context_text(legal=False, sections=False, strip_question=True)
        conversation: list[dict[str, str]] = [{"role": "system", "content": ctx.system_prompt()}]
        for past_user, past_reply in self.history[-self.history_size :] if self.history_size else []:
            conversation += [
                {"role": "user", "content": past_user},
                {"role": "assistant", "content": past_reply},
            ]
        groups = probe_groups(questions, self.probe_batch)
        requests = []
        for group in groups:
            keys = [f"q{i + 1}" for i in range(len(group))]
            lines = "\n".join(
                f"{k}: {q.question} ({' or '.join(q.options)})"
                for k, q in zip(keys, group, strict=True)
            )
            schema = None
            if self.constrained:
                props = {
                    k: {"type": "string", "enum": list(q.options)}
                    for k, q in zip(keys, group, strict=True)
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
            user = f"{context}\n\n{self.templates.PROBE_QUESTIONS}\n{lines}\n{fmt}"
            requests.append(
                ctx.request(
                    [*conversation, {"role": "user", "content": user}],
                    schema=schema,
                    max_tokens=self.step_budget(16 + 12 * len(group)),
                )
            )
        responses = ctx.ask_many("probe", requests)
        self._last_calls.extend(ctx.calls)  # the step's record (the runner keeps the same list)
        answers: dict[str, str] = {}
        for group, response in zip(groups, responses, strict=True):
            found = _probe_replies(response.text, len(group))
            for i, q in enumerate(group):
                raw = found.get(i, "")
                answers[q.id] = normalise_answer(raw, q.options) or raw.strip()
        return answers


    def predict_partner(self, turn: Turn, question: Any) -> str:
        """Answer a next-action question (:class:`tom_envs.partners.prediction.NextActionQuestion`:
        the question text and the shuffled options, never the answer) in one separate call: the
        system prompt and this moment's observation, then the numbered options. Neither the
        question nor the reply enters the agent's history, so the next acting prompt is the same
        with questions on or off; the call is counted in this step's usage. The reply is
        returned as the model wrote it (the driver reads an option's text or its number)."""
        if self._dead is not None:
            raise LLMError(self._dead, "endpoint")
        ctx = self.decision_context(turn)
        context = ctx.context_text(legal=False, sections=False, strip_question=True)
        options = "\n".join(f"{i + 1}. {o}" for i, o in enumerate(question.options))
        user = (
            f"{context}\n\n{question.question}\n{options}\n"
            "Reply with the number of one option only."
        )
        request = ctx.request(
            [{"role": "system", "content": ctx.system_prompt()}, {"role": "user", "content": user}],
            max_tokens=self.step_budget(16),
        )
        response = ctx.ask("predict", request)
        self._last_calls.extend(ctx.calls)  # the step's record (the runner keeps the same list)
        return response.text.strip()


#: A reply that names an action by its number (``"2"``, ``"2. Message ..."``, ``"2)"``).
_LEADING_NUMBER = re.compile(r"[+-]*[0-9]+\s*(?:[.)](?:\s|$)|$)")

#: ``probe_batch`` values: one request per step, per question, or per teammate asked about.
PROBE_BATCHES = (True, False, "step", "question", "target")


def probe_groups(questions: Sequence[Question], batch: bool | str) -> list[list[Question]]:
    """The requests a step's questions go in (see :meth:`AnsweringMixin.answer_probes`).

    ``"target"``: one group per teammate (``subject["target"]``) and fact (the rest of the
    subject), in the order first asked, each sorted by order; a question about no one
    (introspection) joins the first group about the same fact, or forms its own. Grouping reads
    only what the agent was given (subject and order), never an answer.
    """
    if batch in (True, "step"):
        return [list(questions)]
    if batch in (False, "question"):
        return [[q] for q in questions]
    if batch != "target":
        raise ValueError(f"probe_batch must be one of {list(PROBE_BATCHES)}, got {batch!r}")
    groups: dict[tuple[Any, ...], list[Question]] = {}
    loose: list[tuple[tuple[Any, ...], Question]] = []
    for q in questions:
        fact = tuple(sorted((k, str(v)) for k, v in q.subject.items() if k != "target"))
        target = q.subject.get("target")
        if target is None:
            loose.append((fact, q))
        else:
            groups.setdefault((fact, str(target)), []).append(q)
    for fact, q in loose:
        home = next((g for (f, _), g in groups.items() if f == fact), None)
        if home is None:
            groups[(fact, None)] = home = []
        home.append(q)
    return [sorted(g, key=lambda q: q.order) for g in groups.values()]


def fuzzy_ground(reply: str, candidates: Mapping[int, str]) -> tuple[int, str, float] | None:
    """002's authors' grounding of a reply the parser could not read: the text of its answer
    (after its answer label or inside its tag; a reply that marks no answer is not grounded:
    the authors drew a random action, here a counted fallback), then the first candidate that
    contains it, else the candidate most similar to it (``difflib``'s ratio standing in for
    ``fuzzywuzzy``'s). ``(action, the answer read, similarity)``, or ``None``. The answer is cut
    to 200 characters, so the cost stays linear in the reply."""
    if not candidates or not answer_marked(reply):
        return None
    said = answer_segment(reply)[:200].strip().lower()
    if not said:
        return None
    for a, t in candidates.items():
        if said in t.lower():
            return a, said, 1.0
    scored = [
        (difflib.SequenceMatcher(None, said, t.lower()).ratio(), a) for a, t in candidates.items()
    ]
    score, best = max(scored, key=lambda x: (x[0], -list(candidates).index(x[1])))
    return best, said, score


def _asks_for_list(text: str) -> bool:
    """Whether a reply is the request for the legal actions (``LIST``, alone, any case)."""
    return re.fullmatch(r"\W*(?:action\W*)?list\W*", text.strip(), re.IGNORECASE) is not None


def _without_listing(feedback: str) -> str:
    """The game's feedback without the matcher's closing list of the legal actions
    (``...; choose one of: ...``): the re-prompt lists the actions the agent may choose."""
    for words in FEEDBACK.values():
        marker = words["choose"].split("{", 1)[0]
        if marker in feedback:
            return feedback.split(marker, 1)[0]
    return feedback


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
