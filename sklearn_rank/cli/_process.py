"""The one process-level setting of the ``sklearn-rank`` program: Python's cycle
collector is off while a command runs.

What: :func:`command_process` turns the collector off for the command and, once
it is done, freezes what is alive (the interpreter's last collection at the exit
then has nothing to walk). :func:`collect_again` turns it back on, for a command
whose work makes cyclic garbage (``tune``: estimators and boosters).

Why: the commands work on NumPy arrays and make little cyclic garbage, but
their imports create hundreds of thousands of objects, which the collector walks
again and again while they load, and once more at the exit. A whole-command
benchmark of ``sklearn-rank evaluate`` on a 1M-line run shows the difference
(the docs' performance page gives the figures); no other process-level setting
did, so there is none.

Only the program's entry (:func:`sklearn_rank.cli._entry.program`) uses this:
:func:`sklearn_rank.cli._app.main` called from Python (a library's process)
leaves the collector alone.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collect_again", "command_process"]


@contextmanager
def command_process() -> Iterator[None]:
    """Run the block (a command) without the cycle collector, then freeze what
    is alive: it lives to the exit."""
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()


def collect_again() -> None:
    """Turn the collector back on (inside :func:`command_process`), for work
    that makes cyclic garbage."""
    gc.enable()
