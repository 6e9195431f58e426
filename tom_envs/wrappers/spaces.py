"""The text spaces of the natural-language wrappers: observations and answers of any Unicode text.

Gymnasium's :class:`~gymnasium.spaces.Text` holds strings over a fixed character set (by default
ASCII letters and digits). A seat's prompt holds newlines, punctuation, Chinese (Guandan's
``language="zh"``) and whatever a partner wrote in chat, and a model's answer holds anything, so
both spaces here are ``Text`` subclasses whose :meth:`contains` accepts every string within the
length bounds. Sampling keeps ``Text``'s alphabet, except where noted.

* :class:`TextSpace`: a seat's observation. ``sample()`` draws a short random string (at most
  :data:`SAMPLE_CHARS` characters), never a megabyte of noise.
* :class:`AnswerSpace`: a seat's answer. Like :class:`~tom_envs.core.aec.LegalDiscrete`, its
  unmasked ``sample()`` is the text of an action that is legal now (PettingZoo's
  ``parallel_api_test`` and Gymnasium's ``check_env`` step unmasked samples), and
  ``sample(action_mask)`` (an int8 array over the game's actions, as PettingZoo's ``api_test`` and
  ``seed_test`` pass ``info["action_mask"]``) is the text of a legal action drawn from the mask.
  ``sample((length, charset_mask))`` is Gymnasium's.
* :class:`TextObs`: the ``str`` the PettingZoo wrappers return. It adds one class attribute,
  ``dtype`` (the space's), which PettingZoo's ``api_test`` reads from every observation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, cast

import numpy as np
from gymnasium import spaces

if TYPE_CHECKING:
    from tom_envs.wrappers.answers import AnswerJudge, InvalidAnswerPolicy, MaskCache

#: The longest observation a :class:`TextSpace` holds by default (characters). The longest
#: prompts of the registered games are about 16,000 characters (100 rounds of a matrix game);
#: the games' own argument bounds (10,000 rounds at most) keep every prompt far below this.
MAX_OBSERVATION_CHARS = 2**24
#: The longest answer read by default (characters); a longer one is an invalid answer, unread.
MAX_ANSWER_CHARS = 100_000
#: The longest string :meth:`TextSpace.sample` draws when no length is given.
SAMPLE_CHARS = 64


class TextObs(str):
    """A text observation: a ``str`` in every respect, plus the ``dtype`` PettingZoo's ``api_test``
    compares with the observation space's (it reads ``observation.dtype``)."""

    __slots__ = ()
    dtype = np.dtype(str)


class TextSpace(spaces.Text):
    """Strings of ``min_length`` to ``max_length`` characters, any Unicode (see the module)."""

    def __init__(
        self,
        max_length: int = MAX_OBSERVATION_CHARS,
        *,
        min_length: int = 1,
        seed: int | np.random.Generator | None = None,
    ) -> None:
        super().__init__(max_length, min_length=min_length, seed=seed)

    def contains(self, x: Any) -> bool:
        """A string within the length bounds (every character allowed)."""
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        """Gymnasium's sample, at most :data:`SAMPLE_CHARS` long unless a length is given."""
        if mask is None and probability is None:
            high = max(self.min_length, min(self.max_length, SAMPLE_CHARS))
            length = int(self.np_random.integers(self.min_length, high + 1))
            return super().sample(mask=(length, None))
        return super().sample(mask=mask, probability=probability)

    @property
    def is_np_flattenable(self) -> bool:
        """No: the characters are not drawn from a fixed alphabet."""
        return False

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.min_length}, {self.max_length}, charset=any)"


LegalTexts = Callable[[], "Mapping[int, str] | None"]


class AnswerSpace(TextSpace):
    """A seat's answer: any text up to ``max_length`` characters (the empty answer included).

    ``legal_texts()`` gives the seat's legal actions as text now (``None`` when it has none to
    choose): the unmasked sample and the action-mask sample read it (see the module docstring).
    Pickled or copied, the space forgets it and samples as :class:`TextSpace` does.
    """

    def __init__(
        self,
        max_length: int = MAX_ANSWER_CHARS,
        legal_texts: LegalTexts | None = None,
        *,
        seed: int | np.random.Generator | None = None,
    ) -> None:
        super().__init__(max_length, min_length=0, seed=seed)
        self._legal_texts = legal_texts

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        """The text of a legal action (from the env, or from an action mask), else Gymnasium's."""
        legal = self._legal_texts() if self._legal_texts is not None else None
        if probability is None and legal and (mask is None or isinstance(mask, np.ndarray)):
            keys = list(legal)
            if mask is not None:
                marked = set(np.flatnonzero(mask).tolist())
                keys = [a for a in keys if a in marked]
            if keys:
                return legal[keys[int(self.np_random.integers(len(keys)))]]
        if isinstance(mask, np.ndarray):
            mask = None  # an action mask with nothing legal now: a random string
        return super().sample(mask=mask, probability=probability)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_legal_texts"] = None
        return state


__all__ = [
    "MAX_ANSWER_CHARS",
    "MAX_OBSERVATION_CHARS",
    "SAMPLE_CHARS",
    "AnswerSpace",
    "TextObs",
    "TextSpace",
]


class TextSpaces:
    """The per-seat spaces of the text wrappers (AEC and Parallel): the seat's prompt, any text
    (:class:`TextSpace`), and its answer, any text up to ``max_answer_chars`` whose unmasked
    sample is the text of a legal action (:class:`AnswerSpace`)."""

    _obs_spaces: dict[str, TextSpace]
    _act_spaces: dict[str, AnswerSpace]
    _raw: Any
    policy: InvalidAnswerPolicy
    _masks: MaskCache
    _judge: AnswerJudge

    #: the env class a wrapper takes, the suite's env class under it, and how that one is made
    wraps: ClassVar[tuple[type, type, str]]

    def __init__(
        self,
        env: Any,
        *,
        on_invalid: str | InvalidAnswerPolicy = "reask",
        **policy: Any,
    ) -> None:
        """Check ``env`` (see :attr:`wraps`) and the invalid-answer policy
        (:func:`~tom_envs.wrappers.answers.answer_tools`), wrap ``env`` (the PettingZoo wrapper
        after this class in the bases), keep the tools (the suite env as ``_raw``) and build every
        seat's spaces (:meth:`_sampler`: its answer space's sampler), then the wrapper's own state
        (:meth:`_setup`)."""
        from tom_envs.wrappers.answers import answer_tools  # that module imports this one

        tools = answer_tools(env, *self.wraps, on_invalid, policy)
        cast(Any, super()).__init__(env)
        self._raw = tools.env
        self.policy, self._masks, self._judge = tools.policy, tools.masks, tools.judge
        agents = list(tools.env.possible_agents)
        self._obs_spaces = {a: TextSpace() for a in agents}
        chars = tools.policy.max_answer_chars
        self._act_spaces = {a: AnswerSpace(chars, self._sampler(a)) for a in agents}
        self._setup()

    def _sampler(self, agent: str) -> Callable[[], Mapping[int, str] | None]:
        """The legal actions' texts of ``agent`` when it must answer (``None`` otherwise), without
        keeping the wrapper alive."""
        raise NotImplementedError

    def _setup(self) -> None:
        """The wrapper's own state, once the tools and spaces are kept."""

    def observation_space(self, agent: str) -> TextSpace:
        """The seat's prompt: any text."""
        return self._obs_spaces[agent]

    def action_space(self, agent: str) -> AnswerSpace:
        """The seat's answer: any text up to ``max_answer_chars``; an unmasked sample is the text
        of a legal action."""
        return self._act_spaces[agent]
