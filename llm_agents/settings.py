"""The LLM agent's settings: what a spec may give, the defaults and checks, and their record.

:data:`DEFAULTS` lists every setting an agent spec may give (a preset of
:mod:`tom_llm_agents.presets` changes the defaults), with the values allowed (:data:`DECODINGS`,
:data:`INVALID_POLICIES`, :data:`INTERFACES`, :data:`LANGUAGES`) and the extra request fields
(:data:`EXTRA_FIELDS`, read by :func:`parse_extra`). :class:`SettingsMixin` gives
:class:`~tom_llm_agents.agent.LLMAgent` the check of its resolved settings, the options of the
client it builds (:meth:`~SettingsMixin.client_options`) and their record,
:meth:`~SettingsMixin.config`, which names the endpoint by its full URL without credentials or
query (:func:`endpoint_id`), also when it comes from ``$OPENAI_BASE_URL``: results of another
path on the same host are never reused.

Reasoning models and other endpoints: ``reasoning=true`` (the model refuses ``temperature`` and
``top_p``: neither is sent, and the budget goes as ``max_completion_tokens``), ``reasoning=false``,
or unset (by the model's name: OpenAI's o-series and GPT-5, see
:func:`~tom_llm_agents.openai_client.is_reasoning_model`); ``reasoning_effort=low`` (or
``minimal``, ``medium``, ``high``); ``max_completion_tokens=N`` (the budget, sent under that name
for any model). A reply larger than ``max_reply_bytes`` fails the decision (a fallback of kind
``"oversized"``); a ``Retry-After`` over ``max_retry_after_s`` fails it at once (kind
``"rate_limited"``); ``deadline_s`` bounds one call with its retries, wall clock.

``invalid=resample`` at temperature 0 is refused: a greedy model answers the same prompt the same
way, so each resample would be a paid copy of the last (use ``invalid=reprompt``, or sample).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from tom_llm_agents.client import DEFAULT_MAX_REPLY_BYTES
from tom_llm_agents.fewshot import examples_for
from tom_llm_agents.openai_client import REASONING_EFFORTS
from tom_llm_agents.state import AgentState

#: Bumped when the agent's prompts change in a way that changes results (recorded in config()).
PROMPT_VERSION = 4  # 4: ToM probes in the agent's own conversation; paper 000's protocol

DECODINGS = ("free", "json")
INVALID_POLICIES = ("reprompt", "resample", "forfeit")
INTERFACES = ("midlevel", "primitive")
LANGUAGES = ("auto", "en", "zh")
#: Whether a preset's game arguments are applied to its game (``"preset"``) or not (``"none"``).
GAME_ARGS = ("preset", "none")
#: How a reply becomes an action: the game's parser only, or (002's authors) also the closest
#: candidate by text similarity when the parser finds none.
GROUNDINGS = ("parser", "fuzzy")
#: Whether the agent lists the candidate actions in its prompts (``"auto"``: unless the
#: observation lists them), never (``"none"``: the game's rules and text alone), or only when the
#: model asks (``"tool"``: the prompt offers the list; a reply ``LIST`` gets it in a follow-up
#: message, a counted call recorded under the step ``"legal_actions"``).
MENUS = ("auto", "none", "tool")

#: The client's failure kinds a decision's fallback is recorded under as they are (any other
#: refused request is recorded as ``"endpoint"``: its message says which).
AGENT_FAILURE_KINDS = ("endpoint", "context_overflow", "rate_limited", "oversized")

#: Extra request fields a spec may set (``extra={...}``), with the JSON types allowed.
EXTRA_FIELDS: dict[str, tuple[type, ...]] = {
    "top_k": (int,),
    "min_p": (int, float),
    "typical_p": (int, float),
    "repetition_penalty": (int, float),
    "repeat_penalty": (int, float),
    "presence_penalty": (int, float),
    "frequency_penalty": (int, float),
    "reasoning_effort": (str,),
    "include_reasoning": (bool,),
    "enable_thinking": (bool,),
    "chat_template_kwargs": (dict,),
}

#: Games whose observation already shows the history of play (the matrix games' rounds, Hanabi's
#: "My Action History", Guandan's recent plays, CoBlock's <ActionHistory>, Overcooked's mid-level
#: "<My Action History>"): the episodic memory would repeat it, so ``memory="auto"`` lists
#: nothing there (decisions with invalid answers are still listed, with the game's feedback).
HISTORY_IN_OBSERVATION = (
    "RockPaperScissors",
    "BattleOfSexes",
    "PrisonersDilemma",
    "Hanabi",
    "Guandan",
    "CoBlock",
    "Overcooked",
)

#: Every setting a spec may give, with its default (a preset changes the defaults).
DEFAULTS: dict[str, Any] = {
    "strategy": "qa",
    "decoding": "free",
    "invalid": "reprompt",
    "reprompts": 2,
    "fallback": "random",
    "temperature": 0.0,
    "top_p": None,
    "max_tokens": None,
    "extra": None,
    "memory": "auto",
    "history": 0,
    "verify_rounds": 2,
    "top_k": 5,
    "memories": 3,
    "examples": "none",
    "probes": True,
    "probe_batch": True,
    "answer_format": "agent",
    "skip_forced": True,
    "interface": "midlevel",
    "language": "auto",
    "hide_history": False,
    "hide_payoffs": False,
    "step_tokens": None,
    "field_chars": 400,
    "game_args": "preset",
    "grounding": "parser",
    "menu": "auto",
    "reasoning": None,
    "reasoning_effort": None,
    "max_completion_tokens": None,
    "max_reply_bytes": DEFAULT_MAX_REPLY_BYTES,
    "max_retry_after_s": 60.0,
    "deadline_s": None,
}


def bounded(name: str, value: Any, lo: float, hi: float, kind: type = float) -> Any:
    """``value`` as ``kind`` if it is a number in ``[lo, hi]``; else ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number in [{lo}, {hi}], got {value!r}")
    if not lo <= value <= hi:
        raise ValueError(f"{name} must be in [{lo}, {hi}], got {value!r}")
    return kind(value)


def parse_extra(extra: str | Mapping[str, Any] | None) -> dict[str, Any]:
    """Extra request fields from a spec (a JSON object), checked against :data:`EXTRA_FIELDS`.

    Only the listed sampling options are accepted, with scalar values (``chat_template_kwargs``: a
    flat object of scalars); anything else raises ``ValueError`` naming the allowed keys.
    """
    if extra is None or extra == "":
        return {}
    if isinstance(extra, str):
        if len(extra) > 2000:
            raise ValueError("extra must be a JSON object of at most 2000 characters")
        try:
            data = json.loads(extra)
        except json.JSONDecodeError as exc:
            raise ValueError(f"extra must be a JSON object: {exc}") from None
    else:
        data = dict(extra)
    if not isinstance(data, dict):
        raise ValueError("extra must be a JSON object")
    out: dict[str, Any] = {}
    for key, value in data.items():
        allowed = EXTRA_FIELDS.get(key)
        if allowed is None:
            raise ValueError(
                f"extra: field {key!r} is not allowed; allowed: {sorted(EXTRA_FIELDS)}"
            )
        if isinstance(value, bool) and bool not in allowed:
            raise ValueError(f"extra: {key} must be {allowed}, got a bool")
        if not isinstance(value, allowed):
            raise ValueError(f"extra: {key} must be {[t.__name__ for t in allowed]}, got {value!r}")
        flat = isinstance(value, dict) and all(
            isinstance(k, str) and isinstance(v, (bool, int, float, str)) and len(str(v)) < 100
            for k, v in value.items()
        )
        if isinstance(value, dict) and (len(value) > 10 or not flat):
            raise ValueError(f"extra: {key} must be a flat object of at most 10 scalars")
        if isinstance(value, str) and len(value) > 100:
            raise ValueError(f"extra: {key} is too long")
        if isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) > 1e6:
            raise ValueError(f"extra: {key} is out of bounds")
        out[key] = value
    return out


def endpoint_id(url: str | None) -> str:
    """An endpoint's identity: ``scheme://host[:port]/path`` (scheme and host lower-cased, no
    trailing slash), never its user, password, query or fragment, where keys may travel. The
    bundled local server's ``local://<model file>?n_ctx=..&seed=..`` is kept whole (its context
    and seed change answers; it holds no secret)."""
    if not url:
        return ""
    if url.startswith("local://"):
        return url
    parts = urlsplit(url.strip())
    host = (parts.hostname or "").lower()
    if ":" in host:  # IPv6
        host = f"[{host}]"
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        port = ""
    path = parts.path.rstrip("/")
    if not parts.scheme:
        return host + path
    return f"{parts.scheme.lower()}://{host}{port}{path}"


def resolve_settings(s: dict[str, Any]) -> None:
    """Settings given under another name, in place: ``max_completion_tokens=N`` is the budget
    ``max_tokens=N`` sent under that field name (ValueError when both are given and differ)."""
    mct = s.get("max_completion_tokens")
    if mct is None:
        return
    if s.get("max_tokens") is not None and s["max_tokens"] != mct:
        raise ValueError(
            f"max_tokens={s['max_tokens']!r} and max_completion_tokens={mct!r} disagree; give one"
        )
    s["max_tokens"] = mct


class SettingsMixin(AgentState):
    """The settings side of :class:`~tom_llm_agents.agent.LLMAgent`: the check of the resolved
    settings, the decoding mode and the record of every setting (:meth:`config`)."""

    def apply_settings(self, resolved: dict[str, Any]) -> None:
        """Resolve, check and adopt the settings (``DEFAULTS`` < preset < given)."""
        resolve_settings(resolved)
        self._settings = resolved
        self._check(resolved)
        self.decoding = resolved["decoding"]
        self.invalid = resolved["invalid"]
        self.reprompts = int(resolved["reprompts"])
        self.fallback = resolved["fallback"]
        self.temperature = float(resolved["temperature"])
        self.top_p = None if resolved["top_p"] is None else float(resolved["top_p"])
        self.max_tokens = None if resolved["max_tokens"] is None else int(resolved["max_tokens"])
        self.extra = parse_extra(resolved["extra"])
        self.memory_setting = resolved["memory"]
        self.memory_size = 5 if self.memory_setting == "auto" else int(self.memory_setting)
        self.history_size = int(resolved["history"])
        self.verify_rounds = int(resolved["verify_rounds"])
        self.examples_setting = str(resolved["examples"])
        self.probes_enabled = bool(resolved["probes"])
        self.probe_batch = resolved["probe_batch"]
        self.answer_format_setting = resolved["answer_format"]
        self.skip_forced = bool(resolved["skip_forced"])
        self.interface = resolved["interface"]
        self.language = resolved["language"]
        self.hide_history = bool(resolved["hide_history"])
        self.hide_payoffs = bool(resolved["hide_payoffs"])
        self.step_tokens = resolved["step_tokens"]
        self.field_chars = int(resolved["field_chars"])
        self.grounding = resolved["grounding"]
        self.menu = resolved["menu"]

    @staticmethod
    def _check(s: Mapping[str, Any]) -> None:
        """Validate settings (bad input names the argument and what is allowed)."""
        for key, allowed in (
            ("decoding", DECODINGS),
            ("invalid", INVALID_POLICIES),
            ("fallback", ("random", "first", "forfeit")),
            ("interface", INTERFACES),
            ("language", LANGUAGES),
            ("game_args", GAME_ARGS),
            ("grounding", GROUNDINGS),
            ("menu", MENUS),
        ):
            if s[key] not in allowed:
                raise ValueError(f"{key} must be one of {list(allowed)}, got {s[key]!r}")
        if s["answer_format"] not in ("agent", "game"):
            raise ValueError(f"answer_format must be one of ['agent', 'game'], got {s['answer_format']!r}")
        if s["answer_format"] == "game" and s["decoding"] != "free":
            raise ValueError("answer_format='game' (the game's own reply format) needs decoding='free'")
        if s["menu"] in ("none", "tool") and s["decoding"] != "free":
            raise ValueError(f"menu={s['menu']!r} needs decoding='free' (a JSON schema lists the actions)")
        if s["probe_batch"] not in (True, False, "step", "question", "target"):
            raise ValueError(
                "probe_batch must be one of [true, false, 'step', 'question', 'target'], "
                f"got {s['probe_batch']!r}"
            )
        bounded("temperature", s["temperature"], 0.0, 2.0)
        if s["top_p"] is not None:
            bounded("top_p", s["top_p"], 1e-6, 1.0)
        if s["max_tokens"] is not None:
            bounded("max_tokens", s["max_tokens"], 1, 131072, int)
        bounded("reprompts", s["reprompts"], 0, 50, int)
        if s["memory"] != "auto":
            bounded("memory", s["memory"], 0, 1000, int)
        bounded("history", s["history"], 0, 100, int)
        bounded("verify_rounds", s["verify_rounds"], 0, 100, int)
        bounded("top_k", s["top_k"], 0, 1000, int)
        bounded("memories", s["memories"], 1, 100, int)
        bounded("field_chars", s["field_chars"], 16, 100_000, int)
        if s["step_tokens"] is not None:
            bounded("step_tokens", s["step_tokens"], 1, 131072, int)
        if s["max_completion_tokens"] is not None:
            bounded("max_completion_tokens", s["max_completion_tokens"], 1, 131072, int)
        if s["reasoning"] not in (None, True, False):
            raise ValueError(f"reasoning must be true or false, got {s['reasoning']!r}")
        if s["reasoning_effort"] is not None and s["reasoning_effort"] not in REASONING_EFFORTS:
            raise ValueError(
                f"reasoning_effort must be one of {list(REASONING_EFFORTS)}, "
                f"got {s['reasoning_effort']!r}"
            )
        bounded("max_reply_bytes", s["max_reply_bytes"], 1024, 1 << 30, int)
        bounded("max_retry_after_s", s["max_retry_after_s"], 0, 86400)
        if s["deadline_s"] is not None:
            bounded("deadline_s", s["deadline_s"], 0.1, 86400)
        if s["invalid"] == "resample" and s["temperature"] == 0 and s["reasoning"] is not True:
            raise ValueError(
                "invalid=resample at temperature 0 would send the same greedy request again "
                "and pay for the same answer: use invalid=reprompt, or a temperature > 0 (a "
                "reasoning model that samples anyway: reasoning=true)"
            )
        examples_for(str(s["examples"]))  # unknown sets fail here, not mid-episode

    def client_options(self) -> dict[str, Any]:
        """The options of the client the agent builds: the reasoning wire format, the reply cap
        and the total deadline of a call."""
        s = self._settings
        return {
            "max_reply_bytes": int(s["max_reply_bytes"]),
            "deadline_s": s["deadline_s"],
            "reasoning": s["reasoning"],
            "reasoning_effort": s["reasoning_effort"],
            "token_param": "max_completion_tokens" if s["max_completion_tokens"] else None,
        }

    def dry_run(self) -> Any:
        """``with agent.dry_run() as usage:`` the agent plays offline and counts the calls and
        tokens it would send (:func:`tom_llm_agents.cost.dry_run`): the cost estimate that
        commands print before the first paid call."""
        from tom_llm_agents.cost import dry_run

        return dry_run(self)

    @property
    def constrained(self) -> bool:
        """Whether answers are requested under a JSON schema (``decoding="json"``)."""
        return self.decoding == "json"

    # ------------------------------------------------------------------ settings record
    def config(self) -> dict[str, Any]:
        """The agent's resolved settings, for trajectory headers and result keys (no secrets).

        Model, endpoint (its full URL, :func:`endpoint_id`), generation settings and the
        reasoning wire format, decoding mode, invalid-output policy, strategy, preset, prompt
        version, memory, few-shot set, probes, retries, timeout and the reply cap.
        """
        client = self.client
        retry = getattr(client, "retry", None)
        breaker = getattr(client, "breaker", None)
        price = client.prices.get(client.model) if hasattr(client, "prices") else None
        return {
            "kind": "llm",
            "model": client.model,
            "endpoint": endpoint_id(getattr(client, "cache_endpoint", "") or client.endpoint),
            "preset": self.preset,
            "strategy": self.strategy,
            "decider": type(self.decider).__name__,
            "pieces": [type(p).__name__ for p in self.pieces],
            "prompt_version": PROMPT_VERSION,
            "decoding": self.decoding,
            "invalid": self.invalid,
            "reprompts": self.reprompts,
            "fallback": self.fallback,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
            "extra": dict(self.extra),
            "memory": self.memory_setting,
            "history": self.history_size,
            "verify_rounds": self.verify_rounds,
            "examples": self.examples_setting,
            "probes": self.probes_enabled,
            "probe_batch": self.probe_batch,
            "answer_format": self.answer_format_setting,
            "skip_forced": self.skip_forced,
            "interface": self.interface,
            "language": self.language,
            "hide_history": self.hide_history,
            "hide_payoffs": self.hide_payoffs,
            "step_tokens": self.step_tokens,
            "field_chars": self.field_chars,
            "game_args": self._settings["game_args"],
            "grounding": self._settings["grounding"],
            "menu": self.menu,
            "top_k": self._settings["top_k"],
            "memories": self._settings["memories"],
            "oracle_partner": self.oracle_partner,
            "prices": list(price) if price is not None else None,
            "timeout_s": getattr(client, "timeout", None),
            "max_retries": getattr(retry, "max_retries", None),
            "retry_delay_s": getattr(retry, "base_delay_s", None),
            "breaker": getattr(breaker, "threshold", None),
            "reasoning": getattr(client, "reasoning", None),
            "reasoning_effort": getattr(client, "reasoning_effort", None),
            "token_param": getattr(client, "token_param", None),
            "max_reply_bytes": getattr(client, "max_reply_bytes", None),
            "max_retry_after_s": getattr(retry, "max_retry_after_s", None),
            "deadline_s": getattr(client, "deadline_s", None),
        }
