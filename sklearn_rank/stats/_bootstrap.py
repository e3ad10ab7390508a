"""Bootstrap confidence intervals of per-query means and paired differences."""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import numpy as np

from .._utils.validation import StrOptions, validate_params
from ..metrics._evaluation import Evaluation
from ._constraints import LEVEL, PAIRED, RESAMPLES, SEED
from ._pairing import metric_of, paired_values
from ._tests import APPROXIMATION_MIN_QUERIES, APPROXIMATIONS, BATCH_ELEMENTS

__all__ = ["BootstrapResult", "bootstrap_ci"]

#: Values from which the resampling draws the counts of each distinct value as
#: a multinomial when there are at most n / 8 distinct values (below, or with
#: more distinct values, the queries are resampled as :func:`scipy.stats.bootstrap`
#: resamples them, with the same draws).
MULTINOMIAL_MIN_QUERIES = 2048


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
    approximated : bool
        Whether the interval is the normal approximation of the bootstrap
        distribution with its Cornish-Fisher term (``approximation=``)
        rather than resampled.
    """

    statistic: float
    low: float
    high: float
    confidence: float
    method: str
    standard_error: float
    approximated: bool = False


def _rng_keyword(function, seed) -> dict:
    """``rng=`` on SciPy >= 1.15, ``random_state=`` before."""
    params = inspect.signature(function).parameters
    return {"rng": seed} if "rng" in params else {"random_state": seed}


@validate_params({
    "values": ["array-like", Evaluation],
    "baseline": ["array-like", Evaluation, None],
    "metric": PAIRED["metric"],
    "missing": PAIRED["missing"],
    "confidence": LEVEL,
    "n_resamples": RESAMPLES,
    "method": [StrOptions({"percentile", "bca"})],
    "random_state": SEED,
    "approximation": [StrOptions(APPROXIMATIONS)],
})
def bootstrap_ci(values, baseline=None, *, metric=None, missing="raise", confidence=0.95,
                 n_resamples=10000, method="percentile", random_state=0,
                 approximation="auto") -> BootstrapResult:
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
    random_state : int, numpy Generator or None, default=0
        Seed of the resampling (anything :func:`numpy.random.default_rng`
        takes). The fixed default makes the interval the same on every run;
        ``None`` draws a fresh seed from the operating system. Unused when
        approximated.
    approximation : {'auto', 'normal', 'none'}, default='auto'
        ``'none'``: resample, whatever the number of queries. ``'normal'``:
        the bootstrap distribution of the mean by its normal approximation
        with the Cornish-Fisher term of its skewness (see Notes). ``'auto'``:
        the approximation from 50,000 values, where it is closer to the exact
        bootstrap distribution than a Monte Carlo of 10,000 resamples is;
        resampling below.

    Returns
    -------
    result : BootstrapResult
        ``statistic``, ``low``, ``high``, ``confidence``, ``method``,
        ``standard_error``, ``approximated``.

    Raises
    ------
    ValueError
        For an infinite value (a NaN is a query skipped under
        ``empty='skip'`` and is left out), a bad ``method``, ``confidence`` or
        ``n_resamples``, and for ``method='bca'`` when every bootstrap mean
        falls on one side of the observed mean (too few resamples).

    Notes
    -----
    Queries are resampled with replacement (:func:`scipy.stats.bootstrap`,
    with the same random draws), a few million values at a time, so memory
    is O(n_resamples + a few million) whatever the number of queries; time
    grows as n_resamples x n. From 2048 values with at most n / 8 distinct
    ones (a metric of few levels: precision, a reciprocal rank, many
    queries at 0), each resample is drawn as the counts of the distinct
    values, a multinomial: the same distribution in n_resamples x (distinct
    values) operations. Every query counts equally (per-query weights
    of an Evaluation are not used). When every value is the same, or there
    is one query, the interval is that value.

    The BCa acceleration uses the jackknife of the mean in closed form: the
    jackknife means' deviations are exactly (d_i - mean(d)) / (n - 1), so it
    takes O(n) instead of SciPy's O(n^2) leave-one-out resamples (which agree
    with it to rounding).

    The approximation (``approximation='normal'``, or ``'auto'`` from
    50,000 values) is documented as such. The bootstrap distribution of the
    mean is that of the mean of n draws from the n values, whose standard
    deviation is exactly se = sqrt(m2 / n) and skewness exactly
    g = m3 / m2^(3/2) / sqrt(n) (m2, m3 the central moments of the values,
    divided by n). Its quantile at level q is taken as
    mean + se (z + g (z^2 - 1) / 6), z = Phi^-1(q) (Cornish-Fisher); the
    neglected terms are O(1/n) standard errors (below 1e-4 of one at
    n = 50,000 for moderate kurtosis), while the Monte Carlo error of a 2.5%
    quantile from 10,000 resamples is about 0.03 of one. For BCa, the
    bias correction z0 = Phi^-1(1/2 + g phi(0) / 6) (Edgeworth) and the
    acceleration g / 6 (the jackknife's, in closed form) move the levels as
    SciPy's BCa does. ``standard_error`` is then se (the resampled one is its
    Monte Carlo estimate).

    Examples
    --------
    >>> from sklearn_rank.stats import bootstrap_ci
    >>> ci = bootstrap_ci([0.5, 0.6, 0.7, 0.9, 0.3])  # random_state=0: the same every run
    >>> round(ci.statistic, 2), round(ci.low, 2), round(ci.high, 2)
    (0.6, 0.42, 0.78)
    """
    from scipy import stats

    if baseline is None:
        d = _values(values, metric)
    else:
        x, y, _ = paired_values(values, baseline, metric=metric, missing=missing)
        d = x - y
    mean = float(d.mean())
    if np.all(d == d[0]) or d.shape[0] < 2:
        return BootstrapResult(mean, mean, mean, confidence, method, 0.0)
    if approximation == "normal" or (approximation == "auto"
                                     and d.shape[0] >= APPROXIMATION_MIN_QUERIES):
        return _approximate(d, confidence, method)
    rng = np.random.default_rng(random_state)
    values, counts = np.unique(d, return_counts=True)
    if d.shape[0] >= MULTINOMIAL_MIN_QUERIES and values.shape[0] * 8 <= d.shape[0]:
        means = _multinomial_means(values, counts, n_resamples, rng)
        low, high = (_bca_interval(d, means, confidence) if method == "bca" else
                     _percentile_interval(means, confidence))
        return BootstrapResult(mean, float(low), float(high), confidence, method,
                               float(means.std(ddof=1)))
    res = stats.bootstrap((d,), np.mean, n_resamples=n_resamples, vectorized=True,
                          batch=max(1, BATCH_ELEMENTS // d.shape[0]),
                          confidence_level=confidence, method="percentile",
                          **_rng_keyword(stats.bootstrap, rng))
    low, high = res.confidence_interval
    if method == "bca":
        low, high = _bca_interval(d, res.bootstrap_distribution, confidence)
    return BootstrapResult(mean, float(low), float(high), confidence, method,
                           float(res.standard_error))


def _multinomial_means(values: np.ndarray, counts: np.ndarray, n_resamples: int,
                       rng) -> np.ndarray:
    """Bootstrap means drawn as the counts of each distinct value: a resample of
    n queries with replacement holds value k a Multinomial(n, counts / n)
    number of times, so its mean has exactly the distribution of resampling
    the queries, at a cost of n_resamples x (distinct values)."""
    n = int(counts.sum())
    rows = max(1, BATCH_ELEMENTS // values.shape[0])
    means = np.empty(n_resamples)
    for lo in range(0, n_resamples, rows):
        draws = rng.multinomial(n, counts / n, size=min(rows, n_resamples - lo))
        means[lo:lo + draws.shape[0]] = draws @ values / n
    return means


def _percentile_interval(means: np.ndarray, confidence: float):
    """The percentile interval of the bootstrap means, as SciPy's."""
    from scipy import stats

    alphas = np.array([(1 - confidence) / 2, (1 + confidence) / 2])
    if hasattr(stats, "quantile"):  # SciPy >= 1.15, as its bootstrap does
        return stats.quantile(means, alphas)
    return np.percentile(means, alphas * 100)  # pragma: no cover - older SciPy


def _approximate(d: np.ndarray, confidence: float, method: str) -> BootstrapResult:
    """The interval from the normal approximation of the bootstrap distribution of
    the mean with its Cornish-Fisher (skewness) term."""
    from scipy.special import ndtr, ndtri

    n = d.shape[0]
    mean = float(d.mean())
    u = d - mean
    m2 = float(np.dot(u, u)) / n
    m3 = float(np.sum(u**3)) / n
    se = np.sqrt(m2 / n)
    g = m3 / m2**1.5 / np.sqrt(n)
    z_alpha = float(ndtri((1 - confidence) / 2))
    levels = np.array([ndtr(z_alpha), ndtr(-z_alpha)])
    if method == "bca":
        z0 = float(ndtri(0.5 + g / (6 * np.sqrt(2 * np.pi))))
        a_hat = g / 6
        levels = np.array([ndtr(z0 + z / (1 - a_hat * z))
                           for z in (z0 + z_alpha, z0 - z_alpha)])
    z = ndtri(levels)
    low, high = mean + se * (z + g * (z * z - 1) / 6)
    return BootstrapResult(mean, float(low), float(high), confidence, method, float(se),
                           True)


def _values(values, metric) -> np.ndarray:
    """The per-query values of one system, without the NaN of skipped queries."""
    if isinstance(values, Evaluation):
        d = np.asarray(values.per_query[metric_of(values, metric)], dtype=np.float64)
    else:
        d = np.asarray(values, dtype=np.float64)
    if d.ndim != 1:
        raise ValueError(f"values must be a 1-D array of per-query values; got shape "
                         f"{d.shape}.")
    if np.isinf(d).any():
        i = int(np.flatnonzero(np.isinf(d))[0])
        raise ValueError(f"values[{i}] is {d[i]}; per-query values must be finite (or "
                         "NaN for a skipped query).")
    d = d[~np.isnan(d)]
    if d.shape[0] == 0:
        raise ValueError("values must be a non-empty 1-D array of per-query values.")
    return d


def _bca_interval(d: np.ndarray, theta_hat_b: np.ndarray, confidence: float):
    """SciPy's BCa interval of the mean (Efron & Tibshirani 1993, 14.3), with
    the jackknife in closed form."""
    from scipy import stats
    from scipy.special import ndtr, ndtri

    theta_hat = d.mean()
    below = (np.count_nonzero(theta_hat_b < theta_hat)
             + np.count_nonzero(theta_hat_b <= theta_hat))
    z0 = ndtri(below / (2 * theta_hat_b.shape[0]))
    if not np.isfinite(z0):
        raise ValueError(
            f"The BCa interval is undefined: all {theta_hat_b.shape[0]} bootstrap means lie "
            "on one side of the observed mean. Use more resamples or method='percentile'.")
    u = d - theta_hat  # (n - 1) x (mean of the jackknife means - jackknife mean i)
    n = float(d.shape[0])
    a_hat = 1 / 6 * (np.sum(u**3) / n**3) / (np.sum(u**2) / n**2) ** (3 / 2)
    z_alpha = float(ndtri((1 - confidence) / 2))
    alphas = np.array([ndtr(z0 + z / (1 - a_hat * z)) for z in (z0 + z_alpha, z0 - z_alpha)])
    if hasattr(stats, "quantile"):  # SciPy >= 1.15, as its bootstrap does
        return stats.quantile(theta_hat_b, alphas)
    return np.percentile(theta_hat_b, alphas * 100)  # pragma: no cover - older SciPy
