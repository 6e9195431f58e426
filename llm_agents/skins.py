"""The episode's skin (``skin=``, :mod:`tom_envs.core.skin`) on the agent's side.

What an agent renders itself (few-shot examples, paper 000's belief state drawn from the view)
must use the names the game shows it, never the canonical ones. :func:`episode_skin` rebuilds the
episode's :class:`~tom_envs.core.skin.Skin` from what the agent is told at reset (the env id and
the resolved game arguments, which record a non-canonical skin).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from tom_envs.core.skin import CANONICAL, Skin, SkinnedText, parse_skin


def episode_skin(info: Any) -> Skin | None:
    """The skin of the episode ``info`` describes (an
    :class:`~tom_envs.core.agents.EpisodeInfo`), or ``None`` for the canonical text.

    The tables are those of the episode's game arguments (its colours, names, map); arguments
    that cannot be given back to the game (an injected object) leave it with its defaults.
    """
    kwargs = dict(getattr(info, "env_kwargs", None) or {})
    key = parse_skin(kwargs.get("skin", CANONICAL))
    if key == CANONICAL:
        return None
    from tom_envs.registration import game_spec

    spec = game_spec(str(info.env_id))
    module = spec.load()
    declared = {p.name for p in module.PARAMS}
    given = {k: v for k, v in kwargs.items() if k in declared and k not in spec.fixed}
    try:
        bundle = module.make_bundle(**{**spec.kwargs, **given}, skin=key)
    except (TypeError, ValueError):  # e.g. a resolved object argument: the game's defaults
        bundle = module.make_bundle(**spec.kwargs, skin=key)
    text = bundle.text
    assert isinstance(text, SkinnedText)
    return text.skin


def skinned_examples(examples: tuple[Any, ...], skin: Skin | None) -> tuple[Any, ...]:
    """Few-shot examples (:class:`~tom_llm_agents.fewshot.Example`) in the skin's names."""
    if skin is None:
        return examples
    r = skin.render
    return tuple(
        dataclasses.replace(
            e,
            situation=r(e.situation),
            reasoning=r(e.reasoning),
            action=r(e.action),
            steps=tuple((k, r(v)) for k, v in e.steps),
        )
        for e in examples
    )
