"""Significance tests, bootstrap intervals, reports and the CV comparison."""

import dataclasses
import inspect
import itertools

import numpy as np
import pytest
from scipy import stats

from sklearn_rank.metrics import evaluate
from sklearn_rank.stats import (
    bootstrap_ci,
    compare,
    compare_cv_candidates,
    corrected_resampled_ttest,
    paired_ttest,
    paired_values,
    randomization_test,
    wilcoxon_test,
)
from sklearn_rank.stats._corrections import adjust as _adjust


def _evaluations(seed=0, n_queries=60, noises=(2.0, 1.5, 0.5), metrics=("ndcg@5", "map")):
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(n_queries), 12)
    y = rng.integers(0, 3, qid.shape[0])
    return {f"S{i}": evaluate(y, y + rng.normal(0, sd, y.shape), qid=qid, metrics=list(metrics))
            for i, sd in enumerate(noises)}


# ---------------------------------------------------------------- pairing


def test_paired_values_aligns_evaluations_by_qid():
    rng = np.random.default_rng(1)
    qid = np.repeat(["b", "a", "c"], 4)
    y = rng.integers(0, 3, 12)
    a = evaluate(y, rng.random(12), qid=qid, metrics=["ndcg"])
    keep = qid != "c"
    b = evaluate(y[keep], rng.random(keep.sum()), qid=qid[keep], metrics=["ndcg"])
    with pytest.raises(ValueError, match=r"different queries: 1 only in the first \(c\), 0 "
                                         r"only in the second \(\).*missing='drop'"):
        paired_values(a, b)
    x, z, qids = paired_values(a, b, missing="drop")
    assert qids.tolist() == ["a", "b"]
    np.testing.assert_array_equal(x, a.per_query["ndcg"][:2])
    x, z, qids = paired_values(a, b, missing="zero")
    assert qids.tolist() == ["a", "b", "c"] and z[2] == 0.0


def test_paired_values_errors_and_nan_pairs():
    evs = _evaluations()
    with pytest.raises(ValueError, match=r"holds 2 metrics.*pass metric=\.\.\."):
        paired_values(evs["S0"], evs["S1"])
    with pytest.raises(ValueError, match=r"has no metric 'p@5'"):
        paired_values(evs["S0"], evs["S1"], metric="p@5")
    with pytest.raises(TypeError, match=r"not one of each"):
        paired_values(evs["S0"], [1, 2])
    with pytest.raises(ValueError, match=r"same length"):
        paired_values([1, 2, 3], [1, 2])
    x, y, _ = paired_values([1.0, np.nan, 3.0], [0.5, np.nan, 0.1])
    assert x.tolist() == [1.0, 3.0] and y.tolist() == [0.5, 0.1]  # skipped queries drop out
    with pytest.raises(ValueError, match=r"position 1 is NaN in a but 0\.2 in b \(2 such"):
        paired_values([1.0, np.nan, 3.0], [0.5, 0.2, np.nan])  # skipped on one side only


# ---------------------------------------------------------------- tests


def test_ttest_and_wilcoxon_are_scipys_on_the_paired_values():
    evs = _evaluations()
    x, y, _ = paired_values(evs["S2"], evs["S0"], metric="map")
    ours = paired_ttest(evs["S2"], evs["S0"], metric="map")
    theirs = stats.ttest_rel(x, y)
    assert (ours.statistic, ours.pvalue) == (theirs.statistic, theirs.pvalue)
    ours = wilcoxon_test(evs["S2"], evs["S0"], metric="map")
    theirs = stats.wilcoxon(x, y)
    assert (ours.statistic, ours.pvalue) == (theirs.statistic, theirs.pvalue)


@pytest.mark.parametrize("seed", range(5))
def test_randomization_test_exact_enumeration(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 11))
    a, b = rng.random(n), rng.random(n)
    d = a - b
    # brute force: every sign assignment
    extreme = [abs(np.mean(np.array(s) * d)) >= abs(d.mean()) - 1e-12
               for s in itertools.product([1, -1], repeat=n)]
    res = randomization_test(a, b)
    assert res.exact and res.n_resamples == 2**n
    assert res.pvalue == pytest.approx(np.mean(extreme), abs=1e-15)
    assert res.statistic == pytest.approx(d.mean())
    # scipy's exact permutation test on paired samples agrees
    scipy_p = stats.permutation_test((a, b), lambda x, y, axis: np.mean(x - y, axis=axis),
                                     permutation_type="samples", vectorized=True,
                                     n_resamples=10**6).pvalue
    assert res.pvalue == pytest.approx(scipy_p, abs=1e-12)


def test_randomization_monte_carlo_is_close_to_exact():
    rng = np.random.default_rng(7)
    a, b = rng.random(14), rng.random(14) + 0.1
    exact = randomization_test(a, b, n_resamples=2**14)
    approx = randomization_test(a, b, n_resamples=4000, random_state=0)
    assert exact.exact and not approx.exact
    assert approx.pvalue == pytest.approx(exact.pvalue, abs=0.03)
    again = randomization_test(a, b, n_resamples=4000, random_state=0)
    assert again.pvalue == approx.pvalue  # seeded


def test_randomization_false_positive_rate_under_the_null():
    """400 seeded null data sets (differences symmetric around 0): about 5% of
    p-values fall below 0.05."""
    rng = np.random.default_rng(2024)
    pvalues = [randomization_test(rng.normal(size=25), np.zeros(25), n_resamples=999,
                                  random_state=i).pvalue for i in range(400)]
    rate = np.mean(np.array(pvalues) < 0.05)
    assert 0.025 <= rate <= 0.085, rate


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_bootstrap_coverage_is_near_nominal(method):
    """Seeded simulation: the 90% interval of a skewed mean covers the truth
    about 90% of the time."""
    rng = np.random.default_rng(11)
    true_mean = 2 / 7  # Beta(2, 5)
    hits = [bootstrap_ci(rng.beta(2, 5, size=40), confidence=0.9, n_resamples=1000,
                         method=method, random_state=i) for i in range(200)]
    coverage = np.mean([r.low <= true_mean <= r.high for r in hits])
    assert 0.83 <= coverage <= 0.96, coverage


def test_bootstrap_of_a_paired_difference_and_degenerate_data():
    evs = _evaluations()
    res = bootstrap_ci(evs["S2"], evs["S0"], metric="ndcg@5", random_state=0)
    x, y, _ = paired_values(evs["S2"], evs["S0"], metric="ndcg@5")
    same = bootstrap_ci(x - y, random_state=0)
    assert (res.low, res.high, res.statistic) == (same.low, same.high, same.statistic)
    assert res.low < res.statistic < res.high
    flat = bootstrap_ci([0.5, 0.5, 0.5])
    assert (flat.low, flat.high) == (0.5, 0.5)
    with pytest.raises(ValueError, match=r"'method' parameter of bootstrap_ci must be a str "
                                         r"among"):
        bootstrap_ci([1, 2], method="basic")


# ---------------------------------------------------------------- reports


def test_holm_and_bonferroni_adjustments():
    p = np.array([0.01, 0.04, 0.03, 0.2])
    assert _adjust(p, "bonferroni").tolist() == [0.04, 0.16, 0.12, 0.8]
    # Holm: sorted 0.01, 0.03, 0.04, 0.2 times 4, 3, 2, 1, made monotone
    np.testing.assert_allclose(_adjust(p, "holm"), [0.04, 0.09, 0.09, 0.2])
    assert _adjust(p, None).tolist() == p.tolist()


def test_compare_numbers_equal_direct_computations():
    evs = _evaluations()
    before = {k: {m: v.copy() for m, v in ev.per_query.items()} for k, ev in evs.items()}
    report = compare(evs, baseline="S0", random_state=3, n_resamples=2000)
    assert report.systems == ["S0", "S1", "S2"] and report.metrics == ["ndcg@5", "map"]
    assert len(report.comparisons) == 4
    raw = []
    for c in report.comparisons:
        x, y, _ = paired_values(evs[c.system], evs["S0"], metric=c.metric)
        d = x - y
        assert c.mean == pytest.approx(x.mean()) and c.baseline_mean == pytest.approx(y.mean())
        assert c.difference == pytest.approx(d.mean())
        assert (c.wins, c.ties, c.losses) == ((d > 1e-12).sum(), (abs(d) <= 1e-12).sum(),
                                              (d < -1e-12).sum())
        assert c.effect_size == pytest.approx(d.mean() / d.std(ddof=1))
        p = randomization_test(x, y, n_resamples=2000, random_state=3).pvalue
        assert c.pvalue == p
        ci = bootstrap_ci(d, n_resamples=2000, random_state=3)
        assert (c.low, c.high) == (ci.low, ci.high)
        raw.append(p)
    np.testing.assert_allclose([c.pvalue_corrected for c in report.comparisons],
                               _adjust(np.array(raw), "holm"))
    assert report.means["S2"]["map"] == pytest.approx(evs["S2"].mean["map"])
    for k, ev in evs.items():  # inputs untouched
        for m, v in ev.per_query.items():
            np.testing.assert_array_equal(v, before[k][m])


def test_report_renders():
    report = compare(_evaluations(), baseline="S0", random_state=0, n_resamples=1000)
    text = str(report)
    assert "Δ vs S0" in text and "p (Holm)" in text and "W/T/L" in text
    assert "S2 beats S0 on ndcg@5 by +" in text and "(Holm)" in text
    # A difference that is not significant is not called a win.
    c = report.comparisons[0]
    flat = dataclasses.replace(c, significant=False, pvalue=0.2853, pvalue_corrected=0.2853,
                               low=-0.01)
    assert flat.sentence(None) == (
        f"{c.system} does not differ significantly from S0 on {c.metric}: "
        f"{c.difference:+.4f}, 95% bootstrap CI [-0.0100, {c.high:+.4f}], p = 0.285, "
        f"{c.wins} wins / {c.losses} losses")
    worse = dataclasses.replace(c, significant=True, difference=-0.5, low=-0.7, high=-0.3,
                                pvalue=0.005, pvalue_corrected=0.01)
    assert worse.sentence("bonferroni") == (
        f"{c.system} trails S0 on {c.metric} by -0.5000, 95% bootstrap CI [-0.7000, -0.3000], "
        f"p = 0.010 (Bonferroni), {c.wins} wins / {c.losses} losses")
    strong = [c for c in report.comparisons if c.system == "S2"]
    assert all(c.significant for c in strong)  # much less noise: clearly better
    # 1000 resamples: the smallest p-value is 1/1001, times 4 comparisons (Holm)
    assert "0.004 *" in text
    md = report.to_markdown()
    assert md.count("\n|") == 1 + 2 * 3  # header rule + 2 metrics x 3 systems
    latex = report.to_latex()
    assert latex.startswith(r"\begin{tabular}{llrrrrrr}") and r"$\Delta$ vs S0" in latex
    frame = report.to_frame()
    assert frame.shape[0] == 6 and frame.loc[("map", "S2"), "significant"]
    relabelled = report.relabel({"ndcg@5": "ndcg_cut_5"})
    assert relabelled.metrics == ["ndcg_cut_5", "map"]


@pytest.mark.parametrize("test", ["ttest", "wilcoxon"])
def test_compare_with_other_tests_and_no_correction(test):
    evs = _evaluations(metrics=("ndcg@5",))
    report = compare(evs, test=test, correction=None, random_state=0, n_resamples=500)
    x, y, _ = paired_values(evs["S1"], evs["S0"])
    scipy_test = stats.ttest_rel if test == "ttest" else stats.wilcoxon
    assert report.comparisons[0].pvalue == pytest.approx(scipy_test(x, y).pvalue)
    assert report.comparisons[0].pvalue_corrected == report.comparisons[0].pvalue


def test_compare_errors():
    evs = _evaluations()
    with pytest.raises(ValueError, match=r"baseline 'X' is not one of the systems"):
        compare(evs, baseline="X")
    with pytest.raises(ValueError, match=r"'test' parameter of compare must be a str among"):
        compare(evs, test="z")
    with pytest.raises(ValueError, match=r"'correction' parameter of compare must be a str "
                                         r"among"):
        compare(evs, correction="fdr")
    with pytest.raises(TypeError, match=r"evaluations\['S0'\] must be an Evaluation"):
        compare({"S0": [1, 2]})


# ---------------------------------------------------------------- default seeds


@pytest.mark.parametrize("function", [randomization_test, bootstrap_ci, compare])
def test_the_resampling_functions_are_seeded_by_default(function):
    """random_state=0 by default, and said so in the docstring."""
    assert inspect.signature(function).parameters["random_state"].default == 0
    assert "random_state : int, numpy Generator or None, default=0" in function.__doc__


def test_default_seed_repeats_every_number():
    rng = np.random.default_rng(5)
    a, b = rng.uniform(size=40), rng.uniform(size=40)  # 2**40 sign flips: Monte Carlo
    first = randomization_test(a, b, n_resamples=500)
    assert not first.exact
    assert randomization_test(a, b, n_resamples=500) == first
    assert randomization_test(a, b, n_resamples=500, random_state=0) == first
    ci = bootstrap_ci(a, b, n_resamples=500)
    assert bootstrap_ci(a, b, n_resamples=500) == ci
    assert bootstrap_ci(a, b, n_resamples=500, random_state=0) == ci
    evs = _evaluations()
    text = str(compare(evs, n_resamples=500))
    assert str(compare(evs, n_resamples=500)) == text
    assert str(compare(evs, n_resamples=500, random_state=0)) == text


# ---------------------------------------------------------------- the verdict and the interval


def _precision_at_10(values):
    """An Evaluation whose per-query p@10 are ``values`` (multiples of 0.1): every
    query has 10 relevant and 10 non-relevant documents, and round(10 v) relevant
    ones are ranked in the top 10."""
    y, score, qid = [], [], []
    for q, v in enumerate(values):
        hits = round(10 * v)
        y += [1] * 10 + [0] * 10
        score += [2] * hits + [0] * (10 - hits) + [1] * (10 - hits) + [0] * hits
        qid += [q] * 20
    ev = evaluate(np.array(y), np.array(score, dtype=float), qid=np.array(qid),
                  metrics=["p@10"])
    np.testing.assert_allclose(ev.per_query["p@10"], values, rtol=0, atol=1e-15)
    return ev


def _sign_flip_pvalue(d):
    """The exact two-sided paired randomization p-value, by SciPy."""
    res = stats.permutation_test((np.asarray(d),), np.mean, permutation_type="samples",
                                 n_resamples=np.inf, alternative="two-sided")
    return res.pvalue


def test_interval_excluding_zero_beside_no_significance_says_why_methods():
    """Five queries, B better on every one: every bootstrap mean is a mean of
    positive differences, so the interval excludes 0, but the exact randomization
    test cannot go below 2 / 2**5 = 0.0625 (only all signs kept, or all flipped,
    reach the observed |mean|)."""
    evs = {"A": _precision_at_10([0.5] * 5), "B": _precision_at_10([0.6, 0.7, 0.8, 0.9, 0.6])}
    assert _sign_flip_pvalue([0.1, 0.2, 0.3, 0.4, 0.1]) == pytest.approx(0.0625)
    c = compare(evs).comparisons[0]
    assert c.pvalue == c.pvalue_corrected == 0.0625 and not c.significant
    assert c.low >= 0.1 - 1e-12  # at least the smallest difference
    assert c.sentence("holm") == (
        "B does not differ significantly from A on p@10: +0.2200, 95% bootstrap CI "
        f"[{c.low:+.4f}, {c.high:+.4f}], p = 0.062 (Holm), 5 wins / 0 losses; the interval "
        "excludes 0 but the test is not significant: the bootstrap percentile interval and "
        "the paired randomization test are different methods, which can disagree near the "
        "threshold, more often with few queries (5); the verdict is the test's")
    assert c.sentence("holm") in str(compare(evs))


def test_interval_excluding_zero_beside_no_significance_says_why_correction():
    """Two systems better than A on each of 6 queries: p = 2 / 2**6 each, which
    Holm doubles (2 comparisons) to 0.0625: significant before the correction
    only, and the interval is not corrected."""
    evs = {"A": _precision_at_10([0.5] * 6), "B": _precision_at_10([0.6] * 6),
           "C": _precision_at_10([0.7, 0.6, 0.8, 0.6, 0.9, 0.6])}
    assert _sign_flip_pvalue([0.2, 0.1, 0.3, 0.1, 0.4, 0.1]) == pytest.approx(1 / 32)
    report = compare(evs, baseline="A")
    for c in report.comparisons:
        assert (c.pvalue, c.pvalue_corrected, c.significant) == (1 / 32, 1 / 16, False)
        assert c.low > 0
        assert c.sentence("holm").endswith(
            "p = 0.062 (Holm), 6 wins / 0 losses; the interval excludes 0 but the test is "
            "not significant after Holm's correction for multiple comparisons (p = 0.031 "
            "before it), which the interval does not make")
    # without the correction, the verdict and the intervals agree: no reason given
    for c in compare(evs, baseline="A", correction=None).comparisons:
        assert c.significant and c.sentence(None).startswith(f"{c.system} beats A on p@10")
        assert c.sentence(None).endswith("6 wins / 0 losses")


def test_interval_including_zero_beside_significance_says_why_level():
    """d = four +0.1 and four -0.5: the exact p-value is 32 / 256 = 0.125 (only the
    assignments keeping the four -0.5 together reach |sum| >= 1.6), significant at
    alpha = 0.2, while the 95% interval includes 0; the 80% interval, which matches
    a test at alpha = 0.2, does not."""
    values = [0.6] * 4 + [0.0] * 4
    evs = {"A": _precision_at_10([0.5] * 8), "B": _precision_at_10(values)}
    assert _sign_flip_pvalue(np.array(values) - 0.5) == pytest.approx(0.125)
    c = compare(evs, alpha=0.2, correction=None).comparisons[0]
    assert c.pvalue == 0.125 and c.significant and c.low < 0 < c.high
    assert c.sentence(None).startswith("B trails A on p@10 by -0.2000, 95% bootstrap CI [")
    assert c.sentence(None).endswith(
        "4 wins / 4 losses; the interval includes 0 but the test is significant: the interval "
        "is at 95%, the test at alpha = 0.2, which matches an interval at 80%")
    matched = compare(evs, alpha=0.2, confidence=0.8, correction=None).comparisons[0]
    assert matched.high < 0 and matched.sentence(None).endswith("4 wins / 4 losses")
    assert "97.5% CI" in str(compare(evs, confidence=0.975))


# ---------------------------------------------------------------- Benjamini-Hochberg


def _bh_by_hand(p):
    """Benjamini-Hochberg adjusted p-values, from the definition: for the i-th
    smallest p-value, min over j >= i of p_(j) * m / j, capped at 1."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    for rank, i in enumerate(order, start=1):
        out[i] = min(1.0, min(p[j] * m / r for r, j in enumerate(order, start=1)
                              if r >= rank))
    return out


def test_benjamini_hochberg_adjustment_by_hand():
    p = np.array([0.01, 0.04, 0.03, 0.2])
    # sorted 0.01, 0.03, 0.04, 0.2 times 4/1, 4/2, 4/3, 4/4: 0.04, 0.06, 0.0533, 0.2,
    # then the minimum from the largest down: 0.04, 0.0533, 0.0533, 0.2
    np.testing.assert_allclose(_adjust(p, "fdr_bh"), [0.04, 0.16 / 3, 0.16 / 3, 0.2])
    np.testing.assert_allclose(_adjust(p, "fdr_bh"), _bh_by_hand(p.tolist()))
    rng = np.random.default_rng(0)
    for _ in range(20):
        p = rng.uniform(0, 0.2, size=rng.integers(1, 12))
        np.testing.assert_allclose(_adjust(p, "fdr_bh"), _bh_by_hand(p.tolist()),
                                   rtol=1e-14)
    # four p-values just below alpha: Holm finds one, Benjamini-Hochberg all four
    p = np.array([0.01, 0.02, 0.03, 0.04])
    np.testing.assert_allclose(_adjust(p, "holm"), [0.04, 0.06, 0.06, 0.06])
    np.testing.assert_allclose(_adjust(p, "fdr_bh"), [0.04] * 4)


def test_compare_with_benjamini_hochberg():
    evs = _evaluations(noises=(2.0, 1.5, 1.2, 0.5))
    report = compare(evs, correction="fdr_bh", n_resamples=1000)
    raw = [c.pvalue for c in report.comparisons]
    assert raw == [c.pvalue for c in compare(evs, correction=None,
                                             n_resamples=1000).comparisons]
    np.testing.assert_allclose([c.pvalue_corrected for c in report.comparisons],
                               _bh_by_hand(raw), rtol=1e-14)
    assert [c.significant for c in report.comparisons] == [
        p < 0.05 for p in _bh_by_hand(raw)]
    text = str(report)
    assert "p (BH)" in text and "(BH), " in text
    assert "after Benjamini-Hochberg's correction (false discovery rate 0.05)" in text
    assert report.to_frame()["pvalue_corrected"].dropna().tolist() == [
        c.pvalue_corrected for c in sorted(report.comparisons,
                                           key=lambda c: (report.metrics.index(c.metric),
                                                          report.systems.index(c.system)))]


# ---------------------------------------------------------------- cross-validation


def test_corrected_resampled_ttest_by_hand():
    a = np.array([0.61, 0.63, 0.60, 0.64, 0.62])
    b = np.array([0.60, 0.61, 0.60, 0.62, 0.60])
    d = a - b
    t = d.mean() / np.sqrt((1 / 5 + 1 / 4) * d.var(ddof=1))
    res = corrected_resampled_ttest(a, b, test_train_ratio=1 / 4)
    assert res.statistic == pytest.approx(t) and res.df == 4
    assert res.pvalue == pytest.approx(2 * stats.t.sf(abs(t), 4))
    # the correction makes it more conservative than the plain paired t-test
    assert res.pvalue > stats.ttest_rel(a, b).pvalue
    with pytest.raises(ValueError, match=r"one score per fold"):
        corrected_resampled_ttest([1.0], [2.0], test_train_ratio=0.25)


def test_compare_cv_candidates_on_a_search():
    import sklearn
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import GridSearchCV

    from sklearn_rank.datasets import make_ranking
    from sklearn_rank.estimators import QueryRanker
    from sklearn_rank.metrics import make_ranking_scorer
    from sklearn_rank.model_selection import QueryKFold

    X, y, qid = make_ranking(n_queries=60, random_state=0)
    scoring = {"ndcg@10": make_ranking_scorer("ndcg@10"), "map": make_ranking_scorer("map")}
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(QueryRanker(Ridge()), {"estimator__alpha": [0.1, 100, 1e5]},
                              scoring=scoring, refit="ndcg@10", cv=QueryKFold(4))
        search.fit(X, y, qid=qid)
    r = search.cv_results_
    best, second = np.argsort(r["rank_test_ndcg@10"], kind="stable")[:2]
    folds = [[r[f"split{i}_test_ndcg@10"][c] for i in range(4)] for c in (best, second)]
    expected = corrected_resampled_ttest(*folds, test_train_ratio=1 / 3)
    assert compare_cv_candidates(search, metric="ndcg@10") == expected
    by_params = compare_cv_candidates(r, r["params"][best], r["params"][second],
                                      metric="ndcg@10")
    assert by_params == expected
    with pytest.raises(ValueError, match=r"several metrics \(map, ndcg@10\)"):
        compare_cv_candidates(search)
    with pytest.raises(ValueError, match=r"No candidate has the parameters"):
        compare_cv_candidates(search, {"estimator__alpha": 3}, 0, metric="map")
