"""Adapters for RL libraries that need more than the PettingZoo and Gymnasium APIs.

* :mod:`tom_envs.integrations.rllib`: every game as an RLlib ``MultiAgentEnv`` and a masked PPO
  config (the ``rllib`` extra).

Each adapter imports its library only when used.
"""
