"""Cost of tie averaging (``ties="average"``) on large tie groups.

What is measured
----------------
One process, fixed seeds, labels 0..4 skewed to 0 as MSLR (p = .50, .25, .15,
.07, .03), every timing the best of ``--repeats`` runs of one
``evaluate(..., metrics=[metric])`` call (grouping and sorting included):

* one fully tied query (every score equal): ``mrr`` on 32,000 rows and
  ``bpref`` on 8,000 rows;
* one 5,000,000-row query with 10 distinct integer scores (tie groups of
  ~500,000 rows) for the metrics that average over tie orders with more than
  a running sum (``mrr``, ``hit_rate``, ``err``, ``bpref``, ``rank_eff``,
  ``map``, ``r_precision``), with and without a cut-off of 10, and ``ndcg``;
* the MSLR-like data of ``bench_metrics.py`` (10k queries, ~1.2M rows) with
  its scores replaced by 10 distinct integer values per query (so every query
  has ties), 15 metrics in one ``evaluate`` call, ``ties="average"`` against
  ``ties="stable"`` (input order: no averaging, the floor). These two are
  timed round-robin, best of ``--pair-repeats`` runs each (load from other
  processes hits both alike), and the script ends with the target as a
  PASS/FAIL line: average <= 3x stable.

A run that exceeds ``--limit`` seconds is stopped (SIGALRM) and reported as
such, so the script also runs against implementations that are quadratic in
the size of a tie group. It prints the time, the value (to compare two
implementations) and any warning the call emitted.

Usage (from the repository root)::

    python benchmarks/bench_ties.py
    python benchmarks/bench_ties.py --limit 60 --repeats 3
"""

from __future__ import annotations

import argparse
import signal
import time
import warnings

import numpy as np
from _common import Target, print_targets
from bench_metrics import ALL_METRICS, LABEL_P, make_dataset

from sklearn_rank.metrics import evaluate

FIFTEEN = (*ALL_METRICS, "bpref")
#: Target (issue 16): 15 metrics with ties="average" <= this x ties="stable".
AVERAGE_LIMIT = 3.0


class _Stopped(Exception):
    pass


def _alarm(signum, frame):
    raise _Stopped


def timed(name: str, call, repeats: int, limit: float) -> None:
    best, value = None, None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            for _ in range(repeats):
                signal.setitimer(signal.ITIMER_REAL, limit)
                start = time.perf_counter()
                value = call()
                elapsed = time.perf_counter() - start
                signal.setitimer(signal.ITIMER_REAL, 0)
                best = elapsed if best is None else min(best, elapsed)
        except _Stopped:
            print(f"{name:58s} > {limit:.0f} s (stopped)", flush=True)
            return
    notes = sorted({str(w.message)[:50] for w in caught})
    print(f"{name:58s} {best:8.3f} s  value {value:.15g}"
          + (f"  warnings: {notes}" if notes else ""), flush=True)


def one_query(labels, scores, metric):
    qid = np.zeros(labels.shape[0], dtype=np.int64)
    return lambda: evaluate(labels, scores, qid=qid, metrics=[metric]).mean[metric]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=float, default=60.0, help="seconds per run")
    parser.add_argument("--pair-only", action="store_true",
                        help="only the 15-metric average/stable pair (the target)")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--pair-repeats", type=int, default=5,
                        help="runs of the 15-metric average/stable pair (best kept)")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGALRM, _alarm)
    rng = np.random.default_rng(0)

    def labels(n):
        return rng.choice(len(LABEL_P), size=n, p=LABEL_P).astype(float)

    def run(name, call):
        timed(name, call, args.repeats, args.limit)

    if args.pair_only:
        return pair(args)
    y = labels(32_000)
    run("mrr, one fully tied query of 32,000 rows", one_query(y, np.zeros(y.shape[0]), "mrr"))
    y = labels(8_000)
    run("bpref, one fully tied query of 8,000 rows",
        one_query(y, np.zeros(y.shape[0]), "bpref"))
    n = 5_000_000
    y, s = labels(n), rng.integers(0, 10, n).astype(float)
    for metric in ("mrr", "mrr@10", "hit_rate", "hit_rate@10", "err", "err@10", "bpref",
                   "rank_eff", "map", "r_precision", "ndcg", "ndcg@10"):
        run(f"{metric}, one 5M-row query, 10 distinct scores", one_query(y, s, metric))

    pair(args)


def pair(args) -> None:
    """The target: 15 metrics, ties="average" against ties="stable", round-robin."""
    data = make_dataset(10_000).contiguous
    scores = np.random.default_rng(1).integers(0, 10, data.y_true.shape[0]).astype(float)
    calls = {ties: (lambda ties=ties: evaluate(data.y_true, scores, qid=data.qid,
                                               metrics=FIFTEEN, ties=ties).mean["err@10"])
             for ties in ("stable", "average")}
    best = dict.fromkeys(calls, float("inf"))
    for call in calls.values():
        call()  # warm-up
    for _ in range(args.pair_repeats):  # round-robin
        for ties, call in calls.items():
            start = time.perf_counter()
            value = call()
            best[ties] = min(best[ties], time.perf_counter() - start)
            print(f"{'15 metrics, 1.2M MSLR-like rows, 10 scores/query, ' + ties:58s} "
                  f"{time.perf_counter() - start:8.3f} s  value {value:.15g}", flush=True)
    ratio = best["average"] / best["stable"]
    print(f"best: stable {best['stable']:.3f} s, average {best['average']:.3f} s")
    print_targets([Target(f"15 metrics, ties='average' <= {AVERAGE_LIMIT:g}x ties='stable'",
                          ratio <= AVERAGE_LIMIT, f"{ratio:.2f}x")])


if __name__ == "__main__":
    main()
