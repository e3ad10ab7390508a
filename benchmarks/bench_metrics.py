"""Benchmark ``sklearn_rank.metrics.ndcg_score`` against peers on the same data.

What is measured
----------------
One process, one synthetic MSLR-like data set per size (fixed seed): 10k
queries of 1..239 documents each (uniform), ~1.2M rows, labels 0..4 skewed to
0 (p = .50, .25, .15, .07, .03), tie-free float64 scores, contiguous integer
query ids; ``--sizes 1,10`` also runs 10x that (100k queries, ~12M rows) to
show how the time grows.

Every method computes the mean NDCG@10 with a log2 discount:

* ``sklearn_rank`` (default options: exponential gain 2^l - 1,
  ``ties="average"``) on contiguous int qids, on shuffled rows with string
  qids (``"q000123"``, a ``<U`` array) and on shuffled rows with int qids. The
  shuffle is applied to all arrays before timing. Also contiguous with
  ``gain="linear"``, the reference for the linear-gain peers. And
  ``evaluate`` on every metric of the registry at once (``ALL_METRICS``:
  NDCG, DCG, CG, P, recall, F1, hit rate @10, R-precision, MAP, MAP@10, GMAP,
  MRR, ERR@10, RankEff), against ``ndcg@10`` alone.
* a numba kernel (``@njit(parallel=True)``, ``prange`` over queries, a stable
  argsort of -score and a sort of the labels per query) on contiguous data.
  JIT compilation is excluded (warmed up first); computing the query offsets
  from ``qid`` is included. It runs on all cores (the target) and, for
  information, on one. sklearn_rank runs its blocks on up to as many threads
  (``SKLEARN_RANK_NUM_THREADS`` caps them, see ``sklearn_rank.metrics._engine.threads``);
  its numbers do not depend on the number of threads.
* ``ranx.evaluate(qrels, run, "ndcg_burges@10")`` (exponential gain), with
  ``Qrels``/``Run`` built beforehand (construction not timed; JIT warmed up).
  All labels, including 0, are put in the qrels. ``evaluate`` converts both
  to numba typed lists on every call, which is most of its time, so a second
  row (information only, no target) times ranx's metric on lists converted
  beforehand.
* ``pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)``
  plus the mean over queries; the evaluator is built beforehand. trec_eval's
  ``ndcg_cut`` has linear gain and stores scores as float32.
* a loop calling ``sklearn.metrics.ndcg_score([y_q], [s_q], k=10)`` per query
  (linear gain). scikit-learn rejects one-document queries, so the loop scores
  those itself (1 if the label is > 0, else 0, as NDCG defines it). Skipped
  above size 1: it takes seconds per 10k queries.

Each timing is the best of N ``time.perf_counter`` runs with the garbage
collector off (as ``timeit`` does); the sklearn_rank scenarios and the numba
kernel are timed round-robin, so load from other processes hits them alike
(the load average is printed: on a busy machine the ratios move). Peers
print their value, the matching ``sklearn_rank`` value (same gain) and the
absolute difference. The peak extra memory of ``sklearn_rank`` is measured
with ``tracemalloc`` (NumPy reports its allocations to it), in MiB and as a
multiple of the input bytes (``y_true.nbytes + y_score.nbytes + qid.nbytes``).
The script ends with PASS/FAIL lines for the performance targets.

Usage (from the repository root)::

    pip install -e ".[bench]"          # ranx, pytrec-eval-terrier, numba
    python benchmarks/bench_metrics.py --quick
    python benchmarks/bench_metrics.py --sizes 1,10 --json results.json

Peers that are not installed are reported as such and skipped.
"""

from __future__ import annotations

import os

# numba's OpenMP threads busy-wait after each parallel region by default; on a
# 2-core machine that steals a core from whatever is timed next (methods are
# timed round-robin). Passive waiting costs the kernel itself nothing.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse  # noqa: E402
import gc  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
import warnings  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import asdict, dataclass, field  # noqa: E402
from itertools import pairwise  # noqa: E402

import numpy as np  # noqa: E402
from _common import Target, dump_json, environment, fmt, load_average, print_targets  # noqa: E402

from sklearn_rank.metrics import evaluate, ndcg_score  # noqa: E402

K = 10
BASE_QUERIES = 10_000
MAX_DOCS = 239
LABEL_P = (0.50, 0.25, 0.15, 0.07, 0.03)
SEED = 20240611
MIB = 1 << 20

OURS_CONTIGUOUS = "sklearn_rank, contiguous int qid"
OURS_SHUFFLED_STR = "sklearn_rank, shuffled, str qid"
OURS_SHUFFLED_INT = "sklearn_rank, shuffled, int qid"
OURS_LINEAR = "sklearn_rank, contiguous, gain=linear"
# Every metric of the registry at once, one evaluate() call (one sort per query).
ALL_METRICS = ("ndcg@10", "dcg@10", "cg@10", "p@10", "recall@10", "f1@10", "hit_rate@10",
               "r_precision", "map", "map@10", "gmap", "mrr", "err@10", "rank_eff")
OURS_ALL = f"sklearn_rank evaluate, {len(ALL_METRICS)} metrics"
NUMBA = "numba kernel (contiguous)"
NUMBA_1 = "numba kernel, 1 thread"
RANX = "ranx evaluate ndcg_burges@10"
RANX_KERNEL = "ranx ndcg_burges kernel only"
PYTREC = "pytrec_eval ndcg_cut.10"
SKLEARN_LOOP = "sklearn ndcg_score per query"


# --------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------


@dataclass
class Inputs:
    """One layout of the data: what a method receives."""

    y_true: np.ndarray
    y_score: np.ndarray
    qid: np.ndarray

    @property
    def nbytes(self) -> int:
        return self.y_true.nbytes + self.y_score.nbytes + self.qid.nbytes


@dataclass
class Dataset:
    n_queries: int
    contiguous: Inputs
    shuffled_str: Inputs
    shuffled_int: Inputs

    @property
    def n_rows(self) -> int:
        return self.contiguous.y_true.shape[0]


def make_dataset(n_queries: int, seed: int = SEED) -> Dataset:
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, MAX_DOCS + 1, size=n_queries)
    n = int(lengths.sum())
    qid = np.repeat(np.arange(n_queries, dtype=np.int64), lengths)
    y_true = rng.choice(len(LABEL_P), size=n, p=LABEL_P).astype(np.int64)
    y_score = rng.random(n)
    if np.unique(y_score).shape[0] != n:
        raise RuntimeError("the generated scores have ties; change the seed")
    contiguous = Inputs(y_true, y_score, qid)

    perm = rng.permutation(n)
    names = np.char.mod("q%06d", np.arange(n_queries))  # '<U7', built per query
    shuffled_int = Inputs(y_true[perm], y_score[perm], qid[perm])
    shuffled_str = Inputs(shuffled_int.y_true, shuffled_int.y_score, names[qid[perm]])
    return Dataset(n_queries, contiguous, shuffled_str, shuffled_int)


def query_offsets(qid: np.ndarray) -> np.ndarray:
    """Start of every query plus the end, for contiguous qids (O(n))."""
    inner = np.flatnonzero(qid[1:] != qid[:-1]) + 1
    return np.concatenate(([0], inner, [qid.shape[0]])).astype(np.int64)


# --------------------------------------------------------------------------
# Measuring
# --------------------------------------------------------------------------


@dataclass
class Row:
    name: str
    gain: str
    seconds: float | None = None
    value: float | None = None
    reference: float | None = None  # sklearn_rank's value with the same gain
    peak_bytes: int | None = None
    input_bytes: int | None = None
    note: str = ""

    @property
    def diff(self) -> float | None:
        if self.value is None or self.reference is None:
            return None
        return abs(self.value - self.reference)


@dataclass
class SizeResult:
    size: int
    n_queries: int
    n_rows: int
    rows: list[Row] = field(default_factory=list)
    load_average: str = ""

    def seconds(self, name: str) -> float | None:
        for row in self.rows:
            if row.name == name:
                return row.seconds
        return None


@dataclass
class Job:
    """A method ready to be timed: ``call()`` returns its mean NDCG@10."""

    row: Row
    call: Callable[[], float] | None  # None: the method is unavailable


def measure(jobs: list[Job], repeats: int) -> None:
    """Time the jobs round-robin and keep each one's best wall time.

    Interleaving spreads any load from other processes over all the methods
    compared instead of penalising whichever ran at the wrong moment. The
    garbage collector is off while timing, as in ``timeit``.
    """
    jobs = [job for job in jobs if job.call is not None]
    for job in jobs:
        job.row.seconds = float("inf")
    for _ in range(repeats):
        for job in jobs:
            gc.collect()
            gc.disable()
            try:
                start = time.perf_counter()
                value = job.call()
                elapsed = time.perf_counter() - start
            finally:
                gc.enable()
            job.row.seconds = min(job.row.seconds, elapsed)
            job.row.value = float(value)


def timed(func: Callable[[], object]) -> tuple[object, float]:
    """``func()`` and its wall time, for one-off setup steps."""
    start = time.perf_counter()
    result = func()
    return result, time.perf_counter() - start


def peak_extra_bytes(func: Callable[[], object]) -> int:
    """Peak memory allocated by ``func`` above what was live before it."""
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before, _ = tracemalloc.get_traced_memory()
        func()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - before


# --------------------------------------------------------------------------
# sklearn_rank
# --------------------------------------------------------------------------


def ours_scenarios(ds: Dataset) -> list[tuple[str, str, Inputs, dict]]:
    return [
        (OURS_CONTIGUOUS, "exp", ds.contiguous, {}),
        (OURS_SHUFFLED_STR, "exp", ds.shuffled_str, {}),
        (OURS_SHUFFLED_INT, "exp", ds.shuffled_int, {}),
        (OURS_LINEAR, "linear", ds.contiguous, {"gain": "linear"}),
    ]


def ours_jobs(ds: Dataset) -> list[Job]:
    jobs = []
    for name, gain, inp, options in ours_scenarios(ds):
        def call(inp=inp, options=options):
            return ndcg_score(inp.y_true, inp.y_score, qid=inp.qid, k=K, **options)

        call()  # warm-up: the first call imports scikit-learn lazily
        jobs.append(Job(Row(name, gain, input_bytes=inp.nbytes), call))

    def call_all(inp=ds.contiguous):
        # the NDCG@10 column shows the ndcg@10 of the evaluation, for comparison
        return evaluate(inp.y_true, inp.y_score, qid=inp.qid,
                        metrics=ALL_METRICS).mean["ndcg@10"]

    call_all()
    jobs.append(Job(Row(OURS_ALL, "exp", input_bytes=ds.contiguous.nbytes,
                        note="contiguous; one call, every metric of ALL_METRICS"), call_all))
    return jobs


def add_peak_memory(jobs: list[Job]) -> None:
    for job in jobs:
        job.row.peak_bytes = peak_extra_bytes(job.call)


# --------------------------------------------------------------------------
# Peers
# --------------------------------------------------------------------------


def _numba_kernel():
    import numba

    @numba.njit(parallel=True, cache=False)
    def ndcg_at_k(labels, scores, offsets, k):
        n_queries = offsets.shape[0] - 1
        out = np.empty(n_queries)
        for i in numba.prange(n_queries):
            lo, hi = offsets[i], offsets[i + 1]
            lab = labels[lo:hi]
            order = np.argsort(-scores[lo:hi], kind="mergesort")
            ideal = np.sort(lab)[::-1]
            dcg = 0.0
            idcg = 0.0
            for r in range(min(k, hi - lo)):
                disc = 1.0 / np.log2(r + 2.0)
                dcg += (2.0 ** lab[order[r]] - 1.0) * disc
                idcg += (2.0 ** ideal[r] - 1.0) * disc
            out[i] = dcg / idcg if idcg > 0.0 else 0.0
        return out

    return ndcg_at_k, numba.get_num_threads()


def numba_jobs(ds: Dataset) -> list[Job]:
    """The kernel on all threads (the target) and on one (information only:
    the cost per core, and the stable figure when other processes load the
    machine)."""
    try:
        import numba

        kernel, threads = _numba_kernel()
    except ImportError:
        return [Job(Row(NUMBA, "exp", note="numba not installed"), None)]
    inp = ds.contiguous

    def call():
        return kernel(inp.y_true, inp.y_score, query_offsets(inp.qid), K).mean()

    def call_one_thread():
        numba.set_num_threads(1)
        try:
            return call()
        finally:
            numba.set_num_threads(threads)

    call()  # JIT compilation, not timed
    return [Job(Row(NUMBA, "exp", note=f"{threads} threads"), call),
            Job(Row(NUMBA_1, "exp", note="info only"), call_one_thread)]


def trec_dicts(ds: Dataset) -> tuple[dict, dict]:
    """qrels {qid: {doc: label}} and run {qid: {doc: score}}, all labels kept."""
    inp = ds.contiguous
    offsets = query_offsets(inp.qid)
    docs = [f"d{j}" for j in range(MAX_DOCS)]
    labels = inp.y_true.tolist()
    scores = inp.y_score.tolist()
    qrels, run = {}, {}
    for q, (lo, hi) in enumerate(pairwise(offsets.tolist())):
        name = f"q{q:06d}"
        qrels[name] = dict(zip(docs, labels[lo:hi], strict=False))
        run[name] = dict(zip(docs, scores[lo:hi], strict=False))
    return qrels, run


def _ranx_warm_up(ranx, metric: str) -> None:
    """Compile (or load) ranx's numba functions without touching the thread count.

    ``ranx.evaluate`` calls ``numba.set_num_threads(1)`` for fewer than 10
    queries and never restores it, which would also slow the numba kernel
    down, so the warm-up uses more queries and the count is restored anyway.
    """
    import numba
    from numba.core.errors import NumbaTypeSafetyWarning

    threads = numba.get_num_threads()
    qrels = {f"q{i}": {"a": 1, "b": 0} for i in range(16)}
    run = {f"q{i}": {"a": 0.1, "b": 0.2} for i in range(16)}
    with warnings.catch_warnings():  # ranx's own uint64 -> int64 cast, harmless here
        warnings.simplefilter("ignore", NumbaTypeSafetyWarning)
        ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), metric)
    numba.set_num_threads(threads)


def run_ranx(qrels: dict, run: dict, repeats: int) -> list[Row]:
    """``ranx.evaluate`` as users call it, and (for information) its kernel alone.

    ``evaluate`` converts the Qrels and Run to numba typed lists on every call;
    the second row times only the metric on lists converted beforehand.
    """
    try:
        import numba
        import ranx
        from ranx.metrics import ndcg_burges
    except ImportError:
        return [Row(RANX, "exp", note="ranx not installed")]
    metric = f"ndcg_burges@{K}"
    _ranx_warm_up(ranx, metric)
    (ranx_qrels, ranx_run), build = timed(lambda: (ranx.Qrels(qrels), ranx.Run(run)))
    typed = ranx_qrels.to_typed_list(), ranx_run.to_typed_list()
    threads = f"{numba.get_num_threads()} threads"
    jobs = [
        Job(Row(RANX, "exp", note=f"Qrels/Run built before, in {build:.1f} s; {threads}"),
            lambda: ranx.evaluate(ranx_qrels, ranx_run, metric)),
        Job(Row(RANX_KERNEL, "exp", note=f"typed lists built before; info only; {threads}"),
            lambda: ndcg_burges(*typed, K).mean()),
    ]
    for job in jobs:
        job.call()  # the first call on new data is slower (allocation), not timed
    measure(jobs, repeats)
    return [job.row for job in jobs]


def run_pytrec_eval(qrels: dict, run: dict, repeats: int) -> Row:
    try:
        import pytrec_eval
    except ImportError:
        return Row(PYTREC, "linear", note="pytrec_eval not installed")
    key = f"ndcg_cut_{K}"
    evaluator, build = timed(lambda: pytrec_eval.RelevanceEvaluator(qrels, {f"ndcg_cut.{K}"}))

    def call():
        return np.mean([res[key] for res in evaluator.evaluate(run).values()])

    job = Job(Row(PYTREC, "linear",
                  note=f"evaluator built before, in {build:.1f} s; float32 scores"), call)
    measure([job], repeats)
    return job.row


def run_sklearn_loop(ds: Dataset, repeats: int) -> Row:
    from sklearn.metrics import ndcg_score as sk_ndcg_score

    inp = ds.contiguous
    offsets = query_offsets(inp.qid)

    def call():
        values = []
        for lo, hi in pairwise(offsets.tolist()):
            y, s = inp.y_true[lo:hi], inp.y_score[lo:hi]
            if hi - lo == 1:  # scikit-learn raises on one-document queries
                values.append(float(y[0] > 0))
            else:
                values.append(sk_ndcg_score([y], [s], k=K))
        return np.mean(values)

    n_single = int((np.diff(offsets) == 1).sum())
    job = Job(Row(SKLEARN_LOOP, "linear", note=f"{n_single} one-doc queries scored by hand"),
              call)
    measure([job], repeats)
    return job.row


def run_slow_peers(ds: Dataset, size: int, repeats: int) -> list[Row]:
    """The peers that need their own data structures, one at a time (memory)."""
    (qrels, run), build = timed(lambda: trec_dicts(ds))
    print(f"built the qrels/run dicts for ranx and pytrec_eval in {build:.1f} s", flush=True)
    rows = [*run_ranx(qrels, run, repeats), run_pytrec_eval(qrels, run, repeats)]
    del qrels, run
    gc.collect()
    if size == 1:
        rows.append(run_sklearn_loop(ds, repeats))
    else:
        rows.append(Row(SKLEARN_LOOP, "linear", note="skipped (too slow above size 1)"))
    return rows


def run_size(size: int, fast: int, slow: int) -> SizeResult:
    ds = make_dataset(BASE_QUERIES * size)
    result = SizeResult(size, ds.n_queries, ds.n_rows)
    print(f"\n== size {size}: {ds.n_queries:,} queries, {ds.n_rows:,} rows ==", flush=True)
    fast_jobs = ours_jobs(ds) + numba_jobs(ds)
    measure(fast_jobs, fast)  # interleaved: the comparison that is tightest
    add_peak_memory([job for job in fast_jobs if job.row.input_bytes is not None])
    reference = {job.row.gain: job.row.value for job in fast_jobs
                 if job.row.name in (OURS_CONTIGUOUS, OURS_LINEAR)}
    result.rows = [job.row for job in fast_jobs] + run_slow_peers(ds, size, slow)
    for row in result.rows:
        row.reference = reference[row.gain]
    result.load_average = load_average()
    print_table(result)
    return result


# --------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------


def print_table(result: SizeResult) -> None:
    ours = result.seconds(OURS_CONTIGUOUS)
    numba_s = result.seconds(NUMBA)
    header = (f"{'method':<38} {'gain':>6} {'ms':>10} {'/ours':>8} {'/numba':>8} "
              f"{'NDCG@10':>10} {'ours':>10} {'|diff|':>9} {'peak MiB':>9} {'x input':>8}  note")
    print(header)
    print("-" * len(header))
    for row in result.rows:
        ms = None if row.seconds is None else row.seconds * 1e3
        vs_ours = None if row.seconds is None or not ours else row.seconds / ours
        vs_numba = None if row.seconds is None or not numba_s else row.seconds / numba_s
        peak = None if row.peak_bytes is None else row.peak_bytes / MIB
        times = None if row.peak_bytes is None else row.peak_bytes / row.input_bytes
        print(f"{row.name:<38} {row.gain:>6} {fmt(ms, '.1f', 10)} {fmt(vs_ours, '.2f', 8)} "
              f"{fmt(vs_numba, '.2f', 8)} {fmt(row.value, '.6f', 10)} "
              f"{fmt(row.reference, '.6f', 10)} {fmt(row.diff, '.1e', 9)} "
              f"{fmt(peak, '.1f', 9)} {fmt(times, '.2f', 8)}  {row.note}")
    print("(/ours: time / sklearn_rank contiguous; /numba: time / numba kernel; "
          "x input: peak extra memory / input bytes)")
    print(f"load average after this size (1, 5, 15 min): {result.load_average}", flush=True)


def _ratio_target(name, num, den, limit, fmt) -> Target:
    if num is None or den is None:
        return Target(name, None, "not measured")
    ratio = num / den
    return Target(name, ratio <= limit, fmt.format(ratio))


def check_targets(results: list[SizeResult]) -> list[Target]:
    targets = []
    for res in results:
        s = f"[size {res.size}]"
        ours = res.seconds(OURS_CONTIGUOUS)
        numba_s = res.seconds(NUMBA)
        targets += [
            _ratio_target(f"{s} ours (contiguous) <= 0.7x numba on all threads", ours,
                          numba_s, 0.7, "{:.2f}x the numba time"),
            _ratio_target(f"{s} ours (shuffled + str qid) <= 2x numba on all threads",
                          res.seconds(OURS_SHUFFLED_STR), numba_s, 2.0,
                          "{:.2f}x the numba time"),
        ]
        targets.append(_ratio_target(
            f"{s} evaluate on all {len(ALL_METRICS)} metrics within 2.5x of ndcg@10 alone",
            res.seconds(OURS_ALL), ours, 2.5, "{:.2f}x the ndcg@10 time"))
        for peer, factor in ((RANX, 12), (SKLEARN_LOOP, 100)):
            peer_s = res.seconds(peer)
            t = _ratio_target(f"{s} ours >= {factor}x faster than {peer}", ours, peer_s,
                              1 / factor, "")
            if peer_s is not None and ours:
                t.detail = f"{peer_s / ours:.1f}x faster"
            targets.append(t)
        for row in res.rows:
            if row.peak_bytes is not None:
                targets.append(_ratio_target(
                    f"{s} peak extra memory <= 3x input, {row.name}", row.peak_bytes,
                    row.input_bytes, 3.0, "{:.2f}x input bytes"))
    targets += growth_targets(results)
    return targets


def growth_targets(results: list[SizeResult]) -> list[Target]:
    by_size = {res.size: res for res in results}
    if 1 not in by_size or 10 not in by_size:
        return []
    small, large = by_size[1], by_size[10]
    rows_ratio = large.n_rows / small.n_rows
    targets = []
    for name in (OURS_CONTIGUOUS, OURS_SHUFFLED_STR, OURS_SHUFFLED_INT):
        t = _ratio_target(f"growth size 1 -> 10 <= 12x, {name}", large.seconds(name),
                          small.seconds(name), 12.0, "")
        if t.passed is not None:
            ratio = large.seconds(name) / small.seconds(name)
            t.detail = f"time x{ratio:.2f} for rows x{rows_ratio:.2f}"
        targets.append(t)
    return targets


def write_json(path: str, results, targets, env: dict) -> None:
    payload = {
        "environment": env,
        "k": K,
        "sizes": [{**{k: v for k, v in asdict(res).items() if k != "rows"},
                   "rows": [{**asdict(row), "diff": row.diff} for row in res.rows]}
                  for res in results],
        "targets": [asdict(t) for t in targets],
    }
    dump_json(path, payload)


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1,10",
                        help="comma-separated multiples of 10k queries (default: 1,10)")
    parser.add_argument("--quick", action="store_true",
                        help="size 1 only, fewer repeats")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args(argv)
    args.sizes = [1] if args.quick else [int(s) for s in args.sizes.split(",")]
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    fast, slow = (3, 1) if args.quick else (5, 3)
    env = environment("sklearn-rank", "numpy", "scikit-learn", "numba", "ranx",
                      "pytrec-eval-terrier")
    print("environment: " + ", ".join(f"{k} {v}" for k, v in env.items()))
    print(f"NDCG@{K}, log2 discount; best of {fast} runs (sklearn_rank, numba, interleaved), "
          f"{slow} (ranx, pytrec_eval, sklearn loop)")
    results = [run_size(size, fast, slow) for size in args.sizes]
    targets = check_targets(results)
    print_targets(targets)
    if args.json:
        write_json(args.json, results, targets, env)
    return 0


if __name__ == "__main__":
    sys.exit(main())
