"""Baselines that play through the suite's API: RMax (tabular) now; MAPPO/PPO and CBS to come."""
