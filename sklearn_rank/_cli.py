"""The ``sklearn-rank`` command line (also ``python -m sklearn_rank``)."""

from __future__ import annotations

import argparse
import sys

from . import __version__, _evaluate_cmd, _tune


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sklearn-rank",
        description="Tune and judge ranking models with scikit-learn.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND")
    _tune.add_parser(subparsers)
    _evaluate_cmd.add_parser(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 0
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
