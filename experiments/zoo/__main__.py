"""``python -m tom_experiments.zoo ...``: the same as ``tom-envs zoo ...``."""

from __future__ import annotations

import argparse
import sys

from tom_experiments.zoo.cli import command


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` and run the zoo command."""
    parser = argparse.ArgumentParser(prog="python -m tom_experiments.zoo",
                                     description=(command.__doc__ or "").split("\n")[0])
    run = command(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
