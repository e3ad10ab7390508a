"""Threads for the work of one call (DESIGN §6, §8): how many, and running
blocks of work on them.

A module of its own, outside the metrics package, so that the TREC readers
use it without importing the metrics. How many threads: see
:func:`thread_limit`; what the blocks of an evaluation are and how small an
input stays on the calling thread: :mod:`sklearn_rank.metrics._engine.threads`.

The threads are started by the call and joined before it returns, whatever
happens (an error in a block, ``KeyboardInterrupt``): no thread or pool outlives
the call.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence

__all__ = ["ENV", "MAX_THREADS", "run_blocks", "thread_limit"]

ENV = "SKLEARN_RANK_NUM_THREADS"
#: Default cap on the number of threads (blocks stream through memory; more
#: threads gain little beyond a few cores).
MAX_THREADS = 4


def _env_int(name: str, strict: bool) -> int | None:
    value = os.environ.get(name, "").strip()
    if not value:
        return None
    head = value.split(",")[0].strip()  # OMP_NUM_THREADS may list nested levels
    try:
        number = int(head)
    except ValueError:
        number = 0
    if number >= 1:
        return number
    if strict:
        raise ValueError(
            f"{name}={value!r} is not a positive integer; set it to the number of threads "
            f"sklearn_rank may use (1: no extra thread), or unset it."
        )
    return None


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def thread_limit() -> int:
    """The most threads a call may use: the first of these that applies.

    1. ``SKLEARN_RANK_NUM_THREADS`` set to a positive integer: at most that
       many (``1``: everything on the calling thread);
    2. ``OMP_THREAD_LIMIT`` or ``OMP_NUM_THREADS`` set (the usual way of
       capping a process's threads; joblib's worker processes get the cores per
       worker in it, pyarrow honours it too): at most that many;
    3. the cores this process may run on (``os.sched_getaffinity``, else
       ``os.cpu_count()``), at most :data:`MAX_THREADS`.

    A call from a thread other than the main thread runs on that thread alone
    (1): it is already part of a parallel job (scikit-learn's threaded
    searches, Dask's threaded scheduler), which must not multiply its threads.
    """
    if threading.current_thread() is not threading.main_thread():
        return 1
    limit = _env_int(ENV, strict=True)
    if limit is not None:
        return limit
    for name in ("OMP_THREAD_LIMIT", "OMP_NUM_THREADS"):
        limit = _env_int(name, strict=False)
        if limit is not None:
            return limit
    return max(1, min(_cores(), MAX_THREADS))


def run_blocks(work: Callable[[object], None], blocks: Sequence, threads: int) -> None:
    """Call ``work(block)`` once for every block, on ``threads`` threads
    (the calling thread included).

    Blocks are handed out in order to whichever thread is free. If a call
    raises, no further block starts and the error of the first such block
    (in the order of ``blocks``, not of time) is raised once every thread has
    ended: the same error whatever the number of threads.

    ``threads=1`` is the reference: a plain loop over the blocks on the
    calling thread. Callers give each block its own part of the result to
    write, so any number of threads gives the result of that loop, bit for bit.
    """
    if threads <= 1 or len(blocks) <= 1:
        for block in blocks:
            work(block)
        return
    lock = threading.Lock()
    state = {"next": 0, "errors": []}

    def worker() -> None:
        while True:
            with lock:
                i = state["next"]
                if i >= len(blocks) or state["errors"]:
                    return
                state["next"] = i + 1
            try:
                work(blocks[i])
            except BaseException as exc:  # noqa: BLE001 - re-raised by the caller
                with lock:
                    state["errors"].append((i, exc))
                return

    helpers = [threading.Thread(target=worker, name=f"sklearn_rank-blocks-{j}", daemon=True)
               for j in range(min(threads, len(blocks)) - 1)]
    try:
        for t in helpers:
            t.start()
        worker()
    finally:
        with lock:  # an interrupt of the calling thread: start no further block
            if state["next"] < len(blocks) and not state["errors"]:
                state["next"] = len(blocks)
        for t in helpers:
            if t.is_alive() or t.ident is not None:
                t.join()
    if state["errors"]:
        raise min(state["errors"], key=lambda e: e[0])[1]
