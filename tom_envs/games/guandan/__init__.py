"""Guandan (掼蛋), the four-player team card game of paper 001; see ``env.py``."""
