"""Comparing cross-validated candidates: the corrected resampled t-test."""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np

from .._utils.validation import HasMethods, Interval, validate_params

__all__ = ["CVComparison", "compare_cv_candidates", "corrected_resampled_ttest"]


@dataclass(frozen=True)
class CVComparison:
    """Result of :func:`corrected_resampled_ttest`.

    Attributes
    ----------
    statistic : float
        The corrected t statistic of the mean fold difference a - b.
    pvalue : float
        Two-sided p-value, Student's t with ``df`` degrees of freedom.
    df : int
        Folds minus one.
    mean_difference : float
        Mean of the per-fold differences a - b.
    """

    statistic: float
    pvalue: float
    df: int
    mean_difference: float


#: n_test / n_train of a fold.
_RATIO = Interval(Real, 0, None, closed="neither")


@validate_params({"scores_a": ["array-like"], "scores_b": ["array-like"],
                  "test_train_ratio": [_RATIO]})
def corrected_resampled_ttest(scores_a, scores_b, *, test_train_ratio) -> CVComparison:
    """Nadeau & Bengio's corrected resampled t-test on per-fold scores.

    Parameters
    ----------
    scores_a, scores_b : array-like of shape (n_folds,)
        The two models' scores on the same folds (same splits, same order).
    test_train_ratio : float
        n_test / n_train of a fold: 1 / (K - 1) for K-fold cross-validation,
        test_size / train_size for shuffle splits.

    Returns
    -------
    result : CVComparison

    Raises
    ------
    ValueError
        For fewer than 2 folds, scores of different shapes, a score that is
        NaN or infinite (a failed fit), or a ratio that is not a finite
        number > 0.

    Notes
    -----
    The folds of a cross-validation share training data, so their scores are
    correlated and the ordinary paired t-test, which assumes independent
    differences, finds differences far too often. Nadeau & Bengio inflate the
    variance: t = mean(d) / sqrt((1/J + n_test/n_train) var(d)), with J folds
    and df = J - 1.

    Caveats: the correction is a heuristic (it assumes the correlation between
    folds is n_test / n_total); with 5 or 10 folds the test has little power —
    repeated cross-validation (e.g. 10 x 10 folds, Bouckaert & Frank 2004)
    helps; folds must be the same for both models; and a candidate *selected*
    as the best of a grid is optimistically biased, so a small p-value for it
    overstates the evidence. Prefer per-query tests on held-out queries
    (:func:`randomization_test`) when such queries exist.

    References
    ----------
    Nadeau, C., & Bengio, Y. (2003). Inference for the generalization error.
    Machine Learning 52(3), 239-281.

    Examples
    --------
    >>> from sklearn_rank.stats import corrected_resampled_ttest
    >>> res = corrected_resampled_ttest([0.61, 0.63, 0.60, 0.64, 0.62],
    ...                                 [0.60, 0.61, 0.60, 0.62, 0.60], test_train_ratio=1 / 4)
    >>> round(res.statistic, 3), round(res.pvalue, 3), res.df
    (2.333, 0.08, 4)
    """
    from scipy import stats

    a = np.asarray(scores_a, dtype=np.float64)
    b = np.asarray(scores_b, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape or a.shape[0] < 2:
        raise ValueError("scores_a and scores_b must be 1-D with one score per fold, the same "
                         f"folds, at least 2; got shapes {a.shape} and {b.shape}.")
    for scores, name in ((a, "scores_a"), (b, "scores_b")):
        bad = ~np.isfinite(scores)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{name}[{i}] is {scores[i]}: every fold needs a finite score "
                             "(a NaN is usually a fit that failed under GridSearchCV's "
                             "error_score=np.nan; fix or drop that candidate).")
    d = a - b
    j = d.shape[0]
    variance = d.var(ddof=1)
    mean = float(d.mean())
    if variance == 0:
        t = 0.0 if mean == 0 else float(np.sign(mean) * np.inf)
    else:
        t = mean / np.sqrt((1 / j + test_train_ratio) * variance)
    p = float(2 * stats.t.sf(abs(t), df=j - 1))
    return CVComparison(float(t), p, j - 1, mean)


def _candidate(results: dict, which) -> int:
    """The index of a candidate given by its index or its parameters."""
    params = results["params"]
    if isinstance(which, dict):
        matches = [i for i, p in enumerate(params) if p == which]
        if not matches:
            raise ValueError(f"No candidate has the parameters {which}.")
        return matches[0]
    if which >= len(params):
        raise ValueError(f"There are {len(params)} candidates; index {which} is out of range.")
    return int(which)


def _metric(results: dict, metric) -> str:
    """The scoring name to compare on: ``metric``, or the only one of the search."""
    if metric is not None:
        return metric
    if "mean_test_score" not in results:
        names = sorted(k[len("mean_test_"):] for k in results if k.startswith("mean_test_"))
        raise ValueError(f"The search has several metrics ({', '.join(names)}); pass "
                         "metric=... to choose one.")
    return "score"


def _pair(results: dict, metric: str, a, b) -> tuple[int, int]:
    """The indices of the two candidates: by default the best and the runner-up."""
    ranks = np.asarray(results[f"rank_test_{metric}"])
    if ranks.shape[0] < 2 and (a is None or b is None):
        raise ValueError(f"The search has {ranks.shape[0]} candidate; there is nothing to "
                         "compare it with (pass a and b to compare two candidates).")
    order = np.argsort(ranks, kind="stable")
    ia = _candidate(results, a) if a is not None else int(order[0])
    ib = _candidate(results, b) if b is not None else int(order[1] if order[0] == ia
                                                          else order[0])
    return ia, ib


_CANDIDATE = [Interval(Integral, 0, None, closed="left"), dict, None]


@validate_params({
    "search": [dict, HasMethods(("fit",))],
    "a": _CANDIDATE,
    "b": _CANDIDATE,
    "metric": [str, None],
    "test_train_ratio": [_RATIO, None],
})
def compare_cv_candidates(search, a=None, b=None, *, metric=None,
                          test_train_ratio=None) -> CVComparison:
    """Compare two candidates of a search on their per-fold scores.

    Parameters
    ----------
    search : fitted search estimator or dict
        A fitted ``GridSearchCV`` / ``RandomizedSearchCV`` (or its
        ``cv_results_``).
    a, b : int or dict, default=None
        Candidates, as indices into ``cv_results_["params"]`` or their
        parameter dicts. By default ``a`` is the best candidate (rank 1) and
        ``b`` the runner-up.
    metric : str, default=None
        The scoring name for multi-metric searches (``"ndcg@10"``);
        ``"score"`` for single-metric ones.
    test_train_ratio : float, default=None
        n_test / n_train of a fold; by default 1 / (K - 1) for K folds, which
        is right for K-fold cross-validation (QueryKFold) only.

    Returns
    -------
    result : CVComparison
        From :func:`corrected_resampled_ttest` (see its caveats: the best of a
        grid is optimistically biased).

    Examples
    --------
    >>> import sklearn
    >>> from sklearn.model_selection import GridSearchCV
    >>> from sklearn.linear_model import Ridge
    >>> from sklearn_rank.datasets import make_ranking
    >>> from sklearn_rank.estimators import QueryRanker
    >>> from sklearn_rank.model_selection import QueryKFold
    >>> from sklearn_rank.stats import compare_cv_candidates
    >>> X, y, qid = make_ranking(n_queries=60, random_state=0)
    >>> with sklearn.config_context(enable_metadata_routing=True):
    ...     search = GridSearchCV(QueryRanker(Ridge()), {"estimator__alpha": [0.1, 1e4]},
    ...                           cv=QueryKFold(5)).fit(X, y, qid=qid)
    >>> res = compare_cv_candidates(search)  # best vs runner-up, per-fold NDCG@10
    >>> res.df
    4
    """
    results = getattr(search, "cv_results_", search)
    if not isinstance(results, dict) or "params" not in results:
        raise TypeError("search must be a fitted search estimator or its cv_results_ dict.")
    metric = _metric(results, metric)
    folds = sorted(int(k[len("split"):].split("_")[0]) for k in results
                   if k.startswith("split") and k.endswith(f"_test_{metric}"))
    if not folds:
        raise ValueError(f"cv_results_ has no per-fold scores for metric {metric!r}.")
    ia, ib = _pair(results, metric, a, b)
    scores = np.array([[results[f"split{i}_test_{metric}"][c] for i in folds]
                       for c in (ia, ib)])
    ratio = 1 / (len(folds) - 1) if test_train_ratio is None else test_train_ratio
    return corrected_resampled_ttest(scores[0], scores[1], test_train_ratio=ratio)
