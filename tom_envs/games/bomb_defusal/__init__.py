"""Bomb-defusal search & rescue with chat and Theory-of-Mind probes (paper 000); see ``env.py``."""
