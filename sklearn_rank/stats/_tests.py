"""Paired significance tests and bootstrap intervals on per-query values."""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import numpy as np

from ..metrics._evaluation import Evaluation

__all__ = [
    "BootstrapResult",
    "RandomizationResult",
    "bootstrap_ci",
    "paired_ttest",
    "paired_values",
    "randomization_test",
    "wilcoxon_test",
]

_MISSING = ("raise", "drop", "zero")


def _metric_of(evaluation: Evaluation, metric) -> str:
    if metric is None:
        if len(evaluation.metrics) != 1:
            raise ValueError(
                f"The Evaluation holds {len(evaluation.metrics)} metrics "
                f"({', '.join(map(str, evaluation.metrics))}); pass metric=... to choose one."
            )
        return str(evaluation.metrics[0])
    if metric not in evaluation.per_query:
        raise ValueError(
            f"The Evaluation has no metric {metric!r}; it holds "
            f"{', '.join(map(str, evaluation.metrics))}."
        )
    return metric


def _preview(ids) -> str:
    ids = [str(q) for q in ids]
    return ", ".join(ids[:5]) + (f", ... ({len(ids)} in all)" if len(ids) > 5 else "")


def paired_values(a, b, *, metric=None, missing="raise"):
    """Per-query values of two systems, paired.

    Parameters
    ----------
    a, b : array-like of shape (n_queries,) or Evaluation
        Per-query values in the same query order, or two
        :class:`~sklearn_rank.metrics.Evaluation` objects aligned by ``qid``.
    metric : str, default=None
        The metric of the evaluations to take (needed when they hold several).
    missing : {'raise', 'drop', 'zero'}, default='raise'
        For evaluations over different query sets: raise an error listing the
        difference, keep the shared queries, or count a query missing from one
        side as 0 there (trec_eval's ``-c``).

    Returns
    -------
    x, y : ndarray of shape (n_pairs,)
        Paired values; pairs where either value is NaN (queries skipped under
        ``empty='skip'``) are left out.
    qids : ndarray or None
        The query ids of the pairs, for evaluations.
    """
    if missing not in _MISSING:
        raise ValueError(f"missing must be one of {_MISSING}, got {missing!r}.")
    if isinstance(a, Evaluation) != isinstance(b, Evaluation):
        raise TypeError("Pass two Evaluation objects or two arrays of per-query values, "
                        "not one of each.")
    if isinstance(a, Evaluation):
        ka, kb = _metric_of(a, metric), _metric_of(b, metric)
        va, vb = dict(zip(a.qids.tolist(), a.per_query[ka], strict=True)), dict(
            zip(b.qids.tolist(), b.per_query[kb], strict=True))
        only_a = [q for q in va if q not in vb]
        only_b = [q for q in vb if q not in va]
        if (only_a or only_b) and missing == "raise":
            raise ValueError(
                f"The evaluations cover different queries: {len(only_a)} only in the first "
                f"({_preview(only_a)}), {len(only_b)} only in the second "
                f"({_preview(only_b)}). Pass missing='drop' to compare the shared queries, "
                "or missing='zero' to score a missing query 0 (trec_eval -c)."
            )
        qids = [q for q in va if q in vb] if missing == "drop" else list(va) + only_b
        x = np.array([va.get(q, 0.0) for q in qids])
        y = np.array([vb.get(q, 0.0) for q in qids])
        qids = np.asarray(qids)
    else:
        x = np.asarray(a, dtype=np.float64)
        y = np.asarray(b, dtype=np.float64)
        if x.ndim != 1 or x.shape != y.shape:
            raise ValueError(f"a and b must be 1-D arrays of the same length (one value per "
                             f"query); got shapes {x.shape} and {y.shape}.")
        qids = None
    keep = ~(np.isnan(x) | np.isnan(y))
    if not keep.all():
        x, y = x[keep], y[keep]
        qids = None if qids is None else qids[keep]
    if x.shape[0] == 0:
        raise ValueError("There is no pair of per-query values to compare.")
    return x, y, qids


def paired_ttest(a, b, *, metric=None, missing="raise"):
    """Paired t-test on per-query values (:func:`scipy.stats.ttest_rel`).

    Parameters
    ----------
    a, b, metric, missing
        As for :func:`paired_values`.

    Returns
    -------
    result : scipy.stats TtestResult
        ``statistic``, ``pvalue`` (two-sided), ``df``, ``confidence_interval()``.

    Examples
    --------
    >>> from sklearn_rank.stats import paired_ttest
    >>> round(float(paired_ttest([0.5, 0.6, 0.7, 0.9], [0.4, 0.6, 0.5, 0.6]).pvalue), 4)
    0.1027
    """
    from scipy import stats

    x, y, _ = paired_values(a, b, metric=metric, missing=missing)
    return stats.ttest_rel(x, y)


def wilcoxon_test(a, b, *, metric=None, missing="raise", zero_method="wilcox"):
    """Wilcoxon signed-rank test on per-query values (:func:`scipy.stats.wilcoxon`).

    Parameters
    ----------
    a, b, metric, missing
        As for :func:`paired_values`.
    zero_method : {'wilcox', 'pratt', 'zsplit'}, default='wilcox'
        What to do with queries where both systems score the same.

    Returns
    -------
    result : scipy.stats WilcoxonResult
        ``statistic`` and ``pvalue`` (two-sided).

    Examples
    --------
    >>> from sklearn_rank.stats import wilcoxon_test
    >>> float(wilcoxon_test([0.5, 0.6, 0.7, 0.9, 0.3], [0.4, 0.5, 0.5, 0.6, 0.2]).pvalue)
    0.0625
    """
    from scipy import stats

    x, y, _ = paired_values(a, b, metric=metric, missing=missing)
    return stats.wilcoxon(x, y, zero_method=zero_method)


@dataclass(frozen=True)
class RandomizationResult:
    """Result of :func:`randomization_test`.

    Attributes
    ----------
    statistic : float
        The mean per-query difference a - b.
    pvalue : float
        Two-sided p-value.
    n_resamples : int
        Sign assignments drawn (or all 2**n of them when ``exact``).
    exact : bool
        Whether every sign assignment was enumerated.
    """

    statistic: float
    pvalue: float
    n_resamples: int
    exact: bool


def randomization_test(a, b, *, metric=None, missing="raise", n_resamples=10000,
                       random_state=None) -> RandomizationResult:
    """Two-sided paired randomization (Fisher permutation) test on per-query values.

    Under the null hypothesis the two systems are exchangeable on every query,
    so each per-query difference keeps or flips its sign with probability 1/2.
    The p-value is the probability of a mean difference at least as extreme as
    the observed one.

    Parameters
    ----------
    a, b, metric, missing
        As for :func:`paired_values`.
    n_resamples : int, default=10000
        Random sign assignments. With n queries and 2**n <= n_resamples every
        assignment is enumerated and the p-value is exact.
    random_state : int, numpy Generator or None, default=None
        Seed of the random sign assignments.

    Returns
    -------
    result : RandomizationResult
        ``statistic`` (mean difference a - b), ``pvalue``, ``n_resamples``,
        ``exact``.

    Notes
    -----
    The Monte Carlo p-value is (1 + number of resamples with
    abs(mean(s d)) >= abs(mean(d))) / (1 + n_resamples), which never
    underestimates the exact p-value's expectation (Phipson & Smyth, 2010).
    Computed in vectorised batches: sign matrices times the differences.

    References
    ----------
    Smucker, M. D., Allan, J., & Carterette, B. (2007). A comparison of
    statistical significance tests for information retrieval evaluation. CIKM.

    Examples
    --------
    >>> from sklearn_rank.stats import randomization_test
    >>> res = randomization_test([0.5, 0.6, 0.7, 0.9], [0.4, 0.6, 0.5, 0.6])
    >>> res.exact, res.pvalue
    (True, 0.25)
    """
    x, y, _ = paired_values(a, b, metric=metric, missing=missing)
    d = x - y
    n = d.shape[0]
    observed = abs(d.mean())
    threshold = observed - 1e-12 * max(1.0, observed)  # tolerate rounding in the sums
    if n < 63 and 2**n <= n_resamples:
        total = 2**n
        count = 0
        for lo in range(0, total, 1 << 16):
            codes = np.arange(lo, min(lo + (1 << 16), total), dtype=np.int64)
            signs = 1 - 2 * ((codes[:, None] >> np.arange(n)) & 1)
            count += int((np.abs(signs @ d) / n >= threshold).sum())
        return RandomizationResult(float(d.mean()), count / total, total, True)
    rng = np.random.default_rng(random_state)
    count = 0
    for lo in range(0, n_resamples, 2048):
        size = min(2048, n_resamples - lo)
        signs = rng.integers(0, 2, size=(size, n), dtype=np.int8) * 2 - 1
        count += int((np.abs(signs @ d) / n >= threshold).sum())
    return RandomizationResult(float(d.mean()), (count + 1) / (n_resamples + 1),
                               int(n_resamples), False)


@dataclass(frozen=True)
class BootstrapResult:
    """Result of :func:`bootstrap_ci`.

    Attributes
    ----------
    statistic : float
        The mean (of the values, or of the paired differences).
    low, high : float
        The confidence interval.
    confidence : float
    method : str
    standard_error : float
        The bootstrap standard error of the mean.
    """

    statistic: float
    low: float
    high: float
    confidence: float
    method: str
    standard_error: float


def _rng_keyword(function, seed) -> dict:
    """``rng=`` on SciPy >= 1.15, ``random_state=`` before."""
    params = inspect.signature(function).parameters
    return {"rng": seed} if "rng" in params else {"random_state": seed}


def bootstrap_ci(values, baseline=None, *, metric=None, missing="raise", confidence=0.95,
                 n_resamples=10000, method="percentile", random_state=None) -> BootstrapResult:
    """Bootstrap confidence interval of a mean, or of a paired mean difference.

    Parameters
    ----------
    values : array-like of shape (n_queries,) or Evaluation
        Per-query values.
    baseline : array-like or Evaluation, default=None
        When given, the interval is of mean(values - baseline) over paired
        queries (see :func:`paired_values` for ``metric`` and ``missing``).
    metric, missing
        As for :func:`paired_values`.
    confidence : float, default=0.95
    n_resamples : int, default=10000
    method : {'percentile', 'bca'}, default='percentile'
        Percentile interval, or bias-corrected and accelerated (BCa).
    random_state : int, numpy Generator or None, default=None

    Returns
    -------
    result : BootstrapResult
        ``statistic``, ``low``, ``high``, ``confidence``, ``method``,
        ``standard_error``.

    Notes
    -----
    Queries are resampled with replacement (:func:`scipy.stats.bootstrap`);
    every query counts equally (per-query weights of an Evaluation are not
    used). When every value is the same the interval is that value.

    Examples
    --------
    >>> from sklearn_rank.stats import bootstrap_ci
    >>> ci = bootstrap_ci([0.5, 0.6, 0.7, 0.9, 0.3], random_state=0)
    >>> round(ci.statistic, 2), round(ci.low, 2), round(ci.high, 2)
    (0.6, 0.42, 0.78)
    """
    from scipy import stats

    if method not in ("percentile", "bca"):
        raise ValueError(f"method must be 'percentile' or 'bca', got {method!r}.")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}.")
    if baseline is None:
        if isinstance(values, Evaluation):
            key = _metric_of(values, metric)
            d = np.asarray(values.per_query[key], dtype=np.float64)
        else:
            d = np.asarray(values, dtype=np.float64)
        d = d[~np.isnan(d)]
        if d.ndim != 1 or d.shape[0] == 0:
            raise ValueError("values must be a non-empty 1-D array of per-query values.")
    else:
        x, y, _ = paired_values(values, baseline, metric=metric, missing=missing)
        d = x - y
    mean = float(d.mean())
    if np.all(d == d[0]) or d.shape[0] < 2:
        return BootstrapResult(mean, mean, mean, confidence, method, 0.0)
    res = stats.bootstrap((d,), np.mean, n_resamples=n_resamples, vectorized=True,
                          confidence_level=confidence,
                          method="BCa" if method == "bca" else "percentile",
                          **_rng_keyword(stats.bootstrap, np.random.default_rng(random_state)))
    return BootstrapResult(mean, float(res.confidence_interval.low),
                           float(res.confidence_interval.high), confidence, method,
                           float(res.standard_error))
