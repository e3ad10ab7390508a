"""Running the blocks of an evaluation on a few threads (DESIGN §6, §8).

NumPy releases the GIL in the calls that make up a block's work (sorts,
gathers, ufuncs on arrays of thousands of cells), so blocks ranked and scored
on several threads run on several cores at once. Threads never change a
result: the blocks are the same whatever the number of threads (they depend on
the data only), each block is computed by one thread with the same NumPy calls,
and each writes its own queries' values. Only which thread takes which block
varies.

How many threads
----------------
The first of these that applies:

1. ``SKLEARN_RANK_NUM_THREADS`` set to a positive integer: at most that many
   (``1``: everything on the calling thread);
2. ``OMP_THREAD_LIMIT`` or ``OMP_NUM_THREADS`` set (the usual way of capping
   a process's threads; joblib's worker processes get the cores per worker in
   it, pyarrow honours it too): at most that many;
3. the cores this process may run on (``os.sched_getaffinity``, else
   ``os.cpu_count()``), at most :data:`MAX_THREADS`.

A call from a thread other than the main thread runs on that thread alone: it
is already part of a parallel job (scikit-learn's threaded searches, Dask's
threaded scheduler), which must not multiply its threads. A small input runs on
the calling thread too: each thread gets at least :data:`MIN_CELLS` cells, so no
call pays a thread start-up for a few milliseconds of work.

The threads are started by the call and joined before it returns, whatever
happens (an error in a block, ``KeyboardInterrupt``): no thread or pool outlives
the call.
"""

from __future__ import annotations

from ..._utils.threads import ENV, MAX_THREADS, run_blocks, thread_limit

__all__ = ["ENV", "MAX_THREADS", "MIN_CELLS", "n_threads", "run_blocks", "thread_limit"]

#: Fewest block cells (queries x padded width) worth a thread of their own.
MIN_CELLS = 1 << 18


def n_threads(cells: int) -> int:
    """Threads for blocks of ``cells`` cells in all: the limit, and at least
    :data:`MIN_CELLS` cells per thread."""
    return max(1, min(thread_limit(), cells // MIN_CELLS))
