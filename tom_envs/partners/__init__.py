"""Partners that test functional and literal ToM in every game.

* :mod:`tom_envs.partners.switching`: a partner that plays A, then B from a seeded point
  (``switch:a=A:b=B:at=LO-HI:key=K``), invisible to the other seats.
* :mod:`tom_envs.partners.prediction`: the open next-action probe any acting agent may answer,
  its scores and the shortcut predictors printed beside them.
* :mod:`tom_envs.partners.regret`: regret against a reference per episode, per step and per
  window after a switch, the time to recover, and the known-groups order check.
"""
