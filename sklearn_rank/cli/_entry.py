"""The ``sklearn-rank`` program's entry: its console script and ``python -m
sklearn_rank`` import this module, and nothing else does.

Importing it starts the program: before anything else is imported (the
command line's modules, NumPy, ...), Ctrl-C is made to end the process at
once with status 130 and nothing on stderr, wherever it lands: in an import
(where Python's ``KeyboardInterrupt`` printed a traceback, or NumPy's
"C-extensions failed" advice, and the status was 1, 2 or death by the
signal) or in a command. Once the command is done, an interrupt is ignored
and the process exits with the command's status. Only the interpreter's own
start-up (``site``, ``runpy``, the console script's first line) and
``sklearn_rank/__init__.py`` (a few lines) run before this module: an
interrupt there ends the process as Python does. :func:`sklearn_rank.cli._app.main`
called from Python keeps Python's ``KeyboardInterrupt``.
"""

import os  # (imported by the interpreter's start-up already: no time)

try:  # the signal module's C half: imported at once (signal.py takes ~1 ms)
    import _signal as _signals
except ImportError:  # pragma: no cover - not CPython
    import signal as _signals

__all__ = ["program"]


def _interrupted(signum, frame):
    os._exit(130)  # nothing left to flush that an interrupted command owes


# Only where Ctrl-C would raise KeyboardInterrupt: an interrupt that the
# program was started ignoring (a background job of a script) stays ignored.
if _signals.getsignal(_signals.SIGINT) is _signals.default_int_handler:
    _signals.signal(_signals.SIGINT, _interrupted)


def program() -> int:
    """The ``sklearn-rank`` program: :func:`sklearn_rank.cli._app.main` in a
    process of its own, which keeps the memory it frees and runs without
    Python's cycle collector (:func:`~sklearn_rank.cli._process.command_process`).

    Returns
    -------
    status : int
        The exit status (see :data:`sklearn_rank.cli._support.EPILOG`).
    """
    from . import _app as _cli
    from ._process import command_process

    try:
        with command_process():
            return _cli.main()
    finally:
        if _signals.getsignal(_signals.SIGINT) is _interrupted:
            # The command is done: an interrupt from here on changes nothing (at
            # the interpreter's very end, SIGINT's default would kill the process).
            _signals.signal(_signals.SIGINT, _signals.SIG_IGN)
