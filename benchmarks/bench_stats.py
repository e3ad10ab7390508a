"""Benchmark ``compare()`` of 2 systems x 2 metrics over 300,000 and 1,000,000 queries.

What is measured
----------------
Generated per-query values (fixed seed), for two systems and two metrics
(``ndcg@10``, continuous with 30% of the queries at 0; ``mrr@10``, on the
lattice 1/rank), the second system a noisy copy of the first with a small
gain. The Evaluations are built before the clock starts. The script times
``compare({"A": a, "B": b})`` with its defaults (randomization test of
10,000 resamples, bootstrap interval of 10,000 resamples, Holm; from 50,000
queries ``approximation='auto'`` takes the documented normal approximation
of both), twice (after a warm-up call on 1,000 queries), checks that both
reports are identical (same seed, same results), and prints the time and
the peak of the memory allocated during the call (:mod:`tracemalloc`, which
sees NumPy's arrays: beyond the inputs; the clock runs with it on, which
costs little with few large arrays). ``--exact`` also times
``approximation='none'`` (the byte-table randomization test and the bootstrap
resampled; slow: minutes at 1M queries). Targets (issue 28 item 1):
<= 5 s at 300,000 queries, <= 15 s at 1,000,000, <= 1 GiB beyond the inputs,
on a quiet 2-core machine (the load average is printed: run it alone).

Usage: ``python benchmarks/bench_stats.py [--queries N ...] [--exact]``.
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc

import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _common import Target, load_average, print_targets  # noqa: E402

TARGETS = {300_000: 5.0, 1_000_000: 15.0}


def generate(n: int, seed: int = 0) -> dict:
    """Two Evaluations of n queries on ``ndcg@10`` and ``mrr@10``."""
    from sklearn_rank.metrics._evaluation import Evaluation

    rng = np.random.default_rng(seed)
    ndcg = np.where(rng.random(n) < 0.3, 0.0, rng.beta(2, 3, n))
    ndcg_b = np.clip(ndcg + rng.normal(0.0005, 0.1, n) * (ndcg > 0), 0, 1)
    rank = rng.integers(1, 21, n)
    rank_b = np.where(rng.random(n) < 0.1, rng.integers(1, 21, n), rank)
    mrr, mrr_b = np.where(rank <= 10, 1.0 / rank, 0.0), np.where(rank_b <= 10, 1.0 / rank_b, 0.0)
    qid = np.arange(n, dtype=np.int64)
    metrics = ["ndcg@10", "mrr@10"]

    def ev(values):
        per_query = dict(zip(metrics, values, strict=True))
        return Evaluation(qid, per_query, {m: float(v.mean()) for m, v in per_query.items()},
                          dict.fromkeys(metrics, 0), None, metrics)

    return {"A": ev([ndcg, mrr]), "B": ev([ndcg_b, mrr_b])}


def timed(evaluations: dict, approximation: str):
    from sklearn_rank.stats import compare

    tracemalloc.start()
    start = time.perf_counter()
    report = compare(evaluations, approximation=approximation)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] / 1024**3
    tracemalloc.stop()
    return report, seconds, peak


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, nargs="+", default=[300_000, 1_000_000])
    parser.add_argument("--exact", action="store_true",
                        help="also time approximation='none' (slow)")
    args = parser.parse_args(argv)
    timed(generate(1000), "none")  # imports and first calls outside the clock

    print(f"load average before: {load_average()}")
    print(f"{'queries':>10}  {'approximation':>13}  {'run 1 s':>8}  {'run 2 s':>8}  "
          f"{'peak +GiB':>9}  same  p (ndcg@10, mrr@10)")
    targets = []
    for n in args.queries:
        evaluations = generate(n)
        for approximation in ("auto", "none") if args.exact else ("auto",):
            first, t1, g1 = timed(evaluations, approximation)
            second, t2, g2 = timed(evaluations, approximation)
            same = first.comparisons == second.comparisons
            ps = ", ".join(f"{c.pvalue:.3g}" for c in first.comparisons)
            print(f"{n:>10,}  {approximation:>13}  {t1:>8.2f}  {t2:>8.2f}  "
                  f"{max(g1, g2):>9.3f}  {'yes' if same else 'NO':>4}  {ps}")
            if approximation == "auto" and n in TARGETS:
                targets.append(Target(f"compare, {n:,} queries, 2 systems x 2 metrics",
                                      max(t1, t2) <= TARGETS[n] and same,
                                      f"{max(t1, t2):.2f} s (target <= {TARGETS[n]:g} s), "
                                      f"identical reports: {same}"))
                targets.append(Target(f"memory beyond the inputs, {n:,} queries",
                                      max(g1, g2) <= 1.0, f"{max(g1, g2):.3f} GiB (<= 1)"))
        del evaluations
    print(f"load average after: {load_average()}")
    print_targets(targets)
    return 0


if __name__ == "__main__":
    sys.exit(main())
