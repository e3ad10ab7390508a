"""Benchmark evaluate_recommendations on 1M users x 50 recommended items (50M rows).

What is measured
----------------
Generated data (fixed seed): ``--users`` users (default 1,000,000) over
``--items`` items (default 100,000, popularity Zipf-like); each user has
``--per-user`` recommended items (default 50, distinct, random scores in
float32 precision, so some scores tie, rows grouped by user but not sorted by
score), 10 training items (removed from the lists) and 5 test items. The
frames are pandas DataFrames with int64 ids.

The script times one call of ``evaluate_recommendations(recs, test,
train=train, k=10, metrics=...)`` with the six ranking metrics of
``METRICS`` (frames built before the clock starts) and prints the time and
the process's peak resident memory (``ru_maxrss``: the frames, imports and
the evaluation). Run it alone on the machine, or under ``/usr/bin/time -v``
for the peak as the OS sees it. Targets (issue 27): <= 60 s and <= 6 GiB
peak on 2 cores.

Usage: ``python benchmarks/bench_recsys.py [--users N] [--per-user M]``.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time

import numpy as np

METRICS = ["ndcg@10", "precision@10", "recall@10", "map@10", "mrr@10", "hit_rate@10"]


def generate(n_users: int, n_items: int, per_user: int, seed: int = 0):
    """The recs, test and train frames (pandas)."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, n_items + 1) ** 0.8
    weights /= weights.sum()
    n_train, n_test = 10, 5
    width = per_user + n_train + n_test
    # distinct items per user: a popular-biased draw, then a random offset
    # within a window of distinct consecutive items
    start = rng.choice(n_items, size=n_users, p=weights)
    steps = rng.permutation(width)
    items = (start[:, None] + steps[None, :] * 7) % n_items  # distinct: 7 * width < n_items
    users = np.arange(n_users, dtype=np.int64)
    rec_items = items[:, :per_user]
    scores = rng.random((n_users, per_user), dtype=np.float32).astype(np.float64)
    recs = pd.DataFrame({"user": np.repeat(users, per_user), "item": rec_items.ravel(),
                         "score": scores.ravel()})
    train = pd.DataFrame({"user": np.repeat(users, n_train),
                          "item": items[:, per_user:per_user + n_train].ravel()})
    # test: some of the recommended items (hits) and some never recommended
    test_items = np.concatenate([items[:, :2], items[:, per_user + n_train:][:, :3]], axis=1)
    test = pd.DataFrame({"user": np.repeat(users, n_test), "item": test_items.ravel(),
                         "rating": rng.integers(1, 6, size=n_users * n_test)})
    return recs, test, train


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=1_000_000)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--per-user", type=int, default=50)
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args(argv)
    from sklearn_rank.recsys import evaluate_recommendations

    t0 = time.perf_counter()
    recs, test, train = generate(args.users, args.items, args.per_user)
    print(f"generated {len(recs):,} recommendation rows, {len(train):,} train and "
          f"{len(test):,} test rows in {time.perf_counter() - t0:.1f} s")
    t0 = time.perf_counter()
    ev = evaluate_recommendations(recs, test, train=train, k=args.k, metrics=METRICS)
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB -> GiB
    print(ev)
    print(f"evaluate_recommendations: {seconds:.1f} s; peak RSS of the process "
          f"{peak:.2f} GiB")
    ok = seconds <= 60 and peak <= 6
    print(f"{'PASS' if ok else 'FAIL'}  <= 60 s and <= 6 GiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
