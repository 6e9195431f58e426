"""CoordinationQA, generated: EC / ToM / JP multiple-choice suites over real game states."""

from tom_envs.qa.items import (
    LETTERS,
    SOURCES,
    TYPES,
    QAItem,
    Scenario,
    arrange,
    parse_answer,
    read_suite,
    replay,
    write_suite,
)

__all__ = [
    "LETTERS",
    "SOURCES",
    "TYPES",
    "QAItem",
    "Scenario",
    "arrange",
    "parse_answer",
    "read_suite",
    "replay",
    "write_suite",
]
