"""Tukey's HSD over many systems: the studentized range, and its randomized form."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import permutations
from numbers import Integral

import numpy as np

from .._utils.validation import Interval, validate_params
from ._constraints import SEED

__all__ = ["TukeyResult", "randomized_tukey_hsd", "tukey_hsd"]

#: Elements of the largest temporary array of the randomized test (4M).
_BATCH_ELEMENTS = 1 << 22


@dataclass(frozen=True)
class TukeyResult:
    """Result of :func:`tukey_hsd` and :func:`randomized_tukey_hsd`.

    Attributes
    ----------
    systems : list of str
        The systems, in the order of the rows and columns.
    means : ndarray of shape (n_systems,)
        Each system's mean over the queries.
    statistic : ndarray of shape (n_systems, n_systems)
        ``means[i] - means[j]``.
    pvalue : ndarray of shape (n_systems, n_systems)
        The p-value of each pair, simultaneous over all pairs (the family-wise
        error rate of all of them is controlled); 1 on the diagonal.
    method : {'tukey', 'randomized_tukey'}
    paired : bool
        Whether the test blocks on queries (two-way: system and query).
    n_queries : int
    critical : callable
        ``critical(confidence)``: the difference two means must exceed to
        differ at level ``1 - confidence`` (the honestly significant difference).
    """

    systems: list
    means: np.ndarray
    statistic: np.ndarray
    pvalue: np.ndarray
    method: str
    paired: bool
    n_queries: int
    critical: object = field(repr=False)

    def confidence_interval(self, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """Simultaneous intervals of every ``means[i] - means[j]``: ``(low, high)``,
        each of shape (n_systems, n_systems)."""
        hsd = self.critical(confidence)
        return self.statistic - hsd, self.statistic + hsd

    def simultaneous_intervals(self, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """An interval per system's mean, ``means -+ hsd / 2``: two systems' intervals
        are disjoint exactly when their difference exceeds the honestly significant
        difference ``hsd`` (what :meth:`Report.plot_means
        <sklearn_rank.stats.Report.plot_means>` draws)."""
        half = self.critical(confidence) / 2
        return self.means - half, self.means + half


def _matrix(values) -> tuple[list, np.ndarray]:
    """The systems and their values as an (n_queries, n_systems) matrix."""
    if not hasattr(values, "items"):
        raise TypeError(f"values must be a dict of system -> per-query values; got "
                        f"{type(values).__name__}.")
    systems = list(values)
    if len(systems) < 2:
        raise ValueError(f"Tukey's HSD compares at least 2 systems; got {len(systems)}.")
    columns = [np.asarray(values[s], dtype=np.float64) for s in systems]
    n = columns[0].shape
    for s, c in zip(systems, columns, strict=True):
        if c.ndim != 1 or c.shape != n:
            raise ValueError(f"values[{s!r}] has shape {c.shape}; every system needs one "
                             f"value per query, paired by position ({n[0]} for "
                             f"{systems[0]!r}).")
        if not np.isfinite(c).all():
            raise ValueError(f"values[{s!r}] holds NaN or infinite values; pass the finite "
                             "per-query values of the queries every system answers.")
    x = np.column_stack(columns)
    if x.shape[0] < 2:
        raise ValueError(f"Tukey's HSD needs at least 2 queries; got {x.shape[0]}.")
    return systems, x


@validate_params({"values": [dict], "paired": ["boolean"]})
def tukey_hsd(values: dict, *, paired: bool = True) -> TukeyResult:
    """Tukey's honestly significant difference test of every pair of systems.

    Parameters
    ----------
    values : dict of str -> array-like of shape (n_queries,)
        Each system's per-query values, paired by position (the same queries,
        in the same order; :func:`compare` with ``test='tukey'`` pairs
        evaluations by query id).
    paired : bool, default=True
        True: the two-way design of IR experiments (system and query; the
        error variance is the residual of the additive model, with (k - 1)(n - 1)
        degrees of freedom; Sakai 2018, ch. 4). False: the one-way analysis of
        :func:`scipy.stats.tukey_hsd`, which ignores that the systems answer
        the same queries (and is equal to it).

    Returns
    -------
    result : TukeyResult

    Notes
    -----
    With k systems, n queries and MSE the error mean square, the statistic of
    a pair is ``|mean_i - mean_j| / sqrt(MSE / n)``, and its p-value the
    survival function of the studentized range distribution with k groups
    (:data:`scipy.stats.studentized_range`); the critical difference at level
    1 - confidence is ``q(confidence; k, df) sqrt(MSE / n)``.

    References
    ----------
    Sakai, T. (2018). Laboratory Experiments in Information Retrieval, ch. 4.
    Springer.

    Examples
    --------
    >>> from sklearn_rank.stats import tukey_hsd
    >>> res = tukey_hsd({"A": [0.2, 0.4, 0.3, 0.5], "B": [0.3, 0.5, 0.5, 0.6],
    ...                  "C": [0.1, 0.5, 0.3, 0.3]})
    >>> res.pvalue.round(3).tolist()[0]
    [1.0, 0.129, 0.645]
    """
    from scipy import stats

    systems, x = _matrix(values)
    n, k = x.shape
    means = x.mean(axis=0)
    if paired:
        residual = x - x.mean(axis=1, keepdims=True) - means + x.mean()
        df = (k - 1) * (n - 1)
    else:
        residual = x - means
        df = k * (n - 1)
    mse = float((residual ** 2).sum() / df)
    scale = math.sqrt(mse / n)
    diff = means[:, None] - means[None, :]
    pvalue = np.ones((k, k))
    i, j = np.triu_indices(k, 1)  # each pair once: the distribution's integral is slow
    if scale == 0:
        pvalue[i, j] = np.where(np.abs(diff[i, j]) > 0, 0.0, 1.0)
    else:
        pvalue[i, j] = np.minimum(stats.studentized_range.sf(np.abs(diff[i, j]) / scale, k,
                                                             df), 1.0)
    pvalue[j, i] = pvalue[i, j]

    def critical(confidence: float) -> float:
        return float(stats.studentized_range.ppf(confidence, k, df) * scale)

    return TukeyResult(systems, means, diff, pvalue, "tukey", paired, n, critical)


@validate_params({"values": [dict], "n_resamples": [Interval(Integral, 1, None,
                                                                closed="left")],
                  "random_state": SEED})
def randomized_tukey_hsd(values: dict, *, n_resamples: int = 10000,
                         random_state=0) -> TukeyResult:
    """Carterette's randomized Tukey HSD test of every pair of systems.

    Under the null hypothesis that all systems are equivalent, the k scores
    of a query are exchangeable among the systems; each resample permutes
    them, query by query, and keeps the range of the systems' means (the
    largest minus the smallest). A pair's p-value is the share of resamples
    whose range is at least the pair's observed difference: one
    distribution for every pair, so the p-values are simultaneous.

    Parameters
    ----------
    values : dict of str -> array-like of shape (n_queries,)
        Each system's per-query values, paired by position.
    n_resamples : int, default=10000
        Resamples (random permutations within every query). When
        (k!)^n <= n_resamples every assignment is enumerated and the p-values
        are exact.
    random_state : int, numpy Generator or None, default=0
        Seed of the permutations; ``None`` draws a fresh seed.

    Returns
    -------
    result : TukeyResult

    Notes
    -----
    The Monte Carlo p-value is (1 + resamples with range >= abs(difference)) /
    (1 + n_resamples), as :func:`randomization_test`'s. Memory is a few
    million values at a time; time grows as n_resamples x n x k: about 0.04 s
    a resample with 300,000 queries and 5 systems on one core, so at that
    scale pass fewer resamples (1,000 resolve p-values down to about 0.001)
    or use :func:`tukey_hsd`.

    References
    ----------
    Carterette, B. (2012). Multiple testing in statistical analysis of
    systems-based information retrieval experiments. ACM TOIS 30(1).

    Examples
    --------
    >>> from sklearn_rank.stats import randomized_tukey_hsd
    >>> res = randomized_tukey_hsd({"A": [0.2, 0.4, 0.3, 0.5], "B": [0.3, 0.5, 0.5, 0.6],
    ...                             "C": [0.1, 0.5, 0.3, 0.3]})
    >>> float(res.pvalue[0, 1])  # exact: all (3!)**4 = 1296 permutations
    0.3888888888888889
    """
    if isinstance(n_resamples, bool | np.bool_):
        raise ValueError(f"n_resamples is a number of resamples, not a bool; got "
                         f"{n_resamples!r}.")
    systems, x = _matrix(values)
    n, k = x.shape
    means = x.mean(axis=0)
    diff = means[:, None] - means[None, :]
    exact = n * math.log(math.factorial(k)) <= math.log(n_resamples)
    ranges = _exact_ranges(x) if exact else _random_ranges(x, n_resamples, random_state)
    ranges.sort()
    observed = np.abs(diff)
    threshold = observed - 1e-12 * np.maximum(1.0, observed)  # rounding of the sums
    at_least = ranges.shape[0] - np.searchsorted(ranges, threshold, side="left")
    pvalue = at_least / ranges.shape[0] if exact else (at_least + 1) / (ranges.shape[0] + 1)
    np.fill_diagonal(pvalue, 1.0)

    def critical(confidence: float) -> float:
        return float(np.quantile(ranges, confidence, method="higher"))

    return TukeyResult(systems, means, diff, pvalue.astype(np.float64), "randomized_tukey",
                       True, n, critical)


def _exact_ranges(x: np.ndarray) -> np.ndarray:
    """The range of the means under every one of the (k!)^n permutations."""
    n, k = x.shape
    perms = np.array(list(permutations(range(k))))  # (k!, k)
    table = x[:, perms]  # (n, k!, k): query q's values permuted by each perm
    m = perms.shape[0]
    total = m ** n
    out = np.empty(total)
    step = max(1, _BATCH_ELEMENTS // (n * k))
    rows = np.arange(n)
    for lo in range(0, total, step):
        codes = np.arange(lo, min(lo + step, total), dtype=np.int64)
        digits = (codes[:, None] // (m ** rows)) % m  # (batch, n)
        sums = table[rows, digits].sum(axis=1) / n  # (batch, k)
        out[lo:lo + codes.shape[0]] = sums.max(axis=1) - sums.min(axis=1)
    return out


def _random_ranges(x: np.ndarray, n_resamples: int, random_state) -> np.ndarray:
    """The range of the means under ``n_resamples`` random within-query permutations."""
    n, k = x.shape
    rng = np.random.default_rng(random_state)
    perms = np.array(list(permutations(range(k))), dtype=np.intp)  # (k!, k)
    flat = np.ascontiguousarray(x).ravel()
    starts = (np.arange(n, dtype=np.intp) * k)[None, :, None]  # query q's row in flat
    out = np.empty(n_resamples)
    step = max(1, _BATCH_ELEMENTS // (n * k))
    for lo in range(0, n_resamples, step):
        b = min(step, n_resamples - lo)
        # one uniformly random permutation per (resample, query): an index into perms
        at = perms[rng.integers(0, perms.shape[0], size=(b, n))]  # (b, n, k)
        at += starts
        means = flat[at].mean(axis=1)
        out[lo:lo + b] = means.max(axis=1) - means.min(axis=1)
    return out

