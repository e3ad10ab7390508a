"""Statistics at scale (issue 28 item 1): the byte-table randomization test, the
multinomial bootstrap and the documented normal approximations, against the
sign-matrix / SciPy references and brute force."""

import warnings

import numpy as np
import pytest
from scipy import stats

from sklearn_rank.metrics._evaluation import Evaluation
from sklearn_rank.stats import _bootstrap as stats_bootstrap
from sklearn_rank.stats import _tests as stats_tests
from sklearn_rank.stats import bootstrap_ci, compare, randomization_test


@pytest.fixture(autouse=True)
def _warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def _ev(values, metric="ndcg@10"):
    values = np.asarray(values, dtype=np.float64)
    qids = np.arange(values.shape[0])
    return Evaluation(qids, {metric: values}, {metric: float(values.mean())}, {metric: 0},
                      None, [metric])


def _signs_from_bytes(n, n_resamples, seed):
    """Brute force: the sign matrix the byte table draws (bit j of byte g flips
    query 8 g + j; 4 x ceil(n / 32) bytes a row)."""
    groups = -(-n // 32) * 4
    codes = np.random.default_rng(seed).integers(0, 256, size=(n_resamples, groups),
                                                 dtype=np.uint8)
    bits = (codes[:, :, None] >> np.arange(8)) & 1
    return 1 - 2 * bits.reshape(n_resamples, groups * 8)[:, :n].astype(np.float64)


@pytest.mark.parametrize("n, budget", [(2048, 1 << 22), (2051, 1 << 22), (3001, 4000)])
def test_table_count_equals_the_sign_matrix_of_the_same_bytes(monkeypatch, n, budget):
    """The table sums are the sign matrix's sums over the same random bits, whatever
    the batch of rows: the same count, so the same p-value."""
    rng = np.random.default_rng(n)
    a, b = rng.random(n), rng.random(n) + 0.5 / np.sqrt(n)
    d = a - b
    monkeypatch.setattr(stats_tests, "BATCH_ELEMENTS", budget)
    res = randomization_test(a, b, n_resamples=499, random_state=5, approximation="none")
    signs = _signs_from_bytes(n, 499, 5)
    observed = abs(d.mean())
    count = int((np.abs(signs @ d) / n >= observed - 1e-12 * max(1.0, observed)).sum())
    assert res.pvalue == (count + 1) / 500
    assert 0.01 < res.pvalue < 0.99 and res.method == "monte carlo" and not res.exact


def test_table_path_is_an_unbiased_randomization_test():
    """Under the null hypothesis (symmetric differences) the Monte Carlo p-values
    of the byte table are uniform: about 5% below 0.05."""
    rng = np.random.default_rng(2)
    pvalues = [randomization_test(rng.normal(size=2100), np.zeros(2100), n_resamples=199,
                                  random_state=i, approximation="none").pvalue
               for i in range(200)]
    assert 0.01 <= np.mean(np.asarray(pvalues) < 0.05) <= 0.11
    assert stats.kstest(pvalues, "uniform").pvalue > 1e-3


@pytest.mark.parametrize("shape", ["normal", "heavy", "lattice"])
def test_normal_pvalue_agrees_with_the_exact_test(shape):
    """The approximation against the Monte Carlo test with 40,000 resamples on
    5,000 queries: within 4 Monte Carlo standard errors (+ 1e-3 for a lattice)."""
    rng = np.random.default_rng(7)
    n = 5000
    d = {"normal": rng.normal(0.02, 1.0, n),
         "heavy": rng.standard_t(3, n) + 0.04,
         "lattice": rng.integers(-2, 3, n) / 4 + (rng.random(n) < 0.03) / 4}[shape]
    if shape != "lattice":  # z = 2: p about 0.05
        d = d - d.mean() + 2 * d.std() / np.sqrt(n)
    exact = randomization_test(d, np.zeros(n), n_resamples=40000, random_state=1,
                               approximation="none")
    approx = randomization_test(d, np.zeros(n), approximation="normal")
    assert approx.method == "normal" and approx.n_resamples == 0
    assert approx.statistic == exact.statistic
    se = np.sqrt(exact.pvalue * (1 - exact.pvalue) / 40000)
    assert 0.002 < exact.pvalue < 0.5
    assert approx.pvalue == pytest.approx(exact.pvalue, abs=4 * se + 1e-3)


def test_normal_pvalue_closed_form_on_small_data():
    """The Edgeworth formula written out for d = (1, 2, 3, -1), against the exact
    enumeration's distribution moments."""
    d = np.array([1.0, 2.0, 3.0, -1.0])
    s2, s4 = np.sum(d**2), np.sum(d**4)
    z = abs(d.sum()) / np.sqrt(s2)
    k4 = -2 * s4 / s2**2
    expected = 2 * (stats.norm.sf(z) + stats.norm.pdf(z) * k4 * (z**3 - 3 * z) / 24)
    res = randomization_test(d, np.zeros(4), approximation="normal")
    assert res.pvalue == pytest.approx(expected, rel=1e-12)
    # the fourth cumulant of the sign-flip sum is the enumeration's
    signs = 1 - 2 * ((np.arange(16)[:, None] >> np.arange(4)) & 1)
    t = signs @ d
    assert np.mean(t**4) - 3 * np.mean(t**2) ** 2 == pytest.approx(-2 * s4, rel=1e-12)
    assert randomization_test(d, d, approximation="normal").pvalue == 1.0


def test_auto_switches_at_the_documented_number_of_nonzero_differences(monkeypatch):
    monkeypatch.setattr(stats_tests, "APPROXIMATION_MIN_QUERIES", 100)
    monkeypatch.setattr(stats_bootstrap, "APPROXIMATION_MIN_QUERIES", 100)
    rng = np.random.default_rng(0)
    d = rng.normal(size=150)
    d[:60] = 0  # 90 nonzero differences: still resampled
    assert randomization_test(d, np.zeros(150), n_resamples=200).method == "monte carlo"
    assert randomization_test(d[50:], np.zeros(100), n_resamples=200).method == "monte carlo"
    assert randomization_test(rng.normal(size=100), np.zeros(100)).method == "normal"
    assert bootstrap_ci(d[:99], n_resamples=200).approximated is False
    assert bootstrap_ci(d[:100], n_resamples=200).approximated is True
    assert bootstrap_ci(d[:100], n_resamples=200, approximation="none").approximated is False


@pytest.mark.parametrize("method", ["percentile", "bca"])
@pytest.mark.parametrize("shape", ["skewed", "symmetric"])
def test_approximate_interval_agrees_with_scipys_bootstrap(method, shape):
    """The Cornish-Fisher interval against SciPy's bootstrap with 50,000
    resamples on 4,000 values: within 0.05 standard errors (its Monte Carlo
    error is about 0.015), and the skewness term is what brings it there."""
    rng = np.random.default_rng(11)
    d = rng.exponential(size=4000) - 1.0 if shape == "skewed" else rng.normal(size=4000)
    ours = bootstrap_ci(d, method=method, approximation="normal")
    theirs = stats.bootstrap((d,), np.mean, n_resamples=50000,
                             method="BCa" if method == "bca" else "percentile",
                             **stats_bootstrap._rng_keyword(stats.bootstrap,
                                                            np.random.default_rng(3)))
    se = ours.standard_error
    assert se == pytest.approx(np.std(d) / np.sqrt(d.shape[0]), rel=1e-12)
    assert se == pytest.approx(theirs.standard_error, rel=0.02)
    low, high = theirs.confidence_interval
    assert ours.low == pytest.approx(low, abs=0.05 * se)
    assert ours.high == pytest.approx(high, abs=0.05 * se)
    assert ours.approximated and ours.statistic == pytest.approx(d.mean(), rel=1e-12)


def test_multinomial_bootstrap_has_the_distribution_of_resampled_queries():
    """Few distinct values: the counts are drawn as a multinomial; its interval
    and standard error agree with SciPy's resampling of the queries (Monte Carlo
    tolerance), and the batches draw the numbers of one big draw."""
    rng = np.random.default_rng(4)
    d = rng.choice([-1.0, -0.5, 0.0, 0.0, 0.0, 0.5, 1.0, 1.0], size=6000)
    ours = bootstrap_ci(d, n_resamples=40000, random_state=2, approximation="none")
    theirs = stats.bootstrap((d,), np.mean, n_resamples=40000, method="percentile",
                             **stats_bootstrap._rng_keyword(stats.bootstrap,
                                                            np.random.default_rng(9)))
    se = theirs.standard_error
    assert ours.standard_error == pytest.approx(se, rel=0.03)
    assert ours.low == pytest.approx(theirs.confidence_interval.low, abs=0.06 * se)
    assert ours.high == pytest.approx(theirs.confidence_interval.high, abs=0.06 * se)
    values, counts = np.unique(d, return_counts=True)
    means = stats_bootstrap._multinomial_means(values, counts, 40000,
                                               np.random.default_rng(2))
    assert means.mean() == pytest.approx(d.mean(), abs=4 * se / np.sqrt(40000) + 1e-15)
    assert ours.low == pytest.approx(np.quantile(means, 0.025), rel=1e-12, abs=1e-15)


def test_multinomial_bootstrap_batches_are_one_draw(monkeypatch):
    rng = np.random.default_rng(6)
    d = rng.integers(0, 5, size=3000) / 4.0
    whole = bootstrap_ci(d, n_resamples=1000, method="bca", random_state=0,
                         approximation="none")
    monkeypatch.setattr(stats_bootstrap, "BATCH_ELEMENTS", 40)  # 8 resamples a batch
    assert bootstrap_ci(d, n_resamples=1000, method="bca", random_state=0,
                        approximation="none") == whole


def test_compare_passes_the_approximation_and_is_reproducible(monkeypatch):
    """compare's p-value and interval are those of the functions with the same
    approximation, and the same on every run."""
    rng = np.random.default_rng(8)
    base = rng.beta(2, 3, 6000)
    other = np.clip(base + rng.normal(0.004, 0.1, 6000), 0, 1)
    evs = {"A": _ev(base), "B": _ev(other)}
    for approximation in ("none", "normal"):
        report = compare(evs, n_resamples=2000, approximation=approximation)
        c = report.comparisons[0]
        p = randomization_test(other, base, n_resamples=2000, approximation=approximation)
        ci = bootstrap_ci(other - base, n_resamples=2000, approximation=approximation)
        assert (c.pvalue, c.low, c.high) == (p.pvalue, ci.low, ci.high)
        again = compare(evs, n_resamples=2000, approximation=approximation).comparisons[0]
        assert again == c
    with pytest.raises(ValueError, match="approximation"):
        compare(evs, approximation="exact")


def test_skewness_term_of_the_approximate_interval_is_needed():
    """On 100 skewed values (exponential) the plain normal interval is off by
    about 0.06 standard error at each end; the Cornish-Fisher one agrees with
    SciPy's bootstrap of 50,000 resamples within 0.035 (its Monte Carlo error
    is about 0.012)."""
    d = np.random.default_rng(12).exponential(size=100)
    ours = bootstrap_ci(d, approximation="normal")
    theirs = stats.bootstrap((d,), np.mean, n_resamples=50000, method="percentile",
                             **stats_bootstrap._rng_keyword(stats.bootstrap,
                                                            np.random.default_rng(3)))
    se = ours.standard_error
    low, high = theirs.confidence_interval
    assert ours.low == pytest.approx(low, abs=0.035 * se)
    assert ours.high == pytest.approx(high, abs=0.035 * se)
    z = stats.norm.ppf(0.975)
    assert abs(d.mean() - z * se - low) > 0.045 * se  # without the term: off


def test_zero_differences_are_left_out_of_the_draws_exactly():
    """Ties between the systems do not change the sign-flip distribution: with
    3,000 tied queries and 12 others the test enumerates 2**12 assignments and
    equals the test on the 12 alone with the mean over all 3,012 queries."""
    rng = np.random.default_rng(3)
    d = rng.normal(0.3, 1.0, 12)
    with_ties = np.concatenate([np.zeros(1500), d, np.zeros(1500)])
    res = randomization_test(with_ties, np.zeros(3012))
    alone = randomization_test(d, np.zeros(12))
    assert res.exact and res.n_resamples == 2**12 and res.pvalue == alone.pvalue
    assert res.statistic == pytest.approx(d.sum() / 3012, rel=1e-12)
    # the Monte Carlo (byte table) on the nonzero ones: the same p-value
    many = rng.normal(0.03, 1.0, 2500)
    padded = np.concatenate([many, np.zeros(4000)])
    assert randomization_test(padded, np.zeros(6500), approximation="none").pvalue == \
        randomization_test(many, np.zeros(2500), approximation="none").pvalue


def test_the_report_says_when_it_approximates(monkeypatch):
    monkeypatch.setattr(stats_tests, "APPROXIMATION_MIN_QUERIES", 100)
    monkeypatch.setattr(stats_bootstrap, "APPROXIMATION_MIN_QUERIES", 100)
    rng = np.random.default_rng(1)
    base = rng.random(150)
    evs = {"A": _ev(base), "B": _ev(base + rng.normal(0.01, 0.1, 150))}
    report = compare(evs, n_resamples=300)
    assert report.approximated and "the normal approximation of the bootstrap" in str(report)
    assert report.relabel({"ndcg@10": "ndcg_cut_10"}).approximated
    exact = compare(evs, n_resamples=300, approximation="none")
    assert not exact.approximated and "approximation" not in str(exact)
    assert not compare({"A": _ev(base[:99]), "B": _ev(base[:99] + 0.01)},
                       n_resamples=300).approximated
