"""Hanabi, 2-5 players, on DeepMind HLE's exact rules, with card-knowledge ToM probes; see ``env.py``."""
