"""Benchmark evaluating 100M rows out of core: streamed from parquet, and on Dask.

What is measured
----------------
The script writes a parquet file of generated judged rows (``--rows``,
default 100,000,000; fixed seed) into ``--workdir`` (kept between runs, so the
data is written once): columns ``qid`` (int64, ascending), ``label`` (int8,
0..4, ~60% zeros) and ``score`` (float32, label plus noise). Queries have 10
to 190 rows (~100 on average, so ~1M queries); the rows are written in row
groups of about ``--row-group`` rows that end at query boundaries, as a job
that sorts its output by query would write them.

Each measurement runs in a fresh Python process (``subprocess``) so that its
peak resident memory (``resource.getrusage``, ``ru_maxrss``: imports included)
is its own; each child pickles its ``Evaluation`` for the parent to compare.

* ``stream``: ``evaluate_chunks(ParquetFile(path, pre_buffer=False)
  .iter_batches(batch_size=--batch), ...)`` — reading, decoding and
  evaluating, on one core. Run for ``ndcg@10`` alone and for the eight
  metrics of ``METRICS``. (With pyarrow's default ``pre_buffer=True``,
  ``iter_batches`` holds on to the buffers it has read until the iterator is
  exhausted — about 4.6 MB per 1M-row batch here, 0.5 GiB over 100M rows —
  so memory would grow with the file.)
* ``in-memory``: the three columns read whole into NumPy, then
  ``evaluate(...)`` on the eight metrics (the time is ``evaluate``'s only);
  the reference the other paths must equal exactly (``==``: query ids,
  per-query values, means, empty counts). Skipped with ``--no-in-memory``.
* ``dask aligned``: a ``LocalCluster`` of 2 worker processes with one thread
  each (``--memory-limit`` each); ``dd.read_parquet(path,
  split_row_groups=True)`` — a partition per row group, so whole queries —
  and ``sklearn_rank.dask.evaluate(ddf, aligned=True)``, timed after a
  warm-up on two partitions (imports on the workers). The peak memory
  reported is the largest of the client's and the workers'. Run twice: with
  the workers' default environment, and with ``MALLOC_MMAP_THRESHOLD_`` set to
  32 MiB through ``distributed.nanny.pre-spawn-environ``. Dask's nanny sets
  ``MALLOC_TRIM_THRESHOLD_=65536`` in its workers, which turns off glibc's
  adaptive mmap threshold, so every array over 128 KiB is mmap-ed and
  page-faulted afresh: the engine's per-block temporaries then cost about
  twice as much (measured per 1M-row partition: 35 ms in a plain process,
  80 ms with that variable, 42 ms with both).
* ``dask shuffle``: the same cluster on the first row groups (about
  ``--shuffle-rows`` rows), with ``aligned=False``: every row is moved once
  by ``ddf.shuffle(on="qid")`` before evaluation; compared with the in-memory
  evaluation of the same rows.

Throughput is rows per second of wall time, from the parquet file to the
means. The script ends with PASS/FAIL lines: streamed peak memory <= 2 GiB,
and every path equal to the in-memory evaluation.

Usage (from the repository root)::

    pip install -e ".[dask,bench]"
    python benchmarks/bench_dask.py                     # 100M rows, ~7 GB RAM
    python benchmarks/bench_dask.py --rows 10000000 --json results.json
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from _common import environment, load_average

SEED = 20261121
ROWS = 100_000_000
ROW_GROUP = 1_000_000
BATCH = 1 << 20
SIZES = (10, 190)
METRICS = ["ndcg@10", "map", "mrr", "p@10", "recall@100", "err@10", "r_precision", "gmap"]
MEMORY_TARGET = 2 * 1024**3
COLUMNS = ["qid", "label", "score"]
VERSIONS = ("numpy", "pyarrow", "dask", "distributed", "pandas", "sklearn-rank")


# --- data ---------------------------------------------------------------------------------------

def write_data(path: Path, rows: int, row_group: int) -> None:
    """Write the parquet file, a row group at a time (bounded memory)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(SEED)
    schema = pa.schema([("qid", pa.int64()), ("label", pa.int8()), ("score", pa.float32())])
    tmp = path.with_suffix(".tmp")
    written, next_qid = 0, 0
    with pq.ParquetWriter(tmp, schema) as writer:
        while written < rows:
            sizes = rng.integers(SIZES[0], SIZES[1] + 1, row_group // 50)
            ends = np.cumsum(sizes)
            left = rows - written
            if left > row_group:  # whole queries, at most row_group rows
                sizes = sizes[:max(int(np.searchsorted(ends, row_group, side="right")), 1)]
            else:  # the rest, the last query cut short
                sizes = sizes[:int(np.searchsorted(ends, left)) + 1]
                sizes[-1] -= int(sizes.sum()) - left
            n = int(sizes.sum())
            qid = np.repeat(np.arange(next_qid, next_qid + sizes.shape[0]), sizes)
            label = np.where(rng.random(n) < 0.6, 0, rng.integers(1, 5, n)).astype(np.int8)
            score = (label + rng.normal(scale=1.5, size=n)).astype(np.float32)
            writer.write_table(pa.table({"qid": qid, "label": label, "score": score},
                                        schema=schema), row_group_size=n)
            written += n
            next_qid += sizes.shape[0]
    tmp.rename(path)


def ensure_data(workdir: Path, rows: int, row_group: int) -> Path:
    path = workdir / f"ranking_{rows}_{row_group}_{SEED}.parquet"
    if not path.exists():
        workdir.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        write_data(path, rows, row_group)
        print(f"wrote {path} ({path.stat().st_size / 1e9:.2f} GB) in "
              f"{time.perf_counter() - start:.0f} s", flush=True)
    return path


# --- measurements (each in its own process) -----------------------------------------------------

def _peak_rss() -> int:
    """This process's peak resident memory in bytes."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _warm_up(evaluate_chunks, metrics: list[str]) -> None:
    """Lazy imports and first calls, before timing (as the Dask workers get)."""
    evaluate_chunks([(np.array([0, 1, 2]), np.array([0.1, 0.3, 0.2]), np.zeros(3))],
                    metrics=metrics)


def child_stream(path: str, metrics: list[str], batch: int) -> dict:
    import pyarrow.parquet as pq

    from sklearn_rank.metrics import evaluate_chunks

    _warm_up(evaluate_chunks, metrics)
    start = time.perf_counter()
    # pre_buffer=False: with pyarrow's default (True) iter_batches keeps what
    # it has buffered until the iterator ends, which grows with the file.
    batches = pq.ParquetFile(path, pre_buffer=False).iter_batches(batch_size=batch,
                                                                  columns=COLUMNS)
    ev = evaluate_chunks(batches, metrics=metrics)
    return {"seconds": time.perf_counter() - start, "evaluation": ev}


def _read_columns(path: str, row_groups=None):
    import pyarrow.parquet as pq

    parquet = pq.ParquetFile(path)
    table = (parquet.read(columns=COLUMNS) if row_groups is None
             else parquet.read_row_groups(row_groups, columns=COLUMNS))
    return [table.column(c).to_numpy() for c in COLUMNS]


def child_in_memory(path: str, metrics: list[str]) -> dict:
    from sklearn_rank.metrics import evaluate, evaluate_chunks

    qid, label, score = _read_columns(path)
    _warm_up(evaluate_chunks, metrics)
    start = time.perf_counter()
    ev = evaluate(label, score, qid=qid, metrics=metrics)
    return {"seconds": time.perf_counter() - start, "evaluation": ev}


def child_dask(path: str, metrics: list[str], memory_limit: str, shuffle_rows: int,
               mmap_threshold: int | None) -> dict:
    import logging

    import dask
    import dask.dataframe as dd
    import pyarrow.parquet as pq
    from dask.distributed import Client, LocalCluster

    from sklearn_rank.dask import evaluate as dask_evaluate
    from sklearn_rank.metrics import evaluate

    if mmap_threshold is not None:
        dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_MMAP_THRESHOLD_":
                         mmap_threshold})
    parquet = pq.ParquetFile(path)
    sizes = np.cumsum([parquet.metadata.row_group(i).num_rows
                       for i in range(parquet.num_row_groups)])
    n_groups = int(min(np.searchsorted(sizes, shuffle_rows) + 1, sizes.shape[0]))
    out = {"shuffle_rows": int(sizes[n_groups - 1])}
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      memory_limit=memory_limit, dashboard_address=None,
                      silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
        ddf = dd.read_parquet(path, columns=COLUMNS, split_row_groups=True)
        # Warm-up: imports on the workers, the file's first pages.
        dask_evaluate(ddf.partitions[:2], metrics=metrics, aligned=True)
        start = time.perf_counter()
        out["aligned"] = dask_evaluate(ddf, metrics=metrics, aligned=True)
        out["aligned_seconds"] = time.perf_counter() - start
        out["aligned_partitions"] = ddf.npartitions
        out["aligned_worker_rss"] = max(client.run(_peak_rss).values())

        # The shuffle path on the first row groups.
        start = time.perf_counter()
        out["shuffle"] = dask_evaluate(ddf.partitions[:n_groups], metrics=metrics)
        out["shuffle_seconds"] = time.perf_counter() - start
        out["shuffle_worker_rss"] = max(client.run(_peak_rss).values())
    qid, label, score = _read_columns(path, list(range(n_groups)))
    out["shuffle_reference"] = evaluate(label, score, qid=qid, metrics=metrics)
    return out


def run_child(kind: str, args: list, workdir: Path) -> dict:
    """Run ``child_<kind>(*args)`` in a fresh interpreter; its result and peak memory."""
    result = workdir / f"result_{kind}.pkl"
    code = ("import pickle, sys\n"
            f"sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
            "import bench_dask as b\n"
            f"out = b.child_{kind}(*{args!r})\n"
            "out['peak_rss'] = b._peak_rss()\n"
            f"pickle.dump(out, open({str(result)!r}, 'wb'))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"the {kind} measurement failed:\n{done.stderr[-4000:]}")
    with open(result, "rb") as f:
        out = pickle.load(f)
    result.unlink()
    return out


# --- report -------------------------------------------------------------------------------------

def _row(name, rows, seconds, rss, note=""):
    return {"path": name, "rows": rows, "seconds": seconds, "rows_per_s": rows / seconds,
            "peak_rss_gib": rss / 1024**3, "note": note}


def print_table(rows: list[dict]) -> None:
    print(f"{'path':<34} {'rows':>12} {'seconds':>8} {'rows/s':>12} {'peak RSS':>9}  note")
    for r in rows:
        print(f"{r['path']:<34} {r['rows']:>12,} {r['seconds']:>8.1f} {r['rows_per_s']:>12,.0f} "
              f"{r['peak_rss_gib']:>7.2f} G  {r['note']}")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=ROWS)
    parser.add_argument("--row-group", type=int, default=ROW_GROUP)
    parser.add_argument("--batch", type=int, default=BATCH, help="rows per streamed batch")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/sklearn_rank_bench_dask"))
    parser.add_argument("--memory-limit", default="4GiB", help="per Dask worker")
    parser.add_argument("--shuffle-rows", type=int, default=10_000_000)
    parser.add_argument("--no-in-memory", action="store_true")
    parser.add_argument("--json", type=Path)
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    path = ensure_data(args.workdir, args.rows, args.row_group)
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(path).metadata
    n_rows = meta.num_rows
    print(f"{n_rows:,} rows in {meta.num_row_groups} row groups; {args.batch:,}-row batches; "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}", flush=True)

    table, checks = [], []
    one = run_child("stream", [str(path), ["ndcg@10"], args.batch], args.workdir)
    table.append(_row("stream, ndcg@10", n_rows, one["seconds"], one["peak_rss"],
                      f"{one['evaluation'].n_queries:,} queries"))
    stream = run_child("stream", [str(path), METRICS, args.batch], args.workdir)
    table.append(_row(f"stream, {len(METRICS)} metrics", n_rows, stream["seconds"],
                      stream["peak_rss"]))
    checks.append(("streamed peak memory <= 2 GiB (ndcg@10; 8 metrics)",
                   max(one["peak_rss"], stream["peak_rss"]) <= MEMORY_TARGET))
    reference = stream["evaluation"]
    if not args.no_in_memory:
        memory = run_child("in_memory", [str(path), METRICS], args.workdir)
        table.append(_row(f"in-memory, {len(METRICS)} metrics", n_rows, memory["seconds"],
                          memory["peak_rss"], "evaluate() only, after reading"))
        reference = memory["evaluation"]
        checks.append(("stream == in-memory (8 metrics)", stream["evaluation"] == reference))
        checks.append(("stream == in-memory (ndcg@10)", one["evaluation"].mean["ndcg@10"]
                       == reference.mean["ndcg@10"] and np.array_equal(
                           one["evaluation"].per_query["ndcg@10"],
                           reference.per_query["ndcg@10"])))
    for label, threshold in (("default workers", None), ("mmap threshold 32 MiB", 1 << 25)):
        dask = run_child("dask", [str(path), METRICS, args.memory_limit, args.shuffle_rows,
                                  threshold], args.workdir)
        table.append(_row(f"dask aligned, {len(METRICS)} metrics", n_rows,
                          dask["aligned_seconds"],
                          max(dask["peak_rss"], dask["aligned_worker_rss"]),
                          f"{label}; {dask['aligned_partitions']} partitions"))
        table.append(_row(f"dask shuffle, {len(METRICS)} metrics", dask["shuffle_rows"],
                          dask["shuffle_seconds"],
                          max(dask["peak_rss"], dask["shuffle_worker_rss"]),
                          f"{label}; shuffle on qid first"))
        checks.append((f"dask aligned == {'stream' if args.no_in_memory else 'in-memory'} "
                       f"({label})", dask["aligned"] == reference))
        checks.append((f"dask shuffle == in-memory, same rows ({label})",
                       dask["shuffle"] == dask["shuffle_reference"]))

    print()
    print_table(table)
    print("\nmeans (8 metrics): " + ", ".join(f"{k} {v:.6f}" for k, v in reference.mean.items()))
    print()
    for name, ok in checks:
        print(f"{'PASS' if ok else 'FAIL'}  {name}")
    if args.json:
        env = {**environment(*VERSIONS), "load_average": load_average()}
        args.json.write_text(json.dumps({"rows": table, "checks": dict(checks),
                                         "environment": env}, indent=2))
    return 0 if all(ok for _, ok in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
