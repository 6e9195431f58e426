"""What an answer becomes: the invalid-answer policy and its judge, shared by every text wrapper.

An answer is read by the game's own parser (``env.parse_action(agent, text)``, the public parse
API). A valid answer plays the action it names. An invalid one (unparseable, illegal, not text,
or longer than ``max_answer_chars``, which is refused unread) follows the user's
:class:`InvalidAnswerPolicy`:

* ``"reask"`` (default): the same seat is asked again; its next observation is its prompt with
  the parser's feedback appended (``feedback_template``). Nothing happens in the game. After
  ``max_reasks`` re-asks of one decision, the next invalid answer forfeits (below).
* ``"forfeit"``: the seat's move is a *fallback*, recorded as one (``"fallback": True``,
  ``"failure": "unparseable"``, never as the seat's own choice): a legal action
  drawn from the episode's fallback generator (``fallback="random"``: the suite's seeded
  :func:`tom_envs.driver.fallback_rng`, so the same seed gives the same fallbacks) or the first
  legal action (``fallback="first"``).
* ``"terminate"``: the episode ends there (``terminated`` for every seat), as PettingZoo's
  ``TerminateIllegalWrapper`` ends it; nothing is played for the answer.

``invalid_reward`` is the reward of each invalid answer to the seat that gave it: by default
-1 under ``"terminate"`` (PettingZoo's convention and the registered Gymnasium ids') and 0
otherwise, so the game's returns are untouched unless the user asks for a penalty.

The policy is recorded: in every info (``info["invalid_policy"]``) and in the episode record
(:meth:`AnswerJudge.record`: the policy, every answer with its outcome, the counts per seat).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any, NamedTuple

import numpy as np

from tom_envs.core.game import ParseResult, TextObservation
from tom_envs.driver import fallback_rng
from tom_envs.wrappers.spaces import MAX_ANSWER_CHARS

#: The values of ``on_invalid``.
ON_INVALID = ("reask", "forfeit", "terminate")
#: The values of ``fallback``.
FALLBACKS = ("random", "first")
#: What follows the prompt when a seat is asked again (``{feedback}``: the parser's sentence).
FEEDBACK_TEMPLATE = "Your previous answer could not be used: {feedback}\nAnswer again."
#: The outcomes of an answer.
OUTCOMES = ("played", "reask", "fallback", "terminate")
#: ``action`` and ``played`` of an answer record when there is none (an int, as the record's
#: types never change).
NO_ACTION = -1


def _allowed(name: str, value: object, allowed: Sequence[str]) -> None:
    if value not in allowed:
        raise ValueError(
            f"argument {name!r}: got {value!r}; allowed: " + ", ".join(repr(a) for a in allowed)
        )


@dataclass(frozen=True)
class InvalidAnswerPolicy:
    """What an invalid answer does (see the module docstring); frozen, recorded with every info.

    Attributes:
        on_invalid: ``"reask"``, ``"forfeit"`` or ``"terminate"``.
        max_reasks: re-asks of one decision under ``"reask"`` before the answer forfeits
            (0 to 100).
        fallback: the forfeited move: ``"random"`` (seeded by the episode) or ``"first"``.
        invalid_reward: the reward of an invalid answer (``None``: -1 under ``"terminate"``,
            else 0); a finite number.
        max_answer_chars: longer answers are invalid and not parsed (1 to 10,000,000).
        feedback_template: what follows a re-asked seat's prompt; holds ``{feedback}``.
    """

    on_invalid: str = "reask"
    max_reasks: int = 2
    fallback: str = "random"
    invalid_reward: float | None = None
    max_answer_chars: int = MAX_ANSWER_CHARS
    feedback_template: str = FEEDBACK_TEMPLATE

    def __post_init__(self) -> None:
        _allowed("on_invalid", self.on_invalid, ON_INVALID)
        _allowed("fallback", self.fallback, FALLBACKS)
        for name, low, high in (("max_reasks", 0, 100), ("max_answer_chars", 1, 10_000_000)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ValueError(
                    f"argument {name!r}: got {value!r}; allowed: an integer in [{low}, {high}]"
                )
        reward = self.invalid_reward
        if reward is not None and (
            isinstance(reward, bool)
            or not isinstance(reward, (int, float))
            or not math.isfinite(reward)
        ):
            raise ValueError(
                f"argument 'invalid_reward': got {reward!r}; allowed: None or a finite number"
            )
        template = self.feedback_template
        try:
            ok = isinstance(template, str) and template.format(feedback="") != template
        except (KeyError, IndexError, ValueError):
            ok = False
        if not ok:
            raise ValueError(
                f"argument 'feedback_template': got {template!r}; allowed: a format string with "
                "the one field '{feedback}'"
            )

    @property
    def reward(self) -> float:
        """The reward of one invalid answer (``invalid_reward`` resolved)."""
        if self.invalid_reward is not None:
            return float(self.invalid_reward)
        return -1.0 if self.on_invalid == "terminate" else 0.0

    def as_dict(self) -> dict[str, Any]:
        """The policy as plain data (what the episode record stores)."""
        out = asdict(self)
        out["invalid_reward"] = self.reward
        return out


#: The wrappers' keyword arguments that set the policy: the fields of :class:`InvalidAnswerPolicy`.
POLICY_ARGS = tuple(f.name for f in fields(InvalidAnswerPolicy))


def policy_from(
    on_invalid: str | InvalidAnswerPolicy = "reask", **args: Any
) -> InvalidAnswerPolicy:
    """The wrappers' policy arguments as a policy: ``on_invalid`` (a name, or a whole policy) and
    the other fields of :class:`InvalidAnswerPolicy` as keywords (checked there).

    Raises:
        TypeError: a keyword that is not a policy field.
        ValueError: a bad value, or other policy keywords beside a whole policy.
    """
    unknown = sorted(set(args) - set(POLICY_ARGS))
    if unknown:
        raise TypeError(
            f"unknown argument(s) {unknown}; the invalid-answer policy takes {list(POLICY_ARGS)}"
        )
    if isinstance(on_invalid, InvalidAnswerPolicy):
        if args:
            raise ValueError(
                f"argument 'on_invalid': a whole InvalidAnswerPolicy was given, so {sorted(args)} "
                "must be set in it"
            )
        return on_invalid
    return InvalidAnswerPolicy(on_invalid, **args)


def split_policy_args(kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``kwargs`` split into the policy's (:data:`POLICY_ARGS`) and the rest."""
    policy = {k: v for k, v in kwargs.items() if k in POLICY_ARGS}
    return policy, {k: v for k, v in kwargs.items() if k not in POLICY_ARGS}


def suite_env(env: object, base: type, raw: type, made_by: str) -> Any:
    """``env.unwrapped`` when ``env`` is a ``base`` whose unwrapped env is one of the suite's
    (``raw``); otherwise a ``TypeError`` naming the argument and how such an env is made."""
    inner = getattr(env, "unwrapped", None)
    if not isinstance(env, base) or not isinstance(inner, raw):
        raise TypeError(
            f"argument 'env': expected a tom_envs {raw.__name__} ({made_by}), "
            f"got {type(env).__name__}"
        )
    return inner


class MaskCache:
    """Action masks of legal-action sets: one array per distinct set, copied out."""

    def __init__(self, num_actions: int) -> None:
        self.num_actions = num_actions
        self._masks: dict[tuple[int, ...], np.ndarray] = {}

    def __call__(self, legal: Iterable[int] = ()) -> np.ndarray:
        key = tuple(legal)
        mask = self._masks.get(key)
        if mask is None:
            mask = np.zeros(self.num_actions, dtype=np.int8)
            if key:
                mask[list(key)] = 1
            if len(self._masks) < 4096:
                self._masks[key] = mask
        return mask.copy()


def prompt_text(tobs: TextObservation, feedback: str | None, template: str) -> str:
    """A seat's observation: its prompt, and the feedback on its last answer when re-asked."""
    text = tobs.prompt()
    if feedback is not None:
        text = f"{text}\n\n{template.format(feedback=feedback)}"
    return text


def seat_info(
    mask: np.ndarray,
    tobs: TextObservation | None,
    answer: dict[str, Any] | None,
    policy: InvalidAnswerPolicy,
) -> dict[str, Any]:
    """One seat's info: its action mask (zeros unless it must answer now), its text observation
    (``None`` unless it must answer), the record of its last answer (no ``"answer"`` key before
    its first) and the policy."""
    info = {"action_mask": mask, "text_observation": tobs, "invalid_policy": policy}
    if answer is not None:
        info["answer"] = answer
    return info


class AnswerJudge:
    """Judges each seat's answers under a policy and keeps the episode's record of them."""

    def __init__(self, policy: InvalidAnswerPolicy, agents: Sequence[str]) -> None:
        self.policy = policy
        self.agents = list(agents)
        self.rng: np.random.Generator | None = None
        self.reset(None)

    def reset(self, seed: int | None) -> None:
        """A new episode: counts and record cleared; the fallback generator is seeded from
        ``seed`` (``None``: the previous episode's generator continues, as the env's does)."""
        if seed is not None or self.rng is None:
            self.rng = fallback_rng(seed)
        self.seed = seed
        self.attempts = dict.fromkeys(self.agents, 0)
        self.feedback: dict[str, str] = {}
        self.answers: list[dict[str, Any]] = []
        self.counts = {
            a: {"answers": 0, "invalid": 0, "reasks": 0, "fallbacks": 0, "unread": 0}
            for a in self.agents
        }
        self.terminated_by: str | None = None

    def judge(
        self,
        agent: str,
        answer: object,
        parse: Callable[[object], ParseResult],
        legal: Callable[[], Sequence[int]],
        action_text: Callable[[int], str],
    ) -> dict[str, Any]:
        """Read ``agent``'s ``answer`` and decide its outcome; returns its record.

        ``parse`` is the game's parser for this seat now, ``legal()`` the seat's legal actions
        (read only for a fallback), ``action_text(a)`` an action's text. The record's keys and
        types never change (so Gymnasium's vector envs can batch the infos that hold it):
        ``agent``; ``answer`` (the text; ``""`` when the answer was not text); ``valid``; the
        parser's ``feedback``; the parsed ``action`` (:data:`NO_ACTION` when invalid);
        ``attempt`` (1 for a decision's first answer); ``outcome`` (:data:`OUTCOMES`); the action
        ``played`` and its ``played_text`` (:data:`NO_ACTION` and ``""`` under ``"reask"`` and
        ``"terminate"``); ``fallback`` (True when ``played`` is a fallback, not the seat's choice)
        and the ``failure`` kind (``"unparseable"`` then, else ``""``); the chat ``message`` the
        parser read (``""`` if none) and ``message_error`` (why the game refused it, else ``""``).
        """
        policy = self.policy
        if isinstance(answer, str) and len(answer) > policy.max_answer_chars:
            result = ParseResult(
                None,
                f"the answer has {len(answer)} characters, more than the "
                f"{policy.max_answer_chars} read; answer with one legal action",
            )
        else:
            result = parse(answer)
        counts = self.counts[agent]
        counts["answers"] += 1
        attempt = self.attempts[agent] + 1
        fallback = False
        if result.action is not None:
            outcome, played = "played", int(result.action)
        else:
            counts["invalid"] += 1
            if policy.on_invalid == "terminate":
                outcome, played = "terminate", NO_ACTION
                self.terminated_by = self.terminated_by or agent
            elif policy.on_invalid == "reask" and attempt <= policy.max_reasks:
                outcome, played = "reask", NO_ACTION
                counts["reasks"] += 1
            else:
                outcome, played, fallback = "fallback", self._fallback(legal()), True
                counts["fallbacks"] += 1
        record: dict[str, Any] = {
            "agent": agent,
            "answer": answer if isinstance(answer, str) else "",
            "valid": result.action is not None,
            "feedback": result.feedback,
            "action": NO_ACTION if result.action is None else int(result.action),
            "attempt": attempt,
            "outcome": outcome,
            "played": played,
            "played_text": "" if played == NO_ACTION else action_text(played),
            "fallback": fallback,
            "failure": "unparseable" if fallback else "",
            "message": result.message or "",
            "message_error": "",
        }
        if outcome == "reask":
            self.attempts[agent] = attempt
            self.feedback[agent] = result.feedback
        else:
            self.attempts[agent] = 0
            self.feedback.pop(agent, None)
        self.answers.append(record)  # the info's record too: :meth:`record` copies it out
        return record

    def _fallback(self, legal: Sequence[int]) -> int:
        if not legal:
            raise RuntimeError("a fallback was needed but no action is legal")
        if self.policy.fallback == "first":
            return int(legal[0])
        assert self.rng is not None
        return int(legal[int(self.rng.integers(len(legal)))])

    def record(self, **header: Any) -> dict[str, Any]:
        """The episode's answers as plain data: ``header`` (the env's id, arguments...), the
        seed, the policy, every answer in order, the counts per seat (answers read, invalid,
        re-asks, fallbacks, and answers not read: a Parallel seat's while its earlier answer is
        held) and who ended it."""
        return {
            **header,
            "seed": self.seed,
            "invalid_policy": self.policy.as_dict(),
            "answers": [dict(r) for r in self.answers],
            "counts": {a: dict(c) for a, c in self.counts.items()},
            "terminated_by": self.terminated_by,
        }


class AnswerTools(NamedTuple):
    """What every text wrapper builds over the suite's env (:func:`answer_tools`)."""

    #: the suite's env under every wrapper (the AEC or Parallel env, or the single-agent view)
    env: Any
    policy: InvalidAnswerPolicy
    #: the action masks of legal-action sets
    masks: MaskCache
    #: the judge of the seats' answers
    judge: AnswerJudge


def answer_tools(
    env: object,
    base: type,
    raw: type,
    made_by: str,
    on_invalid: str | InvalidAnswerPolicy,
    policy: Mapping[str, Any],
    seats: Callable[[Any], tuple[Any, Sequence[str]]] | None = None,
) -> AnswerTools:
    """A text wrapper's pieces: the suite env under ``env`` (:func:`suite_env`), the policy of
    ``on_invalid`` and ``policy`` (:func:`policy_from`), and a mask cache and a judge over the
    game's actions and seats: ``seats(env)`` gives the game and the seats that answer (default:
    the env's ``game`` and every one of its ``possible_agents``)."""
    inner = suite_env(env, base, raw, made_by)
    game, agents = (inner.game, inner.possible_agents) if seats is None else seats(inner)
    judged = policy_from(on_invalid, **policy)
    return AnswerTools(
        inner, judged, MaskCache(game.num_actions), AnswerJudge(judged, list(agents))
    )


def legal_texts_of(tobs: TextObservation | None) -> Mapping[int, str] | None:
    """The legal actions' texts of a seat that must answer (``None`` otherwise)."""
    return None if tobs is None else tobs.legal_actions


__all__ = [
    "FALLBACKS",
    "FEEDBACK_TEMPLATE",
    "ON_INVALID",
    "OUTCOMES",
    "POLICY_ARGS",
    "AnswerJudge",
    "InvalidAnswerPolicy",
    "MaskCache",
    "legal_texts_of",
    "policy_from",
    "prompt_text",
    "seat_info",
    "split_policy_args",
    "suite_env",
]
