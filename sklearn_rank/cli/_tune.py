"""``sklearn-rank tune``: tune an LGBMRanker with GridSearchCV by per-query NDCG@k."""

from __future__ import annotations

import argparse
import sys
import time
from contextlib import contextmanager

from ._process import collect_again
from ._support import EPILOG, CommandError, integer, option, real

__all__ = ["add_parser", "run"]

GRID = {
    "estimator__num_leaves": [7, 31],
    "estimator__learning_rate": [0.05, 0.1],
    "estimator__min_child_samples": [10, 40],
}
METRICS = {  # --metric choice -> spec template
    "ndcg": "ndcg@{k}",
    "ndcg-linear": "ndcg(gain='linear')@{k}",
    "ndcg-classic": "ndcg(discount='classic')@{k}",
}


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "tune",
        help="tune an LGBMRanker with GridSearchCV by per-query NDCG@k",
        description=(
            "Tune QueryRanker(LGBMRanker()) with scikit-learn's GridSearchCV over a small "
            "grid, cross-validated with QueryKFold (queries kept whole) and scored per "
            "query by NDCG@k with exponential gain, linear gain and the classic discount. "
            "Prints the candidates (mean ± standard deviation of the fold scores) under "
            "short column names with a legend of each metric's gain and discount, the best "
            "parameters, the best model's per-query NDCG@k on held-out queries beside "
            "LightGBM's own ndcg@k of it (and why they differ), and a paired test of the "
            "best model against LightGBM's default num_leaves, learning_rate and "
            "min_child_samples on those queries (wins / ties / losses)."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--data", metavar="FILE",
                   help="training data: an SVMlight/LETOR file with qid: fields, or a "
                        "LightGBM text file (LibSVM, or dense CSV/TSV with the label "
                        "first, no header) with its group sizes in --query; plain, gzip, "
                        "bzip2 or xz (default: generated data, "
                        "sklearn_rank.datasets.make_ranking)")
    p.add_argument("--query", metavar="FILE",
                   help="LightGBM query file for --data: one group size per line, each "
                        "query's rows consecutive (default: FILE.query, when it exists)")
    p.add_argument("--n-queries", type=integer(1), default=300,
                   help="number of generated queries (default 300)")
    p.add_argument("--metric", choices=sorted(METRICS), default="ndcg",
                   help="metric to select the best candidate by (default ndcg: "
                        "exponential gain)")
    p.add_argument("--k", type=integer(1, 2**63 - 1), default=10,
                   help="cut-off k of NDCG@k (default 10)")
    p.add_argument("--folds", type=integer(2), default=5,
                   help="cross-validation folds (default 5)")
    p.add_argument("--test-size", type=real(0, 1), default=0.2,
                   help="fraction of rows (whole queries) held out (default 0.2)")
    p.add_argument("--n-estimators", type=integer(1), default=100,
                   help="boosting rounds of every candidate (default 100)")
    p.add_argument("--n-jobs", type=integer(nonzero=True), default=None,
                   help="fits at a time, each on one LightGBM thread (threads of this "
                        "process; -1: one per usable core, -2: all but one, ...; default: "
                        "one per usable core)")
    p.add_argument("--seed", type=integer(0, 2**32 - 1), default=0,
                   help="random seed (default 0)")
    p.set_defaults(func=run, command="tune")


def _load(args):
    """``(X, y, qid, source)`` from --data (and --query) or generated."""
    import numpy as np

    from ..datasets import make_ranking

    if not args.data:
        with option(("--n-queries", args.n_queries)):
            X, y, qid = make_ranking(n_queries=args.n_queries, random_state=args.seed)
        return X, y, qid, f"make_ranking(n_queries={args.n_queries}, random_state={args.seed})"
    X, y, qid = _read_data(args.data, args.query)
    # LGBMRanker's ranking objective, with its default label_gain (31 gains)
    bad = ~np.isfinite(y) | (y < 0) | (y != np.floor(y)) | (y > 30)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise CommandError(
            f"{int(bad.sum())} label(s) are not integers from 0 to 30 (first: "
            f"{float(y[first])!r} in data row {first + 1}); LightGBM's ranking objective "
            "needs graded relevance labels 0, 1, 2, ... (at most 30)", ("--data", args.data))
    return X, y, qid, f"{args.data}"


def _read_data(data: str, query: str | None):
    """``(X, y, qid)`` of --data: an SVMlight / LETOR file (``qid:`` fields or
    group sizes) or a dense LightGBM CSV / TSV file with its group sizes. An
    error names the option of the file at fault: --query for the query file,
    --data for the data file, both when their rows do not add up."""
    import os

    from ..datasets._dense import data_format, read_dense
    from ..datasets._svmlight import query_ids, read_rows
    from ..datasets._svmlight_lines import read_sizes

    query_option = ("--query", query)
    if query is None and os.path.isfile(data + ".query"):
        query, query_option = data + ".query", ("--data", data)  # found beside it
    sizes = None
    if query is not None:
        with option(query_option):
            sizes = read_sizes(query)
    with option(("--data", data)):
        fmt = data_format(data)
        if fmt == "svmlight":
            X, y, qid = read_rows(data)
        else:
            (X, y), qid = read_dense(data, fmt), None
    if qid is None and sizes is None:
        raise CommandError(
            f"{data} has no query ids (" + ("no qid: fields" if fmt == "svmlight" else
                                            f"a dense {fmt.upper()} file has none")
            + "): pass --query FILE, LightGBM's query file of group sizes (one per line, "
            f"for consecutive rows), or put it at {data}.query", ("--data", data))
    with option(*dict([("--data", data), query_option]).items()):
        qid = query_ids(data, query, qid, sizes, X.shape[0])
    return X, y, qid


def _split(qid, test_size, seed):
    """Train and held-out row indices (whole queries)."""
    from ..model_selection import QueryShuffleSplit

    return next(QueryShuffleSplit(n_splits=1, test_size=test_size,
                                  random_state=seed).split(qid=qid))


def _metric_names(k: int, metric: str) -> tuple[list[str], str]:
    """The specs reported (one per --metric choice) and the one refit on."""
    return [template.format(k=k) for template in METRICS.values()], METRICS[metric].format(k=k)


def usable_cores() -> int:
    """The cores this process may use: the CPU affinity, cgroup quotas and
    ``LOKY_MAX_CPU_COUNT`` counted (``joblib.cpu_count()``)."""
    import joblib

    return joblib.cpu_count()


def _threads(n_jobs: int) -> int:
    """``--n-jobs`` as a number of fits at a time (joblib's rule for negatives)."""
    return n_jobs if n_jobs > 0 else max(usable_cores() + 1 + n_jobs, 1)


@contextmanager
def _fits_on_threads():
    """Run scikit-learn's parallel fits on a pool of threads of this process.

    LightGBM trains with the GIL released, so a fit per thread uses the cores
    without worker processes to start, data to copy, or a pool of processes
    that joblib would keep alive after the search (its reusable executor):
    joblib's thread pool ends with the search. Every model has one LightGBM
    thread (``n_jobs=1``): LightGBM keeps the number of OpenMP threads in one
    global setting, which all fits must agree on, and a fit on one thread
    gives the same model whatever runs beside it.
    """
    import joblib

    config = getattr(joblib, "parallel_config", None) or joblib.parallel_backend  # < 1.3
    with config(backend="threading"):
        yield


def search(X, y, qid, *, k=10, metric="ndcg", folds=5, test_size=0.2, n_estimators=100,
           n_jobs=None, seed=0, progress=None):
    """The tuning job without printing.

    ``n_jobs`` fits run at a time (default: one per usable core), each on a
    thread of this process with one LightGBM thread; the results do not
    depend on it. Returns ``(search, evaluation, train, test, default)``: the
    fitted ``GridSearchCV``, the best model's per-query
    :class:`~sklearn_rank.metrics.Evaluation` on the held-out queries, the
    train / held-out row indices, and the held-out evaluation of a ranker with
    LightGBM's default parameters (the same number of trees), trained on the
    same rows.
    """
    from concurrent.futures import ThreadPoolExecutor

    import sklearn
    from lightgbm import LGBMRanker
    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV, ParameterGrid

    from ..estimators import QueryRanker
    from ..metrics import evaluate
    from ..model_selection import QueryKFold, ranking_scoring
    from ._tune_progress import ProgressScorer

    n_jobs = usable_cores() if n_jobs is None else _threads(n_jobs)
    names, refit = _metric_names(k, metric)
    train, test = _split(qid, test_size, seed)
    ranker = QueryRanker(LGBMRanker(n_estimators=n_estimators, verbose=-1,
                                    random_state=seed, n_jobs=1))
    # one scorer for the metrics: one prediction per fold
    scoring = ranking_scoring({name: name for name in names})
    if progress is not None:
        scoring = ProgressScorer(scoring, len(ParameterGrid(GRID)) * folds, progress)
    # error_score="raise": a fit that fails stops the search with its own error
    # (not a warning per fit and NaN scores)
    grid = GridSearchCV(ranker, GRID, scoring=scoring, refit=refit, error_score="raise",
                        cv=QueryKFold(folds, shuffle=True, random_state=seed), n_jobs=n_jobs)
    Xt, yt, qt = X[train], y[train], qid[train]
    with sklearn.config_context(enable_metadata_routing=True), _fits_on_threads():
        if n_jobs == 1:
            grid.fit(Xt, yt, qid=qt)
            default = clone(ranker).fit(Xt, yt, qid=qt)
        else:  # the model with default parameters trains beside the search, on the
            # core the search leaves idle while it refits; the thread ends here
            with ThreadPoolExecutor(max_workers=1) as beside:
                pending = beside.submit(clone(ranker).fit, Xt, yt, qid=qt)
                grid.fit(Xt, yt, qid=qt)
                default = pending.result()
    ev = evaluate(y[test], grid.predict(X[test]), qid=qid[test], metrics=names)
    default_ev = evaluate(y[test], default.predict(X[test]), qid=qid[test], metrics=names)
    return grid, ev, train, test, default_ev


def _check_split(args, qid) -> None:
    """Enough queries for the held-out part and for --folds."""
    import numpy as np

    n = np.unique(qid).shape[0]
    if n < 3:
        raise CommandError(
            f"{n} quer{'y' if n == 1 else 'ies'}: tuning needs at least 3 (training queries "
            "for the folds, and held-out ones)",
            ("--data", args.data) if args.data else ("--n-queries", args.n_queries))
    with option(("--test-size", args.test_size)):
        train, test = _split(qid, args.test_size, args.seed)
    n_train = np.unique(qid[train]).shape[0]
    if n_train < args.folds:
        raise CommandError(
            f"{n_train} training queries (of {n}; --test-size {args.test_size} holds out "
            f"{n - n_train}) are too few for {args.folds} folds: use --folds <= {n_train} or "
            "more queries", ("--folds", args.folds))


def run(args) -> int:
    import numpy as np
    from sklearn.model_selection import ParameterGrid

    from ._tune_report import (
        candidates_table,
        lightgbm_lines,
        significance,
        summary,
        together,
        wrap,
    )

    collect_again()  # (off in the program's process) fits make cyclic garbage
    t0 = time.perf_counter()

    def say(text: str) -> None:  # lines as they come, also into a pipe or a log
        print(wrap(text), flush=True)

    X, y, qid, source = _load(args)
    _check_split(args, qid)
    names, refit = _metric_names(args.k, args.metric)
    grades = together(f"rows per grade {np.bincount(np.asarray(y, int)).tolist()}")
    say(f"data: {source}: {X.shape[0]} rows, {np.unique(qid).shape[0]} queries, "
        f"{X.shape[1]} features; {grades}")
    n_jobs = usable_cores() if args.n_jobs is None else _threads(args.n_jobs)
    say(f"GridSearchCV over {len(ParameterGrid(GRID))} candidates x {args.folds} folds "
        f"(QueryKFold), {n_jobs} fit{'s' if n_jobs > 1 else ''} at a time, refit on "
        f"{refit}; {args.test_size:.0%} of rows held out as whole queries")
    with option(*([("--data", args.data)] if args.data else [])):
        grid, ev, train, test, default_ev = search(
            X, y, qid, k=args.k, metric=args.metric, folds=args.folds,
            test_size=args.test_size, n_estimators=args.n_estimators, n_jobs=n_jobs,
            seed=args.seed, progress=sys.stderr)
    say(f"tuned on {np.unique(qid[train]).shape[0]} queries ({train.shape[0]} rows)\n")
    print(candidates_table(grid.cv_results_, names, refit, args.folds), flush=True)
    best = {k.removeprefix("estimator__"): v for k, v in grid.best_params_.items()}
    say(f"\nbest parameters by {refit}: {best}")
    say(f"\nbest model on {ev.n_queries} held-out queries ({test.shape[0]} rows), per-query "
        f"NDCG@{args.k}; {ev.n_empty[refit]} queries without relevant documents score 0:")
    print(summary(ev, names), flush=True)
    score = grid.predict(X[test])
    print("\n" + lightgbm_lines(y[test], score, qid[test], args.k, ev,
                                ev.n_empty[names[0]]), flush=True)
    print("\n" + significance(ev, default_ev, refit, GRID, args.seed, args.n_estimators),
          flush=True)
    say(f"\ndone in {time.perf_counter() - t0:.1f} s")
    return 0
