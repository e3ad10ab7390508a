"""Paired significance tests on per-query values."""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

import numpy as np

from .._utils.validation import Interval, StrOptions, validate_params
from ._constraints import PAIRED, SEED
from ._pairing import paired_values

__all__ = ["RandomizationResult", "paired_ttest", "randomization_test", "wilcoxon_test"]

#: Elements of the largest temporary resampling array (sign or index matrix):
#: 4M, i.e. 32-64 MB whatever the number of queries.
BATCH_ELEMENTS = 1 << 22



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
                       random_state=0) -> RandomizationResult:
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
    random_state : int, numpy Generator or None, default=0
        Seed of the random sign assignments (anything
        :func:`numpy.random.default_rng` takes: a ``BitGenerator`` or
        ``SeedSequence`` too). The fixed default makes the p-value the same
        on every run; ``None`` draws a fresh seed from the operating system,
        and the Monte Carlo p-value then varies by about
        sqrt(p (1 - p) / n_resamples) between runs. Unused when the test is
        exact.

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

    With more queries than ``log2(n_resamples)`` the p-value is a Monte
    Carlo estimate, the same on every run (``random_state=0``):

    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> a, b = rng.uniform(size=40), rng.uniform(size=40)
    >>> randomization_test(a, b).pvalue == randomization_test(a, b).pvalue
    True
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
    # one big draw), and at most BATCH_ELEMENTS signs (memory O(batch x n)).
    batch = max(4, min(2048, BATCH_ELEMENTS // n // 4 * 4))
    count = 0
    for lo in range(0, n_resamples, batch):
        signs = rng.integers(0, 2, size=(min(batch, n_resamples - lo), n), dtype=np.int8)
        signs *= 2
        signs -= 1
        count += int((np.abs(signs @ d) / n >= threshold).sum())
        del signs
    return RandomizationResult(float(d.mean()), (count + 1) / (n_resamples + 1),
                               n_resamples, False)
