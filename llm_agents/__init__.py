"""LLM agents over the suite's text layer (``Turn.text()`` / ``Turn.parse()``).

The OpenAI-compatible client and the papers' prompting strategies are tracked in their own issue;
this package exists so the distribution's layout is stable. Nothing here is a stub posing as an
agent: the text interface every LLM agent needs is ``tom_envs.core.game.TextInterface``.
"""
