"""Results tables: each module defines one ``TABLE`` (:class:`tables.PaperTable`) that an eval
config names and ``tom-envs reproduce NAME`` writes as a docs/results page: the papers' tables
(paper000-004) and the games' bot tables (hanabi, overcooked). Parity and speed are
``benchmarks/<game>.py``."""
