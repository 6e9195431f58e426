"""The LLM agent's settings: what a spec may give, the defaults and checks, and their record.

:data:`DEFAULTS` lists every setting an agent spec may give (a preset of
:mod:`tom_llm_agents.presets` changes the defaults), with the values allowed (:data:`DECODINGS`,
:data:`INVALID_POLICIES`, :data:`INTERFACES`, :data:`LANGUAGES`) and the extra request fields
(:data:`EXTRA_FIELDS`, read by :func:`parse_extra`). :class:`SettingsMixin` gives
:class:`~tom_llm_agents.agent.LLMAgent` the check of its resolved settings and their record,
:meth:`~SettingsMixin.config`, which names the endpoint's host only (:func:`endpoint_host`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from tom_llm_agents.fewshot import examples_for

#: Bumped when the agent's prompts change in a way that changes results (recorded in config()).
PROMPT_VERSION = 3

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
#: observation lists them) or never (``"none"``: the game's rules and text alone).
MENUS = ("auto", "none")

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


def endpoint_host(url: str | None) -> str:
    """``scheme://host[:port]`` of an endpoint (no path, query, user or password)."""
    if not url:
        return ""
    if url.startswith("local://"):
        return url.split("?")[0]
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}" if parts.scheme else host


class SettingsMixin:
    """The settings side of :class:`~tom_llm_agents.agent.LLMAgent`: the check of the resolved
    settings, the decoding mode and the record of every setting (:meth:`config`)."""

    @staticmethod
    def _check(s: Mapping[str, Any]) -> None:
        """Validate settings (bad input names the argument and what is allowed)."""
        for key, allowed in (
            ("decoding", DECODINGS),
            ("invalid", INVALID_POLICIES),
            ("fallback", ("random", "first")),
            ("interface", INTERFACES),
            ("language", LANGUAGES),
            ("game_args", GAME_ARGS),
            ("grounding", GROUNDINGS),
            ("menu", MENUS),
        ):
            if s[key] not in allowed:
                raise ValueError(f"{key} must be one of {list(allowed)}, got {s[key]!r}")
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
        examples_for(str(s["examples"]))  # unknown sets fail here, not mid-episode

    @property
    def constrained(self) -> bool:
        """Whether answers are requested under a JSON schema (``decoding="json"``)."""
        return self.decoding == "json"

    # ------------------------------------------------------------------ settings record
    def config(self) -> dict[str, Any]:
        """The agent's resolved settings, for trajectory headers and result keys (no secrets).

        Model, endpoint host, generation settings, decoding mode, invalid-output policy,
        strategy, preset, prompt version, memory, few-shot set, probes, retries and timeout.
        """
        client = self.client
        retry = getattr(client, "retry", None)
        breaker = getattr(client, "breaker", None)
        price = client.prices.get(client.model) if hasattr(client, "prices") else None
        return {
            "kind": "llm",
            "model": client.model,
            "endpoint": endpoint_host(getattr(client, "cache_endpoint", "") or client.endpoint),
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
        }
