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

#: Nonzero paired differences (queries, for the bootstrap) from which
#: ``approximation="auto"`` takes the normal approximation with its Edgeworth
#: (Cornish-Fisher) term instead of resampling: its error is then below 1e-5
#: in a p-value or in units of the standard error, far below the Monte Carlo
#: error of the resampling (about 0.002 for p = 0.05 with 10,000 resamples).
APPROXIMATION_MIN_QUERIES = 50_000

#: Queries from which the Monte Carlo randomization test sums the signed
#: differences by bytes: a table of the 256 subset sums of each 8 queries,
#: looked up by one random byte (8 signs) at a time (8x fewer operations than
#: a sign matrix, in blocks of the table that stay in cache).
TABLE_MIN_QUERIES = 2048

#: Groups of 8 queries (256 subset sums each: 128 KB) per block of the table.
_TABLE_BLOCK = 64

#: The ``approximation=`` values.
APPROXIMATIONS = {"auto", "normal", "none"}


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
        Sign assignments drawn (or all 2**m of them when ``exact``, m the
        number of nonzero differences).
    exact : bool
        Whether every sign assignment was enumerated.
    method : {'exact', 'monte carlo', 'normal'}
        How the p-value was computed: by enumerating every sign assignment,
        from random ones, or by the normal approximation with its Edgeworth
        term (``approximation=``).
    """

    statistic: float
    pvalue: float
    n_resamples: int
    exact: bool
    method: str = "monte carlo"


@validate_params({**PAIRED, "n_resamples": [Interval(Integral, 1, None, closed="left")],
                  "random_state": SEED, "approximation": [StrOptions(APPROXIMATIONS)]})
def randomization_test(a, b, *, metric=None, missing="raise", n_resamples=10000,
                       random_state=0, approximation="auto") -> RandomizationResult:
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
        Random sign assignments. With m nonzero differences and
        2**m <= n_resamples every assignment of their signs is enumerated and
        the p-value is exact (a zero difference is the same under either
        sign, so queries where the systems tie are left out of the draws:
        the same distribution).
    random_state : int, numpy Generator or None, default=0
        Seed of the random sign assignments (anything
        :func:`numpy.random.default_rng` takes: a ``BitGenerator`` or
        ``SeedSequence`` too). The fixed default makes the p-value the same
        on every run; ``None`` draws a fresh seed from the operating system,
        and the Monte Carlo p-value then varies by about
        sqrt(p (1 - p) / n_resamples) between runs. Unused when the test is
        exact or approximated.
    approximation : {'auto', 'normal', 'none'}, default='auto'
        ``'none'``: the exact enumeration or the Monte Carlo test, whatever
        the number of queries. ``'normal'``: the normal approximation of the
        sign-flip distribution with its Edgeworth term (see Notes).
        ``'auto'``: the approximation from 50,000 nonzero differences
        (:data:`APPROXIMATION_MIN_QUERIES`), where it is closer to the exact
        p-value than the Monte Carlo estimate is; resampling below.

    Returns
    -------
    result : RandomizationResult
        ``statistic`` (mean difference a - b), ``pvalue``, ``n_resamples``
        (0 when approximated), ``exact``, ``method`` (``'exact'``,
        ``'monte carlo'`` or ``'normal'``).

    Notes
    -----
    The Monte Carlo p-value is (1 + number of resamples with
    abs(mean(s d)) >= abs(mean(d))) / (1 + n_resamples), which never
    underestimates the exact p-value's expectation (Phipson & Smyth, 2010).
    Computed in vectorised batches, a few million signs at a time, so memory
    stays below ~100 MB whatever the number of queries: with fewer than 2048
    queries, sign matrices times the differences; from 2048 queries, each
    random byte draws the signs of 8 queries and picks their signed sum from
    a table of the 256 sums of each 8 queries (the same distribution; 8
    times fewer operations). Time grows as n_resamples x n. When every
    difference is 0, p = 1.

    The normal approximation (``approximation='normal'``, or ``'auto'`` from
    50,000 nonzero differences) is documented as such: under the null
    hypothesis the sum of the signed differences T = sum(s_i d_i) has mean 0,
    variance sum(d_i^2) and fourth cumulant -2 sum(d_i^4) (the odd ones are
    0), so with z = abs(sum(d_i)) / sqrt(sum(d_i^2)) and
    k = -2 sum(d_i^4) / sum(d_i^2)^2, the two-sided p-value is
    2 (Phi(-z) + phi(z) k (z^3 - 3 z) / 24) (Edgeworth's expansion; the
    error is O(1/n^2) for differences of a continuous metric, and of order
    1/sqrt(n) times the density for differences on a coarse lattice, below
    1e-3 at n = 50,000). It is computed in O(n) whatever ``n_resamples``.

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
    nonzero = int(np.count_nonzero(d))
    if approximation == "normal" or (approximation == "auto"
                                     and nonzero >= APPROXIMATION_MIN_QUERIES):
        return RandomizationResult(float(d.mean()), _normal_pvalue(d), 0, False, "normal")
    observed = abs(d.mean())
    threshold = observed - 1e-12 * max(1.0, observed)  # tolerate rounding in the sums
    statistic = float(d.mean())
    d = d[d != 0]  # a zero difference is the same under either sign
    m = d.shape[0]
    if m < 63 and 2**m <= n_resamples:
        total = 2**m
        count = 0
        for lo in range(0, total, 1 << 16):
            codes = np.arange(lo, min(lo + (1 << 16), total), dtype=np.int64)
            signs = 1 - 2 * ((codes[:, None] >> np.arange(m)) & 1)
            count += int((np.abs(signs @ d) / n >= threshold).sum())
        return RandomizationResult(statistic, count / total, total, True, "exact")
    rng = np.random.default_rng(random_state)
    if m >= TABLE_MIN_QUERIES:
        count = _table_count(d, threshold * n, n_resamples, rng)
        return RandomizationResult(statistic, (count + 1) / (n_resamples + 1),
                                   n_resamples, False, "monte carlo")
    # Rows of signs per batch: a multiple of 4, so that the int8 draws (four
    # per 32-bit word) follow one stream whatever the batch (the same signs as
    # one big draw), and at most BATCH_ELEMENTS signs (memory O(batch x n)).
    batch = max(4, min(2048, BATCH_ELEMENTS // m // 4 * 4))
    count = 0
    for lo in range(0, n_resamples, batch):
        signs = rng.integers(0, 2, size=(min(batch, n_resamples - lo), m), dtype=np.int8)
        signs *= 2
        signs -= 1
        count += int((np.abs(signs @ d) / n >= threshold).sum())
        del signs
    return RandomizationResult(statistic, (count + 1) / (n_resamples + 1),
                               n_resamples, False, "monte carlo")


def _table_count(d: np.ndarray, threshold: float, n_resamples: int, rng) -> int:
    """Resamples of n_resamples random sign assignments with |sum(s_i d_i)| >=
    threshold, the signs drawn 8 at a time as random bytes.

    Bit j of byte g flips the sign of query 8 g + j, so sum(s_i d_i) =
    sum(d) - 2 x (the sum of the flipped d_i), looked up in a table of the
    256 subset sums of each group of 8 queries. The groups are padded with
    zeros to a multiple of 4 (whole 32-bit words of bytes per row, so that
    batches of rows draw the bytes of one big draw); the table is read in
    blocks of groups that stay in cache.
    """
    n = d.shape[0]
    groups = -(-n // 32) * 4
    padded = np.zeros(groups * 8)
    padded[:n] = d
    bits = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(np.float64)
    table = padded.reshape(groups, 8) @ bits.T  # (groups, 256) subset sums
    total = float(d.sum())
    offsets = np.arange(_TABLE_BLOCK, dtype=np.intp) * 256
    rows = max(1, 8 * BATCH_ELEMENTS // groups)  # bytes: 32 MB of random codes
    count = 0
    for lo in range(0, n_resamples, rows):
        codes = rng.integers(0, 256, size=(min(rows, n_resamples - lo), groups),
                             dtype=np.uint8)
        flipped = np.zeros(codes.shape[0])
        for g in range(0, groups, _TABLE_BLOCK):
            block = codes[:, g:g + _TABLE_BLOCK]
            flipped += np.take(table[g:g + _TABLE_BLOCK].ravel(),
                               block + offsets[:block.shape[1]]).sum(axis=1)
        count += int((np.abs(total - 2 * flipped) >= threshold).sum())
        del codes
    return count


def _normal_pvalue(d: np.ndarray) -> float:
    """Two-sided p-value of the randomization test by the normal approximation
    of sum(s_i d_i) with its Edgeworth term (the fourth cumulant)."""
    from scipy.special import ndtr

    scale = np.abs(d).max()
    if scale == 0:
        return 1.0
    u = d / scale  # no overflow in the fourth powers
    s2 = float(np.dot(u, u))
    z = abs(float(u.sum())) / np.sqrt(s2)
    k4 = -2.0 * float(np.sum((u * u) ** 2)) / s2**2
    phi = np.exp(-z * z / 2) / np.sqrt(2 * np.pi)
    tail = ndtr(-z) + phi * k4 * (z**3 - 3 * z) / 24
    return float(min(1.0, max(0.0, 2 * tail)))
