"""Power and topic-set size: how many queries a paired comparison needs, and the
smallest difference a given collection can detect (Sakai's topic-set-size design)."""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

from .._utils.validation import Interval, StrOptions, validate_params
from ..metrics._evaluation import Evaluation
from ._constraints import LEVEL, SEED
from ._pairing import metric_of
from ._tests import BATCH_ELEMENTS

__all__ = ["detectable_line", "difference_variance", "minimum_detectable_difference",
           "paired_ttest_power", "topic_set_size"]

#: The largest number of queries the searches consider (beyond it: an error).
_MAX_QUERIES = 10**9

_EVALUATIONS = [Evaluation, list, tuple, None]
_COMMON = {
    "evaluations": _EVALUATIONS,
    "variance": [Interval(Real, 0, None, closed="neither"), None],
    "metric": [str, None],
    "alpha": LEVEL,
    "power": LEVEL,
}
_SIMULATION = {
    "test": [StrOptions({"t", "randomization"})],
    "n_simulations": [Interval(Integral, 10, None, closed="left")],
    "n_resamples": [Interval(Integral, 10, None, closed="left")],
    "random_state": SEED,
}


# ---------------------------------------------------------------- variance


def _values(evaluation: Evaluation, metric) -> np.ndarray:
    key = metric_of(evaluation, metric)
    values = np.asarray(evaluation.per_query[key], dtype=np.float64)
    return values[~np.isnan(values)]  # queries skipped under empty='skip'


def _residuals(evaluations, metric) -> list[np.ndarray]:
    """Each system's per-query values minus its mean (the pilot data's shape)."""
    if isinstance(evaluations, Evaluation):
        evaluations = [evaluations]
    if not evaluations or not all(isinstance(e, Evaluation) for e in evaluations):
        raise TypeError("evaluations must be an Evaluation or a non-empty list of "
                        "Evaluation objects (one per system of the pilot data).")
    residuals = []
    for i, evaluation in enumerate(evaluations):
        values = _values(evaluation, metric)
        if values.shape[0] < 2:
            raise ValueError(f"evaluations[{i}] holds {values.shape[0]} scored queries; a "
                             "variance needs at least 2.")
        residuals.append(values - values.mean())
    return residuals


@validate_params({"evaluations": [Evaluation, list, tuple], "metric": [str, None]})
def difference_variance(evaluations, *, metric=None) -> float:
    """The variance of a per-query difference between two systems, estimated
    from pilot data as Sakai's topic-set-size design does.

    Parameters
    ----------
    evaluations : Evaluation or list of Evaluation
        One system, or several systems (on the same or on different queries),
        of the pilot collection.
    metric : str, default=None
        The metric to take (needed when the evaluations hold several).

    Returns
    -------
    variance : float
        ``2 * s2`` where ``s2`` is the pooled within-system variance
        ``sum_i sum_j (x_ij - mean_i)**2 / sum_i (n_i - 1)``.

    Notes
    -----
    Two systems whose per-query scores each vary with variance ``s2`` differ on
    a query with variance ``2 * s2`` when their scores are uncorrelated; a
    positive correlation (the usual case: hard queries are hard for every
    system) makes the true variance smaller, so the estimate errs on the side
    of more queries (Sakai, 2016, §3). When the paired differences of the very
    systems to be compared are at hand, their sample variance
    (``np.var(x - y, ddof=1)``) is the direct estimate: pass it as
    ``variance=``.

    References
    ----------
    .. [1] T. Sakai, "Topic set size design", Information Retrieval Journal
       19(3), 256-283, 2016.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rank.metrics import evaluate
    >>> from sklearn_rank.stats import difference_variance
    >>> ev = evaluate([1, 0, 1, 0], [0.9, 0.1, 0.2, 0.8], qid=[1, 1, 2, 2], metrics=["ndcg"])
    >>> round(difference_variance(ev), 6)
    0.136213
    """
    residuals = _residuals(evaluations, metric)
    dof = sum(r.shape[0] - 1 for r in residuals)
    return float(2.0 * sum(float(r @ r) for r in residuals) / dof)


def _difference_variance(evaluations, variance, metric) -> float:
    if (evaluations is None) == (variance is None):
        raise ValueError("Pass either evaluations (pilot data: an Evaluation or a list of "
                         "them) or variance= (the variance of a per-query difference), "
                         "not both and not neither.")
    return float(variance) if variance is not None else difference_variance(
        evaluations, metric=metric)


# ---------------------------------------------------------------- the paired t-test


def paired_ttest_power(n: int, effect_size: float, alpha: float = 0.05) -> float:
    """Power of the two-sided paired t-test on ``n`` queries for a true
    standardised difference ``effect_size`` (mean difference over the standard
    deviation of a difference): both tails of the noncentral t distribution,
    as statsmodels' ``TTestPower`` computes it (Sakai's Excel tools use a
    normal approximation of it, see :func:`topic_set_size`)."""
    from scipy import stats

    df = float(n) - 1.0
    crit = stats.t.isf(alpha / 2, df)
    nc = effect_size * math.sqrt(n)
    value = float(stats.nct.sf(crit, df, nc) + stats.nct.cdf(-crit, df, nc))
    return value if math.isfinite(value) else _integrated_power(df, crit, nc)


def _integrated_power(df: float, crit: float, nc: float) -> float:
    """The same power by integrating over the chi distribution of the standard
    deviation's ratio, where SciPy's noncentral t gives NaN (few degrees of
    freedom, large noncentrality): T' = (Z + nc) / S with S**2 ~ chi2(df) / df."""
    from scipy import integrate, stats

    def tails(s):
        return (stats.norm.sf(crit * s - nc) + stats.norm.cdf(-crit * s - nc)) * \
            stats.chi.pdf(s * math.sqrt(df), df) * math.sqrt(df)

    return float(integrate.quad(tails, 0.0, np.inf, epsabs=1e-13, epsrel=1e-12)[0])


def _normal_size(effect_size: float, alpha: float, power: float) -> float:
    """Sakai's starting value: the normal approximation
    ``((z_{alpha/2} + z_beta) / effect)**2 + z_{alpha/2}**2 / 2``."""
    from scipy import stats

    z_a, z_b = stats.norm.isf(alpha / 2), stats.norm.isf(1 - power)
    return ((z_a + z_b) / effect_size) ** 2 + z_a**2 / 2


def _smallest_n(reaches, start: int) -> int:
    """The smallest n >= 2 with ``reaches(n)``, for a ``reaches`` monotone in n:
    bracketed from ``start`` by halving or doubling, then bisected."""
    high = max(2, start)
    if reaches(high):
        low = high // 2
        while low >= 2 and reaches(low):
            high, low = low, low // 2
        low = max(1, low)  # n = 1 never reaches: no test on one query
    else:
        low, high = high, high * 2
        while not reaches(high):
            if high > _MAX_QUERIES:
                raise ValueError(f"More than {_MAX_QUERIES} queries would be needed: the "
                                 "difference is too small for the variance.")
            low, high = high, high * 2
    while high - low > 1:
        mid = (low + high) // 2
        if reaches(mid):
            high = mid
        else:
            low = mid
    return high


def _t_size(effect_size: float, alpha: float, power: float) -> int:
    start = min(_MAX_QUERIES, max(2, math.ceil(_normal_size(effect_size, alpha, power))))
    return _smallest_n(lambda n: paired_ttest_power(n, effect_size, alpha) >= power, start)


# ---------------------------------------------------------------- randomization


def _simulated_differences(rng, residuals, variance, delta, n, n_simulations):
    """``n_simulations`` samples of ``n`` per-query differences with mean ``delta``:
    the difference of two pilot residuals drawn with replacement, or normal."""
    if residuals is None:
        return rng.normal(delta, math.sqrt(variance), size=(n_simulations, n))
    pool = np.concatenate(residuals)
    draws = rng.integers(0, pool.shape[0], size=(2, n_simulations, n))
    return pool[draws[0]] - pool[draws[1]] + delta


def _randomization_power(d, alpha, n_resamples, rng) -> float:
    """The fraction of rows of ``d`` on which the paired randomization (sign
    flip) test of the mean rejects at ``alpha``, two-sided, p = (1 + #{|T*| >=
    |T|}) / (1 + B) as :func:`randomization_test` counts it. The simulated
    collections share the sign flips (one matrix product): each test is still
    a valid Monte Carlo test, and the estimate of the power unbiased."""
    n_sim, n = d.shape
    observed = np.abs(d.sum(axis=1))
    floor = observed - 1e-12 * np.maximum(1.0, observed)  # equal sums count as extreme
    exceed = np.zeros(n_sim)
    rows = max(1, BATCH_ELEMENTS // max(n, n_sim))
    for start in range(0, n_resamples, rows):
        m = min(rows, n_resamples - start)
        signs = rng.integers(0, 2, size=(m, n)).astype(np.float64) * 2.0 - 1.0
        exceed += (np.abs(signs @ d.T) >= floor).sum(axis=0)
    pvalues = (1.0 + exceed) / (1.0 + n_resamples)
    return float(np.mean(pvalues <= alpha))


def _randomization_size(residuals, variance, delta, alpha, power, t_size,
                        n_simulations, n_resamples, random_state) -> int:
    seed = np.random.SeedSequence(random_state if isinstance(random_state, Integral)
                                  else np.random.default_rng(random_state).integers(2**63))

    def reaches(n: int) -> bool:  # the same random numbers at every n: a monotone search
        rng = np.random.default_rng(seed)
        d = _simulated_differences(rng, residuals, variance, delta, n, n_simulations)
        return _randomization_power(d, alpha, n_resamples, rng) >= power

    return _smallest_n(reaches, t_size)


# ---------------------------------------------------------------- public functions


@validate_params({**_COMMON, **_SIMULATION,
                  "delta": [Interval(Real, 0, None, closed="neither")]})
def topic_set_size(evaluations=None, *, delta, alpha=0.05, power=0.8, variance=None,
                   metric=None, test="t", n_simulations=1000, n_resamples=1000,
                   random_state=None) -> int:
    """The number of queries needed to detect a difference ``delta`` between two
    systems with probability ``power`` at level ``alpha``.

    Sakai's topic-set-size design for the two-sided paired t-test: the
    smallest ``n`` whose power against a true mean difference ``delta`` is at
    least ``power``, from a variance estimated on pilot data.

    Parameters
    ----------
    evaluations : Evaluation or list of Evaluation, default=None
        Pilot data: one or several systems' evaluations; the variance of a
        difference is :func:`difference_variance` of them. Pass either this
        or ``variance``.
    delta : float
        The smallest true difference in the metric's mean worth detecting
        (Sakai's ``minD``), > 0.
    alpha : float, default=0.05
        The test's significance level (two-sided).
    power : float, default=0.8
        The probability of detecting ``delta`` (``1 - beta``).
    variance : float, default=None
        The variance of a per-query difference between the two systems (e.g.
        ``np.var(x - y, ddof=1)`` of paired values), instead of pilot data.
    metric : str, default=None
        The metric of the evaluations (needed when they hold several).
    test : {'t', 'randomization'}, default='t'
        ``'t'``: exact, from the noncentral t distribution. ``'randomization'``:
        the paired randomization test's power estimated by simulation: samples
        of differences drawn from the pilot data's residuals (from a normal
        distribution when only ``variance`` is given), shifted to mean
        ``delta``, each tested with ``n_resamples`` sign flips.
    n_simulations : int, default=1000
        Simulated collections per candidate size (``test='randomization'``).
    n_resamples : int, default=1000
        Sign flips per simulated test (``test='randomization'``).
    random_state : int, Generator or None, default=None
        Seed of the simulation; the same seed gives the same size.

    Returns
    -------
    n : int
        The number of queries (at least 2).

    Raises
    ------
    ValueError
        If both or neither of ``evaluations`` and ``variance`` are given, or if
        more than a billion queries would be needed.

    See Also
    --------
    minimum_detectable_difference : The converse: the smallest detectable
        difference for a given number of queries.

    Notes
    -----
    With ``sigma2`` the variance of a difference, the power of the paired
    t-test on ``n`` queries is ``P(|T'| > t_{alpha/2, n-1})`` for ``T'``
    noncentral t with ``n - 1`` degrees of freedom and noncentrality
    ``delta / sqrt(sigma2) * sqrt(n)``. Sakai starts from the normal
    approximation ``((z_{alpha/2} + z_beta) / Delta)**2 + z_{alpha/2}**2 / 2``
    (``Delta = delta / sqrt(sigma2)``) and increases ``n`` until the power is
    reached; the search here finds the smallest ``n`` from the exact power,
    which is statsmodels' ``TTestPower().solve_power(...)`` rounded up. Sakai's
    Excel tool (``samplesizeTTEST2``) evaluates the power with a normal
    approximation of the noncentral t (``w = t_{alpha/2, n-1}``, ``phi = n - 1``,
    ``(+-w (1 - 1/(4 phi)) - sqrt(n) Delta) / sqrt(1 + w**2 / (2 phi))``): on
    his usual inputs it gives the same ``n``, and one query more where the
    approximate power falls just short of the exact one (``delta=0.2,
    variance=0.03, power=0.9``: 10 here, 11 by the tool). The
    randomization search uses the same random numbers at every candidate size,
    so that the estimated power grows with ``n``; its answer carries Monte
    Carlo error of a few percent of ``n`` at the defaults.

    References
    ----------
    .. [1] T. Sakai, "Topic set size design", Information Retrieval Journal
       19(3), 256-283, 2016.
    .. [2] Y. Nagata, "How to design the sample size" (in Japanese), Asakura
       Shoten, 2003.

    Examples
    --------
    >>> from sklearn_rank.stats import topic_set_size
    >>> topic_set_size(delta=0.05, variance=0.04)
    128
    """
    sigma2 = _difference_variance(evaluations, variance, metric)
    effect = delta / math.sqrt(sigma2)
    n = _t_size(effect, alpha, power)
    if test == "t":
        return n
    residuals = None if evaluations is None else _residuals(evaluations, metric)
    return _randomization_size(residuals, sigma2, delta, alpha, power, n, n_simulations,
                               n_resamples, random_state)


@validate_params({**_COMMON, "n": [Interval(Integral, 2, None, closed="left"), None]})
def minimum_detectable_difference(evaluations=None, *, n=None, alpha=0.05, power=0.8,
                                  variance=None, metric=None) -> float:
    """The smallest true difference in mean that a paired t-test on ``n``
    queries detects with probability ``power`` at level ``alpha``.

    Parameters
    ----------
    evaluations : Evaluation or list of Evaluation, default=None
        The collection's evaluations (one or several systems); the variance of
        a difference is :func:`difference_variance` of them. Pass either this
        or ``variance``.
    n : int, default=None
        The number of queries; by default the smallest number of scored
        queries among ``evaluations`` (required with ``variance``).
    alpha : float, default=0.05
        The test's significance level (two-sided).
    power : float, default=0.8
        The required probability of detecting the difference.
    variance : float, default=None
        The variance of a per-query difference (e.g. ``np.var(x - y, ddof=1)``
        of the paired values of a comparison), instead of evaluations.
    metric : str, default=None
        The metric of the evaluations (needed when they hold several).

    Returns
    -------
    delta : float
        The minimum detectable difference, in the metric's units.

    Raises
    ------
    ValueError
        If both or neither of ``evaluations`` and ``variance`` are given, or
        ``variance`` without ``n``.

    See Also
    --------
    topic_set_size : The converse: queries needed for a given difference.

    Notes
    -----
    The solution ``delta`` of ``power(n, delta / sqrt(sigma2)) = power`` for
    the two-sided paired t-test's power (see :func:`topic_set_size`). A
    difference that :func:`compare` finds not significant may be real but
    smaller than this: the data could not have told.

    Examples
    --------
    >>> from sklearn_rank.stats import minimum_detectable_difference
    >>> round(minimum_detectable_difference(n=50, variance=0.04), 4)
    0.0808
    """
    from scipy.optimize import brentq

    sigma2 = _difference_variance(evaluations, variance, metric)
    if n is None:
        if evaluations is None:
            raise ValueError("Pass n= (the number of queries) with variance=.")
        n = min(r.shape[0] for r in _residuals(evaluations, metric))

    def gap(effect):
        return paired_ttest_power(n, effect, alpha) - power

    high = 1.0
    while gap(high) < 0:
        high *= 2
    effect = brentq(gap, 0.0, high, xtol=1e-14, rtol=1e-14)
    return float(effect * math.sqrt(sigma2))



def detectable_line(comparison, differences) -> str | None:
    """The line of :func:`compare`'s report under a difference that is not
    significant: the smallest true difference its queries detect with 80%
    power (the paired t-test at the comparison's alpha), on the scale of the
    comparison's difference; None without per-query differences that vary."""
    if differences is None:
        return None
    d = np.asarray(differences, dtype=np.float64)
    variance = float(np.var(d, ddof=1)) if d.shape[0] >= 2 else 0.0
    if not variance > 0:
        return None
    mdd = minimum_detectable_difference(n=d.shape[0], variance=variance,
                                        alpha=comparison.alpha)
    if comparison.aggregate == "sum":  # a difference of sums: n times that of the means
        mdd *= d.shape[0]
    return (f"{comparison.system} vs {comparison.baseline} on {comparison.metric}: these "
            f"{d.shape[0]} queries detect a true difference of {mdd:.4f} with 80% power "
            f"(a single paired t-test at alpha = {comparison.alpha:g}); a smaller one may be "
            "real")
