"""Benchmark evaluating 100M rows on Spark: :func:`sklearn_rank.spark.evaluate` on ``local[2]``.

What is measured
----------------
The rows are generated on the executors, never on the driver:
``spark.range(--rows)`` in ``--partitions`` partitions and column expressions
with seeded random numbers: ``qid = id // (rows / queries)`` (``--queries``
queries of equal length, default 1,000,000 × 100 documents), an integer
``label`` in 0..4 (60% zeros, then 20%, 10%, 7%, 3%) and a float (32-bit)
``score = label + 1.5 * N(0, 1)``, correlated with the label. Those columns
are evaluated with five metrics (``METRICS``: ndcg@10, map, p@10, recall@100,
mrr) by ``sklearn_rank.spark.evaluate`` — a shuffle of every row by query,
then each partition's queries computed by the in-memory engine in the Python
workers, and a few numbers per query collected to the driver. The wall time
is from the call to the returned ``Evaluation`` (the generation of the rows
included: Spark generates them inside the same job); throughput is rows per
second of that time. ``--generation-baseline`` also times generating the rows
alone (Spark's ``noop`` writer), to tell the two apart.

Spark runs in local mode (``local[2]``: the driver's JVM is the executor), with
``spark.driver.memory`` (``--driver-memory``, default 4g: the heap of that
one JVM) and ``spark.python.worker.memory`` (``--python-worker-memory``, 1g:
where the Python workers' aggregation spills); the shuffle writes
``--partitions`` partitions (adaptive coalescing off, so they stay as set). A thread samples, every
0.2 s, the resident memory (RSS, psutil) of the driver's Python process, the
JVM and the Python workers (the JVM's Python children: ``pyspark.daemon`` and
its forked workers); the script prints the peaks: the JVM's, the largest
single Python worker's and the workers' sum at any one time.

The values are checked against the in-memory engine: the rows of the first
``--sample-rows`` (default 1,000,000) rows' queries are generated again (the
same expressions on the same partitions: the same numbers), collected to the
driver and evaluated by ``sklearn_rank.metrics.evaluate``; their per-query
values must equal those of the same queries in the Spark evaluation
(``rel=1e-12``; the engine is the same, so they are expected equal bit for
bit), and the empty counts must agree.

The script ends with PASS/FAIL lines: the JVM's peak RSS within the driver
memory plus 1 GiB of the JVM's own (off-heap buffers, code, threads), each
Python worker within 2 GiB, and the values equal to the in-memory ones.

Usage (from the repository root)::

    pip install -e ".[spark,bench]"     # and a Java runtime 17 or newer
    nice python benchmarks/bench_spark.py                      # 100M rows
    python benchmarks/bench_spark.py --rows 10000000 --queries 100000 --json out.json
"""

from __future__ import annotations

import argparse
import math
import sys
import threading
import time

import numpy as np
from _common import Target, dump_json, environment, load_average, print_targets

SEED = 20261126
METRICS = ["ndcg@10", "map", "p@10", "recall@100", "mrr"]
ROWS = 100_000_000
QUERIES = 1_000_000
ROWS_PER_PARTITION = 500_000
VERSIONS = ("numpy", "pyarrow", "pandas", "pyspark", "psutil", "sklearn-rank")
GIB = 1024**3


# --- memory -------------------------------------------------------------------------------------

class MemorySampler(threading.Thread):
    """Peak resident memory of this process, the JVM it started and the JVM's
    Python workers, sampled every ``interval`` seconds until :meth:`stop`."""

    def __init__(self, interval: float = 0.2):
        super().__init__(daemon=True)
        import psutil

        self._psutil = psutil
        self.interval = interval
        self.peaks = {"driver_python": 0, "jvm": 0, "python_worker": 0, "python_workers": 0,
                      "total": 0}
        self._done = threading.Event()

    def sample(self) -> None:
        psutil = self._psutil
        me = psutil.Process()
        driver = jvm = workers = largest = 0
        try:
            driver = me.memory_info().rss
            for child in me.children(recursive=False):
                if "java" not in child.name():
                    continue
                jvm += child.memory_info().rss
                for worker in child.children(recursive=True):
                    rss = worker.memory_info().rss
                    workers += rss
                    largest = max(largest, rss)
        except psutil.Error:  # a worker ended between listing and reading it
            return
        for key, value in (("driver_python", driver), ("jvm", jvm),
                           ("python_worker", largest), ("python_workers", workers),
                           ("total", driver + jvm + workers)):
            self.peaks[key] = max(self.peaks[key], value)

    def run(self) -> None:
        while not self._done.wait(self.interval):
            self.sample()

    def stop(self) -> dict:
        self._done.set()
        self.join()
        self.sample()
        return dict(self.peaks)


# --- data and session ---------------------------------------------------------------------------

def session(args):
    from sklearn_rank.spark import get_session

    spark = get_session("local[2]", app_name="bench_spark", config={
        "spark.driver.memory": args.driver_memory,
        "spark.python.worker.memory": args.python_worker_memory,
        "spark.sql.shuffle.partitions": str(args.partitions),
        # the partitions as set: no coalescing of small shuffle partitions
        "spark.sql.adaptive.coalescePartitions.enabled": "false",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        **({"spark.local.dir": args.local_dir} if args.local_dir else {}),
    })
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def generated(spark, rows: int, queries: int, partitions: int):
    """``rows`` judged rows of ``queries`` queries, generated on the executors."""
    from pyspark.sql import functions as F

    per_query = rows // queries
    u = F.rand(SEED)
    label = (F.when(u < 0.6, 0).when(u < 0.8, 1).when(u < 0.9, 2).when(u < 0.97, 3)
             .otherwise(4))
    return (spark.range(0, rows, 1, numPartitions=partitions)
            .select(F.expr(f"id div {per_query}").alias("qid"), label.alias("label"))
            .withColumn("score", (F.col("label") + 1.5 * F.randn(SEED + 1)).cast("float")))


# --- measurements -------------------------------------------------------------------------------

def timed(func):
    start = time.perf_counter()
    out = func()
    return out, time.perf_counter() - start


def compare(ev, reference) -> tuple[bool, float, str]:
    """Whether the Spark evaluation's values of ``reference``'s queries equal them."""
    import pandas as pd

    rows = pd.Index(ev.qids).get_indexer(reference.qids)
    if (rows < 0).any():
        return False, math.inf, "the sample's queries are not all in the Spark evaluation"
    worst = 0.0
    for name in METRICS:
        got, want = ev.per_query[name][rows], reference.per_query[name]
        if not np.array_equal(np.isnan(got), np.isnan(want)):
            return False, math.inf, f"{name}: NaN in one and not the other"
        ok = ~np.isnan(want)
        diff = np.abs(got[ok] - want[ok]) / np.maximum(np.abs(want[ok]), 1e-300)
        worst = max(worst, float(diff.max(initial=0.0)))
    equal = worst <= 1e-12
    return equal, worst, (f"{reference.n_queries:,} queries, {len(METRICS)} metrics, "
                          f"largest relative difference {worst:.3g}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=ROWS)
    parser.add_argument("--queries", type=int, default=QUERIES)
    parser.add_argument("--partitions", type=int, default=None,
                        help=f"partitions of the generated rows and of the shuffle "
                             f"(default: one per {ROWS_PER_PARTITION:,} rows, at least 2)")
    parser.add_argument("--sample-rows", type=int, default=1_000_000,
                        help="rows of the in-memory comparison (0: none)")
    parser.add_argument("--driver-memory", default="4g")
    parser.add_argument("--python-worker-memory", default="1g")
    parser.add_argument("--local-dir", default=None,
                        help="Spark's scratch space for the shuffle files, several GB at 100M "
                             "rows (default: Spark's, the temporary directory)")
    parser.add_argument("--generation-baseline", action="store_true",
                        help="also time generating the rows alone")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args(argv)
    if args.rows % args.queries:
        parser.error(f"--rows={args.rows} is not a multiple of --queries={args.queries}: "
                     "every query has rows/queries documents")
    if args.partitions is None:
        args.partitions = max(2, math.ceil(args.rows / ROWS_PER_PARTITION))

    from sklearn_rank.metrics import evaluate as evaluate_in_memory
    from sklearn_rank.spark import evaluate

    print(f"{args.rows:,} rows = {args.queries:,} queries x {args.rows // args.queries} "
          f"documents, {len(METRICS)} metrics ({', '.join(METRICS)}), local[2], "
          f"{args.partitions} partitions, driver memory {args.driver_memory}, load average "
          f"{load_average()}", flush=True)
    sampler = MemorySampler()
    sampler.start()
    spark = session(args)
    # warm-up: the Python workers start and import the package and its engine
    evaluate(generated(spark, 1000, 10, 2), METRICS)
    df = generated(spark, args.rows, args.queries, args.partitions)
    result = {"rows": args.rows, "queries": args.queries, "partitions": args.partitions,
              "metrics": METRICS, "driver_memory": args.driver_memory,
              "environment": environment(*VERSIONS)}
    if args.generation_baseline:
        _, seconds = timed(lambda: df.write.format("noop").mode("overwrite").save())
        result["generation_seconds"] = seconds
        print(f"generating the rows alone: {seconds:.1f} s", flush=True)

    ev, seconds = timed(lambda: evaluate(df, METRICS))
    peaks = sampler.stop()
    result.update(seconds=seconds, rows_per_second=args.rows / seconds, peaks=peaks,
                  means=dict(ev.mean), n_empty=dict(ev.n_empty))
    print(f"sklearn_rank.spark.evaluate: {seconds:.1f} s wall, "
          f"{args.rows / seconds:,.0f} rows/s, {ev.n_queries:,} queries")
    print("means: " + ", ".join(f"{k} {v:.6f}" for k, v in ev.mean.items()))
    print("peak RSS: " + ", ".join(f"{k.replace('_', ' ')} {v / GIB:.2f} GiB"
                                   for k, v in peaks.items()), flush=True)

    targets = []
    jvm_limit = _bytes(args.driver_memory) + GIB
    targets.append(Target("JVM (driver = executor) peak RSS <= driver memory + 1 GiB",
                          peaks["jvm"] <= jvm_limit,
                          f"{peaks['jvm'] / GIB:.2f} GiB <= {jvm_limit / GIB:.2f} GiB"))
    targets.append(Target("each Python worker's peak RSS <= 2 GiB",
                          peaks["python_worker"] <= 2 * GIB,
                          f"{peaks['python_worker'] / GIB:.2f} GiB (all workers at once: "
                          f"{peaks['python_workers'] / GIB:.2f} GiB)"))
    if args.sample_rows:
        per_query = args.rows // args.queries
        n_queries = max(1, min(args.queries, args.sample_rows // per_query))
        from pyspark.sql import functions as F

        sample = df.filter(F.col("qid") < n_queries).toPandas()
        reference, memory_seconds = timed(lambda: evaluate_in_memory(
            sample["label"].to_numpy(), sample["score"].to_numpy(),
            qid=sample["qid"].to_numpy(), metrics=METRICS))
        equal, worst, detail = compare(ev, reference)
        result.update(sample_rows=len(sample), sample_in_memory_seconds=memory_seconds,
                      sample_largest_relative_difference=worst)
        print(f"in memory on the first {len(sample):,} rows: {memory_seconds:.2f} s "
              f"({len(sample) / memory_seconds:,.0f} rows/s on one core)")
        targets.append(Target("per-query values equal the in-memory evaluate's (rel 1e-12)",
                              equal, detail))
    print_targets(targets)
    result["targets"] = {t.name: t.passed for t in targets}
    if args.json:
        dump_json(args.json, result)
    spark.stop()
    return 0 if all(t.passed is not False for t in targets) else 1


def _bytes(size: str) -> int:
    """Spark's memory size (``"4g"``, ``"512m"``) in bytes."""
    units = {"k": 1024, "m": 1024**2, "g": GIB, "t": 1024**4}
    size = size.strip().lower().rstrip("b")
    return int(float(size[:-1]) * units[size[-1]]) if size[-1] in units else int(size)


if __name__ == "__main__":
    sys.exit(main())
