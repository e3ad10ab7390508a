"""Bootstrap confidence intervals of per-query means and paired differences."""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import numpy as np

from .._utils.validation import StrOptions, validate_params
from ..metrics._evaluation import Evaluation
from ._constraints import LEVEL, PAIRED, RESAMPLES, SEED
from ._pairing import metric_of, paired_values
from ._tests import BATCH_ELEMENTS

__all__ = ["BootstrapResult", "bootstrap_ci"]


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


@validate_params({
    "values": ["array-like", Evaluation],
    "baseline": ["array-like", Evaluation, None],
    "metric": PAIRED["metric"],
    "missing": PAIRED["missing"],
    "confidence": LEVEL,
    "n_resamples": RESAMPLES,
    "method": [StrOptions({"percentile", "bca"})],
    "random_state": SEED,
})
def bootstrap_ci(values, baseline=None, *, metric=None, missing="raise", confidence=0.95,
                 n_resamples=10000, method="percentile", random_state=0) -> BootstrapResult:
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
        ``None`` draws a fresh seed from the operating system.

    Returns
    -------
    result : BootstrapResult
        ``statistic``, ``low``, ``high``, ``confidence``, ``method``,
        ``standard_error``.

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
    grows as n_resamples x n. Every query counts equally (per-query weights
    of an Evaluation are not used). When every value is the same, or there
    is one query, the interval is that value.

    The BCa acceleration uses the jackknife of the mean in closed form: the
    jackknife means' deviations are exactly (d_i - mean(d)) / (n - 1), so it
    takes O(n) instead of SciPy's O(n^2) leave-one-out resamples (which agree
    with it to rounding).

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
    res = stats.bootstrap((d,), np.mean, n_resamples=n_resamples, vectorized=True,
                          batch=max(1, BATCH_ELEMENTS // d.shape[0]),
                          confidence_level=confidence, method="percentile",
                          **_rng_keyword(stats.bootstrap, np.random.default_rng(random_state)))
    low, high = res.confidence_interval
    if method == "bca":
        low, high = _bca_interval(d, res.bootstrap_distribution, confidence)
    return BootstrapResult(mean, float(low), float(high), confidence, method,
                           float(res.standard_error))


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
