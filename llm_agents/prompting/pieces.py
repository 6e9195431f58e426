"""The papers' prompting ideas as composable pieces (see :mod:`tom_llm_agents.prompting.base`).

=====================  ==============================================  =========================
piece                  idea                                            source
=====================  ==============================================  =========================
:class:`BeliefState`   rewrite a textual belief after every            000 §4.2, App. A.2
                       observation; act from the belief
:class:`ToMReasoning`  interpret the partner's last action first       002 §4.1.1, App. C.2
:class:`SelfVerification`  check the chosen action; veto and re-ask    002 §4.1.1, App. C.3
:class:`PartnerModelling`  predict the partner's goal, resources,      003 §3 step 2, App. B.2
                       next plan; model oneself (a step of the answer,
                       or its own call)
:class:`SelfReflection`    review past actions and feedback; adjust    003 §3 step 3
                       team role, altruism, persuasion (a step of the
                       answer, or its own call)
:class:`ToMPlanning`   1st/2nd-order ToM analysis of every player,     001 §3.2-3.3
                       planning over the recommender's top-k
:class:`PlansInsights` write plans and insights, read them next step   004 Figs. 8-9
:class:`Reflexion`     reflect on each outcome; keep k reflections     004 Figs. 10-12
:class:`S2A`           rewrite rules + history before deciding         004 Figs. 16-17
:class:`Social`        predict the partner, then act on it             004 Fig. 18 (+ Figs. 3, 5)
:class:`PredictPartner`    literal ToM: predict the partner after      004 Figs. 2, 5, 7
                       acting (recorded, not used)
:class:`Oracle`        the partner's true next action is given         004 Figs. 14-15
=====================  ==============================================  =========================

Predictions of the partner's action are recorded as ``prediction={"partner_action": k}``, which the
matrix games' ToM metrics read (ToM %, ΔToM/T).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from tom_envs.core.agents import EpisodeInfo, Turn
from tom_envs.core.text import match_action
from tom_llm_agents.failures import LLMError
from tom_llm_agents.parsing import answer_schema, format_lines, json_keys, read_reply
from tom_llm_agents.prompting.base import Decision, DecisionContext, Piece
from tom_llm_agents.prompting.deciders import choose_by_score, cot_instruction

if TYPE_CHECKING:
    from tom_llm_agents.agent import LLMAgent

Recommender = Callable[[Any], Mapping[int, float]]
OracleFn = Callable[[Turn], int]


def _ask_text(ctx: DecisionContext, step: str, system: str, user: str, max_tokens: int) -> str:
    """One free-text call (the pieces' intermediate steps are never constrained)."""
    request = ctx.request(
        [{"role": "system", "content": system}, {"role": "user", "content": user}],
        max_tokens=ctx.agent.step_budget(max_tokens),
    )
    return ctx.ask(step, request).text.strip()


def _ask_section(
    ctx: DecisionContext, step: str, instruction: str, heading: str, max_tokens: int
) -> None:
    """A reasoning step as its own call: the context (no legal actions, no question) then
    ``instruction``; the answer is noted under ``step`` and shown to the decision as a section
    under ``heading``."""
    user = ctx.context_text(legal=False, strip_question=True) + "\n\n" + instruction
    text = _ask_text(ctx, step, ctx.system_prompt(), user, max_tokens)
    ctx.notes[step] = text
    ctx.sections.append((heading, text))


# ----------------------------------------------------------------------------- 000
class BeliefState(Piece):
    """000 §4.2: keep a textual belief state, rewritten after every observation.

    The first belief is the paper's initial template filled with the first observation (no call);
    later ones are written by the model from the previous belief, what happened and the new
    observation. With ``replace=True`` (the paper's choice) the belief replaces the raw
    observation in the action prompt; otherwise it is added as a section.
    """

    name = "belief"
    priority = 10

    def __init__(self, replace: bool = True, max_tokens: int = 256) -> None:
        self.replace = replace
        self.max_tokens = max_tokens
        self.belief: str | None = None

    def reset(self, agent: LLMAgent, info: EpisodeInfo) -> None:
        """Forget the belief."""
        self.belief = None

    def prepare(self, ctx: DecisionContext) -> None:
        """Write (or rewrite) the belief and show it."""
        observation = ctx.observation.strip()
        if self.belief is None:
            belief = initial_belief(ctx) or ctx.T.BELIEF_INITIAL.format(observation=observation)
        else:
            last = (
                ctx.agent.memory[-1].line(ctx.T).lstrip("- ") if ctx.agent.memory else "nothing yet"
            )
            user = ctx.T.BELIEF_UPDATE.format(
                belief=self.belief, last=last, observation=observation
            )
            belief = _ask_text(ctx, "belief", ctx.system_prompt(), user, self.max_tokens)
            if not belief.startswith(ctx.T.BELIEF_PREFIX):
                belief = f"{ctx.T.BELIEF_PREFIX}:\n{belief}"
        self.belief = belief
        ctx.notes["belief"] = belief
        if self.replace:
            ctx.observation = belief
            ctx.question = ctx.T.BELIEF_ACTION
        else:
            ctx.sections.append(("Your belief state:", belief))


def _bomb_intel(view: Any, rooms: Sequence[Any], colours: list[str]) -> list[str]:
    """000 App. A.2's bomb intel: each bomb's room and remaining sequence where known, the
    bombs seen in the player's room without a sequence, "Details currently unknown" otherwise."""
    lines: list[str] = []
    known = {item.bomb: item for item in view.intel}
    for b in range(view.num_bombs):
        item = known.get(b)
        if item is None:
            lines.append(f"- Bomb {b + 1}: Details currently unknown.")
        else:
            seq = "-".join(colours[c].capitalize() for c in item.remaining) or "defused"
            lines.append(
                f"- Bomb {b + 1}: Located in Room {rooms[item.room]}. The phase sequence is {seq}."
            )
    for b in view.room_bombs:
        if b not in known:
            i = lines.index(f"- Bomb {b + 1}: Details currently unknown.")
            lines[i] = (
                f"- Bomb {b + 1}: Located in Room {rooms[view.room]}. The phase sequence is Unknown."
            )
    return lines


def initial_belief(ctx: DecisionContext) -> str | None:
    """000 App. A.2's initial belief state, filled from a bomb-defusal view (``None`` for other
    games, which get the generic template around their first observation).

    The template's sections in the paper's order: role, round and team score, the observation,
    teammate locations, room connectivity, bomb intel (known bombs; the others "Details currently
    unknown"), tool inventory and the available action options. Names (players, colours) come
    from the game's configuration; rooms, bombs and tools from the player's own view.
    """
    view = ctx.turn.view
    if not all(hasattr(view, a) for a in ("game_map", "intel", "tools", "agent_rooms")):
        return None
    try:
        from tom_envs.registration import game_spec

        info = ctx.agent.info
        config = getattr(info, "game_config", None)
        if config is None:  # told nothing of the rules: the registered game's defaults
            spec = game_spec(info.env_id if info is not None else "BombDefusal")
            config = spec.load().make_bundle(**spec.kwargs).game.config
        names = [str(a) for a in config.agents]
        colours = [str(c) for c in config.colors]
    except Exception:  # an unexpected configuration: fall back to the generic template
        return None
    if len(names) != len(view.agent_rooms):
        return None
    rooms = view.game_map.rooms
    me = names[view.player]
    lines = [
        "Below is your current belief about game state based on your previous observations "
        "about the environment and interactions with your teammates. "
        f"**Your role**: You are playing as Player {me}.",
        "",
        f"Current round: {view.round} **Total team score**: {view.score}.",
        "",
        f"Observation: {ctx.observation.strip()}",
        "",
        "Teammate Locations: "
        + "; ".join(
            f"Player {names[p]} is in " + (f"Room {rooms[r]}" if r >= 0 else "an unknown room")
            for p, r in enumerate(view.agent_rooms)
        )
        + ".",
        "",
        "Room connectivity:",
        "",
    ]
    for i, room in enumerate(rooms):
        nbrs = [str(rooms[j]) for j in view.game_map.neighbors[i]]
        joined = ", ".join(nbrs[:-1]) + f" and {nbrs[-1]}" if len(nbrs) > 1 else "".join(nbrs)
        lines.append(f"- Room {room} is connected to room {joined}")
    lines += ["", "Bomb Intel:", ""]
    lines += _bomb_intel(view, rooms, colours)
    lines += ["", "Tool inventory:", ""]
    for p, tools in enumerate(view.tools):
        kit = " and ".join(colours[c] for c in tools) or "no"
        lines.append(f"- {names[p].capitalize()}: Equipped with {kit} wire cutters.")
    lines += [
        "",
        "Available action options:",
        "",
        "- To move to an adjacent room, say: 'Move to Room X'.",
        "- To inspect the sequence of a bomb in your current room, say: 'Inspect Bomb'.",
        "- To apply a wire cutter tool, say: 'Apply X Tool'.",
    ]
    if ctx.agent.answer_format_setting == "game":  # App. A.2's message option, in the game's format
        lines.append("- To send a message to your teammates, say: 'Message to Team: \"Your Message\"'.")
    # otherwise it is left out: the agent's one answer format describes the message
    # in the game's skin (``skin=``): the names the agent sees everywhere else; rendering is
    # idempotent on what is already skinned (the observation inside: a skin's names are never
    # canonical ones)
    from tom_llm_agents.skins import episode_skin

    skin = episode_skin(info)
    belief = "\n".join(lines)
    return belief if skin is None else skin.render(belief)


# ----------------------------------------------------------------------------- 002
class ToMReasoning(Piece):
    """002 App. C.2: explain the partner's last action and what they need, before acting."""

    name = "tom"
    priority = 20

    def __init__(self, max_tokens: int = 128) -> None:
        self.max_tokens = max_tokens

    def prepare(self, ctx: DecisionContext) -> None:
        """Add the partner interpretation as a section; in a turn-based game, none before any
        other player has acted (the authors' Hanabi agent asks only once the partner has an
        action to interpret)."""
        info = ctx.agent.info
        history = getattr(ctx.turn.view, "history", None)
        sequential = getattr(getattr(info, "tags", None), "dynamics", "") == "sequential"
        if sequential and history is not None and len(history) == 0:
            ctx.notes["tom_reasoning_skipped"] = "no other player has acted yet"
            return
        _ask_section(
            ctx,
            "tom_reasoning",
            ctx.T.TOM_REASONING,
            "Theory of Mind reasoning about my partner:",
            self.max_tokens,
        )


class SelfVerification(Piece):
    """002 App. C.3: a verifier checks the chosen action ("Verification: Okay / Not Okay").

    On a veto the verifier's reply goes back to the generator in its own conversation ("Your
    selected action: X is not appropriate. <critique> Please choose another action.", every
    candidate but X listed), and the generator answers again, at most ``LLMAgent.verify_rounds``
    times (the authors' loop had no cap); a single candidate is never vetoed.
    """

    name = "verify"
    priority = 90

    def __init__(self, max_tokens: int = 160) -> None:
        self.max_tokens = max_tokens

    def verify(self, ctx: DecisionContext, action: int) -> bool:
        """Ask the verifier about ``action``."""
        agent = ctx.agent
        action_text = ctx.candidates[action]
        schema = None
        if agent.constrained:
            schema = answer_schema(
                {"analysis": "why"}, ["Okay", "Not Okay"], "verification", False, agent.field_chars
            )
        context = ctx.context_text(legal=True, strip_question=True)
        question = ctx.T.VERIFY_QUESTION.format(action=action_text)
        user = f"{context}\n\n{ctx.T.VERIFICATION}\n\n{question}"
        request = ctx.request(
            [{"role": "system", "content": ctx.system_prompt()}, {"role": "user", "content": user}],
            schema=schema,
            max_tokens=agent.step_budget(self.max_tokens),
        )
        text = ctx.ask("verify", request).text
        reply = read_reply(text, ["analysis"], key="verification")
        verdict = (reply.action_text or text).lower()
        ok = "not okay" not in verdict and "okay" in verdict
        if reply.action_text is None and "okay" not in verdict:
            ok = True  # no verdict at all: do not veto on noise
        ctx.notes.setdefault("verification", []).append({"action": action_text, "okay": ok})
        if not ok:  # the critique the generator is shown (002's authors: the whole reply)
            ctx.notes["_critique"] = " ".join(text.split())
        return ok


# ----------------------------------------------------------------------------- 003
class _ReasoningStep(Piece):
    """A 003 reasoning step: ``inline=True`` (003's protocol), an answer field of the one
    generation that also chooses the action; ``inline=False`` (a variant), a separate call first
    (:func:`_ask_section`), its answer noted under :attr:`step` and shown under :attr:`heading`.
    """

    #: The answer field (inline), the note's key and the section's heading (separate call).
    field = step = heading = ""

    def __init__(self, max_tokens: int, inline: bool = True) -> None:
        self.max_tokens = max_tokens
        self.inline = inline

    def field_text(self, ctx: DecisionContext) -> str:
        """The answer field's description (inline)."""
        raise NotImplementedError

    def instruction(self, ctx: DecisionContext) -> str | None:
        """What the separate call asks after the context; ``None``: no call at this decision."""
        raise NotImplementedError

    def prepare(self, ctx: DecisionContext) -> None:
        """Ask for the step in the answer, or make the separate call and show its answer."""
        if self.inline:
            ctx.fields[self.field] = self.field_text(ctx)
            return
        instruction = self.instruction(ctx)
        if instruction is not None:
            _ask_section(ctx, self.step, instruction, self.heading, self.max_tokens)


class PartnerModelling(_ReasoningStep):
    """003 §3 step 2: model the partner's (and one's own) goals, resources and next plan.

    ``inline=True`` (003's protocol, strategy ``partner``): a step of the one generation that
    also chooses the action, an answer field in App. B.2's template. ``inline=False``
    (``partner_call``, a variant): a separate call first, whose answer is shown as a section.
    """

    name = "partner"
    priority = 20
    field, step, heading = "partner_modelling", "partner_modelling", "Partner and self modelling:"

    def __init__(self, max_tokens: int = 192, inline: bool = True) -> None:
        super().__init__(max_tokens, inline)

    def field_text(self, ctx: DecisionContext) -> str:
        return ctx.T.PARTNER_FIELD

    def instruction(self, ctx: DecisionContext) -> str:
        return ctx.T.PARTNER_MODELLING


class SelfReflection(_ReasoningStep):
    """003 §3 step 3: review recent actions and the game's feedback; adjust the collaboration
    strategy (team role, altruism/egoism, persuasion).

    ``inline=True`` (003's protocol, strategy ``reflect``): a step of the one generation (the
    game's comparison of the built structure with the goal, 003's external check, is in the
    observation). ``inline=False`` (``reflect_call``, a variant): a separate call, skipped on
    the first decision, whose answer is shown as a section."""

    name = "reflect"
    priority = 30
    field, step, heading = "reflection", "self_reflection", "Reflection on my recent actions:"

    def __init__(self, max_tokens: int = 160, window: int = 3, inline: bool = True) -> None:
        super().__init__(max_tokens, inline)
        self.window = window

    def field_text(self, ctx: DecisionContext) -> str:
        return ctx.T.REFLECTION_FIELD

    def instruction(self, ctx: DecisionContext) -> str | None:
        """The last ``window`` actions with their feedback (none yet: no call)."""
        memory = ctx.agent.memory[-self.window :]
        if not memory:
            return None
        feedback = "; ".join(
            e.line(ctx.T).lstrip("- ") + (f" ({e.feedback})" if e.feedback else "") for e in memory
        )
        return ctx.T.SELF_REFLECTION.format(feedback=feedback)


# ----------------------------------------------------------------------------- 001
def game_recommender(info: EpisodeInfo) -> Recommender | None:
    """The game's action recommender, if its env module defines ``action_recommender(view)``.

    The hook, for games that have one (Guandan's RL recommender in 001 §3.2), takes the player's
    view and returns scores for the legal actions (higher is better).
    """
    try:
        from tom_envs.registration import game_spec

        module = game_spec(info.env_id).load()
    except (KeyError, ImportError):
        return None
    hook = getattr(module, "action_recommender", None)
    return cast("Recommender", hook) if callable(hook) else None


class ToMPlanning(Piece):
    """001 §3.2-3.3: analyse every other player (first order; second order adds what they
    believe about me), then plan and evaluate over the action recommender's top-k.

    Args:
        order: 1 or 2.
        top_k: how many recommended actions to keep (001 found k = 5 better than 3).
        recommender: ``view -> {action: score}``; default: the game's ``action_recommender``
            hook, else no shortlist (every legal action stays a candidate).
    """

    name = "tom_planning"
    priority = 50

    def __init__(
        self,
        order: int = 1,
        top_k: int = 5,
        recommender: Recommender | None = None,
        max_tokens: int = 192,
    ) -> None:
        if order not in (1, 2):
            raise ValueError(f"ToM planning order must be 1 or 2, got {order}")
        self.order = order
        self.top_k = top_k
        self.recommender = recommender
        self.max_tokens = max_tokens
        self._active: Recommender | None = recommender

    def reset(self, agent: LLMAgent, info: EpisodeInfo) -> None:
        """Find the game's recommender when none was given."""
        self._active = self.recommender or game_recommender(info)

    def prepare(self, ctx: DecisionContext) -> None:
        """Shortlist, analyse the other players, and ask for an evaluation of each candidate."""
        if self._active is not None and self.top_k and len(ctx.candidates) > self.top_k:
            scores = self._active(ctx.turn.view)
            ranked = sorted(ctx.candidates, key=lambda a: (-float(scores.get(a, -1e18)), a))
            n = len(ctx.candidates)
            ctx.candidates = {a: ctx.candidates[a] for a in ranked[: self.top_k]}
            ctx.notes["candidates_header"] = ctx.T.TOP_K_SECTION.format(k=self.top_k, n=n)
            ctx.notes["top_k"] = list(ctx.candidates.values())
        prompt = ctx.T.TOM_PLANNING_1 if self.order == 1 else ctx.T.TOM_PLANNING_2
        user = ctx.context_text(legal=True, strip_question=True) + "\n\n" + prompt
        text = _ask_text(ctx, f"tom_order{self.order}", ctx.system_prompt(), user, self.max_tokens)
        ctx.notes[f"tom_order{self.order}"] = text
        ctx.sections.append((ctx.T.TOM_ANALYSIS_TITLE.format(order=self.order), text))
        ctx.fields["evaluation"] = ctx.T.TOM_PLANNING_FIELD


# ----------------------------------------------------------------------------- 004
class PlansInsights(Piece):
    """004 Figs. 8-9 (Fish et al.): answer with plans and insights too; show them next step."""

    name = "plans"
    priority = 40

    def __init__(self) -> None:
        self.plans = ""
        self.insights = ""

    def reset(self, agent: LLMAgent, info: EpisodeInfo) -> None:
        """Forget plans and insights."""
        self.plans = self.insights = ""

    def prepare(self, ctx: DecisionContext) -> None:
        """Show the previous plans and ask for new ones."""
        if self.plans or self.insights:
            ctx.sections.append(
                (
                    "",
                    ctx.T.PLANS_SECTION.format(
                        plans=self.plans or "-", insights=self.insights or "-"
                    ),
                )
            )
        ctx.fields["plans"] = ctx.T.PLANS_FIELD
        ctx.fields["insights"] = ctx.T.INSIGHTS_FIELD

    def finish(self, ctx: DecisionContext, action: int, decision: Decision) -> None:
        """Keep what the model wrote."""
        self.plans = decision.fields.get("plans", "") or self.plans
        self.insights = decision.fields.get("insights", "") or self.insights
        ctx.notes["plans"] = self.plans
        ctx.notes["insights"] = self.insights


class Reflexion(Piece):
    """004 Figs. 10-12 (Shinn et al.): after each outcome, a reflection module writes a lesson
    and plan; the last ``memories`` reflections are shown when acting (and predicting)."""

    name = "reflexion"
    priority = 30

    def __init__(self, memories: int = 3, max_tokens: int = 128) -> None:
        self.memories = memories
        self.max_tokens = max_tokens
        self.reflections: deque[str] = deque(maxlen=memories)

    def reset(self, agent: LLMAgent, info: EpisodeInfo) -> None:
        """Forget reflections."""
        self.reflections = deque(maxlen=self.memories)

    def outcome(self, ctx: DecisionContext) -> None:
        """Reflect on the previous decision's outcome."""
        if not ctx.agent.memory:
            return
        last = ctx.agent.memory[-1]
        reward = "unknown" if last.reward is None else f"{last.reward:g}"
        wording = ctx.T.REWARD_TEAM if ctx.agent.team_reward else ctx.T.REWARD_OWN
        previous = "\n".join(f"- {r}" for r in self.reflections) or "- none yet"
        user = (
            ctx.context_text(legal=False, sections=False, strip_question=True)
            + "\n\n"
            + (
                ctx.T.REFLEXION_REFLECT.format(
                    action=last.action_text,
                    reward_text=wording.format(reward=reward),
                    reflections=previous,
                )
            )
        )
        text = _ask_text(ctx, "reflexion", ctx.system_prompt(), user, self.max_tokens)
        self.reflections.append(" ".join(text.split()))
        ctx.notes["reflection"] = text

    def prepare(self, ctx: DecisionContext) -> None:
        """Show the reflections."""
        if self.reflections:
            ctx.sections.append(
                (ctx.T.REFLEXION_SECTION, "\n".join(f"- {r}" for r in self.reflections))
            )


class S2A(Piece):
    """004 Figs. 16-17 (System 2 Attention): rewrite rules and history to what matters; the
    rewrite replaces both in every later prompt of this decision."""

    name = "s2a"
    priority = 0

    def __init__(self, max_tokens: int = 256) -> None:
        self.max_tokens = max_tokens

    def prepare(self, ctx: DecisionContext) -> None:
        """Replace rules and observation by the model's rewrite."""
        user = f"{ctx.observation.strip()}\n\n{ctx.T.S2A}"
        request = ctx.request(
            [{"role": "system", "content": ctx.system_prompt()}, {"role": "user", "content": user}],
            max_tokens=ctx.agent.step_budget(self.max_tokens),
        )
        text = ctx.ask("s2a", request).text.strip()
        if text:
            ctx.notes["s2a"] = text
            ctx.rules = ""
            ctx.observation = text


def partner_options(ctx: DecisionContext) -> dict[int, str] | None:
    """The partner's possible actions as text: the agent's ``partner_options`` hook, else, in a
    two-player game, the same action texts as one's own (symmetric games such as 004's)."""
    hook = ctx.agent.partner_options
    if hook is not None:
        return dict(hook(ctx.turn))
    info = ctx.agent.info
    if info is not None and info.num_players == 2:
        return dict(ctx.text.legal_actions)
    return None


def predict_partner(
    ctx: DecisionContext, method: str, own_action: str | None, step: str
) -> tuple[int, str] | None:
    """Literal ToM: the partner's action this round, by QA, CoT or LM scoring (004 Figs. 2-7)."""
    options = partner_options(ctx)
    if not options:
        ctx.notes[f"{step}_skipped"] = "no partner options for this game (pass partner_options=)"
        return None
    own = ("\n\n" + ctx.T.PREDICT_AFTER_OWN.format(action=own_action)) if own_action else ""
    context = ctx.context_text(legal=False, strip_question=True) + own
    if method == "lm":
        prompt = f"{ctx.rules.strip()}\n\n{context}\n{ctx.T.LM_PREDICT_STEM}".lstrip()
        key, table, _ = choose_by_score(ctx, prompt, options, step)
        ctx.notes[f"{step}_scores"] = table
        return key, options[key]
    names = ["reasoning"] if method == "cot" else []
    question = ctx.T.PREDICT_QUESTION.format(options=", ".join(options.values()))
    if method == "cot":
        question = cot_instruction(ctx).replace("choose your action", "predict") + "\n" + question
    schema = None
    if ctx.agent.constrained:
        fields = {n: ctx.T.COT_FIELD for n in names}
        options_text = list(options.values())
        schema = answer_schema(fields, options_text, "prediction", False, ctx.agent.field_chars)
        fmt = ctx.T.JSON_FORMAT.format(keys=json_keys([*names, "prediction"]))
        fmt = fmt.replace(
            '"action" must be exactly one of the legal actions listed above',
            '"prediction" must be exactly one of the options',
        )
    else:
        fmt = "Format your response as\n" + format_lines(names, False) + "Prediction: <option>"
    request = ctx.request(
        [
            {"role": "system", "content": ctx.system_prompt()},
            {"role": "user", "content": f"{context}\n\n{question}\n{fmt}"},
        ],
        schema=schema,
        max_tokens=ctx.agent.step_budget(224 if method == "cot" else 32),
    )
    text = ctx.ask(step, request).text
    reply = read_reply(text, names, key="prediction")
    result = match_action(reply.action_text if reply.action_text is not None else text, options)
    if not result.valid or result.action is None:
        ctx.notes[f"{step}_invalid"] = result.feedback
        return None
    return result.action, options[result.action]


class _Predicting(Piece):
    """A piece that predicts the partner's action by ``method``: ``qa`` (Fig. 5), ``cot`` or
    ``lm`` (Fig. 3)."""

    def __init__(self, method: str = "qa") -> None:
        if method not in ("qa", "cot", "lm"):
            raise ValueError(f"prediction method must be qa, cot or lm, got {method!r}")
        self.method = method


class Social(_Predicting):
    """004 Fig. 18 (Akata et al.): predict the partner first (QA, Fig. 5, or LM, Fig. 3), then
    act given that prediction. The prediction is recorded as ``partner_action``."""

    name = "social"
    priority = 60

    def prepare(self, ctx: DecisionContext) -> None:
        """Predict, record, and show the prediction."""
        try:
            predicted = predict_partner(ctx, self.method, None, "social_prediction")
        except LLMError as exc:
            ctx.notes["social_error"] = str(exc)
            return
        if predicted is None:
            return
        key, text = predicted
        ctx.prediction["partner_action"] = key
        ctx.notes["social_prediction"] = text
        ctx.sections.append(("", ctx.T.SOCIAL_PREDICTION.format(prediction=text)))


class PredictPartner(_Predicting):
    """004 Figs. 2, 5, 7 (literal ToM, "agent first"): after choosing, predict the partner's
    action; recorded as ``partner_action`` for the ToM metrics, never used to act."""

    name = "predict"
    priority = 95

    def finish(self, ctx: DecisionContext, action: int, decision: Decision) -> None:
        """Predict unless a prediction was already made (Social)."""
        if "partner_action" in ctx.prediction:
            return
        own = ctx.text.legal_actions.get(action)
        try:
            predicted = predict_partner(ctx, self.method, own, "prediction")
        except LLMError as exc:
            ctx.notes["prediction_error"] = str(exc)
            return
        if predicted is not None:
            ctx.prediction["partner_action"] = predicted[0]
            ctx.notes["prediction"] = predicted[1]


class Oracle(Piece):
    """004 Figs. 14-15: the partner's true next action is stated (``maximize`` adds the
    emphasis on maximising one's reward). ``oracle(turn)`` returns the partner's action."""

    name = "oracle"
    priority = 60

    def __init__(self, oracle: OracleFn, maximize: bool = False) -> None:
        self.oracle = oracle
        self.maximize = maximize

    def prepare(self, ctx: DecisionContext) -> None:
        """State the partner's action."""
        action = int(self.oracle(ctx.turn))
        options = partner_options(ctx) or {}
        text = options.get(action, f"action {action}")
        ctx.notes["oracle"] = text
        template = ctx.T.ORACLE_MAX if self.maximize else ctx.T.ORACLE
        ctx.sections.append(("", template.format(action=text)))
