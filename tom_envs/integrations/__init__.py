"""Adapters for RL libraries that need more than the PettingZoo and Gymnasium APIs.

* :mod:`tom_envs.integrations.rllib`: every game as an RLlib ``MultiAgentEnv`` and a masked PPO
  config (the ``rllib`` extra).
* :mod:`tom_envs.integrations.sb3`: a batched engine as a stable-baselines3 ``VecEnv``
  (``BatchedVecEnv``: PPO / MaskablePPO collect from numpy arrays; the ``rl`` extra, imported
  with the module).

Each adapter imports its library only when used.
"""
