"""What every ``sklearn-rank`` command shares: the one-line errors, argument
types that say what they expect, and writing to a stdout that may close.

Commands name the option an error belongs to with :func:`option`;
:func:`sklearn_rank.cli._app.main` turns a :class:`CommandError` (or any expected
error, :data:`EXPECTED`) into one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import math
import os
import sys
import zlib

__all__ = ["EPILOG", "EXPECTED", "STDIN", "Append", "CommandError", "check_stdin", "integer",
           "is_expected", "message_of", "option", "real", "say", "shown", "silence_stdout",
           "source", "write"]

EPILOG = """\
exit status: 0 on success; 2 on bad input, with one line on stderr
('sklearn-rank COMMAND: error: ...', naming the option or file); 130 when
interrupted (Ctrl-C); 141 when the output is closed early (e.g. piped into
'head'), as for a command that a shell sees killed by SIGPIPE, without a
message."""

#: Errors that bad input raises: files (OSError, gzip's EOFError and
#: zlib.error), values (ValueError, TypeError), a missing optional package
#: (ImportError), an input too big for memory (MemoryError).
EXPECTED = (ValueError, TypeError, OSError, EOFError, ImportError, MemoryError, zlib.error)
_MAX_MESSAGE = 1000  # characters of one error line
# The commands' TREC reader (read_qrels / read_run engine=): NumPy's, with or
# without pyarrow. In a process that reads one run, pyarrow's parser saves
# less than importing pyarrow costs (in time and peak memory); the tables are
# the same.
READER = "numpy"


#: The file argument that means standard input (a qrels file or a run).
STDIN = "-"


def source(path: str):
    """What the commands' readers read for a file argument: ``path``, or
    standard input's bytes for ``-`` (:data:`STDIN`)."""
    if path != STDIN:
        return path
    if sys.stdin is None:  # started with stdin closed
        raise OSError(errno.EBADF, "standard input is closed", path)
    return getattr(sys.stdin, "buffer", sys.stdin)


def check_stdin(named) -> None:
    """Refuse ``-`` (standard input, read once) for more than one file.

    ``named``: ``(argument, path)`` pairs, e.g. ``("qrels", args.qrels)``.
    """
    taken = [what for what, path in named if path == STDIN]
    if len(taken) > 1:
        raise CommandError(f"'-' (standard input) is given for {len(taken)} files "
                           f"({', '.join(taken)}); standard input can be read once: give "
                           "'-' for one file and the others by their path")


class CommandError(Exception):
    """A bad input, with the options (as typed) it belongs to."""

    def __init__(self, message: str, *options: tuple[str, object], prog: str | None = None):
        super().__init__(message)
        self.options = options
        self.prog = prog


def is_expected(exc: BaseException) -> bool:
    # LightGBM refuses data it cannot train on with its own class (imported lazily)
    return isinstance(exc, EXPECTED) or type(exc).__name__ == "LightGBMError"


def shown(value) -> str:
    """A value for a message: a string quoted, a long one cut."""
    if not isinstance(value, str):
        return str(value)
    return repr(value) if len(value) <= 80 else f"{value[:60]!r}... ({len(value)} characters)"


@contextlib.contextmanager
def option(*options: tuple[str, object]):
    """Name the options an expected error in the block belongs to.

    ``options`` are ``(option as typed, value)`` pairs, e.g. ``("-m", spec)``
    or ``("run", path)``; the value is shown unless the message holds it.
    """
    try:
        yield
    except BrokenPipeError:
        raise
    except Exception as exc:
        if not is_expected(exc):
            raise
        raise CommandError(message_of(exc, [v for _, v in options]), *options) from exc


def message_of(exc: BaseException, values=()) -> str:
    """One line that says what went wrong (a file name among ``values`` is left
    to the prefix that names the option)."""
    if isinstance(exc, MemoryError):
        text = "not enough memory" + (f" ({exc})" if str(exc) else "")
    elif isinstance(exc, OSError) and exc.strerror:
        text = exc.strerror
        if exc.filename is not None and exc.filename not in values:
            text += f": {exc.filename}"
    else:
        text = str(exc) or type(exc).__name__
    if isinstance(exc, EOFError | zlib.error):
        text = f"corrupt or truncated gzip data ({text})"
    text = " ".join(text.split())
    return text if len(text) <= _MAX_MESSAGE else text[:_MAX_MESSAGE - 3] + "..."


def integer(low: int | None = None, high: int | None = None, *, nonzero: bool = False):
    """An argparse ``type``: an integer in [low, high] (and not 0 if ``nonzero``)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {shown(text)}") from None
        if ((low is not None and value < low) or (high is not None and value > high)
                or (nonzero and value == 0)):
            bounds = (f" from {low} to {high}" if low is not None and high is not None
                      else f" >= {low}" if low is not None
                      else f" <= {high}" if high is not None else "")
            raise argparse.ArgumentTypeError(
                f"expected {'a nonzero' if nonzero else 'an'} integer{bounds}, "
                f"got {shown(text)}")
        return value
    return parse


def real(low: float | None = None, high: float | None = None):
    """An argparse ``type``: a finite number strictly between low and high."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {shown(text)}") from None
        if not math.isfinite(value) or (low is not None and value <= low) or (
                high is not None and value >= high):
            bounds = (f" strictly between {low} and {high}" if low is not None and high is
                      not None else f" > {low}" if low is not None else "")
            raise argparse.ArgumentTypeError(
                f"expected a finite number{bounds}, got {shown(text)}")
        return value
    return parse


class Append(argparse.Action):
    """``action="append"`` that also keeps each value with the option as typed
    (``-m`` or ``--measure``) in ``<dest>_typed``, for error messages."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, [*(getattr(namespace, self.dest) or []), values])
        typed = getattr(namespace, self.dest + "_typed", None) or []
        setattr(namespace, self.dest + "_typed", [*typed, (option_string, values)])


def say(text: str) -> None:
    """A line on stderr, if stderr is still there."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        sys.stderr.write(text + "\n")
        sys.stderr.flush()


def write(text: str) -> None:
    """Write ``text`` to stdout whole, or raise BrokenPipeError.

    Under ``python -u`` / PYTHONUNBUFFERED, ``sys.stdout.write`` hands a big
    text to the file in one system call and drops what a closing pipe did not
    take, without an error; the bytes are written here until they are all out.
    Ids read from files that are not UTF-8 are text with lone surrogates
    (``surrogateescape``, see :mod:`sklearn_rank.trec._tables`): they are
    written as the bytes they stand for, as trec_eval writes them.
    """
    stream = sys.stdout
    if stream is None:  # started with stdout closed
        return
    buffer = getattr(stream, "buffer", None)
    if buffer is None:  # a text stream without bytes below (a test's capture)
        stream.write(text)
        return
    stream.flush()
    errors = "surrogateescape" if stream.errors == "strict" else stream.errors
    data = memoryview(text.encode(stream.encoding, errors))
    while data:
        n = buffer.write(data)
        data = data[len(data) if n is None else n:]
    buffer.flush()


def silence_stdout() -> None:
    """Point stdout at devnull, so that the interpreter's last flush of a closed
    pipe raises nothing (the recipe of the Python docs, "Note on SIGPIPE")."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
