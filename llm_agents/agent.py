"""An LLM agent for every registered game, built on the text layer alone.

:class:`LLMAgent` reads ``turn.text()`` (rules, observation, legal actions), asks the model through
a client (:mod:`tom_llm_agents.client`), and maps the answer back with ``turn.parse`` (the game's own
parser), so it needs no per-game code. Its prompting strategy is composed from the papers' pieces
(:mod:`tom_llm_agents.prompting`); a *preset* (:mod:`tom_llm_agents.presets`) fixes a paper's whole protocol.
Its settings (defaults, checks, the :meth:`~LLMAgent.config` record) are in
:mod:`tom_llm_agents.settings`; how it asks the model and reads the answers (the answer format,
the invalid-output policy, probe answers) in :mod:`tom_llm_agents.answering`.

Decoding (``decoding=``): ``"free"`` (default, the papers' protocol: the reply is free text, read
line by line and through the game's parser) or ``"json"`` (constrained: a JSON schema whose action
field is an ``enum`` of the legal actions, where the server supports it). The mode is recorded in
:meth:`LLMAgent.config` and in every call record, so a 100%-valid constrained run is never
mistaken for a free-text one.

Invalid output (``invalid=``): ``"reprompt"`` asks again with the game's feedback, ``"resample"``
draws the same prompt again (paper 004: "we query the LLM for more stochastic responses until the
criteria is satisfied"), ``"forfeit"`` lets the invalid answer use up the turn (paper 000); at
most ``reprompts`` further attempts. What is then played is a *fallback*, never the model's own:
``AgentAction.valid=False``, ``info["fallback"]=True`` and ``info["failure"]={"kind", "message"}``
with the kind one of ``"unparseable"`` (no legal action in the reply), ``"endpoint"`` (unreachable
or failing after the retries, circuit breaker open), ``"rate_limited"`` (429 after the retries, or
a ``Retry-After`` over the bound), ``"oversized"`` (a reply over the size cap),
``"context_overflow"`` (the prompt does not fit) or ``"exception"`` (anything else that went wrong
inside the agent).

No wasted calls: a decision with one legal action is played without asking the model
(``info["forced"]=True``); ToM probes are answered only with ``probes=true`` (default); once the
client's circuit breaker has opened, the agent stops calling for the rest of the episode, so a dead
endpoint fails the episode within seconds.

Every step's ``info`` holds::

    {"usage": {"calls", "tokens_in", "tokens_out", "latency_s", "cache_hits", "reprompts",
               "fallbacks", "forced", ["cost_usd"]},    # numbers; the runner sums them per episode
     "llm_calls": [{"step", "messages", "reply", ["reasoning"], "usage", "latency_s",
                    "cache_hit", "decoding", "model", "finish_reason", "sample"}, ...],
     "llm": {"model", "strategy", "feedback", ["notes"], ["fields"], ["error"]},
     ["fallback": True, "fallback_cause": kind, "failure": {"kind", "message"}],
     ["forced": True]}

API keys never reach a trajectory: :meth:`LLMAgent.config` names the endpoint's host only, and an
agent spec with ``api_key=`` is refused (use ``$OPENAI_API_KEY`` or ``api_key_env=``).

As a spec for ``tom-envs run`` (the ``llm`` plugin of group ``tom_envs.agents``)::

    llm:model=gpt-4o-mini                        # $OPENAI_API_KEY, OpenAI's endpoint
    llm:preset=paper004:model=qwen:base_url=http://127.0.0.1:8000/v1
    llm:model=qwen:base_url=http://127.0.0.1:8000/v1:strategy=cot+social:decoding=json
    llm:local=true:preset=paper000               # the bundled SmolLM2 on a local llama.cpp server
    llm:model=r1:base_url=...:max_tokens=8192:temperature=0.6:extra={"top_k":20}
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from tom_envs.core.agents import AgentAction, BaseAgent, EpisodeInfo, Turn
from tom_llm_agents.answering import AnsweringMixin
from tom_llm_agents.client import BaseLLMClient
from tom_llm_agents.failures import CircuitBreaker, LLMError, RetryPolicy
from tom_llm_agents.fewshot import examples_for
from tom_llm_agents.openai_client import OpenAIClient
from tom_llm_agents.presets import preset as get_preset
from tom_llm_agents.prompting import build_strategy
from tom_llm_agents.prompting import templates as T_EN
from tom_llm_agents.prompting.base import Decider, Decision, DecisionContext, MemoryEntry, Piece
from tom_llm_agents.settings import (
    AGENT_FAILURE_KINDS,
    DEFAULTS,
    HISTORY_IN_OBSERVATION,
    SettingsMixin,
    bounded,
)

#: What the agent's memory says it played after a forfeited answer (``fallback="forfeit"``).
FORFEITED = "(no move: the invalid answer forfeited the turn)"

USAGE_KEYS = (
    "calls",
    "tokens_in",
    "tokens_out",
    "latency_s",
    "cache_hits",
    "reprompts",
    "fallbacks",
    "forced",
)


def _cjk_share(text: str) -> float:
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return 0.0
    return sum(1 for c in letters if "\u4e00" <= c <= "\u9fff") / len(letters)


def _resolve(
    preset: str | None, constrained: bool | None, strategy: str | None, settings: dict[str, Any]
) -> dict[str, Any]:
    """The settings in force: ``DEFAULTS`` < the preset's < those given (an API key, or a name
    that is no setting, is refused)."""
    if "api_key" in settings:
        raise ValueError(
            "do not put an API key in an agent spec (it would be written to run names): set "
            "$OPENAI_API_KEY, or name another variable with api_key_env=VAR"
        )
    unknown = sorted(set(settings) - set(DEFAULTS))
    if unknown:
        raise TypeError(f"LLMAgent got unexpected arguments {unknown}")
    resolved = dict(DEFAULTS)
    if preset is not None:
        resolved.update(get_preset(str(preset)).settings)
    if constrained is not None and "decoding" not in settings:
        settings["decoding"] = "json" if constrained else "free"
    if strategy is not None:
        settings["strategy"] = strategy
    resolved.update(settings)
    return resolved


def _prices(price_in: float | None, price_out: float | None) -> tuple[float, float] | None:
    """USD per million prompt and generated tokens, both or none."""
    if (price_in is None) != (price_out is None):
        raise ValueError("give both price_in and price_out (USD per million tokens), or none")
    if price_in is None:
        return None
    return bounded("price_in", price_in, 0, 1e4), bounded("price_out", price_out, 0, 1e4)


class LLMAgent(SettingsMixin, AnsweringMixin, BaseAgent):
    """An LLM plays any game through the text layer.

    Args:
        client: an LLM client; built from ``model``/``base_url`` (or ``local``) when omitted.
        strategy: a strategy string (``"qa"``, ``"cot+social"``...; see
            :mod:`tom_llm_agents.prompting`), ignored when ``decider``/``pieces`` are given.
        preset: a protocol preset (:mod:`tom_llm_agents.presets`, e.g. ``"paper004"``); its settings
            are the defaults, and any setting given here overrides them.
        model: model name for the built client.
        base_url: OpenAI-compatible endpoint for the built client.
        api_key_env: environment variable holding the key for the built client.
        local: use the bundled SmolLM2-135M on an in-process llama.cpp server (one per process).
        cache_dir: disk cache for the built client.
        decoding: ``"free"`` (free text, the papers' protocol) or ``"json"`` (constrained).
        constrained: the older switch for ``decoding`` (``True`` means ``"json"``).
        invalid: ``"reprompt"`` (with the game's feedback), ``"resample"`` (the same prompt
            again) or ``"forfeit"`` (the invalid answer uses up the turn).
        reprompts: further attempts after an invalid answer before the fallback.
        fallback: ``"random"`` (seeded by the episode) or ``"first"`` legal action, or
            ``"forfeit"``: an invalid answer (after the re-prompts) plays no move of the agent's;
            the step's info says ``"forfeit": True`` and the episode driver plays the game's
            declared no-op (the turn is lost) or, where the game has none at that moment, ends
            the episode (:meth:`tom_envs.driver.EpisodeDriver._forfeit`). Failures of the
            endpoint or of the agent still fall back at random (they are not answers).
        temperature: sampling temperature in [0, 2] (0: greedy and reproducible).
        top_p: nucleus sampling in (0, 1] (sent only when sampling).
        max_tokens: the answer's generation budget (default: the decider's, 64 for QA, 512 for
            CoT; reasoning models need thousands).
        extra: extra request fields, a JSON object of allowed sampling options
            (:data:`~tom_llm_agents.settings.EXTRA_FIELDS`).
        price_in: USD per million prompt tokens (with ``price_out``: cost is recorded).
        price_out: USD per million generated tokens.
        memory: previous decisions listed in the prompt (episodic memory); ``"auto"``: 5, or 0
            in games whose observation already shows the whole history.
        history: previous exchanges kept verbatim as chat turns (000 keeps two rounds).
        verify_rounds: the verifier's cap: at most this many vetoes per decision (recorded).
        examples: in-context examples: ``"none"``, ``"auto"`` (the set for the game) or a set
            name (:mod:`tom_llm_agents.fewshot`).
        probes: answer the game's ToM probes (one extra call per decision with probes).
        probe_batch: how a step's ToM probes are grouped into requests: ``True``/``"step"``
            (one request), ``False``/``"question"`` (one each), ``"target"`` (one per teammate
            asked about: paper 000's three questions per call).
        answer_format: ``"agent"`` (the agent states the one format it parses, the game's own
            instruction removed) or ``"game"`` (the game's own reply format stays in the rules
            and the whole reply goes to the game's parser: paper 000's App. A.1 format).
        skip_forced: play a decision with a single legal action without asking the model.
        interface: Overcooked only: ``"midlevel"`` (paper 002's mid-level actions, default) or
            ``"primitive"`` (moves cell by cell).
        language: ``"auto"`` (Chinese scaffolding when the game's text is Chinese), ``"en"``,
            ``"zh"``.
        hide_history: remove the interaction history from matrix-game prompts (004 Table 3).
        hide_payoffs: remove the payoff rules from matrix-game prompts (004 Table 3).
        game_args: ``"preset"`` (default): the preset's game arguments are required on its game
            (paper 001's Guandan in Chinese, 004 Table 2's R/P/S names), applied by ``run``,
            ``eval`` and ``reproduce`` (:meth:`required_env_kwargs`), and a run that sets them
            otherwise is refused; ``"none"``: the run's own game arguments are played (recorded).
        grounding: ``"parser"`` (default): a reply is an action only when the game's parser
            reads one; ``"fuzzy"`` (002's authors): a reply the parser cannot read, but whose
            answer is marked (``Action: ...``), is grounded to the candidate whose text it
            resembles most (recorded in the step's ``notes["grounding"]`` and counted in the
            episode's ``fuzzy_grounded``); an unmarked reply is still a fallback.
        menu: ``"auto"`` (default): the candidate actions are listed in the prompt unless the
            observation lists them; ``"none"``: never (the game's rules say how to write an
            action: 003's CoBlock commands, 000's App. A.1 forms); ``"tool"``: not listed, but
            offered: a reply ``LIST`` gets them in a follow-up message (a counted call, step
            ``"legal_actions"``, once per decision); a shortlist (001's top-k) is always listed.
        timeout: seconds per request attempt (built client).
        max_retries: retries of a failed request (rate limit, timeout, connection, 5xx).
        retry_delay_s: the first backoff of those retries; later ones double.
        breaker: consecutive connection failures that open the client's circuit breaker.
        breaker_cooldown_s: seconds before the open breaker lets one trial request through.
        decider: a decider object (overrides ``strategy``).
        pieces: piece objects (overrides ``strategy``).
        oracle: ``turn -> partner's action`` for the oracle strategies.
        oracle_partner: a matrix partner bot's name, to build ``oracle`` from (matrix games).
        recommender: ``view -> {action: score}`` for ToM planning's top-k (001).
        top_k: shortlist size for ToM planning.
        memories: reflections Reflexion keeps (004 used 1-3).
        partner_options: ``turn -> {action: text}``, the partner's actions for predictions
            (default: one's own actions in two-player games).
        step_tokens: cap on the generation budget of the free-text intermediate steps (belief,
            ToM analyses, reflections, S2A) and of probe answers, for small models and quick
            runs.
        field_chars: longest free-text field (reasoning, plans...) in a constrained answer.
        reasoning: the model refuses ``temperature``/``top_p`` (none is sent; the budget goes as
            ``max_completion_tokens``); unset: by the model's name (o-series, GPT-5).
        reasoning_effort: ``minimal``, ``low``, ``medium`` or ``high`` (sent when given).
        max_completion_tokens: the budget, sent under that name (instead of ``max_tokens``).
        max_reply_bytes: the largest reply read (over it: a fallback of kind ``oversized``).
        max_retry_after_s: the longest ``Retry-After`` waited for (over it: kind
            ``rate_limited`` at once).
        deadline_s: wall-clock bound on one call with its retries (each attempt is bounded by
            ``timeout`` anyway).
        label: a display name (default ``llm:<model>:<preset or strategy>``).
        max_concurrency: requests in flight at once (probes, scoring) for the built client.
    """

    name = "llm"
    description = (
        "an LLM on any OpenAI-compatible endpoint (model=, base_url=, strategy=qa|cot|lm+...; "
        "local=true: the bundled SmolLM2)"
    )
    #: options a spec read from a file or request may not set (tom_envs.core.trust): only the command
    #: line chooses the host that receives prompts and the key, and which secret is sent
    trusted_options: ClassVar[dict[str, str]] = {
        "base_url": "chooses the host that receives the prompts and the API key",
        "api_key_env": "chooses which secret is sent to the endpoint",
    }
    #: path options a file's spec may give only inside the current folder
    path_options = ("cache_dir",)

    def __init__(
        self,
        client: BaseLLMClient | None = None,
        strategy: str | None = None,
        *,
        preset: str | None = None,
        model: str | None = None,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        local: bool = False,
        cache_dir: str | None = None,
        constrained: bool | None = None,
        price_in: float | None = None,
        price_out: float | None = None,
        timeout: float = 60.0,
        max_retries: int = 2,
        retry_delay_s: float = 1.0,
        breaker: int = 3,
        breaker_cooldown_s: float = 30.0,
        decider: Decider | None = None,
        pieces: Sequence[Piece] | None = None,
        oracle: Callable[[Turn], int] | None = None,
        oracle_partner: str | None = None,
        recommender: Callable[[Any], Mapping[int, float]] | None = None,
        partner_options: Callable[[Turn], Mapping[int, str]] | None = None,
        label: str | None = None,
        max_concurrency: int = 4,
        **settings: Any,
    ) -> None:
        super().__init__()
        self.preset = preset
        resolved = _resolve(preset, constrained, strategy, settings)
        self.apply_settings(resolved)
        prices = _prices(price_in, price_out)
        self.timeout = bounded("timeout", timeout, 0.1, 3600)
        self.max_retries = int(bounded("max_retries", max_retries, 0, 20))
        self.retry_delay_s = bounded("retry_delay_s", retry_delay_s, 0, 60)
        if client is None:
            breaker_obj = CircuitBreaker(
                int(bounded("breaker", breaker, 0, 100)),
                bounded("breaker_cooldown_s", breaker_cooldown_s, 0, 3600),
            )
            endpoint = (local, model, base_url, api_key_env, cache_dir, max_concurrency)
            client = self._build_client(*endpoint, breaker_obj)
        if prices is not None:
            client.prices[client.model] = prices
        self.client = client
        self.oracle_partner = oracle_partner
        self._oracle = oracle
        self._build_strategy(resolved, decider, pieces, oracle, recommender)
        self.partner_options = partner_options
        self.name = label or f"llm:{client.model}:{preset or self.strategy}"
        self.spec = self.name
        self.memory = []
        self.history = []
        self.episode_stats = {}
        self.templates = T_EN
        self.examples = ()
        self.team_reward = False
        self._step_usage = {}
        self._last_calls = []
        self._chat = False
        self._dead = None
        self._midlevel: Any = None
        self._in_midlevel = False
        if not self.probes_enabled:
            # the runner asks only agents that have ``answer_probes``: switched off, none is made
            self.answer_probes = None  # type: ignore[assignment]

    def _build_strategy(
        self,
        resolved: Mapping[str, Any],
        decider: Decider | None,
        pieces: Sequence[Piece] | None,
        oracle: Callable[[Turn], int] | None,
        recommender: Callable[[Any], Mapping[int, float]] | None,
    ) -> None:
        """The decider and pieces: the ones given, else built from the strategy string."""
        options: dict[str, Any] = {
            "oracle": oracle,
            "recommender": recommender,
            "top_k": int(resolved["top_k"]),
            "memories": int(resolved["memories"]),
        }
        if oracle is None and self.oracle_partner is not None:
            options["oracle"] = self._matrix_oracle
        self.strategy = (
            str(resolved["strategy"]) if decider is None and pieces is None else "custom"
        )
        built_decider, built_pieces = build_strategy(str(resolved["strategy"]), **options)
        self.decider = decider if decider is not None else built_decider
        self.pieces = sorted(
            pieces if pieces is not None else built_pieces, key=lambda p: p.priority
        )

    def _build_client(
        self,
        local: bool,
        model: str | None,
        base_url: str | None,
        api_key_env: str,
        cache_dir: str | None,
        max_concurrency: int,
        breaker: CircuitBreaker,
    ) -> BaseLLMClient:
        """The client the settings describe: the bundled local model's shared one, or an
        OpenAI-compatible endpoint's."""
        retry = RetryPolicy(
            max_retries=self.max_retries,
            base_delay_s=self.retry_delay_s,
            max_retry_after_s=float(self._settings["max_retry_after_s"]),
        )
        if local:
            from tom_llm_agents.local import shared_client

            return shared_client(
                cache_dir=cache_dir,
                retry=retry,
                breaker=breaker,
                timeout=self.timeout,
                **self.client_options(),
            )
        return OpenAIClient(
            model,
            base_url,
            api_key_env=api_key_env,
            cache_dir=cache_dir,
            max_concurrency=max_concurrency,
            json_schema=None if self.decoding == "json" else False,
            retry=retry,
            timeout=self.timeout,
            breaker=breaker,
            **self.client_options(),
        )

    # ------------------------------------------------------------------ episode
    def reset(self, info: EpisodeInfo) -> None:
        """Start an episode: clear memory, counters and every piece's state; in Overcooked with
        ``interface="midlevel"`` the agent chooses mid-level actions (paper 002)."""
        self._midlevel = None
        if (
            self.interface == "midlevel"
            and not self._in_midlevel
            and info.env_id.split("/")[-1].startswith("Overcooked")
        ):
            from tom_llm_agents.overcooked import midlevel_wrapper

            self._midlevel = midlevel_wrapper(self)
            self._midlevel.reset(info)
            return
        self._reset_llm(info)

    def _reset_llm(self, info: EpisodeInfo) -> None:
        super().reset(info)
        self.memory = []
        self.history = []
        self.episode_stats = {
            "decisions": 0,
            "valid": 0,
            "first_try_valid": 0,
            "fuzzy_grounded": 0,
            **dict.fromkeys(USAGE_KEYS, 0),
        }
        self._dead = None
        tags = info.tags
        self._chat = bool(getattr(tags, "communication", False))
        utility = getattr(tags, "utility", "")
        # a team's reward is the team's: fully cooperative games, and a zero-sum game of more
        # than two players, which the suite plays in teams (Guandan: the team's +3/+2/+1)
        self.team_reward = utility == "identical" or (
            utility == "zero_sum" and info.num_players > 2
        )
        game = info.env_id.split("/")[-1].split("-v")[0]
        if self.memory_setting == "auto":
            shown = game in HISTORY_IN_OBSERVATION
            if game == "Overcooked":  # only the mid-level text lists the action history
                shown = self._in_midlevel
            self.memory_size = 0 if shown else 5
        from tom_llm_agents.skins import episode_skin, skinned_examples

        # in the episode's skin: the names the game shows, never the canonical ones
        self.examples = skinned_examples(
            examples_for(self.examples_setting, info.env_id), episode_skin(info)
        )
        self.templates = T_EN
        if self.language == "zh":
            self._use_chinese()
        for piece in self.pieces:
            piece.reset(self, info)

    def _use_chinese(self) -> None:
        from tom_llm_agents.prompting import templates_zh

        self.templates = templates_zh

    def _matrix_oracle(self, turn: Turn) -> int:
        from tom_envs.registration import game_spec
        from tom_llm_agents.prompting.oracles import matrix_partner_oracle

        if self._oracle is None:
            assert self.info is not None and self.oracle_partner is not None
            config = getattr(self.info, "game_config", None)
            if config is None:  # told nothing of the rules: the registered game's defaults
                spec = game_spec(self.info.env_id)
                config = spec.load().make_bundle(**spec.kwargs).game.config
            self._oracle = matrix_partner_oracle(self.oracle_partner, config)
        return self._oracle(turn)

    def required_env_kwargs(self, game: str) -> dict[str, Any]:
        """The game arguments this agent's protocol needs on ``game``: its preset's
        (:attr:`~tom_llm_agents.presets.Preset.env_kwargs`) on the preset's own game, unless
        ``game_args="none"``. The commands that play episodes apply them
        (:func:`tom_envs.core.agents.with_required_env_kwargs`)."""
        if self.preset is None or self._settings["game_args"] == "none":
            return {}
        p = get_preset(str(self.preset))
        return dict(p.env_kwargs) if game.split("/")[-1].split("-v")[0] == p.game else {}

    # ------------------------------------------------------------------ accounting
    @property
    def valid_action_pct(self) -> float:
        """Share of this episode's decisions whose action came from the model (percent)."""
        n = self.episode_stats.get("decisions", 0)
        return 100.0 * self.episode_stats.get("valid", 0) / n if n else float("nan")

    # ------------------------------------------------------------------ acting
    def act(self, turn: Turn) -> AgentAction:
        """Decide through the strategy, with the invalid-output and failure policies."""
        if self._midlevel is not None:
            return self._midlevel.act(turn)
        return self._act_llm(turn)

    def _text_for(self, turn: Turn) -> Any:
        text = turn.text()
        if self.language == "auto" and self.templates is T_EN and _cjk_share(text.rules) > 0.3:
            self._use_chinese()
        return text

    def _act_llm(self, turn: Turn) -> AgentAction:
        if self.info is None:
            raise RuntimeError("reset(info) must be called before act()")
        if self.memory and self.memory[-1].reward is None:
            self.memory[-1].reward = float(turn.reward)
        self._step_usage = dict.fromkeys(USAGE_KEYS, 0)
        self._last_calls = []
        legal = turn.legal_actions
        stats = self.episode_stats
        stats["decisions"] += 1
        if self.skip_forced and len(legal) == 1:
            return self._forced(turn, int(legal[0]))
        if self._dead is not None:
            return self._fail(turn, "endpoint", self._dead, None, [])
        try:
            ctx = self.decision_context(turn)
            text = ctx.text
        except Exception as exc:  # the game's text layer failed: nothing to ask the model
            return self._fail(turn, "exception", f"{type(exc).__name__}: {exc}", None, [])
        self._last_calls = ctx.calls
        try:
            for piece in self.pieces:
                piece.outcome(ctx)
            for piece in self.pieces:
                piece.prepare(ctx)
            decision = self._decide(ctx)
        except LLMError as exc:
            breaker = getattr(self.client, "breaker", None)
            if exc.kind == "endpoint" and breaker is not None and breaker.is_open:
                # stop calling for the rest of the episode
                self._dead = (
                    str(exc)
                    if "circuit breaker open" in str(exc)
                    else f"circuit breaker open after: {exc}"
                )
            # a refused request is the endpoint's failure too (its message says which)
            kind = exc.kind if exc.kind in AGENT_FAILURE_KINDS else "endpoint"
            return self._fail(turn, kind, str(exc), ctx, ctx.calls)
        except Exception as exc:  # a bug or a hostile reply must not lose the step's usage
            return self._fail(turn, "exception", f"{type(exc).__name__}: {exc}", ctx, ctx.calls)
        if decision.action is None:
            return self._fail(
                turn,
                "unparseable",
                decision.feedback or "the reply names no legal action",
                ctx,
                ctx.calls,
                decision,
            )
        action = int(decision.action)
        error = None
        try:
            for piece in self.pieces:
                piece.finish(ctx, action, decision)
        except LLMError as exc:  # a failed literal-ToM prediction does not undo the action
            error = str(exc)
        self._remember(turn, ctx, text.legal_actions.get(action, str(action)), True, decision)
        stats["valid"] += 1
        stats["first_try_valid"] += int(decision.reprompts == 0)
        stats["fuzzy_grounded"] += int("grounding" in ctx.notes)
        stats["reprompts"] += decision.reprompts
        self._step_usage["reprompts"] = decision.reprompts
        info = self._info(ctx, decision, error)
        return AgentAction(
            action=action,
            prediction=dict(ctx.prediction) or None,
            valid=True,
            message=decision.message if self.asks_message(ctx) else None,
            info=info,
        )

    def prompt_parts(self, text: Any) -> tuple[str, str]:
        """The rules and observation the prompts show: one voice (the game's own answer-format
        instruction removed when the agent states the one format it parses,
        ``answer_format="agent"``), then 004's ablations."""
        rules, observation = text.rules, text.observation
        fmt = str(getattr(text, "answer_format", "") or "")
        if fmt and self.answer_format_setting == "agent":
            for sep in (" ", "\n", ""):
                rules = rules.replace(sep + fmt, "") if sep else rules.replace(fmt, "")
                observation = (
                    observation.replace(sep + fmt, "") if sep else observation.replace(fmt, "")
                )
        return self._ablate(rules, observation)

    def asks_message(self, ctx: DecisionContext) -> bool:
        """Whether the answer format has a chat-message field: in games with chat, unless the
        message travels inside an action (CoBlock's ``send_message(message="...")``)."""
        if not self._chat:
            return False
        return not any("message=" in t for t in ctx.text.legal_actions.values())

    def _ablate(self, rules: str, observation: str) -> tuple[str, str]:
        """004 Table 3's ablations on matrix-game text: payoff rules or history removed."""
        if self.hide_payoffs:
            rules = "\n".join(ln for ln in rules.splitlines() if not ln.startswith("If you choose"))
            rules = rules.replace(" The rules of the game are as follows:", "")
        if self.hide_history:
            observation = "\n".join(
                ln
                for ln in observation.splitlines()
                if not ln.startswith(("In round ", "(Rounds ", "Total so far:"))
            )
        return rules, observation

    def _remember(
        self, turn: Turn, ctx: DecisionContext | None, action_text: str, valid: bool, d: Decision
    ) -> None:
        self.memory.append(
            MemoryEntry(turn.decision, action_text, valid, d.feedback, None, d.message)
        )
        exchange = ctx.notes.pop("_exchange", None) if ctx is not None else None
        if exchange is not None:
            self.history.append(exchange)

    def _info(
        self, ctx: DecisionContext | None, decision: Decision | None, error: str | None
    ) -> dict[str, Any]:
        llm: dict[str, Any] = {
            "model": self.client.model,
            "strategy": self.strategy,
            "feedback": decision.feedback if decision is not None else "",
        }
        if ctx is not None:
            notes = {k: v for k, v in ctx.notes.items() if not k.startswith("_")}
            if notes:
                llm["notes"] = notes
        if decision is not None and decision.fields:
            llm["fields"] = decision.fields
        if error is not None:
            llm["error"] = error
        calls = ctx.calls if ctx is not None else []
        self._last_calls = calls
        return {"usage": self._step_usage, "llm_calls": calls, "llm": llm}

    def _forced(self, turn: Turn, action: int) -> AgentAction:
        """One legal action: played without asking the model (recorded as forced)."""
        self._step_usage["forced"] = 1
        self.episode_stats["forced"] += 1
        self.episode_stats["valid"] += 1
        try:
            action_text = turn.text().legal_actions.get(action, str(action))
        except Exception:
            action_text = str(action)
        self._remember(turn, None, action_text, True, Decision(action, feedback="forced"))
        info = self._info(None, None, None)
        info["forced"] = True
        return AgentAction(action=action, valid=True, info=info)

    def _fail(
        self,
        turn: Turn,
        kind: str,
        message: str,
        ctx: DecisionContext | None,
        calls: list[dict[str, Any]],
        decision: Decision | None = None,
    ) -> AgentAction:
        """A counted fallback: the failure's kind and message, never passed off as the model's."""
        action = self._fallback_action(turn)
        decision = decision or Decision(None, feedback=message)
        forfeit = self.fallback == "forfeit" and kind == "unparseable"
        try:
            action_text = turn.text().legal_actions.get(action, str(action))
        except Exception:
            action_text = str(action)
        if forfeit:  # the driver plays the game's no-op, or ends the episode: no move of ours
            action_text = FORFEITED
        self._remember(turn, ctx, action_text, False, decision)
        self.episode_stats["fallbacks"] += 1
        self.episode_stats["reprompts"] += decision.reprompts
        self._step_usage["fallbacks"] = 1
        self._step_usage["reprompts"] = decision.reprompts
        info = self._info(ctx, decision, message if kind != "unparseable" else None)
        info["llm_calls"] = calls
        self._last_calls = calls
        if forfeit:
            info["forfeit"] = True  # the driver forfeits the turn or the episode, recorded so
        else:
            info["fallback"] = True
            info["fallback_cause"] = kind
        info["failure"] = {"kind": kind, "message": message}
        return AgentAction(
            action=action,
            prediction=(dict(ctx.prediction) or None) if ctx is not None else None,
            valid=False,
            info=info,
        )

    def _fallback_action(self, turn: Turn) -> int:
        legal = turn.legal_actions
        if self.fallback == "first":
            return int(legal[0])
        return int(legal[int(self.rng.integers(len(legal)))])

    def _decide(self, ctx: DecisionContext) -> Decision:
        """The decider, then self-verification (002 §4.1.1, the authors' loop): a vetoed action's
        critique goes back to the generator in the same conversation ("Your selected action: X
        is not appropriate. <critique> Please choose another action.", with every candidate but X
        listed), until the verifier agrees or ``verify_rounds`` vetoes (the cap, recorded in
        ``notes["verify"]``; the authors looped without one)."""
        verifiers = [p for p in self.pieces if type(p).verify is not Piece.verify]
        vetoes = 0
        base = dict(ctx.candidates)
        while True:
            decision = self.decider.decide(ctx)
            if decision.action is None or not verifiers or len(base) <= 1:
                break
            if vetoes >= self.verify_rounds:
                break
            if all(p.verify(ctx, decision.action) for p in verifiers):
                break
            vetoes += 1
            rejected = decision.action
            ctx.notes.setdefault("vetoed", []).append(base[rejected])
            ctx.candidates = {a: t for a, t in base.items() if a != rejected}
            ctx.notes["_revise"] = (base[rejected], ctx.notes.pop("_critique", ""))
        ctx.notes.pop("_revise", None)
        ctx.notes.pop("_conversation", None)
        if verifiers:
            ctx.notes["verify"] = {
                "vetoes": vetoes,
                "cap": self.verify_rounds,
                "cap_reached": vetoes >= self.verify_rounds and decision.action is not None,
            }
        return decision
