"""Benchmark reading and evaluating a TREC run end to end, against peers.

What is measured
----------------
One process. The script writes a synthetic TREC run and its qrels into a
temporary directory (``tempfile``; fixed seed), then every method reads both
files and computes the means of the same 10 trec_eval measures::

    map  ndcg_cut.10  P.10  recall.100  recip_rank  Rprec  bpref  ndcg
    success.1  gm_map

The data, by default (``--lines`` and ``--depth`` change the size):

* a run of 1,000 queries x 1,000 retrieved documents = 1M lines
  ``qid Q0 docno rank score tag``, sorted by decreasing score within each
  query; the scores (BM25-like, ~15..40, some negative at depth) are written
  with 4, 5 or 6 decimals (chosen per query), so, as in real runs, some
  documents of a query share a score (the count is printed: trec_eval breaks
  such ties by decreasing docno, whatever the rank column says);
* qrels with ~200 judged documents per query, graded 0..3, most 0 (~85%): the
  top 50 of the run (a pool), ~10% of ranks 51..1000, and 30..70 documents
  the run did not retrieve (judged from other runs); the chance that a
  judged document is relevant falls with its rank. So some relevant
  documents are not retrieved, most retrieved documents are unjudged, and
  every query has at least one relevant document (ranx needs the same query
  set in both files and has no answer for queries without one).

Methods (each timed from the file paths to the 10 means):

* ``sklearn_rank``: ``trec.read_qrels(path)``, ``trec.read_run(path)`` (the
  "read" column), then ``trec.evaluate_run(qrels, run, measures,
  convention="trec_eval")`` (the
  "evaluate" column). With pyarrow installed (the ``fast`` extra, part of
  ``bench``) plain files are parsed by pyarrow's CSV reader, and their
  layout is checked on a second thread while the table
  is built.
* ``ours (numpy)``: the same with ``engine="numpy"`` (pyarrow's parser off), as for a
  user without pyarrow, and as the ``sklearn-rank`` commands read: the
  file scanned and the ids copied in blocks on up to
  ``SKLEARN_RANK_NUM_THREADS`` threads, plain decimals read without the
  GIL (informative; its evaluation must equal the first).
* ``pytrec_eval``: ``parse_qrel(f)`` and ``parse_run(f)`` on the open files
  (read), then ``RelevanceEvaluator(qrels, measures)``, ``.evaluate(run)``
  and the means with ``pytrec_eval.compute_aggregated_measure`` (evaluate;
  it takes exp(mean) of the per-query logs for ``gm_map``).
* ``ranx``: ``Qrels.from_file(path, kind="trec")``, ``Run.from_file(path,
  kind="trec")`` (read), then ``ranx.evaluate(qrels, run, [...])`` with its
  names: map, ndcg@10, precision@10, recall@100, mrr, r-precision, bpref,
  ndcg, hit_rate@1 (ranx's ``ndcg`` has linear gain, as trec_eval's;
  ``ndcg_burges`` is the exponential one). ranx has no GMAP: its ``gm_map``
  is computed from the per-query AP that ``evaluate`` leaves in
  ``run.scores["map"]``, with trec_eval's floor (exp(mean(log(max(AP,
  1e-5))))), inside the timed call (it costs microseconds). ranx's numba
  functions are compiled (or loaded from its cache) on a small data set
  before timing; ranx runs its kernels on all cores (the thread count is
  printed), the others on one.

With ``--trec-eval PATH`` (a trec_eval 10.0 binary), the script also runs
``sklearn-rank evaluate -m all_trec QRELS RUN --format trec`` and ``trec_eval
-m all_trec QRELS RUN`` as whole processes on the same files, alternating,
and keeps each one's best wall time (bytecode cached, as an installed
package has it); the target is a 2x speed-up with byte-identical output.
Without the option that comparison is skipped with a message.

Timing: a small warm-up data set is evaluated once by every method first
(imports, numba JIT). Then, for ``--repeats`` rounds, the methods run
round-robin (sklearn_rank before each peer, so it gets twice the samples),
each with the garbage collector off (as ``timeit`` does) after a
``gc.collect()``. A method's total is its best wall time over the rounds;
its read and evaluate columns are the split of that fastest run. The load
average is printed: the machine may be shared, and the ratios move with it.

Values: each peer's mean is printed next to ours for every measure, with the
absolute difference of the means and the largest per-query difference
(queries matched by id; for ``gm_map`` per-query values are compared as
max(AP, 1e-5)). The number of queries that differ by more than 1e-6 is
given with how many of them have tied scores in the run (ranx orders ties its
own way, not by docno as trec_eval) and how many have neighbouring scores that
differ as written but are equal as float32: trec_eval, and so pytrec_eval,
keeps scores as float32, so such documents tie there and are ordered by
decreasing docno, whereas an implementation comparing float64 scores (ranx)
orders them by score (this happens with 6 decimals on scores of magnitude
above 16; the default data has a few such queries, ``--lines 5000000`` more).
The script ends with PASS/FAIL lines: ours >= 5x faster end to end than each
peer, agreement with pytrec_eval (the reference implementation) within
1e-6 per query, and identical evaluations from the two readers.

Usage (from the repository root)::

    pip install -e ".[bench]"          # ranx, pytrec-eval-terrier, numba, pyarrow
    python benchmarks/bench_trec.py --quick
    python benchmarks/bench_trec.py --json results.json
    python benchmarks/bench_trec.py --lines 5000000 --repeats 2
    python benchmarks/bench_trec.py --trec-eval /path/to/trec_eval --cli-only

``--trec-eval PATH`` adds whole processes: ``sklearn-rank evaluate`` (with
and without pyarrow installed; the command reads with NumPy either way)
against the trec_eval binary, side by side in every
round, wall time, CPU time and peak RSS of each, and issue 16's target 3 as
PASS/FAIL lines (see ``_trec_process.py``); ``--cli-only`` skips the
in-process comparison above.

Peers that are not installed are reported as such and skipped.
"""

from __future__ import annotations

import os

# numba's OpenMP threads busy-wait after each parallel region by default; on a
# 2-core machine that steals a core from whatever is timed next (methods are
# timed round-robin). Passive waiting costs ranx's kernels nothing measurable.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse  # noqa: E402
import gc  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import asdict, dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402

import _trec_process  # noqa: E402
import numpy as np  # noqa: E402
from _common import Target, dump_json, environment, fmt, load_average, print_targets  # noqa: E402

from sklearn_rank.trec import evaluate_run, read_qrels, read_run  # noqa: E402

SEED = 20240611
LINES = 1_000_000
DEPTH = 1000
POOL_DEPTH = 50  # the run's top ranks are all judged
DEEP_JUDGED = 0.105  # share of ranks POOL_DEPTH+1.. that are judged
UNRETRIEVED_JUDGED = (30, 70)  # judged documents the run missed, per query
COLLECTION = 10_000_000  # document ids D00000000 ..
GRADES = (0.6, 0.3, 0.1)  # levels 1, 2, 3 among the relevant
TAG = "bm25"
QID_BASE = 1001
GMAP_FLOOR = 1e-5  # trec_eval's floor on AP for gm_map
TOLERANCE = 1e-6
SPEEDUP_TARGET = 5.0

# trec_eval measure -> (pytrec_eval result key, ranx metric or None)
MEASURES: dict[str, tuple[str, str | None]] = {
    "map": ("map", "map"),
    "ndcg_cut.10": ("ndcg_cut_10", "ndcg@10"),
    "P.10": ("P_10", "precision@10"),
    "recall.100": ("recall_100", "recall@100"),
    "recip_rank": ("recip_rank", "mrr"),
    "Rprec": ("Rprec", "r-precision"),
    "bpref": ("bpref", "bpref"),
    "ndcg": ("ndcg", "ndcg"),
    "success.1": ("success_1", "hit_rate@1"),
    "gm_map": ("gm_map", None),  # ranx: from its per-query AP
}
RANX_METRICS = [name for _, name in MEASURES.values() if name is not None]

OURS = "sklearn_rank"
OURS_NUMPY = "ours (numpy)"  # the same, with pyarrow's CSV parser switched off
PYTREC = "pytrec_eval"
RANX = "ranx"


# --------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------


@dataclass
class DataInfo:
    """The files written and what they hold."""

    run_path: str
    qrels_path: str
    n_queries: int
    run_lines: int
    qrels_lines: int
    run_mib: float
    qrels_mib: float
    relevant: int  # judged with level >= 1
    relevant_not_retrieved: int
    retrieved_unjudged: int
    tied_rows: int  # run rows sharing their score with a neighbour
    tied_queries: list[str] = field(default_factory=list)
    # queries where neighbours differ as written but are equal as float32
    # (trec_eval, so pytrec_eval, keeps scores as float32: they tie there)
    float32_tied_queries: list[str] = field(default_factory=list)

    def describe(self) -> str:
        return (f"run: {self.run_lines:,} lines ({self.n_queries:,} queries, "
                f"{self.run_mib:.1f} MiB), {self.tied_rows:,} rows in score ties "
                f"({len(self.tied_queries):,} queries; {len(self.float32_tied_queries):,} "
                f"queries with ties at float32 only); qrels: {self.qrels_lines:,} lines "
                f"({self.qrels_mib:.1f} MiB), {self.relevant:,} relevant "
                f"({self.relevant_not_retrieved:,} not retrieved); "
                f"{self.retrieved_unjudged / self.run_lines:.0%} of retrieved docs unjudged")


def make_files(directory: Path, lines: int, depth: int, seed: int = SEED) -> DataInfo:
    """Write ``run.txt`` and ``qrels.txt`` (see the module docstring)."""
    rng = np.random.default_rng(seed)
    depth = max(1, min(depth, lines))
    n_queries = max(1, round(lines / depth))
    directory.mkdir(parents=True, exist_ok=True)
    run_path, qrels_path = directory / "run.txt", directory / "qrels.txt"
    run_out, qrels_out = [], []
    relevant = relevant_missed = unjudged = tied_rows = 0
    tied_queries, float32_tied_queries = [], []
    ranks = np.arange(depth)
    rank_text = [str(r + 1) for r in ranks]
    for i in range(n_queries):
        qid = str(QID_BASE + i)
        n_missed = int(rng.integers(UNRETRIEVED_JUDGED[0], UNRETRIEVED_JUDGED[1] + 1))
        docs = rng.choice(COLLECTION, size=depth + n_missed, replace=False)
        names = [f"D{d:08d}" for d in docs.tolist()]

        # Scores: decreasing, rounded to 4..6 decimals (ties where steps are small).
        steps = rng.exponential(rng.uniform(0.005, 0.03), size=depth)
        scores = rng.uniform(15.0, 40.0) - np.cumsum(steps)
        decimals = int(rng.integers(4, 7))
        score_text = [f"{s:.{decimals}f}" for s in scores.tolist()]
        written = np.asarray(score_text, dtype=np.float64)
        tie = written[1:] == written[:-1]
        if tie.any():
            tied_rows += int(np.count_nonzero(np.r_[tie, False] | np.r_[False, tie]))
            tied_queries.append(qid)
        single = written.astype(np.float32)
        if ((single[1:] == single[:-1]) & ~tie).any():
            float32_tied_queries.append(qid)
        run_out.append("".join(
            f"{qid} Q0 {name} {rank} {score} {TAG}\n"
            for name, rank, score in zip(names[:depth], rank_text, score_text, strict=False)))

        # Judgments: a pool of the top ranks, some deeper ranks, some missed docs.
        judged = np.flatnonzero((ranks < POOL_DEPTH) | (rng.random(depth) < DEEP_JUDGED))
        p_rel = np.concatenate((0.05 + 0.45 * np.exp(-judged / 60.0), np.full(n_missed, 0.12)))
        judged = np.concatenate((judged, np.arange(depth, depth + n_missed)))
        levels = np.where(rng.random(judged.shape[0]) < p_rel,
                          rng.choice(len(GRADES), size=judged.shape[0], p=GRADES) + 1, 0)
        if not levels.any():
            levels[rng.integers(judged.shape[0])] = 1
        relevant += int(np.count_nonzero(levels))
        relevant_missed += int(np.count_nonzero(levels[judged >= depth]))
        unjudged += depth - int(np.count_nonzero(judged < depth))
        pairs = sorted(zip((names[j] for j in judged.tolist()), levels.tolist(), strict=True))
        qrels_out.append("".join(f"{qid} 0 {name} {level}\n" for name, level in pairs))

    run_path.write_text("".join(run_out), encoding="ascii")
    qrels_path.write_text("".join(qrels_out), encoding="ascii")
    qrels_lines = sum(text.count("\n") for text in qrels_out)
    mib = 1 << 20
    return DataInfo(str(run_path), str(qrels_path), n_queries, n_queries * depth, qrels_lines,
                    run_path.stat().st_size / mib, qrels_path.stat().st_size / mib,
                    relevant, relevant_missed, unjudged, tied_rows, tied_queries,
                    float32_tied_queries)


# --------------------------------------------------------------------------
# Methods: paths -> Outcome
# --------------------------------------------------------------------------


@dataclass
class Outcome:
    """One end-to-end run of a method."""

    read: float
    evaluate: float
    means: dict[str, float]  # by trec_eval measure name
    per_query: object  # the method's own per-query result, converted after timing

    @property
    def total(self) -> float:
        return self.read + self.evaluate


def run_ours(info: DataInfo, engine: str = "auto") -> Outcome:
    start = time.perf_counter()
    qrels = read_qrels(info.qrels_path, engine=engine)
    run = read_run(info.run_path, engine=engine)
    read = time.perf_counter()
    # trec_eval's meaning for map, bpref and ndcg too (registry names elsewhere)
    ev = evaluate_run(qrels, run, list(MEASURES), convention="trec_eval")
    means = {m: float(ev.mean[m]) for m in MEASURES}
    done = time.perf_counter()
    return Outcome(read - start, done - read, means, ev)


def run_ours_numpy(info: DataInfo) -> Outcome:
    return run_ours(info, engine="numpy")


def run_pytrec_eval(info: DataInfo) -> Outcome:
    import pytrec_eval

    start = time.perf_counter()
    with open(info.qrels_path, encoding="ascii") as f:
        qrels = pytrec_eval.parse_qrel(f)
    with open(info.run_path, encoding="ascii") as f:
        run = pytrec_eval.parse_run(f)
    read = time.perf_counter()
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES))
    results = evaluator.evaluate(run)
    means = {m: pytrec_eval.compute_aggregated_measure(key, [r[key] for r in results.values()])
             for m, (key, _) in MEASURES.items()}
    done = time.perf_counter()
    return Outcome(read - start, done - read, means, results)


def run_ranx(info: DataInfo) -> Outcome:
    import ranx

    start = time.perf_counter()
    qrels = ranx.Qrels.from_file(info.qrels_path, kind="trec")
    run = ranx.Run.from_file(info.run_path, kind="trec")
    read = time.perf_counter()
    scores = ranx.evaluate(qrels, run, RANX_METRICS)
    ap = np.fromiter(run.scores["map"].values(), dtype=np.float64)
    gm_map = math.exp(np.log(np.maximum(ap, GMAP_FLOOR)).mean())
    means = {m: float(scores[name]) if name else gm_map for m, (_, name) in MEASURES.items()}
    done = time.perf_counter()
    return Outcome(read - start, done - read, means, run.scores)


@dataclass
class Method:
    name: str
    call: Callable[[DataInfo], Outcome] | None  # None: not installed
    note: str = ""


def methods() -> list[Method]:
    try:
        import pyarrow

        parser = (f"pyarrow {pyarrow.__version__}'s CSV parser, layout check on a second "
                  "thread; the rest 1 core")
    except ImportError:
        parser = "pyarrow not installed: NumPy reader; 1 core"
    found = [Method(OURS, run_ours, f"read_qrels + read_run + evaluate_run; {parser}"),
             Method(OURS_NUMPY, run_ours_numpy, "the same without pyarrow; 1 core")]
    try:
        import pytrec_eval  # noqa: F401

        found.append(Method(PYTREC, run_pytrec_eval,
                            "parse_qrel + parse_run + RelevanceEvaluator; 1 core"))
    except ImportError:
        found.append(Method(PYTREC, None, "pytrec_eval not installed"))
    try:
        import numba
        import ranx  # noqa: F401

        found.append(Method(RANX, run_ranx, f"from_file x2 + evaluate (9 metrics, gm_map "
                                            f"from its AP); numba {numba.get_num_threads()} "
                                            f"threads"))
    except ImportError:
        found.append(Method(RANX, None, "ranx not installed"))
    return found


def warm_up(available: list[Method], directory: Path) -> None:
    """Imports and numba compilation on a small data set, not timed.

    ``ranx.evaluate`` calls ``numba.set_num_threads(1)`` for fewer than 10
    queries and never restores it, so the warm-up uses 20 queries and the
    thread count is restored anyway.
    """
    small = make_files(directory, lines=20 * 50, depth=50, seed=SEED + 1)
    threads = None
    try:
        import numba

        threads = numba.get_num_threads()
        from numba.core.errors import NumbaTypeSafetyWarning
    except ImportError:
        NumbaTypeSafetyWarning = Warning  # noqa: N806
    with warnings.catch_warnings():  # ranx's own uint64 -> int64 cast, harmless here
        warnings.simplefilter("ignore", NumbaTypeSafetyWarning)
        for method in available:
            method.call(small)
    if threads is not None:
        numba.set_num_threads(threads)


# --------------------------------------------------------------------------
# Measuring
# --------------------------------------------------------------------------


@dataclass
class Row:
    name: str
    read: float | None = None
    evaluate: float | None = None
    total: float | None = None
    runs: int = 0
    means: dict[str, float] = field(default_factory=dict)
    note: str = ""


def timed_call(method: Method, info: DataInfo) -> Outcome:
    gc.collect()
    gc.disable()
    try:
        return method.call(info)
    finally:
        gc.enable()


def measure(available: list[Method], info: DataInfo, repeats: int
            ) -> tuple[dict[str, Row], dict[str, object]]:
    """Round-robin best-of-``repeats`` timing; ours runs before every peer."""
    rows = {m.name: Row(m.name, note=m.note) for m in available}
    last: dict[str, object] = {}
    ours = next(m for m in available if m.name == OURS)
    peers = [m for m in available if m.name != OURS]
    order = [m for peer in peers for m in (ours, peer)] or [ours]
    for r in range(repeats):
        for method in order:
            outcome = timed_call(method, info)
            row = rows[method.name]
            row.runs += 1
            if row.total is None or outcome.total < row.total:
                row.read, row.evaluate, row.total = (outcome.read, outcome.evaluate,
                                                     outcome.total)
            row.means = outcome.means
            last[method.name] = outcome.per_query
            print(f"  round {r + 1}/{repeats} {method.name:<13} read {outcome.read:7.3f} s  "
                  f"evaluate {outcome.evaluate:7.3f} s  total {outcome.total:7.3f} s",
                  flush=True)
            del outcome
    return rows, last


# --------------------------------------------------------------------------
# Comparing values
# --------------------------------------------------------------------------


@dataclass
class Agreement:
    measure: str
    peer: str
    peer_metric: str
    ours: float
    value: float
    mean_diff: float
    max_query_diff: float | None  # None: no per-query values
    n_differ: int | None = None  # queries differing by more than TOLERANCE
    n_differ_tied: int | None = None  # ... of which have score ties in the run
    n_differ_float32: int | None = None  # ... of which have ties at float32 only


def ours_per_query(ev) -> dict[str, dict[str, float]]:
    qids = ev.qids.tolist()
    out = {}
    for m in MEASURES:
        values = ev.per_query[m]
        if m == "gm_map":
            values = np.maximum(values, GMAP_FLOOR)
        out[m] = dict(zip(qids, values.tolist(), strict=True))
    return out


def pytrec_per_query(results: dict) -> dict[str, dict[str, float]]:
    out = {}
    for m, (key, _) in MEASURES.items():
        if m == "gm_map":  # pytrec_eval gives log(max(AP, 1e-5)) per query
            out[m] = {q: math.exp(r[key]) for q, r in results.items()}
        else:
            out[m] = {q: r[key] for q, r in results.items()}
    return out


def ranx_per_query(scores: dict) -> dict[str, dict[str, float]]:
    out = {}
    for m, (_, name) in MEASURES.items():
        if name is None:
            out[m] = {q: max(v, GMAP_FLOOR) for q, v in scores["map"].items()}
        else:
            out[m] = dict(scores[name])
    return out


def compare(rows: dict[str, Row], last: dict[str, object], info: DataInfo
            ) -> list[Agreement]:
    ours = ours_per_query(last[OURS])
    tied, tied32 = set(info.tied_queries), set(info.float32_tied_queries)
    converters = {PYTREC: pytrec_per_query, RANX: ranx_per_query}
    agreements = []
    for peer, convert in converters.items():
        if peer not in last:
            continue
        theirs = convert(last[peer])
        for m, (key, ranx_name) in MEASURES.items():
            peer_metric = key if peer == PYTREC else (ranx_name or "exp(mean log AP)")
            mine, other = ours[m], theirs[m]
            if mine.keys() != other.keys():
                max_diff = n_differ = n_tied = n_tied32 = None
            else:
                diff = {q: abs(mine[q] - other[q]) for q in mine}
                max_diff = max(diff.values())
                differ = [q for q, d in diff.items() if d > TOLERANCE]
                n_differ, n_tied = len(differ), len(tied.intersection(differ))
                n_tied32 = len(tied32.intersection(differ))
            a, b = rows[OURS].means[m], rows[peer].means[m]
            agreements.append(Agreement(m, peer, peer_metric, a, b, abs(a - b), max_diff,
                                        n_differ, n_tied, n_tied32))
    return agreements


# --------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------


def print_times(rows: dict[str, Row]) -> None:
    ours = rows[OURS].total
    header = (f"{'method':<14} {'read s':>8} {'evaluate s':>10} {'total s':>8} "
              f"{'/ours':>7} {'runs':>5}  note")
    print(header)
    print("-" * len(header))
    for row in rows.values():
        ratio = None if row.total is None or not ours else row.total / ours
        print(f"{row.name:<14} {fmt(row.read, '.3f', 8)} {fmt(row.evaluate, '.3f', 10)} "
              f"{fmt(row.total, '.3f', 8)} {fmt(ratio, '.2f', 7)} {row.runs:>5}  {row.note}")
    print("(best end-to-end wall time over the runs; read/evaluate: the split of that run; "
          "/ours: total / sklearn_rank total)")


def print_values(agreements: list[Agreement]) -> None:
    by_peer: dict[str, dict[str, Agreement]] = {}
    for a in agreements:
        by_peer.setdefault(a.peer, {})[a.measure] = a
    if not by_peer:
        print("no peer to compare values with")
        return
    header = f"{'measure':<12} {'ours':>10}"
    for peer in by_peer:
        header += (f" | {peer + ' metric':<17} {'value':>10} {'|d mean|':>8} "
                   f"{'max|d q|':>8} {'#q>1e-6 (t/f)':>14}")
    print(header)
    print("-" * len(header))
    for m in MEASURES:
        first = next(iter(by_peer.values()))[m]
        line = f"{m:<12} {first.ours:>10.6f}"
        for peer_rows in by_peer.values():
            a = peer_rows[m]
            differ = ("-" if a.n_differ is None
                      else f"{a.n_differ} ({a.n_differ_tied}/{a.n_differ_float32})"
                      if a.n_differ else "0")
            line += (f" | {a.peer_metric:<17} {a.value:>10.6f} {a.mean_diff:>8.1e} "
                     f"{fmt(a.max_query_diff, '.1e', 8)} {differ:>14}")
        print(line)
    print("(|d mean|: |peer mean - ours|; max|d q|: largest per-query difference; #q>1e-6: "
          "queries differing by more than 1e-6;\n t/f: how many of them have tied scores in "
          "the run / scores that differ as written but tie as float32, as trec_eval stores "
          "them)")


def check_targets(rows: dict[str, Row], agreements: list[Agreement], lines: int
                  ) -> list[Target]:
    s = f"[{lines:,} lines]"
    targets = []
    ours = rows[OURS].total
    for peer in (PYTREC, RANX):
        name = f"{s} ours >= {SPEEDUP_TARGET:g}x faster end to end than {peer}"
        peer_s = rows[peer].total if peer in rows else None
        if peer_s is None or not ours:
            targets.append(Target(name, None, "not measured"))
            continue
        ratio = peer_s / ours
        targets.append(Target(name, ratio >= SPEEDUP_TARGET,
                              f"{ratio:.2f}x faster ({peer_s:.3f} s vs {ours:.3f} s)"))
    pytrec = [a for a in agreements if a.peer == PYTREC]
    name = (f"{s} all {len(MEASURES)} measures agree with pytrec_eval within "
            f"{TOLERANCE:g} per query")
    if not pytrec or any(a.max_query_diff is None for a in pytrec):
        targets.append(Target(name, None, "not compared (pytrec_eval missing or query sets "
                                          "differ)"))
    else:
        worst = max(pytrec, key=lambda a: a.max_query_diff)
        targets.append(Target(name, worst.max_query_diff <= TOLERANCE,
                              f"largest difference {worst.max_query_diff:.1e} ({worst.measure})"))
    return targets


def write_json(path: str, env: dict, info: DataInfo, rows: dict[str, Row],
               agreements: list[Agreement], targets: list[Target], load: str,
               processes: list | None = None) -> None:
    data = asdict(info)
    data["tied_queries"] = len(info.tied_queries)
    data["float32_tied_queries"] = len(info.float32_tied_queries)
    for key in ("run_path", "qrels_path"):  # temporary, gone by now
        del data[key]
    payload = {
        "environment": env,
        "measures": list(MEASURES),
        "data": data,
        "load_average": load,
        "rows": [asdict(row) for row in rows.values()],
        "values": [asdict(a) for a in agreements],
        "targets": [asdict(t) for t in targets],
        "processes": [asdict(p) for p in processes or []],
    }
    dump_json(path, payload)


BINARY_TARGET = 2.0  # sklearn-rank evaluate -m all_trec against the trec_eval binary


def versus_binary(trec_eval: str | None, info: DataInfo, repeats: int) -> list[Target]:
    """``sklearn-rank evaluate -m all_trec --format trec`` against ``trec_eval -m
    all_trec`` on the same files, whole processes, side by side (alternating,
    best wall time of each over ``repeats`` rounds after one untimed run of
    each); the two outputs must be byte-identical."""
    import subprocess

    name = (f"[{info.run_lines:,} lines] sklearn-rank evaluate -m all_trec >= "
            f"{BINARY_TARGET:g}x faster end to end than trec_eval -m all_trec")
    if trec_eval is None:
        print("trec_eval binary: skipped (give --trec-eval PATH to time sklearn-rank "
              "evaluate -m all_trec against it)")
        return [Target(name, None, "skipped: no --trec-eval PATH")]
    files = [str(info.qrels_path), str(info.run_path)]
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: bytecode cached
    root = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    commands = {
        "trec_eval": [trec_eval, "-m", "all_trec", *files],
        "sklearn-rank": [sys.executable, "-m", "sklearn_rank", "evaluate", "-m", "all_trec",
                         *files, "--format", "trec"],
    }
    best, outputs = {}, {}
    for round_ in range(repeats + 1):
        for label, command in commands.items():
            start = time.perf_counter()
            done = subprocess.run(command, capture_output=True, env=env, check=False)
            elapsed = time.perf_counter() - start
            if done.returncode != 0:
                return [Target(name, False, f"{label} failed: {done.stderr.decode()[-300:]}")]
            outputs[label] = done.stdout
            if round_:  # the first round warms the caches
                best[label] = min(best.get(label, math.inf), elapsed)
    same = outputs["trec_eval"] == outputs["sklearn-rank"]
    ratio = best["trec_eval"] / best["sklearn-rank"]
    print(f"trec_eval -m all_trec: {best['trec_eval']:.3f} s, sklearn-rank evaluate -m "
          f"all_trec: {best['sklearn-rank']:.3f} s (best of {repeats}, whole processes)")
    return [Target(name, ratio >= BINARY_TARGET,
                   f"{ratio:.2f}x faster ({best['trec_eval']:.3f} s vs "
                   f"{best['sklearn-rank']:.3f} s)"),
            Target(f"[{info.run_lines:,} lines] sklearn-rank's all_trec output is trec_eval's, "
                   "byte for byte", same,
                   "identical" if same else "the outputs differ")]


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=LINES,
                        help=f"run lines (default {LINES:,}; rounded to whole queries)")
    parser.add_argument("--depth", type=int, default=DEPTH,
                        help=f"documents retrieved per query (default {DEPTH})")
    parser.add_argument("--repeats", type=int, default=None,
                        help="rounds of round-robin timing (default 3, 1 with --quick)")
    parser.add_argument("--quick", action="store_true",
                        help="one round (the default size; --lines still applies)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--trec-eval", metavar="PATH",
                        help="the trec_eval 10.0 binary: also time 'sklearn-rank evaluate' "
                             "against it, whole processes (its 10 measures, and -m all_trec "
                             "against trec_eval -m all_trec); skipped without it")
    parser.add_argument("--cli-only", action="store_true",
                        help="with --trec-eval: only the whole-process comparisons")
    args = parser.parse_args(argv)
    if args.repeats is None:
        args.repeats = 1 if args.quick else 3
    if args.lines < 1 or args.depth < 1 or args.repeats < 1:
        parser.error("--lines, --depth and --repeats must be positive")
    if args.cli_only and not args.trec_eval:
        parser.error("--cli-only needs --trec-eval")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    env = environment("sklearn-rank", "numpy", "pyarrow", "numba", "ranx",
                      "pytrec-eval-terrier")
    print("environment: " + ", ".join(f"{k} {v}" for k, v in env.items()))
    print(f"measures: {' '.join(MEASURES)}")
    found = methods()
    available = [m for m in found if m.call is not None]
    with tempfile.TemporaryDirectory(prefix="bench_trec_") as tmp:
        start = time.perf_counter()
        info = make_files(Path(tmp) / "data", args.lines, args.depth)
        print(f"wrote the data in {time.perf_counter() - start:.1f} s: {info.describe()}")
        targets, agreements, rows = [], [], {}
        if not args.cli_only:
            warm_up(available, Path(tmp) / "warm_up")
            print(f"timing: {args.repeats} round(s), round-robin, best end-to-end time kept",
                  flush=True)
            rows, last = measure(available, info, args.repeats)
        if args.trec_eval:
            print(f"\nwhole processes: {args.repeats} round(s) of trec_eval and sklearn-rank "
                  "evaluate side by side, after one untimed run of each", flush=True)
            processes = _trec_process.commands(args.trec_eval, list(MEASURES),
                                               info.qrels_path, info.run_path)
            _trec_process.measure(processes, args.repeats)
        binary = versus_binary(args.trec_eval, info, args.repeats)  # skipped without it
    load = load_average()
    if not args.cli_only:
        for m in found:
            if m.call is None:
                rows[m.name] = Row(m.name, note=m.note)
        print()
        print_times(rows)
        print(f"load average (1, 5, 15 min): {load}\n")
        agreements = compare(rows, last, info)
        print_values(agreements)
        targets = check_targets(rows, agreements, info.run_lines)
        if OURS_NUMPY in last:  # the two readers must give the same evaluation
            same = last[OURS] == last[OURS_NUMPY]
            targets.append(Target(f"[{info.run_lines:,} lines] the NumPy reader gives the "
                                  f"same evaluation as pyarrow's", same,
                                  "identical per-query values" if same
                                  else "the evaluations differ"))
    if args.trec_eval:
        print()
        _trec_process.report(processes)
        print(f"load average (1, 5, 15 min): {load}")
        targets += _trec_process.targets(processes, info.run_lines, Target)
    targets += binary
    print_targets(targets)
    if args.json:
        write_json(args.json, env, info, rows, agreements, targets, load,
                   processes if args.trec_eval else None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
