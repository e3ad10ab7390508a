"""Paired significance tests and bootstrap intervals on per-query values."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np

from .._validation import Interval, StrOptions, validate_params
from ..metrics._evaluation import Evaluation
from ._pairing import PAIRED, metric_of, paired_values

__all__ = [
    "BootstrapResult",
    "RandomizationResult",
    "bootstrap_ci",
    "paired_ttest",
    "randomization_test",
    "wilcoxon_test",
]

#: Elements of the largest temporary resampling array (sign or index matrix):
#: 4M, i.e. 32-64 MB whatever the number of queries.
_BATCH_ELEMENTS = 1 << 22


#: Seeds of NumPy's ``default_rng``.
SEED = [Interval(Integral, 0, None, closed="left"), np.random.Generator,
        np.random.BitGenerator, np.random.SeedSequence, None]

#: At least 2 resamples: a standard error, an interval.
RESAMPLES = [Interval(Integral, 2, None, closed="left")]

#: Strictly between 0 and 1: a confidence level, a significance level.
LEVEL = [Interval(Real, 0, 1, closed="neither")]


def _all_zero_error(test: str, n: int) -> ValueError:
    return ValueError(
        f"Every one of the {n} paired differences is 0 (the systems score the same on every "
        f"query): the {test} statistic is undefined. There is no evidence of a difference; "
        "randomization_test gives p = 1 and compare() reports p = 1.")


@validate_params(PAIRED)
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

    Raises
    ------
    ValueError
        With fewer than 2 pairs (no degree of freedom), or when every
        difference is 0 (the statistic is 0/0; as R's ``t.test`` refuses
        constant data). :func:`compare` reports p = 1 for the latter.

    Examples
    --------
    >>> from sklearn_rank.stats import paired_ttest
    >>> round(float(paired_ttest([0.5, 0.6, 0.7, 0.9], [0.4, 0.6, 0.5, 0.6]).pvalue), 4)
    0.1027
    """
    from scipy import stats

    x, y, _ = paired_values(a, b, metric=metric, missing=missing)
    if x.shape[0] < 2:
        raise ValueError(f"The paired t-test needs at least 2 paired queries; got "
                         f"{x.shape[0]}.")
    if np.all(x == y):
        raise _all_zero_error("t", x.shape[0])
    return stats.ttest_rel(x, y)


@validate_params({**PAIRED, "zero_method": [StrOptions({"wilcox", "pratt", "zsplit"})]})
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

    Raises
    ------
    ValueError
        With fewer than 2 pairs, or when every difference is 0 (no signed
        rank is left: SciPy answers p = 1, NaN or an error depending on the
        number of queries). :func:`compare` reports p = 1 for the latter.

    Examples
    --------
    >>> from sklearn_rank.stats import wilcoxon_test
    >>> float(wilcoxon_test([0.5, 0.6, 0.7, 0.9, 0.3], [0.4, 0.5, 0.5, 0.6, 0.2]).pvalue)
    0.0625
    """
    from scipy import stats

    x, y, _ = paired_values(a, b, metric=metric, missing=missing)
    if x.shape[0] < 2:
        raise ValueError(f"The Wilcoxon signed-rank test needs at least 2 paired queries; "
                         f"got {x.shape[0]}.")
    if np.all(x == y):
        raise _all_zero_error("Wilcoxon", x.shape[0])
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


@validate_params({**PAIRED, "n_resamples": [Interval(Integral, 1, None, closed="left")],
                  "random_state": SEED})
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
        Seed of the random sign assignments (anything
        :func:`numpy.random.default_rng` takes: a ``BitGenerator`` or
        ``SeedSequence`` too).

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
    Computed in vectorised batches: sign matrices times the differences, a
    few million signs at a time, so memory stays below ~50 MB whatever the
    number of queries; time grows as n_resamples x n. When every difference
    is 0, p = 1.

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
    if isinstance(n_resamples, bool | np.bool_):  # an int to scikit-learn's constraint
        raise ValueError(f"n_resamples is a number of resamples, not a bool; got "
                         f"{n_resamples!r}.")
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
    # Rows of signs per batch: a multiple of 4, so that the int8 draws (four
    # per 32-bit word) follow one stream whatever the batch (the same signs as
    # one big draw), and at most _BATCH_ELEMENTS signs (memory O(batch x n)).
    batch = max(4, min(2048, _BATCH_ELEMENTS // n // 4 * 4))
    count = 0
    for lo in range(0, n_resamples, batch):
        signs = rng.integers(0, 2, size=(min(batch, n_resamples - lo), n), dtype=np.int8)
        signs *= 2
        signs -= 1
        count += int((np.abs(signs @ d) / n >= threshold).sum())
        del signs
    return RandomizationResult(float(d.mean()), (count + 1) / (n_resamples + 1),
                               n_resamples, False)


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
        Seed of the resampling (anything :func:`numpy.random.default_rng` takes).

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
    >>> ci = bootstrap_ci([0.5, 0.6, 0.7, 0.9, 0.3], random_state=0)
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
                          batch=max(1, _BATCH_ELEMENTS // d.shape[0]),
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
