"""Iterated matrix games (RPS, Battle of the Sexes, Prisoner's Dilemma); see ``env.py``."""
