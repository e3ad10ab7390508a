"""The process-level settings of the ``sklearn-rank`` program, and the only
place that makes any: Python's cycle collector is off while a command runs, and
on glibc the process keeps the memory it frees.

What: :func:`command_process` applies both for the command and, once it is
done, freezes what is alive (the interpreter's last collection at the exit then
has nothing to walk). :func:`collect_again` turns the collector back on, for a
command whose work makes cyclic garbage (``tune``: estimators and boosters).

Why, each shown by a whole-command benchmark of ``sklearn-rank evaluate`` (the
docs' performance page gives the figures):

* the collector: the commands work on NumPy arrays and make little cyclic
  garbage, but their imports create hundreds of thousands of objects, which the
  collector walks again and again while they load, and once more at the exit:
  a fixed cost of every command, which matters most for small inputs;
* the allocator: glibc hands a large freed block back to the system at once
  (``munmap``, or a trim of the heap's top), so the next large array starts on
  fresh pages, each faulted in and zeroed by the kernel. Taking large blocks
  from the heap and never trimming it lets the process reuse its memory
  instead; it keeps its peak memory until it exits, which is soon.

Only the program's entry (:func:`sklearn_rank.cli._entry.program`) uses this:
:func:`sklearn_rank.cli._app.main` called from Python (a library's process)
leaves the collector and the allocator alone.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collect_again", "command_process", "keep_freed_memory"]

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters


@contextmanager
def command_process() -> Iterator[None]:
    """Run the block (a command) with freed memory kept (:func:`keep_freed_memory`)
    and without the cycle collector, then freeze what is alive: it lives to
    the exit."""
    keep_freed_memory()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()


def collect_again() -> None:
    """Turn the collector back on (inside :func:`command_process`), for work
    that makes cyclic garbage."""
    gc.enable()


def keep_freed_memory() -> None:
    """Let the process reuse the memory it frees (glibc only; elsewhere nothing
    is done): large blocks come from the heap, which is never trimmed."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # (no C library symbols, or not glibc's)
        return
    mallopt(_M_MMAP_THRESHOLD, 1 << 30)
    mallopt(_M_TRIM_THRESHOLD, 2**31 - 1)
