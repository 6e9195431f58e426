"""Human studies that a lab can run: ``tom-envs study validate | links | serve | status | export``.

A study is a file (:mod:`~tom_envs.serve.study.spec`: games, partner conditions, assignment,
consent, instructions, practice rounds, surveys, attention checks, completion code), checked in
full against the operator's presets (:mod:`~tom_envs.serve.study.check`) and planned per
participant (:mod:`~tom_envs.serve.study.design`). The server
(:mod:`~tom_envs.serve.study.server`) journals every event before acknowledging it
(:mod:`~tom_envs.serve.study.journal`), rebuilds its state from the journal after a restart
(:mod:`~tom_envs.serve.study.state`), matches people into games, and serves each participant's
pages (:mod:`~tom_envs.serve.study.flow`, :mod:`~tom_envs.serve.study.routes`). The export
(:mod:`~tom_envs.serve.study.export`) writes a versioned dataset with its card, and checks every
trajectory against the current engine. ``docs/study.md`` is the operator's guide.
"""
