"""The ``sklearn-rank`` command line (also ``python -m sklearn_rank``).

Every command runs through :func:`main`, the one place that turns an expected
error into one line on stderr and exit status 2 (see :data:`EPILOG`). Commands
name the option an error belongs to with :func:`option`; anything else that
escapes (an ``AssertionError``, ``KeyError``, ``IndexError``,
``AttributeError``, ``RecursionError``, ...) is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import sys

from .. import __version__
from ._support import (
    EPILOG,
    CommandError,
    is_expected,
    message_of,
    say,
    shown,
    silence_stdout,
    write,
)

__all__ = ["build_parser", "main"]


def _line(command: str, error: CommandError) -> str:
    """``sklearn-rank COMMAND: error: OPTION VALUE: message``."""
    message = str(error)
    named = [typed if value is None or (isinstance(value, str) and len(value) > 2 and (
        value in message or shown(value) in message))  # not named twice
             else f"{typed} {shown(value)}" for typed, value in error.options]
    prefix = ", ".join(named) + ": " if named else ""
    return f"{error.prog or 'sklearn-rank ' + command}: error: {prefix}{message}"


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``sklearn-rank tune: error: ... (see --help)``."""

    def error(self, message):
        raise CommandError(" ".join(f"{message} (see '{self.prog} --help')".split()),
                           prog=self.prog)

    def _print_message(self, message, file=None):
        # argparse drops an OSError writing --help or --version; a closed pipe
        # ends the command as everywhere else (status 141)
        if message and (file is None or file is sys.stdout):
            write(message)
        else:
            super()._print_message(message, file)


def build_parser() -> argparse.ArgumentParser:
    from . import _evaluate as _evaluate_cmd
    from . import _recs as _recs_cmd
    from . import _trec_eval as _trec_eval_cmd
    from . import _tune

    parser = _Parser(
        prog="sklearn-rank",
        description="Tune and judge ranking models with scikit-learn.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND")
    _tune.add_parser(subparsers)
    _evaluate_cmd.add_parser(subparsers)
    _trec_eval_cmd.add_parser(subparsers)
    _recs_cmd.add_parser(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run ``sklearn-rank`` with ``argv`` (default: ``sys.argv[1:]``); the exit status."""
    command = "COMMAND"
    try:
        try:
            argv = sys.argv[1:] if argv is None else list(argv)
            if argv[:1] == ["trec_eval"]:  # trec_eval's own getopt grammar
                from ._trec_eval import run_argv

                command = "trec_eval"
                status = run_argv(argv[1:])
                if sys.stdout is not None:
                    sys.stdout.flush()
                return status
            parser = build_parser()
            args = parser.parse_args(argv)
            command = getattr(args, "command", command)
            if getattr(args, "func", None) is None:
                parser.print_help()
                status = 0
            else:
                status = args.func(args)
        except SystemExit as exit_:  # --help, --version
            status = exit_.code if isinstance(exit_.code, int) else int(exit_.code is not None)
        if sys.stdout is not None:
            sys.stdout.flush()  # a closed pipe shows here, while it can still be handled
        return status
    except BrokenPipeError:
        silence_stdout()
        return 141
    except KeyboardInterrupt:
        return 130
    except CommandError as error:
        say(_line(command, error))
    except Exception as exc:
        if not is_expected(exc):
            raise
        say(_line(command, CommandError(message_of(exc))))
    return 2
