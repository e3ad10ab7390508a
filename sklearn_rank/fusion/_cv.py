"""Fusion weights chosen by cross-validation over whole queries: :func:`fuse_cv`.

Fusion is query by query, so the metric of a query under given weights does not depend
on the other queries: each candidate weight vector is evaluated once on every query, and
each fold picks, among the candidates, the best mean over its training queries; its test
queries are fused with those weights. The out-of-fold fused run is then an honest
estimate, comparable with the single runs by :func:`~sklearn_rank.stats.compare`.

Its interface: :func:`fuse_cv`, its result :class:`FusionCV` and the candidate grid
:func:`weight_grid`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import combinations
from numbers import Integral, Real

import numpy as np

from .._utils.validation import HasMethods, Interval, StrOptions, validate_params
from ..model_selection import QueryKFold
from ..trec import Qrels, Run, evaluate_run, read_qrels
from ..trec._evaluate import as_table
from ..trec._frames import DataFrame
from ._fuse import fused_values
from ._inputs import Stack, stacked

__all__ = ["FusionCV", "fuse_cv", "weight_grid"]


def _units(step: float) -> int:
    units = 1 / step
    if abs(units - round(units)) > 1e-9:
        raise ValueError(f"step={step!r} must divide 1 into a whole number of parts "
                         "(0.1, 0.05, 0.25, ...).")
    return round(units)


@validate_params({
    "n_runs": [Interval(Integral, 1, None, closed="left")],
    "step": [Interval(Real, 0, 1, closed="right")],
})
def weight_grid(n_runs: int, step: float = 0.1) -> np.ndarray:
    """The candidate weights of :func:`fuse_cv`: every vector of ``n_runs`` multiples of
    ``step`` that sum to 1 (ranx's ``optimize_fusion`` grid).

    Parameters
    ----------
    n_runs : int
        The number of runs.
    step : float, default=0.1
        The spacing; ``1 / step`` must be a whole number.

    Returns
    -------
    ndarray of shape (n_candidates, n_runs)
        ``C(1/step + n_runs - 1, n_runs - 1)`` rows, in decreasing lexicographic order
        (the first run's weight 1 first).

    Examples
    --------
    >>> from sklearn_rank.fusion import weight_grid
    >>> weight_grid(2, 0.25)
    array([[1.  , 0.  ],
           [0.75, 0.25],
           [0.5 , 0.5 ],
           [0.25, 0.75],
           [0.  , 1.  ]])
    """
    units = _units(step)
    # stars and bars: the cut points of `units` items into `n_runs` parts
    rows = []
    for cuts in combinations(range(units + n_runs - 1), n_runs - 1):
        edges = (-1, *cuts, units + n_runs - 1)
        rows.append([edges[i + 1] - edges[i] - 1 for i in range(n_runs)])
    return np.array(rows, dtype=np.float64)[::-1] / units


@dataclass
class FusionCV:
    """Result of :func:`fuse_cv`.

    Attributes
    ----------
    metric : str
        The metric the weights maximise.
    weights : dict of str -> float
        The weights chosen on all queries (those of :attr:`run`).
    fold_weights : list of dict of str -> float
        The weights each fold chose on its training queries.
    run : Run
        The runs fused with :attr:`weights`: the run to use on new queries.
    cv_run : Run
        The out-of-fold fused run: each judged query fused with the weights chosen
        without it.
    evaluations : dict of str -> Evaluation
        :attr:`metric` per query of each single run and of :attr:`cv_run` (under the
        fused run's name), on the judged queries (a query a run misses counts 0).
    best_single : str
        The single run with the best mean.
    """

    metric: str
    weights: dict
    fold_weights: list
    run: Run
    cv_run: Run
    evaluations: dict = field(repr=False)
    best_single: str

    def compare(self, **kwargs):
        """The out-of-fold fused run compared with the best single run (the baseline) by
        :func:`~sklearn_rank.stats.compare`; ``kwargs`` go to it (``test=``,
        ``n_resamples=``, ...).

        Returns
        -------
        Report
        """
        from ..stats import compare

        chosen = {self.best_single: self.evaluations[self.best_single],
                  self.run.name: self.evaluations[self.run.name]}
        return compare(chosen, baseline=self.best_single, metrics=[self.metric], **kwargs)


def _splits(cv, random_state):
    if isinstance(cv, Integral):
        return QueryKFold(n_splits=int(cv), shuffle=True, random_state=random_state)
    return cv


def _fused_run(stack: Stack, values: np.ndarray, keep: np.ndarray, name: str) -> Run:
    order = np.lexsort((-stack.tiebreak[keep], -values[keep], stack.query[keep]))
    rows = np.flatnonzero(keep)[order]
    return Run(stack.qids[stack.query[rows]], stack.docno[rows], values[rows], name=name)


@validate_params({
    "runs": [Iterable, Mapping],
    "qrels": [str, os.PathLike, Qrels, Mapping, HasMethods(("read",)), DataFrame],
    "metric": [str],
    "method": [StrOptions({"wsum", "wmnz", "rrf"})],
    "norm": [str, None],
    "k": [Interval(Real, 0, None, closed="left")],
    "step": [Interval(Real, 0, 1, closed="right")],
    "cv": [Interval(Integral, 2, None, closed="left"), HasMethods(("split",))],
    "random_state": ["random_state"],
    "name": [str],
})
def fuse_cv(runs, qrels, metric: str = "ndcg@10", *, method: str = "wsum",
            norm: str | None = "min-max", k: float = 60, step: float = 0.1, cv=5,
            random_state=0, name: str = "fused") -> FusionCV:
    """Fusion weights chosen by cross-validation over whole queries against a metric.

    Every weight vector of multiples of ``step`` summing to 1 (ranx's
    ``optimize_fusion`` grid) is a candidate. Each fold of ``cv`` (queries kept whole)
    picks the candidate with the best mean ``metric`` over its training queries and
    fuses its test queries with it: the out-of-fold fused run is compared with the best
    single run by :meth:`FusionCV.compare`. The weights chosen on all queries give
    :attr:`FusionCV.run`, the run to use on new queries.

    Parameters
    ----------
    runs : list or dict of str -> Run, DataFrame, dict or path
        Two runs or more, as for :func:`fuse`.
    qrels : path, Qrels, DataFrame or dict
        Relevance judgments, as for :func:`~sklearn_rank.trec.evaluate_run`.
    metric : str, default="ndcg@10"
        Any metric spec :func:`~sklearn_rank.trec.evaluate_run` computes (``"map"``,
        ``"P.10"``, ``"recip_rank"``, ``"ndcg@10"``, ...). Judged queries a run misses
        count 0 (trec_eval's ``-c``).
    method : {"wsum", "wmnz", "rrf"}, default="wsum"
        The weighted fusion (see :func:`fuse`).
    norm : str or None, default="min-max"
        The normalisation, as for :func:`fuse`.
    k : float, default=60
        RRF's constant.
    step : float, default=0.1
        Spacing of the weight grid: ``1 / step`` must be a whole number. The grid has
        ``C(1/step + n_runs - 1, n_runs - 1)`` candidates (11 for two runs, 66 for
        three, 286 for four at 0.1), each evaluated once.
    cv : int or splitter, default=5
        The number of folds of a :class:`~sklearn_rank.model_selection.QueryKFold`
        (shuffled by ``random_state``), or a splitter whose ``split(X, qid=...)``
        takes one row per judged query.
    random_state : int, RandomState instance or None, default=0
        Seed of the folds.
    name : str, default="fused"
        The fused runs' name.

    Returns
    -------
    FusionCV

    Notes
    -----
    Among candidates with equal means the first of the grid wins (the largest first
    weight). The best single run is chosen on all queries, which favours it, not the
    fusion. The out-of-fold run holds the judged queries only.

    Examples
    --------
    >>> from sklearn_rank.datasets import load_sample_trec
    >>> from sklearn_rank.fusion import fuse_cv
    >>> sample = load_sample_trec()
    >>> result = fuse_cv({"bm25": sample.runs["bm25"], "dense": sample.runs["dense"]},
    ...                  sample.qrels, "ndcg@10", cv=3)
    >>> sorted(result.weights)
    ['bm25', 'dense']
    >>> round(sum(result.weights.values()), 12)
    1.0
    """
    _units(step)
    stack = stacked(runs)
    qrels = as_table(qrels, Qrels, read_qrels, "qrels")
    grid = weight_grid(len(stack.names), step)
    keep = np.ones(len(stack.query), dtype=bool)
    per_query, qids = [], None
    for weights in grid:
        values = fused_values(stack, method, norm=norm, weights=weights, k=k)
        evaluation = evaluate_run(qrels, _fused_run(stack, values, keep, name), [metric],
                                  complete=True)
        per_query.append(evaluation.per_query[metric])
        qids = evaluation.qids
    scores = np.array(per_query)  # (candidates, queries)
    chosen = np.empty(len(qids), dtype=np.intp)
    fold_weights = []
    for train, test in _splits(cv, random_state).split(np.zeros((len(qids), 1)), qid=qids):
        best = int(np.argmax(scores[:, train].mean(axis=1)))
        chosen[test] = best
        fold_weights.append(dict(zip(stack.names, grid[best].tolist(), strict=True)))
    final = int(np.argmax(scores.mean(axis=1)))
    return _result(stack, qrels, metric, grid, chosen, final, fold_weights,
                   dict(method=method, norm=norm, k=k), qids, name)


def _result(stack, qrels, metric, grid, chosen, final, fold_weights, options, qids, name):
    judged_position = {q: i for i, q in enumerate(map(str, qids))}
    pair_candidate = np.array([chosen[judged_position[q]] if q in judged_position else -1
                               for q in map(stack.qid_text, range(len(stack.qids)))]
                              )[stack.query]
    values = np.zeros(len(stack.query))
    for candidate in np.unique(chosen):
        rows = pair_candidate == candidate
        values[rows] = fused_values(stack, weights=grid[candidate], **options)[rows]
    cv_run = _fused_run(stack, values, pair_candidate >= 0, name)
    run = _fused_run(stack, fused_values(stack, weights=grid[final], **options),
                     np.ones(len(stack.query), dtype=bool), name)
    evaluations = {}
    for j, run_name in enumerate(stack.names):
        present = ~np.isnan(stack.scores[:, j])
        single = Run(stack.qids[stack.query[present]], stack.docno[present],
                     stack.scores[present, j], name=run_name)
        evaluations[run_name] = evaluate_run(qrels, single, [metric], complete=True)
    best_single = max(stack.names, key=lambda n: evaluations[n].mean[metric])
    evaluations[name] = evaluate_run(qrels, cv_run, [metric], complete=True)
    weights = dict(zip(stack.names, grid[final].tolist(), strict=True))
    return FusionCV(metric=metric, weights=weights,
                    fold_weights=fold_weights, run=run, cv_run=cv_run,
                    evaluations=evaluations, best_single=best_single)
