"""Overcooked (paper 002; overcooked-ai 1.1.0 rules): see ``env.py``."""
